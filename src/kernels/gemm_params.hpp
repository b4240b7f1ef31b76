// What the kernels take beside the problem (GemmParams, core/problem.hpp):
// split-K, stream-K and the rules that both the kernels and the planners
// apply to them (plain C++, host and device).
#pragma once

#include <cstdint>

#include "core/problem.hpp"

namespace tgemm {

// Split-K: slice s of `splits` computes op(A)(:, K_s) * op(B)(K_s, :) over
// K_s = [s * k_chunk, min(k, (s + 1) * k_chunk)) and stores the raw sums in
// work + s * m * n (column-major, ld = m); a reduction then forms
// C = alpha * sum_s + beta * C, adding the slices in order 0, 1, ... so the
// result does not depend on scheduling.
//
// Cluster form (sm_90 and later, tiled and streaming kernels): the `splits`
// blocks of one piece of C form a thread-block cluster along y; each keeps
// its raw sums in its own shared memory and, after a cluster barrier, each
// finishes a share of the piece by adding all blocks' sums in slice order
// through distributed shared memory: the same additions as the reduction
// kernel, without the workspace or the second launch.
// Split-K slices a tiled launch may join in one cluster, at most (the
// portable cluster size).
constexpr int kTiledMaxCluster = 8;

// Stream-K (tiled families): the last tiles of the raster order, sk_tiles of
// them, are shared out by K steps over `ctas` blocks, each taking an equal
// run of the sk_tiles * iters steps in tile-major order, so that no SM idles
// in a last, partial wave; the first dp_tiles tiles run whole, one block
// each, in a second launch. A block whose run covers only part of a tile
// leaves its raw sums in its workspace slot (0 for the part its run starts
// with, 1 for the part it ends with); the block that finishes a tile's parts
// last (arrivals[tile], counted with an atomic) adds the parts in K order,
// so the result does not depend on which block comes last.
struct StreamK {
    int64_t dp_tiles = 0;  // tiles [0, dp_tiles) run whole (plain kernel)
    int64_t sk_tiles = 0;  // tiles [dp_tiles, dp_tiles + sk_tiles) are shared out
    int64_t iters = 0;     // K steps per tile: ceil(k / BK)
    int ctas = 0;          // stream-K blocks, 1 <= ctas <= sk_tiles * iters
    float *work = nullptr;     // 2 * ctas slots of BM * BN floats
    int *arrivals = nullptr;   // sk_tiles counters, zero at launch
};

#if defined(__CUDACC__)
#define TGEMM_HOST_DEVICE __host__ __device__
#else
#define TGEMM_HOST_DEVICE
#endif

// The first step (over the sk_tiles * iters) of stream-K block c's run; the
// run ends where block c + 1's begins.
TGEMM_HOST_DEVICE inline int64_t streamk_begin(const StreamK &sk, int64_t c)
{
    return c * (sk.sk_tiles * sk.iters) / sk.ctas;
}

// The block whose run holds step x.
TGEMM_HOST_DEVICE inline int64_t streamk_owner(const StreamK &sk, int64_t x)
{
    return ((x + 1) * sk.ctas - 1) / (sk.sk_tiles * sk.iters);
}

// The workspace slot that block c left its part of tile u in: 0 when its run
// starts inside or at the start of u (the part is its run's first), else 1.
TGEMM_HOST_DEVICE inline int streamk_slot(const StreamK &sk, int64_t c, int64_t u)
{
    return streamk_begin(sk, c) >= u * sk.iters ? 0 : 1;
}

struct SplitK {
    int splits = 1;        // 1: no split, the kernel writes C itself
    int64_t k_chunk = 0;   // multiple of the kernel's K step
    float *work = nullptr;  // the slices (not used in cluster form)
    bool cluster = false;  // cluster form; splits is the cluster size
    bool ring_k = false;   // tiled kernels in cluster form: ring_fits_k of the launch
};

// The fewest K steps a block takes the whole-tile ring for
// (multiply_tile_whole_ring, kernels/tiled/mainloop.cuh): the ring pays
// only past about 16 steps; below, its start costs more than it gains.
constexpr int64_t kWholeRingMinSteps = 16;

// Whether a launch's blocks of whole tiles may take the whole-tile ring as
// far as K goes: every slice of K (the last is the shortest) a multiple of
// the family's K step bk, and kWholeRingMinSteps steps of it or more.
// In cluster form it is decided for the launch, not for each slice, so
// that the blocks of one tile's slices run the same loop: a cluster whose
// slices ran different loops waited for the slowest, and was slower than
// with neither slice on the ring. Through the workspace the mix costs
// nothing.
TGEMM_HOST_DEVICE inline bool ring_fits_k(int64_t k, int splits, int64_t k_chunk, int64_t bk)
{
    const int64_t shortest = splits > 1 ? k - (splits - 1) * k_chunk : k;
    return k % bk == 0 && shortest >= kWholeRingMinSteps * bk;
}

}  // namespace tgemm
