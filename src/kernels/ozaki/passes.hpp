// The launchers of the fp32-tc math's passes, between its kernel files
// (ozaki.hpp's two phases are made of these). Host declarations only.
#pragma once

#include "kernels/ozaki/ozaki.hpp"

namespace tgemm {
namespace ozaki {

// stats.cu: amax/bmax, ebal, part_a/part_b; rmax_a/rmax_b and result[1] (the
// certificate's row maxima and flags; all zeroed here first).
cudaError_t launch_stats(const Operands &op, const Sizes &s, const CertBuffers &cb, cudaStream_t st);
// stats.cu: mu (m) and nu (n) for n moduli from the chunk sums.
cudaError_t launch_exponents(const Operands &op, const Sizes &s, const CertBuffers &cb, int *mu, int *nu,
                             int n, cudaStream_t st);
// convert.cu: ra, rb: n residue planes of the balanced op(A), op(B).
cudaError_t launch_convert(const Operands &op, const Sizes &s, const int *ebal, const int *mu, const int *nu,
                           int8_t *ra, int8_t *rb, int n, cudaStream_t st);
// igemm.cu: rc[l] = sym_{p_l}(ra[l] rb[l]^T), l < n.
cudaError_t launch_residue_gemm(const int8_t *ra, const int8_t *rb, int8_t *rc, const Sizes &s, int n,
                                int sm_count, cudaStream_t st);
// igemm.cu: result[0] = max(result[0], the largest over the elements of
// their smallest N certified at g (cert_raise) from the u8 magnitudes'
// products).
cudaError_t launch_magnitude_gemm(const CertBuffers &cb, const Sizes &s, double g, int sm_count, cudaStream_t st);
// crt.cu: C from rc's n planes.
cudaError_t launch_crt(const Operands &op, const Sizes &s, const ProductBuffers &pb, int n, float alpha, float beta,
                       float *c, int64_t ldc, cudaStream_t st);

}  // namespace ozaki
}  // namespace tgemm
