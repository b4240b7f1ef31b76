// The driver's single call into the dispatcher (device_call.hpp): plan,
// then workspace, then launch, each step once and in that order.
#include "driver/device_call.hpp"

#include "dispatch/dispatch.hpp"
#include "runtime/workspace.hpp"

namespace tgemm {

tgemm_status run_device_operands(const GemmParams &p, const DeviceInfo &dev, cudaStream_t s)
{
    const DeviceModel *model = nullptr;
    tgemm_status st = prepare_device_model(dev, &model);
    if (st != TGEMM_SUCCESS)
        return st;
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
