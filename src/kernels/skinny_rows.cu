// skinny_rows: the streaming kernel for products whose X is contiguous
// along r (x_r == 1), C(r, j) = alpha * sum_k X(r, k) Y(j, k) + beta * C(r, j)
// with j < s <= 16 (SkinnyParams). A lane owns 4 consecutive r (one 16-byte
// load per k when p.vec); the 8 warps of a block own the same 128 r and
// split the block's K among themselves; Y is staged in shared memory a
// piece of K at a time behind a barrier; the warps' sums are added through
// shared memory in warp order (rows_finish), so the result is
// deterministic. Split-K over blockIdx.y: raw sums to the slice's workspace
// (splitk_reduce finishes C) or, in cluster form, through distributed
// shared memory. Edges: r past p.r, j past p.s and k past the slice are
// never read and never written. beta == 0 never reads C.
#include "kernels/skinny_common.cuh"

namespace tgemm {
namespace kernels {
namespace {
using namespace skinny;

// Stages Y(j, k0 + kk) for kk < len (zero for kk in [len, padded) and j >= s)
// into ys[kk * ld_k + j * ld_j].
template <int S>
__device__ __forceinline__ void stage_y(const SkinnyParams &p, int64_t k0, int len, int padded, float *ys, int ld_k,
                                        int ld_j)
{
    if (p.y_k == 1) {  // K contiguous in memory: neighbouring threads along K
        stage_y_along_k<S>(p, k0, len, padded, [&](int kk, int j, float v) { ys[kk * ld_k + j * ld_j] = v; });
        return;
    }
    // Eight loads in flight per thread before the first store: staging is
    // bound by the latency of these (L2-resident) reads, not their number.
    // Neighbouring threads along j.
    constexpr int kBatch = stage_batch(S, false);
    const int total = padded * S;
    for (int base = 0; base < total; base += kBatch * kThreads) {
        float v[kBatch];
#pragma unroll
        for (int u = 0; u < kBatch; ++u) {
            const int idx = base + u * kThreads + static_cast<int>(threadIdx.x);
            const int j = idx % S, kk = idx / S;
            v[u] = (idx < total && kk < len && j < p.s) ? __ldg(p.y + j * p.y_j + (k0 + kk) * p.y_k) : 0.0f;
        }
#pragma unroll
        for (int u = 0; u < kBatch; ++u) {
            const int idx = base + u * kThreads + static_cast<int>(threadIdx.x);
            if (idx < total)
                ys[idx / S * ld_k + idx % S * ld_j] = v[u];
        }
    }
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
    constexpr int kBatch = stage_batch(S, true);
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

template <int S, bool kVec>
__global__ void __launch_bounds__(kThreads, 2) skinny_rows(SkinnyParams p, SplitK sk)
{
    constexpr int kU = rows_unroll(S);
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
    // Every lane holding any r runs its steps in groups of kU loads in
    // flight: one 16-byte load a step with aligned X where the lane holds
    // four r, else one load per r it holds. (A lane at the end of r taking
    // its steps one load at a time would hold its whole warp, and the
    // product, for a round trip to memory per step.)
    const bool piped = rows > 0;
    const auto load = [&](const float *xp) -> float4 {
        if constexpr (kVec)
            return fast ? __ldcs(reinterpret_cast<const float4 *>(xp)) : load_x4_stream(xp, rows);
        else
            return load_x4_stream(xp, rows);
    };

    float acc[4][S];
    zero_sums<S>(acc);

    for (int64_t kc = 0; kc < kn; kc += cap) {
        const int len = kn - kc < cap ? static_cast<int>(kn - kc) : cap;
        // This warp's share of the chunk, in groups of kU steps, the first
        // one partial where kU does not divide the share.
        const int per = (len + kWarps - 1) / kWarps;
        const int kb = warp * per, steps = piped && kb + per <= len ? per : piped && kb < len ? len - kb : 0;
        const int groups = (steps + kU - 1) / kU, first = steps - (groups - 1) * kU;
        const float *xk = x + (kc + kb) * p.x_k;
        // Loads a group of steps from xp: the first count of them (count >=
        // 1). No load is predicated: the others read step 0 again, and are
        // never multiplied.
        const auto load_group = [&](float4 (&v)[kU], const float *xp, int count) {
#pragma unroll
            for (int u = 0; u < kU; ++u)
                v[u] = load(xp + (u < count ? u : 0) * p.x_k);
        };
        // The first group of X is requested before Y is staged, so that its
        // trip to memory overlaps the staging.
        float4 cur[kU];
        if (groups > 0)
            load_group(cur, xk, first);
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
        // The next group's loads are issued before this group's FFMAs, so
        // kU to 2 kU steps per lane are in flight, the partial first group's
        // with the whole group after it: no step waits alone for its trip
        // to memory. Past the last group a lane loads the last group again
        // (in flight while it is multiplied; never multiplied twice).
        int kk = kb;
        for (int g = 0; g < groups; ++g) {
            const int here = g == 0 ? first : kU;
            if (g + 1 < groups)
                xk += here * p.x_k;
            float4 nxt[kU];
            load_group(nxt, xk, g + 1 < groups ? kU : here);
#pragma unroll
            for (int u = 0; u < kU; ++u)
                if (u < here)
                    accumulate(cur[u], kk + u);
#pragma unroll
            for (int u = 0; u < kU; ++u)
                cur[u] = nxt[u];
            kk += here;
        }
        __syncthreads();
    }

    rows_finish<S>(p, sk, acc, ys, rows_part_offset<S>(cap));  // the loop's last barrier freed ys
}

template <int S>
size_t rows_smem(const SkinnyParams &p, const SplitK &sk)
{
    const size_t part = sk.cluster ? kRowsPerBlock * S : 0;
    const int cap = chunk_for(p, sk, chunk_cap<S>(kRowsStep), kRowsStep);
    return sizeof(float) * (static_cast<size_t>(rows_part_offset<S>(cap)) + part);
}

}  // namespace

cudaError_t skinny::prepare_rows(int max_bytes)
{
    return each_bucket([max_bytes](auto s) {
        constexpr int S = decltype(s)::value;
        return allow_smem(max_bytes, {skinny_rows<S, false>, skinny_rows<S, true>});
    });
}

cudaError_t skinny::launch_rows(const SkinnyParams &p, const SplitK &sk, cudaStream_t st)
{
    return with_bucket(p.s, [&](auto s) {
        constexpr int S = decltype(s)::value;
        return launch_k(p.vec ? skinny_rows<S, true> : skinny_rows<S, false>, rows_grid(p, sk), rows_smem<S>(p, sk),
                        st, p, sk);
    });
}

}  // namespace kernels
}  // namespace tgemm
