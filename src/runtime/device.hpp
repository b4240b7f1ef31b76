// Devices and memory kinds: which GPU a call runs on, what that GPU can do,
// and where each operand lives.
#pragma once

#include <cstdio>
#include <mutex>

#include <cuda_runtime_api.h>

#include "core/status.hpp"
#include "tgemm.h"

namespace tgemm {

// A device's properties, read once (device_info), and its workspace pool.
struct DeviceInfo {
    int id = -1;
    int sm_count = 0;
    int max_grid_x = 0;
    int cc_major = 0, cc_minor = 0;
    int clock_khz = 0;         // peak SM clock
    int memory_clock_khz = 0;  // peak memory clock
    int bus_width_bits = 0;    // global memory bus width
    cudaMemPool_t pool = nullptr;  // workspace pool (runtime/workspace.hpp)
};

// FP32 lanes per SM for compute capability major.minor: 64 on 8.0, 128 on
// 8.6, 8.9 and every later one (7.x, not supported by the build, has 64).
inline int fp32_lanes_per_sm(int cc_major, int cc_minor)
{
    return cc_major > 8 || (cc_major == 8 && cc_minor > 0) ? 128 : 64;
}

// The FP32 FFMA peak of a device, flop/s.
inline double fp32_peak_flops(const DeviceInfo &d)
{
    return 2.0 * fp32_lanes_per_sm(d.cc_major, d.cc_minor) * d.sm_count * d.clock_khz * 1e3;
}

// Device numbers device_info() accepts are 0 to kMaxDevices - 1.
constexpr int kMaxDevices = 64;

// A value made once per device, thread-safe (device_info, the
// dispatcher's device models). A failure is kept and reported again on
// every later use: "device N could not be prepared: why".
template <class T>
class PerDevice {
public:
    // *out = device dev's value, made by init(dev, T *) on first use.
    template <class Init>
    tgemm_status get(int dev, Init &&init, const T **out)
    {
        if (dev < 0 || dev >= kMaxDevices)
            return fail(TGEMM_ERROR_UNSUPPORTED, "device %d: tgemm supports devices 0 to %d", dev, kMaxDevices - 1);
        Slot &slot = slots_[dev];
        std::call_once(slot.once, [&] {
            slot.status = init(dev, &slot.value);
            if (slot.status != TGEMM_SUCCESS)
                std::snprintf(slot.detail, sizeof slot.detail, "%s", tgemm_last_error_detail());
        });
        if (slot.status != TGEMM_SUCCESS)
            return fail(slot.status, "device %d could not be prepared: %s", dev, slot.detail);
        *out = &slot.value;
        return TGEMM_SUCCESS;
    }

private:
    struct Slot {
        std::once_flag once;
        T value;
        tgemm_status status = TGEMM_ERROR_INTERNAL;
        char detail[256] = {0};
    };
    Slot slots_[kMaxDevices];
};

// Where a pointer's memory lives, as far as tgemm must care.
enum class MemKind { Unused, Pageable, Pinned, Device, Managed };

inline bool is_host(MemKind k) { return k == MemKind::Pageable || k == MemKind::Pinned; }

// The device for this call: TGEMM_DEVICE if set (a number, or the
// process's node-local rank modulo the devices visible), else the calling
// thread's current device. Fails with NO_DEVICE when CUDA sees no device
// at all.
tgemm_status choose_device(int *dev);

// The number of devices CUDA sees (at least 1 on success; NO_DEVICE when
// none).
tgemm_status visible_devices(int *count);

// Cached properties of a device (and its workspace pool, created on first use).
tgemm_status device_info(int dev, const DeviceInfo **info);

// Classifies p (one cudaPointerGetAttributes): *kind, and *owner, the
// device whose memory p is, or -1 for host, pinned and managed memory.
tgemm_status classify_pointer(const void *p, MemKind *kind, int *owner);

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
