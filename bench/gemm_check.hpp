// The benchmarks' check of a GEMM output, element by element, against an
// FP64 reference: plain C++ with no CUDA, so that bench_gemm, bench_plans and
// the CPU self-test (tests/test_bench_check.cpp, make test-bench-check)
// compile the same code.
//
// For C = alpha op(A) op(B) + beta C0, with the reference R and the
// magnitude G computed in FP64,
//
//   R_ij = alpha (op(A) op(B))_ij + beta C0_ij
//   G_ij = |alpha| (|op(A)| |op(B)|)_ij + |beta| |C0_ij|,
//
// every element must satisfy
//
//   |C_ij - R_ij| <= bound_factor(K) G_ij + bound_floor(K).
//
// bound_factor(K) = gamma(K + 2, 2^-24) + 2 gamma(K + 2, 2^-53), with
// gamma(n, u) = n u / (1 - n u):
//   - gamma(K + 2, 2^-24) bounds the FP32 computation's error relative to
//     G whatever the order of the sum (blocked, split over K, stream-K parts,
//     with or without FMA): each product meets at most one rounding of its own
//     and K - 1 of additions, plus the scaling by alpha and the addition of
//     beta C0: K + 2 roundings (Higham, Accuracy and Stability of Numerical
//     Algorithms, 2nd ed., section 3.1).
//   - 2 gamma(K + 2, 2^-53) covers the FP64 reference's own error (R's and
//     G's, any order of their sums), about 2^-28 of the first term.
// bound_floor(K) = (K + 2) 2^-149: the absolute error that underflow to FP32
// subnormals can add, at most half a subnormal step per rounding.
//
// The bound is a theorem about every correct FP32 result, so a failure is a
// wrong result, never bad luck. It is also loose for random inputs: uniform in
// (-1, 1), |C_ij| is about sqrt(K / 9) and G_ij about K / 4, so an element is
// rejected once its error passes about (3/4) K^1.5 2^-24 of |C_ij|: 6.5e-5 at
// K = 128, 1.5e-3 at K = 1024, 3.3e-2 at K = 8192. An all-zero C, a
// transposed operand or a sum over half of K miss by far more than that on
// such inputs; Report::zero_detectable says whether an all-zero C would fail.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace gemm_check {

constexpr double kUnitFp32 = 0x1p-24;     // unit roundoff of FP32, round to nearest
constexpr double kUnitFp64 = 0x1p-53;     // unit roundoff of FP64
constexpr double kSubnormalFp32 = 0x1p-149; // FP32's smallest subnormal step

// gamma(n, u) = n u / (1 - n u); infinite once n u >= 1, where no bound of
// this form exists.
inline double gamma(double n, double u)
{
    const double nu = n * u;
    return nu < 1.0 ? nu / (1.0 - nu) : INFINITY;
}

inline double bound_factor(int64_t k)
{
    const double n = static_cast<double>(k) + 2.0;
    return gamma(n, kUnitFp32) + 2.0 * gamma(n, kUnitFp64);
}

inline double bound_floor(int64_t k)
{
    return (static_cast<double>(k) + 2.0) * kSubnormalFp32;
}

// The outcome of check.
struct Report {
    int64_t checked = 0;          // elements compared
    int64_t failed = 0;           // elements over their bound, non-finite ones included
    int64_t nonfinite = 0;        // NaN or infinite elements of C
    int64_t bad_reference = 0;    // elements whose R or G is not finite, or G < 0
    int64_t zero_detectable = 0;  // elements with |R| > bound: where C = 0 would fail
    double worst = 0;             // largest |C - R| / bound; +inf for a non-finite C
    int64_t worst_i = -1, worst_j = -1;  // its position
    double worst_c = 0, worst_ref = 0, worst_bound = 0;
    bool no_bound = false;        // K + 2 >= 2^24: no bound of this form, nothing can pass

    bool passed() const { return checked > 0 && failed == 0 && bad_reference == 0 && !no_bound; }
};

// Compares the rows x cols output C (ldc) of a product over k terms with R
// (ldr) and G (ldg), all column-major. Every element is visited: the count
// of failures and the worst element are exact. An element within its bound,
// with a sound reference and no worse than the worst so far, takes the
// first branch alone (no division): the check of a 16384^2 output is a
// stream through memory.
inline Report check(int64_t rows, int64_t cols, const float *c, int64_t ldc, const double *ref, int64_t ldr,
                    const double *mag, int64_t ldg, int64_t k)
{
    Report rep;
    const double factor = bound_factor(k), floor = bound_floor(k);
    if (!std::isfinite(factor))
        rep.no_bound = true;
    double worst = -1.0;  // the first element always reaches the update below
    for (int64_t j = 0; j < cols; ++j) {
        const float *cj = c + j * ldc;
        const double *rj = ref + j * ldr, *gj = mag + j * ldg;
        for (int64_t i = 0; i < rows; ++i) {
            const double cv = cj[i], r = rj[i], g = gj[i];
            const double bound = factor * g + floor;  // >= floor > 0 for a sound G
            const double err = std::fabs(cv - r);     // NaN or infinite when C or R is
            rep.zero_detectable += std::fabs(r) > bound;
            if (err <= bound && g >= 0.0 && g < INFINITY && err <= worst * bound)
                continue;
            double ratio;
            if (!std::isfinite(r) || !(g >= 0.0 && g < INFINITY)) {
                ++rep.bad_reference;
                ratio = INFINITY;
            } else if (!std::isfinite(cv)) {
                ++rep.nonfinite;
                ++rep.failed;
                ratio = INFINITY;
            } else {
                if (!(err <= bound))
                    ++rep.failed;
                ratio = err / bound;
            }
            if (ratio > worst) {
                worst = ratio;
                rep.worst_i = i;
                rep.worst_j = j;
                rep.worst_c = cv;
                rep.worst_ref = r;
                rep.worst_bound = bound;
            }
        }
    }
    rep.worst = rows > 0 && cols > 0 ? worst : 0.0;
    rep.checked = rows * cols;
    return rep;
}

// check, with the columns shared out among up to `threads` threads; the
// same report as check's, field for field (the worst element is the first
// of the largest ratio in column-major order either way).
inline Report check_parallel(int64_t rows, int64_t cols, const float *c, int64_t ldc, const double *ref,
                             int64_t ldr, const double *mag, int64_t ldg, int64_t k, int threads)
{
    const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(threads, cols));
    std::vector<Report> part(static_cast<size_t>(parts));
    std::vector<std::thread> pool;
    const auto first_col = [&](int64_t t) { return cols * t / parts; };
    for (int64_t t = 0; t < parts; ++t) {
        const int64_t j0 = first_col(t), j1 = first_col(t + 1);
        const auto run = [=, &part] {
            part[static_cast<size_t>(t)] = check(rows, j1 - j0, c + j0 * ldc, ldc, ref + j0 * ldr, ldr,
                                                 mag + j0 * ldg, ldg, k);
        };
        if (t + 1 < parts)
            pool.emplace_back(run);
        else
            run();
    }
    for (std::thread &th : pool)
        th.join();
    Report all;
    for (int64_t t = 0; t < parts; ++t) {
        const Report &p = part[static_cast<size_t>(t)];
        all.checked += p.checked;
        all.failed += p.failed;
        all.nonfinite += p.nonfinite;
        all.bad_reference += p.bad_reference;
        all.zero_detectable += p.zero_detectable;
        all.no_bound = all.no_bound || p.no_bound;
        if (p.worst_i >= 0 && (all.worst_i < 0 || p.worst > all.worst)) {
            all.worst = p.worst;
            all.worst_i = p.worst_i;
            all.worst_j = p.worst_j + first_col(t);
            all.worst_c = p.worst_c;
            all.worst_ref = p.worst_ref;
            all.worst_bound = p.worst_bound;
        }
    }
    return all;
}

// One line about the worst element and the counts, for messages.
inline std::string describe(const Report &rep)
{
    char buf[512];
    if (rep.checked == 0) {
        std::snprintf(buf, sizeof buf, "no element was checked");
        return buf;
    }
    if (rep.no_bound) {
        std::snprintf(buf, sizeof buf, "K is too large for the error bound (K + 2 >= 2^24): nothing can be checked");
        return buf;
    }
    std::snprintf(buf, sizeof buf,
                  "worst element C(%lld, %lld) = %.9g, FP64 reference %.17g, |error| %.6e, bound %.6e "
                  "(error / bound %.3g); %lld of %lld elements over their bound, %lld not finite, "
                  "%lld with a non-finite reference",
                  static_cast<long long>(rep.worst_i), static_cast<long long>(rep.worst_j), rep.worst_c,
                  rep.worst_ref, std::fabs(rep.worst_c - rep.worst_ref), rep.worst_bound, rep.worst,
                  static_cast<long long>(rep.failed), static_cast<long long>(rep.checked),
                  static_cast<long long>(rep.nonfinite), static_cast<long long>(rep.bad_reference));
    return buf;
}

// The FP64 sums of one element, sum a_p b_p and sum |a_p| |b_p| over p < k,
// from op(A)'s row (a, stride sa) and op(B)'s column (b, stride sb). Products
// of two floats are exact in FP64; the sums err by at most gamma(k, 2^-53)
// of the second.
inline void dot_fp64(const float *a, int64_t sa, const float *b, int64_t sb, int64_t k, double *dot,
                     double *absdot)
{
    double s = 0.0, g = 0.0;
    for (int64_t p = 0; p < k; ++p) {
        const double x = a[p * sa], y = b[p * sb];
        s += x * y;
        g += std::fabs(x) * std::fabs(y);
    }
    *dot = s;
    *absdot = g;
}

// The beta term of R and G: R += beta C0 and G += |beta| |C0|, added to
// the R and G of alpha op(A) op(B) (rows x cols, leading dimension ldr;
// C0's is ldc0). Nothing when beta is 0: C0 is then never read, and may
// hold NaN or be null. Each addition is one FP64 rounding, inside the
// 2 gamma(K + 2, 2^-53) that bound_factor allows the reference.
inline void add_beta_term(int64_t rows, int64_t cols, double beta, const float *c0, int64_t ldc0, double *ref,
                          double *mag, int64_t ldr)
{
    if (beta == 0.0)
        return;
    for (int64_t j = 0; j < cols; ++j)
        for (int64_t i = 0; i < rows; ++i) {
            const double cv = c0[i + j * ldc0];
            ref[i + j * ldr] += beta * cv;
            mag[i + j * ldr] += std::fabs(beta) * std::fabs(cv);
        }
}

// R and G of the whole product on the CPU (the self-test's reference).
// ta, tb: 'N' or 'T'; A is m x k as stored ('N', lda >= m) or k x m ('T'),
// B likewise k x n or n x k; c0 may be null when beta is 0. R and G are
// m x n with leading dimension ldr.
inline void reference_cpu(char ta, char tb, int64_t m, int64_t n, int64_t k, double alpha, const float *a,
                          int64_t lda, const float *b, int64_t ldb, double beta, const float *c0, int64_t ldc0,
                          double *ref, double *mag, int64_t ldr)
{
    // op(A)(i, p) = a[i * row_a + p * step_a]; op(B)(p, j) = b[p * step_b + j * col_b].
    const int64_t row_a = ta == 'N' ? 1 : lda, step_a = ta == 'N' ? lda : 1;
    const int64_t step_b = tb == 'N' ? 1 : ldb, col_b = tb == 'N' ? ldb : 1;
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < m; ++i) {
            double s, g;
            dot_fp64(a + i * row_a, step_a, b + j * col_b, step_b, k, &s, &g);
            ref[i + j * ldr] = alpha * s;
            mag[i + j * ldr] = std::fabs(alpha) * g;
        }
    add_beta_term(m, n, beta, c0, ldc0, ref, mag, ldr);
}

}  // namespace gemm_check
