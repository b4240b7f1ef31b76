// The stream-K kernel (StreamK in gemm_params.hpp): the last sk_tiles tiles
// of the raster order shared out by K steps over sk.ctas blocks.
//   - computes the same product as sgemm_tiled (kernel.cuh), under the same
//     contract for the operands, for the tiles from sk.dp_tiles on; the
//     plain kernel, launched after it, computes the tiles before;
//   - a block's part that is a whole tile writes C as the plain kernel does;
//     other parts leave raw sums in the block's two workspace slots
//     (sk.work), and the last block to arrive at a tile (sk.arrivals, zero
//     at launch) adds them in K order and writes C;
//   - edges as in the plain kernel; beta == 0 never reads C.
#pragma once

#include <cstdint>
#include <cuda_runtime.h>

#include "kernels/gemm_params.hpp"
#include "kernels/tiled/kernel.cuh"

namespace tgemm {
namespace kernels {

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
    // piece at a time, the loads' latencies would add up.
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
// start, the runs would put the blocks at K offsets spread over all of K,
// and their loads would miss L2 far more often than the whole tiles'. A
// kernel of its own, like the cluster form, so that the plain kernels keep
// their register allocation. The tiles before sk.dp_tiles are the plain
// kernel's (launch_streamk).
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
