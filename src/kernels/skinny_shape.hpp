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

// skinny_rows: steps of X each lane keeps in flight, twice over (the step
// group being multiplied and the next one loading), as many as the 128
// registers of two blocks per SM leave beside the 4 x S sums.
TGEMM_HOST_DEVICE constexpr int rows_unroll(int S)
{
    return S >= 16 ? 4 : 8;
}

// skinny_dots: the steps of a warp's K loop whose loads are in flight
// together (the loop's unrolling). At S = 16 with unaligned X (four 4-byte
// loads per value instead of one of 16) one step at a time: two would spill.
TGEMM_HOST_DEVICE constexpr int dots_unroll(int S, bool vec)
{
    return S >= 16 ? (vec ? 2 : 1) : 4;
}

// The pieces of Y each thread loads before it stores any, when Y is staged
// in shared memory: skinny_rows' 16-byte pieces (Y contiguous along K) four
// at S >= 8, where eight would take the registers; else eight.
TGEMM_HOST_DEVICE constexpr int stage_batch(int S, bool rows_vec)
{
    return rows_vec && S >= 8 ? 4 : 8;
}

// skinny_rows_ring: the slots of each warp's ring, and the steps of K a
// slot holds (kRingDepth - 1 slots in flight while the warp multiplies one).
constexpr int kRingDepth = 5;
constexpr int kRingSteps = 4;

// The most K staged at once: S rows of (chunk + 4) floats fit in kSmemBytes.
TGEMM_HOST_DEVICE constexpr int chunk_cap_of(int S, int step)
{
    return static_cast<int>((kSmemBytes / sizeof(float) / S - 4) / step) * step;
}
template <int S>
TGEMM_HOST_DEVICE constexpr int chunk_cap(int step)
{
    return chunk_cap_of(S, step);
}

// Which skinny_rows kernel runs a product of X contiguous along r, a
// block's K being `span`: skinny_rows_ring where X is aligned, Y moves in
// 16-byte pieces (along j, y_vec implies s % 4 == 0, so S >= 4) and the
// span is longer than one staged piece of Y, which would make skinny_rows
// stage again behind a barrier. Otherwise skinny_rows, which is as fast or
// faster.
TGEMM_HOST_DEVICE constexpr bool rows_ring_runs(bool vec, bool y_vec, int64_t span, int S)
{
    return vec && y_vec && span > chunk_cap_of(S, kRowsStep);
}

// skinny_gemv: r per warp (one per lane), and the steps of K a lane keeps in
// flight (one of y per lane).
constexpr int kGemvRows = 32;
constexpr int kGemvSteps = 32;
// The most groups of kGemvSteps a warp of a skinny_gemv plan walks
// (dispatch/streaming.cpp, plan_gemv).
constexpr int kGemvMaxTrips = 4;

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
TGEMM_HOST_DEVICE constexpr int dots_chunk_cap_of(int S)
{
    return static_cast<int>(kSmemBytes / (4 * sizeof(float)) / dots_pitch(S) / 32) * 128;
}
template <int S>
TGEMM_HOST_DEVICE constexpr int dots_chunk_cap()
{
    return dots_chunk_cap_of(S);
}

}  // namespace skinny
}  // namespace kernels
}  // namespace tgemm
