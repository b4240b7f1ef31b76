#include "driver/host_plan.hpp"

#include <algorithm>

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

// Tiles of the lead group: two rows of the loop order, when A or B crosses
// the link (for C alone, interleaving only bunches the copies of C
// together) and K has at least kLeadMinChunks chunks (with two or three,
// the lead group's last K step, in which all its tiles finish at once, is
// too large a part of it, and the lead group gains nothing or loses).
constexpr int64_t kLeadMinChunks = 4;

int64_t lead_tiles(const PlanRequest &r, int64_t tiles, int64_t inner_blocks, int64_t kb)
{
    const bool ab_cross = r.k > 0 && (r.a_host || r.b_host);
    return ab_cross && kb >= kLeadMinChunks && tiles > 1 ? std::min(tiles, 2 * inner_blocks) : 0;
}

HostPlan evaluate(const PlanRequest &r, const Sizes &s, const Config &cfg)
{
    HostPlan p;
    p.mt = s.mt;
    p.nt = s.nt;
    p.kt = s.kt;
    p.mb = ceil_div(r.m, s.mt);
    p.nb = ceil_div(r.n, s.nt);
    p.kb = r.k == 0 ? 1 : ceil_div(r.k, s.kt);
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

Task host_task(const HostPlan &p, const PlanRequest &r, int64_t t)
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

}  // namespace tgemm
