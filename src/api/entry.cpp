// The native C entry points: check in reference order, return early when
// there is nothing to do, then hand a column-major problem to the runtime;
// and the release of what the runtime keeps between calls.
#include "core/check.hpp"
#include "core/math_mode.hpp"
#include "core/status.hpp"
#include "driver/execute.hpp"
#include "driver/host_pipeline.hpp"
#include "runtime/workspace.hpp"

namespace tgemm {
namespace {

// The status of the column-major problem p's invalid argument `arg` (its
// SGEMM number), reported as the caller's argument (a row-major call's
// swapped back), with a detail that gives its value and, for a leading
// dimension, the minimum check_sgemm holds it to, in the caller's terms.
tgemm_status bad_argument(const GemmParams &p, int arg, bool row)
{
    const int user = row ? sgemm_row_major_argument(arg) : arg;
    const Op ta = p.trans_a ? Op::T : Op::N, tb = p.trans_b ? Op::T : Op::N;
    switch (arg) {
    case 3:
    case 4:
    case 5: {
        const int64_t value = arg == 3 ? p.m : arg == 4 ? p.n : p.k;
        return invalid_argument(user, "%c = %lld is negative", "mnk"[user - 3], static_cast<long long>(value));
    }
    case 8:
    case 10:
    case 13: {
        const int64_t value = arg == 8 ? p.lda : arg == 10 ? p.ldb : p.ldc;
        char dim = sgemm_ld_dimension(ta, tb, arg);
        if (row && dim != 'k')  // the row-major call's m and n are the column-major problem's n and m
            dim = dim == 'm' ? 'n' : 'm';
        return invalid_argument(user, "ld%c = %lld is below max(1, %c) = %lld", user == 8 ? 'a' : user == 10 ? 'b' : 'c',
                                static_cast<long long>(value), dim,
                                static_cast<long long>(sgemm_min_ld(ta, tb, p.m, p.n, p.k, arg)));
    }
    default:
        return invalid_argument(user, "%c is NULL%s", "ABC"[(user - 7) / 2],
                                user == 12 ? "" : ", and the call reads it (alpha != 0, k > 0)");
    }
}

tgemm_status sgemm_any(tgemm_layout layout, tgemm_operation transa, tgemm_operation transb,
                       int64_t m, int64_t n, int64_t k, float alpha, const float *A, int64_t lda,
                       const float *B, int64_t ldb, float beta, float *C, int64_t ldc,
                       cudaStream_t stream, bool wait)
{
    clear_error_detail();
    if (layout != TGEMM_LAYOUT_COL_MAJOR && layout != TGEMM_LAYOUT_ROW_MAJOR)
        return fail(TGEMM_ERROR_INVALID_LAYOUT, "layout = %d", static_cast<int>(layout));
    const Op op_a = op_from_enum(transa), op_b = op_from_enum(transb);
    if (op_a == Op::Invalid)
        return invalid_argument(1, "transa = %d is not TGEMM_OP_N, TGEMM_OP_T or TGEMM_OP_C", static_cast<int>(transa));
    if (op_b == Op::Invalid)
        return invalid_argument(2, "transb = %d is not TGEMM_OP_N, TGEMM_OP_T or TGEMM_OP_C", static_cast<int>(transb));

    // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: the
    // same storage read with A and B, m and n swapped. Checks then run in the
    // order reference CBLAS runs them for row-major calls.
    const bool row = layout == TGEMM_LAYOUT_ROW_MAJOR;
    const GemmParams p = sgemm_problem(row, op_a, op_b, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);

    if (const int arg = check_sgemm(p); arg != 0)
        return bad_argument(p, arg, row);
    if (sgemm_is_noop(p.m, p.n, p.k, alpha, beta))
        return TGEMM_SUCCESS;
    if (const int null_arg = null_operand(p); null_arg != 0)
        return bad_argument(p, null_arg, row);
    // A success leaves no detail, though a spread call's device may have
    // failed (and written one) before the others finished its work.
    const tgemm_status st = execute(p, stream, wait);
    if (st == TGEMM_SUCCESS)
        clear_error_detail();
    return st;
}

}  // namespace
}  // namespace tgemm

extern "C" {

TGEMM_API tgemm_status tgemm_sgemm(tgemm_operation transa, tgemm_operation transb, tgemm_int m, tgemm_int n,
                                   tgemm_int k, float alpha, const float *A, tgemm_int lda, const float *B,
                                   tgemm_int ldb, float beta, float *C, tgemm_int ldc)
{
    return tgemm::sgemm_any(TGEMM_LAYOUT_COL_MAJOR, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc,
                            cudaStreamPerThread, true);
}

TGEMM_API tgemm_status tgemm_sgemm_ex(tgemm_layout layout, tgemm_operation transa, tgemm_operation transb,
                                      tgemm_int m, tgemm_int n, tgemm_int k, float alpha, const float *A,
                                      tgemm_int lda, const float *B, tgemm_int ldb, float beta, float *C,
                                      tgemm_int ldc, tgemm_stream stream)
{
    return tgemm::sgemm_any(layout, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc,
                            reinterpret_cast<cudaStream_t>(stream), false);
}

TGEMM_API tgemm_status tgemm_set_math(tgemm_math_t math)
{
    tgemm::clear_error_detail();
    if (math != TGEMM_MATH_STRICT && math != TGEMM_MATH_FP32_TC)
        return tgemm::fail(TGEMM_ERROR_INVALID_SETTING, "tgemm_set_math(%d): not a tgemm_math_t value",
                           static_cast<int>(math));
    tgemm::set_process_math(math == TGEMM_MATH_FP32_TC ? tgemm::Math::Fp32Tc : tgemm::Math::Strict);
    return TGEMM_SUCCESS;
}

TGEMM_API tgemm_math_t tgemm_get_math(void)
{
    return tgemm::process_math() == tgemm::Math::Fp32Tc ? TGEMM_MATH_FP32_TC : TGEMM_MATH_STRICT;
}

TGEMM_API tgemm_status tgemm_release_resources(void)
{
    tgemm::clear_error_detail();
    const tgemm_status st = tgemm::release_host_resources();
    const tgemm_status large = tgemm::trim_large_workspace_pools();
    return st != TGEMM_SUCCESS ? st : large;
}

}  // extern "C"
