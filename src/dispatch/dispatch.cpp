#include "dispatch/dispatch.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <string>

#include "core/status.hpp"
#include "core/settings.hpp"
#include "dispatch/skinny_split.hpp"
#include "runtime/workspace.hpp"

namespace tgemm {
namespace {

using namespace kernels;

// ---------------------------------------------------------------- the table
//
// Which kernel runs a problem, in order:
//   1. alpha == 0 or k == 0: the scaling kernel (C := beta * C).
//   2. min(m, n) <= kSkinnyMax: a streaming kernel; these shapes are
//      memory-bound and gain nothing from tiles. On sm_90, where the
//      operands are aligned for the tensor copy engine, K is long and the
//      32-row blocks fill the SMs (skinny_tma_fits), the kernel it feeds
//      (skinny_tma.cu; TGEMM_TMA=0 turns it off); else skinny.cu's.
//   3. otherwise the tiled family and split-K factor with the lowest modelled
//      time: whole waves of blocks, each block's FFMA work at the family's
//      measured efficiency, plus the split-K reduction: the workspace's
//      memory traffic and a second launch, or (slices in one thread-block
//      cluster, sm_90) the exchange through distributed shared memory.
//      A split of K must beat the best plan without one by kSplitMargin.
//      Stream-K (TGEMM_STREAMK, default auto): where the tiles leave the
//      last wave partly empty, the tiles of that wave are shared out by K
//      steps over one wave of blocks (StreamK), when the model finds it
//      kStreamKMargin faster.
//   4. where A is stored transposed (TN, TT) and the model finds it cheaper
//      by kPackMargin, op(A) is first packed by columns into the workspace
//      (pack.cu) and the product runs untransposed on it (NN, NT), the
//      kernels' faster pairs (4096^3 on 256x128x16: TN 0.710 of peak, NN
//      0.778); the pack is priced as its memory traffic and a launch.
//      TGEMM_PACK=always packs every such tiled plan, never none.
//   5. where m or n is a few rows or columns (at most kSkinnyMax) past a
//      multiple of kPeelStep, and the model finds it cheaper, those last
//      rows and columns of C are peeled off as streaming products and the
//      rest goes to step 3: a mostly empty last row or column of tiles
//      would cost a whole wave's worth of time on some shapes
//      (4097 x 513 x 1023: three pieces, 164 -> 128 us modelled).
// TGEMM_KERNEL=<family> sends every problem to that tiled family instead
// (no peeling; packed only under TGEMM_PACK=always).

constexpr int64_t kSkinnyMax = 16;
static_assert(sizeof(DeviceInfo::skinny_cluster_blocks) / sizeof(int) == kSkinnyMaxCluster + 1,
              "one count per cluster size");
static_assert(sizeof(DeviceInfo::tiled_cluster_blocks[0]) / sizeof(int) == kTiledMaxCluster + 1,
              "one count per cluster size");

// A K step's latency floor: global load, barrier, FFMA chain (128^3 on 32x32
// tiles: 16 steps in ~13 us).
constexpr double kStepSeconds = 0.8e-6;
// A family measured with several blocks per SM runs a lone block (fewer than
// 16 warps on the SM) at this fraction of its efficiency. H100, 1024^3 and
// 1000^3: 128x128x8 split 2 (128 blocks, one per SM) took 68-70 us where its
// efficiency says 53; 0.75 makes the model agree within 5%.
constexpr double kAloneFactor = 0.75;
// What every block costs an SM beside its K steps (its launch, the first
// loads' latency, the epilogue), times the blocks on the busiest SM. H100,
// 2026-11-22, bench_plans over 128^3 to 1536 x 1536 x 512 (every plan of
// every family timed): without it the model misses most on plans of many
// short blocks (512^3 on 64x64x8, K split 8 in clusters, 4 blocks an SM:
// modelled 10.2 us, measured 16.3, where 64x64x16 split 2, one block an SM,
// modelled 10.7, measured 14.3); with 0.75 us the plan picked over those 9
// shapes lost 1.6% on average against the fastest measured, 7.6% before.
constexpr double kBlockSeconds = 0.75e-6;

struct TiledEntry {
    const KernelFamily *family;
    // Fraction of FP32 peak per SM with the SM full, measured on the H100,
    // for each transpose pair: [NN, NT, TN, TT].
    double efficiency[4];
    int blocks_per_sm;  // resident blocks per SM (registers, shared memory)
    // Its speed with unaligned operands (scalar loads) over its aligned speed,
    // 4095^3 NN against 4096^3 NN.
    double unaligned = 1.0;
    // A K step's latency floor, a lone block's share of the efficiency (see
    // kAloneFactor) and the largest cluster of its split-K cluster form.
    double step_floor = kStepSeconds;
    double alone = kAloneFactor;
    int max_cluster = kTiledMaxCluster;
};

// Efficiencies: 4096^3 TFLOP/s / 66.9 for each transpose pair, each family
// forced (tests/gpu-session.sh sweep; the table in docs/performance.md),
// H100, 2026-11-22; the four one-block-per-SM families re-measured after
// their serpentine FFMA order (sgemm_tiled.cuh, multiply_stage). Unaligned
// factors from 4095^3 the same way: 0.91 to 0.94 for the one-block-per-SM
// families, whose whole tiles load without any per-group test when aligned
// (TileLoader::load), within 4% of 1 for the others; 256x128x16's unaligned
// kernels unroll its stage by half (4095^3 43.1 -> 44.4 TFLOP/s). The four
// families with the whole-tile ring (kWholeRingStep in sgemm_tiled.cuh)
// re-measured on it, 2026-11-23, for the pairs that take it (TN does not,
// nor 256x128x8's NN); their unaligned factors are 4095^3 NN over the new
// 4096^3 NN (the unaligned kernels are unchanged).
const TiledEntry kTiled[] = {
    {&tiled_256x128x16, {0.778, 0.777, 0.710, 0.761}, 1, 0.897},
    {&tiled_256x128x8, {0.734, 0.786, 0.692, 0.738}, 1, 0.939},
    {&tiled_128x256x8, {0.692, 0.681, 0.644, 0.711}, 1, 0.855},
    {&tiled_128x128x8, {0.649, 0.662, 0.589, 0.647}, 2},
    {&tiled_128x128x16, {0.661, 0.739, 0.654, 0.670}, 1, 0.916},
    {&tiled_128x64x8, {0.584, 0.622, 0.550, 0.556}, 4},
    {&tiled_64x128x8, {0.565, 0.617, 0.549, 0.596}, 4},
    {&tiled_64x64x8, {0.483, 0.546, 0.438, 0.469}, 4},
    // The async ring's family. Unlike the rows above, its efficiency, no
    // lone-block loss and a lower step floor are fitted to its plans at
    // 256^3 to 512^3 NN (bench_plans, H100: a lone block of it takes 0.59 us
    // a K step, at 512^3 and at 256 x 256 x 8192 alike, and 4 blocks on an
    // SM finish no sooner than 4 lone blocks one after another), the other
    // pairs taken as NN; at 4096^3 it runs at 0.574 / 0.622 / 0.533 / 0.570
    // of peak, where it is never the best plan. Unaligned: 4095^3 against
    // 4096^3. Clusters of 8 lost to the workspace form (256 x 256 x 8192
    // split 8: 64.3 against 44.2 us; 512^3: 15.7 against 14.3 us split 2 in
    // clusters).
    {&tiled_64x64x16, {0.50, 0.50, 0.50, 0.50}, 4, 0.923, 0.3e-6, 1.0, 6},
    {&tiled_32x32x8, {0.430, 0.489, 0.372, 0.429}, 16},
};

constexpr int kTiledCount = sizeof(kTiled) / sizeof(kTiled[0]);
static_assert(kTiledCount <= sizeof(DeviceInfo::tiled_cluster_blocks) / sizeof(DeviceInfo::tiled_cluster_blocks[0]),
              "a cluster capacity row per family");

const int kSplits[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64};
constexpr int64_t kMinSplitSteps = 2;                  // K steps per slice, at least
// A split-K plan is taken only when the model finds it this much faster
// than the best plan without: its slices of K, running at once, share less
// of A and B in L2 than the model sees. H100, 256x128x16, split 2 in
// clusters (modelled 0.7-2.8% faster) against no split: 16384^3 TN 0.924
// against 0.983 of cuBLAS, 10240^3 TN 0.899 / 0.928, 9984^3 TT 0.953 /
// 0.975; NN within 2% either way (10240^3 1.026 / 1.018, 16384^3 0.962 /
// 0.969, 12544 x 6272 x 12544 1.015 / 0.998).
constexpr double kSplitMargin = 0.03;
constexpr size_t kMaxWorkspaceBytes = size_t{256} << 20;
constexpr double kSmFlops = 2.0 * 128 * 1.98e9;        // FP32 FFMA rate of one H100 SM
constexpr double kWarpFlops = 0.5 * 2.0 * 32 * 1.98e9; // one warp alone: half its scheduler's issue rate
constexpr double kMemoryBandwidth = 2.88e12;           // bytes/s, measured (shared/PERF.md)
constexpr double kLaunchSeconds = 3e-6;                // one more kernel on the stream
constexpr double kClusterSync = 0.5e-6;                // cluster form: its two cluster barriers
constexpr double kDsmemRound = 0.1e-6;                 // cluster form: one round of reads of the other
                                                       // blocks' shared memory

// Packing op(A) (step 4): the packed columns' leading dimension is m
// rounded up to kPackLd (every column starts on a 128-byte line), the pack
// runs at kPackEfficiency of the memory bandwidth (H100, 4096^3 TN: the
// packed product took 48 us more than 4096^3 NN, 2.8 TB/s of reads and
// writes; ncu, 4096^2: 46 us), and a packed plan is taken only when the
// model finds it kPackMargin faster than the plan without. The
// workspace's allocations are aligned to 256 bytes at least
// (cudaMallocFromPoolAsync), so the packed operand is planned as aligned.
constexpr int64_t kPackLd = 32;
constexpr double kPackEfficiency = 0.9;
constexpr double kPackMargin = 0.03;

// Stream-K's reduction: a block leaves a part of a tile in the workspace,
// and the last block of the tile's to arrive reads the parts back and writes
// C, each at about this rate (one block's share of L2 and memory).
constexpr double kStreamKPartBandwidth = 50e9;  // bytes/s
// The shared-out tiles' K steps take this much longer than whole tiles'.
// H100, 4096^3 NN on 256x128x16, 116 tiles shared out over 132 blocks (224
// K steps each): the stream-K kernel took 670 us where 224 steps of the
// plain kernel's take 609 (2.72 us a step; ncu: issue slots busy 79%
// against 84%, with as many instructions per step and L2 hits).
constexpr double kStreamKStepFactor = 1.09;
// A stream-K plan is taken only when the model finds it this much faster
// than the plan without.
constexpr double kStreamKMargin = 0.01;

struct Plan {
    const KernelFamily *family = nullptr;  // tiled, or nullptr for the skinny kernels
    SkinnyParams skinny = {};
    int splits = 1;
    int64_t k_chunk = 0;
    bool cluster = false;  // split-K finished inside the kernel (SplitK::cluster)
    bool streamk = false;  // tiled, no split-K: stream-K (sk; work and arrivals set at launch)
    bool tma = false;      // skinny: skinny_tma.cu's kernel (no split-K)
    StreamK sk = {};
    double seconds = 0.0;  // tiled: the modelled time
};

int64_t ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

int64_t tiles(const KernelFamily &f, const GemmParams &p)
{
    return ceil_div(p.m, f.bm) * ceil_div(p.n, f.bn);
}

// K per slice for `splits` slices, a multiple of `step`.
int64_t chunk_for(int64_t k, int splits, int64_t step)
{
    return ceil_div(ceil_div(k, splits), step) * step;
}

// The split-K reduction's cost: the slices' traffic through the workspace and
// the second launch, or in cluster form the barriers and each thread's
// rounds of reads (one 4-row piece of every slice per round) for its block's
// 1 / splits of the tile.
double split_cost(const GemmParams &p, const KernelFamily &f, int splits, bool cluster)
{
    if (splits == 1)
        return 0.0;
    if (cluster)
        return kClusterSync + kDsmemRound * static_cast<double>(ceil_div(f.bm * f.bn / 4, int64_t{splits} * f.threads));
    const double slices = static_cast<double>(splits) * p.m * p.n * 4.0;
    const double c = (p.beta != 0.0f ? 2.0 : 1.0) * p.m * p.n * 4.0;
    return (2.0 * slices + c) / kMemoryBandwidth + kLaunchSeconds;
}

bool aligned16(const void *ptr)
{
    return (reinterpret_cast<uintptr_t>(ptr) & 15u) == 0;
}

// Whether the tiled kernels can move A and B as 16-byte vectors.
bool operands_aligned(const GemmParams &p)
{
    return aligned16(p.a) && aligned16(p.b) && p.lda % 4 == 0 && p.ldb % 4 == 0;
}

// Whether they can move C as 16-byte vectors.
bool c_aligned(const GemmParams &p)
{
    return aligned16(p.c) && p.ldc % 4 == 0;
}

// The family's measured share of the FFMA peak for these transposes and
// operand alignment.
double family_efficiency(const TiledEntry &e, const GemmParams &p)
{
    return e.efficiency[(p.trans_a ? 2 : 0) + (p.trans_b ? 1 : 0)] * (operands_aligned(p) ? 1.0 : e.unaligned);
}

// Modelled seconds for a tiled family with a split-K factor: whole waves of
// blocks (in cluster form, of the blocks that fit in clusters of `splits`);
// each block walks its K steps (plus the prologue's) at the slower of the
// step latency and its share of the SM's FFMA rate, a share that grows when
// fewer blocks than the SM could hold are resident, up to what its own warps
// can issue (and, for a lone block of a many-block family, its `alone`
// share of the efficiency); plus kBlockSeconds for each block the busiest SM
// runs. cluster_blocks: 0 for the workspace form.
double tiled_cost(const TiledEntry &e, const GemmParams &p, const DeviceInfo &dev, int splits, int64_t chunk,
                  int cluster_blocks)
{
    const KernelFamily &f = *e.family;
    const int64_t blocks = tiles(f, p) * splits;
    const int64_t slots =
        cluster_blocks > 0 ? cluster_blocks : static_cast<int64_t>(dev.sm_count) * e.blocks_per_sm;
    const double waves = static_cast<double>(ceil_div(blocks, slots));
    const int64_t busiest = ceil_div(blocks, dev.sm_count);  // blocks on the busiest SM
    const int64_t resident = std::min<int64_t>(e.blocks_per_sm, busiest);
    const bool alone = e.blocks_per_sm > 1 && resident * f.threads / 32 < 16;
    const double efficiency = family_efficiency(e, p) * (alone ? e.alone : 1.0);
    const double rate = std::min(efficiency * kSmFlops / static_cast<double>(resident),
                                 f.threads / 32 * kWarpFlops);
    const double step_seconds = std::max(e.step_floor, 2.0 * f.bm * f.bn * f.bk / rate);
    const double steps = static_cast<double>(ceil_div(chunk, f.bk) + 1);
    return waves * steps * step_seconds + static_cast<double>(busiest) * kBlockSeconds +
           split_cost(p, f, splits, cluster_blocks > 0);
}

// Stream-K for a family: the tiles of the last wave, when it is partly
// empty, are shared out over one wave of blocks; the rest run whole. With
// `always` (TGEMM_STREAMK=always, for tests) a whole last wave is shared
// out too. False when there is nothing to share out. H100, 4096^3 NN on
// 256x128x16 (512 tiles, 116 past three waves): sharing out one whole wave
// more, as CUTLASS's stream-K does, ran 1.5% slower than no stream-K; the
// shared-out blocks' loads hit L2 in 4% of reads against 81% for whole
// tiles, their runs being spread over all of K (see sgemm_streamk).
bool streamk_shape(const TiledEntry &e, const GemmParams &p, const DeviceInfo &dev, bool always, StreamK *sk)
{
    const KernelFamily &f = *e.family;
    const int64_t t = tiles(f, p), wave = static_cast<int64_t>(dev.sm_count) * e.blocks_per_sm;
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
// part of a tile it walks, the reduction of the parts, and two more
// launches (the arrival counters' reset, the plain kernel) or one.
double streamk_cost(const TiledEntry &e, const GemmParams &p, const DeviceInfo &dev, const StreamK &sk)
{
    const KernelFamily &f = *e.family;
    const double efficiency = family_efficiency(e, p);
    const double step_seconds =
        std::max(e.step_floor, 2.0 * f.bm * f.bn * f.bk / (efficiency * kSmFlops / e.blocks_per_sm));
    const double wave = static_cast<double>(dev.sm_count) * e.blocks_per_sm;
    const double iters = static_cast<double>(sk.iters);
    const double whole_steps = static_cast<double>(sk.dp_tiles) / wave * (iters + 1);
    const double run = static_cast<double>(sk.sk_tiles) * iters / sk.ctas;  // K steps per block
    const double parts = std::ceil(run / iters) + 1;                        // parts of tiles per block, at most
    const double part_bytes = 4.0 * f.bm * f.bn;
    const double readers = 1.0 + std::ceil(iters / run);  // parts a tile is cut into, at most
    const double reduce = (1.0 + readers + (p.beta != 0.0f ? 2.0 : 1.0)) * part_bytes / kStreamKPartBandwidth;
    return (whole_steps + kStreamKStepFactor * (run + parts)) * step_seconds + reduce +
           (sk.dp_tiles > 0 ? 2 : 1) * kLaunchSeconds;
}

bool split_fits(const GemmParams &p, int splits)
{
    return static_cast<double>(splits) * p.m * p.n * 4.0 <= static_cast<double>(kMaxWorkspaceBytes);
}

Plan plan_tiled(const GemmParams &p, const DeviceInfo &dev, const KernelFamily *only)
{
    Plan best, unsplit;  // the cheapest plan, and the cheapest without split-K
    best.seconds = unsplit.seconds = INFINITY;
    const auto consider = [&](const TiledEntry &e, int splits, int64_t chunk, bool cluster, int cluster_blocks) {
        const double cost = tiled_cost(e, p, dev, splits, chunk, cluster_blocks);
        for (Plan *to : {&best, &unsplit}) {
            if (cost >= to->seconds || (to == &unsplit && splits != 1))
                continue;
            to->seconds = cost;
            to->family = e.family;
            to->splits = splits;
            to->k_chunk = chunk;
            to->cluster = cluster;
        }
    };
    const StreamKMode streamk = settings().streamk;
    Plan shared;  // the cheapest stream-K plan
    shared.seconds = INFINITY;
    // The cluster kernels exist for aligned operands and C only. Plans are
    // made as if clusters were allowed whatever TGEMM_CLUSTERS says (run_plan
    // applies it), so that the setting never changes the plan, and with it
    // the bits of the result.
    const bool cluster_ok = operands_aligned(p) && c_aligned(p);
    for (int i = 0; i < kTiledCount; ++i) {
        const TiledEntry &e = kTiled[i];
        if (only != nullptr && e.family != only)
            continue;
        StreamK sk;
        if (streamk != StreamKMode::Never && e.family->has_streamk &&
            streamk_shape(e, p, dev, streamk == StreamKMode::Always, &sk)) {
            const double cost = streamk_cost(e, p, dev, sk);
            if (cost < shared.seconds) {
                shared.seconds = cost;
                shared.family = e.family;
                shared.k_chunk = p.k;
                shared.streamk = true;
                shared.sk = sk;
            }
        }
        if (streamk == StreamKMode::Always && e.family->has_streamk)
            continue;  // TGEMM_STREAMK=always: families with a stream-K form are planned only in it
        for (int splits : kSplits) {
            const int64_t chunk = chunk_for(p.k, splits, e.family->bk);
            if (splits == 1) {
                consider(e, 1, chunk, false, 0);
                continue;
            }
            if (chunk < kMinSplitSteps * e.family->bk || ceil_div(p.k, chunk) != splits)
                continue;
            if (split_fits(p, splits))
                consider(e, splits, chunk, false, 0);
            const int cluster_blocks = splits <= e.max_cluster ? dev.tiled_cluster_blocks[i][splits] : 0;
            if (cluster_ok && cluster_blocks > 0)
                consider(e, splits, chunk, true, cluster_blocks);
        }
    }
    if (streamk == StreamKMode::Always && shared.family != nullptr)
        return shared;  // else TGEMM_KERNEL names a family without a stream-K form
    const Plan &chosen = best.seconds < (1.0 - kSplitMargin) * unsplit.seconds ? best : unsplit;
    return shared.seconds < (1.0 - kStreamKMargin) * chosen.seconds ? shared : chosen;
}

// The streaming restatement of a product whose C has <= 16 rows or columns.
SkinnyParams skinny_params(const GemmParams &p)
{
    SkinnyParams s = {};
    const bool n_small = p.n <= p.m;
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

Plan plan_skinny(const GemmParams &p, const DeviceInfo &dev)
{
    Plan plan;
    plan.skinny = skinny_params(p);
    const SkinnyParams &s = plan.skinny;
    if (dev.skinny_tma && settings().tma && skinny_tma_fits(s, dev.sm_count)) {
        plan.tma = true;
        return plan;
    }
    const int64_t stride = s.x_r == 1 ? s.x_k : s.x_r;
    plan.skinny.vec = (reinterpret_cast<uintptr_t>(s.x) & 15u) == 0 && stride % 4 == 0;
    const bool y16 = (reinterpret_cast<uintptr_t>(s.y) & 15u) == 0;
    plan.skinny.y_vec = y16 && (s.y_k == 1 ? (s.s == 1 || s.y_j % 4 == 0)
                                           : (s.y_j == 1 && s.s % 4 == 0 && s.y_k % 4 == 0));
    const SkinnyDevice sd = {dev.sm_count, dev.skinny_cluster_blocks, kMemoryBandwidth, kLaunchSeconds};
    const SplitK sk = skinny_split(&plan.skinny, sd);  // as plan_tiled
    if (sk.splits > 1 && (sk.cluster || split_fits(p, sk.splits))) {
        plan.splits = sk.splits;
        plan.k_chunk = sk.k_chunk;
        plan.cluster = sk.cluster;
    }
    return plan;
}

const KernelFamily *forced_family(const std::string &name)
{
    for (const TiledEntry &e : kTiled)
        if (name == e.family->name)
            return e.family;
    return nullptr;
}

// TGEMM_VERBOSE=2: which kernel runs the call, on standard error.
void log_plan(const GemmParams &p, const Plan &plan)
{
    const char ta = p.trans_a ? 'T' : 'N', tb = p.trans_b ? 'T' : 'N';
    const char *form = plan.splits == 1 ? "none" : plan.cluster ? "cluster" : "workspace";
    if (plan.family != nullptr && plan.streamk)
        std::fprintf(stderr,
                     "tgemm: device plan m=%lld n=%lld k=%lld %c%c tiled %s stream-k: %lld tiles whole, %lld shared "
                     "over %d blocks (%lld K steps each)\n",
                     static_cast<long long>(p.m), static_cast<long long>(p.n), static_cast<long long>(p.k), ta, tb,
                     plan.family->name, static_cast<long long>(plan.sk.dp_tiles),
                     static_cast<long long>(plan.sk.sk_tiles), plan.sk.ctas,
                     static_cast<long long>(plan.sk.sk_tiles * plan.sk.iters / plan.sk.ctas));
    else if (plan.family != nullptr)
        std::fprintf(stderr, "tgemm: device plan m=%lld n=%lld k=%lld %c%c tiled %s split-k=%d (%s) k-chunk=%lld\n",
                     static_cast<long long>(p.m), static_cast<long long>(p.n), static_cast<long long>(p.k), ta, tb,
                     plan.family->name, plan.splits, form, static_cast<long long>(plan.k_chunk));
    else if (plan.tma)
        std::fprintf(stderr, "tgemm: device plan m=%lld n=%lld k=%lld %c%c streaming tma s=%d (32 rows a block, no split)\n",
                     static_cast<long long>(p.m), static_cast<long long>(p.n), static_cast<long long>(p.k), ta, tb,
                     plan.skinny.s);
    else
        std::fprintf(stderr,
                     "tgemm: device plan m=%lld n=%lld k=%lld %c%c streaming %s s=%d groups=%d split-k=%d (%s) "
                     "k-chunk=%lld\n",
                     static_cast<long long>(p.m), static_cast<long long>(p.n), static_cast<long long>(p.k), ta, tb,
                     plan.skinny.x_r == 1 ? "rows" : "dots", plan.skinny.s, plan.skinny.groups, plan.splits, form,
                     static_cast<long long>(plan.k_chunk));
}

tgemm_status launch_plan(const GemmParams &p, const Plan &plan, float *work, cudaStream_t s)
{
    SplitK sk;
    sk.splits = plan.splits;
    sk.k_chunk = plan.k_chunk;
    sk.work = work;
    sk.cluster = plan.cluster;
    if (plan.family != nullptr)
        sk.ring_k = ring_fits_k(p.k, plan.splits, plan.k_chunk, plan.family->bk);
    cudaError_t e;
    if (plan.family != nullptr) {
        // The kernel's stores: C's, or in workspace form the slices' (ld = m).
        const bool out_aligned = plan.splits > 1 && !plan.cluster ? p.m % 4 == 0 : c_aligned(p);
        const int idx = (p.trans_a ? 4 : 0) | (p.trans_b ? 2 : 0) | (operands_aligned(p) && out_aligned ? 1 : 0);
        if (!plan.streamk) {
            e = plan.family->launch[idx](p, sk, s);
        } else if ((e = cudaMemsetAsync(plan.sk.arrivals, 0, sizeof(int) * plan.sk.sk_tiles, s)) != cudaSuccess) {
            return fail_cuda(e, "stream-K counters reset");
        } else {
            e = plan.family->launch_streamk[idx](p, plan.sk, s);
        }
    } else if (plan.tma) {
        e = launch_skinny_tma(plan.skinny, s);
    } else {
        e = launch_skinny(plan.skinny, sk, s);
    }
    if (e != cudaSuccess)
        return fail_cuda(e, "sgemm kernel launch");
    if (plan.splits > 1 && !plan.cluster && (e = launch_splitk_reduce(p, sk, s)) != cudaSuccess)
        return fail_cuda(e, "split-K reduction launch");
    return TGEMM_SUCCESS;
}

}  // namespace

tgemm_status prepare_kernels(DeviceInfo *dev)
{
    for (int i = 0; i < kTiledCount; ++i) {
        const cudaError_t err = kTiled[i].family->prepare(dev->cc_major, dev->tiled_cluster_blocks[i]);
        if (err != cudaSuccess)
            return fail_cuda(err, kTiled[i].family->name);
    }
    const cudaError_t err = prepare_skinny(dev->cc_major, dev->skinny_cluster_blocks);
    if (err != cudaSuccess)
        return fail_cuda(err, "skinny kernels");
    const cudaError_t tma_err = prepare_skinny_tma(dev->cc_major, &dev->skinny_tma);
    if (tma_err != cudaSuccess)
        return fail_cuda(tma_err, "streaming kernel fed by the tensor copy engine");
    if (settings().verbose >= 2) {
        const auto log_counts = [](const char *what, const int *counts, int most) {
            std::fprintf(stderr, "tgemm:   %s:", what);
            for (int n = 2; n <= most; ++n)
                std::fprintf(stderr, " %d", counts[n]);
            std::fprintf(stderr, "\n");
        };
        std::fprintf(stderr, "tgemm: device %d: %d SMs; blocks resident at once in clusters of 2, 3, ...:\n", dev->id,
                     dev->sm_count);
        log_counts("streaming", dev->skinny_cluster_blocks, kSkinnyMaxCluster);
        std::fprintf(stderr, "tgemm:   streaming kernel fed by the tensor copy engine: %s\n",
                     dev->skinny_tma ? "yes" : "no");
        for (int i = 0; i < kTiledCount; ++i)
            log_counts(kTiled[i].family->name, dev->tiled_cluster_blocks[i], kTiledMaxCluster);
    }
    return TGEMM_SUCCESS;
}

// Checks, logs and launches one plan, with the split-K workspace it needs.
// TGEMM_CLUSTERS=0 keeps the plan and sends its slices through the
// workspace instead of a cluster: the same sums in the same order.
tgemm_status run_plan(const GemmParams &p, Plan plan, const DeviceInfo &dev, cudaStream_t s)
{
    if (plan.cluster && !settings().clusters)
        plan.cluster = false;
    if (plan.family != nullptr && tiles(*plan.family, p) > dev.max_grid_x)
        return fail(TGEMM_ERROR_UNSUPPORTED, "%lld blocks of %dx%d exceed the grid limit %d",
                    static_cast<long long>(tiles(*plan.family, p)), plan.family->bm, plan.family->bn,
                    dev.max_grid_x);
    if (plan.family == nullptr) {
        const int64_t rows = plan.tma ? kSkinnyTmaRows : skinny_rows_per_block(plan.skinny);
        if (ceil_div(plan.skinny.r, rows) > dev.max_grid_x)
            return fail(TGEMM_ERROR_UNSUPPORTED, "%lld rows exceed the grid limit",
                        static_cast<long long>(plan.skinny.r));
    }

    Workspace ws;
    if (plan.streamk) {
        // Two parts' slots per block, then the tiles' arrival counters; without
        // it the same family runs every tile whole.
        const size_t parts = 2 * static_cast<size_t>(plan.sk.ctas) * plan.family->bm * plan.family->bn;
        if (ws.acquire(dev, parts * sizeof(float) + sizeof(int) * plan.sk.sk_tiles, s)) {
            plan.sk.work = ws.get();
            plan.sk.arrivals = reinterpret_cast<int *>(ws.get() + parts);
        } else {
            plan.streamk = false;
        }
    }
    if (plan.splits > 1 && !plan.cluster &&
        (!split_fits(p, plan.splits) ||
         !ws.acquire(dev, static_cast<size_t>(plan.splits) * p.m * p.n * sizeof(float), s))) {
        plan.splits = 1;  // no room for partial sums: the same kernel over all of K
        plan.k_chunk = p.k;
    }
    if (settings().verbose >= 2)
        log_plan(p, plan);
    return launch_plan(p, plan, ws.get(), s);
}

// Peeling (step 5): C split into the main block (m - pm) x (n - pn), the
// right strip m x pn and the bottom strip pm x (n - pn); each element of C
// belongs to one piece, so beta is applied once and the result is as
// deterministic as each piece's.
constexpr int64_t kPeelStep = 128;         // every family's BM and BN divides 128 or is 256
constexpr double kStreamEfficiency = 0.8;  // the streaming kernels' share of bandwidth, about
// Peel only for a modelled saving of 10% or more: the model is least sure of
// mid-sized unaligned products (H100: 1025^3 peeled, modelled 5% faster, ran
// at 92 us where cuBLAS takes 72).
constexpr double kPeelGain = 0.9;

struct Peel {
    int64_t pm = 0, pn = 0;  // rows and columns peeled (0: none)
    GemmParams main, right, bottom;
    Plan main_plan;  // the main block's tiled plan
};

// The streaming kernels' time for a strip: its long operand, its short one
// and C through memory, and a launch.
double strip_seconds(int64_t r, int64_t s, const GemmParams &p)
{
    const double bytes = 4.0 * (static_cast<double>(r + s) * p.k + (p.beta != 0.0f ? 2.0 : 1.0) * r * s);
    return bytes / (kStreamEfficiency * kMemoryBandwidth) + kLaunchSeconds;
}

Peel plan_peel(const GemmParams &p, const DeviceInfo &dev, double whole_seconds)
{
    Peel peel;
    const auto rest = [](int64_t d) { return d > kPeelStep && d % kPeelStep <= kSkinnyMax ? d % kPeelStep : 0; };
    const int64_t pm = rest(p.m), pn = rest(p.n);
    if (pm == 0 && pn == 0)
        return peel;
    GemmParams main = p;
    main.m -= pm;
    main.n -= pn;
    const Plan main_plan = plan_tiled(main, dev, nullptr);
    double seconds = main_plan.seconds;
    GemmParams right = p, bottom = main;
    if (pn > 0) {  // columns n - pn .. n - 1 of C and of op(B)
        right.n = pn;
        right.b += p.trans_b ? main.n : main.n * p.ldb;
        right.c += main.n * p.ldc;
        seconds += strip_seconds(p.m, pn, p);
    }
    if (pm > 0) {  // rows m - pm .. m - 1 of C and of op(A), left of the right strip
        bottom.m = pm;
        bottom.a += p.trans_a ? main.m * p.lda : main.m;
        bottom.c += main.m;
        seconds += strip_seconds(main.n, pm, p);
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

// The largest share of a plan's time that packing can save: the
// untransposed pairs' best speed-up over the transposed ones in kTiled
// (with the unaligned factor: the packed operand is aligned), 1.16 at
// 64x64x8 NT against TT, aligned. A pack that costs more than this share
// of the plain plan is not planned (host time per call).
double pack_gain_bound()
{
    static const double bound = [] {
        double most = 1.0;
        for (const TiledEntry &e : kTiled)
            most = std::max({most, e.efficiency[0] / e.efficiency[2] / e.unaligned,
                             e.efficiency[1] / e.efficiency[3] / e.unaligned});
        return 1.0 - 1.0 / most;
    }();
    return bound;
}

// The product restated on op(A) packed by columns (step 4); a = nullptr
// until the workspace is taken.
struct Packed {
    bool use = false;
    GemmParams p;  // trans_a false, lda the packed columns'
    Plan plan;     // its tiled plan
    size_t bytes = 0;
};

Packed plan_pack(const GemmParams &p, const DeviceInfo &dev, const KernelFamily *only, double plain_seconds)
{
    Packed pk;
    const PackMode mode = settings().pack;
    if (!p.trans_a || mode == PackMode::Never || (only != nullptr && mode != PackMode::Always))
        return pk;
    pk.p = p;
    pk.p.trans_a = false;
    pk.p.lda = ceil_div(p.m, kPackLd) * kPackLd;
    pk.p.a = nullptr;
    pk.bytes = static_cast<size_t>(pk.p.lda) * static_cast<size_t>(p.k) * sizeof(float);
    const double pack_seconds =
        2.0 * static_cast<double>(pk.bytes) / (kPackEfficiency * kMemoryBandwidth) + kLaunchSeconds;
    if (pk.bytes > kMaxWorkspaceBytes || (mode == PackMode::Auto && pack_seconds > pack_gain_bound() * plain_seconds))
        return pk;
    // Planned as aligned, as the workspace will be (see kPackLd): the plan
    // reads only the operand's address, never its elements.
    alignas(16) static const float kAlignedStandIn[4] = {};
    GemmParams planned = pk.p;
    planned.a = kAlignedStandIn;
    pk.plan = plan_tiled(planned, dev, only);
    pk.use = mode == PackMode::Always || pk.plan.seconds + pack_seconds < (1.0 - kPackMargin) * plain_seconds;
    return pk;
}

tgemm_status launch_gemm(const GemmParams &p, const DeviceInfo &dev, cudaStream_t s)
{
    if (p.k == 0 || p.alpha == 0.0f) {
        const cudaError_t e = launch_scale(p.c, p.m, p.n, p.ldc, p.beta, s);
        return e == cudaSuccess ? TGEMM_SUCCESS : fail_cuda(e, "scale kernel launch");
    }
    const std::string &forced = settings().kernel;
    const KernelFamily *only = nullptr;
    if (!forced.empty() && (only = forced_family(forced)) == nullptr) {
        std::string names;
        for (const TiledEntry &e : kTiled)
            names += std::string(names.empty() ? "" : ", ") + e.family->name;
        return fail(TGEMM_ERROR_INVALID_SETTING, "TGEMM_KERNEL='%s' is not a kernel family; known: %s",
                    forced.c_str(), names.c_str());
    }
    if (only == nullptr && (p.m <= kSkinnyMax || p.n <= kSkinnyMax))
        return run_plan(p, plan_skinny(p, dev), dev, s);
    GemmParams g = p;  // the product as run: p, or p on op(A) packed
    Plan plan = plan_tiled(p, dev, only);
    // The packed operand's workspace lives until the plan is enqueued; it
    // goes back to the pool after the plan's kernels on the stream.
    Workspace packed;
    const Packed pk = plan_pack(p, dev, only, plan.seconds);
    if (pk.use && packed.acquire(dev, pk.bytes, s)) {
        const cudaError_t e = launch_pack_transposed(p.a, p.lda, p.m, p.k, packed.get(), pk.p.lda, s);
        if (e != cudaSuccess)
            return fail_cuda(e, "pack launch");
        if (settings().verbose >= 2)
            std::fprintf(stderr, "tgemm: device plan m=%lld n=%lld k=%lld: op(A) packed by columns, ld=%lld\n",
                         static_cast<long long>(p.m), static_cast<long long>(p.n), static_cast<long long>(p.k),
                         static_cast<long long>(pk.p.lda));
        g = pk.p;
        g.a = packed.get();
        plan = pk.plan;
    }
    const Peel peel = only == nullptr ? plan_peel(g, dev, plan.seconds) : Peel{};
    if (peel.pm == 0 && peel.pn == 0)
        return run_plan(g, plan, dev, s);
    if (settings().verbose >= 2)
        std::fprintf(stderr, "tgemm: device plan m=%lld n=%lld k=%lld: peeled %lld rows, %lld columns\n",
                     static_cast<long long>(p.m), static_cast<long long>(p.n), static_cast<long long>(p.k),
                     static_cast<long long>(peel.pm), static_cast<long long>(peel.pn));
    tgemm_status st = run_plan(peel.main, peel.main_plan, dev, s);
    if (st == TGEMM_SUCCESS && peel.pn > 0)
        st = run_plan(peel.right, plan_skinny(peel.right, dev), dev, s);
    if (st == TGEMM_SUCCESS && peel.pm > 0)
        st = run_plan(peel.bottom, plan_skinny(peel.bottom, dev), dev, s);
    return st;
}

}  // namespace tgemm
