#include "driver/host_plan.hpp"

#include <algorithm>
#include <cmath>

#include "core/math.hpp"

namespace tgemm {
namespace {

int64_t round_up(int64_t a, int64_t q)
{
    return ceil_div(a, q) * q;
}

// Half a tile side or chunk depth, rounded up to the quantum; smaller than
// v for every v > kTileQuantum.
int64_t half(int64_t v)
{
    return round_up(ceil_div(v, 2), kTileQuantum);
}

// Leading dimension of a device copy with `rows` stored rows.
int64_t device_ld(int64_t rows)
{
    return rows <= kLdAlign ? rows : round_up(rows, kLdAlign);
}

struct Sizes {
    int64_t mt, nt, kt;
};

Sizes preferred_sizes(const PlanRequest &r)
{
    Sizes s;
    const int64_t side = r.tile_side, elems = side * side;
    s.mt = std::min(r.m, side);
    s.nt = std::min(r.n, side);
    if (s.mt < side)
        s.nt = std::min(r.n, round_up(elems / s.mt, kTileQuantum));
    if (s.nt < side)
        s.mt = std::min(r.m, round_up(elems / s.nt, kTileQuantum));
    s.kt = std::min(r.k, r.chunk_depth);
    return s;
}

// The next smaller sizes: K chunks down to the chunk floor (kChunkFloor),
// then the longer tile side, then K chunks down to the quantum. False at the
// smallest.
bool shrink(Sizes &s, int64_t chunk_floor)
{
    if (s.kt > chunk_floor) {
        s.kt = std::max(chunk_floor, half(s.kt));
        return true;
    }
    if (std::max(s.mt, s.nt) > kTileQuantum) {
        int64_t &side = s.mt >= s.nt ? s.mt : s.nt;
        side = half(side);
        return true;
    }
    if (s.kt > kTileQuantum) {
        s.kt = half(s.kt);
        return true;
    }
    return false;
}

// The stored part of A behind op(A)(i0.., k0..), rows x depth; likewise B
// behind op(B)(k0.., j0..), depth x cols.
Rect stored_a(bool trans, int64_t i0, int64_t k0, int64_t rows, int64_t depth)
{
    return trans ? Rect{k0, i0, depth, rows} : Rect{i0, k0, rows, depth};
}

Rect stored_b(bool trans, int64_t k0, int64_t j0, int64_t depth, int64_t cols)
{
    return trans ? Rect{j0, k0, cols, depth} : Rect{k0, j0, depth, cols};
}

Slots make_slots(Cache cache, int64_t count, Rect shape, int64_t offset)
{
    Slots s;
    s.cache = cache;
    s.count = static_cast<int>(count);
    s.ld = device_ld(shape.rows);
    s.stride = round_up(s.ld * shape.cols, kSlotAlign);
    s.offset = offset;
    return s;
}

struct Config {
    bool rows_outer;
    Cache outer, inner;  // caches of the outer operand (Panel, Chunk or Whole) and the inner one (Whole or Chunk)
    bool lead;           // a lead group (outer and inner Whole)
};

// Whether A or B crosses the link and K has kLeadMinChunks chunks: a lead
// group (or the resident schedule) can then get the GPU going sooner (for C
// alone, interleaving only bunches the copies of C together).
bool leads(const PlanRequest &r, int64_t kb)
{
    return r.k > 0 && (r.a_host || r.b_host) && kb >= kLeadMinChunks;
}

// Tiles of the tiled schedule's lead group: kLeadBlocks outer blocks.
int64_t lead_tiles(const PlanRequest &r, int64_t tiles, int64_t inner_blocks, int64_t kb)
{
    return leads(r, kb) && tiles > 1 ? std::min(tiles, kLeadBlocks * inner_blocks) : 0;
}

// A plan's tiles and chunks at sizes s, nothing else decided.
HostPlan grid(const PlanRequest &r, const Sizes &s)
{
    HostPlan p;
    p.mt = s.mt;
    p.nt = s.nt;
    p.kt = s.kt;
    p.mb = ceil_div(r.m, s.mt);
    p.nb = ceil_div(r.n, s.nt);
    p.kb = r.k == 0 ? 1 : ceil_div(r.k, s.kt);
    return p;
}

HostPlan evaluate(const PlanRequest &r, const Sizes &s, const Config &cfg)
{
    HostPlan p = grid(r, s);
    p.rows_outer = cfg.rows_outer;
    const int64_t outer_blocks = cfg.rows_outer ? p.mb : p.nb;
    const int64_t inner_blocks = cfg.rows_outer ? p.nb : p.mb;
    const int64_t tiles = p.mb * p.nb, tasks = tiles * p.kb;
    p.lead = cfg.lead ? lead_tiles(r, tiles, inner_blocks, p.kb) : 0;

    // Slot count, slot shape and traffic of an operand of `bytes` under a
    // cache; `outer`: it is the loop's outer operand, whose chunks come
    // again for every inner block (the inner one's for every outer block).
    struct Use {
        int64_t count;
        Rect shape;
        double traffic;
    };
    const auto use = [&](Cache c, Rect panel, Rect whole, Rect chunk, double bytes, bool outer) -> Use {
        switch (c) {
        case Cache::Panel: return {std::min<int64_t>(2, outer_blocks), panel, bytes};
        case Cache::Whole: return {1, whole, bytes};
        case Cache::Chunk:
            return {std::min<int64_t>(2, tasks), chunk, bytes * static_cast<double>(outer ? inner_blocks : outer_blocks)};
        default: return {0, Rect{}, 0.0};
        }
    };
    const double m = static_cast<double>(r.m), n = static_cast<double>(r.n), k = static_cast<double>(r.k);
    const bool reads_ab = r.k > 0;
    const Cache ca = !(r.a_host && reads_ab) ? Cache::InPlace : cfg.rows_outer ? cfg.outer : cfg.inner;
    const Cache cb = !(r.b_host && reads_ab) ? Cache::InPlace : cfg.rows_outer ? cfg.inner : cfg.outer;
    const Use ua = use(ca, stored_a(r.trans_a, 0, 0, s.mt, r.k), stored_a(r.trans_a, 0, 0, r.m, r.k),
                       stored_a(r.trans_a, 0, 0, s.mt, s.kt), 4.0 * m * k, cfg.rows_outer);
    const Use ub = use(cb, stored_b(r.trans_b, 0, 0, r.k, s.nt), stored_b(r.trans_b, 0, 0, r.k, r.n),
                       stored_b(r.trans_b, 0, 0, s.kt, s.nt), 4.0 * k * n, !cfg.rows_outer);
    p.a = make_slots(ca, ua.count, ua.shape, 0);
    p.b = make_slots(cb, ub.count, ub.shape, p.a.offset + p.a.count * p.a.stride);
    p.c = make_slots(r.c_host ? Cache::Tile : Cache::InPlace, r.c_host ? std::min<int64_t>(p.lead + 2, tiles) : 0,
                     Rect{0, 0, s.mt, s.nt}, p.b.offset + p.b.count * p.b.stride);
    p.arena_elems = p.c.offset + p.c.count * p.c.stride;
    p.link_bytes = ua.traffic + ub.traffic + (r.c_host ? 4.0 * m * n * (r.c_in ? 2.0 : 1.0) : 0.0);
    p.tasks = tiles * p.kb;
    return p;
}

// ---------------------------------------------------------------- the resident schedule

int64_t outer_count(const HostPlan &p) { return p.rows_outer ? p.mb : p.nb; }
int64_t inner_count(const HostPlan &p) { return p.rows_outer ? p.nb : p.mb; }
int64_t lead_count(const HostPlan &p) { return p.lead / inner_count(p); }

// The resident lead's outer blocks (kLeadFeed).
int64_t lead_blocks(int64_t outer, int64_t inner)
{
    int64_t blocks = kLeadBlocks;
    while (blocks < outer - 1 && static_cast<double>(blocks * inner) < kLeadFeed * static_cast<double>(blocks + inner))
        ++blocks;
    return std::min(blocks, outer);
}

// Where the K steps of the opening and the lead start: 0, the opening's
// depth, then every chunk boundary after it; s == steps gives k.
int64_t step_start(const HostPlan &p, int64_t k, int64_t s)
{
    if (s == 0)
        return 0;
    if (s == 1)
        return p.open_depth;
    const int64_t first_chunk_end = (p.open_depth / p.kt + 1) * p.kt;
    return std::min(k, first_chunk_end + (s - 2) * p.kt);
}

int64_t step_count(const HostPlan &p, int64_t k)
{
    const int64_t first_chunk_end = (p.open_depth / p.kt + 1) * p.kt;
    return 2 + ceil_div(k - first_chunk_end, p.kt);
}

// Tiles in the opening, lead tasks (the steps after the opening), and all
// kernels before the cut (the last one is cut).
int64_t opening_tasks(const HostPlan &p) { return p.open_blocks * inner_count(p); }
int64_t lead_tasks(const HostPlan &p, int64_t k) { return (step_count(p, k) - 1) * lead_count(p) * inner_count(p); }
int64_t uncut_tasks(const HostPlan &p, int64_t k)
{
    return opening_tasks(p) + lead_tasks(p, k) + outer_count(p) - lead_count(p);
}

// The runs the cut makes of w tiles: w - w/2, then the same of w/2, ...,
// down to one tile. Returns how many; *start and *len the j-th one's.
int64_t cut_runs(int64_t w, int64_t j, int64_t *start, int64_t *len)
{
    int64_t runs = 0, at = 0;
    for (;;) {
        const int64_t run = w > 1 ? w - w / 2 : 1;
        if (runs == j) {
            *start = at;
            *len = run;
        }
        ++runs;
        if (w <= 1)
            return runs;
        at += run;
        w /= 2;
    }
}

// The parts the cut makes of a tile side: 1/2, 1/4 and the rest, in
// quanta, where the side has at least four quanta; else the side whole.
int64_t cut_parts(int64_t side, int64_t j, int64_t *start, int64_t *len)
{
    if (side < 4 * kTileQuantum) {
        *start = 0;
        *len = side;
        return 1;
    }
    const int64_t half = side / 2 / kTileQuantum * kTileQuantum;
    const int64_t quarter = (side - half) / 2 / kTileQuantum * kTileQuantum;
    const int64_t sizes[3] = {half, quarter, side - half - quarter};
    *start = j >= 1 ? half + (j >= 2 ? quarter : 0) : 0;
    *len = sizes[std::min<int64_t>(j, 2)];
    return 3;
}

// The tile at place t of the opening's order on an outer x inner grid of
// tiles: squares growing from (0, 0), each adding the next outer block's
// tiles, then the next inner block's; past the square, the remaining
// blocks of the longer side one after the other.
void opening_tile(int64_t outer, int64_t inner, int64_t t, int64_t *o, int64_t *i)
{
    const int64_t side = std::min(outer, inner);
    if (t < side * side) {
        int64_t s = static_cast<int64_t>(std::sqrt(static_cast<double>(t)));
        while (s * s > t)
            --s;
        while ((s + 1) * (s + 1) <= t)
            ++s;
        const int64_t at = t - s * s;
        *o = at < s ? s : at - s;
        *i = at < s ? at : s;
        return;
    }
    const int64_t past = t - side * side;
    if (inner > outer) {
        *o = past % outer;
        *i = side + past / outer;
    } else {
        *o = side + past / inner;
        *i = past % inner;
    }
}

// The resident plan at sizes s: every host operand whole on the device.
HostPlan evaluate_resident(const PlanRequest &r, const Sizes &s)
{
    HostPlan p = grid(r, s);
    p.rows_outer = p.mb <= p.nb;  // the outer loop over the fewer blocks: longer lead rows feed more kernels per chunk
    p.resident = true;
    p.open_depth = std::max(kTileQuantum, s.kt / kOpenDivisor / kTileQuantum * kTileQuantum);
    // When C is read, each of the lead's tiles brings its C in before its
    // first kernel: more lead tiles delay the first steps by more than
    // their feeding gains.
    p.lead = (r.c_in ? std::min(outer_count(p), kLeadBlocks) : lead_blocks(outer_count(p), inner_count(p))) *
             inner_count(p);
    p.open_blocks = r.c_in ? lead_count(p) : outer_count(p);
    const double m = static_cast<double>(r.m), n = static_cast<double>(r.n), k = static_cast<double>(r.k);
    const Rect whole_a = stored_a(r.trans_a, 0, 0, r.m, r.k), whole_b = stored_b(r.trans_b, 0, 0, r.k, r.n);
    p.a = make_slots(r.a_host ? Cache::Whole : Cache::InPlace, r.a_host ? 1 : 0, whole_a, 0);
    p.b = make_slots(r.b_host ? Cache::Whole : Cache::InPlace, r.b_host ? 1 : 0, whole_b,
                     p.a.offset + p.a.count * p.a.stride);
    p.c = make_slots(r.c_host ? Cache::Whole : Cache::InPlace, r.c_host ? 1 : 0, Rect{0, 0, r.m, r.n},
                     p.b.offset + p.b.count * p.b.stride);
    p.arena_elems = p.c.offset + p.c.count * p.c.stride;
    p.link_bytes = (r.a_host ? 4.0 * m * k : 0.0) + (r.b_host ? 4.0 * k * n : 0.0) +
                   (r.c_host ? 4.0 * m * n * (r.c_in ? 2.0 : 1.0) : 0.0);
    const int64_t last_tiles = outer_count(p) > lead_count(p) ? inner_count(p) : 1;
    int64_t start = 0, len = 0;
    const int64_t runs = cut_runs(last_tiles, 0, &start, &len);
    const int64_t last_side =
        p.rows_outer ? std::min(p.mt, r.m - (p.mb - 1) * p.mt) : std::min(p.nt, r.n - (p.nb - 1) * p.nt);
    p.tasks = uncut_tasks(p, r.k) - 1 + (runs - 1) + cut_parts(last_side, 0, &start, &len);
    return p;
}

// Where a step's rect lies: `slot` of `s`, whose content starts at stored
// (origin_row, origin_col).
OperandStep place(const Slots &s, Rect rect, int64_t origin_row, int64_t origin_col, int64_t slot, bool load,
                  bool reuse)
{
    OperandStep st;
    st.rect = rect;
    st.load = load;
    st.reuse = reuse;
    st.slot = static_cast<int>(slot);
    st.offset = s.offset + slot * s.stride + (rect.row - origin_row) + (rect.col - origin_col) * s.ld;
    return st;
}

// The step of A or B for task t: `outer_index` and `inner_index` are its
// tile's place in the loop order, `chunk` its K chunk; `k_is_row` says
// whether K runs along the stored rows (else along the stored columns);
// `outer` whether the operand is the loop's outer one.
OperandStep operand_step(const Slots &s, Rect rect, bool k_is_row, bool outer, int64_t outer_index,
                         int64_t inner_index, int64_t chunk, int64_t t)
{
    switch (s.cache) {
    case Cache::Panel:
        return place(s, rect, k_is_row ? 0 : rect.row, k_is_row ? rect.col : 0, outer_index % s.count,
                     inner_index == 0, inner_index == 0 && chunk == 0 && outer_index >= s.count);
    case Cache::Whole:
        // Loaded where first read: the outer operand's part of a block at
        // the block's first tile, the inner operand's on the first pass.
        // In the lead group too, since it takes tiles in loop order within
        // each K chunk.
        return place(s, rect, 0, 0, 0, outer ? inner_index == 0 : outer_index == 0, false);
    case Cache::Chunk:
        return place(s, rect, rect.row, rect.col, t % s.count, true, t >= s.count);
    default: {
        OperandStep st;
        st.rect = rect;
        return st;
    }
    }
}

}  // namespace

bool plan_host(const PlanRequest &r, HostPlan *plan, uint64_t *need_bytes)
{
    static const Config kConfigs[] = {
        {true, Cache::Whole, Cache::Whole, true},    {true, Cache::Panel, Cache::Whole, false},
        {true, Cache::Panel, Cache::Chunk, false},   {true, Cache::Chunk, Cache::Whole, false},
        {true, Cache::Chunk, Cache::Chunk, false},   {false, Cache::Whole, Cache::Whole, true},
        {false, Cache::Panel, Cache::Whole, false},  {false, Cache::Panel, Cache::Chunk, false},
        {false, Cache::Chunk, Cache::Whole, false},  {false, Cache::Chunk, Cache::Chunk, false},
    };
    Sizes s = preferred_sizes(r);
    if (leads(r, ceil_div(r.k, std::max<int64_t>(s.kt, 1)))) {
        const HostPlan p = evaluate_resident(r, s);
        if (arena_bytes(p) <= r.budget) {
            *plan = p;
            return true;
        }
    }
    for (;;) {
        bool found = false;
        uint64_t least = UINT64_MAX;
        for (const Config &cfg : kConfigs) {
            const HostPlan p = evaluate(r, s, cfg);
            if (cfg.lead && p.lead == 0)
                continue;  // no lead group here: the same as a plan below, with more memory
            const uint64_t bytes = arena_bytes(p);
            least = std::min(least, bytes);
            if (bytes > r.budget)
                continue;
            const bool better_lead = p.lead > 0 && plan->lead == 0;
            const bool same_lead = (p.lead > 0) == (plan->lead > 0);
            if (!found || p.link_bytes < plan->link_bytes ||
                (p.link_bytes == plan->link_bytes && better_lead) ||
                (p.link_bytes == plan->link_bytes && same_lead && p.arena_elems < plan->arena_elems)) {
                *plan = p;
                found = true;
            }
        }
        if (found)
            return true;
        if (!shrink(s, r.chunk_floor)) {
            *need_bytes = least;
            return false;
        }
    }
}

namespace {

// Task t of the resident schedule.
Task resident_task(const HostPlan &p, const PlanRequest &r, int64_t t)
{
    const int64_t inner = inner_count(p), leads = lead_count(p), uncut = uncut_tasks(p, r.k);
    const int64_t opening = opening_tasks(p), lead = lead_tasks(p, r.k);
    // The kernel before the cut: outer block o, inner blocks [ia, ib), K [k0, k1).
    const int64_t u = std::min(t, uncut - 1);
    int64_t o = 0, ia = 0, ib = 0, k0 = 0, k1 = 0;
    bool load_outer = false, load_inner = false;
    if (u < opening) {
        opening_tile(p.open_blocks, inner, u, &o, &ia);
        ib = ia + 1;
        k1 = step_start(p, r.k, 1);
        // Each outer block's first tile in this order is its first, each
        // inner block's its tile in outer block 0.
        load_outer = ia == 0;
        load_inner = o == 0;
    } else if (u < opening + lead) {
        const int64_t v = u - opening, per_step = leads * inner, step = 1 + v / per_step;
        ia = v % per_step / leads;
        o = v % leads;
        ib = ia + 1;
        k0 = step_start(p, r.k, step);
        k1 = step_start(p, r.k, step + 1);
        load_outer = ia == 0;
        load_inner = o == 0;
    } else {
        // The lead brought all of the inner operand in.
        o = leads + (u - opening - lead);
        ia = 0;
        ib = inner;
        k0 = p.open_blocks > o ? p.open_depth : 0;
        k1 = r.k;
        load_outer = true;
    }
    const int64_t side_o = p.rows_outer ? p.mt : p.nt, side_i = p.rows_outer ? p.nt : p.mt;
    const int64_t extent_o = p.rows_outer ? r.m : r.n, extent_i = p.rows_outer ? r.n : r.m;
    int64_t at_o = o * side_o, len_o = std::min(side_o, extent_o - at_o);
    if (t >= uncut - 1) {
        // The cut: runs of tiles, then parts of the last tile. The first
        // piece loads the inner operand's part (runs share none of it;
        // parts share all of it). The outer operand's part: the first run
        // spans all of it; without runs, each part loads its own. Each
        // piece loads its own C.
        const int64_t j = t - (uncut - 1);
        int64_t start = 0, len = 0;
        const int64_t runs = cut_runs(ib - ia, 0, &start, &len);
        if (j < runs - 1) {
            cut_runs(ib - ia, j, &start, &len);
            ia += start;
            ib = ia + len;
        } else {
            ia = ib - 1;
            cut_parts(len_o, j - (runs - 1), &start, &len);
            at_o += start;
            len_o = len;
        }
        if (j > 0) {
            load_inner = false;
            load_outer = load_outer && runs == 1;
        }
    }
    const int64_t at_i = ia * side_i, len_i = std::min(ib * side_i, extent_i) - at_i;

    Task x;
    x.i0 = p.rows_outer ? at_o : at_i;
    x.j0 = p.rows_outer ? at_i : at_o;
    x.rows = p.rows_outer ? len_o : len_i;
    x.cols = p.rows_outer ? len_i : len_o;
    x.k0 = k0;
    x.depth = k1 - k0;
    x.first = k0 == 0;
    x.last = k1 == r.k;
    const bool load_a = p.rows_outer ? load_outer : load_inner, load_b = p.rows_outer ? load_inner : load_outer;
    const Rect ra = stored_a(r.trans_a, x.i0, x.k0, x.rows, x.depth);
    const Rect rb = stored_b(r.trans_b, x.k0, x.j0, x.depth, x.cols);
    if (p.a.cache == Cache::Whole)
        x.a = place(p.a, ra, 0, 0, 0, load_a, false);
    else
        x.a.rect = ra;
    if (p.b.cache == Cache::Whole)
        x.b = place(p.b, rb, 0, 0, 0, load_b, false);
    else
        x.b.rect = rb;
    const Rect c{x.i0, x.j0, x.rows, x.cols};
    if (p.c.cache == Cache::Whole)
        x.c = place(p.c, c, 0, 0, 0, x.first && r.c_in, false);
    else
        x.c.rect = c;
    return x;
}

// Task t of the tiled schedule.
Task tiled_task(const HostPlan &p, const PlanRequest &r, int64_t t)
{
    Task x;
    // The lead group: its tiles chunk by chunk; then tile by tile.
    const int64_t in_lead = p.lead * p.kb;
    const int64_t tile = t < in_lead ? t % p.lead : p.lead + (t - in_lead) / p.kb;
    const int64_t chunk = t < in_lead ? t / p.lead : (t - in_lead) % p.kb;
    const int64_t inner_blocks = p.rows_outer ? p.nb : p.mb;
    const int64_t outer = tile / inner_blocks, inner = tile % inner_blocks;
    const int64_t bi = p.rows_outer ? outer : inner, bj = p.rows_outer ? inner : outer;
    x.i0 = bi * p.mt;
    x.j0 = bj * p.nt;
    x.k0 = chunk * p.kt;
    x.rows = std::min(p.mt, r.m - x.i0);
    x.cols = std::min(p.nt, r.n - x.j0);
    x.depth = r.k == 0 ? 0 : std::min(p.kt, r.k - x.k0);
    x.first = chunk == 0;
    x.last = chunk == p.kb - 1;

    // Panels belong to the outer operand and Whole copies to the inner one,
    // so both follow the loop's own indices.
    x.a = operand_step(p.a, stored_a(r.trans_a, x.i0, x.k0, x.rows, x.depth), r.trans_a, p.rows_outer, outer, inner,
                       chunk, t);
    x.b = operand_step(p.b, stored_b(r.trans_b, x.k0, x.j0, x.depth, x.cols), !r.trans_b, !p.rows_outer, outer,
                       inner, chunk, t);
    const Rect c{x.i0, x.j0, x.rows, x.cols};
    if (p.c.cache == Cache::Tile)
        x.c = place(p.c, c, c.row, c.col, tile % p.c.count, x.first && r.c_in, x.first && tile >= p.c.count);
    else
        x.c.rect = c;
    return x;
}

}  // namespace

Task host_task(const HostPlan &p, const PlanRequest &r, int64_t t)
{
    return p.resident ? resident_task(p, r, t) : tiled_task(p, r, t);
}

}  // namespace tgemm
