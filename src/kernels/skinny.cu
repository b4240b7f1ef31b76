// Streaming kernels for products whose C has at most 16 rows or 16 columns
// (GEMV-like and skinny shapes). Such a product is memory-bound: its cost is
// reading the one large operand once, so these kernels are built to keep
// many loads of that operand in flight, with no barrier between them.
//
// The problem is restated as C(r, j) = alpha * sum_k X(r, k) Y(j, k) + beta * C(r, j)
// with r < R long (the large operand X) and j < s <= 16 short (Y, staged in
// shared memory a long piece of K at a time). Two access patterns:
//   - skinny_rows: X is contiguous along r (x_r == 1). A lane owns 4
//     consecutive r (one 16-byte load per k when aligned); the 8 warps of a
//     block own the same 128 r and split the block's K among themselves, and
//     their sums are added through shared memory in warp order.
//   - skinny_dots: X is contiguous along k (x_k == 1). A warp owns a group of
//     dots_rw(S) values of r at a time; its lanes read 16-byte pieces of K side
//     by side, and at the end of the block's K the warp's dots_rw(S) x S
//     partial sums are summed across the lanes by a fixed reduce-scatter
//     butterfly that leaves each lane a different sum to store. A block owns
//     8 warps x p.groups such groups, so the Y piece it stages once serves
//     8 * dots_rw(S) * p.groups values of r.
//   - skinny_rows_ring: skinny_rows' work where a block's K is longer than
//     one staged piece of Y: each warp streams its own X and Y through a
//     ring of cp.async copies in shared memory, with no barrier.
// Both are deterministic. Split-K across blocks (blockIdx.y) gives enough
// blocks when R is small; partial sums then go unscaled to a workspace slice
// and splitk_reduce finishes C.
#include "family.hpp"
#include "cluster_launch.hpp"

#include <cmath>

#include <cooperative_groups.h>

namespace tgemm {
namespace kernels {
namespace {

constexpr int kThreads = 256;             // both kernels: 8 warps
constexpr int kWarps = kThreads / 32;
constexpr int kRowsPerBlock = 32 * 4;     // skinny_rows: 4 r per lane, all warps share them
// skinny_dots: r per warp group. Each 16-byte Y read from shared memory
// serves that many r: S / dots_rw(S) bytes of shared memory per byte of X,
// at most 4, so at the memory floor's rate (~13 B of X per clock per SM)
// shared memory (128 B/clock) stays below half busy.
__host__ __device__ constexpr int dots_rw(int S)
{
    return S >= 16 ? 4 : 2;
}
// skinny_dots: lanes that split the S values of j (each lane keeps S / that
// many). At S = 16 two halves keep 4 x 8 sums per lane instead of 4 x 16,
// which leaves the registers for four steps of X loads in flight.
__host__ __device__ constexpr int dots_jg(int S)
{
    return S >= 16 ? 2 : 1;
}
constexpr int kDotsStep = 128;            // skinny_dots: K chunks are multiples of this
constexpr int kRowsStep = 64;             // skinny_rows: K chunks are multiples of this
constexpr size_t kSmemBytes = 96 * 1024;  // staging shared memory per block, at most
constexpr size_t kPartBytes = 16 * 1024;  // cluster form: the block's raw sums (at most 256 r x 16 j)
constexpr int kMaxCluster = 8;            // the portable cluster size limit (family.hpp: kSkinnyMaxCluster)
// Cluster launches ask for at least this much shared memory, so that every
// one runs exactly two blocks per SM (the registers allow two, the shared
// memory no third) and prepare_skinny's count of resident clusters holds.
constexpr size_t kClusterSmem = 80 * 1024;
static_assert(kMaxCluster == kSkinnyMaxCluster, "one limit");

// The most K staged at once: S rows of (chunk + 4) floats fit in kSmemBytes.
template <int S>
__host__ __device__ constexpr int chunk_cap(int step)
{
    return static_cast<int>((kSmemBytes / sizeof(float) / S - 4) / step) * step;
}

// skinny_dots' Y layout: 16-byte cells, cell (kk / 4, j) holding Y(j, kk..kk+3)
// at cell index (kk / 4) * dots_pitch(S) + j. The pitch is odd, so the eight
// lanes of a 16-byte shared load, at eight consecutive kk / 4, hit eight
// different bank groups; and j's cells lie at fixed offsets from one
// address, so the compiler needs no register per j.
__host__ __device__ constexpr int dots_pitch(int S)
{
    return S % 2 == 0 ? S + 1 : S;
}

// The most K skinny_dots stages at once.
template <int S>
__host__ __device__ constexpr int dots_chunk_cap()
{
    return static_cast<int>(kSmemBytes / (4 * sizeof(float)) / dots_pitch(S) / 32) * 128;
}

// K staged per chunk for this launch: the longest slice, rounded up to the
// step, at most cap. Every block computes the same value.
__device__ __host__ __forceinline__ int chunk_for(const SkinnyParams &p, const SplitK &sk, int cap, int step)
{
    const int64_t span = sk.splits > 1 ? sk.k_chunk : p.k;
    const int64_t rounded = (span + step - 1) / step * step;
    return rounded < cap ? static_cast<int>(rounded) : cap;
}

__device__ __forceinline__ void k_range(const SkinnyParams &p, const SplitK &sk, int64_t *k0, int64_t *kn)
{
    if (sk.splits > 1) {
        *k0 = static_cast<int64_t>(blockIdx.y) * sk.k_chunk;
        *kn = p.k - *k0 < sk.k_chunk ? p.k - *k0 : sk.k_chunk;
    } else {
        *k0 = 0;
        *kn = p.k;
    }
}

// Stores a finished sum for output (r, j): scaled into C, or raw into the
// block's split-K workspace slice.
__device__ __forceinline__ void store_out(const SkinnyParams &p, const SplitK &sk, int64_t r, int j, float acc)
{
    if (sk.splits > 1) {
        float *w = sk.work + static_cast<int64_t>(blockIdx.y) * p.m * p.n;
        w[r * p.w_r + j * p.w_j] = acc;
    } else {
        float *c = p.c + r * p.c_r + j * p.c_j;
        const float v = p.alpha * acc;
        *c = p.beta != 0.0f ? fmaf(p.beta, *c, v) : v;
    }
}

// Cluster form of split-K (SplitK::cluster): part[e] holds this block's raw
// sum for r = r_base + e / S, j = e % S, e < rows * S. After a cluster
// barrier each block finishes its share of the e: the slices' sums added in
// slice (cluster rank) order, as splitk_reduce adds them, then scaled into
// C. The second barrier keeps every block's shared memory alive until the
// others have read it.
template <int S>
__device__ __forceinline__ void cluster_finish(const SkinnyParams &p, const SplitK &sk, float *part, int64_t r_base,
                                               int rows)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    namespace cg = cooperative_groups;
    cg::cluster_group cluster = cg::this_cluster();
    cluster.sync();
    const int n = sk.splits, rank = static_cast<int>(cluster.block_rank());
    const int elems = rows * S, per = (elems + n - 1) / n;
    const int end = (rank + 1) * per < elems ? (rank + 1) * per : elems;
    for (int e = rank * per + static_cast<int>(threadIdx.x); e < end; e += kThreads) {
        const int64_t r = r_base + e / S;
        const int j = e % S;
        if (r < p.r && j < p.s) {
            float sum = cluster.map_shared_rank(part, 0)[e];
            for (int c = 1; c < n; ++c)
                sum += cluster.map_shared_rank(part, c)[e];
            float *out = p.c + r * p.c_r + j * p.c_j;
            const float v = p.alpha * sum;
            *out = p.beta != 0.0f ? fmaf(p.beta, *out, v) : v;
        }
    }
    cluster.sync();
#else
    // Code without clusters (compute_80 PTX) is never sent a cluster launch
    // (prepare_skinny checks); were it, stop rather than leave C unwritten.
    (void)p, (void)part, (void)r_base, (void)rows;
    if (sk.cluster)
        __trap();
#endif
}

// Stages Y(j, k0 + kk) for kk < len (zero for kk in [len, padded) and j >= s)
// into ys[kk * ld_k + j * ld_j].
template <int S>
__device__ __forceinline__ void stage_y(const SkinnyParams &p, int64_t k0, int len, int padded, float *ys, int ld_k,
                                        int ld_j)
{
    // Eight loads in flight per thread before the first store: staging is
    // bound by the latency of these (L2-resident) reads, not their number.
    constexpr int kBatch = 8;
    const int total = padded * S;
    for (int base = 0; base < total; base += kBatch * kThreads) {
        float v[kBatch];
        int at[kBatch];
#pragma unroll
        for (int u = 0; u < kBatch; ++u) {
            const int idx = base + u * kThreads + static_cast<int>(threadIdx.x);
            int kk, j;
            if (p.y_k == 1) {  // K contiguous in memory: neighbouring threads along K
                kk = idx % padded;
                j = idx / padded;
            } else {
                j = idx % S;
                kk = idx / S;
            }
            const bool in = idx < total;
            at[u] = in ? kk * ld_k + j * ld_j : -1;
            v[u] = (in && kk < len && j < p.s) ? __ldg(p.y + j * p.y_j + (k0 + kk) * p.y_k) : 0.0f;
        }
#pragma unroll
        for (int u = 0; u < kBatch; ++u)
            if (at[u] >= 0)
                ys[at[u]] = v[u];
    }
}

__device__ __forceinline__ float4 load_x4(const float *xp, int64_t stride, int count, bool vec)
{
    if (vec && count >= 4)
        return __ldg(reinterpret_cast<const float4 *>(xp));
    float4 v;
    v.x = count > 0 ? __ldg(xp) : 0.0f;
    v.y = count > 1 ? __ldg(xp + stride) : 0.0f;
    v.z = count > 2 ? __ldg(xp + 2 * stride) : 0.0f;
    v.w = count > 3 ? __ldg(xp + 3 * stride) : 0.0f;
    return v;
}

// skinny_rows' shared memory: the staging area (cap x S), which then holds
// the warps' sums (8 x 128 x S), then (cluster form) the block's sums.
template <int S>
__host__ __device__ constexpr int rows_part_offset(int cap)
{
    return cap * S > kWarps * kRowsPerBlock * S ? cap * S : kWarps * kRowsPerBlock * S;
}

// skinny_rows' staging of Y(j, k0 + kk), kk < len, into ys[kk * S + j]
// (zero for j >= s and for kk from len up to the next multiple of 4) when Y
// is contiguous along K with 16-byte groups (y_k == 1, y_vec): each thread
// moves 16-byte pieces, eight in flight before the first store. Lanes take
// neighbouring j first, so a warp's scalar stores fall in different banks
// (at most two lanes per bank at S = 16, four below), not 16 lanes in one
// bank as with neighbouring kk; and j, kk come from shifts, not divisions.
template <int S>
__device__ __forceinline__ void stage_y_rows_vec(const SkinnyParams &p, int64_t k0, int len, float *ys)
{
    constexpr int kBatch = S >= 8 ? 4 : 8;
    const int total = (len + 3) / 4 * S;
    for (int base = 0; base < total; base += kBatch * kThreads) {
        float4 v[kBatch];
#pragma unroll
        for (int u = 0; u < kBatch; ++u) {
            const int idx = base + u * kThreads + static_cast<int>(threadIdx.x);
            const int j = idx % S, kk = idx / S * 4;
            const bool in = idx < total && j < p.s;
            const float *src = p.y + (in ? j * p.y_j + k0 + kk : 0);
            if (in && kk + 4 <= len) {
                v[u] = __ldg(reinterpret_cast<const float4 *>(src));
            } else {
                v[u].x = in && kk + 0 < len ? __ldg(src + 0) : 0.0f;
                v[u].y = in && kk + 1 < len ? __ldg(src + 1) : 0.0f;
                v[u].z = in && kk + 2 < len ? __ldg(src + 2) : 0.0f;
                v[u].w = in && kk + 3 < len ? __ldg(src + 3) : 0.0f;
            }
        }
#pragma unroll
        for (int u = 0; u < kBatch; ++u) {
            const int idx = base + u * kThreads + static_cast<int>(threadIdx.x);
            if (idx < total) {
                float *d = ys + idx / S * 4 * S + idx % S;
                d[0] = v[u].x;
                d[S] = v[u].y;
                d[2 * S] = v[u].z;
                d[3 * S] = v[u].w;
            }
        }
    }
}

// skinny_rows: steps of X each lane keeps in flight, twice over (the step
// group being multiplied and the next one loading), as many as the 128
// registers of two blocks per SM leave beside the 4 x S sums.
template <int S>
__host__ __device__ constexpr int rows_unroll()
{
    return S >= 16 ? 4 : 8;
}

// skinny_rows and skinny_rows_ring: how many of the lane's 4 values of r
// from r on lie inside X (0 to 4).
__device__ __forceinline__ int lane_rows(const SkinnyParams &p, int64_t r)
{
    return p.r - r < 4 ? static_cast<int>(p.r - r > 0 ? p.r - r : 0) : 4;
}

template <int S>
__device__ __forceinline__ void zero_sums(float (&acc)[4][S])
{
#pragma unroll
    for (int q = 0; q < 4; ++q)
#pragma unroll
        for (int j = 0; j < S; ++j)
            acc[q][j] = 0.0f;
}

// skinny_rows' end: the eight warps' partial sums acc (4 r x S j per lane)
// are added in warp order through shared memory at red, which every warp
// must be done with, and each sum goes to C, to the workspace slice or (cluster
// form) to the block's sums at red + part, which cluster_finish adds up.
template <int S>
__device__ __forceinline__ void rows_finish(const SkinnyParams &p, const SplitK &sk, const float (&acc)[4][S],
                                            float *red, int part)
{
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    // Laid out [warp][q][j][lane], so that a warp's stores fill 32
    // consecutive words: with the sums of one lane side by side, every lane
    // of a store would hit the same bank.
#pragma unroll
    for (int q = 0; q < 4; ++q)
#pragma unroll
        for (int j = 0; j < S; ++j)
            red[((warp * 4 + q) * S + j) * 32 + lane] = acc[q][j];
    __syncthreads();
    constexpr int kWarpSums = kRowsPerBlock * S;
    for (int e = threadIdx.x; e < kWarpSums; e += kThreads) {
        const int j = e / 32 % S, row = e % 32 * 4 + e / (32 * S);
        float sum = red[e];
        for (int w = 1; w < kWarps; ++w)
            sum += red[w * kWarpSums + e];
        const int64_t rr = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + row;
        if (sk.cluster)
            red[part + row * S + j] = sum;  // the block's sums, after the warp sums
        else if (rr < p.r && j < p.s)
            store_out(p, sk, rr, j, sum);
    }
    if (sk.cluster)
        cluster_finish<S>(p, sk, red + part, static_cast<int64_t>(blockIdx.x) * kRowsPerBlock, kRowsPerBlock);
}

// cp.async (sm_80 on): 16 bytes from global to shared memory without
// registers; of them the first src_bytes are read, the rest written as zero.
__device__ __forceinline__ void copy16_async(void *dst, const void *src, int src_bytes)
{
    const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(src_bytes) : "memory");
}

__device__ __forceinline__ void commit_async()
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Waits until at most n of this thread's committed groups are in flight.
template <int n>
__device__ __forceinline__ void wait_async()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(n) : "memory");
}

// skinny_rows_ring: X and Y move by cp.async into a ring of kRingDepth
// slots per warp, each slot one group of 4 steps of K: the X of the warp's
// 128 r at those 4 k ([step][lane], 16 bytes per lane and step), and the
// Y(j, k..k+3) of every j (kYk: [j], 16 bytes of K per j; else
// [step][j / 4], 16 bytes of j per piece). With kRingDepth - 1 groups in
// flight per warp while it multiplies one, an SM of two blocks has 128 KB
// of X requested (H100: a pure read of 64 MB reaches ~2.3 TB/s only with
// about that much in flight per SM), without the registers that loads into
// registers would hold.
constexpr int kRingDepth = 5;
constexpr int kRingXFloats = 4 * 32 * 4;  // one group's X for a warp

template <int S>
__host__ __device__ constexpr int ring_slot_floats()
{
    return kRingXFloats + 4 * S;
}

template <int S>
__host__ __device__ constexpr int ring_floats()
{
    return kWarps * kRingDepth * ring_slot_floats<S>();
}

// skinny_rows_ring's shared memory: the ring, which then holds the warps'
// sums and after them (cluster form) the block's sums.
template <int S>
__host__ __device__ constexpr int ring_part_offset()
{
    return kWarps * kRowsPerBlock * S;
}

template <int S>
__host__ __device__ constexpr size_t ring_smem_bytes(bool cluster)
{
    const int sums = ring_part_offset<S>() + (cluster ? kRowsPerBlock * S : 0);
    return sizeof(float) * (ring_floats<S>() > sums ? ring_floats<S>() : sums);
}
// Within what prepare_skinny allows every streaming kernel (so, on the
// H100, two blocks per SM).
static_assert(ring_smem_bytes<16>(false) <= kSmemBytes && ring_smem_bytes<1>(false) <= kSmemBytes,
              "the ring fits the staging limit");

// skinny_rows where a block's K is longer than one staged piece of Y
// (rows_ring), without the staging of Y and its barriers: X aligned (p.vec)
// and Y in 16-byte pieces (p.y_vec; kYk: along K, else along j). Warps
// split the block's K in runs of whole groups and never wait for each other
// until rows_finish. Steps past the warp's run, j past
// p.s and r past p.r come in as zeros (cp.async's zero fill), so no guard
// sits in the loop and no element outside the matrices is read.
template <int S, bool kYk>
__global__ void __launch_bounds__(kThreads, 2) skinny_rows_ring(SkinnyParams p, SplitK sk)
{
    extern __shared__ float4 smem_raw[];
    float *const smem = reinterpret_cast<float *>(smem_raw);
    int64_t k0, kn;
    k_range(p, sk, &k0, &kn);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int64_t r = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + lane * 4;
    const int rows = lane_rows(p, r);
    // The warp's run of K: whole groups of 4 (Y's pieces start at multiples
    // of 4: k0 is a multiple of kRowsStep).
    const int64_t per = ((kn + kWarps - 1) / kWarps + 3) / 4 * 4;
    const int64_t kb = warp * per, ke = kb + per < kn ? kb + per : kn;
    const int groups = ke > kb ? static_cast<int>((ke - kb + 3) / 4) : 0;
    const int x_bytes = 4 * rows;
    float *const ring = smem + warp * kRingDepth * ring_slot_floats<S>();

    // Lane's Y piece (kYk: lanes < S, piece j = lane; else lanes < S, step
    // lane / (S / 4), j from 4 * (lane % (S / 4)); only instantiated for S >= 4).
    constexpr int kQuads = S >= 4 ? S / 4 : 1;
    const bool y_lane = lane < S;
    const int y_j = kYk ? lane : 4 * (lane % kQuads), y_u = kYk ? 0 : lane / kQuads;
    const bool y_in = y_lane && y_j < p.s;

    // Where the lane's next copies come from, and how far they move per
    // group: lanes with no rows of X (no j of Y) copy nothing from a fixed
    // address.
    const float *x_next = x_bytes > 0 ? p.x + r + (k0 + kb) * p.x_k : p.x;
    const int64_t x_step = x_bytes > 0 ? p.x_k : 0;
    const int y_bytes = y_in ? 16 : 0;
    const float *y_next = y_in ? p.y + y_j * p.y_j + (k0 + kb + y_u) * p.y_k : p.y;
    const int64_t y_step = y_in ? 4 * (kYk ? 1 : p.y_k) : 0;

    // Requests group g (steps kb + 4g ..) into its slot, in order g = 0, 1, ...
    // A whole group (every group but perhaps the run's last) takes no test;
    // the last one copies nothing past the run.
    const auto request = [&](int g) {
        float *const slot = ring + (g % kRingDepth) * ring_slot_floats<S>();
        const int64_t left = ke - kb - 4 * static_cast<int64_t>(g);  // steps from this group on, >= 1
        if (left >= 4) {
#pragma unroll
            for (int u = 0; u < 4; ++u)
                copy16_async(slot + (u * 32 + lane) * 4, x_next + u * x_step, x_bytes);
            if (y_lane)
                copy16_async(slot + kRingXFloats + 4 * lane, y_next, y_bytes);
        } else {
#pragma unroll
            for (int u = 0; u < 4; ++u)
                copy16_async(slot + (u * 32 + lane) * 4, u < left ? x_next + u * x_step : p.x,
                             u < left ? x_bytes : 0);
            if (y_lane) {
                const int bytes = kYk ? (y_in ? 4 * static_cast<int>(left) : 0) : (y_u < left ? y_bytes : 0);
                copy16_async(slot + kRingXFloats + 4 * lane, bytes > 0 ? y_next : p.y, bytes);
            }
        }
        x_next += 4 * x_step;
        y_next += y_step;
    };

    float acc[4][S];
    zero_sums<S>(acc);

#pragma unroll
    for (int g = 0; g < kRingDepth - 1; ++g) {
        if (g < groups)
            request(g);
        commit_async();
    }
    for (int g = 0; g < groups; ++g) {
        wait_async<kRingDepth - 2>();
        // Group g is in for every lane, and every lane is done with the
        // slot that group g + kRingDepth - 1 reuses (group g - 1's).
        __syncwarp();
        if (g + kRingDepth - 1 < groups)
            request(g + kRingDepth - 1);
        commit_async();
        const float *const slot = ring + (g % kRingDepth) * ring_slot_floats<S>();
        float4 xv[4];
#pragma unroll
        for (int u = 0; u < 4; ++u)
            xv[u] = *reinterpret_cast<const float4 *>(slot + (u * 32 + lane) * 4);
        const float *const ys = slot + kRingXFloats;
        if (kYk) {
#pragma unroll
            for (int j = 0; j < S; ++j) {
                const float4 yv = *reinterpret_cast<const float4 *>(ys + 4 * j);
                const float yu[4] = {yv.x, yv.y, yv.z, yv.w};
#pragma unroll
                for (int u = 0; u < 4; ++u) {
                    acc[0][j] = fmaf(xv[u].x, yu[u], acc[0][j]);
                    acc[1][j] = fmaf(xv[u].y, yu[u], acc[1][j]);
                    acc[2][j] = fmaf(xv[u].z, yu[u], acc[2][j]);
                    acc[3][j] = fmaf(xv[u].w, yu[u], acc[3][j]);
                }
            }
        } else {
#pragma unroll
            for (int u = 0; u < 4; ++u) {
#pragma unroll
                for (int jq = 0; jq < S / 4; ++jq) {
                    const float4 yv = *reinterpret_cast<const float4 *>(ys + u * S + 4 * jq);
                    const float yj[4] = {yv.x, yv.y, yv.z, yv.w};
#pragma unroll
                    for (int t = 0; t < 4; ++t) {
                        acc[0][4 * jq + t] = fmaf(xv[u].x, yj[t], acc[0][4 * jq + t]);
                        acc[1][4 * jq + t] = fmaf(xv[u].y, yj[t], acc[1][4 * jq + t]);
                        acc[2][4 * jq + t] = fmaf(xv[u].z, yj[t], acc[2][4 * jq + t]);
                        acc[3][4 * jq + t] = fmaf(xv[u].w, yj[t], acc[3][4 * jq + t]);
                    }
                }
            }
        }
    }
    wait_async<0>();
    __syncthreads();  // every warp is done with its ring before it holds their sums
    rows_finish<S>(p, sk, acc, smem, ring_part_offset<S>());
}

template <int S, bool kVec>
__global__ void __launch_bounds__(kThreads, 2) skinny_rows(SkinnyParams p, SplitK sk)
{
    constexpr int kU = rows_unroll<S>();
    const int cap = chunk_for(p, sk, chunk_cap<S>(kRowsStep), kRowsStep);
    extern __shared__ float4 smem_raw[];
    float *const ys = reinterpret_cast<float *>(smem_raw);  // [kk][j] staging, then the warp sums
    int64_t k0, kn;
    k_range(p, sk, &k0, &kn);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int64_t r = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + lane * 4;
    const int rows = lane_rows(p, r);
    const float *x = p.x + (rows > 0 ? r : 0) + k0 * p.x_k;
    const bool fast = kVec && rows == 4;

    float acc[4][S];
    zero_sums<S>(acc);

    for (int64_t kc = 0; kc < kn; kc += cap) {
        const int len = kn - kc < cap ? static_cast<int>(kn - kc) : cap;
        // This warp's share of the chunk, in groups of kU steps.
        const int per = (len + kWarps - 1) / kWarps;
        const int kb = warp * per, ke = kb + per < len ? kb + per : len;
        const int groups = fast && ke > kb ? (ke - kb) / kU : 0;
        const float *xk = x + (kc + kb) * p.x_k;
        // The first group of X is requested before Y is staged, so that its
        // trip to memory overlaps the staging.
        float4 cur[kU];
        if (groups > 0) {
#pragma unroll
            for (int u = 0; u < kU; ++u)
                cur[u] = __ldcs(reinterpret_cast<const float4 *>(xk + u * p.x_k));
        }
        if (p.y_k == 1 && p.y_vec)
            stage_y_rows_vec<S>(p, k0 + kc, len, ys);
        else
            stage_y<S>(p, k0 + kc, len, len, ys, S, 1);
        __syncthreads();
        const auto accumulate = [&](const float4 &xv, int kk) {
            const float *y = ys + kk * S;
#pragma unroll
            for (int j = 0; j < S; ++j) {
                const float yj = y[j];
                acc[0][j] = fmaf(xv.x, yj, acc[0][j]);
                acc[1][j] = fmaf(xv.y, yj, acc[1][j]);
                acc[2][j] = fmaf(xv.z, yj, acc[2][j]);
                acc[3][j] = fmaf(xv.w, yj, acc[3][j]);
            }
        };
        // The common case (aligned, all four r inside the matrix): the next
        // group's loads are issued before this group's FFMAs, with no branch
        // around them (the last group re-reads its own addresses), so kU to
        // 2 kU loads per lane are always in flight.
        int kk = kb;
        for (int g = 0; g < groups; ++g, kk += kU) {
            const float *nx = g + 1 < groups ? xk + kU * p.x_k : xk;
            float4 nxt[kU];
#pragma unroll
            for (int u = 0; u < kU; ++u)
                nxt[u] = __ldcs(reinterpret_cast<const float4 *>(nx + u * p.x_k));
#pragma unroll
            for (int u = 0; u < kU; ++u)
                accumulate(cur[u], kk + u);
#pragma unroll
            for (int u = 0; u < kU; ++u)
                cur[u] = nxt[u];
            xk = nx;
        }
        if (groups > 0)
            xk += kU * p.x_k;
        // The rest: the steps after the last whole group, or every step of a
        // lane whose r run past the matrix or whose X is not aligned.
        for (; kk < ke; ++kk, xk += p.x_k)
            accumulate(fast ? __ldcs(reinterpret_cast<const float4 *>(xk)) : load_x4(xk, 1, rows, false), kk);
        __syncthreads();
    }

    rows_finish<S>(p, sk, acc, ys, rows_part_offset<S>(cap));  // the loop's last barrier freed ys
}

// Stages Y(j, k0 + kk) for kk < len, j < p.s into skinny_dots' layout
// (dots_pitch), zero for kk in [len, padded) and j in [p.s, S). When p.y_vec
// allows, every thread moves 16-byte pieces (along K when Y is contiguous
// along K, else along j), eight in flight per thread before the first store,
// so one block's staging costs about one L2 round trip, not one per element.
template <int S>
__device__ __forceinline__ void stage_y_dots(const SkinnyParams &p, int64_t k0, int len, int padded, float4 *ys)
{
    constexpr int kBatch = 8;
    constexpr int kPitch = dots_pitch(S);
    const int quads = padded / 4;
    if (p.y_vec && p.y_k == 1) {  // 4 consecutive kk of one j per piece: one cell
        const int total = S * quads;
        for (int base = 0; base < total; base += kBatch * kThreads) {
            float4 v[kBatch];
#pragma unroll
            for (int u = 0; u < kBatch; ++u) {
                const int idx = base + u * kThreads + static_cast<int>(threadIdx.x);
                const int j = idx / quads, kk = (idx % quads) * 4;
                const float *src = p.y + j * p.y_j + k0 + kk;
                if (idx < total && j < p.s && kk + 4 <= len) {
                    v[u] = __ldg(reinterpret_cast<const float4 *>(src));
                } else {
                    const bool in = idx < total && j < p.s;
                    v[u].x = in && kk + 0 < len ? __ldg(src + 0) : 0.0f;
                    v[u].y = in && kk + 1 < len ? __ldg(src + 1) : 0.0f;
                    v[u].z = in && kk + 2 < len ? __ldg(src + 2) : 0.0f;
                    v[u].w = in && kk + 3 < len ? __ldg(src + 3) : 0.0f;
                }
            }
#pragma unroll
            for (int u = 0; u < kBatch; ++u) {
                const int idx = base + u * kThreads + static_cast<int>(threadIdx.x);
                if (idx < total)
                    ys[(idx % quads) * kPitch + idx / quads] = v[u];
            }
        }
        return;
    }
    float *const yf = reinterpret_cast<float *>(ys);
    if constexpr (S >= 4) {
        if (p.y_vec) {  // Y contiguous along j (y_j == 1): 4 consecutive j of one kk per piece
            constexpr int kQuads = S / 4;
            const int total = kQuads * padded;
            for (int base = 0; base < total; base += kBatch * kThreads) {
                float4 v[kBatch];
#pragma unroll
                for (int u = 0; u < kBatch; ++u) {
                    const int idx = base + u * kThreads + static_cast<int>(threadIdx.x);
                    const int j = (idx % kQuads) * 4, kk = idx / kQuads;
                    const bool in = idx < total && j < p.s && kk < len;
                    v[u] = in ? __ldg(reinterpret_cast<const float4 *>(p.y + j + (k0 + kk) * p.y_k))
                              : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                }
#pragma unroll
                for (int u = 0; u < kBatch; ++u) {
                    const int idx = base + u * kThreads + static_cast<int>(threadIdx.x);
                    if (idx < total) {
                        const int j = (idx % kQuads) * 4, kk = idx / kQuads;
                        float *d = yf + ((kk / 4) * kPitch + j) * 4 + kk % 4;
                        d[0] = v[u].x;
                        d[4] = v[u].y;
                        d[8] = v[u].z;
                        d[12] = v[u].w;
                    }
                }
            }
            return;
        }
    }
    // Any strides: one element per load, neighbouring threads along the
    // operand's contiguous dimension.
    const int total = padded * S;
    for (int base = 0; base < total; base += kBatch * kThreads) {
        float v[kBatch];
#pragma unroll
        for (int u = 0; u < kBatch; ++u) {
            const int idx = base + u * kThreads + static_cast<int>(threadIdx.x);
            const int kk = p.y_k == 1 ? idx % padded : idx / S, j = p.y_k == 1 ? idx / padded : idx % S;
            v[u] = (idx < total && kk < len && j < p.s) ? __ldg(p.y + j * p.y_j + (k0 + kk) * p.y_k) : 0.0f;
        }
#pragma unroll
        for (int u = 0; u < kBatch; ++u) {
            const int idx = base + u * kThreads + static_cast<int>(threadIdx.x);
            const int kk = p.y_k == 1 ? idx % padded : idx / S, j = p.y_k == 1 ? idx / padded : idx % S;
            if (idx < total)
                yf[((kk / 4) * kPitch + j) * 4 + kk % 4] = v[u];
        }
    }
}

// Sums each of the N values v[] over the 2 * O lanes that differ only in
// their low bits (lane index l = lane % (2 * O)) by a fixed butterfly (the
// same additions in the same order on every run). While more than one value
// is left per lane, each exchange halves them: a lane keeps the half picked
// by its lane bit O and adds its partner's copy of that half. Afterwards
// lane l holds the sums of values (l * N) / L + i in v[i] for i < N / L,
// L = 2 * O (N >= L); for N < L, lane l holds value (l * N) / L in v[0].
template <int N, int C, int O>
__device__ __forceinline__ void reduce_scatter(float (&v)[N], int lane)
{
    if constexpr (O > 0) {
        if constexpr (C > 1) {
            constexpr int H = C / 2;
            const bool up = (lane & O) != 0;
#pragma unroll
            for (int i = 0; i < H; ++i) {
                const float send = up ? v[i] : v[H + i];
                const float keep = up ? v[H + i] : v[i];
                v[i] = keep + __shfl_xor_sync(0xffffffffu, send, O);
            }
            reduce_scatter<N, H, O / 2>(v, lane);
        } else {
            v[0] += __shfl_xor_sync(0xffffffffu, v[0], O);
            reduce_scatter<N, 1, O / 2>(v, lane);
        }
    }
}

template <int S, bool kVec>
__global__ void __launch_bounds__(kThreads, 2) skinny_dots(SkinnyParams p, SplitK sk)
{
    constexpr int kRw = dots_rw(S);
    constexpr int kJg = dots_jg(S);       // lanes along j
    constexpr int kJs = S / kJg;          // j per lane
    constexpr int kKg = 32 / kJg;         // lanes along K
    constexpr int kStep = 4 * kKg;        // K per warp step
    constexpr int kSums = kRw * kJs;      // partial sums per lane per group
    constexpr int kOwned = kSums >= kKg ? kSums / kKg : 1;  // finished sums per lane after the butterfly
    constexpr int kPitch = dots_pitch(S);
    const int cap = chunk_for(p, sk, dots_chunk_cap<S>(), kDotsStep);
    extern __shared__ float4 smem_raw[];
    float4 *const ys = smem_raw;  // Y cells, dots_pitch layout; then (cluster form) the block's sums
    int64_t k0, kn;
    k_range(p, sk, &k0, &kn);
    const int chunks = static_cast<int>((kn + cap - 1) / cap);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int kg = lane % kKg, jg = lane / kKg;
    const int64_t block_r0 = static_cast<int64_t>(blockIdx.x) * kWarps * kRw * p.groups;

    // One chunk (the planned case): stage Y once for all of the block's groups.
    if (chunks == 1) {
        stage_y_dots<S>(p, k0, static_cast<int>(kn), static_cast<int>((kn + kDotsStep - 1) / kDotsStep * kDotsStep),
                        ys);
        __syncthreads();
    }

    for (int g = 0; g < p.groups; ++g) {
        const int64_t r0 = block_r0 + static_cast<int64_t>(g * kWarps + warp) * kRw;
        if (chunks == 1 && r0 >= p.r)
            break;  // no barrier below when there is one chunk
        // Rows past the end read the last row (in bounds) and are not stored.
        const float *xr[kRw];
#pragma unroll
        for (int q = 0; q < kRw; ++q)
            xr[q] = p.x + (r0 + q < p.r ? r0 + q : p.r - 1) * p.x_r + k0;

        float done[kOwned];
#pragma unroll
        for (int i = 0; i < kOwned; ++i)
            done[i] = 0.0f;
        for (int c = 0; c < chunks; ++c) {
            const int64_t kc = static_cast<int64_t>(c) * cap;
            const int len = kn - kc < cap ? static_cast<int>(kn - kc) : cap;
            const int padded = (len + kDotsStep - 1) / kDotsStep * kDotsStep;
            if (chunks > 1) {
                __syncthreads();  // every warp is done with the previous chunk
                stage_y_dots<S>(p, k0 + kc, len, padded, ys);
                __syncthreads();
            }
            float acc[kSums];
#pragma unroll
            for (int e = 0; e < kSums; ++e)
                acc[e] = 0.0f;
            const auto accumulate = [&](const float4 (&xv)[kRw], int kk) {
#pragma unroll
                for (int t = 0; t < kJs; ++t) {
                    const float4 y = ys[(kk / 4) * kPitch + jg * kJs + t];
#pragma unroll
                    for (int q = 0; q < kRw; ++q) {
                        float &a = acc[q * kJs + t];
                        a = fmaf(xv[q].x, y.x, a);
                        a = fmaf(xv[q].y, y.y, a);
                        a = fmaf(xv[q].z, y.z, a);
                        a = fmaf(xv[q].w, y.w, a);
                    }
                }
            };
            // Steps where every lane's four k lie inside the chunk: 16-byte
            // streaming loads with no branch around them, so the unrolled
            // steps' loads are in flight together. The chunk's last partial
            // step (and unaligned X) is guarded.
            const int full = kVec ? len / kStep : 0;
#pragma unroll(S >= 16 ? 2 : 4)
            for (int i = 0; i < full; ++i) {
                const int kk = kg * 4 + i * kStep;
                float4 xv[kRw];
#pragma unroll
                for (int q = 0; q < kRw; ++q)
                    xv[q] = __ldcs(reinterpret_cast<const float4 *>(xr[q] + kc + kk));
                accumulate(xv, kk);
            }
            for (int kk = kg * 4 + full * kStep; kk < padded; kk += kStep) {
                float4 xv[kRw];
#pragma unroll
                for (int q = 0; q < kRw; ++q)
                    xv[q] = load_x4(xr[q] + kc + kk, 1, len - kk, kVec);
                accumulate(xv, kk);
            }
            reduce_scatter<kSums, kSums, kKg / 2>(acc, kg);
#pragma unroll
            for (int i = 0; i < kOwned; ++i)
                done[i] += acc[i];
        }
        // Lane (kg, jg) stores sums (kg * kSums) / kKg + i of its j half:
        // neighbouring lanes hold neighbouring j of one r (or, below kKg
        // sums, the same one).
        if (kSums >= kKg || kg % (kSums >= kKg ? 1 : kKg / kSums) == 0) {
#pragma unroll
            for (int i = 0; i < kOwned; ++i) {
                const int e = kg * kSums / kKg + i;
                const int q = e / kJs, j = jg * kJs + e % kJs;
                if (sk.cluster)
                    reinterpret_cast<float *>(ys + (cap / 4) * kPitch)[(r0 + q - block_r0) * S + j] = done[i];
                else if (r0 + q < p.r && j < p.s)
                    store_out(p, sk, r0 + q, j, done[i]);
            }
        }
    }
    if (sk.cluster)
        cluster_finish<S>(p, sk, reinterpret_cast<float *>(ys + (cap / 4) * kPitch), block_r0, kWarps * kRw * p.groups);
}

template <int S, bool kVec>
cudaError_t allow_smem_pair(int max_bytes)
{
    cudaError_t e = cudaFuncSetAttribute(skinny_rows<S, kVec>, cudaFuncAttributeMaxDynamicSharedMemorySize, max_bytes);
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(skinny_dots<S, kVec>, cudaFuncAttributeMaxDynamicSharedMemorySize, max_bytes);
    if (e == cudaSuccess && kVec)
        e = cudaFuncSetAttribute(skinny_rows_ring<S, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, max_bytes);
    if constexpr (S >= 4)
        if (e == cudaSuccess && kVec)
            e = cudaFuncSetAttribute(skinny_rows_ring<S, false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     max_bytes);
    return e;
}

// Launches kernel over grid, as clusters of sk.splits blocks along y in
// cluster form.
cudaError_t launch_k(void (*kernel)(SkinnyParams, SplitK), dim3 grid, size_t smem, cudaStream_t st,
                     const SkinnyParams &p, const SplitK &sk)
{
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg = cluster_launch_config(grid, kThreads, sk.cluster && smem < kClusterSmem ? kClusterSmem : smem,
                                                         st, sk.cluster ? sk.splits : 1, &attr);
    return cudaLaunchKernelEx(&cfg, kernel, p, sk);
}

// Dynamic shared memory of each kernel for a launch.
// Which skinny_rows kernel runs: skinny_rows_ring where X is aligned, Y
// moves in 16-byte pieces (along j, y_vec implies s % 4 == 0, so S >= 4)
// and a block's K is longer than one staged piece of Y, which would make
// skinny_rows stage again behind a barrier. Otherwise skinny_rows, which
// is as fast or faster. H100, 64 MB of X: 34000 x 16 x 1600 (two pieces)
// 147 -> 95 us; one piece: 4096 x 16 x 4096 38.2 against 38.3 us, 4096 x 8 x
// 4096 31.9 both, 4096 x 1 x 4096 27.6 against 30.6.
template <int S>
bool rows_ring(const SkinnyParams &p, const SplitK &sk)
{
    const int64_t span = sk.splits > 1 ? sk.k_chunk : p.k;
    return p.vec && p.y_vec && span > chunk_cap<S>(kRowsStep);
}

template <int S>
size_t rows_smem(const SkinnyParams &p, const SplitK &sk)
{
    if (rows_ring<S>(p, sk))
        return ring_smem_bytes<S>(sk.cluster);
    const size_t part = sk.cluster ? kRowsPerBlock * S : 0;
    const int cap = chunk_for(p, sk, chunk_cap<S>(kRowsStep), kRowsStep);
    return sizeof(float) * (static_cast<size_t>(rows_part_offset<S>(cap)) + part);
}

template <int S>
size_t dots_smem(const SkinnyParams &p, const SplitK &sk)
{
    const size_t part = sk.cluster ? static_cast<size_t>(kWarps) * dots_rw(S) * p.groups * S : 0;
    const int cap = chunk_for(p, sk, dots_chunk_cap<S>(), kDotsStep);
    return sizeof(float4) * static_cast<size_t>(cap / 4) * dots_pitch(S) + sizeof(float) * part;
}

template <int S>
cudaError_t launch_for(const SkinnyParams &p, const SplitK &sk, cudaStream_t st)
{
    if (p.x_r == 1) {
        const dim3 grid(static_cast<unsigned>((p.r + kRowsPerBlock - 1) / kRowsPerBlock),
                        static_cast<unsigned>(sk.splits));
        void (*kernel)(SkinnyParams, SplitK) = p.vec ? skinny_rows<S, true> : skinny_rows<S, false>;
        if (rows_ring<S>(p, sk)) {
            kernel = skinny_rows_ring<S, true>;
            if constexpr (S >= 4)
                if (p.y_k != 1)
                    kernel = skinny_rows_ring<S, false>;
        }
        return launch_k(kernel, grid, rows_smem<S>(p, sk), st, p, sk);
    }
    const int64_t per_block = static_cast<int64_t>(kWarps) * dots_rw(S) * p.groups;
    const dim3 grid(static_cast<unsigned>((p.r + per_block - 1) / per_block), static_cast<unsigned>(sk.splits));
    return launch_k(p.vec ? skinny_dots<S, true> : skinny_dots<S, false>, grid, dots_smem<S>(p, sk), st, p, sk);
}

}  // namespace

cudaError_t prepare_skinny(int cc_major, int *cluster_blocks)
{
    // Cluster form: only where the kernels that run on this device carry
    // their cluster code.
    const bool cluster_code = has_cluster_code(skinny_dots<16, true>, cc_major);
    // The cluster form's sums need kPartBytes more; ask for them only where
    // it can run (GPUs of compute capability 8.6 and 8.9 allow 99 KiB a block).
    const int max_bytes = static_cast<int>(kSmemBytes + (cluster_code ? kPartBytes : 0));
    const cudaError_t e[] = {
        allow_smem_pair<1, false>(max_bytes),  allow_smem_pair<1, true>(max_bytes),
        allow_smem_pair<2, false>(max_bytes),  allow_smem_pair<2, true>(max_bytes),
        allow_smem_pair<4, false>(max_bytes),  allow_smem_pair<4, true>(max_bytes),
        allow_smem_pair<8, false>(max_bytes),  allow_smem_pair<8, true>(max_bytes),
        allow_smem_pair<16, false>(max_bytes), allow_smem_pair<16, true>(max_bytes),
    };
    for (cudaError_t x : e)
        if (x != cudaSuccess)
            return x;
    // How many blocks run at once in clusters of n, at the two blocks per SM
    // every cluster launch has (kClusterSmem).
    for (int n = 0; n <= kMaxCluster; ++n)
        cluster_blocks[n] = 0;
    if (cluster_code)
        count_cluster_blocks(skinny_dots<16, true>, kThreads, kClusterSmem, kMaxCluster, cluster_blocks);
    return cudaSuccess;
}

int short_bucket(int s)
{
    return s <= 1 ? 1 : s <= 2 ? 2 : s <= 4 ? 4 : s <= 8 ? 8 : 16;
}

int64_t skinny_rows_per_block(const SkinnyParams &p)
{
    return p.x_r == 1 ? kRowsPerBlock : kWarps * dots_rw(short_bucket(p.s)) * p.groups;
}

namespace {

int64_t div_up(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

int64_t dots_cap(int s)
{
    switch (short_bucket(s)) {
    case 1: return dots_chunk_cap<1>();
    case 2: return dots_chunk_cap<2>();
    case 4: return dots_chunk_cap<4>();
    case 8: return dots_chunk_cap<8>();
    default: return dots_chunk_cap<16>();
    }
}

// skinny_rows: two 8-warp blocks per SM keep enough loads in flight; split K
// until there are that many blocks, keeping every slice at least 4 steps long
// so the partial sums stay cheap. Where a split of at least 3/4 as many
// slices lets every block run at once in clusters, take it: finishing in
// the cluster saves the reduction kernel and its launch (H100: clusters of
// 8 hold 240 of the 264 block slots, so 32 x 8 blocks would not fit, 32 x 7 do).
SplitK rows_split(const SkinnyParams &p, int sm_count, const int *cluster_blocks)
{
    const int64_t blocks = div_up(p.r, kRowsPerBlock);
    const int64_t want = div_up(2 * static_cast<int64_t>(sm_count), blocks);
    const int64_t most = p.k / (4 * kRowsStep);
    int64_t splits = want < most ? want : most;
    if (splits < 1)
        splits = 1;
    SplitK sk;
    const auto make = [&](int64_t n) {
        sk.k_chunk = div_up(div_up(p.k, n), kRowsStep) * kRowsStep;
        sk.splits = static_cast<int>(div_up(p.k, sk.k_chunk));
        sk.cluster = sk.splits > 1 && sk.splits <= kMaxCluster && blocks * sk.splits <= cluster_blocks[sk.splits];
    };
    make(splits);
    for (int64_t n = sk.splits; !sk.cluster && n > 1 && 4 * n >= 3 * sk.splits; --n) {
        const SplitK keep = sk;
        make(n);
        if (!sk.cluster)
            sk = keep;
    }
    return sk;
}

// skinny_dots: the split of K and the groups per block with the least
// modelled time. The kernel streams X at the memory's rate when two blocks
// per SM are resident, so each block moves its bytes (its X, plus the Y
// piece it stages) at 1 / (2 * SMs) of the bandwidth, in whole waves; a
// split adds its slices' traffic and the reduction's launch, or in cluster
// form (at most kMaxCluster slices, all blocks resident at once) the exchange
// through distributed shared memory. More groups per block stage Y once for more rows; more slices make
// more, shorter blocks.
constexpr double kDotsBandwidth = 2.88e12;  // bytes/s, H100 (shared/PERF.md)
constexpr double kDotsLaunch = 3e-6;        // the split-K reduction kernel
constexpr double kClusterFinish = 1e-6;     // two cluster barriers and the exchange

SplitK dots_split(SkinnyParams *p, int sm_count, const int *cluster_blocks)
{
    const int S = short_bucket(p->s);
    const int64_t rw = dots_rw(S), cap = dots_cap(p->s);
    const double slots = 2.0 * sm_count;
    const double block_rate = kDotsBandwidth / slots;
    double best = INFINITY;
    SplitK sk;
    sk.splits = 1;
    sk.k_chunk = p->k;
    p->groups = 1;
    for (int64_t want = 1; want <= 64; ++want) {
        const int64_t chunk = div_up(div_up(p->k, want), kDotsStep) * kDotsStep;
        const int64_t splits = div_up(p->k, chunk);
        if (splits != want)
            continue;  // the same split as a smaller want
        if (splits > 1 && chunk < 4 * kDotsStep)
            break;
        const int64_t pieces = div_up(chunk, cap);
        for (int groups = 1; groups <= 8; groups *= 2) {
            const int64_t rows = kWarps * rw * groups;
            const double blocks = static_cast<double>(div_up(p->r, rows) * splits);
            const double waves = std::ceil(blocks / slots);
            const double x_bytes = 4.0 * static_cast<double>(rows < p->r ? rows : p->r) * chunk;
            const double y_bytes = 4.0 * S * chunk * (pieces > 1 ? groups : 1);
            double t = waves * (x_bytes + y_bytes) / block_rate;
            const bool cluster = splits > 1 && splits <= kMaxCluster && blocks <= cluster_blocks[splits] &&
                                 rows * S * 4 <= static_cast<int64_t>(kPartBytes);
            if (cluster)
                t += kClusterFinish;
            else if (splits > 1)
                t += (2.0 * splits + 1.0) * 4.0 * p->r * S / kDotsBandwidth + kDotsLaunch;
            if (t < best) {
                best = t;
                sk.splits = static_cast<int>(splits);
                sk.k_chunk = chunk;
                sk.cluster = cluster;
                p->groups = groups;
            }
        }
    }
    return sk;
}

}  // namespace

SplitK skinny_split(SkinnyParams *p, int sm_count, const int *cluster_blocks)
{
    if (p->x_r == 1) {
        p->groups = 1;
        return rows_split(*p, sm_count, cluster_blocks);
    }
    return dots_split(p, sm_count, cluster_blocks);
}

cudaError_t launch_skinny(const SkinnyParams &p, const SplitK &sk, cudaStream_t st)
{
    if (p.s <= 1) return launch_for<1>(p, sk, st);
    if (p.s <= 2) return launch_for<2>(p, sk, st);
    if (p.s <= 4) return launch_for<4>(p, sk, st);
    if (p.s <= 8) return launch_for<8>(p, sk, st);
    return launch_for<16>(p, sk, st);
}

}  // namespace kernels
}  // namespace tgemm
