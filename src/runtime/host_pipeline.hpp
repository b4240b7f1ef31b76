// Products with operands in host memory: C tiles and K chunks stream over
// the link while kernels run, on three streams (copies in, kernels, copies
// out) ordered by events. host_plan.hpp says how the work is cut.
//
// Resources: per device, up to kPipelinesPerDevice pipelines (streams,
// events and pinned staging buffers), created on first use and reused by
// later calls, and one memory pool for the tile buffers. A call leases a
// whole pipeline for its duration (a mutex and condition variable hand them
// out; a call that finds all of them leased waits for one). A leased
// pipeline is used by one call only, and a call never waits for a second
// pipeline while it holds one, so concurrent calls cannot corrupt each
// other's staging or deadlock. Nothing is freed at exit: the statically
// linked CUDA runtime may already be shut down when static destructors
// run; the operating system reclaims the memory with the process.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "kernels/gemm_params.hpp"
#include "runtime/device.hpp"
#include "tgemm.h"

namespace tgemm {

// Runs p (as execute() receives it; device `dev` current) when at least one
// of the operand kinds is a host kind; returns when C is written. Work
// starts after what is already queued on s, and s waits for all of it.
tgemm_status run_host_operands(const GemmParams &p, MemKind ka, MemKind kb, MemKind kc, const DeviceInfo &dev,
                               cudaStream_t s);

// tgemm_release_resources(): frees the pipelines no call has leased and
// returns the tile pools' cached memory to the driver.
tgemm_status release_host_resources();

// Tests only: the preferred tile side, chunk depth and chunk floor of later
// calls' plans (PlanRequest in host_plan.hpp), so that small products take
// the schedules of large ones; zeros restore the defaults.
void set_host_plan_sizes(int64_t tile_side, int64_t chunk_depth, int64_t chunk_floor);

}  // namespace tgemm
