// The fp32-tc math's plan and launch (dispatch/fp32_tc.hpp).
#include "dispatch/fp32_tc.hpp"

#include <cstdio>

#include "core/settings.hpp"
#include "core/status.hpp"

namespace tgemm {

StrictWhy tc_early_decline(const GemmParams &p, const DeviceModel &model)
{
    const Fp32TcMode mode = settings().fp32_tc;
    if (mode == Fp32TcMode::Never)
        return StrictWhy::Disabled;
    if (!model.desc.fp32_tc)
        return StrictWhy::Device;
    if (mode == Fp32TcMode::Auto && (p.m < kTcMinDim || p.n < kTcMinDim || p.k < kTcMinDim))
        return StrictWhy::Small;
    return StrictWhy::None;
}

TcPlan plan_fp32_tc(const GemmParams &p, const DeviceModel &model, cudaStream_t s)
{
    TcPlan plan;
    if ((plan.why = tc_early_decline(p, model)) != StrictWhy::None)
        return plan;
    // op(A)(i, kk): A[i + kk lda] or A[kk + i lda]; op(B)(kk, j) as row j
    // of an operand of rows of K: B[kk + j ldb] or B[j + kk ldb].
    plan.op.a = p.a;
    plan.op.ars = p.trans_a ? p.lda : 1;
    plan.op.aks = p.trans_a ? 1 : p.lda;
    plan.op.b = p.b;
    plan.op.brs = p.trans_b ? 1 : p.ldb;
    plan.op.bks = p.trans_b ? p.ldb : 1;
    plan.op.m = p.m;
    plan.op.n = p.n;
    plan.op.k = p.k;
    plan.sizes = ozaki::sizes_of(p.m, p.n, p.k);
    plan.alpha = p.alpha;
    plan.beta = p.beta;
    plan.c = p.c;
    plan.ldc = p.ldc;
    plan.sm_count = model.desc.sm_count;
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (p.alpha == 0.0f || !ozaki::fits(plan.op))
        plan.why = StrictWhy::Shape;
    else if (cudaStreamIsCapturing(s, &capture) != cudaSuccess) {
        (void)cudaGetLastError();  // not sticky: the strict path's launches must not see it
        plan.why = StrictWhy::Capture;
    } else if (capture != cudaStreamCaptureStatusNone) {
        plan.why = StrictWhy::Capture;  // the call waits for its stream: not in a graph
    }
    return plan;
}

size_t tc_certificate_bytes(const TcPlan &plan)
{
    return ozaki::cert_bytes(plan.sizes);
}

tgemm_status run_tc_certificate(const TcPlan &plan, void *work, cudaStream_t s, int *n, StrictWhy *why)
{
    const ozaki::CertBuffers cb = ozaki::cert_buffers(work, plan.sizes);
    cudaError_t e = ozaki::launch_certificate(plan.op, plan.sizes, cb, plan.sm_count, s);
    if (e != cudaSuccess)
        return fail_cuda(e, "fp32-tc certificate launch");
    int result[2] = {0, 0};
    if ((e = cudaMemcpyAsync(result, cb.result, sizeof result, cudaMemcpyDeviceToHost, s)) != cudaSuccess)
        return fail_cuda(e, "fp32-tc certificate read-back");
    if ((e = cudaStreamSynchronize(s)) != cudaSuccess)
        return fail_cuda(e, "fp32-tc certificate");
    *n = result[0];
    if (result[1] & ozaki::kSpecialInput)
        *why = StrictWhy::Special;
    else if ((result[1] & ozaki::kInexactBalance) || *n < ozaki::kMinN || *n > ozaki::kMaxN)
        *why = StrictWhy::Uncertified;
    else
        *why = StrictWhy::None;
    return TGEMM_SUCCESS;
}

size_t tc_product_bytes(const TcPlan &plan, int n)
{
    return ozaki::product_bytes(plan.sizes, n);
}

tgemm_status launch_tc_products(const TcPlan &plan, void *work, void *product_work, int n, cudaStream_t s)
{
    const ozaki::CertBuffers cb = ozaki::cert_buffers(work, plan.sizes);
    const ozaki::ProductBuffers pb = ozaki::product_buffers(product_work, plan.sizes, n);
    const cudaError_t e = ozaki::launch_products(plan.op, plan.sizes, cb, pb, n, plan.alpha, plan.beta, plan.c,
                                                 plan.ldc, plan.sm_count, s);
    return e == cudaSuccess ? TGEMM_SUCCESS : fail_cuda(e, "fp32-tc launch");
}

void log_math(const GemmParams &p, const MathRecord &r)
{
    const auto ll = [](int64_t v) { return static_cast<long long>(v); };
    if (r.tc)
        std::fprintf(stderr, "tgemm: math m=%lld n=%lld k=%lld fp32-tc moduli=%d\n", ll(p.m), ll(p.n), ll(p.k),
                     r.moduli);
    else
        std::fprintf(stderr, "tgemm: math m=%lld n=%lld k=%lld strict (fp32-tc declined: %s)\n", ll(p.m), ll(p.n),
                     ll(p.k), strict_why_name(r.why));
}

}  // namespace tgemm
