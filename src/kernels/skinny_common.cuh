// What the streaming kernels (skinny_rows.cu, skinny_rows_ring.cu,
// skinny_gemv.cu, skinny_dots.cu) share: the range of K a block walks, the
// stores of finished sums (C, a split-K workspace slice, or the cluster
// form's exchange), skinny_rows' end, the launch, and each technique's host
// entry points, which skinny.cu chooses among.
#pragma once

#include <cstdint>
#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <initializer_list>
#include <type_traits>

#include "kernels/cluster_launch.hpp"
#include "kernels/family.hpp"
#include "kernels/skinny_shape.hpp"

namespace tgemm {
namespace kernels {
namespace skinny {

// Cluster launches ask for at least this much shared memory, so that every
// one runs exactly two blocks per SM (the registers allow two, the shared
// memory no third) and prepare_skinny's count of resident clusters holds.
constexpr size_t kClusterSmem = 80 * 1024;
static_assert(kMaxCluster == kSkinnyMaxCluster, "one limit");

// K staged per chunk for this launch: the longest slice, rounded up to the
// step, at most cap. Every block computes the same value.
__device__ __host__ __forceinline__ int chunk_for(const SkinnyParams &p, const SplitK &sk, int cap, int step)
{
    const int64_t span = sk.splits > 1 ? sk.k_chunk : p.k;
    const int64_t rounded = (span + step - 1) / step * step;
    return rounded < cap ? static_cast<int>(rounded) : cap;
}

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

// Stores a finished sum for output (r, j): scaled into C, or raw into the
// block's split-K workspace slice.
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

// Cluster form of split-K (SplitK::cluster): part[e] holds this block's raw
// sum for r = r_base + e / S, j = e % S, e < rows * S. After a cluster
// barrier each block finishes its share of the e: the slices' sums added in
// slice (cluster rank) order, as splitk_reduce adds them, then scaled into
// C. The second barrier keeps every block's shared memory alive until the
// others have read it.
template <int S>
__device__ __forceinline__ void cluster_finish(const SkinnyParams &p, const SplitK &sk, float *part, int64_t r_base,
                                               int rows)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    namespace cg = cooperative_groups;
    cg::cluster_group cluster = cg::this_cluster();
    cluster.sync();
    const int n = sk.splits, rank = static_cast<int>(cluster.block_rank());
    const int elems = rows * S, per = (elems + n - 1) / n;
    const int end = (rank + 1) * per < elems ? (rank + 1) * per : elems;
    for (int e = rank * per + static_cast<int>(threadIdx.x); e < end; e += kThreads) {
        const int64_t r = r_base + e / S;
        const int j = e % S;
        if (r < p.r && j < p.s) {
            float sum = cluster.map_shared_rank(part, 0)[e];
            for (int c = 1; c < n; ++c)
                sum += cluster.map_shared_rank(part, c)[e];
            float *out = p.c + r * p.c_r + j * p.c_j;
            const float v = p.alpha * sum;
            *out = p.beta != 0.0f ? fmaf(p.beta, *out, v) : v;
        }
    }
    cluster.sync();
#else
    // Code without clusters (compute_80 PTX) is never sent a cluster launch
    // (prepare_skinny checks); were it, stop rather than leave C unwritten.
    (void)p, (void)part, (void)r_base, (void)rows;
    if (sk.cluster)
        __trap();
#endif
}

// Stages Y(j, k0 + kk) for kk < padded and j < S where Y is contiguous
// along K (y_k == 1), handing each value to store(kk, j, value): zero for kk
// in [len, padded) and j >= p.s. Neighbouring threads take neighbouring kk
// (coalesced loads), and a thread has max(8, S) loads in flight before it
// stores any (every j of 8 / S values of kk, or all S at S >= 8). No index
// is divided at run time. (Where the layout puts neighbouring kk S words
// apart, the stores meet bank conflicts, as they did before.)
template <int S, class Store>
__device__ __forceinline__ void stage_y_along_k(const SkinnyParams &p, int64_t k0, int len, int padded, Store &&store)
{
    constexpr int kKs = S >= 8 ? 1 : 8 / S;  // values of kk per thread per round
    for (int base = 0; base < padded; base += kKs * kThreads) {
        float v[kKs][S];
#pragma unroll
        for (int i = 0; i < kKs; ++i) {
            const int kk = base + i * kThreads + static_cast<int>(threadIdx.x);
#pragma unroll
            for (int j = 0; j < S; ++j)
                v[i][j] = kk < len && j < p.s ? __ldg(p.y + j * p.y_j + k0 + kk) : 0.0f;
        }
#pragma unroll
        for (int i = 0; i < kKs; ++i) {
            const int kk = base + i * kThreads + static_cast<int>(threadIdx.x);
            if (kk < padded) {
#pragma unroll
                for (int j = 0; j < S; ++j)
                    store(kk, j, v[i][j]);
            }
        }
    }
}

__device__ __forceinline__ float4 load_x4(const float *xp, int64_t stride, int count, bool vec)
{
    if (vec && count >= 4)
        return __ldg(reinterpret_cast<const float4 *>(xp));
    float4 v;
    v.x = count > 0 ? __ldg(xp) : 0.0f;
    v.y = count > 1 ? __ldg(xp + stride) : 0.0f;
    v.z = count > 2 ? __ldg(xp + 2 * stride) : 0.0f;
    v.w = count > 3 ? __ldg(xp + 3 * stride) : 0.0f;
    return v;
}

// The count <= 4 consecutive floats from xp (four values of X along its
// contiguous dimension: r in skinny_rows, k in skinny_dots), one streaming
// load each (X not 16-byte aligned), zero past count.
__device__ __forceinline__ float4 load_x4_stream(const float *xp, int count)
{
    float4 v;
    v.x = count > 0 ? __ldcs(xp) : 0.0f;
    v.y = count > 1 ? __ldcs(xp + 1) : 0.0f;
    v.z = count > 2 ? __ldcs(xp + 2) : 0.0f;
    v.w = count > 3 ? __ldcs(xp + 3) : 0.0f;
    return v;
}

// skinny_rows and skinny_rows_ring: how many of the lane's 4 values of r
// from r on lie inside X (0 to 4).
__device__ __forceinline__ int lane_rows(const SkinnyParams &p, int64_t r)
{
    return p.r - r < 4 ? static_cast<int>(p.r - r > 0 ? p.r - r : 0) : 4;
}

template <int S>
__device__ __forceinline__ void zero_sums(float (&acc)[4][S])
{
#pragma unroll
    for (int q = 0; q < 4; ++q)
#pragma unroll
        for (int j = 0; j < S; ++j)
            acc[q][j] = 0.0f;
}

// skinny_rows' end: the eight warps' partial sums acc (4 r x S j per lane)
// are added in warp order through shared memory at red, which every warp
// must be done with, and each sum goes to C, to the workspace slice or (cluster
// form) to the block's sums at red + part, which cluster_finish adds up.
template <int S>
__device__ __forceinline__ void rows_finish(const SkinnyParams &p, const SplitK &sk, const float (&acc)[4][S],
                                            float *red, int part)
{
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    // Laid out [warp][q][j][lane], so that a warp's stores fill 32
    // consecutive words: with the sums of one lane side by side, every lane
    // of a store would hit the same bank.
#pragma unroll
    for (int q = 0; q < 4; ++q)
#pragma unroll
        for (int j = 0; j < S; ++j)
            red[((warp * 4 + q) * S + j) * 32 + lane] = acc[q][j];
    __syncthreads();
    constexpr int kWarpSums = kRowsPerBlock * S;
    for (int e = threadIdx.x; e < kWarpSums; e += kThreads) {
        const int j = e / 32 % S, row = e % 32 * 4 + e / (32 * S);
        float sum = red[e];
        for (int w = 1; w < kWarps; ++w)
            sum += red[w * kWarpSums + e];
        const int64_t rr = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + row;
        if (sk.cluster)
            red[part + row * S + j] = sum;  // the block's sums, after the warp sums
        else if (rr < p.r && j < p.s)
            store_out(p, sk, rr, j, sum);
    }
    if (sk.cluster)
        cluster_finish<S>(p, sk, red + part, static_cast<int64_t>(blockIdx.x) * kRowsPerBlock, kRowsPerBlock);
}

// Launches kernel over grid, as clusters of sk.splits blocks along y in
// cluster form.
inline cudaError_t launch_k(void (*kernel)(SkinnyParams, SplitK), dim3 grid, size_t smem, cudaStream_t st,
                            const SkinnyParams &p, const SplitK &sk)
{
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg = cluster_launch_config(grid, kThreads, sk.cluster && smem < kClusterSmem ? kClusterSmem : smem,
                                                         st, sk.cluster ? sk.splits : 1, &attr);
    return cudaLaunchKernelEx(&cfg, kernel, p, sk);
}

// skinny_rows' and skinny_rows_ring's grid: 128 r per block along x, one
// slice of K per y.
inline dim3 rows_grid(const SkinnyParams &p, const SplitK &sk)
{
    return dim3(static_cast<unsigned>((p.r + kRowsPerBlock - 1) / kRowsPerBlock), static_cast<unsigned>(sk.splits));
}

// Lets each of the kernels use max_bytes of dynamic shared memory; the
// first failure, or cudaSuccess.
inline cudaError_t allow_smem(int max_bytes, std::initializer_list<void (*)(SkinnyParams, SplitK)> kernels)
{
    for (void (*kernel)(SkinnyParams, SplitK) : kernels) {
        const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, max_bytes);
        if (e != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

// f(std::integral_constant<int, S>{}) for the bucket of s (short_bucket).
template <class F>
cudaError_t with_bucket(int s, F &&f)
{
    switch (short_bucket(s)) {
    case 1: return f(std::integral_constant<int, 1>{});
    case 2: return f(std::integral_constant<int, 2>{});
    case 4: return f(std::integral_constant<int, 4>{});
    case 8: return f(std::integral_constant<int, 8>{});
    default: return f(std::integral_constant<int, 16>{});
    }
}

// f(std::integral_constant<int, S>{}) for every bucket; the first failure,
// or cudaSuccess.
template <class F>
cudaError_t each_bucket(F &&f)
{
    const cudaError_t e[] = {f(std::integral_constant<int, 1>{}), f(std::integral_constant<int, 2>{}),
                             f(std::integral_constant<int, 4>{}), f(std::integral_constant<int, 8>{}),
                             f(std::integral_constant<int, 16>{})};
    for (cudaError_t x : e)
        if (x != cudaSuccess)
            return x;
    return cudaSuccess;
}

// Each technique's host side: prepare_* lets its kernels use max_bytes of
// dynamic shared memory; launch_* runs the product on them.
cudaError_t prepare_rows(int max_bytes);
cudaError_t launch_rows(const SkinnyParams &p, const SplitK &sk, cudaStream_t st);
cudaError_t prepare_rows_ring(int max_bytes);
// Whether skinny_rows_ring takes this launch of skinny_rows' products.
bool rows_ring_takes(const SkinnyParams &p, const SplitK &sk);
cudaError_t launch_rows_ring(const SkinnyParams &p, const SplitK &sk, cudaStream_t st);
cudaError_t prepare_gemv(int max_bytes);
cudaError_t launch_gemv(const SkinnyParams &p, const SplitK &sk, cudaStream_t st);
cudaError_t prepare_dots(int max_bytes);
cudaError_t launch_dots(const SkinnyParams &p, const SplitK &sk, cudaStream_t st);
// Whether the code of skinny_dots in use here has the cluster form, and the
// blocks that run at once in clusters of n (cluster_blocks[n], n <=
// kMaxCluster) at the two blocks per SM of every cluster launch.
bool dots_cluster_code(int cc_major);
void count_clusters(int *cluster_blocks);

}  // namespace skinny
}  // namespace kernels
}  // namespace tgemm
