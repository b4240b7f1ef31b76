// The split-K reduction: C := alpha * (slice 0 + slice 1 + ...) + beta * C.
//
// Contract: work holds sk.splits slices of m x n partial sums, column-major
// with ld = m, written by a split-K launch on the same stream just before.
// The slices are added in index order by one thread per element, so the
// result is the same bit for bit on every run (and the same as the cluster
// form's, which adds them in that order too). beta == 0 never reads C.
//
// Where the kernel's image on the device was compiled for sm_90 or later
// (it then waits for the kernel before it, griddepcontrol.wait, before its
// first read of the slices), the launch asks for programmatic stream
// serialization: the reduction's blocks are set up while the split-K
// kernel ends. An image without the wait (PTX for an older architecture,
// compiled for the device when loaded) is launched as any kernel.
#include <atomic>

#include "family.hpp"

namespace tgemm {
namespace kernels {
namespace {

// Slices loaded at once: the loads of a batch are all in flight before its
// first add, so a thread waits on memory once a batch, not once a slice.
constexpr int kBatch = kSplitkReduceBatch;

// One thread per element of C, over the m x n elements in column order, so
// that a C of few rows (the streaming kernels' m <= 16) still fills whole
// blocks instead of one mostly idle block per column.
__global__ void splitk_reduce(const float *work, int splits, int64_t m, int64_t n, float alpha, float beta,
                              float *c, int64_t ldc)
{
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
    const int64_t mn = m * n;
    const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < mn; e += step) {
        const float *w = work + e;
        float sum = w[0];
        int s = 1;
        for (; s + kBatch <= splits; s += kBatch) {
            float v[kBatch];
#pragma unroll
            for (int i = 0; i < kBatch; ++i)
                v[i] = w[(s + i) * mn];
#pragma unroll
            for (int i = 0; i < kBatch; ++i)
                sum += v[i];
        }
        float v[kBatch];
#pragma unroll
        for (int i = 0; i < kBatch; ++i)
            if (s + i < splits)
                v[i] = w[(s + i) * mn];
#pragma unroll
        for (int i = 0; i < kBatch; ++i)
            if (s + i < splits)
                sum += v[i];
        const int64_t j = e / m, i = e - j * m;
        float *out = c + i + j * ldc;
        const float x = alpha * sum;
        *out = beta != 0.0f ? fmaf(beta, *out, x) : x;
    }
}

// Whether the kernel's image on the current device has the wait (compiled
// from PTX of sm_90 or later), asked once per device.
cudaError_t image_waits(bool *waits)
{
    constexpr int kDevices = 64;
    static std::atomic<signed char> known[kDevices];  // 0: not asked yet, 1: no, 2: yes
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess)
        return e;
    const bool cached = dev >= 0 && dev < kDevices;
    if (cached) {
        if (const signed char k = known[dev].load(std::memory_order_relaxed); k != 0) {
            *waits = k == 2;
            return cudaSuccess;
        }
    }
    cudaFuncAttributes fa;
    if ((e = cudaFuncGetAttributes(&fa, splitk_reduce)) != cudaSuccess)
        return e;
    *waits = fa.ptxVersion >= 90;
    if (cached)
        known[dev].store(*waits ? 2 : 1, std::memory_order_relaxed);
    return cudaSuccess;
}

}  // namespace

cudaError_t launch_splitk_reduce(const GemmParams &p, const SplitK &sk, cudaStream_t s)
{
    constexpr int kThreads = 256;
    constexpr int64_t kMaxBlocks = 4096;  // then each thread takes several elements
    const int64_t blocks = (p.m * p.n + kThreads - 1) / kThreads;
    bool waits = false;
    if (const cudaError_t e = image_waits(&waits); e != cudaSuccess)
        return e;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks));
    cfg.blockDim = dim3(kThreads);
    cfg.stream = s;
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr.val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = waits ? 1 : 0;
    return cudaLaunchKernelEx(&cfg, splitk_reduce, sk.work, sk.splits, p.m, p.n, p.alpha, p.beta, p.c, p.ldc);
}

}  // namespace kernels
}  // namespace tgemm
