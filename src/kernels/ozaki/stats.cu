// The fp32-tc math's statistics over the FP32 operands (ozaki.hpp, phase 1
// and the start of phase 2): K balancing's maxima and exponents, the rows'
// and columns' sums of squares in the CPU model's order with, on the same
// reads, the certificate's row maxima of the balanced operands and its
// flags, and the scaling exponents from the sums.
//
// Contract: op(X) is R rows of K (X[r rs + k ks], one stride 1, any ld);
// reads X only inside R x K. kmax_kernel writes amax/bmax, norm_part_kernel
// rmax_a/rmax_b and result[1] (all zeroed by launch_stats first),
// ebal_kernel ebal[k] for k < K, norm_part_kernel the chunk sums part[c R +
// r] for r < R, norm_finish_kernel mu[r] for r < R.
// Every value is a function of the inputs alone (atomicMax on float bits,
// sums in a fixed order), the model's bit for bit.
#include "kernels/ozaki/passes.hpp"
#include "kernels/ozaki/tiles.cuh"

#include <algorithm>

namespace tgemm {
namespace ozaki {
namespace {

// --- 1. K-balancing maxima -------------------------------------------------
// kmax_kernel: out[k] = max(out[k], max_r |op(X)(r, k)|) as float bits for
// k < K (out zeroed first; atomicMax on non-negative floats as unsigned is
// exact and order independent). Grid (ceil(K/128), ceil(R/256)), 256
// threads; a block walks KM_TILES tiles of 32 x 128 down its 256 rows
// (coalesced loads whatever the orientation, see tile_load); threads t < 128
// keep the max of column t over the tiles (32 consecutive columns of one row
// per warp: conflict-free), one atomic per column and block (8 tiles per
// block: an eighth of the atomics of one tile per block, and still
// K/128 x R/256 blocks).
constexpr int KM_TR = 32, KM_TK = 128, KM_TILES = 8;

// Block (bx, by)'s first k and first row (grid and origins shared by the
// kernel and the host emulation, as for every tile kernel below).
__device__ __forceinline__ void kmax_origin(int64_t bx, int64_t by, int64_t &k0, int64_t &rb)
{
    k0 = bx * KM_TK; rb = by * (KM_TR * KM_TILES);
}

__device__ __forceinline__ float kmax_tile(const float *s, int c, float mx)
{
#pragma unroll
    for (int r = 0; r < KM_TR; ++r) mx = fmaxf(mx, fabsf(s[r * KM_TK + tcol(r, c)]));
    return mx;
}

template <int MODE>
__global__ void __launch_bounds__(kTileThreads)
kmax_kernel(const float *__restrict__ X, int64_t rs, int64_t ks, int64_t R, int64_t K,
            unsigned *__restrict__ out)
{
    __shared__ __align__(16) float s[KM_TR * KM_TK];
    const int t = threadIdx.x;
    int64_t k0, rb;
    kmax_origin(blockIdx.x, blockIdx.y, k0, rb);
    float mx = 0.0f;
#pragma unroll 1
    for (int i = 0; i < KM_TILES && rb + i * KM_TR < R; ++i) {
        if (i) __syncthreads();
        tile_load<KM_TR, KM_TK>(s, X, rs, ks, R, K, rb + i * KM_TR, k0, MODE, t);
        __syncthreads();
        if (t < KM_TK) mx = kmax_tile(s, t, mx);
    }
    if (t < KM_TK && k0 + t < K) atomicMax(out + k0 + t, f2u(mx));
}

// ebal_kernel: the model's balance_k exponent, e[k] = floor((ilogb rb[k] -
// ilogb ca[k]) / 2), 0 where either maximum is zero, for k < K (column k of
// A is scaled by 2^e, row k of B by 2^-e). One thread per k, coalesced.
__global__ void ebal_kernel(const unsigned *__restrict__ ca, const unsigned *__restrict__ rb,
                            int64_t K, int *__restrict__ e)
{
    int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (t >= K) return;
    e[t] = ebal_value(u2f(ca[t]), u2f(rb[t]));
}

// --- 2. fast-cs exponents -------------------------------------------------
// The model's cs() on the balanced operand, x = ldexpf(op(X)(r, k), sign e_k)
// (sign = +1 for A, -1 for B): chunks of kNormChunk consecutive k summed in
// double sequentially in increasing k, the chunk sums added in increasing
// chunk order (x^2 is exact in double; only the additions round, each
// __dadd_rn, no contraction).
//
// norm_part_kernel: part[c*R + r] = sum over chunk c of row r, for r < R;
// and, on the same reads, the certificate's row maxima of the balanced
// values (rmax[r] = max(rmax[r], max |x|) as float bits, zeroed by the
// caller: atomicMax on non-negative floats as unsigned is exact and order
// free) and its flags (*special |= balance_flags: Inf or NaN in op(X), or
// a balanced value that is not exact). Grid (ceil(R/256),
// ceil(K/kNormChunk)), 256 threads, thread t = row r0 + t. The chunk is
// read as tiles of 256 rows x 32 k (coalesced for either orientation, see
// tile_load), and thread t sums row t of each tile in increasing k with
// float4 shared reads (8 consecutive rows per quarter-warp: conflict-free),
// carrying its sum across the tiles of the chunk; zeros past K add nothing
// (and are no larger than any maximum, and exact).
constexpr int NM_TR = kTileThreads, NM_TK = 32;
constexpr int kChunk = kNormChunk;
static_assert(kChunk % NM_TK == 0, "a chunk is a whole number of tiles");

__device__ __forceinline__ void norm_origin(int64_t bx, int64_t by, int64_t &r0, int64_t &kc0)
{
    r0 = bx * NM_TR; kc0 = by * kChunk;
}

__device__ __forceinline__ double norm_tile(const float *s, const int *se, int t, double acc, float &mx, int &flags)
{
#pragma unroll
    for (int c = 0; c < NM_TK / 4; ++c) {
        const float4 v = ld4(s + t * NM_TK + tcol(t, 4 * c));
        const float x4[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            const int e = se[4 * c + q];
            const float xb = ldexp_f(x4[q], e);
            flags |= balance_flags(x4[q], xb, e);
            mx = fmaxf(mx, fabsf(xb));
            const double d = double(xb);
            acc = dadd(acc, dmul(d, d));
        }
    }
    return acc;
}

template <int MODE>
__global__ void __launch_bounds__(kTileThreads)
norm_part_kernel(const float *__restrict__ X, int64_t rs, int64_t ks, int64_t R, int64_t K,
                 const int *__restrict__ ebal, int sign, double *__restrict__ part, unsigned *__restrict__ rmax,
                 int *__restrict__ special)
{
    __shared__ __align__(16) float s[NM_TR * NM_TK];
    __shared__ int se[kChunk];
    const int t = threadIdx.x;
    int64_t r0, kc0;
    norm_origin(blockIdx.x, blockIdx.y, r0, kc0);
    load_escale(se, kChunk, ebal, sign, K, kc0, t);
    double acc = 0.0;
    float mx = 0.0f;
    int flags = 0;
#pragma unroll 1
    for (int sub = 0; sub < kChunk / NM_TK && kc0 + sub * NM_TK < K; ++sub) {
        __syncthreads();
        tile_load<NM_TR, NM_TK>(s, X, rs, ks, R, K, r0, kc0 + sub * NM_TK, MODE, t);
        __syncthreads();
        acc = norm_tile(s, se + sub * NM_TK, t, acc, mx, flags);
    }
    if (r0 + t < R) {
        part[int64_t(blockIdx.y) * R + r0 + t] = acc;
        atomicMax(rmax + r0 + t, f2u(mx));
        if (flags)
            atomicOr(special, flags);
    }
}

// norm_finish_kernel: mu[i] for i < m from pa (nch x m), nu[j] for j < n from
// pb (nch x n), for nmod moduli; one thread per row of either (coalesced
// over rows).
__global__ void norm_finish_kernel(const double *__restrict__ pa, int64_t m, const double *__restrict__ pb,
                                   int64_t n, int64_t nch, int nmod, int *__restrict__ mu, int *__restrict__ nu)
{
    const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (t < m) mu[t] = mu_value(norm_total(pa + t, m, nch), nmod);
    else if (t < m + n) nu[t - m] = mu_value(norm_total(pb + (t - m), n, nch), nmod);
}


// Tile kernels specialised by tile_mode() (one load pattern each keeps their
// registers low).
template <template <int> class F, class... Args>
void by_mode(int mode, Args... args)
{
    switch (mode) {
    case 0: F<0>::run(args...); break;
    case kTileKc: F<kTileKc>::run(args...); break;
    case kTileVec: F<kTileVec>::run(args...); break;
    default: F<kTileKc | kTileVec>::run(args...); break;
    }
}

template <int MODE>
struct KmaxLaunch {
    static void run(const float *x, int64_t rs, int64_t ks, int64_t r, int64_t k, unsigned *out, cudaStream_t st)
    {
        const dim3 grid(unsigned((k + KM_TK - 1) / KM_TK), unsigned((r + KM_TR * KM_TILES - 1) / (KM_TR * KM_TILES)));
        kmax_kernel<MODE><<<grid, kTileThreads, 0, st>>>(x, rs, ks, r, k, out);
    }
};

template <int MODE>
struct NormLaunch {
    static void run(const float *x, int64_t rs, int64_t ks, int64_t r, int64_t k, const int *e, int sign,
                    double *part, int64_t chunks, unsigned *rmax, int *special, cudaStream_t st)
    {
        const dim3 grid(unsigned((r + NM_TR - 1) / NM_TR), unsigned(chunks));
        norm_part_kernel<MODE><<<grid, kTileThreads, 0, st>>>(x, rs, ks, r, k, e, sign, part, rmax, special);
    }
};

}  // namespace

cudaError_t launch_stats(const Operands &op, const Sizes &s, const CertBuffers &cb, cudaStream_t st)
{
    const int64_t k = op.k;
    cudaError_t e;
    if ((e = cudaMemsetAsync(cb.amax, 0, k * sizeof(unsigned), st)) != cudaSuccess ||
        (e = cudaMemsetAsync(cb.bmax, 0, k * sizeof(unsigned), st)) != cudaSuccess ||
        (e = cudaMemsetAsync(cb.rmax_a, 0, size_t(s.mp) * sizeof(unsigned), st)) != cudaSuccess ||
        (e = cudaMemsetAsync(cb.rmax_b, 0, size_t(s.np) * sizeof(unsigned), st)) != cudaSuccess ||
        (e = cudaMemsetAsync(cb.result + 1, 0, sizeof(int), st)) != cudaSuccess)
        return e;
    const int amode = tile_mode(op.a, op.ars, op.aks), bmode = tile_mode(op.b, op.brs, op.bks);
    by_mode<KmaxLaunch>(amode, op.a, op.ars, op.aks, op.m, k, cb.amax, st);
    by_mode<KmaxLaunch>(bmode, op.b, op.brs, op.bks, op.n, k, cb.bmax, st);
    ebal_kernel<<<unsigned((k + 255) / 256), 256, 0, st>>>(cb.amax, cb.bmax, k, cb.ebal);
    by_mode<NormLaunch>(amode, op.a, op.ars, op.aks, op.m, k, static_cast<const int *>(cb.ebal), +1, cb.part_a,
                        s.chunks, cb.rmax_a, cb.result + 1, st);
    by_mode<NormLaunch>(bmode, op.b, op.brs, op.bks, op.n, k, static_cast<const int *>(cb.ebal), -1, cb.part_b,
                        s.chunks, cb.rmax_b, cb.result + 1, st);
    return cudaGetLastError();
}

cudaError_t launch_exponents(const Operands &op, const Sizes &s, const CertBuffers &cb, int *mu, int *nu, int n,
                             cudaStream_t st)
{
    norm_finish_kernel<<<unsigned((op.m + op.n + 255) / 256), 256, 0, st>>>(cb.part_a, op.m, cb.part_b, op.n,
                                                                          s.chunks, n, mu, nu);
    return cudaGetLastError();
}

}  // namespace ozaki
}  // namespace tgemm
