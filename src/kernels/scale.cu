// The scaling kernel: C := beta * C, for alpha == 0 or k == 0.
//
// Contract: c is device-accessible, m x n column-major with ldc >= m; every
// element of the m x n region is written once (grid-stride loops cover any
// size), rows m .. ldc - 1 are not touched. With beta == 0 it writes zeros
// without reading C, so NaN in C does not survive (reference BLAS semantics).
// Reads nothing else.
#include "family.hpp"

namespace tgemm {
namespace kernels {
namespace {

__global__ void scale_c(float *c, int64_t m, int64_t n, int64_t ldc, float beta)
{
    const int64_t row_step = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t j = blockIdx.y; j < n; j += gridDim.y) {
        float *col = c + j * ldc;
        for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < m; i += row_step)
            col[i] = beta == 0.0f ? 0.0f : beta * col[i];
    }
}

}  // namespace

cudaError_t launch_scale(float *c, int64_t m, int64_t n, int64_t ldc, float beta, cudaStream_t s)
{
    constexpr int kThreads = 256;
    const int64_t bx = (m + kThreads - 1) / kThreads;
    const dim3 grid(static_cast<unsigned>(bx < 64 ? bx : 64), static_cast<unsigned>(n < 65535 ? n : 65535));
    scale_c<<<grid, kThreads, 0, s>>>(c, m, n, ldc, beta);
    return cudaGetLastError();
}

}  // namespace kernels
}  // namespace tgemm
