// The rank-k kernel: C := alpha * op(A) * op(B) + beta * C for products
// whose K is small against m x n (a rank-k update), where the time goes to
// reading and writing C, not to the K loop.
//
// Contract (what the launcher guarantees):
//   - GemmParams is column-major, m >= 1, n >= 1, k >= 1, alpha != 0
//     (alpha == 0 and k == 0 go to the scaling kernel instead); any lda,
//     ldb, ldc allowed by the BLAS rules and any 4-byte aligned pointers;
//   - a, b, c are device-accessible and c does not overlap a or b;
//   - the grid is ceil(m / 128) * ceil(n / 128) blocks of 256 threads along
//     x (the dispatcher keeps it under the device's limit), no workspace.
//
// What the kernel does:
//   - each block owns a 128 x 128 tile of C, tiles numbered down C's
//     columns first, so that the blocks running together write neighbouring
//     stretches of C;
//   - it walks K in chunks of kRankKChunk through two stages of shared
//     memory: op(A)'s 128 x chunk panel and op(B)'s chunk x 128 panel,
//     K-major, a row padded to 132 floats, copied with cp.async
//     (AsyncLoader, kernels/tiled/load.cuh) along each operand's stored
//     layout so that a warp's copies are coalesced (along the tile for A
//     and B^T, along K for A^T and B); the next chunk's copies are in
//     flight while the current chunk is multiplied;
//   - a lane owns 4 consecutive rows (one 16-byte read of op(A)'s panel) by
//     16 consecutive columns (four 16-byte broadcast reads of op(B)'s): the
//     32 lanes of a warp cover 128 rows, so each of its 16-byte C accesses
//     is 512 contiguous bytes of one column;
//   - each element's sum runs over k in increasing order with fmaf from
//     0, and C is written with the tiled kernels' epilogue arithmetic
//     (kernels/tiled/epilogue.cuh: alpha * sum, plus fmaf(beta, C, .)
//     where beta != 0), in two halves of 8 columns whose old values are all
//     requested before the first is used;
//   - where C's pointer and ldc allow 16-byte accesses, a lane's 4 rows
//     move as one where all 4 exist (else 4 bytes at a time); where they do
//     not, the sums go through shared memory (the panels' space, a warp's
//     128 x 8 half at a time) and each warp access to C is 4 bytes a lane
//     over 128 contiguous bytes (rows lane + 32 i): 4 bytes of every 16
//     over 512 would cost L2 four partial sector writes for each full one;
//     rows from m and columns from n on are
//     neither read nor written (rows m .. ldc - 1 are untouched);
//     beta == 0 never reads C; no atomics: the result does not depend on
//     scheduling.
#include "family.hpp"
#include "kernels/tiled/epilogue.cuh"
#include "kernels/tiled/load.cuh"

namespace tgemm {
namespace kernels {
namespace {

constexpr int kTile = kRankKTile;
constexpr int kChunk = kRankKChunk;
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kCols = kTile / kWarps;  // columns of a lane (and of its warp)
// A panel's row in shared memory: AsyncLoader's 128 floats and 4 of
// padding (its K-contiguous copies store to 32 distinct banks).
constexpr int kLd = kTile + 4;
constexpr int kStage = kChunk * kLd;  // one panel of one chunk

static_assert(kTile == 4 * 32, "a warp's lanes cover the tile's rows, 4 each");
// A warp's half of its columns, staged on its way to a C without 16-byte
// accesses: kCols / 2 columns of kLd floats (rows 16-byte aligned), the
// block's 8 warps together in the panels' space.
constexpr int kStaged = kCols / 2 * kLd;
static_assert(kWarps * kStaged <= 4 * kStage, "the warps' halves fit in the panels' space");
static_assert(kCols % 8 == 0, "a lane's columns: whole 16-byte reads, two halves");

// One panel of op(A) (kMnContig: A not transposed) or op(B) (kMnContig: B
// transposed), copied 4 bytes at a time: the panels are small beside C.
template <bool kMnContig>
using PanelLoader = AsyncLoader<kTile, kChunk, kThreads, kMnContig, false>;
static_assert(PanelLoader<true>::kLds == kLd && PanelLoader<false>::kLds == kLd, "the panels' row in shared memory");

// C := alpha * acc + beta * C for the lane's 4 rows (from lm) and its
// columns from ln0 of the tile, c pointing at the first of them; in halves:
// the old values of a half are all requested before the first is used, so
// their latencies overlap. For a C that takes 16-byte accesses (rows past
// rem_m go 4 bytes at a time).
__device__ __forceinline__ void store_lane(const GemmParams &p, float *c, int lm, int ln0, int rem_m, int rem_n,
                                           const float (&acc)[4][kCols])
{
    constexpr int kHalf = kCols / 2;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        float old[kHalf][4] = {};
        if (p.beta != 0.0f) {
#pragma unroll
            for (int j = 0; j < kHalf; ++j) {
                const int jj = h * kHalf + j;
                if (ln0 + jj < rem_n) {
                    const float4 o = load_c4<true>(c + jj * p.ldc, lm, rem_m);
                    old[j][0] = o.x;
                    old[j][1] = o.y;
                    old[j][2] = o.z;
                    old[j][3] = o.w;
                }
            }
        }
#pragma unroll
        for (int j = 0; j < kHalf; ++j) {
            const int jj = h * kHalf + j;
            if (ln0 + jj >= rem_n)
                continue;
            float r[4];
#pragma unroll
            for (int ii = 0; ii < 4; ++ii)
                r[ii] = p.alpha * acc[ii][jj];
            put_c4<true>(c + jj * p.ldc, r, old[j], lm, rem_m, p.beta);
        }
    }
}

// store_lane for a C without 16-byte accesses: each half of the lane's
// columns, times alpha, goes to the warp's part of shared memory (stage,
// its columns kLd apart) and comes back as rows lane + 32 i, so that a warp
// access to C is 128 contiguous bytes of one column; the old values of a
// half are all requested before the first is used, and the arithmetic is
// store_lane's. c points at row `lane` and column ln0 of the tile; the
// caller has made sure that no thread still reads the panels.
__device__ __forceinline__ void store_lane_staged(const GemmParams &p, float *c, float *stage, int lane, int ln0,
                                                  int rem_m, int rem_n, const float (&acc)[4][kCols])
{
    constexpr int kHalf = kCols / 2;
    const int left = rem_m - lane;  // row lane + 32 i exists where 32 i < left
#pragma unroll
    for (int h = 0; h < 2; ++h) {
#pragma unroll
        for (int j = 0; j < kHalf; ++j)
            *reinterpret_cast<float4 *>(stage + j * kLd + 4 * lane) =
                make_float4(p.alpha * acc[0][h * kHalf + j], p.alpha * acc[1][h * kHalf + j],
                            p.alpha * acc[2][h * kHalf + j], p.alpha * acc[3][h * kHalf + j]);
        __syncwarp();
        float *const half = c + h * kHalf * p.ldc;
        float old[kHalf][4] = {};
        if (p.beta != 0.0f) {
#pragma unroll
            for (int j = 0; j < kHalf; ++j)
#pragma unroll
                for (int i = 0; i < 4; ++i)
                    if (ln0 + h * kHalf + j < rem_n && 32 * i < left)
                        old[j][i] = half[j * p.ldc + 32 * i];
        }
#pragma unroll
        for (int j = 0; j < kHalf; ++j) {
            if (ln0 + h * kHalf + j >= rem_n)
                continue;
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                if (32 * i >= left)
                    continue;
                const float r = stage[j * kLd + lane + 32 * i];
                half[j * p.ldc + 32 * i] = p.beta != 0.0f ? fmaf(p.beta, old[j][i], r) : r;
            }
        }
        __syncwarp();  // the warp has read the half before the next overwrites it
    }
}

// acc += the lane's 4 rows of op(A)'s panel times its columns of op(B)'s,
// over the chunk's first len values of K, in increasing order.
__device__ __forceinline__ void multiply_chunk(const float *sa, const float *sb, int len, float (&acc)[4][kCols])
{
#pragma unroll 2
    for (int kk = 0; kk < len; ++kk) {
        const float4 a4 = *reinterpret_cast<const float4 *>(sa + kk * kLd);
        const float a[4] = {a4.x, a4.y, a4.z, a4.w};
        float b[kCols];
#pragma unroll
        for (int q = 0; q < kCols / 4; ++q) {
            const float4 b4 = *reinterpret_cast<const float4 *>(sb + kk * kLd + 4 * q);
            b[4 * q] = b4.x;
            b[4 * q + 1] = b4.y;
            b[4 * q + 2] = b4.z;
            b[4 * q + 3] = b4.w;
        }
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < kCols; ++j)
                acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
}

// The chunks go through two stages of shared memory: the copies of chunk
// t + 1 are issued, into the stage chunk t - 1 used, before chunk t is
// multiplied. One barrier a chunk: past it every thread's copies of chunk t
// are visible to all, and every thread is done with chunk t - 1's stage.
template <bool kTransA, bool kTransB, bool kVec>
__global__ void __launch_bounds__(kThreads, kRankKBlocksPerSm) rank_k(GemmParams p)
{
    // op(A)(m0 + x, k0 + kk) at sa[stage * kStage + kk * kLd + x], op(B)(k0 + kk, n0 + x) likewise in sb;
    // after the K loop, the warps' staged halves where C takes no 16-byte accesses.
    __shared__ __align__(16) float panels[4 * kStage];
    float *const sa = panels, *const sb = panels + 2 * kStage;
    const int64_t tiles_m = (p.m + kTile - 1) / kTile;
    const int64_t m0 = static_cast<int64_t>(blockIdx.x) % tiles_m * kTile;
    const int64_t n0 = static_cast<int64_t>(blockIdx.x) / tiles_m * kTile;
    const int rem_m = p.m - m0 < kTile ? static_cast<int>(p.m - m0) : kTile;
    const int rem_n = p.n - n0 < kTile ? static_cast<int>(p.n - n0) : kTile;
    const int lm = 4 * (static_cast<int>(threadIdx.x) % 32), ln0 = kCols * (static_cast<int>(threadIdx.x) / 32);

    // op(A)(i, l) is a[i + l lda], or a[l + i lda] transposed; op(B)(l, j)
    // is b[l + j ldb], or b[j + l ldb] transposed.
    PanelLoader<!kTransA> la(kTransA ? p.a + m0 * p.lda : p.a + m0, p.lda);
    PanelLoader<kTransB> lb(kTransB ? p.b + n0 : p.b + n0 * p.ldb, p.ldb);
    const int64_t chunks = (p.k + kChunk - 1) / kChunk;
    const auto chunk_len = [&](int64_t t) {
        const int64_t left = p.k - t * kChunk;
        return left < kChunk ? static_cast<int>(left) : kChunk;
    };
    la.copy(sa, rem_m, chunk_len(0));
    lb.copy(sb, rem_n, chunk_len(0));
    copy_async_commit();

    float acc[4][kCols] = {};
    for (int64_t t = 0; t < chunks; ++t) {
        const int stage = static_cast<int>(t % 2);
        copy_async_wait<0>();
        __syncthreads();
        if (t + 1 < chunks) {
            la.copy(sa + (1 - stage) * kStage, rem_m, chunk_len(t + 1));
            lb.copy(sb + (1 - stage) * kStage, rem_n, chunk_len(t + 1));
            copy_async_commit();
        }
        multiply_chunk(sa + stage * kStage + lm, sb + stage * kStage + ln0, chunk_len(t), acc);
    }
    if (kVec) {
        store_lane(p, p.c + (n0 + ln0) * p.ldc + m0 + lm, lm, ln0, rem_m, rem_n, acc);
    } else {
        __syncthreads();  // every warp is done with the panels
        // The tile's origin again, from a fresh read of the block index: the
        // same expressions as before the K loop would be merged with them,
        // keeping m0 and n0 in registers through the loop (the NT kernel
        // then spilled).
        unsigned block;
        asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(block));
        const int64_t bm = static_cast<int64_t>(block) % tiles_m * kTile;
        const int64_t bn = static_cast<int64_t>(block) / tiles_m * kTile;
        const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
        store_lane_staged(p, p.c + (bn + kCols * warp) * p.ldc + bm + lane, panels + warp * kStaged, lane,
                          kCols * warp, p.m - bm < kTile ? static_cast<int>(p.m - bm) : kTile,
                          p.n - bn < kTile ? static_cast<int>(p.n - bn) : kTile, acc);
    }
}

}  // namespace

cudaError_t launch_rank_k(const GemmParams &p, cudaStream_t s)
{
    using Kernel = void (*)(GemmParams);
    static constexpr Kernel kKernels[8] = {
        rank_k<false, false, false>, rank_k<false, false, true>, rank_k<false, true, false>,
        rank_k<false, true, true>,   rank_k<true, false, false>, rank_k<true, false, true>,
        rank_k<true, true, false>,   rank_k<true, true, true>,
    };
    const bool vec = (reinterpret_cast<uintptr_t>(p.c) & 15u) == 0 && p.ldc % 4 == 0;
    const int idx = (p.trans_a ? 4 : 0) | (p.trans_b ? 2 : 0) | (vec ? 1 : 0);
    const int64_t tiles = ((p.m + kTile - 1) / kTile) * ((p.n + kTile - 1) / kTile);
    kKernels[idx]<<<static_cast<unsigned>(tiles), kThreads, 0, s>>>(p);
    return cudaGetLastError();
}

}  // namespace kernels
}  // namespace tgemm
