// A mock CUDA runtime for tests/test_host_mock.cpp: the runtime calls the
// host-operand executor makes, and the library functions it calls besides
// the runtime (devices, pointer kinds, run_device_operands), no GPU needed.
//
// Streams are queues of deferred operations: a copy or a "kernel"
// (run_device_operands, here a CPU loop) runs only when the host
// synchronises on something that needs it, or now and then at random;
// among the streams that could run, a random one goes first, and an
// operation waits only for the events its stream was told to wait for. So a
// missing event wait lets a kernel read a buffer before its copy arrived, a
// missing host wait lets the host overwrite a staging buffer a copy has not
// read yet, and both show up as wrong results. A wait that can never be
// satisfied aborts with "deadlock". Device allocations turn NaN where their
// stream reaches the allocation.
//
// Failures: the mock makes the n-th call of a kind fail (each kind of copy,
// launch, event record, wait and synchronisation, allocation, creation,
// query), once, or for good as a broken context does: that call and every
// later one fail, nothing queued runs any more, and the operation under way
// at the head of each stream (a copy, a kernel) does part of its work
// first. A copy or a kernel can also fault as it runs (a broken context).
//
// Several devices (device_count, 1 unless a test sets it): each thread has
// a current device (0 at first), which DeviceGuard::enter() sets and its
// destructor restores, and which choose_device() reports when
// TGEMM_DEVICE is unset. Streams (the default streams too: one per
// device), events, memory pools and their allocations belong to the device
// current when they were made; device_info(d) describes device d (an
// H100-like peak, so that spread plans see a real one). classify_pointer()
// knows device memory, and its device, by `kinds` (with the device of a
// range) and the mock's own allocations. Calls that mix devices, as CUDA
// refuses or tgemm should never do (a launch on a stream of a device other
// than the current one or the DeviceInfo's, an event recorded on a stream
// of another device, an allocation from another device's pool), are
// counted in device_mismatches. Every launch and every budget query
// (cudaMemGetInfo: once per host-operand run, that is per block of a
// spread call) is logged with its device and thread; gate() makes the
// first budget query of each thread wait until several threads have made
// theirs, so that every worker of a spread call takes a block.
//
// A fault may name a device: only calls made while that device is current
// (a copy or kernel faulting as it runs: one on its streams) count towards
// it and fail, and a
// sticky one breaks only that device's context: its streams stop, and
// calls from threads whose current device it is, or on its streams, fail;
// the other devices keep working. kAllDevices: counted over all calls, and
// a sticky one breaks every device at once. Without a device (-1), calls
// of every device count, and a sticky fault breaks the device it struck.
//
// Every mock function takes `mu` (but cudaGetLastError, which the library
// calls from within mock functions); a test that reads or changes the
// mock's state while calls may run takes it too.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>

#include "core/settings.hpp"
#include "runtime/device.hpp"

namespace mock {

// Devices the mock can describe.
constexpr int kMaxDevices = 8;
extern int device_count;  // what visible_devices() reports; set before the first call

// The calling thread's current device (DeviceGuard), and a test's own
// cudaSetDevice.
int current_device();
void set_current_device(int dev);

struct Stream;

enum class OpKind { Other, Copy, Kernel };

struct Op {
    Stream *wait_stream = nullptr;  // an event wait: runs once wait_stream has done wait_pos operations
    uint64_t wait_pos = 0;
    std::function<void()> fn;
    OpKind kind = OpKind::Other;
    // What the operation may have done when the context broke while it was
    // under way: part of a copy, part of a kernel's tile.
    std::function<void()> partial;
};

struct Stream {
    int device = 0;  // current when it was made
    std::deque<Op> queue;
    uint64_t enqueued = 0, done = 0;
    std::vector<uint64_t> done_tick;  // per operation: the clock when it ran
};

struct Event {
    int device = 0;            // current when it was made
    Stream *stream = nullptr;  // nullptr until recorded
    uint64_t pos = 0;
    uint64_t record_tick = 0;  // the clock when it was recorded
};

extern std::mutex mu;
extern std::mt19937_64 rng;
extern std::set<Stream *> streams;
extern std::set<Event *> events;
extern int timing_events;  // events made with timing (TGEMM_HOST_TRACE only)
extern std::map<void *, size_t> host_allocs;
struct DeviceAlloc {
    size_t bytes = 0;
    int device = 0;  // of the pool it came from
};
extern std::map<void *, DeviceAlloc> device_allocs;

extern uint64_t device_free;                  // what cudaMemGetInfo reports
extern uint64_t device_free_on[kMaxDevices];  // for one device, where not 0
extern uint64_t alloc_limit;                  // larger device allocations fail
// A pause before each read of a pool's used bytes, so that a sibling
// thread's allocation falls between a budget's reads (HostRun::budget:
// cudaMemGetInfo, then the pool's reserved and used bytes).
extern std::atomic<int> pool_read_pause_ms;
extern int max_pitch;
extern int launches;
extern std::vector<const float *> launched_c;  // the C of each launch since the last reset (lead groups)
extern int contract_violations;               // launches whose problem broke run_device_operands' contract
extern int device_mismatches;                 // calls that mix devices (see above)
extern bool peer_access;                      // cudaDeviceCanAccessPeer's answer for two devices
extern std::set<std::pair<int, int>> peer_enabled;  // (device, peer) pairs with peer access turned on
extern std::set<std::pair<int, int>> pool_open;     // (device, reader): the device's tile pool open to the reader
extern int peer_copies;                       // copies from device memory (cudaMemcpyDefault)

// What ran where, since a test last cleared the logs.
struct Logged {
    int device = 0;
    std::thread::id thread;
    tgemm::Math math = tgemm::Math::Strict;  // launches: the math run_device_operands was given
};
extern std::vector<Logged> launch_log;  // run_device_operands
// Called at each launch (run_device_operands), `mu` held, where set.
extern std::function<void()> on_launch;
extern std::vector<Logged> budget_log;  // cudaMemGetInfo
extern std::vector<std::pair<int, size_t>> alloc_log;  // device allocations: device, bytes

// From now on, the first budget query of each thread waits (at most
// `seconds`) until `threads` threads have made one; 0 turns the gate off.
// Takes its own lock, not `mu`.
void gate(int threads, double seconds = 5.0);

// The kinds of runtime calls a failure can be injected into, and the
// operations that can fault while they run (RunKernel, RunCopy: always a
// broken context, as a kernel that faults on a GPU).
enum Call {
    Copy,        // cudaMemcpy2DAsync, cudaMemcpyAsync
    Launch,      // run_device_operands
    Record,      // cudaEventRecord
    Wait,        // cudaStreamWaitEvent
    EventSync,   // cudaEventSynchronize
    StreamSync,  // cudaStreamSynchronize
    Alloc,       // cudaMallocFromPoolAsync, cudaHostAlloc
    Free,        // cudaFreeAsync, cudaFreeHost
    Create,      // cudaStreamCreateWithFlags, cudaEventCreateWithFlags, cudaMemPoolCreate
    Destroy,     // cudaStreamDestroy, cudaEventDestroy
    Query,       // cudaMemGetInfo, cudaMemPool{Get,Set}Attribute, cudaMemPoolTrimTo, cudaDeviceGetAttribute,
                 // cudaEventElapsedTime
    RunKernel,   // a kernel faults while it runs
    RunCopy,     // a copy faults while it runs
    kCalls
};

extern const char *const kCallNames[kCalls];

// Fault::device: every device, and a sticky fault breaks them all.
constexpr int kAllDevices = -2;

struct Fault {
    int kind = -1;       // a Call, -1 = none
    int64_t at = 0;      // the at-th call of that kind (from 0) fails
    bool sticky = false; // and every later call too, as in a broken context
    // After a one-off failure: the then_at-th call of kind `then` after it
    // fails too, once (-1 = none), as the calls that clean up after a
    // failure can.
    int then = -1;
    int64_t then_at = 0;
    // Where it strikes: the calls of this device only, -1 those of every
    // device, kAllDevices those of every device, breaking all of them.
    int device = -1;
};

extern Fault fault;
extern int64_t calls[kCalls];  // calls of each kind since the last reset
extern int64_t calls_on[kMaxDevices][kCalls];  // and on each device
extern bool dead;              // a context is broken (with one device: the context)
extern bool broken[kMaxDevices];  // the context of each device is broken
extern bool fired;             // the fault has struck
extern bool then_fired;        // and its follower

// Where the operands of execute() calls live (classify_pointer): ranges of
// bytes and their kinds; anything else is pageable. Device memory of
// `device`, or with -1 of whichever device the call runs on (its owner is
// then reported as -1).
struct Range {
    const void *begin = nullptr;
    size_t bytes = 0;
    tgemm::MemKind kind = tgemm::MemKind::Pageable;
    int device = -1;
};
extern std::vector<Range> kinds;

// The stream s names; the default streams are the current device's.
Stream *stream_of(cudaStream_t s);

// Runs everything still queued (between tests).
void drain_all();

// The next calls run with fault f (kind -1: none), counted from 0.
void arm(const Fault &f);

// A fresh context on every device, as a new process would have (the
// library's own state, pipelines included, stays as it was). Device memory
// still allocated, tile memory no call will free, goes with the broken one
// (no call is in flight).
void revive();

}  // namespace mock
