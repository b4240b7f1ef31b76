// The mock CUDA runtime of tests/test_host_mock.cpp (mock_cuda.hpp says
// how it behaves).
#include "mock_cuda.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/settings.hpp"
#include "core/status.hpp"
#include "driver/device_call.hpp"

namespace mock {

// ---- devices

int device_count = 1;
thread_local int current = 0;

int current_device() { return current; }
void set_current_device(int dev) { current = dev; }

// The mock's clock: one tick (a "microsecond" for cudaEventElapsedTime) per
// operation run.
uint64_t ticks = 0;

std::mutex mu;
std::mt19937_64 rng(7);
std::set<Stream *> streams;
// Each device's NULL stream and cudaStreamPerThread (one for all threads).
struct Legacy {
    Stream of[kMaxDevices];
    Legacy()
    {
        for (int d = 0; d < kMaxDevices; ++d)
            of[d].device = d;
    }
} legacy;
std::set<Event *> events;
int timing_events = 0;   // events made with timing (TGEMM_HOST_TRACE only)
std::map<void *, size_t> host_allocs;
// Pinned blocks freed, kept for the next allocations of their size: the
// failure tests make pipelines (128 MiB of staging each) thousands of times.
// Never destroyed, so that the blocks stay reachable for LeakSanitizer.
std::multimap<size_t, void *> &host_spare = *new std::multimap<size_t, void *>();
std::map<void *, DeviceAlloc> device_allocs;

uint64_t device_free = uint64_t{80} << 30;  // what cudaMemGetInfo reports
uint64_t device_free_on[kMaxDevices] = {};  // for one device, where not 0
uint64_t alloc_limit = UINT64_MAX;          // larger device allocations fail
std::atomic<int> pool_read_pause_ms{0};
uint64_t pool_used[kMaxDevices] = {};
int max_pitch = 1 << 30;
int launches = 0;
std::vector<const float *> launched_c;      // the C of each launch since the last reset (lead groups)
int device_mismatches = 0;
bool peer_access = true;
std::set<std::pair<int, int>> peer_enabled;
std::set<std::pair<int, int>> pool_open;
int peer_copies = 0;
std::vector<Logged> launch_log, budget_log;
std::function<void()> on_launch;
std::vector<std::pair<int, size_t>> alloc_log;

// A budget is read as cudaMemGetInfo, then the pool's reserved and used
// bytes. The mock's free memory is a cap per device that other threads'
// allocations do not reduce (device_free, device_free_on): every budget
// read is meant to see that cap. Read live, the pool's two reads would
// subtract a sibling thread's allocation only when it fell between them (a
// device would subtract it from its free memory whenever it was made), and
// on a tight cap the worker would decline its block now and then. So the
// two reads after a thread's cudaMemGetInfo give the bytes of that moment.
thread_local int seen_pool_device = -1;
thread_local uint64_t seen_pool_used = 0;
thread_local int seen_pool_reads = 0;

// The gate of budget queries (gate()).
std::mutex gate_mu;
std::condition_variable gate_cv;
int gate_threads = 0;
double gate_seconds = 0;
std::set<std::thread::id> gate_seen;

void gate(int threads, double seconds)
{
    std::lock_guard<std::mutex> lk(gate_mu);
    gate_threads = threads;
    gate_seconds = seconds;
    gate_seen.clear();
    gate_cv.notify_all();
}

// A thread's first budget query since the gate was set waits for the others.
void pass_gate()
{
    std::unique_lock<std::mutex> lk(gate_mu);
    if (gate_threads == 0 || !gate_seen.insert(std::this_thread::get_id()).second)
        return;
    gate_cv.notify_all();
    gate_cv.wait_for(lk, std::chrono::duration<double>(gate_seconds),
                     [] { return gate_threads == 0 || static_cast<int>(gate_seen.size()) >= gate_threads; });
}

// ---- failures

const char *const kCallNames[kCalls] = {"copy",   "launch", "record", "wait",    "event-sync", "stream-sync", "alloc",
                                        "free",   "create", "destroy", "query", "run-kernel", "run-copy"};


Fault fault;
int64_t calls[kCalls] = {};  // calls of each kind since the last reset
int64_t calls_on[kMaxDevices][kCalls] = {};
int64_t calls_after = 0;     // calls of kind fault.then since the fault struck
bool dead = false;           // a context is broken
bool broken[kMaxDevices] = {};
bool fired = false;          // the fault has struck
bool then_fired = false;     // and its follower

const cudaError_t kBroken = cudaErrorIllegalAddress;

// Whether a call made on device dev, on a stream or event of device other
// (-1: none), meets a broken context.
bool broken_for(int dev, int other = -1) { return broken[dev] || (other >= 0 && broken[other]); }

cudaError_t state(int other = -1) { return broken_for(current, other) ? kBroken : cudaSuccess; }

// Device dev's context breaks: an operation under way at the head of each
// of its streams does part of its work, and nothing queued on them runs any
// more (counted as done, so that after revive() nothing waits for it).
void die(int dev)
{
    dead = true;
    broken[dev] = true;
    std::vector<Stream *> all;
    for (Stream *s : streams)
        if (s->device == dev)
            all.push_back(s);
    all.push_back(&legacy.of[dev]);
    for (Stream *s : all) {
        if (!s->queue.empty()) {
            const Op &op = s->queue.front();
            if (op.partial && (op.wait_stream == nullptr || op.wait_stream->done >= op.wait_pos))
                op.partial();
        }
        while (!s->queue.empty()) {
            s->queue.pop_front();
            ++s->done;
            s->done_tick.push_back(ticks);
        }
    }
}

// Counts a call of kind c made on device dev (on a stream or event of
// device other, -1: none); true when it fails (and breaks a context if the
// fault is sticky).
bool fails(Call c, int dev, int other = -1)
{
    const int64_t all = calls[c]++;
    const int64_t mine = calls_on[dev][c]++;
    if (broken_for(dev, other))
        return true;
    if (fault.device >= 0 && fault.device != dev)
        return false;
    if (fired && c == fault.then && calls_after++ == fault.then_at) {
        then_fired = true;
        return true;
    }
    if (fault.kind != c || (fault.device >= 0 ? mine : all) != fault.at)
        return false;
    fired = true;
    if (fault.sticky) {
        for (int d = 0; d < kMaxDevices; ++d)
            if (fault.device == kAllDevices ? d < device_count : d == dev)
                die(d);
    }
    return true;
}

// A call of the current device.
bool fails(Call c) { return fails(c, current); }

// The error a failed call of kind c returns.
cudaError_t failure(Call c, int other = -1)
{
    if (broken_for(current, other))
        return kBroken;
    return c == Alloc ? cudaErrorMemoryAllocation : cudaErrorInvalidValue;
}

// ---- streams

Stream *stream_of(cudaStream_t s)
{
    if (s == nullptr || s == cudaStreamPerThread || s == cudaStreamLegacy)
        return &legacy.of[current];
    return reinterpret_cast<Stream *>(s);
}

bool runnable(const Stream *s)
{
    if (s->queue.empty())
        return false;
    const Op &op = s->queue.front();
    return op.wait_stream == nullptr || op.wait_stream->done >= op.wait_pos;
}

// Runs one runnable operation, of a random stream; false if none can run.
bool run_one()
{
    std::vector<Stream *> ready;
    for (Stream &s : legacy.of)
        if (runnable(&s))
            ready.push_back(&s);
    for (Stream *s : streams)
        if (runnable(s))
            ready.push_back(s);
    if (ready.empty())
        return false;
    Stream *s = ready[rng() % ready.size()];
    Op op = std::move(s->queue.front());
    s->queue.pop_front();
    ++s->done;
    s->done_tick.push_back(++ticks);
    const Call run = op.kind == OpKind::Kernel ? RunKernel : op.kind == OpKind::Copy ? RunCopy : kCalls;
    if (run != kCalls && fails(run, s->device)) {
        if (op.partial)
            op.partial();
        die(s->device);
        return true;
    }
    if (op.fn)
        op.fn();
    return true;
}

template <typename Done>
void run_until(Done done, const char *what)
{
    while (!done())
        if (!run_one()) {
            std::fprintf(stderr, "mock: deadlock in %s: nothing can run\n", what);
            const auto show = [](const Stream *s) {
                std::fprintf(stderr, "  stream %p: %zu queued, %llu of %llu done", (const void *)s, s->queue.size(),
                             (unsigned long long)s->done, (unsigned long long)s->enqueued);
                if (!s->queue.empty() && s->queue.front().wait_stream)
                    std::fprintf(stderr, ", waits for %p to reach %llu", (const void *)s->queue.front().wait_stream,
                                 (unsigned long long)s->queue.front().wait_pos);
                std::fprintf(stderr, "\n");
            };
            for (const Stream &s : legacy.of)
                show(&s);
            for (const Stream *s : streams)
                show(s);
            std::abort();
        }
}

// Sometimes runs a little of what is queued, so that interleavings vary.
void maybe_progress()
{
    if (rng() % 4 == 0)
        for (int i = static_cast<int>(rng() % 4); i > 0 && run_one(); --i) {
        }
}

void enqueue(cudaStream_t s, Op op)
{
    Stream *st = stream_of(s);
    st->queue.push_back(std::move(op));
    ++st->enqueued;
    maybe_progress();
}

void enqueue(cudaStream_t s, std::function<void()> fn, Stream *wait_stream = nullptr, uint64_t wait_pos = 0)
{
    Op op;
    op.wait_stream = wait_stream;
    op.wait_pos = wait_pos;
    op.fn = std::move(fn);
    enqueue(s, std::move(op));
}

// Runs everything still queued (between tests).
void drain_all()
{
    std::lock_guard<std::mutex> lk(mu);
    while (run_one()) {
    }
}

// The next calls run with fault f (kind -1: none), counted from 0.
void arm(const Fault &f)
{
    std::lock_guard<std::mutex> lk(mu);
    fault = f;
    fired = then_fired = false;
    calls_after = 0;
    for (int64_t &c : calls)
        c = 0;
    for (auto &on : calls_on)
        for (int64_t &c : on)
            c = 0;
}

// A fresh context, as a new process would have (the library's own state,
// pipelines included, stays as it was). No call is in flight, but work a
// call enqueued after its last synchronization (the free of its arena) may
// still be queued: what can run finishes first, as the device would have
// run it, and what cannot goes with the old context. Device memory still
// allocated, tile memory no call will free, goes with the broken one.
void revive()
{
    std::lock_guard<std::mutex> lk(mu);
    fault = Fault();
    while (run_one()) {
    }
    const auto discard = [](Stream &s) {
        while (!s.queue.empty()) {
            s.queue.pop_front();
            ++s.done;
            s.done_tick.push_back(ticks);
        }
    };
    for (Stream &s : legacy.of)
        discard(s);
    for (Stream *s : streams)
        discard(*s);
    dead = false;
    for (bool &b : broken)
        b = false;
    for (const auto &a : device_allocs)
        delete[] static_cast<float *>(a.first);
    device_allocs.clear();
    for (uint64_t &u : pool_used)
        u = 0;
}

}  // namespace mock

using mock::mu;

extern "C" {

// Without `mu`: fail_cuda() calls it, and mock functions call that holding `mu`.
cudaError_t cudaGetLastError(void) { return mock::state(); }
const char *cudaGetErrorName(cudaError_t) { return "mockError"; }
const char *cudaGetErrorString(cudaError_t) { return "mock error"; }

cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr, int)
{
    std::lock_guard<std::mutex> lk(mu);
    if (mock::fails(mock::Query))
        return mock::failure(mock::Query);
    *value = attr == cudaDevAttrMaxPitch ? mock::max_pitch : 0;
    return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int)
{
    std::lock_guard<std::mutex> lk(mu);
    if (mock::fails(mock::Create))
        return mock::failure(mock::Create);
    auto *st = new mock::Stream();
    st->device = mock::current;
    mock::streams.insert(st);
    *s = reinterpret_cast<cudaStream_t>(st);
    return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    std::lock_guard<std::mutex> lk(mu);
    mock::Stream *st = mock::stream_of(s);
    // In a broken context the call fails, and the stream is gone anyway.
    if (mock::fails(mock::Destroy, mock::current, st->device) && !mock::broken_for(mock::current, st->device))
        return mock::failure(mock::Destroy);
    mock::run_until([&] { return st->queue.empty(); }, "cudaStreamDestroy");
    // All of its work is done: waits for it are met, events on it complete.
    mock::streams.erase(st);
    for (mock::Stream *other : mock::streams)
        for (mock::Op &op : other->queue)
            if (op.wait_stream == st)
                op.wait_stream = nullptr;
    for (mock::Stream &l : mock::legacy.of)
        for (mock::Op &op : l.queue)
            if (op.wait_stream == st)
                op.wait_stream = nullptr;
    for (mock::Event *e : mock::events)
        if (e->stream == st)
            e->stream = nullptr;
    const int dev = st->device;
    delete st;
    return mock::state(dev);
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    std::lock_guard<std::mutex> lk(mu);
    mock::Stream *st = mock::stream_of(s);
    if (mock::fails(mock::StreamSync, mock::current, st->device))
        return mock::failure(mock::StreamSync, st->device);
    mock::run_until([&] { return st->queue.empty(); }, "cudaStreamSynchronize");
    return mock::state(st->device);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *ev, unsigned int flags)
{
    std::lock_guard<std::mutex> lk(mu);
    if (mock::fails(mock::Create))
        return mock::failure(mock::Create);
    if (!(flags & cudaEventDisableTiming))
        ++mock::timing_events;
    auto *e = new mock::Event();
    e->device = mock::current;
    mock::events.insert(e);
    *ev = reinterpret_cast<cudaEvent_t>(e);
    return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t ev)
{
    std::lock_guard<std::mutex> lk(mu);
    auto *e = reinterpret_cast<mock::Event *>(ev);
    const int dev = e->device;
    if (mock::fails(mock::Destroy, mock::current, dev) && !mock::broken_for(mock::current, dev))
        return mock::failure(mock::Destroy);
    mock::events.erase(e);
    delete e;
    return mock::state(dev);
}

cudaError_t cudaEventRecord(cudaEvent_t ev, cudaStream_t s)
{
    std::lock_guard<std::mutex> lk(mu);
    auto *e = reinterpret_cast<mock::Event *>(ev);
    mock::Stream *st = mock::stream_of(s);
    if (mock::fails(mock::Record, mock::current, st->device))
        return mock::failure(mock::Record, st->device);
    if (e->device != st->device)
        ++mock::device_mismatches;
    e->stream = st;
    e->pos = e->stream->enqueued;
    e->record_tick = mock::ticks;
    mock::maybe_progress();
    return cudaSuccess;
}

// The clock when each event completed: when its stream ran the operation
// before it, or when it was recorded on an idle stream.
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    std::lock_guard<std::mutex> lk(mu);
    if (mock::fails(mock::Query))
        return mock::failure(mock::Query);
    const auto when = [](mock::Event *e) {
        if (e->stream == nullptr)
            return e->record_tick;
        mock::run_until([&] { return e->stream->done >= e->pos; }, "cudaEventElapsedTime");
        return std::max(e->record_tick, e->pos > 0 ? e->stream->done_tick[e->pos - 1] : 0);
    };
    const uint64_t a = when(reinterpret_cast<mock::Event *>(start)), b = when(reinterpret_cast<mock::Event *>(end));
    *ms = static_cast<float>((static_cast<double>(b) - static_cast<double>(a)) / 1000.0);
    return mock::state();
}

cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t ev, unsigned int)
{
    std::lock_guard<std::mutex> lk(mu);
    const auto *e = reinterpret_cast<mock::Event *>(ev);
    const int dev = mock::stream_of(s)->device;
    if (mock::fails(mock::Wait, mock::current, dev))
        return mock::failure(mock::Wait, dev);
    if (e->stream != nullptr)
        mock::enqueue(s, nullptr, e->stream, e->pos);
    return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t ev)
{
    std::lock_guard<std::mutex> lk(mu);
    const auto *e = reinterpret_cast<mock::Event *>(ev);
    const int dev = e->stream != nullptr ? e->stream->device : e->device;
    if (mock::fails(mock::EventSync, mock::current, dev))
        return mock::failure(mock::EventSync, dev);
    if (e->stream != nullptr)
        mock::run_until([&] { return e->stream->done >= e->pos; }, "cudaEventSynchronize");
    return mock::state(dev);
}

cudaError_t cudaEventQuery(cudaEvent_t ev)
{
    std::lock_guard<std::mutex> lk(mu);
    const auto *e = reinterpret_cast<mock::Event *>(ev);
    const int dev = e->stream != nullptr ? e->stream->device : e->device;
    if (mock::fails(mock::Query, mock::current, dev))
        return mock::failure(mock::Query, dev);
    // A query sees the GPU move on a little: a caller that polls makes
    // progress.
    if (e->stream != nullptr && e->stream->done < e->pos && (mock::run_one(), e->stream->done < e->pos))
        return mock::state(dev) != cudaSuccess ? mock::state(dev) : cudaErrorNotReady;
    return mock::state(dev);
}

cudaError_t cudaDeviceCanAccessPeer(int *can, int dev, int peer)
{
    std::lock_guard<std::mutex> lk(mu);
    if (mock::fails(mock::Query))
        return mock::failure(mock::Query);
    *can = mock::peer_access && dev != peer && dev < mock::device_count && peer < mock::device_count;
    return cudaSuccess;
}

int pool_device(cudaMemPool_t pool);

// Pool memory is open to the pool's own device only, until this call
// opens it to others (as on a GPU: peer access does not do it).
cudaError_t cudaMemPoolSetAccess(cudaMemPool_t pool, const cudaMemAccessDesc *desc, size_t count)
{
    std::lock_guard<std::mutex> lk(mu);
    if (mock::fails(mock::Query))
        return mock::failure(mock::Query);
    for (size_t i = 0; i < count; ++i)
        mock::pool_open.insert({pool_device(pool), desc[i].location.id});
    return cudaSuccess;
}

cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int)
{
    std::lock_guard<std::mutex> lk(mu);
    if (mock::fails(mock::Query))
        return mock::failure(mock::Query);
    return mock::peer_enabled.insert({mock::current, peer}).second ? cudaSuccess : cudaErrorPeerAccessAlreadyEnabled;
}

// Part of a copy of `height` rows of `width` bytes: whole rows, then part
// of one, in 4-byte steps (an element is written whole or not at all).
std::function<void()> partial_copy(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                                   size_t height)
{
    return [=] {
        const size_t rows = static_cast<size_t>(mock::rng() % height);
        const size_t bytes = width / 4 == 0 ? 0 : 4 * static_cast<size_t>(mock::rng() % (width / 4 + 1));
        for (size_t h = 0; h <= rows && h < height; ++h)
            std::memcpy(static_cast<char *>(dst) + h * dpitch, static_cast<const char *>(src) + h * spitch,
                        h < rows ? width : bytes);
    };
}

// A copy from device memory (cudaMemcpyDefault, the only kind the library
// uses between devices) onto a stream of device dev: the source must be a
// live allocation whose pool is open to dev. Counts it; false if refused.
bool peer_copy_ok(const void *src, int dev)
{
    auto a = mock::device_allocs.upper_bound(const_cast<void *>(src));
    if (a == mock::device_allocs.begin() ||
        static_cast<const char *>(src) >= static_cast<const char *>((--a)->first) + a->second.bytes)
        return false;
    if (a->second.device != dev && mock::pool_open.count({a->second.device, dev}) == 0)
        return false;
    ++mock::peer_copies;
    if (a->second.device != dev && mock::peer_enabled.count({dev, a->second.device}) == 0)
        ++mock::device_mismatches;
    return true;
}

cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                              cudaMemcpyKind kind, cudaStream_t s)
{
    std::lock_guard<std::mutex> lk(mu);
    const int dev = mock::stream_of(s)->device;
    if (mock::fails(mock::Copy, mock::current, dev))
        return mock::failure(mock::Copy, dev);
    if (kind == cudaMemcpyDefault && !peer_copy_ok(src, dev))
        return cudaErrorInvalidValue;
    if (width > dpitch || width > spitch || dpitch > static_cast<size_t>(mock::max_pitch) ||
        spitch > static_cast<size_t>(mock::max_pitch))
        return cudaErrorInvalidPitchValue;
    mock::Op op;
    op.kind = mock::OpKind::Copy;
    op.fn = [=] {
        for (size_t h = 0; h < height; ++h)
            std::memcpy(static_cast<char *>(dst) + h * dpitch, static_cast<const char *>(src) + h * spitch, width);
    };
    op.partial = partial_copy(dst, dpitch, src, spitch, width, height);
    mock::enqueue(s, std::move(op));
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, cudaStream_t s)
{
    std::lock_guard<std::mutex> lk(mu);
    const int dev = mock::stream_of(s)->device;
    if (mock::fails(mock::Copy, mock::current, dev))
        return mock::failure(mock::Copy, dev);
    if (kind == cudaMemcpyDefault && !peer_copy_ok(src, dev))
        return cudaErrorInvalidValue;
    mock::Op op;
    op.kind = mock::OpKind::Copy;
    op.fn = [=] { std::memcpy(dst, src, bytes); };
    op.partial = partial_copy(dst, bytes, src, bytes, bytes, 1);
    mock::enqueue(s, std::move(op));
    return cudaSuccess;
}

// A pool is the number of its device.
int pool_device(cudaMemPool_t pool) { return pool != nullptr ? *reinterpret_cast<int *>(pool) : mock::current; }

cudaError_t cudaMemPoolCreate(cudaMemPool_t *pool, const cudaMemPoolProps *props)
{
    std::lock_guard<std::mutex> lk(mu);
    if (mock::fails(mock::Create))
        return mock::failure(mock::Create);
    *pool = reinterpret_cast<cudaMemPool_t>(new int(props->location.id));
    return cudaSuccess;
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t, cudaMemPoolAttr, void *)
{
    std::lock_guard<std::mutex> lk(mu);
    return mock::fails(mock::Query) ? mock::failure(mock::Query) : cudaSuccess;
}

cudaError_t cudaMemPoolTrimTo(cudaMemPool_t, size_t)
{
    std::lock_guard<std::mutex> lk(mu);
    return mock::fails(mock::Query) ? mock::failure(mock::Query) : cudaSuccess;
}

cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void *value)
{
    const bool pool_bytes = attr == cudaMemPoolAttrReservedMemCurrent || attr == cudaMemPoolAttrUsedMemCurrent;
    const int pause_ms = mock::pool_read_pause_ms.load();
    if (attr == cudaMemPoolAttrUsedMemCurrent && pause_ms > 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
    std::lock_guard<std::mutex> lk(mu);
    const int dev = pool_device(pool);
    const bool seen = pool_bytes && mock::seen_pool_reads > 0 && mock::seen_pool_device == dev;
    if (pool_bytes && mock::seen_pool_reads > 0)
        --mock::seen_pool_reads;
    if (mock::fails(mock::Query))
        return mock::failure(mock::Query);
    // Nothing is cached: reserved == used.
    const uint64_t used = seen ? mock::seen_pool_used : mock::pool_used[dev];
    *static_cast<uint64_t *>(value) =
        pool_bytes ? used : 0;
    return cudaSuccess;
}

cudaError_t cudaMallocFromPoolAsync(void **p, size_t bytes, cudaMemPool_t pool, cudaStream_t s)
{
    std::lock_guard<std::mutex> lk(mu);
    const int dev = pool_device(pool);
    if (mock::fails(mock::Alloc, mock::current, mock::stream_of(s)->device))
        return mock::failure(mock::Alloc, mock::stream_of(s)->device);
    if (dev != mock::current || dev != mock::stream_of(s)->device)
        ++mock::device_mismatches;
    if (bytes > mock::alloc_limit)
        return cudaErrorMemoryAllocation;
    float *f = new float[bytes / sizeof(float) + 1];
    mock::device_allocs[f] = mock::DeviceAlloc{bytes, dev};
    mock::alloc_log.emplace_back(dev, bytes);
    mock::pool_used[dev] += bytes;
    *p = f;
    // The memory becomes the caller's where stream s reaches this point, and
    // holds garbage (NaN) then: a copy on another stream that did not wait
    // for that point is overwritten.
    mock::enqueue(s, [f, bytes] { std::memset(f, 0xFF, bytes); });
    return cudaSuccess;
}

cudaError_t cudaFreeAsync(void *p, cudaStream_t s)
{
    std::lock_guard<std::mutex> lk(mu);
    const int dev = mock::stream_of(s)->device;
    if (mock::fails(mock::Free, mock::current, dev))
        return mock::failure(mock::Free, dev);
    mock::enqueue(s, [p] {
        const mock::DeviceAlloc a = mock::device_allocs.at(p);
        mock::pool_used[a.device] -= a.bytes;
        mock::device_allocs.erase(p);
        delete[] static_cast<float *>(p);
    });
    return cudaSuccess;
}

cudaError_t cudaHostAlloc(void **p, size_t bytes, unsigned int)
{
    std::lock_guard<std::mutex> lk(mu);
    if (mock::fails(mock::Alloc))
        return mock::failure(mock::Alloc);
    const auto spare = mock::host_spare.find(bytes);
    if (spare != mock::host_spare.end()) {
        *p = spare->second;
        mock::host_spare.erase(spare);
    } else {
        *p = std::malloc(bytes);
    }
    mock::host_allocs[*p] = bytes;
    return cudaSuccess;
}

cudaError_t cudaFreeHost(void *p)
{
    std::lock_guard<std::mutex> lk(mu);
    if (mock::fails(mock::Free) && !mock::broken_for(mock::current))
        return mock::failure(mock::Free);
    mock::host_spare.emplace(mock::host_allocs.at(p), p);
    mock::host_allocs.erase(p);
    return mock::state();
}

cudaError_t cudaMemGetInfo(size_t *free_b, size_t *total_b)
{
    mock::pass_gate();
    std::lock_guard<std::mutex> lk(mu);
    mock::budget_log.push_back(mock::Logged{mock::current, std::this_thread::get_id()});
    mock::seen_pool_reads = 0;
    if (mock::fails(mock::Query))
        return mock::failure(mock::Query);
    mock::seen_pool_device = mock::current;
    mock::seen_pool_used = mock::pool_used[mock::current];
    mock::seen_pool_reads = 2;
    const uint64_t own = mock::device_free_on[mock::current];
    *free_b = own != 0 ? own : mock::device_free;
    *total_b = *free_b;
    return cudaSuccess;
}

}  // extern "C"

// ---------------------------------------------------------------- what the library calls besides the runtime

namespace mock {
int contract_violations = 0;

std::vector<Range> kinds;
}  // namespace mock

namespace tgemm {

// As the real guard (runtime/device.cpp), on the mock's current device.
DeviceGuard::~DeviceGuard()
{
    if (saved_ >= 0)
        mock::current = saved_;
}

tgemm_status DeviceGuard::enter(int dev)
{
    const int cur = mock::current;
    if (cur == dev)
        return TGEMM_SUCCESS;
    if (dev < 0 || dev >= mock::device_count)
        return fail_cuda(cudaErrorInvalidDevice, "cudaSetDevice");
    mock::current = dev;
    saved_ = cur;
    return TGEMM_SUCCESS;
}

// As the real one: TGEMM_DEVICE, else the thread's current device.
tgemm_status choose_device(int *dev)
{
    const Settings &set = settings();
    if (set.device_local_rank && set.local_rank >= 0) {
        *dev = set.local_rank % mock::device_count;
        return TGEMM_SUCCESS;
    }
    if (set.device >= mock::device_count)
        return fail(TGEMM_ERROR_INVALID_DEVICE, "TGEMM_DEVICE=%d but only %d device(s) are visible", set.device,
                    mock::device_count);
    *dev = set.device >= 0 ? set.device : mock::current;
    return TGEMM_SUCCESS;
}

tgemm_status visible_devices(int *count)
{
    *count = mock::device_count;
    return TGEMM_SUCCESS;
}

namespace {

// The device whose memory p is, -1 if none or not known; *kind its kind.
int owner(const void *p, MemKind *kind)
{
    *kind = MemKind::Pageable;
    int dev = -1;
    for (const mock::Range &r : mock::kinds)
        if (p >= r.begin && static_cast<const char *>(p) < static_cast<const char *>(r.begin) + r.bytes) {
            *kind = r.kind;
            dev = r.kind == MemKind::Device ? r.device : -1;
        }
    auto a = mock::device_allocs.upper_bound(const_cast<void *>(p));
    if (a != mock::device_allocs.begin()) {
        --a;
        if (static_cast<const char *>(p) < static_cast<const char *>(a->first) + a->second.bytes) {
            *kind = MemKind::Device;
            dev = a->second.device;
        }
    }
    return dev;
}

}  // namespace


// Device i: an H100's SMs and clock, so that the spread model sees a real peak.
tgemm_status device_info(int dev, const DeviceInfo **info)
{
    static const std::vector<DeviceInfo> devices = [] {
        std::vector<DeviceInfo> v(mock::kMaxDevices);
        for (int d = 0; d < mock::kMaxDevices; ++d) {
            v[d].id = d;
            v[d].sm_count = 132;
            v[d].max_grid_x = 0x7FFFFFFF;
            v[d].cc_major = 9;
            v[d].cc_minor = 0;
            v[d].clock_khz = 1980000;
        }
        return v;
    }();
    if (dev < 0 || dev >= mock::device_count)
        return fail(TGEMM_ERROR_UNSUPPORTED, "device %d: the mock has %d device(s)", dev, mock::device_count);
    *info = &devices[static_cast<size_t>(dev)];
    return TGEMM_SUCCESS;
}

tgemm_status classify_pointer(const void *p, MemKind *kind, int *device)
{
    std::lock_guard<std::mutex> lk(mu);
    if (mock::fails(mock::Query))
        return fail_cuda(mock::failure(mock::Query), "cudaPointerGetAttributes");
    *device = owner(p, kind);
    return TGEMM_SUCCESS;
}

// The kernel: the same product on the CPU, when the stream gets to it. A
// launch that fails (not from a broken context) has enqueued the first half
// of the columns first, as a failure after the first of several launches
// (split-K, peeled strips) would.
tgemm_status run_device_operands(const GemmParams &p, const DeviceInfo &dev, cudaStream_t s, Math math)
{
    std::lock_guard<std::mutex> lk(mu);
    const int on = mock::stream_of(s)->device;
    const bool failed = mock::fails(mock::Launch, mock::current, on);
    if (failed && mock::broken_for(mock::current, on))
        return (tgemm::fail)(TGEMM_ERROR_CUDA, "mock launch failure (broken context)");
    // A kernel runs on the current device, whose stream it must be given.
    if (on != mock::current || dev.id != mock::current)
        ++mock::device_mismatches;
    ++mock::launches;
    mock::launched_c.push_back(p.c);
    mock::launch_log.push_back(mock::Logged{mock::current, std::this_thread::get_id(), math});
    if (mock::on_launch)
        mock::on_launch();
    const bool reads_ab = p.k > 0 && p.alpha != 0.0f;
    if (p.m < 1 || p.n < 1 || p.ldc < p.m ||
        (reads_ab && (p.lda < (p.trans_a ? p.k : p.m) || p.ldb < (p.trans_b ? p.n : p.k))))
        ++mock::contract_violations;
    const GemmParams d = p;
    // Columns [0, cols) in full, then rows [0, rows) of column `cols`.
    const auto columns = [d, reads_ab](int64_t cols, int64_t rows) {
        for (int64_t j = 0; j < d.n && j <= cols; ++j)
            for (int64_t i = 0; i < (j < cols ? d.m : rows); ++i) {
                float acc = 0.0f;
                for (int64_t q = 0; reads_ab && q < d.k; ++q)
                    acc += (d.trans_a ? d.a[q + i * d.lda] : d.a[i + q * d.lda]) *
                           (d.trans_b ? d.b[j + q * d.ldb] : d.b[q + j * d.ldb]);
                float &c = d.c[i + j * d.ldc];
                const float old = d.beta == 0.0f ? 0.0f : d.beta * c;
                c = reads_ab ? d.alpha * acc + old : old;
            }
    };
    mock::Op op;
    op.kind = mock::OpKind::Kernel;
    if (failed) {
        op.fn = [columns, d] { columns(d.n / 2, 0); };
    } else {
        op.fn = [columns, d] { columns(d.n, 0); };
        op.partial = [columns, d] {
            columns(static_cast<int64_t>(mock::rng() % d.n), static_cast<int64_t>(mock::rng() % d.m));
        };
    }
    mock::enqueue(s, std::move(op));
    return failed ? (tgemm::fail)(TGEMM_ERROR_CUDA, "mock launch failure") : TGEMM_SUCCESS;
}

}  // namespace tgemm
