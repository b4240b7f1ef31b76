#include "driver/execute.hpp"

#include "core/check.hpp"
#include "core/settings.hpp"
#include "core/status.hpp"
#include "driver/device_call.hpp"
#include "driver/host_pipeline.hpp"
#include "runtime/device.hpp"

namespace tgemm {
namespace {

// Whether s is seen idle, asked twice: a failure that persists is a broken
// context, in which nothing runs any more.
bool idle(cudaStream_t s)
{
    return cudaStreamSynchronize(s) == cudaSuccess || cudaStreamSynchronize(s) == cudaSuccess;
}

// execute(), with *left (if asked for) all of C until the host-operand
// path says otherwise.
tgemm_status run(const GemmParams &p, cudaStream_t s, bool wait, std::vector<Rect> *left)
{
    if (!settings().error.empty())
        return fail(TGEMM_ERROR_INVALID_SETTING, "%s", settings().error.c_str());
    int dev_id = -1;
    tgemm_status st = choose_device(&dev_id);
    if (st != TGEMM_SUCCESS)
        return st;
    DeviceGuard guard;
    if ((st = guard.enter(dev_id)) != TGEMM_SUCCESS)
        return st;
    const DeviceInfo *dev = nullptr;
    if ((st = device_info(dev_id, &dev)) != TGEMM_SUCCESS)
        return st;

    MemKind ka = MemKind::Unused, kb = MemKind::Unused, kc = MemKind::Unused;
    if (sgemm_reads_ab(p.k, p.alpha)) {
        if ((st = classify_pointer(p.a, dev_id, &ka)) != TGEMM_SUCCESS ||
            (st = classify_pointer(p.b, dev_id, &kb)) != TGEMM_SUCCESS)
            return st;
    }
    if ((st = classify_pointer(p.c, dev_id, &kc)) != TGEMM_SUCCESS)
        return st;

    if (is_host(ka) || is_host(kb) || is_host(left != nullptr ? recoverable_c(kc, p.beta) : kc))
        return run_host_operands(p, ka, kb, kc, *dev, s, left);
    st = run_device_operands(p, *dev, s);
    if (!wait)
        return st;
    // A blocking call that fails returns once nothing it enqueued can write
    // C: a plan's kernels enqueued before a launch that failed still run.
    if (st != TGEMM_SUCCESS) {
        (void)idle(s);
        return st;
    }
    const cudaError_t e = cudaStreamSynchronize(s);
    if (e == cudaSuccess)
        return TGEMM_SUCCESS;
    (void)idle(s);
    return fail_cuda(e, "cudaStreamSynchronize");
}

}  // namespace

tgemm_status execute(const GemmParams &p, cudaStream_t s, bool wait, std::vector<Rect> *left)
{
    if (left != nullptr)
        *left = {Rect{0, 0, p.m, p.n}};
    const tgemm_status st = run(p, s, wait, left);
    if (st == TGEMM_SUCCESS && left != nullptr)
        left->clear();
    return st;
}

}  // namespace tgemm
