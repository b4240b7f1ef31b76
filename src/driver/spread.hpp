// Runs a product on host operands over several GPUs (TGEMM_DEVICES): one
// worker thread per listed device takes the blocks of a spread plan
// (spread_plan.hpp) from a shared queue and runs each through the
// host-operand pipeline of its device (host_pipeline.hpp).
#pragma once

#include <vector>

#include <cuda_runtime_api.h>

#include "core/problem.hpp"
#include "core/settings.hpp"
#include "driver/spread_plan.hpp"
#include "runtime/device.hpp"
#include "tgemm.h"

namespace tgemm {

// The devices a call on host operands may spread over, one entry per
// worker (TGEMM_DEVICES), and whether `auto` decides how many of them to
// use. Empty when TGEMM_DEVICES is unset. Fails on a listed device that
// CUDA does not see. The list lives as long as the process.
tgemm_status spread_devices(const std::vector<int> **devices, bool *choose);

// Runs p (as execute() receives it: A and B, where read, and C in host
// memory, kinds ka, kb, kc) over devices[0 .. plan.workers) and returns once
// C is written. Work starts after what is queued on s (a stream of the
// calling thread's device), which the call waits for first.
//
// A block whose run fails keeps its contract (run_host_operands): the parts
// of it not written back hold their original contents (or anything, when
// beta == 0). Where that holds for every part of C (C pageable, or
// beta == 0, or `left` given), those parts go back to the queue for the
// other workers, the failed worker stops, and the call succeeds if the
// others finish C; else the other workers stop after their current block,
// and the call fails with C as each block left it. With `left`, after a
// failure *left holds the parts no worker finished, as execute() says.
tgemm_status run_spread(const GemmParams &p, MemKind ka, MemKind kb, MemKind kc, const SpreadPlan &plan,
                        const std::vector<int> &devices, cudaStream_t s, Math math, std::vector<Rect> *left);

// Whether the blocks of a call spread over devices[0 .. workers) can share
// panels (panel_board.hpp): every two of the devices can copy from each
// other's memory directly. Turns such access on where it is off, for the
// devices and their tile pools; it stays on for the process. A device
// listed twice shares with itself.
bool panels_shareable(const std::vector<int> &devices, int workers);

// The smallest block side of spread plans (SpreadRequest::min_side):
// kSpreadMinSide, unless a test set another with set_spread_min_side (0
// restores it).
int64_t spread_min_side();
void set_spread_min_side(int64_t side);

}  // namespace tgemm
