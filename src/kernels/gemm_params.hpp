// The problem as every kernel and the dispatcher see it.
#pragma once

#include <cstdint>

namespace tgemm {

// Column-major C := alpha * op(A) * op(B) + beta * C with device-accessible
// pointers. The API layer guarantees, before anything here runs: the problem
// is valid (reference BLAS checks passed), m >= 1, n >= 1, and row-major
// calls were already turned into column-major ones.
struct GemmParams {
    const float *a;
    const float *b;
    float *c;
    int64_t lda, ldb, ldc;
    int64_t m, n, k;
    float alpha, beta;
    bool trans_a, trans_b;
};

// Split-K: slice s of `splits` computes op(A)(:, K_s) * op(B)(K_s, :) over
// K_s = [s * k_chunk, min(k, (s + 1) * k_chunk)) and stores the raw sums in
// work + s * m * n (column-major, ld = m); a reduction then forms
// C = alpha * sum_s + beta * C, adding the slices in order 0, 1, ... so the
// result does not depend on scheduling.
//
// Cluster form (sm_90 and later, tiled and streaming kernels): the `splits`
// blocks of one piece of C form a thread-block cluster along y; each keeps
// its raw sums in its own shared memory and, after a cluster barrier, each
// finishes a share of the piece by adding all blocks' sums in slice order
// through distributed shared memory: the same additions as the reduction
// kernel, without the workspace or the second launch.
// Split-K slices a tiled launch may join in one cluster, at most (the
// portable cluster size).
constexpr int kTiledMaxCluster = 8;

struct SplitK {
    int splits = 1;        // 1: no split, the kernel writes C itself
    int64_t k_chunk = 0;   // multiple of the kernel's K step
    float *work = nullptr;  // the slices (not used in cluster form)
    bool cluster = false;  // cluster form; splits is the cluster size
};

}  // namespace tgemm
