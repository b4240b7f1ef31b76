// The fp32-tc math's conversion (ozaki.hpp, phase 2): the residue planes
// of the K-balanced, scaled operands, int8, K-contiguous, zero padded.
//
// Contract: out[l*Rp*Kp + r*Kp + k] = the symmetric residue of
// trunc(2^mu_r ldexp(x_rk, sign e_k)) modulo p_l (element.hpp's residues),
// for l < N, r < Rp, k < Kp; 0 outside R x K (every byte of the planes is
// written). Reads op(X) inside R x K only.
#include "kernels/ozaki/passes.hpp"
#include "kernels/ozaki/tiles.cuh"

namespace tgemm {
namespace ozaki {
namespace {

// convert_kernel<N>: residue planes of op(X) after balancing, R rows of K
// padded to Rp x Kp (Rp a multiple of 32, Kp of 128):
//   out[l*Rp*Kp + r*Kp + k] = residue(ldexpf(x_rk, sign e_k), mu_r, p_l)
// for r < Rp, k < Kp, 0 outside R x K (every byte of the planes is written).
// Grid (Rp/32, Kp/128), 256 threads, one 32 x 128 tile per block (coalesced
// loads, see tile_load), walked as tiles.cuh's walk_row and walk_group say:
// thread t converts 16 consecutive k of one row and writes one 16-byte
// store per plane.

template <int N>
__device__ __forceinline__ void convert_tile(const float *s, const int *se, const int *__restrict__ mu, int64_t R, int64_t Rp,
                        int64_t Kp, int64_t r0, int64_t k0, int8_t *__restrict__ out, int t)
{
    const int r = walk_row(t), g = walk_group(t);
    const int64_t gr = r0 + r;
    const int m = gr < R ? mu[gr] : 0;
    unsigned pk[N][4];
#pragma unroll
    for (int c = 0; c < 4; ++c) {
        const int k = 16 * g + 4 * c;
        const float4 v = ld4(s + r * kWalkTK + tcol(r, k));
        const float x4[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            int res[N];
            residues<N>(ldexp_f(x4[q], se[k + q]), m, res);  // x = 0 outside R x K
#pragma unroll
            for (int l = 0; l < N; ++l) {
                const unsigned b = unsigned(res[l]) & 0xffu;
                pk[l][c] = q == 0 ? b : pk[l][c] | (b << (8 * q));
            }
        }
    }
    const size_t plane = size_t(Rp) * size_t(Kp);
    int8_t *o = out + size_t(gr) * size_t(Kp) + size_t(k0 + 16 * g);
#pragma unroll
    for (int l = 0; l < N; ++l) st_u32x4(o + l * plane, pk[l][0], pk[l][1], pk[l][2], pk[l][3]);
}

template <int N>
__global__ void __launch_bounds__(kTileThreads)
convert_kernel(const float *__restrict__ X, int64_t rs, int64_t ks, int64_t R, int64_t K, int mode,
               int64_t Rp, int64_t Kp, const int *__restrict__ ebal, int sign, const int *__restrict__ mu,
               int8_t *__restrict__ out)
{
    __shared__ __align__(16) float s[kWalkTR * kWalkTK];
    __shared__ int se[kWalkTK];
    const int t = threadIdx.x;
    const int64_t r0 = int64_t(blockIdx.x) * kWalkTR, k0 = int64_t(blockIdx.y) * kWalkTK;
    load_escale(se, kWalkTK, ebal, sign, K, k0, t);
    tile_load<kWalkTR, kWalkTK>(s, X, rs, ks, R, K, r0, k0, mode, t);
    __syncthreads();
    convert_tile<N>(s, se, mu, R, Rp, Kp, r0, k0, out, t);
}

template <int N>
void launch_n(const float *x, int64_t rs, int64_t ks, int64_t r, int64_t k, int64_t rp, int64_t kp,
              const int *e, int sign, const int *mu, int8_t *out, cudaStream_t st)
{
    const dim3 grid(unsigned(rp / kWalkTR), unsigned(kp / kWalkTK));
    convert_kernel<N><<<grid, kTileThreads, 0, st>>>(x, rs, ks, r, k, tile_mode(x, rs, ks), rp, kp, e, sign, mu,
                                                     out);
}

void launch_one(int n, const float *x, int64_t rs, int64_t ks, int64_t r, int64_t k, int64_t rp, int64_t kp,
                const int *e, int sign, const int *mu, int8_t *out, cudaStream_t st)
{
    switch (n) {
    case 5: launch_n<5>(x, rs, ks, r, k, rp, kp, e, sign, mu, out, st); break;
    case 6: launch_n<6>(x, rs, ks, r, k, rp, kp, e, sign, mu, out, st); break;
    case 7: launch_n<7>(x, rs, ks, r, k, rp, kp, e, sign, mu, out, st); break;
    case 8: launch_n<8>(x, rs, ks, r, k, rp, kp, e, sign, mu, out, st); break;
    case 9: launch_n<9>(x, rs, ks, r, k, rp, kp, e, sign, mu, out, st); break;
    case 10: launch_n<10>(x, rs, ks, r, k, rp, kp, e, sign, mu, out, st); break;
    case 11: launch_n<11>(x, rs, ks, r, k, rp, kp, e, sign, mu, out, st); break;
    default: launch_n<12>(x, rs, ks, r, k, rp, kp, e, sign, mu, out, st); break;
    }
}

}  // namespace

cudaError_t launch_convert(const Operands &op, const Sizes &s, const int *ebal, const int *mu, const int *nu,
                           int8_t *ra, int8_t *rb, int n, cudaStream_t st)
{
    static_assert(kGemmBM % kWalkTR == 0 && kGemmBN % kWalkTR == 0 && kGemmBK % kWalkTK == 0, "tiles");
    if (n < kMinN || n > kMaxN)
        return cudaErrorInvalidValue;
    launch_one(n, op.a, op.ars, op.aks, op.m, op.k, s.mp, s.kp, ebal, +1, mu, ra, st);
    launch_one(n, op.b, op.brs, op.bks, op.n, op.k, s.np, s.kp, ebal, -1, nu, rb, st);
    return cudaGetLastError();
}

}  // namespace ozaki
}  // namespace tgemm
