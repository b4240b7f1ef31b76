// TGEMM_OFFLOAD=auto: whether a BLAS call on host operands runs sooner on
// the CPU BLAS or on the GPU. Plain arithmetic and a small table, no CUDA:
// a call the model keeps on the CPU never touches the GPU.
//
// Each side has a model of its time:
//
//   CPU  flops / cpu_flops + cpu_call_seconds, where cpu_flops is the CPU BLAS's
//        rate in this process (measured once by offload.cpp, or
//        TGEMM_OFFLOAD_CPU_GFLOPS);
//   GPU  gpu_overhead + max(staging, fill + kernel): every operand crosses
//        the link through the host threads' pinned staging one after the
//        other (A, B, C in when beta != 0, C out), each at `link` bytes/s,
//        or `link_small` below kSmallOperand bytes (copied by one thread);
//        the kernels overlap that traffic except for the first task's
//        operands and the last tile of C (the host pipeline's tiles, see
//        driver/host_plan.hpp).
//
// Neither side's time is smooth in the shape (a CPU BLAS runs skinny and
// small products at a fraction of its rate; the GPU path's tiles and
// pieces quantise the traffic), so the model only ranks the two sides.
// What calls of a shape class (m, n and k each in one bin of a quarter octave,
// beta zero or not) actually took corrects it: each side's measured time
// over its model is kept per class (the least of the last three: a call is
// slowed, never sped up, by what else runs on the machine, so two disturbed
// calls in a row cannot move a class, three slow ones do), and once a class
// has run on its preferred side, the other side is tried once if its
// estimate is within kExploreFactor (and again kReexploreCalls calls after,
// then twice as many calls after that, up to kMaxDoublings doublings, while
// the tries leave the class where it is), so that repeated shapes settle on
// the side that is really faster at a cost that falls off.
//
// A side estimated slower still is tried too, once the class has spent
// 1 / kExploreShare times that estimate since the last try, the wait
// doubling (up to kMaxDoublings) after each try that leaves the class where
// it was: the estimate can be wrong by far (the CPU BLAS's rate is measured
// on one small product at the first call, which threads of other processes
// on the same cores, MPI ranks with their own BLAS threads, can slow a
// hundredfold), and a class repeated often enough must not stay on the
// wrong side for that; where the estimate was right, the tries cost a
// quarter of the time spent before the first, and less and less after. The
// GPU is tried only once it is running in the process: a first GPU call
// starts the CUDA context (a large fraction of a second), which a try must
// not cost.
#pragma once

#include <cstdint>
#include <mutex>

namespace tgemm::blas {

// The defaults were fitted to pageable calls on the H100 machine
// (docs/notes/history-host.md): they set the model's ranking where nothing has been
// measured yet, and are meant to be right within a factor of two.
struct OffloadRates {
    double cpu_flops = 0.0;           // flop/s of the CPU BLAS
    // The fixed cost of one call forwarded to the CPU BLAS (its argument
    // checks, waking its threads): a property of the CPU library, not the
    // GPU's kernel launch cost that the dispatcher models.
    double cpu_call_seconds = 3e-6;
    double gpu_overhead = 70e-6;      // seconds per GPU call on host operands
    double link = 25e9;               // bytes/s of one operand staged and sent
    double link_small = 5e9;          // the same below kSmallOperand
    double gpu_flops = 30e12;         // the kernels' rate, edges and waves included
};

// Operands below this many bytes are staged by one thread.
constexpr double kSmallOperand = 1 << 20;

struct OffloadEstimate {
    double cpu = 0.0, gpu = 0.0;  // seconds
};

OffloadEstimate model_seconds(const OffloadRates &r, int64_t m, int64_t n, int64_t k, bool beta);

enum class Side : uint8_t { Cpu, Gpu };
// Why a side was chosen: the model alone, the model corrected by measured
// calls of the class, a try of the side not yet measured, or the CPU while
// the GPU, not yet started in the process, has not been worth starting.
enum class Reason : uint8_t { Model, Learned, Explore, Cold };

struct OffloadChoice {
    Side side = Side::Cpu;
    Reason reason = Reason::Model;
    OffloadEstimate estimate;  // corrected by what was learned
};

const char *reason_name(Reason r);

constexpr double kExploreFactor = 3.0;
constexpr double kExploreShare = 0.25;
constexpr uint32_t kReexploreCalls = 32;
// The interval between tries, and the time a far try waits for, double at
// most this many times (to 1024 calls, and 128 times the try's estimate).
constexpr int kMaxDoublings = 5;
// A class that has been running on one side moves to the other only when
// the other is estimated faster by this factor.
constexpr double kSwitchMargin = 0.9;
// What the process's first GPU call costs on top of its estimate (the CUDA
// context, the kernels' modules, pinned staging): the least measured on the
// H100 machine (docs/scalapack.md); more where several processes start at
// once. Until a GPU call has run, the GPU is taken only once the time it
// would have saved, over this call or over the calls kept on the CPU for
// that reason whose class has a measured CPU time, reaches this: a program
// of a few short calls never pays the start, a long one pays it early
// (where the estimates are right, at most about twice what starting at once
// would have cost). Not applied under TGEMM_OFFLOAD_LEARN=0, where the
// model alone decides.
constexpr double kGpuStartSeconds = 0.3;

// The measured corrections, per shape class. Thread-safe.
class OffloadLearner {
public:
    // `learn` false: the model alone decides. `gpu_warm`: a GPU call has
    // already run in the process, so the GPU may be tried.
    OffloadChoice choose(int64_t m, int64_t n, int64_t k, bool beta, const OffloadEstimate &model, bool learn,
                         bool gpu_warm);

    // A call of the class ran on `side` in `seconds`; `model` is the
    // model's estimate for it (the uncorrected one).
    void observe(int64_t m, int64_t n, int64_t k, bool beta, Side side, double seconds,
                 const OffloadEstimate &model);

private:
    static constexpr int kKept = 3;  // measurements kept per side
    struct Entry {
        uint64_t key = 0;                    // 0 = empty
        double log_factor[2][kKept] = {};    // log(measured / model), the latest kKept per side
        uint32_t measured[2] = {0, 0};       // calls measured per side
        uint32_t calls_since_try = 0;        // choices made for the class since the last try
        double since_try = 0.0;              // seconds measured, both sides, since the last try
        uint8_t tries = 0;                   // tries of the side not held since the class took its side,
                                             // up to kMaxDoublings
        int8_t held = -1;                    // the side chosen last, not counting tries (-1: none)

        // The least of the kept measurements of a side (measured[side] > 0).
        double factor(int side) const;
    };
    static constexpr int kEntries = 512;

    static uint64_t class_key(int64_t m, int64_t n, int64_t k, bool beta);
    Entry *find(uint64_t key, bool create);

    std::mutex mu_;
    double cold_gain_ = 0.0;  // the GPU's estimated saving over calls kept on the CPU as Cold
    Entry entries_[kEntries];
};

}  // namespace tgemm::blas
