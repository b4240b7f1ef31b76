// The rank-k planner (src/dispatch/rank_k.cpp) through plan_call on a
// described H100 (bench/plan_dump.hpp's description), no GPU needed (make
// test-rank-k-plan). Linked from the library's own objects; nothing here
// touches a device.
//
//   test_rank_k_plan                  the default plans (TGEMM_KERNEL unset):
//                                     rank-k for rank-k updates (K small
//                                     against a large m x n), the tiled plans
//                                     for long K and for any K over 512, for
//                                     skinny C the streaming kernels or the
//                                     tiled plan by their models (never
//                                     rank-k), the grid limit, and the tiled
//                                     model's cluster form at the device's
//                                     cluster capacity, 32x32x8's short
//                                     waves; skinny_gemv's
//                                     arrangements; the tiled planner's
//                                     remembered plans against plans made anew
//   test_rank_k_plan forced-rank-k    TGEMM_KERNEL=rank-k: every product on it
//   test_rank_k_plan forced-family    TGEMM_KERNEL=256x128x8: that family,
//                                     never rank-k
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "core/math.hpp"
#include "dispatch/dispatch.hpp"
#include "dispatch/planners.hpp"
#include "kernels/skinny_shape.hpp"
#include "plan_dump.hpp"

// After the library's headers: cmocka.h defines a macro named fail.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

// cmocka.h declares only part of its interface extern "C".
extern "C" {
#include <cmocka.h>
}

using namespace tgemm;

namespace {

// The H100's description, with the grid limit given.
void describe_h100(int max_grid_x, DeviceModel *model)
{
    const plan_dump::Device *d = plan_dump::find_device("h100");
    assert_non_null(d);
    DeviceDescription desc;
    desc.id = 0;
    desc.cc_major = d->cc_major;
    desc.cc_minor = d->cc_minor;
    desc.sm_count = d->sm_count;
    desc.max_grid_x = max_grid_x;
    desc.clock_khz = d->clock_khz;
    desc.memory_clock_khz = d->memory_clock_khz;
    desc.bus_width_bits = d->bus_width_bits;
    desc.skinny_tma = d->skinny_tma;
    std::memcpy(desc.skinny_cluster_blocks, d->skinny, sizeof d->skinny);
    std::memcpy(desc.tiled_cluster_blocks, d->tiled, sizeof d->tiled);
    assert_int_equal(derive_device_model(desc, model), TGEMM_SUCCESS);
}

const DeviceModel &h100()
{
    static DeviceModel model;
    static bool ready = false;
    if (!ready) {
        describe_h100(2147483647, &model);
        ready = true;
    }
    return model;
}

// Column-major, the smallest leading dimensions, 256-byte aligned fake
// operands (never dereferenced).
GemmParams problem(int64_t m, int64_t n, int64_t k, bool ta, bool tb, float beta)
{
    const float *a = reinterpret_cast<const float *>(plan_dump::kBaseA);
    const float *b = reinterpret_cast<const float *>(plan_dump::kBaseB);
    float *c = reinterpret_cast<float *>(plan_dump::kBaseC);
    return GemmParams{a, b, c, ta ? k : m, tb ? n : k, m, m, n, k, 1.0f, beta, ta, tb};
}

// Whether the plan is the rank-k kernel alone over all of C, with no
// workspace, and the same without it.
bool is_rank_k(const CallPlan &plan)
{
    const CallSteps &s = plan.steps;
    if (s.pieces != 1 || s.piece[0].kind != KernelKind::RankK)
        return false;
    const PiecePlan &x = s.piece[0];
    assert_int_equal(x.p.m, plan.problem.m);
    assert_int_equal(x.p.n, plan.problem.n);
    assert_int_equal(x.p.k, plan.problem.k);
    assert_int_equal(x.splits, 1);
    assert_int_equal(s.pack_a.ld + s.pack_b.ld, 0);
    assert_int_equal(s.peel_m + s.peel_n, 0);
    assert_int_equal(workspace_bytes(plan), 0);
    CallPlan bare = plan;
    assert_int_equal(drop_workspace(&bare), TGEMM_SUCCESS);
    assert_int_equal(bare.steps.pieces, 1);
    assert_int_equal(static_cast<int>(bare.steps.piece[0].kind), static_cast<int>(KernelKind::RankK));
    return true;
}

// The steps drop_workspace leaves of a copy of plan.
CallSteps bare_of(CallPlan plan)
{
    assert_int_equal(drop_workspace(&plan), TGEMM_SUCCESS);
    return plan.steps;
}

CallPlan plan_of(const GemmParams &p, const DeviceModel &m)
{
    CallPlan plan;
    const tgemm_status st = plan_call(p, m, &plan);
    if (st != TGEMM_SUCCESS)
        fail_msg("%lldx%lldx%lld: plan_call failed: %s", static_cast<long long>(p.m), static_cast<long long>(p.n),
                 static_cast<long long>(p.k), tgemm_last_error_detail());
    return plan;
}

// Whether plan_call takes the rank-k kernel for each shape, for every
// transpose pair and beta 0 and not.
template <size_t N>
void expect_rank_k(const int64_t (&shapes)[N][3], bool want)
{
    for (const auto &s : shapes)
        for (int pair = 0; pair < 4; ++pair)
            for (float beta : {0.0f, 0.5f}) {
                const CallPlan plan = plan_of(problem(s[0], s[1], s[2], pair & 2, pair & 1, beta), h100());
                if (is_rank_k(plan) != want)
                    fail_msg("%lldx%lldx%lld %c%c beta %g: rank-k %s", static_cast<long long>(s[0]),
                             static_cast<long long>(s[1]), static_cast<long long>(s[2]), pair & 2 ? 'T' : 'N',
                             pair & 1 ? 'T' : 'N', static_cast<double>(beta),
                             want ? "not planned, want it" : "planned, want another plan");
            }
}

// Rank-k updates: C large, K up to a few tens.
void test_rank_k_updates(void **)
{
    const int64_t shapes[][3] = {{8192, 8192, 16}, {8192, 8192, 1}, {8192, 8192, 40},
                                 {20000, 20000, 8}, {4096, 4096, 32}, {3001, 2999, 33}};
    expect_rank_k(shapes, true);
}

// Long K: the tiled plans (their K loop, not C, is the cost).
void test_long_k(void **)
{
    const int64_t shapes[][3] = {{4096, 4096, 4096}, {8192, 8192, 8192}, {2048, 2048, 2048},
                                 {1024, 1024, 1024}, {256, 256, 8192}};
    expect_rank_k(shapes, false);
}

// C with at most kSkinnyMax rows or columns never runs on the rank-k
// kernel, whatever K: one plan, streaming where that is modelled no slower
// than the tiled planner's plan (host-floored both; plan_streaming,
// plan_tiled, host_floored), else that tiled plan. Both outcomes occur:
// long skinny products with much memory to stream, and few-row products
// with long K or K too short for the streaming kernels' lanes.
void test_skinny_never(void **)
{
    const int64_t shapes[][3] = {{16, 100000, 8},   {100000, 16, 4},  {1, 20000, 1},  {20000, 1, 16},
                                 {16, 16, 1},       {3, 50000, 40},   {50000, 12, 2}, {16, 8192, 16},
                                 {8192, 16, 16},    {1, 1, 1},        {15, 66, 2567}, {14, 18035, 2},
                                 {5000, 4, 3000},   {16, 3000, 1100}, {100000, 8, 4096}, {2, 200000, 512}};
    int streamed = 0, tiled = 0;
    for (const auto &s : shapes)
        for (int pair = 0; pair < 4; ++pair) {
            const GemmParams p = problem(s[0], s[1], s[2], pair & 2, pair & 1, 1.0f);
            const CallPlan plan = plan_of(p, h100());
            const KernelKind kind = plan.steps.piece[0].kind;
            const PiecePlan stream = plan_streaming(p, h100());
            const bool expect_stream = stream.kind == KernelKind::StreamingTma ||
                                       host_floored(stream, h100()) <= host_floored(plan_tiled(p, h100(), nullptr), h100());
            const bool is_stream = kind == KernelKind::Streaming || kind == KernelKind::StreamingTma;
            if (plan.steps.pieces != 1 || kind == KernelKind::RankK || is_stream != expect_stream)
                fail_msg("%lldx%lldx%lld pair %d: %s, expected the %s plan", static_cast<long long>(s[0]),
                         static_cast<long long>(s[1]), static_cast<long long>(s[2]), pair, kernel_kind_name(kind),
                         expect_stream ? "streaming" : "tiled");
            if (is_stream && kind != stream.kind)
                fail_msg("%lldx%lldx%lld: not plan_streaming's kernel", static_cast<long long>(s[0]),
                         static_cast<long long>(s[1]), static_cast<long long>(s[2]));
            const PiecePlan tiled_plan = plan_tiled(p, h100(), nullptr);
            const PiecePlan &got = plan.steps.piece[0];
            if (!is_stream && plan.steps.pack_a.ld == 0 && plan.steps.pack_b.ld == 0 && plan.steps.peel_m == 0 &&
                plan.steps.peel_n == 0 && (got.family != tiled_plan.family || got.splits != tiled_plan.splits))
                fail_msg("%lldx%lldx%lld: not the tiled planner's family and split", static_cast<long long>(s[0]),
                         static_cast<long long>(s[1]), static_cast<long long>(s[2]));
            streamed += is_stream;
            tiled += !is_stream;
        }
    if (streamed < 8 || tiled < 8)
        fail_msg("streaming %d, tiled %d of %zu plans: both choices should occur", streamed, tiled,
                 4 * (sizeof shapes / sizeof shapes[0]));
    // Pinned: a few blocks walking a long K, and K too short for the
    // streaming lanes, go tiled; X of 80 MB (in workspace split) and of 13 MB
    // (in clusters) stream.
    const struct {
        int64_t m, n, k;
        bool ta, tb, stream;
    } pinned[] = {{15, 66, 2567, false, true, false},
                  {14, 18035, 2, true, false, false},
                  {5000, 4, 3000, false, false, true},
                  {16, 3000, 1100, false, false, true}};
    for (const auto &q : pinned) {
        const CallPlan plan = plan_of(problem(q.m, q.n, q.k, q.ta, q.tb, 1.0f), h100());
        const KernelKind kind = plan.steps.piece[0].kind;
        if ((kind == KernelKind::Streaming) != q.stream || plan.steps.pieces != 1)
            fail_msg("%lldx%lldx%lld: %s, expected %s", static_cast<long long>(q.m), static_cast<long long>(q.n),
                     static_cast<long long>(q.k), kernel_kind_name(kind), q.stream ? "streaming" : "a tiled plan");
    }
}

// Without the workspace, skinny C that planned a tiled split through it
// runs on the streaming kernel instead (in cluster form or unsplit), not on
// a tiled plan walking all of K in a few blocks.
void test_skinny_without_workspace(void **)
{
    const GemmParams p = problem(15, 66, 2567, false, true, 1.0f);
    CallPlan plan = plan_of(p, h100());
    assert_true(plan.steps.piece[0].kind == KernelKind::Tiled && plan.steps.piece[0].splits > 1 &&
                !plan.steps.piece[0].cluster);
    assert_int_equal(drop_workspace(&plan), TGEMM_SUCCESS);
    assert_int_equal(plan.steps.pieces, 1);
    assert_true(plan.steps.piece[0].kind == KernelKind::Streaming);
    assert_true(plan.steps.piece[0].splits == 1 || plan.steps.piece[0].cluster);
    assert_int_equal(workspace_bytes(plan), 0);
}

// Matrix-vector products (s == 1) with X contiguous along r: where
// plan_streaming takes skinny_gemv, its arrangement is one the kernel runs
// (1, 2, 4 or 8 warps along r; slices of whole groups of kGemvSteps; a
// cluster only where every block fits at once; workspace slices only where
// they fit), and its time is its model's. Products with X contiguous along
// K, or s > 1, never take it. Both kernels occur on the grid; pinned: the
// long-K products of few blocks that skinny_rows walked in many round
// trips, and without the workspace the split one runs unsplit.
void test_gemv_plans(void **)
{
    using namespace kernels::skinny;
    const DeviceModel &m = h100();
    int gemv = 0, other = 0;
    for (int64_t r : {64, 584, 1017, 1542, 4099, 4232, 16007, 100000})
        for (int64_t k : {16, 300, 1075, 1445, 2963, 100000})
            for (int s : {1, 2})
                for (int pair = 0; pair < 8; ++pair) {
                    const bool m_small = pair & 4;
                    const GemmParams p =
                        problem(m_small ? s : r, m_small ? r : s, k, pair & 2, pair & 1, pair % 3 ? 1.0f : 0.0f);
                    const PiecePlan x = plan_streaming(p, m);
                    if (x.kind != KernelKind::Streaming || x.skinny.gemv_rw == 0) {
                        other++;
                        continue;
                    }
                    gemv++;
                    const kernels::SkinnyParams &q = x.skinny;
                    if (q.s != 1 || q.x_r != 1)
                        fail_msg("%lldx%lldx%lld pair %d: skinny_gemv for s %d, x_r %lld",
                                 static_cast<long long>(p.m), static_cast<long long>(p.n),
                                 static_cast<long long>(p.k), pair, q.s, static_cast<long long>(q.x_r));
                    assert_true(q.gemv_rw == 1 || q.gemv_rw == 2 || q.gemv_rw == 4 || q.gemv_rw == 8);
                    if (x.splits > 1) {
                        assert_int_equal(x.k_chunk % kGemvSteps, 0);
                        assert_int_equal(x.splits, ceil_div(k, x.k_chunk));
                        const int64_t blocks = ceil_div(r, int64_t{kGemvRows} * q.gemv_rw) * x.splits;
                        if (x.cluster)
                            assert_true(x.splits <= kMaxCluster && blocks <= m.desc.skinny_cluster_blocks[x.splits]);
                        else
                            assert_true(split_fits(p, x.splits));
                    } else {
                        assert_int_equal(x.k_chunk, k);
                    }
                    const StreamingTerms t = streaming_terms(x, m);
                    assert_true(t.trips >= 1 && t.trips <= kGemvMaxTrips && t.waves >= 1);
                    assert_true(x.seconds == std::max(t.latency, t.memory) + t.finish);
                }
    if (gemv < 20 || other < 20)
        fail_msg("skinny_gemv %d, other %d plans: both should occur", gemv, other);
    const CallPlan cl = plan_of(problem(1, 1017, 2963, false, true, 0.0f), m);
    assert_true(cl.steps.pieces == 1 && cl.steps.piece[0].kind == KernelKind::Streaming);
    assert_true(cl.steps.piece[0].skinny.gemv_rw > 0 && cl.steps.piece[0].splits > 1 && cl.steps.piece[0].cluster);
    // Ranked by the host-floored time: a split through the workspace is two
    // kernels to issue, so where a cluster split is modelled close, it wins.
    const CallPlan near = plan_of(problem(24, 1, 7155, false, true, 1.0f), m);
    assert_true(near.steps.piece[0].skinny.gemv_rw > 0 && near.steps.piece[0].cluster);
    CallPlan ws = plan_of(problem(64, 1, 20000, false, false, 1.0f), m);
    assert_true(ws.steps.pieces == 1 && ws.steps.piece[0].skinny.gemv_rw > 0);
    assert_true(ws.steps.piece[0].splits > kMaxCluster && !ws.steps.piece[0].cluster);
    assert_true(workspace_bytes(ws) > 0);
    // Without the workspace, planned again without it: no long walk on
    // skinny_gemv (here skinny_rows in clusters).
    assert_int_equal(drop_workspace(&ws), TGEMM_SUCCESS);
    const PiecePlan &bare = ws.steps.piece[0];
    assert_true(bare.kind == KernelKind::Streaming && (bare.splits == 1 || bare.cluster));
    assert_true(bare.skinny.gemv_rw == 0 || streaming_terms(bare, m).trips <= kGemvMaxTrips);
    assert_int_equal(workspace_bytes(ws), 0);
}

// Tiny products stay where they were: a rank-k block's fixed cost is more
// than the whole of the tiled plan.
void test_tiny_products(void **)
{
    const int64_t shapes[][3] = {{100, 100, 2}, {64, 64, 16}, {300, 500, 3}};
    expect_rank_k(shapes, false);
}

// The modelled time: at least the product's floor (bytes at the device's
// bandwidth, FFMAs at its peak), and growing with K.
void test_model(void **)
{
    const DeviceModel &m = h100();
    const double peak = m.sm_flops * m.desc.sm_count;
    double last = 0.0;
    for (int64_t k : {1, 2, 7, 16, 31, 32, 33, 40, 100, 1000}) {
        for (float beta : {0.0f, 1.0f}) {
            const GemmParams p = problem(8192, 8192, k, false, false, beta);
            const double bytes = 4.0 * (8192.0 * k * 2 + 8192.0 * 8192.0 * (beta != 0.0f ? 2 : 1));
            const double floor = std::max(bytes / m.memory_bandwidth, 2.0 * 8192 * 8192 * k / peak);
            const double t = plan_rank_k(p, m).seconds;
            if (t < floor)
                fail_msg("k %lld: modelled %g s, under the floor %g s", static_cast<long long>(k), t, floor);
        }
        const double t = plan_rank_k(problem(8192, 8192, k, false, false, 1.0f), m).seconds;
        assert_true(t >= last);
        last = t;
    }
}

// K beyond 512: never the rank-k plan, though the model finds it faster
// than the tiled plan on these (TN, where both operands are read along K;
// checked, so that only the cap keeps it off); at 512 and below the model
// still decides, and takes it for a large C.
void test_k_cap(void **)
{
    const int64_t beyond[][3] = {{9071, 17182, 513}, {2075, 3825, 2613},  {1882, 2103, 12454},
                                 {835, 4558, 9828},  {865, 14415, 3776}, {5635, 8167, 537}};
    for (const auto &s : beyond)
        for (float beta : {0.0f, 0.5f}) {
            const GemmParams p = problem(s[0], s[1], s[2], true, false, beta);
            if (plan_rank_k(p, h100()).seconds >= plan_tiled(p, h100(), nullptr).seconds)
                fail_msg("%lldx%lldx%lld TN beta %g: the model does not prefer rank-k; the case tests nothing",
                         static_cast<long long>(s[0]), static_cast<long long>(s[1]), static_cast<long long>(s[2]),
                         static_cast<double>(beta));
        }
    expect_rank_k(beyond, false);
    for (int64_t k : {160, 400, 512}) {
        const CallPlan plan = plan_of(problem(9071, 17182, k, true, false, 0.0f), h100());
        if (!is_rank_k(plan))
            fail_msg("9071x17182x%lld TN: rank-k not planned, want it", static_cast<long long>(k));
    }
}

// rank_k_pays against plans of given times: rank-k is taken where its time
// is under the tiled plan's over kTiledModelShare (0.95), or under the
// tiled memory floor's where that is the larger, and not 1% above either;
// never beyond K 512, however fast.
void test_tiled_share(void **)
{
    const DeviceModel &m = h100();
    const auto pays = [&](const GemmParams &p, double rank_k_seconds, double tiled_seconds) {
        PiecePlan rk = plan_rank_k(p, m), tiled;
        tiled.p = p;
        rk.seconds = rank_k_seconds;
        tiled.seconds = tiled_seconds;
        return rank_k_pays(rk, tiled, m);
    };
    const GemmParams p = problem(8192, 8192, 256, false, false, 0.0f);
    const double floor = tiled_memory_floor(p, m);
    for (double tiled : {10.0 * floor, 2.0 * floor}) {  // the tiled plan's time above the floor
        assert_true(pays(p, 0.99 * tiled / 0.95, tiled));
        assert_false(pays(p, 1.01 * tiled / 0.95, tiled));
    }
    // A tiled time below the floor: the floor decides.
    assert_true(pays(p, 0.99 * floor / 0.95, 0.5 * floor));
    assert_false(pays(p, 1.01 * floor / 0.95, 0.5 * floor));
    const GemmParams deep = problem(8192, 8192, 513, false, false, 0.0f);
    assert_false(pays(deep, 1e-3 * tiled_memory_floor(deep, m), 10.0 * tiled_memory_floor(deep, m)));
    assert_true(pays(problem(8192, 8192, 512, false, false, 0.0f), 1e-9, 1.0));
}

// Over the grid limit: not planned; a tiled plan whose grid fits instead.
void test_grid_limit(void **)
{
    static DeviceModel small;
    describe_h100(3000, &small);  // 8192 x 8192: 4096 rank-k blocks, 2048 of 256 x 128
    const CallPlan plan = plan_of(problem(8192, 8192, 16, false, false, 0.0f), small);
    assert_false(is_rank_k(plan));
    assert_true(is_rank_k(plan_of(problem(4096, 4096, 16, false, false, 0.0f), small)));
}

// The cluster form at the device's cluster capacity: blocks an SM holds
// beyond the plain kernels' residency share the SM's rate, so over many
// full waves a larger capacity leaves the modelled time as it is (within
// the waves' rounding); counting them at the plain kernels' share would
// make the split plans a quarter faster than they can run.
void test_cluster_residency(void **)
{
    static DeviceModel m;
    describe_h100(2147483647, &m);
    int f = 0;
    while (f < kernels::kTiledFamilyCount && std::strcmp(kernels::kTiledFamilies[f]->name, "64x64x8") != 0)
        ++f;
    assert_true(f < kernels::kTiledFamilyCount);
    const int sms = m.desc.sm_count, plain = m.tiled[f].blocks_per_sm;
    const GemmParams p = problem(8192, 8192, 1024, false, false, 0.0f);
    // Changed in place: only tiled_plan_seconds reads it, which the tiled
    // planner's memory does not answer.
    m.desc.tiled_cluster_blocks[f][2] = plain * sms;
    const double at_plain = tiled_plan_seconds(p, m, f, 2, 512, true);
    m.desc.tiled_cluster_blocks[f][2] = (plain + 1) * sms;
    const double beyond = tiled_plan_seconds(p, m, f, 2, 512, true);
    if (beyond < 0.98 * at_plain || beyond > 1.02 * at_plain)
        fail_msg("8192x8192x1024 split 2 in clusters: %.3g s at %d blocks an SM, %.3g s at %d", at_plain, plain,
                 beyond, plain + 1);
}

// 32x32x8's short waves: each whole wave of its blocks on the busiest SM
// costs short_wave_seconds more in full up to short_wave_steps K steps a
// block and in proportion beyond; a partial wave and a split (in clusters
// or not) pay none, nor does 64x64x8. Then the plans it moves: products of
// a whole wave or more with K of a few steps, planned on 32x32x8 before,
// are not now.
void test_short_waves(void **)
{
    static DeviceModel m;
    describe_h100(2147483647, &m);
    const auto index = [](const char *name) {
        int f = 0;
        while (f < kernels::kTiledFamilyCount && std::strcmp(kernels::kTiledFamilies[f]->name, name) != 0)
            ++f;
        assert_true(f < kernels::kTiledFamilyCount);
        return f;
    };
    const int f = index("32x32x8"), g = index("64x64x8");
    const double cost = m.tiled[f].short_wave_seconds, steps = m.tiled[f].short_wave_steps;
    assert_true(cost > 0.0 && steps > 0.0);
    assert_true(m.tiled[g].short_wave_seconds == 0.0);
    // The modelled seconds of a plan with the short waves' cost and without
    // (changed in place: the tiled planner's memory does not answer
    // tiled_plan_seconds).
    const auto extra = [&](int64_t mm, int64_t nn, int64_t k, int splits, int64_t chunk, bool cluster = false) {
        const GemmParams p = problem(mm, nn, k, false, true, 0.0f);
        const double with = tiled_plan_seconds(p, m, f, splits, chunk, cluster);
        m.tiled[f].short_wave_seconds = 0.0;
        const double without = tiled_plan_seconds(p, m, f, splits, chunk, cluster);
        m.tiled[f].short_wave_seconds = cost;
        return with - without;
    };
    const int64_t wave = 16 * m.desc.sm_count;  // 32x32x8 blocks in a whole wave
    const double tol = 1e-12;
    // One whole wave (32 x 32 tiles), K of 4 steps: the cost in full.
    assert_true(std::fabs(extra(32 * wave, 32, 32, 1, 32) - cost) < tol);
    // Two whole waves and a partial one: two costs.
    assert_true(std::fabs(extra(32 * (2 * wave + 5), 32, 32, 1, 32) - 2.0 * cost) < tol);
    // Long K: in proportion, short_wave_steps over the K steps.
    assert_true(std::fabs(extra(32 * wave, 32, 800, 1, 800) - cost * steps / 100.0) < tol);
    // A partial wave (15 blocks on the busiest SM), a split, a split in
    // clusters: none.
    assert_true(std::fabs(extra(32 * (wave - m.desc.sm_count), 32, 32, 1, 32)) < tol);
    assert_true(std::fabs(extra(32 * wave, 32, 64, 2, 32)) < tol);
    assert_true(std::fabs(extra(32 * wave, 32, 64, 2, 32, true)) < tol);
    for (const auto &s : {std::initializer_list<int64_t>{3727, 526, 26, 0, 1}, {17713, 152, 12, 0, 0},
                          {6745, 583, 23, 0, 0}, {216, 16990, 24, 0, 1}}) {
        const int64_t *d = s.begin();
        const CallPlan plan = plan_of(problem(d[0], d[1], d[2], d[3] != 0, d[4] != 0, 0.0f), h100());
        for (int i = 0; i < plan.steps.pieces; ++i) {
            const PiecePlan &x = plan.steps.piece[i];
            if (x.kind == KernelKind::Tiled && std::strcmp(x.family->name, "32x32x8") == 0)
                fail_msg("%lldx%lldx%lld: planned on 32x32x8", static_cast<long long>(d[0]),
                         static_cast<long long>(d[1]), static_cast<long long>(d[2]));
        }
    }
}

// Two plans of one problem alike, piece by piece (kernel, family, split,
// K per slice, form, stream-K shape, the piece's problem and workspace).
bool same_steps(const CallSteps &x, const CallSteps &y)
{
    if (x.pieces != y.pieces || x.peel_m != y.peel_m || x.peel_n != y.peel_n || x.pack_a.ld != y.pack_a.ld ||
        x.pack_b.ld != y.pack_b.ld || x.pack_a.transposed != y.pack_a.transposed ||
        x.workspace_bytes != y.workspace_bytes)
        return false;
    for (int i = 0; i < x.pieces; ++i) {
        const PiecePlan &a = x.piece[i], &b = y.piece[i];
        if (a.kind != b.kind || a.family != b.family || a.splits != b.splits || a.k_chunk != b.k_chunk ||
            a.cluster != b.cluster || a.sk.sk_tiles != b.sk.sk_tiles || a.sk.dp_tiles != b.sk.dp_tiles ||
            a.sk.ctas != b.sk.ctas || a.p.a != b.p.a || a.p.b != b.p.b || a.p.c != b.p.c || a.p.m != b.p.m ||
            a.p.n != b.p.n || a.p.k != b.p.k || a.p.beta != b.p.beta || a.work_offset != b.work_offset)
            return false;
    }
    return true;
}

GemmParams params_of(const plan_dump::Problem &pr)
{
    return GemmParams{reinterpret_cast<const float *>(plan_dump::kBaseA) + pr.a_off,
                      reinterpret_cast<const float *>(plan_dump::kBaseB) + pr.b_off,
                      reinterpret_cast<float *>(plan_dump::kBaseC) + pr.c_off,
                      pr.lda, pr.ldb, pr.ldc, pr.m, pr.n, pr.k, pr.alpha, pr.beta, pr.ta, pr.tb};
}

// The tiled planner remembers its recent plans per thread
// (dispatch/tiled.cpp): a plan made from memory must be the plan made
// anew. For each of 1,500 random problems, each sibling that differs from
// it in one thing the planner reads (m, n, k, a transpose, the operands'
// alignment, C's, whether beta is 0) is planned first on a model derived
// for it, then the problem on the same model, which must plan as on
// another model (nothing is remembered for it): a key that missed the
// difference would hand the problem its sibling's plan. Then the problem again (from memory: the
// hits are counted), the tiled planner alone with each family forced
// before the unforced plan, and one model object derived again with
// another grid limit, which must plan as a fresh model with that limit.
void test_remembered_plans(void **)
{
    static DeviceModel m, fresh;
    describe_h100(2147483647, &fresh);
    plan_dump::Rng rng{20261127};
    const uint64_t hits_before = tiled_memo_hits();
    int compared = 0;
    for (int i = 0; i < 1500; ++i) {
        const plan_dump::Problem pr = plan_dump::draw_problem(rng);
        std::vector<plan_dump::Problem> siblings(8, pr);
        siblings[0].m += 1;
        siblings[1].n += 1;
        siblings[2].k += 1;
        siblings[3].ta = !pr.ta;
        siblings[4].tb = !pr.tb;
        // The operands' alignment and C's turned over: offsets and leading
        // dimensions to multiples of 4 floats, or the offset off by one.
        const auto turn = [](int64_t *off, int64_t *ld, bool aligned) {
            if (aligned) {
                *off = 1;
            } else {
                *off = 0;
                *ld = (*ld + 3) / 4 * 4;
            }
        };
        const GemmParams p = params_of(pr);
        turn(&siblings[5].a_off, &siblings[5].lda, operands_aligned(p));
        turn(&siblings[5].b_off, &siblings[5].ldb, operands_aligned(p));
        turn(&siblings[6].c_off, &siblings[6].ldc, c_aligned(p));
        siblings[7].beta = pr.beta == 0.0f ? 0.5f : 0.0f;
        assert_true(operands_aligned(params_of(siblings[5])) != operands_aligned(p));
        assert_true(c_aligned(params_of(siblings[6])) != c_aligned(p));
        CallPlan anew, from_memory, sibling;
        const tgemm_status st = plan_call(p, fresh, &anew);
        for (const plan_dump::Problem &sib : siblings) {
            describe_h100(2147483647, &m);  // a new serial: only the sibling is remembered
            (void)plan_call(params_of(sib), m, &sibling);
            if (plan_call(p, m, &from_memory) != st)
                fail_msg("problem %d: plan_call returned another status after a sibling", i);
            if (st == TGEMM_SUCCESS &&
                (!same_steps(from_memory.steps, anew.steps) || !same_steps(bare_of(from_memory), bare_of(anew))))
                fail_msg("%lldx%lldx%lld %c%c: planned after a sibling, its plan differs from the plan made anew",
                         static_cast<long long>(pr.m), static_cast<long long>(pr.n), static_cast<long long>(pr.k),
                         pr.ta ? 'T' : 'N', pr.tb ? 'T' : 'N');
            ++compared;
        }
        if (plan_call(p, m, &from_memory) == TGEMM_SUCCESS && !same_steps(from_memory.steps, anew.steps))
            fail_msg("problem %d: planned twice, the second plan differs", i);
        if (p.m > kSkinnyMax && p.n > kSkinnyMax) {
            const KernelFamily *forced = kernels::kTiledFamilies[i % kernels::kTiledFamilyCount];
            const PiecePlan only = plan_tiled(p, m, forced), any = plan_tiled(p, m, nullptr);
            const PiecePlan only_anew = plan_tiled(p, fresh, forced), any_anew = plan_tiled(p, fresh, nullptr);
            assert_ptr_equal(only.family, forced);
            assert_ptr_equal(only.family, only_anew.family);
            assert_ptr_equal(any.family, any_anew.family);
            assert_int_equal(any.splits, any_anew.splits);
            assert_int_equal(any.k_chunk, any_anew.k_chunk);
            assert_int_equal(any.cluster, any_anew.cluster);
        }
        describe_h100(2147483647, &fresh);
    }
    assert_int_equal(compared, 1500 * 8);
    assert_true(tiled_memo_hits() - hits_before > 1000);
    // 700 x 700: 121 tiles of 64 x 64 (its plan without a limit), over a
    // limit of 100.
    const GemmParams wide = problem(700, 700, 300, false, false, 0.0f);
    static DeviceModel limited;
    describe_h100(100, &limited);
    const CallPlan unlimited_plan = plan_of(wide, m), limited_plan = plan_of(wide, limited);
    assert_false(same_steps(unlimited_plan.steps, limited_plan.steps));
    describe_h100(100, &m);  // the same object, another grid limit
    assert_true(same_steps(plan_of(wide, m).steps, limited_plan.steps));
}

// TGEMM_KERNEL=rank-k: every product with alpha != 0 and k != 0 on the
// rank-k kernel, skinny and long ones too; over the grid limit, a failure.
void test_forced_rank_k(void **)
{
    const int64_t shapes[][3] = {{1, 1, 1},        {16, 100000, 8},    {100000, 16, 4}, {4096, 4096, 4096},
                                 {8192, 8192, 16}, {129, 127, 100000}, {3, 1, 2000000}};
    for (const auto &s : shapes)
        for (int pair = 0; pair < 4; ++pair)
            if (!is_rank_k(plan_of(problem(s[0], s[1], s[2], pair & 2, pair & 1, 0.5f), h100())))
                fail_msg("%lldx%lldx%lld: not the rank-k kernel under TGEMM_KERNEL=rank-k",
                         static_cast<long long>(s[0]), static_cast<long long>(s[1]), static_cast<long long>(s[2]));
    CallPlan plan;
    GemmParams p = problem(300, 200, 5, false, false, 0.0f);
    p.alpha = 0.0f;
    assert_int_equal(plan_call(p, h100(), &plan), TGEMM_SUCCESS);
    assert_int_equal(static_cast<int>(plan.steps.piece[0].kind), static_cast<int>(KernelKind::Scale));
    static DeviceModel small;
    describe_h100(3000, &small);
    assert_int_equal(plan_call(problem(8192, 8192, 16, false, false, 0.0f), small, &plan), TGEMM_ERROR_UNSUPPORTED);
    assert_non_null(std::strstr(tgemm_last_error_detail(), "grid limit"));
}

// TGEMM_KERNEL=256x128x8: the rank-k updates go to that family.
void test_forced_family(void **)
{
    for (const auto &s : {std::initializer_list<int64_t>{8192, 8192, 16}, {20000, 20000, 8}, {4096, 4096, 32}}) {
        const int64_t *d = s.begin();
        const CallPlan plan = plan_of(problem(d[0], d[1], d[2], false, true, 0.0f), h100());
        assert_int_equal(plan.steps.pieces, 1);
        const PiecePlan &x = plan.steps.piece[0];
        assert_true(x.kind == KernelKind::Tiled || x.kind == KernelKind::StreamK);
        assert_string_equal(x.family->name, "256x128x8");
    }
}

}  // namespace

int main(int argc, char **argv)
{
    const struct CMUnitTest defaults[] = {
        cmocka_unit_test(test_rank_k_updates), cmocka_unit_test(test_long_k),  cmocka_unit_test(test_skinny_never),
        cmocka_unit_test(test_tiny_products),  cmocka_unit_test(test_model),   cmocka_unit_test(test_grid_limit),
        cmocka_unit_test(test_k_cap),          cmocka_unit_test(test_tiled_share), cmocka_unit_test(test_cluster_residency),
        cmocka_unit_test(test_short_waves),
        cmocka_unit_test(test_remembered_plans), cmocka_unit_test(test_skinny_without_workspace),
        cmocka_unit_test(test_gemv_plans),
    };
    const struct CMUnitTest forced_rank_k[] = {cmocka_unit_test(test_forced_rank_k)};
    const struct CMUnitTest forced_family[] = {cmocka_unit_test(test_forced_family)};
    if (argc == 1)
        return cmocka_run_group_tests(defaults, nullptr, nullptr);
    if (argc == 2 && std::strcmp(argv[1], "forced-rank-k") == 0)
        return cmocka_run_group_tests(forced_rank_k, nullptr, nullptr);
    if (argc == 2 && std::strcmp(argv[1], "forced-family") == 0)
        return cmocka_run_group_tests(forced_family, nullptr, nullptr);
    std::fprintf(stderr, "usage: %s [forced-rank-k | forced-family]\n", argv[0]);
    return 2;
}
