// How a product on host operands is spread over several GPUs
// (TGEMM_DEVICES): C is cut into a grid of blocks, each block a product of
// its own (the rows of op(A) and the columns of op(B) it needs, all of K)
// that one GPU runs through the host-operand pipeline; workers, one per
// listed device, take blocks from a shared queue until none is left, so a
// faster GPU takes more of them. Pure arithmetic, no CUDA: driver/spread.cpp
// runs a plan, tests/test_spread_plan.cpp checks the plans.
//
// Each block's A rows and B columns cross that GPU's link, and its C once;
// more blocks balance better but move more of A and B. The grid is the one
// a simple cost model says finishes first: a block takes the longer of its
// multiply and its copies, plus a fixed cost (planning, the first slice's
// wait, the last piece of C's copy out); the workers run ceil(blocks /
// workers) rounds of blocks; a worker slower than the others delays the end
// by a fraction (kStragglerShare) of one block, so that smaller blocks pay
// where the multiply is long. Pageable operands pass through host staging
// threads that all GPUs share, so the host copy rate bounds a pageable call
// however many GPUs run it.
//
// Where blocks can share panels (SpreadRequest::share), only grids of one
// round (a block per worker) are taken where C has room for one (and, under
// auto, where one of them pays): their
// blocks load a share of A and B from the host and copy the rest from each
// other, start as soon as the first slices arrive and wait for none after,
// which more rounds of smaller unshared blocks do not match.
#pragma once

#include <cstdint>

#include "driver/host_plan.hpp"

namespace tgemm {

// A block's sides are at least this (smaller products stay on one GPU) and
// block edges fall on multiples of kSpreadAlign where the sizes allow.
constexpr int64_t kSpreadMinSide = 256;
constexpr int64_t kSpreadAlign = 128;
// Blocks per worker the grid may have at most.
constexpr int kSpreadMaxBlocksPerWorker = 4;

// The model's rates and costs. Link rates are per GPU over pinned memory
// (each GPU has its own link, though not all of its rate when all GPUs copy
// at once); the pageable rate is the host's, shared by all GPUs. The multiply runs at kSpreadFfmaShare of the FP32 peak that
// the caller gives.
constexpr double kSpreadLinkIn = 30e9;     // bytes/s, host to device, pinned
constexpr double kSpreadLinkOut = 20e9;    // bytes/s, device to host, pinned
// Pageable operands: bytes/s per host copy thread, all GPUs together.
constexpr double kSpreadPageablePerThread = 3.5e9;
constexpr double kSpreadFfmaShare = 0.8;
constexpr double kSpreadBlockCost = 1e-3;  // seconds per block
constexpr double kStragglerShare = 0.05;
// `auto` spreads only where the model says the spread call takes at most
// this share of the one-GPU call's time.
constexpr double kSpreadPays = 0.9;

struct SpreadRequest {
    int64_t m = 0, n = 0, k = 0;      // k = 0 when A and B are not read
    bool a_host = false, b_host = false;
    bool c_in = false;                // C is read (beta != 0)
    bool pageable = false;            // some operand is pageable host memory
    // The blocks of a grid that runs in one round (a block per worker) share
    // panels (pinned A and B, peer access between the devices,
    // panel_board.hpp): each panel of A crosses a host link once per grid
    // row, each of B once per grid column.
    bool share = false;
    int copy_threads = 1;             // host copy threads (runtime/host_copy.hpp)
    int workers = 1;                  // listed devices (TGEMM_DEVICES), or those visible
    bool choose_workers = false;      // `auto`: use the fewest workers that pay, maybe one
    double peak_flops = 0;            // one GPU's FP32 peak, flop/s
    int64_t min_side = kSpreadMinSide;
    int64_t rows = 0, cols = 0;       // a grid to take instead of the model's (0 = the model's); each at
                                      // most the blocks of min_side that fit
};

struct SpreadPlan {
    int64_t rows = 1, cols = 1;  // the grid of blocks
    int workers = 1;             // workers to start; 1 = not spread (run on one GPU as usual)
    double seconds = 0;          // the model's time for this plan
    double one_gpu_seconds = 0;  // and for the call on one GPU
};

// The plan for r: one block and one worker where spreading is not worth it
// (auto) or C has no room for two blocks of min_side. Without
// choose_workers, every worker gets a block where C has room for them.
SpreadPlan plan_spread(const SpreadRequest &r);

inline int64_t block_count(const SpreadPlan &p) { return p.rows * p.cols; }

// Block i of the plan (0 <= i < block_count), in the order workers take
// them: rows of blocks, left to right.
Rect spread_block(const SpreadPlan &p, int64_t m, int64_t n, int64_t i);

}  // namespace tgemm
