// The random-shape benchmark's problems (bench/random_shapes.cpp), on the
// CPU: the same seed gives the same problems; every problem lies inside the
// caps, with leading dimensions that hold its operands; the four transpose
// pairs, the three alpha/beta classes, padded and odd leading dimensions,
// tiny and large sizes all occur; and tile edges are oversampled (with
// edge_share 1 no dimension is a multiple of 4 apart from the clamped
// largest, where plain draws give many); the draws of --large stay in
// their range and caps and straddle the fp32-tc math's threshold. Also what the summary judges
// them by: the floor, the memory-bound and ordinary classes, percentiles
// and the geometric mean.
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cmath>
#include <setjmp.h>
#include <vector>

extern "C" {
#include <cmocka.h>
}

#include "random_shapes.hpp"

using bench::RandomLimits;
using bench::RandomShape;

namespace {

constexpr int kCount = 3000;

bool same(const RandomShape &a, const RandomShape &b)
{
    return a.m == b.m && a.n == b.n && a.k == b.k && a.ta == b.ta && a.tb == b.tb && a.lda == b.lda &&
           a.ldb == b.ldb && a.ldc == b.ldc && a.alpha == b.alpha && a.beta == b.beta && a.ab_class == b.ab_class;
}

void test_seeded(void **)
{
    const auto a = bench::draw_random_shapes(11, 200), b = bench::draw_random_shapes(11, 200);
    const auto c = bench::draw_random_shapes(12, 200);
    assert_int_equal(a.size(), 200);
    int differ = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        if (!same(a[i], b[i]))
            fail_msg("seed 11 drew problem %zu differently twice", i);
        differ += !same(a[i], c[i]);
    }
    if (differ < 190)
        fail_msg("seeds 11 and 12 share %d of 200 problems", 200 - differ);
}

void test_inside_caps(void **)
{
    const RandomLimits lim;
    for (const RandomShape &s : bench::draw_random_shapes(1, kCount)) {
        for (int64_t d : {s.m, s.n, s.k})
            if (d < 1 || d > lim.max_dim)
                fail_msg("dimension %lld outside [1, %lld]", static_cast<long long>(d),
                         static_cast<long long>(lim.max_dim));
        if (2.0 * s.m * s.n * s.k > lim.max_flops || bench::stored_bytes(s) > lim.max_bytes)
            fail_msg("%lld x %lld x %lld over the caps", static_cast<long long>(s.m), static_cast<long long>(s.n),
                     static_cast<long long>(s.k));
        if (s.lda < (s.ta == 'N' ? s.m : s.k) || s.ldb < (s.tb == 'N' ? s.k : s.n) || s.ldc < s.m)
            fail_msg("a leading dimension shorter than its column");
    }
}

void test_variety(void **)
{
    int pairs[4] = {}, classes[3] = {}, padded = 0, odd_pad = 0, tiny = 0, large = 0;
    for (const RandomShape &s : bench::draw_random_shapes(2, kCount)) {
        ++pairs[(s.ta == 'T' ? 2 : 0) + (s.tb == 'T' ? 1 : 0)];
        ++classes[s.ab_class];
        const int64_t pad = s.ldc - s.m;
        padded += pad > 0;
        odd_pad += pad % 2 == 1;
        tiny += s.m <= 16;
        large += s.m >= 4096;
        if (s.ab_class == 0 && (s.alpha != 1.0f || s.beta != 0.0f))
            fail_msg("class 0 is alpha 1, beta 0");
        if (s.ab_class == 1 && (s.alpha != -1.0f || s.beta != 1.0f))
            fail_msg("class 1 is alpha -1, beta 1");
        if (s.ab_class == 2 && (std::fabs(s.alpha) < 0.25f || std::fabs(s.alpha) > 2.0f ||
                                std::fabs(s.beta) < 0.25f || std::fabs(s.beta) > 2.0f))
            fail_msg("class 2 draws |alpha|, |beta| from [0.25, 2]");
    }
    for (int p : pairs)
        if (p < kCount / 8)
            fail_msg("a transpose pair drawn %d times of %d", p, kCount);
    for (int c : classes)
        if (c < kCount / 5)
            fail_msg("an alpha/beta class drawn %d times of %d", c, kCount);
    if (padded < kCount / 4 || padded > 3 * kCount / 4 || odd_pad < kCount / 8)
        fail_msg("ldc padded %d times, by an odd amount %d times, of %d", padded, odd_pad, kCount);
    if (tiny < kCount / 10 || large < kCount / 50)
        fail_msg("m <= 16 drawn %d times, m >= 4096 %d times, of %d", tiny, large, kCount);
}

// Edges: a dimension put near an edge is 1 to 3 off a multiple of at least
// 8, so never a multiple of 4; plain draws give multiples of 4 often.
void test_edges(void **)
{
    const auto multiples_of_4 = [](double share) {
        RandomLimits lim;
        lim.edge_share = share;
        int n = 0;
        for (const RandomShape &s : bench::draw_random_shapes(3, kCount, lim))
            for (int64_t d : {s.m, s.n, s.k})
                n += d % 4 == 0 && d != lim.max_dim;
        return n;
    };
    const int always = multiples_of_4(1.0), never = multiples_of_4(0.0);
    if (always != 0)
        fail_msg("%d dimensions put near an edge are multiples of 4", always);
    if (never < 3 * kCount / 20)
        fail_msg("plain draws gave only %d multiples of 4 in %d dimensions", never, 3 * kCount);
}

// --large: every dimension in [2048, 20000], inside its caps; a good
// share of the problems in the fp32-tc math's range (every dimension at
// least 4096) and a good share just below it, every transpose pair.
void test_large(void **)
{
    const RandomLimits lim = bench::large_limits();
    assert_int_equal(lim.min_dim, 2048);
    int in_range = 0, below = 0, pairs[4] = {};
    for (const RandomShape &s : bench::draw_random_shapes(4, kCount, lim)) {
        for (int64_t d : {s.m, s.n, s.k})
            if (d < lim.min_dim || d > lim.max_dim)
                fail_msg("dimension %lld outside [%lld, %lld]", static_cast<long long>(d),
                         static_cast<long long>(lim.min_dim), static_cast<long long>(lim.max_dim));
        if (2.0 * s.m * s.n * s.k > lim.max_flops || bench::stored_bytes(s) > lim.max_bytes)
            fail_msg("%lld x %lld x %lld over the caps", static_cast<long long>(s.m), static_cast<long long>(s.n),
                     static_cast<long long>(s.k));
        const bool all = s.m >= 4096 && s.n >= 4096 && s.k >= 4096;
        in_range += all;
        below += !all;
        ++pairs[(s.ta == 'T' ? 2 : 0) + (s.tb == 'T' ? 1 : 0)];
    }
    if (in_range < kCount / 5 || below < kCount / 5)
        fail_msg("%d of %d problems with every dimension >= 4096, %d not", in_range, kCount, below);
    for (int p : pairs)
        if (p < kCount / 8)
            fail_msg("a transpose pair drawn %d times of %d", p, kCount);
}

RandomShape shape(int64_t m, int64_t n, int64_t k, float beta)
{
    RandomShape s;
    s.m = m;
    s.n = n;
    s.k = k;
    s.beta = beta;
    return s;
}

bool near(double a, double b)
{
    return std::fabs(a - b) <= 1e-9 * std::fabs(b);
}

// The floor: bytes of the operands as used (C twice when beta reads it)
// over 2.88 TB/s, or flops over 66.9 TFLOP/s, whichever is longer; the
// classes the summary reports on their own.
void test_floor_and_classes(void **)
{
    // 4096 x 4096 x 32: 4 (2 x 4096 x 32 + 4096^2) bytes, C read too with beta 1.
    assert_true(near(bench::floor_us(shape(4096, 4096, 32, 0.0f)), 68157440.0 / 2.88e12 * 1e6));
    assert_true(near(bench::floor_us(shape(4096, 4096, 32, 1.0f)), 135266304.0 / 2.88e12 * 1e6));
    assert_true(near(bench::floor_us(shape(4096, 4096, 4096, 0.0f)), 2.0 * 4096.0 * 4096.0 * 4096.0 / 66.9e12 * 1e6));
    assert_true(near(bench::flops(shape(3, 5, 7, 0.0f)), 210.0));
    assert_true(bench::memory_bound(shape(1000, 1000, 32, 0.0f)));
    assert_false(bench::memory_bound(shape(1000, 1000, 33, 0.0f)));
    assert_true(bench::memory_bound(shape(16, 1000, 1000, 0.0f)));
    assert_true(bench::memory_bound(shape(1000, 16, 1000, 0.0f)));
    assert_false(bench::memory_bound(shape(17, 17, 33, 0.0f)));
    assert_true(bench::ordinary(shape(17, 17, 65, 0.0f)));
    assert_false(bench::ordinary(shape(17, 17, 64, 0.0f)));
    assert_false(bench::ordinary(shape(16, 1000, 1000, 0.0f)));
    assert_false(bench::ordinary(shape(1000, 16, 1000, 0.0f)));
}

// Percentiles interpolate between the nearest ranks, as numpy's default
// and bench/random_report.py do; the geometric mean is of the values.
void test_statistics(void **)
{
    const std::vector<double> five = {5, 1, 4, 2, 3};
    assert_true(bench::percentile(five, 0) == 1.0);
    assert_true(bench::percentile(five, 25) == 2.0);
    assert_true(bench::percentile(five, 50) == 3.0);
    assert_true(bench::percentile(five, 100) == 5.0);
    assert_true(near(bench::percentile(five, 5), 1.2));
    assert_true(near(bench::percentile({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 5), 1.45));
    assert_true(bench::percentile({0.7}, 5) == 0.7);
    assert_true(bench::percentile({}, 50) == 0.0);
    assert_true(near(bench::geomean({1, 4, 16}), 4.0));
    assert_true(near(bench::geomean({0.5, 2.0}), 1.0));
    assert_true(bench::geomean({}) == 0.0);
}

// bench_random --shapes: problems read back as written, comments and
// blank lines skipped, the alpha/beta class derived; each malformed line
// refused with its number.
void test_parse_shapes(void **)
{
    std::vector<RandomShape> v;
    std::string error;
    assert_true(bench::parse_shapes("# a comment\n\n100 200 300 T N 300 300 101 1 0\n"
                                    "  7 8 9 N T 7 8 9 -1 1 # trailing\n5 6 7 N N 5 7 5 0.5 2",
                                    &v, &error));
    assert_int_equal(v.size(), 3);
    assert_int_equal(v[0].m, 100);
    assert_int_equal(v[0].n, 200);
    assert_int_equal(v[0].k, 300);
    assert_int_equal(v[0].ta, 'T');
    assert_int_equal(v[0].tb, 'N');
    assert_int_equal(v[0].lda, 300);
    assert_int_equal(v[0].ldc, 101);
    assert_int_equal(v[0].ab_class, 0);
    assert_int_equal(v[1].ab_class, 1);
    assert_int_equal(v[1].ldb, 8);
    assert_int_equal(v[2].ab_class, 2);
    assert_true(v[2].alpha == 0.5f && v[2].beta == 2.0f);
    const char *const bad[] = {
        "100 200 300 T N 299 300 101 1 0\n",  // lda < k for T
        "100 200 300 N N 100 299 100 1 0\n",  // ldb < k
        "100 200 300 N N 100 300 99 1 0\n",   // ldc < m
        "100 200 300 X N 100 300 100 1 0\n",  // not N or T
        "0 200 300 N N 100 300 100 1 0\n",    // m < 1
        "100 200 300 N N 100 300 100 1\n",    // beta missing
        "100 200 300 N N 100 300 100 1 0 9\n",  // a field too many
    };
    for (const char *text : bad) {
        assert_false(bench::parse_shapes(text, &v, &error));
        assert_true(error.rfind("line 1:", 0) == 0);
    }
    assert_false(bench::parse_shapes("1 1 1 N N 1 1 1 1 0\nnonsense\n", &v, &error));
    assert_true(error.rfind("line 2:", 0) == 0);
    assert_false(bench::parse_shapes("# nothing\n\n", &v, &error));
    assert_string_equal(error.c_str(), "no problem in it");
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seeded),
        cmocka_unit_test(test_inside_caps),
        cmocka_unit_test(test_variety),
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_large),
        cmocka_unit_test(test_floor_and_classes),
        cmocka_unit_test(test_statistics),
        cmocka_unit_test(test_parse_shapes),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
