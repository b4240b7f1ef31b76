// The TGEMM_HOST_TRACE observer (host_tracer.hpp).
#include "driver/host_tracer.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <utility>

#include "core/per_process.hpp"
#include "core/settings.hpp"
#include "core/status.hpp"

namespace tgemm {
namespace {

// TGEMM_HOST_TRACE's file for this process (trace_file_name), opened by
// its first call that needs it: a child forked after its parent opened it
// opens its own (%p is its id); its copy of the parent's descriptor stays
// open (the child may have closed it and reused the number). fd -1 with the
// reason when it cannot be opened.
struct TraceFile {
    std::string name;
    int fd = -1;
    std::string error;
};

const TraceFile &trace_file()
{
    static PerProcess<TraceFile> file;
    return file.get(
        [](TraceFile &t) {
            t.name = trace_file_name(settings().host_trace);
            t.fd = open_trace(t.name.c_str(), &t.error);
        },
        [](TraceFile &t) {  // another thread of this process opened it first
            if (t.fd >= 0)
                close(t.fd);
        });
}

std::atomic<uint64_t> g_trace_calls{0};

TraceRow make_row(TraceEvent e, const TaskPlace &at, char operand, uint64_t bytes, double start_us, double end_us)
{
    // TraceRow's fields in order; thread -1, no detail.
    return TraceRow{e, at.task, at.tile_row, at.tile_col, at.chunk, operand, -1, bytes, start_us, end_us, {}};
}

}  // namespace

double HostTracer::now_us() const
{
    return std::chrono::duration<double, std::micro>(Clock::now() - t0_).count();
}

double HostTracer::ns_since_start(int64_t ns) const
{
    return static_cast<double>(ns - std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        t0_.time_since_epoch()).count()) / 1000.0;
}

cudaError_t HostTracer::take_timing(cudaEvent_t *ev)
{
    const cudaError_t e = grow_events(pl_.timing, pl_.timing_used + 1, cudaEventDefault);
    if (e == cudaSuccess)
        *ev = pl_.timing[pl_.timing_used++];
    return e;
}

// Opens the file (once per process) and marks the start of the call on the
// host clock and on the idle stream.
tgemm_status HostTracer::begin_call(cudaStream_t idle)
{
    const TraceFile &f = trace_file();
    if (f.fd < 0)
        return fail(TGEMM_ERROR_INVALID_SETTING, "TGEMM_HOST_TRACE='%s' %s", f.name.c_str(), f.error.c_str());
    t0_ = Clock::now();
    call_ = ++g_trace_calls;
    pl_.timing_used = 0;
    cudaError_t e = take_timing(&ref_);
    ref_us_ = now_us();
    if (e == cudaSuccess)
        e = cudaEventRecord(ref_, idle);
    return check_cuda(e, "cudaEventRecord (TGEMM_HOST_TRACE)");
}

// A host copy (stage_in, stage_out) is followed by its parts, then itself.
void HostTracer::host_step(TraceEvent e, const TaskPlace &at, char operand, uint64_t bytes, double start_us)
{
    TraceRow row = make_row(e, at, operand, bytes, start_us, now_us());
    if (e == TraceEvent::StageIn || e == TraceEvent::StageOut)
        for (const CopyPart &part : parts_) {
            TraceRow r = row;
            r.event = TraceEvent::CopyPart;
            r.thread = part.thread;
            r.bytes = static_cast<uint64_t>(part.elems) * sizeof(float);
            r.start_us = ns_since_start(part.begin_ns);
            r.end_us = ns_since_start(part.end_ns);
            rows_.push_back(r);
        }
    rows_.push_back(std::move(row));
}

void HostTracer::gpu_begin(cudaStream_t s, TraceEvent e, const TaskPlace &at, char operand, uint64_t bytes)
{
    GpuSpan span;
    span.row = rows_.size();
    if (take_timing(&span.begin) != cudaSuccess || cudaEventRecord(span.begin, s) != cudaSuccess) {
        (void)cudaGetLastError();
        return;
    }
    rows_.push_back(make_row(e, at, operand, bytes, 0, 0));
    spans_.push_back(span);
    open_span_ = true;
}

void HostTracer::gpu_end(cudaStream_t s)
{
    if (!open_span_)
        return;
    open_span_ = false;
    GpuSpan &span = spans_.back();
    if (take_timing(&span.end) != cudaSuccess || cudaEventRecord(span.end, s) != cudaSuccess) {
        (void)cudaGetLastError();
        span.end = nullptr;
    }
}

// Times the GPU spans (the call has ended) and appends the call's rows to
// the file. A failed write does not fail the call, whose C is written; with
// TGEMM_VERBOSE it is logged once.
void HostTracer::end_call(tgemm_status st, const std::string &plan)
{
    TraceRow call;
    call.event = TraceEvent::Call;
    call.end_us = now_us();
    call.detail = plan + " copy_threads=" + std::to_string(host_copy_threads()) +
                  " staging=" + std::to_string(kStagingBuffers) + "x" + std::to_string(kStagingBytes >> 20) +
                  "MiB status=" + std::to_string(static_cast<int>(st));
    std::string text = format_trace_row(call_, call);
    std::vector<bool> timed(rows_.size(), true);
    for (const GpuSpan &span : spans_) {
        float a = 0, b = 0;
        TraceRow &r = rows_[span.row];
        if (st != TGEMM_SUCCESS || span.end == nullptr || cudaEventElapsedTime(&a, ref_, span.begin) != cudaSuccess ||
            cudaEventElapsedTime(&b, ref_, span.end) != cudaSuccess) {
            (void)cudaGetLastError();
            timed[span.row] = false;
            continue;
        }
        r.start_us = ref_us_ + 1000.0 * a;
        r.end_us = ref_us_ + 1000.0 * b;
    }
    for (size_t i = 0; i < rows_.size(); ++i)
        if (timed[i])
            text += format_trace_row(call_, rows_[i]);
    std::string error;
    if (!append_trace(trace_file().fd, text, &error)) {
        static std::atomic<bool> reported{false};
        if (settings().verbose > 0 && !reported.exchange(true))
            std::fprintf(stderr, "tgemm: TGEMM_HOST_TRACE='%s': %s; the trace is incomplete\n",
                         trace_file().name.c_str(), error.c_str());
    }
}

}  // namespace tgemm
