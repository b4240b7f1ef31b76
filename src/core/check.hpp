// Argument checking and the quick-return rules of reference BLAS SGEMM,
// and the problem an SGEMM call describes, shared by the native API
// (src/api) and the BLAS ABI (src/blas).
#pragma once

#include <cstdint>

#include "core/problem.hpp"

namespace tgemm {

enum class Op : unsigned char { N, T, Invalid };

// tgemm_operation / CBLAS_TRANSPOSE values: 111 = N, 112 = T, 113 = C (= T for real data).
inline Op op_from_enum(int v)
{
    return v == 111 ? Op::N : (v == 112 || v == 113) ? Op::T : Op::Invalid;
}

// Fortran TRANSA/TRANSB characters, case-insensitive as LSAME is.
inline Op op_from_char(char c)
{
    switch (c) {
    case 'N': case 'n': return Op::N;
    case 'T': case 't': case 'C': case 'c': return Op::T;
    default: return Op::Invalid;
    }
}

// The dimension a leading dimension of the column-major SGEMM must cover
// (lda 8, ldb 10, ldc 13): 'm', 'n' or 'k', the rows of the matrix as stored.
inline char sgemm_ld_dimension(Op ta, Op tb, int ld_arg)
{
    return ld_arg == 8 ? (ta == Op::N ? 'm' : 'k') : ld_arg == 10 ? (tb == Op::N ? 'k' : 'n') : 'm';
}

// The smallest valid value of that leading dimension: max(1, its dimension).
inline int64_t sgemm_min_ld(Op ta, Op tb, int64_t m, int64_t n, int64_t k, int ld_arg)
{
    const char d = sgemm_ld_dimension(ta, tb, ld_arg);
    const int64_t x = d == 'm' ? m : d == 'n' ? n : k;
    return x > 1 ? x : int64_t{1};
}

// Column-major SGEMM argument check in reference BLAS order. Returns 0 when
// all arguments are valid, else the SGEMM number of the first invalid one
// (1 transa, 2 transb, 3 m, 4 n, 5 k, 8 lda, 10 ldb, 13 ldc).
inline int check_sgemm(Op ta, Op tb, int64_t m, int64_t n, int64_t k,
                       int64_t lda, int64_t ldb, int64_t ldc)
{
    if (ta == Op::Invalid) return 1;
    if (tb == Op::Invalid) return 2;
    if (m < 0) return 3;
    if (n < 0) return 4;
    if (k < 0) return 5;
    if (lda < sgemm_min_ld(ta, tb, m, n, k, 8)) return 8;
    if (ldb < sgemm_min_ld(ta, tb, m, n, k, 10)) return 10;
    if (ldc < sgemm_min_ld(ta, tb, m, n, k, 13)) return 13;
    return 0;
}

// check_sgemm on the column-major problem p.
inline int check_sgemm(const GemmParams &p)
{
    return check_sgemm(p.trans_a ? Op::T : Op::N, p.trans_b ? Op::T : Op::N, p.m, p.n, p.k, p.lda, p.ldb, p.ldc);
}

// Reference SGEMM returns without touching anything in these cases.
inline bool sgemm_is_noop(int64_t m, int64_t n, int64_t k, float alpha, float beta)
{
    return m == 0 || n == 0 || ((alpha == 0.0f || k == 0) && beta == 1.0f);
}

// Whether A and B are read at all (reference SGEMM skips them when alpha == 0).
inline bool sgemm_reads_ab(int64_t k, float alpha)
{
    return k > 0 && alpha != 0.0f;
}

// The column-major problem of an SGEMM call whose arguments are in the
// caller's order. A row-major call (row_major) is the column-major call
// C^T = op(B)^T op(A)^T on the same storage: A and B, m and n, lda and ldb,
// transa and transb swapped. ta and tb are valid.
inline GemmParams sgemm_problem(bool row_major, Op ta, Op tb, int64_t m, int64_t n, int64_t k, float alpha,
                                const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                                int64_t ldc)
{
    GemmParams p;
    p.trans_a = (row_major ? tb : ta) == Op::T;
    p.trans_b = (row_major ? ta : tb) == Op::T;
    p.m = row_major ? n : m;
    p.n = row_major ? m : n;
    p.k = k;
    p.a = row_major ? B : A;
    p.lda = row_major ? ldb : lda;
    p.b = row_major ? A : B;
    p.ldb = row_major ? lda : ldb;
    p.c = C;
    p.ldc = ldc;
    p.alpha = alpha;
    p.beta = beta;
    return p;
}

// 0 when every operand the column-major problem p reads or writes is
// non-null, else the SGEMM number of the first null one (7 A, 9 B, 12 C).
// Reference BLAS would crash on such a call; tgemm reports an illegal
// argument. Only meaningful after the quick return.
inline int null_operand(const GemmParams &p)
{
    if (sgemm_reads_ab(p.k, p.alpha)) {
        if (p.a == nullptr)
            return 7;
        if (p.b == nullptr)
            return 9;
    }
    return p.c == nullptr ? 12 : 0;
}

// A row-major call is the column-major call with A and B, m and n, lda and
// ldb, transa and transb swapped; this maps an argument number of the
// swapped call back to the caller's argument.
inline int sgemm_row_major_argument(int arg)
{
    switch (arg) {
    case 1: return 2;
    case 2: return 1;
    case 3: return 4;
    case 4: return 3;
    case 7: return 9;
    case 9: return 7;
    case 8: return 10;
    case 10: return 8;
    default: return arg;
    }
}

}  // namespace tgemm
