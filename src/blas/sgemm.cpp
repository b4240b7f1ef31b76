// The BLAS ABI: sgemm_ (gfortran calling convention) and cblas_sgemm
// (reference CBLAS), with reference BLAS semantics exactly: arguments are
// checked in reference order and reported through xerbla_ / cblas_xerbla
// with reference numbers, quick returns read nothing, and a row-major call
// is the column-major call with A and B, M and N, lda and ldb and the
// transposes swapped. Both then share one core (offload.hpp).
#include <cstddef>

#include "core/check.hpp"
#include "blas/offload.hpp"
#include "blas/trace.hpp"
#include "blas/xerbla.hpp"
#include "tgemm.h"

namespace tgemm::blas {
namespace {

constexpr int kRowMajor = 101, kColMajor = 102;

}  // namespace
}  // namespace tgemm::blas

extern "C" {

// The hidden length arguments are never read: C callers often omit them.
TGEMM_API void sgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
                      const float *alpha, const float *A, const int *lda, const float *B, const int *ldb,
                      const float *beta, float *C, const int *ldc, size_t transa_len, size_t transb_len)
{
    using namespace tgemm;
    using namespace tgemm::blas;
    (void)transa_len;
    (void)transb_len;
    CallTrace trace("sgemm_", false, 0, *transa, *transb, *m, *n, *k);
    const Op ta = op_from_char(*transa), tb = op_from_char(*transb);
    if (const int info = check_sgemm(ta, tb, *m, *n, *k, *lda, *ldb, *ldc); info != 0) {
        trace.error(info);
        report_sgemm_error(info);
        return;
    }
    trace.scalars(*alpha, *beta);
    if (sgemm_is_noop(*m, *n, *k, *alpha, *beta)) {
        trace.path("quick-return");
        return;
    }
    const GemmParams p = sgemm_problem(false, ta, tb, *m, *n, *k, *alpha, A, *lda, B, *ldb, *beta, C, *ldc);
    if (const int info = null_operand(p); info != 0) {
        trace.error(info);
        report_sgemm_error(info);
        return;
    }
    run_sgemm(p, trace);
}

TGEMM_API void cblas_sgemm(int layout, int TransA, int TransB, int M, int N, int K, float alpha, const float *A,
                           int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
    using namespace tgemm;
    using namespace tgemm::blas;
    CallTrace trace("cblas_sgemm", true, layout, TransA, TransB, M, N, K);
    const RowMajorStrgReset row_major_strg;
    // Reference CBLAS: the layout, then TransA (2) and TransB (3) in both
    // layouts, then SGEMM's own checks on the column-major call it makes.
    if (layout != kColMajor && layout != kRowMajor) {
        trace.error(1);
        report_cblas_error(1, 1, "Illegal layout setting, %d\n", layout, false);
        return;
    }
    const bool row = layout == kRowMajor;
    const Op ta = op_from_enum(TransA), tb = op_from_enum(TransB);
    if (ta == Op::Invalid) {
        trace.error(2);
        report_cblas_error(2, 2, "Illegal TransA setting, %d\n", TransA, row);
        return;
    }
    if (tb == Op::Invalid) {
        trace.error(3);
        report_cblas_error(3, 3, "Illegal TransB setting, %d\n", TransB, row);
        return;
    }
    const GemmParams p = sgemm_problem(row, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    // SGEMM's checks of the column-major call, reported as that SGEMM would
    // (report_cblas_sgemm_error): its argument i reaches a cblas_xerbla as
    // i + 1 (the layout comes first), for a row-major call numbering the
    // swapped call's arguments (M 5, N 4, lda 11, ldb 9), which a handler
    // maps back under RowMajorStrg. The trace and the default message name
    // the caller's argument.
    if (const int info = check_sgemm(p); info != 0) {
        const int caller = (row ? sgemm_row_major_argument(info) : info) + 1;
        trace.error(caller);
        report_cblas_sgemm_error(info, caller, row);
        return;
    }
    trace.scalars(alpha, beta);
    if (sgemm_is_noop(p.m, p.n, p.k, alpha, beta)) {
        trace.path("quick-return");
        return;
    }
    // A null operand is tgemm's own check, which reference CBLAS has no
    // number for: it is passed as the caller's argument (8 A, 10 B, 13 C),
    // which a handler's row-major mapping (4 <-> 5, 9 <-> 11) leaves alone.
    if (const int null_arg = null_operand(p); null_arg != 0) {
        const int caller = (row ? sgemm_row_major_argument(null_arg) : null_arg) + 1;
        trace.error(caller);
        report_cblas_error(caller, caller, "", 0, row);
        return;
    }
    run_sgemm(p, trace);
}

}  // extern "C"
