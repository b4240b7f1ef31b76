// Which kernel runs a problem, and launching it.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/family.hpp"
#include "runtime/device.hpp"
#include "tgemm.h"

namespace tgemm {

// Prepares every kernel for a device (called once per device).
tgemm_status prepare_kernels(DeviceInfo *dev);

// Enqueues C := alpha * op(A) * op(B) + beta * C on s. Pointers must be
// device-accessible; m, n >= 1. The table at the top of dispatch.cpp says
// which kernel runs; split-K takes its workspace from the device's pool.
tgemm_status launch_gemm(const GemmParams &p, const DeviceInfo &dev, cudaStream_t s);

}  // namespace tgemm
