#include "runtime/workspace.hpp"

#include <atomic>
#include <cstdint>
#include <mutex>

#include "core/status.hpp"

namespace tgemm {

tgemm_status create_workspace_pool(int dev, cudaMemPool_t *pool, uint64_t keep_bytes)
{
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = dev;
    cudaError_t e = cudaMemPoolCreate(pool, &props);
    if (e != cudaSuccess)
        return fail_cuda(e, "cudaMemPoolCreate");
    e = cudaMemPoolSetAttribute(*pool, cudaMemPoolAttrReleaseThreshold, &keep_bytes);
    return e == cudaSuccess ? TGEMM_SUCCESS : fail_cuda(e, "cudaMemPoolSetAttribute");
}

namespace {

struct LargePool {
    std::once_flag once;
    std::atomic<cudaMemPool_t> pool{nullptr};
    tgemm_status status = TGEMM_ERROR_INTERNAL;
};
LargePool g_large[kMaxDevices];

}  // namespace

tgemm_status large_workspace_pool(int dev, cudaMemPool_t *pool)
{
    if (dev < 0 || dev >= kMaxDevices)
        return fail(TGEMM_ERROR_UNSUPPORTED, "device %d: tgemm supports devices 0 to %d", dev, kMaxDevices - 1);
    LargePool &lp = g_large[dev];
    std::call_once(lp.once, [&] {
        cudaMemPool_t p = nullptr;
        lp.status = create_workspace_pool(dev, &p, kLargeWorkspaceKeepBytes);
        if (lp.status == TGEMM_SUCCESS)
            lp.pool.store(p);
    });
    if (lp.status != TGEMM_SUCCESS)
        return fail(lp.status, "device %d: the fp32-tc math's memory pool could not be made", dev);
    *pool = lp.pool.load();
    return TGEMM_SUCCESS;
}

tgemm_status trim_large_workspace_pools()
{
    for (LargePool &lp : g_large)
        if (const cudaMemPool_t p = lp.pool.load(); p != nullptr) {
            const cudaError_t e = cudaMemPoolTrimTo(p, 0);
            if (e != cudaSuccess)
                return fail_cuda(e, "cudaMemPoolTrimTo");
        }
    return TGEMM_SUCCESS;
}

Workspace::~Workspace()
{
    if (ptr_ != nullptr)
        (void)cudaFreeAsync(ptr_, stream_);
}

bool Workspace::acquire(const DeviceInfo &dev, size_t bytes, cudaStream_t s)
{
    return acquire(dev.pool, bytes, s);
}

bool Workspace::acquire(cudaMemPool_t pool, size_t bytes, cudaStream_t s)
{
    void *p = nullptr;
    if (cudaMallocFromPoolAsync(&p, bytes, pool, s) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    ptr_ = static_cast<float *>(p);
    stream_ = s;
    return true;
}

}  // namespace tgemm
