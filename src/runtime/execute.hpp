// Runs a checked problem on the GPU, moving host operands as needed.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/gemm_params.hpp"
#include "tgemm.h"

namespace tgemm {

// p is column-major and valid; m, n >= 1; a and b are non-NULL when
// alpha != 0 and k > 0, c is non-NULL. With `wait`, or when any operand is in
// host memory, returns after C is written; otherwise only enqueues on s.
tgemm_status execute(const GemmParams &p, cudaStream_t s, bool wait);

}  // namespace tgemm
