// The certificate of the fp32-tc math (ozaki.hpp, phase 1; NOTES.md (f)
// and (h) in research/ozaki): for every element, the smallest candidate N
// at which its truncation error stays within element.hpp's cert_target
// (below strict FP32's bound by a modulus's worth, and within
// 2 sqrt(K) u |A||B|), and the largest of them over the call: the N the
// call runs.
//
// Passes, on the K-balanced operands (x = ldexp_f(op(X)_rk, sign e_k)),
// after launch_stats (stats.cu), which also leaves max_k |x| per row as
// float bits in rmax_a/rmax_b and the flags for Inf or NaN in op(X) or a
// balanced value that is not exact (element.hpp's balance_flags) in
// result[1]:
//   cert_rows_kernel s_r = 7 - ilogb(max) (0 for a zero row) and, per
//                    candidate N, pw[N][r] = 2^(s_r - mu_r(N) - 16)
//   mag_kernel       Xu[r][kk] = floor(2^s_r |x|) (u8, K-contiguous, zero
//                    padded) and I_r = sum_k ceil(2^(s_r + 16) |x|) (int64
//                    atomics: integers, so order-free)
//   the magnitude GEMM (igemm.cu, CertEpi): result[0] = the largest over
//                    the elements of their smallest certified N (padding
//                    rows and columns have I = 0: kMinN, never above any
//                    real element's)
//
// Contract: reads op(A), op(B) inside m x k, k x n; k <= kCertMaxK. Every
// value is a function of the inputs alone, the CPU model's bit for bit.
#include "kernels/ozaki/passes.hpp"

namespace tgemm {
namespace ozaki {
namespace {

// 32 x 32 tile of op(X) at (r0, k0), element (r, kk) at X[r rs + kk ks],
// zeros outside R x K, stored as t[kk][r]; block (32, 8). Coalesced in
// either orientation.
__device__ __forceinline__ void load32(float (*t)[33], const float *__restrict__ X, int64_t rs, int64_t ks,
                                       int64_t R, int64_t K, int64_t r0, int64_t k0)
{
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        int r, kk;
        if (rs == 1) {
            r = threadIdx.x;
            kk = threadIdx.y + 8 * j;
        } else {
            r = threadIdx.y + 8 * j;
            kk = threadIdx.x;
        }
        t[kk][r] = (r0 + r < R && k0 + kk < K) ? X[(r0 + r) * rs + (k0 + kk) * ks] : 0.0f;
    }
}

// s[r] and pw[(N - kMinN) * Rp + r] for rows r < Rp (padding rows: s = 0,
// pw = 0; their I stays 0, which marks a zero row). part: the chunk sums of
// squares (chunks x R).
__global__ void cert_rows_kernel(int64_t R, int64_t Rp, const unsigned *__restrict__ rmax,
                                 const double *__restrict__ part, int64_t chunks, int *__restrict__ s,
                                 double *__restrict__ pw)
{
    const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (r >= Rp)
        return;
    const float mx = r < R ? u2f(rmax[r]) : 0.0f;
    const int sr = cert_shift(mx);
    s[r] = sr;
    const double norm2 = r < R ? norm_total(part + r, R, chunks) : 0.0;
    for (int t = 0; t < kCandidates; ++t)
        pw[t * Rp + r] = cert_power(mx, sr, norm2, kMinN + t);
}

// Xu and I (I zeroed by the caller).
__global__ void mag_kernel(const float *__restrict__ X, int64_t rs, int64_t ks, int64_t R, int64_t K, int64_t Rp,
                           int64_t Kp, const int *__restrict__ ebal, int sign, const int *__restrict__ srow,
                           uint8_t *__restrict__ out, unsigned long long *__restrict__ I)
{
    __shared__ float s[32][33];
    const int64_t r0 = int64_t(blockIdx.x) * 32, k0 = int64_t(blockIdx.y) * 32;
    load32(s, X, rs, ks, R, K, r0, k0);
    __syncthreads();
    const int kk = threadIdx.x;
    const int e = (k0 + kk < K) ? sign * ebal[k0 + kk] : 0;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const int r = threadIdx.y + 8 * j;
        const int64_t gr = r0 + r;
        unsigned c = 0;
        if (gr < Rp) {
            const float x = ldexp_f(s[kk][r], e);  // 0 outside the matrix
            unsigned fl;
            mag_pair(x, srow[gr], fl, c);
            out[size_t(gr) * size_t(Kp) + size_t(k0 + kk)] = uint8_t(fl);
        }
        // Sum over the 32 k of this row in the warp (each term < 2^24: the
        // sum fits 32 bits; integers, so exact in any order).
        for (int o = 16; o > 0; o >>= 1)
            c += __shfl_xor_sync(0xffffffffu, c, o);
        if (kk == 0 && gr < R && c)
            atomicAdd(I + gr, (unsigned long long)c);
    }
}

}  // namespace

cudaError_t launch_certificate(const Operands &op, const Sizes &s, const CertBuffers &cb, int sm_count,
                               cudaStream_t st)
{
    if (!fits(op))
        return cudaErrorInvalidValue;
    cudaError_t e = launch_stats(op, s, cb, st);
    if (e != cudaSuccess)
        return e;
    const struct {
        void *p;
        size_t bytes;
    } zero[] = {{cb.ones_a, size_t(s.mp) * 8}, {cb.ones_b, size_t(s.np) * 8}, {cb.result, sizeof(int)}};
    for (const auto &z : zero)
        if ((e = cudaMemsetAsync(z.p, 0, z.bytes, st)) != cudaSuccess)
            return e;
    const int64_t m = op.m, n = op.n, k = op.k;
    const unsigned kp32 = unsigned(s.kp / 32);
    cert_rows_kernel<<<unsigned((s.mp + 255) / 256), 256, 0, st>>>(m, s.mp, cb.rmax_a, cb.part_a, s.chunks,
                                                                   cb.shift_a, cb.pw_a);
    cert_rows_kernel<<<unsigned((s.np + 255) / 256), 256, 0, st>>>(n, s.np, cb.rmax_b, cb.part_b, s.chunks,
                                                                   cb.shift_b, cb.pw_b);
    mag_kernel<<<dim3(unsigned(s.mp / 32), kp32), dim3(32, 8), 0, st>>>(op.a, op.ars, op.aks, m, k, s.mp, s.kp,
                                                                        cb.ebal, +1, cb.shift_a, cb.mag_a, cb.ones_a);
    mag_kernel<<<dim3(unsigned(s.np / 32), kp32), dim3(32, 8), 0, st>>>(op.b, op.brs, op.bks, n, k, s.np, s.kp,
                                                                        cb.ebal, -1, cb.shift_b, cb.mag_b, cb.ones_b);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    return launch_magnitude_gemm(cb, s, cert_target(k), sm_count, st);
}

}  // namespace ozaki
}  // namespace tgemm
