// Environment settings, read once per process on first use. A bad value is
// not fatal: every call that depends on settings then returns
// TGEMM_ERROR_INVALID_SETTING with a message naming the variable.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tgemm {

enum class Offload { Auto, Always, Never };
enum class StreamKMode { Auto, Always, Never };
enum class PackMode { Auto, Always, Never };
// TGEMM_MATH: the process's math until tgemm_set_math (core/math_mode.hpp).
enum class Math { Strict, Fp32Tc };
// TGEMM_FP32_TC: where the fp32-tc math runs a call: where the model says it
// pays (auto), on every call it can take whatever its size (always: tests),
// or nowhere (never: the strict path, as under TGEMM_MATH=strict).
enum class Fp32TcMode { Auto, Always, Never };
// TGEMM_DEVICES: one device (unset), the devices listed, every visible one,
// or every visible one where spreading pays (driver/spread_plan.hpp).
enum class Spread { One, List, All, Auto };

// Most entries TGEMM_DEVICES may list (a device may appear more than once:
// each entry is one worker with its own pipeline).
constexpr int kMaxListedDevices = 64;

struct Settings {
    int device = -1;        // TGEMM_DEVICE: CUDA device number; -1 = the thread's current device
    // TGEMM_DEVICE=local-rank: the device is the node-local rank of this
    // process (local_rank, from the launcher's variable local_rank_from)
    // modulo the number of visible devices; -1 = no launcher variable set,
    // so the thread's current device, as when TGEMM_DEVICE is unset.
    bool device_local_rank = false;
    int local_rank = -1;
    std::string local_rank_from;
    Spread spread = Spread::One;  // TGEMM_DEVICES
    std::vector<int> devices;     // TGEMM_DEVICES=list: the device of each worker, in order
    int64_t spread_rows = 0, spread_cols = 0;  // TGEMM_SPREAD_GRID=RxC: the grid of every spread call
                                               // (tuning, tests); 0 = the model's
    bool spread_peer = true;  // TGEMM_SPREAD_PEER=0: blocks of a spread call never share panels over peer copies
    int verbose = 0;        // TGEMM_VERBOSE: 1 logs every error status and the CPU BLAS chosen to stderr,
                            // 2 also each host-operand plan
    std::string kernel;     // TGEMM_KERNEL: force one kernel family by name, or rank-k (tuning, tests)
    bool clusters = true;   // TGEMM_CLUSTERS=0: never finish split-K inside thread-block clusters
    StreamKMode streamk = StreamKMode::Auto;  // TGEMM_STREAMK: auto | always (every tiled plan) | never
    bool tma = true;        // TGEMM_TMA=0: never use the streaming kernel fed by the tensor copy engine
    PackMode pack = PackMode::Auto;  // TGEMM_PACK: auto | always (every tiled plan with op(A) = A^T) | never
    Math math = Math::Strict;        // TGEMM_MATH: strict | fp32-tc
    Fp32TcMode fp32_tc = Fp32TcMode::Auto;  // TGEMM_FP32_TC: auto | always | never (tuning, tests)
    uint64_t device_memory_limit = 0;  // TGEMM_DEVICE_MEMORY_LIMIT: bytes a call on host operands may
                                       // take on the device; 0 = no limit but free memory
    int host_copy_threads = 0;         // TGEMM_HOST_COPY_THREADS: threads staging pageable operands; 0 = default
    std::string host_trace;            // TGEMM_HOST_TRACE: CSV file for the host-operand timeline, as given
                                       // (trace_file_name); empty = off

    // BLAS ABI (sgemm_, cblas_sgemm) only.
    Offload offload = Offload::Auto;  // TGEMM_OFFLOAD: auto | gpu | cpu
    double offload_min_flops = 0;     // TGEMM_OFFLOAD_MIN_FLOPS: smallest 2*m*n*k auto may send to the GPU
    double offload_cpu_gflops = 0;    // TGEMM_OFFLOAD_CPU_GFLOPS: the CPU BLAS's rate; 0 = measure it
    double offload_link_gbs = 0;      // TGEMM_OFFLOAD_LINK_GBS: staged link rate per operand; 0 = default
    bool offload_learn = true;        // TGEMM_OFFLOAD_LEARN=0: the model alone decides
    std::string cpu_blas;             // TGEMM_CPU_BLAS: library to forward small calls to; empty = search
                                      // the system's (blas/cpu_blas.hpp)
    std::string trace;                // TGEMM_TRACE: "1"/"stderr" or a file path, as given (trace_file_name);
                                      // empty = off

    std::string error;                // first invalid setting, empty if all are valid (TGEMM_MATH aside)
    std::string math_error;           // TGEMM_MATH's, empty if valid: tgemm_set_math overrides it
};

const Settings &settings();

constexpr long kMaxHostCopyThreads = 256;

// The launchers' variables that hold a process's node-local rank, in the
// order TGEMM_DEVICE=local-rank reads them: Open MPI, MPICH and Intel MPI
// (Hydra), MVAPICH2, Slurm's srun.
constexpr const char *kLocalRankVariables[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                                               "MV2_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"};

// The launchers' variables that hold a process's rank in its MPI job, in
// the order a trace file name's %r reads them: Open MPI, PMI (MPICH, Intel
// MPI), PMIx, Slurm's srun.
constexpr const char *kRankVariables[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"};

// A trace file name as TGEMM_TRACE and TGEMM_HOST_TRACE give it, with %p
// replaced by the process id, %r by the process's rank in its MPI job
// (kRankVariables; 0 without a launcher) and %% by %, so that the
// processes of a job can each write their own file. Other characters after
// % stay as they are.
std::string expand_trace_name(const std::string &name, long pid, const char *rank);
// The file a trace name gives the calling process: expand_trace_name with
// its id and rank, read now (a child forked after the parent opened its
// trace opens its own).
std::string trace_file_name(const std::string &name);

// Parses a positive byte count: decimal digits, optionally followed by one of
// K, M, G, T (either case; powers of 1024). False on anything else, on zero
// and on overflow.
bool parse_bytes(const char *s, uint64_t *out);

}  // namespace tgemm
