#include "driver/execute.hpp"

#include <algorithm>

#include "core/check.hpp"
#include "core/math_mode.hpp"
#include "core/settings.hpp"
#include "core/status.hpp"
#include "driver/device_call.hpp"
#include "driver/host_pipeline.hpp"
#include "driver/spread.hpp"
#include "runtime/host_copy.hpp"
#include "runtime/device.hpp"

namespace tgemm {
namespace {

// Whether s is seen idle, asked twice: a failure that persists is a broken
// context, in which nothing runs any more.
bool idle(cudaStream_t s)
{
    return cudaStreamSynchronize(s) == cudaSuccess || cudaStreamSynchronize(s) == cudaSuccess;
}

bool default_stream(cudaStream_t s) { return s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread; }

// With TGEMM_DEVICES set, the device of a call on the default stream: the
// one whose memory an operand is (owners[i], -1 for none), else the chosen
// device if listed, else the first listed. Operands in the memory of two
// devices fail.
tgemm_status spread_home(const int (&owners)[3], const std::vector<int> &devices, int *dev_id)
{
    int owner = -1;
    for (const int d : owners) {
        if (d < 0)
            continue;
        if (owner >= 0 && d != owner)
            return fail(TGEMM_ERROR_INVALID_DEVICE, "operands are memory of devices %d and %d", owner, d);
        owner = d;
    }
    if (owner >= 0)
        *dev_id = owner;
    else if (std::find(devices.begin(), devices.end(), *dev_id) == devices.end())
        *dev_id = devices.front();
    return TGEMM_SUCCESS;
}

// The spread plan of a call whose operands are all in host memory.
SpreadPlan plan_for(const GemmParams &p, MemKind ka, MemKind kb, MemKind kc, const DeviceInfo &dev,
                    const std::vector<int> &devices, bool choose)
{
    const int workers = static_cast<int>(devices.size());
    SpreadRequest r;
    r.m = p.m;
    r.n = p.n;
    r.k = sgemm_reads_ab(p.k, p.alpha) ? p.k : 0;
    r.a_host = is_host(ka);
    r.b_host = is_host(kb);
    r.c_in = p.beta != 0.0f;
    r.pageable = ka == MemKind::Pageable || kb == MemKind::Pageable || kc == MemKind::Pageable;
    r.copy_threads = host_copy_threads();
    // Blocks share only where C is not read (panel_board.hpp); the devices'
    // peer access is looked at only for products with room for two blocks.
    r.share = settings().spread_peer && ka == MemKind::Pinned && kb == MemKind::Pinned && !r.c_in &&
              std::max<int64_t>(1, p.m / spread_min_side()) * std::max<int64_t>(1, p.n / spread_min_side()) >= 2 &&
              panels_shareable(devices, workers);
    r.workers = workers;
    r.choose_workers = choose;
    r.peak_flops = fp32_peak_flops(dev);
    r.min_side = spread_min_side();
    r.rows = settings().spread_rows;
    r.cols = settings().spread_cols;
    return plan_spread(r);
}

// execute(), with *left (if asked for) all of C until the host-operand
// path says otherwise.
tgemm_status run(const GemmParams &p, cudaStream_t s, bool wait, std::vector<Rect> *left)
{
    if (const std::string &error = setting_error_for_calls(); !error.empty())
        return fail(TGEMM_ERROR_INVALID_SETTING, "%s", error.c_str());
    // The call's math, read once: every part of it runs under the math it
    // started with, whatever tgemm_set_math does meanwhile.
    const Math math = process_math();
    int dev_id = -1;
    tgemm_status st = choose_device(&dev_id);
    if (st != TGEMM_SUCCESS)
        return st;
    const std::vector<int> *listed = nullptr;
    bool choose = false;
    if ((st = spread_devices(&listed, &choose)) != TGEMM_SUCCESS)
        return st;
    const std::vector<int> &spread = *listed;
    // Each operand classified once: its kind and the device that owns it.
    MemKind ka = MemKind::Unused, kb = MemKind::Unused, kc = MemKind::Unused;
    int owners[3] = {-1, -1, -1};
    if (sgemm_reads_ab(p.k, p.alpha)) {
        if ((st = classify_pointer(p.a, &ka, &owners[0])) != TGEMM_SUCCESS ||
            (st = classify_pointer(p.b, &kb, &owners[1])) != TGEMM_SUCCESS)
            return st;
    }
    if ((st = classify_pointer(p.c, &kc, &owners[2])) != TGEMM_SUCCESS)
        return st;
    if (!spread.empty() && default_stream(s)) {
        const int chosen = dev_id;
        if ((st = spread_home(owners, spread, &dev_id)) != TGEMM_SUCCESS)
            return st;
        // The call moves to another device, whose default stream is not the
        // one the caller queued its work on: that work comes first.
        if (dev_id != chosen &&
            (st = check_cuda(cudaStreamSynchronize(s), "cudaStreamSynchronize (caller's stream)")) != TGEMM_SUCCESS)
            return st;
    }
    for (const int d : owners)
        if (d >= 0 && d != dev_id)
            return fail(TGEMM_ERROR_INVALID_DEVICE, "an operand is memory of device %d but the call runs on device %d",
                        d, dev_id);
    DeviceGuard guard;
    if ((st = guard.enter(dev_id)) != TGEMM_SUCCESS)
        return st;
    const DeviceInfo *dev = nullptr;
    if ((st = device_info(dev_id, &dev)) != TGEMM_SUCCESS)
        return st;

    const bool ab_host = !sgemm_reads_ab(p.k, p.alpha) || (is_host(ka) && is_host(kb));
    if (spread.size() > 1 && ab_host && is_host(kc)) {
        const SpreadPlan plan = plan_for(p, ka, kb, kc, *dev, spread, choose);
        if (plan.workers > 1)
            return run_spread(p, ka, kb, kc, plan, spread, s, math, left);
    }
    if (is_host(ka) || is_host(kb) || is_host(left != nullptr ? recoverable_c(kc, p.beta) : kc))
        return run_host_operands(p, ka, kb, kc, *dev, s, math, left);
    st = run_device_operands(p, *dev, s, math);
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
