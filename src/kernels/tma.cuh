// The PTX of the tensor copy engine (TMA, sm_90) and of the mbarriers that
// signal its copies: what skinny_tma.cu (and the TMA experiments in
// research/) use. Device code for compute capability 9.0 and up only; each
// wrapper is one instruction, with the preconditions the PTX ISA states
// (16-byte aligned shared addresses, 128-byte for swizzled boxes).
#pragma once

#include <cuda.h>

#include <cstdint>

namespace tgemm {
namespace kernels {
namespace tma {

// Seen by the host pass (never called there) and by device passes for sm_90 and up.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
__device__ __forceinline__ uint32_t smem_addr(const void *p)
{
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void bar_init(uint64_t *b, int count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(b)), "r"(count));
}

// A ring of `stages` stages (thread 0 of the block, before a barrier of
// the block): each stage's "full" barrier completes on the producer's one
// arrival and its copies' bytes, its "empty" barrier on `consumers`
// arrivals.
__device__ __forceinline__ void ring_init(uint64_t *full, uint64_t *empty, int stages, int consumers)
{
    for (int s = 0; s < stages; ++s) {
        bar_init(&full[s], 1);
        bar_init(&empty[s], consumers);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
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

// An L2 policy for data read once: its lines are the first L2 evicts, so a
// stream passing through L2 does not push out (or force the write-back of)
// the lines other work left there.
__device__ __forceinline__ uint64_t evict_first_policy()
{
    uint64_t policy;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
    return policy;
}

// copy_box with an L2 policy for the lines it reads.
__device__ __forceinline__ void copy_box(void *dst, const CUtensorMap *map, int c0, int c1, uint64_t *bar,
                                         uint64_t policy)
{
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%2, "
        "%3}], [%4], %5;" ::"r"(smem_addr(dst)),
        "l"(map), "r"(c0), "r"(c1), "r"(smem_addr(bar)), "l"(policy)
        : "memory");
}

// The bytes at src (a multiple of 16, both addresses 16-byte aligned)
// copied as they lie, without a tensor map.
__device__ __forceinline__ void copy_bulk(void *dst, const void *src, int bytes, uint64_t *bar)
{
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(smem_addr(dst)),
        "l"(src), "r"(bytes), "r"(smem_addr(bar))
        : "memory");
}
#endif

}  // namespace tma
}  // namespace kernels
}  // namespace tgemm
