// Scratch device memory for one call (split-K partial sums), stream-ordered:
// taken from tgemm's own per-device memory pool when the call is enqueued
// and given back on the same stream after the kernels that use it, so the
// call stays asynchronous and never synchronizes the device.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "runtime/device.hpp"

namespace tgemm {

// Creates the pool for a device (once, from device_info). The pool keeps up
// to kWorkspaceKeepBytes cached between calls; more is returned to the driver.
// The host-operand path creates a second pool the same way for its tile
// buffers, with its own `keep_bytes`.
constexpr size_t kWorkspaceKeepBytes = size_t{64} << 20;
tgemm_status create_workspace_pool(int dev, cudaMemPool_t *pool, uint64_t keep_bytes = kWorkspaceKeepBytes);

// The fp32-tc math's pool on a device, made on first use (thread-safe): its
// scratch memory runs to GBs a call at large sizes, and the call waits for
// its stream, where a pool that keeps less would give the memory back to the
// driver and map it again on the next call. It keeps up to
// kLargeWorkspaceKeepBytes; trim_large_workspace_pools frees what it keeps
// (tgemm_release_resources).
constexpr size_t kLargeWorkspaceKeepBytes = size_t{8} << 30;
tgemm_status large_workspace_pool(int dev, cudaMemPool_t *pool);
tgemm_status trim_large_workspace_pools();

class Workspace {
public:
    Workspace() = default;
    Workspace(const Workspace &) = delete;
    Workspace &operator=(const Workspace &) = delete;
    ~Workspace();

    // Returns false (and records nothing) when the pool cannot supply `bytes`;
    // callers then choose a plan that needs no workspace.
    bool acquire(const DeviceInfo &dev, size_t bytes, cudaStream_t s);
    bool acquire(cudaMemPool_t pool, size_t bytes, cudaStream_t s);
    float *get() const { return ptr_; }

private:
    float *ptr_ = nullptr;
    cudaStream_t stream_ = nullptr;
};

}  // namespace tgemm
