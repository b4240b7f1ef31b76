// Enqueuing a call's plan: the pack, then each piece's kernel and its
// split-K reduction, with the workspace carved as the plan laid it out.
#include <cstdint>

#include "core/settings.hpp"
#include "core/status.hpp"
#include "dispatch/dispatch.hpp"
#include "dispatch/planners.hpp"

namespace tgemm {
namespace {

// A pointer into a packed copy as planned (from kPackStandIn), moved to
// the same place in the workspace.
const float *place(const float *q, float *work)
{
    return work + (q - kPackStandIn);
}

tgemm_status launch_piece(PiecePlan piece, float *work, cudaStream_t s)
{
    // Marked by the planner: never inferred from an address.
    const bool streaming = piece.kind == KernelKind::Streaming || piece.kind == KernelKind::StreamingTma;
    const bool x_is_a = streaming && streaming_x_is_a(piece.p);
    if (piece.packed_a) {
        if (streaming)
            (x_is_a ? piece.skinny.x : piece.skinny.y) = place(x_is_a ? piece.skinny.x : piece.skinny.y, work);
        piece.p.a = place(piece.p.a, work);
    }
    if (piece.packed_b) {
        if (streaming)
            (x_is_a ? piece.skinny.y : piece.skinny.x) = place(x_is_a ? piece.skinny.y : piece.skinny.x, work);
        piece.p.b = place(piece.p.b, work);
    }
    const GemmParams &p = piece.p;
    SplitK sk;
    sk.splits = piece.splits;
    sk.k_chunk = piece.k_chunk;
    sk.work = piece.splits > 1 && !piece.cluster ? work + piece.work_offset / sizeof(float) : nullptr;
    sk.cluster = piece.cluster;
    cudaError_t e;
    switch (piece.kind) {
    case KernelKind::Tiled:
    case KernelKind::StreamK: {
        sk.ring_k = ring_fits_k(p.k, piece.splits, piece.k_chunk, piece.family->bk);
        // The kernel's stores: C's, or in workspace form the slices' (ld = m).
        // Aligned operands beside an unaligned C: the cluster kernel of
        // that alignment, or the plain kernel of none (kernels/tiled/family.cuh).
        const bool out_aligned = piece.splits > 1 && !piece.cluster ? p.m % 4 == 0 : c_aligned(p);
        const TiledAlignment alignment = !operands_aligned(p) ? TiledAlignment::None
                                         : out_aligned        ? TiledAlignment::All
                                                              : TiledAlignment::Operands;
        const int idx = tiled_variant(p.trans_a, p.trans_b, alignment);
        if (piece.kind == KernelKind::Tiled) {
            e = piece.family->launch[idx](p, sk, s);
            break;
        }
        StreamK streamk = piece.sk;
        const size_t parts = 2 * static_cast<size_t>(streamk.ctas) * piece.family->bm * piece.family->bn;
        streamk.work = work + piece.work_offset / sizeof(float);
        streamk.arrivals = reinterpret_cast<int *>(streamk.work + parts);
        if ((e = cudaMemsetAsync(streamk.arrivals, 0, sizeof(int) * streamk.sk_tiles, s)) != cudaSuccess)
            return fail_cuda(e, "stream-K counters reset");
        e = piece.family->launch_streamk[idx](p, streamk, s);
        break;
    }
    case KernelKind::RankK:
        e = kernels::launch_rank_k(p, s);
        break;
    case KernelKind::StreamingTma:
        e = kernels::launch_skinny_tma(piece.skinny, s);
        break;
    case KernelKind::Streaming:
        e = kernels::launch_skinny(piece.skinny, sk, s);
        break;
    case KernelKind::Scale:
    default:
        e = kernels::launch_scale(p.c, p.m, p.n, p.ldc, p.beta, s);
        return e == cudaSuccess ? TGEMM_SUCCESS : fail_cuda(e, "scale kernel launch");
    }
    if (e != cudaSuccess)
        return fail_cuda(e, "sgemm kernel launch");
    if (piece.splits > 1 && !piece.cluster && (e = kernels::launch_splitk_reduce(p, sk, s)) != cudaSuccess)
        return fail_cuda(e, "split-K reduction launch");
    return TGEMM_SUCCESS;
}

}  // namespace

tgemm_status launch(const CallPlan &plan, float *work, cudaStream_t s)
{
    const CallSteps &steps = plan.steps;
    const GemmParams &p = plan.problem;
    const bool verbose = settings().verbose >= 2;
    if (const OperandPack &pk = steps.pack_a; pk.ld > 0) {
        float *const w = work + pk.offset / sizeof(float);
        const cudaError_t e = pk.transposed ? kernels::launch_pack_transposed(p.a, p.lda, p.m, p.k, w, pk.ld, s)
                                            : kernels::launch_pack_copy(p.a, p.lda, p.m, p.k, w, pk.ld, s);
        if (e != cudaSuccess)
            return fail_cuda(e, "pack launch");
        if (verbose)
            log_pack(p, 'A', pk);
    }
    if (const OperandPack &pk = steps.pack_b; pk.ld > 0) {
        const cudaError_t e = kernels::launch_pack_copy(p.b, p.ldb, p.trans_b ? p.n : p.k, p.trans_b ? p.k : p.n,
                                                        work + pk.offset / sizeof(float), pk.ld, s);
        if (e != cudaSuccess)
            return fail_cuda(e, "pack launch");
        if (verbose)
            log_pack(p, 'B', pk);
    }
    if (verbose && (steps.peel_m > 0 || steps.peel_n > 0))
        log_peel(p, steps.peel_m, steps.peel_n);
    for (int i = 0; i < steps.pieces; ++i) {
        if (verbose && steps.piece[i].kind != KernelKind::Scale)
            log_piece(steps.piece[i]);
        const tgemm_status st = launch_piece(steps.piece[i], work, s);
        if (st != TGEMM_SUCCESS)
            return st;
    }
    return TGEMM_SUCCESS;
}

}  // namespace tgemm
