// What the host-operand executor (host_executor.hpp) reports while it runs
// a call, for an observer that watches it: today the TGEMM_HOST_TRACE
// tracer (host_tracer.hpp). The executor holds one pointer to an observer,
// null when nobody watches, and reports through it only; an observer never
// changes what the executor does, except that begin_call() may fail the
// call before anything is enqueued.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "runtime/host_copy.hpp"
#include "driver/host_trace.hpp"
#include "tgemm.h"

namespace tgemm {

// Where in the schedule an event belongs: the task (index in the schedule)
// and its C tile and K chunk, in tiles and chunks; -1 where none applies.
struct TaskPlace {
    int64_t task = -1, tile_row = -1, tile_col = -1, chunk = -1;
};

class HostRunObserver {
public:
    virtual ~HostRunObserver() = default;

    // The call begins; nothing is enqueued yet and `idle` has nothing
    // queued. A failure fails the call.
    virtual tgemm_status begin_call(cudaStream_t idle) = 0;

    // The call has ended with status st; `plan` describes its plan, or is
    // empty when it got none. The GPU work of a successful call is done.
    virtual void end_call(tgemm_status st, const std::string &plan) = 0;

    // The observer's clock, for host_step()'s start.
    virtual double now_us() const = 0;

    // Where host_copy() records the parts of the next stage_in or
    // stage_out, which host_step() then reports.
    virtual std::vector<CopyPart> *copy_parts() = 0;

    // A step of the host threads (stage_in, stage_out, wait_buffer,
    // wait_out, wait_end) that began at start_us and has just ended.
    virtual void host_step(TraceEvent e, const TaskPlace &at, char operand, uint64_t bytes, double start_us) = 0;

    // GPU work (h2d, kernel, d2h) about to be enqueued on s, and the end of
    // it, once enqueued.
    virtual void gpu_begin(cudaStream_t s, TraceEvent e, const TaskPlace &at, char operand, uint64_t bytes) = 0;
    virtual void gpu_end(cudaStream_t s) = 0;
};

}  // namespace tgemm
