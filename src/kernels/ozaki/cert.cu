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
//                    real element's); once some element is certified by no
//                    N, or result[1] has a flag, it may stop early, and
//                    result[0] is then above kMaxN or not read
//
// Contract: reads op(A), op(B) inside m x k, k x n; k <= kCertMaxK. Every
// value the call uses is a function of the inputs alone, the CPU model's
// bit for bit: the N it runs, or that it declines.
#include "kernels/ozaki/passes.hpp"
#include "kernels/ozaki/tiles.cuh"

namespace tgemm {
namespace ozaki {
namespace {

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

// Xu and I (I zeroed by the caller) for rows r < Rp of the balanced op(X):
// Xu[r][k] = floor(2^s_r |x|) for k < Kp (0 outside R x K), I_r += sum_k
// ceil(2^(s_r + 16) |x|) for r < R. Grid (Rp/32, Kp/128), 256 threads, one
// 32 x 128 tile per block walked as tiles.cuh's walk_row and walk_group say:
// thread t takes 16 consecutive k of one row, stores their magnitudes with
// one 16-byte store, and adds their ceilings (each < 2^24, so the 32 of a
// row's two lanes < 2^29); the even lane of the pair adds them into I_r
// (int64 atomics: integers, so order-free).
__global__ void __launch_bounds__(kTileThreads)
mag_kernel(const float *__restrict__ X, int64_t rs, int64_t ks, int64_t R, int64_t K, int mode, int64_t Kp,
           const int *__restrict__ ebal, int sign, const int *__restrict__ srow, uint8_t *__restrict__ out,
           unsigned long long *__restrict__ I)
{
    __shared__ __align__(16) float s[kWalkTR * kWalkTK];
    __shared__ int se[kWalkTK];
    const int t = threadIdx.x;
    const int64_t r0 = int64_t(blockIdx.x) * kWalkTR, k0 = int64_t(blockIdx.y) * kWalkTK;
    load_escale(se, kWalkTK, ebal, sign, K, k0, t);
    tile_load<kWalkTR, kWalkTK>(s, X, rs, ks, R, K, r0, k0, mode, t);
    __syncthreads();
    const int r = walk_row(t), g = walk_group(t);
    const int64_t gr = r0 + r;
    const int sr = srow[gr];
    unsigned pk[4] = {}, sum = 0;
#pragma unroll
    for (int c = 0; c < 4; ++c) {
        const int k = 16 * g + 4 * c;
        const float4 v = ld4(s + r * kWalkTK + tcol(r, k));
        const float x4[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            unsigned fl, ce;
            mag_pair(ldexp_f(x4[q], se[k + q]), sr, fl, ce);  // x = 0 outside R x K
            pk[c] |= fl << (8 * q);
            sum += ce;
        }
    }
    st_u32x4(out + size_t(gr) * size_t(Kp) + size_t(k0 + 16 * g), pk[0], pk[1], pk[2], pk[3]);
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    if ((t & 1) == 0 && gr < R && sum)
        atomicAdd(I + gr, (unsigned long long)sum);
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
    cert_rows_kernel<<<unsigned((s.mp + 255) / 256), 256, 0, st>>>(m, s.mp, cb.rmax_a, cb.part_a, s.chunks,
                                                                   cb.shift_a, cb.pw_a);
    cert_rows_kernel<<<unsigned((s.np + 255) / 256), 256, 0, st>>>(n, s.np, cb.rmax_b, cb.part_b, s.chunks,
                                                                   cb.shift_b, cb.pw_b);
    static_assert(kGemmBM % kWalkTR == 0 && kGemmBN % kWalkTR == 0 && kGemmBK % kWalkTK == 0, "tiles");
    const unsigned kt = unsigned(s.kp / kWalkTK);
    mag_kernel<<<dim3(unsigned(s.mp / kWalkTR), kt), kTileThreads, 0, st>>>(
        op.a, op.ars, op.aks, m, k, tile_mode(op.a, op.ars, op.aks), s.kp, cb.ebal, +1, cb.shift_a, cb.mag_a,
        cb.ones_a);
    mag_kernel<<<dim3(unsigned(s.np / kWalkTR), kt), kTileThreads, 0, st>>>(
        op.b, op.brs, op.bks, n, k, tile_mode(op.b, op.brs, op.bks), s.kp, cb.ebal, -1, cb.shift_b, cb.mag_b,
        cb.ones_b);
    if ((e = cudaGetLastError()) != cudaSuccess)
        return e;
    return launch_magnitude_gemm(cb, s, cert_target(k), sm_count, st);
}

}  // namespace ozaki
}  // namespace tgemm
