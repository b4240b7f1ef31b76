// bench_gemm's FP64 reference of a product on the device, for the check of
// bench/gemm_check.hpp: R = alpha op(A) op(B) and G = |alpha| |op(A)| |op(B)|
// (bench_gemm's calls have beta 0; bench_random adds beta's term on the
// host, gemm_check::add_beta_term), computed from the FP32 operands the
// benchmark times and brought back to host memory.
//
// The operands are widened to FP64 in blocks of C and of K, so that the
// device memory taken stays within a budget whatever the shape; each block
// is two DGEMMs (cublasDgemm_v2, on op(A) op(B) and on |op(A)| |op(B)|) or,
// without cuBLAS, one pass of a plain FP64 kernel that sums both. Then R and
// G are checked at sampled elements (the corners, each block's corners,
// pseudo-random ones) against FP64 dot products on the host: a reference
// read from the wrong place, or a G too large, would make the check vacuous.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

struct cublasContext;

namespace gemm_reference {

// cublasDgemm_v2's signature: bench_gemm loads cuBLAS at run time.
typedef int (*DgemmFn)(cublasContext *handle, int transa, int transb, int m, int n, int k, const double *alpha,
                       const double *a, int lda, const double *b, int ldb, const double *beta, double *c, int ldc);

// fn null: the FP64 kernel of gemm_reference.cu instead of cuBLAS.
struct Dgemm {
    DgemmFn fn = nullptr;
    cublasContext *handle = nullptr;  // its stream must be the one given to compute
};

// One product, column-major, operands in device memory as bench_gemm
// stores them: A is m x k ('N', lda >= m) or k x m ('T'); B is k x n or n x k.
struct Problem {
    char ta = 'N', tb = 'N';
    int64_t m = 0, n = 0, k = 0;
    double alpha = 1.0;
    const float *a = nullptr;
    int64_t lda = 0;
    const float *b = nullptr;
    int64_t ldb = 0;
};

// R and G into ref and mag (host memory, m x n, leading dimension m), on
// stream, with at most budget bytes of device memory at a time. Any CUDA
// or cuBLAS error, or a sampled element that disagrees with its dot
// product, ends the program (exit status 1, message on stderr).
void compute(const Problem &p, const Dgemm &dgemm, cudaStream_t stream, size_t budget, double *ref, double *mag);

}  // namespace gemm_reference
