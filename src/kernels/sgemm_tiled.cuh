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
// 4095^3 3% faster, and 4096^3 aligned 4% slower).
template <int BM_, int BN_, int BK_, int WM_, int WN_, int kMinBlocks_, bool kClusterForm_ = true,
          int kUnalignedUnroll_ = BK_>
struct TileShape {
    static constexpr int BM = BM_, BN = BN_, BK = BK_;
    static constexpr int WM = WM_, WN = WN_;
    static constexpr int kMinBlocks = kMinBlocks_;
    static constexpr bool kClusterForm = kClusterForm_;
    static constexpr int kUnalignedUnroll = kUnalignedUnroll_;
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
    static constexpr size_t kSmemBytes = sizeof(float) * 2 * (kStageA + kStageB);
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
#pragma unroll
            for (int r = 0; r < kGroups; ++r) {
                const float *p = ptr[r];
                v[r] = kVec ? load4(p) : make_float4(__ldg(p), __ldg(p + 1), __ldg(p + 2), __ldg(p + 3));
                ptr[r] = p + step;
            }
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

__device__ __forceinline__ TileCoord tile_of_block(int64_t tiles_m, int64_t tiles_n)
{
    constexpr int64_t kGroupM = 8;
    const int64_t pid = blockIdx.x;
    const int64_t per_group = kGroupM * tiles_n;
    const int64_t group = pid / per_group;
    const int64_t first_m = group * kGroupM;
    const int64_t rows = tiles_m - first_m < kGroupM ? tiles_m - first_m : kGroupM;
    const int64_t in_group = pid - group * per_group;
    return {first_m + in_group % rows, in_group / rows};
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

// The part of the problem that slice blockIdx.y of a split-K launch computes:
// a range of K, written unscaled to its own workspace slice; in cluster form
// C's fields stay C's (cluster_store_tile writes C).
template <bool kTransA, bool kTransB, bool kCluster>
__device__ __forceinline__ GemmParams slice_of(GemmParams p, const SplitK &sk)
{
    const int64_t s = blockIdx.y;
    const int64_t k0 = s * sk.k_chunk;
    p.a += kTransA ? k0 : k0 * p.lda;
    p.b += kTransB ? k0 * p.ldb : k0;
    p.k = p.k - k0 < sk.k_chunk ? p.k - k0 : sk.k_chunk;
    if (!kCluster) {
        p.c = sk.work + s * p.m * p.n;
        p.ldc = p.m;
        p.alpha = 1.0f;
        p.beta = 0.0f;
    }
    return p;
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
    float *const sb = sa + 2 * T::kStageA;
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

    // op(A)(i, l) is a[i + l * lda] without transpose, a[l + i * lda] with it;
    // op(B)(l, j) is b[l + j * ldb] without transpose, b[j + l * ldb] with it.
    const float *a0 = kTransA ? p.a + m0 * p.lda : p.a + m0;
    const float *b0 = kTransB ? p.b + n0 : p.b + n0 * p.ldb;
    constexpr bool kWhole = T::kMinBlocks == 1;
    TileLoader<T::BM, T::BK, T::kThreads, !kTransA, kAligned, kWhole> la(a0, p.lda, rem_m);
    TileLoader<T::BN, T::BK, T::kThreads, kTransB, kAligned, kWhole> lb(b0, p.ldb, rem_n);

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm0 = (warp % T::kWarpsM) * T::WM, wn0 = (warp / T::kWarpsM) * T::WN;
    const int lm0 = wm0 + (lane % T::kLanesM) * 4;
    const int ln0 = wn0 + (lane / T::kLanesM) * 4;

    float acc[T::TM][T::TN];
#pragma unroll
    for (int i = 0; i < T::TM; ++i)
#pragma unroll
        for (int j = 0; j < T::TN; ++j)
            acc[i][j] = 0.0f;

    const int64_t k_tiles = (p.k + T::BK - 1) / T::BK;
    int rem_k = p.k < T::BK ? (int)p.k : T::BK;
    la.load(rem_m, rem_k);
    lb.load(rem_n, rem_k);
    la.store(sa);
    lb.store(sb);
    __syncthreads();

    for (int64_t t = 0; t < k_tiles; ++t) {
        const int stage = (int)(t & 1);
        const bool more = t + 1 < k_tiles;
        if (more) {
            const int64_t left = p.k - (t + 1) * T::BK;
            rem_k = left < T::BK ? (int)left : T::BK;
            la.load(rem_m, rem_k);
            lb.load(rem_n, rem_k);
        }
        multiply_stage<T, kAligned ? T::BK : T::kUnalignedUnroll>(sa + stage * T::kStageA + lm0,
                                                                 sb + stage * T::kStageB + ln0, acc);
        if (more) {
            la.store(sa + (stage ^ 1) * T::kStageA);
            lb.store(sb + (stage ^ 1) * T::kStageB);
        }
        __syncthreads();
    }

    if constexpr (kCluster) {  // the main loop's last barrier has freed the stages for the sums
        cluster_store_tile<T, kAligned>(p, sk, sa, lm0, ln0, acc);
        return;
    }
    float *c = p.c + (n0 + ln0) * p.ldc + m0 + lm0;
    store_tile<T, kAligned>(c, p.ldc, lm0, ln0, rem_m, rem_n, p.alpha, p.beta, acc);
}

}  // namespace kernels
}  // namespace tgemm
