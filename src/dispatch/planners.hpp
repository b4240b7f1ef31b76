// The planners behind plan_call (dispatch/plan.cpp), each in its own file:
// tiled (with split-K and stream-K), streaming, rank-k, pack and peel.
// Pure: they read the problem (pointers only for their alignment), the
// device model and the settings, and call nothing on the device.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dispatch/device_model.hpp"
#include "dispatch/plan.hpp"

namespace tgemm {

// C with at most this many rows or columns goes to the streaming kernels.
constexpr int64_t kSkinnyMax = 16;

// The streaming restatement's long operand X is op(A) where C has no more
// columns than rows (n <= m), else op(B); Y is the other.
inline bool streaming_x_is_a(const GemmParams &p)
{
    return p.n <= p.m;
}
// The most a split-K plan's slices (or the packed operand) may take.
constexpr size_t kMaxWorkspaceBytes = size_t{256} << 20;

int64_t tiles(const KernelFamily &f, const GemmParams &p);
// The least time a tiled plan takes to move op(A), op(B) and C (read too
// where beta != 0) once, at tiled_memory_efficiency: their models, fitted
// where K is long enough for the sums to matter, leave it out.
double tiled_memory_floor(const GemmParams &p, const DeviceModel &m);
// Whether the tiled kernels can move A and B, or C, as 16-byte vectors.
bool operands_aligned(const GemmParams &p);
bool c_aligned(const GemmParams &p);
// Whether the vector kernels run (dispatch/launch.cpp): A and B aligned and
// the kernel's output (C, or the workspace slices of split-K through it),
// out_aligned.
bool vector_kernels(const GemmParams &p, bool out_aligned);
// The family's measured share of the FFMA peak for p's transposes: its
// aligned rate where the vector kernels run (`vectors`, vector_kernels).
double family_efficiency(const TiledModel &e, const GemmParams &p, bool vectors);
// Whether `splits` slices of C fit in kMaxWorkspaceBytes.
bool split_fits(const GemmParams &p, int splits);

// The tiled plan ranked first (dispatch/tiled.cpp: by the larger of its
// modelled time and the host's time to issue it, ties by the modelled
// time); only `only`'s family where it is not null (TGEMM_KERNEL). Each
// thread remembers its recent plans and returns the same plan for the same
// key without weighing the candidates again.
PiecePlan plan_tiled(const GemmParams &p, const DeviceModel &m, const KernelFamily *only);
// How many of this thread's plan_tiled calls were answered from memory
// (for tests).
uint64_t tiled_memo_hits();
// The modelled seconds of one plain tiled plan of p: the registry's family
// `family`, `splits` slices of K in chunks of `chunk`, in clusters or
// through the workspace; infinity for a cluster form the family or device
// does not have. For checking bench/fit_plans.py's mirror (plan_dump --costs).
double tiled_plan_seconds(const GemmParams &p, const DeviceModel &m, int family, int splits, int64_t chunk,
                          bool cluster);

// The streaming plan for C with at most kSkinnyMax rows or columns
// (dispatch/streaming.cpp), with its modelled time. Without `workspace`,
// only plans that need none: K unsplit, or split in clusters where
// TGEMM_CLUSTERS allows.
PiecePlan plan_streaming(const GemmParams &p, const DeviceModel &m, bool workspace = true);
// The parts of a streaming plan's modelled time (plan_streaming's seconds:
// the larger of latency and memory, plus finish): whole waves of two blocks
// an SM, the round trips to memory a block's warps wait for one after
// another, the time its bytes take at the kernels' share of the bandwidth,
// and the split's finish (cluster exchange or the reduction kernel). All
// zero for the kernel fed by the tensor copy engine (not modelled).
struct StreamingTerms {
    double waves;
    double trips;
    double latency;
    double memory;
    double finish;
};
StreamingTerms streaming_terms(const PiecePlan &plan, const DeviceModel &m);
// The seconds of the split-K reduction of `splits` slices of p's C through
// the workspace, behind the kernel that wrote them (dispatch/tiled.cpp).
double reduction_seconds(const GemmParams &p, const DeviceModel &m, int splits);
// The larger of `seconds` and the host's time to issue a call of one
// kernel, or of two (second_kernel). host_floored: a plan's, its second
// kernel a split's reduction or a stream-K plan's whole tiles.
double host_floor(const DeviceModel &m, double seconds, bool second_kernel);
double host_floored(const PiecePlan &plan, const DeviceModel &m);

// The rank-k kernel over the whole of C (dispatch/rank_k.cpp), with its
// modelled time; rank_k_tiles, its blocks. rank_k_pays: whether it is to
// run instead of the tiled plan `tiled` of the same product: its time (with
// C's traffic, which the tiled model leaves out) below the larger of the
// tiled plan's time and the tiled memory floor divided by kTiledModelShare,
// K no larger than the kernel is planned at, and its grid within the
// device's.
int64_t rank_k_tiles(const GemmParams &p);
PiecePlan plan_rank_k(const GemmParams &p, const DeviceModel &m);
bool rank_k_pays(const PiecePlan &rank_k, const PiecePlan &tiled, const DeviceModel &m);

// The product restated on packed operands (dispatch/pack.cpp): p with A
// (trans_a false) and/or B at their copies' ld and place in the workspace
// (from kPackStandIn).
struct PackPlan {
    bool use = false;
    GemmParams p = {};
    PiecePlan plan;  // its tiled plan
    OperandPack a, b;
};
PackPlan plan_pack(const GemmParams &p, const DeviceModel &m, const KernelFamily *only, double plain_seconds);

// C cut into the main block (m - pm) x (n - pn), the right strip m x pn and
// the bottom strip pm x (n - pn) (dispatch/peel.cpp); pm == pn == 0: none.
struct PeelPlan {
    int64_t pm = 0, pn = 0;
    GemmParams main = {}, right = {}, bottom = {};
    PiecePlan main_plan;  // the main block's tiled plan
};
PeelPlan plan_peel(const GemmParams &p, const DeviceModel &m, double whole_seconds);

// TGEMM_VERBOSE=2's lines (dispatch/describe.cpp).
void log_piece(const PiecePlan &piece);
void log_pack(const GemmParams &p, char operand, const OperandPack &pack);
void log_peel(const GemmParams &p, int64_t pm, int64_t pn);
void log_device_model(const DeviceModel &m);

}  // namespace tgemm
