// Which kernel runs a problem, and launching it.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/family.hpp"
#include "runtime/device.hpp"
#include "tgemm.h"

namespace tgemm {

// Prepares every kernel for a device (called once per device).
tgemm_status prepare_kernels(const DeviceInfo &dev);

// The kernel family the dispatch table picks for p on dev (or TGEMM_KERNEL's).
const KernelFamily *choose_family(const GemmParams &p, const DeviceInfo &dev);

// Enqueues C := alpha * op(A) * op(B) + beta * C on s. Pointers must be
// device-accessible; m, n >= 1. Uses the scaling kernel when alpha == 0 or k == 0.
tgemm_status launch_gemm(const GemmParams &p, const DeviceInfo &dev, cudaStream_t s);

}  // namespace tgemm
