// The streaming kernels' planner: for a product whose C has at most 16 rows
// or columns (SkinnyParams), the split of K, the row groups per block and
// whether the split finishes inside a thread-block cluster, from a model of
// the kernels' memory traffic on the device described by SkinnyDevice.
// Plain C++: no CUDA runtime calls, no GPU needed.
#include "dispatch/skinny_split.hpp"

#include <cmath>

#include "core/math.hpp"
#include "kernels/skinny_shape.hpp"

namespace tgemm {

using namespace kernels::skinny;

int64_t skinny_rows_per_block(const SkinnyParams &p)
{
    if (p.gemv_rw > 0)
        return int64_t{kGemvRows} * p.gemv_rw;
    return p.x_r == 1 ? kRowsPerBlock : kWarps * dots_rw(short_bucket(p.s)) * p.groups;
}

namespace {

// skinny_rows: two 8-warp blocks per SM keep enough loads in flight; split K
// until there are that many blocks, keeping every slice at least 4 steps long
// so the partial sums stay cheap. Where a split of at least 3/4 as many
// slices lets every block run at once in clusters, take it: finishing in
// the cluster saves the reduction kernel and its launch (clusters of 8 may
// hold fewer blocks than the SMs' slots, where one fewer slice fits).
SplitK rows_split(const SkinnyParams &p, const SkinnyDevice &dev)
{
    const int64_t blocks = ceil_div(p.r, kRowsPerBlock);
    const int64_t want = ceil_div(2 * static_cast<int64_t>(dev.sm_count), blocks);
    const int64_t most = p.k / (4 * kRowsStep);
    int64_t splits = want < most ? want : most;
    if (splits < 1)
        splits = 1;
    SplitK sk;
    const auto make = [&](int64_t n) {
        sk.k_chunk = ceil_div(ceil_div(p.k, n), kRowsStep) * kRowsStep;
        sk.splits = static_cast<int>(ceil_div(p.k, sk.k_chunk));
        sk.cluster = sk.splits > 1 && sk.splits <= kMaxCluster && blocks * sk.splits <= dev.cluster_blocks[sk.splits];
    };
    make(splits);
    for (int64_t n = sk.splits; !sk.cluster && n > 1 && 4 * n >= 3 * sk.splits; --n) {
        const SplitK keep = sk;
        make(n);
        if (!sk.cluster)
            sk = keep;
    }
    return sk;
}

// skinny_dots: the split of K and the groups per block with the least
// modelled time. The kernel streams X at the memory's rate when two blocks
// per SM are resident, so each block moves its bytes (its X, plus the Y
// piece it stages) at 1 / (2 * SMs) of the bandwidth, in whole waves; a
// split adds its slices' traffic and the reduction's launch, or in cluster
// form (at most kMaxCluster slices, all blocks resident at once) the exchange
// through distributed shared memory. More groups per block stage Y once
// for more rows; more slices make more, shorter blocks.
constexpr double kClusterFinish = 1e-6;  // seconds: two cluster barriers and the exchange

SplitK dots_split(SkinnyParams *p, const SkinnyDevice &dev)
{
    const int S = short_bucket(p->s);
    const int64_t rw = dots_rw(S), cap = dots_chunk_cap_of(S);
    const double slots = 2.0 * dev.sm_count;
    const double block_rate = dev.bandwidth / slots;
    double best = INFINITY;
    SplitK sk;
    sk.splits = 1;
    sk.k_chunk = p->k;
    p->groups = 1;
    for (int64_t want = 1; want <= 64; ++want) {
        const int64_t chunk = ceil_div(ceil_div(p->k, want), kDotsStep) * kDotsStep;
        const int64_t splits = ceil_div(p->k, chunk);
        if (splits != want)
            continue;  // the same split as a smaller want
        if (splits > 1 && chunk < 4 * kDotsStep)
            break;
        const int64_t pieces = ceil_div(chunk, cap);
        for (int groups = 1; groups <= 8; groups *= 2) {
            const int64_t rows = kWarps * rw * groups;
            const double blocks = static_cast<double>(ceil_div(p->r, rows) * splits);
            const double waves = std::ceil(blocks / slots);
            const double x_bytes = 4.0 * static_cast<double>(rows < p->r ? rows : p->r) * chunk;
            const double y_bytes = 4.0 * S * chunk * (pieces > 1 ? groups : 1);
            double t = waves * (x_bytes + y_bytes) / block_rate;
            const bool cluster = splits > 1 && splits <= kMaxCluster && blocks <= dev.cluster_blocks[splits] &&
                                 rows * S * 4 <= static_cast<int64_t>(kPartBytes);
            if (cluster)
                t += kClusterFinish;
            else if (splits > 1)
                t += (2.0 * splits + 1.0) * 4.0 * p->r * S / dev.bandwidth + dev.launch_seconds;
            if (t < best) {
                best = t;
                sk.splits = static_cast<int>(splits);
                sk.k_chunk = chunk;
                sk.cluster = cluster;
                p->groups = groups;
            }
        }
    }
    return sk;
}

}  // namespace

SplitK skinny_split(SkinnyParams *p, const SkinnyDevice &dev)
{
    if (p->x_r == 1) {
        p->groups = 1;
        return rows_split(*p, dev);
    }
    return dots_split(p, dev);
}

}  // namespace tgemm
