// The table of measured factors, one row per architecture, and the check
// that it covers the kernel registry (kernels/families.def) exactly.
#include "dispatch/factors.hpp"

#include <cstdio>

namespace tgemm {
namespace {

// sm_90, measured on the H100 SXM (HBM3, 80 GB); docs/notes/dispatch.md
// says how each figure was obtained.
//
// Tiled efficiencies: the 4096^3 product's rate over the peak, each family
// forced, for each transpose pair; unaligned factors (one per pair): the
// 4095^3 NN rate over the 4096^3 NN one, for all four pairs alike
// (64x256x16 and 256x64x16 are taken otherwise, below). The one-block-per-SM families lose most unaligned,
// their aligned whole tiles loading without any per-group test. 64x64x16
// (the async ring) is fitted to its own plans at the small sizes where it
// wins instead: no lone-block loss, its lone block's measured step as its
// floor, every pair as NN, no loss unaligned (at those sizes it beat
// 64x64x8 on unaligned operands as often as on aligned ones), and clusters
// of at most 6 (larger ones lost to the workspace form).
// Each row: name, efficiencies, blocks per SM, unaligned factors, step
// floor and lone-block share (0: the architecture's), largest cluster,
// then the seconds a block and a wave cost beside their K steps, fitted
// by least squares (relative error) to every plan of 80 random NN
// products (m and n 96 to 8000, K 16 to 4096), of 60 for each transposed
// pair and of 27 with long K and small C, and checked on as many other
// draws and the suite's NN shapes (bench/fit_plans.py over
// bench/bench_plans.cu's times; docs/notes/dispatch.md): most of those
// products have an unaligned operand or C, so these are the scalar
// kernels' costs, and every plan's first wave's. Then the vector kernels'
// costs for each later block and wave, fitted the same way beside that
// first wave to every plan of 48 random NN products with m, n and K
// multiples of 4 (m and n 256 to 12000, K 8 to 1024, C of up to 64 M
// elements: up to sixteen waves of the largest tiles) and checked on 30
// other NN and 20 TT draws (the same docs). L2: operands read again from
// it come about 3 times faster than from memory (split-K slices that fit
// in half of it, in the same sets). The tiled plans' memory efficiency: the fastest plan of those products with
// K under 64 (C in L2, at most 64 MiB) took 2.3 times the time the
// bandwidth allows at best, and 8192 x 8192 x 64 (C out of L2) 4.1 times.
// 32x32x8's short waves: every plan of 115 products timed on the kernels as
// built (99 random, m and n 96 to 8000, and 16 with a large m x n and K
// under 600): its plans of a whole wave of blocks or more and a few K steps
// ran up to twice their modelled time, 4 to 8 us more a wave at up to 8 K
// steps a block; 4 us and 8 steps are taken (any of 4 to 6 us and 4 to 12
// steps makes the same picks on those sets). 64x64x8 and 64x64x16 are off at
// short K too, but the plans they compete with there run within 15% of them
// either way, and the same cost for 64x64x8 did not pay in real calls
// (docs/notes/dispatch.md, "Short K on 32x32x8").
// 64x256x16 and 256x64x16 share 128x128x16's warps and K step on tiles of
// another aspect, and are priced through it, since their rates at 4096^3
// do not carry to the mid-size products they are planned for: each plan
// of theirs on random products (fit_plans.py shapes, the NN, NT and TN
// sets of docs/notes/dispatch.md's "Tiles of 64 x 256 and 256 x 64") timed
// against 128x128x16's of the same split and form, the efficiency is
// 128x128x16's over the time ratio on aligned products, and efficiency x
// unaligned factor 128x128x16's over the ratio on the unaligned ones (the
// factor at most 1); where the sets hold no such pairs of plans (TN
// aligned, TT), the 4096^3 and 4095^3 rates. Block and wave costs:
// 128x128x16's, so that they are priced on the footing of the families
// beside them (costs fitted to their own plans alone would not be).
// The rank-k kernel's: fitted the same way to 45 products with K from 1
// to 160 timed with it forced (m, n 256 to 20000, every transpose pair);
// its memory share, fitted at 1.08 (it moves its bytes a little faster
// than the streaming copy behind measured_bandwidth), is held at 1.
// The split-K reduction's: what it adds to its split-K kernel's time,
// bench_plans with and without it, fitted by least squares over the
// workspace plans of the fit sets with the batch's cost held at its
// earlier fit (the sets cannot tell it from the slices';
// docs/notes/dispatch.md, "The split-K reduction's cost"); the time per
// byte of C not scaled by a device's bandwidth (the H200's faster memory
// reduced the same C in the same time). The host's:
// tgemm's time to enqueue calls of shapes planned before, of one kernel
// and of two (docs/notes/dispatch.md). The streaming kernels' latency:
// fitted to their times with operands out of L2 on problems with C of at
// most 16 rows or columns drawn at random (docs/notes/dispatch.md,
// "Streaming or tiled"). Stream-K's step factors: the vector kernels'
// from 4096^3 NN on 256x128x16; the scalar kernels' from the stream-K
// plans of random products with unaligned operands on the H200
// (docs/notes/dispatch.md, "Pack and stream-K").
constexpr ArchFactors kSm90 = {
    9, 0,
    1980000, 2619000, 5120, 2.88e12,
    0.8e-6,   // step_seconds
    0.75,     // alone_factor
    3e-6,     // launch_seconds
    0.31e-6,  // reduce_seconds
    0.35e-6,  // reduce_batch_seconds
    1.146,    // reduce_slice_factor
    1.30e-12, // reduce_c_seconds_per_byte
    5.5e-6,   // host_call_seconds
    4e-6,     // host_launch_seconds
    3.0,      // l2_bandwidth_factor
    0.5e-6,   // cluster_sync_seconds
    0.1e-6,   // dsmem_round_seconds
    50e9,     // streamk_part_bandwidth
    1.09,     // streamk_step_factor
    1.00,     // streamk_step_factor_scalar
    0.9,      // pack_efficiency
    0.8,      // stream_efficiency
    3.25e-6,  // stream_block_seconds
    1.2e-6,   // stream_trip_seconds
    0.3,      // tiled_memory_efficiency
    1.0,      // rank_k_memory_efficiency
    0.70,     // rank_k_efficiency
    5.9e-6,   // rank_k_block_seconds
    {
        {"256x128x16", {0.778, 0.777, 0.710, 0.761}, 1, {0.897, 0.897, 0.897, 0.897}, 0.0, 0.0, 8, 7.18e-6, 0.09e-6, 1.85e-6, 0.00e-6},
        {"256x128x8", {0.734, 0.786, 0.692, 0.738}, 1, {0.939, 0.939, 0.939, 0.939}, 0.0, 0.0, 8, 9.50e-6, 0.00e-6, 2.15e-6, 0.00e-6},
        {"128x256x8", {0.692, 0.681, 0.644, 0.711}, 1, {0.855, 0.855, 0.855, 0.855}, 0.0, 0.0, 8, 8.28e-6, 0.00e-6, 3.08e-6, 0.00e-6},
        {"128x128x8", {0.649, 0.662, 0.589, 0.647}, 2, {1.0, 1.0, 1.0, 1.0}, 0.0, 0.0, 8, 1.90e-6, 3.45e-6, 0.68e-6, 0.00e-6},
        {"128x128x16", {0.661, 0.739, 0.654, 0.670}, 1, {0.916, 0.916, 0.916, 0.916}, 0.0, 0.0, 8, 5.15e-6, 0.58e-6, 1.81e-6, 0.00e-6},
        {"128x64x8", {0.584, 0.622, 0.550, 0.556}, 4, {1.0, 1.0, 1.0, 1.0}, 0.0, 0.0, 8, 0.66e-6, 3.33e-6, 0.06e-6, 0.00e-6},
        {"64x128x8", {0.565, 0.617, 0.549, 0.596}, 4, {1.0, 1.0, 1.0, 1.0}, 0.0, 0.0, 8, 0.88e-6, 3.27e-6, 0.00e-6, 0.00e-6},
        {"64x64x8", {0.483, 0.546, 0.438, 0.469}, 4, {1.0, 1.0, 1.0, 1.0}, 0.0, 0.0, 8, 0.33e-6, 0.00e-6, 0.00e-6, 1.36e-6},
        {"64x64x16", {0.50, 0.50, 0.50, 0.50}, 4, {1.0, 1.0, 1.0, 1.0}, 0.59e-6, 1.0, 6, 0.00e-6, 1.57e-6, 0.00e-6, 0.00e-6},
        {"32x32x8", {0.430, 0.489, 0.372, 0.429}, 16, {1.0, 1.0, 1.0, 1.0}, 0.0, 0.0, 8, 0.12e-6, 0.00e-6, 0.00e-6, 1.14e-6, 4e-6, 8},
        {"64x256x16", {0.650, 0.709, 0.618, 0.704}, 1, {0.862, 0.895, 0.907, 0.829}, 0.0, 0.0, 8, 5.15e-6, 0.58e-6, 1.81e-6, 0.00e-6},
        {"256x64x16", {0.610, 0.732, 0.617, 0.566}, 1, {1.0, 0.854, 0.941, 0.842}, 0.0, 0.0, 8, 5.15e-6, 0.58e-6, 1.81e-6, 0.00e-6},
    },
};

constexpr ArchFactors kArchFactors[] = {kSm90};

#define TGEMM_TILED_FAMILY(name, streamk) #name,
constexpr const char *kRegistryNames[] = {
#include "kernels/families.def"
};
#undef TGEMM_TILED_FAMILY

constexpr bool same(const char *a, const char *b)
{
    while (*a != '\0' && *a == *b) {
        ++a;
        ++b;
    }
    return *a == *b;
}

// The registry name `name`'s rows in `row`.
constexpr int rows_of(const ArchFactors &row, const char *name)
{
    int count = 0;
    for (const TiledFactors &t : row.tiled)
        count += t.family != nullptr && same(t.family, name) ? 1 : 0;
    return count;
}

// The first registry family without exactly one row in `row`, or -1.
constexpr int uncovered(const ArchFactors &row)
{
    for (int i = 0; i < kernels::kTiledFamilyCount; ++i)
        if (rows_of(row, kRegistryNames[i]) != 1)
            return i;
    return -1;
}

constexpr bool all_covered()
{
    for (const ArchFactors &row : kArchFactors)
        if (uncovered(row) >= 0)
            return false;
    return true;
}

// The row of `name` in `row` (there is one: all_covered).
constexpr const TiledFactors &row_named(const ArchFactors &row, const char *name)
{
    for (const TiledFactors &t : row.tiled)
        if (t.family != nullptr && same(t.family, name))
            return t;
    return row.tiled[0];
}

// Whether `family` takes `through`'s block and wave costs in `row`, the
// scalar and the vector kernels'.
constexpr bool fixed_costs_as(const ArchFactors &row, const char *family, const char *through)
{
    const TiledFactors &f = row_named(row, family), &t = row_named(row, through);
    return f.block_seconds == t.block_seconds && f.wave_seconds == t.wave_seconds &&
           f.vector_block_seconds == t.vector_block_seconds && f.vector_wave_seconds == t.vector_wave_seconds;
}

static_assert(sizeof(kRegistryNames) / sizeof(kRegistryNames[0]) == kernels::kTiledFamilyCount, "one name a family");
static_assert(all_covered(), "every family of kernels/families.def needs exactly one row in each ArchFactors");
static_assert(fixed_costs_as(kSm90, "64x256x16", "128x128x16") && fixed_costs_as(kSm90, "256x64x16", "128x128x16"),
              "64x256x16 and 256x64x16 are priced through 128x128x16: its block and wave costs (the notes above)");

}  // namespace

const ArchFactors &arch_factors(int cc_major, int cc_minor)
{
    for (const ArchFactors &row : kArchFactors)
        if (row.cc_major == cc_major && row.cc_minor == cc_minor)
            return row;
    return kSm90;
}

bool factors_cover_registry(char *why, int size)
{
    for (const ArchFactors &row : kArchFactors) {
        const int i = uncovered(row);
        if (i >= 0) {
            std::snprintf(why, static_cast<size_t>(size), "sm_%d%d: family %s has %d rows", row.cc_major,
                          row.cc_minor, kRegistryNames[i], rows_of(row, kRegistryNames[i]));
            return false;
        }
    }
    return true;
}

}  // namespace tgemm
