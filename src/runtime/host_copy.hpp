// Copies between host buffers on several threads: pageable operands go
// through pinned staging buffers, and one thread copies several times more
// slowly than the link carries data in either direction.
#pragma once

#include <cstdint>
#include <vector>

namespace tgemm {

// Threads that share one copy by default, the calling thread included
// (TGEMM_HOST_COPY_THREADS overrides it): enough to keep up with the link
// in both directions at once, with some slack for the memory traffic of
// the DMA engines themselves.
constexpr int kCopyThreads = 12;

// One part of a copy as one thread did it, for TGEMM_HOST_TRACE: `thread`
// is 0 for the calling thread, 1 to threads - 1 for the pool's workers;
// times are std::chrono::steady_clock nanoseconds.
struct CopyPart {
    int thread = 0;
    int64_t begin_ns = 0, end_ns = 0;
    int64_t elems = 0;
};

// Copies a rows x cols column-major block from src (leading dimension sld)
// to dst (leading dimension dld). Blocks of 1 MiB and more are cut into
// parts of at least 256 KiB, up to four per thread, which the threads of a
// pool shared by all callers take one at a time, the calling thread too:
// a thread that wakes late takes fewer parts instead of holding the copy
// up, and concurrent callers never wait on each other's work to make
// progress. Workers that run out of parts poll for the next copy for
// kCopySpinUs before they sleep, so back-to-back copies of one call do not
// pay a wake-up each. Returns when the copy is complete. With `parts`,
// records one CopyPart per part.
void host_copy(float *dst, int64_t dld, const float *src, int64_t sld, int64_t rows, int64_t cols,
               std::vector<CopyPart> *parts = nullptr);

// The threads host_copy uses, the calling thread included.
int host_copy_threads();

constexpr int kCopySpinUs = 100;

}  // namespace tgemm
