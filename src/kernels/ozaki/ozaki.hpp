// The fp32-tc math's kernels (Ozaki scheme II on INT8, element arithmetic
// in element.hpp): what the dispatcher needs to size, place and enqueue
// them. Host declarations only.
//
// A call runs in two phases on one stream, with the caller reading two
// integers back in between:
//   1. launch_certificate: K-balancing maxima and exponents, the rows' and
//      columns' sums of squares (stats.cu); the certificate (cert.cu):
//      magnitudes, their u8 GEMM (igemm.cu) whose epilogue finds the
//      largest over the elements of their smallest candidate N certified
//      at element.hpp's cert_target (the call's N),
//      with a flag for Inf or NaN in op(A) or op(B), in CertBuffers::result.
//   2. launch_products, at the N the certificate gave: the scaling
//      exponents (stats.cu), the residue planes (convert.cu), N INT8 GEMMs
//      (igemm.cu), Garner's CRT with the alpha/beta epilogue (crt.cu).
//
// Contract: C := alpha op(A) op(B) + beta C, FP32, column-major C, any
// transposes and leading dimensions, alpha != 0, k in [3, kCertMaxK];
// reads C only where beta != 0, writes only C's m x n elements. The result
// is the CPU model's (tests/ozaki_model.cpp) bit for bit, deterministic.
// The INT8 GEMM needs sm_90a (prepare_ozaki says whether this device and
// build have it); nothing here runs on a device without it.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "kernels/ozaki/element.hpp"

namespace tgemm {
namespace ozaki {

constexpr int kTileThreads = 256;  // every tile kernel: one 1-D block of 256
enum : int { kTileKc = 1, kTileVec = 2 };

// The INT8 GEMM's block tile (igemm.cu); the padded sizes are its multiples.
constexpr int kGemmBM = 128, kGemmBN = 256, kGemmBK = 128;
// The sums of squares are taken in chunks of this many k (the model's order).
constexpr int kNormChunk = 256;
// Candidates the certificate tests.
constexpr int kCandidates = kMaxN - kMinN + 1;

// op(A)(i, kk) at a[i * ars + kk * aks]; op(B)(kk, j) at b[j * brs + kk * bks]
// (op(B) as n rows of k). One stride of each is 1.
struct Operands {
    const float *a = nullptr;
    int64_t ars = 0, aks = 0;
    const float *b = nullptr;
    int64_t brs = 0, bks = 0;
    int64_t m = 0, n = 0, k = 0;
};

struct Sizes {
    int64_t mp = 0, np = 0, kp = 0;  // padded to the GEMM's tile
    int64_t chunks = 0;              // of the sums of squares along K
};

Sizes sizes_of(int64_t m, int64_t n, int64_t k);

// Whether the kernels take the problem: k in [3, kCertMaxK], m and n within
// their grids' limits.
bool fits(const Operands &op);

// The tile kernels' load pattern for an operand (tiles.cuh).
int tile_mode(const float *x, int64_t rs, int64_t ks);

// Phase 1's device memory, carved from one piece (cert_bytes).
struct CertBuffers {
    unsigned *amax = nullptr, *bmax = nullptr;  // per k, float bits
    int *ebal = nullptr;                        // per k
    double *part_a = nullptr, *part_b = nullptr;  // chunk sums of squares: chunks x m, chunks x n
    unsigned *rmax_a = nullptr, *rmax_b = nullptr;  // per row of the balanced operands
    int *shift_a = nullptr, *shift_b = nullptr;
    double *pw_a = nullptr, *pw_b = nullptr;        // kCandidates x mp, x np
    unsigned long long *ones_a = nullptr, *ones_b = nullptr;
    uint8_t *mag_a = nullptr, *mag_b = nullptr;     // mp x kp, np x kp
    int *result = nullptr;                          // [0] the call's N, [1] Inf or NaN seen
};
size_t cert_bytes(const Sizes &s);
CertBuffers cert_buffers(void *work, const Sizes &s);

// Phase 2's device memory for n moduli.
struct ProductBuffers {
    int *mu = nullptr, *nu = nullptr;
    int8_t *ra = nullptr, *rb = nullptr, *rc = nullptr;  // n planes of mp x kp, np x kp, mp x np
};
size_t product_bytes(const Sizes &s, int n);
ProductBuffers product_buffers(void *work, const Sizes &s, int n);

// Once per device (current): whether the INT8 GEMM runs here (compute
// capability 9.0, sm_90a code in the build, the driver's tensor-map
// encoder), and its shared-memory limit raised where it does.
cudaError_t prepare_ozaki(int cc_major, int cc_minor, bool *available);

cudaError_t launch_certificate(const Operands &op, const Sizes &s, const CertBuffers &cb, int sm_count,
                               cudaStream_t st);

cudaError_t launch_products(const Operands &op, const Sizes &s, const CertBuffers &cb, const ProductBuffers &pb,
                            int n, float alpha, float beta, float *c, int64_t ldc, int sm_count, cudaStream_t st);

}  // namespace ozaki
}  // namespace tgemm
