// The resources of the host-operand path, per device: up to
// kPipelinesPerDevice pipelines (five streams, their events and pinned
// staging buffers), created on first use and reused by later calls, and
// one memory pool for the tile buffers. A call leases a whole pipeline for
// its duration (a mutex and condition variable hand them out; a call that
// finds all of them leased waits for one). A leased pipeline is used by one
// call only, and a call never waits for a second pipeline while it holds
// one, so concurrent calls cannot corrupt each other's staging or deadlock.
// Nothing is freed at exit: the statically linked CUDA runtime may already
// be shut down when static destructors run; the operating system reclaims
// the memory with the process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <cuda_runtime_api.h>

#include "tgemm.h"

namespace tgemm {

// Pinned staging for pageable operands, per pipeline. One buffer holds one
// 2048 x 2048 tile or K chunk, the piece the planner prefers, so one buffer
// carries one transfer; eight let the host pack and unpack several pieces
// ahead of the link, which hides the waits for each piece's copy to finish.
//
// A piece of C that has arrived in a buffer is copied into C only when the
// buffer is needed again (buffers that hold none are taken first) or at the
// end of the call: the host threads are the scarce resource of a pageable
// call, and the GPU waits for pieces of A and B, never for pieces of C, so
// those go first. kInputBuffers stay free for pieces of A and B (one is
// filled while the other's copy to the device runs). At the end the pieces
// of C are copied in the order they arrive, while the last kernels still
// run.
constexpr size_t kStagingBytes = size_t{16} << 20;
constexpr int kStagingBuffers = 8;
constexpr int kInputBuffers = 2;
constexpr int64_t kStagingElems = static_cast<int64_t>(kStagingBytes / sizeof(float));

// Pipelines per device. One call already keeps the link and the GPU busy;
// a second lets a new call prepare while another drains. Further callers
// wait. Bounds pinned staging per device.
constexpr int kPipelinesPerDevice = 2;

// Tile-pool memory kept between calls: an 8192^3 plan's tile buffers stay
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
    // A second stream of kernels (the resident schedule): the next tile's
    // kernel starts on the SMs that the last wave of this tile's blocks
    // leaves idle.
    cudaStream_t comp2 = nullptr;
    // Copies of panels of A and B from another worker's device memory (a
    // spread call's blocks sharing panels, driver/panel_board.hpp): apart
    // from `in`, which holds this worker's own loads queued ahead.
    cudaStream_t peer = nullptr;
    cudaEvent_t start = nullptr, ready = nullptr, loaded = nullptr, computed = nullptr;
    cudaEvent_t joined = nullptr;  // one stream of kernels waits for the other
    cudaEvent_t in_done = nullptr, out_done = nullptr, peer_done = nullptr, end = nullptr;
    cudaEvent_t free_a[2] = {}, free_b[2] = {};  // a slot's last reader
    std::vector<cudaEvent_t> free_c;             // a C slot's copy out, as many as a plan has slots
    std::vector<cudaEvent_t> stored_c;           // a finished part of C's kernel, for its deferred copy out
    std::vector<cudaEvent_t> panel_ready;        // a shared call's panel of A or B on the device, one per load
    Staging staging[kStagingBuffers];
    uint64_t uses = 0;      // staging buffers taken so far
    int64_t max_pitch = 0;  // bytes; cudaMemcpy2D takes no larger pitch
    // TGEMM_HOST_TRACE only: events with timing, made as a call needs them.
    std::vector<cudaEvent_t> timing;
    size_t timing_used = 0;  // by the call in progress

    std::vector<cudaEvent_t *> events();
};

// Grows `events` to `count` events made with `flags`.
cudaError_t grow_events(std::vector<cudaEvent_t> &events, size_t count, unsigned flags);

// Lets device `reader` access the tile buffers of device `dev` (made from
// its tile pool, created here if need be), as blocks of a spread call that
// copy each other's panels do: pool memory is not opened to other devices
// by cudaDeviceEnablePeerAccess alone.
tgemm_status open_tile_pool(int dev, int reader);

// A pipeline and the device's tile pool, held for the duration of one call.
class Lease {
public:
    Lease() = default;
    Lease(const Lease &) = delete;
    Lease &operator=(const Lease &) = delete;
    ~Lease();  // gives the pipeline back, unless discarded

    // Waits for a pipeline of device `dev` (current), creating the pool and
    // the pipeline where none exists yet.
    tgemm_status acquire(int dev);

    Pipeline &pipeline() const { return *pl_; }
    cudaMemPool_t pool() const { return pool_; }

    // Gives the pipeline up instead of back, after a failure that left its
    // streams busy or unknown, and lets a later call make a new one. Its
    // resources are freed only by release_host_resources(), once its
    // streams are found idle, since a copy into one of its staging buffers
    // might still be under way.
    void discard();

private:
    Pipeline *pl_ = nullptr;
    cudaMemPool_t pool_ = nullptr;
    int dev_ = -1;
};

}  // namespace tgemm
