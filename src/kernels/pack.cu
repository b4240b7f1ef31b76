// op(A) packed by columns for the dispatcher's packed plans (TGEMM_PACK,
// src/dispatch/pack.cpp): where A is stored transposed (op(A) = A^T),
// op(A) is copied into an m x k matrix stored by columns, so that the
// product runs on the tiled kernels' untransposed form, their fastest.
//
// Contract: w(i, l) = a[l + i * lda] for i < m, l < k, stored at
// w[i + l * ldw] (ldw >= m); w's rows m .. ldw - 1 are not written. An
// exact copy: the product's sums are those of the untransposed kernel.
#include "family.hpp"

namespace tgemm {
namespace kernels {
namespace {

// A tile of 32 x 32 elements per step of a block, 8 rows of threads, each
// thread moving 4 elements, all 4 loads issued before any store: faster
// than larger tiles or fewer rows of threads.
constexpr int kPackTile = 32;
constexpr int kPackRows = 8;

// Block (x, y) moves the tiles i0 = 32 x .. of op(A)'s rows, for the tiles
// l0 = 32 y, 32 (y + gridDim.y), ... of its columns: read along l (A's
// columns are contiguous along k), written along i through shared memory,
// whose row of 33 keeps both passes free of bank conflicts.
__global__ void __launch_bounds__(kPackTile * kPackRows) pack_transposed(const float *__restrict__ a, int64_t lda,
                                                                         int64_t m, int64_t k, float *__restrict__ w,
                                                                         int64_t ldw)
{
    __shared__ float tile[kPackTile][kPackTile + 1];
    const int tx = threadIdx.x % kPackTile, ty = threadIdx.x / kPackTile;
    const int64_t i0 = static_cast<int64_t>(blockIdx.x) * kPackTile;
    for (int64_t l0 = static_cast<int64_t>(blockIdx.y) * kPackTile; l0 < k;
         l0 += static_cast<int64_t>(gridDim.y) * kPackTile) {
#pragma unroll
        for (int j = 0; j < kPackTile / kPackRows; ++j) {
            const int r = ty + j * kPackRows;
            const int64_t i = i0 + r, l = l0 + tx;
            if (i < m && l < k)
                tile[r][tx] = a[l + i * lda];
        }
        __syncthreads();
#pragma unroll
        for (int j = 0; j < kPackTile / kPackRows; ++j) {
            const int r = ty + j * kPackRows;
            const int64_t l = l0 + r, i = i0 + tx;
            if (i < m && l < k)
                w[i + l * ldw] = tile[tx][r];
        }
        __syncthreads();  // the tile is read before the next step overwrites it
    }
}

}  // namespace

cudaError_t launch_pack_transposed(const float *a, int64_t lda, int64_t m, int64_t k, float *w, int64_t ldw,
                                   cudaStream_t s)
{
    constexpr int64_t kMaxGridY = 65535;
    const int64_t bx = (m + kPackTile - 1) / kPackTile, by = (k + kPackTile - 1) / kPackTile;
    const dim3 grid(static_cast<unsigned>(bx), static_cast<unsigned>(by < kMaxGridY ? by : kMaxGridY));
    pack_transposed<<<grid, kPackTile * kPackRows, 0, s>>>(a, lda, m, k, w, ldw);
    return cudaGetLastError();
}

}  // namespace kernels
}  // namespace tgemm
