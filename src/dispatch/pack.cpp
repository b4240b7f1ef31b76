// The pack planner: where A is stored transposed (TN, TT), whether packing
// op(A) by columns into the workspace (pack.cu) and running the product
// untransposed on it (NN, NT, the kernels' faster pairs) is cheaper by
// kPackMargin. The pack is priced as its memory traffic and a launch.
// TGEMM_PACK=always packs every such tiled plan, never none.
#include <algorithm>
#include <cstdint>

#include "core/math.hpp"
#include "core/settings.hpp"
#include "dispatch/planners.hpp"

namespace tgemm {
namespace {

// The packed columns' leading dimension is m rounded up to kPackLd, so that
// every column starts on a 128-byte line.
constexpr int64_t kPackLd = 32;
// A packed plan is taken only when the model finds it this much faster than
// the plan without.
constexpr double kPackMargin = 0.03;

// The largest share of a plan's time that packing can save: the
// untransposed pairs' best speed-up over the transposed ones (with the
// unaligned factor: the packed operand is aligned). A pack that costs more
// than this share of the plain plan is not planned, which saves planning it.
double pack_gain_bound(const DeviceModel &m)
{
    double most = 1.0;
    for (const TiledModel &e : m.tiled)
        most = std::max({most, e.efficiency[0] / e.efficiency[2] / e.unaligned,
                         e.efficiency[1] / e.efficiency[3] / e.unaligned});
    return 1.0 - 1.0 / most;
}

}  // namespace

// The workspace is aligned to 256 bytes at least (cudaMallocFromPoolAsync)
// and the packed copy sits at its start, so it is planned as aligned.
alignas(256) static const float kPackStandInStorage[64] = {};
const float *const kPackStandIn = kPackStandInStorage;

PackPlan plan_pack(const GemmParams &p, const DeviceModel &m, const KernelFamily *only, double plain_seconds)
{
    PackPlan pk;
    const PackMode mode = settings().pack;
    if (!p.trans_a || mode == PackMode::Never || (only != nullptr && mode != PackMode::Always))
        return pk;
    pk.p = p;
    pk.p.trans_a = false;
    pk.p.lda = ceil_div(p.m, kPackLd) * kPackLd;
    pk.p.a = kPackStandIn;
    pk.bytes = static_cast<size_t>(pk.p.lda) * static_cast<size_t>(p.k) * sizeof(float);
    const double pack_seconds =
        2.0 * static_cast<double>(pk.bytes) / (m.factors->pack_efficiency * m.memory_bandwidth) +
        m.factors->launch_seconds;
    if (pk.bytes > kMaxWorkspaceBytes || (mode == PackMode::Auto && pack_seconds > pack_gain_bound(m) * plain_seconds))
        return pk;
    pk.plan = plan_tiled(pk.p, m, only);
    pk.use = mode == PackMode::Always || pk.plan.seconds + pack_seconds < (1.0 - kPackMargin) * plain_seconds;
    return pk;
}

}  // namespace tgemm
