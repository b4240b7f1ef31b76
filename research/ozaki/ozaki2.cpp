// CPU model of Ozaki scheme II on INT8 (see ozaki2.hpp and NOTES.md).
//
// Every integer step is the one a GPU kernel would do, in the same widths:
//   scaling:    float -> (m, E) with |m| < 2^24, then trunc(m * 2^(E+mu)) mod p
//               from m mod p and 2^s mod p (no wide integers needed)
//   products:   int8 x int8 -> int32, K in blocks of <= 131071 (128^2 * K < 2^31)
//   reduction:  int32 -> symmetric residue in int8 range, per block, summed mod p
//   CRT:        Garner's mixed-radix digits in int32 modular arithmetic
//               (N(N-1)/2 modmuls), Horner in double with explicit fma,
//               ldexp by -(mu_i + nu_j), round to float
//   epilogue:   v = alpha * x; c = beta != 0 ? fmaf(beta, c, v) : v
#include "ozaki2.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <random>
#include <thread>

namespace oz2 {

const int kModuli[kMaxModuli] = {256, 255, 253, 251, 247, 241, 239,
                                 233, 229, 227, 223, 217, 211, 199};

const char *scaling_name(Scaling s)
{
    switch (s) {
    case Scaling::Fast: return "fast";
    case Scaling::FastCS: return "fast-cs";
    case Scaling::Accurate: return "accurate";
    }
    return "?";
}

namespace {

int gcd(int a, int b) { return b ? gcd(b, a % b) : a; }

// x^-1 mod p for gcd(x, p) == 1 (p small).
int inv_mod(int x, int p)
{
    x %= p;
    if (x < 0) x += p;
    for (int y = 1; y < p; ++y)
        if (x * y % p == 1) return y;
    assert(!"not invertible");
    return 0;
}

// Symmetric residue of v mod p: [-(p-1)/2, (p-1)/2] for odd p, [-128, 127] for 256.
inline int sym(int64_t v, int p)
{
    int r = int(v % p);
    if (r < 0) r += p;
    if (2 * r >= p) r -= p;
    return r;
}

// 2^s mod p.
int pow2mod(int s, int p)
{
    int64_t r = 1 % p, b = 2 % p;
    while (s > 0) {
        if (s & 1) r = r * b % p;
        b = b * b % p;
        s >>= 1;
    }
    return int(r);
}

// Finite float x = sign * mant * 2^ex with 0 <= mant < 2^24 an integer.
inline void decompose(float x, int32_t &mant, int &ex, bool &neg)
{
    neg = std::signbit(x);
    if (x == 0.0f) { mant = 0; ex = 0; return; }
    int e;
    float f = std::frexp(std::fabs(x), &e);  // f in [0.5, 1), exact for subnormals too
    mant = int32_t(std::ldexp(f, 24));       // exact: f has <= 24 significant bits
    ex = e - 24;
}

// Residue of trunc(2^mu * x) mod p, symmetric. This is what the GPU's
// conversion pass does per element and modulus.
inline int residue(float x, int mu, int p)
{
    int32_t mant; int ex; bool neg;
    decompose(x, mant, ex, neg);
    if (mant == 0) return 0;
    int s = ex + mu;
    int64_t r;
    if (s >= 0) {
        r = int64_t(mant % p) * pow2mod(s, p) % p;  // GPU: table of 2^s mod p
    } else {
        int64_t t = (-s >= 32) ? 0 : (int64_t(mant) >> -s);  // trunc toward zero of |x|
        r = t % p;
    }
    return sym(neg ? -r : r, p);
}

// trunc(2^mu * |x|) as int64 (only for the self-test, small shifts).
inline int64_t scaled_int(float x, int mu)
{
    int32_t mant; int ex; bool neg;
    decompose(x, mant, ex, neg);
    if (mant == 0) return 0;
    int s = ex + mu;
    int64_t t = s >= 0 ? (int64_t(mant) << s) : ((-s >= 32) ? 0 : int64_t(mant) >> -s);
    return neg ? -t : t;
}

// ceil(2^s * |x|), for the accurate mode's 6-bit bound operands (<= 64).
inline int ceil_scaled_abs(float x, int s)
{
    int32_t mant; int ex; bool neg;
    decompose(x, mant, ex, neg);
    if (mant == 0) return 0;
    int sh = ex + s;
    if (sh >= 0) return int(int64_t(mant) << sh);  // only when already an integer <= 64
    if (-sh >= 32) return 1;
    int64_t q = int64_t(mant) >> -sh;
    if ((q << -sh) != mant) ++q;
    return int(q);
}

template <class F>
void parallel_rows(int64_t m, int threads, F f)
{
    threads = std::max(1, threads);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([=] { for (int64_t i = t; i < m; i += threads) f(i); });
    for (auto &th : pool) th.join();
}

// int8 x int8 -> int32 dot product over [k0, k1) (one K block).
inline int32_t dot8(const int8_t *a, const int8_t *b, int64_t len)
{
    int32_t acc = 0;
    for (int64_t t = 0; t < len; ++t) acc += int32_t(a[t]) * int32_t(b[t]);
    return acc;
}

int row_ilogb_max(const float *x, int64_t len, bool &allzero)
{
    float mx = 0;
    for (int64_t t = 0; t < len; ++t) mx = std::max(mx, std::fabs(x[t]));
    allzero = (mx == 0.0f);
    return allzero ? 0 : std::ilogb(mx);
}

}  // namespace

double sumsq(const float *x, int64_t k)
{
    // x^2 is exact in double; only the additions round, so the order below
    // (ozaki2.hpp) is the whole definition.
    double s = 0;
    for (int64_t c0 = 0; c0 < k; c0 += kNormChunk) {
        const int64_t c1 = std::min(k, c0 + kNormChunk);
        double part = 0;
        for (int64_t t = c0; t < c1; ++t) part += double(x[t]) * double(x[t]);
        s += part;
    }
    return s;
}

double log2_T(int nmod)
{
    // P/2 - 1 in long double (P < 2^112 for N <= 14: 64-bit mantissa is
    // plenty for a log2).
    long double P = 1;
    for (int l = 0; l < nmod; ++l) P *= kModuli[l];
    return double(std::log2(P / 2 - 1));
}

void scaling_exponents(int64_t m, int64_t n, int64_t k, const float *A, const float *B,
                       const Params &p, std::vector<int> &mu, std::vector<int> &nu)
{
    const double T = log2_T(p.nmod);
    mu.assign(m, 0);
    nu.assign(n, 0);
    // Fast: K * 2^(eA+eB) <= 2^T, |a'| < 2^eA, |b'| < 2^eB.
    const int esum = int(std::floor(T - std::log2(double(k))));
    const int eA = esum >= 0 ? esum / 2 : -((-esum + 1) / 2);
    const int eB = esum - eA;
    auto fast = [&](const float *x, int e) {
        bool z; int lg = row_ilogb_max(x, k, z);
        return z ? 0 : e - 1 - lg;
    };
    if (p.scaling == Scaling::Fast) {
        for (int64_t i = 0; i < m; ++i) mu[i] = fast(A + i * k, eA);
        for (int64_t j = 0; j < n; ++j) nu[j] = fast(B + j * k, eB);
        return;
    }
    if (p.scaling == Scaling::FastCS) {
        // |a'.b'| <= ||a'||_2 ||b'||_2 <= 2^mu ||a||_2 2^nu ||b||_2 <= 2^T.
        auto cs = [&](const float *x) {
            const double s = sumsq(x, k);
            if (s == 0) return 0;
            return int(std::floor(T / 2 - 0.5 * std::log2(s) - 1e-9));
        };
        for (int64_t i = 0; i < m; ++i) mu[i] = cs(A + i * k);
        for (int64_t j = 0; j < n; ++j) nu[j] = cs(B + j * k);
        return;
    }
    // Accurate: one INT8 GEMM of 6-bit upper bounds of |A| and |B|.
    std::vector<int> sA(m), sB(n);
    std::vector<int8_t> Ah(m * k), Bh(n * k);
    std::vector<char> zA(m), zB(n);
    for (int64_t i = 0; i < m; ++i) {
        bool z; int lg = row_ilogb_max(A + i * k, k, z);
        zA[i] = z; sA[i] = 5 - lg;  // 2^s max|a_i| in [32, 64)
        for (int64_t t = 0; t < k; ++t) Ah[i * k + t] = int8_t(ceil_scaled_abs(A[i * k + t], sA[i]));
    }
    for (int64_t j = 0; j < n; ++j) {
        bool z; int lg = row_ilogb_max(B + j * k, k, z);
        zB[j] = z; sB[j] = 5 - lg;
        for (int64_t t = 0; t < k; ++t) Bh[j * k + t] = int8_t(ceil_scaled_abs(B[j * k + t], sB[j]));
    }
    std::vector<int32_t> rowmax(m, 0), colmax(n, 0);
    std::vector<int32_t> U(m * n);  // K * 64 * 64 < 2^31 for K < 2^19
    parallel_rows(m, p.threads, [&](int64_t i) {
        for (int64_t j = 0; j < n; ++j) U[i * n + j] = dot8(&Ah[i * k], &Bh[j * k], k);
    });
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
            rowmax[i] = std::max(rowmax[i], U[i * n + j]);
            colmax[j] = std::max(colmax[j], U[i * n + j]);
        }
    // 2^(mu_i+nu_j) (|A||B|)_ij <= 2^T U_ij / sqrt(rowmax_i colmax_j) <= 2^T.
    for (int64_t i = 0; i < m; ++i)
        mu[i] = zA[i] ? 0 : rowmax[i] == 0 ? fast(A + i * k, eA)
                : sA[i] + int(std::floor(T / 2 - 0.5 * std::log2(double(rowmax[i])) - 1e-9));
    for (int64_t j = 0; j < n; ++j)
        nu[j] = zB[j] ? 0 : colmax[j] == 0 ? fast(B + j * k, eB)
                : sB[j] + int(std::floor(T / 2 - 0.5 * std::log2(double(colmax[j])) - 1e-9));
}

void gemm(int64_t m, int64_t n, int64_t k, float alpha, const float *A, const float *B,
          float beta, float *C, const Params &p, Info *info)
{
    assert(p.nmod >= 2 && p.nmod <= kMaxModuli);
    assert(p.kblock >= 1 && p.kblock <= 131071);
    const int N = p.nmod;
    if (alpha == 0.0f || k == 0) {  // as the strict path: C := beta * C
        for (int64_t t = 0; t < m * n; ++t) C[t] = beta == 0.0f ? 0.0f : beta * C[t];
        return;
    }
    std::vector<int> mu, nu;
    scaling_exponents(m, n, k, A, B, p, mu, nu);

    // Residue products, one INT8 GEMM per modulus; the epilogue of each
    // reduces int32 to a symmetric residue (this is what a fused kernel
    // would write: one byte per element and modulus).
    std::vector<int8_t> Ra(m * k), Rb(n * k);
    std::vector<int16_t> R(int64_t(N) * m * n);  // residue of modulus 256 is -128..127 too
    for (int l = 0; l < N; ++l) {
        const int q = kModuli[l];
        parallel_rows(m, p.threads, [&](int64_t i) {
            for (int64_t t = 0; t < k; ++t) Ra[i * k + t] = int8_t(residue(A[i * k + t], mu[i], q));
        });
        parallel_rows(n, p.threads, [&](int64_t j) {
            for (int64_t t = 0; t < k; ++t) Rb[j * k + t] = int8_t(residue(B[j * k + t], nu[j], q));
        });
        parallel_rows(m, p.threads, [&](int64_t i) {
            for (int64_t j = 0; j < n; ++j) {
                int r = 0;
                for (int64_t k0 = 0; k0 < k; k0 += p.kblock) {
                    int64_t len = std::min<int64_t>(p.kblock, k - k0);
                    int32_t acc = dot8(&Ra[i * k + k0], &Rb[j * k + k0], len);
                    r = sym(int64_t(r) + sym(acc, q), q);
                }
                R[(int64_t(l) * m + i) * n + j] = int16_t(r);
            }
        });
    }

    // Garner's constants: inv[l][t] = p_t^-1 mod p_l, t < l.
    int inv[kMaxModuli][kMaxModuli] = {};
    for (int l = 1; l < N; ++l)
        for (int t = 0; t < l; ++t) inv[l][t] = inv_mod(kModuli[t], kModuli[l]);

    parallel_rows(m, p.threads, [&](int64_t i) {
        for (int64_t j = 0; j < n; ++j) {
            int v[kMaxModuli] = {};
            for (int l = 0; l < N; ++l) {
                const int q = kModuli[l];
                int t = R[(int64_t(l) * m + i) * n + j];
                for (int s = 0; s < l; ++s) t = sym(int64_t(t - v[s]) * inv[l][s], q);
                v[l] = t;
            }
            double x = v[N - 1];
            for (int l = N - 2; l >= 0; --l) x = std::fma(x, double(kModuli[l]), double(v[l]));
            float r = float(std::ldexp(x, -(mu[i] + nu[j])));
            float out = alpha * r;
            float &c = C[i * n + j];
            c = beta != 0.0f ? std::fma(beta, c, out) : out;
        }
    });
    if (info) {
        long double P = 1;
        for (int l = 0; l < N; ++l) P *= kModuli[l];
        info->log2_P = double(std::log2(P));
        info->log2_T = log2_T(N);
        info->int8_gemms = N + (p.scaling == Scaling::Accurate ? 1 : 0);
        info->mu = mu;
        info->nu = nu;
    }
}

void balance_k(int64_t m, int64_t n, int64_t k, const float *A, const float *B,
               std::vector<float> &Ab, std::vector<float> &Bb)
{
    Ab.assign(A, A + m * k);
    Bb.assign(B, B + n * k);
    std::vector<float> ca(k, 0.0f), rb(k, 0.0f);
    for (int64_t i = 0; i < m; ++i)
        for (int64_t t = 0; t < k; ++t) ca[t] = std::max(ca[t], std::fabs(A[i * k + t]));
    for (int64_t j = 0; j < n; ++j)
        for (int64_t t = 0; t < k; ++t) rb[t] = std::max(rb[t], std::fabs(B[j * k + t]));
    for (int64_t t = 0; t < k; ++t) {
        if (ca[t] == 0.0f || rb[t] == 0.0f) continue;
        int d = std::ilogb(rb[t]) - std::ilogb(ca[t]);
        int e = d >= 0 ? d / 2 : -((-d + 1) / 2);
        if (e == 0) continue;
        for (int64_t i = 0; i < m; ++i) Ab[i * k + t] = std::ldexp(A[i * k + t], e);
        for (int64_t j = 0; j < n; ++j) Bb[j * k + t] = std::ldexp(B[j * k + t], -e);
    }
}

int selftest()
{
    // Moduli pairwise coprime.
    for (int a = 0; a < kMaxModuli; ++a)
        for (int b = a + 1; b < kMaxModuli; ++b)
            if (gcd(kModuli[a], kModuli[b]) != 1) return 1000;
    int bad = 0;
    std::mt19937_64 rng(12345);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (int N = 2; N <= kMaxModuli; ++N) {
        const int64_t m = 7, n = 5, k = 300;
        std::vector<float> A(m * k), B(n * k);
        for (auto &x : A) x = std::ldexp(u(rng), int(rng() % 9) - 4);
        for (auto &x : B) x = std::ldexp(u(rng), int(rng() % 9) - 4);
        Params p; p.nmod = N; p.scaling = Scaling::Fast; p.kblock = 37; p.threads = 1;
        std::vector<int> mu, nu;
        scaling_exponents(m, n, k, A.data(), B.data(), p, mu, nu);
        int inv[kMaxModuli][kMaxModuli] = {};
        for (int l = 1; l < N; ++l)
            for (int t = 0; t < l; ++t) inv[l][t] = inv_mod(kModuli[t], kModuli[l]);
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
                __int128 exact = 0;
                for (int64_t t = 0; t < k; ++t)
                    exact += __int128(scaled_int(A[i * k + t], mu[i])) * scaled_int(B[j * k + t], nu[j]);
                // Residues through the GPU path, then Garner in int128.
                int v[kMaxModuli];
                for (int l = 0; l < N; ++l) {
                    const int q = kModuli[l];
                    int r = 0;
                    for (int64_t k0 = 0; k0 < k; k0 += p.kblock) {
                        int32_t acc = 0;
                        for (int64_t t = k0; t < std::min(k, k0 + p.kblock); ++t)
                            acc += residue(A[i * k + t], mu[i], q) * residue(B[j * k + t], nu[j], q);
                        r = sym(int64_t(r) + sym(acc, q), q);
                    }
                    int t = r;
                    for (int s = 0; s < l; ++s) t = sym(int64_t(t - v[s]) * inv[l][s], q);
                    v[l] = t;
                }
                __int128 X = v[N - 1];
                for (int l = N - 2; l >= 0; --l) X = X * kModuli[l] + v[l];
                if (X != exact) ++bad;
            }
    }
    return bad;
}

}  // namespace oz2
