// Products with operands in host memory: C tiles and K chunks stream over
// the link while kernels run, on streams of copies in, kernels and copies
// out, ordered by events. host_plan.hpp says how the work is cut,
// host_pool.hpp which resources a call holds, host_executor.hpp how it runs
// them, host_tracer.hpp what TGEMM_HOST_TRACE records of it.
#pragma once

#include <cstdint>
#include <vector>

#include <cuda_runtime_api.h>

#include "core/problem.hpp"
#include "core/settings.hpp"
#include "runtime/device.hpp"
#include "driver/host_plan.hpp"
#include "driver/panel_board.hpp"
#include "tgemm.h"

namespace tgemm {

// Runs p (as execute() receives it; device `dev` current) when at least one
// of the operand kinds is a host kind, or C is handled as one
// (recoverable_c); returns when C is written. Work starts after what is
// already queued on s, and s waits for all of it.
//
// What C holds when the call fails. A piece of C counts as written back
// once its copy into C has been seen to finish: for pageable C, the host
// copy out of the pinned staging buffer, made only after the copy into
// that buffer was seen to finish, so each piece of pageable C holds its
// result or its original contents; for pinned C, the copy into C by DMA;
// for device and managed C, which the kernels write in place K chunk by K
// chunk, the tile's last kernel. After a failure the call waits for its
// streams to go idle; if they do (the failure left the context usable),
// every copy and kernel it enqueued has finished, the pieces of C waiting
// in staging buffers are copied into C, and nothing writes C once the call
// returns. If they do not (a failure that breaks the context fails every
// later CUDA call), nothing more is written back and the pipeline is given
// up, not reused; no copy or kernel runs in a broken context, but one
// that was under way when it broke may have done part of its work: a copy
// into pinned C may have written part of its piece, a kernel on device or
// managed C part of its tile.
//
// With `left`, the caller finishes a failed call itself (the BLAS
// fallback): C is handled as recoverable_c(kc, beta) says, and after a
// failure *left holds disjoint parts of C (rows and columns of p's m x n C)
// that cover everything not written back; each holds its original contents,
// or anything when beta == 0 (then C is not read), except with device C,
// which stays in place (it may hold partial sums). After success *left is
// empty.
//
// With `share`, the call is one block of a spread call whose blocks share
// panels of A and B (panel_board.hpp).
tgemm_status run_host_operands(const GemmParams &p, MemKind ka, MemKind kb, MemKind kc, const DeviceInfo &dev,
                               cudaStream_t s, Math math, std::vector<Rect> *left = nullptr,
                               const PanelShare *share = nullptr);

// The kind C is handled as when the caller finishes a failed call itself:
// with beta != 0, a pinned or managed C, which the GPU would write directly
// (by DMA, or by the kernels in place), goes through the staging buffers as
// a pageable C does, so that a failure leaves every piece of it all or
// nothing. Device C stays in place: the CPU cannot finish a call on it.
inline MemKind recoverable_c(MemKind kc, float beta)
{
    return beta != 0.0f && (kc == MemKind::Pinned || kc == MemKind::Managed) ? MemKind::Pageable : kc;
}

// tgemm_release_resources(): frees the pipelines no call has leased, and
// those given up after a failure once their streams are seen idle, and
// returns the tile pools' cached memory to the driver.
tgemm_status release_host_resources();

// Tests only: the preferred tile side, chunk depth and chunk floor of later
// calls' plans (PlanRequest in host_plan.hpp), so that small products take
// the schedules of large ones; zeros restore the defaults.
void set_host_plan_sizes(int64_t tile_side, int64_t chunk_depth, int64_t chunk_floor);

}  // namespace tgemm
