// The streaming kernel fed by the tensor copy engine (TMA, sm_90) for
// skinny products, in the restatement of SkinnyParams (family.hpp):
// C(r, j) = alpha * sum_k X(r, k) Y(j, k) + beta * C(r, j), j < s <= 16.
// Both operands either way round: X contiguous along r (XK false: C = A B
// with n <= 16, A not transposed) or along k (XK: C = A B with m <= 16, B
// not transposed), Y along k (YK) or along j.
//
// A block owns 32 values of r and walks the whole of K: no split of K, so
// no partial sums leave the block. One producer thread copies each stage,
// X's 32 r x 128 k and Y's S x 128 k, into a ring of kStages stages in
// shared memory; the copies complete on the stage's "full" mbarrier. The
// 8 consumer warps each own 16 k of every stage; a lane owns one 4-k group
// of them and 4 r, and keeps 4 x S sums. It reads X 16 bytes at a time,
// along r (4 r, one k) or along k (one r, 4 k: X's K-major rows are copied
// with the 128-byte swizzle, so the 8 rows a read spans hit all banks),
// and Y the same way. When a thread has read a stage it arrives on the
// stage's "empty" mbarrier, which the producer waits on before it copies
// the stage again. At the end the 4 lanes that share r add their sums
// (two halving exchanges, in a fixed order), then the 8 warps' sums are
// added in warp order through shared memory: deterministic.
//
// Rows past r and K past k are read as zeros by the copy engine (the boxes
// hang over the matrix's edge), so no step is partial in the kernel.
//
// Contract: launch_skinny_tma runs products skinny_tma_fits accepts (sm_90,
// operands laid out and aligned for the copy engine); it reads X and Y,
// reads C only where beta != 0, and writes C's r x s values, nothing else.
//
// The ring has kStages stages: fewer let the blocks end closer together,
// but too few leave the copy engine idle. 32 r per block and no split of K
// were faster than larger blocks with K split in clusters
// (docs/notes/kernels.md).
#include "family.hpp"
#include "tma.cuh"
#include "tensor_map.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>


namespace tgemm {
namespace kernels {
namespace {

using namespace tma;

constexpr int kConsumers = 8;
constexpr int kThreads = 32 * (kConsumers + 1);  // + the producer warp
constexpr int kRows = kSkinnyTmaRows;            // r per block
constexpr int kStepK = 128;                      // k per stage: 8 warps x 4 lanes x 4 k
constexpr int kStages = 4;
constexpr int kPartPitch = kRows + 4;            // the warps' sums: [warp][j][r]
constexpr int kSwizzleBox = 32;                  // K-major X: boxes of 32 k (128 bytes) x 32 r

template <int S>
struct Layout {
    static constexpr int x_bytes = kRows * kStepK * 4;  // X box: k rows of 32 r
    static constexpr int y_bytes = S * kStepK * 4;      // Y box: S rows of 128 k
    static constexpr int stage_bytes = x_bytes + y_bytes;
    static constexpr int smem_bytes = kStages * stage_bytes + 1024;  // + room to align the ring (swizzle: 1024)
    static_assert(x_bytes % 1024 == 0 && y_bytes % 1024 == 0, "stages keep the swizzle's 1024-byte alignment");
    static_assert(kConsumers * S * kPartPitch * 4 <= kStages * stage_bytes, "the sums fit in the ring");
};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ float part_of(const float4 &v, int i)
{
    return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}
#endif

template <int S, bool XK, bool YK>
__global__ void __launch_bounds__(kThreads, 1)
    skinny_tma(const __grid_constant__ CUtensorMap x_map, const __grid_constant__ CUtensorMap y_map,
               const SkinnyParams p)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    using L = Layout<S>;
    extern __shared__ unsigned char smem_raw[];
    __shared__ alignas(8) uint64_t full[kStages], empty[kStages];
    unsigned char *ring = smem_raw + ((1024u - (smem_addr(smem_raw) & 1023u)) & 1023u);
    const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
    const int r0 = static_cast<int>(blockIdx.x) * kRows;
    const int steps = static_cast<int>((p.k + kStepK - 1) / kStepK);
    if (threadIdx.x == 0) {
        ring_init(full, empty, kStages, kConsumers * 32);  // every consumer thread arrives
    }
    __syncthreads();
    if (warp == kConsumers) {  // the producer
        // Y along j with rows of exactly S: a stage's Y lies in one piece,
        // copied in one bulk copy, cheaper than a box of 128 rows of S * 4
        // bytes through the tensor map. The last, partial stage still goes
        // through the tensor map, for its zeros.
        const bool y_whole = !YK && p.s == S && p.y_k == S;
        // X is read once: its lines go first when L2 needs room, so the
        // stream neither pushes out what other work keeps in L2 nor forces
        // the write-back of lines that work left dirty.
        if (lane == 0) {
            const uint64_t x_policy = evict_first_policy();
            for (int t = 0; t < steps; ++t) {
                const int s = t % kStages;
                if (t >= kStages)
                    bar_wait(&empty[s], (t / kStages - 1) & 1);
                unsigned char *stage = ring + s * L::stage_bytes;
                bar_expect(&full[s], L::stage_bytes);
                if (XK) {
                    for (int b = 0; b < kStepK / kSwizzleBox; ++b)
                        copy_box(stage + b * kSwizzleBox * kRows * 4, &x_map, t * kStepK + b * kSwizzleBox, r0,
                                 &full[s], x_policy);
                } else {
                    copy_box(stage, &x_map, r0, t * kStepK, &full[s], x_policy);
                }
                if (YK)
                    copy_box(stage + L::x_bytes, &y_map, t * kStepK, 0, &full[s]);
                else if (y_whole && (t + 1) * kStepK <= p.k)  // the stage's Y is one piece of memory
                    copy_bulk(stage + L::x_bytes, p.y + static_cast<int64_t>(t) * kStepK * S, L::y_bytes, &full[s]);
                else
                    copy_box(stage + L::x_bytes, &y_map, 0, t * kStepK, &full[s]);
            }
        }
        return;
    }
    // A lane's 4-k group of each stage (g) and its 4 r: rl * 4 to rl * 4 + 3
    // (X along r) or rl, rl + 8, rl + 16, rl + 24 (X along k).
    const int rl = lane % 8, g = warp * 4 + lane / 8;
    const auto row_of = [rl](int q) { return XK ? rl + 8 * q : rl * 4 + q; };
    // Y along j: the 4 lane groups of a warp read K rows 4 apart (S * 16
    // bytes), on the same banks: 4 wavefronts a read. Reading each group's
    // j rotated (distinct banks, 1 wavefront) was slower: the sums must be
    // put back in place by selects after the loop.
    float acc[4][S];
#pragma unroll
    for (int q = 0; q < 4; ++q)
#pragma unroll
        for (int j = 0; j < S; ++j)
            acc[q][j] = 0.0f;
    for (int t = 0; t < steps; ++t) {
        const int s = t % kStages;
        bar_wait(&full[s], (t / kStages) & 1);
        const unsigned char *stage = ring + s * L::stage_bytes;
        // x[i]: X(4 r, one k) for k = g * 4 + i, or X(one r, 4 k) for r = row_of(i).
        // y[i]: Y(one j, 4 k) for j = i, or Y(4 j, one k) for k = g * 4 + i % 4, j = i / 4 * 4.
        float4 x[4], y[S];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            if (XK) {
                const int r = row_of(i), box = g / 8, piece = (g % 8) ^ (r % 8);
                x[i] = *reinterpret_cast<const float4 *>(stage + box * kSwizzleBox * kRows * 4 + r * 128 + piece * 16);
            } else {
                x[i] = *reinterpret_cast<const float4 *>(stage + ((g * 4 + i) * kRows + rl * 4) * 4);
            }
        }
#pragma unroll
        for (int i = 0; i < S; ++i) {
            const int off = YK ? i * kStepK + g * 4 : (g * 4 + i % 4) * S + i / 4 * 4;
            y[i] = *reinterpret_cast<const float4 *>(stage + L::x_bytes + off * 4);
        }
#pragma unroll
        for (int kk = 0; kk < 4; ++kk)
#pragma unroll
            for (int j = 0; j < S; ++j)
#pragma unroll
                for (int q = 0; q < 4; ++q) {
                    const float xv = XK ? part_of(x[q], kk) : part_of(x[kk], q);
                    const float yv = YK ? part_of(y[j], kk) : part_of(y[j / 4 * 4 + kk], j % 4);
                    acc[q][j] = fmaf(xv, yv, acc[q][j]);
                }
        // Each thread's own arrival (release) orders its reads of the stage
        // before the producer's next copy into it.
        bar_arrive(&empty[s]);
    }
    // The 4 lanes of one r group (lanes rl, rl + 8, rl + 16, rl + 24) add
    // their sums in two halving exchanges: first j's halves (lane bit 3), then
    // q's (bit 4), so a lane ends with S sums, 2 q x S / 2 j, after 3 S / 2
    // shuffles instead of 8 S. Each sum is (a + a^8) + (a^16 + a^24), as in a
    // full butterfly.
    const bool j_hi = (lane & 8) != 0, q_hi = (lane & 16) != 0;
    float half[4][S / 2];
#pragma unroll
    for (int q = 0; q < 4; ++q)
#pragma unroll
        for (int j = 0; j < S / 2; ++j) {
            const float keep = j_hi ? acc[q][j + S / 2] : acc[q][j];
            const float send = j_hi ? acc[q][j] : acc[q][j + S / 2];
            half[q][j] = keep + __shfl_xor_sync(0xffffffffu, send, 8);
        }
    float sum[2][S / 2];
#pragma unroll
    for (int q = 0; q < 2; ++q)
#pragma unroll
        for (int j = 0; j < S / 2; ++j) {
            const float keep = q_hi ? half[q + 2][j] : half[q][j];
            const float send = q_hi ? half[q][j] : half[q + 2][j];
            sum[q][j] = keep + __shfl_xor_sync(0xffffffffu, send, 16);
        }
    // Every stage has been used (each consumer waited on every copy), so the
    // ring holds the warps' sums now; bar 1 counts the consumers only.
    float *part = reinterpret_cast<float *>(ring);
    asm volatile("bar.sync 1, %0;" ::"n"(kConsumers * 32) : "memory");
#pragma unroll
    for (int q = 0; q < 2; ++q)
#pragma unroll
        for (int j = 0; j < S / 2; ++j)
            part[(warp * S + j + (j_hi ? S / 2 : 0)) * kPartPitch + row_of(q + (q_hi ? 2 : 0))] = sum[q][j];
    asm volatile("bar.sync 1, %0;" ::"n"(kConsumers * 32) : "memory");
    const bool j_fast = p.c_j == 1;  // C contiguous along j: neighbouring threads take neighbouring j
    for (int e = static_cast<int>(threadIdx.x); e < kRows * S; e += kConsumers * 32) {
        const int j = j_fast ? e % S : e / kRows, r = j_fast ? e / S : e % kRows;
        float v = part[j * kPartPitch + r];
#pragma unroll
        for (int w = 1; w < kConsumers; ++w)
            v += part[(w * S + j) * kPartPitch + r];
        if (r0 + r < p.r && j < p.s) {
            float *c = p.c + (r0 + r) * p.c_r + j * p.c_j;
            const float o = p.alpha * v;
            *c = p.beta != 0.0f ? fmaf(p.beta, *c, o) : o;
        }
    }
#endif
}

// A map over the column-major rows x cols matrix at ptr (leading dimension
// ld), in boxes of box0 x box1 elements (box0 * 4 <= 128 bytes with the
// 128-byte swizzle); elements outside it read as zeros.
bool encode_map(CUtensorMap *map, const float *ptr, int64_t rows, int64_t cols, int64_t ld, int box0, int box1,
                bool swizzle)
{
    const PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
    if (encode == nullptr)
        return false;
    cuuint64_t dims[2] = {static_cast<cuuint64_t>(rows), static_cast<cuuint64_t>(cols)};
    cuuint64_t strides[1] = {static_cast<cuuint64_t>(ld) * sizeof(float)};
    cuuint32_t box[2] = {static_cast<cuuint32_t>(box0), static_cast<cuuint32_t>(box1)};
    cuuint32_t elem_strides[2] = {1, 1};
    return encode(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, const_cast<float *>(ptr), dims, strides, box, elem_strides,
                  CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
                  CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// Y's stride between values of j, where Y is contiguous along k. With s = 1
// it is never used (its one column is all the map holds), and GEMV's vector
// may come with any, 1 included; the map takes K rounded up to 4 instead.
int64_t y_column_stride(const SkinnyParams &p)
{
    return p.s == 1 ? (p.k + 3) / 4 * 4 : p.y_j;
}

template <int S, bool XK, bool YK>
cudaError_t launch_for(const SkinnyParams &p, cudaStream_t st)
{
    CUtensorMap x_map, y_map;
    const bool x_ok = XK ? encode_map(&x_map, p.x, p.k, p.r, p.x_r, kSwizzleBox, kRows, true)
                         : encode_map(&x_map, p.x, p.r, p.k, p.x_k, kRows, kStepK, false);
    const bool y_ok = YK ? encode_map(&y_map, p.y, p.k, p.s, y_column_stride(p), kStepK, S, false)
                         : encode_map(&y_map, p.y, p.s, p.k, p.y_k, S, kStepK, false);
    if (!x_ok || !y_ok)
        return cudaErrorInvalidValue;
    const dim3 grid(static_cast<unsigned>((p.r + kRows - 1) / kRows));
    skinny_tma<S, XK, YK><<<grid, kThreads, Layout<S>::smem_bytes, st>>>(x_map, y_map, p);
    return cudaGetLastError();
}

template <int S>
cudaError_t launch_s(const SkinnyParams &p, cudaStream_t st)
{
    if (p.x_r == 1)
        return p.y_k == 1 ? launch_for<S, false, true>(p, st) : launch_for<S, false, false>(p, st);
    return p.y_k == 1 ? launch_for<S, true, true>(p, st) : launch_for<S, true, false>(p, st);
}

template <int S, bool XK, bool YK>
cudaError_t allow_smem()
{
    return cudaFuncSetAttribute(skinny_tma<S, XK, YK>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                Layout<S>::smem_bytes);
}

}  // namespace

cudaError_t prepare_skinny_tma(int cc_major, bool *available)
{
    *available = false;
    if (cc_major != 9 || tensor_map_encoder() == nullptr)
        return cudaSuccess;
    cudaFuncAttributes fa;
    if (cudaFuncGetAttributes(&fa, skinny_tma<16, false, true>) != cudaSuccess) {
        (void)cudaGetLastError();  // no code for this device: the other streaming kernels serve
        return cudaSuccess;
    }
    if (fa.ptxVersion < 90)
        return cudaSuccess;
    const cudaError_t e[] = {
        allow_smem<8, false, false>(),  allow_smem<8, false, true>(),  allow_smem<8, true, false>(),
        allow_smem<8, true, true>(),    allow_smem<16, false, false>(), allow_smem<16, false, true>(),
        allow_smem<16, true, false>(),  allow_smem<16, true, true>(),
    };
    for (cudaError_t x : e)
        if (x != cudaSuccess)
            return x;
    *available = true;
    return cudaSuccess;
}

bool skinny_tma_fits(const SkinnyParams &p, int sm_count)
{
    const auto aligned = [](const float *q) { return (reinterpret_cast<uintptr_t>(q) & 15u) == 0; };
    if (p.s < (p.y_k == 1 ? kSkinnyTmaMinSYk : kSkinnyTmaMinS) || p.s > 16)
        return false;
    // The copy engine: 16-byte aligned bases and strides, 32-bit coordinates.
    const int64_t x_ld = p.x_r == 1 ? p.x_k : p.x_r, y_ld = p.y_k == 1 ? y_column_stride(p) : p.y_k;
    if (!aligned(p.x) || !aligned(p.y) || x_ld % 4 != 0 || y_ld % 4 != 0 || x_ld >= (int64_t{1} << 38) ||
        y_ld >= (int64_t{1} << 38))
        return false;
    if (p.r > INT32_MAX - kRows || p.k > INT32_MAX - kStepK)
        return false;
    // Whole K per block: worth it where K is long and the blocks fill the
    // GPU's SMs in waves that are mostly full (one block per SM).
    const int64_t blocks = (p.r + kRows - 1) / kRows;
    const int64_t waves = (blocks + sm_count - 1) / sm_count;
    return p.k >= kSkinnyTmaMinK && 10 * blocks >= 9 * sm_count && 5 * blocks >= 4 * waves * sm_count;
}

cudaError_t launch_skinny_tma(const SkinnyParams &p, cudaStream_t st)
{
    return p.s <= 8 ? launch_s<8>(p, st) : launch_s<16>(p, st);
}

}  // namespace kernels
}  // namespace tgemm
