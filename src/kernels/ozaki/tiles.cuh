// Tiles of op(X) in shared memory for the fp32-tc math's passes over the
// FP32 operands (stats.cu, convert.cu, cert.cu): coalesced global loads whatever the
// operand's orientation, bank-conflict-free shared accesses. Device code;
// included by those kernel files only.
#pragma once

#include <cstdint>

#include "kernels/ozaki/ozaki.hpp"

namespace tgemm {
namespace ozaki {

__device__ __forceinline__ float4 ld4(const float *p)
{
    return *reinterpret_cast<const float4 *>(p);
}
__device__ __forceinline__ void st4(float *p, float4 v)
{
    *reinterpret_cast<float4 *>(p) = v;
}
// 16 bytes (4 words of 4 packed bytes) at a 16-byte aligned p.
__device__ __forceinline__ void st_u32x4(void *p, unsigned a, unsigned b, unsigned c, unsigned d)
{
    *reinterpret_cast<uint4 *>(p) = make_uint4(a, b, c, d);
}

// --- Tiles of op(X) in shared memory --------------------------------------
// op(X) is R rows of K; element (r, k) at X[r*rs + k*ks]. For every operand
// either ks == 1 (rows K-contiguous: A^T, B) or rs == 1 (rows contiguous down
// a column: A, B^T); tile_mode() (ozaki.hpp) records which, and whether float4 accesses
// are possible (X 16-byte aligned and the other stride a multiple of 4).
//
// A tile of TR rows x TK k sits in shared memory row-major, element (r, k) at
// s[r*TK + tcol(r, k)]: the swizzle permutes the float4 groups inside each
// 32-float segment of a row by sw(r) = (r ^ r >> 2) & 7. Row pitches are
// multiples of 32 words, so without it every row would start on bank 0; with
// it, any 8 consecutive rows (and any 8 rows 4 apart, 4a + q for a = 0..7)
// put a given float4 group on 8 different bank quads. Each load and read
// pattern below is chosen so that a quarter-warp's float4 accesses (or a
// warp's 4-byte accesses) hit 32 different banks.

__device__ __forceinline__ int tcol(int r, int k) { return k ^ (((r ^ (r >> 2)) & 7) << 2); }

// Rows-contiguous patterns: warp w's j-th access group g = w + 8j covers
// 8 x 4 (row, k) lanes. Float4: group g = 32 rows x 4 k, rows 32 (g % GR) +
// 4a, k 4 (g / GR) + b, GR = TR/32 groups per k. Scalar: 8 rows x 4 k, rows
// 8 (g % GR) + a, k 4 (g / GR) + b, GR = TR/8. Written out for w < 8 so the
// j-dependent parts are compile-time constants.
template <int GR>
__device__ __forceinline__ void split_group(int w, int j, int &gr, int &gk)
{
    static_assert(GR % 8 == 0 || 8 % GR == 0, "groups");
    if constexpr (GR >= 8) { gr = w + 8 * (j % (GR / 8)); gk = j / (GR / 8); }
    else { gr = w % GR; gk = w / GR + (8 / GR) * j; }
}
template <int TR>
__device__ __forceinline__ void rows_vec_rk(int w, int j, int a, int b, int &r, int &k)
{
    int gr, gk;
    split_group<TR / 32>(w, j, gr, gk);
    r = 32 * gr + 4 * a; k = 4 * gk + b;
}
template <int TR>
__device__ __forceinline__ void rows_scalar_rk(int w, int j, int a, int b, int &r, int &k)
{
    int gr, gk;
    split_group<TR / 8>(w, j, gr, gk);
    r = 8 * gr + a; k = 4 * gk + b;
}

// Thread t's share of loading the TR x TK tile at (r0, k0) of op(X) into s;
// zeros outside R x K (so padding rows and columns come out as 0). Global
// accesses per warp instruction:
//   Kc, Vec:  consecutive threads take consecutive float4 along a row: whole
//             128-byte lines (TK/4 >= 8 threads per row).
//   Kc:       32 consecutive k of one row: one 128-byte line.
//   rows, Vec: 8 lanes take 8 float4 = 32 consecutive rows of one k (a
//             128-byte line), 4 k per instruction.
//   rows:     8 lanes take 8 consecutive rows (32 bytes) of one k, 4 k per
//             instruction (when the column stride or X is not 16-byte
//             aligned).
// The last two map lanes to (rows 4a+q or 8b+a, a = lane & 7; k = lane >> 3)
// rather than 32 rows of one k, so that the scalar shared stores spread over
// 32 banks (k's low 2 bits and the swizzle take 4 x 8 values). Tiles wholly
// inside R x K (all but the last row and k tiles) load without bounds checks,
// all loads in flight before the shared stores; edge tiles use the scalar
// pattern of their orientation with a check per element.
template <int TR, int TK>
__device__ __forceinline__ void tile_load(float *__restrict__ s, const float *__restrict__ X, int64_t rs, int64_t ks,
                     int64_t R, int64_t K, int64_t r0, int64_t k0, int mode, int t)
{
    static_assert(TR % 32 == 0 && TK % 32 == 0, "tile sides must be multiples of 32");
    constexpr int NV = TR * TK / (4 * kTileThreads);  // float4 per thread
    static_assert(NV >= 1 && NV * 4 * kTileThreads == TR * TK, "tile size");
    const int lane = t & 31, w = t >> 5;
    const bool kc = mode & kTileKc;
    if (r0 + TR > R || k0 + TK > K) {  // edge tile (rare: one load at a time)
#pragma unroll 1
        for (int j = 0; j < 4 * NV; ++j) {
            int r, k;
            if (kc) {
                const int i = t + kTileThreads * j;
                r = i / TK; k = i % TK;
            } else {
                rows_scalar_rk<TR>(w, j, lane & 7, lane >> 3, r, k);
            }
            const int64_t gr = r0 + r, gk = k0 + k;
            s[r * TK + tcol(r, k)] = (gr < R && gk < K) ? X[gr * rs + gk * ks] : 0.0f;
        }
        return;
    }
    if (kc) {
        if (mode & kTileVec) {
            constexpr int RS = kTileThreads / (TK / 4);  // rows per step
            const int r = t / (TK / 4), k = 4 * (t % (TK / 4));
            const float *p = X + (r0 + r) * rs + (k0 + k);
            float4 v[NV];
#pragma unroll
            for (int j = 0; j < NV; ++j) v[j] = ld4(p + j * RS * rs);
#pragma unroll
            for (int j = 0; j < NV; ++j) st4(s + (r + j * RS) * TK + tcol(r + j * RS, k), v[j]);
        } else {
            constexpr int RS = kTileThreads / TK;
            const int r = t / TK, k = t % TK;
            const float *p = X + (r0 + r) * rs + (k0 + k);
            float v[4 * NV];
#pragma unroll
            for (int j = 0; j < 4 * NV; ++j) v[j] = p[j * RS * rs];
#pragma unroll
            for (int j = 0; j < 4 * NV; ++j) s[(r + j * RS) * TK + tcol(r + j * RS, k)] = v[j];
        }
    } else {  // rs == 1
        // Lane part (a = lane & 7 along rows, b = lane >> 3 along k) and
        // per-j parts with compile-time coefficients, so that the loads
        // differ only by immediate offsets and multiples of ks.
        const int a = lane & 7, b = lane >> 3;
        if (mode & kTileVec) {
            float4 v[NV];
#pragma unroll
            for (int j = 0; j < NV; ++j) {
                int r, k;
                rows_vec_rk<TR>(w, j, a, b, r, k);
                v[j] = ld4(X + (r0 + r) + (k0 + k) * ks);
            }
#pragma unroll
            for (int j = 0; j < NV; ++j) {
                int r, k;
                rows_vec_rk<TR>(w, j, a, b, r, k);
                s[(r + 0) * TK + tcol(r + 0, k)] = v[j].x;
                s[(r + 1) * TK + tcol(r + 1, k)] = v[j].y;
                s[(r + 2) * TK + tcol(r + 2, k)] = v[j].z;
                s[(r + 3) * TK + tcol(r + 3, k)] = v[j].w;
            }
        } else {
            float v[4 * NV];
#pragma unroll
            for (int j = 0; j < 4 * NV; ++j) {
                int r, k;
                rows_scalar_rk<TR>(w, j, a, b, r, k);
                v[j] = X[(r0 + r) + (k0 + k) * ks];
            }
#pragma unroll
            for (int j = 0; j < 4 * NV; ++j) {
                int r, k;
                rows_scalar_rk<TR>(w, j, a, b, r, k);
                s[r * TK + tcol(r, k)] = v[j];
            }
        }
    }
}

// The per-element walk over a 32 x 128 tile (convert.cu, cert.cu's
// magnitudes): block (bx, by) takes rows 32 bx.. and k 128 by..; thread t
// takes 16 consecutive k, 16 walk_group(t).., of row walk_row(t). Lanes 2x
// and 2x+1 of a warp take the two 16-k halves of the same row, so a warp's
// 16-byte stores of bytes cover 16 whole 32-byte sectors; the 4 rows of a
// quarter-warp have distinct swizzles mod 4, so its float4 shared reads are
// conflict-free.
constexpr int kWalkTR = 32, kWalkTK = 128;
__device__ __forceinline__ int walk_row(int t) { return 16 * ((t >> 5) & 1) + ((t & 31) >> 1); }
__device__ __forceinline__ int walk_group(int t) { return 2 * (t >> 6) + (t & 1); }

// sign * e_k for k in [k0, k0 + n), 0 past K: the scaling the tile kernels
// apply to each column (thread t's share).
__device__ __forceinline__ void load_escale(int *se, int n, const int *ebal, int sign, int64_t K, int64_t k0, int t)
{
    for (int i = t; i < n; i += kTileThreads) se[i] = k0 + i < K ? sign * ebal[k0 + i] : 0;
}

}  // namespace ozaki
}  // namespace tgemm
