// The tiled planner: for each family of the registry and each split of K
// (none, through the workspace, or finished in a thread-block cluster), and
// for stream-K where the last wave is partly empty, the modelled time; the
// plan with the least of the larger of its modelled time and the host's
// time to issue it wins (ties by the modelled time), a split or stream-K
// only by a margin. Recent plans are remembered per thread (TiledMemo).
#include <algorithm>
#include <cmath>
#include <memory>

#include "core/math.hpp"
#include "core/settings.hpp"
#include "dispatch/planners.hpp"

namespace tgemm {
namespace {

// The split-K factors asked for; each gives the slices its rounded chunk
// makes (fewer where K's steps do not share out evenly), through the
// workspace; the cluster form takes only a split that comes out as asked
// (not the cluster sizes only the rounding makes: docs/notes/dispatch.md).
const int kSplits[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128};
constexpr int64_t kMinSplitSteps = 2;  // K steps per slice, at least
// A split-K plan is taken only when the model finds it this much faster
// than the best plan without: its slices of K, running at once, share less
// of A and B in L2 than the model sees (large transposed products lost
// against cuBLAS split where the model found them a little faster).
constexpr double kSplitMargin = 0.03;
// A stream-K plan is taken only when the model finds it this much faster
// than the plan without.
constexpr double kStreamKMargin = 0.01;

// K per slice for `splits` slices, a multiple of `step`.
int64_t chunk_for(int64_t k, int splits, int64_t step)
{
    return ceil_div(ceil_div(k, splits), step) * step;
}

// The split-K reduction's cost: the reduction kernel's (reduction_seconds),
// or in cluster form the barriers and each thread's rounds of reads (one
// 4-row piece of every slice per round) for its block's 1 / splits of the
// tile.
double split_cost(const GemmParams &p, const DeviceModel &m, const KernelFamily &f, int splits, bool cluster)
{
    const ArchFactors &a = *m.factors;
    if (splits == 1)
        return 0.0;
    if (cluster)
        return a.cluster_sync_seconds +
               a.dsmem_round_seconds * static_cast<double>(ceil_div(f.bm * f.bn / 4, int64_t{splits} * f.threads));
    return reduction_seconds(p, m, splits);
}

// The blocks of the family that fit on the device at once in clusters of
// `splits`; 0 where it has no such cluster form.
int cluster_capacity(const TiledModel &e, int splits)
{
    return splits <= e.max_cluster ? e.cluster_blocks[splits] : 0;
}

// The fixed costs of a plan whose busiest SM runs `most` blocks in `waves`
// waves, `first` of them in the first: the scalar kernels' block_seconds
// for each block and wave_seconds for each wave. The vector kernels pay
// those for the first wave's blocks and their own vector_ costs for every
// later block and wave: fitted so (docs/notes/dispatch.md), a first wave
// waits on its first copies and stores with nothing to overlap them
// whatever the kernel, while later blocks of the vector kernels cost a
// fraction of the scalar kernels'.
double fixed_seconds(const TiledModel &e, bool vectors, double most, double waves, double first)
{
    if (!vectors)
        return most * e.block_seconds + waves * e.wave_seconds;
    return first * e.block_seconds + e.wave_seconds + (most - first) * e.vector_block_seconds +
           (waves - 1.0) * e.vector_wave_seconds;
}

// Modelled seconds for a tiled family with a split-K factor. Without
// clusters, as the busiest SM runs its blocks (it takes a new block as soon
// as one ends): whole waves of as many blocks as it holds at once, then the
// rest as a last, partial wave with fewer blocks resident, not priced as a
// whole one. In cluster form, whole waves of the blocks that fit in
// clusters of `splits` (a cluster waits for room on several SMs at once),
// the grid shared equally over them, each wave filling the busiest SM in
// proportion to the clusters' capacity rather than evenly. Each block
// walks its K steps (plus the prologue's) at the slower of the step
// latency and its share of the SM's FFMA rate, a share that grows when
// fewer blocks than the SM could hold are resident, up to what its own
// warps can issue (and, for a lone block of a many-block family, its
// `alone` share of the efficiency); plus the family's fixed costs for
// each block the busiest SM runs and for each wave, a partial one
// included (fixed_seconds); plus, without a split, for each whole wave of
// a family with short_wave_seconds, that cost in full up to
// short_wave_steps K steps a block and falling beyond; plus the split's
// reduction.
// cluster_blocks: 0 for the workspace form. The problem has m, n >= 1
// (empty calls never plan).
double tiled_cost(const TiledModel &e, const GemmParams &p, const DeviceModel &m, int splits, int64_t chunk,
                  int cluster_blocks)
{
    const KernelFamily &f = *e.family;
    const int sm_count = m.desc.sm_count;
    const int64_t blocks = tiles(f, p) * splits;
    const int64_t busiest = ceil_div(blocks, sm_count);  // blocks on the busiest SM, spread evenly
    // The kernel's stores: the workspace slices' (ld = m) or C's, as launch picks the kernel.
    const bool out_aligned = splits > 1 && cluster_blocks == 0 ? p.m % 4 == 0 : c_aligned(p);
    const bool vectors = vector_kernels(p, out_aligned);
    const double family_rate = family_efficiency(e, p, vectors);
    // The vector kernels' later-block and later-wave costs hold for plans
    // without a split, cluster splits and stream-K (streamk_cost); the
    // workspace form's blocks, which store whole slices for the reduction
    // kernel, run at the scalar kernels' costs (docs/notes/dispatch.md).
    const bool vector_fixed = vectors && (splits == 1 || cluster_blocks > 0);
    const double steps = static_cast<double>(ceil_div(chunk, f.bk) + 1);
    // The blocks an SM holds at once: in cluster form the larger of the
    // plain kernels' residency and the device's count for the cluster
    // kernels (their own registers); all of them share the SM's rate. A
    // smaller count only leaves fewer blocks a wave (the waves below).
    const int64_t cluster_per_sm = ceil_div(int64_t{cluster_blocks}, int64_t{sm_count});  // the most an SM holds
    const int64_t per_sm = cluster_blocks > 0 ? std::max<int64_t>(e.blocks_per_sm, cluster_per_sm) : e.blocks_per_sm;
    // The seconds of one wave's K steps with `resident` blocks on the SM. A
    // block's share never falls below its share in a full wave: the lone
    // blocks' loss applies where it leaves them more than that.
    const double full_share = family_rate * m.sm_flops / static_cast<double>(per_sm);
    const auto wave_steps = [&](int64_t resident) {
        const bool alone = e.blocks_per_sm > 1 && resident * f.threads / 32 < 16;
        const double share = std::max(
            full_share, family_rate * (alone ? e.alone : 1.0) * m.sm_flops / static_cast<double>(resident));
        const double rate = std::min(share, f.threads / 32 * m.warp_flops);
        return steps * std::max(e.step_floor, 2.0 * f.bm * f.bn * f.bk / rate);
    };
    int64_t full = busiest / e.blocks_per_sm, rest = busiest % e.blocks_per_sm;
    // `most`: the blocks the busiest SM runs in all, each costing block_seconds.
    int64_t resident = std::min<int64_t>(per_sm, busiest), most = busiest;
    if (cluster_blocks > 0) {
        // Clusters land on the SMs of a GPC together, so a wave of them fills
        // the SMs in proportion to the device's cluster capacity, not evenly:
        // the busiest SM holds the wave's fraction of the capacity times the
        // most cluster blocks an SM holds, rounded up. Where the capacity is
        // not a whole number of blocks an SM, a grid of one block an SM in
        // clusters leaves some SMs two.
        const int64_t cap = cluster_blocks;
        full = ceil_div(blocks, cap);
        rest = 0;
        resident = std::min<int64_t>(per_sm, ceil_div(ceil_div(blocks, full) * cluster_per_sm, cap));
        most = full * resident;
    }
    const double waves = static_cast<double>(full + (rest > 0 ? 1 : 0));
    // Each whole wave on the busiest SM pays its blocks' first copies and
    // stores exposed where the blocks walk few K steps (short_wave_seconds);
    // plans without a split only, so never the cluster form.
    const double short_waves =
        splits > 1 || cluster_blocks > 0 || e.short_wave_seconds == 0.0
            ? 0.0
            : static_cast<double>(full) *
                  std::min(1.0, e.short_wave_steps / (steps - 1.0));  // the K steps, without the prologue's
    return static_cast<double>(full) * wave_steps(resident) + (rest > 0 ? wave_steps(rest) : 0.0) +
           fixed_seconds(e, vector_fixed, static_cast<double>(most), waves, static_cast<double>(resident)) +
           short_waves * e.short_wave_seconds + split_cost(p, m, f, splits, cluster_blocks > 0);
}

// Stream-K for a family: the tiles of the last wave, when it is partly
// empty, are shared out over one wave of blocks; the rest run whole. With
// `always` (TGEMM_STREAMK=always, for tests) a whole last wave is shared
// out too. False when there is nothing to share out. A full last wave is
// not shared out by default: its blocks' runs would spread over all of K
// and lose the whole tiles' L2 reuse.
bool streamk_shape(const TiledModel &e, const GemmParams &p, const DeviceModel &m, bool always, StreamK *sk)
{
    const KernelFamily &f = *e.family;
    const int64_t t = tiles(f, p), wave = static_cast<int64_t>(m.desc.sm_count) * e.blocks_per_sm;
    if (t % wave == 0 && !always)
        return false;
    sk->sk_tiles = t % wave != 0 ? t % wave : wave;
    sk->dp_tiles = t - sk->sk_tiles;
    sk->iters = ceil_div(p.k, f.bk);
    sk->ctas = static_cast<int>(std::min(wave, sk->sk_tiles * sk->iters));
    return true;
}

// Modelled seconds for a stream-K plan: the whole tiles' waves, each block's
// run of K steps over the shared-out tiles, plus a prologue step for each
// part of a tile it walks, the reduction of the parts, the family's fixed
// costs per wave and block, and two more launches (the arrival counters'
// reset, the plain kernel) or one.
double streamk_cost(const TiledModel &e, const GemmParams &p, const DeviceModel &m, const StreamK &sk)
{
    const ArchFactors &a = *m.factors;
    const KernelFamily &f = *e.family;
    const bool vectors = vector_kernels(p, c_aligned(p));
    const double efficiency = family_efficiency(e, p, vectors);
    const double step_seconds =
        std::max(e.step_floor, 2.0 * f.bm * f.bn * f.bk / (efficiency * m.sm_flops / e.blocks_per_sm));
    const double wave = static_cast<double>(m.desc.sm_count) * e.blocks_per_sm;
    const double iters = static_cast<double>(sk.iters);
    const double whole_steps = static_cast<double>(sk.dp_tiles) / wave * (iters + 1);
    const double run = static_cast<double>(sk.sk_tiles) * iters / sk.ctas;  // K steps per block
    const double parts = std::ceil(run / iters) + 1;                        // parts of tiles per block, at most
    const double part_bytes = 4.0 * f.bm * f.bn;
    const double readers = 1.0 + std::ceil(iters / run);  // parts a tile is cut into, at most
    const double reduce = (1.0 + readers + (p.beta != 0.0f ? 2.0 : 1.0)) * part_bytes / a.streamk_part_bandwidth;
    // The family's fixed costs: a wave for the whole tiles' waves and one for
    // the shared-out wave, and each block the busiest SM runs.
    const double waves = std::ceil(static_cast<double>(sk.dp_tiles) / wave) + 1.0;
    const double busiest = std::ceil(static_cast<double>(sk.dp_tiles + sk.ctas) / m.desc.sm_count);
    const double step_factor = vectors ? a.streamk_step_factor : a.streamk_step_factor_scalar;
    return (whole_steps + step_factor * (run + parts)) * step_seconds +
           fixed_seconds(e, vectors, busiest, waves, std::min(busiest, static_cast<double>(e.blocks_per_sm))) +
           reduce + (sk.dp_tiles > 0 ? 2 : 1) * a.launch_seconds;
}

// What plan_tiled reads of a problem: its shape, transposes, alignments
// (the kernels that run, dispatch/launch.cpp) and whether beta is 0; with
// the device model's serial and the family asked for. The settings it
// reads are fixed for the process.
struct TiledKey {
    uint64_t serial;
    const KernelFamily *only;
    int64_t m, n, k;
    unsigned flags;

    bool operator==(const TiledKey &o) const
    {
        return serial == o.serial && only == o.only && m == o.m && n == o.n && k == o.k && flags == o.flags;
    }
};

TiledKey tiled_key(const GemmParams &p, const DeviceModel &m, const KernelFamily *only)
{
    const unsigned flags = (p.trans_a ? 1u : 0u) | (p.trans_b ? 2u : 0u) | (operands_aligned(p) ? 4u : 0u) |
                           (c_aligned(p) ? 8u : 0u) | (p.beta != 0.0f ? 16u : 0u);
    return TiledKey{m.serial, only, p.m, p.n, p.k, flags};
}

// The plans plan_tiled made last on this thread, one per slot of a small
// table indexed by a hash of the key: a program calls the same shapes over
// and over, and weighing every family and split again costs the host more
// than the launch. A plan is a function of its key, so a remembered one is
// the one planning would make (its problem replaced by the caller's). The
// table is allocated on a thread's first plan, so that the library adds a
// pointer, not the table, to every thread's static TLS.
struct TiledMemo {
    bool used = false;
    TiledKey key = {};
    PiecePlan plan;
};
constexpr size_t kTiledMemoSlots = 64;
thread_local std::unique_ptr<TiledMemo[]> t_tiled_memo;
thread_local uint64_t t_tiled_memo_hits = 0;

size_t memo_slot(const TiledKey &key)
{
    uint64_t h = key.serial * 0x9e3779b97f4a7c15ull;
    for (const uint64_t v : {static_cast<uint64_t>(key.m), static_cast<uint64_t>(key.n),
                             static_cast<uint64_t>(key.k), static_cast<uint64_t>(key.flags),
                             static_cast<uint64_t>(reinterpret_cast<uintptr_t>(key.only))})
        h = (h ^ v) * 0x100000001b3ull;
    return static_cast<size_t>(h ^ (h >> 29)) % kTiledMemoSlots;
}

PiecePlan plan_tiled_anew(const GemmParams &p, const DeviceModel &m, const KernelFamily *only);

}  // namespace

double family_efficiency(const TiledModel &e, const GemmParams &p, bool vectors)
{
    const int pair = (p.trans_a ? 2 : 0) + (p.trans_b ? 1 : 0);
    return e.efficiency[pair] * (vectors ? 1.0 : e.unaligned[pair]);
}

bool vector_kernels(const GemmParams &p, bool out_aligned)
{
    return operands_aligned(p) && out_aligned;
}

double tiled_memory_floor(const GemmParams &p, const DeviceModel &m)
{
    const double bytes = 4.0 * (static_cast<double>(p.m) * p.k + static_cast<double>(p.k) * p.n +
                                (p.beta != 0.0f ? 2.0 : 1.0) * static_cast<double>(p.m) * p.n);
    return bytes / (m.factors->tiled_memory_efficiency * m.memory_bandwidth);
}

int64_t tiles(const KernelFamily &f, const GemmParams &p)
{
    return ceil_div(p.m, f.bm) * ceil_div(p.n, f.bn);
}

bool operands_aligned(const GemmParams &p)
{
    const auto aligned16 = [](const void *ptr) { return (reinterpret_cast<uintptr_t>(ptr) & 15u) == 0; };
    return aligned16(p.a) && aligned16(p.b) && p.lda % 4 == 0 && p.ldb % 4 == 0;
}

bool c_aligned(const GemmParams &p)
{
    return (reinterpret_cast<uintptr_t>(p.c) & 15u) == 0 && p.ldc % 4 == 0;
}

bool split_fits(const GemmParams &p, int splits)
{
    return static_cast<double>(splits) * p.m * p.n * 4.0 <= static_cast<double>(kMaxWorkspaceBytes);
}

double tiled_plan_seconds(const GemmParams &p, const DeviceModel &m, int family, int splits, int64_t chunk,
                          bool cluster)
{
    const TiledModel &e = m.tiled[family];
    const int cluster_blocks = cluster ? cluster_capacity(e, splits) : 0;
    if (cluster && cluster_blocks == 0)
        return INFINITY;
    return tiled_cost(e, p, m, splits, chunk, cluster_blocks);
}

PiecePlan plan_tiled(const GemmParams &p, const DeviceModel &m, const KernelFamily *only)
{
    if (!t_tiled_memo)
        t_tiled_memo.reset(new TiledMemo[kTiledMemoSlots]);
    const TiledKey key = tiled_key(p, m, only);
    TiledMemo &slot = t_tiled_memo[memo_slot(key)];
    if (slot.used && slot.key == key) {
        ++t_tiled_memo_hits;
    } else {
        slot.plan = plan_tiled_anew(p, m, only);
        slot.key = key;
        slot.used = true;
    }
    PiecePlan plan = slot.plan;
    plan.p = p;
    return plan;
}

uint64_t tiled_memo_hits()
{
    return t_tiled_memo_hits;
}

double reduction_seconds(const GemmParams &p, const DeviceModel &m, int splits)
{
    const ArchFactors &a = *m.factors;
    const double c = static_cast<double>(p.m) * p.n * 4.0;
    const double read_c = p.beta != 0.0f ? c / m.memory_bandwidth : 0.0;
    // The batches after the first, whose round trip reduce_seconds holds, as
    // fitted: up to kSplitkReduceBatch slices this prices one batch more than
    // the kernel makes since it loads slice 0 with the first batch
    // (docs/notes/dispatch.md, "The split-K reduction's cost").
    const double batches =
        static_cast<double>(ceil_div(int64_t{splits} - 1, int64_t{kernels::kSplitkReduceBatch}));
    return a.reduce_seconds + a.reduce_batch_seconds * batches +
           splits * c / (a.reduce_slice_factor * m.memory_bandwidth) + c * a.reduce_c_seconds_per_byte + read_c;
}

double host_floor(const DeviceModel &m, double seconds, bool second_kernel)
{
    const ArchFactors &a = *m.factors;
    return std::max(seconds, a.host_call_seconds + (second_kernel ? a.host_launch_seconds : 0.0));
}

double host_floored(const PiecePlan &plan, const DeviceModel &m)
{
    const bool second = plan.kind == KernelKind::StreamK ? plan.sk.dp_tiles > 0 : plan.splits > 1 && !plan.cluster;
    return host_floor(m, plan.seconds, second);
}

namespace {

PiecePlan plan_tiled_anew(const GemmParams &p, const DeviceModel &m, const KernelFamily *only)
{
    PiecePlan best, unsplit;  // the cheapest plan, and the cheapest without split-K
    best.p = unsplit.p = p;
    best.seconds = unsplit.seconds = INFINITY;
    // Plans are ranked by the larger of their modelled time and the host's
    // time to issue them (a split through the workspace is two kernels), ties
    // by the modelled time: calls back to back cost at least the host's part
    // each, which for small products is more than the kernels'.
    double best_rank = INFINITY, unsplit_rank = INFINITY;
    const auto consider = [&](const TiledModel &e, int splits, int64_t chunk, bool cluster, int cluster_blocks) {
        const double cost = tiled_cost(e, p, m, splits, chunk, cluster_blocks);
        const double rank = host_floor(m, cost, splits > 1 && !cluster);
        for (PiecePlan *to : {&best, &unsplit}) {
            double &to_rank = to == &best ? best_rank : unsplit_rank;
            if (rank > to_rank || (rank == to_rank && cost >= to->seconds) || (to == &unsplit && splits != 1))
                continue;
            to_rank = rank;
            to->seconds = cost;
            to->family = e.family;
            to->splits = splits;
            to->k_chunk = chunk;
            to->cluster = cluster;
        }
    };
    const StreamKMode streamk = settings().streamk;
    PiecePlan shared;  // the cheapest stream-K plan
    shared.p = p;
    shared.seconds = INFINITY;
    double shared_rank = INFINITY;
    // Plans are made as if clusters were allowed whatever TGEMM_CLUSTERS
    // says (plan_call applies it afterwards), so that the setting never
    // changes the plan, and with it the bits of the result.
    // Families whose grid would exceed the device's limit are left out
    // while any family fits (else check_grid refuses the plan).
    bool any_fits = false;
    for (const TiledModel &e : m.tiled)
        any_fits = any_fits || ((only == nullptr || e.family == only) && tiles(*e.family, p) <= m.desc.max_grid_x);
    for (const TiledModel &e : m.tiled) {
        if (only != nullptr && e.family != only)
            continue;
        if (any_fits && tiles(*e.family, p) > m.desc.max_grid_x)
            continue;
        StreamK sk;
        if (streamk != StreamKMode::Never && e.family->has_streamk &&
            streamk_shape(e, p, m, streamk == StreamKMode::Always, &sk)) {
            const double cost = streamk_cost(e, p, m, sk);
            // The counters' reset and one kernel, or two kernels with whole tiles.
            const double rank = host_floor(m, cost, sk.dp_tiles > 0);
            if (rank < shared_rank || (rank == shared_rank && cost < shared.seconds)) {
                shared_rank = rank;
                shared.seconds = cost;
                shared.family = e.family;
                shared.k_chunk = p.k;
                shared.kind = KernelKind::StreamK;
                shared.sk = sk;
            }
        }
        if (streamk == StreamKMode::Always && e.family->has_streamk)
            continue;  // TGEMM_STREAMK=always: families with a stream-K form are planned only in it
        int last = 1;  // the slices of the last split considered
        for (int asked : kSplits) {
            const int64_t chunk = chunk_for(p.k, asked, e.family->bk);
            if (asked == 1) {
                consider(e, 1, chunk, false, 0);
                continue;
            }
            const int splits = static_cast<int>(ceil_div(p.k, chunk));
            if (chunk < kMinSplitSteps * e.family->bk || splits <= last)
                continue;
            last = splits;
            if (split_fits(p, splits))
                consider(e, splits, chunk, false, 0);
            const int cluster_blocks = splits == asked ? cluster_capacity(e, splits) : 0;
            if (cluster_blocks > 0)
                consider(e, splits, chunk, true, cluster_blocks);
        }
    }
    if (streamk == StreamKMode::Always && shared.family != nullptr)
        return shared;  // else TGEMM_KERNEL names a family without a stream-K form
    // By the host-floored time by the margin, or, floored no slower, by the
    // modelled time by the margin.
    const auto faster = [](double rank_x, double x, double rank_y, double y, double margin) {
        return rank_x < (1.0 - margin) * rank_y || (rank_x <= rank_y && x < (1.0 - margin) * y);
    };
    const bool split = faster(best_rank, best.seconds, unsplit_rank, unsplit.seconds, kSplitMargin);
    const PiecePlan &chosen = split ? best : unsplit;
    return faster(shared_rank, shared.seconds, split ? best_rank : unsplit_rank, chosen.seconds, kStreamKMargin)
               ? shared
               : chosen;
}

}  // namespace

}  // namespace tgemm
