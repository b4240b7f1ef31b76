// The streaming kernel fed by the tensor copy engine (TMA, sm_90): skinny
// products whose long operand X is contiguous along r (x_r == 1) and whose
// short operand Y is contiguous along k (y_k == 1), e.g. C (m x n, n <= 16)
// = A B with A and B not transposed. Same restatement as skinny.cu:
// C(r, j) = alpha * sum_k X(r, k) Y(j, k) + beta * C(r, j).
//
// A block owns 32 values of r and walks the whole of K: no split of K, so
// no partial sums leave the block. One producer thread copies each stage,
// X's 32 r x 128 k box and Y's 128 k x S box, into a ring of kStages stages
// in shared memory; the copies complete on the stage's "full" mbarrier. The
// 8 consumer warps each own 16 k of every stage; a lane owns 4 r (one
// 16-byte read of X per k) and one 4-k group, and keeps 4 x S sums. When a
// warp has used a stage it arrives on the stage's "empty" mbarrier, which
// the producer waits on before it copies the stage again. At the end the
// 4 lanes of one r group add their sums (fixed butterfly), then the 8 warps'
// sums are added in warp order through shared memory: deterministic.
//
// Rows past r and K past k are read as zeros by the copy engine (the boxes
// hang over the matrix's edge), so no step is partial in the kernel.
//
// H100 (docs/performance.md): 4096 x 16 x 4096 in 29.4 us, 1.25x the
// memory floor, where skinny_rows (TGEMM_TMA=0) takes 38.0 us. Why 32 r
// and no split: the experiment bench/experiments/tma_skinny.cu with 128 r
// per block and K split 3 in clusters took 33.4 us, 64 r split 2 33.7 us.
#include "family.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <mutex>

namespace tgemm {
namespace kernels {
namespace {

constexpr int kConsumers = 8;
constexpr int kThreads = 32 * (kConsumers + 1);  // + the producer warp
constexpr int kRows = 32;                        // r per block
constexpr int kStepK = 128;                      // k per stage: 8 warps x 4 lanes x 4 k
constexpr int kStages = 8;
constexpr int kPartPitch = kRows + 4;            // the warps' sums: [warp][j][r]

template <int S>
struct Layout {
    static constexpr int x_bytes = kRows * kStepK * 4;  // X box: k rows of 32 r
    static constexpr int y_bytes = S * kStepK * 4;      // Y box: S rows of 128 k
    static constexpr int stage_bytes = x_bytes + y_bytes;
    static constexpr int smem_bytes = kStages * stage_bytes + 128;  // + room to align the ring to 128 bytes
    static_assert(kConsumers * S * kPartPitch * 4 <= kStages * stage_bytes, "the sums fit in the ring");
};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ uint32_t smem_addr(const void *p)
{
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void bar_init(uint64_t *b, int count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(b)), "r"(count));
}

// The producer's arrival, announcing the bytes the copies will complete.
__device__ __forceinline__ void bar_expect(uint64_t *b, int bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(b)), "r"(bytes) : "memory");
}

__device__ __forceinline__ void bar_arrive(uint64_t *b)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(b)) : "memory");
}

__device__ __forceinline__ void bar_wait(uint64_t *b, int parity)
{
    asm volatile(
        "{\n .reg .pred done;\n"
        "WAIT_%=: mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        " @!done bra WAIT_%=;\n}" ::"r"(smem_addr(b)),
        "r"(parity)
        : "memory");
}

// The box at element coordinates {c0 (contiguous dimension), c1}.
__device__ __forceinline__ void copy_box(void *dst, const CUtensorMap *map, int c0, int c1, uint64_t *bar)
{
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
            smem_addr(dst)),
        "l"(map), "r"(c0), "r"(c1), "r"(smem_addr(bar))
        : "memory");
}

__device__ __forceinline__ float part_of(const float4 &v, int i)
{
    return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}
#endif

template <int S>
__global__ void __launch_bounds__(kThreads, 1)
    skinny_tma(const __grid_constant__ CUtensorMap x_map, const __grid_constant__ CUtensorMap y_map,
               const SkinnyParams p)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    using L = Layout<S>;
    extern __shared__ unsigned char smem_raw[];
    __shared__ alignas(8) uint64_t full[kStages], empty[kStages];
    unsigned char *ring = smem_raw + ((128u - (smem_addr(smem_raw) & 127u)) & 127u);
    const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
    const int r0 = static_cast<int>(blockIdx.x) * kRows;
    const int steps = static_cast<int>((p.k + kStepK - 1) / kStepK);
    if (threadIdx.x == 0) {
        for (int s = 0; s < kStages; ++s) {
            bar_init(&full[s], 1);
            bar_init(&empty[s], kConsumers);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (warp == kConsumers) {  // the producer
        if (lane == 0) {
            for (int t = 0; t < steps; ++t) {
                const int s = t % kStages;
                if (t >= kStages)
                    bar_wait(&empty[s], (t / kStages - 1) & 1);
                unsigned char *stage = ring + s * L::stage_bytes;
                bar_expect(&full[s], L::stage_bytes);
                copy_box(stage, &x_map, r0, t * kStepK, &full[s]);
                copy_box(stage + L::x_bytes, &y_map, t * kStepK, 0, &full[s]);
            }
        }
        return;
    }
    // A lane's 4 r (rl) and 4-k group of each stage (g).
    const int rl = lane % 8, g = warp * 4 + lane / 8;
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
        float4 x[4], y[S];
#pragma unroll
        for (int kk = 0; kk < 4; ++kk)
            x[kk] = *reinterpret_cast<const float4 *>(stage + ((g * 4 + kk) * kRows + rl * 4) * 4);
#pragma unroll
        for (int j = 0; j < S; ++j)
            y[j] = *reinterpret_cast<const float4 *>(stage + L::x_bytes + (j * kStepK + g * 4) * 4);
#pragma unroll
        for (int kk = 0; kk < 4; ++kk)
#pragma unroll
            for (int j = 0; j < S; ++j)
#pragma unroll
                for (int q = 0; q < 4; ++q)
                    acc[q][j] = fmaf(part_of(x[kk], q), part_of(y[j], kk), acc[q][j]);
        __syncwarp();
        if (lane == 0)
            bar_arrive(&empty[s]);
    }
    // The 4 lanes of one r group (lanes rl, rl + 8, rl + 16, rl + 24).
#pragma unroll
    for (int o = 8; o < 32; o *= 2)
#pragma unroll
        for (int q = 0; q < 4; ++q)
#pragma unroll
            for (int j = 0; j < S; ++j)
                acc[q][j] += __shfl_xor_sync(0xffffffffu, acc[q][j], o);
    // Every stage has been used (each consumer waited on every copy), so the
    // ring holds the warps' sums now; bar 1 counts the consumers only.
    float *part = reinterpret_cast<float *>(ring);
    asm volatile("bar.sync 1, %0;" ::"n"(kConsumers * 32) : "memory");
    if (lane < 8) {
#pragma unroll
        for (int q = 0; q < 4; ++q)
#pragma unroll
            for (int j = 0; j < S; ++j)
                part[(warp * S + j) * kPartPitch + rl * 4 + q] = acc[q][j];
    }
    asm volatile("bar.sync 1, %0;" ::"n"(kConsumers * 32) : "memory");
    for (int e = static_cast<int>(threadIdx.x); e < kRows * S; e += kConsumers * 32) {
        const int j = e / kRows, r = e % kRows;
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

// cuTensorMapEncodeTiled through the runtime (the library does not link
// libcuda); null where the driver lacks it.
PFN_cuTensorMapEncodeTiled_v12000 encoder()
{
    static PFN_cuTensorMapEncodeTiled_v12000 fn = nullptr;
    static std::once_flag once;
    std::call_once(once, [] {
        void *f = nullptr;
        cudaDriverEntryPointQueryResult q;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q) ==
                cudaSuccess &&
            q == cudaDriverEntryPointSuccess)
            fn = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
        else
            (void)cudaGetLastError();
    });
    return fn;
}

// A map over the column-major rows x cols matrix at ptr (leading dimension
// ld), in boxes of box0 x box1 elements; elements outside it read as zeros.
bool encode_map(CUtensorMap *map, const float *ptr, int64_t rows, int64_t cols, int64_t ld, int box0, int box1)
{
    const PFN_cuTensorMapEncodeTiled_v12000 encode = encoder();
    if (encode == nullptr)
        return false;
    cuuint64_t dims[2] = {static_cast<cuuint64_t>(rows), static_cast<cuuint64_t>(cols)};
    cuuint64_t strides[1] = {static_cast<cuuint64_t>(ld) * sizeof(float)};
    cuuint32_t box[2] = {static_cast<cuuint32_t>(box0), static_cast<cuuint32_t>(box1)};
    cuuint32_t elem_strides[2] = {1, 1};
    return encode(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, const_cast<float *>(ptr), dims, strides, box, elem_strides,
                  CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

template <int S>
cudaError_t launch_for(const SkinnyParams &p, cudaStream_t st)
{
    CUtensorMap x_map, y_map;
    // X: r contiguous, k at stride x_k. Y: k contiguous, j at stride y_j
    // (any multiple of 4 when s == 1: that stride is never stepped).
    const int64_t y_ld = p.s > 1 ? p.y_j : (p.k + 3) / 4 * 4;
    if (!encode_map(&x_map, p.x, p.r, p.k, p.x_k, kRows, kStepK) ||
        !encode_map(&y_map, p.y, p.k, p.s, y_ld, kStepK, S))
        return cudaErrorInvalidValue;
    const dim3 grid(static_cast<unsigned>((p.r + kRows - 1) / kRows));
    skinny_tma<S><<<grid, kThreads, Layout<S>::smem_bytes, st>>>(x_map, y_map, p);
    return cudaGetLastError();
}

}  // namespace

bool prepare_skinny_tma(int cc_major)
{
    if (cc_major != 9 || encoder() == nullptr)
        return false;
    cudaFuncAttributes fa;
    if (cudaFuncGetAttributes(&fa, skinny_tma<16>) != cudaSuccess || fa.ptxVersion < 90) {
        (void)cudaGetLastError();  // no sm_90 code here: the other streaming kernels serve
        return false;
    }
    if (cudaFuncSetAttribute(skinny_tma<8>, cudaFuncAttributeMaxDynamicSharedMemorySize, Layout<8>::smem_bytes) !=
            cudaSuccess ||
        cudaFuncSetAttribute(skinny_tma<16>, cudaFuncAttributeMaxDynamicSharedMemorySize, Layout<16>::smem_bytes) !=
            cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    return true;
}

bool skinny_tma_fits(const SkinnyParams &p, int sm_count)
{
    const auto aligned = [](const float *q) { return (reinterpret_cast<uintptr_t>(q) & 15u) == 0; };
    if (p.x_r != 1 || p.y_k != 1 || p.s < kSkinnyTmaMinS || p.s > 16)
        return false;
    // The copy engine: 16-byte aligned bases and strides, 32-bit coordinates.
    if (!aligned(p.x) || !aligned(p.y) || p.x_k % 4 != 0 || (p.s > 1 && p.y_j % 4 != 0))
        return false;
    if (p.r > INT32_MAX - kRows || p.k > INT32_MAX - kStepK)
        return false;
    // Whole K per block: worth it where K is long and the blocks fill the
    // GPU's SMs in waves that are mostly full (one block per SM).
    const int64_t blocks = (p.r + kRows - 1) / kRows;
    const int64_t waves = (blocks + sm_count - 1) / sm_count;
    return p.k >= kSkinnyTmaMinK && 10 * blocks >= 9 * sm_count && 5 * blocks >= 4 * waves * sm_count;
}

int64_t skinny_tma_rows_per_block()
{
    return kRows;
}

cudaError_t launch_skinny_tma(const SkinnyParams &p, cudaStream_t st)
{
    return p.s <= 8 ? launch_for<8>(p, st) : launch_for<16>(p, st);
}

}  // namespace kernels
}  // namespace tgemm
