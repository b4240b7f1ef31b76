// bench_multi's host side (bench/multi_check.hpp) on the CPU, no GPU
// needed (make test-bench-multi):
//   - the inputs: the same values for any number of threads, in (-1, 1);
//     poison writes the NaN it names, copy copies;
//   - the sampled grid: sorted, no repeats, the first and last index, one
//     index in every band, every index when there are fewer than bands;
//   - the sampled check: correct FP32 products pass (every transpose pair,
//     odd sizes, beta 0 and 1), and it rejects a wrong element on the grid,
//     one NaN anywhere (an unwritten tile), the beta term left out and
//     op(A) read untransposed; the message names the element;
//   - the full check (a reference given, as bench_multi's from the device)
//     passes the same products and rejects one wrong element off the grid;
//   - the device lists of TGEMM_DEVICES and --xt-devices: numbers and
//     "all"; empty parts, signs, spaces, letters, "auto" and devices that
//     do not exist refused with the reason.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

// cmocka.h declares only part of its interface extern "C".
extern "C" {
#include <cmocka.h>
}

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "multi_check.hpp"

namespace {

using multi::Check;
using multi::CheckResult;
using multi::Shape;

Shape shape(int64_t m, int64_t n, int64_t k, char ta, char tb)
{
    Shape s;
    s.m = m;
    s.n = n;
    s.k = k;
    s.ta = ta;
    s.tb = tb;
    return s;
}

// Operands as bench_multi stores them (no padding), and C = op(A) op(B) +
// beta C0 summed in FP32, a correct FP32 result.
struct Product {
    Shape s;
    double beta = 0;
    std::vector<float> a, b, c0, c;
};

Product make(const Shape &s, double beta, uint64_t key)
{
    Product p;
    p.s = s;
    p.beta = beta;
    p.a.resize(s.na());
    p.b.resize(s.nb());
    p.c0.resize(s.nc());
    p.c.resize(s.nc());
    multi::fill(p.a.data(), s.na(), key + 1);
    multi::fill(p.b.data(), s.nb(), key + 2);
    multi::fill(p.c0.data(), s.nc(), key + 3);
    const int64_t lda = s.lda(), ldb = s.ldb();
    for (int64_t j = 0; j < s.n; ++j)
        for (int64_t i = 0; i < s.m; ++i) {
            float sum = 0.0f;
            for (int64_t q = 0; q < s.k; ++q) {
                const float x = s.ta == 'N' ? p.a[i + q * lda] : p.a[q + i * lda];
                const float y = s.tb == 'N' ? p.b[q + j * ldb] : p.b[j + q * ldb];
                sum += x * y;
            }
            p.c[i + j * s.m] = sum + static_cast<float>(beta) * p.c0[i + j * s.m];
        }
    return p;
}

Check sampled(const Product &p, int64_t sample = 64)
{
    Check chk;
    multi::make_sample(p.s, p.a.data(), p.b.data(), p.beta, p.c0.data(), sample, 99, chk);
    return chk;
}

Check full(const Product &p)
{
    Check chk;
    chk.ref.reset(new double[p.s.nc()]);
    chk.mag.reset(new double[p.s.nc()]);
    gemm_check::reference_cpu(p.s.ta, p.s.tb, p.s.m, p.s.n, p.s.k, 1.0, p.a.data(), p.s.lda(), p.b.data(),
                              p.s.ldb(), p.beta, p.c0.data(), p.s.m, chk.ref.get(), chk.mag.get(), p.s.m);
    chk.full = true;
    return chk;
}

const Shape kShapes[] = {shape(67, 45, 33, 'N', 'N'), shape(67, 45, 33, 'N', 'T'), shape(67, 45, 33, 'T', 'N'),
                         shape(67, 45, 33, 'T', 'T'), shape(1, 300, 129, 'N', 'N'), shape(300, 1, 129, 'T', 'T'),
                         shape(130, 70, 1, 'N', 'T')};

void fill_is_deterministic(void **)
{
    const size_t n = 100003;
    std::vector<float> one(n), many(n);
    multi::g_threads = 1;
    multi::fill(one.data(), n, 5);
    multi::g_threads = 7;
    multi::fill(many.data(), n, 5);
    assert_memory_equal(one.data(), many.data(), n * sizeof(float));
    double sum = 0;
    for (float x : one) {
        assert_true(x > -1.0f && x < 1.0f);
        sum += x;
    }
    assert_true(std::fabs(sum / n) < 0.01);  // centred
    std::vector<float> other(n);
    multi::fill(other.data(), n, 6);
    assert_true(std::memcmp(one.data(), other.data(), n * sizeof(float)) != 0);
    multi::poison(many.data(), n);
    uint32_t bits;
    std::memcpy(&bits, &many[n - 1], sizeof bits);
    assert_int_equal(bits, multi::kPoison);
    assert_true(std::isnan(many[0]));
    multi::copy(many.data(), one.data(), n);
    assert_memory_equal(one.data(), many.data(), n * sizeof(float));
}

void grid(void **)
{
    bench::SplitMix64 rng{3};
    for (int64_t n : {1, 2, 5, 64, 65, 1000, 16384}) {
        const int64_t bands = 8;
        const std::vector<int64_t> v = multi::stratified(n, bands, rng);
        assert_int_equal(v.front(), 0);
        assert_int_equal(v.back(), n - 1);
        for (size_t i = 1; i < v.size(); ++i)
            assert_true(v[i] > v[i - 1]);
        if (n <= bands) {
            assert_int_equal(static_cast<int64_t>(v.size()), n);
            continue;
        }
        for (int64_t b = 0; b < bands; ++b) {
            const int64_t lo = n * b / bands, hi = n * (b + 1) / bands;
            bool hit = false;
            for (int64_t x : v)
                hit = hit || (x >= lo && x < hi);
            assert_true(hit);
        }
    }
}

void correct_products_pass(void **)
{
    multi::g_threads = 3;
    for (const Shape &s : kShapes)
        for (double beta : {0.0, 1.0}) {
            const Product p = make(s, beta, 10);
            const CheckResult rs = multi::check_output(s, sampled(p), p.c.data());
            if (!rs.passed)
                fail_msg("%s beta %g, sampled: %s", s.name().c_str(), beta, rs.detail.c_str());
            assert_true(rs.worst < 1.0);
            const CheckResult rf = multi::check_output(s, full(p), p.c.data());
            if (!rf.passed)
                fail_msg("%s beta %g, full: %s", s.name().c_str(), beta, rf.detail.c_str());
        }
}

void sampled_rejects(void **)
{
    multi::g_threads = 4;
    const Shape s = shape(67, 45, 33, 'T', 'N');
    const Product p = make(s, 0.0, 20);
    const Check chk = sampled(p);
    assert_true(multi::check_output(s, chk, p.c.data()).passed);

    // A wrong element on the grid.
    std::vector<float> c = p.c;
    const int64_t i = chk.rows[chk.rows.size() / 2], j = chk.cols[chk.cols.size() / 2];
    c[i + j * s.m] += 0.5f;
    CheckResult r = multi::check_output(s, chk, c.data());
    assert_false(r.passed);
    const std::string at = "C(" + std::to_string(i) + ", " + std::to_string(j) + ")";
    if (r.detail.find(at) == std::string::npos || r.detail.find("1 of ") != 0)
        fail_msg("the message does not name %s as the one element: %s", at.c_str(), r.detail.c_str());

    // The bound is the documented one: 3 bounds off fails with error / bound
    // about 3, 0.3 of it passes.
    const size_t x = chk.rows.size() + 1;  // grid element (rows[1], cols[1])
    const int64_t xi = chk.rows[x % chk.rows.size()], xj = chk.cols[x / chk.rows.size()];
    const double bound = gemm_check::bound_factor(s.k) * chk.smag[x] + gemm_check::bound_floor(s.k);
    c = p.c;
    c[xi + xj * s.m] = static_cast<float>(chk.sref[x] + 3 * bound);
    r = multi::check_output(s, chk, c.data());
    assert_false(r.passed);
    if (!(r.worst > 2.9 && r.worst < 3.1))
        fail_msg("3 bounds off: error / bound %g", r.worst);
    c[xi + xj * s.m] = static_cast<float>(chk.sref[x] - 0.3 * bound);
    r = multi::check_output(s, chk, c.data());
    assert_true(r.passed);
    assert_true(r.worst > 0.25 && r.worst < 1.0);

    // One NaN anywhere: a tile the call never wrote.
    c = p.c;
    int64_t off_i = 1;
    while (std::find(chk.rows.begin(), chk.rows.end(), off_i) != chk.rows.end())
        ++off_i;
    c[off_i + 3 * s.m] = std::nanf("");
    r = multi::check_output(s, chk, c.data());
    assert_false(r.passed);
    assert_true(std::isinf(r.worst));
    const std::string nan_at = "C(" + std::to_string(off_i) + ", 3)";
    if (r.detail.find("1 of " + std::to_string(s.nc()) + " elements not finite") == std::string::npos ||
        r.detail.find(nan_at) == std::string::npos)
        fail_msg("the message does not count the NaN at %s: %s", nan_at.c_str(), r.detail.c_str());

    // op(A) read as if it were not transposed.
    Shape wrong = s;
    wrong.ta = 'N';
    const Product q = make(wrong, 0.0, 20);  // the same A's values, read the other way
    assert_false(multi::check_output(s, chk, q.c.data()).passed);

    // All zeros.
    std::vector<float> zero(s.nc(), 0.0f);
    assert_false(multi::check_output(s, chk, zero.data()).passed);
}

void beta_term(void **)
{
    multi::g_threads = 2;
    const Shape s = shape(40, 50, 60, 'N', 'T');
    const Product with = make(s, 1.0, 30);
    const Product without = make(s, 0.0, 30);
    // C computed without C0 is wrong against a reference with it, and the reverse.
    assert_false(multi::check_output(s, sampled(with), without.c.data()).passed);
    assert_false(multi::check_output(s, sampled(without), with.c.data()).passed);
    assert_false(multi::check_output(s, full(with), without.c.data()).passed);
}

void full_rejects_off_grid(void **)
{
    multi::g_threads = 2;
    const Shape s = shape(67, 45, 33, 'N', 'N');
    const Product p = make(s, 0.0, 40);
    const Check grid_chk = sampled(p, 4);  // a 4-band grid misses most elements
    std::vector<float> c = p.c;
    int64_t i = 1;
    while (std::find(grid_chk.rows.begin(), grid_chk.rows.end(), i) != grid_chk.rows.end())
        ++i;
    c[i + 7 * s.m] += 0.5f;
    assert_true(multi::check_output(s, grid_chk, c.data()).passed);  // what a sample cannot see
    const CheckResult r = multi::check_output(s, full(p), c.data());
    assert_false(r.passed);
    assert_true(r.detail.find("C(" + std::to_string(i) + ", 7)") != std::string::npos);
}

void device_lists(void **)
{
    std::vector<int> v;
    std::string err;
    assert_true(multi::parse_devices("0,1,2,3", 4, v, err));
    assert_int_equal(v.size(), 4);
    assert_int_equal(v[3], 3);
    assert_true(multi::parse_devices("2", 4, v, err));
    assert_int_equal(v.size(), 1);
    assert_int_equal(v[0], 2);
    assert_true(multi::parse_devices("0,0", 1, v, err));  // one device listed twice: kept as given
    assert_int_equal(v.size(), 2);
    assert_true(multi::parse_devices("all", 3, v, err));
    assert_int_equal(v.size(), 3);
    assert_int_equal(v[2], 2);
    for (const char *bad : {"", ",", "0,", ",1", "0,,1", "a", "1a", "+1", "-1", " 1", "1 ", "auto", "0;1", "all,0"}) {
        err.clear();
        if (multi::parse_devices(bad, 4, v, err))
            fail_msg("'%s' accepted", bad);
        assert_true(err.find("is not a list of device numbers") != std::string::npos);
    }
    assert_false(multi::parse_devices("0,4", 4, v, err));
    assert_string_equal(err.c_str(), "device 4 does not exist (4 device(s))");
}

}  // namespace

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fill_is_deterministic),
        cmocka_unit_test(grid),
        cmocka_unit_test(correct_products_pass),
        cmocka_unit_test(sampled_rejects),
        cmocka_unit_test(beta_term),
        cmocka_unit_test(full_rejects_off_grid),
        cmocka_unit_test(device_lists),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
