// Devices and memory kinds: which GPU a call runs on, what that GPU can do,
// and where each operand lives.
#pragma once

#include <cuda_runtime_api.h>

#include "tgemm.h"

namespace tgemm {

struct DeviceInfo {
    int id = -1;
    int sm_count = 0;
    int max_grid_x = 0;
    int cc_major = 0, cc_minor = 0;
    // Blocks of the streaming kernels resident at once in clusters of n
    // (kernels/family.hpp, prepare_skinny); all 0 below sm_90.
    int skinny_cluster_blocks[9] = {};
    bool skinny_tma = false;  // the streaming kernel fed by the tensor copy engine runs here

    // The same for each tiled family, in the dispatcher's table order.
    int tiled_cluster_blocks[16][9] = {};
    cudaMemPool_t pool = nullptr;  // workspace pool (runtime/workspace.hpp)
};

// Device numbers device_info() accepts are 0 to kMaxDevices - 1.
constexpr int kMaxDevices = 64;

// Where a pointer's memory lives, as far as tgemm must care.
enum class MemKind { Unused, Pageable, Pinned, Device, Managed };

inline bool is_host(MemKind k) { return k == MemKind::Pageable || k == MemKind::Pinned; }

// The device for this call: TGEMM_DEVICE if set, else the calling thread's
// current device. Fails with NO_DEVICE when CUDA sees no device at all.
tgemm_status choose_device(int *dev);

// Cached properties of a device; the first use on a device also prepares the
// kernels for it (shared-memory limits).
tgemm_status device_info(int dev, const DeviceInfo **info);

// Classifies p; a device pointer on a device other than `dev` is an error.
tgemm_status classify_pointer(const void *p, int dev, MemKind *kind);

// Makes `dev` current for the guard's lifetime and then restores the
// caller's device, so tgemm never changes the caller's CUDA state.
class DeviceGuard {
public:
    DeviceGuard() = default;
    DeviceGuard(const DeviceGuard &) = delete;
    DeviceGuard &operator=(const DeviceGuard &) = delete;
    ~DeviceGuard();
    tgemm_status enter(int dev);

private:
    int saved_ = -1;
};

}  // namespace tgemm
