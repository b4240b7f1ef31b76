// Default of TGEMM_OFFLOAD_MIN_FLOPS: the work (2*m*n*k) from which a BLAS
// call on host operands runs faster on the GPU than in the CPU BLAS.
// Placeholder until measured on the H100 host (docs/performance.md).
#pragma once

namespace tgemm {
constexpr double kDefaultOffloadMinFlops = 2.0 * 512 * 512 * 512;
}
