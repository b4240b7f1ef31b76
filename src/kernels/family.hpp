// Host-side view of the kernels: a family is one tile shape of the tiled
// kernel template, instantiated for every transpose pair and alignment.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cuda_runtime_api.h>

#include "gemm_params.hpp"

namespace tgemm {

struct KernelFamily {
    using Launch = cudaError_t (*)(const GemmParams &, unsigned blocks, cudaStream_t);
    const char *name;
    int bm, bn, bk, threads;
    size_t smem_bytes;
    Launch launch[8];          // index: trans_a * 4 + trans_b * 2 + aligned
    cudaError_t (*prepare)();  // per device, before the first launch
};

namespace kernels {
extern const KernelFamily tiled_32x32x8;
extern const KernelFamily tiled_64x64x8;
extern const KernelFamily tiled_128x128x8;
extern const KernelFamily tiled_128x256x8;
extern const KernelFamily tiled_256x128x8;

// C := beta * C over the m x n matrix (beta == 0 writes zeros, reading nothing).
cudaError_t launch_scale(float *c, int64_t m, int64_t n, int64_t ldc, float beta, cudaStream_t s);
}  // namespace kernels

}  // namespace tgemm
