// Runs a checked problem on the GPU, moving host operands as needed.
#pragma once

#include <vector>

#include <cuda_runtime_api.h>

#include "core/check.hpp"
#include "core/problem.hpp"
#include "driver/host_plan.hpp"
#include "tgemm.h"

namespace tgemm {

// p is column-major and valid; m, n >= 1; a and b are non-NULL when
// alpha != 0 and k > 0, c is non-NULL. With `wait`, or when any operand is in
// host memory, returns after C is written, or after a failure once nothing
// the call enqueued can write C any more; otherwise only enqueues on s.
//
// With `left` (and `wait`), the caller finishes the call itself if it fails
// (the BLAS fallback): *left is set to the parts of C that do not hold
// their result, each holding its original contents (or anything, when
// beta == 0), and is empty after success. All of C, unless the call failed
// in the middle of a call on host operands, or on a C handled as one: C
// in pinned or managed memory with beta != 0 goes through the host-operand
// path's staging buffers (run_host_operands, recoverable_c) so that what a
// failure leaves is known. Device C is not covered: the CPU cannot finish
// a call on it.
tgemm_status execute(const GemmParams &p, cudaStream_t s, bool wait, std::vector<Rect> *left = nullptr);

// Part r of p's C (rows r.row.., columns r.col.. of its m x n C) as a
// product of its own: the same k, alpha and beta, the rows of op(A) and
// the columns of op(B) that it takes, and the leading dimensions of p.
inline GemmParams part_of(const GemmParams &p, const Rect &r)
{
    GemmParams q = p;
    q.m = r.rows;
    q.n = r.cols;
    q.c = p.c + r.row + r.col * p.ldc;
    if (sgemm_reads_ab(p.k, p.alpha)) {
        q.a = p.a + (p.trans_a ? r.row * p.lda : r.row);
        q.b = p.b + (p.trans_b ? r.col : r.col * p.ldb);
    }
    return q;
}

}  // namespace tgemm
