// The CPU side of the host-operand path, no GPU needed (make test-host-plan):
// the planner (src/driver/host_plan.cpp), the parallel host copy
// (src/runtime/host_copy.cpp), the parsing of TGEMM_DEVICE_MEMORY_LIMIT
// (src/core/settings.cpp) and the CSV of TGEMM_HOST_TRACE
// (src/driver/host_trace.cpp), linked from the library's own objects.
//
// The schedule test replays every task of a plan against a model of the
// device buffers: each element a kernel reads must hold the right element
// of A, B or C; a copy may overwrite data that earlier kernels read only
// after the executor waited for them (the task's `reuse` flag); every
// element of C is computed by exactly one tile whose K chunks cover K
// exactly once, in order; the bytes copied equal the plan's link_bytes;
// the buffers fit the budget.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

// cmocka.h declares only part of its interface extern "C".
extern "C" {
#include <cmocka.h>
}

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "runtime/host_copy.hpp"
#include "driver/host_plan.hpp"
#include "driver/host_trace.hpp"
#include "core/settings.hpp"

using namespace tgemm;

namespace {

constexpr uint64_t kUnlimited = UINT64_MAX;
constexpr uint64_t kMiB = uint64_t{1} << 20;

PlanRequest request(int64_t m, int64_t n, int64_t k, bool host = true)
{
    PlanRequest r;
    r.m = m;
    r.n = n;
    r.k = k;
    r.a_host = r.b_host = r.c_host = host;
    r.budget = kUnlimited;
    return r;
}

HostPlan must_plan(const PlanRequest &r)
{
    HostPlan p;
    uint64_t need = 0;
    if (!plan_host(r, &p, &need))
        fail_msg("no plan for %lld x %lld x %lld within %llu bytes (needs %llu)", (long long)r.m, (long long)r.n,
                 (long long)r.k, (unsigned long long)r.budget, (unsigned long long)need);
    return p;
}

// ---------------------------------------------------------------- replay

// Plans up to this many floats of buffers and elements touched are replayed
// element by element; larger ones (the benchmark shapes) by their geometry:
// slots, tiles, K chunks, bytes.
constexpr int64_t kElementReplayMax = int64_t{1} << 22;
constexpr double kElementWorkMax = 3e7;

bool replay_elements(const HostPlan &p)
{
    const double per_task = static_cast<double>(p.mt * p.kt + p.kt * p.nt + p.mt * p.nt);
    return p.arena_elems <= kElementReplayMax && static_cast<double>(task_count(p)) * per_task <= kElementWorkMax;
}

struct Replay {
    const PlanRequest &r;
    const HostPlan &p;
    const bool elements;
    std::vector<int64_t> content;   // per arena element: 1 + index of the stored element it holds, 0 = nothing
    std::vector<int32_t> last_read; // per arena element: the last task whose kernel read it, -1 = none
    int64_t wait_a[2] = {-1, -1}, wait_b[2] = {-1, -1};  // task of the last reuse wait
    std::vector<int64_t> wait_c;     // per C slot: task of the last reuse wait
    std::vector<int64_t> stored_c;   // per C slot: task that last copied the slot's tile out, -1 = none
    std::vector<int64_t> holder_c;   // per C slot: the tile being computed in it, -1 = none
    double moved = 0;                // bytes copied either way

    Replay(const PlanRequest &req, const HostPlan &plan)
        : r(req), p(plan), elements(replay_elements(plan)),
          content(elements ? static_cast<size_t>(plan.arena_elems) : 0, 0),
          last_read(elements ? static_cast<size_t>(plan.arena_elems) : 0, -1),
          wait_c(static_cast<size_t>(std::max(plan.c.count, 1)), -1),
          stored_c(static_cast<size_t>(std::max(plan.c.count, 1)), -1),
          holder_c(static_cast<size_t>(std::max(plan.c.count, 1)), -1)
    {
    }

    // Checks that a step's rect lies inside its slot; calls fn(arena index,
    // stored index) for each element when replaying elements.
    template <typename Fn>
    void each(const Slots &s, const OperandStep &st, int64_t stored_rows, const char *what, int64_t t, Fn fn)
    {
        const int64_t base = s.offset + st.slot * s.stride;
        if (st.slot < 0 || st.slot >= s.count || st.rect.rows > s.ld)
            fail_msg("task %lld: %s step outside its slots (slot %d of %d, rows %lld, ld %lld)", (long long)t, what,
                     st.slot, s.count, (long long)st.rect.rows, (long long)s.ld);
        if (s.ld % kLdAlign == 0 && st.offset % kLdAlign != 0)
            fail_msg("task %lld: %s offset %lld is not 16-byte aligned", (long long)t, what, (long long)st.offset);
        const int64_t first = st.offset, last = st.offset + (st.rect.rows - 1) + (st.rect.cols - 1) * s.ld;
        if (st.rect.rows > 0 && st.rect.cols > 0 && (first < base || last >= base + s.stride))
            fail_msg("task %lld: %s elements [%lld, %lld] outside slot [%lld, %lld)", (long long)t, what,
                     (long long)first, (long long)last, (long long)base, (long long)(base + s.stride));
        if (!elements)
            return;
        for (int64_t c = 0; c < st.rect.cols; ++c)
            for (int64_t i = 0; i < st.rect.rows; ++i) {
                const int64_t e = st.offset + i + c * s.ld;
                fn(static_cast<size_t>(e), 1 + (st.rect.row + i) + (st.rect.col + c) * stored_rows);
            }
    }

    void load(const Slots &s, const OperandStep &st, int64_t stored_rows, int64_t *waits, const char *what, int64_t t)
    {
        if (st.reuse)
            waits[st.slot] = t;
        moved += 4.0 * static_cast<double>(st.rect.rows * st.rect.cols);
        each(s, st, stored_rows, what, t, [&](size_t e, int64_t id) {
            if (content[e] != 0 && content[e] != id && last_read[e] >= 0 && !(waits[st.slot] > last_read[e]))
                fail_msg("task %lld: %s copy overwrites data task %lld reads, without a wait", (long long)t, what,
                         (long long)last_read[e]);
            content[e] = id;
        });
    }

    void read(const Slots &s, const OperandStep &st, int64_t stored_rows, const char *what, int64_t t)
    {
        each(s, st, stored_rows, what, t, [&](size_t e, int64_t id) {
            if (content[e] != id)
                fail_msg("task %lld: %s element holds %lld, kernel needs %lld", (long long)t, what,
                         (long long)content[e], (long long)id);
            last_read[e] = static_cast<int32_t>(t);
        });
    }

    void operand(const Slots &s, const OperandStep &st, int64_t stored_rows, int64_t *waits, const char *what,
                 int64_t t)
    {
        if (s.cache == Cache::InPlace) {
            if (st.load)
                fail_msg("task %lld: in-place %s is loaded", (long long)t, what);
            return;
        }
        if (st.load)
            load(s, st, stored_rows, waits, what, t);
        read(s, st, stored_rows, what, t);
    }

    // Per cell of kTileQuantum x kTileQuantum of C (the last ones cut by
    // C's edge): where the next K range of a kernel on it must start.
    // Every part of C a task names starts and ends on this grid or at C's
    // edge.
    std::vector<int64_t> next_k;
    int64_t cell_rows = 0, cell_cols = 0;

    void cover(const Task &x, int64_t t)
    {
        const auto on_grid = [](int64_t at, int64_t extent) { return at % kTileQuantum == 0 || at == extent; };
        if (!on_grid(x.i0, r.m) || !on_grid(x.j0, r.n) || !on_grid(x.i0 + x.rows, r.m) || !on_grid(x.j0 + x.cols, r.n))
            fail_msg("task %lld: part (%lld, %lld) %lld x %lld is off the grid of quanta", (long long)t,
                     (long long)x.i0, (long long)x.j0, (long long)x.rows, (long long)x.cols);
        for (int64_t cj = x.j0 / kTileQuantum; cj * kTileQuantum < x.j0 + x.cols; ++cj)
            for (int64_t ci = x.i0 / kTileQuantum; ci * kTileQuantum < x.i0 + x.rows; ++ci) {
                int64_t &nk = next_k[static_cast<size_t>(ci + cj * cell_rows)];
                if (x.first != (nk == 0) || x.k0 != nk)
                    fail_msg("task %lld: K range starts at %lld on cell (%lld, %lld), expected %lld (first = %d)",
                             (long long)t, (long long)x.k0, (long long)ci, (long long)cj, (long long)nk, x.first);
                nk = x.k0 + x.depth;
                if (x.last != (nk == r.k) || nk > r.k)
                    fail_msg("task %lld: K range ends at %lld of %lld, last = %d", (long long)t, (long long)nk,
                             (long long)r.k, x.last);
                if (x.last)
                    nk = -1;  // done: no kernel may touch it again
            }
    }

    // The tiled schedule's order: tiles on the grid of mt x nt, cut only
    // by C's edge; the lead group's tiles take each chunk in turn, every
    // other tile runs its chunks back to back.
    void tiled_order(const Task &x, int64_t t, int64_t *open_tile)
    {
        if (x.i0 % p.mt != 0 || x.j0 % p.nt != 0 || x.rows != std::min(p.mt, r.m - x.i0) ||
            x.cols != std::min(p.nt, r.n - x.j0))
            fail_msg("task %lld: tile (%lld, %lld) %lld x %lld is off the grid", (long long)t, (long long)x.i0,
                     (long long)x.j0, (long long)x.rows, (long long)x.cols);
        const int64_t tile = x.i0 / p.mt + x.j0 / p.nt * p.mb;
        if (t >= p.lead * p.kb) {
            if (*open_tile >= 0 && *open_tile != tile)
                fail_msg("task %lld: tile %lld starts before tile %lld has all its chunks", (long long)t,
                         (long long)tile, (long long)*open_tile);
            *open_tile = x.last ? -1 : tile;
        } else if (t % p.lead != 0 && x.k0 != host_task(p, r, t - 1).k0) {
            fail_msg("task %lld: the lead group leaves a K chunk before all its tiles had it", (long long)t);
        }
    }

    void run()
    {
        const int64_t a_rows = r.trans_a ? r.k : r.m, b_rows = r.trans_b ? r.n : r.k;
        cell_rows = (r.m + kTileQuantum - 1) / kTileQuantum;
        cell_cols = (r.n + kTileQuantum - 1) / kTileQuantum;
        next_k.assign(static_cast<size_t>(cell_rows * cell_cols), 0);
        // The resident schedule keeps every host operand whole; the tiled
        // one has tile slots for host C.
        const auto kept = [this](const Slots &s, Cache host) {
            return s.cache == Cache::InPlace || s.cache == (p.resident ? Cache::Whole : host);
        };
        if (!kept(p.c, Cache::Tile) || (p.resident && (!kept(p.a, Cache::Whole) || !kept(p.b, Cache::Whole))))
            fail_msg("resident = %d, caches %d %d %d", p.resident, (int)p.a.cache, (int)p.b.cache, (int)p.c.cache);
        int64_t open_tile = -1;  // a tile after the lead group with chunks still to come
        for (int64_t t = 0; t < task_count(p); ++t) {
            const Task x = host_task(p, r, t);
            if (x.rows < 1 || x.cols < 1 || x.i0 < 0 || x.j0 < 0 || x.i0 + x.rows > r.m || x.j0 + x.cols > r.n)
                fail_msg("task %lld: part (%lld, %lld) %lld x %lld outside C", (long long)t, (long long)x.i0,
                         (long long)x.j0, (long long)x.rows, (long long)x.cols);
            if (r.k > 0 && x.depth < 1)
                fail_msg("task %lld: empty K range", (long long)t);
            if (!p.resident)
                tiled_order(x, t, &open_tile);
            cover(x, t);
            const Rect ra = r.trans_a ? Rect{x.k0, x.i0, x.depth, x.rows} : Rect{x.i0, x.k0, x.rows, x.depth};
            const Rect rb = r.trans_b ? Rect{x.j0, x.k0, x.cols, x.depth} : Rect{x.k0, x.j0, x.depth, x.cols};
            if (memcmp(&ra, &x.a.rect, sizeof ra) != 0 || memcmp(&rb, &x.b.rect, sizeof rb) != 0)
                fail_msg("task %lld: A or B rect does not match the part of C", (long long)t);

            operand(p.a, x.a, a_rows, wait_a, "A", t);
            operand(p.b, x.b, b_rows, wait_b, "B", t);

            if (p.c.cache == Cache::InPlace) {
                if (x.c.load)
                    fail_msg("task %lld: in-place C is loaded", (long long)t);
                continue;
            }
            if (x.c.load != (x.first && r.c_in))
                fail_msg("task %lld: C load = %d, first = %d, c_in = %d", (long long)t, x.c.load, x.first, r.c_in);
            if (x.c.slot < 0 || x.c.slot >= p.c.count)
                fail_msg("task %lld: C slot %d of %d", (long long)t, x.c.slot, p.c.count);
            if (p.c.cache == Cache::Whole) {
                // All of C has its place; a part's first kernel (or its
                // copy in) puts it there.
                if (x.c.reuse)
                    fail_msg("task %lld: a whole C waits for a slot", (long long)t);
                if (x.first) {
                    if (x.c.load)
                        moved += 4.0 * static_cast<double>(x.rows * x.cols);
                    each(p.c, x.c, r.m, "C", t, [&](size_t e, int64_t id) { content[e] = id; });
                }
                read(p.c, x.c, r.m, "C", t);
                if (x.last)
                    moved += 4.0 * static_cast<double>(x.rows * x.cols);
                continue;
            }
            const int64_t tile = x.i0 / p.mt + x.j0 / p.nt * p.mb;
            const size_t slot = static_cast<size_t>(x.c.slot);
            if (x.first) {
                // The slot's previous tile must have been copied out before
                // anything writes the slot, and the executor waits for that
                // copy only when `reuse` says so.
                if (holder_c[slot] >= 0)
                    fail_msg("task %lld: C slot %d still holds tile %lld", (long long)t, x.c.slot,
                             (long long)holder_c[slot]);
                if (stored_c[slot] >= 0 && !x.c.reuse)
                    fail_msg("task %lld: C slot %d reused without a wait", (long long)t, x.c.slot);
                if (x.c.reuse)
                    wait_c[slot] = t;
                holder_c[slot] = tile;
                if (x.c.load)
                    moved += 4.0 * static_cast<double>(x.rows * x.cols);
                each(p.c, x.c, r.m, "C", t, [&](size_t e, int64_t id) { content[e] = id; });
            }
            if (holder_c[slot] != tile)
                fail_msg("task %lld: C slot %d holds tile %lld, not %lld", (long long)t, x.c.slot,
                         (long long)holder_c[slot], (long long)tile);
            read(p.c, x.c, r.m, "C", t);
            if (x.last) {
                stored_c[slot] = t;
                holder_c[slot] = -1;
                moved += 4.0 * static_cast<double>(x.rows * x.cols);
            }
        }
        // Every cell of C had all of K, in order, exactly once.
        for (size_t e = 0; e < next_k.size(); ++e)
            if (next_k[e] != -1)
                fail_msg("cell %zu of C ends at K %lld", e, (long long)next_k[e]);
        if (p.mb != (r.m + p.mt - 1) / p.mt || p.nb != (r.n + p.nt - 1) / p.nt)
            fail_msg("%lld x %lld tiles do not cover C", (long long)p.mb, (long long)p.nb);
        if (moved != p.link_bytes)
            fail_msg("the schedule copies %.0f bytes, the plan says %.0f", moved, p.link_bytes);
    }
};

// Layout of the arena: slots of A, then B, then C, never overlapping.
void check_layout(const HostPlan &p)
{
    const Slots *all[] = {&p.a, &p.b, &p.c};
    int64_t end = 0;
    for (const Slots *s : all) {
        if (s->cache == Cache::InPlace) {
            assert_int_equal(s->count, 0);
            continue;
        }
        // Two slots (double buffering), one whole copy, or for C with a
        // lead group one per lead tile and two more.
        assert_true(s->count >= 1 && s->count <= (s == &p.c ? std::max<int64_t>(2, p.lead + 2) : 2));
        if (s->cache == Cache::Whole)
            assert_int_equal(s->count, 1);
        assert_true(s->offset >= end);
        assert_int_equal(s->offset % kSlotAlign, 0);
        assert_int_equal(s->stride % kSlotAlign, 0);
        end = s->offset + s->count * s->stride;
    }
    assert_true(end <= p.arena_elems);
}

void replay(const PlanRequest &r, const HostPlan &p)
{
    check_layout(p);
    if (arena_bytes(p) > r.budget)
        fail_msg("plan takes %llu bytes, budget %llu", (unsigned long long)arena_bytes(p),
                 (unsigned long long)r.budget);
    Replay rp(r, p);
    rp.run();
}

// ---------------------------------------------------------------- plans for the benchmark shapes

// Bytes task x copies in before its kernel.
double loaded_bytes(const Task &x)
{
    double b = 0;
    for (const OperandStep *s : {&x.a, &x.b, &x.c})
        if (s->load)
            b += 4.0 * static_cast<double>(s->rect.rows * s->rect.cols);
    return b;
}

void test_plan_8192_cube(void **)
{
    // With the device memory for all of A, B and C (768 MiB): the resident
    // schedule.
    PlanRequest r = request(8192, 8192, 8192);
    HostPlan p = must_plan(r);
    assert_true(p.resident);
    assert_int_equal(p.mt, 2048);
    assert_int_equal(p.nt, 2048);
    assert_int_equal(p.kt, 2048);
    assert_true(p.rows_outer);
    assert_true(p.a.cache == Cache::Whole && p.b.cache == Cache::Whole && p.c.cache == Cache::Whole);
    assert_int_equal(arena_bytes(p), 768 * kMiB);
    assert_true(p.link_bytes == 3.0 * 256 * kMiB);
    assert_int_equal(p.open_depth, 512);
    assert_int_equal(p.open_blocks, 4);
    // Three rows of four tiles in the lead: 12 kernels for 7 chunks per K
    // step (two rows: 8 for 6, under kLeadFeed).
    assert_int_equal(p.lead, 12);
    // 16 kernels of the opening, 4 steps of the lead's 12 tiles, and the
    // last row, after the lead, in one kernel cut into 5: 69 kernels.
    assert_int_equal(task_count(p), 69);
    replay(r, p);

    // The first kernel waits for a 2048 x 512 slice of A and one of B:
    // 8 MiB, not the 32 MiB of a chunk of each.
    Task x = host_task(p, r, 0);
    assert_true(x.i0 == 0 && x.j0 == 0 && x.rows == 2048 && x.cols == 2048 && x.k0 == 0 && x.depth == 512);
    assert_true(loaded_bytes(x) == 8.0 * kMiB);
    // The opening: every tile's [0, 512), squares growing from (0, 0); a
    // slice of A loads at a row's first tile (column 0), of B at a column's
    // (row 0); after s * s tasks the s x s corner is done.
    const int64_t corner[][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}, {2, 0}, {2, 1}, {0, 2}, {1, 2}, {2, 2}};
    for (int64_t t = 0; t < 16; ++t) {
        x = host_task(p, r, t);
        if (t < 9)
            assert_true(x.i0 == corner[t][0] * 2048 && x.j0 == corner[t][1] * 2048);
        assert_true(x.rows == 2048 && x.cols == 2048 && x.k0 == 0 && x.depth == 512 && x.first && !x.last);
        assert_int_equal(x.a.load, x.j0 == 0);
        assert_int_equal(x.b.load, x.i0 == 0);
        assert_true(std::max(x.i0, x.j0) / 2048 == static_cast<int64_t>(std::sqrt(static_cast<double>(t))));
    }
    // The lead: rows 0 to 2, K steps [512, 2048), [2048, 4096), ...,
    // column by column; its last step finishes its tiles.
    const int64_t steps[][2] = {{512, 2048}, {2048, 4096}, {4096, 6144}, {6144, 8192}};
    for (int64_t t = 16; t < 64; ++t) {
        x = host_task(p, r, t);
        const int64_t u = t - 16;
        assert_int_equal(x.k0, steps[u / 12][0]);
        assert_int_equal(x.k0 + x.depth, steps[u / 12][1]);
        assert_int_equal(x.i0, u % 3 * 2048);
        assert_int_equal(x.j0, u % 12 / 3 * 2048);
        assert_int_equal(x.a.load, x.j0 == 0);
        assert_int_equal(x.b.load, x.i0 == 0);
        assert_int_equal(x.last, u >= 36);
    }
    // Row 3, all of B there, in one kernel of 2048 x 8192 x 7680, cut: two
    // tiles (loading the rest of its A panel), one tile, then the last tile
    // in parts of 1024, 512 and 512 rows. The last kernel leaves 4 MiB of
    // C to copy out.
    const int64_t cut[][4] = {{6144, 0, 2048, 4096}, {6144, 4096, 2048, 2048}, {6144, 6144, 1024, 2048},
                              {7168, 6144, 512, 2048}, {7680, 6144, 512, 2048}};
    for (int64_t t = 64; t < 69; ++t) {
        x = host_task(p, r, t);
        assert_true(x.i0 == cut[t - 64][0] && x.j0 == cut[t - 64][1] && x.rows == cut[t - 64][2] &&
                    x.cols == cut[t - 64][3]);
        assert_true(x.k0 == 512 && x.depth == 7680 && x.last && x.a.load == (t == 64) && !x.b.load);
    }
    assert_true(loaded_bytes(host_task(p, r, 64)) == 4.0 * 2048 * 7680);
    assert_true(4.0 * static_cast<double>(x.rows * x.cols) == 4.0 * kMiB);

    // 16384^3: 8 x 8 tiles; two rows make 16 kernels per 10 chunks, enough
    // for the lead; its 8 steps, then the six rows after it each in one
    // kernel of 2048 x 16384 x 15872, the last one cut into runs of 4, 2
    // and 1 tiles and 3 parts: 64 + 8 * 16 + 5 + 6 = 203 kernels, not 512.
    r = request(16384, 16384, 16384);
    p = must_plan(r);
    assert_true(p.resident);
    assert_int_equal(p.lead, 16);
    assert_int_equal(task_count(p), 203);
    x = host_task(p, r, 64 + 8 * 16);
    assert_true(x.i0 == 4096 && x.j0 == 0 && x.rows == 2048 && x.cols == 16384 && x.k0 == 512 && x.last);
    replay(r, p);
    r = request(8192, 8192, 8192);

    // Below 768 MiB: the tiled schedule, A and B whole, the first two rows
    // of tiles (8) K-outer, each in its own C slot, two more slots for the
    // rest: 672 MiB.
    r.budget = 767 * kMiB;
    p = must_plan(r);
    assert_false(p.resident);
    assert_int_equal(task_count(p), 64);
    assert_true(p.rows_outer);
    assert_true(p.a.cache == Cache::Whole && p.b.cache == Cache::Whole);
    assert_int_equal(p.lead, 8);
    assert_true(p.c.cache == Cache::Tile);
    assert_int_equal(p.c.count, 10);
    assert_int_equal(arena_bytes(p), 672 * kMiB);
    // A, B and C each cross once.
    assert_true(p.link_bytes == 3.0 * 256 * kMiB);
    replay(r, p);

    // The order: chunk 0 of tiles (0,0) .. (1,3), chunk 1 of them, ...; A
    // chunks load at column 0, B chunks in row 0; then tile (2,0) chunk by
    // chunk, loading its A panel, and so on without loads of B.
    int loads_a = 0, loads_b = 0;
    for (int64_t t = 0; t < 32; ++t) {
        const Task x = host_task(p, r, t);
        assert_int_equal(x.k0, (t / 8) * 2048);
        assert_int_equal(x.i0, (t % 8) / 4 * 2048);
        assert_int_equal(x.j0, t % 4 * 2048);
        assert_int_equal(x.last, t >= 24);
        assert_int_equal(x.a.load, x.j0 == 0);
        assert_int_equal(x.b.load, x.i0 == 0);
        loads_a += x.a.load;
        loads_b += x.b.load;
    }
    assert_int_equal(loads_a, 8);
    assert_int_equal(loads_b, 16);
    for (int64_t t = 32; t < 64; ++t) {
        const Task x = host_task(p, r, t);
        assert_int_equal(x.i0, (2 + (t - 32) / 16) * 2048);
        assert_int_equal(x.j0, (t - 32) / 4 % 4 * 2048);
        assert_int_equal(x.k0, t % 4 * 2048);
        assert_int_equal(x.a.load, x.j0 == 0);
        assert_false(x.b.load);
        // Slots 8 and 9 first, then the lead group's, freed in order.
        const int64_t tile = 8 + (t - 32) / 4;
        assert_int_equal(x.c.slot, tile % 10);
        assert_int_equal(x.c.reuse, x.first && tile >= 10);
    }

    // Below 672 MiB: A panels instead of all of A, tile by tile (416 MiB).
    r.budget = 671 * kMiB;
    p = must_plan(r);
    assert_int_equal(p.lead, 0);
    assert_true(p.a.cache == Cache::Panel && p.b.cache == Cache::Whole);
    assert_int_equal(p.a.count, 2);
    assert_int_equal(p.c.count, 2);
    assert_int_equal(arena_bytes(p), 416 * kMiB);
    assert_true(p.link_bytes == 3.0 * 256 * kMiB);
    replay(r, p);
}

void test_plan_benchmark_shapes(void **)
{
    // 4096^3: 2 x 2 tiles, two K chunks: too few for a lead group; A
    // panels and all of B.
    PlanRequest r = request(4096, 4096, 4096);
    HostPlan p = must_plan(r);
    assert_true(p.a.cache == Cache::Panel && p.b.cache == Cache::Whole);
    assert_int_equal(p.lead, 0);
    assert_int_equal(task_count(p), 8);
    assert_int_equal(arena_bytes(p), 160 * kMiB);
    replay(r, p);

    // 4096 x 4096 x 16384: eight K chunks, the resident schedule; both rows
    // of tiles are the lead: 4 kernels of the opening, 8 steps of 4, the
    // last tile's last step in 3 parts.
    r = request(4096, 4096, 16384);
    p = must_plan(r);
    assert_true(p.resident);
    assert_true(p.a.cache == Cache::Whole && p.b.cache == Cache::Whole && p.c.cache == Cache::Whole);
    assert_int_equal(p.lead, 4);
    assert_int_equal(task_count(p), 4 + 8 * 4 - 1 + 3);
    assert_int_equal(arena_bytes(p), (256 + 256 + 64) * kMiB);
    replay(r, p);

    // Only C on the host: tile by tile, two slots (a lead group would only
    // bunch the copies of C together).
    r = request(8192, 8192, 8192, false);
    r.c_host = true;
    p = must_plan(r);
    assert_int_equal(p.lead, 0);
    assert_int_equal(p.c.count, 2);
    replay(r, p);

    // 16384 x 16384 x 1024: one K chunk; the 1 GiB C streams out tile by tile.
    r = request(16384, 16384, 1024);
    p = must_plan(r);
    assert_int_equal(p.kb, 1);
    assert_true(p.a.cache == Cache::Panel && p.b.cache == Cache::Whole);
    assert_true(p.link_bytes == 4.0 * (16384.0 * 1024 * 2 + 16384.0 * 16384));
    replay(r, p);

    // 2048 x 2048 x 32768: one tile, 16 K chunks: the resident schedule
    // (its first kernel after 8 MiB, its last on a quarter of the tile);
    // with less memory, double-buffered chunks of A and B, which move as
    // few bytes as caching and take the least memory.
    r = request(2048, 2048, 32768);
    p = must_plan(r);
    assert_true(p.resident);
    assert_int_equal(arena_bytes(p), (256 + 256 + 16) * kMiB);
    assert_true(loaded_bytes(host_task(p, r, 0)) == 8.0 * kMiB);
    assert_int_equal(host_task(p, r, task_count(p) - 1).rows, 512);
    replay(r, p);
    r.budget = 527 * kMiB;
    p = must_plan(r);
    assert_int_equal(p.mb * p.nb, 1);
    assert_int_equal(p.kb, 16);
    assert_true(p.a.cache == Cache::Chunk && p.b.cache == Cache::Chunk);
    assert_int_equal(arena_bytes(p), 80 * kMiB);
    assert_true(p.link_bytes == 4.0 * (2.0 * 2048 * 32768 + 2048.0 * 2048));
    replay(r, p);
}

// The resident schedule's rules, on shapes around the benchmark's: which
// plans take it, the opening (small first step, every tile or, when C is
// read, the lead's), the lead, the rest (one kernel per outer block, all
// its K), the cut (the last kernel on a small part of C), and fewer
// kernels than the tiled schedule where two outer blocks or more follow
// the lead (with one, the opening and the cut add about as many kernels as
// that block saves).
void test_plan_resident(void **)
{
    const int64_t shapes[][3] = {{8192, 8192, 8192},  {12000, 9000, 7000}, {16384, 4096, 8192},
                                 {4096, 16384, 8192}, {20000, 20000, 8192}, {6144, 6144, 8192},
                                 {3000, 2500, 9000},  {100, 30000, 9000},  {8192, 8192, 6145}};
    for (const auto &d : shapes)
        for (int variant = 0; variant < 8; ++variant) {
            PlanRequest r = request(d[0], d[1], d[2]);
            r.trans_a = variant & 1;
            r.trans_b = variant & 2;
            r.c_in = variant & 4;
            const HostPlan p = must_plan(r);
            if (!p.resident)
                fail_msg("%lld x %lld x %lld: not resident", (long long)d[0], (long long)d[1], (long long)d[2]);
            replay(r, p);
            const int64_t outer = p.rows_outer ? p.mb : p.nb, inner = p.rows_outer ? p.nb : p.mb;
            assert_true(outer <= inner);
            assert_int_equal(p.open_depth, p.kt / kOpenDivisor);
            // The lead: kLeadBlocks outer blocks, more (up to all but one,
            // and only when C is not read) until its steps feed kLeadFeed
            // kernels per chunk.
            const int64_t leads = p.lead / inner;
            assert_int_equal(p.lead % inner, 0);
            assert_true(leads >= std::min<int64_t>(outer, kLeadBlocks) && leads <= outer);
            const auto feeds = [inner](int64_t l) {
                return static_cast<double>(l * inner) >= kLeadFeed * static_cast<double>(l + inner);
            };
            if (leads > kLeadBlocks)
                assert_true(!r.c_in && !feeds(leads - 1) && leads <= outer - 1);
            if (leads < outer - 1 && !r.c_in)
                assert_true(leads == kLeadBlocks || feeds(leads));
            assert_int_equal(p.open_blocks, r.c_in ? leads : outer);
            // The first kernel waits for a slice of A and of B (and its C).
            const Task first = host_task(p, r, 0);
            assert_true(first.i0 == 0 && first.j0 == 0 && first.depth == p.open_depth);
            assert_true(loaded_bytes(first) <=
                        4.0 * static_cast<double>((p.mt + p.nt) * p.open_depth + (r.c_in ? p.mt * p.nt : 0)));
            // Kernels over a whole outer block and all of its K not yet done.
            int64_t whole_blocks = 0;
            for (int64_t t = 0; t < task_count(p); ++t) {
                const Task x = host_task(p, r, t);
                const int64_t extent = p.rows_outer ? x.cols : x.rows;
                whole_blocks += extent == (p.rows_outer ? r.n : r.m) && x.last && x.depth >= r.k - p.open_depth;
            }
            const int64_t rest = outer - leads;
            assert_int_equal(whole_blocks, rest > 0 ? rest - 1 : 0);
            if (rest >= 2)
                assert_true(task_count(p) < p.mb * p.nb * p.kb);
            // The last kernel: at most a quarter of a tile where its outer
            // side has four quanta, else at most a tile.
            const Task last = host_task(p, r, task_count(p) - 1);
            const int64_t side = p.rows_outer ? std::min(p.mt, r.m - (p.mb - 1) * p.mt)
                                              : std::min(p.nt, r.n - (p.nb - 1) * p.nt);
            assert_true(last.last && last.rows * last.cols <= p.mt * p.nt / (side >= 4 * kTileQuantum ? 4 : 1));
        }

    // K of fewer than four chunks, or only C on the host: the tiled
    // schedule.
    assert_false(must_plan(request(8192, 8192, 6144)).resident);
    PlanRequest r = request(8192, 8192, 8192, false);
    r.c_host = true;
    assert_false(must_plan(r).resident);
    // A alone on the host: A whole, B and C in place, the opening over
    // every tile.
    r = request(8192, 8192, 8192, false);
    r.a_host = true;
    HostPlan p = must_plan(r);
    assert_true(p.resident && p.a.cache == Cache::Whole && p.b.cache == Cache::InPlace && p.c.cache == Cache::InPlace);
    assert_int_equal(arena_bytes(p), 256 * kMiB);
    replay(r, p);
}

// A budget below the preferred plan: the same tiles, fewer bytes cached,
// and never more than the budget.
void test_plan_budget_limits(void **)
{
    PlanRequest r = request(8192, 8192, 8192);
    r.budget = 350 * kMiB;
    HostPlan p = must_plan(r);
    assert_int_equal(p.mt, 2048);
    assert_true(arena_bytes(p) <= r.budget);
    assert_true(p.link_bytes == 4.0 * 8192 * 8192 * 6);  // one operand crosses four times
    replay(r, p);

    // 64 MiB: tiles shrink, K chunks first.
    r.budget = 64 * kMiB;
    p = must_plan(r);
    assert_true(arena_bytes(p) <= r.budget);
    assert_true(p.kt < 2048);
    replay(r, p);
}

// Device operands are read in place; only what is host memory gets slots.
void test_plan_mixed_operands(void **)
{
    PlanRequest r = request(3000, 2500, 2100, false);
    r.c_host = true;
    r.c_in = true;
    HostPlan p = must_plan(r);
    assert_true(p.a.cache == Cache::InPlace && p.b.cache == Cache::InPlace && p.c.cache == Cache::Tile);
    assert_true(p.link_bytes == 4.0 * 3000 * 2500 * 2);
    replay(r, p);

    r = request(3000, 2500, 2100, false);
    r.a_host = true;
    r.trans_a = true;
    p = must_plan(r);
    assert_true(p.a.cache != Cache::InPlace && p.b.cache == Cache::InPlace && p.c.cache == Cache::InPlace);
    replay(r, p);

    // k == 0 (or alpha == 0): A and B are never read, only C moves.
    r = request(3000, 2500, 0);
    r.c_in = true;
    p = must_plan(r);
    assert_true(p.a.cache == Cache::InPlace && p.b.cache == Cache::InPlace);
    assert_int_equal(p.kb, 1);
    replay(r, p);
}

void test_plan_degenerate(void **)
{
    const int64_t dims[][3] = {{1, 1, 1}, {1, 5000, 3000}, {5000, 1, 3000}, {4000, 3000, 1}, {1, 1, 70000}, {7, 3, 0}};
    for (const auto &d : dims)
        for (int trans = 0; trans < 4; ++trans) {
            PlanRequest r = request(d[0], d[1], d[2]);
            r.trans_a = trans & 1;
            r.trans_b = trans & 2;
            r.c_in = true;
            const HostPlan p = must_plan(r);
            replay(r, p);
        }
}

// The smallest plan has 32 x 32 tiles and 32-deep chunks; below its size
// the planner says no, with the size it needs, rather than loop.
void test_plan_too_small(void **)
{
    PlanRequest r = request(300, 300, 300);
    HostPlan p;
    uint64_t need = 0;
    r.budget = 0;
    assert_false(plan_host(r, &p, &need));
    // Two slots each of 32 x 32 for A, B and C.
    assert_int_equal(need, 6 * 32 * 32 * 4);
    r.budget = need - 1;
    assert_false(plan_host(r, &p, &need));
    r.budget = need;
    p = must_plan(r);
    assert_int_equal(p.mt, 32);
    assert_int_equal(p.nt, 32);
    assert_int_equal(p.kt, 32);
    replay(r, p);

    // Halving the budget after a failed allocation always ends.
    r = request(5000, 4000, 3000);
    r.budget = kUnlimited;
    int rounds = 0;
    while (plan_host(r, &p, &need)) {
        assert_true(arena_bytes(p) <= r.budget);
        r.budget = arena_bytes(p) / 2;
        assert_true(++rounds < 64);
    }
    assert_true(need > r.budget);
}

// Random shapes, operands, transposes and budgets, each schedule replayed.
// With `small_sizes`, the preferred tiles and chunks are 32 to 96 instead of
// 2048, so that the schedules of large products (several tiles and chunks,
// lead groups) are replayed element by element; returns the plans with a
// lead group.
int random_schedules(bool small_sizes, uint64_t seed)
{
    std::mt19937_64 rng(seed);
    int planned = 0, led = 0;
    for (int i = 0; i < 3000; ++i) {
        PlanRequest r;
        if (small_sizes) {
            r.tile_side = 32 * (1 + static_cast<int64_t>(rng() % 3));
            r.chunk_depth = 32 * (1 + static_cast<int64_t>(rng() % 3));
            r.chunk_floor = 32;
        }
        r.m = 1 + static_cast<int64_t>(rng() % 150);
        r.n = 1 + static_cast<int64_t>(rng() % 150);
        r.k = rng() % 10 == 0 ? 0 : 1 + static_cast<int64_t>(rng() % 150);
        const bool large = rng() % 8 == 0;
        if (large) {  // beyond the preferred sizes, mostly replayed by geometry
            r.m *= 29;
            r.n *= 31;
            r.k *= 37;
        }
        r.trans_a = rng() & 1;
        r.trans_b = rng() & 1;
        r.a_host = rng() & 1;
        r.b_host = rng() & 1;
        r.c_host = rng() & 1;
        r.c_in = r.c_host && (rng() & 1);
        // Budgets log-uniform up to plenty; from nothing for small shapes,
        // from 1/64 of the operands' size for large ones (tiny tiles on a
        // large shape make millions of tasks).
        const double full = 4.0 * static_cast<double>(r.m * r.k + r.k * r.n + r.m * r.n) + 4096.0;
        const double lo = large ? full / 64.0 : 1.0;
        r.budget = static_cast<uint64_t>(
            std::exp(std::uniform_real_distribution<double>(std::log(lo), std::log(3.0 * full))(rng)));
        HostPlan p;
        uint64_t need = 0;
        if (!plan_host(r, &p, &need)) {
            if (need <= r.budget)
                fail_msg("case %d: no plan, yet %llu bytes would do within %llu", i, (unsigned long long)need,
                         (unsigned long long)r.budget);
            continue;
        }
        ++planned;
        led += p.lead > 0;
        replay(r, p);
    }
    assert_true(planned > 1000);
    return led;
}

void test_plan_random_schedules(void **)
{
    random_schedules(false, 20261122);
    const int led = random_schedules(true, 20261123);
    std::printf("    %d of the plans with small preferred sizes have a lead group\n", led);
    assert_true(led > 50);
}

// ---------------------------------------------------------------- host copy

void check_copy(int64_t rows, int64_t cols, int64_t sld, int64_t dld)
{
    std::vector<float> src(static_cast<size_t>(sld * cols)), dst(static_cast<size_t>(dld * cols), -1.0f);
    for (size_t i = 0; i < src.size(); ++i)
        src[i] = static_cast<float>(i % 1000003);
    host_copy(dst.data(), dld, src.data(), sld, rows, cols);
    for (int64_t c = 0; c < cols; ++c)
        for (int64_t r = 0; r < dld; ++r) {
            const float want = r < rows ? src[static_cast<size_t>(r + c * sld)] : -1.0f;
            if (dst[static_cast<size_t>(r + c * dld)] != want)
                fail_msg("host_copy %lld x %lld: element (%lld, %lld) wrong", (long long)rows, (long long)cols,
                         (long long)r, (long long)c);
        }
}

void test_host_copy(void **)
{
    check_copy(5, 3, 7, 5);           // small: the calling thread alone
    check_copy(3000, 700, 3001, 3004); // over the threads, pieces crossing columns
    check_copy(1, 300000, 2, 1);      // a row: 300000 columns of one element
    check_copy(2000000, 1, 2000000, 2000003);
    // Back to back, as a call's pieces come, with the workers still polling.
    for (int i = 0; i < 20; ++i)
        check_copy(1 << 11, 300 + i, (1 << 11) + 5, 1 << 11);
    // Several callers at once share the pool.
    std::vector<std::thread> th;
    for (int i = 0; i < 6; ++i)
        th.emplace_back([i] { check_copy(1000 + i, 900, 1000 + i + 3, 1000 + i); });
    for (std::thread &t : th)
        t.join();
}

// The parts a copy records for TGEMM_HOST_TRACE: they cover the block once,
// each on a thread of the pool, in time order within a thread.
void test_host_copy_parts(void **)
{
    // TGEMM_HOST_COPY_THREADS when set (make test-host-plan runs it so),
    // else up to kCopyThreads.
    const int threads = host_copy_threads();
    if (const char *e = std::getenv("TGEMM_HOST_COPY_THREADS"))
        assert_int_equal(threads, std::atoi(e));
    else
        assert_true(threads >= 1 && threads <= kCopyThreads);
    const int64_t rows = 3000, cols = 1500;  // 18 MB: parts of at least 256 KiB, up to four per thread
    std::vector<float> src(static_cast<size_t>(rows * cols)), dst(src.size());
    for (size_t i = 0; i < src.size(); ++i)
        src[i] = static_cast<float>(i);
    std::vector<CopyPart> parts;
    host_copy(dst.data(), rows, src.data(), rows, rows, cols, &parts);
    assert_true(dst == src);
    assert_int_equal(parts.size(), std::min<int64_t>(4 * threads, rows * cols / 65536));
    int64_t elems = 0;
    for (const CopyPart &p : parts) {
        assert_true(p.thread >= 0 && p.thread < threads);
        assert_true(p.begin_ns > 0 && p.end_ns >= p.begin_ns);
        assert_true(p.elems >= 65536);
        elems += p.elems;
    }
    assert_int_equal(elems, rows * cols);
    // Below 1 MiB the calling thread copies alone: one part, thread 0.
    host_copy(dst.data(), 100, src.data(), 100, 100, 100, &parts);
    assert_int_equal(parts.size(), 1);
    assert_int_equal(parts[0].thread, 0);
    assert_int_equal(parts[0].elems, 10000);
    // Nothing to copy, nothing recorded.
    host_copy(dst.data(), 1, src.data(), 1, 0, 5, &parts);
    assert_int_equal(parts.size(), 0);
}

// ---------------------------------------------------------------- TGEMM_HOST_TRACE

void test_trace_format(void **)
{
    assert_string_equal(trace_header(),
                        "call,event,task,tile_row,tile_col,chunk,operand,thread,bytes,start_us,end_us,detail\n");
    TraceRow r;
    r.event = TraceEvent::StageIn;
    r.task = 12;
    r.tile_row = 1;
    r.tile_col = 3;
    r.chunk = 2;
    r.operand = 'B';
    r.bytes = 16777216;
    r.start_us = 1234.5678;
    r.end_us = 1800.25;
    assert_string_equal(format_trace_row(3, r).c_str(), "3,stage_in,12,1,3,2,B,-1,16777216,1234.568,1800.250,\n");
    r = TraceRow();
    r.event = TraceEvent::CopyPart;
    r.thread = 11;
    r.bytes = 1 << 20;
    assert_string_equal(format_trace_row(1, r).c_str(), "1,copy_part,-1,-1,-1,-1,-,11,1048576,0.000,0.000,\n");
    r = TraceRow();
    r.end_us = 36975;
    r.detail = "m=8192 n=8192 k=8192 A=pageable";
    assert_string_equal(format_trace_row(18446744073709551615ull, r).c_str(),
                        "18446744073709551615,call,-1,-1,-1,-1,-,-1,0,0.000,36975.000,m=8192 n=8192 k=8192 A=pageable\n");
    // A detail with a comma or a quote is quoted, its quotes doubled.
    r.detail = "a,b \"c\"";
    assert_string_equal(format_trace_row(2, r).c_str(),
                        "2,call,-1,-1,-1,-1,-,-1,0,0.000,36975.000,\"a,b \"\"c\"\"\"\n");
    // Every event has its name.
    const TraceEvent all[] = {TraceEvent::Call,    TraceEvent::StageIn,    TraceEvent::StageOut,
                              TraceEvent::CopyPart, TraceEvent::WaitBuffer, TraceEvent::WaitOut,
                              TraceEvent::WaitEnd, TraceEvent::H2D,        TraceEvent::Kernel,
                              TraceEvent::D2H};
    std::set<std::string> names;
    for (TraceEvent e : all)
        names.insert(trace_event_name(e));
    assert_int_equal(names.size(), sizeof all / sizeof all[0]);
    assert_int_equal(names.count("?"), 0);
}

std::string read_all(const char *path)
{
    std::string s;
    FILE *f = std::fopen(path, "r");
    if (f == nullptr)
        return s;
    char buf[512];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
        s.append(buf, n);
    std::fclose(f);
    return s;
}

// The file gets the header once, then each call's rows as they come; a
// path that cannot be opened says why.
void test_trace_file(void **)
{
    char dir[] = "/tmp/tgemm-trace-XXXXXX";
    assert_non_null(mkdtemp(dir));
    const std::string path = std::string(dir) + "/trace.csv";
    std::string error;
    int fd = open_trace(path.c_str(), &error);
    assert_true(fd >= 0);
    assert_true(append_trace(fd, "1,call\n", &error));
    assert_true(append_trace(fd, "2,call\n", &error));
    close(fd);
    // Opened again (another process, a later run): appends, no second header.
    fd = open_trace(path.c_str(), &error);
    assert_true(fd >= 0);
    assert_true(append_trace(fd, "1,kernel\n", &error));
    close(fd);
    assert_string_equal(read_all(path.c_str()).c_str(), (std::string(trace_header()) + "1,call\n2,call\n1,kernel\n").c_str());
    struct stat st;
    assert_int_equal(stat(path.c_str(), &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644 & ~[] { const mode_t m = umask(0); umask(m); return m; }());
    // Several threads at once: every block whole, the header once.
    fd = open_trace(path.c_str(), &error);
    std::vector<std::thread> th;
    for (int t = 0; t < 8; ++t)
        th.emplace_back([fd, t] {
            std::string e, block;
            for (int i = 0; i < 50; ++i)
                block += std::to_string(t) + ",row," + std::to_string(i) + "\n";
            for (int i = 0; i < 20; ++i)
                append_trace(fd, block, &e);
        });
    for (std::thread &x : th)
        x.join();
    close(fd);
    const std::string all = read_all(path.c_str());
    size_t header = 0, lines = 0;
    for (size_t at = 0; (at = all.find('\n', at)) != std::string::npos; ++at)
        ++lines;
    for (size_t at = 0; (at = all.find("call,event", at)) != std::string::npos; ++at)
        ++header;
    assert_int_equal(header, 1);
    assert_int_equal(lines, 4 + 8 * 20 * 50);
    std::remove(path.c_str());
    rmdir(dir);

    const std::string missing = std::string(dir) + "/no/such/dir/trace.csv";
    error.clear();
    assert_int_equal(open_trace(missing.c_str(), &error), -1);
    assert_non_null(std::strstr(error.c_str(), "cannot be opened for appending"));
    assert_non_null(std::strstr(error.c_str(), "No such file or directory"));
    // A descriptor that cannot be written.
    assert_false(append_trace(-1, "x\n", &error));
    assert_true(!error.empty());
}

// ---------------------------------------------------------------- TGEMM_DEVICE_MEMORY_LIMIT

void test_parse_bytes(void **)
{
    const struct {
        const char *text;
        uint64_t bytes;
    } good[] = {
        {"1", 1}, {"4096", 4096}, {"64K", 64 << 10}, {"64k", 64 << 10}, {"512M", 512 * kMiB},
        {"2G", 2048 * kMiB}, {"1t", uint64_t{1} << 40}, {"16777215T", uint64_t{16777215} << 40},
        {"18446744073709551615", UINT64_MAX},
    };
    for (const auto &g : good) {
        uint64_t v = 0;
        if (!parse_bytes(g.text, &v) || v != g.bytes)
            fail_msg("'%s' -> %llu, want %llu", g.text, (unsigned long long)v, (unsigned long long)g.bytes);
    }
    const char *bad[] = {"", "0", "0K", "-1", "+5", "abc", "12Q", "1.5G", "1KB", "1 ", " 1", "K",
                         "18446744073709551616", "16777216T", "99999999999999999999G"};
    for (const char *b : bad) {
        uint64_t v = 7;
        if (parse_bytes(b, &v) || v != 7)
            fail_msg("'%s' was accepted", b);
    }
}

// Trace file names: %p, %r and %% (TGEMM_TRACE, TGEMM_HOST_TRACE).
void test_trace_names(void **)
{
    const struct {
        const char *name, *rank, *want;
    } cases[] = {
        {"/tmp/t.csv", "3", "/tmp/t.csv"},   {"/tmp/t.%p.csv", "3", "/tmp/t.4321.csv"},
        {"t.%r", "12", "t.12"},              {"t.%r", nullptr, "t.0"},
        {"t.%r", "", "t.0"},                 {"%r-%p-%%p", "5", "5-4321-%p"},
        {"100%", "1", "100%"},               {"a%xb", "1", "a%xb"},
        {"%%%r%%", "9", "%9%"},
    };
    for (const auto &c : cases) {
        const std::string got = tgemm::expand_trace_name(c.name, 4321, c.rank);
        if (got != c.want)
            fail_msg("'%s' (rank %s) -> '%s', want '%s'", c.name, c.rank ? c.rank : "unset", got.c_str(), c.want);
    }
}

}  // namespace

// With an argument, only the tests it names (a cmocka filter: * and ? match).
int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_8192_cube),      cmocka_unit_test(test_plan_benchmark_shapes),
        cmocka_unit_test(test_plan_resident),
        cmocka_unit_test(test_plan_budget_limits),  cmocka_unit_test(test_plan_mixed_operands),
        cmocka_unit_test(test_plan_degenerate),     cmocka_unit_test(test_plan_too_small),
        cmocka_unit_test(test_plan_random_schedules), cmocka_unit_test(test_host_copy),
        cmocka_unit_test(test_host_copy_parts),     cmocka_unit_test(test_trace_format),
        cmocka_unit_test(test_trace_file),          cmocka_unit_test(test_parse_bytes),
        cmocka_unit_test(test_trace_names),
    };
    return cmocka_run_group_tests_name("tgemm_host_plan", tests, nullptr, nullptr) ? 1 : 0;
}
