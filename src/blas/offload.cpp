#include "blas/offload.hpp"

#include <atomic>
#include <vector>

#include "api/check.hpp"
#include "blas/cpu_blas.hpp"
#include "blas/output.hpp"
#include "blas/reference.hpp"
#include "runtime/execute.hpp"
#include "runtime/offload_default.hpp"
#include "runtime/settings.hpp"

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

void forward(SgemmFn sgemm, const GemmParams &p)
{
    const char ta = p.trans_a ? 'T' : 'N', tb = p.trans_b ? 'T' : 'N';
    const int m = static_cast<int>(p.m), n = static_cast<int>(p.n), k = static_cast<int>(p.k);
    const int lda = static_cast<int>(p.lda), ldb = static_cast<int>(p.ldb), ldc = static_cast<int>(p.ldc);
    sgemm(&ta, &tb, &m, &n, &k, &p.alpha, p.a, &lda, p.b, &ldb, &p.beta, p.c, &ldc, 1, 1);
}

// Runs fn(q) for each part of p's C in `left`, q being that part as a
// product of its own.
template <typename Fn>
void each_part(const GemmParams &p, const std::vector<Rect> &left, Fn fn)
{
    for (const Rect &r : left)
        fn(part_of(p, r));
}

}  // namespace

int null_operand(const GemmParams &p)
{
    if (sgemm_reads_ab(p.k, p.alpha)) {
        if (p.a == nullptr)
            return 7;
        if (p.b == nullptr)
            return 9;
    }
    return p.c == nullptr ? 12 : 0;
}

void run_sgemm(const GemmParams &p, CallTrace &trace)
{
    const Settings &st = settings();
    const bool valid = st.error.empty();
    if (!valid && !g_warned_setting.exchange(true))
        print_line("tgemm: %s; BLAS calls run on the CPU\n", st.error.c_str());

    const bool gpu_allowed = valid && st.offload != Offload::Never;
    const bool reads_ab = sgemm_reads_ab(p.k, p.alpha);
    const double m = static_cast<double>(p.m), n = static_cast<double>(p.n), k = static_cast<double>(p.k);
    const double flops = 2.0 * m * n * k;
    const double link_bytes = 4.0 * (m * k + k * n + m * n * (p.beta != 0.0f ? 2.0 : 1.0));
    const bool worth_it = flops >= st.offload_min_flops && flops >= kOffloadMinFlopsPerByte * link_bytes;
    bool gpu_tried = false;
    tgemm_status gpu = TGEMM_SUCCESS;
    // What the CPU computes: all of C, or after a GPU attempt that failed,
    // the parts of C it did not write back, which execute() leaves as they
    // were (its results elsewhere are final whatever beta is).
    std::vector<Rect> left = {Rect{0, 0, p.m, p.n}};
    // Runs the call on the GPU; true when it succeeded (and is traced).
    const auto on_gpu = [&] {
        gpu_tried = true;
        gpu = execute(p, cudaStreamPerThread, true, &left);
        if (gpu == TGEMM_SUCCESS)
            trace.path("gpu");
        return gpu == TGEMM_SUCCESS;
    };
    if (gpu_allowed && (st.offload == Offload::Always || (reads_ab && worth_it)) && on_gpu())
        return;

    // alpha == 0 or k == 0: C := beta * C, which reads neither A nor B. Done
    // here rather than forwarded, because not every CPU BLAS keeps that
    // promise (OpenBLAS 0.3.26 dereferences NULL A and B when alpha == 0).
    if (!reads_ab) {
        each_part(p, left, reference_sgemm);
        trace.path("scale");
        return;
    }

    // The CPU BLAS reads host memory only, as the BLAS ABI assumes; finding
    // it and forwarding to it never touches CUDA.
    const CpuBlas &blas = cpu_blas();
    if (blas.sgemm != nullptr) {
        each_part(p, left, [&](const GemmParams &q) { forward(blas.sgemm, q); });
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
    each_part(p, left, reference_sgemm);
    trace.path("builtin");
}

}  // namespace tgemm::blas
