// TGEMM_VERBOSE=2's lines about plans and devices, on standard error. Tests
// and tools parse them (tests/test_gemm.c, bench/plan_regret.py): keep their
// wording.
#include <cstdio>

#include "dispatch/planners.hpp"

namespace tgemm {
namespace {

long long ll(int64_t v)
{
    return static_cast<long long>(v);
}

void log_counts(const char *what, const int *counts, int most)
{
    std::fprintf(stderr, "tgemm:   %s:", what);
    for (int n = 2; n <= most; ++n)
        std::fprintf(stderr, " %d", counts[n]);
    std::fprintf(stderr, "\n");
}

}  // namespace

void log_piece(const PiecePlan &piece)
{
    const GemmParams &p = piece.p;
    const char ta = p.trans_a ? 'T' : 'N', tb = p.trans_b ? 'T' : 'N';
    const char *form = piece.splits == 1 ? "none" : piece.cluster ? "cluster" : "workspace";
    switch (piece.kind) {
    case KernelKind::StreamK:
        std::fprintf(stderr,
                     "tgemm: device plan m=%lld n=%lld k=%lld %c%c tiled %s stream-k: %lld tiles whole, %lld shared "
                     "over %d blocks (%lld K steps each)\n",
                     ll(p.m), ll(p.n), ll(p.k), ta, tb, piece.family->name, ll(piece.sk.dp_tiles),
                     ll(piece.sk.sk_tiles), piece.sk.ctas, ll(piece.sk.sk_tiles * piece.sk.iters / piece.sk.ctas));
        break;
    case KernelKind::Tiled:
        std::fprintf(stderr, "tgemm: device plan m=%lld n=%lld k=%lld %c%c tiled %s split-k=%d (%s) k-chunk=%lld\n",
                     ll(p.m), ll(p.n), ll(p.k), ta, tb, piece.family->name, piece.splits, form, ll(piece.k_chunk));
        break;
    case KernelKind::RankK:
        std::fprintf(stderr,
                     "tgemm: device plan m=%lld n=%lld k=%lld %c%c rank-k %lld blocks of %dx%d, K in chunks of %d\n",
                     ll(p.m), ll(p.n), ll(p.k), ta, tb, ll(rank_k_tiles(p)), kernels::kRankKTile, kernels::kRankKTile,
                     kernels::kRankKChunk);
        break;
    case KernelKind::StreamingTma:
        std::fprintf(stderr,
                     "tgemm: device plan m=%lld n=%lld k=%lld %c%c streaming tma s=%d (32 rows a block, no split)\n",
                     ll(p.m), ll(p.n), ll(p.k), ta, tb, piece.skinny.s);
        break;
    case KernelKind::Streaming:
        // skinny_gemv's arrangement is its warps along r (rw), the others' the row groups of a block.
        std::fprintf(stderr,
                     "tgemm: device plan m=%lld n=%lld k=%lld %c%c streaming %s s=%d %s=%d split-k=%d (%s) "
                     "k-chunk=%lld\n",
                     ll(p.m), ll(p.n), ll(p.k), ta, tb,
                     piece.skinny.gemv_rw > 0 ? "gemv" : piece.skinny.x_r == 1 ? "rows" : "dots", piece.skinny.s,
                     piece.skinny.gemv_rw > 0 ? "rw" : "groups",
                     piece.skinny.gemv_rw > 0 ? piece.skinny.gemv_rw : piece.skinny.groups, piece.splits, form,
                     ll(piece.k_chunk));
        break;
    case KernelKind::Scale:
        break;
    }
}

void log_pack(const GemmParams &p, char operand, const OperandPack &pack)
{
    std::fprintf(stderr, "tgemm: device plan m=%lld n=%lld k=%lld: %s packed %s, ld=%lld\n", ll(p.m), ll(p.n),
                 ll(p.k), pack.transposed ? "op(A)" : operand == 'A' ? "A" : "B",
                 pack.transposed ? "by columns" : "as stored", ll(pack.ld));
}

void log_peel(const GemmParams &p, int64_t pm, int64_t pn)
{
    std::fprintf(stderr, "tgemm: device plan m=%lld n=%lld k=%lld: peeled %lld rows, %lld columns\n", ll(p.m),
                 ll(p.n), ll(p.k), ll(pm), ll(pn));
}

void log_device_model(const DeviceModel &m)
{
    const DeviceDescription &d = m.desc;
    std::fprintf(stderr, "tgemm: device %d: %d SMs; blocks resident at once in clusters of 2, 3, ...:\n", d.id,
                 d.sm_count);
    log_counts("streaming", d.skinny_cluster_blocks, kernels::kSkinnyMaxCluster);
    std::fprintf(stderr, "tgemm:   streaming kernel fed by the tensor copy engine: %s\n", d.skinny_tma ? "yes" : "no");
    for (const TiledModel &e : m.tiled)
        log_counts(e.family->name, e.cluster_blocks, kTiledMaxCluster);
}

}  // namespace tgemm
