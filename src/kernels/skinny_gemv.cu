// skinny_gemv: the streaming kernel for products with one row or column of C
// (s == 1) whose X is contiguous along r (x_r == 1): C(r) = alpha * sum_k
// X(r, k) y(k) + beta * C(r), y(k) = Y(0, k), a matrix-vector product. It
// is planned where skinny_rows waits for too many round trips to memory
// (dispatch/streaming.cpp): a lane owns one r, so a warp's load of one k is
// 32 consecutive floats, fully coalesced whatever X's alignment, and each
// lane keeps a group of kGemvSteps steps of K in flight (one load each), the
// next group's loads issued before the current group's FFMAs. y needs no
// shared memory or barrier: lane u of a warp loads y(k + u) for the group
// and the FFMAs take it by shuffle.
//
// A block's 8 warps are p.gemv_rw groups along r (32 r each) by
// 8 / p.gemv_rw along K; each walks a contiguous run of the block's K, and
// the runs' sums are added in warp order through shared memory. Split-K over
// blockIdx.y, as skinny_rows: raw sums to the slice's workspace
// (splitk_reduce finishes C) or, in cluster form, through distributed
// shared memory (cluster_finish). The order of the additions depends only
// on the plan, not on alignment or scheduling: the result is deterministic.
// Edges: r past p.r and k past the slice are never read and never written.
// beta == 0 never reads C.
#include "kernels/skinny_common.cuh"

namespace tgemm {
namespace kernels {
namespace {
using namespace skinny;

constexpr unsigned kFullMask = 0xffffffffu;

// The group of steps from xk, yk: this lane's X for count of them (zero past
// count and for a lane with no r), and y(lane) if lane < count.
__device__ __forceinline__ void load_group(const SkinnyParams &p, const float *xk, const float *yk, int64_t count,
                                           bool live, float (&xv)[kGemvSteps], float *yv)
{
    const int lane = static_cast<int>(threadIdx.x % 32);
#pragma unroll
    for (int u = 0; u < kGemvSteps; ++u)
        xv[u] = live && u < count ? __ldcs(xk + u * p.x_k) : 0.0f;
    *yv = lane < count ? __ldg(yk + lane * p.y_k) : 0.0f;
}

__global__ void __launch_bounds__(kThreads, 2) skinny_gemv(SkinnyParams p, SplitK sk)
{
    __shared__ float red[kThreads];   // the warps' sums, [warp][lane]
    __shared__ float part[kThreads];  // cluster form: the block's sums
    int64_t k0, kn;
    k_range(p, sk, &k0, &kn);
    const int warp = static_cast<int>(threadIdx.x / 32), lane = static_cast<int>(threadIdx.x % 32);
    const int rw = p.gemv_rw, wk = kWarps / rw;
    const int64_t r_base = static_cast<int64_t>(blockIdx.x) * rw * kGemvRows;
    const int64_t r = r_base + (warp % rw) * kGemvRows + lane;
    const bool live = r < p.r;
    // This warp's run of the block's K.
    const int64_t per = (kn + wk - 1) / wk;
    const int64_t kb = (warp / rw) * per;
    int64_t left = kn - kb < per ? kn - kb : per;
    const float *xk = p.x + (live ? r : 0) + (k0 + kb) * p.x_k;
    const float *yk = p.y + (k0 + kb) * p.y_k;

    float acc = 0.0f;
    float cur[kGemvSteps], ycur;
    load_group(p, xk, yk, left, live, cur, &ycur);
    for (; left > 0; left -= kGemvSteps) {
        xk += kGemvSteps * p.x_k;
        yk += kGemvSteps * p.y_k;
        float nxt[kGemvSteps], ynxt;
        load_group(p, xk, yk, left - kGemvSteps, live, nxt, &ynxt);
        // Past the run both factors are zero: the sum keeps its value (a -0
        // sum, from products that underflowed, becomes +0).
#pragma unroll
        for (int u = 0; u < kGemvSteps; ++u)
            acc = fmaf(cur[u], __shfl_sync(kFullMask, ycur, u), acc);
#pragma unroll
        for (int u = 0; u < kGemvSteps; ++u)
            cur[u] = nxt[u];
        ycur = ynxt;
    }

    red[threadIdx.x] = acc;
    __syncthreads();
    const int rows = rw * kGemvRows;
    if (static_cast<int>(threadIdx.x) < rows) {
        // Warp (kw * rw + wr) holds run kw of r group wr: runs added in K order.
        float sum = red[threadIdx.x];
        for (int kw = 1; kw < wk; ++kw)
            sum += red[kw * rows + threadIdx.x];
        const int64_t rr = r_base + threadIdx.x;
        if (sk.cluster)
            part[threadIdx.x] = sum;
        else if (rr < p.r)
            store_out(p, sk, rr, 0, sum);
    }
    if (sk.cluster)
        cluster_finish<1>(p, sk, part, r_base, rows);
}

}  // namespace

cudaError_t skinny::prepare_gemv(int max_bytes)
{
    return allow_smem(max_bytes, {skinny_gemv});
}

cudaError_t skinny::launch_gemv(const SkinnyParams &p, const SplitK &sk, cudaStream_t st)
{
    const int64_t rows = static_cast<int64_t>(p.gemv_rw) * kGemvRows;
    const dim3 grid(static_cast<unsigned>((p.r + rows - 1) / rows), static_cast<unsigned>(sk.splits));
    return launch_k(skinny_gemv, grid, 0, st, p, sk);
}

}  // namespace kernels
}  // namespace tgemm
