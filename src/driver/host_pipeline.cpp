#include "driver/host_pipeline.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/check.hpp"
#include "core/status.hpp"
#include "driver/device_call.hpp"
#include "runtime/host_copy.hpp"
#include "driver/host_plan.hpp"
#include "driver/host_trace.hpp"
#include "core/settings.hpp"
#include "runtime/workspace.hpp"

namespace tgemm {
namespace {

// Pinned staging for pageable operands, per pipeline. 16 MiB holds one
// 2048 x 2048 tile or K chunk, the piece the planner prefers, so one buffer
// carries one transfer; eight let the host pack and unpack up to eight
// pieces ahead of the link (2.4 ms of transfers at 55 GB/s), which hides
// the waits for each piece's copy to finish. 128 MiB per pipeline.
//
// A piece of C that has arrived in a buffer is copied into C only when the
// buffer is needed again (buffers that hold none are taken first) or at the
// end of the call: the host threads are the scarce resource of a pageable
// call, and the GPU waits for pieces of A and B, never for pieces of C, so
// those go first. Two buffers stay free for pieces of A and B (one is
// filled while the other's copy to the device runs). At the end the pieces
// of C are copied in the order they arrive, while the last kernels still
// run. Against taking buffers in turn, copying each piece of C when its
// buffer comes round again and the last ones after the GPU is done, this
// takes pageable 8192^3 from 37.0 to 32.8 ms in bench/host_model.py (from
// 16384 x 16384 x 1024, all C, only from 51.4 to 50.5).
constexpr size_t kStagingBytes = size_t{16} << 20;
constexpr int kStagingBuffers = 8;
constexpr int kInputBuffers = 2;
constexpr int64_t kStagingElems = static_cast<int64_t>(kStagingBytes / sizeof(float));

// Pipelines per device. One call already keeps the link and the GPU busy;
// a second lets a new call prepare while another drains. Further callers
// wait. Bounds pinned staging at 256 MiB per device.
constexpr int kPipelinesPerDevice = 2;

// Device memory left free for everything else unless
// TGEMM_DEVICE_MEMORY_LIMIT asks for less: the CUDA runtime's own needs,
// the dispatcher's workspace (split-K sums and packed operands, each at
// most 256 MiB, and optional: without it the plan needs none), other
// users of the GPU.
constexpr uint64_t kDeviceReserve = uint64_t{256} << 20;

// Tile-pool memory kept between calls: the 672 MiB of an 8192^3 plan stay
// allocated for the next call; bigger plans give the rest back at the end.
constexpr uint64_t kTileKeepBytes = uint64_t{768} << 20;

struct Staging {
    float *ptr = nullptr;
    cudaEvent_t done = nullptr;  // recorded after each copy from or to the buffer
    uint64_t used = 0;           // when it was last taken (Pipeline::uses), 0 = never
    // A piece of C waiting here for the host copy to its place in C: rows x
    // cols from (c_row, c_col) of C.
    float *out = nullptr;
    int64_t out_ld = 0, rows = 0, cols = 0;
    int64_t c_row = 0, c_col = 0;
    int64_t task = -1, tile_row = -1, tile_col = -1;  // where the piece comes from (TGEMM_HOST_TRACE)
};

struct Pipeline {
    cudaStream_t in = nullptr, comp = nullptr, out = nullptr;
    cudaEvent_t start = nullptr, ready = nullptr, loaded = nullptr, computed = nullptr;
    cudaEvent_t in_done = nullptr, out_done = nullptr, end = nullptr;
    cudaEvent_t free_a[2] = {}, free_b[2] = {};  // a slot's last reader
    std::vector<cudaEvent_t> free_c;             // a C slot's copy out, as many as a plan has slots
    Staging staging[kStagingBuffers];
    uint64_t uses = 0;      // staging buffers taken so far
    int64_t max_pitch = 0;  // bytes; cudaMemcpy2D takes no larger pitch
    // TGEMM_HOST_TRACE only: events with timing, made as a call needs them.
    std::vector<cudaEvent_t> timing;
    size_t timing_used = 0;  // by the call in progress

    std::vector<cudaEvent_t *> events()
    {
        std::vector<cudaEvent_t *> v = {&start, &ready, &loaded, &computed, &in_done, &out_done, &end};
        for (int i = 0; i < 2; ++i) {
            v.push_back(&free_a[i]);
            v.push_back(&free_b[i]);
        }
        for (cudaEvent_t &e : free_c)
            v.push_back(&e);
        for (Staging &b : staging)
            v.push_back(&b.done);
        for (cudaEvent_t &e : timing)
            v.push_back(&e);
        return v;
    }
};

// Grows `events` to `count` events made with `flags`.
cudaError_t grow_events(std::vector<cudaEvent_t> &events, size_t count, unsigned flags)
{
    while (events.size() < count) {
        cudaEvent_t e = nullptr;
        const cudaError_t err = cudaEventCreateWithFlags(&e, flags);
        if (err != cudaSuccess)
            return err;
        events.push_back(e);
    }
    return cudaSuccess;
}

// Preferred plan sizes (set_host_plan_sizes, tests only); 0 = the defaults.
std::atomic<int64_t> g_tile_side{0}, g_chunk_depth{0}, g_chunk_floor{0};

// TGEMM_HOST_TRACE's file, opened by the first call that needs it; -1 with
// the reason when it cannot be opened.
struct TraceFile {
    int fd = -1;
    std::string error;
};

const TraceFile &trace_file()
{
    static const TraceFile f = [] {
        TraceFile t;
        t.fd = open_trace(settings().host_trace.c_str(), &t.error);
        return t;
    }();
    return f;
}

std::atomic<uint64_t> g_trace_calls{0};

// Joins rectangles of a tiling that meet along a whole side: runs down
// each column of them, then runs across each row of the result.
void join_rects(std::vector<Rect> *v)
{
    const auto down = [](const Rect &a, const Rect &b) {
        return std::make_tuple(a.col, a.cols, a.row) < std::make_tuple(b.col, b.cols, b.row);
    };
    const auto across = [](const Rect &a, const Rect &b) {
        return std::make_tuple(a.row, a.rows, a.col) < std::make_tuple(b.row, b.rows, b.col);
    };
    std::sort(v->begin(), v->end(), down);
    std::vector<Rect> out;
    for (const Rect &r : *v)
        if (!out.empty() && out.back().col == r.col && out.back().cols == r.cols &&
            out.back().row + out.back().rows == r.row)
            out.back().rows += r.rows;
        else
            out.push_back(r);
    std::sort(out.begin(), out.end(), across);
    v->clear();
    for (const Rect &r : out)
        if (!v->empty() && v->back().row == r.row && v->back().rows == r.rows &&
            v->back().col + v->back().cols == r.col)
            v->back().cols += r.cols;
        else
            v->push_back(r);
}

using Clock = std::chrono::steady_clock;

tgemm_status check(cudaError_t e, const char *what)
{
    return e == cudaSuccess ? TGEMM_SUCCESS : fail_cuda(e, what);
}

// Frees everything the pipeline holds; the first error, if any.
cudaError_t destroy_pipeline(Pipeline *pl)
{
    cudaError_t first = cudaSuccess;
    const auto note = [&first](cudaError_t e) {
        if (first == cudaSuccess)
            first = e;
    };
    for (cudaStream_t s : {pl->in, pl->comp, pl->out})
        if (s != nullptr)
            note(cudaStreamDestroy(s));
    for (cudaEvent_t *ev : pl->events())
        if (*ev != nullptr)
            note(cudaEventDestroy(*ev));
    for (Staging &b : pl->staging)
        if (b.ptr != nullptr)
            note(cudaFreeHost(b.ptr));
    delete pl;
    return first;
}

tgemm_status create_pipeline(int dev, Pipeline **out)
{
    Pipeline *pl = new (std::nothrow) Pipeline();
    if (pl == nullptr)
        return fail(TGEMM_ERROR_OUT_OF_MEMORY, "no host memory for a host-operand pipeline");
    int pitch = 0;
    cudaError_t e = cudaDeviceGetAttribute(&pitch, cudaDevAttrMaxPitch, dev);
    pl->max_pitch = pitch;
    for (cudaStream_t *s : {&pl->in, &pl->comp, &pl->out})
        if (e == cudaSuccess)
            e = cudaStreamCreateWithFlags(s, cudaStreamNonBlocking);
    pl->free_c.assign(2, nullptr);
    for (cudaEvent_t *ev : pl->events())
        if (e == cudaSuccess)
            e = cudaEventCreateWithFlags(ev, cudaEventDisableTiming);
    if (e != cudaSuccess) {
        const tgemm_status st = fail_cuda(e, "creating the streams and events of a host-operand pipeline");
        (void)destroy_pipeline(pl);
        return st;
    }
    *out = pl;
    return TGEMM_SUCCESS;
}

struct DeviceState {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<Pipeline *> idle;
    int count = 0;                 // pipelines in existence, leased or idle
    // Pipelines given up after a failure left their streams busy or
    // unknown: never used again, and freed only by
    // release_host_resources() once their streams are found idle, since a
    // copy into one of their staging buffers might still be under way.
    std::vector<Pipeline *> broken;
    cudaMemPool_t pool = nullptr;  // tile buffers
};

DeviceState &device_state(int dev)
{
    // Never destroyed, like the pipelines (see host_pipeline.hpp).
    static DeviceState *states = new DeviceState[kMaxDevices];
    return states[dev];
}

// A pipeline held for the duration of one call.
class Lease {
public:
    Lease() = default;
    Lease(const Lease &) = delete;
    Lease &operator=(const Lease &) = delete;
    ~Lease()
    {
        if (pl_ == nullptr)
            return;
        DeviceState &st = device_state(dev_);
        {
            std::lock_guard<std::mutex> lk(st.mu);
            st.idle.push_back(pl_);
        }
        st.cv.notify_one();
    }

    tgemm_status acquire(int dev)
    {
        DeviceState &st = device_state(dev);
        std::unique_lock<std::mutex> lk(st.mu);
        if (st.pool == nullptr) {
            const tgemm_status s = create_workspace_pool(dev, &st.pool, kTileKeepBytes);
            if (s != TGEMM_SUCCESS)
                return s;
        }
        pool_ = st.pool;
        st.cv.wait(lk, [&] { return !st.idle.empty() || st.count < kPipelinesPerDevice; });
        if (!st.idle.empty()) {
            pl_ = st.idle.back();
            st.idle.pop_back();
            dev_ = dev;
            return TGEMM_SUCCESS;
        }
        ++st.count;
        lk.unlock();
        Pipeline *pl = nullptr;
        const tgemm_status s = create_pipeline(dev, &pl);
        if (s != TGEMM_SUCCESS) {
            lk.lock();
            --st.count;
            lk.unlock();
            st.cv.notify_one();
            return s;
        }
        pl_ = pl;
        dev_ = dev;
        return TGEMM_SUCCESS;
    }

    Pipeline &pipeline() const { return *pl_; }
    cudaMemPool_t pool() const { return pool_; }

    // Gives the pipeline up instead of back, after a failure that left its
    // streams busy or unknown, and lets a later call make a new one. Its
    // resources are not freed here (see DeviceState::broken).
    void discard()
    {
        DeviceState &st = device_state(dev_);
        {
            std::lock_guard<std::mutex> lk(st.mu);
            st.broken.push_back(pl_);
            --st.count;
        }
        st.cv.notify_one();
        pl_ = nullptr;
    }

private:
    Pipeline *pl_ = nullptr;
    cudaMemPool_t pool_ = nullptr;
    int dev_ = -1;
};

const char *kind_name(MemKind k)
{
    switch (k) {
    case MemKind::Unused: return "unused";
    case MemKind::Pageable: return "pageable";
    case MemKind::Pinned: return "pinned";
    case MemKind::Device: return "device";
    case MemKind::Managed: return "managed";
    }
    return "?";
}

const char *cache_name(Cache c)
{
    switch (c) {
    case Cache::InPlace: return "in-place";
    case Cache::Panel: return "panel";
    case Cache::Whole: return "whole";
    case Cache::Chunk: return "chunk";
    case Cache::Tile: return "tile";
    }
    return "?";
}

// One call: plans, allocates the tile buffers, runs every task of the plan,
// and waits for the end.
class HostRun {
public:
    HostRun(const GemmParams &p, MemKind ka, MemKind kb, MemKind kc, const DeviceInfo &dev, Pipeline &pl,
            cudaMemPool_t pool, std::vector<Rect> *left)
        : p_(p), ka_(ka), kb_(kb), kc_(kc), dev_(dev), pl_(pl), pool_(pool), left_(left)
    {
        reads_ab_ = sgemm_reads_ab(p.k, p.alpha);
        req_.m = p.m;
        req_.n = p.n;
        req_.k = reads_ab_ ? p.k : 0;
        req_.trans_a = p.trans_a;
        req_.trans_b = p.trans_b;
        req_.a_host = is_host(ka);
        req_.b_host = is_host(kb);
        req_.c_host = is_host(kc);
        req_.c_in = req_.c_host && p.beta != 0.0f;
        if (const int64_t v = g_tile_side.load())
            req_.tile_side = v;
        if (const int64_t v = g_chunk_depth.load())
            req_.chunk_depth = v;
        if (const int64_t v = g_chunk_floor.load())
            req_.chunk_floor = v;
        pageable_ = kc == MemKind::Pageable || (reads_ab_ && (ka == MemKind::Pageable || kb == MemKind::Pageable));
        tracing_ = !settings().host_trace.empty();
    }

    tgemm_status run(cudaStream_t caller)
    {
        tgemm_status st = tracing_ ? start_trace() : TGEMM_SUCCESS;
        if (st == TGEMM_SUCCESS) {
            st = run_call(caller);
            if (tracing_)
                write_trace(st);
        }
        if (left_ != nullptr) {
            left_->clear();
            if (st != TGEMM_SUCCESS)
                not_written_back(left_);
        }
        return st;
    }

    // Whether a failure left the pipeline's streams busy or unknown; it
    // must then not be used again.
    bool broken() const { return broken_; }

private:
    // Once anything is enqueued, failures too end in finish().
    tgemm_status run_call(cudaStream_t caller)
    {
        tgemm_status st = allocate_staging();
        if (st != TGEMM_SUCCESS)
            return st;
        if ((st = check(cudaEventRecord(pl_.start, caller), "cudaEventRecord (caller's stream)")) == TGEMM_SUCCESS)
            st = wait(pl_.comp, pl_.start);
        // Host threads read and write pageable operands themselves, so they
        // start only after the work queued on the caller's stream, which
        // may write those operands (host functions), is done.
        if (st == TGEMM_SUCCESS && pageable_)
            st = check(cudaEventSynchronize(pl_.start), "cudaEventSynchronize (caller's stream)");
        if (st == TGEMM_SUCCESS)
            st = plan_and_allocate();
        // The arena is stream-ordered on the compute stream; the copy
        // streams may use it once they wait for this point.
        if (st == TGEMM_SUCCESS && (st = record_wait(pl_.ready, pl_.comp, pl_.in)) == TGEMM_SUCCESS)
            st = wait(pl_.out, pl_.ready);
        for (int64_t t = 0; st == TGEMM_SUCCESS && t < task_count(plan_); ++t)
            st = run_task(t, host_task(plan_, req_, t));
        return finish(caller, st);
    }

    tgemm_status wait(cudaStream_t s, cudaEvent_t ev)
    {
        return check(cudaStreamWaitEvent(s, ev, 0), "cudaStreamWaitEvent");
    }

    tgemm_status record(cudaEvent_t ev, cudaStream_t s)
    {
        return check(cudaEventRecord(ev, s), "cudaEventRecord");
    }

    // Stream `waiter` waits for what is enqueued on `s` so far.
    tgemm_status record_wait(cudaEvent_t ev, cudaStream_t s, cudaStream_t waiter)
    {
        const tgemm_status st = record(ev, s);
        return st != TGEMM_SUCCESS ? st : wait(waiter, ev);
    }

    // All staging buffers exist before any work is enqueued, so a call that
    // fails for lack of pinned memory has not touched C.
    tgemm_status allocate_staging()
    {
        if (!pageable_)
            return TGEMM_SUCCESS;
        for (Staging &b : pl_.staging) {
            if (b.ptr != nullptr)
                continue;
            const cudaError_t e = cudaHostAlloc(reinterpret_cast<void **>(&b.ptr), kStagingBytes, cudaHostAllocPortable);
            if (e != cudaSuccess) {
                b.ptr = nullptr;
                return fail_cuda(e, "cudaHostAlloc (staging buffer)");
            }
        }
        return TGEMM_SUCCESS;
    }

    // Device memory this call may use: free memory plus what the tile pool
    // holds unused, less the reserve, and at most the setting.
    tgemm_status budget(uint64_t *bytes, bool *by_setting)
    {
        size_t free_b = 0, total_b = 0;
        uint64_t reserved = 0, used = 0;
        tgemm_status st;
        if ((st = check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo")) != TGEMM_SUCCESS ||
            (st = check(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReservedMemCurrent, &reserved),
                        "cudaMemPoolGetAttribute")) != TGEMM_SUCCESS ||
            (st = check(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrUsedMemCurrent, &used),
                        "cudaMemPoolGetAttribute")) != TGEMM_SUCCESS)
            return st;
        const uint64_t avail = free_b + (reserved - used);
        *bytes = avail > kDeviceReserve ? avail - kDeviceReserve : 0;
        const uint64_t limit = settings().device_memory_limit;
        *by_setting = limit != 0 && limit < *bytes;
        if (*by_setting)
            *bytes = limit;
        return TGEMM_SUCCESS;
    }

    // Plans within the budget and allocates the arena and the C slots'
    // events; when the allocation fails anyway (other allocations since the
    // budget was read), plans again within half the failed size.
    tgemm_status plan_and_allocate()
    {
        bool by_setting = false;
        tgemm_status st = budget(&req_.budget, &by_setting);
        if (st != TGEMM_SUCCESS)
            return st;
        for (;;) {
            uint64_t need = 0;
            if (!plan_host(req_, &plan_, &need))
                return fail(TGEMM_ERROR_OUT_OF_MEMORY,
                            "host operands need at least %llu bytes of device memory (with the smallest tiles); %llu "
                            "are available (%s)",
                            static_cast<unsigned long long>(need), static_cast<unsigned long long>(req_.budget),
                            by_setting ? "TGEMM_DEVICE_MEMORY_LIMIT"
                                       : "free device memory less a reserve of 256 MiB");
            void *arena = nullptr;
            const cudaError_t e = cudaMallocFromPoolAsync(&arena, arena_bytes(plan_), pool_, pl_.comp);
            if (e == cudaSuccess) {
                arena_ = static_cast<float *>(arena);
                break;
            }
            if (e != cudaErrorMemoryAllocation)
                return fail_cuda(e, "cudaMallocFromPoolAsync (tile buffers)");
            (void)cudaGetLastError();
            req_.budget = arena_bytes(plan_) / 2;
        }
        if ((st = check(grow_events(pl_.free_c, static_cast<size_t>(plan_.c.count), cudaEventDisableTiming),
                        "cudaEventCreateWithFlags")) != TGEMM_SUCCESS)
            return st;
        if (settings().verbose >= 2)
            log_plan();
        return TGEMM_SUCCESS;
    }

    void describe_plan(char *buf, size_t cap) const
    {
        std::snprintf(buf, cap,
                      "m=%lld n=%lld k=%lld A=%s B=%s C=%s tile=%lldx%lldx%lld blocks=%lldx%lldx%lld order=%s "
                      "cache_a=%s cache_b=%s device_bytes=%llu budget=%llu link_mib=%.1f lead=%lld c_slots=%d "
                      "link_bytes=%.0f",
                      static_cast<long long>(p_.m), static_cast<long long>(p_.n), static_cast<long long>(p_.k),
                      kind_name(ka_), kind_name(kb_), kind_name(kc_), static_cast<long long>(plan_.mt),
                      static_cast<long long>(plan_.nt), static_cast<long long>(plan_.kt),
                      static_cast<long long>(plan_.mb), static_cast<long long>(plan_.nb),
                      static_cast<long long>(plan_.kb), plan_.rows_outer ? "rows" : "columns",
                      cache_name(plan_.a.cache), cache_name(plan_.b.cache),
                      static_cast<unsigned long long>(arena_bytes(plan_)),
                      static_cast<unsigned long long>(req_.budget), plan_.link_bytes / 1048576.0,
                      static_cast<long long>(plan_.lead), plan_.c.count, plan_.link_bytes);
    }

    void log_plan() const
    {
        char buf[512];
        describe_plan(buf, sizeof buf);
        std::fprintf(stderr, "tgemm: host plan %s\n", buf);
    }

    // ---------------------------------------------------------------- TGEMM_HOST_TRACE

    double since_start(Clock::time_point t) const
    {
        return std::chrono::duration<double, std::micro>(t - t0_).count();
    }

    double ns_since_start(int64_t ns) const
    {
        return static_cast<double>(ns - std::chrono::duration_cast<std::chrono::nanoseconds>(
                                            t0_.time_since_epoch()).count()) / 1000.0;
    }

    // Opens the file (once per process) and marks the start of the call on
    // the host clock and on the idle copy stream.
    tgemm_status start_trace()
    {
        const TraceFile &f = trace_file();
        if (f.fd < 0)
            return fail(TGEMM_ERROR_INVALID_SETTING, "TGEMM_HOST_TRACE='%s' %s", settings().host_trace.c_str(),
                        f.error.c_str());
        t0_ = Clock::now();
        call_ = ++g_trace_calls;
        pl_.timing_used = 0;
        cudaError_t e = take_timing(&ref_);
        ref_us_ = since_start(Clock::now());
        if (e == cudaSuccess)
            e = cudaEventRecord(ref_, pl_.in);
        return check(e, "cudaEventRecord (TGEMM_HOST_TRACE)");
    }

    cudaError_t take_timing(cudaEvent_t *ev)
    {
        const cudaError_t e = grow_events(pl_.timing, pl_.timing_used + 1, cudaEventDefault);
        if (e == cudaSuccess)
            *ev = pl_.timing[pl_.timing_used++];
        return e;
    }

    // A row for what the current task does on the host.
    TraceRow task_row(TraceEvent e, char operand, uint64_t bytes, double start_us, double end_us) const
    {
        TraceRow r;
        r.event = e;
        r.task = task_;
        r.tile_row = task_ >= 0 ? cur_.i0 / plan_.mt : -1;
        r.tile_col = task_ >= 0 ? cur_.j0 / plan_.nt : -1;
        r.chunk = task_ >= 0 ? cur_.k0 / std::max<int64_t>(plan_.kt, 1) : -1;
        r.operand = operand;
        r.bytes = bytes;
        r.start_us = start_us;
        r.end_us = end_us;
        return r;
    }

    // A host copy of a piece and its parts.
    void trace_copy(TraceRow row, const std::vector<CopyPart> &parts)
    {
        for (const CopyPart &part : parts) {
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

    // Brackets GPU work on stream s: gpu_begin before it, gpu_end after.
    void gpu_begin(cudaStream_t s, TraceRow row)
    {
        GpuSpan span;
        span.row = rows_.size();
        if (take_timing(&span.begin) != cudaSuccess || cudaEventRecord(span.begin, s) != cudaSuccess) {
            (void)cudaGetLastError();
            return;
        }
        rows_.push_back(std::move(row));
        spans_.push_back(span);
        open_span_ = true;
    }

    void gpu_end(cudaStream_t s)
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

    // Times the GPU spans (the call has ended) and appends the call's rows
    // to the file. A failed write does not fail the call, whose C is
    // written; with TGEMM_VERBOSE it is logged once.
    void write_trace(tgemm_status st)
    {
        const double end_us = since_start(Clock::now());
        TraceRow call;
        call.event = TraceEvent::Call;
        call.end_us = end_us;
        char buf[512] = "";
        if (plan_.mb > 0)
            describe_plan(buf, sizeof buf);
        call.detail = std::string(buf) + " copy_threads=" + std::to_string(host_copy_threads()) +
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
                             settings().host_trace.c_str(), error.c_str());
        }
    }

    // ---------------------------------------------------------------- copies

    // A 2D copy; where a pitch is beyond what cudaMemcpy2D takes (huge
    // leading dimensions), one copy per column.
    tgemm_status copy_async(float *dst, int64_t dld, const float *src, int64_t sld, int64_t rows, int64_t cols,
                            cudaMemcpyKind kind, cudaStream_t s, char operand)
    {
        if (tracing_)
            gpu_begin(s, task_row(kind == cudaMemcpyHostToDevice ? TraceEvent::H2D : TraceEvent::D2H, operand,
                                  static_cast<uint64_t>(rows * cols) * sizeof(float), 0, 0));
        const tgemm_status st = copy_2d(dst, dld, src, sld, rows, cols, kind, s);
        if (tracing_)
            gpu_end(s);
        return st;
    }

    tgemm_status copy_2d(float *dst, int64_t dld, const float *src, int64_t sld, int64_t rows, int64_t cols,
                         cudaMemcpyKind kind, cudaStream_t s)
    {
        const size_t width = static_cast<size_t>(rows) * sizeof(float);
        const char *what = kind == cudaMemcpyHostToDevice ? "cudaMemcpy2DAsync (host to device)"
                                                          : "cudaMemcpy2DAsync (device to host)";
        if (cols > 1 && dld * 4 <= pl_.max_pitch && sld * 4 <= pl_.max_pitch)
            return check(cudaMemcpy2DAsync(dst, dld * sizeof(float), src, sld * sizeof(float), width,
                                           static_cast<size_t>(cols), kind, s),
                         what);
        for (int64_t j = 0; j < cols; ++j) {
            const tgemm_status st = check(cudaMemcpyAsync(dst + j * dld, src + j * sld, width, kind, s), what);
            if (st != TGEMM_SUCCESS)
                return st;
        }
        return TGEMM_SUCCESS;
    }

    // Copies a piece between host memory and a staging buffer on the copy
    // threads.
    void stage(float *dst, int64_t dld, const float *src, int64_t sld, int64_t rows, int64_t cols, TraceEvent e,
               char operand)
    {
        if (!tracing_) {
            host_copy(dst, dld, src, sld, rows, cols);
            return;
        }
        const double t = since_start(Clock::now());
        host_copy(dst, dld, src, sld, rows, cols, &parts_);
        trace_copy(task_row(e, operand, static_cast<uint64_t>(rows * cols) * sizeof(float), t,
                            since_start(Clock::now())),
                   parts_);
    }

    // Waits on the host for ev, traced as e.
    tgemm_status host_wait(cudaEvent_t ev, TraceEvent e, const Staging *piece, const char *what)
    {
        if (!tracing_)
            return check(cudaEventSynchronize(ev), what);
        const double t = since_start(Clock::now());
        const tgemm_status st = check(cudaEventSynchronize(ev), what);
        TraceRow r = task_row(e, piece != nullptr ? 'C' : '-', 0, t, since_start(Clock::now()));
        if (piece != nullptr) {
            r.task = piece->task;
            r.tile_row = piece->tile_row;
            r.tile_col = piece->tile_col;
            r.chunk = -1;
            r.bytes = static_cast<uint64_t>(piece->rows * piece->cols) * sizeof(float);
        }
        rows_.push_back(std::move(r));
        return st;
    }

    // A staging buffer for the next piece (`for_out`: of C, from the
    // device), once the copy that last used it is done: the least recently
    // used of those that hold no piece of C, else the one whose piece of C
    // came first, after that piece is copied into C. A piece of C takes a
    // free buffer only while kInputBuffers others stay free, so that pieces
    // of A and B always have two to alternate between.
    tgemm_status acquire(Staging **buf, bool for_out)
    {
        Staging *pick = nullptr;
        int free_count = 0;
        for (Staging &b : pl_.staging)
            if (b.out == nullptr) {
                ++free_count;
                if (pick == nullptr || b.used < pick->used)
                    pick = &b;
            }
        if (for_out && free_count <= kInputBuffers)
            pick = nullptr;
        tgemm_status st;
        if (pick != nullptr) {
            st = host_wait(pick->done, TraceEvent::WaitBuffer, nullptr, "cudaEventSynchronize (staging)");
        } else {
            pick = oldest_out();
            st = drain(*pick);
        }
        pick->used = ++pl_.uses;
        *buf = pick;
        return st;
    }

    Staging *oldest_out()
    {
        Staging *pick = nullptr;
        for (Staging &b : pl_.staging)
            if (b.out != nullptr && (pick == nullptr || b.used < pick->used))
                pick = &b;
        return pick;
    }

    // Copies the piece of C in b to its place in C, once it has arrived. A
    // piece whose arrival is not confirmed stays in b for finish().
    tgemm_status drain(Staging &b)
    {
        const tgemm_status st = host_wait(b.done, TraceEvent::WaitOut, &b, "cudaEventSynchronize (copy out)");
        if (st == TGEMM_SUCCESS)
            land(b);
        return st;
    }

    // Copies the piece of C in b, which has arrived, to its place in C,
    // where it is written back.
    void land(Staging &b)
    {
        if (!tracing_) {
            host_copy(b.out, b.out_ld, b.ptr, b.rows, b.rows, b.cols);
        } else {
            const double t = since_start(Clock::now());
            host_copy(b.out, b.out_ld, b.ptr, b.rows, b.rows, b.cols, &parts_);
            TraceRow r = task_row(TraceEvent::StageOut, 'C', static_cast<uint64_t>(b.rows * b.cols) * sizeof(float),
                                  t, since_start(Clock::now()));
            r.task = b.task;
            r.tile_row = b.tile_row;
            r.tile_col = b.tile_col;
            r.chunk = -1;
            trace_copy(std::move(r), parts_);
        }
        written_.push_back(Rect{b.c_row, b.c_col, b.rows, b.cols});
        b.out = nullptr;
    }

    // Calls fn(r0, c0, rows, cols) for the pieces of a rows x cols block
    // that each fit in one staging buffer, down the columns.
    template <typename Fn>
    tgemm_status for_each_piece(int64_t rows, int64_t cols, Fn fn)
    {
        const int64_t pr = std::min(rows, kStagingElems);
        const int64_t pc = std::min(cols, kStagingElems / pr);
        for (int64_t c0 = 0; c0 < cols; c0 += pc)
            for (int64_t r0 = 0; r0 < rows; r0 += pr) {
                const tgemm_status st = fn(r0, c0, std::min(pr, rows - r0), std::min(pc, cols - c0));
                if (st != TGEMM_SUCCESS)
                    return st;
            }
        return TGEMM_SUCCESS;
    }

    // Copies the part r of a host operand (src, ld) to the device at dst (dld).
    tgemm_status load(const Rect &r, const float *src, int64_t ld, MemKind kind, float *dst, int64_t dld, char operand)
    {
        const float *from = src + r.row + r.col * ld;
        if (kind == MemKind::Pinned)
            return copy_async(dst, dld, from, ld, r.rows, r.cols, cudaMemcpyHostToDevice, pl_.in, operand);
        return for_each_piece(r.rows, r.cols, [&](int64_t r0, int64_t c0, int64_t pr, int64_t pc) {
            Staging *b = nullptr;
            tgemm_status st = acquire(&b, false);
            if (st != TGEMM_SUCCESS)
                return st;
            stage(b->ptr, pr, from + r0 + c0 * ld, ld, pr, pc, TraceEvent::StageIn, operand);
            if ((st = copy_async(dst + r0 + c0 * dld, dld, b->ptr, pr, pr, pc, cudaMemcpyHostToDevice, pl_.in,
                                 operand)) != TGEMM_SUCCESS)
                return st;
            return record(b->done, pl_.in);
        });
    }

    // Copies a finished tile of C from the device (src, dld) to host C. A
    // pageable C receives it later, when its staging buffer is needed again
    // or at the end of the call.
    tgemm_status store(const Rect &r, const float *src, int64_t dld)
    {
        float *to = p_.c + r.row + r.col * p_.ldc;
        if (kc_ == MemKind::Pinned) {
            const tgemm_status st =
                copy_async(to, p_.ldc, src, dld, r.rows, r.cols, cudaMemcpyDeviceToHost, pl_.out, 'C');
            if (st == TGEMM_SUCCESS)
                enqueued_.push_back(r);
            return st;
        }
        return for_each_piece(r.rows, r.cols, [&](int64_t r0, int64_t c0, int64_t pr, int64_t pc) {
            Staging *b = nullptr;
            tgemm_status st = acquire(&b, true);
            if (st != TGEMM_SUCCESS)
                return st;
            if ((st = copy_async(b->ptr, pr, src + r0 + c0 * dld, dld, pr, pc, cudaMemcpyDeviceToHost, pl_.out,
                                 'C')) != TGEMM_SUCCESS ||
                (st = record(b->done, pl_.out)) != TGEMM_SUCCESS)
                return st;
            b->out = to + r0 + c0 * p_.ldc;
            b->out_ld = p_.ldc;
            b->rows = pr;
            b->cols = pc;
            b->c_row = r.row + r0;
            b->c_col = r.col + c0;
            b->task = task_;
            b->tile_row = task_ >= 0 ? cur_.i0 / plan_.mt : -1;
            b->tile_col = task_ >= 0 ? cur_.j0 / plan_.nt : -1;
            return TGEMM_SUCCESS;
        });
    }

    // Copies in one operand's part of task x when the plan says so.
    tgemm_status load_operand(const OperandStep &s, const Slots &slots, cudaEvent_t *free, const float *src,
                              int64_t ld, MemKind kind, char operand, bool *loaded)
    {
        if (!s.load)
            return TGEMM_SUCCESS;
        tgemm_status st;
        if (s.reuse && (st = wait(pl_.in, free[s.slot])) != TGEMM_SUCCESS)
            return st;
        *loaded = true;
        return load(s.rect, src, ld, kind, arena_ + s.offset, slots.ld, operand);
    }

    // The kernel's view of A or B: its slot, or the operand in place.
    const float *operand(const OperandStep &s, const Slots &slots, const float *src, int64_t ld, int64_t *out_ld) const
    {
        if (slots.cache == Cache::InPlace) {
            *out_ld = ld;
            return src + s.rect.row + s.rect.col * ld;
        }
        *out_ld = slots.ld;
        return arena_ + s.offset;
    }

    tgemm_status run_task(int64_t t, const Task &x)
    {
        task_ = t;
        cur_ = x;
        tgemm_status st;
        bool loaded = false;
        const bool c_host = plan_.c.cache == Cache::Tile;
        if ((st = load_operand(x.a, plan_.a, pl_.free_a, p_.a, p_.lda, ka_, 'A', &loaded)) != TGEMM_SUCCESS ||
            (st = load_operand(x.b, plan_.b, pl_.free_b, p_.b, p_.ldb, kb_, 'B', &loaded)) != TGEMM_SUCCESS)
            return st;
        // A slot of C is written (by the copy in, else by the kernel) only
        // after the tile it held before has left for the host.
        if (c_host && x.c.reuse && (st = wait(x.c.load ? pl_.in : pl_.comp, pl_.free_c[x.c.slot])) != TGEMM_SUCCESS)
            return st;
        if (x.c.load) {
            loaded = true;
            if ((st = load(x.c.rect, p_.c, p_.ldc, kc_, arena_ + x.c.offset, plan_.c.ld, 'C')) != TGEMM_SUCCESS)
                return st;
        }
        if (loaded && (st = record_wait(pl_.loaded, pl_.in, pl_.comp)) != TGEMM_SUCCESS)
            return st;

        GemmParams d = p_;
        d.m = x.rows;
        d.n = x.cols;
        d.k = x.depth;
        if (reads_ab_) {
            d.a = operand(x.a, plan_.a, p_.a, p_.lda, &d.lda);
            d.b = operand(x.b, plan_.b, p_.b, p_.ldb, &d.ldb);
        }
        d.c = c_host ? arena_ + x.c.offset : p_.c + x.i0 + x.j0 * p_.ldc;
        d.ldc = c_host ? plan_.c.ld : p_.ldc;
        d.beta = x.first ? p_.beta : 1.0f;
        if (tracing_)
            gpu_begin(pl_.comp, task_row(TraceEvent::Kernel, '-', 0, 0, 0));
        st = run_device_operands(d, dev_, pl_.comp);
        if (tracing_)
            gpu_end(pl_.comp);
        if (st != TGEMM_SUCCESS)
            return st;
        if (!c_host && x.last)
            enqueued_.push_back(Rect{x.i0, x.j0, x.rows, x.cols});
        const auto slotted = [](Cache c) { return c == Cache::Panel || c == Cache::Chunk; };
        if (slotted(plan_.a.cache) && (st = record(pl_.free_a[x.a.slot], pl_.comp)) != TGEMM_SUCCESS)
            return st;
        if (slotted(plan_.b.cache) && (st = record(pl_.free_b[x.b.slot], pl_.comp)) != TGEMM_SUCCESS)
            return st;
        if (!c_host || !x.last)
            return TGEMM_SUCCESS;
        if ((st = record_wait(pl_.computed, pl_.comp, pl_.out)) != TGEMM_SUCCESS ||
            (st = store(x.c.rect, arena_ + x.c.offset, plan_.c.ld)) != TGEMM_SUCCESS)
            return st;
        return record(pl_.free_c[x.c.slot], pl_.out);
    }

    // Joins the copy streams into the compute stream, frees the arena there,
    // makes the caller's stream wait; moves the pieces of a pageable C still
    // in staging buffers into place as they arrive, and waits for the end.
    // Runs after errors too: recover() then leaves the pipeline idle, or
    // marks it broken.
    tgemm_status finish(cudaStream_t caller, tgemm_status st)
    {
        task_ = -1;
        cudaError_t e = cudaEventRecord(pl_.in_done, pl_.in);
        if (e == cudaSuccess)
            e = cudaEventRecord(pl_.out_done, pl_.out);
        if (e == cudaSuccess)
            e = cudaStreamWaitEvent(pl_.comp, pl_.in_done, 0);
        if (e == cudaSuccess)
            e = cudaStreamWaitEvent(pl_.comp, pl_.out_done, 0);
        if (e == cudaSuccess && arena_ != nullptr && (e = cudaFreeAsync(arena_, pl_.comp)) == cudaSuccess)
            arena_ = nullptr;
        if (e == cudaSuccess)
            e = cudaEventRecord(pl_.end, pl_.comp);
        if (e == cudaSuccess)
            e = cudaStreamWaitEvent(caller, pl_.end, 0);
        if (e != cudaSuccess && st == TGEMM_SUCCESS)
            st = fail_cuda(e, "finishing a call on host operands");
        // The pieces of C left in staging, oldest first: each arrived with
        // the copies before it, while later kernels may still run.
        for (Staging *b = oldest_out(); b != nullptr && st == TGEMM_SUCCESS; b = oldest_out())
            st = drain(*b);
        if (st == TGEMM_SUCCESS) {
            if (!tracing_) {
                e = cudaEventSynchronize(pl_.end);
            } else {
                const double t = since_start(Clock::now());
                e = cudaEventSynchronize(pl_.end);
                rows_.push_back(task_row(TraceEvent::WaitEnd, '-', 0, t, since_start(Clock::now())));
            }
            if (e == cudaSuccess)
                return TGEMM_SUCCESS;
            st = fail_cuda(e, "finishing a call on host operands");
        }
        recover();
        return st;
    }

    // After a failure: waits for the three streams to go idle, asking each
    // twice, since a failure that persists is a broken context, in which
    // nothing runs any more. Once they are idle, every copy and kernel
    // enqueued has finished and nothing else will: the pieces of C waiting
    // in staging go into place, the parts of C whose last write was
    // enqueued are written back, and the arena goes back to the pool (if
    // freeing it fails, it stays allocated: there is nothing else to do).
    // Otherwise nothing more is written back and the pipeline is broken.
    void recover()
    {
        for (cudaStream_t s : {pl_.in, pl_.comp, pl_.out})
            if (cudaStreamSynchronize(s) != cudaSuccess && cudaStreamSynchronize(s) != cudaSuccess)
                broken_ = true;
        if (broken_) {
            for (Staging &b : pl_.staging)
                b.out = nullptr;
            return;
        }
        for (Staging *b = oldest_out(); b != nullptr; b = oldest_out())
            land(*b);
        written_.insert(written_.end(), enqueued_.begin(), enqueued_.end());
        if (arena_ != nullptr &&
            (cudaFreeAsync(arena_, pl_.comp) == cudaSuccess || cudaFreeAsync(arena_, pl_.comp) == cudaSuccess))
            arena_ = nullptr;
    }

    // The parts of C not written back, after a failure: all of C when none
    // is, else each tile of the plan (for a pageable C, each
    // piece of a tile that has pieces written back) missing from written_,
    // joined where they meet along a whole side.
    void not_written_back(std::vector<Rect> *left)
    {
        if (written_.empty()) {
            left->push_back(Rect{0, 0, p_.m, p_.n});
            return;
        }
        const auto key = [](const Rect &r) { return std::make_tuple(r.row, r.col, r.rows, r.cols); };
        std::set<std::tuple<int64_t, int64_t, int64_t, int64_t>> written;
        for (const Rect &r : written_)
            written.insert(key(r));
        for (int64_t bi = 0; bi < plan_.mb; ++bi)
            for (int64_t bj = 0; bj < plan_.nb; ++bj) {
                const Rect t{bi * plan_.mt, bj * plan_.nt, std::min(plan_.mt, p_.m - bi * plan_.mt),
                             std::min(plan_.nt, p_.n - bj * plan_.nt)};
                if (written.count(key(t)) != 0)
                    continue;
                std::vector<Rect> pieces;
                bool some = false;
                if (kc_ == MemKind::Pageable)
                    (void)for_each_piece(t.rows, t.cols, [&](int64_t r0, int64_t c0, int64_t pr, int64_t pc) {
                        const Rect q{t.row + r0, t.col + c0, pr, pc};
                        if (written.count(key(q)) != 0)
                            some = true;
                        else
                            pieces.push_back(q);
                        return TGEMM_SUCCESS;
                    });
                if (some)
                    left->insert(left->end(), pieces.begin(), pieces.end());
                else
                    left->push_back(t);
            }
        join_rects(left);
    }

    struct GpuSpan {
        size_t row = 0;  // in rows_
        cudaEvent_t begin = nullptr, end = nullptr;
    };

    const GemmParams &p_;
    const MemKind ka_, kb_, kc_;
    const DeviceInfo &dev_;
    Pipeline &pl_;
    const cudaMemPool_t pool_;
    bool reads_ab_ = false;
    bool pageable_ = false;  // some operand the call reads or writes is pageable host memory
    PlanRequest req_;
    HostPlan plan_;
    float *arena_ = nullptr;  // until finish() frees it
    int64_t task_ = -1;      // the task being enqueued, -1 = none
    // Failure bookkeeping. Parts of C written back (host copies from
    // staging done; after a failure, also the enqueued_ ones), parts whose
    // last write is enqueued (copies into pinned C, the last kernel of a
    // tile of device or managed C), and what the caller asked for.
    std::vector<Rect> written_, enqueued_;
    std::vector<Rect> *const left_;
    bool broken_ = false;
    Task cur_;
    // TGEMM_HOST_TRACE
    bool tracing_ = false;
    uint64_t call_ = 0;
    Clock::time_point t0_;
    cudaEvent_t ref_ = nullptr;  // recorded on the idle copy stream at t0_
    double ref_us_ = 0;
    std::vector<TraceRow> rows_;
    std::vector<GpuSpan> spans_;
    bool open_span_ = false;
    std::vector<CopyPart> parts_;
};

}  // namespace

tgemm_status run_host_operands(const GemmParams &p, MemKind ka, MemKind kb, MemKind kc, const DeviceInfo &dev,
                               cudaStream_t s, std::vector<Rect> *left)
{
    if (left != nullptr)
        *left = {Rect{0, 0, p.m, p.n}};
    Lease lease;
    const tgemm_status st = lease.acquire(dev.id);
    if (st != TGEMM_SUCCESS)
        return st;
    HostRun run(p, ka, kb, left != nullptr ? recoverable_c(kc, p.beta) : kc, dev, lease.pipeline(), lease.pool(),
                left);
    const tgemm_status result = run.run(s);
    if (run.broken())
        lease.discard();
    return result;
}

void set_host_plan_sizes(int64_t tile_side, int64_t chunk_depth, int64_t chunk_floor)
{
    g_tile_side.store(tile_side);
    g_chunk_depth.store(chunk_depth);
    g_chunk_floor.store(chunk_floor);
}

tgemm_status release_host_resources()
{
    tgemm_status result = TGEMM_SUCCESS;
    for (int dev = 0; dev < kMaxDevices; ++dev) {
        DeviceState &st = device_state(dev);
        std::lock_guard<std::mutex> lk(st.mu);
        if (st.idle.empty() && st.broken.empty() && st.pool == nullptr)
            continue;
        DeviceGuard guard;
        tgemm_status s = guard.enter(dev);
        if (s != TGEMM_SUCCESS) {
            if (result == TGEMM_SUCCESS)
                result = s;
            continue;
        }
        for (Pipeline *pl : st.idle) {
            const cudaError_t e = destroy_pipeline(pl);
            if (e != cudaSuccess && s == TGEMM_SUCCESS)
                s = fail_cuda(e, "freeing a host-operand pipeline");
            --st.count;
        }
        st.idle.clear();
        // A pipeline given up is freed once its streams are found idle.
        for (auto it = st.broken.begin(); it != st.broken.end();) {
            cudaError_t e = cudaSuccess;
            for (cudaStream_t q : {(*it)->in, (*it)->comp, (*it)->out})
                if (e == cudaSuccess)
                    e = cudaStreamSynchronize(q);
            const bool idle = e == cudaSuccess;
            if (idle)
                e = destroy_pipeline(*it);
            if (e != cudaSuccess && s == TGEMM_SUCCESS)
                s = fail_cuda(e, "freeing a host-operand pipeline given up after a failure");
            it = idle ? st.broken.erase(it) : it + 1;
        }
        if (st.pool != nullptr && s == TGEMM_SUCCESS)
            s = check(cudaMemPoolTrimTo(st.pool, 0), "cudaMemPoolTrimTo");
        st.cv.notify_all();
        if (result == TGEMM_SUCCESS)
            result = s;
    }
    return result;
}

}  // namespace tgemm
