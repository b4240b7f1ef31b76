// The one way the driver runs a problem whose operands the GPU can read in
// place (device or managed memory, or parts of the host-operand pipeline's
// device buffers): the dispatcher plans it, takes its workspace and
// launches it. execute() and the host-operand executor both come here.
#pragma once

#include <cuda_runtime_api.h>

#include "core/problem.hpp"
#include "core/settings.hpp"
#include "runtime/device.hpp"
#include "tgemm.h"

namespace tgemm {

// Enqueues C := alpha * op(A) * op(B) + beta * C on s for device `dev`
// (current), under `math`: the math of the call this is (part of), read
// once when it started. Pointers are device-accessible; m, n >= 1. Returns
// once the work is enqueued; on failure, kernels enqueued before it may
// still run.
tgemm_status run_device_operands(const GemmParams &p, const DeviceInfo &dev, cudaStream_t s, Math math);

}  // namespace tgemm
