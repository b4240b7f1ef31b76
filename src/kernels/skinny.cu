// Streaming kernels for products whose C has at most 16 rows or 16 columns
// (GEMV-like and skinny shapes). Such a product is memory-bound: its cost is
// reading the one large operand once, so these kernels are built around
// streaming that operand at full bandwidth, not around data reuse.
//
// The problem is restated as C(r, j) = alpha * sum_k X(r, k) Y(j, k) + beta * C(r, j)
// with r < R long (the large operand X) and j < s <= 16 short (Y, small
// enough to stage through shared memory). Two access patterns:
//   - skinny_rows: X is contiguous along r (x_r == 1). A thread owns one r and
//     walks K; a warp's loads of one k are 128 contiguous bytes.
//   - skinny_dots: X is contiguous along k (x_k == 1). A warp owns RW values
//     of r; its lanes read 16-byte pieces of K side by side and the partial
//     sums are added across the warp at the end (a fixed butterfly, so the
//     result is deterministic).
// Split-K (blockIdx.y) gives enough blocks when R is small; partial sums then
// go unscaled to a workspace slice and splitk_reduce finishes C.
#include "family.hpp"

namespace tgemm {
namespace kernels {
namespace {

constexpr int kRowsThreads = 128;  // skinny_rows: threads (rows of R) per block
constexpr int kRowsKc = 64;        // skinny_rows: K staged per step
constexpr int kDotsWarps = 8;      // skinny_dots: warps per block
constexpr int kDotsRw = 4;         // skinny_dots: rows of R per warp
constexpr int kDotsKc = 128;       // skinny_dots: K staged per step (32 lanes x 4)

// Where this block's slice of K starts and how long it is.
__device__ __forceinline__ void k_range(const SkinnyParams &p, const SplitK &sk, int64_t *k0, int64_t *kn)
{
    if (sk.splits > 1) {
        *k0 = static_cast<int64_t>(blockIdx.y) * sk.k_chunk;
        *kn = p.k - *k0 < sk.k_chunk ? p.k - *k0 : sk.k_chunk;
    } else {
        *k0 = 0;
        *kn = p.k;
    }
}

// Stores acc for output (r, j): scaled into C, or raw into the workspace slice.
__device__ __forceinline__ void store_out(const SkinnyParams &p, const SplitK &sk, int64_t r, int j, float acc)
{
    if (sk.splits > 1) {
        float *w = sk.work + static_cast<int64_t>(blockIdx.y) * p.m * p.n;
        w[r * p.w_r + j * p.w_j] = acc;
    } else {
        float *c = p.c + r * p.c_r + j * p.c_j;
        const float v = p.alpha * acc;
        *c = p.beta != 0.0f ? fmaf(p.beta, *c, v) : v;
    }
}

// Stages Y(j, k0 + kk), kk < len, j < s into ys[kk * ld_k + j * ld_j]; zero
// beyond the ends, so every product with a missing element adds 0.
template <int S, int KC>
__device__ __forceinline__ void stage_y(const SkinnyParams &p, int64_t k0, int len, float *ys, int ld_k, int ld_j)
{
    for (int idx = threadIdx.x; idx < KC * S; idx += blockDim.x) {
        int kk, j;
        if (p.y_k == 1) {  // K contiguous in memory: consecutive threads along K
            kk = idx % KC;
            j = idx / KC;
        } else {
            j = idx % S;
            kk = idx / S;
        }
        ys[kk * ld_k + j * ld_j] = (kk < len && j < p.s) ? p.y[j * p.y_j + (k0 + kk) * p.y_k] : 0.0f;
    }
}

template <int S>
__global__ void __launch_bounds__(kRowsThreads, 6) skinny_rows(SkinnyParams p, SplitK sk)
{
    __shared__ __align__(16) float ys[kRowsKc * S];
    int64_t k0, kn;
    k_range(p, sk, &k0, &kn);
    const int64_t r = static_cast<int64_t>(blockIdx.x) * kRowsThreads + threadIdx.x;
    const bool active = r < p.r;
    const float *x = p.x + (active ? r : 0) + k0 * p.x_k;

    float acc[S];
#pragma unroll
    for (int j = 0; j < S; ++j)
        acc[j] = 0.0f;

    for (int64_t kc = 0; kc < kn; kc += kRowsKc) {
        const int len = kn - kc < kRowsKc ? static_cast<int>(kn - kc) : kRowsKc;
        stage_y<S, kRowsKc>(p, k0 + kc, len, ys, S, 1);
        __syncthreads();
        if (active) {
            const float *xk = x + kc * p.x_k;
#pragma unroll 8
            for (int kk = 0; kk < len; ++kk) {
                const float xv = __ldg(xk + kk * p.x_k);
#pragma unroll
                for (int j = 0; j < S; ++j)
                    acc[j] = fmaf(xv, ys[kk * S + j], acc[j]);
            }
        }
        __syncthreads();
    }
    if (active) {
#pragma unroll
        for (int j = 0; j < S; ++j)
            if (j < p.s)
                store_out(p, sk, r, j, acc[j]);
    }
}

template <int S, bool kVec>
__global__ void __launch_bounds__(kDotsWarps * 32) skinny_dots(SkinnyParams p, SplitK sk)
{
    constexpr int kLd = kDotsKc + 4;  // ys[j][kk]: lanes read 16 bytes each, conflict-free
    __shared__ __align__(16) float ys[S * kLd];
    int64_t k0, kn;
    k_range(p, sk, &k0, &kn);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int64_t r0 = (static_cast<int64_t>(blockIdx.x) * kDotsWarps + warp) * kDotsRw;

    float acc[kDotsRw][S];
#pragma unroll
    for (int q = 0; q < kDotsRw; ++q)
#pragma unroll
        for (int j = 0; j < S; ++j)
            acc[q][j] = 0.0f;

    for (int64_t kc = 0; kc < kn; kc += kDotsKc) {
        const int len = kn - kc < kDotsKc ? static_cast<int>(kn - kc) : kDotsKc;
        stage_y<S, kDotsKc>(p, k0 + kc, len, ys, 1, kLd);
        __syncthreads();
        const int kk = lane * 4;
        float4 xv[kDotsRw];
#pragma unroll
        for (int q = 0; q < kDotsRw; ++q) {
            const int64_t r = r0 + q;
            const float *xp = p.x + (r < p.r ? r : 0) * p.x_r + k0 + kc + kk;
            if (kVec && r < p.r && kk + 3 < len) {
                xv[q] = __ldg(reinterpret_cast<const float4 *>(xp));
            } else {
                const bool ok = r < p.r;
                xv[q].x = ok && kk + 0 < len ? __ldg(xp + 0) : 0.0f;
                xv[q].y = ok && kk + 1 < len ? __ldg(xp + 1) : 0.0f;
                xv[q].z = ok && kk + 2 < len ? __ldg(xp + 2) : 0.0f;
                xv[q].w = ok && kk + 3 < len ? __ldg(xp + 3) : 0.0f;
            }
        }
#pragma unroll
        for (int j = 0; j < S; ++j) {
            const float4 y = *reinterpret_cast<const float4 *>(ys + j * kLd + kk);
#pragma unroll
            for (int q = 0; q < kDotsRw; ++q) {
                acc[q][j] = fmaf(xv[q].x, y.x, acc[q][j]);
                acc[q][j] = fmaf(xv[q].y, y.y, acc[q][j]);
                acc[q][j] = fmaf(xv[q].z, y.z, acc[q][j]);
                acc[q][j] = fmaf(xv[q].w, y.w, acc[q][j]);
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int q = 0; q < kDotsRw; ++q)
#pragma unroll
        for (int j = 0; j < S; ++j)
#pragma unroll
            for (int off = 16; off > 0; off /= 2)
                acc[q][j] += __shfl_xor_sync(0xffffffffu, acc[q][j], off);
    if (lane == 0) {
#pragma unroll
        for (int q = 0; q < kDotsRw; ++q)
#pragma unroll
            for (int j = 0; j < S; ++j)
                if (r0 + q < p.r && j < p.s)
                    store_out(p, sk, r0 + q, j, acc[q][j]);
    }
}

template <int S>
cudaError_t launch_for(const SkinnyParams &p, const SplitK &sk, cudaStream_t st)
{
    if (p.x_r == 1) {
        const dim3 grid(static_cast<unsigned>((p.r + kRowsThreads - 1) / kRowsThreads),
                        static_cast<unsigned>(sk.splits));
        skinny_rows<S><<<grid, kRowsThreads, 0, st>>>(p, sk);
    } else {
        constexpr int kRowsPerBlock = kDotsWarps * kDotsRw;
        const dim3 grid(static_cast<unsigned>((p.r + kRowsPerBlock - 1) / kRowsPerBlock),
                        static_cast<unsigned>(sk.splits));
        if (p.vec)
            skinny_dots<S, true><<<grid, kDotsWarps * 32, 0, st>>>(p, sk);
        else
            skinny_dots<S, false><<<grid, kDotsWarps * 32, 0, st>>>(p, sk);
    }
    return cudaGetLastError();
}

}  // namespace

int64_t skinny_rows_per_block(const SkinnyParams &p)
{
    return p.x_r == 1 ? kRowsThreads : kDotsWarps * kDotsRw;
}

int64_t skinny_k_step(const SkinnyParams &p)
{
    return p.x_r == 1 ? kRowsKc : kDotsKc;
}

cudaError_t launch_skinny(const SkinnyParams &p, const SplitK &sk, cudaStream_t st)
{
    if (p.s <= 1) return launch_for<1>(p, sk, st);
    if (p.s <= 2) return launch_for<2>(p, sk, st);
    if (p.s <= 4) return launch_for<4>(p, sk, st);
    if (p.s <= 8) return launch_for<8>(p, sk, st);
    return launch_for<16>(p, sk, st);
}

}  // namespace kernels
}  // namespace tgemm
