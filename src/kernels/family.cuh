// Builds a KernelFamily from a TileShape. Include from exactly one .cu per
// tile shape, so that shapes compile in parallel.
#pragma once

#include "family.hpp"
#include "sgemm_tiled.cuh"

namespace tgemm {
namespace kernels {

template <class T, bool kTA, bool kTB, bool kAligned>
cudaError_t launch_tiled(const GemmParams &p, const SplitK &sk, cudaStream_t s)
{
    const int64_t tiles = ((p.m + T::BM - 1) / T::BM) * ((p.n + T::BN - 1) / T::BN);
    const dim3 grid(static_cast<unsigned>(tiles), static_cast<unsigned>(sk.splits));
    sgemm_tiled<T, kTA, kTB, kAligned><<<grid, T::kThreads, T::kSmemBytes, s>>>(p, sk);
    return cudaGetLastError();
}

template <class T, bool kTA, bool kTB, bool kAligned>
cudaError_t allow_smem()
{
    return cudaFuncSetAttribute(sgemm_tiled<T, kTA, kTB, kAligned>,
                                cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(T::kSmemBytes));
}

template <class T>
cudaError_t prepare_tiled()
{
    if (T::kSmemBytes <= 48 * 1024)
        return cudaSuccess;
    const cudaError_t e[] = {
        allow_smem<T, false, false, false>(), allow_smem<T, false, false, true>(),
        allow_smem<T, false, true, false>(),  allow_smem<T, false, true, true>(),
        allow_smem<T, true, false, false>(),  allow_smem<T, true, false, true>(),
        allow_smem<T, true, true, false>(),   allow_smem<T, true, true, true>(),
    };
    for (cudaError_t x : e)
        if (x != cudaSuccess)
            return x;
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
        prepare_tiled<T>,
    };
}

}  // namespace kernels
}  // namespace tgemm
