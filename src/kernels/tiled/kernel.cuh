// The tiled kernel: register-blocked FP32 SGEMM on the CUDA cores, one template
// per tile shape (shapes.cuh), covering every transpose pair and every size.
//
// Contract (what the launcher guarantees):
//   - GemmParams is column-major, m >= 1, n >= 1, k >= 1, alpha != 0
//     (alpha == 0 and k == 0 go to the scaling kernel instead);
//   - a, b, c are device-accessible and c does not overlap a or b;
//   - kAligned: a and b are 16-byte aligned and lda, ldb are multiples of
//     4, so every 4-element group of A and B that starts at a multiple of 4
//     can be moved as one 128-bit access; kVecC (only with kAligned): the
//     same of c and ldc. Without them those accesses are scalar. kVecC
//     differs from kAligned only in the cluster form (aligned operands
//     beside an unaligned C).
//   - the grid is ceil(m/BM) * ceil(n/BN) blocks of T::kThreads along x, and
//     one slice of K per y (SplitK); with more than one slice in workspace
//     form, kVecC promises m % 4 == 0 for C's part (the workspace has
//     ld = m); in cluster form the slices of a tile are one cluster along y,
//     with kClusterSmemBytes of shared memory.
//
// What the kernel does:
//   - each block owns a BM x BN tile of C and walks K in steps of BK;
//     global loads for step t+1 are issued into registers before the FFMAs
//     of step t, and land in the other of two shared-memory stages;
//   - the shared layout is K-major for both operands (sa[k][m], sb[k][n]),
//     so each thread reads its A and B fragments as 128-bit vectors; operands
//     whose contiguous dimension is K are transposed on the way in;
//   - a warp is 8 x 4 lanes; a lane owns (WM/8) x (WN/4) elements of C as
//     4 x 4 sub-blocks strided 32 rows and 16 columns apart, which makes the
//     fragment reads conflict-free and the 16-byte C stores 128-byte
//     coalesced (kStaged: a C without 16-byte accesses goes through shared
//     memory, store_tile_staged, so that its 4-byte stores are too);
//   - split-K slices finish either in a workspace (reduced by a second
//     kernel) or inside their cluster through distributed shared memory;
//   - edges are predicated inside the kernel: out-of-range elements load as
//     zero and are never stored; nothing outside the m x n region is touched;
//   - beta == 0 never reads C.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

#include "kernels/gemm_params.hpp"
#include "kernels/tiled/epilogue.cuh"
#include "kernels/tiled/mainloop.cuh"

namespace tgemm {
namespace kernels {

// Block index -> tile coordinates, in groups of kGroupM tile rows so that
// blocks running together share panels of A and B in L2.
struct TileCoord {
    int64_t tm, tn;
};

__device__ __forceinline__ TileCoord tile_of(int64_t pid, int64_t tiles_m, int64_t tiles_n)
{
    constexpr int64_t kGroupM = 8;
    const int64_t per_group = kGroupM * tiles_n;
    const int64_t group = pid / per_group;
    const int64_t first_m = group * kGroupM;
    const int64_t rows = tiles_m - first_m < kGroupM ? tiles_m - first_m : kGroupM;
    const int64_t in_group = pid - group * per_group;
    return {first_m + in_group % rows, in_group / rows};
}

__device__ __forceinline__ TileCoord tile_of_block(int64_t tiles_m, int64_t tiles_n)
{
    return tile_of(blockIdx.x, tiles_m, tiles_n);
}

// The part of the problem that slice blockIdx.y of a split-K launch computes:
// a range of K, written unscaled to its own workspace slice; in cluster form
// C's fields stay C's (cluster_store_tile writes C).
template <bool kTransA, bool kTransB, bool kCluster>
__device__ __forceinline__ GemmParams slice_of(GemmParams p, const SplitK &sk)
{
    const int64_t s = blockIdx.y;
    const int64_t k0 = s * sk.k_chunk;
    advance_k<kTransA, kTransB>(p, k0);
    p.k = p.k - k0 < sk.k_chunk ? p.k - k0 : sk.k_chunk;
    if (!kCluster) {
        p.c = sk.work + s * p.m * p.n;
        p.ldc = p.m;
        p.alpha = 1.0f;
        p.beta = 0.0f;
    }
    return p;
}

// kCluster: the cluster form of split-K (sk.cluster), a kernel of its own so
// that its epilogue does not change the register allocation of the others
// (with one kernel for both forms, the plain kernels took the cluster
// form's allocation and ran slower). kStaged: the plain kernel's epilogue
// is store_tile_staged, for a C without 16-byte accesses (kernels of their
// own too: with both epilogues in one kernel, 128x64x8's spilled).
template <class T, bool kTransA, bool kTransB, bool kAligned, bool kCluster = false, bool kVecC = kAligned,
          bool kStaged = false>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocks) sgemm_tiled(GemmParams p, SplitK sk)
{
    static_assert(!kStaged || (!kVecC && !kCluster), "the staged epilogue is for the plain kernel's scalar C");
    extern __shared__ float4 smem_raw[];
    float *const sa = reinterpret_cast<float *>(smem_raw);
    float *const sb = sa + T::kBuffers * T::kStageA;
    if (sk.splits > 1)
        p = slice_of<kTransA, kTransB, kCluster>(p, sk);

    const int64_t tiles_m = (p.m + T::BM - 1) / T::BM;
    const int64_t tiles_n = (p.n + T::BN - 1) / T::BN;
    const TileCoord tc = tile_of_block(tiles_m, tiles_n);
    const int64_t m0 = tc.tm * T::BM, n0 = tc.tn * T::BN;
    const int rem_m = p.m - m0 < T::BM ? (int)(p.m - m0) : T::BM;
    const int rem_n = p.n - n0 < T::BN ? (int)(p.n - n0) : T::BN;
    if constexpr (kCluster) {
        if (threadIdx.x == 0) {  // read after the main loop's barriers
            int64_t *const origin = reinterpret_cast<int64_t *>(sa + T::kClusterStash / sizeof(float));
            origin[0] = m0;
            origin[1] = n0;
            reinterpret_cast<float *>(origin + 2)[0] = 1.0f;
        }
    }

    // In cluster form the launch decides for all slices (SplitK::ring_k), so
    // that the blocks of a cluster run the same loop; else each block. The
    // slice's own test, implied by sk.ring_k, is kept in the cluster form:
    // with it ptxas schedules the cluster kernels' ring loops better than
    // with sk.ring_k alone.
    const bool ring_k = ring_fits_k(p.k, 1, p.k, T::BK) && (!kCluster || sk.ring_k);
    multiply_tile<T, kTransA, kTransB, kAligned, kBranchFreeStep<T, kTransA, kTransB> && !kCluster>(
        p, m0, n0, rem_m, rem_n, ring_k, sa, sb, [&](int lm0, int ln0, const float (&acc)[T::TM][T::TN]) {
            if constexpr (kCluster) {  // the main loop's last barrier has freed the stages for the sums
                cluster_store_tile<T, kVecC>(p, sk, sa, lm0, ln0, acc);
                return;
            }
            if constexpr (kStaged) {  // through the stages, which the main loop's last barrier has freed
                store_tile_staged<T>(p.c + n0 * p.ldc + m0, p.ldc, sa, lm0, ln0, rem_m, rem_n, p.alpha, p.beta, acc);
            } else {
                float *c = p.c + (n0 + ln0) * p.ldc + m0 + lm0;
                store_tile<T, kVecC>(c, p.ldc, lm0, ln0, rem_m, rem_n, p.alpha, p.beta, acc);
            }
        });
}

}  // namespace kernels
}  // namespace tgemm
