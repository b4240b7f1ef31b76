#include "runtime/device.hpp"

#include "core/status.hpp"
#include "core/settings.hpp"
#include "runtime/workspace.hpp"

namespace tgemm {
namespace {

struct DeviceCount {
    int count = 0;
    cudaError_t error = cudaSuccess;
};

const DeviceCount &device_count()
{
    static const DeviceCount dc = [] {
        DeviceCount r;
        r.error = cudaGetDeviceCount(&r.count);
        if (r.error != cudaSuccess) {
            r.count = 0;
            (void)cudaGetLastError();
        }
        return r;
    }();
    return dc;
}

PerDevice<DeviceInfo> g_devices;

tgemm_status init_device_info(int dev, DeviceInfo *info)
{
    cudaError_t e;
    if ((e = cudaDeviceGetAttribute(&info->sm_count, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&info->max_grid_x, cudaDevAttrMaxGridDimX, dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&info->cc_major, cudaDevAttrComputeCapabilityMajor, dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&info->cc_minor, cudaDevAttrComputeCapabilityMinor, dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&info->clock_khz, cudaDevAttrClockRate, dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&info->memory_clock_khz, cudaDevAttrMemoryClockRate, dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&info->bus_width_bits, cudaDevAttrGlobalMemoryBusWidth, dev)) != cudaSuccess)
        return fail_cuda(e, "cudaDeviceGetAttribute");
    info->id = dev;
    return create_workspace_pool(dev, &info->pool);
}

}  // namespace

tgemm_status visible_devices(int *count)
{
    const DeviceCount &dc = device_count();
    if (dc.error != cudaSuccess)
        return fail_cuda(dc.error, "cudaGetDeviceCount");
    if (dc.count == 0)
        return fail(TGEMM_ERROR_NO_DEVICE, "cudaGetDeviceCount found no device");
    *count = dc.count;
    return TGEMM_SUCCESS;
}

tgemm_status choose_device(int *dev)
{
    int count = 0;
    const tgemm_status st = visible_devices(&count);
    if (st != TGEMM_SUCCESS)
        return st;
    const Settings &set = settings();
    if (set.device_local_rank && set.local_rank >= 0) {
        *dev = set.local_rank % count;
        return TGEMM_SUCCESS;
    }
    const int want = set.device;
    if (want >= 0) {
        if (want >= count)
            return fail(TGEMM_ERROR_INVALID_DEVICE, "TGEMM_DEVICE=%d but only %d device(s) are visible",
                        want, count);
        *dev = want;
        return TGEMM_SUCCESS;
    }
    const cudaError_t e = cudaGetDevice(dev);
    return e == cudaSuccess ? TGEMM_SUCCESS : fail_cuda(e, "cudaGetDevice");
}

tgemm_status device_info(int dev, const DeviceInfo **info)
{
    return g_devices.get(dev, init_device_info, info);
}

tgemm_status classify_pointer(const void *p, MemKind *kind, int *owner)
{
    cudaPointerAttributes attr;
    const cudaError_t e = cudaPointerGetAttributes(&attr, p);
    if (e != cudaSuccess)
        return fail_cuda(e, "cudaPointerGetAttributes");
    *owner = -1;
    switch (attr.type) {
    case cudaMemoryTypeUnregistered:
        *kind = MemKind::Pageable;
        return TGEMM_SUCCESS;
    case cudaMemoryTypeHost:
        *kind = MemKind::Pinned;
        return TGEMM_SUCCESS;
    case cudaMemoryTypeManaged:
        *kind = MemKind::Managed;
        return TGEMM_SUCCESS;
    case cudaMemoryTypeDevice:
        *kind = MemKind::Device;
        *owner = attr.device;
        return TGEMM_SUCCESS;
    }
    return fail(TGEMM_ERROR_INTERNAL, "unknown cudaMemoryType %d", static_cast<int>(attr.type));
}

DeviceGuard::~DeviceGuard()
{
    if (saved_ >= 0)
        (void)cudaSetDevice(saved_);
}

tgemm_status DeviceGuard::enter(int dev)
{
    int cur = -1;
    cudaError_t e = cudaGetDevice(&cur);
    if (e != cudaSuccess)
        return fail_cuda(e, "cudaGetDevice");
    if (cur == dev)
        return TGEMM_SUCCESS;
    if ((e = cudaSetDevice(dev)) != cudaSuccess)
        return fail_cuda(e, "cudaSetDevice");
    saved_ = cur;
    return TGEMM_SUCCESS;
}

}  // namespace tgemm
