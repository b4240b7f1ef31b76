// The benchmarks' plumbing: cuBLAS found and loaded at run time (dlopen,
// so that the benchmarks neither link it nor need its headers), the device,
// the command line's integers and the CSV file, the small helpers every
// part uses, and the close of a run.
#include "bench.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace bench {

void cublas_check(int status, const char *what)
{
    if (status != CUBLAS_STATUS_SUCCESS_)
        die("%s failed with cuBLAS status %d", what, status);
}

cublasHandle_t cublas_handle(Cublas &cb, cudaStream_t stream, int mode, const char *what)
{
    cublasHandle_t h = nullptr;
    const std::string w = std::string(" (") + what + ")";
    cublas_check(cb.create(&h), ("cublasCreate_v2" + w).c_str());
    cublas_check(cb.set_stream(h, stream), ("cublasSetStream_v2" + w).c_str());
    cublas_check(cb.set_math_mode(h, mode), ("cublasSetMathMode" + w).c_str());
    return h;
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
    cb.handle = cublas_handle(cb, stream, CUBLAS_DEFAULT_MATH_, "DEFAULT_MATH");
    dlerror();
    cb.dgemm = reinterpret_cast<gemm_reference::DgemmFn>(dlsym(cb.lib, "cublasDgemm_v2"));
    if (cb.dgemm) {
        cb.ref_handle = cublas_handle(cb, stream, CUBLAS_DEFAULT_MATH_, "reference");
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

// From the 24 high bits of a 32-bit draw (std::uniform_real_distribution is
// not the same on every platform).
float uniform_pm1(std::mt19937 &rng)
{
    const uint32_t u = static_cast<uint32_t>(rng()) >> 8;
    return static_cast<float>((static_cast<double>(u) + 0.5) * (1.0 / 8388608.0) - 1.0);
}

std::string fmt(const char *f, double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

void copy_to_host(std::vector<float> &h, const float *d, size_t count)
{
    h.resize(count);
    CUDA_CHECK(cudaMemcpy(h.data(), d, count * sizeof(float), cudaMemcpyDeviceToHost));
}

void open_device(Ctx &ctx)
{
    int dev = 0, ndev = 0;
    const cudaError_t found = cudaGetDeviceCount(&ndev);
    if (found != cudaSuccess)
        die("no usable CUDA device: cudaGetDeviceCount says %s (%s)", cudaGetErrorName(found),
            cudaGetErrorString(found));
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
    std::printf("device %d: %s, %d SMs, SM clock %.0f MHz (max), L2 %.1f MiB, memory %.1f GiB "
                "(%.1f GiB free)\n",
                dev, prop.name, sms, clock_khz / 1000.0, l2 / 1048576.0, total_b / 1073741824.0,
                free_b / 1073741824.0);
    std::printf("CUDA driver %d.%d, runtime %d.%d; tgemm %s (header %s)\n", driver / 1000,
                (driver % 1000) / 10, runtime / 1000, (runtime % 1000) / 10,
                tgemm_version_string(), TGEMM_VERSION_STRING);
}

void alloc_l2_buffer(Ctx &ctx)
{
    CUDA_CHECK(cudaMalloc(&ctx.l2_buf, 2 * ctx.l2_bytes));
    CUDA_CHECK(cudaMemset(ctx.l2_buf, 0, 2 * ctx.l2_bytes));
    CUDA_CHECK(cudaMalloc(&ctx.l2_sink, sizeof(float)));
}

long long parse_int(const char *s, const char *what, long long lo, long long hi, void (*usage)(FILE *))
{
    char *end = nullptr;
    errno = 0;
    const long long v = std::strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) {
        std::fprintf(stderr, "%s: %s: '%s' is not an integer in [%lld, %lld]\n", program_name, what, s, lo, hi);
        usage(stderr);
        std::exit(2);
    }
    return v;
}

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
    if (ctx.cb.ok && ctx.cb.pedantic)
        cublas_check(ctx.cb.destroy(ctx.cb.pedantic), "cublasDestroy_v2 (pedantic)");
    CUDA_CHECK(cudaStreamDestroy(ctx.stream));
    CUDA_CHECK(cudaFree(ctx.l2_buf));
    CUDA_CHECK(cudaFree(ctx.l2_sink));
}

}  // namespace bench
