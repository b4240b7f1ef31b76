// Which kernels run a problem, and running them, in three steps kept apart:
// plan (pure), then the workspace the plan asks for, then launch.
//
//   const DeviceModel *model;   prepare_device_model(dev, &model);   once per device
//   CallPlan plan;              plan_call(p, *model, &plan);
//   size_t bytes = workspace_bytes(plan);      acquire it, or else
//                               drop_workspace(&plan);
//   launch(plan, workspace, stream);
//
// The table in dispatch/plan.cpp says which kernel runs which problem.
#pragma once

#include <cstddef>

#include <cuda_runtime_api.h>

#include "dispatch/device_model.hpp"
#include "dispatch/plan.hpp"
#include "runtime/device.hpp"
#include "tgemm.h"

namespace tgemm {

// The model of device dev.id: prepares every kernel for it (shared memory
// limits, cluster capacities; needs the device current) and derives the
// model, once per device; thread-safe. TGEMM_VERBOSE=2 logs the capacities.
tgemm_status prepare_device_model(const DeviceInfo &dev, const DeviceModel **model);

// Plans C := alpha * op(A) * op(B) + beta * C on a device (m, n >= 1);
// pure: reads the problem's pointers only for their alignment, calls
// nothing on the device. Fails where no launch could run the problem:
// TGEMM_KERNEL not a kernel family, a grid over the device's limit.
tgemm_status plan_call(const GemmParams &p, const DeviceModel &model, CallPlan *plan);

// Device memory the plan needs, in one piece (0: none).
size_t workspace_bytes(const CallPlan &plan);

// Switches to the same call planned for no workspace (planned now, on the
// model plan_call used): op(A) read where it is, split-K slices that would
// go through the workspace run in the kernel (splits 1, K whole) or, for a
// streaming product, its streaming plan made without workspace;
// stream-K's family runs whole tiles.
tgemm_status drop_workspace(CallPlan *plan);

// Enqueues the plan on s; `workspace` holds workspace_bytes(plan) bytes,
// aligned to 256 (nullptr where it is 0). TGEMM_VERBOSE=2 logs each launch.
tgemm_status launch(const CallPlan &plan, float *workspace, cudaStream_t s);

}  // namespace tgemm
