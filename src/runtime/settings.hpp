// Environment settings, read once per process on first use. A bad value is
// not fatal: every call that depends on settings then returns
// TGEMM_ERROR_INVALID_SETTING with a message naming the variable.
#pragma once

#include <string>

namespace tgemm {

enum class Offload { Auto, Always, Never };

struct Settings {
    int device = -1;        // TGEMM_DEVICE: CUDA device number; -1 = the thread's current device
    int verbose = 0;        // TGEMM_VERBOSE: 1 logs every error status to stderr
    std::string kernel;     // TGEMM_KERNEL: force one kernel family by name (tuning, tests)

    // BLAS ABI (sgemm_, cblas_sgemm) only.
    Offload offload = Offload::Auto;  // TGEMM_OFFLOAD: auto | gpu | cpu
    double offload_min_flops = 0;     // TGEMM_OFFLOAD_MIN_FLOPS: smallest 2*m*n*k sent to the GPU in auto mode
    std::string cpu_blas;             // TGEMM_CPU_BLAS: library to forward small calls to
    std::string trace;                // TGEMM_TRACE: "1"/"stderr" or a file path; empty = off

    std::string error;                // first invalid setting, empty if all are valid
};

const Settings &settings();

}  // namespace tgemm
