// TGEMM_HOST_TRACE: an observer of the host-operand executor that records
// its events (host_observer.hpp) as the rows host_trace.hpp describes and
// appends them to the file after the call, one write per call. GPU events
// are timed with timing events taken from the pipeline and placed on the
// host clock through one event recorded on an idle stream at the start.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "driver/host_observer.hpp"
#include "driver/host_pool.hpp"
#include "driver/host_trace.hpp"

namespace tgemm {

class HostTracer final : public HostRunObserver {
public:
    // Takes its timing events from pl (made as needed, kept for later calls).
    explicit HostTracer(Pipeline &pl) : pl_(pl) {}

    tgemm_status begin_call(cudaStream_t idle) override;
    void end_call(tgemm_status st, const std::string &plan) override;
    double now_us() const override;
    std::vector<CopyPart> *copy_parts() override { return &parts_; }
    void host_step(TraceEvent e, const TaskPlace &at, char operand, uint64_t bytes, double start_us) override;
    void gpu_begin(cudaStream_t s, TraceEvent e, const TaskPlace &at, char operand, uint64_t bytes) override;
    void gpu_end(cudaStream_t s) override;

private:
    using Clock = std::chrono::steady_clock;

    struct GpuSpan {
        size_t row = 0;  // in rows_
        cudaEvent_t begin = nullptr, end = nullptr;
    };

    double ns_since_start(int64_t ns) const;
    cudaError_t take_timing(cudaEvent_t *ev);

    Pipeline &pl_;
    uint64_t call_ = 0;
    Clock::time_point t0_;
    cudaEvent_t ref_ = nullptr;  // recorded on the idle stream at t0_
    double ref_us_ = 0;
    std::vector<TraceRow> rows_;
    std::vector<GpuSpan> spans_;
    bool open_span_ = false;
    std::vector<CopyPart> parts_;
};

}  // namespace tgemm
