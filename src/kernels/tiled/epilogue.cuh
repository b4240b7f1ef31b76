// The tiled kernels' epilogues: a lane's accumulators to C.
//   - store_tile: C := alpha * acc + beta * C for the lane's elements inside
//     the matrix (beta == 0 never reads C), 128-bit stores where kVec, the
//     old values of C read in batches;
//   - store_tile_staged: store_tile for a C without 16-byte accesses, the
//     lane's sums passed through shared memory so that each warp access to
//     C is 128 contiguous bytes of one column;
//   - cluster_store_tile: the cluster form of split-K, the slices of one
//     tile added in order through distributed shared memory, then C;
//   - load_c4 / put_c4: four rows of one column, the old values read in
//     one step and the results stored in another, for the epilogues that
//     read a batch of old values before storing any; store_c4: four rows
//     where beta == 0; epilogue_value: one element, the arithmetic all of
//     them share.
// Edges: rows from rem_m and columns from rem_n on do not exist and are
// neither read nor written.
#pragma once

#include <cstdint>
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include "kernels/gemm_params.hpp"

namespace tgemm {
namespace kernels {

// Writes r[0..3] (already times alpha) to rows lm to lm + 3 of one column of
// C at p, never reading C (beta == 0); rows from rem_m on do not exist.
template <bool kVec>
__device__ __forceinline__ void store_c4(float *p, const float (&r)[4], int lm, int rem_m)
{
    if (kVec && lm + 3 < rem_m) {
        *reinterpret_cast<float4 *>(p) = make_float4(r[0], r[1], r[2], r[3]);
    } else {
#pragma unroll
        for (int ii = 0; ii < 4; ++ii) {
            if (lm + ii < rem_m)
                p[ii] = r[ii];
        }
    }
}

// The old values of rows lm to lm + 3 of one column of C at p (rows from
// rem_m on do not exist and read as 0), for put_c4.
template <bool kVec>
__device__ __forceinline__ float4 load_c4(const float *p, int lm, int rem_m)
{
    if (kVec && lm + 3 < rem_m)
        return *reinterpret_cast<const float4 *>(p);
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    v.x = lm + 0 < rem_m ? p[0] : 0.0f;
    v.y = lm + 1 < rem_m ? p[1] : 0.0f;
    v.z = lm + 2 < rem_m ? p[2] : 0.0f;
    v.w = lm + 3 < rem_m ? p[3] : 0.0f;
    return v;
}

// One element of C from r (already times alpha) and its old value loaded
// before (not used when beta == 0): the one rounding every epilogue of the
// tiled and rank-k kernels applies, so that their results agree bit for bit.
__device__ __forceinline__ float epilogue_value(float r, float old, float beta)
{
    return beta != 0.0f ? fmaf(beta, old, r) : r;
}

// Writes r[0..3] (already times alpha) plus beta times the old values of C
// loaded before (load_c4; not used when beta == 0) to rows lm to lm + 3 of
// one column of C at p; rows from rem_m on do not exist.
template <bool kVec>
__device__ __forceinline__ void put_c4(float *p, const float (&r)[4], const float (&old)[4], int lm, int rem_m,
                                       float beta)
{
    float out[4];
#pragma unroll
    for (int ii = 0; ii < 4; ++ii)
        out[ii] = epilogue_value(r[ii], old[ii], beta);
    if (kVec && lm + 3 < rem_m) {
        *reinterpret_cast<float4 *>(p) = make_float4(out[0], out[1], out[2], out[3]);
    } else {
#pragma unroll
        for (int ii = 0; ii < 4; ++ii)
            if (lm + ii < rem_m)
                p[ii] = out[ii];
    }
}

// store_tile where beta == 0: alpha * acc, one 4-row group at a time, C
// never read.
template <class T, bool kVec>
__device__ __forceinline__ void store_tile_scaled(float *c, int64_t ldc, int lm0, int ln0, int rem_m, int rem_n,
                                                  float alpha, const float (&acc)[T::TM][T::TN])
{
#pragma unroll
    for (int j = 0; j < T::kSubN; ++j) {
#pragma unroll
        for (int jj = 0; jj < 4; ++jj) {
            const int ln = ln0 + j * T::kStrideN + jj;
            if (ln >= rem_n)
                continue;
            float *col = c + (int64_t)(j * T::kStrideN + jj) * ldc;
#pragma unroll
            for (int i = 0; i < T::kSubM; ++i) {
                const int lm = lm0 + i * T::kStrideM;
                float r[4];
#pragma unroll
                for (int ii = 0; ii < 4; ++ii)
                    r[ii] = alpha * acc[4 * i + ii][4 * j + jj];
                store_c4<kVec>(col + i * T::kStrideM, r, lm, rem_m);
            }
        }
    }
}

// C := alpha * acc + beta * C for the lane's elements that lie inside the
// matrix. c points at the lane's first element (row lm0, column ln0 of the
// block); rem_m x rem_n elements of the block's tile exist. Where beta !=
// 0 the lane's columns go in batches of kEpilogueBatchCols whose old values
// are all requested before the first is used: the compiler cannot move a
// read of C above an earlier store to C (it cannot tell that they never
// overlap), so read one at a time, each store waiting on its own read, the
// lane's reads' latencies would add up (a lone block of a large tile has
// nothing else to run meanwhile).
template <class T, bool kVec>
__device__ __forceinline__ void store_tile(float *c, int64_t ldc, int lm0, int ln0,
                                           int rem_m, int rem_n, float alpha, float beta,
                                           const float (&acc)[T::TM][T::TN])
{
    if (beta == 0.0f) {
        store_tile_scaled<T, kVec>(c, ldc, lm0, ln0, rem_m, rem_n, alpha, acc);
        return;
    }
    // The lane's column q (0 .. TN - 1) is column (q / 4) * kStrideN + q % 4 of its tile.
    constexpr int kBatchCols = T::kEpilogueBatchCols;
    static_assert(T::TN % kBatchCols == 0, "whole batches of the lane's columns");
#pragma unroll
    for (int q0 = 0; q0 < T::TN; q0 += kBatchCols) {
        float old[kBatchCols][T::kSubM][4];
#pragma unroll
        for (int b = 0; b < kBatchCols; ++b) {
            const int q = q0 + b, off = (q / 4) * T::kStrideN + q % 4;
#pragma unroll
            for (int i = 0; i < T::kSubM; ++i) {
                float4 o = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                if (ln0 + off < rem_n)
                    o = load_c4<kVec>(c + (int64_t)off * ldc + i * T::kStrideM, lm0 + i * T::kStrideM, rem_m);
                old[b][i][0] = o.x;
                old[b][i][1] = o.y;
                old[b][i][2] = o.z;
                old[b][i][3] = o.w;
            }
        }
#pragma unroll
        for (int b = 0; b < kBatchCols; ++b) {
            const int q = q0 + b, off = (q / 4) * T::kStrideN + q % 4;
            if (ln0 + off >= rem_n)
                continue;
#pragma unroll
            for (int i = 0; i < T::kSubM; ++i) {
                float r[4];
#pragma unroll
                for (int ii = 0; ii < 4; ++ii)
                    r[ii] = alpha * acc[4 * i + ii][q];
                put_c4<kVec>(c + (int64_t)off * ldc + i * T::kStrideM, r, old[b][i], lm0 + i * T::kStrideM, rem_m,
                             beta);
            }
        }
    }
}

// Whether the family's plain kernels write a C without 16-byte accesses
// through store_tile_staged: not the 32x32 family (one warp a block, the
// planner's choice for a small m x n cut into many slices of K), whose
// problems ran slower staged: on tiles of a few rows or columns the
// staging costs more than the partial writes it saves.
template <class T>
constexpr bool kStagedEpilogue = T::BM > 32;

// And only where the launch writes this many elements of C (or of the
// split-K workspace) or more (the launcher picks the kernel): below it the
// problem is a wave of blocks or less, whose epilogues' round trips through
// shared memory nothing hides, and such problems ran slower staged.
constexpr int64_t kStagedMinElements = int64_t{1} << 19;

// Floats of shared memory store_tile_staged takes: each warp's slice of 4
// columns by WM rows (a column kStagedLd apart, 16-byte aligned).
template <class T>
constexpr int kStagedLd = T::WM + 4;
template <class T>
constexpr int kStagedFloats = T::kThreads / 32 * 4 * kStagedLd<T>;

// store_tile for a C without 16-byte accesses (kVec false), where a lane's
// 4 consecutive rows would make each warp access 4 bytes of every 16 over
// 512 bytes, and L2 take four partial sector writes for each full one.
// The warp's tile goes out one slice at a time: the 4 columns that its 4
// lanes along N hold at the same place (column 16 j + jj of each lane's),
// all WM rows. Each lane puts its rows of the slice (times alpha) into the
// warp's part of stage, then takes rows lane + 32 r of each of the slice's
// columns, so that a warp access to C is 32 consecutive rows. Where beta
// != 0 the old values of a batch of slices (up to 32 a lane) are all
// requested before the first slice is staged. The arithmetic is
// store_tile's. c points at the block's first element (row 0, column 0 of
// its tile); stage holds kStagedFloats<T> and no thread reads it any more
// (the main loop's last barrier).
template <class T>
__device__ __forceinline__ void store_tile_staged(float *c, int64_t ldc, float *stage, int lm0, int ln0, int rem_m,
                                                  int rem_n, float alpha, float beta, const float (&acc)[T::TM][T::TN])
{
    constexpr int kLd = kStagedLd<T>, kRows = T::WM / 32;  // rows of a slice column a lane takes: kRows
    static_assert(T::WM % 32 == 0, "a warp's rows in whole groups of 32");
    static_assert(sizeof(float) * kStagedFloats<T> <= T::kSmemBytes, "the slices fit in the stages");
    const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
    const int lane_m = lane % T::kLanesM, lane_n = lane / T::kLanesM;
    float *const slab = stage + warp * 4 * kLd;
    // The warp's corner in the tile, and the lane's rows and columns of it
    // on the way out: rows wm0 + lane + 32 r, where 32 r < left.
    const int wm0 = lm0 - 4 * lane_m, wn0 = ln0 - 4 * lane_n;
    const int left = rem_m - wm0 - lane;
    float *const out = c + static_cast<int64_t>(wn0) * ldc + wm0 + lane;
    // Slice q (0 .. TN - 1) is column (q / 4) * kStrideN + q % 4 of each
    // lane's; its column u (0 .. 3) is the warp tile's column 4 u + that.
    // Slices whose old values are requested together: store_tile's batch,
    // halved in the families of 128 registers a thread (with the whole
    // batch the 64x64 families spilled).
    constexpr int kBatch = T::kMinBlocks == 1 || T::kEpilogueBatchCols == 1 ? T::kEpilogueBatchCols
                                                                             : T::kEpilogueBatchCols / 2;
    static_assert(T::TN % kBatch == 0, "whole batches of slices");
#pragma unroll
    for (int q0 = 0; q0 < T::TN; q0 += kBatch) {
        float old[kBatch][4][kRows];
        if (beta != 0.0f) {
#pragma unroll
            for (int b = 0; b < kBatch; ++b) {
                const int q = q0 + b, col = (q / 4) * T::kStrideN + q % 4;
#pragma unroll
                for (int u = 0; u < 4; ++u)
#pragma unroll
                    for (int r = 0; r < kRows; ++r)
                        old[b][u][r] = wn0 + 4 * u + col < rem_n && 32 * r < left
                                           ? out[static_cast<int64_t>(4 * u + col) * ldc + 32 * r]
                                           : 0.0f;
            }
        }
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
            const int q = q0 + b, col = (q / 4) * T::kStrideN + q % 4;
            if (wn0 + col >= rem_n)  // none of the slice's columns exists (the same for the whole warp)
                continue;
#pragma unroll
            for (int i = 0; i < T::kSubM; ++i)
                *reinterpret_cast<float4 *>(slab + lane_n * kLd + 4 * lane_m + i * T::kStrideM) =
                    make_float4(alpha * acc[4 * i][q], alpha * acc[4 * i + 1][q], alpha * acc[4 * i + 2][q],
                                alpha * acc[4 * i + 3][q]);
            __syncwarp();
#pragma unroll
            for (int u = 0; u < 4; ++u) {
                if (wn0 + 4 * u + col >= rem_n)
                    continue;
#pragma unroll
                for (int r = 0; r < kRows; ++r) {
                    if (32 * r >= left)
                        continue;
                    const float v = slab[u * kLd + lane + 32 * r];
                    out[static_cast<int64_t>(4 * u + col) * ldc + 32 * r] = epilogue_value(v, old[b][u][r], beta);
                }
            }
            __syncwarp();  // the warp has read the slice before the next overwrites it
        }
    }
}

// Cluster form of split-K (SplitK::cluster): the sk.splits blocks of one
// tile, one per K slice, form a cluster along y. Each block leaves its raw
// sums in its own shared memory (part: the BM x BN tile, column-major, ld
// BM); after a cluster barrier, each finishes a share of the tile's 4-row
// pieces by adding all blocks' sums in slice (cluster rank) order, as
// splitk_reduce adds the workspace slices, so either form gives the same
// bits, and writes C. The second barrier keeps every block's shared memory
// alive until the others have read it.
template <class T, bool kVec>
__device__ __forceinline__ void cluster_store_tile(const GemmParams &p, const SplitK &sk, float *part, int lm0,
                                                   int ln0, const float (&acc)[T::TM][T::TN])
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    namespace cg = cooperative_groups;
    // The tile's origin and a 1.0f, left in shared memory by the kernel's
    // start rather than kept in registers through the main loop.
    const int64_t *const origin = reinterpret_cast<const int64_t *>(part + T::kClusterStash / sizeof(float));
    // The raw sums leave through store_tile as unit * acc, with unit a 1.0f
    // the compiler cannot see (read from shared memory): exact, and the
    // products are fresh registers. Storing acc itself as float4 would make
    // ptxas keep each 4-row group of accumulators in 4 consecutive
    // registers, and the main loop would suffer register-bank conflicts
    // among its FFMA operands.
    const float unit = reinterpret_cast<const float *>(origin + 2)[0];
    store_tile<T, true>(part + ln0 * T::BM + lm0, T::BM, lm0, ln0, T::BM, T::BN, unit, 0.0f, acc);
    cg::cluster_group cluster = cg::this_cluster();
    cluster.sync();
    const int64_t m0 = origin[0], n0 = origin[1];
    const int rem_m = p.m - m0 < T::BM ? (int)(p.m - m0) : T::BM;
    const int rem_n = p.n - n0 < T::BN ? (int)(p.n - n0) : T::BN;
    float *const c = p.c + n0 * p.ldc + m0;
    constexpr int kQuadsM = T::BM / 4, kQuads = kQuadsM * T::BN;
    const int n = sk.splits, rank = static_cast<int>(cluster.block_rank());
    const int per = (kQuads + n - 1) / n;
    const int end = (rank + 1) * per < kQuads ? (rank + 1) * per : kQuads;
    const float4 *src[kTiledMaxCluster];
#pragma unroll
    for (int s = 0; s < kTiledMaxCluster; ++s)
        src[s] = cluster.map_shared_rank(reinterpret_cast<const float4 *>(part), s < n ? s : 0);
    // Each thread takes kBatch of its share's 4-row pieces at a time: every
    // piece's slices, then every piece's old C, are requested before the
    // first store, so the reads' latencies overlap instead of adding up (the
    // compiler cannot move a read above an earlier store to C).
    constexpr int kBatch = 4;
    for (int q0 = rank * per + static_cast<int>(threadIdx.x); q0 < end; q0 += kBatch * T::kThreads) {
        float4 sum[kBatch], old[kBatch];
        bool live[kBatch];
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
            const int q = q0 + b * T::kThreads, col = q / kQuadsM, row = (q % kQuadsM) * 4;
            live[b] = q < end && col < rem_n && row < rem_m;
            sum[b] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (!live[b])
                continue;
            float4 v[kTiledMaxCluster];
#pragma unroll
            for (int s = 0; s < kTiledMaxCluster; ++s)
                if (s < n)
                    v[s] = src[s][q];
            sum[b] = v[0];
#pragma unroll
            for (int s = 1; s < kTiledMaxCluster; ++s) {
                if (s < n) {
                    sum[b].x += v[s].x;
                    sum[b].y += v[s].y;
                    sum[b].z += v[s].z;
                    sum[b].w += v[s].w;
                }
            }
        }
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
            const int q = q0 + b * T::kThreads, col = q / kQuadsM, row = (q % kQuadsM) * 4;
            old[b] = p.beta != 0.0f && live[b] ? load_c4<kVec>(c + col * p.ldc + row, row, rem_m)
                                               : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
            if (!live[b])
                continue;
            const int q = q0 + b * T::kThreads, col = q / kQuadsM, row = (q % kQuadsM) * 4;
            const float r[4] = {p.alpha * sum[b].x, p.alpha * sum[b].y, p.alpha * sum[b].z, p.alpha * sum[b].w};
            const float o[4] = {old[b].x, old[b].y, old[b].z, old[b].w};
            put_c4<kVec>(c + col * p.ldc + row, r, o, row, rem_m, p.beta);
        }
    }
    cluster.sync();
#else
    // Code without clusters (compute_80 PTX) is never sent a cluster launch
    // (prepare_tiled checks); were it, stop rather than leave C unwritten.
    (void)p, (void)part, (void)lm0, (void)ln0, (void)acc;
    if (sk.cluster)
        __trap();
#endif
}

}  // namespace kernels
}  // namespace tgemm
