// Copies between host buffers on several threads: pageable operands go
// through pinned staging buffers, and one thread moves only ~11 GB/s
// (shared/PERF.md) where the link takes 55 GB/s in and 37 GB/s out.
#pragma once

#include <cstdint>

namespace tgemm {

// Threads that share one copy, the calling thread included. At ~11 GB/s
// each, five keep up with the link in one direction (55 GB/s) and nine
// with both at once (98 GB/s); twelve leave some slack for the memory
// traffic of the DMA engines themselves.
constexpr int kCopyThreads = 12;

// Copies a rows x cols column-major block from src (leading dimension sld)
// to dst (leading dimension dld). Blocks of 1 MiB and more are split over
// up to kCopyThreads threads of a pool shared by all callers, which the
// calling thread joins, so concurrent callers never wait on each other's
// work to make progress. Returns when the copy is complete.
void host_copy(float *dst, int64_t dld, const float *src, int64_t sld, int64_t rows, int64_t cols);

}  // namespace tgemm
