// Register-blocked FP32 SGEMM on the CUDA cores: one template family,
// parameterised by tile shape, covering every transpose pair and every size.
//
// Contract (what the launcher guarantees):
//   - GemmParams is column-major, m >= 1, n >= 1, k >= 1, alpha != 0
//     (alpha == 0 and k == 0 go to the scaling kernel instead);
//   - a, b, c are device-accessible and c does not overlap a or b;
//   - kAligned: a, b, c are 16-byte aligned and lda, ldb, ldc are multiples
//     of 4, so every 4-element group that starts at a multiple of 4 can be
//     moved as one 128-bit access. Without it every access is scalar.
//   - the grid is ceil(m/BM) * ceil(n/BN) blocks of T::kThreads along x, and
//     one slice of K per y (SplitK); with more than one slice in workspace
//     form, kAligned promises m % 4 == 0 for C's part (the workspace has
//     ld = m); in cluster form the slices of a tile are one cluster along y,
//     with kClusterSmemBytes of shared memory.
//
// What the kernel does:
//   - each block owns a BM x BN tile of C and walks K in steps of BK;
//     global loads for step t+1 are issued into registers before the FFMAs
//     of step t, and land in the other of two shared-memory stages;
//   - the shared layout is K-major for both operands (sa[k][m], sb[k][n]),
//     so each thread reads its A and B fragments as 128-bit vectors; operands
//     whose contiguous dimension is K are transposed on the way in;
//   - a warp is 8 x 4 lanes; a lane owns (WM/8) x (WN/4) elements of C as
//     4 x 4 sub-blocks strided 32 rows and 16 columns apart, which makes the
//     fragment reads conflict-free and the C stores 128-byte coalesced;
//   - split-K slices finish either in a workspace (reduced by a second
//     kernel) or inside their cluster through distributed shared memory;
//   - edges are predicated inside the kernel: out-of-range elements load as
//     zero and are never stored; nothing outside the m x n region is touched;
//   - beta == 0 never reads C.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include "gemm_params.hpp"

namespace tgemm {
namespace kernels {

// kClusterForm_: whether the family has the cluster form of split-K (false
// where its cluster kernels would spill registers). kUnalignedUnroll_: how
// many of a stage's BK rows the unaligned kernels unroll at a time (the
// aligned ones unroll all): measured per family (256x128x16: 8 rows made
// 4095^3 3% faster, and 4096^3 aligned 4% slower). kAsyncStages_: 0 for the
// two stages fed through registers; else the depth of a ring of stages that
// copies fill straight from global memory (cp.async, AsyncLoader), for
// families whose blocks walk only a few K steps and so cannot hide a load's
// latency behind one step's FFMAs. kWholeRing_: 0, or the depth of the ring
// through which blocks of whole tiles take their operands contiguous along M
// or N (multiply_tile_whole_ring, kWholeRingStep); the other blocks keep the
// family's path. kWholeRingSkip_: the transpose pairs (pair_bit) whose
// kernels keep the family's path although they could take the ring, where
// the ring measured slower.
constexpr unsigned pair_bit(bool trans_a, bool trans_b)
{
    return 1u << ((trans_a ? 2 : 0) + (trans_b ? 1 : 0));
}

template <int BM_, int BN_, int BK_, int WM_, int WN_, int kMinBlocks_, bool kClusterForm_ = true,
          int kUnalignedUnroll_ = BK_, int kAsyncStages_ = 0, int kWholeRing_ = 0, unsigned kWholeRingSkip_ = 0>
struct TileShape {
    static constexpr int BM = BM_, BN = BN_, BK = BK_;
    static constexpr int WM = WM_, WN = WN_;
    static constexpr int kMinBlocks = kMinBlocks_;
    static constexpr bool kClusterForm = kClusterForm_;
    static constexpr int kUnalignedUnroll = kUnalignedUnroll_;
    static constexpr int kAsyncStages = kAsyncStages_;
    static constexpr int kWholeRing = kWholeRing_;
    static constexpr unsigned kWholeRingSkip = kWholeRingSkip_;
    // Shared stages of each operand: the deeper ring, at least the register path's 2.
    static constexpr int kBuffers = std::max({2, kAsyncStages, kWholeRing});
    static constexpr int kLanesM = 8, kLanesN = 4;
    static constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN;
    static constexpr int kThreads = kWarpsM * kWarpsN * 32;
    static constexpr int TM = WM / kLanesM, TN = WN / kLanesN;  // per-lane C tile
    static constexpr int kSubM = TM / 4, kSubN = TN / 4;        // 4x4 sub-blocks per lane
    static constexpr int kStrideM = kLanesM * 4, kStrideN = kLanesN * 4;
    // Padding keeps rows 16-byte aligned and spreads the transposing stores
    // of K-contiguous operands over different banks.
    static constexpr int kLdsA = BM + 4, kLdsB = BN + 4;
    static constexpr int kStageA = BK * kLdsA, kStageB = BK * kLdsB;
    static constexpr size_t kSmemBytes = sizeof(float) * kBuffers * (kStageA + kStageB);
    // Cluster form of split-K: the stages, then the block's BM x BN sums, in
    // the same place; after them the tile's origin (two int64_t) and the
    // float 1 that the sums are scaled by on their way there (cluster_store_tile).
    static constexpr size_t kClusterStash =
        kSmemBytes > sizeof(float) * BM * BN ? kSmemBytes : sizeof(float) * BM * BN;
    static constexpr size_t kClusterSmemBytes = kClusterStash + 3 * sizeof(int64_t);

    static_assert(BM % WM == 0 && BN % WN == 0, "warps must tile the block");
    static_assert(TM % 4 == 0 && TN % 4 == 0, "lanes own whole 4x4 sub-blocks");
    static_assert(BK % 4 == 0, "K-contiguous loads move 4 elements of K");
    static_assert((BM * BK) % (4 * kThreads) == 0 && (BN * BK) % (4 * kThreads) == 0,
                  "every thread loads the same number of 4-element groups");
    static_assert(kAsyncStages == 0 || (kAsyncStages >= 2 && BK % 8 == 0 && BM % 4 == 0 && BN % 4 == 0),
                  "an async ring has 2 stages or more; K-contiguous copies go 8 K x 4 rows a warp");
};

__device__ __forceinline__ float4 load4(const float *p)
{
    return __ldg(reinterpret_cast<const float4 *>(p));
}

// Moves one operand's BMN x BK tile from global memory to shared memory in
// two steps (load into registers, then store), so that the loads of the next
// tile can be in flight while the current one is multiplied.
//
// kMnContig: element (mn, kk) of the tile is at base[mn + kk * ld]
//            (A not transposed, B transposed); otherwise at base[kk + mn * ld].
// Each thread moves kGroups groups of 4 elements that are adjacent in memory.
// kWholePath: tiles wholly inside the matrix take a path of their own (see
// load). Only the families of one block per SM (up to 255 registers) take
// it: at 128 registers its code made 128x64x8 spill and 128x128x8 slower.
template <int BMN, int BK, int kThreads, bool kMnContig, bool kVec, bool kWholePath>
struct TileLoader {
    static constexpr int kGroups = BMN * BK / (4 * kThreads);
    static constexpr int kLds = BMN + 4;

    const float *ptr[kGroups];
    int mn[kGroups], kk[kGroups];
    float4 v[kGroups];
    int64_t step;

    // base points at element (0, 0) of the block's first K tile; rows >= rem_mn
    // of this block are outside the matrix and are never dereferenced.
    __device__ __forceinline__ TileLoader(const float *base, int64_t ld, int rem_mn)
    {
#pragma unroll
        for (int r = 0; r < kGroups; ++r) {
            const int g = threadIdx.x + r * kThreads;
            if (kMnContig) {
                mn[r] = (g % (BMN / 4)) * 4;
                kk[r] = g / (BMN / 4);
            } else {
                kk[r] = (g % (BK / 4)) * 4;
                mn[r] = g / (BK / 4);
            }
            const int row = mn[r] < rem_mn ? mn[r] : 0;
            ptr[r] = kMnContig ? base + row + kk[r] * ld : base + kk[r] + row * ld;
        }
        step = kMnContig ? BK * ld : BK;
    }

    // Loads the current K tile (rem_k of its BK columns exist) and advances.
    // A tile wholly inside the matrix (every block's tiles but the edges')
    // takes one block-uniform branch to straight-line loads: no test, branch
    // or zero fill per group, which would otherwise cost about a tenth of
    // the instructions of a K step of the large families.
    __device__ __forceinline__ void load(int rem_mn, int rem_k)
    {
        if (kWholePath && rem_mn == BMN && rem_k == BK) {
            load_whole(true);
            return;
        }
#pragma unroll
        for (int r = 0; r < kGroups; ++r) {
            const float *p = ptr[r];
            if (kMnContig) {
                const bool k_ok = kk[r] < rem_k;
                if (kVec && k_ok && mn[r] + 3 < rem_mn) {
                    v[r] = load4(p);
                } else {
                    v[r].x = (k_ok && mn[r] + 0 < rem_mn) ? __ldg(p + 0) : 0.0f;
                    v[r].y = (k_ok && mn[r] + 1 < rem_mn) ? __ldg(p + 1) : 0.0f;
                    v[r].z = (k_ok && mn[r] + 2 < rem_mn) ? __ldg(p + 2) : 0.0f;
                    v[r].w = (k_ok && mn[r] + 3 < rem_mn) ? __ldg(p + 3) : 0.0f;
                }
            } else {
                const bool mn_ok = mn[r] < rem_mn;
                if (kVec && mn_ok && kk[r] + 3 < rem_k) {
                    v[r] = load4(p);
                } else {
                    v[r].x = (mn_ok && kk[r] + 0 < rem_k) ? __ldg(p + 0) : 0.0f;
                    v[r].y = (mn_ok && kk[r] + 1 < rem_k) ? __ldg(p + 1) : 0.0f;
                    v[r].z = (mn_ok && kk[r] + 2 < rem_k) ? __ldg(p + 2) : 0.0f;
                    v[r].w = (mn_ok && kk[r] + 3 < rem_k) ? __ldg(p + 3) : 0.0f;
                }
            }
            ptr[r] = p + step;
        }
    }

    // load() of a tile wholly inside the matrix; with advance false the
    // loader stays on this tile (multiply_tile's branch-free K step); with
    // issue false nothing is loaded (predicated: multiply_tile_whole_ring).
    __device__ __forceinline__ void load_whole(bool advance, bool issue = true)
    {
        const int64_t by = advance ? step : 0;
#pragma unroll
        for (int r = 0; r < kGroups; ++r) {
            const float *p = ptr[r];
            if (issue)
                v[r] = kVec ? load4(p) : make_float4(__ldg(p), __ldg(p + 1), __ldg(p + 2), __ldg(p + 3));
            ptr[r] = p + by;
        }
    }

    // Stores the loaded tile K-major: s[kk * kLds + mn].
    __device__ __forceinline__ void store(float *s) const
    {
#pragma unroll
        for (int r = 0; r < kGroups; ++r) {
            if (kMnContig) {
                *reinterpret_cast<float4 *>(s + kk[r] * kLds + mn[r]) = v[r];
            } else {
                s[(kk[r] + 0) * kLds + mn[r]] = v[r].x;
                s[(kk[r] + 1) * kLds + mn[r]] = v[r].y;
                s[(kk[r] + 2) * kLds + mn[r]] = v[r].z;
                s[(kk[r] + 3) * kLds + mn[r]] = v[r].w;
            }
        }
    }
};

// cp.async of `bytes` (4 or 16; 16 with 16-byte aligned addresses) from
// global src to shared dst; of the source only `valid` bytes are read (0 to
// `bytes`), the rest of dst is filled with zeros. .cg (16 bytes) keeps the
// copy out of L1; 4-byte copies must go through it (.ca).
template <int kBytes>
__device__ __forceinline__ void copy_async(float *dst, const float *src, int valid)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    if constexpr (kBytes == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(valid) : "memory");
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d), "l"(src), "r"(valid) : "memory");
#else
    (void)dst, (void)src, (void)valid;
#endif
}

// cp.async of 16 bytes that all lie inside the operand (no source size),
// where `issue`, else nothing: a predicated copy, no branch. Not
// copy_async<16> with a source size of 0, which still makes a copy (of
// zeros) for the group to wait for.
__device__ __forceinline__ void copy_async16_if(float *dst, const float *src, bool issue)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %2, 0;\n @p cp.async.cg.shared.global [%0], [%1], 16;\n}\n" ::"r"(d),
                 "l"(src), "r"(static_cast<int>(issue))
                 : "memory");
#else
    (void)dst, (void)src, (void)issue;
#endif
}

__device__ __forceinline__ void copy_async_commit()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// Waits until at most kPending of this thread's committed copy groups are
// still in flight.
template <int kPending>
__device__ __forceinline__ void copy_async_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
#endif
}

// TileLoader's job for the async ring (TileShape::kAsyncStages): copies one
// operand's BMN x BK tile straight into a shared stage, K-major as TileLoader
// stores it (s[kk * kLds + mn]), with no registers in between.
//
// kMnContig (element (mn, kk) at base[mn + kk * ld]): 4 elements adjacent in
// mn per copy, 16 bytes when kVec (a copy that hangs over the matrix's edge
// reads only the bytes inside it), else 4 copies of 4 bytes. K-contiguous
// (base[kk + mn * ld]): one element per copy, a warp's 32 copies covering 8
// consecutive kk (32 bytes of memory) of 4 values of mn; with kLds = BMN + 4
// the 32 shared addresses fall on 32 distinct banks.
//
// Elements outside the matrix are zero-filled, their copies given the
// tile's first element (always inside) as source, so no copy points outside
// the operand.
template <int BMN, int BK, int kThreads, bool kMnContig, bool kVec>
struct AsyncLoader {
    static constexpr int kLds = BMN + 4;
    static constexpr int kCopies = kMnContig ? BMN * BK / (4 * kThreads) : BMN * BK / kThreads;
    // A thread's copies differ only by whole rows of K (kMnContig) or of mn:
    // one offset per thread, the rest constants, so no per-copy state is
    // kept in registers (kept as arrays, as TileLoader keeps them, ptxas
    // spilled at the 128-register cap).
    static_assert(kMnContig ? kThreads % (BMN / 4) == 0 : (kThreads / 32) % (BK / 8) == 0,
                  "a thread's copies differ by whole rows");
    static constexpr int kRowStep = kMnContig ? kThreads / (BMN / 4) : 4 * (kThreads / 32) / (BK / 8);

    const float *base;  // the thread's first copy's source in the current K tile
    const float *first; // the current K tile's element (0, 0): the source of zero-filled copies
    int64_t ld;
    int mn, kk;         // the thread's first copy's element in the tile

    __device__ __forceinline__ AsyncLoader(const float *tile, int64_t ld_) : first(tile), ld(ld_)
    {
        const int t = threadIdx.x;
        if (kMnContig) {
            mn = (t % (BMN / 4)) * 4;
            kk = t / (BMN / 4);
        } else {
            const int lane = t % 32, w = t / 32;
            kk = lane % 8 + 8 * (w % (BK / 8));
            mn = lane / 8 + 4 * (w / (BK / 8));
        }
        base = kMnContig ? tile + mn + kk * ld : tile + kk + mn * ld;
    }

    // Copies the current K tile (rem_mn x rem_k of it inside the matrix)
    // into stage s, and advances to the next.
    __device__ __forceinline__ void copy(float *s, int rem_mn, int rem_k)
    {
        float *const dst0 = s + kk * kLds + mn;
        const int64_t row_step = kRowStep * ld;
#pragma unroll
        for (int r = 0; r < kCopies; ++r) {
            const float *const src = base + r * row_step;
            if (kMnContig) {
                float *const dst = dst0 + r * kRowStep * kLds;
                const bool k_ok = kk + r * kRowStep < rem_k;
                if (kVec) {
                    const int left = rem_mn - mn;
                    const int valid = !k_ok || left <= 0 ? 0 : left >= 4 ? 16 : 4 * left;
                    copy_async<16>(dst, valid > 0 ? src : first, valid);
                } else {
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        const bool ok = k_ok && mn + e < rem_mn;
                        copy_async<4>(dst + e, ok ? src + e : first, ok ? 4 : 0);
                    }
                }
            } else {
                const bool ok = kk < rem_k && mn + r * kRowStep < rem_mn;
                copy_async<4>(dst0 + r * kRowStep, ok ? src : first, ok ? 4 : 0);
            }
        }
        const int64_t step = kMnContig ? BK * ld : BK;
        base += step;
        first += step;
    }

    // copy() of a tile wholly inside the matrix, contiguous along mn and
    // aligned: 16-byte copies with no test and no zero fill, issued only
    // where `issue` (predicated). With advance false the loader stays on
    // this tile (multiply_tile_whole_ring).
    __device__ __forceinline__ void copy_whole(float *s, bool advance, bool issue)
    {
        static_assert(kMnContig && kVec, "whole tiles go 16 bytes a copy along mn");
        float *const dst0 = s + kk * kLds + mn;
        const int64_t row_step = kRowStep * ld;
#pragma unroll
        for (int r = 0; r < kCopies; ++r)
            copy_async16_if(dst0 + r * kRowStep * kLds, base + r * row_step, issue);
        const int64_t step = advance ? BK * ld : 0;
        base += step;
        first += step;
    }
};

// acc += the lane's share of sa * sb over one BK-deep stage, kUnroll rows
// of it unrolled at a time.
template <class T, int kUnroll = T::BK>
__device__ __forceinline__ void multiply_stage(const float *sa, const float *sb,
                                               float (&acc)[T::TM][T::TN])
{
#pragma unroll kUnroll
    for (int kk = 0; kk < T::BK; ++kk) {
        float a[T::TM], b[T::TN];
#pragma unroll
        for (int i = 0; i < T::kSubM; ++i) {
            const float4 t = *reinterpret_cast<const float4 *>(sa + kk * T::kLdsA + i * T::kStrideM);
            a[4 * i + 0] = t.x; a[4 * i + 1] = t.y; a[4 * i + 2] = t.z; a[4 * i + 3] = t.w;
        }
#pragma unroll
        for (int j = 0; j < T::kSubN; ++j) {
            const float4 t = *reinterpret_cast<const float4 *>(sb + kk * T::kLdsB + j * T::kStrideN);
            b[4 * j + 0] = t.x; b[4 * j + 1] = t.y; b[4 * j + 2] = t.z; b[4 * j + 3] = t.w;
        }
        // The one-block-per-SM families walk each row of their products in
        // alternate directions (serpentine), so that consecutive FFMAs
        // share an operand register across the turn as well as along the
        // row: H100, 256x128x16, 4096^3 NN 48.1 -> 49.4 TFLOP/s and 4095^3
        // 44.4 -> 46.6. The others keep the plain order: with it 128x128x8
        // and 128x64x8 spill.
        constexpr bool kSerpentine = T::kMinBlocks == 1;
#pragma unroll
        for (int i = 0; i < T::TM; ++i)
#pragma unroll
            for (int jj = 0; jj < T::TN; ++jj) {
                const int j = kSerpentine && (i & 1) ? T::TN - 1 - jj : jj;
                acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
            }
    }
}

// Writes r[0..3] (already times alpha) to rows lm to lm + 3 of one column of
// C at p, adding beta times the old values when beta != 0 (never reading C
// when beta == 0); rows from rem_m on do not exist.
template <bool kVec>
__device__ __forceinline__ void store_c4(float *p, const float (&r)[4], int lm, int rem_m, float beta)
{
    if (kVec && lm + 3 < rem_m) {
        float4 out = make_float4(r[0], r[1], r[2], r[3]);
        if (beta != 0.0f) {
            const float4 old = *reinterpret_cast<const float4 *>(p);
            out.x = fmaf(beta, old.x, out.x);
            out.y = fmaf(beta, old.y, out.y);
            out.z = fmaf(beta, old.z, out.z);
            out.w = fmaf(beta, old.w, out.w);
        }
        *reinterpret_cast<float4 *>(p) = out;
    } else {
#pragma unroll
        for (int ii = 0; ii < 4; ++ii) {
            if (lm + ii < rem_m)
                p[ii] = beta != 0.0f ? fmaf(beta, p[ii], r[ii]) : r[ii];
        }
    }
}

// The old values of rows lm to lm + 3 of one column of C at p (rows from
// rem_m on do not exist and read as 0), for put_c4.
template <bool kVec>
__device__ __forceinline__ float4 load_c4(const float *p, int lm, int rem_m)
{
    if (kVec && lm + 3 < rem_m)
        return *reinterpret_cast<const float4 *>(p);
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    v.x = lm + 0 < rem_m ? p[0] : 0.0f;
    v.y = lm + 1 < rem_m ? p[1] : 0.0f;
    v.z = lm + 2 < rem_m ? p[2] : 0.0f;
    v.w = lm + 3 < rem_m ? p[3] : 0.0f;
    return v;
}

// store_c4 with the old values of C already loaded (load_c4; not read when
// beta == 0): the same arithmetic. A copy, kept so that store_c4, in every
// tiled kernel's epilogue, stays as it is: store_c4 written as load_c4 plus
// put_c4 changed the machine code of all of them (cubins compared).
template <bool kVec>
__device__ __forceinline__ void put_c4(float *p, const float (&r)[4], const float (&old)[4], int lm, int rem_m,
                                       float beta)
{
    float out[4];
#pragma unroll
    for (int ii = 0; ii < 4; ++ii)
        out[ii] = beta != 0.0f ? fmaf(beta, old[ii], r[ii]) : r[ii];
    if (kVec && lm + 3 < rem_m) {
        *reinterpret_cast<float4 *>(p) = make_float4(out[0], out[1], out[2], out[3]);
    } else {
#pragma unroll
        for (int ii = 0; ii < 4; ++ii)
            if (lm + ii < rem_m)
                p[ii] = out[ii];
    }
}

// C := alpha * acc + beta * C for the lane's elements that lie inside the
// matrix. c points at the lane's first element (row lm0, column ln0 of the
// block); rem_m x rem_n elements of the block's tile exist.
template <class T, bool kVec>
__device__ __forceinline__ void store_tile(float *c, int64_t ldc, int lm0, int ln0,
                                           int rem_m, int rem_n, float alpha, float beta,
                                           const float (&acc)[T::TM][T::TN])
{
#pragma unroll
    for (int j = 0; j < T::kSubN; ++j) {
#pragma unroll
        for (int jj = 0; jj < 4; ++jj) {
            const int ln = ln0 + j * T::kStrideN + jj;
            if (ln >= rem_n)
                continue;
            float *col = c + (int64_t)(j * T::kStrideN + jj) * ldc;
#pragma unroll
            for (int i = 0; i < T::kSubM; ++i) {
                const int lm = lm0 + i * T::kStrideM;
                float r[4];
#pragma unroll
                for (int ii = 0; ii < 4; ++ii)
                    r[ii] = alpha * acc[4 * i + ii][4 * j + jj];
                store_c4<kVec>(col + i * T::kStrideM, r, lm, rem_m, beta);
            }
        }
    }
}

// Block index -> tile coordinates, in groups of kGroupM tile rows so that
// blocks running together share panels of A and B in L2.
struct TileCoord {
    int64_t tm, tn;
};

__device__ __forceinline__ TileCoord tile_of(int64_t pid, int64_t tiles_m, int64_t tiles_n)
{
    constexpr int64_t kGroupM = 8;
    const int64_t per_group = kGroupM * tiles_n;
    const int64_t group = pid / per_group;
    const int64_t first_m = group * kGroupM;
    const int64_t rows = tiles_m - first_m < kGroupM ? tiles_m - first_m : kGroupM;
    const int64_t in_group = pid - group * per_group;
    return {first_m + in_group % rows, in_group / rows};
}

__device__ __forceinline__ TileCoord tile_of_block(int64_t tiles_m, int64_t tiles_n)
{
    return tile_of(blockIdx.x, tiles_m, tiles_n);
}

// Cluster form of split-K (SplitK::cluster): the sk.splits blocks of one
// tile, one per K slice, form a cluster along y. Each block leaves its raw
// sums in its own shared memory (part: the BM x BN tile, column-major, ld
// BM); after a cluster barrier, each finishes a share of the tile's 4-row
// pieces by adding all blocks' sums in slice (cluster rank) order, as
// splitk_reduce adds the workspace slices, so either form gives the same
// bits, and writes C. The second barrier keeps every block's shared memory
// alive until the others have read it.
template <class T, bool kVec>
__device__ __forceinline__ void cluster_store_tile(const GemmParams &p, const SplitK &sk, float *part, int lm0,
                                                   int ln0, const float (&acc)[T::TM][T::TN])
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    namespace cg = cooperative_groups;
    // The tile's origin and a 1.0f, left in shared memory by the kernel's
    // start rather than kept in registers through the main loop.
    const int64_t *const origin = reinterpret_cast<const int64_t *>(part + T::kClusterStash / sizeof(float));
    // The raw sums leave through store_tile as unit * acc, with unit a 1.0f
    // the compiler cannot see (read from shared memory): exact, and the
    // products are fresh registers. Storing acc itself as float4 made ptxas
    // keep each 4-row group of accumulators in 4 consecutive registers, and
    // the main loop of 256x128x16 ran with three times the register-bank
    // conflicts among its FFMA operands and 15% slower (ncu: 0.53 dispatch
    // stalls per issued instruction against 0.10).
    const float unit = reinterpret_cast<const float *>(origin + 2)[0];
    store_tile<T, true>(part + ln0 * T::BM + lm0, T::BM, lm0, ln0, T::BM, T::BN, unit, 0.0f, acc);
    cg::cluster_group cluster = cg::this_cluster();
    cluster.sync();
    const int64_t m0 = origin[0], n0 = origin[1];
    const int rem_m = p.m - m0 < T::BM ? (int)(p.m - m0) : T::BM;
    const int rem_n = p.n - n0 < T::BN ? (int)(p.n - n0) : T::BN;
    float *const c = p.c + n0 * p.ldc + m0;
    constexpr int kQuadsM = T::BM / 4, kQuads = kQuadsM * T::BN;
    const int n = sk.splits, rank = static_cast<int>(cluster.block_rank());
    const int per = (kQuads + n - 1) / n;
    const int end = (rank + 1) * per < kQuads ? (rank + 1) * per : kQuads;
    const float4 *src[kTiledMaxCluster];
#pragma unroll
    for (int s = 0; s < kTiledMaxCluster; ++s)
        src[s] = cluster.map_shared_rank(reinterpret_cast<const float4 *>(part), s < n ? s : 0);
    for (int q = rank * per + static_cast<int>(threadIdx.x); q < end; q += T::kThreads) {
        const int col = q / kQuadsM, row = (q % kQuadsM) * 4;
        if (col >= rem_n || row >= rem_m)
            continue;
        // Every slice's piece is requested before the first is added: the
        // remote reads' latencies overlap instead of adding up.
        float4 v[kTiledMaxCluster];
#pragma unroll
        for (int s = 0; s < kTiledMaxCluster; ++s)
            if (s < n)
                v[s] = src[s][q];
        float4 sum = v[0];
#pragma unroll
        for (int s = 1; s < kTiledMaxCluster; ++s) {
            if (s < n) {
                sum.x += v[s].x;
                sum.y += v[s].y;
                sum.z += v[s].z;
                sum.w += v[s].w;
            }
        }
        const float r[4] = {p.alpha * sum.x, p.alpha * sum.y, p.alpha * sum.z, p.alpha * sum.w};
        store_c4<kVec>(c + col * p.ldc + row, r, row, rem_m, p.beta);
    }
    cluster.sync();
#else
    // Code without clusters (compute_80 PTX) is never sent a cluster launch
    // (prepare_tiled checks); were it, stop rather than leave C unwritten.
    (void)p, (void)part, (void)lm0, (void)ln0, (void)acc;
    if (sk.cluster)
        __trap();
#endif
}

// Moves the operands to element k0 of K.
template <bool kTransA, bool kTransB>
__device__ __forceinline__ void advance_k(GemmParams &p, int64_t k0)
{
    p.a += kTransA ? k0 : k0 * p.lda;
    p.b += kTransB ? k0 * p.ldb : k0;
}

// The part of the problem that slice blockIdx.y of a split-K launch computes:
// a range of K, written unscaled to its own workspace slice; in cluster form
// C's fields stay C's (cluster_store_tile writes C).
template <bool kTransA, bool kTransB, bool kCluster>
__device__ __forceinline__ GemmParams slice_of(GemmParams p, const SplitK &sk)
{
    const int64_t s = blockIdx.y;
    const int64_t k0 = s * sk.k_chunk;
    advance_k<kTransA, kTransB>(p, k0);
    p.k = p.k - k0 < sk.k_chunk ? p.k - k0 : sk.k_chunk;
    if (!kCluster) {
        p.c = sk.work + s * p.m * p.n;
        p.ldc = p.m;
        p.alpha = 1.0f;
        p.beta = 0.0f;
    }
    return p;
}

// The lane's first element in the block's tile, (lm0, ln0): its warp's
// corner plus the lane's 4 x 4 origin within the warp tile. Both main loops
// (multiply_tile and multiply_tile_async) hand it to the epilogue.
template <class T>
__device__ __forceinline__ void lane_origin(int &lm0, int &ln0)
{
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    lm0 = (warp % T::kWarpsM) * T::WM + (lane % T::kLanesM) * 4;
    ln0 = (warp / T::kWarpsM) * T::WN + (lane / T::kLanesM) * 4;
}

template <class T>
__device__ __forceinline__ void zero_accumulators(float (&acc)[T::TM][T::TN])
{
#pragma unroll
    for (int i = 0; i < T::TM; ++i)
#pragma unroll
        for (int j = 0; j < T::TN; ++j)
            acc[i][j] = 0.0f;
}

// multiply_tile for the families with an async ring (TileShape::kAsyncStages
// = S): the copies of step t + S - 1 are issued, into the stage that step t
// - 1 used, before step t is multiplied, so S - 1 steps of copies are in
// flight where the register path has one. One barrier a step: past it every
// thread's copies of step t are visible to all, and every thread is done
// with step t - 1's stage. A group is committed every step, empty or not, so
// the count to wait for is always S - 2.
template <class T, bool kTransA, bool kTransB, bool kAligned, class Epilogue>
__device__ __forceinline__ void multiply_tile_async(const GemmParams &p, int64_t m0, int64_t n0, int rem_m,
                                                    int rem_n, float *sa, float *sb, Epilogue &&epilogue)
{
    constexpr int S = T::kAsyncStages;
    AsyncLoader<T::BM, T::BK, T::kThreads, !kTransA, kAligned> la(kTransA ? p.a + m0 * p.lda : p.a + m0, p.lda);
    AsyncLoader<T::BN, T::BK, T::kThreads, kTransB, kAligned> lb(kTransB ? p.b + n0 : p.b + n0 * p.ldb, p.ldb);

    int lm0, ln0;
    lane_origin<T>(lm0, ln0);
    float acc[T::TM][T::TN];
    zero_accumulators<T>(acc);

    const int64_t k_tiles = (p.k + T::BK - 1) / T::BK;
    const auto copy_step = [&](int64_t t, int stage) {
        const int64_t left = p.k - t * T::BK;
        const int rem_k = left < T::BK ? (int)left : T::BK;
        la.copy(sa + stage * T::kStageA, rem_m, rem_k);
        lb.copy(sb + stage * T::kStageB, rem_n, rem_k);
    };
#pragma unroll
    for (int t = 0; t < S - 1; ++t) {
        if (t < k_tiles)
            copy_step(t, t);
        copy_async_commit();
    }
    int stage = 0, next = S - 1;  // t % S and (t + S - 1) % S
    for (int64_t t = 0; t < k_tiles; ++t) {
        copy_async_wait<S - 2>();
        __syncthreads();
        if (t + S - 1 < k_tiles)
            copy_step(t + S - 1, next);
        copy_async_commit();
        multiply_stage<T, kAligned ? T::BK : T::kUnalignedUnroll>(sa + stage * T::kStageA + lm0,
                                                                 sb + stage * T::kStageB + ln0, acc);
        stage = stage + 1 == S ? 0 : stage + 1;
        next = next + 1 == S ? 0 : next + 1;
    }
    __syncthreads();  // the stages are free for the epilogue; only empty copy groups are left
    epilogue(lm0, ln0, acc);
}

// multiply_tile for a block of whole tiles (aligned, K a multiple of BK,
// kWholeRingMinSteps steps of it or more) of a family with
// TileShape::kWholeRing = S, for the transpose pairs of kWholeRingStep. The
// K step is one basic block, with no test, branch or zero fill, so ptxas
// spreads the loads among the FFMAs (the register path's step is several
// blocks: its loads, with their edge tests, and its stores run apart from
// the FFMAs, where both warps of a scheduler reach them at once after the
// barrier). An operand contiguous along M (N) goes straight from global to
// shared memory, 16 bytes a copy, through a ring of S stages of cp.async
// copies, S - 1 steps in flight; a step copies the next tile where there is
// one. An operand contiguous along K goes through registers, as in
// multiply_tile, to be transposed on its way to its stage: 4-byte copies
// were slower (H100, 256x128x16 on rings of 3 and 4 stages, 4096^3: NN 49.5
// -> 48.7 TFLOP/s, TN 48.1 -> 44.5, TT 48.5 -> 47.0, where NT, with no
// 4-byte copies, went 50.6 -> 52.1).
template <class T, bool kTransA, bool kTransB, class Epilogue>
__device__ __forceinline__ void multiply_tile_whole_ring(const GemmParams &p, int64_t m0, int64_t n0, float *sa,
                                                         float *sb, Epilogue &&epilogue)
{
    constexpr int S = T::kWholeRing;
    constexpr bool kRingA = !kTransA, kRingB = kTransB;  // the operands contiguous along M or N
    const float *const a0 = kTransA ? p.a + m0 * p.lda : p.a + m0;
    const float *const b0 = kTransB ? p.b + n0 : p.b + n0 * p.ldb;
    // One loader of each operand is used, the other left to dead-code elimination.
    AsyncLoader<T::BM, T::BK, T::kThreads, true, true> ra(a0, p.lda);
    AsyncLoader<T::BN, T::BK, T::kThreads, true, true> rb(b0, p.ldb);
    TileLoader<T::BM, T::BK, T::kThreads, false, true, true> la(a0, p.lda, T::BM);
    TileLoader<T::BN, T::BK, T::kThreads, false, true, true> lb(b0, p.ldb, T::BN);

    int lm0, ln0;
    lane_origin<T>(lm0, ln0);
    float acc[T::TM][T::TN];
    zero_accumulators<T>(acc);

    const int64_t k_tiles = p.k / T::BK;
    // The ring's first S - 1 tiles; the registers' first tile, stored. A
    // loader moves on only to a tile that exists, so no load or copy leaves
    // the operand.
#pragma unroll
    for (int t = 0; t < S - 1; ++t) {
        if (kRingA)
            ra.copy_whole(sa + t * T::kStageA, t + 1 < k_tiles, true);
        if (kRingB)
            rb.copy_whole(sb + t * T::kStageB, t + 1 < k_tiles, true);
        copy_async_commit();
    }
    if (!kRingA) {
        la.load_whole(1 < k_tiles);
        la.store(sa);
    }
    if (!kRingB) {
        lb.load_whole(1 < k_tiles);
        lb.store(sb);
    }
    int stage = 0, next = S - 1;  // t % S and (t + S - 1) % S
    for (int64_t t = 0; t < k_tiles; ++t) {
        copy_async_wait<S - 2>();
        __syncthreads();
        const int after = stage + 1 == S ? 0 : stage + 1;  // (t + 1) % S
        // The copies of tile t + S - 1 and the loads of tile t + 1, issued
        // only where those tiles exist (predicated: the step stays one
        // basic block; copying the last tile again in their place, every
        // block waited for those copies at its end: H100, 1024^3 NN 36.3 ->
        // 39.3 TFLOP/s without them, 256 x 256 x 8192 26.8 -> 29.6).
        const bool ring_tile = t + S - 1 < k_tiles, reg_tile = t + 1 < k_tiles;
        if (kRingA)
            ra.copy_whole(sa + next * T::kStageA, t + S < k_tiles, ring_tile);
        else
            la.load_whole(t + 2 < k_tiles, reg_tile);
        if (kRingB)
            rb.copy_whole(sb + next * T::kStageB, t + S < k_tiles, ring_tile);
        else
            lb.load_whole(t + 2 < k_tiles, reg_tile);
        copy_async_commit();
        multiply_stage<T>(sa + stage * T::kStageA + lm0, sb + stage * T::kStageB + ln0, acc);
        if (!kRingA)
            la.store(sa + after * T::kStageA);
        if (!kRingB)
            lb.store(sb + after * T::kStageB);
        stage = after;
        next = next + 1 == S ? 0 : next + 1;
    }
    __syncthreads();  // every thread is done with the stages (no copies are left in flight)
    epilogue(lm0, ln0, acc);
}

// Whether the kernels of this tile shape and transpose pair walk the K
// steps of blocks of whole tiles through the ring (multiply_tile_whole_ring):
// where the family has one (TileShape::kWholeRing), an operand is
// contiguous along M or N, and the family does not skip the pair
// (TileShape::kWholeRingSkip). H100, 4096^3, family forced, stream-K off,
// TFLOP/s: 256x128x16 NN 49.5 -> 52.0, NT 50.6 -> 52.0, TT 48.5 -> 50.9;
// 128x256x8 NN 43.6 -> 46.3, NT 43.7 -> 45.6, TT 42.8 -> 47.5; 128x128x16
// NN 43.7 -> 44.2, NT 47.2 -> 49.4, TT 43.6 -> 44.9; 256x128x8 NT 48.6 ->
// 52.6, TT 47.6 -> 49.4, but NN 49.1 -> 48.5, so it skips NN. TN, with both
// operands along K, gains nothing from it (256x128x16 48.1 -> 47.2 on it;
// the branch-free step below instead).
template <class T, bool kTransA, bool kTransB>
constexpr bool kWholeRingStep = T::kWholeRing > 0 && (!kTransA || kTransB) &&
                                (T::kWholeRingSkip & pair_bit(kTransA, kTransB)) == 0;

// Whether the plain kernel of this tile shape and transpose pair walks the
// K steps of a block of whole tiles (aligned, K a multiple of BK) with no
// test or branch in the step (multiply_tile). Only where it measured
// faster: H100, 256x128x16's TN kernel 47.5 -> 48.1 TFLOP/s at 4096^3,
// 48.8 -> 49.9 at 8192^3 (2048^3 46.2 -> 45.9). With it, the NT and TT
// kernels ran 1-2% slower and NN 0.6%; 256x128x8's moved by up to 4% either
// way by pair; with the last step peeled off the loop, other kernels again
// (TN +0.7%): ptxas schedules each kernel's loop its own way.
template <class T, bool kTransA, bool kTransB>
constexpr bool kBranchFreeStep = T::BM == 256 && T::BN == 128 && T::BK == 16 && kTransA && !kTransB;

// The lane's elements of op(A)(m0 .., :) * op(B)(:, n0 ..) over all p.k of
// K, for the tile at (m0, n0) of which rem_m x rem_n elements exist, handed
// to epilogue(lm0, ln0, acc) with (lm0, ln0) the lane's first element in the
// tile. sa and sb are the two shared stages of each operand; every thread of
// the block takes part, and the main loop's last barrier leaves the stages
// free for the epilogue. kBranchFree: see kBranchFreeStep. ring_k: whether
// p.k suits the whole-tile ring (SplitK::ring_k, ring_fits_k).
template <class T, bool kTransA, bool kTransB, bool kAligned, bool kBranchFree = false, class Epilogue>
__device__ __forceinline__ void multiply_tile(const GemmParams &p, int64_t m0, int64_t n0, int rem_m, int rem_n,
                                              bool ring_k, float *sa, float *sb, Epilogue &&epilogue)
{
    // op(A)(i, l) is a[i + l * lda] without transpose, a[l + i * lda] with it;
    // op(B)(l, j) is b[l + j * ldb] without transpose, b[j + l * ldb] with it.
    if constexpr (T::kAsyncStages > 0) {
        multiply_tile_async<T, kTransA, kTransB, kAligned>(p, m0, n0, rem_m, rem_n, sa, sb, epilogue);
    } else {
        if constexpr (kWholeRingStep<T, kTransA, kTransB> && kAligned) {
            if (rem_m == T::BM && rem_n == T::BN && ring_k) {
                multiply_tile_whole_ring<T, kTransA, kTransB>(p, m0, n0, sa, sb, epilogue);
                return;
            }
        }
        const float *a0 = kTransA ? p.a + m0 * p.lda : p.a + m0;
        const float *b0 = kTransB ? p.b + n0 : p.b + n0 * p.ldb;
        constexpr bool kWhole = T::kMinBlocks == 1;
        TileLoader<T::BM, T::BK, T::kThreads, !kTransA, kAligned, kWhole> la(a0, p.lda, rem_m);
        TileLoader<T::BN, T::BK, T::kThreads, kTransB, kAligned, kWhole> lb(b0, p.ldb, rem_n);

        int lm0, ln0;
        lane_origin<T>(lm0, ln0);
        float acc[T::TM][T::TN];
        zero_accumulators<T>(acc);

        const int64_t k_tiles = (p.k + T::BK - 1) / T::BK;
        int rem_k = p.k < T::BK ? (int)p.k : T::BK;
        la.load(rem_m, rem_k);
        lb.load(rem_n, rem_k);
        la.store(sa);
        lb.store(sb);
        __syncthreads();

        constexpr int kUnroll = kAligned ? T::BK : T::kUnalignedUnroll;
        if (kBranchFree && kWhole && kAligned && rem_m == T::BM && rem_n == T::BN && p.k % T::BK == 0 &&
            k_tiles >= 2) {
            // Every step loads the next tile, the last one its own tile again
            // (so the loads stay inside the matrix, and one loop body serves
            // all steps: a last step peeled off was slower where it ran cold).
            int stage = 0;
            for (int64_t t = 0; t < k_tiles; ++t) {
                const bool advance = t + 2 < k_tiles;
                la.load_whole(advance);
                lb.load_whole(advance);
                multiply_stage<T, kUnroll>(sa + stage * T::kStageA + lm0, sb + stage * T::kStageB + ln0, acc);
                la.store(sa + (stage ^ 1) * T::kStageA);
                lb.store(sb + (stage ^ 1) * T::kStageB);
                __syncthreads();
                stage ^= 1;
            }
            epilogue(lm0, ln0, acc);
            return;
        }

        for (int64_t t = 0; t < k_tiles; ++t) {
            const int stage = (int)(t & 1);
            const bool more = t + 1 < k_tiles;
            if (more) {
                const int64_t left = p.k - (t + 1) * T::BK;
                rem_k = left < T::BK ? (int)left : T::BK;
                la.load(rem_m, rem_k);
                lb.load(rem_n, rem_k);
            }
            multiply_stage<T, kUnroll>(sa + stage * T::kStageA + lm0, sb + stage * T::kStageB + ln0, acc);
            if (more) {
                la.store(sa + (stage ^ 1) * T::kStageA);
                lb.store(sb + (stage ^ 1) * T::kStageB);
            }
            __syncthreads();
        }
        epilogue(lm0, ln0, acc);
    }
}

// kCluster: the cluster form of split-K (sk.cluster), a kernel of its own so
// that its epilogue does not change the register allocation of the others
// (one kernel for both forms, tried on the H100 with the float4 stash of
// the accumulators: the plain 256x128x16 kernels took the cluster form's
// allocation and 4096^3 NN fell from 0.96 to 0.83 of cuBLAS).
template <class T, bool kTransA, bool kTransB, bool kAligned, bool kCluster = false>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocks) sgemm_tiled(GemmParams p, SplitK sk)
{
    extern __shared__ float4 smem_raw[];
    float *const sa = reinterpret_cast<float *>(smem_raw);
    float *const sb = sa + T::kBuffers * T::kStageA;
    if (sk.splits > 1)
        p = slice_of<kTransA, kTransB, kCluster>(p, sk);

    const int64_t tiles_m = (p.m + T::BM - 1) / T::BM;
    const int64_t tiles_n = (p.n + T::BN - 1) / T::BN;
    const TileCoord tc = tile_of_block(tiles_m, tiles_n);
    const int64_t m0 = tc.tm * T::BM, n0 = tc.tn * T::BN;
    const int rem_m = p.m - m0 < T::BM ? (int)(p.m - m0) : T::BM;
    const int rem_n = p.n - n0 < T::BN ? (int)(p.n - n0) : T::BN;
    if constexpr (kCluster) {
        if (threadIdx.x == 0) {  // read after the main loop's barriers
            int64_t *const origin = reinterpret_cast<int64_t *>(sa + T::kClusterStash / sizeof(float));
            origin[0] = m0;
            origin[1] = n0;
            reinterpret_cast<float *>(origin + 2)[0] = 1.0f;
        }
    }

    // In cluster form the launch decides for all slices (SplitK::ring_k), so
    // that the blocks of a cluster run the same loop; else each block. The
    // slice's own test, implied by sk.ring_k, is kept in the cluster form:
    // with it ptxas schedules the cluster kernels' loops as it did before
    // sk.ring_k (SASS compared; with sk.ring_k alone 128x128x16's NN cluster
    // ring loop took 9% more stall cycles, and 1024^3 NN, split 2 in
    // clusters, ran 39.3 -> 37.6 TFLOP/s on the H100).
    const bool ring_k = ring_fits_k(p.k, 1, p.k, T::BK) && (!kCluster || sk.ring_k);
    multiply_tile<T, kTransA, kTransB, kAligned, kBranchFreeStep<T, kTransA, kTransB> && !kCluster>(
        p, m0, n0, rem_m, rem_n, ring_k, sa, sb, [&](int lm0, int ln0, const float (&acc)[T::TM][T::TN]) {
            if constexpr (kCluster) {  // the main loop's last barrier has freed the stages for the sums
                cluster_store_tile<T, kAligned>(p, sk, sa, lm0, ln0, acc);
                return;
            }
            float *c = p.c + (n0 + ln0) * p.ldc + m0 + lm0;
            store_tile<T, kAligned>(c, p.ldc, lm0, ln0, rem_m, rem_n, p.alpha, p.beta, acc);
        });
}

// Where the stream-K kernel is in its run, in shared memory after the
// stages: written by thread 0 before each part and read back after the main
// loop's barriers, so that none of it is held in registers through the main
// loop (held there, it made 256x128x16's kernels spill).
struct StreamKState {
    int64_t next;    // the end of the block's run still to walk (steps over the shared-out tiles)
    int64_t u;       // the part's tile (0 = the first shared-out one)
    int64_t m0, n0;  // the tile's origin in C
    int64_t k0, k;   // the part's first element of K and its depth
    int rem_m, rem_n;
    int whole;       // the part is the whole tile
    int slot;        // its workspace slot (streamk_part)
    int go;          // a part follows / streamk_part: this block adds the tile's parts
    float unit;      // 1.0f (streamk_part)
};

template <class T>
constexpr size_t kStreamKSmemBytes = T::kSmemBytes + sizeof(StreamKState);

// Stream-K (StreamK): the end of a part that is not a whole tile. The raw
// sums go to the block's workspace slot (through store_tile, times a 1.0f
// read from shared memory, as cluster_store_tile does, so that ptxas keeps
// the accumulators where the main loop wants them). The block that finds
// itself the last of the tile's blocks to arrive adds every part in K order
// (block order) and writes C: every block fences its stores before its
// arrival is counted, so the parts are visible to it, and the sum does not
// depend on which block came last.
template <class T, bool kVec>
__device__ __forceinline__ void streamk_part(const GemmParams &p, const StreamK &sk, StreamKState *st, int lm0,
                                             int ln0, const float (&acc)[T::TM][T::TN])
{
    constexpr int64_t kTile = int64_t{T::BM} * T::BN;
    store_tile<T, true>(sk.work + (2 * int64_t{blockIdx.x} + st->slot) * kTile + ln0 * T::BM + lm0, T::BM, lm0,
                        ln0, T::BM, T::BN, st->unit, 0.0f, acc);
    __threadfence();
    __syncthreads();
    const int64_t u = st->u, t0 = u * sk.iters;
    const int64_t first = streamk_owner(sk, t0);
    const int64_t parts = streamk_owner(sk, t0 + sk.iters - 1) - first + 1;
    if (threadIdx.x == 0)
        st->go = atomicAdd(sk.arrivals + u, 1) == parts - 1;
    __syncthreads();
    if (!st->go)
        return;
    __threadfence();
    // Block first's part may be the last of its run (slot 1); every later
    // block's run starts inside u, so its part is its first (slot 0).
    const float4 *const first_part =
        reinterpret_cast<const float4 *>(sk.work + (2 * first + streamk_slot(sk, first, u)) * kTile);
    const float4 *const later = reinterpret_cast<const float4 *>(sk.work + 2 * first * kTile);
    const int rem_m = st->rem_m, rem_n = st->rem_n;
    float *const c = p.c + st->n0 * p.ldc + st->m0;
    // Each thread takes kBatch of the tile's 4-row pieces at a time and has
    // all their loads (every part's, then C's) in flight before it adds: one
    // piece at a time, the loads' latencies added up (~30 us a tile, H100).
    constexpr int kQuadsM = T::BM / 4, kQuads = kQuadsM * T::BN, kBatch = 8;
    static_assert(kQuads % (kBatch * T::kThreads) == 0, "whole batches");
    for (int q0 = static_cast<int>(threadIdx.x); q0 < kQuads; q0 += kBatch * T::kThreads) {
        float4 sum[kBatch];
#pragma unroll
        for (int b = 0; b < kBatch; ++b)
            sum[b] = __ldcg(first_part + q0 + b * T::kThreads);
        for (int64_t i = 1; i < parts; ++i) {
            const float4 *const src = later + 2 * i * (kTile / 4) + q0;
            float4 v[kBatch];
#pragma unroll
            for (int b = 0; b < kBatch; ++b)
                v[b] = __ldcg(src + b * T::kThreads);
#pragma unroll
            for (int b = 0; b < kBatch; ++b) {
                sum[b].x += v[b].x;
                sum[b].y += v[b].y;
                sum[b].z += v[b].z;
                sum[b].w += v[b].w;
            }
        }
        float4 old[kBatch];
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
            const int q = q0 + b * T::kThreads, col = q / kQuadsM, row = (q % kQuadsM) * 4;
            old[b] = p.beta != 0.0f && col < rem_n && row < rem_m ? load_c4<kVec>(c + col * p.ldc + row, row, rem_m)
                                                                : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
            const int q = q0 + b * T::kThreads, col = q / kQuadsM, row = (q % kQuadsM) * 4;
            if (col >= rem_n || row >= rem_m)
                continue;
            const float r[4] = {p.alpha * sum[b].x, p.alpha * sum[b].y, p.alpha * sum[b].z, p.alpha * sum[b].w};
            const float o[4] = {old[b].x, old[b].y, old[b].z, old[b].w};
            put_c4<kVec>(c + col * p.ldc + row, r, o, row, rem_m, p.beta);
        }
    }
}

// Stream-K (StreamK): block blockIdx.x walks its run of K steps over the
// shared-out tiles, one tile's part at a time, from the run's end; a part
// that is a whole tile writes C as the plain kernel does. Walked from its
// start, the runs put the blocks at K offsets spread over all of K, and the
// loads of 4096^3's shared-out tiles hit L2 in 18% of reads (whole tiles:
// 81%): that made the part 12% slower per K step than whole tiles (H100). A kernel of its own, like the cluster
// form, so that the plain kernels keep their register allocation. The tiles
// before sk.dp_tiles are the plain kernel's (launch_streamk).
template <class T, bool kTransA, bool kTransB, bool kAligned>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocks) sgemm_streamk(GemmParams p, StreamK sk)
{
    extern __shared__ float4 smem_raw[];
    float *const sa = reinterpret_cast<float *>(smem_raw);
    float *const sb = sa + T::kBuffers * T::kStageA;
    StreamKState *const st = reinterpret_cast<StreamKState *>(sa + T::kSmemBytes / sizeof(float));
    static_assert(T::kSmemBytes % alignof(StreamKState) == 0, "the state follows the stages");
    if (threadIdx.x == 0) {
        st->next = streamk_begin(sk, blockIdx.x + 1);
        st->unit = 1.0f;
    }
    for (;;) {
        __syncthreads();  // the previous part's epilogue is done with the state
        if (threadIdx.x == 0) {
            // The run is walked from its end: the part it ends with (the head
            // of a tile, from K's start) first. So every block starts at the
            // start of K and the blocks move through K nearly together, as
            // the whole tiles' blocks do, and share their loads in L2.
            const int64_t begin = streamk_begin(sk, blockIdx.x), end = st->next;
            st->go = begin < end;
            if (begin < end) {
                const int64_t u = (end - 1) / sk.iters, t0 = u * sk.iters;
                const int64_t first = begin > t0 ? begin : t0;  // the part: steps [first, end)
                const int64_t k0 = first - t0, k1 = end - t0;   // of the tile's
                const TileCoord tc = tile_of(sk.dp_tiles + u, (p.m + T::BM - 1) / T::BM, (p.n + T::BN - 1) / T::BN);
                st->next = first;
                st->u = u;
                st->m0 = tc.tm * T::BM;
                st->n0 = tc.tn * T::BN;
                st->k0 = k0 * T::BK;
                st->k = p.k - k0 * T::BK < (k1 - k0) * T::BK ? p.k - k0 * T::BK : (k1 - k0) * T::BK;
                st->rem_m = p.m - st->m0 < T::BM ? (int)(p.m - st->m0) : T::BM;
                st->rem_n = p.n - st->n0 < T::BN ? (int)(p.n - st->n0) : T::BN;
                st->whole = k0 == 0 && k1 == sk.iters;
                st->slot = first == begin ? 0 : 1;
            }
        }
        __syncthreads();
        if (!st->go)
            return;
        GemmParams q = p;
        advance_k<kTransA, kTransB>(q, st->k0);
        q.k = st->k;
        multiply_tile<T, kTransA, kTransB, kAligned>(
            q, st->m0, st->n0, st->rem_m, st->rem_n, ring_fits_k(q.k, 1, q.k, T::BK), sa, sb,
            [&](int lm0, int ln0, const float (&acc)[T::TM][T::TN]) {
                if (st->whole) {
                    float *c = p.c + (st->n0 + ln0) * p.ldc + st->m0 + lm0;
                    store_tile<T, kAligned>(c, p.ldc, lm0, ln0, st->rem_m, st->rem_n, p.alpha, p.beta, acc);
                } else {
                    streamk_part<T, kAligned>(p, sk, st, lm0, ln0, acc);
                }
            });
    }
}

}  // namespace kernels
}  // namespace tgemm
