// The problem as every layer below the API sees it.
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

}  // namespace tgemm
