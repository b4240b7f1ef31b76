// GPU prototype of Ozaki scheme II on INT8 (fast-cs scaling + K balancing),
// checked bit for bit against the CPU model (../ozaki2.cpp). See README.md.
//
// Pipeline (C := alpha op(A) op(B) + beta C, FP32, column-major, any ld):
//   1. kmax_kernel       max_i |a_ik| and max_j |b_kj| per k (K balancing)
//      ebal_kernel       e_k = floor((ilogb maxb_k - ilogb maxa_k) / 2)
//   2. norm_kernel       mu_i = floor(T/2 - log2(sum_k ldexp(a_ik, e_k)^2)/2 - 1e-9)
//                        (the model's sequential double sum, in the same order)
//   3. convert_kernel    N int8 residue planes per operand, K-contiguous:
//                        Ra[l][i*Kp + k], Rb[l][j*Kp + k], zero padded
//   4. gemm_mod_kernel   per modulus (blockIdx.z): int8 x int8 -> int32 on
//                        mma.sync m16n8k32, int32 K blocks of <= 131008,
//                        epilogue: symmetric residue -> int8 Rc[l][j*Mp + i]
//   5. crt_kernel        Garner digits, Horner in double with fma, ldexp,
//                        round to float, alpha/beta epilogue
#include "../ozaki2.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

using std::vector;

#define CK(x)                                                                              \
    do {                                                                                   \
        cudaError_t e_ = (x);                                                              \
        if (e_ != cudaSuccess) {                                                           \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,                \
                         cudaGetErrorString(e_));                                          \
            std::exit(2);                                                                  \
        }                                                                                  \
    } while (0)

namespace {

constexpr int kMaxN = oz2::kMaxModuli;

// The model's moduli as a constexpr function, so that unrolled loops get a
// compile-time modulus (fast % by a constant). Checked against
// oz2::kModuli at start-up.
__host__ __device__ constexpr int kmod(int l)
{
    return l == 0 ? 256 : l == 1 ? 255 : l == 2 ? 253 : l == 3 ? 251 : l == 4 ? 247
         : l == 5 ? 241 : l == 6 ? 239 : l == 7 ? 233 : l == 8 ? 229 : l == 9 ? 227
         : l == 10 ? 223 : l == 11 ? 217 : l == 12 ? 211 : l == 13 ? 199 : 0;
}

__constant__ int c_inv[kMaxN][kMaxN];  // p_s^-1 mod p_l, s < l (Garner)

#define OZ_HD __host__ __device__ __forceinline__
#ifdef __CUDA_ARCH__
#define OZ_UNROLL _Pragma("unroll")
#else
#define OZ_UNROLL
#endif

// Element arithmetic shared by the kernels and the host emulation
// (--host-check), so the latter tests exactly this code.
OZ_HD unsigned f2u(float x)
{
#ifdef __CUDA_ARCH__
    return __float_as_uint(x);
#else
    unsigned u; std::memcpy(&u, &x, 4); return u;
#endif
}
OZ_HD int clz32(unsigned x)
{
#ifdef __CUDA_ARCH__
    return __clz(int(x));
#else
    return __builtin_clz(x);
#endif
}
OZ_HD double fma_d(double a, double b, double c)
{
#ifdef __CUDA_ARCH__
    return __fma_rn(a, b, c);
#else
    return std::fma(a, b, c);
#endif
}
OZ_HD float fma_f(float a, float b, float c)
{
#ifdef __CUDA_ARCH__
    return __fmaf_rn(a, b, c);
#else
    return std::fma(a, b, c);
#endif
}

// Symmetric residue, exactly the model's sym(): [-(q-1)/2, (q-1)/2] for odd
// q, [-128, 127] for 256.
template <int Q>
OZ_HD int symq(int v)
{
    int r = v % Q;
    if (r < 0) r += Q;
    if (2 * r >= Q) r -= Q;
    return r;
}
OZ_HD int sym_rt(int v, int q)
{
    int r = v % q;
    if (r < 0) r += q;
    if (2 * r >= q) r -= q;
    return r;
}

// ilogb of a finite nonzero float, from its bits (subnormals included).
OZ_HD int ilogb_bits(float x)
{
    unsigned b = f2u(x) & 0x7fffffffu;
    unsigned e = b >> 23;
    if (e) return int(e) - 127;
    return (31 - clz32(b)) - 149;
}

// balance_k's exponent from the two maxima.
OZ_HD int ebal_value(float a, float b)
{
    if (a == 0.0f || b == 0.0f) return 0;
    int d = ilogb_bits(b) - ilogb_bits(a);
    return d >= 0 ? d / 2 : -((-d + 1) / 2);
}

// fast-cs exponent from the sum of squares (the model's cs()).
OZ_HD int mu_value(double acc, double T)
{
    if (acc == 0.0) return 0;
    // T/2 - 0.5 log2(acc) - 1e-9, evaluated left to right, no contraction
    // (-fmad=false on the device, -ffp-contract=off on the host).
    double h = T * 0.5, lg = 0.5 * log2(acc);
    double y = h - lg;
    y = y - 1e-9;
    return int(floor(y));
}

// --- 32 x 32 tile of op(X), element (r, kk) at X[r*rs + kk*ks] -----------
// Coalesced in either orientation; stored transposed-free as s[kk][r].
__device__ __forceinline__ void load_tile(float (*s)[33], const float *__restrict__ X, int64_t rs,
                                          int64_t ks, int64_t R, int64_t K, int64_t r0, int64_t k0)
{
    const int tx = threadIdx.x, ty = threadIdx.y;  // block (32, 8)
OZ_UNROLL
    for (int j = 0; j < 4; ++j) {
        int r, kk;
        if (rs == 1) { r = tx; kk = ty + 8 * j; }
        else { r = ty + 8 * j; kk = tx; }
        float v = 0.0f;
        if (r0 + r < R && k0 + kk < K) v = X[(r0 + r) * rs + (k0 + kk) * ks];
        s[kk][r] = v;
    }
}

// out[kk] = max over rows r of |op(X)(r, kk)| as float bits (atomicMax on
// non-negative floats as unsigned is exact and order independent).
__global__ void kmax_kernel(const float *__restrict__ X, int64_t rs, int64_t ks, int64_t R,
                            int64_t K, unsigned *__restrict__ out)
{
    __shared__ float s[32][33];
    const int64_t k0 = int64_t(blockIdx.x) * 32, r0 = int64_t(blockIdx.y) * 32;
    load_tile(s, X, rs, ks, R, K, r0, k0);
    __syncthreads();
    if (threadIdx.y == 0 && k0 + threadIdx.x < K) {
        float mx = 0.0f;
        for (int r = 0; r < 32; ++r) mx = fmaxf(mx, fabsf(s[threadIdx.x][r]));
        atomicMax(out + k0 + threadIdx.x, __float_as_uint(mx));
    }
}

// The model's balance_k exponent: e = floor((ilogb rb - ilogb ca) / 2), 0
// where either maximum is zero. A column k of A is scaled by 2^e, the row k
// of B by 2^-e.
__global__ void ebal_kernel(const unsigned *__restrict__ ca, const unsigned *__restrict__ rb,
                            int64_t K, int *__restrict__ e)
{
    int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (t >= K) return;
    e[t] = ebal_value(__uint_as_float(ca[t]), __uint_as_float(rb[t]));
}

// fast-cs exponent of each row r of op(X) after balancing (sign = +1 for A,
// -1 for B): the model's cs(): s = sum_k double(x)^2 sequentially in k,
// mu = s == 0 ? 0 : floor(T/2 - 0.5 log2(s) - 1e-9). x^2 is exact in double,
// so an fma would not change anything either; the sum order is the model's.
__global__ void norm_kernel(const float *__restrict__ X, int64_t rs, int64_t ks, int64_t R,
                            int64_t K, const int *__restrict__ ebal, int sign, double T,
                            int *__restrict__ mu)
{
    __shared__ float s[32][33];
    const int64_t r0 = int64_t(blockIdx.x) * 32;
    double acc = 0.0;
    for (int64_t k0 = 0; k0 < K; k0 += 32) {
        load_tile(s, X, rs, ks, R, K, r0, k0);
        __syncthreads();
        if (threadIdx.y == 0) {
            const int kn = K - k0 < 32 ? int(K - k0) : 32;
            for (int kk = 0; kk < kn; ++kk) {
                float x = ldexpf(s[kk][threadIdx.x], sign * ebal[k0 + kk]);
                double d = double(x);
                acc = __dadd_rn(acc, __dmul_rn(d, d));
            }
        }
        __syncthreads();
    }
    if (threadIdx.y == 0 && r0 + threadIdx.x < R) {
        mu[r0 + threadIdx.x] = mu_value(acc, T);
    }
}

// 2^s mod q (square and multiply), for the rare s > 39.
OZ_HD unsigned pow2mod(int s, unsigned q)
{
    unsigned long long r = 1 % q, b = 2 % q;
    while (s > 0) {
        if (s & 1) r = r * b % q;
        b = b * b % q;
        s >>= 1;
    }
    return unsigned(r);
}

// Residues of trunc(2^mu x) for the first N moduli: the model's residue().
// x = +-mant 2^ex with mant < 2^24 (normalised also for subnormals, as
// frexp does); s = ex + mu; s >= 0: (mant 2^s) mod q; s < 0: (mant >> -s) mod q.
template <int N>
OZ_HD void residues(float x, int mu, int (&res)[N])
{
    const unsigned bits = f2u(x);
    const bool neg = bits >> 31;
    const unsigned eb = (bits >> 23) & 0xffu, fr = bits & 0x7fffffu;
    if (eb == 0 && fr == 0) {
OZ_UNROLL
        for (int l = 0; l < N; ++l) res[l] = 0;
        return;
    }
    unsigned mant;
    int ex;
    if (eb) { mant = fr | 0x800000u; ex = int(eb) - 150; }
    else {
        int sh = clz32(fr) - 8;
        mant = fr << sh;
        ex = -149 - sh;
    }
    const int s = ex + mu;
    if (s >= 0 && s > 39) {  // mant 2^s >= 2^63: per modulus, as the model
OZ_UNROLL
        for (int l = 0; l < N; ++l) {
            const unsigned q = unsigned(kmod(l));
            int r = int((unsigned long long)(mant % q) * pow2mod(s, q) % q);
            res[l] = sym_rt(neg ? -r : r, int(q));
        }
        return;
    }
    const unsigned long long t = s >= 0 ? ((unsigned long long)mant << s)
                               : (-s >= 32 ? 0ull : (unsigned long long)(mant >> -s));
OZ_UNROLL
    for (int l = 0; l < N; ++l) {
        int r = int(t % (unsigned long long)kmod(l));
        res[l] = sym_rt(neg ? -r : r, kmod(l));
    }
}

// Residue planes of op(X) (R rows of K; rows padded to Rp, K to Kp, zero
// filled): out[l*Rp*Kp + r*Kp + kk] = residue(ldexp(x_rk, sign e_k), mu_r, p_l).
template <int N>
__global__ void convert_kernel(const float *__restrict__ X, int64_t rs, int64_t ks, int64_t R,
                               int64_t K, int64_t Rp, int64_t Kp, const int *__restrict__ ebal,
                               int sign, const int *__restrict__ mu, int8_t *__restrict__ out)
{
    __shared__ float s[32][33];
    const int64_t k0 = int64_t(blockIdx.x) * 32, r0 = int64_t(blockIdx.y) * 32;
    load_tile(s, X, rs, ks, R, K, r0, k0);
    __syncthreads();
    const int kk = threadIdx.x;
    const int e = (k0 + kk < K) ? sign * ebal[k0 + kk] : 0;
    const size_t plane = size_t(Rp) * size_t(Kp);
OZ_UNROLL
    for (int j = 0; j < 4; ++j) {
        const int r = threadIdx.y + 8 * j;
        const int64_t gr = r0 + r;
        if (gr >= Rp) continue;
        const int m = gr < R ? mu[gr] : 0;
        const float x = ldexpf(s[kk][r], e);  // 0 outside the matrix
        int res[N];
        residues<N>(x, m, res);
        int8_t *o = out + size_t(gr) * size_t(Kp) + size_t(k0 + kk);
OZ_UNROLL
        for (int l = 0; l < N; ++l) o[l * plane] = int8_t(res[l]);
    }
}

// --- INT8 GEMM per modulus ----------------------------------------------
constexpr int BM = 128, BN = 128, BK = 64, STAGES = 4, THREADS = 256;
constexpr int LDS = BK + 16;                    // smem row pitch in bytes (80: no bank conflicts)
constexpr int STAGE_BYTES = (BM + BN) * LDS;    // 20480
constexpr int SMEM_BYTES = STAGES * STAGE_BYTES;  // 81920
// int32 K block: after a reduction |acc| <= 128; 2047 tiles of 64 add at
// most 2047*64*128^2 = 2146435072, + 128 < 2^31.
constexpr int KBLOCK_TILES = 2047;

__device__ __forceinline__ unsigned smem_u32(const void *p)
{
    return unsigned(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void cp_async16(unsigned dst, const void *src)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int n>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(n)); }

#ifndef OZ_NO_LDMATRIX
__device__ __forceinline__ void ldsm_x4(unsigned (&r)[4], unsigned addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}
#endif

// D = A B + D, A 16x32 row (4 x b32), B 32x8 col (2 x b32), D 16x8 s32.
// Fragments (PTX ISA, g = lane/4, t = lane%4):
//   a0 = A[g][4t..4t+3], a1 = A[g+8][4t..], a2 = A[g][16+4t..], a3 = A[g+8][16+4t..]
//   b0 = B[4t..4t+3][g], b1 = B[16+4t..][g]
//   d0 = D[g][2t], d1 = D[g][2t+1], d2 = D[g+8][2t], d3 = D[g+8][2t+1]
__device__ __forceinline__ void mma_s8(int (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1)
{
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

template <int Q>
__device__ __forceinline__ void store_residues(const int (&acc)[4][4][4], int8_t *__restrict__ Rc,
                                               int64_t Mp, int64_t row0, int64_t col0, int g, int t)
{
OZ_UNROLL
    for (int mi = 0; mi < 4; ++mi)
OZ_UNROLL
        for (int ni = 0; ni < 4; ++ni)
OZ_UNROLL
            for (int c = 0; c < 4; ++c) {
                const int64_t row = row0 + mi * 16 + g + (c >> 1) * 8;
                const int64_t col = col0 + ni * 8 + 2 * t + (c & 1);
                Rc[col * Mp + row] = int8_t(symq<Q>(acc[mi][ni][c]));
            }
}

// One modulus per blockIdx.z. Ra: Mp x Kp, Rb: Np x Kp (K-contiguous int8),
// Rc: Mp x Np column-major int8 residues. Mp, Np multiples of 128, Kp of 64.
__global__ void __launch_bounds__(THREADS)
gemm_mod_kernel(const int8_t *__restrict__ Ra, const int8_t *__restrict__ Rb,
                int8_t *__restrict__ Rc, int64_t Mp, int64_t Np, int64_t Kp)
{
    extern __shared__ __align__(128) unsigned char smem[];
    const int l = blockIdx.z;
    const int8_t *A = Ra + size_t(l) * size_t(Mp) * size_t(Kp);
    const int8_t *B = Rb + size_t(l) * size_t(Np) * size_t(Kp);
    int8_t *Cr = Rc + size_t(l) * size_t(Mp) * size_t(Np);
    const int64_t m0 = int64_t(blockIdx.y) * BM, n0 = int64_t(blockIdx.x) * BN;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp >> 2, wn = warp & 3;  // 2 x 4 warps, 64 x 32 each
    const int KT = int(Kp / BK);

    auto load_stage = [&](int stage, int kt) {
        unsigned char *sa = smem + stage * STAGE_BYTES;
        unsigned char *sb = sa + BM * LDS;
OZ_UNROLL
        for (int c = tid; c < BM * BK / 16; c += THREADS) {
            const int r = c >> 2, cc = (c & 3) * 16;
            cp_async16(smem_u32(sa + r * LDS + cc), A + (m0 + r) * Kp + int64_t(kt) * BK + cc);
        }
OZ_UNROLL
        for (int c = tid; c < BN * BK / 16; c += THREADS) {
            const int r = c >> 2, cc = (c & 3) * 16;
            cp_async16(smem_u32(sb + r * LDS + cc), B + (n0 + r) * Kp + int64_t(kt) * BK + cc);
        }
    };

    int acc[4][4][4];
OZ_UNROLL
    for (int mi = 0; mi < 4; ++mi)
OZ_UNROLL
        for (int ni = 0; ni < 4; ++ni)
OZ_UNROLL
            for (int c = 0; c < 4; ++c) acc[mi][ni][c] = 0;

OZ_UNROLL
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < KT) load_stage(s, s);
        cp_async_commit();
    }
    int kb = 0;
    for (int kt = 0; kt < KT; ++kt) {
        cp_async_wait<STAGES - 2>();
        __syncthreads();
        {
            const int nk = kt + STAGES - 1;
            if (nk < KT) load_stage(nk % STAGES, nk);
            cp_async_commit();
        }
        const unsigned char *sa = smem + (kt % STAGES) * STAGE_BYTES;
        const unsigned char *sb = sa + BM * LDS;
OZ_UNROLL
        for (int ks = 0; ks < BK / 32; ++ks) {
            unsigned af[4][4], bf[4][2];
#ifndef OZ_NO_LDMATRIX
OZ_UNROLL
            for (int mi = 0; mi < 4; ++mi) {
                const int r = wm * 64 + mi * 16 + (lane & 15);
                const int cb = ks * 32 + (lane >> 4) * 16;
                ldsm_x4(af[mi], smem_u32(sa + r * LDS + cb));
            }
OZ_UNROLL
            for (int np = 0; np < 2; ++np) {
                const int r = wn * 32 + np * 16 + (lane & 7) + ((lane >> 4) << 3);
                const int cb = ks * 32 + ((lane >> 3) & 1) * 16;
                unsigned x[4];
                ldsm_x4(x, smem_u32(sb + r * LDS + cb));
                bf[2 * np][0] = x[0]; bf[2 * np][1] = x[1];
                bf[2 * np + 1][0] = x[2]; bf[2 * np + 1][1] = x[3];
            }
#else
            {  // plain 32-bit shared loads, straight from the fragment table
                const int g = lane >> 2, t = lane & 3;
OZ_UNROLL
                for (int mi = 0; mi < 4; ++mi) {
                    const unsigned char *p = sa + (wm * 64 + mi * 16 + g) * LDS + ks * 32 + 4 * t;
                    af[mi][0] = *reinterpret_cast<const unsigned *>(p);
                    af[mi][1] = *reinterpret_cast<const unsigned *>(p + 8 * LDS);
                    af[mi][2] = *reinterpret_cast<const unsigned *>(p + 16);
                    af[mi][3] = *reinterpret_cast<const unsigned *>(p + 8 * LDS + 16);
                }
OZ_UNROLL
                for (int ni = 0; ni < 4; ++ni) {
                    const unsigned char *p = sb + (wn * 32 + ni * 8 + g) * LDS + ks * 32 + 4 * t;
                    bf[ni][0] = *reinterpret_cast<const unsigned *>(p);
                    bf[ni][1] = *reinterpret_cast<const unsigned *>(p + 16);
                }
            }
#endif
OZ_UNROLL
            for (int mi = 0; mi < 4; ++mi)
OZ_UNROLL
                for (int ni = 0; ni < 4; ++ni) mma_s8(acc[mi][ni], af[mi], bf[ni][0], bf[ni][1]);
        }
        if (++kb == KBLOCK_TILES) {  // int32 K block ends: reduce to the residue (exact)
            kb = 0;
            const int qq = kmod(l);
OZ_UNROLL
            for (int mi = 0; mi < 4; ++mi)
OZ_UNROLL
                for (int ni = 0; ni < 4; ++ni)
OZ_UNROLL
                    for (int c = 0; c < 4; ++c) acc[mi][ni][c] = sym_rt(acc[mi][ni][c], qq);
        }
    }
    cp_async_wait<0>();

    const int g = lane >> 2, t = lane & 3;
    const int64_t row0 = m0 + wm * 64, col0 = n0 + wn * 32;
    switch (l) {
    case 0: store_residues<kmod(0)>(acc, Cr, Mp, row0, col0, g, t); break;
    case 1: store_residues<kmod(1)>(acc, Cr, Mp, row0, col0, g, t); break;
    case 2: store_residues<kmod(2)>(acc, Cr, Mp, row0, col0, g, t); break;
    case 3: store_residues<kmod(3)>(acc, Cr, Mp, row0, col0, g, t); break;
    case 4: store_residues<kmod(4)>(acc, Cr, Mp, row0, col0, g, t); break;
    case 5: store_residues<kmod(5)>(acc, Cr, Mp, row0, col0, g, t); break;
    case 6: store_residues<kmod(6)>(acc, Cr, Mp, row0, col0, g, t); break;
    case 7: store_residues<kmod(7)>(acc, Cr, Mp, row0, col0, g, t); break;
    case 8: store_residues<kmod(8)>(acc, Cr, Mp, row0, col0, g, t); break;
    case 9: store_residues<kmod(9)>(acc, Cr, Mp, row0, col0, g, t); break;
    case 10: store_residues<kmod(10)>(acc, Cr, Mp, row0, col0, g, t); break;
    case 11: store_residues<kmod(11)>(acc, Cr, Mp, row0, col0, g, t); break;
    case 12: store_residues<kmod(12)>(acc, Cr, Mp, row0, col0, g, t); break;
    default: store_residues<kmod(13)>(acc, Cr, Mp, row0, col0, g, t); break;
    }
}

#include "igemm_wgmma.cuh"

// Which INT8 GEMM runs step 4 (--gemm): the wgmma kernel or the mma.sync one.
bool g_gemm_mma = false;

// --- Garner CRT + unscale + alpha/beta ------------------------------------
// r: the N residues of element ij; e = mu_i + nu_j; c: C's old value.
template <int N>
OZ_HD float crt_element(const int (&r)[N], int e, float alpha, float beta, float c,
                        const int (*inv)[kMaxN])
{
    int v[N];
OZ_UNROLL
    for (int l = 0; l < N; ++l) {
        int tt = r[l];
OZ_UNROLL
        for (int s = 0; s < l; ++s) tt = sym_rt((tt - v[s]) * inv[l][s], kmod(l));
        v[l] = tt;
    }
    double x = double(v[N - 1]);
OZ_UNROLL
    for (int l = N - 2; l >= 0; --l) x = fma_d(x, double(kmod(l)), double(v[l]));
    const float rf = float(ldexp(x, -e));  // round to nearest (cvt.rn.f32.f64)
    const float out = alpha * rf;
    return beta != 0.0f ? fma_f(beta, c, out) : out;
}

template <int N>
__global__ void crt_kernel(const int8_t *__restrict__ Rc, int64_t Mp, int64_t Np, int64_t m,
                           int64_t n, const int *__restrict__ mu, const int *__restrict__ nu,
                           float alpha, float beta, float *__restrict__ C, int64_t ldc)
{
    const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const int64_t j = blockIdx.y;
    if (i >= m || j >= n) return;
    const size_t plane = size_t(Mp) * size_t(Np);
    const size_t off = size_t(j) * size_t(Mp) + size_t(i);
    int r[N];
OZ_UNROLL
    for (int l = 0; l < N; ++l) r[l] = Rc[l * plane + off];
    float &c = C[j * ldc + i];
    c = crt_element<N>(r, mu[i] + nu[j], alpha, beta, c, c_inv);
}

// alpha == 0 or k == 0: C := beta C (the model and the strict path).
__global__ void scale_kernel(int64_t m, int64_t n, float beta, float *__restrict__ C, int64_t ldc)
{
    const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const int64_t j = blockIdx.y;
    if (i >= m || j >= n) return;
    float &c = C[j * ldc + i];
    c = beta == 0.0f ? 0.0f : __fmul_rn(beta, c);
}

// --- host side ----------------------------------------------------------
int64_t round_up(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

struct Plan {
    int64_t m = 0, n = 0, k = 0, Mp = 0, Np = 0, Kp = 0;
    int N = 0;
    unsigned *camax = nullptr, *rbmax = nullptr;
    int *ebal = nullptr, *mu = nullptr, *nu = nullptr;
    int8_t *Ra = nullptr, *Rb = nullptr, *Rc = nullptr;
};

Plan make_plan(int64_t m, int64_t n, int64_t k, int N)
{
    Plan p;
    p.m = m; p.n = n; p.k = k; p.N = N;
    // Padded for both GEMM kernels (wg:: tiles are multiples of the mma.sync ones).
    p.Mp = round_up(std::max<int64_t>(m, 1), wg::BM);
    p.Np = round_up(std::max<int64_t>(n, 1), wg::BN);
    p.Kp = round_up(std::max<int64_t>(k, 1), wg::BK);
    const int64_t kk = std::max<int64_t>(k, 1);
    CK(cudaMalloc(&p.camax, kk * sizeof(unsigned)));
    CK(cudaMalloc(&p.rbmax, kk * sizeof(unsigned)));
    CK(cudaMalloc(&p.ebal, kk * sizeof(int)));
    CK(cudaMalloc(&p.mu, p.Mp * sizeof(int)));
    CK(cudaMalloc(&p.nu, p.Np * sizeof(int)));
    CK(cudaMalloc(&p.Ra, size_t(N) * p.Mp * p.Kp));
    CK(cudaMalloc(&p.Rb, size_t(N) * p.Np * p.Kp));
    CK(cudaMalloc(&p.Rc, size_t(N) * p.Mp * p.Np));
    return p;
}

void free_plan(Plan &p)
{
    cudaFree(p.camax); cudaFree(p.rbmax); cudaFree(p.ebal); cudaFree(p.mu); cudaFree(p.nu);
    cudaFree(p.Ra); cudaFree(p.Rb); cudaFree(p.Rc);
    p = Plan();
}

template <int N>
void launch_convert(dim3 grid, const float *X, int64_t rs, int64_t ks, int64_t R, int64_t K,
                    int64_t Rp, int64_t Kp, const int *e, int sign, const int *mu, int8_t *out)
{
    convert_kernel<N><<<grid, dim3(32, 8)>>>(X, rs, ks, R, K, Rp, Kp, e, sign, mu, out);
}
template <int N>
void launch_crt(const Plan &p, float alpha, float beta, float *C, int64_t ldc)
{
    dim3 grid(unsigned((p.m + 255) / 256), unsigned(p.n));
    crt_kernel<N><<<grid, 256>>>(p.Rc, p.Mp, p.Np, p.m, p.n, p.mu, p.nu, alpha, beta, C, ldc);
}

#define OZ_DISPATCH(N, F, ...)                                      \
    switch (N) {                                                    \
    case 2: F<2>(__VA_ARGS__); break;   case 3: F<3>(__VA_ARGS__); break;   \
    case 4: F<4>(__VA_ARGS__); break;   case 5: F<5>(__VA_ARGS__); break;   \
    case 6: F<6>(__VA_ARGS__); break;   case 7: F<7>(__VA_ARGS__); break;   \
    case 8: F<8>(__VA_ARGS__); break;   case 9: F<9>(__VA_ARGS__); break;   \
    case 10: F<10>(__VA_ARGS__); break; case 11: F<11>(__VA_ARGS__); break; \
    case 12: F<12>(__VA_ARGS__); break; case 13: F<13>(__VA_ARGS__); break; \
    default: F<14>(__VA_ARGS__); break;                             \
    }

// The whole pipeline; ev (5 events, may be null) mark: start, scaling done,
// conversion done, GEMMs done, CRT done.
void ozaki2_gpu(Plan &p, bool ta, bool tb, float alpha, const float *A, int64_t lda,
                const float *B, int64_t ldb, float beta, float *C, int64_t ldc, double T,
                cudaEvent_t *ev)
{
    const int64_t m = p.m, n = p.n, k = p.k;
    auto rec = [&](int t) { if (ev) CK(cudaEventRecord(ev[t])); };
    rec(0);
    if (alpha == 0.0f || k == 0) {
        if (m > 0 && n > 0)
            scale_kernel<<<dim3(unsigned((m + 255) / 256), unsigned(n)), 256>>>(m, n, beta, C, ldc);
        for (int t = 1; t < 5; ++t) rec(t);
        return;
    }
    // op(A)(i, kk): A[i + kk lda] or A[kk + i lda]; op(B)(kk, j) as row j of
    // a "rows of K" operand: B[kk + j ldb] or B[j + kk ldb].
    const int64_t ars = ta ? lda : 1, aks = ta ? 1 : lda;
    const int64_t brs = tb ? 1 : ldb, bks = tb ? ldb : 1;
    CK(cudaMemsetAsync(p.camax, 0, k * sizeof(unsigned)));
    CK(cudaMemsetAsync(p.rbmax, 0, k * sizeof(unsigned)));
    const unsigned kt32 = unsigned((k + 31) / 32);
    kmax_kernel<<<dim3(kt32, unsigned((m + 31) / 32)), dim3(32, 8)>>>(A, ars, aks, m, k, p.camax);
    kmax_kernel<<<dim3(kt32, unsigned((n + 31) / 32)), dim3(32, 8)>>>(B, brs, bks, n, k, p.rbmax);
    ebal_kernel<<<unsigned((k + 255) / 256), 256>>>(p.camax, p.rbmax, k, p.ebal);
    norm_kernel<<<unsigned((m + 31) / 32), dim3(32, 8)>>>(A, ars, aks, m, k, p.ebal, +1, T, p.mu);
    norm_kernel<<<unsigned((n + 31) / 32), dim3(32, 8)>>>(B, brs, bks, n, k, p.ebal, -1, T, p.nu);
    CK(cudaGetLastError());
    rec(1);
    const unsigned kp32 = unsigned(p.Kp / 32);
    OZ_DISPATCH(p.N, launch_convert, dim3(kp32, unsigned(p.Mp / 32)), A, ars, aks, m, k, p.Mp,
                p.Kp, p.ebal, +1, p.mu, p.Ra);
    OZ_DISPATCH(p.N, launch_convert, dim3(kp32, unsigned(p.Np / 32)), B, brs, bks, n, k, p.Np,
                p.Kp, p.ebal, -1, p.nu, p.Rb);
    CK(cudaGetLastError());
    rec(2);
    if (g_gemm_mma)
        gemm_mod_kernel<<<dim3(unsigned(p.Np / BN), unsigned(p.Mp / BM), unsigned(p.N)), THREADS,
                          SMEM_BYTES>>>(p.Ra, p.Rb, p.Rc, p.Mp, p.Np, p.Kp);
    else
        wg::launch(p.Ra, p.Rb, p.Rc, p.Mp, p.Np, p.Kp, p.N);
    CK(cudaGetLastError());
    rec(3);
    OZ_DISPATCH(p.N, launch_crt, p, alpha, beta, C, ldc);
    CK(cudaGetLastError());
    rec(4);
}

// --- test driver --------------------------------------------------------
struct Case {
    std::string name;
    int64_t m, n, k;
    bool ta = false, tb = false;
    int64_t pad_a = 0, pad_b = 0, pad_c = 0;  // ld = rows + pad
    int kind = 0;  // 0 plain, 2 subnormal A x2^-135 / B x2^100, 6 k-scaled, 7 alpha/beta with C0
    float alpha = 1.0f, beta = 0.0f;
};

const float kPadVal = std::numeric_limits<float>::quiet_NaN();

// op(A) as m rows of k (the model's A), op(B) as n columns of k (the model's B).
struct Host {
    int64_t lda, ldb, ldc;
    vector<float> A, B, C0;   // stored as the GPU sees them (column-major, ld)
    vector<float> Am, Bm;     // model layout
};

Host make_inputs(const Case &cs, double phi, uint64_t seed)
{
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::normal_distribution<double> g(0.0, 1.0);
    auto gen = [&] { return float((u(rng) - 0.5) * std::exp(phi * g(rng))); };
    const int64_t m = cs.m, n = cs.n, k = cs.k;
    Host h;
    h.Am.resize(m * k); h.Bm.resize(n * k);
    for (auto &v : h.Am) v = gen();
    for (auto &v : h.Bm) v = gen();
    if (cs.kind == 2) {
        for (auto &v : h.Am) v = std::ldexp(v, -135);
        for (auto &v : h.Bm) v = std::ldexp(v, 100);
    } else if (cs.kind == 6) {
        std::uniform_int_distribution<int> sc(-20, 20);
        for (int64_t t = 0; t < k; ++t) {
            int e = sc(rng);
            for (int64_t i = 0; i < m; ++i) h.Am[i * k + t] = std::ldexp(h.Am[i * k + t], e);
            for (int64_t j = 0; j < n; ++j) h.Bm[j * k + t] = std::ldexp(h.Bm[j * k + t], -e);
        }
    }
    // GPU storage: op(A) = A (m x k, lda >= m) or A^T (A is k x m, lda >= k).
    const int64_t ar = cs.ta ? k : m, ac = cs.ta ? m : k;
    const int64_t br = cs.tb ? n : k, bc = cs.tb ? k : n;
    h.lda = ar + cs.pad_a; h.ldb = br + cs.pad_b; h.ldc = m + cs.pad_c;
    h.A.assign(h.lda * ac, kPadVal);
    h.B.assign(h.ldb * bc, kPadVal);
    for (int64_t i = 0; i < m; ++i)
        for (int64_t t = 0; t < k; ++t)
            h.A[cs.ta ? t + i * h.lda : i + t * h.lda] = h.Am[i * k + t];
    for (int64_t j = 0; j < n; ++j)
        for (int64_t t = 0; t < k; ++t)
            h.B[cs.tb ? j + t * h.ldb : t + j * h.ldb] = h.Bm[j * k + t];
    h.C0.assign(h.ldc * n, kPadVal);
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < m; ++i) h.C0[i + j * h.ldc] = cs.kind == 7 ? float(g(rng) * 16.0) : 0.0f;
    return h;
}

template <class F>
void parallel_for(int64_t n, F f)
{
    int T = std::max(1u, std::thread::hardware_concurrency());
    vector<std::thread> pool;
    for (int t = 0; t < T; ++t)
        pool.emplace_back([=] { for (int64_t i = t; i < n; i += T) f(i); });
    for (auto &th : pool) th.join();
}

// FP64 errors over the columns in cols: max |C - C64| / (|alpha||A||B| + |beta||C0|)
// and ||C - C64||_F / ||C64||_F.
void fp64_errors(const Case &cs, const Host &h, const vector<float> &C, const vector<int64_t> &cols,
                 double &maxrel, double &normwise)
{
    const int64_t m = cs.m, k = cs.k;
    vector<double> mx(cols.size(), 0), num(cols.size(), 0), den(cols.size(), 0);
    parallel_for(int64_t(cols.size()), [&](int64_t c) {
        const int64_t j = cols[c];
        const float *b = &h.Bm[j * k];
        for (int64_t i = 0; i < m; ++i) {
            const float *a = &h.Am[i * k];
            double s = 0, sa = 0;
            for (int64_t t = 0; t < k; ++t) {
                double pr = double(a[t]) * double(b[t]);
                s += pr; sa += std::fabs(pr);
            }
            const double c0 = h.C0[i + j * h.ldc];
            const double ref = double(cs.alpha) * s + double(cs.beta) * c0;
            const double d = std::fabs(double(cs.alpha)) * sa + std::fabs(double(cs.beta)) * std::fabs(c0);
            const float cv = C[i + j * h.ldc];
            double e = std::isfinite(cv) ? std::fabs(double(cv) - ref) : INFINITY;
            if (e > 0) mx[c] = std::max(mx[c], d > 0 ? e / d : INFINITY);
            num[c] += e * e; den[c] += ref * ref;
        }
    });
    maxrel = 0; double nn = 0, dd = 0;
    for (size_t c = 0; c < cols.size(); ++c) { maxrel = std::max(maxrel, mx[c]); nn += num[c]; dd += den[c]; }
    normwise = dd > 0 ? std::sqrt(nn / dd) : (nn > 0 ? INFINITY : 0);
}

// Host re-computation of a few residues of the GPU's own Ra/Rb/Rc, to tell a
// GEMM (fragment layout) error from a conversion error when C mismatches.
int check_gemm_residues(const Plan &p, int64_t m, int64_t n, uint64_t seed)
{
    const size_t pa = size_t(p.Mp) * p.Kp, pb = size_t(p.Np) * p.Kp, pc = size_t(p.Mp) * p.Np;
    vector<int8_t> Ra(p.N * pa), Rb(p.N * pb), Rc(p.N * pc);
    CK(cudaMemcpy(Ra.data(), p.Ra, Ra.size(), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(Rb.data(), p.Rb, Rb.size(), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(Rc.data(), p.Rc, Rc.size(), cudaMemcpyDeviceToHost));
    std::mt19937_64 rng(seed);
    int bad = 0, shown = 0;
    for (int s = 0; s < 256; ++s) {
        const int64_t i = s < 4 ? (s & 1) * (m - 1) : int64_t(rng() % m);
        const int64_t j = s < 4 ? (s >> 1) * (n - 1) : int64_t(rng() % n);
        for (int l = 0; l < p.N; ++l) {
            const int q = kmod(l);
            int64_t acc = 0;
            for (int64_t t = 0; t < p.Kp; ++t)
                acc += int64_t(Ra[l * pa + i * p.Kp + t]) * Rb[l * pb + j * p.Kp + t];
            int r = int(acc % q); if (r < 0) r += q; if (2 * r >= q) r -= q;
            const int got = Rc[l * pc + j * p.Mp + i];
            if (got != r) {
                ++bad;
                if (shown++ < 5)
                    std::printf("    GEMM residue mismatch l=%d (p=%d) i=%" PRId64 " j=%" PRId64
                                ": gpu %d host %d\n", l, q, i, j, got, r);
            }
        }
    }
    return bad;
}

void make_inv(int (&inv)[kMaxN][kMaxN])
{
    std::memset(inv, 0, sizeof(inv));
    for (int l = 1; l < kMaxN; ++l)
        for (int s = 0; s < l; ++s) {
            const int x = kmod(s) % kmod(l);
            for (int y = 1; y < kmod(l); ++y)
                if (x * y % kmod(l) == 1) { inv[l][s] = y; break; }
        }
}

vector<float> model_C(const Case &cs, const Host &h, int N, oz2::Info &info)
{
    const int64_t m = cs.m, n = cs.n, k = cs.k;
    vector<float> Ab, Bb;
    oz2::balance_k(m, n, k, h.Am.data(), h.Bm.data(), Ab, Bb);
    oz2::Params prm;
    prm.nmod = N; prm.scaling = oz2::Scaling::FastCS;
    prm.threads = int(std::max(1u, std::thread::hardware_concurrency()));
    vector<float> Cm(m * n);
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) Cm[i * n + j] = h.C0[i + j * h.ldc];
    oz2::gemm(m, n, k, cs.alpha, Ab.data(), Bb.data(), cs.beta, Cm.data(), prm, &info);
    return Cm;
}

struct Times { double scale = 0, conv = 0, gemm = 0, crt = 0, total = 0; };

// cuBLAS in the same process, for the ratios (--time): SGEMM on the same
// operands in both strict FP32 math modes (the faster counts), and the INT8
// GEMM (int32 out, TN: the only INT8 form) on one modulus's residue planes,
// run N times. Mean ms of `reps` calls after a warm-up.
struct CublasTimes { double sgemm = 0, sgemm_default = 0, sgemm_pedantic = 0, int8 = 0; };

template <class F>
double time_mean(int reps, F &&f)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    f();
    CK(cudaEventRecord(a));
    for (int r = 0; r < reps; ++r) f();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    cudaEventDestroy(a); cudaEventDestroy(b);
    return double(ms) / reps;
}

#define CB(x) do { cublasStatus_t s_ = (x); if (s_ != CUBLAS_STATUS_SUCCESS) { std::fprintf(stderr, "%s:%d: cuBLAS %d\n", __FILE__, __LINE__, int(s_)); std::exit(2); } } while (0)

// Also leaves in Cs the SGEMM result of C := alpha op(A) op(B) + beta C0 in
// the faster mode (for its FP64 errors beside the mode's).
CublasTimes time_cublas(const Plan &p, bool ta, bool tb, float alpha, const float *A, int64_t lda, const float *B,
                        int64_t ldb, float beta, const vector<float> &C0, int64_t ldc, int reps, vector<float> &Cs)
{
    CublasTimes t;
    cublasHandle_t h;
    CB(cublasCreate(&h));
    float *C2 = nullptr;
    CK(cudaMalloc(&C2, size_t(ldc) * size_t(p.n) * 4));
    const float one = 1.0f, zero = 0.0f;
    auto sg = [&] {
        CB(cublasSgemm(h, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, int(p.m), int(p.n), int(p.k),
                       &one, A, int(lda), B, int(ldb), &zero, C2, int(ldc)));
    };
    CB(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
    t.sgemm_default = time_mean(reps, sg);
    CB(cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH));
    t.sgemm_pedantic = time_mean(reps, sg);
    t.sgemm = std::min(t.sgemm_default, t.sgemm_pedantic);
    CB(cublasSetMathMode(h, t.sgemm_pedantic < t.sgemm_default ? CUBLAS_PEDANTIC_MATH : CUBLAS_DEFAULT_MATH));
    CK(cudaMemcpy(C2, C0.data(), C0.size() * 4, cudaMemcpyHostToDevice));
    CB(cublasSgemm(h, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, int(p.m), int(p.n), int(p.k),
                   &alpha, A, int(lda), B, int(ldb), &beta, C2, int(ldc)));
    Cs.resize(C0.size());
    CK(cudaMemcpy(Cs.data(), C2, Cs.size() * 4, cudaMemcpyDeviceToHost));
    CB(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
    int32_t *C32 = nullptr;
    CK(cudaMalloc(&C32, size_t(p.Mp) * size_t(p.Np) * 4));
    const int32_t ione = 1, izero = 0;
    auto ig = [&] {
        for (int l = 0; l < p.N; ++l)
            CB(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, int(p.Mp), int(p.Np), int(p.Kp), &ione,
                            p.Ra + size_t(l) * p.Mp * p.Kp, CUDA_R_8I, int(p.Kp), p.Rb + size_t(l) * p.Np * p.Kp,
                            CUDA_R_8I, int(p.Kp), &izero, C32, CUDA_R_32I, int(p.Mp), CUBLAS_COMPUTE_32I,
                            CUBLAS_GEMM_DEFAULT));
    };
    t.int8 = time_mean(reps, ig);
    cudaFree(C32); cudaFree(C2);
    cublasDestroy(h);
    return t;
}

bool run_case(const Case &cs, int N, double phi, uint64_t seed, bool model, Times *tm, int reps)
{
    Host h = make_inputs(cs, phi, seed);
    const int64_t m = cs.m, n = cs.n, k = cs.k;
    std::printf("case %s: %" PRId64 "x%" PRId64 "x%" PRId64 " op=%c%c lda=%" PRId64 " ldb=%" PRId64
                " ldc=%" PRId64 " N=%d phi=%g alpha=%.9g beta=%.9g seed=%" PRIu64 "\n",
                cs.name.c_str(), m, n, k, cs.ta ? 'T' : 'N', cs.tb ? 'T' : 'N', h.lda, h.ldb, h.ldc,
                N, phi, cs.alpha, cs.beta, seed);
    float *dA, *dB, *dC;
    CK(cudaMalloc(&dA, h.A.size() * 4)); CK(cudaMalloc(&dB, h.B.size() * 4));
    CK(cudaMalloc(&dC, h.C0.size() * 4));
    CK(cudaMemcpy(dA, h.A.data(), h.A.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dB, h.B.data(), h.B.size() * 4, cudaMemcpyHostToDevice));
    Plan p = make_plan(m, n, k, N);
    const double T = oz2::log2_T(N);
    cudaEvent_t ev[5];
    for (auto &e : ev) CK(cudaEventCreate(&e));
    vector<float> C(h.C0.size());
    Times acc;
    const int total = tm ? reps + 1 : 1;  // first run is a warm-up when timing
    for (int r = 0; r < total; ++r) {
        CK(cudaMemcpy(dC, h.C0.data(), h.C0.size() * 4, cudaMemcpyHostToDevice));
        ozaki2_gpu(p, cs.ta, cs.tb, cs.alpha, dA, h.lda, dB, h.ldb, cs.beta, dC, h.ldc, T, ev);
        CK(cudaEventSynchronize(ev[4]));
        float t[4], tt;
        for (int s = 0; s < 4; ++s) CK(cudaEventElapsedTime(&t[s], ev[s], ev[s + 1]));
        CK(cudaEventElapsedTime(&tt, ev[0], ev[4]));
        if (r > 0 || !tm) {
            acc.scale += t[0]; acc.conv += t[1]; acc.gemm += t[2]; acc.crt += t[3]; acc.total += tt;
        }
    }
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(C.data(), dC, C.size() * 4, cudaMemcpyDeviceToHost));
    bool ok = true;

    // C's padding rows must be untouched.
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = m; i < h.ldc; ++i)
            if (!std::isnan(C[i + j * h.ldc])) { ok = false; }
    if (!ok) std::printf("  FAIL: C padding written\n");

    if (model) {
        oz2::Info info;
        vector<float> Cm = model_C(cs, h, N, info);
        // Exponents (diagnostic: a differing mu/nu explains a differing row/column).
        vector<int> mu(m), nu(n);
        if (k > 0 && cs.alpha != 0.0f) {
            CK(cudaMemcpy(mu.data(), p.mu, m * 4, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(nu.data(), p.nu, n * 4, cudaMemcpyDeviceToHost));
            int dmu = 0, dnu = 0;
            for (int64_t i = 0; i < m; ++i) dmu += mu[i] != info.mu[i];
            for (int64_t j = 0; j < n; ++j) dnu += nu[j] != info.nu[j];
            std::printf("  exponents: mu differ in %d of %" PRId64 " rows, nu in %d of %" PRId64
                        " columns (mu[0]=%d model %d)\n", dmu, m, dnu, n, mu[0], info.mu[0]);
            if (dmu || dnu) ok = false;
        }
        int64_t diff = 0; int shown = 0;
        for (int64_t j = 0; j < n; ++j)
            for (int64_t i = 0; i < m; ++i) {
                const float g = C[i + j * h.ldc], c = Cm[i * n + j];
                uint32_t gb, cb;
                std::memcpy(&gb, &g, 4); std::memcpy(&cb, &c, 4);
                if (gb != cb) {
                    if (shown++ < 5)
                        std::printf("    C(%" PRId64 ",%" PRId64 "): gpu %.9g (0x%08x) model %.9g (0x%08x)\n",
                                    i, j, g, gb, c, cb);
                    ++diff;
                }
            }
        std::printf("  bitwise vs CPU model: %" PRId64 " of %" PRId64 " elements differ\n", diff, m * n);
        if (diff) ok = false;
    }
    if (!ok || !model) {
        if (k > 0 && cs.alpha != 0.0f) {
            int bad = check_gemm_residues(p, m, n, seed ^ 0x9e3779b97f4a7c15ull);
            std::printf("  GEMM residues (256 sampled elements x N moduli, host int dot of the GPU's Ra/Rb): %d differ\n", bad);
            if (bad) ok = false;
        }
    }
    // FP64: all columns for small problems, a sample for large ones.
    vector<int64_t> cols;
    if (m * n * k <= (int64_t(1) << 31)) for (int64_t j = 0; j < n; ++j) cols.push_back(j);
    else { std::mt19937_64 r2(seed + 1); for (int c = 0; c < 48; ++c) cols.push_back(int64_t(r2() % n)); }
    double mr, nw;
    fp64_errors(cs, h, C, cols, mr, nw);
    std::printf("  vs FP64 (%zu of %" PRId64 " columns): max |C-C64|/(|a||A||B|+|b||C0|) = %.2e, normwise = %.2e\n",
                cols.size(), n, mr, nw);
    if (tm) {
        const double d = double(reps);
        tm->scale = acc.scale / d; tm->conv = acc.conv / d; tm->gemm = acc.gemm / d;
        tm->crt = acc.crt / d; tm->total = acc.total / d;
        const double flop = 2.0 * double(m) * double(n) * double(k);
        std::printf("  time (ms, mean of %d after a warm-up): scaling %.3f, conversion %.3f, GEMMs %.3f "
                    "(%.1f TOPS int8 over %d moduli), CRT %.3f, total %.3f -> %.1f TFLOP/s (2mnk/total)\n",
                    reps, tm->scale, tm->conv, tm->gemm, double(N) * flop / (tm->gemm * 1e-3) * 1e-12, N,
                    tm->crt, tm->total, flop / (tm->total * 1e-3) * 1e-12);
        vector<float> Cs;
        const CublasTimes cb =
            time_cublas(p, cs.ta, cs.tb, cs.alpha, dA, h.lda, dB, h.ldb, cs.beta, h.C0, h.ldc, reps, Cs);
        double smr, snw;
        fp64_errors(cs, h, Cs, cols, smr, snw);
        std::printf("  cuBLAS SGEMM vs FP64 (same columns): max |C-C64|/(|a||A||B|+|b||C0|) = %.2e, normwise = %.2e\n",
                    smr, snw);
        const double pops = double(N) * 2.0 * double(p.Mp) * double(p.Np) * double(p.Kp);
        std::printf("  cuBLAS same run: SGEMM %.3f ms (%.1f TFLOP/s; default %.3f, pedantic %.3f) -> Ozaki-II %.2fx; "
                    "INT8 GEMM x%d %.3f ms (%.1f TOPS) -> our GEMMs %.2fx\n",
                    cb.sgemm, flop / (cb.sgemm * 1e-3) * 1e-12, cb.sgemm_default, cb.sgemm_pedantic, cb.sgemm / tm->total,
                    N, cb.int8, pops / (cb.int8 * 1e-3) * 1e-12, cb.int8 / tm->gemm);
    }
    std::printf("  %s\n", ok ? "OK" : "FAIL");
    for (auto &e : ev) cudaEventDestroy(e);
    free_plan(p);
    cudaFree(dA); cudaFree(dB); cudaFree(dC);
    return ok;
}

// Host emulation of the GPU pipeline with the kernels' element functions
// (ebal_value, mu_value, residues, crt_element) and the GPU's data layouts
// read through op(A)/op(B) strides; the INT8 GEMM is a plain int64 dot.
// Tests the arithmetic glue against the model without a GPU.
template <int N>
bool host_check_n(const Case &cs, const Host &h, double T)
{
    const int64_t m = cs.m, n = cs.n, k = cs.k;
    const int64_t ars = cs.ta ? h.lda : 1, aks = cs.ta ? 1 : h.lda;
    const int64_t brs = cs.tb ? 1 : h.ldb, bks = cs.tb ? h.ldb : 1;
    auto a = [&](int64_t i, int64_t t) { return h.A[i * ars + t * aks]; };
    auto b = [&](int64_t j, int64_t t) { return h.B[j * brs + t * bks]; };
    vector<float> C(h.C0);
    if (cs.alpha != 0.0f && k > 0) {
        vector<int> e(k), mu(m), nu(n);
        for (int64_t t = 0; t < k; ++t) {
            float ca = 0, rb = 0;
            for (int64_t i = 0; i < m; ++i) ca = std::max(ca, std::fabs(a(i, t)));
            for (int64_t j = 0; j < n; ++j) rb = std::max(rb, std::fabs(b(j, t)));
            e[t] = ebal_value(ca, rb);
        }
        for (int64_t i = 0; i < m; ++i) {
            double acc = 0;
            for (int64_t t = 0; t < k; ++t) { double d = std::ldexp(a(i, t), e[t]); acc = acc + d * d; }
            mu[i] = mu_value(acc, T);
        }
        for (int64_t j = 0; j < n; ++j) {
            double acc = 0;
            for (int64_t t = 0; t < k; ++t) { double d = std::ldexp(b(j, t), -e[t]); acc = acc + d * d; }
            nu[j] = mu_value(acc, T);
        }
        vector<int8_t> Ra(size_t(N) * m * k), Rb(size_t(N) * n * k);
        for (int64_t i = 0; i < m; ++i)
            for (int64_t t = 0; t < k; ++t) {
                int r[N]; residues<N>(std::ldexp(a(i, t), e[t]), mu[i], r);
                for (int l = 0; l < N; ++l) Ra[(l * m + i) * k + t] = int8_t(r[l]);
            }
        for (int64_t j = 0; j < n; ++j)
            for (int64_t t = 0; t < k; ++t) {
                int r[N]; residues<N>(std::ldexp(b(j, t), -e[t]), nu[j], r);
                for (int l = 0; l < N; ++l) Rb[(l * n + j) * k + t] = int8_t(r[l]);
            }
        int inv[kMaxN][kMaxN];
        make_inv(inv);
        parallel_for(n, [&](int64_t j) {
            for (int64_t i = 0; i < m; ++i) {
                int r[N];
                for (int l = 0; l < N; ++l) {
                    int32_t acc = 0;  // int32 as the GPU (no overflow: K < 131072)
                    const int8_t *pa = &Ra[(l * m + i) * k], *pb = &Rb[(l * n + j) * k];
                    for (int64_t t = 0; t < k; ++t) acc += int32_t(pa[t]) * int32_t(pb[t]);
                    r[l] = sym_rt(acc, kmod(l));
                }
                float &c = C[i + j * h.ldc];
                c = crt_element<N>(r, mu[i] + nu[j], cs.alpha, cs.beta, c, inv);
            }
        });
    } else {
        for (int64_t j = 0; j < n; ++j)
            for (int64_t i = 0; i < m; ++i) {
                float &c = C[i + j * h.ldc];
                c = cs.beta == 0.0f ? 0.0f : cs.beta * c;
            }
    }
    oz2::Info info;
    vector<float> Cm = model_C(cs, h, N, info);
    int64_t diff = 0;
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < m; ++i) {
            uint32_t x, y;
            std::memcpy(&x, &C[i + j * h.ldc], 4); std::memcpy(&y, &Cm[i * n + j], 4);
            if (x != y && diff++ < 5)
                std::printf("    C(%" PRId64 ",%" PRId64 "): emulation 0x%08x model 0x%08x\n", i, j, x, y);
        }
    std::printf("  host emulation vs CPU model: %" PRId64 " of %" PRId64 " elements differ\n", diff, m * n);
    return diff == 0;
}

template <int N>
void host_check_call(const Case &cs, const Host &h, double T, bool &ok) { ok = host_check_n<N>(cs, h, T); }

void usage()
{
    std::printf("usage: ozaki2_gpu [-N moduli(2..14, default 7)] [--phi P (default 0.5)] [--seed S]\n"
                "                  [--time] [--reps R] [--gemm wgmma|mma] [MxNxK ...]\n"
                "  without --time: bit-for-bit check against the CPU model (default cases, or the\n"
                "  sizes given) plus FP64 errors; exit 1 on any mismatch.\n"
                "  --time: time the pipeline (default 4096^3 and 8192^3, or the sizes given),\n"
                "  FP64 errors on sampled columns, GEMM residues checked on sampled elements.\n"
                "  --host-check: no GPU; emulate the pipeline on the CPU with the kernels'\n"
                "  element functions and compare with the model bit for bit.\n"
                "  --gemm: the INT8 GEMM kernel: wgmma (default; TMA, warp-specialized) or mma\n"
                "  (mma.sync, cp.async).\n");
}

}  // namespace

int main(int argc, char **argv)
{
    for (int l = 0; l < kMaxN; ++l)
        if (kmod(l) != oz2::kModuli[l]) { std::fprintf(stderr, "moduli table mismatch\n"); return 2; }
    int N = 7, reps = 5;
    double phi = 0.5;
    uint64_t seed = 20250101;
    bool timing = false, host_check = false;
    vector<Case> sizes;
    for (int a = 1; a < argc; ++a) {
        std::string s = argv[a];
        if (s == "-N" && a + 1 < argc) N = std::atoi(argv[++a]);
        else if (s == "--phi" && a + 1 < argc) phi = std::atof(argv[++a]);
        else if (s == "--seed" && a + 1 < argc) seed = std::strtoull(argv[++a], nullptr, 10);
        else if (s == "--reps" && a + 1 < argc) reps = std::max(1, std::atoi(argv[++a]));
        else if (s == "--time") timing = true;
        else if (s == "--gemm" && a + 1 < argc) g_gemm_mma = std::string(argv[++a]) == "mma";
        else if (s == "--host-check") host_check = true;
        else if (s == "-h" || s == "--help") { usage(); return 0; }
        else {
            long long m, n, k;
            if (std::sscanf(s.c_str(), "%lldx%lldx%lld", &m, &n, &k) != 3) { usage(); return 2; }
            Case c; c.name = "size"; c.m = m; c.n = n; c.k = k;
            sizes.push_back(c);
        }
    }
    if (N < 2 || N > kMaxN) { usage(); return 2; }
    vector<Case> defaults;
    {
        auto mk = [](const char *nm, int64_t m, int64_t n, int64_t k) {
            Case c; c.name = nm; c.m = m; c.n = n; c.k = k; return c;
        };
        defaults.push_back(mk("cube", 256, 256, 256));
        Case r = mk("rect+ld+alpha/beta", 512, 384, 1000);
        r.pad_a = 3; r.pad_b = 5; r.pad_c = 1; r.kind = 7; r.alpha = -1.2345678e-3f; r.beta = 3.3333333f;
        defaults.push_back(r);
        defaults.push_back(mk("cube", 1024, 1024, 1024));
        Case t = mk("transposed+edges", 200, 136, 300);
        t.ta = t.tb = true; t.pad_a = 2; t.pad_b = 1; t.pad_c = 3;
        defaults.push_back(t);
        Case ks = mk("k-scaled 2^[-20,20]", 256, 256, 256); ks.kind = 6; defaults.push_back(ks);
        Case sb = mk("subnormal A x2^-135, B x2^100", 256, 192, 320); sb.kind = 2; defaults.push_back(sb);
        Case ab = mk("alpha=0", 64, 64, 64); ab.alpha = 0.0f; ab.beta = 2.0f; ab.kind = 7; defaults.push_back(ab);
    }
    if (host_check) {
        std::printf("host emulation, N = %d, phi = %g; model selftest %d mismatches\n", N, phi, oz2::selftest());
        bool ok = true;
        int ci = 0;
        for (const Case &c : sizes.empty() ? defaults : sizes) {
            const uint64_t sd = seed + 7919 * uint64_t(++ci);
            if (c.m * c.n * c.k > (int64_t(1) << 28)) continue;  // the 1024^3 case: too slow here
            Host h = make_inputs(c, phi, sd);
            std::printf("case %s: %" PRId64 "x%" PRId64 "x%" PRId64 " op=%c%c seed=%" PRIu64 "\n", c.name.c_str(),
                        c.m, c.n, c.k, c.ta ? 'T' : 'N', c.tb ? 'T' : 'N', sd);
            bool o = false;
            OZ_DISPATCH(N, host_check_call, c, h, oz2::log2_T(N), o);
            ok &= o;
        }
        std::printf("%s\n", ok ? "ALL OK" : "SOME CHECKS FAILED");
        return ok ? 0 : 1;
    }
    {
        int inv[kMaxN][kMaxN];
        make_inv(inv);
        CK(cudaMemcpyToSymbol(c_inv, inv, sizeof(inv)));
    }
    CK(cudaFuncSetAttribute(gemm_mod_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device: %s (sm_%d%d); N = %d moduli, log2 T = %.2f; scaling fast-cs + K balancing; "
                "model selftest %d mismatches\n", prop.name, prop.major, prop.minor, N, oz2::log2_T(N),
                oz2::selftest());

    bool ok = true;
    int ci = 0;
    if (timing) {
        if (sizes.empty()) {
            Case a; a.name = "time"; a.m = a.n = a.k = 4096; sizes.push_back(a);
            Case b; b.name = "time"; b.m = b.n = b.k = 8192; sizes.push_back(b);
        }
        for (const Case &c : sizes) {
            Times t;
            ok &= run_case(c, N, phi, seed + 7919 * uint64_t(++ci), false, &t, reps);
        }
    } else {
        if (sizes.empty()) sizes = defaults;
        for (const Case &c : sizes) ok &= run_case(c, N, phi, seed + 7919 * uint64_t(++ci), true, nullptr, 1);
    }
    std::printf("%s\n", ok ? "ALL OK" : "SOME CHECKS FAILED");
    return ok ? 0 : 1;
}
