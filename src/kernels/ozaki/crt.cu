// The fp32-tc math's last pass (ozaki.hpp, phase 2): Garner's CRT of the N
// residue planes, the scaling back by 2^-(mu_i + nu_j), the rounding to
// float and the alpha/beta epilogue (element.hpp's crt_element).
//
// Contract: C[j ldc + i] := crt_element(residues of Rc[.][j Mp + i],
// mu_i + nu_j, alpha, beta, C[j ldc + i]) for i < m, j < n; C read only
// where beta != 0, nothing outside the m x n elements written.
#include "kernels/ozaki/passes.hpp"
#include "kernels/ozaki/tiles.cuh"  // ld4, st4

#include <algorithm>

namespace tgemm {
namespace ozaki {
namespace {

// Garner's constants, in every device's constant memory from the module's image.
__constant__ GarnerTable c_garner = TGEMM_OZAKI_GARNER;

__device__ __forceinline__ unsigned ld_u32(const int8_t *p)
{
    return *reinterpret_cast<const unsigned *>(p);
}

// crt_group<N>: rows i0..i0+3 (i0 a multiple of 4, i0 < m) of column j:
// reads the 4 residues of each plane as one 32-bit word of Rc[l][j*Mp + i0]
// (Mp is a multiple of 4, so the word is aligned and inside the padded
// column; residues of rows >= m are read but not used), reads C only if
// beta != 0, and writes C[j*ldc + i] for i < m only. With cvec (C 16-byte
// aligned, ldc a multiple of 4) a whole group of 4 rows is one float4 load
// and store; otherwise (or at the last partial group) 4-byte accesses.
template <int N>
__device__ __forceinline__ void crt_group(const int8_t *__restrict__ Rc, int64_t Mp, int64_t Np, int64_t m,
                     const int *__restrict__ mu, int nuj, float alpha, float beta, float *__restrict__ C,
                     int64_t ldc, bool cvec, int64_t i0, int64_t j, const GarnerTable &g)
{
    const size_t plane = size_t(Mp) * size_t(Np), off = size_t(j) * size_t(Mp) + size_t(i0);
    unsigned wd[N];
#pragma unroll
    for (int l = 0; l < N; ++l) wd[l] = ld_u32(Rc + l * plane + off);
    float *c = C + j * ldc + i0;
    const bool full = cvec && i0 + 4 <= m;
    float cv[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    if (beta != 0.0f) {
        if (full) {
            const float4 v = ld4(c);
            cv[0] = v.x; cv[1] = v.y; cv[2] = v.z; cv[3] = v.w;
        } else {
#pragma unroll
            for (int q = 0; q < 4; ++q)
                if (i0 + q < m) cv[q] = c[q];
        }
    }
    float o[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
        const int e = (i0 + q < m ? mu[i0 + q] : 0) + nuj;
        int r[N];
#pragma unroll
        for (int l = 0; l < N; ++l) r[l] = int(int8_t(wd[l] >> (8 * q)));  // byte q = row i0 + q
        o[q] = crt_element<N>(r, e, alpha, beta, cv[q], g);
    }
    if (full) {
        st4(c, make_float4(o[0], o[1], o[2], o[3]));
    } else {
#pragma unroll
        for (int q = 0; q < 4; ++q)
            if (i0 + q < m) c[q] = o[q];
    }
}

// crt_kernel<N>: C[j*ldc + i] := crt_element(residues of Rc[.][j*Mp + i],
// mu_i + nu_j, alpha, beta, C[j*ldc + i]) for i < m, j < n (Rc: N int8
// planes, Mp x Np column-major). Block (bx, 256/bx), bx a power of 2 >= 32:
// threadIdx.x takes the 4-row groups of a column (a warp reads 128
// contiguous bytes per plane and writes 512 contiguous bytes of C),
// threadIdx.y columns; the columns are walked with a grid stride, so any n
// fits in grid.y <= 65535.
template <int N>
__global__ void __launch_bounds__(256)
crt_kernel(const int8_t *__restrict__ Rc, int64_t Mp, int64_t Np, int64_t m, int64_t n,
           const int *__restrict__ mu, const int *__restrict__ nu, float alpha, float beta,
           float *__restrict__ C, int64_t ldc, bool cvec)
{
    const int64_t i0 = 4 * (int64_t(blockIdx.x) * blockDim.x + threadIdx.x);
    if (i0 >= m) return;
    for (int64_t j = int64_t(blockIdx.y) * blockDim.y + threadIdx.y; j < n;
         j += int64_t(gridDim.y) * blockDim.y)
        crt_group<N>(Rc, Mp, Np, m, mu, nu[j], alpha, beta, C, ldc, cvec, i0, j, c_garner);
}

// crt_kernel's block and grid (see there).
struct CrtShape {
    unsigned bx, by, gx, gy;
};
CrtShape crt_shape(int64_t m, int64_t n)
{
    const int64_t groups = (m + 3) / 4;
    unsigned bx = 32;
    while (bx < 256 && bx < groups)
        bx *= 2;
    const unsigned by = 256 / bx;
    return {bx, by, unsigned((groups + bx - 1) / bx), unsigned(std::min<int64_t>((n + by - 1) / by, 65535))};
}

template <int N>
void launch_n(const Operands &op, const Sizes &s, const ProductBuffers &pb, float alpha, float beta, float *c,
              int64_t ldc, cudaStream_t st)
{
    const CrtShape g = crt_shape(op.m, op.n);
    const bool cvec = reinterpret_cast<uintptr_t>(c) % 16 == 0 && ldc % 4 == 0;
    crt_kernel<N><<<dim3(g.gx, g.gy), dim3(g.bx, g.by), 0, st>>>(pb.rc, s.mp, s.np, op.m, op.n, pb.mu, pb.nu,
                                                                  alpha, beta, c, ldc, cvec);
}

}  // namespace

cudaError_t launch_crt(const Operands &op, const Sizes &s, const ProductBuffers &pb, int n, float alpha, float beta,
                       float *c, int64_t ldc, cudaStream_t st)
{
    switch (n) {
    case 5: launch_n<5>(op, s, pb, alpha, beta, c, ldc, st); break;
    case 6: launch_n<6>(op, s, pb, alpha, beta, c, ldc, st); break;
    case 7: launch_n<7>(op, s, pb, alpha, beta, c, ldc, st); break;
    case 8: launch_n<8>(op, s, pb, alpha, beta, c, ldc, st); break;
    case 9: launch_n<9>(op, s, pb, alpha, beta, c, ldc, st); break;
    case 10: launch_n<10>(op, s, pb, alpha, beta, c, ldc, st); break;
    case 11: launch_n<11>(op, s, pb, alpha, beta, c, ldc, st); break;
    case 12: launch_n<12>(op, s, pb, alpha, beta, c, ldc, st); break;
    default: return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

}  // namespace ozaki
}  // namespace tgemm
