// Error reporting inside the library: every error status leaves through
// fail(), which records a per-thread detail string and, only when the user
// asked for it with TGEMM_VERBOSE, logs one line to stderr.
#pragma once

#include <cuda_runtime_api.h>

#include "tgemm.h"

namespace tgemm {

// Clears the calling thread's detail string (at the start of every call).
void clear_error_detail();

// Records a printf-style detail for status s and returns s.
tgemm_status fail(tgemm_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// Maps a CUDA error from the call named by `what` to a status, clears the
// runtime's last-error state for non-sticky errors, and records the detail.
tgemm_status fail_cuda(cudaError_t e, const char *what);

// TGEMM_SUCCESS for cudaSuccess, else fail_cuda(e, what).
inline tgemm_status check_cuda(cudaError_t e, const char *what)
{
    return e == cudaSuccess ? TGEMM_SUCCESS : fail_cuda(e, what);
}

// The status for an invalid argument given its SGEMM argument number, with
// the detail "argument ARG: " followed by `why` (printf format).
tgemm_status invalid_argument(int arg, const char *why, ...) __attribute__((format(printf, 2, 3)));

}  // namespace tgemm
