// The element arithmetic of the fp32-tc math (Ozaki scheme II on INT8), one
// definition for the GPU kernels (src/kernels/ozaki/*.cu) and the CPU model
// (tests/ozaki_model.cpp), so that the model reproduces the kernels bit for
// bit. Every function is exact integer arithmetic on a float's bits, or a
// fixed sequence of double operations each rounded once (intrinsics on the
// device, never contracted; the host side is built with -ffp-contract=off).
//
// The method (docs/mainpage.md "FP32 on the tensor cores", research/ozaki/
// NOTES.md (a), (f), (h)): C :=
// alpha op(A) op(B) + beta C with op(A) m x k, op(B) k x n.
//  1. K balancing: column k of op(A) scaled by 2^e_k, row k of op(B) by
//     2^-e_k (ebal_value of the two maxima), exact, products unchanged.
//  2. Per row i of the balanced op(A) (and column j of op(B)) an exponent
//     mu_i from its sum of squares (mu_value), so that |sum_k A'_ik B'_kj|
//     < P/2 for A' = trunc(2^mu a), B' = trunc(2^nu b) (Cauchy-Schwarz).
//  3. Residues of A', B' modulo the first N moduli (residues), symmetric,
//     int8; one INT8 GEMM per modulus, reduced to the symmetric residue.
//  4. Garner's CRT recovers A'B' exactly, scaled back by 2^-(mu_i + nu_j),
//     rounded to float, alpha/beta epilogue (crt_element).
//  The certificate (NOTES.md (f), (h)) decides per call the smallest N for
//  which every element's error bound stays within cert_target: strict FP32's
//  gamma_K bound with a modulus to spare, and 2 sqrt(K) u |A||B| (mag_pair,
//  cert_pass, cert_raise).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#ifdef __CUDACC__
#define OZ_HD __host__ __device__ __forceinline__
#else
#define OZ_HD inline
#endif
// Loops over the moduli unrolled on the device (so residues and digits stay
// in registers); plain loops on the host.
#ifdef __CUDA_ARCH__
#define OZ_UNROLL _Pragma("unroll")
#else
#define OZ_UNROLL
#endif

namespace tgemm {
namespace ozaki {

constexpr int kMaxModuli = 14;
// Candidate numbers of moduli: the certificate tests these, the kernels
// are instantiated for them.
constexpr int kMinN = 5, kMaxN = 12;

// The moduli: pairwise coprime, each <= 256 so that a symmetric residue
// fits int8. A constexpr function so that unrolled loops get a
// compile-time modulus.
OZ_HD constexpr int kmod(int l)
{
    return l == 0 ? 256 : l == 1 ? 255 : l == 2 ? 253 : l == 3 ? 251 : l == 4 ? 247
         : l == 5 ? 241 : l == 6 ? 239 : l == 7 ? 233 : l == 8 ? 229 : l == 9 ? 227
         : l == 10 ? 223 : l == 11 ? 217 : l == 12 ? 211 : l == 13 ? 199 : 0;
}

// Garner's constants, so that each digit takes one reduction: for s < l,
// prefix[l][s] = p_0 p_1 ... p_{s-1} mod p_l (1 for s = 0) and
// inv_prefix[l] = (p_0 ... p_{l-1})^-1 mod p_l; 0 elsewhere. The device
// copy lives in constant memory (crt.cu), initialised from this list;
// tests/test_ozaki_model.cpp checks every entry.
struct GarnerTable {
    int prefix[kMaxModuli][kMaxModuli];
    int inv_prefix[kMaxModuli];
};
#define TGEMM_OZAKI_GARNER \
    {{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},  \
      {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},  \
      {1, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},  \
      {1, 5, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},  \
      {1, 9, 72, 185, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},  \
      {1, 15, 210, 110, 136, 0, 0, 0, 0, 0, 0, 0, 0, 0},  \
      {1, 17, 33, 223, 47, 137, 0, 0, 0, 0, 0, 0, 0, 0},  \
      {1, 23, 40, 101, 187, 55, 207, 0, 0, 0, 0, 0, 0, 0},  \
      {1, 27, 15, 131, 134, 122, 90, 213, 0, 0, 0, 0, 0, 0},  \
      {1, 29, 131, 1, 24, 26, 137, 55, 103, 0, 0, 0, 0, 0},  \
      {1, 33, 164, 14, 169, 42, 87, 54, 94, 118, 0, 0, 0, 0},  \
      {1, 39, 180, 187, 65, 214, 145, 152, 45, 106, 192, 0, 0, 0},  \
      {1, 45, 81, 26, 196, 93, 47, 50, 45, 177, 89, 13, 0, 0},  \
      {1, 57, 8, 34, 176, 90, 198, 159, 33, 194, 59, 23, 16, 0}},  \
     {0, 1, 211, 182, 246, 184, 41, 115, 161, 54, 163, 149, 46, 142}}

// The scaling's limit for N moduli as a double's biased exponent and
// fraction bits: Tlim(N) = (P_N / 2 - 1) 2^(-2e-9) rounded to double, P_N
// the product of the first N moduli. The margin 2^(-2e-9) (a relative
// 1.4e-9) covers the rounding of the sums of squares (below K 2^-53 <=
// 2^-31 for K <= 2^22), so 4^mu s <= Tlim for the computed s implies it for
// the exact one below P/2 - 1 (research/ozaki/NOTES.md (b), (f)).
// tests/test_ozaki_model.cpp recomputes them.
OZ_HD constexpr int tlim_exponent(int n)
{
    return n == 5 ? 38 : n == 6 ? 46 : n == 7 ? 54 : n == 8 ? 62 : n == 9 ? 70 : n == 10 ? 78
         : n == 11 ? 86 : n == 12 ? 93 : 0;
}
OZ_HD constexpr uint64_t tlim_fraction(int n)
{
    return n == 5 ? 0xdcce4502e50e6ull : n == 6 ? 0xc0de2ef7bd629ull : n == 7 ? 0xa30f6dd949d2cull
         : n == 8 ? 0x7d690afac430dull : n == 9 ? 0x552ef6d2517fbull : n == 10 ? 0x2e88a4dc7e443ull
         : n == 11 ? 0x0789079c11fd6ull : n == 12 ? 0xbec64ee6967faull : 0;
}

// The device's intrinsic or the host's expression of one operation.
#ifdef __CUDA_ARCH__
#define OZ_PICK(device, host) device
#else
#define OZ_PICK(device, host) host
#endif

// The bits of a value as another type of the same size (host side).
template <class To, class From>
inline To host_bits(From x)
{
    static_assert(sizeof(To) == sizeof(From), "same size");
    To t;
    std::memcpy(&t, &x, sizeof t);
    return t;
}

OZ_HD unsigned f2u(float x) { return OZ_PICK(__float_as_uint(x), host_bits<unsigned>(x)); }
OZ_HD float u2f(unsigned u) { return OZ_PICK(__uint_as_float(u), host_bits<float>(u)); }
OZ_HD uint64_t d2u(double x) { return OZ_PICK(static_cast<uint64_t>(__double_as_longlong(x)), host_bits<uint64_t>(x)); }
OZ_HD int clz32(unsigned x) { return OZ_PICK(__clz(static_cast<int>(x)), __builtin_clz(x)); }
// Double and float arithmetic, each operation rounded once to nearest.
OZ_HD double fma_d(double a, double b, double c) { return OZ_PICK(__fma_rn(a, b, c), __builtin_fma(a, b, c)); }
OZ_HD float fma_f(float a, float b, float c) { return OZ_PICK(__fmaf_rn(a, b, c), __builtin_fmaf(a, b, c)); }
OZ_HD float fmul_f(float a, float b) { return OZ_PICK(__fmul_rn(a, b), a * b); }
OZ_HD double dadd(double a, double b) { return OZ_PICK(__dadd_rn(a, b), a + b); }
OZ_HD double dmul(double a, double b) { return OZ_PICK(__dmul_rn(a, b), a * b); }
// 2^e as a double, |e| <= 1022.
OZ_HD double pow2d(int e)
{
    const uint64_t b = static_cast<uint64_t>(e + 1023) << 52;
    return OZ_PICK(__longlong_as_double(static_cast<long long>(b)), host_bits<double>(b));
}
// The float nearest x 2^e, for finite x and |e| <= 300: a normal result of
// a normal x is an exact add to the exponent field; otherwise (zero,
// subnormal in or out, overflow) the exact double product rounded once.
OZ_HD float ldexp_f(float x, int e)
{
    const unsigned b = f2u(x);
    const int ex = static_cast<int>((b >> 23) & 0xffu);
    if (ex != 0 && ex + e >= 1 && ex + e <= 254)
        return u2f(b + (static_cast<unsigned>(e) << 23));
    return static_cast<float>(dmul(static_cast<double>(x), pow2d(e)));
}
// x 2^e for a double x and an integer e, exact unless the result leaves the
// normal range (the CRT's value times 2^-(mu + nu): e in about [-700, 700]).
OZ_HD double ldexp_d(double x, int e)
{
    // Two exact steps keep each power of two inside the normal range.
    const int h = e / 2;
    return dmul(dmul(x, pow2d(h)), pow2d(e - h));
}

// Symmetric residue: [-(q-1)/2, (q-1)/2] for odd q, [-128, 127] for 256.
template <int Q>
OZ_HD int symq(int v)
{
    int r = v % Q;
    if (r < 0)
        r += Q;
    if (2 * r >= Q)
        r -= Q;
    return r;
}
OZ_HD int sym_rt(int v, int q)
{
    int r = v % q;
    if (r < 0)
        r += q;
    if (2 * r >= q)
        r -= q;
    return r;
}

// The symmetric residue of -r (neg) or r, for r in [0, q): sym_rt's value
// without its remainder.
OZ_HD int sym_small(int r, bool neg, int q)
{
    if (neg && r != 0)
        r = q - r;
    return 2 * r >= q ? r - q : r;
}

// ilogb of a finite nonzero float, from its bits (subnormals included).
OZ_HD int ilogb_bits(float x)
{
    const unsigned b = f2u(x) & 0x7fffffffu;
    const unsigned e = b >> 23;
    if (e)
        return static_cast<int>(e) - 127;
    return (31 - clz32(b)) - 149;
}

// Whether a float is Inf or NaN.
OZ_HD bool nonfinite(float x)
{
    return (f2u(x) & 0x7f800000u) == 0x7f800000u;
}

// What the certificate's pass flags for an element x of op(A) or op(B)
// and its balanced value xb = ldexp_f(x, e): kSpecialInput for Inf or NaN
// (the call goes to the strict path), kInexactBalance where xb x 2^-e is
// not x (K balancing underflowed or overflowed: the balanced product would
// not be the caller's, so nothing about it may be certified).
enum : int { kSpecialInput = 1, kInexactBalance = 2 };
OZ_HD int balance_flags(float x, float xb, int e)
{
    if (nonfinite(x))
        return kSpecialInput;
    return ldexp_f(xb, -e) != x ? kInexactBalance : 0;
}

// K balancing's exponent from the column maximum a of op(A) and the row
// maximum b of op(B): floor((ilogb b - ilogb a) / 2), 0 where either is 0.
OZ_HD int ebal_value(float a, float b)
{
    if (a == 0.0f || b == 0.0f)
        return 0;
    const int d = ilogb_bits(b) - ilogb_bits(a);
    return d >= 0 ? d / 2 : -((-d + 1) / 2);
}

// The scaling exponent of a row with sum of squares s (> 0, finite, as
// computed): the largest mu with s 4^mu <= Tlim(n), exactly, from the
// doubles' exponents and fractions (no logarithm, so host and device agree
// whatever their libraries). 0 for a zero row.
OZ_HD int mu_value(double s, int n)
{
    if (s == 0.0)
        return 0;
    const uint64_t b = d2u(s);
    const int es = static_cast<int>((b >> 52) & 0x7ff) - 1023;
    const uint64_t fs = b & ((uint64_t(1) << 52) - 1);
    // s = 1.fs 2^es, Tlim = 1.ft 2^et: s 4^mu <= Tlim iff es + 2 mu < et, or
    // es + 2 mu == et and fs <= ft.
    const int d = tlim_exponent(n) - es - (fs > tlim_fraction(n) ? 1 : 0);
    return d >= 0 ? d / 2 : -((-d + 1) / 2);
}

// A row's sum of squares from its chunk sums (the chunk sums of rows R at
// p[c * R], c < chunks), added in chunk order from 0.
OZ_HD double norm_total(const double *p, int64_t rows, int64_t chunks)
{
    double s = 0.0;
    for (int64_t c = 0; c < chunks; ++c)
        s = dadd(s, p[c * rows]);
    return s;
}

// |x| = mant 2^ex with 2^23 <= mant < 2^24 (subnormals normalised, as frexp
// does), for the bits of a finite nonzero float x.
OZ_HD void split_float(unsigned bits, unsigned &mant, int &ex)
{
    const unsigned eb = (bits >> 23) & 0xffu, fr = bits & 0x7fffffu;
    if (eb) {
        mant = fr | 0x800000u;
        ex = static_cast<int>(eb) - 150;
    } else {
        const int sh = clz32(fr) - 8;
        mant = fr << sh;
        ex = -149 - sh;
    }
}

// 2^s mod q (square and multiply), s >= 0; every product fits 32 bits.
OZ_HD unsigned pow2mod(int s, unsigned q)
{
    unsigned r = 1 % q, b = 2 % q;
    while (s > 0) {
        if (s & 1)
            r = r * b % q;
        b = b * b % q;
        s >>= 1;
    }
    return r;
}

// The symmetric residues of trunc(2^mu x) modulo the first N moduli. x =
// +-mant 2^ex with mant < 2^24 (subnormals normalised); s = ex + mu; s >= 0:
// (mant 2^s) mod q; s < 0: (mant >> -s) mod q.
template <int N>
OZ_HD void residues(float x, int mu, int (&res)[N])
{
    const unsigned bits = f2u(x);
    const bool neg = (bits >> 31) != 0;
    if ((bits & 0x7fffffffu) == 0) {
        OZ_UNROLL
        for (int l = 0; l < N; ++l)
            res[l] = 0;
        return;
    }
    unsigned mant;
    int ex;
    split_float(bits, mant, ex);
    const int s = ex + mu;
    if (s > 39) {  // mant 2^s >= 2^63: per modulus
        OZ_UNROLL
        for (int l = 0; l < N; ++l) {
            const unsigned q = static_cast<unsigned>(kmod(l));
            const int r = static_cast<int>((mant % q) * pow2mod(s, q) % q);
            res[l] = sym_small(r, neg, static_cast<int>(q));
        }
        return;
    }
    const unsigned long long t = s >= 0 ? (static_cast<unsigned long long>(mant) << s)
                                        : (-s >= 32 ? 0ull : static_cast<unsigned long long>(mant >> -s));
    // A remainder by a constant costs a few 32-bit instructions where t
    // fits 32 bits, several times more in 64 bits. At N <= 8 every element
    // fits: mu_value keeps 4^mu x^2 <= Tlim(N) < 2^63.
    if ((t >> 32) == 0) {
        const unsigned t32 = static_cast<unsigned>(t);
        OZ_UNROLL
        for (int l = 0; l < N; ++l)
            res[l] = sym_small(static_cast<int>(t32 % static_cast<unsigned>(kmod(l))), neg, kmod(l));
        return;
    }
    OZ_UNROLL
    for (int l = 0; l < N; ++l)
        res[l] = sym_small(static_cast<int>(t % static_cast<unsigned long long>(kmod(l))), neg, kmod(l));
}

// One element of C from its N residues: Garner's mixed-radix digits, Horner
// in double (exact while below 2^53, NOTES.md (f)), times 2^-e (e = mu_i +
// nu_j), rounded to float, then fl(alpha r) and, where beta != 0,
// fma(beta, c, that) (C is not read where beta == 0). Digit v_l is the
// symmetric residue mod p_l of (r_l - sum_{s<l} v_s p_0 ... p_{s-1})
// (p_0 ... p_{l-1})^-1, the value Garner's step-by-step form reaches, in one
// reduction: |v_s| <= 128 and the constants < 256 keep the sum below 2^19
// and the product below 2^27, exact in int.
template <int N>
OZ_HD float crt_element(const int (&r)[N], int e, float alpha, float beta, float c, const GarnerTable &g)
{
    int v[N];
    v[0] = r[0];
    OZ_UNROLL
    for (int l = 1; l < N; ++l) {
        int t = r[l];
        OZ_UNROLL
        for (int s = 0; s < l; ++s)
            t -= v[s] * g.prefix[l][s];
        v[l] = sym_rt(t * g.inv_prefix[l], kmod(l));
    }
    double x = static_cast<double>(v[N - 1]);
    OZ_UNROLL
    for (int l = N - 2; l >= 0; --l)
        x = fma_d(x, static_cast<double>(kmod(l)), static_cast<double>(v[l]));
    const float rf = static_cast<float>(ldexp_d(x, -e));
    const float out = fmul_f(alpha, rf);
    return beta != 0.0f ? fma_f(beta, c, out) : out;
}

// --- The certificate (NOTES.md (f)) ---------------------------------------
// Per row r of a balanced operand with maximum mx: s_r = 7 - ilogb(mx), so
// 2^s_r |x| < 2^8; the magnitude floor(2^s_r |x|) (u8, operand of the
// magnitude GEMM) and ceil(2^(s_r + 16) |x|) (summed into the row's 1-norm
// bound I_r).
constexpr int kCertBits = 8, kCertD = 24 - kCertBits;
// The magnitude GEMM accumulates in int32: 255^2 K < 2^31.
constexpr int64_t kCertMaxK = 32768;

OZ_HD int cert_shift(float mx)
{
    return mx == 0.0f ? 0 : kCertBits - 1 - ilogb_bits(mx);
}

// floor(2^s |x|) and ceil(2^(s + 16) |x|) for 2^s |x| < 2^8, in 32-bit
// arithmetic: both are right shifts of the 24-bit mantissa.
OZ_HD void mag_pair(float x, int s, unsigned &fl, unsigned &ce)
{
    const unsigned b = f2u(x);
    if ((b & 0x7fffffffu) == 0) {
        fl = 0;
        ce = 0;
        return;
    }
    unsigned mant;
    int ex;
    split_float(b, mant, ex);
    const int r1 = -(ex + s), r2 = r1 - kCertD;  // right shifts: r1 >= 16, r2 >= 0
    fl = r1 >= 32 ? 0u : mant >> r1;
    if (r2 >= 32) {
        ce = 1u;
        return;
    }
    const unsigned q = mant >> r2;
    ce = (q << r2) == mant ? q : q + 1u;
}

// The row's factor for candidate n: 2^(s_r - mu_r(n) - 16), 0 for a zero row.
OZ_HD double cert_power(float mx, int s, double sumsq, int n)
{
    return mx == 0.0f ? 0.0 : pow2d(s - mu_value(sumsq, n) - kCertD);
}

// gamma_K - 2u in double (u = 2^-24, gamma_K = K u / (1 - K u)); 0 where
// nothing can be certified (K < 3, or K > 2^22 where the margins are not
// argued).
inline double cert_gamma(int64_t k)
{
    if (k < 3 || k > (int64_t(1) << 22))
        return 0.0;
    const double u = 0x1p-24, ku = static_cast<double>(k) * u;
    return ku / (1.0 - ku) - 2.0 * u;
}

// 2 sqrt(K) u (0 for K < 3): sqrt is correctly rounded, so the value the
// host passes the GPU is the model's bit for bit.
inline double cert_typical(int64_t k)
{
    return k < 3 ? 0.0 : 0x1p-23 * std::sqrt(static_cast<double>(k));
}

// The target the call's N is certified at (NOTES.md (h)): the smaller of
// (gamma_K - 2u) / 16, a modulus's worth (each cuts the truncation error
// about sixteenfold) under strict FP32's bound (contract (a)), and
// 2 sqrt(K) u. The second because measured errors are sums of K terms of
// random sign: strict FP32's stay about u |A||B| at any K, the mode's about
// its bound over sqrt(K), so a margin fixed relative to gamma_K leaves the
// mode's errors above strict's once K is large; its factor 2 is the
// calibration of NOTES.md (h). From K = 1028 the second is the smaller.
inline double cert_target(int64_t k)
{
    const double g = cert_gamma(k) / 16.0, t = cert_typical(k);
    return g < t ? g : t;
}

// The test for one element and one candidate: IA pc + IB pr <= g L' with a
// relative margin 2^-40 (sound in round-to-nearest double: NOTES.md (f)).
OZ_HD bool cert_pass(double ia, double ib, double pr, double pc, double g, double lp)
{
    const double lhs = dadd(dmul(ia, pc), dmul(ib, pr));
    const double rhs = dmul(g, lp);
    return dmul(lhs, 1.0 + 0x1p-40) <= rhs;
}

// Whether the element passes at candidate n, whose row and column factors
// are pr and pc: always for a zero row or column (I = 0), never where g <= 0
// (K outside the argued range) otherwise.
OZ_HD bool cert_holds(uint64_t ia, uint64_t ib, double pr, double pc, double g, int lp)
{
    if (ia == 0 || ib == 0)
        return true;
    return g > 0.0 && cert_pass(static_cast<double>(ia), static_cast<double>(ib), pr, pc, g, static_cast<double>(lp));
}

// The smallest candidate n >= from (from >= kMinN) at which the element
// passes, kMaxN + 1 where none: the larger of `from` and the element's own
// smallest N, because the test only gets easier as n grows (the factors fall
// by powers of two, and round-to-nearest is monotone). So a running maximum
// over elements, raised element by element from kMinN, ends at the largest
// of the elements' smallest N, whatever their order. pwA, pwB: the row's and
// column's cert_power, one per candidate, `stride` apart.
OZ_HD int cert_raise(uint64_t ia, uint64_t ib, const double *pwA, const double *pwB, int64_t stride_a,
                     int64_t stride_b, double g, int lp, int from)
{
    if (ia == 0 || ib == 0)
        return from;
    int n = from;
    while (n <= kMaxN && !cert_holds(ia, ib, pwA[(n - kMinN) * stride_a], pwB[(n - kMinN) * stride_b], g, lp))
        ++n;
    return n;
}

}  // namespace ozaki
}  // namespace tgemm
