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

class Workspace {
public:
    Workspace() = default;
    Workspace(const Workspace &) = delete;
    Workspace &operator=(const Workspace &) = delete;
    ~Workspace();

    // Returns false (and records nothing) when the pool cannot supply `bytes`;
    // callers then choose a plan that needs no workspace.
    bool acquire(const DeviceInfo &dev, size_t bytes, cudaStream_t s);
    float *get() const { return ptr_; }

private:
    float *ptr_ = nullptr;
    cudaStream_t stream_ = nullptr;
};

}  // namespace tgemm
