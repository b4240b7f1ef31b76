#include "runtime/workspace.hpp"

#include <cstdint>

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

Workspace::~Workspace()
{
    if (ptr_ != nullptr)
        (void)cudaFreeAsync(ptr_, stream_);
}

bool Workspace::acquire(const DeviceInfo &dev, size_t bytes, cudaStream_t s)
{
    void *p = nullptr;
    if (cudaMallocFromPoolAsync(&p, bytes, dev.pool, s) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    ptr_ = static_cast<float *>(p);
    stream_ = s;
    return true;
}

}  // namespace tgemm
