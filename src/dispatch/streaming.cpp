// The streaming planner: a product whose C has at most kSkinnyMax rows or
// columns restated for the streaming kernels, which of them runs it, and
// its split of K (skinny_split).
#include <cstdint>

#include "core/settings.hpp"
#include "dispatch/planners.hpp"
#include "dispatch/skinny_split.hpp"

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

// On sm_90, where the operands are aligned for the tensor copy engine, K is
// long and the 32-row blocks fill the SMs (skinny_tma_fits), the kernel it
// feeds (TGEMM_TMA=0 turns it off); else skinny.cu's, split as
// skinny_split finds best.
PiecePlan plan_streaming(const GemmParams &p, const DeviceModel &m)
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
    const SplitK sk = skinny_split(&plan.skinny, sd);
    if (sk.splits > 1 && (sk.cluster || split_fits(p, sk.splits))) {
        plan.splits = sk.splits;
        plan.k_chunk = sk.k_chunk;
        plan.cluster = sk.cluster;
    }
    return plan;
}

}  // namespace tgemm
