// A call's plan as a value: which kernels run, on which pieces of C, with
// which split of K, and the workspace they share. plan_call
// (dispatch/dispatch.hpp) makes it; launch enqueues it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/problem.hpp"
#include "kernels/family.hpp"
#include "tgemm.h"

namespace tgemm {

enum class KernelKind {
    Scale,         // alpha == 0 or k == 0: C := beta * C
    Streaming,     // skinny.cu's kernels (C has at most 16 rows or columns)
    StreamingTma,  // skinny_tma.cu's kernel, fed by the tensor copy engine
    Tiled,         // a tiled family, split-K in a cluster, through the workspace or not at all
    StreamK,       // a tiled family, the last wave's tiles shared out by K steps
    RankK,         // rank_k.cu's kernel: 128 x 128 tiles, K in chunks, for small K against m x n
};

const char *kernel_kind_name(KernelKind kind);

// One launch (with its split-K reduction, if any) over one piece of C.
// Every share of a call's workspace starts at a multiple of this (the
// kernels' vector accesses and the pool's own alignment).
constexpr size_t kWorkspaceAlign = 256;

struct PiecePlan {
    KernelKind kind = KernelKind::Tiled;
    GemmParams p = {};                     // the piece
    const KernelFamily *family = nullptr;  // Tiled, StreamK
    kernels::SkinnyParams skinny = {};     // Streaming, StreamingTma
    int splits = 1;
    int64_t k_chunk = 0;
    bool cluster = false;  // split-K finished inside the kernel (SplitK::cluster)
    StreamK sk = {};       // StreamK; work and arrivals are set at launch
    double seconds = 0.0;  // Tiled, StreamK, Streaming: the modelled time (StreamingTma: 0)
    // Its share of the call's workspace: split-K slices or stream-K parts.
    size_t work_offset = 0, work_bytes = 0;
    // Its A (B) is the packed copy (planned at kPackStandIn): launch moves
    // p.a (p.b), and the streaming operand that is op(A) (op(B)), into the
    // workspace.
    bool packed_a = false, packed_b = false;
};

// One operand copied into the workspace before the pieces run
// (dispatch/pack.cpp, kernels/pack.cu).
struct OperandPack {
    int64_t ld = 0;          // the copy's leading dimension; 0: the operand is read where it is
    bool transposed = false; // A only: op(A) of an A stored transposed, copied by columns
    size_t offset = 0;       // in the workspace, a multiple of kWorkspaceAlign
    size_t bytes = 0;
};

// What runs, in order: the operands' packs (where their ld > 0), then each
// piece. A packed piece's operands, and its streaming ones, point into the
// copies at kPackStandIn (plus each copy's offset) until launch places
// them in the workspace.
struct CallSteps {
    OperandPack pack_a, pack_b;
    int64_t peel_m = 0, peel_n = 0;  // rows and columns of C peeled off as streaming products
    int pieces = 0;
    PiecePlan piece[3];      // the main block, then the right strip, then the bottom one
    size_t workspace_bytes = 0;
};

struct DeviceModel;

struct CallPlan {
    GemmParams problem = {};
    int max_grid_x = 0;
    CallSteps steps;  // the plan
    // The model it was planned on, which drop_workspace plans on again for
    // no workspace (a model lives as long as the process).
    const DeviceModel *model = nullptr;
};

// The address the workspace's start is planned at, where the packed copies
// are: aligned as the workspace is (256 bytes), never dereferenced.
extern const float *const kPackStandIn;

}  // namespace tgemm
