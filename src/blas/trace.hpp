// TGEMM_TRACE: one line per BLAS call, for benchmarking and for finding out
// where calls ran. Off by default, and then costs one branch per call (no
// clock is read, nothing is formatted).
//
//   tgemm trace: entry=cblas_sgemm layout=row transa=N transb=T m=512 n=256 k=64 alpha=1 beta=0 path=gpu
//                auto=model est_cpu_us=1520.3 est_gpu_us=790.2 time_us=812.4   (one line)
//
// path is gpu, cpu (the CPU BLAS), cpu-fallback:<why the GPU could not run
// it>, builtin (the built-in loops), scale (alpha == 0 or k == 0: C := beta*C
// on the host, A and B unread), quick-return or xerbla:<argument number>.
// auto= and the estimates appear where TGEMM_OFFLOAD=auto consulted its
// model. math= appears where the process's math is fp32-tc and the call
// reached the GPU: math=fp32-tc:N (the moduli it ran with) or
// math=strict:<why the fp32-tc math declined> (core/math_mode.hpp); for a
// call on host operands, the last of its device blocks.
#pragma once

#include <chrono>

namespace tgemm::blas {

class CallTrace {
public:
    // sgemm_ (cblas false): layout is ignored, transa/transb are the
    // characters passed. cblas_sgemm: the CBLAS values passed.
    CallTrace(const char *entry, bool cblas, int layout, int transa, int transb, int m, int n, int k);
    CallTrace(const CallTrace &) = delete;
    CallTrace &operator=(const CallTrace &) = delete;
    ~CallTrace();  // writes the line

    // A static string, or `prefix` followed by `detail`; both must outlive the call.
    void path(const char *p, const char *detail = nullptr)
    {
        path_ = p;
        detail_ = detail;
    }
    // alpha and beta, once the arguments are known to be valid (reference
    // BLAS reads them only then).
    void scalars(float alpha, float beta)
    {
        alpha_ = alpha;
        beta_ = beta;
        have_scalars_ = true;
    }
    // TGEMM_OFFLOAD=auto: why the side was chosen and both sides' estimated
    // seconds; `reason` must outlive the call.
    void offload(const char *reason, double cpu_s, double gpu_s)
    {
        offload_ = reason;
        est_cpu_s_ = cpu_s;
        est_gpu_s_ = gpu_s;
    }
    void error(int info)
    {
        path_ = "xerbla:";
        info_ = info;
    }

private:
    bool on_;
    const char *entry_;
    bool cblas_;
    int layout_, transa_, transb_, m_, n_, k_;
    const char *path_ = "unknown";
    const char *detail_ = nullptr;
    int info_ = 0;
    float alpha_ = 0.0f, beta_ = 0.0f;
    bool have_scalars_ = false;
    const char *offload_ = nullptr;
    double est_cpu_s_ = 0.0, est_gpu_s_ = 0.0;
    std::chrono::steady_clock::time_point start_;
    unsigned math_records_ = 0;  // core/math_mode.hpp's count when the call started
};

}  // namespace tgemm::blas
