// The split-K reduction: C := alpha * (slice 0 + slice 1 + ...) + beta * C.
//
// Contract: work holds sk.splits slices of m x n partial sums, column-major
// with ld = m, written by a split-K launch on the same stream just before;
// the workspace starts on 16 bytes. Each element's slices are added in
// index order by one thread, so the result is the same bit for bit on every
// run (and the same as the cluster form's, which adds them in that order
// too). beta == 0 never reads C.
//
// Where the kernel's image on the device was compiled for sm_90 or later
// (it then waits for the kernel before it, griddepcontrol.wait, before its
// first read of the slices), the launch asks for programmatic stream
// serialization: the reduction's blocks are set up while the split-K
// kernel ends. An image without the wait (PTX for an older architecture,
// compiled for the device when loaded) is launched as any kernel.
#include <atomic>
#include <cstdint>

#include "family.hpp"

namespace tgemm {
namespace kernels {
namespace {

// Slices loaded at once: the loads of a batch are all in flight before its
// first add, so a thread waits on memory once a batch, not once a slice.
constexpr int kBatch = kSplitkReduceBatch;

template <int V>
struct Group {
    float x[V];
};

// V consecutive elements of slice `s` (16-byte loads where V == 4).
template <int V>
__device__ __forceinline__ Group<V> load_group(const float *w, int64_t mn, int s)
{
    Group<V> g;
    if constexpr (V == 4) {
        const float4 q = *reinterpret_cast<const float4 *>(w + s * mn);
        g.x[0] = q.x, g.x[1] = q.y, g.x[2] = q.z, g.x[3] = q.w;
    } else {
#pragma unroll
        for (int i = 0; i < V; ++i)
            g.x[i] = w[s * mn + i];
    }
    return g;
}

// Each thread takes V consecutive elements of C in column order (V == 4
// where every slice starts on 16 bytes: m * n % 4 == 0), over the m x n
// elements, so that a C of few rows (the streaming kernels' m <= 16) still
// fills whole blocks instead of one mostly idle block per column. Slice 0
// is loaded in the first batch with the others; each element's sum is
// slice 0 + slice 1 + ... in that order whatever V. With c_vec (m and ldc
// multiples of 4, C on 16 bytes) a group lies in one column and C moves in
// 16-byte pieces.
template <int V>
__global__ void splitk_reduce(const float *work, int splits, int64_t m, int64_t n, float alpha, float beta,
                              float *c, int64_t ldc, bool c_vec)
{
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
    const int64_t mn = m * n;
    const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x * V;
    for (int64_t e = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * V; e < mn; e += step) {
        const float *w = work + e;
        float sum[V] = {};  // every element set by slice 0 first
        for (int s = 0; s < splits; s += kBatch) {
            Group<V> v[kBatch];
#pragma unroll
            for (int b = 0; b < kBatch; ++b)
                if (s + b < splits)
                    v[b] = load_group<V>(w, mn, s + b);
#pragma unroll
            for (int b = 0; b < kBatch; ++b)
                if (s + b < splits) {
#pragma unroll
                    for (int i = 0; i < V; ++i)
                        sum[i] = s + b == 0 ? v[b].x[i] : sum[i] + v[b].x[i];
                }
        }
        int64_t j = e / m, i = e - j * m;
        if constexpr (V == 4) {
            if (c_vec) {
                float4 *out = reinterpret_cast<float4 *>(c + i + j * ldc);
                float4 r = make_float4(alpha * sum[0], alpha * sum[1], alpha * sum[2], alpha * sum[3]);
                if (beta != 0.0f) {
                    const float4 old = *out;
                    r = make_float4(fmaf(beta, old.x, r.x), fmaf(beta, old.y, r.y), fmaf(beta, old.z, r.z),
                                    fmaf(beta, old.w, r.w));
                }
                *out = r;
                continue;
            }
        }
        float *out[V];
#pragma unroll
        for (int q = 0; q < V; ++q) {  // a group may run into the next columns
            out[q] = c + i + j * ldc;
            if (++i == m)
                i = 0, ++j;
        }
        float old[V];
        if (beta != 0.0f) {
#pragma unroll
            for (int q = 0; q < V; ++q)
                old[q] = *out[q];
        }
#pragma unroll
        for (int q = 0; q < V; ++q) {
            const float x = alpha * sum[q];
            *out[q] = beta != 0.0f ? fmaf(beta, old[q], x) : x;
        }
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
    if ((e = cudaFuncGetAttributes(&fa, splitk_reduce<1>)) != cudaSuccess)
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
    constexpr int64_t kMaxBlocks = 4096;  // then each thread takes several groups
    const int64_t mn = p.m * p.n;
    const bool vec = mn % 4 == 0 && (reinterpret_cast<uintptr_t>(sk.work) & 15u) == 0;
    const bool c_vec = vec && p.m % 4 == 0 && p.ldc % 4 == 0 && (reinterpret_cast<uintptr_t>(p.c) & 15u) == 0;
    const int64_t threads = vec ? mn / 4 : mn;
    const int64_t blocks = (threads + kThreads - 1) / kThreads;
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
    return vec ? cudaLaunchKernelEx(&cfg, splitk_reduce<4>, sk.work, sk.splits, p.m, p.n, p.alpha, p.beta, p.c,
                                    p.ldc, c_vec)
               : cudaLaunchKernelEx(&cfg, splitk_reduce<1>, sk.work, sk.splits, p.m, p.n, p.alpha, p.beta, p.c,
                                    p.ldc, false);
}

}  // namespace kernels
}  // namespace tgemm
