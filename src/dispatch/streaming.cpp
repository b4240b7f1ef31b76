// The streaming planner: a product whose C has at most kSkinnyMax rows or
// columns restated for the streaming kernels, which of them runs it, and
// its split of K (skinny_split; plan_gemv for skinny_gemv).
#include <algorithm>
#include <cstdint>

#include "core/math.hpp"
#include "core/settings.hpp"
#include "dispatch/planners.hpp"
#include "dispatch/skinny_split.hpp"
#include "kernels/skinny_shape.hpp"

namespace tgemm {
namespace {

using kernels::SkinnyParams;

// C(r, j) = alpha * sum_k X(r, k) Y(j, k) + beta * C(r, j), r along C's long
// dimension and j along its short one.
SkinnyParams skinny_params(const GemmParams &p)
{
    SkinnyParams s = {};
    const bool n_small = streaming_x_is_a(p);
    if (n_small) {  // X = op(A) (m x k), Y(j, k) = op(B)(k, j), C(r, j) = C[r + j ldc]
        s.x = p.a;
        s.x_r = p.trans_a ? p.lda : 1;
        s.x_k = p.trans_a ? 1 : p.lda;
        s.y = p.b;
        s.y_j = p.trans_b ? 1 : p.ldb;
        s.y_k = p.trans_b ? p.ldb : 1;
        s.c_r = 1;
        s.c_j = p.ldc;
        s.w_r = 1;
        s.w_j = p.m;
        s.r = p.m;
        s.s = static_cast<int>(p.n);
    } else {  // X(r, k) = op(B)(k, r), Y = op(A) (m x k), C(j, r) = C[j + r ldc]
        s.x = p.b;
        s.x_r = p.trans_b ? 1 : p.ldb;
        s.x_k = p.trans_b ? p.ldb : 1;
        s.y = p.a;
        s.y_j = p.trans_a ? p.lda : 1;
        s.y_k = p.trans_a ? 1 : p.lda;
        s.c_r = p.ldc;
        s.c_j = 1;
        s.w_r = p.m;
        s.w_j = 1;
        s.r = p.n;
        s.s = static_cast<int>(p.m);
    }
    s.c = p.c;
    s.m = p.m;
    s.n = p.n;
    s.k = p.k;
    s.alpha = p.alpha;
    s.beta = p.beta;
    return s;
}

}  // namespace

StreamingTerms streaming_terms(const PiecePlan &plan, const DeviceModel &m)
{
    using namespace kernels::skinny;
    StreamingTerms t = {};
    if (plan.kind != KernelKind::Streaming)
        return t;  // the tensor copy engine's kernel is not modelled
    const SkinnyParams &s = plan.skinny;
    const ArchFactors &a = *m.factors;
    const int S = short_bucket(s.s);
    const int64_t len = plan.splits > 1 ? plan.k_chunk : s.k;
    // A piece of Y staged: every thread loads a batch (stage_batch) of
    // elements, or of 16-byte pieces where Y allows, before it stores any.
    const auto stage_trips = [&](int64_t piece, bool vec, bool rows_vec) {
        return ceil_div(piece * S, int64_t{vec ? 4 : 1} * stage_batch(S, rows_vec) * kThreads);
    };
    int64_t rows, trips;
    if (s.gemv_rw > 0) {
        // skinny_gemv: each warp walks its run of the block's K, a group of
        // kGemvSteps loads per lane at a time, y with X.
        trips = ceil_div(ceil_div(len, int64_t{kWarps / s.gemv_rw}), int64_t{kGemvSteps});
        rows = int64_t{kGemvRows} * s.gemv_rw;
    } else if (s.x_r == 1 && rows_ring_runs(s.vec, s.y_vec, len, S)) {
        // skinny_rows_ring: each warp streams its run of K, kRingDepth - 1
        // groups in flight, Y with X.
        trips = ceil_div(ceil_div(len, int64_t{kWarps}), int64_t{kRingSteps} * (kRingDepth - 1));
        rows = kRowsPerBlock;
    } else if (s.x_r == 1) {  // skinny_rows: the 8 warps share each piece of K
        const int64_t cap = chunk_cap_of(S, kRowsStep);
        const bool vec = s.y_vec && s.y_k == 1;
        trips = ceil_div(len, cap) * stage_trips(len < cap ? len : cap, vec, vec) +
                ceil_div(ceil_div(len, int64_t{kWarps}), int64_t{rows_unroll(S)});
        rows = kRowsPerBlock;
    } else {  // skinny_dots: each warp walks the block's K for each of its groups of r
        const int64_t cap = dots_chunk_cap_of(S);
        const int64_t chunks = ceil_div(len, cap);
        const int64_t piece = ceil_div(len < cap ? len : cap, int64_t{kDotsStep}) * kDotsStep;
        const int64_t step = 4 * 32 / (S >= 16 ? 2 : 1);
        const int64_t walk = ceil_div(ceil_div(len, step), int64_t{dots_unroll(S, s.vec)});
        // One piece of K: Y staged once for all groups; more: staged again
        // for every group.
        trips = (chunks == 1 ? 1 : s.groups) * chunks * stage_trips(piece, s.y_vec, false) + s.groups * walk;
        rows = kWarps * dots_rw(S) * s.groups;
    }
    const int64_t row_blocks = ceil_div(s.r, rows);
    t.waves = static_cast<double>(ceil_div(row_blocks * plan.splits, int64_t{2} * m.desc.sm_count));
    t.trips = static_cast<double>(trips);
    t.latency = t.waves * (a.stream_block_seconds + t.trips * a.stream_trip_seconds);
    // X and C once, Y once from memory and again from L2 for each further
    // block row.
    const double once =
        4.0 * (static_cast<double>(s.r) * s.k + static_cast<double>(S) * s.k +
               (s.beta != 0.0f ? 2.0 : 1.0) * static_cast<double>(s.r) * s.s);
    const double again = 4.0 * static_cast<double>(S) * s.k * static_cast<double>(row_blocks - 1);
    t.memory = (once + again / a.l2_bandwidth_factor) / (a.stream_efficiency * m.memory_bandwidth);
    t.finish = plan.splits <= 1 ? 0.0 : plan.cluster ? a.cluster_sync_seconds : reduction_seconds(plan.p, m, plan.splits);
    return t;
}

namespace {

// A streaming plan's time: the larger of its latency and memory terms, plus
// its finish.
double seconds_of(const StreamingTerms &t)
{
    return std::max(t.latency, t.memory) + t.finish;
}

// A matrix-vector product (s == 1, X contiguous along r): skinny_gemv where
// an arrangement of it ranks before rows_plan, skinny_rows' plan, by the
// host-floored time (a split through the workspace is two kernels to
// issue), then by the modelled time. For each count of a block's warps
// along r (1, 2, 4 or 8; the rest along K), three splits of K in slices of
// whole groups of steps: none; enough slices to fill the SMs' block slots,
// as clusters that fit at once (the most up to kMaxCluster that do) where
// `clusters` allows; and as many through the workspace, where it fits and
// `workspace` allows. Only plans whose warps walk at most kGemvMaxTrips
// groups: past a few, the trips of an SM's blocks share its bandwidth,
// which the model's fixed cost per trip does not see, and skinny_rows'
// deeper staging streams faster. A handful of candidates, each priced
// once: the plan is made on every call. Ties keep skinny_rows, then the
// earlier.
constexpr int64_t kGemvMaxSplits = 64;

PiecePlan plan_gemv(const PiecePlan &rows_plan, const DeviceModel &m, bool workspace, bool clusters)
{
    using namespace kernels::skinny;
    PiecePlan best = rows_plan, g = rows_plan;
    double best_floor = host_floored(best, m);
    g.skinny.groups = 1;
    const int64_t r = rows_plan.skinny.r, k = rows_plan.skinny.k;
    const int64_t slots = int64_t{2} * m.desc.sm_count;
    // The slices of whole groups of steps closest to `want`.
    const auto chunk_of = [&](int64_t want) {
        return ceil_div(ceil_div(k, want), int64_t{kGemvSteps}) * kGemvSteps;
    };
    const auto price = [&](int64_t chunk, bool cluster) {
        const int64_t splits = ceil_div(k, chunk);
        g.splits = static_cast<int>(splits);
        g.k_chunk = splits > 1 ? chunk : k;
        g.cluster = cluster && splits > 1;
        if (splits > 1 && !cluster && !split_fits(g.p, g.splits))
            return;
        const StreamingTerms t = streaming_terms(g, m);
        g.seconds = seconds_of(t);
        const double floor = host_floored(g, m);
        if (t.trips <= kGemvMaxTrips && (floor < best_floor || (floor == best_floor && g.seconds < best.seconds))) {
            best = g;
            best_floor = floor;
        }
    };
    for (int rw = 1; rw <= kWarps; rw *= 2) {
        g.skinny.gemv_rw = rw;
        const int64_t row_blocks = ceil_div(r, int64_t{kGemvRows} * rw);
        // At least a group of steps for each warp along K in every slice.
        const int64_t most = std::max<int64_t>(1, k / (int64_t{kGemvSteps} * (kWarps / rw)));
        const int64_t fill = std::min(ceil_div(slots, row_blocks), most);
        price(k, false);
        // Rounding the slices to whole groups can leave fewer of them than
        // asked for: the capacity that counts is that of the clusters made.
        for (int64_t n = clusters ? std::min<int64_t>(fill, kMaxCluster) : 1; n > 1; --n) {
            const int64_t chunk = chunk_of(n), splits = ceil_div(k, chunk);
            if (splits > 1 && row_blocks * splits <= m.desc.skinny_cluster_blocks[splits]) {
                price(chunk, true);
                break;
            }
        }
        if (fill > 1 && workspace)
            price(chunk_of(std::min(fill, kGemvMaxSplits)), false);
    }
    return best;
}

}  // namespace

// On sm_90, where the operands are aligned for the tensor copy engine, K is
// long and the 32-row blocks fill the SMs (skinny_tma_fits), the kernel it
// feeds (TGEMM_TMA=0 turns it off); else skinny.cu's, split as
// skinny_split finds best, or for a matrix-vector product with X contiguous
// along r skinny_gemv where plan_gemv finds it faster.
PiecePlan plan_streaming(const GemmParams &p, const DeviceModel &m, bool workspace)
{
    PiecePlan plan;
    plan.p = p;
    plan.kind = KernelKind::Streaming;
    plan.skinny = skinny_params(p);
    const SkinnyParams &s = plan.skinny;
    if (m.desc.skinny_tma && settings().tma && kernels::skinny_tma_fits(s, m.desc.sm_count)) {
        plan.kind = KernelKind::StreamingTma;
        return plan;
    }
    const int64_t stride = s.x_r == 1 ? s.x_k : s.x_r;
    plan.skinny.vec = (reinterpret_cast<uintptr_t>(s.x) & 15u) == 0 && stride % 4 == 0;
    const bool y16 = (reinterpret_cast<uintptr_t>(s.y) & 15u) == 0;
    plan.skinny.y_vec = y16 && (s.y_k == 1 ? (s.s == 1 || s.y_j % 4 == 0)
                                           : (s.y_j == 1 && s.s % 4 == 0 && s.y_k % 4 == 0));
    const SkinnyDevice sd = {m.desc.sm_count, m.desc.skinny_cluster_blocks, m.memory_bandwidth,
                             m.factors->launch_seconds};
    // Without the workspace, a split only in clusters, and only where they
    // may run.
    const bool clusters = workspace || settings().clusters;
    const SplitK sk = skinny_split(&plan.skinny, sd);
    if (sk.splits > 1 && (sk.cluster ? clusters : workspace && split_fits(p, sk.splits))) {
        plan.splits = sk.splits;
        plan.k_chunk = sk.k_chunk;
        plan.cluster = sk.cluster;
    }
    plan.seconds = seconds_of(streaming_terms(plan, m));
    if (s.s == 1 && s.x_r == 1)
        plan = plan_gemv(plan, m, workspace, clusters);
    return plan;
}

}  // namespace tgemm
