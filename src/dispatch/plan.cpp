// The dispatcher's table: which kernels run a problem, planned once.
//
//   1. alpha == 0 or k == 0: the scaling kernel (C := beta * C).
//   2. min(m, n) <= kSkinnyMax: a streaming kernel (dispatch/streaming.cpp),
//      unless the tiled plan of step 3 is modelled faster: these shapes are
//      memory-bound, but where the streaming grid is small and K long, or
//      K short, latency bounds the streaming kernels (streaming_pays).
//   3. otherwise the tiled family and split-K factor with the lowest
//      modelled time (dispatch/tiled.cpp), or stream-K where the last wave
//      of tiles is partly empty.
//   4. the rank-k kernel instead, where the model finds it faster than that
//      plan with C's traffic added (dispatch/rank_k.cpp): K small against
//      m x n, where moving C is the cost; never for skinny C (step 2).
//      Then steps 5 and 6 do not apply.
//   5. where A is stored transposed, or an operand's columns do not start
//      on 16 bytes, the operand packed into the workspace first when the
//      model finds it cheaper (dispatch/pack.cpp).
//   6. where m or n is a few rows or columns past a multiple of 128, those
//      peeled off as streaming products when the model finds it cheaper
//      (dispatch/peel.cpp).
// TGEMM_KERNEL=<family> sends every problem to that tiled family instead
// (no peeling; packed only under TGEMM_PACK=always), TGEMM_KERNEL=rank-k
// every problem to the rank-k kernel (tests). TGEMM_CLUSTERS=0 keeps
// the plan and sends its cluster-form slices through the workspace: the
// same sums in the same order.
//
// The workspace of a call is one allocation: the packed A, the packed B,
// then each piece's split-K slices or stream-K parts, each at a 256-byte
// offset.
#include <cstring>
#include <string>

#include "core/math.hpp"
#include "core/settings.hpp"
#include "core/status.hpp"
#include "dispatch/dispatch.hpp"
#include "dispatch/planners.hpp"
#include "dispatch/skinny_split.hpp"

namespace tgemm {
namespace {

// Whether a product with C of at most kSkinnyMax rows or columns runs on its
// streaming plan (*stream), not on the tiled planner's (*tiled, planned
// where it is weighed): the streaming kernels move X once at the memory's
// rate, but where their grid is small and each block's K long, or K is too
// short to fill their lanes, the round trips to memory a block waits for
// one after another cost more than the tiled plan's split of K. Both
// host-floored; ties stream. The kernel fed by the tensor copy engine is
// taken where it fits (it has no model here).
bool streaming_pays(const GemmParams &p, const DeviceModel &m, PiecePlan *stream, PiecePlan *tiled, bool *planned)
{
    *stream = plan_streaming(p, m);
    if (stream->kind != KernelKind::Streaming)
        return true;
    *tiled = plan_tiled(p, m, nullptr);
    *planned = true;
    return host_floored(*stream, m) <= host_floored(*tiled, m);
}

const KernelFamily *forced_family(const DeviceModel &m, const std::string &name)
{
    for (const TiledModel &e : m.tiled)
        if (name == e.family->name)
            return e.family;
    return nullptr;
}

// What a piece needs beside its kernel: TGEMM_CLUSTERS, and split-K slices
// in the workspace only where they fit.
void settle(PiecePlan *piece)
{
    if (piece->cluster && !settings().clusters)
        piece->cluster = false;
    if (piece->splits > 1 && !piece->cluster && !split_fits(piece->p, piece->splits)) {
        piece->splits = 1;
        piece->k_chunk = piece->p.k;
    }
}

// Its workspace: stream-K's two parts' slots per block, then the tiles'
// arrival counters; or the split-K slices.
size_t piece_work_bytes(const PiecePlan &piece)
{
    if (piece.kind == KernelKind::StreamK)
        return 2 * static_cast<size_t>(piece.sk.ctas) * piece.family->bm * piece.family->bn * sizeof(float) +
               sizeof(int) * piece.sk.sk_tiles;
    if (piece.splits > 1 && !piece.cluster)
        return static_cast<size_t>(piece.splits) * piece.p.m * piece.p.n * sizeof(float);
    return 0;
}

size_t align_up(size_t bytes)
{
    return (bytes + kWorkspaceAlign - 1) / kWorkspaceAlign * kWorkspaceAlign;
}

void lay_out(CallSteps *steps)
{
    size_t offset = 0;
    for (const OperandPack *pk : {&steps->pack_a, &steps->pack_b})
        if (pk->ld > 0)
            offset = align_up(pk->offset + pk->bytes);
    for (int i = 0; i < steps->pieces; ++i) {
        PiecePlan &piece = steps->piece[i];
        piece.work_bytes = piece_work_bytes(piece);
        piece.work_offset = piece.work_bytes > 0 ? offset : 0;
        offset += align_up(piece.work_bytes);
    }
    steps->workspace_bytes = offset;
}

// The same steps without workspace. A streaming piece split through it is
// planned again without (its kernel may change: skinny_gemv unsplit would
// walk a long K, which its planner avoids).
CallSteps without_workspace(CallSteps steps, const DeviceModel &m)
{
    steps.pack_a = OperandPack{};
    steps.pack_b = OperandPack{};
    for (int i = 0; i < steps.pieces; ++i) {
        PiecePlan &piece = steps.piece[i];
        if (piece.kind == KernelKind::Streaming && piece.splits > 1 && !piece.cluster)
            piece = plan_streaming(piece.p, m, false);
        if (piece.kind == KernelKind::StreamK)
            piece.kind = KernelKind::Tiled;  // splits 1, K whole: as planned
        if (piece.splits > 1 && !piece.cluster) {
            piece.splits = 1;
            piece.k_chunk = piece.p.k;
        }
    }
    lay_out(&steps);
    return steps;
}

tgemm_status check_grid(const CallSteps &steps, int max_grid_x)
{
    for (int i = 0; i < steps.pieces; ++i) {
        const PiecePlan &piece = steps.piece[i];
        if ((piece.kind == KernelKind::Tiled || piece.kind == KernelKind::StreamK) &&
            tiles(*piece.family, piece.p) > max_grid_x)
            return fail(TGEMM_ERROR_UNSUPPORTED, "%lld blocks of %dx%d exceed the grid limit %d",
                        static_cast<long long>(tiles(*piece.family, piece.p)), piece.family->bm, piece.family->bn,
                        max_grid_x);
        if (piece.kind == KernelKind::RankK && rank_k_tiles(piece.p) > max_grid_x)
            return fail(TGEMM_ERROR_UNSUPPORTED, "%lld blocks of the rank-k kernel exceed the grid limit %d",
                        static_cast<long long>(rank_k_tiles(piece.p)), max_grid_x);
        if (piece.kind == KernelKind::Streaming || piece.kind == KernelKind::StreamingTma) {
            const int64_t rows = piece.kind == KernelKind::StreamingTma ? kernels::kSkinnyTmaRows
                                                                        : skinny_rows_per_block(piece.skinny);
            if (ceil_div(piece.skinny.r, rows) > max_grid_x)
                return fail(TGEMM_ERROR_UNSUPPORTED, "%lld rows exceed the grid limit",
                            static_cast<long long>(piece.skinny.r));
        }
    }
    return TGEMM_SUCCESS;
}

// Steps 5 and 6 of the table on a tiled plan already made for p.
CallSteps tiled_steps(const GemmParams &p, const DeviceModel &m, const KernelFamily *only, const PiecePlan &plan)
{
    CallSteps steps;
    const PeelPlan peel = only == nullptr ? plan_peel(p, m, plan.seconds) : PeelPlan{};
    if (peel.pm == 0 && peel.pn == 0) {
        steps.pieces = 1;
        steps.piece[0] = plan;
        return steps;
    }
    steps.peel_m = peel.pm;
    steps.peel_n = peel.pn;
    steps.piece[steps.pieces++] = peel.main_plan;
    if (peel.pn > 0)
        steps.piece[steps.pieces++] = plan_streaming(peel.right, m);
    if (peel.pm > 0)
        steps.piece[steps.pieces++] = plan_streaming(peel.bottom, m);
    return steps;
}

}  // namespace

const char *kernel_kind_name(KernelKind kind)
{
    switch (kind) {
    case KernelKind::Scale: return "scale";
    case KernelKind::Streaming: return "streaming";
    case KernelKind::StreamingTma: return "streaming-tma";
    case KernelKind::Tiled: return "tiled";
    case KernelKind::StreamK: return "stream-k";
    case KernelKind::RankK: return "rank-k";
    }
    return "?";
}

namespace {

// plan_call's work; with `bare`, also the same call planned for no
// workspace (drop_workspace), which only a call that cannot have its
// workspace needs: it is planned again then, not on every call.
tgemm_status plan_steps(const GemmParams &p, const DeviceModel &m, CallPlan *plan, CallSteps *bare)
{
    *plan = CallPlan{};
    plan->problem = p;
    plan->max_grid_x = m.desc.max_grid_x;
    plan->model = &m;
    CallSteps &steps = plan->steps;
    if (p.k == 0 || p.alpha == 0.0f) {
        steps.pieces = 1;
        steps.piece[0].kind = KernelKind::Scale;
        steps.piece[0].p = p;
        if (bare != nullptr)
            *bare = steps;
        return TGEMM_SUCCESS;
    }
    const std::string &forced = settings().kernel;
    const bool rank_k_forced = forced == kernel_kind_name(KernelKind::RankK);
    const KernelFamily *only = nullptr;
    if (!forced.empty() && !rank_k_forced && (only = forced_family(m, forced)) == nullptr) {
        std::string names;
        for (const TiledModel &e : m.tiled)
            names += std::string(names.empty() ? "" : ", ") + e.family->name;
        return fail(TGEMM_ERROR_INVALID_SETTING, "TGEMM_KERNEL='%s' is not a kernel family or rank-k; known: %s, %s",
                    forced.c_str(), names.c_str(), kernel_kind_name(KernelKind::RankK));
    }
    bool packed = false;
    const bool skinny = p.m <= kSkinnyMax || p.n <= kSkinnyMax;
    const bool weigh_streaming = !rank_k_forced && only == nullptr && skinny;
    PiecePlan plain, stream;
    bool plain_planned = false;  // by streaming_pays: the same plan_tiled of the same problem
    const bool streamed = weigh_streaming && streaming_pays(p, m, &stream, &plain, &plain_planned);
    if (rank_k_forced) {
        steps.pieces = 1;
        steps.piece[0] = plan_rank_k(p, m);
    } else if (streamed) {
        steps.pieces = 1;
        steps.piece[0] = stream;
    } else {
        if (!plain_planned)
            plain = plan_tiled(p, m, only);
        // Skinny C: the rank-k kernel's 128 x 128 tiles would be mostly empty.
        const PiecePlan rank_k = only == nullptr && !skinny ? plan_rank_k(p, m) : PiecePlan{};
        if (only == nullptr && !skinny && rank_k_pays(rank_k, plain, m)) {
            steps.pieces = 1;
            steps.piece[0] = rank_k;
        } else {
            const PackPlan pk = plan_pack(p, m, only, plain.seconds);
            packed = pk.use;
            steps = packed ? tiled_steps(pk.p, m, only, pk.plan) : tiled_steps(p, m, only, plain);
            if (packed) {
                steps.pack_a = pk.a;
                steps.pack_b = pk.b;
                for (int i = 0; i < steps.pieces; ++i) {  // every piece reads rows or columns of the copies
                    steps.piece[i].packed_a = pk.a.ld > 0;
                    steps.piece[i].packed_b = pk.b.ld > 0;
                }
            }
        }
    }
    for (int i = 0; i < steps.pieces; ++i)
        settle(&steps.piece[i]);
    lay_out(&steps);
    if (bare != nullptr) {
        if (weigh_streaming && !streamed && steps.workspace_bytes > 0) {
            // Skinny C without the workspace runs on its streaming plan (in
            // cluster form or unsplit): the tiled plan without its split would
            // walk all of K in the few blocks of one row or column of tiles.
            CallSteps alone;
            alone.pieces = 1;
            alone.piece[0] = stream;
            settle(&alone.piece[0]);
            *bare = without_workspace(alone, m);
        } else if (packed) {  // without the pack, the product is planned on op(A) where it is
            *bare = tiled_steps(p, m, only, plain);
            for (int i = 0; i < bare->pieces; ++i)
                settle(&bare->piece[i]);
            *bare = without_workspace(*bare, m);
        } else {
            *bare = without_workspace(steps, m);
        }
    }
    return check_grid(steps, plan->max_grid_x);
}

}  // namespace

tgemm_status plan_call(const GemmParams &p, const DeviceModel &m, CallPlan *plan)
{
    return plan_steps(p, m, plan, nullptr);
}

size_t workspace_bytes(const CallPlan &plan)
{
    return plan.steps.workspace_bytes;
}

tgemm_status drop_workspace(CallPlan *plan)
{
    CallPlan again;
    CallSteps bare;
    const tgemm_status st = plan_steps(plan->problem, *plan->model, &again, &bare);
    if (st != TGEMM_SUCCESS)
        return st;
    plan->steps = bare;
    return check_grid(plan->steps, plan->max_grid_x);
}

}  // namespace tgemm
