// The plan dump's problems, device descriptions and line format, shared by
// bench/plan_dump.cpp and any other dispatcher that is to be compared with
// it (a harness around an older dispatch.cpp prints the same lines). Plain
// C++ with no tgemm header, so that it compiles against any version.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "splitmix.hpp"

namespace plan_dump {

// The same problems on every platform for a seed.
using Rng = bench::SplitMix64;

constexpr int64_t kMaxDim = 20000;

// About log-uniform over 1 to kMaxDim: a power of two, then a value in its octave.
inline int64_t draw_dim(Rng &r)
{
    for (;;) {
        const int e = static_cast<int>(r.below(15));
        const int64_t d = (int64_t{1} << e) + r.below(int64_t{1} << e);
        if (d <= kMaxDim)
            return d;
    }
}

// A problem: sizes, transposes, leading dimensions, and operand offsets in
// floats from 256-byte aligned fake bases (never dereferenced: the
// planners read addresses only for their alignment).
struct Problem {
    int64_t m, n, k, lda, ldb, ldc;
    bool ta, tb;
    int64_t a_off, b_off, c_off;
    float alpha, beta;
};

constexpr uintptr_t kBaseA = uintptr_t{1} << 40, kBaseB = uintptr_t{2} << 40, kBaseC = uintptr_t{3} << 40;
// Where a harness without a packed stand-in puts the packed operand.
constexpr uintptr_t kBaseWorkspace = uintptr_t{4} << 40;

inline Problem draw_problem(Rng &r)
{
    Problem p;
    p.m = draw_dim(r);
    p.n = draw_dim(r);
    p.k = draw_dim(r);
    p.ta = r.below(2) != 0;
    p.tb = r.below(2) != 0;
    const auto pad = [&r]() { return r.below(2) == 0 ? int64_t{0} : 1 + r.below(64); };
    p.lda = (p.ta ? p.k : p.m) + pad();
    p.ldb = (p.tb ? p.n : p.k) + pad();
    p.ldc = p.m + pad();
    const auto offset = [&r]() { return r.below(2) == 0 ? int64_t{0} : r.below(8); };
    p.a_off = offset();
    p.b_off = offset();
    p.c_off = offset();
    p.alpha = r.chance(50) ? 0.0f : 1.0f;
    p.beta = r.below(2) == 0 ? 0.0f : 0.5f;
    return p;
}

// A device description: properties and the cluster capacities its kernels
// report (blocks resident at once in clusters of 0, 1, ..., 8).
struct Device {
    const char *name;
    int cc_major, cc_minor, sm_count, max_grid_x, clock_khz, memory_clock_khz, bus_width_bits;
    bool skinny_tma;
    int skinny[9];
    int tiled[12][9];  // in the registry's order (src/kernels/families.def)
};

#define PLAN_DUMP_H100_CLUSTERS                                                                                    \
    {0, 0, 264, 237, 248, 235, 234, 224, 240},                                                                     \
    {                                                                                                              \
        {0, 0, 132, 117, 120, 110, 102, 105, 120},     /* 256x128x16 */                                            \
            {0, 0, 132, 117, 120, 110, 102, 105, 120}, /* 256x128x8 */                                             \
            {0, 0, 132, 117, 120, 110, 102, 105, 120}, /* 128x256x8 */                                             \
            {0, 0, 264, 237, 248, 235, 234, 224, 240}, /* 128x128x8 */                                             \
            {0, 0, 132, 117, 120, 110, 102, 105, 120}, /* 128x128x16 */                                            \
            {0, 0, 528, 489, 496, 470, 474, 483, 496}, /* 128x64x8 */                                              \
            {0, 0, 0, 0, 0, 0, 0, 0, 0},               /* 64x128x8 */                                              \
            {0, 0, 528, 489, 496, 470, 474, 483, 496}, /* 64x64x8 */                                               \
            {0, 0, 528, 489, 496, 470, 474, 483, 496}, /* 64x64x16 */                                              \
            {0, 0, 1056, 981, 992, 965, 978, 973, 992}, /* 32x32x8 */                                              \
            {0, 0, 132, 117, 120, 110, 102, 105, 120},  /* 64x256x16 */                                            \
            {0, 0, 132, 117, 120, 110, 102, 105, 120}   /* 256x64x16 */                                            \
    }

const Device kDevices[] = {
    {"h100", 9, 0, 132, 2147483647, 1980000, 2619000, 5120, true, PLAN_DUMP_H100_CLUSTERS},
    {"a100", 8, 0, 108, 2147483647, 1410000, 1593000, 5120, false, {}, {}},
    {"h200", 9, 0, 132, 2147483647, 1980000, 3201000, 6144, true, PLAN_DUMP_H100_CLUSTERS},
};
#undef PLAN_DUMP_H100_CLUSTERS

inline const Device *find_device(const std::string &name)
{
    for (const Device &d : kDevices)
        if (name == d.name)
            return &d;
    return nullptr;
}

// One launch of a plan, in the terms every dispatcher version shares.
struct Piece {
    std::string kind;    // scale, streaming, streaming-tma, tiled, stream-k, rank-k
    std::string family;  // tiled, stream-k
    int64_t m = 0, n = 0, k = 0;
    int splits = 1;
    bool cluster = false;
    int64_t k_chunk = 0;
    int64_t dp = 0, sk = 0, iters = 0;  // stream-k
    int ctas = 0;
    int s = 0, groups = 0;  // streaming
    int gemv_rw = 0;        // streaming: skinny_gemv's warps along r (0: another kernel)
    bool rows = false, vec = false, y_vec = false;
    int64_t grid_x = 0;  // blocks along x (tiles, or blocks of r); grid_y = splits
};

struct Call {
    std::string error;  // the planner's failure, if any
    int64_t pack_a_ld = 0, pack_b_ld = 0;  // 0: not packed
    bool pack_a_transposed = false;
    int64_t peel_m = 0, peel_n = 0;
    int pieces = 0;
    Piece piece[3];
};

inline std::string format_line(const Problem &p, const Call &c)
{
    char buf[512];
    const auto aligned = [](uintptr_t base, int64_t off) { return ((base + 4 * off) & 15u) == 0 ? 'a' : 'u'; };
    std::snprintf(buf, sizeof buf, "%lld %lld %lld %c%c ld=%lld,%lld,%lld al=%c%c%c alpha0=%d beta0=%d :",
                  (long long)p.m, (long long)p.n, (long long)p.k, p.ta ? 'T' : 'N', p.tb ? 'T' : 'N',
                  (long long)p.lda, (long long)p.ldb, (long long)p.ldc, aligned(kBaseA, p.a_off),
                  aligned(kBaseB, p.b_off), aligned(kBaseC, p.c_off), p.alpha == 0.0f, p.beta == 0.0f);
    std::string line = buf;
    if (!c.error.empty())
        return line + " error " + c.error;
    if (c.pack_a_ld > 0)
        line += std::string(c.pack_a_transposed ? " pack ld=" : " pack A ld=") + std::to_string(c.pack_a_ld) + " |";
    if (c.pack_b_ld > 0)
        line += " pack B ld=" + std::to_string(c.pack_b_ld) + " |";
    if (c.peel_m > 0 || c.peel_n > 0)
        line += " peel " + std::to_string(c.peel_m) + "," + std::to_string(c.peel_n) + " |";
    for (int i = 0; i < c.pieces; ++i) {
        const Piece &x = c.piece[i];
        const char *form = x.splits == 1 ? "none" : x.cluster ? "cluster" : "workspace";
        if (x.kind == "scale")
            std::snprintf(buf, sizeof buf, " scale");
        else if (x.kind == "stream-k")
            std::snprintf(buf, sizeof buf, " stream-k %s %lldx%lldx%lld dp=%lld sk=%lld ctas=%d iters=%lld",
                          x.family.c_str(), (long long)x.m, (long long)x.n, (long long)x.k, (long long)x.dp,
                          (long long)x.sk, x.ctas, (long long)x.iters);
        else if (x.kind == "tiled")
            std::snprintf(buf, sizeof buf, " tiled %s %lldx%lldx%lld split=%d %s k_chunk=%lld grid=%lldx%d",
                          x.family.c_str(), (long long)x.m, (long long)x.n, (long long)x.k, x.splits, form,
                          (long long)x.k_chunk, (long long)x.grid_x, x.splits);
        else if (x.kind == "rank-k")
            std::snprintf(buf, sizeof buf, " rank-k %lldx%lldx%lld grid=%lld", (long long)x.m, (long long)x.n,
                          (long long)x.k, (long long)x.grid_x);
        else if (x.kind == "streaming-tma")
            std::snprintf(buf, sizeof buf, " streaming-tma %lldx%lldx%lld s=%d grid=%lld", (long long)x.m,
                          (long long)x.n, (long long)x.k, x.s, (long long)x.grid_x);
        else
            std::snprintf(buf, sizeof buf,
                          " streaming %s %lldx%lldx%lld s=%d %s=%d vec=%d y_vec=%d split=%d %s k_chunk=%lld "
                          "grid=%lldx%d",
                          x.gemv_rw > 0 ? "gemv" : x.rows ? "rows" : "dots", (long long)x.m, (long long)x.n,
                          (long long)x.k, x.s, x.gemv_rw > 0 ? "rw" : "groups", x.gemv_rw > 0 ? x.gemv_rw : x.groups,
                          x.vec, x.y_vec, x.splits, form, (long long)x.k_chunk, (long long)x.grid_x, x.splits);
        line += buf;
        if (i + 1 < c.pieces)
            line += " |";
    }
    return line;
}

}  // namespace plan_dump
