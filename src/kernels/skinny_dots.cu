// skinny_dots: the streaming kernel for products whose X is contiguous
// along k (x_k == 1), C(r, j) = alpha * sum_k X(r, k) Y(j, k) + beta * C(r, j)
// with j < s <= 16 (SkinnyParams). A warp owns a group of dots_rw(S) values
// of r at a time; its lanes read 16-byte pieces of K side by side, and at
// the end of the block's K the warp's dots_rw(S) x S partial sums are summed
// across the lanes by a fixed reduce-scatter butterfly that leaves each
// lane a different sum to store: deterministic. A block owns 8 warps x
// p.groups such groups (set by the planner), so the Y piece it stages once
// serves 8 * dots_rw(S) * p.groups values of r. Split-K over blockIdx.y as
// skinny_rows. Edges: r past p.r, j past p.s and k past the slice are never
// read and never written. beta == 0 never reads C.
#include "kernels/skinny_common.cuh"

namespace tgemm {
namespace kernels {
namespace {
using namespace skinny;

// skinny_dots: lanes that split the S values of j (each lane keeps S / that
// many). At S = 16 two halves keep 4 x 8 sums per lane instead of 4 x 16,
// which leaves the registers for dots_unroll(16, vec) steps of X loads in
// flight.
__host__ __device__ constexpr int dots_jg(int S)
{
    return S >= 16 ? 2 : 1;
}

// Stages Y(j, k0 + kk) for kk < len, j < p.s into skinny_dots' layout
// (dots_pitch), zero for kk in [len, padded) and j in [p.s, S). When p.y_vec
// allows, every thread moves 16-byte pieces (along K when Y is contiguous
// along K, else along j), eight in flight per thread before the first store,
// so one block's staging costs about one L2 round trip, not one per element.
// No index is divided at run time.
template <int S>
__device__ __forceinline__ void stage_y_dots(const SkinnyParams &p, int64_t k0, int len, int padded, float4 *ys)
{
    constexpr int kBatch = stage_batch(S, false);
    constexpr int kPitch = dots_pitch(S);
    if (p.y_vec && p.y_k == 1) {  // 4 consecutive kk of one j per piece: one cell
        // Neighbouring threads take neighbouring cells along K; a thread
        // loads up to eight j of kQs cells before it stores any.
        constexpr int kJs = S < kBatch ? S : kBatch, kQs = kBatch / kJs;
        const int quads = padded / 4;
        for (int base = 0; base < quads; base += kQs * kThreads) {
#pragma unroll
            for (int j0 = 0; j0 < S; j0 += kJs) {
                float4 v[kQs][kJs];
#pragma unroll
                for (int i = 0; i < kQs; ++i) {
                    const int q = base + i * kThreads + static_cast<int>(threadIdx.x), kk = q * 4;
#pragma unroll
                    for (int jj = 0; jj < kJs; ++jj) {
                        const int j = j0 + jj;
                        const bool in = q < quads && j < p.s;
                        const float *src = p.y + (in ? j * p.y_j + k0 + kk : 0);
                        if (in && kk + 4 <= len) {
                            v[i][jj] = __ldg(reinterpret_cast<const float4 *>(src));
                        } else {
                            v[i][jj].x = in && kk + 0 < len ? __ldg(src + 0) : 0.0f;
                            v[i][jj].y = in && kk + 1 < len ? __ldg(src + 1) : 0.0f;
                            v[i][jj].z = in && kk + 2 < len ? __ldg(src + 2) : 0.0f;
                            v[i][jj].w = in && kk + 3 < len ? __ldg(src + 3) : 0.0f;
                        }
                    }
                }
#pragma unroll
                for (int i = 0; i < kQs; ++i) {
                    const int q = base + i * kThreads + static_cast<int>(threadIdx.x);
                    if (q < quads) {
#pragma unroll
                        for (int jj = 0; jj < kJs; ++jj)
                            ys[q * kPitch + j0 + jj] = v[i][jj];
                    }
                }
            }
        }
        return;
    }
    float *const yf = reinterpret_cast<float *>(ys);
    if (p.y_k == 1) {  // any j stride: one element per load, neighbouring threads along K
        stage_y_along_k<S>(p, k0, len, padded,
                           [&](int kk, int j, float v) { yf[((kk / 4) * kPitch + j) * 4 + kk % 4] = v; });
        return;
    }
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
    // Any strides, Y not contiguous along K: one element per load,
    // neighbouring threads along j.
    const int total = padded * S;
    for (int base = 0; base < total; base += kBatch * kThreads) {
        float v[kBatch];
#pragma unroll
        for (int u = 0; u < kBatch; ++u) {
            const int idx = base + u * kThreads + static_cast<int>(threadIdx.x);
            const int kk = idx / S, j = idx % S;
            v[u] = (idx < total && kk < len && j < p.s) ? __ldg(p.y + j * p.y_j + (k0 + kk) * p.y_k) : 0.0f;
        }
#pragma unroll
        for (int u = 0; u < kBatch; ++u) {
            const int idx = base + u * kThreads + static_cast<int>(threadIdx.x);
            const int kk = idx / S, j = idx % S;
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
            // Steps where every lane's four k lie inside the chunk: streaming
            // loads (16-byte ones where X is aligned, else four of 4 bytes)
            // with no branch around them, so the unrolled steps' loads are
            // in flight together. The chunk's last partial step is guarded.
            const int full = len / kStep;
#pragma unroll(dots_unroll(S, kVec))
            for (int i = 0; i < full; ++i) {
                const int kk = kg * 4 + i * kStep;
                float4 xv[kRw];
#pragma unroll
                for (int q = 0; q < kRw; ++q)
                    xv[q] = kVec ? __ldcs(reinterpret_cast<const float4 *>(xr[q] + kc + kk))
                                 : load_x4_stream(xr[q] + kc + kk, 4);
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

template <int S>
size_t dots_smem(const SkinnyParams &p, const SplitK &sk)
{
    const size_t part = sk.cluster ? static_cast<size_t>(kWarps) * dots_rw(S) * p.groups * S : 0;
    const int cap = chunk_for(p, sk, dots_chunk_cap<S>(), kDotsStep);
    return sizeof(float4) * static_cast<size_t>(cap / 4) * dots_pitch(S) + sizeof(float) * part;
}

}  // namespace

cudaError_t skinny::prepare_dots(int max_bytes)
{
    return each_bucket([max_bytes](auto s) {
        constexpr int S = decltype(s)::value;
        return allow_smem(max_bytes, {skinny_dots<S, false>, skinny_dots<S, true>});
    });
}

cudaError_t skinny::launch_dots(const SkinnyParams &p, const SplitK &sk, cudaStream_t st)
{
    return with_bucket(p.s, [&](auto s) {
        constexpr int S = decltype(s)::value;
        const int64_t per_block = static_cast<int64_t>(kWarps) * dots_rw(S) * p.groups;
        const dim3 grid(static_cast<unsigned>((p.r + per_block - 1) / per_block), static_cast<unsigned>(sk.splits));
        return launch_k(p.vec ? skinny_dots<S, true> : skinny_dots<S, false>, grid, dots_smem<S>(p, sk), st, p, sk);
    });
}

bool skinny::dots_cluster_code(int cc_major)
{
    return has_cluster_code(skinny_dots<16, true>, cc_major);
}

void skinny::count_clusters(int *cluster_blocks)
{
    count_cluster_blocks(skinny_dots<16, true>, kThreads, kClusterSmem, kMaxCluster, cluster_blocks);
}

}  // namespace kernels
}  // namespace tgemm
