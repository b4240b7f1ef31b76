// The driver's single call into the dispatcher (device_call.hpp): plan,
// then workspace, then launch, each step once and in that order; under the
// fp32-tc math, its own steps first (dispatch/fp32_tc.hpp), the strict
// steps where it declines.
#include "driver/device_call.hpp"

#include "core/math_mode.hpp"
#include "core/settings.hpp"
#include "dispatch/dispatch.hpp"
#include "dispatch/fp32_tc.hpp"
#include "runtime/workspace.hpp"

namespace tgemm {
namespace {

// The plan, the certificate and the products of a call that
// tc_early_decline lets through: the products enqueued (*ran) or rec->why
// saying why not.
tgemm_status attempt_fp32_tc(const GemmParams &p, const DeviceInfo &dev, const DeviceModel &model, cudaStream_t s,
                             MathRecord *rec, bool *ran)
{
    const TcPlan plan = plan_fp32_tc(p, model, s);
    rec->why = plan.why;
    Workspace cert_ws, product_ws;
    cudaMemPool_t pool = nullptr;
    int n = 0;
    if (rec->why == StrictWhy::None) {
        const tgemm_status st = large_workspace_pool(dev.id, &pool);
        if (st != TGEMM_SUCCESS)
            return st;
    }
    if (rec->why == StrictWhy::None && !cert_ws.acquire(pool, tc_certificate_bytes(plan), s))
        rec->why = StrictWhy::Workspace;
    if (rec->why == StrictWhy::None) {
        const tgemm_status st = run_tc_certificate(plan, cert_ws.get(), s, &n, &rec->why);
        if (st != TGEMM_SUCCESS)
            return st;
    }
    if (rec->why == StrictWhy::None && !product_ws.acquire(pool, tc_product_bytes(plan, n), s))
        rec->why = StrictWhy::Workspace;
    if (rec->why == StrictWhy::None) {
        const tgemm_status st = launch_tc_products(plan, cert_ws.get(), product_ws.get(), n, s);
        if (st != TGEMM_SUCCESS)
            return st;
        rec->tc = true;
        rec->moduli = n;
        *ran = true;
    }
    return TGEMM_SUCCESS;
}

// The call in the fp32-tc math where it runs (*ran), else nothing written
// (the strict path follows). Small calls, most of a process's, are declined
// before any plan is made. The mode's workspaces come from its own pool
// (runtime/workspace.hpp) and go back to it after the kernels on s that
// use them.
tgemm_status run_fp32_tc(const GemmParams &p, const DeviceInfo &dev, const DeviceModel &model, cudaStream_t s,
                         bool *ran)
{
    *ran = false;
    MathRecord rec;
    rec.why = tc_early_decline(p, model);
    if (rec.why == StrictWhy::None) {
        const tgemm_status st = attempt_fp32_tc(p, dev, model, s, &rec, ran);
        if (st != TGEMM_SUCCESS)
            return st;
    }
    record_math(rec);
    if (settings().verbose >= 2)
        log_math(p, rec);
    return TGEMM_SUCCESS;
}

}  // namespace

tgemm_status run_device_operands(const GemmParams &p, const DeviceInfo &dev, cudaStream_t s, Math math)
{
    const DeviceModel *model = nullptr;
    tgemm_status st = prepare_device_model(dev, &model);
    if (st != TGEMM_SUCCESS)
        return st;
    if (math == Math::Fp32Tc) {
        bool ran = false;
        if ((st = run_fp32_tc(p, dev, *model, s, &ran)) != TGEMM_SUCCESS || ran)
            return st;
    }
    CallPlan plan;
    if ((st = plan_call(p, *model, &plan)) != TGEMM_SUCCESS)
        return st;
    // The workspace goes back to the pool after the plan's kernels on s;
    // where the pool cannot supply it, the plan made for no workspace runs.
    Workspace ws;
    const size_t bytes = workspace_bytes(plan);
    if (bytes > 0 && !ws.acquire(dev, bytes, s) && (st = drop_workspace(&plan)) != TGEMM_SUCCESS)
        return st;
    return launch(plan, ws.get(), s);
}

}  // namespace tgemm
