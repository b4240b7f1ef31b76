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
// format with one %d for `value`.
void report_cblas_error(int info, int caller_info, const char *form, int value);

// An error SGEMM's own checks find in the column-major call cblas_sgemm
// makes, info its SGEMM number (1 to 13): reported as reference cblas_sgemm
// does, through the SGEMM it calls, to the program's xerbla_("SGEMM ",
// info) where it defines one, else to its cblas_xerbla(info + 1,
// "cblas_sgemm ", "") (reference CBLAS's xerbla_ does that, the name padded
// as SGEMM's). caller_info is the caller's argument, for the default message.
void report_cblas_sgemm_error(int info, int caller_info);

// Reference CBLAS's global RowMajorStrg, kept as reference cblas_sgemm
// keeps it: 0 when the call starts, 1 from the moment the layout is known to
// be row-major, 0 again when it returns. A handler in the reference style
// reads it to map a row-major call's numbers back to the caller's. Where the
// process defines no RowMajorStrg (OpenBLAS has none), nothing is written.
// One global for all threads, as in reference CBLAS.
class RowMajorStrgScope {
public:
    RowMajorStrgScope();
    ~RowMajorStrgScope();
    RowMajorStrgScope(const RowMajorStrgScope &) = delete;
    RowMajorStrgScope &operator=(const RowMajorStrgScope &) = delete;
    void set_row_major();
};

}  // namespace tgemm::blas
