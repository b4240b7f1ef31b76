// The host's cost of the CUDA runtime calls a tgemm call on device operands
// makes: each timed as the median over 20 rounds of 100 calls without a
// wait (a sync between rounds), in us per call.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

#include <cuda_runtime.h>

__global__ void empty_kernel(float *p)
{
    if (p != nullptr && threadIdx.x == 1000)
        p[0] = 1.0f;
}

__global__ void __cluster_dims__(1, 1, 1) empty_cluster(float *p)
{
    if (p != nullptr && threadIdx.x == 1000)
        p[0] = 1.0f;
}

__global__ void empty_pdl(float *p)
{
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
    if (p != nullptr && threadIdx.x == 1000)
        p[0] = 1.0f;
}

static double now_us()
{
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int main()
{
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cudaMemPool_t pool;
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    cudaMemPoolCreate(&pool, &props);
    uint64_t keep = 64ull << 20;
    cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
    float *dev = nullptr;
    cudaMalloc(&dev, 1 << 20);
    cudaEvent_t ev;
    cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
    const auto launch_ex = [&](int mode) {
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(2);
        cfg.blockDim = dim3(128);
        cfg.stream = s;
        cudaLaunchAttribute attr;
        cfg.attrs = &attr;
        cfg.numAttrs = mode == 0 ? 0 : 1;
        if (mode == 1) {
            attr.id = cudaLaunchAttributeClusterDimension;
            attr.val.clusterDim.x = 2;
            attr.val.clusterDim.y = 1;
            attr.val.clusterDim.z = 1;
            return cudaLaunchKernelEx(&cfg, empty_kernel, dev);
        }
        if (mode == 2) {
            attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
            attr.val.programmaticStreamSerializationAllowed = 1;
            return cudaLaunchKernelEx(&cfg, empty_pdl, dev);
        }
        return cudaLaunchKernelEx(&cfg, empty_kernel, dev);
    };
    struct Op {
        const char *name;
        std::function<void()> f;
    };
    std::vector<Op> ops = {
        {"launch <<<>>>", [&] { empty_kernel<<<2, 128, 0, s>>>(dev); }},
        {"cudaLaunchKernelEx", [&] { launch_ex(0); }},
        {"cudaLaunchKernelEx cluster 2", [&] { launch_ex(1); }},
        {"cudaLaunchKernelEx PDL", [&] { launch_ex(2); }},
        {"cudaMallocFromPoolAsync 64 KiB + cudaFreeAsync",
         [&] {
             void *p = nullptr;
             cudaMallocFromPoolAsync(&p, 64 << 10, pool, s);
             cudaFreeAsync(p, s);
         }},
        {"cudaMallocFromPoolAsync 1 MiB + launch + cudaFreeAsync",
         [&] {
             void *p = nullptr;
             cudaMallocFromPoolAsync(&p, 1 << 20, pool, s);
             empty_kernel<<<2, 128, 0, s>>>(static_cast<float *>(p));
             cudaFreeAsync(p, s);
         }},
        {"cudaMemsetAsync 256 B", [&] { cudaMemsetAsync(dev, 0, 256, s); }},
        {"cudaEventRecord + cudaStreamWaitEvent",
         [&] {
             cudaEventRecord(ev, s);
             cudaStreamWaitEvent(s, ev, 0);
         }},
        {"cudaPointerGetAttributes (device)",
         [&] {
             cudaPointerAttributes a;
             cudaPointerGetAttributes(&a, dev);
         }},
        {"cudaGetDevice", [&] {
             int d;
             cudaGetDevice(&d);
         }},
        {"cudaSetDevice (same)", [&] { cudaSetDevice(0); }},
        {"cudaGetLastError", [&] { (void)cudaGetLastError(); }},
        {"cudaStreamGetFlags", [&] {
             unsigned f;
             cudaStreamGetFlags(s, &f);
         }},
    };
    for (Op &op : ops) {
        for (int i = 0; i < 100; ++i)
            op.f();
        cudaStreamSynchronize(s);
        std::vector<double> t;
        for (int r = 0; r < 20; ++r) {
            cudaStreamSynchronize(s);
            const double t0 = now_us();
            for (int i = 0; i < 100; ++i)
                op.f();
            t.push_back((now_us() - t0) / 100);
        }
        cudaStreamSynchronize(s);
        std::sort(t.begin(), t.end());
        std::printf("%-55s %7.3f us (min %.3f)  %s\n", op.name, t[t.size() / 2], t[0],
                    cudaGetErrorString(cudaGetLastError()));
    }
    return 0;
}
