// The tiled kernels' shape: a family's configuration (shapes.cuh) and the
// constants derived from it, computed once here for every level (loads, main
// loops, epilogues, launchers).
//
// A configuration names every knob:
//   BM, BN, BK        the block's tile of C (BM x BN) and its K step;
//   WM, WN            a warp's tile of C (8 x 4 lanes, each (WM/8) x (WN/4));
//   kMinBlocks        blocks per SM the launch bounds promise: 1 gives a
//                     thread up to 255 registers, 2 or more 128 or fewer;
//   kClusterForm      whether the family has the cluster form of split-K
//                     (false where its cluster kernels would spill);
//   kUnalignedUnroll  rows of a stage's BK the unaligned kernels unroll at a
//                     time (the aligned ones unroll all), chosen per family;
//   kAsyncStages      0 for two stages fed through registers; else the depth
//                     of a ring that cp.async copies fill straight from global
//                     memory, for families whose blocks walk only a few K
//                     steps and so cannot hide a load behind one step's FFMAs;
//   kWholeRing        0, or the depth of the ring through which blocks of
//                     whole tiles take their operands contiguous along M or N
//                     (multiply_tile_whole_ring); the other blocks keep the
//                     family's path;
//   kWholeRingSkip    transpose pairs (pair_bit) that keep the family's path
//                     although they could take the ring, where it was slower;
//   kBranchFreePairs  transpose pairs whose plain kernel walks blocks of whole
//                     tiles with no test or branch in the K step
//                     (multiply_tile), where that was faster.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace tgemm {
namespace kernels {

// The bit of a transpose pair in kWholeRingSkip and kBranchFreePairs.
constexpr unsigned pair_bit(bool trans_a, bool trans_b)
{
    return 1u << ((trans_a ? 2 : 0) + (trans_b ? 1 : 0));
}

template <class Config>
struct TileShape : Config {
    using Config::BM, Config::BN, Config::BK, Config::WM, Config::WN, Config::kMinBlocks;
    using Config::kAsyncStages, Config::kWholeRing;
    // A thread of a one-block-per-SM family has registers to spare (up to
    // 255); three paths need them and are taken only there: the loaders'
    // straight-line path for tiles wholly inside the matrix (at 128
    // registers it made some families spill and others slower), the
    // serpentine FFMA order (the others spill with it), and stream-K (its
    // kernels spill at 128 registers).
    static constexpr bool kWholePath = kMinBlocks == 1;
    static constexpr bool kSerpentine = kMinBlocks == 1;
    static constexpr bool kStreamK = kMinBlocks == 1;
    // Shared stages of each operand: the deeper ring, at least the register path's 2.
    static constexpr int kBuffers = std::max({2, kAsyncStages, kWholeRing});
    static constexpr int kLanesM = 8, kLanesN = 4;
    static constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN;
    static constexpr int kThreads = kWarpsM * kWarpsN * 32;
    static constexpr int TM = WM / kLanesM, TN = WN / kLanesN;  // per-lane C tile
    static constexpr int kSubM = TM / 4, kSubN = TN / 4;        // 4x4 sub-blocks per lane
    // The lane's columns whose old values of C the epilogue reads at once
    // (epilogue.cuh, store_tile): up to 32 values, whole columns.
    static constexpr int kEpilogueBatchCols = std::max(1, std::min(TN, 32 / TM));
    static constexpr int kStrideM = kLanesM * 4, kStrideN = kLanesN * 4;
    // Padding keeps rows 16-byte aligned and spreads the transposing stores
    // of K-contiguous operands over different banks.
    static constexpr int kLdsA = BM + 4, kLdsB = BN + 4;
    static constexpr int kStageA = BK * kLdsA, kStageB = BK * kLdsB;
    static constexpr size_t kSmemBytes = sizeof(float) * kBuffers * (kStageA + kStageB);
    // Cluster form of split-K: the stages, then the block's BM x BN sums, in
    // the same place; after them the tile's origin (two int64_t) and the
    // float 1 that the sums are scaled by on their way there (cluster_store_tile).
    static constexpr size_t kClusterStash =
        kSmemBytes > sizeof(float) * BM * BN ? kSmemBytes : sizeof(float) * BM * BN;
    static constexpr size_t kClusterSmemBytes = kClusterStash + 3 * sizeof(int64_t);

    static_assert(BM % WM == 0 && BN % WN == 0, "warps must tile the block");
    static_assert(TM % 4 == 0 && TN % 4 == 0, "lanes own whole 4x4 sub-blocks");
    static_assert(BK % 4 == 0, "K-contiguous loads move 4 elements of K");
    static_assert((BM * BK) % (4 * kThreads) == 0 && (BN * BK) % (4 * kThreads) == 0,
                  "every thread loads the same number of 4-element groups");
    static_assert(kAsyncStages == 0 || (kAsyncStages >= 2 && BK % 8 == 0 && BM % 4 == 0 && BN % 4 == 0),
                  "an async ring has 2 stages or more; K-contiguous copies go 8 K x 4 rows a warp");
};

}  // namespace kernels
}  // namespace tgemm
