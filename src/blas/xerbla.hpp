// Argument errors of the BLAS entry points, reported the way reference BLAS
// and reference CBLAS report them: by calling the program's xerbla_ or
// cblas_xerbla, as the reference routines do, so a program's own handler
// sees them. Unlike reference BLAS, whose default handlers stop the program,
// tgemm's defaults print the reference message to stderr and return.
#pragma once

namespace tgemm::blas {

// XERBLA('SGEMM ', info): info is SGEMM's argument number (1 to 13).
void report_sgemm_error(int info);

// cblas_xerbla(info, "cblas_sgemm", form): info is the number reference
// cblas_sgemm passes (for a row-major call, that of the column-major call it
// becomes, which a handler maps back under RowMajorStrg); caller_info is the
// caller's argument (1 to 14), which the default message prints, as
// reference cblas_xerbla does after that mapping. form is "" or a printf
// format with one %d for `value`. row_major: the call's layout, as far as it
// is known (false for a bad layout).
void report_cblas_error(int info, int caller_info, const char *form, int value, bool row_major);

// An error SGEMM's own checks find in the column-major call cblas_sgemm
// makes, info its SGEMM number (1 to 13): reported as reference cblas_sgemm
// does, through the SGEMM it calls, to the program's xerbla_("SGEMM ",
// info) where it defines one, else to its cblas_xerbla(info + 1,
// "cblas_sgemm ", "") (reference CBLAS's xerbla_ does that, the name padded
// as SGEMM's). caller_info is the caller's argument, for the default message.
void report_cblas_sgemm_error(int info, int caller_info, bool row_major);

// Reference CBLAS's global RowMajorStrg, which a handler in the reference
// style reads to map a row-major call's numbers back to the caller's: while
// a cblas_sgemm error is reported (the program's handler called, or the
// default message printed) it is 1 for a row-major call and 0 otherwise,
// and every cblas_sgemm call returns with it 0, as reference cblas_sgemm
// leaves it. Every write takes one lock, so that calls on other threads do
// not change what a handler sees while it runs (reference sets it for the
// whole of every call, which threads calling at once race on; tgemm sets
// it to 1 only while an error is reported); a call that returns while
// another thread's error is being reported leaves the 0 to that report.
// Where the process defines no RowMajorStrg (OpenBLAS has none), nothing is
// written and no lock is taken.
//
// RowMajorStrgReset: held by cblas_sgemm for the call, sets it to 0 when
// the call returns.
class RowMajorStrgReset {
public:
    RowMajorStrgReset() = default;
    ~RowMajorStrgReset();
    RowMajorStrgReset(const RowMajorStrgReset &) = delete;
    RowMajorStrgReset &operator=(const RowMajorStrgReset &) = delete;
};

}  // namespace tgemm::blas
