// The kernels' interface to the layers above (dispatch): the tiled families
// of the registry (kernels/families.def), each one tile shape of the tiled
// kernel template instantiated for every transpose pair and alignment, and
// the launchers of the other kernels (scaling, packing, split-K reduction,
// the streaming kernels). Launchers return the CUDA error of the launch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cuda_runtime_api.h>

#include "gemm_params.hpp"

namespace tgemm {

// A tiled family's kernels: one per transpose pair and alignment, where
// the alignment is what may move as 16-byte vectors: nothing, A and B, or
// A, B and C (C alone never: the main loop is what vectors speed up).
enum class TiledAlignment { None = 0, Operands = 1, All = 2 };
constexpr int kTiledVariants = 12;
constexpr int tiled_variant(bool trans_a, bool trans_b, TiledAlignment alignment)
{
    return ((trans_a ? 2 : 0) + (trans_b ? 1 : 0)) * 3 + static_cast<int>(alignment);
}

struct KernelFamily {
    using Launch = cudaError_t (*)(const GemmParams &, const SplitK &, cudaStream_t);
    using LaunchStreamK = cudaError_t (*)(const GemmParams &, const StreamK &, cudaStream_t);
    const char *name;
    int bm, bn, bk, threads;
    size_t smem_bytes;
    // index: tiled_variant(trans_a, trans_b, alignment).
    Launch launch[kTiledVariants];
    // Stream-K: its shared-out tiles, then (plain kernel) the whole ones; same
    // index. Only the families of one block per SM have it (has_streamk): at
    // 128 registers its kernels spill.
    bool has_streamk;
    LaunchStreamK launch_streamk[kTiledVariants];
    // Per device, before the first launch: sets cluster_blocks[n], n = 0 to
    // kTiledMaxCluster, to the blocks that run at once in clusters of n along
    // y (0: the cluster form is not available).
    cudaError_t (*prepare)(int cc_major, int *cluster_blocks);
};

namespace kernels {
#define TGEMM_TILED_FAMILY(name, streamk) extern const KernelFamily tiled_##name;
#include "kernels/families.def"
#undef TGEMM_TILED_FAMILY

// Every tiled family, in the registry's order (kernels/families.def).
#define TGEMM_TILED_FAMILY(name, streamk) &tiled_##name,
inline const KernelFamily *const kTiledFamilies[] = {
#include "kernels/families.def"
};
#undef TGEMM_TILED_FAMILY
constexpr int kTiledFamilyCount = sizeof(kTiledFamilies) / sizeof(kTiledFamilies[0]);

// C := beta * C over the m x n matrix (beta == 0 writes zeros, reading nothing).
cudaError_t launch_scale(float *c, int64_t m, int64_t n, int64_t ldc, float beta, cudaStream_t s);

// w(i, l) := a[l + i * lda] for i < m, l < k, stored at w[i + l * ldw]
// (ldw >= m): op(A) = A^T packed by columns (pack.cu).
cudaError_t launch_pack_transposed(const float *a, int64_t lda, int64_t m, int64_t k, float *w, int64_t ldw,
                                   cudaStream_t s);
// w[i + j * ldw] := a[i + j * lda] for i < rows, j < cols (ldw >= rows): an
// operand as stored, its columns moved to ldw (pack.cu).
cudaError_t launch_pack_copy(const float *a, int64_t lda, int64_t rows, int64_t cols, float *w, int64_t ldw,
                             cudaStream_t s);

// A product whose C has at most 16 rows or columns, restated for the
// streaming kernels (skinny*.cu) as C(r, j) = alpha * sum_k X(r, k) Y(j, k)
// + beta * C(r, j), r < r_len (long), j < s (short, 1..16).
struct SkinnyParams {
    const float *x;
    int64_t x_r, x_k;  // X(r, k) = x[r * x_r + k * x_k]; x_r == 1 or x_k == 1
    const float *y;
    int64_t y_j, y_k;  // Y(j, k) = y[j * y_j + k * y_k]
    float *c;
    int64_t c_r, c_j;  // C(r, j) = c[r * c_r + j * c_j]
    int64_t w_r, w_j;  // the same element in a split-K workspace slice (m x n, ld = m)
    int64_t m, n;      // the original C's dimensions (workspace slice size)
    int64_t r, k;      // long dimension and depth
    int s;             // short dimension
    float alpha, beta;
    bool vec;          // x is 16-byte aligned and its non-unit stride is a multiple of 4
    bool y_vec;        // y is 16-byte aligned and groups of 4 along its unit stride can move as one
                       // (y_k == 1: s == 1 or y_j % 4 == 0; y_j == 1: s % 4 == 0 and y_k % 4 == 0)
    int groups;        // skinny_dots: groups of r per warp in a block (set by dispatch's skinny_split)
    int gemv_rw;       // s == 1, x_r == 1: 0, or skinny_gemv with this many of a block's 8 warps along r
};

cudaError_t launch_skinny(const SkinnyParams &p, const SplitK &sk, cudaStream_t s);
// Split-K slices the streaming kernels may join in one cluster, at most.
constexpr int kSkinnyMaxCluster = 8;
// Per device, before the first launch. Sets cluster_blocks[n], n = 0 to
// kSkinnyMaxCluster, to the blocks that run at once in clusters of n (0: the
// cluster form is not available); a cluster launch is planned only when all
// its blocks fit, so none waits for a second wave.
cudaError_t prepare_skinny(int cc_major, int *cluster_blocks);
// The streaming kernel fed by the tensor copy engine (skinny_tma.cu, sm_90
// only): 32 r and the whole of K per block, any of X's and Y's layouts.
// s <= 8 runs the 8-wide kernel. It takes every s from 1 where Y is
// contiguous along k, but only from 5 where Y is contiguous along j: there
// its box of S values a row of k hangs past the matrix's edge, and
// skinny_dots is faster at small s.
constexpr int kSkinnyTmaMinS = 5;       // Y contiguous along j
constexpr int kSkinnyTmaMinSYk = 1;     // Y contiguous along k
constexpr int kSkinnyTmaRows = 32;  // values of r per block
constexpr int64_t kSkinnyTmaMinK = 1024;
// Per device, before the first launch: *available where the kernel can run
// here (compute capability 9.0, its machine code present, the driver's
// tensor map encoder found), its shared memory granted. A CUDA error in
// granting it is returned, not taken for "not available".
cudaError_t prepare_skinny_tma(int cc_major, bool *available);
// Whether the kernel takes this product: operands laid out and aligned as
// the copy engine needs (16-byte bases, strides a multiple of 4 elements and
// under 2^40 bytes), s >= kSkinnyTmaMinS (kSkinnyTmaMinSYk with Y contiguous
// along k), k >= kSkinnyTmaMinK, and enough blocks to fill the SMs in mostly
// full waves.
bool skinny_tma_fits(const SkinnyParams &p, int sm_count);
cudaError_t launch_skinny_tma(const SkinnyParams &p, cudaStream_t s);

// C := alpha * (sum of the split-K slices, in slice order) + beta * C.
// Each thread loads kSplitkReduceBatch slices at a time before adding them.
constexpr int kSplitkReduceBatch = 16;
cudaError_t launch_splitk_reduce(const GemmParams &p, const SplitK &sk, cudaStream_t s);

// The rank-k kernel (rank_k.cu): any product, one block of 256 threads per
// kRankKTile x kRankKTile tile of C (ceil(m / tile) * ceil(n / tile) blocks
// along x), K walked in chunks of kRankKChunk, no workspace. Built for K
// small against m x n, where moving C is the cost.
constexpr int kRankKTile = 128;
constexpr int kRankKChunk = 16;
constexpr int kRankKBlocksPerSm = 2;  // its launch bounds' promise, which the planner counts on
cudaError_t launch_rank_k(const GemmParams &p, cudaStream_t s);
}  // namespace kernels

}  // namespace tgemm
