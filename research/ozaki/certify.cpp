// Certificate for contract (a) (see certify.hpp and NOTES.md (f)).
//
// What a GPU runs, step by step, and the widths it needs:
//   statistics: M_i = max_k |a_ik| (already computed for K balancing and the
//               scaling), s_i = bits - 1 - ilogb(M_i); IA_i = sum_k
//               ceil(2^(s_i+d) |a_ik|) in int64 (< K 2^24: exact, order-free)
//   operands:   Au_ik = floor(2^s_i |a_ik|) in [0, 255] (u8), Bu likewise
//               (bits = 16: two bytes per magnitude, four u8 GEMMs; a what-if)
//   GEMM:       L'_ij = Au Bu^T, u8 x u8 -> s32 (wgmma .s32.u8.u8), flushed
//               to int64 every 32768 of K (255^2 * 32768 < 2^31)
//   epilogue:   per candidate N, lhs = IA_i 2^(t_j - nu_j - d) + IB_j 2^(s_i - mu_i - d),
//               rhs = g L'_ij, pass iff fl(lhs (1 + 2^-40)) <= rhs, in double
// Everything before the epilogue is exact integer arithmetic whose result
// does not depend on the order of the sums; the epilogue is a fixed
// sequence of double operations per element. So the certificate is the same
// bit for bit on every run and on the model.
#include "certify.hpp"

#include <algorithm>
#include <cassert>
#include <climits>
#include <cmath>
#include <random>
#include <thread>

namespace oz2 {

namespace {

// |x| = mant * 2^ex with 0 <= mant < 2^24 an integer (exact for subnormals).
inline void mag_decompose(float x, int64_t &mant, int &ex)
{
    if (x == 0.0f) { mant = 0; ex = 0; return; }
    int e;
    float f = std::frexp(std::fabs(x), &e);  // f in [0.5, 1)
    mant = int64_t(std::ldexp(f, 24));       // exact: f has <= 24 significant bits
    ex = e - 24;
}

// floor(2^s |x|) and ceil(2^s |x|), exact; the caller guarantees the result
// is < 2^40 (both are used with 2^s |x| < 2^24).
inline int64_t floor_scaled(float x, int s)
{
    int64_t mant; int ex;
    mag_decompose(x, mant, ex);
    if (mant == 0) return 0;
    const int sh = ex + s;
    if (sh >= 0) return mant << sh;
    if (-sh >= 32) return 0;
    return mant >> -sh;
}

inline int64_t ceil_scaled(float x, int s)
{
    int64_t mant; int ex;
    mag_decompose(x, mant, ex);
    if (mant == 0) return 0;
    const int sh = ex + s;
    if (sh >= 0) return mant << sh;
    if (-sh >= 32) return 1;           // 0 < 2^s |x| < 1
    const int64_t q = mant >> -sh;
    return (q << -sh) == mant ? q : q + 1;
}

template <class F>
void parallel_for(int64_t count, int threads, F f)
{
    threads = std::max(1, threads);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([=] { for (int64_t i = t; i < count; i += threads) f(i); });
    for (auto &th : pool) th.join();
}

// Statistics of one row of A (or column of B), contiguous in k.
void row_stats(const float *x, int64_t k, int bits, int &s, char &zero, uint16_t *u, int64_t &I)
{
    float mx = 0.0f;
    for (int64_t t = 0; t < k; ++t) mx = std::max(mx, std::fabs(x[t]));
    zero = (mx == 0.0f);
    s = zero ? 0 : bits - 1 - std::ilogb(mx);  // 2^s mx in [2^(bits-1), 2^bits)
    const int d = 24 - bits;
    I = 0;
    for (int64_t t = 0; t < k; ++t) {
        const int64_t f = floor_scaled(x[t], s);
        assert(f < (int64_t(1) << bits));
        u[t] = uint16_t(f);
        I += ceil_scaled(x[t], s + d);  // each <= 2^24
    }
}

// The comparison, shared by cert_pass and certify so that both are the same
// sequence of double operations. pr = 2^(s_i - mu_i - d), pc = 2^(t_j - nu_j - d).
//   lhs = IA_i pc + IB_j pr  (both products exact: powers of two, no over- or
//         underflow; one rounding in the sum)
//   rhs = g L'_ij            (L' exact in double; one rounding)
// Margin 1 + 2^-40 on lhs covers those roundings and g's (NOTES.md (f)).
inline bool test_core(double ia, double ib, double pr, double pc, double g, double lp)
{
    const double lhs = ia * pc + ib * pr;   // -ffp-contract=off: no fma
    const double rhs = g * lp;
    const double margin = 1.0 + 0x1p-40;
    return lhs * margin <= rhs;
}

inline double pow2_exact(int e)
{
    // The exponents here stay far inside double's normal range (|e| < 600
    // for any finite float input and K < 2^29): ldexp(1, e) is exact and so
    // are the products with it.
    assert(e > -900 && e < 900);
    return std::ldexp(1.0, e);
}

}  // namespace

void mag_operands(int64_t m, int64_t n, int64_t k, const float *A, const float *B, int bits,
                  MagOperands &mo)
{
    assert((bits >= 2 && bits <= 8) || bits == 16);
    // K 2^24 < 2^53 keeps IA, IB exact in double; L' < 2^53 for bits <= 8
    // needs K < 2^37 (less restrictive).
    assert(k < (int64_t(1) << 29));
    mo.bits = bits; mo.m = m; mo.n = n; mo.k = k;
    mo.s.assign(m, 0); mo.t.assign(n, 0);
    mo.zA.assign(m, 0); mo.zB.assign(n, 0);
    mo.Au.assign(m * k, 0); mo.Bu.assign(n * k, 0);
    mo.IA.assign(m, 0); mo.IB.assign(n, 0);
    for (int64_t i = 0; i < m; ++i) row_stats(A + i * k, k, bits, mo.s[i], mo.zA[i], &mo.Au[i * k], mo.IA[i]);
    for (int64_t j = 0; j < n; ++j) row_stats(B + j * k, k, bits, mo.t[j], mo.zB[j], &mo.Bu[j * k], mo.IB[j]);
}

void mag_gemm(const MagOperands &mo, int64_t kblock, int threads, std::vector<int64_t> &Lp)
{
    const int64_t m = mo.m, n = mo.n, k = mo.k;
    Lp.assign(m * n, 0);
    if (mo.bits <= 8) {
        const int64_t vmax = (int64_t(1) << mo.bits) - 1;
        assert(kblock >= 1 && vmax * vmax * kblock <= INT32_MAX);
        std::vector<uint8_t> a(mo.Au.begin(), mo.Au.end()), b(mo.Bu.begin(), mo.Bu.end());
        parallel_for(m, threads, [&](int64_t i) {
            for (int64_t j = 0; j < n; ++j) {
                int64_t total = 0;
                for (int64_t k0 = 0; k0 < k; k0 += kblock) {
                    const int64_t len = std::min(kblock, k - k0);
                    const uint8_t *x = &a[i * k + k0], *y = &b[j * k + k0];
                    int32_t acc = 0;  // what one s32 accumulator of the GEMM holds
                    for (int64_t t = 0; t < len; ++t) acc += int32_t(x[t]) * int32_t(y[t]);
                    total += acc;
                }
                Lp[i * n + j] = total;
            }
        });
    } else {
        // Two-byte magnitudes, x = 256 x_hi + x_lo (x_hi is the 8-bit
        // operand), as four u8 GEMMs: L' = 65536 hi.hi + 256 (hi.lo + lo.hi)
        // + lo.lo = sum_k Au_ik Bu_kj exactly. (Dropping lo.lo would keep a
        // lower bound with three GEMMs, but loses exactly the products of two
        // small factors that wide-range data needs.)
        assert(mo.bits == 16 && k < (int64_t(1) << 21));  // 2^32 K < 2^53
        parallel_for(m, threads, [&](int64_t i) {
            for (int64_t j = 0; j < n; ++j) {
                int64_t hh = 0, hl = 0, lh = 0, ll = 0;
                for (int64_t t = 0; t < k; ++t) {
                    const int64_t a = mo.Au[i * k + t], b = mo.Bu[j * k + t];
                    hh += (a >> 8) * (b >> 8);
                    hl += (a >> 8) * (b & 255);
                    lh += (a & 255) * (b >> 8);
                    ll += (a & 255) * (b & 255);
                }
                Lp[i * n + j] = 65536 * hh + 256 * (hl + lh) + ll;
            }
        });
    }
    // L' < 2^53 (exact in double) is what the epilogue relies on.
    for (int64_t x : Lp) assert(x >= 0 && x < (int64_t(1) << 53));
}

double cert_gamma(int64_t k)
{
    const double u = 0x1p-24;
    if (k < 3 || k > (int64_t(1) << 22)) return 0.0;
    const double ku = double(k) * u;    // exact
    const double gam = ku / (1.0 - ku); // 1 - ku exact (a multiple of 2^-24 in (0, 1)); one rounding
    return gam - 2.0 * u;               // one rounding; gam >= 3u, so relative error <= 2^-50
}

bool cert_pass(const MagOperands &mo, const std::vector<int64_t> &Lp, double g, int64_t i,
               int64_t j, int mu_i, int nu_j)
{
    if (mo.zA[i] || mo.zB[j]) return true;
    if (g <= 0.0) return false;
    const int d = mo.d();
    return test_core(double(mo.IA[i]), double(mo.IB[j]), pow2_exact(mo.s[i] - mu_i - d),
                     pow2_exact(mo.t[j] - nu_j - d), g, double(Lp[i * mo.n + j]));
}

void certify(int64_t m, int64_t n, int64_t k, const float *A, const float *B,
             const CertParams &cp, Certificate &cert)
{
    assert(cp.nmin >= 2 && cp.nmax <= kMaxModuli && cp.nmin <= cp.nmax);
    cert.nmin = cp.nmin; cert.nmax = cp.nmax;
    mag_operands(m, n, k, A, B, cp.bits, cert.mo);
    mag_gemm(cert.mo, cp.kblock, cp.threads, cert.Lp);
    const MagOperands &mo = cert.mo;
    const double g = cert_gamma(k);
    const int d = mo.d();
    cert.pass.assign(m * n, 0);
    cert.nfail.assign(kMaxModuli + 1, 0);
    cert.ncall = cp.nmax + 1;
    std::vector<int> mu, nu;
    std::vector<double> pr(m), pc(n);
    for (int N = cp.nmin; N <= cp.nmax; ++N) {
        Params p; p.nmod = N; p.scaling = cp.scaling; p.threads = cp.threads;
        scaling_exponents(m, n, k, A, B, p, mu, nu);
        for (int64_t i = 0; i < m; ++i) pr[i] = mo.zA[i] ? 0.0 : pow2_exact(mo.s[i] - mu[i] - d);
        for (int64_t j = 0; j < n; ++j) pc[j] = mo.zB[j] ? 0.0 : pow2_exact(mo.t[j] - nu[j] - d);
        std::vector<int64_t> rowfail(m, 0);
        parallel_for(m, cp.threads, [&](int64_t i) {
            for (int64_t j = 0; j < n; ++j) {
                bool ok;
                if (mo.zA[i] || mo.zB[j]) ok = true;
                else if (g <= 0.0) ok = false;
                else ok = test_core(double(mo.IA[i]), double(mo.IB[j]), pr[i], pc[j], g,
                                    double(cert.Lp[i * n + j]));
                if (ok) cert.pass[i * n + j] |= uint16_t(1u << N);
                else ++rowfail[i];
            }
        });
        int64_t f = 0;
        for (int64_t x : rowfail) f += x;
        cert.nfail[N] = f;
        if (f == 0 && cert.ncall > cp.nmax) cert.ncall = N;
    }
    cert.nreq.assign(m * n, uint8_t(cp.nmax + 1));
    for (int64_t t = 0; t < m * n; ++t)
        for (int N = cp.nmax; N >= cp.nmin && (cert.pass[t] >> N & 1u); --N) cert.nreq[t] = uint8_t(N);
}

std::vector<uint8_t> tile_nreq(const Certificate &cert, int64_t m, int64_t n, int64_t tm, int64_t tn)
{
    const int64_t gm = (m + tm - 1) / tm, gn = (n + tn - 1) / tn;
    std::vector<uint8_t> tb(gm * gn, 0);
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
            uint8_t &b = tb[(i / tm) * gn + j / tn];
            b = std::max(b, cert.nreq[i * n + j]);
        }
    return tb;
}

TilePlan plan_tiles(const Certificate &cert, int64_t m, int64_t n, int64_t tm, int64_t tn,
                    double strict_cost)
{
    const std::vector<uint8_t> tb = tile_nreq(cert, m, n, tm, tn);
    TilePlan best;
    best.all_strict = true;
    best.tiles = int64_t(tb.size());
    best.strict_tiles = best.tiles;
    best.cost = 1.0 + strict_cost;  // the magnitude GEMM has run before the decision
    for (int N = cert.nmin; N <= cert.nmax; ++N) {
        int64_t bad = 0;
        for (uint8_t b : tb) bad += b > N;
        const double cost = 1.0 + N + strict_cost * double(bad) / double(best.tiles);
        if (cost < best.cost) {  // strict '<': ties go to the smaller N / to all strict
            best.all_strict = false;
            best.n = N;
            best.strict_tiles = bad;
            best.cost = cost;
        }
    }
    return best;
}

int cert_selftest()
{
    int bad = 0;
    std::mt19937_64 rng(271828);
    std::uniform_real_distribution<double> u01(0.0, 1.0);
    for (int rep = 0; rep < 6; ++rep) {
        const int bits = rep % 2 ? 7 : 8;
        const int64_t m = 5, n = 4, k = 1000 + 37 * rep;
        std::vector<float> A(m * k), B(n * k);
        for (auto &x : A) x = float((u01(rng) - 0.5) * std::exp2(std::floor(60 * u01(rng)) - 30 - 100 * (rep == 4)));
        for (auto &x : B) x = float((u01(rng) - 0.5) * std::exp2(std::floor(60 * u01(rng)) - 30));
        for (int64_t t = 0; t < k; t += 7) A[t] = 0.0f;
        MagOperands mo;
        mag_operands(m, n, k, A.data(), B.data(), bits, mo);
        // Floors, ceilings and the leading value against long double.
        for (int64_t i = 0; i < m; ++i) {
            long double mx = 0;
            long double I = 0;
            for (int64_t t = 0; t < k; ++t) {
                const long double x = std::fabs((long double)A[i * k + t]);
                mx = std::max(mx, x);
                if (mo.Au[i * k + t] != (uint16_t)std::floor(std::ldexp(x, mo.s[i]))) ++bad;
                I += std::ceil(std::ldexp(x, mo.s[i] + mo.d()));
            }
            const long double lead = std::ldexp(mx, mo.s[i]);
            if (lead < (1 << (bits - 1)) || lead >= (1 << bits)) ++bad;
            if ((long double)mo.IA[i] != I) ++bad;
        }
        // K-block split against one int64 sum.
        std::vector<int64_t> L1, L2;
        mag_gemm(mo, 1 + 97 * rep, 2, L1);
        L2.assign(m * n, 0);
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j)
                for (int64_t t = 0; t < k; ++t) L2[i * n + j] += int64_t(mo.Au[i * k + t]) * mo.Bu[j * k + t];
        if (L1 != L2) ++bad;
    }
    return bad;
}

}  // namespace oz2
