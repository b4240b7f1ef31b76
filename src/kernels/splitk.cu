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

__global__ void splitk_reduce(const float *work, int splits, int64_t m, int64_t n, float alpha, float beta,
                              float *c, int64_t ldc)
{
    const int64_t mn = m * n;
    const int64_t row_step = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t j = blockIdx.y; j < n; j += gridDim.y) {
        float *col = c + j * ldc;
        const float *w = work + j * m;
        for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < m; i += row_step) {
            float sum = w[i];
            for (int s = 1; s < splits; ++s)
                sum += w[s * mn + i];
            const float v = alpha * sum;
            col[i] = beta != 0.0f ? fmaf(beta, col[i], v) : v;
        }
    }
}

}  // namespace

cudaError_t launch_splitk_reduce(const GemmParams &p, const SplitK &sk, cudaStream_t s)
{
    constexpr int kThreads = 256;
    const int64_t bx = (p.m + kThreads - 1) / kThreads;
    const dim3 grid(static_cast<unsigned>(bx < 64 ? bx : 64), static_cast<unsigned>(p.n < 65535 ? p.n : 65535));
    splitk_reduce<<<grid, kThreads, 0, s>>>(sk.work, sk.splits, p.m, p.n, p.alpha, p.beta, p.c, p.ldc);
    return cudaGetLastError();
}

}  // namespace kernels
}  // namespace tgemm
