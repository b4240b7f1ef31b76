// The pack planner: whether copying an operand into the workspace first
// and running the product on the copy is cheaper by a margin.
//   - A stored transposed (TN, TT): op(A) packed by columns, so that the
//     product runs untransposed (NN, NT), the kernels' faster pairs;
//   - A not transposed, or B, whose columns do not all start on 16 bytes
//     (an ld that is not a multiple of 4, or an unaligned pointer): copied
//     as stored with an aligned ld, so that the product runs on the kernels
//     that move the operands in vectors (C too, where it is aligned).
// Each choice (A, B, both) is planned and the cheapest taken. A pack is
// priced as its memory traffic and a launch. TGEMM_PACK=always packs every
// operand that can be packed, never none.
#include <algorithm>
#include <cstdint>

#include "core/math.hpp"
#include "core/settings.hpp"
#include "dispatch/planners.hpp"

namespace tgemm {
namespace {

// The packed copies' leading dimension: the rows rounded up to kPackLd, so
// that every column starts on a 128-byte line.
constexpr int64_t kPackLd = 32;
// A packed plan is taken only when the model finds it this much faster than
// the plan without: kPackMargin for op(A) packed by columns alone, whose
// plans the model was fitted on; kRealignMargin where a copy is made for
// alignment (A as stored, or B), whose plans the model prices less well
// (docs/notes/dispatch.md, "Pack and stream-K").
constexpr double kPackMargin = 0.03;
constexpr double kRealignMargin = 0.15;

bool aligned16(const void *ptr)
{
    return (reinterpret_cast<uintptr_t>(ptr) & 15u) == 0;
}

size_t align_up(size_t bytes)
{
    return (bytes + kWorkspaceAlign - 1) / kWorkspaceAlign * kWorkspaceAlign;
}

// The largest share of a plan's time that restating p as q can save in
// any family's model: their efficiencies at q's pairs and alignment over
// p's (every plan of p, split-K in cluster form included, is a plan of q
// too), q's taken at its best (C aligned, or split through the workspace
// with m a multiple of 4: the vector kernels), p's at its worst. A pack
// that costs more than this share of the plain plan is not planned, which
// saves planning it.
double pack_gain_bound(const GemmParams &p, const GemmParams &q, const DeviceModel &m)
{
    const bool q_vectors = vector_kernels(q, c_aligned(q) || q.m % 4 == 0), p_vectors = vector_kernels(p, c_aligned(p));
    double most = 1.0;
    for (const TiledModel &e : m.tiled)
        most = std::max(most, family_efficiency(e, q, q_vectors) / family_efficiency(e, p, p_vectors));
    return 1.0 - 1.0 / most;
}

double pack_seconds(size_t bytes, const DeviceModel &m)
{
    return 2.0 * static_cast<double>(bytes) / (m.factors->pack_efficiency * m.memory_bandwidth) +
           m.factors->launch_seconds;
}

// p with A packed (op(A) by columns where A is transposed, else A as stored
// with an aligned ld), the copy at the workspace's start.
OperandPack restate_a(GemmParams *p)
{
    OperandPack pk;
    pk.transposed = p->trans_a;
    pk.ld = ceil_div(p->m, kPackLd) * kPackLd;
    pk.bytes = static_cast<size_t>(pk.ld) * static_cast<size_t>(p->k) * sizeof(float);
    p->trans_a = false;
    p->lda = pk.ld;
    p->a = kPackStandIn;
    return pk;
}

// p with B as stored, with an aligned ld, the copy `offset` bytes into the
// workspace.
OperandPack restate_b(GemmParams *p, size_t offset)
{
    OperandPack pk;
    const int64_t rows = p->trans_b ? p->n : p->k, cols = p->trans_b ? p->k : p->n;
    pk.ld = ceil_div(rows, kPackLd) * kPackLd;
    pk.offset = offset;
    pk.bytes = static_cast<size_t>(pk.ld) * static_cast<size_t>(cols) * sizeof(float);
    p->ldb = pk.ld;
    p->b = kPackStandIn + offset / sizeof(float);
    return pk;
}

}  // namespace

// The workspace is aligned to 256 bytes at least (cudaMallocFromPoolAsync)
// and the packed copies sit at its start, so they are planned as aligned.
alignas(256) static const float kPackStandInStorage[64] = {};
const float *const kPackStandIn = kPackStandInStorage;

PackPlan plan_pack(const GemmParams &p, const DeviceModel &m, const KernelFamily *only, double plain_seconds)
{
    PackPlan best;
    const PackMode mode = settings().pack;
    if (mode == PackMode::Never || (only != nullptr && mode != PackMode::Always))
        return best;
    const bool can_a = p.trans_a || !aligned16(p.a) || p.lda % 4 != 0;
    const bool can_b = !aligned16(p.b) || p.ldb % 4 != 0;
    double best_seconds = plain_seconds;
    // A, B, then both; under always the most operands that fit in the
    // workspace (both, else A, else B).
    int packed = 0;
    for (int which = 1; which <= 3; ++which) {
        const bool a = (which & 1) != 0, b = (which & 2) != 0;
        if ((a && !can_a) || (b && !can_b))
            continue;
        PackPlan pk;
        pk.p = p;
        if (a)
            pk.a = restate_a(&pk.p);
        if (b)
            pk.b = restate_b(&pk.p, align_up(pk.a.bytes));
        const size_t total = pk.b.bytes > 0 ? pk.b.offset + pk.b.bytes : pk.a.bytes;
        if (total > kMaxWorkspaceBytes)
            continue;
        const double seconds = (a ? pack_seconds(pk.a.bytes, m) : 0.0) + (b ? pack_seconds(pk.b.bytes, m) : 0.0);
        if (mode == PackMode::Auto && seconds > pack_gain_bound(p, pk.p, m) * plain_seconds)
            continue;
        pk.plan = plan_tiled(pk.p, m, only);
        const double margin = b || (a && !p.trans_a) ? kRealignMargin : kPackMargin;
        const int count = (a ? 1 : 0) + (b ? 1 : 0);
        if (mode == PackMode::Always ? count > packed
                                     : pk.plan.seconds + seconds < best_seconds &&
                                           pk.plan.seconds + seconds < (1.0 - margin) * plain_seconds) {
            best_seconds = pk.plan.seconds + seconds;
            packed = count;
            best = pk;
            best.use = true;
        }
    }
    return best;
}

}  // namespace tgemm
