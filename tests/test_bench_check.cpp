// The benchmarks' output check (bench/gemm_check.hpp), on the CPU, no GPU
// needed (make test-bench-check). Small products are built here with their
// FP64 reference, and the check is fed:
//   - correct FP32 results, summed in several orders and by OpenBLAS: each
//     must pass;
//   - wrong ones: an all-zero C, op(A) or op(B) transposed by mistake, the
//     sum over half of K, one wrong element at several positions, one
//     NaN or infinity: each must be rejected, the wrong element named;
//   - an element just over and just under the documented bound, so that a
//     looser bound than the one documented fails here;
//   - the same outputs split over threads (check_parallel), which must
//     report exactly what one pass does.
// Inputs are uniform in (-1, 1), as bench_gemm's, from fixed seeds.
// Also bench/paired.hpp, bench_random's paired comparison of two code
// paths timed in the same rounds: the sign test's ranks against the exact
// binomial, the interval's ends on known rounds, a ratio found through a
// drift of the rounds, rounds without times left out.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

// cmocka.h declares only part of its interface extern "C".
extern "C" {
#include <cmocka.h>
}

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gemm_check.hpp"
#include "paired.hpp"

namespace {

// One problem C = alpha op(A) op(B) + beta C0, column-major, every leading
// dimension padded so that a check that ignores ldc reads the padding.
struct Problem {
    char ta, tb;
    int64_t m, n, k;
    double alpha, beta;
    bool positive = false;  // inputs in (0, 1) instead of (-1, 1)
    int64_t lda = 0, ldb = 0, ldc = 0;
    std::vector<float> a, b, c0;
    std::vector<double> ref, mag;  // m x n, ld m
};

constexpr int64_t kPad = 3;

float uniform(std::mt19937 &rng, bool positive)
{
    const uint32_t u = static_cast<uint32_t>(rng()) >> 8;
    const double x = (static_cast<double>(u) + 0.5) * (1.0 / 16777216.0);  // (0, 1)
    return static_cast<float>(positive ? x : 2.0 * x - 1.0);
}

Problem make_problem(char ta, char tb, int64_t m, int64_t n, int64_t k, double alpha, double beta, uint32_t seed,
                     bool positive = false)
{
    Problem p;
    p.ta = ta;
    p.tb = tb;
    p.m = m;
    p.n = n;
    p.k = k;
    p.alpha = alpha;
    p.beta = beta;
    p.positive = positive;
    p.lda = (ta == 'N' ? m : k) + kPad;
    p.ldb = (tb == 'N' ? k : n) + kPad;
    p.ldc = m + kPad;
    std::mt19937 rng(seed);
    p.a.resize(static_cast<size_t>(p.lda * (ta == 'N' ? k : m)));
    p.b.resize(static_cast<size_t>(p.ldb * (tb == 'N' ? n : k)));
    p.c0.resize(static_cast<size_t>(p.ldc * n));
    for (float &x : p.a)
        x = uniform(rng, positive);
    for (float &x : p.b)
        x = uniform(rng, positive);
    for (float &x : p.c0)
        x = uniform(rng, positive);
    p.ref.resize(static_cast<size_t>(m * n));
    p.mag.resize(p.ref.size());
    gemm_check::reference_cpu(ta, tb, m, n, k, alpha, p.a.data(), p.lda, p.b.data(), p.ldb, beta, p.c0.data(),
                              p.ldc, p.ref.data(), p.mag.data(), m);
    return p;
}

std::string name(const Problem &p)
{
    char buf[96];
    std::snprintf(buf, sizeof buf, "%c%c %lldx%lldx%lld%s", p.ta, p.tb, static_cast<long long>(p.m),
                  static_cast<long long>(p.n), static_cast<long long>(p.k), p.positive ? " positive" : "");
    return buf;
}

// The orders in which an FP32 GEMM may add its K products.
enum class Order { sequential, reverse, fma, split4, pairwise };
const Order kOrders[] = {Order::sequential, Order::reverse, Order::fma, Order::split4, Order::pairwise};
const char *const kOrderNames[] = {"sequential", "reverse", "fma", "split4", "pairwise"};

float pairwise(const std::vector<float> &t, size_t lo, size_t hi)
{
    if (hi - lo == 1)
        return t[lo];
    const size_t mid = lo + (hi - lo) / 2;
    return pairwise(t, lo, mid) + pairwise(t, mid, hi);
}

// Sum of products over p in [k0, k1), in FP32, in the given order.
float dot_fp32(const float *a, int64_t sa, const float *b, int64_t sb, int64_t k0, int64_t k1, Order order)
{
    if (k1 <= k0)
        return 0.0f;
    switch (order) {
    case Order::sequential: {
        float s = 0.0f;
        for (int64_t p = k0; p < k1; ++p)
            s += a[p * sa] * b[p * sb];
        return s;
    }
    case Order::reverse: {
        float s = 0.0f;
        for (int64_t p = k1 - 1; p >= k0; --p)
            s += a[p * sa] * b[p * sb];
        return s;
    }
    case Order::fma: {
        float s = 0.0f;
        for (int64_t p = k0; p < k1; ++p)
            s = std::fma(a[p * sa], b[p * sb], s);
        return s;
    }
    case Order::split4: {
        const int64_t len = k1 - k0, q = (len + 3) / 4;
        float s = 0.0f;
        for (int64_t lo = k0; lo < k1; lo += q)
            s += dot_fp32(a, sa, b, sb, lo, std::min(lo + q, k1), Order::fma);
        return s;
    }
    case Order::pairwise: {
        std::vector<float> t;
        for (int64_t p = k0; p < k1; ++p)
            t.push_back(a[p * sa] * b[p * sb]);
        return pairwise(t, 0, t.size());
    }
    }
    return NAN;
}

// C in FP32, ld ldc, with the padding NaN. The mistakes: op(A) read with the
// other transpose (flip_a; needs m == k), op(B) likewise (flip_b; k == n),
// the sum only over [k0, k1).
struct Mistake {
    bool flip_a = false, flip_b = false;
    int64_t k0 = 0, k1 = -1;  // -1: k
};

std::vector<float> sgemm_fp32(const Problem &p, Order order, Mistake x = {})
{
    const char ta = x.flip_a ? (p.ta == 'N' ? 'T' : 'N') : p.ta;
    const char tb = x.flip_b ? (p.tb == 'N' ? 'T' : 'N') : p.tb;
    const int64_t row_a = ta == 'N' ? 1 : p.lda, step_a = ta == 'N' ? p.lda : 1;
    const int64_t step_b = tb == 'N' ? 1 : p.ldb, col_b = tb == 'N' ? p.ldb : 1;
    const int64_t k1 = x.k1 < 0 ? p.k : x.k1;
    const float alpha = static_cast<float>(p.alpha), beta = static_cast<float>(p.beta);
    std::vector<float> c(static_cast<size_t>(p.ldc * p.n), NAN);
    for (int64_t j = 0; j < p.n; ++j)
        for (int64_t i = 0; i < p.m; ++i) {
            const float s = dot_fp32(&p.a[static_cast<size_t>(i * row_a)], step_a,
                                     &p.b[static_cast<size_t>(j * col_b)], step_b, x.k0, k1, order);
            float v = alpha * s;
            if (beta != 0.0f)
                v += beta * p.c0[static_cast<size_t>(i + j * p.ldc)];
            c[static_cast<size_t>(i + j * p.ldc)] = v;
        }
    return c;
}

std::vector<float> sgemm_openblas(const Problem &p)
{
    std::vector<float> c = p.c0;
    cblas_sgemm(CblasColMajor, p.ta == 'N' ? CblasNoTrans : CblasTrans, p.tb == 'N' ? CblasNoTrans : CblasTrans,
                static_cast<int>(p.m), static_cast<int>(p.n), static_cast<int>(p.k), static_cast<float>(p.alpha),
                p.a.data(), static_cast<int>(p.lda), p.b.data(), static_cast<int>(p.ldb), static_cast<float>(p.beta),
                c.data(), static_cast<int>(p.ldc));
    return c;
}

gemm_check::Report run_check(const Problem &p, const std::vector<float> &c)
{
    return gemm_check::check(p.m, p.n, c.data(), p.ldc, p.ref.data(), p.m, p.mag.data(), p.m, p.k);
}

// The documented bound of element (i, j), computed here from its formula
// rather than through the header, so that a change to the header's bound
// shows up in the tests that use it.
double documented_bound(const Problem &p, int64_t i, int64_t j)
{
    const double n = static_cast<double>(p.k) + 2.0;
    const double u32 = std::ldexp(1.0, -24), u64 = std::ldexp(1.0, -53);
    const double factor = n * u32 / (1.0 - n * u32) + 2.0 * n * u64 / (1.0 - n * u64);
    return factor * p.mag[static_cast<size_t>(i + j * p.m)] + n * std::ldexp(1.0, -149);
}

double ref_at(const Problem &p, int64_t i, int64_t j)
{
    return p.ref[static_cast<size_t>(i + j * p.m)];
}

float &at(const Problem &p, std::vector<float> &c, int64_t i, int64_t j)
{
    return c[static_cast<size_t>(i + j * p.ldc)];
}

float at(const Problem &p, const std::vector<float> &c, int64_t i, int64_t j)
{
    return c[static_cast<size_t>(i + j * p.ldc)];
}

// Every transpose, padded leading dimensions, alpha and beta other than 1
// and 0, K from 1 to 8192 (the K of 8192^3).
std::vector<Problem> &problems()
{
    static std::vector<Problem> list = [] {
        std::vector<Problem> l;
        l.push_back(make_problem('N', 'N', 33, 17, 64, 1.0, 0.0, 1));
        l.push_back(make_problem('N', 'T', 20, 31, 129, -1.5, 0.75, 2));
        l.push_back(make_problem('T', 'N', 48, 48, 48, 1.0, 0.0, 3));
        l.push_back(make_problem('T', 'T', 17, 40, 257, 0.5, -2.0, 4));
        l.push_back(make_problem('N', 'N', 1, 1, 1, 1.0, 0.0, 5));
        l.push_back(make_problem('N', 'N', 5, 3, 2, 1.0, 0.0, 6));
        l.push_back(make_problem('N', 'N', 24, 24, 8192, 1.0, 0.0, 7));
        l.push_back(make_problem('N', 'N', 8, 8, 8192, 1.0, 0.0, 8, true));
        return l;
    }();
    return list;
}

// The largest |C - R| / bound over the elements, with the documented bound.
double worst_ratio(const Problem &p, const std::vector<float> &c)
{
    double worst = 0;
    for (int64_t j = 0; j < p.n; ++j)
        for (int64_t i = 0; i < p.m; ++i)
            worst = std::max(worst, std::fabs(at(p, c, i, j) - ref_at(p, i, j)) /
                                        documented_bound(p, i, j));
    return worst;
}

// Correct FP32 results pass, whatever the order of the sum, every element
// is looked at, and the worst error / bound reported is the true one. The
// inputs in (0, 1) are the hardest case for the bound: the rounding errors
// of the sequential sum of positive terms do not cancel.
void correct_results_pass(void **)
{
    for (const Problem &p : problems()) {
        for (size_t o = 0; o < sizeof kOrders / sizeof kOrders[0]; ++o) {
            const std::vector<float> c = sgemm_fp32(p, kOrders[o]);
            const gemm_check::Report r = run_check(p, c);
            std::printf("  %-26s %-10s passes: worst error / bound %.3g\n", name(p).c_str(), kOrderNames[o], r.worst);
            if (!r.passed())
                std::printf("    %s\n", gemm_check::describe(r).c_str());
            assert_true(r.passed());
            assert_int_equal(r.checked, p.m * p.n);
            assert_int_equal(r.failed, 0);
            assert_true(r.worst <= 1.0);
            assert_true(std::fabs(r.worst - worst_ratio(p, c)) <= 1e-9 * worst_ratio(p, c));
        }
        const gemm_check::Report r = run_check(p, sgemm_openblas(p));
        std::printf("  %-26s %-10s passes: worst error / bound %.3g\n", name(p).c_str(), "OpenBLAS", r.worst);
        assert_true(r.passed());
        assert_int_equal(r.checked, p.m * p.n);
    }
}

// An all-zero C fails wherever the reference exceeds the bound, and the
// report counts those elements.
void zero_rejected(void **)
{
    for (const Problem &p : problems()) {
        const std::vector<float> zero(static_cast<size_t>(p.ldc * p.n), 0.0f);
        const gemm_check::Report r = run_check(p, zero);
        std::printf("  %-26s all zero rejected: %lld of %lld elements over their bound\n", name(p).c_str(),
                    static_cast<long long>(r.failed), static_cast<long long>(r.checked));
        assert_false(r.passed());
        assert_true(r.failed > 0);
        assert_int_equal(r.failed, r.zero_detectable);
    }
}

// op(A) or op(B) read with the other transpose (square operands only, where
// the mistake still reads inside the matrix).
void transposed_rejected(void **)
{
    const Problem list[] = {make_problem('N', 'N', 48, 8, 48, 1.0, 0.0, 11),
                            make_problem('T', 'N', 1024, 4, 1024, 1.0, 0.0, 12),
                            make_problem('N', 'T', 8, 40, 40, -1.0, 0.5, 13),
                            make_problem('T', 'T', 6, 256, 256, 1.0, 0.0, 14)};
    for (const Problem &p : list) {
        Mistake x;
        x.flip_a = p.m == p.k;
        x.flip_b = !x.flip_a;
        const gemm_check::Report r = run_check(p, sgemm_fp32(p, Order::fma, x));
        std::printf("  %-26s op(%c) transposed rejected: %lld of %lld elements over their bound, worst %.3g\n",
                    name(p).c_str(), x.flip_a ? 'A' : 'B', static_cast<long long>(r.failed),
                    static_cast<long long>(r.checked), r.worst);
        assert_false(r.passed());
        assert_true(r.worst > 1.0);
    }
}

// The sum over the first or the second half of K only.
void half_k_rejected(void **)
{
    for (const Problem &p : problems()) {
        if (p.k < 2)
            continue;
        for (int half = 0; half < 2; ++half) {
            Mistake x;
            x.k0 = half == 0 ? 0 : p.k / 2;
            x.k1 = half == 0 ? p.k / 2 : p.k;
            const gemm_check::Report r = run_check(p, sgemm_fp32(p, Order::fma, x));
            std::printf("  %-26s K in [%lld, %lld) rejected: %lld of %lld elements over their bound\n",
                        name(p).c_str(), static_cast<long long>(x.k0), static_cast<long long>(x.k1),
                        static_cast<long long>(r.failed), static_cast<long long>(r.checked));
            assert_false(r.passed());
        }
    }
}

// The corners, the middle, and the element next to the padding.
std::vector<std::pair<int64_t, int64_t>> positions(const Problem &p)
{
    return {{0, 0}, {p.m - 1, 0}, {0, p.n - 1}, {p.m - 1, p.n - 1}, {p.m / 2, p.n / 2}, {p.m - 1, p.n / 2}};
}

// One element off by twice its bound, either way, at each position: the
// check fails on that element alone and names it.
void one_wrong_element_rejected(void **)
{
    for (const Problem &p : problems()) {
        const std::vector<float> good = sgemm_fp32(p, Order::fma);
        for (const auto &ij : positions(p)) {
            for (const double sign : {1.0, -1.0}) {
                std::vector<float> c = good;
                const int64_t i = ij.first, j = ij.second;
                at(p, c, i, j) = static_cast<float>(ref_at(p, i, j) + sign * 2.0 * documented_bound(p, i, j));
                const gemm_check::Report r = run_check(p, c);
                assert_false(r.passed());
                assert_int_equal(r.failed, 1);
                assert_int_equal(r.worst_i, i);
                assert_int_equal(r.worst_j, j);
                assert_true(r.worst > 1.5);
            }
        }
        std::printf("  %-26s one element off by 2 bounds rejected and named at %zu positions, both signs\n",
                    name(p).c_str(), positions(p).size());
    }
}

// The bound is the documented one, not a looser one: an error of 1.1 times
// the documented bound fails and one of 0.5 times passes (K >= 64, where
// rounding the wrong value to FP32 moves it by far less than 0.1 bound).
void bound_is_the_documented_one(void **)
{
    for (const Problem &p : problems()) {
        if (p.k < 64)
            continue;
        const std::vector<float> good = sgemm_fp32(p, Order::fma);
        for (const auto &ij : positions(p)) {
            const int64_t i = ij.first, j = ij.second;
            std::vector<float> c = good;
            at(p, c, i, j) = static_cast<float>(ref_at(p, i, j) + 1.1 * documented_bound(p, i, j));
            gemm_check::Report r = run_check(p, c);
            assert_false(r.passed());
            assert_int_equal(r.worst_i, i);
            assert_int_equal(r.worst_j, j);
            c = good;
            at(p, c, i, j) = static_cast<float>(ref_at(p, i, j) - 0.5 * documented_bound(p, i, j));
            r = run_check(p, c);
            assert_true(r.passed());
        }
        std::printf("  %-26s 1.1 bound rejected, 0.5 bound accepted at %zu positions\n", name(p).c_str(),
                    positions(p).size());
    }
}

// A product left out of one element's sum, at K = 64: the error |a b| is
// far over the bound (about 66 * 2^-24 * 16) unless the product is tiny.
void one_dropped_product_rejected(void **)
{
    const Problem &p = problems()[0];
    assert_int_equal(p.k, 64);
    assert_true(p.ta == 'N' && p.tb == 'N' && p.alpha == 1.0 && p.beta == 0.0);
    const std::vector<float> good = sgemm_fp32(p, Order::fma);
    for (const auto &ij : positions(p)) {
        const int64_t i = ij.first, j = ij.second;
        int64_t drop = 0;  // the largest product of the element's sum
        double largest = -1;
        for (int64_t q = 0; q < p.k; ++q) {
            const double t = std::fabs(static_cast<double>(p.a[static_cast<size_t>(i + q * p.lda)]) *
                                       p.b[static_cast<size_t>(q + j * p.ldb)]);
            if (t > largest) {
                largest = t;
                drop = q;
            }
        }
        std::vector<float> c = good;
        float s = 0.0f;
        for (int64_t q = 0; q < p.k; ++q)
            if (q != drop)
                s = std::fma(p.a[static_cast<size_t>(i + q * p.lda)], p.b[static_cast<size_t>(q + j * p.ldb)], s);
        at(p, c, i, j) = s;
        const gemm_check::Report r = run_check(p, c);
        assert_false(r.passed());
        assert_int_equal(r.failed, 1);
        assert_int_equal(r.worst_i, i);
        assert_int_equal(r.worst_j, j);
    }
    std::printf("  %-26s one product dropped from one element rejected at %zu positions\n", name(p).c_str(),
                positions(p).size());
}

// NaN and infinities fail, one at a time at each position; a NaN in the
// padding below row m is not part of C and is ignored.
void nonfinite_rejected(void **)
{
    for (const Problem &p : problems()) {
        const std::vector<float> good = sgemm_fp32(p, Order::fma);
        for (const auto &ij : positions(p)) {
            for (const float bad : {NAN, INFINITY, -INFINITY}) {
                std::vector<float> c = good;
                at(p, c, ij.first, ij.second) = bad;
                const gemm_check::Report r = run_check(p, c);
                assert_false(r.passed());
                assert_int_equal(r.nonfinite, 1);
                assert_int_equal(r.failed, 1);
                assert_int_equal(r.worst_i, ij.first);
                assert_int_equal(r.worst_j, ij.second);
                assert_true(std::isinf(r.worst));
            }
        }
        std::vector<float> c = good;
        for (int64_t j = 0; j < p.n; ++j)
            for (int64_t i = p.m; i < p.ldc; ++i)
                at(p, c, i, j) = NAN;
        assert_true(run_check(p, c).passed());
        std::printf("  %-26s NaN, +inf, -inf rejected at %zu positions; NaN padding ignored\n", name(p).c_str(),
                    positions(p).size());
    }
}

// A reference that is not finite, or a negative magnitude, cannot vouch for
// anything: the check fails.
void bad_reference_rejected(void **)
{
    Problem p = problems()[0];
    const std::vector<float> good = sgemm_fp32(p, Order::fma);
    p.ref[5] = NAN;
    gemm_check::Report r = run_check(p, good);
    assert_false(r.passed());
    assert_int_equal(r.bad_reference, 1);
    p = problems()[0];
    p.mag[7] = -1.0;
    r = run_check(p, good);
    assert_false(r.passed());
    assert_int_equal(r.bad_reference, 1);
    p = problems()[0];
    p.mag[9] = INFINITY;
    r = run_check(p, good);
    assert_false(r.passed());
    assert_int_equal(r.bad_reference, 1);
    std::printf("  %-26s NaN reference, negative and infinite magnitude rejected\n", name(p).c_str());
}

// Where K is so large that the bound exceeds every |R|, an all-zero C
// passes (which is why bench_gemm warns when zero_detectable is 0); with
// inputs in (-1, 1) the bound passes a typical |R| from about K = 2^16 and
// the largest of an 8192^2 output from about K = 2^18. At K + 2 >= 2^24 no
// bound exists and nothing passes.
void zero_detectable_and_no_bound(void **)
{
    const Problem big = make_problem('N', 'N', 2, 2, int64_t(1) << 21, 1.0, 0.0, 21);
    const std::vector<float> zero(static_cast<size_t>(big.ldc * big.n), 0.0f);
    gemm_check::Report r = run_check(big, zero);
    std::printf("  %-26s all zero: zero_detectable %lld (the check cannot tell C = 0 here)\n", name(big).c_str(),
                static_cast<long long>(r.zero_detectable));
    assert_int_equal(r.zero_detectable, 0);
    assert_true(r.passed());
    const Problem &p = problems()[0];
    r = run_check(p, std::vector<float>(static_cast<size_t>(p.ldc * p.n), 0.0f));
    assert_true(r.zero_detectable > 0);
    const std::vector<float> good = sgemm_fp32(p, Order::fma);
    r = gemm_check::check(p.m, p.n, good.data(), p.ldc, p.ref.data(), p.m, p.mag.data(), p.m, (int64_t(1) << 24) - 2);
    assert_true(r.no_bound);
    assert_false(r.passed());
    assert_false(std::isfinite(gemm_check::bound_factor((int64_t(1) << 24) - 2)));
    assert_true(std::isfinite(gemm_check::bound_factor((int64_t(1) << 24) - 3)));
}

// The failure message names the worst element and its bound.
void message_names_the_element(void **)
{
    const Problem &p = problems()[0];
    std::vector<float> c = sgemm_fp32(p, Order::fma);
    at(p, c, 7, 3) = 1000.0f;
    const std::string msg = gemm_check::describe(run_check(p, c));
    std::printf("  message: %s\n", msg.c_str());
    assert_non_null(std::strstr(msg.c_str(), "C(7, 3) = 1000"));
    assert_non_null(std::strstr(msg.c_str(), "1 of 561 elements over their bound"));
}

// check_parallel gives check's report, field for field, however the
// columns are shared out: on a correct output, on one with two infinite
// elements in different columns (a tie: the first must be named), on one
// with a NaN and a wrong element, and on zero.
void parallel_matches_whole(void **)
{
    const Problem &p = problems()[3];  // TT 17 x 40
    const std::vector<float> good = sgemm_fp32(p, Order::fma);
    std::vector<float> ties = good;
    at(p, ties, 4, 30) = INFINITY;  // ratio +inf, as at (4, 9): a tie
    at(p, ties, 4, 9) = -INFINITY;
    std::vector<float> nan = good;
    at(p, nan, 16, 39) = NAN;
    at(p, nan, 0, 0) = 50.0f;
    const std::vector<float> zero(good.size(), 0.0f);
    const std::vector<float> *const outputs[] = {&good, &ties, &nan, &zero};
    for (const std::vector<float> *c : outputs) {
        const gemm_check::Report w = run_check(p, *c);
        for (int threads : {1, 2, 3, 7, 40, 64}) {
            const gemm_check::Report r = gemm_check::check_parallel(p.m, p.n, c->data(), p.ldc, p.ref.data(), p.m,
                                                                    p.mag.data(), p.m, p.k, threads);
            assert_int_equal(r.checked, w.checked);
            assert_int_equal(r.failed, w.failed);
            assert_int_equal(r.nonfinite, w.nonfinite);
            assert_int_equal(r.bad_reference, w.bad_reference);
            assert_int_equal(r.zero_detectable, w.zero_detectable);
            assert_int_equal(r.worst_i, w.worst_i);
            assert_int_equal(r.worst_j, w.worst_j);
            assert_true(r.worst == w.worst);
            assert_true(r.worst_c == w.worst_c || (std::isnan(r.worst_c) && std::isnan(w.worst_c)));
            assert_true(r.worst_ref == w.worst_ref);
            assert_true(r.worst_bound == w.worst_bound);
            assert_true(r.passed() == w.passed());
        }
    }
    const gemm_check::Report t = run_check(p, ties);
    assert_int_equal(t.worst_i, 4);
    assert_int_equal(t.worst_j, 9);
    std::printf("  %-26s split over 1 to 64 threads: the same report as one pass\n", name(p).c_str());
}

// add_beta_term adds beta C0 to R and |beta| |C0| to G, element by element
// with C0's own leading dimension, and leaves them alone (C0 unread) when
// beta is 0. Then, on a product whose beta C0 outweighs alpha op(A) op(B)
// (alpha 2^-20): an error of half the bound that counts |beta| |C0| passes,
// and fails against G without that term; a C that ignores beta fails.
void beta_term(void **)
{
    const float c0[] = {1.5f, -2.0f, NAN, 4.0f, 0.25f, NAN};  // 2 x 2, ld 3: row 2 is padding
    double ref[] = {1.0, 2.0, 3.0, 4.0}, mag[] = {1.0, 2.0, 3.0, 4.0};
    gemm_check::add_beta_term(2, 2, -0.5, c0, 3, ref, mag, 2);
    const double want_ref[] = {0.25, 3.0, 1.0, 3.875}, want_mag[] = {1.75, 3.0, 5.0, 4.125};
    for (int e = 0; e < 4; ++e) {
        assert_true(ref[e] == want_ref[e]);
        assert_true(mag[e] == want_mag[e]);
    }
    gemm_check::add_beta_term(2, 2, 0.0, nullptr, 3, ref, mag, 2);
    for (int e = 0; e < 4; ++e)
        assert_true(ref[e] == want_ref[e] && mag[e] == want_mag[e]);

    const Problem p = make_problem('N', 'T', 30, 20, 300, std::ldexp(1.0, -20), 1.0, 31);
    Problem no_beta = p;  // R and G of alpha op(A) op(B) alone
    gemm_check::reference_cpu(p.ta, p.tb, p.m, p.n, p.k, p.alpha, p.a.data(), p.lda, p.b.data(), p.ldb, 0.0,
                              nullptr, p.ldc, no_beta.ref.data(), no_beta.mag.data(), p.m);
    std::vector<float> c = sgemm_fp32(p, Order::fma);
    assert_true(run_check(p, c).passed());
    const int64_t i = 7, j = 11;
    at(p, c, i, j) = static_cast<float>(ref_at(p, i, j) + 0.5 * documented_bound(p, i, j));
    assert_true(run_check(p, c).passed());
    no_beta.ref = p.ref;
    const gemm_check::Report without = run_check(no_beta, c);
    assert_false(without.passed());
    assert_int_equal(without.worst_i, i);
    assert_int_equal(without.worst_j, j);
    Problem zero_beta = p;
    zero_beta.beta = 0.0;
    assert_false(run_check(p, sgemm_fp32(zero_beta, Order::fma)).passed());
    std::printf("  %-26s beta C0 in R, |beta| |C0| in G: needed and sufficient\n", name(p).c_str());
}

// The ranks of the interval at 95% (and one at 99%), from the binomial
// distribution computed exactly elsewhere: the largest j with
// P(Binomial(n, 1/2) < j) <= (1 - confidence) / 2.
void paired_ranks(void **)
{
    const int n[] = {3, 5, 6, 9, 15, 31, 100, 1075, 2000}, j[] = {0, 0, 1, 2, 4, 10, 40, 505, 956};
    for (size_t i = 0; i < sizeof n / sizeof n[0]; ++i)
        assert_int_equal(bench::sign_rank(n[i], 0.95), j[i]);
    assert_int_equal(bench::sign_rank(31, 0.99), 8);
}

// Rounds whose ratios are 1, 2, ..., 31 in some order: median 16, the 95%
// interval [10, 22]; five rounds: no interval; rounds with a time missing
// are not rounds.
void paired_interval(void **)
{
    std::vector<double> x, base;
    std::mt19937 rng(5);
    std::vector<int> order(31);
    for (int r = 0; r < 31; ++r)
        order[static_cast<size_t>(r)] = r + 1;
    std::shuffle(order.begin(), order.end(), rng);
    for (int q : order) {
        const double b = 1.0 + (rng() % 1000) / 100.0;
        base.push_back(b);
        x.push_back(b * q);
    }
    bench::PairedRatio p = bench::paired_ratio(x, base);
    assert_int_equal(p.rounds, 31);
    assert_true(std::fabs(p.median - 16.0) < 1e-12);
    assert_true(std::fabs(p.lo - 10.0) < 1e-12);
    assert_true(std::fabs(p.hi - 22.0) < 1e-12);
    x.resize(5);
    base.resize(5);
    p = bench::paired_ratio(x, base);
    assert_int_equal(p.rounds, 5);
    assert_true(p.lo == 0.0 && p.hi == 0.0 && p.median > 0.0);
    p = bench::paired_ratio({2.0, 0.0, 3.0, 6.0}, {1.0, 1.0, 0.0, 2.0});  // rounds 2 and 3, an even count
    assert_int_equal(p.rounds, 2);
    assert_true(std::fabs(p.median - 2.5) < 1e-12);
    assert_int_equal(bench::paired_ratio({}, {}).rounds, 0);
}

// A path 3% slower than the other in every round, both drifting by a
// factor of three over the rounds with 0.5% noise of their own: the
// pairing finds it slower by more than 2% (the interval's lower end above
// 1.02), while the two paths' own medians overlap; the same path against
// itself is not.
void paired_through_drift(void **)
{
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> noise(-0.005, 0.005);
    std::vector<double> base, slow, same;
    for (int r = 0; r < 31; ++r) {
        const double drift = 1.0 + 2.0 * ((r * 7) % 31) / 30.0;
        base.push_back(10.0 * drift * (1.0 + noise(rng)));
        slow.push_back(10.3 * drift * (1.0 + noise(rng)));
        same.push_back(10.0 * drift * (1.0 + noise(rng)));
    }
    const bench::PairedRatio s = bench::paired_ratio(slow, base), a = bench::paired_ratio(same, base);
    assert_true(s.lo > 1.02 && s.hi < 1.045);
    assert_true(a.lo < 1.02 && a.lo > 0.98 && a.hi < 1.02);
    std::vector<double> sb = base, ss = slow;
    std::sort(sb.begin(), sb.end());
    std::sort(ss.begin(), ss.end());
    assert_true(ss[10] < sb[20]);  // unpaired, the two spreads overlap
    std::printf("  3%% slower through a threefold drift: paired [%.4f, %.4f], the same path [%.4f, %.4f]\n", s.lo,
                s.hi, a.lo, a.hi);
}

}  // namespace

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(correct_results_pass),
        cmocka_unit_test(zero_rejected),
        cmocka_unit_test(transposed_rejected),
        cmocka_unit_test(half_k_rejected),
        cmocka_unit_test(one_wrong_element_rejected),
        cmocka_unit_test(bound_is_the_documented_one),
        cmocka_unit_test(one_dropped_product_rejected),
        cmocka_unit_test(nonfinite_rejected),
        cmocka_unit_test(bad_reference_rejected),
        cmocka_unit_test(zero_detectable_and_no_bound),
        cmocka_unit_test(message_names_the_element),
        cmocka_unit_test(parallel_matches_whole),
        cmocka_unit_test(beta_term),
        cmocka_unit_test(paired_ranks),
        cmocka_unit_test(paired_interval),
        cmocka_unit_test(paired_through_drift),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
