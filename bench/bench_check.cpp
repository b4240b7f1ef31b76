// The output check of every timed configuration: the FP64 reference of its
// inputs (bench/gemm_reference.hpp, on the device) and the element-by-element
// comparison with it (bench/gemm_check.hpp), which ends the run on failure
// (check_output) or reports it to the caller (compare_output).
#include "bench.hpp"

#include <algorithm>
#include <thread>

namespace bench {

// Computed on the device from the operands the timed calls read (device
// pointers), in blocks of at most 4 GiB or half the free device memory.
Reference make_reference(const Shape &s, const float *A, int64_t lda, const float *B, int64_t ldb, double alpha,
                         Ctx &ctx)
{
    const size_t count = static_cast<size_t>(s.m) * static_cast<size_t>(s.n);
    Reference r;
    r.ref.reset(new (std::nothrow) double[count]);
    r.mag.reset(new (std::nothrow) double[count]);
    if (!r.ref || !r.mag)
        die("%s: no host memory for the FP64 reference (2 x %.2f GiB)", s.name.c_str(),
            count * sizeof(double) / 1073741824.0);
    // The operands may have just been copied in on the legacy default
    // stream, which ctx.stream (non-blocking) does not wait for.
    CUDA_CHECK(cudaDeviceSynchronize());
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    const size_t budget = std::min(size_t(4) << 30, free_b / 2);
    gemm_reference::Problem p;
    p.ta = s.ta;
    p.tb = s.tb;
    p.m = s.m;
    p.n = s.n;
    p.k = s.k;
    p.alpha = alpha;
    p.a = A;
    p.lda = lda;
    p.b = B;
    p.ldb = ldb;
    gemm_reference::Dgemm dgemm;
    if (!ctx.ref_kernel) {
        dgemm.fn = ctx.cb.dgemm;
        dgemm.handle = ctx.cb.ref_handle;
    }
    gemm_reference::compute(p, dgemm, ctx.stream, budget, r.ref.get(), r.mag.get());
    return r;
}

// The comparison on up to 16 threads (a 16384^2 output is 5 GiB to read).
// Warns once per reference when the bound exceeds every |R|, where even
// an all-zero C would pass.
gemm_check::Report compare_output(const Shape &s, Reference &ref, const float *C, int64_t ldc)
{
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const gemm_check::Report rep = gemm_check::check_parallel(s.m, s.n, C, ldc, ref.ref.get(), s.m, ref.mag.get(),
                                                              s.m, s.k, static_cast<int>(std::min(cores, 16u)));
    if (rep.zero_detectable == 0 && !ref.warned) {
        std::fflush(stdout);
        std::fprintf(stderr, "%s: warning: %s: at K = %lld the error bound exceeds every element of the "
                     "reference: the check cannot tell this output from an all-zero one\n",
                     program_name, s.name.c_str(), (long long)s.k);
        ref.warned = true;
    }
    return rep;
}

// Checks the output C (host memory, leading dimension ldc) of what against
// the reference; dies naming the worst element and its bound when any
// element is over its bound or not finite. Returns the largest
// |C - R| / bound.
double check_output(const std::string &what, const Shape &s, Reference &ref, const float *C, int64_t ldc)
{
    const gemm_check::Report rep = compare_output(s, ref, C, ldc);
    if (!rep.passed() || rep.checked != s.m * s.n)
        die("output check of %s failed on %s (%lld x %lld x %lld, %c%c): %s", what.c_str(), s.name.c_str(),
            (long long)s.m, (long long)s.n, (long long)s.k, s.ta, s.tb, gemm_check::describe(rep).c_str());
    return rep.worst;
}

}  // namespace bench
