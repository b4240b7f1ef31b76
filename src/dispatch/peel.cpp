// The peel planner: where m or n is a few rows or columns (at most
// kSkinnyMax) past a multiple of kPeelStep, and the model finds it cheaper,
// those last rows and columns of C are peeled off as streaming products and
// the rest goes to the tiled planner: a mostly empty last row or column of
// tiles can cost a whole wave's worth of time. Each element of C belongs to
// one piece, so beta is applied once and the result is as deterministic as
// each piece's.
#include <cstdint>

#include "dispatch/planners.hpp"

namespace tgemm {
namespace {

constexpr int64_t kPeelStep = 128;  // every family's BM and BN divides 128 or is 256
// Peel only for a modelled saving of 10% or more: the model is least sure of
// mid-sized unaligned products.
constexpr double kPeelGain = 0.9;

// The streaming kernels' time for a strip: its long operand, its short one
// and C through memory, and a launch.
double strip_seconds(int64_t r, int64_t s, const GemmParams &p, const DeviceModel &m)
{
    const double bytes = 4.0 * (static_cast<double>(r + s) * p.k + (p.beta != 0.0f ? 2.0 : 1.0) * r * s);
    return bytes / (m.factors->stream_efficiency * m.memory_bandwidth) + m.factors->launch_seconds;
}

}  // namespace

PeelPlan plan_peel(const GemmParams &p, const DeviceModel &m, double whole_seconds)
{
    PeelPlan peel;
    const auto rest = [](int64_t d) { return d > kPeelStep && d % kPeelStep <= kSkinnyMax ? d % kPeelStep : 0; };
    const int64_t pm = rest(p.m), pn = rest(p.n);
    if (pm == 0 && pn == 0)
        return peel;
    GemmParams main = p;
    main.m -= pm;
    main.n -= pn;
    const PiecePlan main_plan = plan_tiled(main, m, nullptr);
    double seconds = main_plan.seconds;
    GemmParams right = p, bottom = main;
    if (pn > 0) {  // columns n - pn .. n - 1 of C and of op(B)
        right.n = pn;
        right.b += p.trans_b ? main.n : main.n * p.ldb;
        right.c += main.n * p.ldc;
        seconds += strip_seconds(p.m, pn, p, m);
    }
    if (pm > 0) {  // rows m - pm .. m - 1 of C and of op(A), left of the right strip
        bottom.m = pm;
        bottom.a += p.trans_a ? main.m * p.lda : main.m;
        bottom.c += main.m;
        seconds += strip_seconds(main.n, pm, p, m);
    }
    if (seconds < kPeelGain * whole_seconds) {
        peel.pm = pm;
        peel.pn = pn;
        peel.main = main;
        peel.right = right;
        peel.bottom = bottom;
        peel.main_plan = main_plan;
    }
    return peel;
}

}  // namespace tgemm
