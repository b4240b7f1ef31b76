// Builds a KernelFamily from a TileShape. Include from exactly one .cu per
// tile shape, so that shapes compile in parallel.
#pragma once

#include <type_traits>

#include "cluster_launch.hpp"
#include "family.hpp"
#include "sgemm_tiled.cuh"

namespace tgemm {
namespace kernels {

template <class T, bool kTA, bool kTB, bool kAligned>
cudaError_t launch_tiled(const GemmParams &p, const SplitK &sk, cudaStream_t s)
{
    const int64_t tiles = ((p.m + T::BM - 1) / T::BM) * ((p.n + T::BN - 1) / T::BN);
    const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(sk.splits));
    if (!sk.cluster) {
        sgemm_tiled<T, kTA, kTB, kAligned><<<grid, T::kThreads, T::kSmemBytes, s>>>(p, sk);
        return cudaGetLastError();
    }
    if constexpr (!kAligned || !T::kClusterForm) {
        return cudaErrorInvalidValue;  // never planned: prepare_tiled reports no cluster capacity
    } else {
        cudaLaunchAttribute attr;
        const cudaLaunchConfig_t cfg =
            cluster_launch_config(grid, T::kThreads, T::kClusterSmemBytes, s, sk.splits, &attr);
        return cudaLaunchKernelEx(&cfg, sgemm_tiled<T, kTA, kTB, true, true>, p, sk);
    }
}

// Stream-K: the shared-out tiles first, so that the blocks of the plain
// launch after it (whole tiles, in waves of full SMs) end the product.
template <class T>
constexpr bool kHasStreamK = T::kMinBlocks == 1;

template <class T, bool kTA, bool kTB, bool kAligned>
cudaError_t launch_streamk(const GemmParams &p, const StreamK &sk, cudaStream_t s)
{
    if constexpr (!kHasStreamK<T>) {
        return cudaErrorInvalidValue;  // never planned (KernelFamily::has_streamk)
    } else {
        sgemm_streamk<T, kTA, kTB, kAligned><<<sk.ctas, T::kThreads, kStreamKSmemBytes<T>, s>>>(p, sk);
        const cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess || sk.dp_tiles == 0)
            return e;
        sgemm_tiled<T, kTA, kTB, kAligned><<<static_cast<unsigned>(sk.dp_tiles), T::kThreads, T::kSmemBytes, s>>>(
            p, SplitK{});
        return cudaGetLastError();
    }
}

// Lets `kernel` launch with `bytes` of dynamic shared memory.
template <class Kernel>
cudaError_t allow_smem(Kernel kernel, size_t bytes)
{
    if (bytes <= 48 * 1024)
        return cudaSuccess;
    return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
}

// f(ta, tb, aligned) for each of a family's 8 kernels (std::bool_constant
// arguments); the first failure, or cudaSuccess.
template <class F>
cudaError_t each_variant(F &&f)
{
    using N = std::false_type;
    using Y = std::true_type;
    const cudaError_t e[] = {f(N{}, N{}, N{}), f(N{}, N{}, Y{}), f(N{}, Y{}, N{}), f(N{}, Y{}, Y{}),
                             f(Y{}, N{}, N{}), f(Y{}, N{}, Y{}), f(Y{}, Y{}, N{}), f(Y{}, Y{}, Y{})};
    for (cudaError_t x : e)
        if (x != cudaSuccess)
            return x;
    return cudaSuccess;
}

// Per device: the shared memory the launches need, and the blocks that run
// at once in clusters of 2 to kTiledMaxCluster (all 0 where the code in use
// lacks the cluster form; its kernels then ask for nothing).
template <class T>
cudaError_t prepare_tiled(int cc_major, int *cluster_blocks)
{
    const cudaError_t e = each_variant([](auto ta, auto tb, auto al) {
        constexpr bool kTA = decltype(ta)::value, kTB = decltype(tb)::value, kAl = decltype(al)::value;
        const cudaError_t x = allow_smem(sgemm_tiled<T, kTA, kTB, kAl>, T::kSmemBytes);
        if constexpr (kHasStreamK<T>)
            return x != cudaSuccess ? x : allow_smem(sgemm_streamk<T, kTA, kTB, kAl>, kStreamKSmemBytes<T>);
        return x;
    });
    if (e != cudaSuccess)
        return e;
    for (int n = 0; n <= kTiledMaxCluster; ++n)
        cluster_blocks[n] = 0;
    if constexpr (T::kClusterForm) {
        if (!has_cluster_code(sgemm_tiled<T, false, false, true, true>, cc_major))
            return cudaSuccess;
        const size_t cbytes = T::kClusterSmemBytes;
        const cudaError_t c[] = {
            allow_smem(sgemm_tiled<T, false, false, true, true>, cbytes),
            allow_smem(sgemm_tiled<T, false, true, true, true>, cbytes),
            allow_smem(sgemm_tiled<T, true, false, true, true>, cbytes),
            allow_smem(sgemm_tiled<T, true, true, true, true>, cbytes),
        };
        for (cudaError_t x : c)
            if (x != cudaSuccess)
                return x;
        count_cluster_blocks(sgemm_tiled<T, false, false, true, true>, T::kThreads, cbytes, kTiledMaxCluster,
                             cluster_blocks);
    }
    return cudaSuccess;
}

template <class T>
constexpr KernelFamily make_tiled_family(const char *name)
{
    return KernelFamily{
        name, T::BM, T::BN, T::BK, T::kThreads, T::kSmemBytes,
        {
            launch_tiled<T, false, false, false>, launch_tiled<T, false, false, true>,
            launch_tiled<T, false, true, false>,  launch_tiled<T, false, true, true>,
            launch_tiled<T, true, false, false>,  launch_tiled<T, true, false, true>,
            launch_tiled<T, true, true, false>,   launch_tiled<T, true, true, true>,
        },
        kHasStreamK<T>,
        {
            launch_streamk<T, false, false, false>, launch_streamk<T, false, false, true>,
            launch_streamk<T, false, true, false>,  launch_streamk<T, false, true, true>,
            launch_streamk<T, true, false, false>,  launch_streamk<T, true, false, true>,
            launch_streamk<T, true, true, false>,   launch_streamk<T, true, true, true>,
        },
        prepare_tiled<T>,
    };
}

}  // namespace kernels
}  // namespace tgemm
