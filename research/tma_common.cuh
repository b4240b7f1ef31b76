// What the two TMA experiments share: the mbarrier ring's PTX and the tensor
// copy (TMA) of a 2-D box (the library's), and 2-D tensor maps over column-major matrices
// (cuTensorMapEncodeTiled, found through the runtime: no -lcuda).
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>

#include "kernels/tma.cuh"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__); exit(1); } } while (0)

// smem_addr, ring_init, bar_expect, bar_arrive, bar_wait and copy_box: the
// library's own (src/kernels/tma.cuh).
using namespace tgemm::kernels::tma;

// A map over a column-major rows x cols matrix (leading dimension ld, a
// multiple of 4), box {box0 along rows, box1 along cols}; out-of-bounds
// elements read as zeros. swz: the 128-byte swizzle (box0 * 4 <= 128).
static CUtensorMap make_map(const float *ptr, int rows, int cols, int64_t ld, int box0, int box1, bool swz)
{
    static PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;
    if (!encode) {
        void *fn = nullptr;
        cudaDriverEntryPointQueryResult q;
        CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q));
        encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
    }
    CUtensorMap map;
    cuuint64_t dims[2] = {static_cast<cuuint64_t>(rows), static_cast<cuuint64_t>(cols)};
    cuuint64_t strides[1] = {static_cast<cuuint64_t>(ld * 4)};
    cuuint32_t box[2] = {static_cast<cuuint32_t>(box0), static_cast<cuuint32_t>(box1)};
    cuuint32_t es[2] = {1, 1};
    CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, const_cast<float *>(ptr), dims, strides, box, es,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, swz ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        printf("cuTensorMapEncodeTiled failed: %d\n", static_cast<int>(r));
        exit(1);
    }
    return map;
}

// 16-byte piece `chunk` (0..7) of row `row` of a tile copied with the
// 128-byte swizzle (rows of 128 bytes, the tile 1024-byte aligned): the
// copy engine stores it at piece chunk ^ (row % 8).
__device__ __forceinline__ float4 ld_swz128(const unsigned char *tile, int row, int chunk)
{
    return *reinterpret_cast<const float4 *>(tile + row * 128 + ((chunk ^ (row & 7)) * 16));
}
