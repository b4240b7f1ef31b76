// The tiled kernels' loaders: how a BMN x BK tile of one operand moves from
// global to shared memory, stored K-major (s[kk * (BMN + 4) + mn]).
//   - TileLoader: through registers (load, then store), so that the next
//     tile's loads are in flight while the current one is multiplied;
//   - copy_async*: cp.async from global to shared memory (sm_80 on);
//   - AsyncLoader: the same tile through cp.async copies, no registers.
// Edges: elements outside the matrix (rem_mn rows, rem_k columns of K exist)
// are zero in shared memory and never read from global memory.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

namespace tgemm {
namespace kernels {

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
// kMnContig (element (mn, kk) at base[mn + kk * ld]): with kVec, 4 elements
// adjacent in mn per copy of 16 bytes (a copy that hangs over the matrix's
// edge reads only the bytes inside it); else one element per copy, a warp's
// 32 copies covering 32 consecutive mn (128 bytes of memory, 32 distinct
// banks: four 4-byte copies of adjacent elements by each thread would put
// a warp's copies on 8 banks, 4 to a bank). K-contiguous (base[kk + mn *
// ld]): one element per copy, a warp's 32 copies covering 8 consecutive kk
// (32 bytes of memory) of 4 values of mn; with kLds = BMN + 4 the 32 shared
// addresses fall on 32 distinct banks.
//
// Elements outside the matrix are zero-filled, their copies given the
// tile's first element (always inside) as source, so no copy points outside
// the operand.
template <int BMN, int BK, int kThreads, bool kMnContig, bool kVec>
struct AsyncLoader {
    static constexpr int kLds = BMN + 4;
    // The elements a copy moves (4 adjacent along mn only in 16-byte
    // copies), and a thread's copies.
    static constexpr int kMnPer = kMnContig && kVec ? 4 : 1;
    static constexpr int kCopies = BMN * BK / (kMnPer * kThreads);
    // A thread's copies differ only by whole rows of K (kMnContig) or of mn:
    // one offset per thread, the rest constants, so no per-copy state is
    // kept in registers (kept as arrays, as TileLoader keeps them, ptxas
    // spilled at the 128-register cap).
    static_assert(kMnContig ? kThreads % (BMN / kMnPer) == 0 : (kThreads / 32) % (BK / 8) == 0,
                  "a thread's copies differ by whole rows");
    static constexpr int kRowStep = kMnContig ? kThreads / (BMN / kMnPer) : 4 * (kThreads / 32) / (BK / 8);
    static_assert(kCopies * kRowStep == (kMnContig ? BK : BMN), "a thread's copies cover the tile's rows");

    const float *base;  // the thread's first copy's source in the current K tile
    const float *first; // the current K tile's element (0, 0): the source of zero-filled copies
    int64_t ld;
    int mn, kk;         // the thread's first copy's element in the tile

    __device__ __forceinline__ AsyncLoader(const float *tile, int64_t ld_) : first(tile), ld(ld_)
    {
        const int t = threadIdx.x;
        if (kMnContig) {
            mn = (t % (BMN / kMnPer)) * kMnPer;
            kk = t / (BMN / kMnPer);
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
                    const bool ok = k_ok && mn < rem_mn;
                    copy_async<4>(dst, ok ? src : first, ok ? 4 : 0);
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

}  // namespace kernels
}  // namespace tgemm
