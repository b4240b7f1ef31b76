// The operand copies of the dispatcher's packed plans (TGEMM_PACK,
// src/dispatch/pack.cpp), into the call's workspace:
//   - pack_transposed: where A is stored transposed (op(A) = A^T), op(A)
//     copied into an m x k matrix stored by columns, so that the product
//     runs on the tiled kernels' untransposed form, their fastest;
//   - pack_copy: an operand as it is stored, with a leading dimension that
//     starts every column on 16 bytes, so that the product runs on the
//     kernels that move it in vectors.
//
// Contracts: pack_transposed: w(i, l) = a[l + i * lda] for i < m, l < k,
// stored at w[i + l * ldw] (ldw >= m). pack_copy: w[i + j * ldw] =
// a[i + j * lda] for i < rows, j < cols (ldw >= rows). Rows past m (rows)
// of w are not written. Exact copies: the product's sums are those of the
// kernels on the operand where it is.
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

// Block (x, y) copies rows 128 x .. 128 x + 127 of columns 8 y, 8 (y +
// gridDim.y), ...: each warp a column, each lane 4 rows 32 apart, so that
// a warp's loads and stores are each one run of 128 bytes at most.
constexpr int kCopyRows = 128, kCopyCols = 8;

__global__ void __launch_bounds__(32 * kCopyCols) pack_copy(const float *__restrict__ a, int64_t lda, int64_t rows,
                                                           int64_t cols, float *__restrict__ w, int64_t ldw)
{
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int64_t i0 = static_cast<int64_t>(blockIdx.x) * kCopyRows + lane;
    for (int64_t j = static_cast<int64_t>(blockIdx.y) * kCopyCols + warp; j < cols;
         j += static_cast<int64_t>(gridDim.y) * kCopyCols) {
        float v[kCopyRows / 32];
#pragma unroll
        for (int r = 0; r < kCopyRows / 32; ++r)
            if (i0 + 32 * r < rows)
                v[r] = a[i0 + 32 * r + j * lda];
#pragma unroll
        for (int r = 0; r < kCopyRows / 32; ++r)
            if (i0 + 32 * r < rows)
                w[i0 + 32 * r + j * ldw] = v[r];
    }
}

}  // namespace

cudaError_t launch_pack_copy(const float *a, int64_t lda, int64_t rows, int64_t cols, float *w, int64_t ldw,
                             cudaStream_t s)
{
    constexpr int64_t kMaxGridY = 65535;
    const int64_t bx = (rows + kCopyRows - 1) / kCopyRows, by = (cols + kCopyCols - 1) / kCopyCols;
    const dim3 grid(static_cast<unsigned>(bx), static_cast<unsigned>(by < kMaxGridY ? by : kMaxGridY));
    pack_copy<<<grid, 32 * kCopyCols, 0, s>>>(a, lda, rows, cols, w, ldw);
    return cudaGetLastError();
}

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
