// Argument errors of the BLAS entry points, reported the way reference BLAS
// and reference CBLAS report them: by calling the process's global xerbla_
// (SGEMM) or cblas_xerbla (cblas_sgemm), so a program's own handler sees
// them. Unlike reference BLAS, whose default handlers stop the program,
// tgemm's defaults print the reference message to stderr and return.
#pragma once

namespace tgemm::blas {

// XERBLA('SGEMM ', info): info is SGEMM's argument number (1 to 13).
void report_sgemm_error(int info);

// cblas_xerbla(info, "cblas_sgemm", form): info is cblas_sgemm's argument
// number (1 to 14); form is "" or a printf format with one %d for `value`.
void report_cblas_error(int info, const char *form, int value);

}  // namespace tgemm::blas
