// The rank-k planner: the rank-k kernel (kernels/rank_k.cu) over the whole
// of C, its modelled time, and whether it beats the tiled plan. Where K is
// small against m x n the tiled kernels' time goes to moving C after a
// K loop of one or two steps; the rank-k kernel keeps two blocks on an SM
// so that one block's C traffic overlaps the other's loads and sums.
#include <algorithm>

#include "core/math.hpp"
#include "dispatch/planners.hpp"

namespace tgemm {
namespace {

// The tiled model's time for the plans rank-k competes with (K up to
// kRankKMaxK, C large) runs below the measured, the rank-k model's does not
// (docs/notes/dispatch.md, "Rank-k"): the rank-k plan is taken where its
// modelled time is below the tiled plan's (or the tiled plans' memory
// floor, where that is slower) over this factor.
constexpr double kTiledModelShare = 0.95;

// The largest K the rank-k plan is weighed at: beyond it the kernel is a
// 128 x 128 tiled kernel of two blocks an SM, slower there than the tiled
// families' plans, and its factors (fitted where C's traffic is the cost)
// do not describe it (docs/notes/dispatch.md, "Rank-k").
constexpr int64_t kRankKMaxK = 512;

// Bytes C moves: written, and read first where beta != 0.
double c_bytes(const GemmParams &p)
{
    return (p.beta != 0.0f ? 2.0 : 1.0) * static_cast<double>(p.m) * static_cast<double>(p.n) * sizeof(float);
}

// Modelled seconds for the rank-k kernel: its bytes, its sums and a fixed
// cost, added: a block's K loop waits for its panels and its epilogue for
// the loop, and two blocks an SM hide little of either. Bytes: what the
// product must move (op(A), op(B) and C once) at the kernel's share of the
// bandwidth. Sums: whole waves of kRankKBlocksPerSm blocks an SM, each
// block at its share of the SM's FFMA rate (the whole SM's where it runs
// alone, up to what its warps can issue).
double rank_k_cost(const GemmParams &p, const DeviceModel &m)
{
    const ArchFactors &a = *m.factors;
    const int64_t blocks = rank_k_tiles(p);
    const int64_t slots = static_cast<int64_t>(m.desc.sm_count) * kernels::kRankKBlocksPerSm;
    const double waves = static_cast<double>(ceil_div(blocks, slots));
    const int64_t resident = std::min<int64_t>(kernels::kRankKBlocksPerSm, ceil_div(blocks, m.desc.sm_count));
    constexpr int kWarps = 8;
    const double rate =
        std::min(a.rank_k_efficiency * m.sm_flops / static_cast<double>(resident), kWarps * m.warp_flops);
    const double block_flops = 2.0 * kernels::kRankKTile * kernels::kRankKTile * static_cast<double>(p.k);
    const double sums = waves * block_flops / rate;
    const double bytes = (static_cast<double>(p.m) * p.k + static_cast<double>(p.k) * p.n) * sizeof(float) + c_bytes(p);
    const double memory = bytes / (a.rank_k_memory_efficiency * m.memory_bandwidth);
    return sums + memory + a.rank_k_block_seconds;
}

}  // namespace

int64_t rank_k_tiles(const GemmParams &p)
{
    return ceil_div(p.m, int64_t{kernels::kRankKTile}) * ceil_div(p.n, int64_t{kernels::kRankKTile});
}

PiecePlan plan_rank_k(const GemmParams &p, const DeviceModel &m)
{
    PiecePlan plan;
    plan.kind = KernelKind::RankK;
    plan.p = p;
    plan.k_chunk = p.k;
    plan.seconds = rank_k_cost(p, m);
    return plan;
}

bool rank_k_pays(const PiecePlan &rank_k, const PiecePlan &tiled, const DeviceModel &m)
{
    if (rank_k.p.k > kRankKMaxK || rank_k_tiles(rank_k.p) > m.desc.max_grid_x)
        return false;
    return rank_k.seconds * kTiledModelShare < std::max(tiled.seconds, tiled_memory_floor(tiled.p, m));
}

}  // namespace tgemm
