// The tiled kernels' main loops: the lane's share of one BM x BN tile of
// op(A) * op(B) over all of K, handed to an epilogue.
//   - multiply_tile: the register path (two stages fed through registers);
//     it sends a family with an async ring to multiply_tile_async, and blocks
//     of whole tiles of a family with a whole-tile ring to
//     multiply_tile_whole_ring;
//   - multiply_stage: the FFMAs of one stage.
// Every thread of the block takes part; the last barrier leaves the shared
// stages free for the epilogue. Edges come in as zeros (load.cuh).
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

#include "kernels/gemm_params.hpp"
#include "kernels/tiled/load.cuh"
#include "kernels/tiled/shape.cuh"

namespace tgemm {
namespace kernels {

// acc += the lane's share of sa * sb over one BK-deep stage, kUnroll rows
// of it unrolled at a time.
template <class T, int kUnroll = T::BK>
__device__ __forceinline__ void multiply_stage(const float *sa, const float *sb,
                                               float (&acc)[T::TM][T::TN])
{
#pragma unroll kUnroll
    for (int kk = 0; kk < T::BK; ++kk) {
        float a[T::TM], b[T::TN];
#pragma unroll
        for (int i = 0; i < T::kSubM; ++i) {
            const float4 t = *reinterpret_cast<const float4 *>(sa + kk * T::kLdsA + i * T::kStrideM);
            a[4 * i + 0] = t.x; a[4 * i + 1] = t.y; a[4 * i + 2] = t.z; a[4 * i + 3] = t.w;
        }
#pragma unroll
        for (int j = 0; j < T::kSubN; ++j) {
            const float4 t = *reinterpret_cast<const float4 *>(sb + kk * T::kLdsB + j * T::kStrideN);
            b[4 * j + 0] = t.x; b[4 * j + 1] = t.y; b[4 * j + 2] = t.z; b[4 * j + 3] = t.w;
        }
        // T::kSerpentine: each row of the products is walked in alternate
        // directions, so that consecutive FFMAs share an operand register
        // across the turn as well as along the row.
#pragma unroll
        for (int i = 0; i < T::TM; ++i)
#pragma unroll
            for (int jj = 0; jj < T::TN; ++jj) {
                const int j = T::kSerpentine && (i & 1) ? T::TN - 1 - jj : jj;
                acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
            }
    }
}

// Moves the operands to element k0 of K.
template <bool kTransA, bool kTransB>
__device__ __forceinline__ void advance_k(GemmParams &p, int64_t k0)
{
    p.a += kTransA ? k0 : k0 * p.lda;
    p.b += kTransB ? k0 * p.ldb : k0;
}

// The lane's first element in the block's tile, (lm0, ln0): its warp's
// corner plus the lane's 4 x 4 origin within the warp tile. Both main loops
// (multiply_tile and multiply_tile_async) hand it to the epilogue.
template <class T>
__device__ __forceinline__ void lane_origin(int &lm0, int &ln0)
{
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    lm0 = (warp % T::kWarpsM) * T::WM + (lane % T::kLanesM) * 4;
    ln0 = (warp / T::kWarpsM) * T::WN + (lane / T::kLanesM) * 4;
}

template <class T>
__device__ __forceinline__ void zero_accumulators(float (&acc)[T::TM][T::TN])
{
#pragma unroll
    for (int i = 0; i < T::TM; ++i)
#pragma unroll
        for (int j = 0; j < T::TN; ++j)
            acc[i][j] = 0.0f;
}

// multiply_tile for the families with an async ring (TileShape::kAsyncStages
// = S): the copies of step t + S - 1 are issued, into the stage that step t
// - 1 used, before step t is multiplied, so S - 1 steps of copies are in
// flight where the register path has one. One barrier a step: past it every
// thread's copies of step t are visible to all, and every thread is done
// with step t - 1's stage. A group is committed every step, empty or not, so
// the count to wait for is always S - 2.
template <class T, bool kTransA, bool kTransB, bool kAligned, class Epilogue>
__device__ __forceinline__ void multiply_tile_async(const GemmParams &p, int64_t m0, int64_t n0, int rem_m,
                                                    int rem_n, float *sa, float *sb, Epilogue &&epilogue)
{
    constexpr int S = T::kAsyncStages;
    AsyncLoader<T::BM, T::BK, T::kThreads, !kTransA, kAligned> la(kTransA ? p.a + m0 * p.lda : p.a + m0, p.lda);
    AsyncLoader<T::BN, T::BK, T::kThreads, kTransB, kAligned> lb(kTransB ? p.b + n0 : p.b + n0 * p.ldb, p.ldb);

    int lm0, ln0;
    lane_origin<T>(lm0, ln0);
    float acc[T::TM][T::TN];
    zero_accumulators<T>(acc);

    const int64_t k_tiles = (p.k + T::BK - 1) / T::BK;
    const auto copy_step = [&](int64_t t, int stage) {
        const int64_t left = p.k - t * T::BK;
        const int rem_k = left < T::BK ? (int)left : T::BK;
        la.copy(sa + stage * T::kStageA, rem_m, rem_k);
        lb.copy(sb + stage * T::kStageB, rem_n, rem_k);
    };
#pragma unroll
    for (int t = 0; t < S - 1; ++t) {
        if (t < k_tiles)
            copy_step(t, t);
        copy_async_commit();
    }
    int stage = 0, next = S - 1;  // t % S and (t + S - 1) % S
    for (int64_t t = 0; t < k_tiles; ++t) {
        copy_async_wait<S - 2>();
        __syncthreads();
        if (t + S - 1 < k_tiles)
            copy_step(t + S - 1, next);
        copy_async_commit();
        multiply_stage<T, kAligned ? T::BK : T::kUnalignedUnroll>(sa + stage * T::kStageA + lm0,
                                                                 sb + stage * T::kStageB + ln0, acc);
        stage = stage + 1 == S ? 0 : stage + 1;
        next = next + 1 == S ? 0 : next + 1;
    }
    __syncthreads();  // the stages are free for the epilogue; only empty copy groups are left
    epilogue(lm0, ln0, acc);
}

// multiply_tile for a block of whole tiles (aligned, K a multiple of BK,
// kWholeRingMinSteps steps of it or more) of a family with
// TileShape::kWholeRing = S, for the transpose pairs of kWholeRingStep. The
// K step is one basic block, with no test, branch or zero fill, so ptxas
// spreads the loads among the FFMAs (the register path's step is several
// blocks: its loads, with their edge tests, and its stores run apart from
// the FFMAs, where both warps of a scheduler reach them at once after the
// barrier). An operand contiguous along M (N) goes straight from global to
// shared memory, 16 bytes a copy, through a ring of S stages of cp.async
// copies, S - 1 steps in flight; a step copies the next tile where there is
// one. An operand contiguous along K goes through registers, as in
// multiply_tile, to be transposed on its way to its stage: 4-byte copies
// of such an operand through the ring were slower.
template <class T, bool kTransA, bool kTransB, class Epilogue>
__device__ __forceinline__ void multiply_tile_whole_ring(const GemmParams &p, int64_t m0, int64_t n0, float *sa,
                                                         float *sb, Epilogue &&epilogue)
{
    constexpr int S = T::kWholeRing;
    constexpr bool kRingA = !kTransA, kRingB = kTransB;  // the operands contiguous along M or N
    const float *const a0 = kTransA ? p.a + m0 * p.lda : p.a + m0;
    const float *const b0 = kTransB ? p.b + n0 : p.b + n0 * p.ldb;
    // One loader of each operand is used, the other left to dead-code elimination.
    AsyncLoader<T::BM, T::BK, T::kThreads, true, true> ra(a0, p.lda);
    AsyncLoader<T::BN, T::BK, T::kThreads, true, true> rb(b0, p.ldb);
    TileLoader<T::BM, T::BK, T::kThreads, false, true, true> la(a0, p.lda, T::BM);
    TileLoader<T::BN, T::BK, T::kThreads, false, true, true> lb(b0, p.ldb, T::BN);

    int lm0, ln0;
    lane_origin<T>(lm0, ln0);
    float acc[T::TM][T::TN];
    zero_accumulators<T>(acc);

    const int64_t k_tiles = p.k / T::BK;
    // The ring's first S - 1 tiles; the registers' first tile, stored. A
    // loader moves on only to a tile that exists, so no load or copy leaves
    // the operand.
#pragma unroll
    for (int t = 0; t < S - 1; ++t) {
        if (kRingA)
            ra.copy_whole(sa + t * T::kStageA, t + 1 < k_tiles, true);
        if (kRingB)
            rb.copy_whole(sb + t * T::kStageB, t + 1 < k_tiles, true);
        copy_async_commit();
    }
    if (!kRingA) {
        la.load_whole(1 < k_tiles);
        la.store(sa);
    }
    if (!kRingB) {
        lb.load_whole(1 < k_tiles);
        lb.store(sb);
    }
    int stage = 0, next = S - 1;  // t % S and (t + S - 1) % S
    for (int64_t t = 0; t < k_tiles; ++t) {
        copy_async_wait<S - 2>();
        __syncthreads();
        const int after = stage + 1 == S ? 0 : stage + 1;  // (t + 1) % S
        // The copies of tile t + S - 1 and the loads of tile t + 1, issued
        // only where those tiles exist (predicated: the step stays one
        // basic block). Copying the last tile again in their place would
        // make every block wait for those copies at its end.
        const bool ring_tile = t + S - 1 < k_tiles, reg_tile = t + 1 < k_tiles;
        if (kRingA)
            ra.copy_whole(sa + next * T::kStageA, t + S < k_tiles, ring_tile);
        else
            la.load_whole(t + 2 < k_tiles, reg_tile);
        if (kRingB)
            rb.copy_whole(sb + next * T::kStageB, t + S < k_tiles, ring_tile);
        else
            lb.load_whole(t + 2 < k_tiles, reg_tile);
        copy_async_commit();
        multiply_stage<T>(sa + stage * T::kStageA + lm0, sb + stage * T::kStageB + ln0, acc);
        if (!kRingA)
            la.store(sa + after * T::kStageA);
        if (!kRingB)
            lb.store(sb + after * T::kStageB);
        stage = after;
        next = next + 1 == S ? 0 : next + 1;
    }
    __syncthreads();  // every thread is done with the stages (no copies are left in flight)
    epilogue(lm0, ln0, acc);
}

// Whether the kernels of this tile shape and transpose pair walk the K
// steps of blocks of whole tiles through the ring (multiply_tile_whole_ring):
// where the family has one (TileShape::kWholeRing), an operand is
// contiguous along M or N, and the family does not skip the pair
// (TileShape::kWholeRingSkip). TN, with both operands along K, gains
// nothing from the ring (the branch-free step below instead).
template <class T, bool kTransA, bool kTransB>
constexpr bool kWholeRingStep = T::kWholeRing > 0 && (!kTransA || kTransB) &&
                                (T::kWholeRingSkip & pair_bit(kTransA, kTransB)) == 0;

// Whether the plain kernel of this tile shape and transpose pair walks the
// K steps of a block of whole tiles (aligned, K a multiple of BK) with no
// test or branch in the step (multiply_tile): the pairs the family names
// in TileShape::kBranchFreePairs, where it was faster. ptxas schedules each
// kernel's loop its own way, so the choice is made per pair.
template <class T, bool kTransA, bool kTransB>
constexpr bool kBranchFreeStep = (T::kBranchFreePairs & pair_bit(kTransA, kTransB)) != 0;

// The lane's elements of op(A)(m0 .., :) * op(B)(:, n0 ..) over all p.k of
// K, for the tile at (m0, n0) of which rem_m x rem_n elements exist, handed
// to epilogue(lm0, ln0, acc) with (lm0, ln0) the lane's first element in the
// tile. sa and sb are the two shared stages of each operand; every thread of
// the block takes part, and the main loop's last barrier leaves the stages
// free for the epilogue. kBranchFree: see kBranchFreeStep. ring_k: whether
// p.k suits the whole-tile ring (SplitK::ring_k, ring_fits_k).
template <class T, bool kTransA, bool kTransB, bool kAligned, bool kBranchFree = false, class Epilogue>
__device__ __forceinline__ void multiply_tile(const GemmParams &p, int64_t m0, int64_t n0, int rem_m, int rem_n,
                                              bool ring_k, float *sa, float *sb, Epilogue &&epilogue)
{
    // op(A)(i, l) is a[i + l * lda] without transpose, a[l + i * lda] with it;
    // op(B)(l, j) is b[l + j * ldb] without transpose, b[j + l * ldb] with it.
    if constexpr (T::kAsyncStages > 0) {
        multiply_tile_async<T, kTransA, kTransB, kAligned>(p, m0, n0, rem_m, rem_n, sa, sb, epilogue);
    } else {
        if constexpr (kWholeRingStep<T, kTransA, kTransB> && kAligned) {
            if (rem_m == T::BM && rem_n == T::BN && ring_k) {
                multiply_tile_whole_ring<T, kTransA, kTransB>(p, m0, n0, sa, sb, epilogue);
                return;
            }
        }
        const float *a0 = kTransA ? p.a + m0 * p.lda : p.a + m0;
        const float *b0 = kTransB ? p.b + n0 : p.b + n0 * p.ldb;
        constexpr bool kWhole = T::kWholePath;
        TileLoader<T::BM, T::BK, T::kThreads, !kTransA, kAligned, kWhole> la(a0, p.lda, rem_m);
        TileLoader<T::BN, T::BK, T::kThreads, kTransB, kAligned, kWhole> lb(b0, p.ldb, rem_n);

        int lm0, ln0;
        lane_origin<T>(lm0, ln0);
        float acc[T::TM][T::TN];
        zero_accumulators<T>(acc);

        const int64_t k_tiles = (p.k + T::BK - 1) / T::BK;
        int rem_k = p.k < T::BK ? (int)p.k : T::BK;
        la.load(rem_m, rem_k);
        lb.load(rem_n, rem_k);
        la.store(sa);
        lb.store(sb);
        __syncthreads();

        constexpr int kUnroll = kAligned ? T::BK : T::kUnalignedUnroll;
        if (kBranchFree && kWhole && kAligned && rem_m == T::BM && rem_n == T::BN && p.k % T::BK == 0 &&
            k_tiles >= 2) {
            // Every step loads the next tile, the last one its own tile again
            // (so the loads stay inside the matrix, and one loop body serves
            // all steps: a last step peeled off was slower where it ran cold).
            int stage = 0;
            for (int64_t t = 0; t < k_tiles; ++t) {
                const bool advance = t + 2 < k_tiles;
                la.load_whole(advance);
                lb.load_whole(advance);
                multiply_stage<T, kUnroll>(sa + stage * T::kStageA + lm0, sb + stage * T::kStageB + ln0, acc);
                la.store(sa + (stage ^ 1) * T::kStageA);
                lb.store(sb + (stage ^ 1) * T::kStageB);
                __syncthreads();
                stage ^= 1;
            }
            epilogue(lm0, ln0, acc);
            return;
        }

        for (int64_t t = 0; t < k_tiles; ++t) {
            const int stage = (int)(t & 1);
            const bool more = t + 1 < k_tiles;
            if (more) {
                const int64_t left = p.k - (t + 1) * T::BK;
                rem_k = left < T::BK ? (int)left : T::BK;
                la.load(rem_m, rem_k);
                lb.load(rem_n, rem_k);
            }
            multiply_stage<T, kUnroll>(sa + stage * T::kStageA + lm0, sb + stage * T::kStageB + ln0, acc);
            if (more) {
                la.store(sa + (stage ^ 1) * T::kStageA);
                lb.store(sb + (stage ^ 1) * T::kStageB);
            }
            __syncthreads();
        }
        epilogue(lm0, ln0, acc);
    }
}

}  // namespace kernels
}  // namespace tgemm
