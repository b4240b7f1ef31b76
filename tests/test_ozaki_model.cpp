// The CPU model of the fp32-tc math (tests/ozaki_model.cpp, with the
// kernels' element functions, src/kernels/ozaki/element.hpp), no GPU:
//  - its constants (Garner's, the scaling limits) recomputed; the CRT
//    recovering integers from their residues exactly;
//  - the exact scaling exponent against the logarithm it replaces, and the
//    residues against 128-bit integers;
//  - contract (a) on the acceptance inputs at small sizes: wherever the
//    certificate lets the mode run, every element of C is within
//    gamma_K (|alpha| |A||B| + |beta| |C|) of an FP64 reference (gamma_(K+2)
//    where alpha != 1 or beta != 0: the two epilogue roundings strict has
//    too), at the certified N and at every larger one; every transpose, ld
//    padding, alpha/beta; C's padding untouched, C unread where beta == 0;
//  - the certificate's search (cert_raise) from any start against a scan
//    from the smallest candidate, on random element data; its target
//    (cert_target), the smaller of (gamma_K - 2u) / 16 and 2 sqrt(K) u; and
//    at K = 16384 on phi = 0 and 1 inputs, where gamma_K alone would allow
//    fewer moduli, the N the call runs and the mode's errors against FP64
//    (max relative to |A||B| and normwise) no larger than those of FP32
//    summed in order with fmaf (contract (b));
//  - Inf or NaN, or an inexact K balancing: the mode declines, C untouched.
// Seeds: TGEMM_TEST_SEED, else fresh; printed.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <setjmp.h>
#include <vector>

extern "C" {
#include <cmocka.h>
}

#include "kernels/ozaki/element.hpp"
#include "ozaki_inputs.hpp"
#include "ozaki_model.hpp"

using namespace tgemm::ozaki;
using ozaki_inputs::Matrix;

namespace {

uint64_t base_seed()
{
    static const uint64_t seed = [] {
        const char *e = std::getenv("TGEMM_TEST_SEED");
        const uint64_t s = e && *e ? std::strtoull(e, nullptr, 10)
                                   : static_cast<uint64_t>(std::time(nullptr)) * 2654435761u;
        std::printf("seed: TGEMM_TEST_SEED=%" PRIu64 "\n", s);
        return s;
    }();
    return seed;
}

float bits_float(uint32_t u)
{
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

void test_garner_table(void **)
{
    constexpr GarnerTable g = TGEMM_OZAKI_GARNER;
    for (int l = 0; l < kMaxModuli; ++l) {
        const int p = kmod(l);
        int prod = 1 % p;  // p_0 ... p_{s-1} mod p_l
        for (int s = 0; s < kMaxModuli; ++s) {
            const int want = s < l ? prod : 0;  // in [0, p_l) by construction
            if (g.prefix[l][s] != want)
                fail_msg("prefix[%d][%d] = %d, want %d", l, s, g.prefix[l][s], want);
            if (s < l)
                prod = prod * (kmod(s) % p) % p;
        }
        // Entries below p_l: crt_element's int32 bound takes them below 256.
        if (l == 0 ? g.inv_prefix[0] != 0
                   : g.inv_prefix[l] <= 0 || g.inv_prefix[l] >= p || g.inv_prefix[l] * prod % p != 1)
            fail_msg("inv_prefix[%d] = %d: not the inverse of %d mod %d", l, g.inv_prefix[l], prod, p);
    }
}

// crt_element recovers an integer from its residues: X = t 2^sh with t of
// 24 bits (a float exactly) and |X| < min(P/2, 2^53) for P the product of
// the first N moduli, residues from 128-bit arithmetic; with e = 0, alpha
// 1 and beta 0 the result is X exactly, and with e = sh it is t.
template <int N>
void check_crt(std::mt19937_64 &rng, __int128 half_p)
{
    constexpr GarnerTable g = TGEMM_OZAKI_GARNER;
    int bits = 0;
    while (bits < 120 && (static_cast<__int128>(1) << (bits + 1)) < half_p)
        ++bits;
    bits = std::min(bits, 53);  // |X| < 2^bits <= P/2
    for (int it = 0; it < 20000; ++it) {
        const int64_t t = static_cast<int64_t>(rng() % (uint64_t(1) << 24)) * (rng() & 1 ? 1 : -1);
        const int sh = static_cast<int>(rng() % static_cast<uint64_t>(bits - 24 + 1));
        const __int128 x = static_cast<__int128>(t) << sh;
        int r[N];
        for (int l = 0; l < N; ++l) {
            const int m = static_cast<int>((x < 0 ? -x : x) % kmod(l));
            r[l] = sym_rt(x < 0 ? -m : m, kmod(l));
        }
        const float want = std::ldexp(static_cast<float>(t), sh), got = crt_element<N>(r, 0, 1.0f, 0.0f, 0.0f, g);
        const float scaled = crt_element<N>(r, sh, 1.0f, 0.0f, 0.0f, g);
        if (got != want || scaled != static_cast<float>(t))
            fail_msg("N = %d: %lld * 2^%d recovered as %a (scaled back %a)", N, static_cast<long long>(t), sh,
                     static_cast<double>(got), static_cast<double>(scaled));
    }
}

// Garner's step-by-step form, v_l = (...((r_l - v_0) p_0^-1 - v_1) p_1^-1
// ...) mod p_l reduced at every step, with the inverses found here, as the
// double crt_element's Horner makes of its digits. Compared through the
// float, this sees the leading digits of large values; check_crt sees the
// low ones.
template <int N>
double stepwise_crt(const int (&r)[N])
{
    int v[N];
    for (int l = 0; l < N; ++l) {
        int t = r[l];
        for (int s = 0; s < l; ++s) {
            int inv = 1;
            while ((kmod(s) % kmod(l)) * inv % kmod(l) != 1)
                ++inv;
            t = sym_rt((t - v[s]) * inv, kmod(l));
        }
        v[l] = t;
    }
    double x = v[N - 1];
    for (int l = N - 2; l >= 0; --l)
        x = std::fma(x, static_cast<double>(kmod(l)), static_cast<double>(v[l]));
    return x;
}

template <int N>
void check_crt_n(std::mt19937_64 &rng)
{
    __int128 p = 1;
    for (int l = 0; l < N; ++l)
        p *= kmod(l);
    check_crt<N>(rng, p / 2);
    // Any residues (the whole range, past 2^53 too): the same float as the
    // step-by-step form's digits give.
    constexpr GarnerTable g = TGEMM_OZAKI_GARNER;
    for (int it = 0; it < 2000; ++it) {
        int r[N];
        for (int l = 0; l < N; ++l)
            r[l] = sym_rt(static_cast<int>(rng() % 256), kmod(l));
        const int e = static_cast<int>(rng() % 64);
        const float want = static_cast<float>(std::ldexp(stepwise_crt<N>(r), -e));
        const float got = crt_element<N>(r, e, 1.0f, 0.0f, 0.0f, g);
        if (std::memcmp(&got, &want, sizeof got) != 0)
            fail_msg("N = %d: %a, the step-by-step form %a", N, static_cast<double>(got), static_cast<double>(want));
    }
}

void test_crt_exact(void **)
{
    std::mt19937_64 rng(base_seed() + 3);
    check_crt_n<5>(rng), check_crt_n<6>(rng), check_crt_n<7>(rng), check_crt_n<8>(rng);
    check_crt_n<9>(rng), check_crt_n<10>(rng), check_crt_n<11>(rng), check_crt_n<12>(rng);
}

// Tlim(n) = (P/2 - 1) 2^(-2e-9), within an ulp (the constant is the
// correctly rounded value; long double gets within a fraction of one).
void test_scaling_limits(void **)
{
    for (int n = kMinN; n <= kMaxN; ++n) {
        __int128 p = 1;
        for (int l = 0; l < n; ++l)
            p *= kmod(l);
        const long double t = static_cast<long double>(p / 2 - 1) * std::exp2l(-2e-9L);
        const double want = static_cast<double>(t);
        const uint64_t bits = (static_cast<uint64_t>(tlim_exponent(n) + 1023) << 52) | tlim_fraction(n);
        double got;
        std::memcpy(&got, &bits, 8);
        if (std::fabs(got - want) > std::ldexp(1.0, tlim_exponent(n) - 52))
            fail_msg("Tlim(%d) = %a, want %a", n, got, want);
    }
}

// mu_value(s, n) = floor(log2(Tlim)/2 - log2(s)/2) wherever the logarithm
// is not within 1e-6 of an integer (where the platform's log2 may round
// either way: the reason for the exact definition).
void test_mu_exact(void **)
{
    std::mt19937_64 rng(base_seed() + 1);
    std::uniform_real_distribution<double> e(-600.0, 600.0);
    int compared = 0;
    for (int it = 0; it < 200000; ++it) {
        const double s = std::exp2(e(rng));
        const int n = kMinN + static_cast<int>(rng() % (kMaxN - kMinN + 1));
        const uint64_t bits = (static_cast<uint64_t>(tlim_exponent(n) + 1023) << 52) | tlim_fraction(n);
        double tlim;
        std::memcpy(&tlim, &bits, 8);
        const double y = 0.5 * (std::log2(tlim) - std::log2(s));
        if (std::fabs(y - std::nearbyint(y)) < 1e-6)
            continue;
        ++compared;
        if (mu_value(s, n) != static_cast<int>(std::floor(y)))
            fail_msg("mu_value(%a, %d) = %d, log2 gives %.12f", s, n, mu_value(s, n), y);
        // The defining property: s 4^mu <= Tlim < s 4^(mu + 1).
        const int mu = mu_value(s, n);
        if (!(std::ldexp(s, 2 * mu) <= tlim && std::ldexp(s, 2 * mu + 2) > tlim))
            fail_msg("mu_value(%a, %d) = %d is not the largest mu with s 4^mu <= Tlim", s, n, mu);
    }
    assert_true(compared > 190000);
    assert_int_equal(mu_value(0.0, 7), 0);
}

// residues<12> against trunc(2^mu x) mod p in 128-bit integers, for random
// float bit patterns (subnormals included) and shifts ex + mu in [-40, 90].
void test_residues(void **)
{
    std::mt19937_64 rng(base_seed() + 2);
    for (int it = 0; it < 200000; ++it) {
        const float x = bits_float(static_cast<uint32_t>(rng()) & 0xff7fffffu);  // finite
        if (x == 0.0f)
            continue;
        int ex;
        const float fr = std::frexp(std::fabs(x), &ex);  // |x| = fr 2^ex, mant = fr 2^24
        const __int128 mant = static_cast<__int128>(std::ldexp(static_cast<double>(fr), 24));
        const int s = -40 + static_cast<int>(rng() % 131);  // s = (ex - 24) + mu
        const int mu = s - (ex - 24);
        const __int128 t = s >= 0 ? mant << s : mant >> -s;
        int res[12];
        residues<12>(x, mu, res);
        for (int l = 0; l < 12; ++l) {
            int want = static_cast<int>(t % kmod(l));
            want = sym_rt(x < 0 ? -want : want, kmod(l));
            if (res[l] != want)
                fail_msg("residue of %a at mu %d mod %d: %d, want %d", static_cast<double>(x), mu, kmod(l), res[l],
                         want);
        }
    }
}

struct Shape {
    int64_t m, n, k;
};

struct Scalars {
    float alpha, beta;
};

// Runs the model on every case, transpose and scalar pair at `shape`;
// returns how many runs the certificate let through.
int check_contract(const Shape &sh, int64_t pad)
{
    const Scalars scalars[] = {{1.0f, 0.0f}, {-1.2345678e-3f, 3.3333333f}, {2.5f, -1.0f}};
    const float pad_value = bits_float(0x7fc0dead);  // a NaN no computation makes
    const float unread_c = bits_float(0x7fc0c0de);
    int ran = 0, runs = 0;
    uint64_t seed = base_seed() + 1000 * static_cast<uint64_t>(sh.m * 7 + sh.n * 3 + sh.k);
    for (const ozaki_inputs::Case &cs : ozaki_inputs::cases())
        for (int tr = 0; tr < 4; ++tr)
            for (const Scalars &sc : scalars) {
                const bool ta = tr & 1, tb = tr & 2;
                const int64_t m = sh.m, n = sh.n, k = sh.k;
                Matrix A = ozaki_inputs::make_matrix(ta ? k : m, ta ? m : k, (ta ? k : m) + pad, pad_value);
                Matrix B = ozaki_inputs::make_matrix(tb ? n : k, tb ? k : n, (tb ? n : k) + pad, pad_value);
                ++seed;
                ozaki_inputs::fill(cs, ta, tb, m, n, k, seed, A, B);
                Matrix C = ozaki_inputs::make_matrix(m, n, m + pad, pad_value);
                std::mt19937_64 rng(seed ^ 0x5bd1e995);
                std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
                for (int64_t j = 0; j < n; ++j)
                    for (int64_t i = 0; i < m; ++i)
                        C.at(i, j) = sc.beta != 0.0f ? uni(rng) : unread_c;
                const Matrix C0 = C;
                ozaki_model::Problem p;
                p.trans_a = ta;
                p.trans_b = tb;
                p.m = m;
                p.n = n;
                p.k = k;
                p.alpha = sc.alpha;
                p.beta = sc.beta;
                p.a = A.v.data();
                p.lda = A.ld;
                p.b = B.v.data();
                p.ldb = B.ld;
                const ozaki_model::Result r0 = ozaki_model::gemm(p, C.v.data(), C.ld);
                ++runs;
                if (r0.outcome != ozaki_model::Outcome::Ran) {
                    if (r0.outcome != ozaki_model::Outcome::Uncertified)
                        fail_msg("%s: outcome %d", cs.name, static_cast<int>(r0.outcome));
                    if (std::memcmp(C.v.data(), C0.v.data(), C.v.size() * 4) != 0)
                        fail_msg("%s: C written although the mode did not run", cs.name);
                    continue;
                }
                ++ran;
                // At the certified N and every larger one (the test is monotone in N);
                // the call itself runs at its tighter target's N.
                assert_true(r0.moduli >= r0.certified && r0.moduli <= kMaxN);
                for (int nmod = r0.certified; nmod <= kMaxN; ++nmod) {
                    Matrix Cn = C0;
                    const ozaki_model::Result r = ozaki_model::gemm(p, Cn.v.data(), Cn.ld, nmod);
                    assert_int_equal(static_cast<int>(r.outcome), static_cast<int>(ozaki_model::Outcome::Ran));
                    if (nmod == r0.moduli && std::memcmp(Cn.v.data(), C.v.data(), C.v.size() * 4) != 0)
                        fail_msg("%s: the model is not deterministic", cs.name);
                    const bool plain = sc.alpha == 1.0f && sc.beta == 0.0f;
                    const double u = std::ldexp(1.0, -24), kk = static_cast<double>(plain ? k : k + 2);
                    const double gamma = kk * u / (1.0 - kk * u);
                    for (int64_t j = 0; j < n; ++j) {
                        for (int64_t i = 0; i < m; ++i) {
                            double ref = 0.0, z = 0.0;
                            for (int64_t q = 0; q < k; ++q) {
                                const double a = ta ? A.at(q, i) : A.at(i, q);
                                const double b = tb ? B.at(j, q) : B.at(q, j);
                                ref += a * b;
                                z += std::fabs(a * b);
                            }
                            const double c0 = sc.beta != 0.0f ? C0.v[i + j * C0.ld] : 0.0;
                            const double want = sc.alpha * ref + sc.beta * c0;
                            const double scale = std::fabs(sc.alpha) * z + std::fabs(sc.beta * c0);
                            // + the FP64 reference's own rounding and an underflow allowance.
                            const double bound =
                                gamma * scale + static_cast<double>(k) * 0x1p-52 * scale + (kk + 1) * 0x1p-149;
                            const float got = Cn.v[i + j * Cn.ld];
                            if (!(std::fabs(got - want) <= bound))
                                fail_msg("%s %c%c %" PRId64 "x%" PRId64 "x%" PRId64 " alpha %g beta %g N %d (certified "
                                         "%d): C(%" PRId64 ", %" PRId64 ") = %.9g, FP64 %.17g, error %.3g > bound "
                                         "%.3g; seed %" PRIu64,
                                         cs.name, ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, sc.alpha, sc.beta, nmod,
                                         r0.moduli, i, j, got, want, std::fabs(got - want), bound, seed);
                        }
                        for (int64_t i = m; i < Cn.ld; ++i)
                            if (std::memcmp(&Cn.v[i + j * Cn.ld], &pad_value, 4) != 0)
                                fail_msg("%s: C's padding (%" PRId64 ", %" PRId64 ") written", cs.name, i, j);
                    }
                }
            }
    std::printf("%" PRId64 "x%" PRId64 "x%" PRId64 ": the mode ran in %d of %d runs (the rest uncertified)\n",
                sh.m, sh.n, sh.k, ran, runs);
    return ran;
}

void test_contract_small(void **)
{
    const int ran = check_contract({37, 29, 70}, 3);
    assert_true(ran > 0);
}

void test_contract_chunks(void **)
{
    // K across the sums of squares' chunks of 256 and a partial last one.
    const int ran = check_contract({33, 20, 600}, 1);
    assert_true(ran > 0);
}

void test_contract_thin(void **)
{
    const int ran = check_contract({1, 9, 300}, 2) + check_contract({17, 1, 129}, 0);
    assert_true(ran > 0);
}

// cert_raise from every start against the larger of the start and the scan
// from kMinN, on random sums and powers (falling by 16 a candidate, as 2^-mu
// does) and random K; and cert_target's two regimes.
void test_cert_search(void **)
{
    std::mt19937_64 rng(base_seed() ^ 0x6d6f64756c69ULL);
    std::uniform_real_distribution<double> e(-40.0, 0.0);
    constexpr int nc = kMaxN - kMinN + 1;
    int found[kMaxN + 2] = {};
    for (int trial = 0; trial < 20000; ++trial) {
        const uint64_t ia = 1 + rng() % (uint64_t(1) << 40), ib = 1 + rng() % (uint64_t(1) << 40);
        double pa[nc], pb[nc];
        pa[0] = std::exp2(e(rng));
        pb[0] = std::exp2(e(rng));
        for (int t = 1; t < nc; ++t) {
            pa[t] = pa[t - 1] / 16;
            pb[t] = pb[t - 1] / 16;
        }
        const int lp = 1 + static_cast<int>(rng() % (255 * 255 * 4096));
        const int64_t k = std::min<int64_t>(kCertMaxK, 3 + static_cast<int64_t>(std::exp2(15.0 * double(rng() % 4096) / 4096.0)));
        const double g = trial % 2 ? cert_gamma(k) : cert_target(k);
        int want = kMaxN + 1;
        for (int n = kMinN; n <= kMaxN && want > kMaxN; ++n)
            if (cert_pass(double(ia), double(ib), pa[n - kMinN], pb[n - kMinN], g, double(lp)))
                want = n;
        ++found[want];
        for (int start = kMinN; start <= kMaxN + 1; ++start) {
            const int got = cert_raise(ia, ib, pa, pb, 1, 1, g, lp, start);
            if (got != std::max(start, want))
                fail_msg("cert_raise from %d: %d, the scan %d (k %lld)", start, got, want, static_cast<long long>(k));
        }
    }
    // The draws reach the ends and the middle.
    if (found[kMinN] < 100 || found[kMaxN + 1] < 100 || found[(kMinN + kMaxN) / 2] < 100)
        fail_msg("answers kMinN %d, middle %d, none %d of 20000", found[kMinN], found[(kMinN + kMaxN) / 2],
                 found[kMaxN + 1]);
    // A zero row or column passes at any candidate; nothing passes at g <= 0.
    assert_int_equal(cert_raise(0, 5, nullptr, nullptr, 1, 1, 1.0, 0, kMinN), kMinN);
    assert_int_equal(cert_raise(5, 0, nullptr, nullptr, 1, 1, 0.0, 0, 9), 9);
    const double one[nc] = {1, 1, 1, 1, 1, 1, 1, 1};
    assert_int_equal(cert_raise(5, 5, one, one, 1, 1, 0.0, 1 << 20, kMinN), kMaxN + 1);
    // The target: (gamma_K - 2u) / 16 up to K = 1027, 2 sqrt(K) u from 1028.
    assert_true(cert_target(1027) == cert_gamma(1027) / 16);
    assert_true(cert_target(1028) == cert_typical(1028));
    const double u = std::ldexp(1.0, -24);
    assert_true(cert_target(100) == cert_gamma(100) / 16);
    assert_true(cert_target(1000) == cert_gamma(1000) / 16);
    assert_true(cert_target(1024) == cert_gamma(1024) / 16);
    assert_true(cert_target(1089) == 2 * 33 * u);
    assert_true(cert_target(16384) == 2 * 128 * u);
    assert_true(cert_target(2) == 0.0);
}

// The magnitude GEMM's epilogue (igemm.cu's CertEpi) replayed on the host:
// a running value, raised item by item (each element tested at the item's
// starting value, a failing one searched upwards from value + 1), ends at
// the largest of the elements' smallest N whatever the order and the
// items, on factors made as the certificate makes them (cert_power from
// row maxima and sums of squares), zero rows and columns included.
void test_cert_fold(void **)
{
    std::mt19937_64 rng(base_seed() ^ 0x666f6c64ULL);
    constexpr int nc = kMaxN - kMinN + 1;
    struct Line {
        uint64_t ones = 0;
        double pw[nc] = {};
    };
    int found[kMaxN + 2] = {};
    for (int trial = 0; trial < 3000; ++trial) {
        const int64_t k = 3 + static_cast<int64_t>(rng() % 32000);
        const double g = cert_target(k);
        const auto line = [&]() {
            Line l;
            if (rng() % 8 == 0)
                return l;  // a zero row: I = 0, factors 0
            const float mx = std::ldexp(1.0f + static_cast<float>(rng() % 1024) / 1024.0f,
                                        static_cast<int>(rng() % 80) - 40);
            const double ss = double(mx) * mx * (1.0 + double(rng() % 4096) / 4096.0 * double(k - 1));
            const int sh = cert_shift(mx);
            for (int t = 0; t < nc; ++t)
                l.pw[t] = cert_power(mx, sh, ss, kMinN + t);
            l.ones = 1 + rng() % (static_cast<uint64_t>(k) << 24);
            return l;
        };
        std::vector<Line> rows(1 + rng() % 6), cols(1 + rng() % 6);
        for (Line &l : rows)
            l = line();
        for (Line &l : cols)
            l = line();
        struct Elem {
            size_t i, j;
            int lp;
        };
        std::vector<Elem> el;
        int want = kMinN;
        for (size_t i = 0; i < rows.size(); ++i)
            for (size_t j = 0; j < cols.size(); ++j) {
                const int lp = static_cast<int>(rng() % (uint64_t(255 * 255) * uint64_t(k)));
                el.push_back({i, j, lp});
                want = std::max(want, cert_raise(rows[i].ones, cols[j].ones, rows[i].pw, cols[j].pw, 1, 1, g, lp,
                                                 kMinN));
            }
        ++found[want];
        std::shuffle(el.begin(), el.end(), rng);
        int nrun = kMinN;
        for (size_t first = 0; first < el.size();) {
            const size_t last = std::min(el.size(), first + 1 + rng() % 5);  // one item
            int need = nrun;
            for (size_t e = first; e < last && nrun <= kMaxN; ++e) {
                const Line &r = rows[el[e].i], &c = cols[el[e].j];
                const int t = nrun - kMinN;
                if (!cert_holds(r.ones, c.ones, r.pw[t], c.pw[t], g, el[e].lp))
                    need = std::max(need, cert_raise(r.ones, c.ones, r.pw, c.pw, 1, 1, g, el[e].lp, nrun + 1));
            }
            nrun = need;
            first = last;
        }
        if (nrun != want)
            fail_msg("trial %d (k %lld, %zu x %zu): the fold gives %d, the scan %d", trial,
                     static_cast<long long>(k), rows.size(), cols.size(), nrun, want);
    }
    // The draws reach several answers.
    int answers = 0;
    for (int n = kMinN; n <= kMaxN + 1; ++n)
        answers += found[n] > 30;
    if (answers < 3)
        fail_msg("too few distinct answers (%d)", answers);
}

struct Errs {
    double max_rel = 0, norm = 0;
};

// Contract (b) where the second target matters: m x n x 16384, NN, alpha 1,
// beta 0, inputs of `phi`; the model's run N, and its errors and those of
// FP32 summed in order with fmaf, against FP64.
void check_long_k(double phi, int want_certified, int want_moduli)
{
    const int64_t m = 48, n = 40, k = 16384;
    const ozaki_inputs::Case *cs = nullptr;
    for (const ozaki_inputs::Case &c : ozaki_inputs::cases())
        if (c.kind == ozaki_inputs::Kind::Phi && c.phi == phi)
            cs = &c;
    assert_non_null(cs);
    Matrix A = ozaki_inputs::make_matrix(m, k, m, 0.0f), B = ozaki_inputs::make_matrix(k, n, k, 0.0f);
    const uint64_t seed = base_seed() + static_cast<uint64_t>(phi * 16);
    ozaki_inputs::fill(*cs, false, false, m, n, k, seed, A, B);
    ozaki_model::Problem p;
    p.m = m;
    p.n = n;
    p.k = k;
    p.a = A.v.data();
    p.lda = m;
    p.b = B.v.data();
    p.ldb = k;
    std::vector<float> c(static_cast<size_t>(m * n), 0.0f);
    const ozaki_model::Result r = ozaki_model::gemm(p, c.data(), m);
    std::printf("%" PRId64 "x%" PRId64 "x%" PRId64 " phi %g: certified at gamma_K %d, runs %d\n", m, n, k, phi,
                r.certified, r.moduli);
    assert_int_equal(static_cast<int>(r.outcome), static_cast<int>(ozaki_model::Outcome::Ran));
    assert_int_equal(r.certified, want_certified);
    assert_int_equal(r.moduli, want_moduli);
    Errs mode, strict;
    double num_m = 0, num_s = 0, den = 0;
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < m; ++i) {
            double ref = 0, z = 0;
            float s = 0.0f;
            for (int64_t q = 0; q < k; ++q) {
                const double t = double(A.at(i, q)) * double(B.at(q, j));
                ref += t;
                z += std::fabs(t);
                s = std::fmaf(A.at(i, q), B.at(q, j), s);
            }
            const double dm = std::fabs(double(c[i + j * m]) - ref), ds = std::fabs(double(s) - ref);
            mode.max_rel = std::max(mode.max_rel, dm / z);
            strict.max_rel = std::max(strict.max_rel, ds / z);
            num_m += dm * dm;
            num_s += ds * ds;
            den += ref * ref;
        }
    mode.norm = std::sqrt(num_m / den);
    strict.norm = std::sqrt(num_s / den);
    std::printf("  max rel: mode %.3g, fmaf in order %.3g; normwise: mode %.3g, fmaf in order %.3g; seed %" PRIu64 "\n",
                mode.max_rel, strict.max_rel, mode.norm, strict.norm, seed);
    if (!(mode.max_rel <= strict.max_rel && mode.norm <= strict.norm))
        fail_msg("phi %g: the mode's errors exceed FP32's", phi);
}

// At K = 16384 the certificate at gamma_K alone gives 5 on phi = 0, where
// the call needs 7 for errors below FP32's; on phi = 1, 6 and 7.
void test_contract_long_k(void **)
{
    check_long_k(0.0, 5, 7);
    check_long_k(1.0, 6, 7);
}

// The model on an 8 x 8 x 16 product of 0.5s and 0.25s that `edit` changes:
// it must decline with `want` and leave C untouched.
template <class Edit>
void expect_declined(ozaki_model::Outcome want, Edit edit)
{
    std::vector<float> a(8 * 16, 0.5f), b(16 * 8, 0.25f), c(64, 1.0f);
    edit(a, b);
    ozaki_model::Problem p;
    p.m = 8;
    p.n = 8;
    p.k = 16;
    p.a = a.data();
    p.lda = 8;
    p.b = b.data();
    p.ldb = 16;
    const ozaki_model::Result r = ozaki_model::gemm(p, c.data(), 8);
    assert_int_equal(static_cast<int>(r.outcome), static_cast<int>(want));
    for (float x : c)
        assert_true(x == 1.0f);
}

// Inf or NaN in an operand: the strict path's.
void test_special_values(void **)
{
    for (float v : {INFINITY, -INFINITY, NAN})
        expect_declined(ozaki_model::Outcome::Special, [v](std::vector<float> &a, std::vector<float> &) { a[13] = v; });
}

// A column of op(A) spanning 2^160 with K balancing's exponent -60: the
// balanced small entry would underflow, so nothing is certified.
void test_inexact_balance(void **)
{
    expect_declined(ozaki_model::Outcome::Uncertified, [](std::vector<float> &a, std::vector<float> &b) {
        for (int i = 0; i < 8; ++i)
            a[i + 3 * 8] = std::ldexp(1.0f, 60);  // column 3 of A
        a[5 + 3 * 8] = std::ldexp(1.0f, -100);
        for (int j = 0; j < 8; ++j)
            b[3 + j * 16] = std::ldexp(1.0f, -60);  // row 3 of B
    });
}

}  // namespace

int main()
{
    base_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_garner_table),   cmocka_unit_test(test_crt_exact),
        cmocka_unit_test(test_scaling_limits),
        cmocka_unit_test(test_mu_exact),       cmocka_unit_test(test_residues),
        cmocka_unit_test(test_contract_small), cmocka_unit_test(test_contract_chunks),
        cmocka_unit_test(test_contract_thin),  cmocka_unit_test(test_special_values),
        cmocka_unit_test(test_inexact_balance), cmocka_unit_test(test_cert_search),
        cmocka_unit_test(test_cert_fold),
        cmocka_unit_test(test_contract_long_k),
    };
    return cmocka_run_group_tests_name("tgemm_ozaki_model", tests, nullptr, nullptr);
}
