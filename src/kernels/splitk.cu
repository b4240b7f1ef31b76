// The split-K reduction: C := alpha * (slice 0 + slice 1 + ...) + beta * C.
//
// Contract: work holds sk.splits slices of m x n partial sums, column-major
// with ld = m, written by a split-K launch on the same stream. The slices are
// added in index order by one thread per element, so the result is the same
// bit for bit on every run. beta == 0 never reads C.
#include "family.hpp"

namespace tgemm {
namespace kernels {
namespace {

// One thread per element of C, over the m x n elements in column order, so
// that a C of few rows (the streaming kernels' m <= 16) still fills whole
// blocks instead of one mostly idle block per column.
__global__ void splitk_reduce(const float *work, int splits, int64_t m, int64_t n, float alpha, float beta,
                              float *c, int64_t ldc)
{
    const int64_t mn = m * n;
    const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < mn; e += step) {
        float sum = work[e];
        for (int s = 1; s < splits; ++s)
            sum += work[s * mn + e];
        const int64_t j = e / m, i = e - j * m;
        float *out = c + i + j * ldc;
        const float v = alpha * sum;
        *out = beta != 0.0f ? fmaf(beta, *out, v) : v;
    }
}

}  // namespace

cudaError_t launch_splitk_reduce(const GemmParams &p, const SplitK &sk, cudaStream_t s)
{
    constexpr int kThreads = 256;
    constexpr int64_t kMaxBlocks = 4096;  // then each thread takes several elements
    const int64_t blocks = (p.m * p.n + kThreads - 1) / kThreads;
    const dim3 grid(static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks));
    splitk_reduce<<<grid, kThreads, 0, s>>>(sk.work, sk.splits, p.m, p.n, p.alpha, p.beta, p.c, p.ldc);
    return cudaGetLastError();
}

}  // namespace kernels
}  // namespace tgemm
