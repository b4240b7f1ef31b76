// One configuration per tiled family of the registry (kernels/families.def):
// struct Tile<name> for TGEMM_TILED_FAMILY(name, ...), every knob named
// (shape.cuh says what each means; TileShape<Tile<name>> derives the rest).
// The generated kernels/tiled_<name>.cu builds the family from it.
#pragma once

#include "kernels/tiled/shape.cuh"

namespace tgemm {
namespace kernels {

// The large-square family. Blocks of whole tiles take their operands
// contiguous along M or N through a ring of 2 stages of copies; TN, with
// both operands along K, takes the branch-free K step instead.
struct Tile256x128x16 {
    static constexpr int BM = 256, BN = 128, BK = 16, WM = 128, WN = 32, kMinBlocks = 1;
    static constexpr bool kClusterForm = true;
    static constexpr int kUnalignedUnroll = 8, kAsyncStages = 0, kWholeRing = 2;
    static constexpr unsigned kWholeRingSkip = 0, kBranchFreePairs = pair_bit(true, false);
};

// The whole-tile ring as 256x128x16's, but at NN, where it was slower.
struct Tile256x128x8 {
    static constexpr int BM = 256, BN = 128, BK = 8, WM = 128, WN = 32, kMinBlocks = 1;
    static constexpr bool kClusterForm = true;
    static constexpr int kUnalignedUnroll = 8, kAsyncStages = 0, kWholeRing = 2;
    static constexpr unsigned kWholeRingSkip = pair_bit(false, false), kBranchFreePairs = 0;
};

struct Tile128x256x8 {
    static constexpr int BM = 128, BN = 256, BK = 8, WM = 64, WN = 64, kMinBlocks = 1;
    static constexpr bool kClusterForm = true;
    static constexpr int kUnalignedUnroll = 8, kAsyncStages = 0, kWholeRing = 2;
    static constexpr unsigned kWholeRingSkip = 0, kBranchFreePairs = 0;
};

struct Tile128x128x8 {
    static constexpr int BM = 128, BN = 128, BK = 8, WM = 64, WN = 32, kMinBlocks = 2;
    static constexpr bool kClusterForm = true;
    static constexpr int kUnalignedUnroll = 8, kAsyncStages = 0, kWholeRing = 0;
    static constexpr unsigned kWholeRingSkip = 0, kBranchFreePairs = 0;
};

struct Tile128x128x16 {
    static constexpr int BM = 128, BN = 128, BK = 16, WM = 64, WN = 32, kMinBlocks = 1;
    static constexpr bool kClusterForm = true;
    static constexpr int kUnalignedUnroll = 16, kAsyncStages = 0, kWholeRing = 2;
    static constexpr unsigned kWholeRingSkip = 0, kBranchFreePairs = 0;
};

// The 128x128x16 family's warps and K step on tiles of another aspect, for
// a C with one side of 33 to about 200 and the other long: 64 x 256 (and
// 256 x 64 below) fits such a side in one to three rows of blocks, where
// 128 x 128 tiles would leave up to half of each block outside C. Each
// warp's tile and shared-memory traffic are 128x128x16's; only the block's
// copies differ (320 values a K row instead of 256).
struct Tile64x256x16 {
    static constexpr int BM = 64, BN = 256, BK = 16, WM = 64, WN = 32, kMinBlocks = 1;
    static constexpr bool kClusterForm = true;
    static constexpr int kUnalignedUnroll = 16, kAsyncStages = 0, kWholeRing = 2;
    static constexpr unsigned kWholeRingSkip = 0, kBranchFreePairs = 0;
};

struct Tile256x64x16 {
    static constexpr int BM = 256, BN = 64, BK = 16, WM = 64, WN = 32, kMinBlocks = 1;
    static constexpr bool kClusterForm = true;
    static constexpr int kUnalignedUnroll = 16, kAsyncStages = 0, kWholeRing = 2;
    static constexpr unsigned kWholeRingSkip = 0, kBranchFreePairs = 0;
};

struct Tile128x64x8 {
    static constexpr int BM = 128, BN = 64, BK = 8, WM = 64, WN = 32, kMinBlocks = 4;
    static constexpr bool kClusterForm = true;
    static constexpr int kUnalignedUnroll = 8, kAsyncStages = 0, kWholeRing = 0;
    static constexpr unsigned kWholeRingSkip = 0, kBranchFreePairs = 0;
};

// No cluster form: its cluster kernels spill.
struct Tile64x128x8 {
    static constexpr int BM = 64, BN = 128, BK = 8, WM = 64, WN = 32, kMinBlocks = 4;
    static constexpr bool kClusterForm = false;
    static constexpr int kUnalignedUnroll = 8, kAsyncStages = 0, kWholeRing = 0;
    static constexpr unsigned kWholeRingSkip = 0, kBranchFreePairs = 0;
};

struct Tile64x64x8 {
    static constexpr int BM = 64, BN = 64, BK = 8, WM = 32, WN = 32, kMinBlocks = 4;
    static constexpr bool kClusterForm = true;
    static constexpr int kUnalignedUnroll = 8, kAsyncStages = 0, kWholeRing = 0;
    static constexpr unsigned kWholeRingSkip = 0, kBranchFreePairs = 0;
};

// The async ring's family: 4 stages of 16 K, so a block of a small product
// has its first three steps' copies in flight at once.
struct Tile64x64x16 {
    static constexpr int BM = 64, BN = 64, BK = 16, WM = 32, WN = 32, kMinBlocks = 4;
    static constexpr bool kClusterForm = true;
    static constexpr int kUnalignedUnroll = 16, kAsyncStages = 4, kWholeRing = 0;
    static constexpr unsigned kWholeRingSkip = 0, kBranchFreePairs = 0;
};

// Launch bounds of 16 blocks an SM, the residency the dispatcher plans for:
// a thread then keeps to 128 registers, which the epilogue's batch of old
// values of C would otherwise exceed in the unaligned kernels, costing a
// block an SM (bench/residency.py checks).
struct Tile32x32x8 {
    static constexpr int BM = 32, BN = 32, BK = 8, WM = 32, WN = 32, kMinBlocks = 16;
    static constexpr bool kClusterForm = true;
    static constexpr int kUnalignedUnroll = 8, kAsyncStages = 0, kWholeRing = 0;
    static constexpr unsigned kWholeRingSkip = 0, kBranchFreePairs = 0;
};

}  // namespace kernels
}  // namespace tgemm
