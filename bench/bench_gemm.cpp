// bench_gemm: time tgemm against cuBLAS (pure FP32) on the same GPU, same
// inputs, in the same process.
//
//   bench_gemm [--suite] [--squares] [--host] [--shape M N K TA TB]... [--csv PATH]
//              [--reps N] [--warmup N] [--seed N] [--l2 MODE] [--reference cublas|kernel]
//
// With --host the operands are in host memory: tgemm_sgemm on pageable and
// on pinned memory against the naive cuBLAS path (copy in, multiply, copy
// out) from the same memory and against the multiply alone on device
// pointers, wall clock, each against the floor of the link and the multiply.
//
// Every timed configuration's output is checked element by element against
// an FP64 reference of the same inputs (bench/gemm_check.hpp: |C - R| <=
// gamma_{K+2} |alpha| (|A||B|) elementwise; R and |A||B| from two DGEMMs on
// the device, bench/gemm_reference.hpp): once before it is timed, and the
// outputs the timed calls leave behind once after. Any CUDA, tgemm or cuBLAS
// error, or a failed check, ends the program with exit status 1 and a
// message on stderr naming the worst element and its bound. cuBLAS is
// loaded at run time with dlopen, so the benchmark neither links it nor
// needs its headers; without it, tgemm alone is timed and the reference
// comes from the benchmark's own FP64 kernel.
//
// Conventions: column-major storage; lda/ldb/ldc are the rows of the matrix
// as stored; alpha = 1, beta = 0.

#include <tgemm.h>

#include <cuda_runtime.h>
#include <dlfcn.h>

#include "gemm_check.hpp"
#include "bench_error.hpp"
#include "gemm_reference.hpp"

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <new>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

// ------------------------------------------------------------------ errors

[[noreturn]] void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bench::vdie("", fmt, ap);
}

#define CUDA_CHECK(call)                                                                   \
    do {                                                                                   \
        cudaError_t err_ = (call);                                                         \
        if (err_ != cudaSuccess)                                                           \
            die("%s:%d: %s failed: %s (%s)", __FILE__, __LINE__, #call,                    \
                cudaGetErrorName(err_), cudaGetErrorString(err_));                         \
    } while (0)

// ------------------------------------------------------------------ cuBLAS, loaded at run time

// Declared here instead of including cublas_v2.h: the handle is an opaque
// pointer (its struct declared in gemm_reference.hpp); status, operation and
// math mode are C enums (int-sized).
typedef cublasContext *cublasHandle_t;
constexpr int CUBLAS_STATUS_SUCCESS_ = 0;
constexpr int CUBLAS_OP_N_ = 0;
constexpr int CUBLAS_OP_T_ = 1;
constexpr int CUBLAS_DEFAULT_MATH_ = 0; // pure FP32: no TF32, no tensor cores

typedef int (*cublasCreate_fn)(cublasHandle_t *);
typedef int (*cublasDestroy_fn)(cublasHandle_t);
typedef int (*cublasSetStream_fn)(cublasHandle_t, cudaStream_t);
typedef int (*cublasSetMathMode_fn)(cublasHandle_t, int);
typedef int (*cublasGetVersion_fn)(cublasHandle_t, int *);
typedef int (*cublasSgemm_fn)(cublasHandle_t, int transa, int transb, int m, int n, int k,
                              const float *alpha, const float *A, int lda, const float *B,
                              int ldb, const float *beta, float *C, int ldc);

struct Cublas {
    bool ok = false;
    void *lib = nullptr;
    std::string libname;
    cublasHandle_t handle = nullptr;
    cublasCreate_fn create = nullptr;
    cublasDestroy_fn destroy = nullptr;
    cublasSetStream_fn set_stream = nullptr;
    cublasSetMathMode_fn set_math_mode = nullptr;
    cublasSgemm_fn sgemm = nullptr;
    // The output check's FP64 reference: cublasDgemm_v2 on a handle of its
    // own, so that nothing the timed handle is set to (math mode, workspace)
    // changes for it. Null when libcublas lacks it.
    gemm_reference::DgemmFn dgemm = nullptr;
    cublasHandle_t ref_handle = nullptr;
};

void cublas_check(int status, const char *what)
{
    if (status != CUBLAS_STATUS_SUCCESS_)
        die("%s failed with cuBLAS status %d", what, status);
}

// Returns false (after saying why) when no usable libcublas is found; the
// benchmark then times tgemm alone. Errors after a successful load are fatal.
bool cublas_load(Cublas &cb, cudaStream_t stream)
{
    const char *names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so",
                           "/usr/local/cuda/lib64/libcublas.so.13",
                           "/usr/local/cuda/lib64/libcublas.so.12"};
    std::string errors;
    for (const char *name : names) {
        void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            const char *e = dlerror();
            errors += std::string("\n    ") + (e ? e : name);
            continue;
        }
        cb.lib = lib;
        cb.libname = name;
        break;
    }
    if (!cb.lib) {
        std::printf("cuBLAS: could not be loaded; timing tgemm alone (ratio columns n/a).%s\n",
                    errors.c_str());
        return false;
    }
    struct {
        const char *sym;
        void **dst;
    } syms[] = {
        {"cublasCreate_v2", reinterpret_cast<void **>(&cb.create)},
        {"cublasDestroy_v2", reinterpret_cast<void **>(&cb.destroy)},
        {"cublasSetStream_v2", reinterpret_cast<void **>(&cb.set_stream)},
        {"cublasSgemm_v2", reinterpret_cast<void **>(&cb.sgemm)},
        {"cublasSetMathMode", reinterpret_cast<void **>(&cb.set_math_mode)},
    };
    for (auto &s : syms) {
        dlerror();
        *s.dst = dlsym(cb.lib, s.sym);
        if (!*s.dst) {
            const char *e = dlerror();
            std::printf("cuBLAS: %s lacks %s (%s); timing tgemm alone (ratio columns n/a).\n",
                        cb.libname.c_str(), s.sym, e ? e : "not found");
            dlclose(cb.lib);
            cb.lib = nullptr;
            return false;
        }
    }
    cublas_check(cb.create(&cb.handle), "cublasCreate_v2");
    cublas_check(cb.set_stream(cb.handle, stream), "cublasSetStream_v2");
    cublas_check(cb.set_math_mode(cb.handle, CUBLAS_DEFAULT_MATH_), "cublasSetMathMode(DEFAULT_MATH)");
    dlerror();
    cb.dgemm = reinterpret_cast<gemm_reference::DgemmFn>(dlsym(cb.lib, "cublasDgemm_v2"));
    if (cb.dgemm) {
        cublas_check(cb.create(&cb.ref_handle), "cublasCreate_v2 (reference)");
        cublas_check(cb.set_stream(cb.ref_handle, stream), "cublasSetStream_v2 (reference)");
        cublas_check(cb.set_math_mode(cb.ref_handle, CUBLAS_DEFAULT_MATH_), "cublasSetMathMode (reference)");
    } else {
        std::printf("cuBLAS: %s lacks cublasDgemm_v2; the output check's FP64 reference uses the benchmark's own "
                    "kernel.\n", cb.libname.c_str());
    }
    int version = 0;
    auto get_version = reinterpret_cast<cublasGetVersion_fn>(dlsym(cb.lib, "cublasGetVersion_v2"));
    if (get_version && get_version(cb.handle, &version) == CUBLAS_STATUS_SUCCESS_)
        std::printf("cuBLAS: %s, version %d, default math mode (pure FP32)\n", cb.libname.c_str(),
                    version);
    else
        std::printf("cuBLAS: %s, default math mode (pure FP32)\n", cb.libname.c_str());
    cb.ok = true;
    return true;
}

// ------------------------------------------------------------------ shapes and results

struct Shape {
    std::string name;
    int64_t m, n, k;
    char ta, tb; // 'N' or 'T'
};

struct Result {
    Shape s;
    bool skipped = false;
    double t_us = 0, c_us = 0;          // the figures compared (event median or per-call wall)
    double t_event_us = 0, c_event_us = 0;
    bool wall = false;                  // t_us/c_us are per-call wall times
    double floor_us = 0;
    const char *floor_kind = "";
    double worst_resid = 0;             // tgemm's largest |C - R| / bound over its checked outputs
    int nsets = 1;
};

constexpr double PEAK_FLOPS = 66.9e12;  // FP32 FFMA peak, H100 SXM (shared/PERF.md)
constexpr double PEAK_BYTES = 2.88e12;  // device memory bandwidth, bytes read + written
constexpr int MAX_SETS = 64;
constexpr int WALL_CALLS = 200;         // calls per per-call-wall measurement
constexpr int WALL_ROUNDS = 5;          // median over this many such measurements
constexpr int OVERHEAD_CALLS = 1000;

double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

double now_us()
{
    using namespace std::chrono;
    return duration<double, std::micro>(steady_clock::now().time_since_epoch()).count();
}

tgemm_operation tg_op(char t) { return t == 'N' ? TGEMM_OP_N : TGEMM_OP_T; }
int cb_op(char t) { return t == 'N' ? CUBLAS_OP_N_ : CUBLAS_OP_T_; }

void tgemm_check(tgemm_status st, const char *where)
{
    if (st != TGEMM_SUCCESS)
        die("tgemm_sgemm_ex (%s) returned %d: %s; detail: %s", where, static_cast<int>(st),
            tgemm_status_string(st), tgemm_last_error_detail());
}

// Uniform in (-1, 1), from the 24 high bits of a 32-bit draw: the same stream
// on every platform for a given seed (std::uniform_real_distribution is not).
float uniform_pm1(std::mt19937 &rng)
{
    const uint32_t u = static_cast<uint32_t>(rng()) >> 8;
    return static_cast<float>((static_cast<double>(u) + 0.5) * (1.0 / 8388608.0) - 1.0);
}

// ------------------------------------------------------------------ one shape

// What L2 holds when a timed call starts (--l2; device pointers, event timing):
//   alternate  calls alternate tgemm / cuBLAS, nothing between them (the default)
//   clean      the same, each timed call after a read of twice L2's size
//              (bench/l2flush.cu): L2 holds only clean lines of another buffer
//   dirty      each timed call after a memset of L2's size: L2 full of lines
//              still to be written back, the worst case a call can meet
//   separate   all of tgemm's timed calls back to back, then all of cuBLAS's
enum class L2Mode { alternate, clean, dirty, separate };

extern "C" cudaError_t bench_l2_clean(const void *buf, size_t bytes, float *sink, int blocks, cudaStream_t st);

struct Ctx {
    cudaStream_t stream = nullptr;
    Cublas cb;
    size_t l2_bytes = 0;
    int sm_count = 0;
    L2Mode l2_mode = L2Mode::alternate;
    void *l2_buf = nullptr;  // clean / dirty: 2 x L2 bytes, zeros
    float *l2_sink = nullptr;
    int reps = 30;
    int warmup = 5;
    uint32_t seed = 12345;
    bool ref_kernel = false;  // --reference kernel, or no cublasDgemm_v2
};

// Operands and output of the timed calls. writer names the library whose
// call wrote C last (null: none yet), for the check after timing.
struct Set {
    float *A = nullptr, *B = nullptr, *C = nullptr;
    const char *writer = nullptr;
};

void copy_to_host(std::vector<float> &h, const float *d, size_t count)
{
    h.resize(count);
    CUDA_CHECK(cudaMemcpy(h.data(), d, count * sizeof(float), cudaMemcpyDeviceToHost));
}

// ------------------------------------------------------------------ output check

// The FP64 reference of one set of operands, alpha op(A) op(B) (beta is 0
// in every benchmarked call), in host memory, M x N, leading dimension M.
struct Reference {
    std::unique_ptr<double[]> ref, mag;  // R and G of bench/gemm_check.hpp
    bool warned = false;                 // the warning of check_output given
};

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

// Checks the output C (host memory, leading dimension ldc) of what against
// the reference, on up to 16 threads (a 16384^2 output is 5 GiB to read);
// dies naming the worst element and its bound when any
// element is over its bound or not finite. Returns the largest
// |C - R| / bound. Warns once per reference when the bound exceeds every
// |R|, where even an all-zero C would pass.
double check_output(const std::string &what, const Shape &s, Reference &ref, const float *C, int64_t ldc)
{
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const gemm_check::Report rep = gemm_check::check_parallel(s.m, s.n, C, ldc, ref.ref.get(), s.m, ref.mag.get(),
                                                              s.m, s.k, static_cast<int>(std::min(cores, 16u)));
    if (!rep.passed() || rep.checked != s.m * s.n)
        die("output check of %s failed on %s (%lld x %lld x %lld, %c%c): %s", what.c_str(), s.name.c_str(),
            (long long)s.m, (long long)s.n, (long long)s.k, s.ta, s.tb, gemm_check::describe(rep).c_str());
    if (rep.zero_detectable == 0 && !ref.warned) {
        std::fflush(stdout);
        std::fprintf(stderr, "bench_gemm: warning: %s: at K = %lld the error bound exceeds every element of the "
                     "reference: the check cannot tell this output from an all-zero one\n",
                     s.name.c_str(), (long long)s.k);
        ref.warned = true;
    }
    return rep.worst;
}

Result run_shape(const Shape &s, size_t index, Ctx &ctx)
{
    Result res;
    res.s = s;
    const int64_t M = s.m, N = s.n, K = s.k;
    const int64_t lda = s.ta == 'N' ? M : K, colsA = s.ta == 'N' ? K : M;
    const int64_t ldb = s.tb == 'N' ? K : N, colsB = s.tb == 'N' ? N : K;
    const int64_t ldc = M;
    const size_t nA = static_cast<size_t>(lda * colsA);
    const size_t nB = static_cast<size_t>(ldb * colsB);
    const size_t nC = static_cast<size_t>(ldc * N);
    const size_t set_bytes = (nA + nB + nC) * sizeof(float);
    const float alpha = 1.0f, beta = 0.0f;

    // Cache-resident shapes: rotate through enough distinct A/B/C sets that
    // together they exceed 4x L2, so no call finds its operands in L2.
    int nsets = 1;
    if (set_bytes < 2 * ctx.l2_bytes)
        nsets = static_cast<int>(std::min<size_t>(MAX_SETS, 4 * ctx.l2_bytes / set_bytes + 1));
    res.nsets = nsets;

    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    const size_t margin = size_t(512) << 20; // workspaces of tgemm and cuBLAS
    const size_t need = set_bytes * static_cast<size_t>(nsets);
    if (need + margin > free_b) {
        std::printf("%-*s skipped: needs %.2f GiB of device memory (+0.5 GiB margin), %.2f GiB free\n",
                    16, s.name.c_str(), need / 1073741824.0, free_b / 1073741824.0);
        res.skipped = true;
        return res;
    }

    // Inputs: uniform in (-1, 1), a generator per shape seeded with {seed, index}.
    std::seed_seq sseq{ctx.seed, static_cast<uint32_t>(index)};
    std::mt19937 rng(sseq);
    std::vector<Set> sets(static_cast<size_t>(nsets));
    std::vector<float> hA0(nA), hB0(nB), scratchA, scratchB;
    for (int si = 0; si < nsets; ++si) {
        Set &st = sets[static_cast<size_t>(si)];
        CUDA_CHECK(cudaMalloc(&st.A, nA * sizeof(float)));
        CUDA_CHECK(cudaMalloc(&st.B, nB * sizeof(float)));
        CUDA_CHECK(cudaMalloc(&st.C, nC * sizeof(float)));
        std::vector<float> &hA = si == 0 ? hA0 : scratchA;
        std::vector<float> &hB = si == 0 ? hB0 : scratchB;
        hA.resize(nA);
        hB.resize(nB);
        for (float &x : hA)
            x = uniform_pm1(rng);
        for (float &x : hB)
            x = uniform_pm1(rng);
        CUDA_CHECK(cudaMemcpy(st.A, hA.data(), nA * sizeof(float), cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(st.B, hB.data(), nB * sizeof(float), cudaMemcpyHostToDevice));
        // C is NaN (all bits set). With beta = 0 neither library reads C, so it is
        // never reset between calls; the NaN only makes unwritten elements visible
        // to the output checks below.
        CUDA_CHECK(cudaMemset(st.C, 0xFF, nC * sizeof(float)));
    }
    std::vector<float>().swap(scratchA);
    std::vector<float>().swap(scratchB);

    auto call_tgemm = [&](Set &st) {
        tgemm_check(tgemm_sgemm_ex(TGEMM_LAYOUT_COL_MAJOR, tg_op(s.ta), tg_op(s.tb), M, N, K, alpha,
                                   st.A, lda, st.B, ldb, beta, st.C, ldc, ctx.stream),
                    s.name.c_str());
        st.writer = "tgemm";
    };
    auto call_cublas = [&](Set &st) {
        int status = ctx.cb.sgemm(ctx.cb.handle, cb_op(s.ta), cb_op(s.tb), static_cast<int>(M),
                                  static_cast<int>(N), static_cast<int>(K), &alpha, st.A,
                                  static_cast<int>(lda), st.B, static_cast<int>(ldb), &beta, st.C,
                                  static_cast<int>(ldc));
        if (status != CUBLAS_STATUS_SUCCESS_)
            die("cublasSgemm_v2 (%s) failed with cuBLAS status %d", s.name.c_str(), status);
        st.writer = "cuBLAS";
    };
    auto sync = [&]() {
        CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
        CUDA_CHECK(cudaGetLastError());
    };

    // ---- check both libraries on set 0, before any timing, against the
    // FP64 reference of set 0's operands (kept for the check after timing)
    Reference ref0 = make_reference(s, sets[0].A, lda, sets[0].B, ldb, alpha, ctx);
    std::vector<float> hC;
    {
        std::vector<float> hA, hB;
        auto check_one = [&](const char *lib, bool is_tgemm) -> double {
            CUDA_CHECK(cudaMemsetAsync(sets[0].C, 0xFF, nC * sizeof(float), ctx.stream));
            if (is_tgemm)
                call_tgemm(sets[0]);
            else
                call_cublas(sets[0]);
            sync();
            copy_to_host(hA, sets[0].A, nA);
            copy_to_host(hB, sets[0].B, nB);
            copy_to_host(hC, sets[0].C, nC);
            if (std::memcmp(hA.data(), hA0.data(), nA * sizeof(float)) != 0)
                die("%s modified A on %s", lib, s.name.c_str());
            if (std::memcmp(hB.data(), hB0.data(), nB * sizeof(float)) != 0)
                die("%s modified B on %s", lib, s.name.c_str());
            return check_output(lib, s, ref0, hC.data(), ldc);
        };
        res.worst_resid = check_one("tgemm", true);
        if (ctx.cb.ok)
            check_one("cuBLAS", false);
    }
    std::vector<float>().swap(hA0);
    std::vector<float>().swap(hB0);

    // Rotation: every call, of either library, takes the next set.
    int next_set = 0;
    auto next = [&]() -> Set & {
        Set &st = sets[static_cast<size_t>(next_set)];
        next_set = (next_set + 1) % nsets;
        return st;
    };

    // ---- warm-up, then alternating calls, each between its own pair of events
    for (int w = 0; w < ctx.warmup; ++w) {
        call_tgemm(next());
        if (ctx.cb.ok)
            call_cublas(next());
    }
    sync();

    const int reps = ctx.reps;
    std::vector<cudaEvent_t> ev(static_cast<size_t>(4 * reps));
    for (cudaEvent_t &e : ev)
        CUDA_CHECK(cudaEventCreate(&e));
    // Before each timed call, outside its events: the L2 state of --l2.
    auto prepare_l2 = [&]() {
        if (ctx.l2_mode == L2Mode::clean)
            CUDA_CHECK(bench_l2_clean(ctx.l2_buf, 2 * ctx.l2_bytes, ctx.l2_sink, 2 * ctx.sm_count, ctx.stream));
        else if (ctx.l2_mode == L2Mode::dirty)
            CUDA_CHECK(cudaMemsetAsync(ctx.l2_buf, 0, ctx.l2_bytes, ctx.stream));
    };
    auto timed = [&](bool is_tgemm, size_t b) {
        prepare_l2();
        CUDA_CHECK(cudaEventRecord(ev[b], ctx.stream));
        if (is_tgemm)
            call_tgemm(next());
        else
            call_cublas(next());
        CUDA_CHECK(cudaEventRecord(ev[b + 1], ctx.stream));
    };
    const bool separate = ctx.l2_mode == L2Mode::separate;
    for (int r = 0; r < reps; ++r) {
        timed(true, static_cast<size_t>(4 * r));
        if (ctx.cb.ok && !separate)
            timed(false, static_cast<size_t>(4 * r + 2));
    }
    if (ctx.cb.ok && separate)
        for (int r = 0; r < reps; ++r)
            timed(false, static_cast<size_t>(4 * r + 2));
    sync();
    std::vector<double> tt, tc;
    for (int r = 0; r < reps; ++r) {
        const size_t b = static_cast<size_t>(4 * r);
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, ev[b + 0], ev[b + 1]));
        tt.push_back(1000.0 * ms);
        if (ctx.cb.ok) {
            CUDA_CHECK(cudaEventElapsedTime(&ms, ev[b + 2], ev[b + 3]));
            tc.push_back(1000.0 * ms);
        }
    }
    for (cudaEvent_t &e : ev)
        CUDA_CHECK(cudaEventDestroy(e));
    res.t_event_us = median(tt);
    res.c_event_us = median(tc);
    res.t_us = res.t_event_us;
    res.c_us = res.c_event_us;

    // ---- small shapes: time per call with host overhead included
    const double mnk = static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
    if (mnk <= 512.0 * 512.0 * 512.0) {
        std::vector<double> wt, wc;
        for (int round = 0; round < WALL_ROUNDS; ++round) {
            for (int lib = 0; lib < (ctx.cb.ok ? 2 : 1); ++lib) {
                sync();
                const double t0 = now_us();
                for (int i = 0; i < WALL_CALLS; ++i) {
                    if (lib == 0)
                        call_tgemm(next());
                    else
                        call_cublas(next());
                }
                CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
                const double t1 = now_us();
                (lib == 0 ? wt : wc).push_back((t1 - t0) / WALL_CALLS);
            }
        }
        sync();
        res.wall = true;
        res.t_us = median(wt);
        res.c_us = median(wc);
    }

    // ---- after timing: the C of every set, as the benchmark's last call on
    // it left it, against the reference of that set's operands
    sync();
    for (size_t si = 0; si < sets.size(); ++si) {
        Set &st = sets[si];
        if (!st.writer)
            continue;
        Reference other;
        if (si != 0)
            other = make_reference(s, st.A, lda, st.B, ldb, alpha, ctx);
        Reference &ref = si == 0 ? ref0 : other;
        copy_to_host(hC, st.C, nC);
        const std::string what = std::string(st.writer) + " (its last call on set " + std::to_string(si) + ")";
        const double worst = check_output(what, s, ref, hC.data(), ldc);
        if (std::strcmp(st.writer, "tgemm") == 0)
            res.worst_resid = std::max(res.worst_resid, worst);
    }

    for (Set &st : sets) {
        CUDA_CHECK(cudaFree(st.A));
        CUDA_CHECK(cudaFree(st.B));
        CUDA_CHECK(cudaFree(st.C));
    }

    const double compute_us = 2.0 * mnk / PEAK_FLOPS * 1e6;
    const double bytes = 4.0 * (static_cast<double>(M) * K + static_cast<double>(K) * N +
                                static_cast<double>(M) * N);
    const double memory_us = bytes / PEAK_BYTES * 1e6;
    res.floor_us = std::max(compute_us, memory_us);
    res.floor_kind = compute_us >= memory_us ? "compute" : "memory";
    return res;
}

// ------------------------------------------------------------------ host overhead

// Host-side cost of one call with device pointers, 64 x 64 x 64: median over
// OVERHEAD_CALLS calls of the wall time from before the call to its return.
// The stream is drained every 100 calls, outside the timed region. Each
// library's last output is checked like any other.
void host_overhead(Ctx &ctx)
{
    const int64_t n = 64;
    const size_t count = static_cast<size_t>(n * n);
    const float alpha = 1.0f, beta = 0.0f;
    float *A = nullptr, *B = nullptr, *C = nullptr;
    CUDA_CHECK(cudaMalloc(&A, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&B, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&C, count * sizeof(float)));
    std::vector<float> h(count);
    std::mt19937 rng(ctx.seed);
    for (float &x : h)
        x = uniform_pm1(rng);
    CUDA_CHECK(cudaMemcpy(A, h.data(), count * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(B, h.data(), count * sizeof(float), cudaMemcpyHostToDevice));
    const Shape shape{"overhead64", n, n, n, 'N', 'N'};
    Reference ref = make_reference(shape, A, n, B, n, alpha, ctx);

    for (int lib = 0; lib < (ctx.cb.ok ? 2 : 1); ++lib) {
        CUDA_CHECK(cudaMemsetAsync(C, 0xFF, count * sizeof(float), ctx.stream));
        auto call = [&]() {
            if (lib == 0) {
                tgemm_check(tgemm_sgemm_ex(TGEMM_LAYOUT_COL_MAJOR, TGEMM_OP_N, TGEMM_OP_N, n, n, n,
                                           alpha, A, n, B, n, beta, C, n, ctx.stream),
                            "host overhead 64^3");
            } else {
                int st = ctx.cb.sgemm(ctx.cb.handle, CUBLAS_OP_N_, CUBLAS_OP_N_, 64, 64, 64, &alpha,
                                      A, 64, B, 64, &beta, C, 64);
                if (st != CUBLAS_STATUS_SUCCESS_)
                    die("cublasSgemm_v2 (host overhead 64^3) failed with cuBLAS status %d", st);
            }
        };
        for (int i = 0; i < 20; ++i) // warm-up: first-call initialisation
            call();
        std::vector<double> samples;
        samples.reserve(OVERHEAD_CALLS);
        for (int i = 0; i < OVERHEAD_CALLS; ++i) {
            if (i % 100 == 0) {
                CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
                CUDA_CHECK(cudaGetLastError());
            }
            const double t0 = now_us();
            call();
            const double t1 = now_us();
            samples.push_back(t1 - t0);
        }
        CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
        CUDA_CHECK(cudaGetLastError());
        copy_to_host(h, C, count);
        check_output(lib == 0 ? "tgemm" : "cuBLAS", shape, ref, h.data(), n);
        std::printf("%s host overhead per call: %.2f us (64x64x64, device pointers, median of %d)\n",
                    lib == 0 ? "tgemm" : "cublasSgemm_v2", median(samples), OVERHEAD_CALLS);
    }
    if (!ctx.cb.ok)
        std::printf("cublasSgemm_v2 host overhead per call: n/a (cuBLAS not loaded)\n");
    CUDA_CHECK(cudaFree(A));
    CUDA_CHECK(cudaFree(B));
    CUDA_CHECK(cudaFree(C));
}

// ------------------------------------------------------------------ command line

void usage(FILE *f)
{
    std::fprintf(f,
        "usage: bench_gemm [--suite] [--squares] [--host] [--shape M N K TA TB]... [--csv PATH]\n"
        "                  [--reps N] [--warmup N] [--seed N] [--l2 MODE] [--reference cublas|kernel]\n"
        "  --suite            the standard shape suite\n"
        "  --host             operands in host memory instead: pageable and pinned against the\n"
        "                     naive cuBLAS path and the multiply alone (the host suite, or --shape)\n"
        "  --squares          square NN sizes 32 ... 16384 (powers of 2)\n"
        "  --shape M N K TA TB  one column-major shape, TA/TB = N or T (repeatable)\n"
        "  --csv PATH         one row per shape (parent directory is created)\n"
        "  --reps N           timed calls per library (default 30, at least 20 used)\n"
        "  --warmup N         untimed calls per library first (default 5)\n"
        "  --seed N           seed of the input generator (default 12345)\n"
        "  --l2 MODE          L2 before each event-timed call: alternate (default: calls of\n"
        "                     tgemm and cuBLAS in turn), clean (after a read of 2x L2),\n"
        "                     dirty (after a memset of L2's size), separate (each library's\n"
        "                     calls back to back)\n"
        "  --reference R      the FP64 reference of the output check: cublas (cublasDgemm_v2, the\n"
        "                     default when cuBLAS loads) or kernel (the benchmark's own FP64 kernel,\n"
        "                     slower; the default without cuBLAS)\n");
}

long long parse_int(const char *s, const char *what, long long lo, long long hi)
{
    char *end = nullptr;
    errno = 0;
    long long v = std::strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) {
        std::fprintf(stderr, "bench_gemm: %s: '%s' is not an integer in [%lld, %lld]\n", what, s,
                     lo, hi);
        usage(stderr);
        std::exit(2);
    }
    return v;
}

char parse_op(const char *s, const char *what)
{
    if ((s[0] == 'N' || s[0] == 'n') && s[1] == '\0')
        return 'N';
    if ((s[0] == 'T' || s[0] == 't') && s[1] == '\0')
        return 'T';
    std::fprintf(stderr, "bench_gemm: %s: '%s' is not N or T\n", what, s);
    usage(stderr);
    std::exit(2);
}

std::vector<Shape> suite_shapes()
{
    return {
        {"sq8192", 8192, 8192, 8192, 'N', 'N'},
        {"sq4096_nn", 4096, 4096, 4096, 'N', 'N'},
        {"sq4096_nt", 4096, 4096, 4096, 'N', 'T'},
        {"sq4096_tn", 4096, 4096, 4096, 'T', 'N'},
        {"sq4096_tt", 4096, 4096, 4096, 'T', 'T'},
        {"sq2048", 2048, 2048, 2048, 'N', 'N'},
        {"sq1024", 1024, 1024, 1024, 'N', 'N'},
        {"odd4095", 4095, 4095, 4095, 'N', 'N'},
        {"odd1000", 1000, 1000, 1000, 'N', 'N'},
        {"ragged", 4097, 513, 1023, 'N', 'N'},
        {"lowk", 4096, 4096, 128, 'N', 'N'},
        {"rank32", 8192, 8192, 32, 'N', 'N'},
        {"skinny_m16", 16, 4096, 4096, 'N', 'N'},
        {"skinny_n16", 4096, 16, 4096, 'N', 'N'},
        {"gemv_m1", 1, 4096, 4096, 'N', 'N'},
        {"gemv_n1", 4096, 1, 4096, 'N', 'N'},
        {"bigk", 256, 256, 8192, 'N', 'N'},
        {"small512", 512, 512, 512, 'N', 'N'},
        {"small128", 128, 128, 128, 'N', 'N'},
        {"tiny32", 32, 32, 32, 'N', 'N'},
    };
}

void print_header(int w)
{
    std::printf("%-*s %6s %6s %6s %2s %2s %9s %9s %7s %11s %11s %10s %-7s %7s %8s  %s\n", w, "name",
                "M", "N", "K", "ta", "tb", "tgemm_TF", "cublas_TF", "ratio", "tgemm_us",
                "cublas_us", "floor_us", "bound", "%floor", "resid", "timing");
}

std::string fmt(const char *f, double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

// ------------------------------------------------------------------ host operands (--host)

// Link speeds of the H100 machine with pinned memory (shared/PERF.md). The
// floor of a call on host operands is the larger of its transfer time at
// these speeds (A and B in, C out; both directions can run at once) and the
// multiply alone on device pointers, tgemm's, measured in the same run.
constexpr double LINK_IN = 55e9;    // bytes/s, host to device
constexpr double LINK_OUT = 37e9;   // device to host
constexpr double LINK_BOTH = 98e9;  // both directions at once, added

std::vector<Shape> host_shapes()
{
    return {
        {"host_sq8192", 8192, 8192, 8192, 'N', 'N'},
        {"host_sq4096", 4096, 4096, 4096, 'N', 'N'},
        {"host_16kx16kx1k", 16384, 16384, 1024, 'N', 'N'},
        {"host_2kx2kx32k", 2048, 2048, 32768, 'N', 'N'},
    };
}

// What is timed for each shape: tgemm_sgemm on pageable and on pinned host
// operands; the naive path (copy A and B in, cublasSgemm, copy C out, one
// stream) from the same memory; the multiply alone on device pointers.
enum HostPath { TGEMM_PAGEABLE, TGEMM_PINNED, NAIVE_PAGEABLE, NAIVE_PINNED, TGEMM_DEVICE, CUBLAS_DEVICE, NPATHS };
const char *const HOST_PATH_LIB[NPATHS] = {"tgemm", "tgemm", "naive_cublas", "naive_cublas", "tgemm", "cublas"};
const char *const HOST_PATH_MEM[NPATHS] = {"pageable", "pinned", "pageable", "pinned", "device", "device"};

bool uses_cublas(int path)
{
    return path == NAIVE_PAGEABLE || path == NAIVE_PINNED || path == CUBLAS_DEVICE;
}

// The naive time a path is compared with: the same memory, pinned for device rows.
int naive_of(int path)
{
    return path == TGEMM_PAGEABLE || path == NAIVE_PAGEABLE ? NAIVE_PAGEABLE : NAIVE_PINNED;
}

struct HostResult {
    Shape s;
    bool skipped = false;
    double ms[NPATHS] = {};
    double resid[NPATHS] = {};
    bool have[NPATHS] = {};
    double transfer_ms = 0, floor_ms = 0;
    const char *floor_kind = "";
};

// Pinned host memory, freed on scope exit.
struct PinnedBuffer {
    float *p = nullptr;
    explicit PinnedBuffer(size_t count) { CUDA_CHECK(cudaMallocHost(&p, count * sizeof(float))); }
    ~PinnedBuffer() { cudaFreeHost(p); }
    PinnedBuffer(const PinnedBuffer &) = delete;
    PinnedBuffer &operator=(const PinnedBuffer &) = delete;
};

struct DeviceBuffer {
    float *p = nullptr;
    explicit DeviceBuffer(size_t count) { CUDA_CHECK(cudaMalloc(&p, count * sizeof(float))); }
    ~DeviceBuffer() { cudaFree(p); }
    DeviceBuffer(const DeviceBuffer &) = delete;
    DeviceBuffer &operator=(const DeviceBuffer &) = delete;
};

HostResult run_host_shape(const Shape &s, size_t index, Ctx &ctx)
{
    HostResult res;
    res.s = s;
    const int64_t M = s.m, N = s.n, K = s.k;
    const int64_t lda = s.ta == 'N' ? M : K, colsA = s.ta == 'N' ? K : M;
    const int64_t ldb = s.tb == 'N' ? K : N, colsB = s.tb == 'N' ? N : K;
    const int64_t ldc = M;
    const size_t nA = static_cast<size_t>(lda * colsA), nB = static_cast<size_t>(ldb * colsB);
    const size_t nC = static_cast<size_t>(ldc * N);
    const float alpha = 1.0f, beta = 0.0f;

    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    const size_t need = (nA + nB + nC) * sizeof(float) + (size_t(1) << 30);  // + tgemm's tile buffers, workspaces
    if (need > free_b) {
        std::printf("%s skipped: needs %.2f GiB of device memory, %.2f GiB free\n", s.name.c_str(),
                    need / 1073741824.0, free_b / 1073741824.0);
        res.skipped = true;
        return res;
    }

    // Inputs uniform in (-1, 1); pageable A and B are these vectors. C is
    // NaN before every checked call, and written (touched) beforehand, as
    // an application's C would be.
    std::seed_seq sseq{ctx.seed, static_cast<uint32_t>(index)};
    std::mt19937 rng(sseq);
    std::vector<float> hA(nA), hB(nB), hC(nC);
    for (float &x : hA)
        x = uniform_pm1(rng);
    for (float &x : hB)
        x = uniform_pm1(rng);
    PinnedBuffer pA(nA), pB(nB), pC(nC);
    std::memcpy(pA.p, hA.data(), nA * sizeof(float));
    std::memcpy(pB.p, hB.data(), nB * sizeof(float));
    DeviceBuffer dA(nA), dB(nB), dC(nC);
    CUDA_CHECK(cudaMemcpy(dA.p, hA.data(), nA * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dB.p, hB.data(), nB * sizeof(float), cudaMemcpyHostToDevice));
    // Every path's output is checked against this one reference: the device
    // copies hold the values of the host operands every path reads.
    Reference ref = make_reference(s, dA.p, lda, dB.p, ldb, alpha, ctx);

    auto sync = [&]() {
        CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
        CUDA_CHECK(cudaGetLastError());
    };
    auto cublas_sgemm = [&](const float *a, const float *b, float *c) {
        int status = ctx.cb.sgemm(ctx.cb.handle, cb_op(s.ta), cb_op(s.tb), static_cast<int>(M), static_cast<int>(N),
                                  static_cast<int>(K), &alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb),
                                  &beta, c, static_cast<int>(ldc));
        if (status != CUBLAS_STATUS_SUCCESS_)
            die("cublasSgemm_v2 (%s) failed with cuBLAS status %d", s.name.c_str(), status);
    };
    // Each path runs to completion: C is in place when it returns. writer
    // holds the last path to write C in pageable, pinned and device memory.
    enum { C_PAGEABLE, C_PINNED, C_DEVICE, C_BUFFERS };
    int writer[C_BUFFERS] = {-1, -1, -1};
    auto call = [&](int path) {
        switch (path) {
        case TGEMM_PAGEABLE:
        case TGEMM_PINNED: {
            const bool pin = path == TGEMM_PINNED;
            tgemm_check(tgemm_sgemm(tg_op(s.ta), tg_op(s.tb), M, N, K, alpha, pin ? pA.p : hA.data(), lda,
                                    pin ? pB.p : hB.data(), ldb, beta, pin ? pC.p : hC.data(), ldc),
                        HOST_PATH_MEM[path]);
            writer[pin ? C_PINNED : C_PAGEABLE] = path;
            break;
        }
        case NAIVE_PAGEABLE:
        case NAIVE_PINNED: {
            const bool pin = path == NAIVE_PINNED;
            CUDA_CHECK(cudaMemcpyAsync(dA.p, pin ? pA.p : hA.data(), nA * sizeof(float), cudaMemcpyHostToDevice,
                                       ctx.stream));
            CUDA_CHECK(cudaMemcpyAsync(dB.p, pin ? pB.p : hB.data(), nB * sizeof(float), cudaMemcpyHostToDevice,
                                       ctx.stream));
            cublas_sgemm(dA.p, dB.p, dC.p);
            CUDA_CHECK(cudaMemcpyAsync(pin ? pC.p : hC.data(), dC.p, nC * sizeof(float), cudaMemcpyDeviceToHost,
                                       ctx.stream));
            sync();
            writer[pin ? C_PINNED : C_PAGEABLE] = path;
            writer[C_DEVICE] = path;
            break;
        }
        case TGEMM_DEVICE:
            tgemm_check(tgemm_sgemm_ex(TGEMM_LAYOUT_COL_MAJOR, tg_op(s.ta), tg_op(s.tb), M, N, K, alpha, dA.p, lda,
                                       dB.p, ldb, beta, dC.p, ldc, ctx.stream),
                        "device pointers");
            sync();
            writer[C_DEVICE] = path;
            break;
        case CUBLAS_DEVICE:
            cublas_sgemm(dA.p, dB.p, dC.p);
            sync();
            writer[C_DEVICE] = path;
            break;
        }
    };
    // C in host memory as it stands; C in device memory copied out first.
    std::vector<float> out;
    auto host_view = [&](int buffer) -> const float * {
        if (buffer == C_DEVICE) {
            copy_to_host(out, dC.p, nC);
            return out.data();
        }
        return buffer == C_PINNED ? pC.p : hC.data();
    };
    auto buffer_of = [](int path) {
        return path == TGEMM_PINNED || path == NAIVE_PINNED ? C_PINNED : path >= TGEMM_DEVICE ? C_DEVICE : C_PAGEABLE;
    };

    // ---- check every path once (this is also its warm-up)
    for (int path = 0; path < NPATHS; ++path) {
        if (uses_cublas(path) && !ctx.cb.ok)
            continue;
        const int buffer = buffer_of(path);
        if (buffer == C_DEVICE)
            CUDA_CHECK(cudaMemsetAsync(dC.p, 0xFF, nC * sizeof(float), ctx.stream));
        else
            std::memset(buffer == C_PINNED ? pC.p : hC.data(), 0xFF, nC * sizeof(float));
        call(path);
        const std::string lib = std::string(HOST_PATH_LIB[path]) + " " + HOST_PATH_MEM[path];
        res.resid[path] = check_output(lib, s, ref, host_view(buffer), ldc);
        res.have[path] = true;
    }
    if (std::memcmp(pA.p, hA.data(), nA * sizeof(float)) != 0 || std::memcmp(pB.p, hB.data(), nB * sizeof(float)) != 0)
        die("A or B in pinned memory was modified on %s", s.name.c_str());

    // ---- timed: every path in turn, reps times; wall clock, median
    std::vector<double> samples[NPATHS];
    for (int r = 0; r < ctx.reps; ++r)
        for (int path = 0; path < NPATHS; ++path) {
            if (!res.have[path])
                continue;
            const double t0 = now_us();
            call(path);
            samples[path].push_back((now_us() - t0) / 1000.0);
        }
    for (int path = 0; path < NPATHS; ++path)
        res.ms[path] = median(samples[path]);

    // ---- after timing: C in each memory as the last timed call left it
    for (int buffer = 0; buffer < C_BUFFERS; ++buffer) {
        const int path = writer[buffer];
        if (path < 0)
            continue;
        static const char *const mem[C_BUFFERS] = {"pageable", "pinned", "device"};
        const std::string what = std::string(HOST_PATH_LIB[path]) + " " + HOST_PATH_MEM[path] + " (C in " +
                                 mem[buffer] + " memory after its last timed call)";
        res.resid[path] = std::max(res.resid[path], check_output(what, s, ref, host_view(buffer), ldc));
    }

    const double in_bytes = 4.0 * (static_cast<double>(nA) + static_cast<double>(nB));
    const double out_bytes = 4.0 * static_cast<double>(nC);
    res.transfer_ms = 1000.0 * std::max({in_bytes / LINK_IN, out_bytes / LINK_OUT, (in_bytes + out_bytes) / LINK_BOTH});
    res.floor_ms = std::max(res.transfer_ms, res.ms[TGEMM_DEVICE]);
    res.floor_kind = res.transfer_ms >= res.ms[TGEMM_DEVICE] ? "link" : "multiply";
    return res;
}

void print_host_header(int w)
{
    std::printf("%-*s %6s %6s %6s %2s %2s %-12s %-8s %10s %8s %8s %7s %7s %10s %-8s %8s\n", w, "name", "M", "N", "K",
                "ta", "tb", "path", "memory", "time_ms", "TFLOP/s", "vs_naive", "x_mult", "%floor", "floor_ms",
                "bound", "resid");
}

// One table row per timed path, and the targets of the 8192^3 shape.
void report_host(const HostResult &r, int w, FILE *csv, const std::string &csv_path)
{
    const Shape &s = r.s;
    const double flops = 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
    for (int path = 0; path < NPATHS; ++path) {
        if (!r.have[path])
            continue;
        const double ms = r.ms[path];
        const bool have_naive = r.have[naive_of(path)];
        const std::string vs_naive = have_naive ? fmt("%.2f", r.ms[naive_of(path)] / ms) : "n/a";
        const double x_mult = ms / r.ms[TGEMM_DEVICE];
        const double pct = 100.0 * r.floor_ms / ms;
        std::printf("%-*s %6lld %6lld %6lld %2c %2c %-12s %-8s %10.2f %8.2f %8s %7.3f %6.1f%% %10.2f %-8s %8.1e\n", w,
                    s.name.c_str(), (long long)s.m, (long long)s.n, (long long)s.k, s.ta, s.tb, HOST_PATH_LIB[path],
                    HOST_PATH_MEM[path], ms, flops / (ms * 1e-3) / 1e12, vs_naive.c_str(), x_mult, pct, r.floor_ms,
                    r.floor_kind, r.resid[path]);
        if (csv) {
            std::fprintf(csv, "%s,%lld,%lld,%lld,%c,%c,%s,%s,%.3f,%.4f,%s,%.4f,%.3f,%s,%.2f,%.3e\n", s.name.c_str(),
                         (long long)s.m, (long long)s.n, (long long)s.k, s.ta, s.tb, HOST_PATH_LIB[path],
                         HOST_PATH_MEM[path], ms, flops / (ms * 1e-3) / 1e12, vs_naive.c_str(), x_mult, r.floor_ms,
                         r.floor_kind, pct, r.resid[path]);
            std::fflush(csv);
            if (std::ferror(csv))
                die("writing %s failed", csv_path.c_str());
        }
    }
}

// The targets for 8192^3 NN, from one shape's result.
void host_targets(const HostResult &r)
{
    const auto line = [](const char *what, double value, const char *op, double target, bool met) {
        std::printf("  %-52s %7.2f  (target %s %.2f)  %s\n", what, value, op, target, met ? "met" : "MISSED");
    };
    std::printf("\ntargets, %s (%lld x %lld x %lld %c%c):\n", r.s.name.c_str(), (long long)r.s.m, (long long)r.s.n,
                (long long)r.s.k, r.s.ta, r.s.tb);
    if (r.have[NAIVE_PAGEABLE]) {
        const double x = r.ms[NAIVE_PAGEABLE] / r.ms[TGEMM_PAGEABLE];
        line("pageable: naive cuBLAS path time / tgemm time", x, ">=", 4.0, x >= 4.0);
    }
    const double pg = r.ms[TGEMM_PAGEABLE] / r.ms[TGEMM_DEVICE], pn = r.ms[TGEMM_PINNED] / r.ms[TGEMM_DEVICE];
    line("pageable: tgemm time / tgemm multiply alone", pg, "<=", 1.3, pg <= 1.3);
    line("pinned: tgemm time / tgemm multiply alone", pn, "<=", 1.15, pn <= 1.15);
}

// ------------------------------------------------------------------ both modes

// Closes the CSV file and releases the stream and cuBLAS.
void finish(Ctx &ctx, FILE *csv, const std::string &csv_path)
{
    if (csv) {
        if (std::fclose(csv) != 0)
            die("closing %s failed", csv_path.c_str());
        std::printf("csv: %s\n", csv_path.c_str());
    }
    CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    if (ctx.cb.ok)
        cublas_check(ctx.cb.destroy(ctx.cb.handle), "cublasDestroy_v2");
    if (ctx.cb.ok && ctx.cb.ref_handle)
        cublas_check(ctx.cb.destroy(ctx.cb.ref_handle), "cublasDestroy_v2 (reference)");
    CUDA_CHECK(cudaStreamDestroy(ctx.stream));
    CUDA_CHECK(cudaFree(ctx.l2_buf));
    CUDA_CHECK(cudaFree(ctx.l2_sink));
}

// --host: the table, one row per path of every shape, then the targets of
// 8192^3 NN when it was measured.
void run_host_suite(const std::vector<Shape> &shapes, Ctx &ctx, FILE *csv, const std::string &csv_path)
{
    int w = 4;
    for (const Shape &s : shapes)
        w = std::max(w, static_cast<int>(s.name.size()));
    std::printf("\n");
    print_host_header(w);
    std::vector<HostResult> results;
    for (size_t idx = 0; idx < shapes.size(); ++idx) {
        std::fflush(stdout);
        const HostResult r = run_host_shape(shapes[idx], idx, ctx);
        if (r.skipped)
            continue;
        report_host(r, w, csv, csv_path);
        results.push_back(r);
    }
    std::printf("\nresid = largest |C - R| / bound over the path's checked outputs (must be <= 1); every path was "
                "checked before timing, and C in each memory after\n");
    std::printf("all %zu measured shapes checked; %zu skipped%s\n", results.size(), shapes.size() - results.size(),
                ctx.cb.ok ? "" : "; cuBLAS not loaded: no naive path, vs_naive n/a");
    for (const HostResult &r : results)
        if (r.s.m == 8192 && r.s.n == 8192 && r.s.k == 8192 && r.s.ta == 'N' && r.s.tb == 'N')
            host_targets(r);
    finish(ctx, csv, csv_path);
}

} // namespace

int main(int argc, char **argv)
{
    Ctx ctx;
    std::vector<Shape> shapes;
    std::string csv_path;
    bool any = false;
    long long reps = -1, warmup = 5;  // reps: 30 by default, at least 20; with --host 9, at least 5
    bool host = false;
    std::string reference;  // --reference: "cublas", "kernel" or "" (cuBLAS when it loads)

    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto need = [&](int count) {
            if (i + count >= argc) {
                std::fprintf(stderr, "bench_gemm: %s needs %d argument(s)\n", a.c_str(), count);
                usage(stderr);
                std::exit(2);
            }
        };
        if (a == "--suite") {
            for (const Shape &s : suite_shapes())
                shapes.push_back(s);
            any = true;
        } else if (a == "--squares") {
            for (int64_t n = 32; n <= 16384; n *= 2)
                shapes.push_back({"sq" + std::to_string(n), n, n, n, 'N', 'N'});
            any = true;
        } else if (a == "--host") {
            host = true;
            any = true;
        } else if (a == "--shape") {
            need(5);
            Shape s;
            s.m = parse_int(argv[i + 1], "--shape M", 1, INT_MAX);
            s.n = parse_int(argv[i + 2], "--shape N", 1, INT_MAX);
            s.k = parse_int(argv[i + 3], "--shape K", 1, INT_MAX);
            s.ta = parse_op(argv[i + 4], "--shape TA");
            s.tb = parse_op(argv[i + 5], "--shape TB");
            s.name = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) +
                     "_" + static_cast<char>(s.ta + 32) + static_cast<char>(s.tb + 32);
            shapes.push_back(s);
            any = true;
            i += 5;
        } else if (a == "--csv") {
            need(1);
            csv_path = argv[++i];
        } else if (a == "--reps") {
            need(1);
            reps = parse_int(argv[++i], "--reps", 1, 1000000);
        } else if (a == "--warmup") {
            need(1);
            warmup = parse_int(argv[++i], "--warmup", 0, 1000000);
        } else if (a == "--seed") {
            need(1);
            ctx.seed = static_cast<uint32_t>(parse_int(argv[++i], "--seed", 0, UINT32_MAX));
        } else if (a == "--reference") {
            need(1);
            const std::string m = argv[++i];
            if (m == "cublas" || m == "kernel") {
                reference = m;
            } else {
                std::fprintf(stderr, "bench_gemm: --reference takes cublas or kernel, not '%s'\n", m.c_str());
                return 2;
            }
        } else if (a == "--l2") {
            need(1);
            const std::string m = argv[++i];
            if (m == "alternate")
                ctx.l2_mode = L2Mode::alternate;
            else if (m == "clean")
                ctx.l2_mode = L2Mode::clean;
            else if (m == "dirty")
                ctx.l2_mode = L2Mode::dirty;
            else if (m == "separate")
                ctx.l2_mode = L2Mode::separate;
            else {
                std::fprintf(stderr, "bench_gemm: --l2 takes alternate, clean, dirty or separate, not '%s'\n",
                             m.c_str());
                return 2;
            }
        } else if (a == "--help" || a == "-h") {
            usage(stdout);
            return 0;
        } else {
            std::fprintf(stderr, "bench_gemm: unknown argument '%s'\n", a.c_str());
            usage(stderr);
            return 2;
        }
    }
    if (!any) {
        std::fprintf(stderr, "bench_gemm: nothing to run: give --suite, --squares or --shape\n");
        usage(stderr);
        return 2;
    }
    if (host && shapes.empty())
        shapes = host_shapes();
    const long long min_reps = host ? 5 : 20;
    ctx.reps = static_cast<int>(std::max(reps < 0 ? (host ? 9 : 30) : reps, min_reps));
    ctx.warmup = static_cast<int>(warmup);

    // The CSV file is opened first, so that a bad path fails before any work.
    FILE *csv = nullptr;
    if (!csv_path.empty()) {
        std::filesystem::path p(csv_path);
        if (p.has_parent_path()) {
            std::error_code ec;
            std::filesystem::create_directories(p.parent_path(), ec);
            if (ec)
                die("cannot create directory %s: %s", p.parent_path().c_str(), ec.message().c_str());
        }
        csv = std::fopen(csv_path.c_str(), "w");
        if (!csv)
            die("cannot open %s for writing: %s", csv_path.c_str(), std::strerror(errno));
        if (host)
            std::fprintf(csv, "name,m,n,k,ta,tb,path,memory,time_ms,tflops,vs_naive,x_multiply,floor_ms,"
                              "floor_kind,pct_of_floor,resid\n");
        else
            std::fprintf(csv, "name,m,n,k,ta,tb,tgemm_us,cublas_us,tgemm_tflops,cublas_tflops,ratio,"
                              "floor_us,floor_kind,pct_of_floor,timing\n");
        std::fflush(csv);
    }

    // ---- device
    int dev = 0, ndev = 0;
    CUDA_CHECK(cudaGetDeviceCount(&ndev));
    if (ndev < 1)
        die("no CUDA device");
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaFree(nullptr)); // create the context now
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    int sms = 0, clock_khz = 0, l2 = 0, driver = 0, runtime = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    CUDA_CHECK(cudaDriverGetVersion(&driver));
    CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    ctx.l2_bytes = static_cast<size_t>(l2);
    ctx.sm_count = sms;
    if (ctx.l2_mode == L2Mode::clean || ctx.l2_mode == L2Mode::dirty) {
        CUDA_CHECK(cudaMalloc(&ctx.l2_buf, 2 * ctx.l2_bytes));
        CUDA_CHECK(cudaMemset(ctx.l2_buf, 0, 2 * ctx.l2_bytes));
        CUDA_CHECK(cudaMalloc(&ctx.l2_sink, sizeof(float)));
    }
    std::printf("device %d: %s, %d SMs, SM clock %.0f MHz (max), L2 %.1f MiB, memory %.1f GiB "
                "(%.1f GiB free)\n",
                dev, prop.name, sms, clock_khz / 1000.0, l2 / 1048576.0, total_b / 1073741824.0,
                free_b / 1073741824.0);
    std::printf("CUDA driver %d.%d, runtime %d.%d; tgemm %s (header %s)\n", driver / 1000,
                (driver % 1000) / 10, runtime / 1000, (runtime % 1000) / 10,
                tgemm_version_string(), TGEMM_VERSION_STRING);
    const char *raised = reps >= 0 && reps < min_reps ? " (raised to the minimum)" : "";
    if (host) {
        std::printf("seed %u (inputs uniform in (-1,1), mt19937 seeded with {seed, shape index}); reps %d%s; "
                    "alpha 1, beta 0, column-major, operands in host memory\n",
                    ctx.seed, ctx.reps, raised);
        std::printf("time = wall clock of one call to its return (C in place), median of the reps, every path in "
                    "turn; the checked first call of each path is its warm-up\n");
        std::printf("floor = max(transfer, tgemm's multiply alone on device pointers), transfer = max(in / %.0f GB/s, "
                    "out / %.0f GB/s, (in + out) / %.0f GB/s) (pinned link, shared/PERF.md), in = A + B, out = C\n",
                    LINK_IN / 1e9, LINK_OUT / 1e9, LINK_BOTH / 1e9);
        std::printf("vs_naive = naive path's time from the same memory (pinned for device rows) / time; x_mult = "
                    "time / tgemm's multiply alone; %%floor = floor / time\n");
    } else {
        std::printf("seed %u (inputs uniform in (-1,1), mt19937 seeded with {seed, shape index}); "
                    "reps %d%s, warm-up %d; alpha 1, beta 0, column-major, device pointers\n",
                    ctx.seed, ctx.reps, raised, ctx.warmup);
        std::printf("floor = max(2MNK / %.1f TFLOP/s, 4(MK+KN+MN) bytes / %.2f TB/s); %%floor = "
                    "floor / tgemm time\n",
                    PEAK_FLOPS / 1e12, PEAK_BYTES / 1e12);
        static const char *const l2_text[] = {
            "calls alternating tgemm/cuBLAS",
            "calls alternating tgemm/cuBLAS, each after a read of 2x L2 (--l2 clean)",
            "calls alternating tgemm/cuBLAS, each after a memset of L2's size (--l2 dirty)",
            "each library's calls back to back (--l2 separate)"};
        std::printf("timing: event = median of per-call CUDA events, %s; "
                    "per_call_wall (M*N*K <= 512^3) = wall time of %d back-to-back calls + one sync, "
                    "/ %d, median of %d\n",
                    l2_text[static_cast<int>(ctx.l2_mode)], WALL_CALLS, WALL_CALLS, WALL_ROUNDS);
    }

    CUDA_CHECK(cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking));
    cublas_load(ctx.cb, ctx.stream);
    if (reference == "cublas" && (!ctx.cb.ok || !ctx.cb.dgemm))
        die("--reference cublas: cublasDgemm_v2 is not available");
    ctx.ref_kernel = reference == "kernel" || !ctx.cb.ok || !ctx.cb.dgemm;
    std::printf("output check: every timed configuration, before timing and after, element by element: "
                "|C - R| <= gamma_{K+2} |alpha| (|A||B|) with u = 2^-24 (bench/gemm_check.hpp); R and |A||B| in "
                "FP64 from %s\n",
                ctx.ref_kernel ? "the benchmark's own FP64 kernel" : "cublasDgemm_v2");
    if (host) {
        run_host_suite(shapes, ctx, csv, csv_path);
        return 0;
    }
    host_overhead(ctx);
    std::printf("\n");

    int w = 4;
    for (const Shape &s : shapes)
        w = std::max(w, static_cast<int>(s.name.size()));
    print_header(w);

    std::vector<Result> results;
    for (size_t idx = 0; idx < shapes.size(); ++idx) {
        const Shape &s = shapes[idx];
        std::fflush(stdout);
        Result r = run_shape(s, idx, ctx);
        if (r.skipped)
            continue;
        const double flops = 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) *
                             static_cast<double>(s.k);
        const double ttf = flops / (r.t_us * 1e-6) / 1e12;
        const bool have_c = ctx.cb.ok;
        const double ctf = have_c ? flops / (r.c_us * 1e-6) / 1e12 : 0;
        const double ratio = have_c ? r.c_us / r.t_us : 0;
        const double pct = 100.0 * r.floor_us / r.t_us;
        std::string timing = r.wall ? "per_call_wall" : "event";
        if (r.wall)
            timing += " (events: tgemm " + fmt("%.2f", r.t_event_us) + " us" +
                      (have_c ? ", cuBLAS " + fmt("%.2f", r.c_event_us) + " us" : "") + ")";
        if (r.nsets > 1)
            timing += " [" + std::to_string(r.nsets) + " sets]";
        std::printf("%-*s %6lld %6lld %6lld %2c %2c %9.2f %9s %7s %11.2f %11s %10.2f %-7s %6.1f%% "
                    "%8.1e  %s\n",
                    w, s.name.c_str(), (long long)s.m, (long long)s.n, (long long)s.k, s.ta, s.tb,
                    ttf, have_c ? fmt("%.2f", ctf).c_str() : "n/a",
                    have_c ? fmt("%.3f", ratio).c_str() : "n/a", r.t_us,
                    have_c ? fmt("%.2f", r.c_us).c_str() : "n/a", r.floor_us, r.floor_kind, pct,
                    r.worst_resid, timing.c_str());
        if (csv) {
            std::fprintf(csv, "%s,%lld,%lld,%lld,%c,%c,%.3f,%s,%.4f,%s,%s,%.3f,%s,%.2f,%s\n",
                         s.name.c_str(), (long long)s.m, (long long)s.n, (long long)s.k, s.ta, s.tb,
                         r.t_us, have_c ? fmt("%.3f", r.c_us).c_str() : "n/a", ttf,
                         have_c ? fmt("%.4f", ctf).c_str() : "n/a",
                         have_c ? fmt("%.4f", ratio).c_str() : "n/a", r.floor_us, r.floor_kind, pct,
                         r.wall ? "per_call_wall" : "event");
            std::fflush(csv);
            if (std::ferror(csv))
                die("writing %s failed", csv_path.c_str());
        }
        results.push_back(r);
    }

    std::printf("\nresid = tgemm's largest |C - R| / bound over its checked outputs (must be <= 1; cuBLAS "
                "checked too)\n");
    std::printf("all %zu measured shapes checked (tgemm%s); %zu skipped\n", results.size(),
                ctx.cb.ok ? " and cuBLAS" : "", shapes.size() - results.size());
    if (ctx.cb.ok && !results.empty()) {
        double logsum = 0, minr = 0;
        std::string minname;
        for (const Result &r : results) {
            const double ratio = r.c_us / r.t_us;
            logsum += std::log(ratio);
            if (minname.empty() || ratio < minr) {
                minr = ratio;
                minname = r.s.name;
            }
        }
        std::printf("geometric mean of ratios (tgemm speed / cuBLAS speed): %.3f over %zu shapes\n",
                    std::exp(logsum / static_cast<double>(results.size())), results.size());
        std::printf("minimum ratio: %.3f (%s)\n", minr, minname.c_str());
    } else {
        std::printf("geometric mean of ratios: n/a (cuBLAS not loaded)\n");
    }

    finish(ctx, csv, csv_path);
    return 0;
}
