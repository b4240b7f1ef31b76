// skinny_rows_ring: skinny_rows' products (X contiguous along r) where a
// block's K is longer than one staged piece of Y, and X is aligned (p.vec)
// and Y moves in 16-byte pieces (p.y_vec): each warp streams its own X and
// Y through a ring of cp.async copies in shared memory, with no barrier
// until the end, which is skinny_rows' (rows_finish: deterministic, split-K
// and cluster form as there). Edges: steps past the warp's run, j past p.s
// and r past p.r come in as zeros (cp.async's zero fill); no element
// outside the matrices is read. beta == 0 never reads C.
#include "kernels/skinny_common.cuh"

namespace tgemm {
namespace kernels {
namespace {
using namespace skinny;

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
// of X requested (a pure read of a large X reaches the memory's rate only with
// about that much in flight per SM), without the registers that loads into
// registers would hold.
static_assert(kRingSteps == 4, "a group is 4 steps: one 16-byte piece of Y along K");
constexpr int kRingXFloats = kRingSteps * 32 * 4;  // one group's X for a warp

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

// Which skinny_rows kernel runs (rows_ring_runs).
template <int S>
bool rows_ring(const SkinnyParams &p, const SplitK &sk)
{
    return rows_ring_runs(p.vec, p.y_vec, sk.splits > 1 ? sk.k_chunk : p.k, S);
}

}  // namespace

cudaError_t skinny::prepare_rows_ring(int max_bytes)
{
    return each_bucket([max_bytes](auto s) {
        constexpr int S = decltype(s)::value;
        if constexpr (S >= 4)
            return allow_smem(max_bytes, {skinny_rows_ring<S, true>, skinny_rows_ring<S, false>});
        return allow_smem(max_bytes, {skinny_rows_ring<S, true>});
    });
}

bool skinny::rows_ring_takes(const SkinnyParams &p, const SplitK &sk)
{
    return with_bucket(p.s, [&](auto s) {
        return rows_ring<decltype(s)::value>(p, sk) ? cudaSuccess : cudaErrorInvalidValue;
    }) == cudaSuccess;
}

cudaError_t skinny::launch_rows_ring(const SkinnyParams &p, const SplitK &sk, cudaStream_t st)
{
    return with_bucket(p.s, [&](auto s) {
        constexpr int S = decltype(s)::value;
        void (*kernel)(SkinnyParams, SplitK) = skinny_rows_ring<S, true>;
        if constexpr (S >= 4)
            if (p.y_k != 1)
                kernel = skinny_rows_ring<S, false>;
        return launch_k(kernel, rows_grid(p, sk), ring_smem_bytes<S>(sk.cluster), st, p, sk);
    });
}

}  // namespace kernels
}  // namespace tgemm
