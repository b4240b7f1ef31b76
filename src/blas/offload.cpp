#include "blas/offload.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "blas/cpu_blas.hpp"
#include "blas/offload_model.hpp"
#include "blas/output.hpp"
#include "blas/reference.hpp"
#include "core/check.hpp"
#include "core/math_mode.hpp"
#include "core/per_process.hpp"
#include "core/settings.hpp"
#include "driver/execute.hpp"

namespace tgemm::blas {
namespace {

// The trace's short name for why the GPU path gave up.
const char *short_reason(tgemm_status s)
{
    switch (s) {
    case TGEMM_ERROR_NO_DEVICE: return "no-device";
    case TGEMM_ERROR_INVALID_DEVICE: return "invalid-device";
    case TGEMM_ERROR_OUT_OF_MEMORY: return "out-of-memory";
    case TGEMM_ERROR_CUDA: return "cuda-error";
    case TGEMM_ERROR_UNSUPPORTED: return "unsupported";
    case TGEMM_ERROR_INVALID_SETTING: return "invalid-setting";
    default: return "internal-error";
    }
}

// Each warning is printed once per process.
std::atomic<bool> g_warned_setting{false};
std::atomic<bool> g_warned_builtin{false};
std::atomic<bool> g_warned_forced{false};

// TGEMM_OFFLOAD=gpu asked for the GPU: the first call it cannot run says so
// and where such calls go instead. Without a CPU BLAS that is the built-in
// loops, and this line stands for their warning too.
void warn_forced_gpu_failed(tgemm_status gpu)
{
    if (g_warned_forced.exchange(true))
        return;
    const CpuBlas &blas = cpu_blas();
    if (blas.sgemm != nullptr) {
        print_line("tgemm: TGEMM_OFFLOAD=gpu, but the GPU could not run a BLAS call (%s); calls it cannot run go to "
                   "%s\n",
                   tgemm_status_string(gpu), blas.name.c_str());
    } else if (!g_warned_builtin.exchange(true)) {
        print_line("tgemm: TGEMM_OFFLOAD=gpu, but the GPU could not run a BLAS call (%s) and no CPU BLAS was found "
                   "(%s): calls it cannot run go to tgemm's slow built-in loops; set TGEMM_CPU_BLAS to a BLAS "
                   "library such as libopenblas.so.0\n",
                   tgemm_status_string(gpu), blas.missing.c_str());
    }
}

// Whether this thread is inside a call of the CPU BLAS (forward()).
thread_local bool t_forwarding = false;
std::atomic<bool> g_warned_reentry{false};

void forward(SgemmFn sgemm, const GemmParams &p)
{
    struct Forwarding {
        Forwarding() { t_forwarding = true; }
        ~Forwarding() { t_forwarding = false; }
    } forwarding;
    const char ta = p.trans_a ? 'T' : 'N', tb = p.trans_b ? 'T' : 'N';
    const int m = static_cast<int>(p.m), n = static_cast<int>(p.n), k = static_cast<int>(p.k);
    const int lda = static_cast<int>(p.lda), ldb = static_cast<int>(p.ldb), ldc = static_cast<int>(p.ldc);
    sgemm(&ta, &tb, &m, &n, &k, &p.alpha, p.a, &lda, p.b, &ldb, &p.beta, p.c, &ldc, 1, 1);
}

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0)
{
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Below this much work a call stays on the CPU BLAS without consulting the
// model: the GPU path's fixed cost alone exceeds the time any CPU BLAS takes
// for it, and the first model decision measures the CPU BLAS, which a
// program of only small calls should not pay for.
constexpr double kCpuOnlyFlops = 2e6;

// Seconds of the best of `reps` timed m x n x k products on the CPU BLAS,
// after one untimed (which starts its threads).
double time_cpu_blas(SgemmFn sgemm, int m, int n, int k, int reps)
{
    std::vector<float> a(static_cast<size_t>(m) * k), b(static_cast<size_t>(k) * n), c(static_cast<size_t>(m) * n);
    for (size_t i = 0; i < a.size(); ++i)
        a[i] = static_cast<float>(i % 7) * 0.25f - 0.75f;
    for (size_t i = 0; i < b.size(); ++i)
        b[i] = static_cast<float>(i % 5) * 0.5f - 1.0f;
    const GemmParams p =
        sgemm_problem(false, Op::N, Op::N, m, n, k, 1.0f, a.data(), m, b.data(), k, 0.0f, c.data(), m);
    double best = 0.0;
    for (int rep = 0; rep <= reps; ++rep) {
        const Clock::time_point t0 = Clock::now();
        forward(sgemm, p);
        const double t = seconds_since(t0);
        if (rep > 0 && (best == 0.0 || t < best))
            best = t;
    }
    return std::max(best, 1e-9);
}

// The CPU BLAS's rate in this process, measured once on the first call
// that needs it, on the threads the program gives it: a 256^3 product
// first, and where that shows a fast BLAS, 1024 x 1024 x 512 (a rate closer
// to its large products'), so that a slow BLAS (reference BLAS, one thread)
// is not kept busy long. A 256^3 between 1 and 10 ms is timed three times
// more: threads of other processes on the same cores (MPI ranks starting
// together) can stretch one product of a fast BLAS that much.
double measure_cpu_flops(SgemmFn sgemm)
{
    constexpr double kSmallFlops = 2.0 * 256 * 256 * 256, kLargeFlops = 2.0 * 1024 * 1024 * 512;
    double small = time_cpu_blas(sgemm, 256, 256, 256, 1);
    if (small > 1e-3 && small < 1e-2)
        small = std::min(small, time_cpu_blas(sgemm, 256, 256, 256, 3));
    if (small > 1e-3)
        return kSmallFlops / small;
    return kLargeFlops / time_cpu_blas(sgemm, 1024, 1024, 512, 2);
}

// The rates, measured once (a child forked after that keeps them). Not
// under a static's guard: a child forked while a thread of its parent
// measures would inherit the guard as taken and wait on it for ever. The
// measuring process is known by its fork generation (+ 1; 0: none): the
// other threads of that process wait for its result, a child forked
// meanwhile takes the measurement over.
const OffloadRates &offload_rates(SgemmFn sgemm)
{
    static OffloadRates rates;
    static std::atomic<bool> measured{false};
    static std::atomic<uint64_t> measurer{0};
    if (measured.load(std::memory_order_acquire))
        return rates;
    const uint64_t me = fork_generation() + 1;
    while (!measured.load(std::memory_order_acquire)) {
        uint64_t who = measurer.load(std::memory_order_acquire);
        if (who != me && measurer.compare_exchange_strong(who, me, std::memory_order_acq_rel)) {
            const Settings &st = settings();
            OffloadRates r;
            r.cpu_flops = st.offload_cpu_gflops > 0.0 ? st.offload_cpu_gflops * 1e9 : measure_cpu_flops(sgemm);
            if (st.offload_link_gbs > 0.0)
                r.link = st.offload_link_gbs * 1e9;
            rates = r;
            measured.store(true, std::memory_order_release);
            break;
        }
        if (who == me)  // another thread of this process is measuring: sleep, leaving it the cores
            std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return rates;
}

// What the process learns from its calls: the learner, and whether each
// side has run a call yet (the first call of each side in a process starts
// things up: the CUDA context, pinned staging, the CPU BLAS's threads; its
// time says nothing about the next call's, so it is not learned from). A
// child forked while a thread of its parent held the learner's lock would
// wait on it for ever: a child learns afresh, its first calls cold too.
struct Learned {
    OffloadLearner learner;
    std::atomic<bool> gpu_warm{false}, cpu_warm{false};
};

Learned &learning()
{
    static PerProcess<Learned> learned;
    return learned.get();
}

// Runs fn(q) for each part of p's C in `left`, q being that part as a
// product of its own; for all of C when `left` is null (the GPU was not
// tried).
template <typename Fn>
void each_part(const GemmParams &p, const std::vector<Rect> *left, Fn fn)
{
    if (left == nullptr) {
        fn(p);
        return;
    }
    for (const Rect &r : *left)
        fn(part_of(p, r));
}

}  // namespace

void run_sgemm(const GemmParams &p, CallTrace &trace)
{
    // A CPU BLAS that calls back into tgemm (FlexiBLAS, or a wrapper, with
    // libtgemm as its backend) would forward forever: a call that arrives
    // while this thread is forwarding runs on the built-in loops.
    if (t_forwarding) {
        if (!g_warned_reentry.exchange(true))
            print_line("tgemm: the CPU BLAS (%s) calls back into tgemm's sgemm_; such calls run on tgemm's slow "
                       "built-in loops\n", cpu_blas().name.c_str());
        reference_sgemm(p);
        trace.path("builtin");
        return;
    }
    const Settings &st = settings();
    const std::string &setting_error = setting_error_for_calls();
    const bool valid = setting_error.empty();
    if (!valid && !g_warned_setting.exchange(true))
        print_line("tgemm: %s; BLAS calls run on the CPU\n", setting_error.c_str());

    const bool gpu_allowed = valid && st.offload != Offload::Never;
    const bool reads_ab = sgemm_reads_ab(p.k, p.alpha);
    const double flops = 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k);
    bool gpu_tried = false;
    tgemm_status gpu = TGEMM_SUCCESS;
    // After a GPU attempt that failed, the parts of C it did not write back,
    // which execute() leaves as they were (its results elsewhere are final
    // whatever beta is): what the CPU then computes. Without an attempt, the
    // CPU computes all of C.
    std::vector<Rect> left;
    // Runs the call on the GPU; true when it succeeded (and is traced).
    const auto on_gpu = [&] {
        gpu_tried = true;
        gpu = execute(p, cudaStreamPerThread, true, &left);
        if (gpu == TGEMM_SUCCESS)
            trace.path("gpu");
        else if (st.offload == Offload::Always)
            warn_forced_gpu_failed(gpu);
        return gpu == TGEMM_SUCCESS;
    };
    if (gpu_allowed && st.offload == Offload::Always && on_gpu())
        return;

    // Automatic: the model of both sides (offload_model.hpp), corrected by
    // the measured times of earlier calls of the same shape class.
    const CpuBlas &blas = cpu_blas();
    if (gpu_allowed && st.offload == Offload::Auto && reads_ab && blas.sgemm != nullptr &&
        flops >= std::max(st.offload_min_flops, kCpuOnlyFlops)) {
        const bool beta = p.beta != 0.0f;
        const OffloadEstimate model = model_seconds(offload_rates(blas.sgemm), p.m, p.n, p.k, beta);
        Learned &learned = learning();
        const OffloadChoice choice =
            learned.learner.choose(p.m, p.n, p.k, beta, model, st.offload_learn, learned.gpu_warm.load());
        trace.offload(reason_name(choice.reason), choice.estimate.cpu, choice.estimate.gpu);
        const Clock::time_point t0 = Clock::now();
        if (choice.side == Side::Gpu) {
            const bool ok = on_gpu();
            if (!ok) {
                const Clock::time_point t1 = Clock::now();
                each_part(p, &left, [&](const GemmParams &q) { forward(blas.sgemm, q); });
                trace.path("cpu-fallback:", short_reason(gpu));
                // The CPU BLAS just computed the whole product (the attempt
                // failed before writing any of C): a measurement of the CPU.
                const bool whole = left.size() == 1 && left[0].rows == p.m && left[0].cols == p.n;
                if (whole && learned.cpu_warm.exchange(true))
                    learned.learner.observe(p.m, p.n, p.k, beta, Side::Cpu, seconds_since(t1), model);
            }
            // A failed attempt counts with the CPU's work after it, twice:
            // at equal cost a GPU that fails is not worth trying, so the
            // class moves to the CPU rather than failing every call of it
            // again (the GPU is tried again with the class's re-tries).
            const double spent = seconds_since(t0);
            if (!ok)
                learned.learner.observe(p.m, p.n, p.k, beta, Side::Gpu, 2.0 * spent, model);
            else if (learned.gpu_warm.exchange(true))
                learned.learner.observe(p.m, p.n, p.k, beta, Side::Gpu, spent, model);
            return;
        } else {
            forward(blas.sgemm, p);
            if (learned.cpu_warm.exchange(true))
                learned.learner.observe(p.m, p.n, p.k, beta, Side::Cpu, seconds_since(t0), model);
            trace.path("cpu");
            return;
        }
    }

    // alpha == 0 or k == 0: C := beta * C, which reads neither A nor B. Done
    // here rather than forwarded, because not every CPU BLAS keeps that
    // promise (OpenBLAS 0.3.26 dereferences NULL A and B when alpha == 0).
    if (!reads_ab) {
        each_part(p, gpu_tried ? &left : nullptr, reference_sgemm);
        trace.path("scale");
        return;
    }

    // The CPU BLAS reads host memory only, as the BLAS ABI assumes; finding
    // it and forwarding to it never touches CUDA.
    if (blas.sgemm != nullptr) {
        each_part(p, gpu_tried ? &left : nullptr, [&](const GemmParams &q) { forward(blas.sgemm, q); });
        if (gpu_tried)
            trace.path("cpu-fallback:", short_reason(gpu));
        else if (!valid)
            trace.path("cpu-fallback:invalid-setting");
        else
            trace.path("cpu");
        return;
    }

    // No CPU BLAS: a small call the policy kept off the GPU still prefers
    // the GPU to the built-in loops.
    if (gpu_allowed && !gpu_tried && on_gpu())
        return;
    if (!g_warned_builtin.exchange(true)) {
        const char *fix = "SGEMM runs on tgemm's slow built-in loops; set TGEMM_CPU_BLAS to a BLAS library such as "
                          "libopenblas.so.0";
        if (gpu_tried)
            print_line("tgemm: no GPU was usable (%s) and no CPU BLAS was found (%s): %s\n",
                       tgemm_status_string(gpu), blas.missing.c_str(), fix);
        else
            print_line("tgemm: no CPU BLAS was found (%s) and the GPU is off (%s): %s\n", blas.missing.c_str(),
                       valid ? "TGEMM_OFFLOAD=cpu" : "invalid TGEMM_* setting", fix);
    }
    each_part(p, gpu_tried ? &left : nullptr, reference_sgemm);
    trace.path("builtin");
}

}  // namespace tgemm::blas
