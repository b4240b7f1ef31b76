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
struct PiecePlan {
    KernelKind kind = KernelKind::Tiled;
    GemmParams p = {};                     // the piece
    const KernelFamily *family = nullptr;  // Tiled, StreamK
    kernels::SkinnyParams skinny = {};     // Streaming, StreamingTma
    int splits = 1;
    int64_t k_chunk = 0;
    bool cluster = false;  // split-K finished inside the kernel (SplitK::cluster)
    StreamK sk = {};       // StreamK; work and arrivals are set at launch
    double seconds = 0.0;  // Tiled, StreamK: the modelled time
    // Its share of the call's workspace: split-K slices or stream-K parts.
    size_t work_offset = 0, work_bytes = 0;
    // Its op(A) is the packed copy (planned at kPackStandIn): launch moves
    // p.a, and the streaming operand that is op(A), into the workspace.
    bool packed_a = false;
};

// What runs, in order: op(A) packed by columns into the workspace (where
// pack_ld > 0), then each piece. A packed piece's op(A) and streaming
// operands point into the packed copy at kPackStandIn until launch
// places them in the workspace.
struct CallSteps {
    int64_t pack_ld = 0;     // 0: op(A) is read where it is
    size_t pack_bytes = 0;   // at offset 0 of the workspace
    int64_t peel_m = 0, peel_n = 0;  // rows and columns of C peeled off as streaming products
    int pieces = 0;
    PiecePlan piece[3];      // the main block, then the right strip, then the bottom one
    size_t workspace_bytes = 0;
};

// Every share of a call's workspace starts at a multiple of this (the
// kernels' vector accesses and the pool's own alignment).
constexpr size_t kWorkspaceAlign = 256;

struct CallPlan {
    GemmParams problem = {};
    int max_grid_x = 0;
    CallSteps steps;  // the plan
    CallSteps bare;   // the plan for when its workspace cannot be had (drop_workspace)
};

// The address the packed copy of op(A) is planned at: aligned as the
// workspace is (256 bytes), never dereferenced.
extern const float *const kPackStandIn;

}  // namespace tgemm
