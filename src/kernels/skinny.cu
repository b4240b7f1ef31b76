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
//   - skinny_dots: X is contiguous along k (x_k == 1). A warp owns 4 values of
//     r; its lanes read 16-byte pieces of K side by side, and the partial sums
//     are added across the warp at the end by a fixed butterfly.
// Both are deterministic. Split-K across blocks (blockIdx.y) gives enough
// blocks when R is small; partial sums then go unscaled to a workspace slice
// and splitk_reduce finishes C.
#include "family.hpp"

namespace tgemm {
namespace kernels {
namespace {

constexpr int kThreads = 256;             // both kernels: 8 warps
constexpr int kWarps = kThreads / 32;
constexpr int kRowsPerBlock = 32 * 4;     // skinny_rows: 4 r per lane, all warps share them
// skinny_dots: r per warp. Each Y value read from shared memory serves that
// many r; at s = 16 the registers hold only two r's sums without spilling.
__host__ __device__ constexpr int dots_rw(int S)
{
    return S >= 16 ? 2 : 4;
}
constexpr int kDotsStep = 128;            // skinny_dots: K per warp step (32 lanes x 4)
constexpr int kRowsStep = 64;             // skinny_rows: K chunks are multiples of this
constexpr size_t kSmemBytes = 96 * 1024;  // dynamic shared memory per block, at most

// The most K staged at once: S rows of (chunk + 4) floats fit in kSmemBytes.
template <int S>
__host__ __device__ constexpr int chunk_cap(int step)
{
    return static_cast<int>((kSmemBytes / sizeof(float) / S - 4) / step) * step;
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

template <int S, bool kVec>
__global__ void __launch_bounds__(kThreads, 2) skinny_rows(SkinnyParams p, SplitK sk)
{
    const int cap = chunk_for(p, sk, chunk_cap<S>(kRowsStep), kRowsStep);
    extern __shared__ float4 smem_raw[];
    float *const ys = reinterpret_cast<float *>(smem_raw);  // [kk][j] staging, then the warp sums
    int64_t k0, kn;
    k_range(p, sk, &k0, &kn);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int64_t r = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + lane * 4;
    const int rows = p.r - r < 4 ? static_cast<int>(p.r - r > 0 ? p.r - r : 0) : 4;
    const float *x = p.x + (rows > 0 ? r : 0) + k0 * p.x_k;

    float acc[4][S];
#pragma unroll
    for (int q = 0; q < 4; ++q)
#pragma unroll
        for (int j = 0; j < S; ++j)
            acc[q][j] = 0.0f;

    for (int64_t kc = 0; kc < kn; kc += cap) {
        const int len = kn - kc < cap ? static_cast<int>(kn - kc) : cap;
        stage_y<S>(p, k0 + kc, len, len, ys, S, 1);
        __syncthreads();
        // This warp's share of the chunk. The common case (aligned, all four
        // r inside the matrix) is a loop with no branch around its loads, so
        // the unrolled iterations' loads are all in flight at once.
        const int per = (len + kWarps - 1) / kWarps;
        const int kb = warp * per, ke = kb + per < len ? kb + per : len;
        const float *xk = x + (kc + kb) * p.x_k;
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
        if (kVec && rows == 4) {
#pragma unroll 8
            for (int kk = kb; kk < ke; ++kk, xk += p.x_k)
                accumulate(__ldg(reinterpret_cast<const float4 *>(xk)), kk);
        } else {
#pragma unroll 4
            for (int kk = kb; kk < ke; ++kk, xk += p.x_k)
                accumulate(load_x4(xk, 1, rows, false), kk);
        }
        __syncthreads();
    }

    // Sum the eight warps' partial sums in warp order.
    float *const red = ys;  // [warp][row in block][j]
#pragma unroll
    for (int q = 0; q < 4; ++q)
#pragma unroll
        for (int j = 0; j < S; ++j)
            red[(warp * kRowsPerBlock + lane * 4 + q) * S + j] = acc[q][j];
    __syncthreads();
    for (int e = threadIdx.x; e < kRowsPerBlock * S; e += kThreads) {
        const int row = e / S, j = e % S;
        float sum = red[row * S + j];
        for (int w = 1; w < kWarps; ++w)
            sum += red[(w * kRowsPerBlock + row) * S + j];
        const int64_t rr = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + row;
        if (rr < p.r && j < p.s)
            store_out(p, sk, rr, j, sum);
    }
}

template <int S, bool kVec>
__global__ void __launch_bounds__(kThreads, 2) skinny_dots(SkinnyParams p, SplitK sk)
{
    constexpr int kDotsRw = dots_rw(S);
    const int cap = chunk_for(p, sk, chunk_cap<S>(kDotsStep), kDotsStep);
    const int ld = cap + 4;  // ys[j][kk]; the pad keeps rows 16-byte aligned and off each other's banks
    extern __shared__ float4 smem_raw[];
    float *const ys = reinterpret_cast<float *>(smem_raw);
    int64_t k0, kn;
    k_range(p, sk, &k0, &kn);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int64_t r0 = (static_cast<int64_t>(blockIdx.x) * kWarps + warp) * kDotsRw;

    float acc[kDotsRw][S];
#pragma unroll
    for (int q = 0; q < kDotsRw; ++q)
#pragma unroll
        for (int j = 0; j < S; ++j)
            acc[q][j] = 0.0f;

    const float *xr[kDotsRw];
#pragma unroll
    for (int q = 0; q < kDotsRw; ++q)
        xr[q] = p.x + (r0 + q < p.r ? r0 + q : 0) * p.x_r + k0;

    for (int64_t kc = 0; kc < kn; kc += cap) {
        const int len = kn - kc < cap ? static_cast<int>(kn - kc) : cap;
        const int padded = (len + kDotsStep - 1) / kDotsStep * kDotsStep;
        stage_y<S>(p, k0 + kc, len, padded, ys, 1, ld);
        __syncthreads();
        const auto accumulate = [&](const float4 (&xv)[kDotsRw], int kk) {
#pragma unroll
            for (int j = 0; j < S; ++j) {
                const float4 y = *reinterpret_cast<const float4 *>(ys + j * ld + kk);
#pragma unroll
                for (int q = 0; q < kDotsRw; ++q) {
                    acc[q][j] = fmaf(xv[q].x, y.x, acc[q][j]);
                    acc[q][j] = fmaf(xv[q].y, y.y, acc[q][j]);
                    acc[q][j] = fmaf(xv[q].z, y.z, acc[q][j]);
                    acc[q][j] = fmaf(xv[q].w, y.w, acc[q][j]);
                }
            }
        };
        // Steps where every lane's four k lie inside the chunk, for a warp
        // whose r all exist: 16-byte loads with no branch around them, so the
        // unrolled steps' loads are in flight together. The rest (the
        // chunk's last partial step, a partial warp, unaligned X) is guarded.
        const bool rows_ok = r0 + kDotsRw <= p.r;
        const int full = kVec && rows_ok ? len / kDotsStep : 0;
#pragma unroll(S >= 16 ? 4 : 2)
        for (int i = 0; i < full; ++i) {
            const int kk = lane * 4 + i * kDotsStep;
            float4 xv[kDotsRw];
#pragma unroll
            for (int q = 0; q < kDotsRw; ++q)
                xv[q] = __ldg(reinterpret_cast<const float4 *>(xr[q] + kc + kk));
            accumulate(xv, kk);
        }
        for (int kk = lane * 4 + full * kDotsStep; kk < padded; kk += kDotsStep) {
            float4 xv[kDotsRw];
#pragma unroll
            for (int q = 0; q < kDotsRw; ++q) {
                const int count = r0 + q < p.r ? len - kk : 0;
                xv[q] = load_x4(xr[q] + kc + kk, 1, count, kVec);
            }
            accumulate(xv, kk);
        }
        __syncthreads();
    }
#pragma unroll
    for (int q = 0; q < kDotsRw; ++q)
#pragma unroll
        for (int j = 0; j < S; ++j)
#pragma unroll
            for (int off = 16; off > 0; off /= 2)
                acc[q][j] += __shfl_xor_sync(0xffffffffu, acc[q][j], off);
    // Lane (q * S + j) % 32 writes output (q, j): the stores are spread over the warp.
#pragma unroll
    for (int q = 0; q < kDotsRw; ++q)
#pragma unroll
        for (int j = 0; j < S; ++j)
            if (lane == (q * S + j) % 32 && r0 + q < p.r && j < p.s)
                store_out(p, sk, r0 + q, j, acc[q][j]);
}

template <int S, bool kVec>
cudaError_t allow_smem_pair()
{
    cudaError_t e = cudaFuncSetAttribute(skinny_rows<S, kVec>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(kSmemBytes));
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(skinny_dots<S, kVec>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 static_cast<int>(kSmemBytes));
    return e;
}

template <int S>
cudaError_t launch_for(const SkinnyParams &p, const SplitK &sk, cudaStream_t st)
{
    if (p.x_r == 1) {
        const int cap = chunk_for(p, sk, chunk_cap<S>(kRowsStep), kRowsStep);
        const size_t red = sizeof(float) * kWarps * kRowsPerBlock * S;
        const size_t stage = sizeof(float) * static_cast<size_t>(cap) * S;
        const dim3 grid(static_cast<unsigned>((p.r + kRowsPerBlock - 1) / kRowsPerBlock),
                        static_cast<unsigned>(sk.splits));
        const size_t smem = red > stage ? red : stage;
        if (p.vec)
            skinny_rows<S, true><<<grid, kThreads, smem, st>>>(p, sk);
        else
            skinny_rows<S, false><<<grid, kThreads, smem, st>>>(p, sk);
    } else {
        const int cap = chunk_for(p, sk, chunk_cap<S>(kDotsStep), kDotsStep);
        const size_t smem = sizeof(float) * static_cast<size_t>(S) * (cap + 4);
        constexpr int kPerBlock = kWarps * dots_rw(S);
        const dim3 grid(static_cast<unsigned>((p.r + kPerBlock - 1) / kPerBlock), static_cast<unsigned>(sk.splits));
        if (p.vec)
            skinny_dots<S, true><<<grid, kThreads, smem, st>>>(p, sk);
        else
            skinny_dots<S, false><<<grid, kThreads, smem, st>>>(p, sk);
    }
    return cudaGetLastError();
}

}  // namespace

cudaError_t prepare_skinny()
{
    const cudaError_t e[] = {
        allow_smem_pair<1, false>(), allow_smem_pair<1, true>(),   allow_smem_pair<2, false>(),
        allow_smem_pair<2, true>(),  allow_smem_pair<4, false>(),  allow_smem_pair<4, true>(),
        allow_smem_pair<8, false>(), allow_smem_pair<8, true>(),   allow_smem_pair<16, false>(),
        allow_smem_pair<16, true>(),
    };
    for (cudaError_t x : e)
        if (x != cudaSuccess)
            return x;
    return cudaSuccess;
}

int short_bucket(int s)
{
    return s <= 1 ? 1 : s <= 2 ? 2 : s <= 4 ? 4 : s <= 8 ? 8 : 16;
}

int64_t skinny_rows_per_block(const SkinnyParams &p)
{
    return p.x_r == 1 ? kRowsPerBlock : kWarps * dots_rw(short_bucket(p.s));
}

SplitK skinny_split(const SkinnyParams &p, int sm_count)
{
    // Two blocks per SM keep enough loads in flight (both kernels run two
    // 8-warp blocks per SM); split K until there are that many, but keep every
    // slice at least 4 steps long so the partial sums stay cheap.
    const bool rows = p.x_r == 1;
    const int64_t per_block = skinny_rows_per_block(p);
    const int64_t step = rows ? kRowsStep : kDotsStep;
    const int64_t blocks = (p.r + per_block - 1) / per_block;
    const int64_t want = (2 * static_cast<int64_t>(sm_count) + blocks - 1) / blocks;
    const int64_t most = p.k / (4 * step);
    int64_t splits = want < most ? want : most;
    if (splits < 1)
        splits = 1;
    SplitK sk;
    sk.k_chunk = ((p.k + splits - 1) / splits + step - 1) / step * step;
    sk.splits = static_cast<int>((p.k + sk.k_chunk - 1) / sk.k_chunk);
    return sk;
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
