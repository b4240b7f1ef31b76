// Launch configuration shared by the kernels that can finish split-K inside
// thread-block clusters (SplitK::cluster): the tiled family and the
// streaming kernels. Host code: the launch attributes, whether the code in
// use has the cluster form, and how many blocks run at once in clusters.
#pragma once

#include <cuda_runtime_api.h>

namespace tgemm {
namespace kernels {

// A launch of grid blocks of `threads` with smem bytes of dynamic shared
// memory on st; with cluster > 1, as clusters of that many blocks along y
// (attr holds the attribute the configuration points to).
inline cudaLaunchConfig_t cluster_launch_config(dim3 grid, int threads, size_t smem, cudaStream_t st, int cluster,
                                                cudaLaunchAttribute *attr)
{
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = dim3(static_cast<unsigned>(threads));
    cfg.dynamicSmemBytes = smem;
    cfg.stream = st;
    if (cluster > 1) {
        attr->id = cudaLaunchAttributeClusterDimension;
        attr->val.clusterDim.x = 1;
        attr->val.clusterDim.y = static_cast<unsigned>(cluster);
        attr->val.clusterDim.z = 1;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
    }
    return cfg;
}

// Fills blocks[n], n = 0 to max_cluster, with the blocks of `kernel` that run
// at once in clusters of n along y, each block with smem bytes; 0 where that
// size cannot run (and for n < 2). Clusters must fit inside one GPC, so this
// can be well below the SM count times the blocks per SM.
template <class Kernel>
void count_cluster_blocks(Kernel kernel, int threads, size_t smem, int max_cluster, int *blocks)
{
    for (int n = 0; n <= max_cluster; ++n) {
        blocks[n] = 0;
        if (n < 2)
            continue;
        cudaLaunchAttribute attr;
        const cudaLaunchConfig_t cfg =
            cluster_launch_config(dim3(1, static_cast<unsigned>(n)), threads, smem, nullptr, n, &attr);
        int count = 0;
        if (cudaOccupancyMaxActiveClusters(&count, kernel, &cfg) == cudaSuccess)
            blocks[n] = count * n;
        else
            (void)cudaGetLastError();  // an unsupported size is not an error of the call
    }
}

// Whether `kernel`, as it runs on this device, was compiled with its
// cluster code: for compute_90 or later (the default build carries sm_90a
// code and compute_80 PTX, which newer GPUs JIT-compile without it).
template <class Kernel>
bool has_cluster_code(Kernel kernel, int cc_major)
{
    if (cc_major < 9)
        return false;
    cudaFuncAttributes fa;
    if (cudaFuncGetAttributes(&fa, kernel) != cudaSuccess) {
        (void)cudaGetLastError();  // no cluster form, not an error of the call
        return false;
    }
    return fa.ptxVersion >= 90;
}

}  // namespace kernels
}  // namespace tgemm
