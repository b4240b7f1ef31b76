// The streaming kernels' shape (skinny_*.cu): the constants that both the
// kernels and their planner (dispatch/skinny_split.cpp) need. Plain C++, so
// that the planner compiles without CUDA.
#pragma once

#include <cstddef>

#include "kernels/gemm_params.hpp"

namespace tgemm {
namespace kernels {
namespace skinny {

constexpr int kThreads = 256;             // both kernels: 8 warps
constexpr int kWarps = kThreads / 32;
constexpr int kRowsPerBlock = 32 * 4;     // skinny_rows: 4 r per lane, all warps share them
// skinny_dots: r per warp group. Each 16-byte Y read from shared memory
// serves that many r: S / dots_rw(S) bytes of shared memory per byte of X,
// at most 4, so at the memory floor's rate (~13 B of X per clock per SM)
// shared memory (128 B/clock) stays below half busy.
TGEMM_HOST_DEVICE constexpr int dots_rw(int S)
{
    return S >= 16 ? 4 : 2;
}
constexpr int kDotsStep = 128;            // skinny_dots: K chunks are multiples of this
constexpr int kRowsStep = 64;             // skinny_rows: K chunks are multiples of this
constexpr size_t kSmemBytes = 96 * 1024;  // staging shared memory per block, at most
constexpr size_t kPartBytes = 16 * 1024;  // cluster form: the block's raw sums (at most 256 r x 16 j)
constexpr int kMaxCluster = 8;            // the portable cluster size limit (family.hpp: kSkinnyMaxCluster)
// The most short-side values (s) a kernel is instantiated for, of those
// that cover s: 1, 2, 4, 8 or 16.
inline int short_bucket(int s)
{
    return s <= 1 ? 1 : s <= 2 ? 2 : s <= 4 ? 4 : s <= 8 ? 8 : 16;
}

// The most K staged at once: S rows of (chunk + 4) floats fit in kSmemBytes.
template <int S>
TGEMM_HOST_DEVICE constexpr int chunk_cap(int step)
{
    return static_cast<int>((kSmemBytes / sizeof(float) / S - 4) / step) * step;
}

// skinny_dots' Y layout: 16-byte cells, cell (kk / 4, j) holding Y(j, kk..kk+3)
// at cell index (kk / 4) * dots_pitch(S) + j. The pitch is odd, so the eight
// lanes of a 16-byte shared load, at eight consecutive kk / 4, hit eight
// different bank groups; and j's cells lie at fixed offsets from one
// address, so the compiler needs no register per j.
TGEMM_HOST_DEVICE constexpr int dots_pitch(int S)
{
    return S % 2 == 0 ? S + 1 : S;
}

// The most K skinny_dots stages at once.
template <int S>
TGEMM_HOST_DEVICE constexpr int dots_chunk_cap()
{
    return static_cast<int>(kSmemBytes / (4 * sizeof(float)) / dots_pitch(S) / 32) * 128;
}

}  // namespace skinny
}  // namespace kernels
}  // namespace tgemm
