// The fp32-tc math (TGEMM_MATH=fp32-tc, tgemm_set_math) in the dispatcher's
// three steps, for a call the driver would otherwise plan on the strict
// path (dispatch.hpp):
//
//   if (tc_early_decline(p, model) != None)       the sizes and settings
//       strict path                                alone: no plan made
//   TcPlan plan = plan_fp32_tc(p, model, s);      pure but for asking s
//   if (plan.why != StrictWhy::None)              whether it is captured:
//       strict path                                the strict path runs
//   acquire tc_certificate_bytes(plan), or strict
//   run_tc_certificate(plan, work, s, &n, &why)   enqueues, then waits for s
//   if why != None: strict path
//   acquire tc_product_bytes(plan, n), or strict
//   launch_tc_products(plan, work, product_work, n, s)
//
// The certificate (kernels/ozaki) picks n from the operands, so the call
// waits once for its stream, between the two phases; everything else is
// enqueued. Where the mode does not run, nothing it enqueued writes C, and
// the strict path computes the call as it would under TGEMM_MATH=strict.
#pragma once

#include <cstddef>

#include <cuda_runtime_api.h>

#include "core/math_mode.hpp"
#include "core/problem.hpp"
#include "dispatch/device_model.hpp"
#include "kernels/ozaki/ozaki.hpp"
#include "tgemm.h"

namespace tgemm {

// The smallest m, n and k the mode takes under TGEMM_FP32_TC=auto: below
// them its fixed passes (the certificate's GEMM, the conversion, the CRT,
// each close to a full pass over C or the operands) and the wait for the
// certificate cost more than the tensor cores save. Measured with the mode
// forced: 1.16 to 1.5 times strict's speed on products with every
// dimension from 3072 (odd sizes and transposes included), even at 3000^3
// (docs/performance.md, "Speed against cuBLAS SGEMM").
constexpr int64_t kTcMinDim = 3072;

struct TcPlan {
    StrictWhy why = StrictWhy::None;  // None: the mode runs if the certificate allows
    ozaki::Operands op;
    ozaki::Sizes sizes;
    float alpha = 0.0f, beta = 0.0f;
    float *c = nullptr;
    int64_t ldc = 0;
    int sm_count = 0;
};

// The declines that need only the call's sizes, the settings and the
// device (Disabled, Device, Small), else None. The first step, ahead of
// making a plan: most calls of a process in this math are small, and they
// then cost the strict path a few comparisons.
StrictWhy tc_early_decline(const GemmParams &p, const DeviceModel &model);

// The plan, with tc_early_decline's reasons and the rest (Shape, Capture).
TcPlan plan_fp32_tc(const GemmParams &p, const DeviceModel &model, cudaStream_t s);

size_t tc_certificate_bytes(const TcPlan &plan);

// Enqueues the certificate on s and waits for it: *n the call's N and *why
// None, or *why Special (Inf or NaN in an operand) or Uncertified.
tgemm_status run_tc_certificate(const TcPlan &plan, void *work, cudaStream_t s, int *n, StrictWhy *why);

size_t tc_product_bytes(const TcPlan &plan, int n);

// Enqueues the products at n moduli; `work` is the certificate's (its
// exponents and sums are read), `product_work` tc_product_bytes(plan, n).
tgemm_status launch_tc_products(const TcPlan &plan, void *work, void *product_work, int n, cudaStream_t s);

// TGEMM_VERBOSE=2's line: which math ran the call, with N, or why strict.
void log_math(const GemmParams &p, const MathRecord &r);

}  // namespace tgemm
