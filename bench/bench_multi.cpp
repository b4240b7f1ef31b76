// bench_multi: one product on host operands spread over several GPUs
// (issue 30): tgemm_sgemm, whose devices are those of the process's
// TGEMM_DEVICES, against cublasXtSgemm on the same GPUs, in one process;
// and, with --links, the rates of the links those GPUs share.
//
//   bench_multi [--sizes N,...] [--shape M N K TA TB]... [--memory pinned|pageable|both] [--beta 0|1]
//               [--reps N] [--target-seconds S] [--max-reps N] [--deadline S] [--csv PATH]
//               [--xt-devices LIST] [--xt-bs LIST] [--xt-full-max N] [--xt-keep N] [--xt-pin off|on|both]
//               [--no-xt] [--no-tgemm] [--sample N] [--full-max N] [--threads N] [--seed N]
//   bench_multi --links [--links-csv PATH] [--link-mib N] [--link-reps N]
//
// The device set. TGEMM_DEVICES is read by the library, once per process;
// this program reads the same variable only to say which set it runs with
// and to give cuBLAS-XT the same GPUs (cublasXtDeviceSelect): a comma list
// of device numbers ("0,1,2,3"), "all", or "auto" (tgemm decides per call;
// cuBLAS-XT gets every device). Unset: one GPU, TGEMM_DEVICE's number, or
// device 0 (TGEMM_DEVICE unset or not a number: local-rank). --xt-devices
// LIST (numbers, or all) overrides cuBLAS-XT's set. So one process
// measures one device set; bench/multi_gpu.sh runs one per set. Before
// each tgemm call the calling thread's current device is the first of the
// set (device 0 for all and auto).
//
// What is timed, for each shape (default square NN 4096, 8192, 12288,
// 16384; --shape for rectangular and transposed ones) and each memory kind
// of the host operands (pinned: cudaHostAlloc with cudaHostAllocPortable,
// so that every GPU's context treats it as pinned; pageable: malloc'd and
// written before use), column-major, no padding, alpha 1, beta 0 (--beta 1:
// C holds C0 before every call):
//  - tgemm_sgemm (it returns with C in place);
//  - cublasXtSgemm with each block size of --xt-bs (cublasXtSetBlockDim;
//    default 1024, 2048, 4096, 8192), pinning mode off (cuBLAS-XT's
//    default; --xt-pin on: CUBLASXT_PINNING_ENABLED, rows named
//    cublasxt-pin-bsN). For a shape whose largest dimension passes
//    --xt-full-max (default 8192), only the --xt-keep (default 2) block
//    sizes that were fastest on the largest shape at or under it, same
//    memory kind and pinning mode, are run.
// Each configuration: one warm-up call, checked; then R timed calls, wall
// clock of each call alone; the median. R is --reps, else the number of
// calls that fit --target-seconds (default 1.5 s) by the warm-up call's
// time (by the first timed call's, where that is shorter), within 3 and
// --max-reps (default 10); 1 when a call takes longer than twice the
// target. Configurations run one after another (tgemm, then each block
// size of cuBLAS-XT), not call by call in turn. Before every call
// (untimed), C is poisoned with the NaN 0x7FC0DEAD (beta 0) or set back to
// C0 (beta 1), with the host's threads. The last timed call's output is
// checked too.
//
// The check, of every checked output: |C - R| <= gamma_{K+2} (|A||B| +
// |beta| |C0|) elementwise (bench/gemm_check.hpp: the bound of every
// correct FP32 result, whatever the order of the sums), R and |A||B| in
// FP64. Always at a stratified grid of --sample (default 4096) elements:
// a random row from each of sqrt(--sample) bands of rows, likewise
// columns, plus the first and last row and column, every pair of those,
// from FP64 dot products on the host; and every element of C must be
// finite (an unwritten tile keeps its NaN). When no dimension passes
// --full-max (default 4096), every element instead, against R and |A||B|
// from DGEMMs on the first device (bench/gemm_reference.hpp). A tgemm or
// cuBLAS-XT output off its bound is printed, its row marked FAIL, the run
// goes on, and the exit status is 1 at the end.
//
// --deadline S (seconds from the start): a cuBLAS-XT configuration that
// would end past S, less an estimate of the tgemm work still to come, is
// skipped (a row with status skipped); tgemm's rows are never skipped.
//
// CSV (--csv), one row per configuration: m,n,k,ta,tb,beta,memory,setting,
// devices,ndev,impl,block,seconds,tflops,reps,seconds_min,seconds_max,
// first_seconds,check,check_kind,status. setting: TGEMM_DEVICES as given
// ("unset" when it is not; commas written '+'), devices: the GPUs used
// ("0+1"; "auto" for tgemm under auto), impl: tgemm, cublasxt-bsN or
// cublasxt-pin-bsN; seconds: the median; check: the largest |C - R| /
// bound of the checks; status: ok, FAIL (a check or a call failed),
// skipped (deadline). bench/multi_report.py reads these files.
//
// --links: for each GPU, pinned host to device, device to host and both at
// once (256 MiB each way by default), each GPU alone and all at once (rows
// per GPU from CUDA events, and the aggregate by the wall clock); pageable
// host to device and back, alone and all at once; the host's own memcpy
// rate (1 GiB, one thread and all of them), the limit of any path through
// pageable memory; for each ordered pair of GPUs, cudaDeviceCanAccessPeer
// and cudaMemcpyPeerAsync's rate with peer access off, then on, and both
// directions at once with it on. Median of --link-reps (default 5) after a
// warm-up. CSV (--links-csv): kind,mode,src,dst,bytes,seconds,gbs,
// peer_access. The topology (NVLink, PCIe switches, NUMA) is not
// available from CUDA: bench/multi_gpu.sh saves `nvidia-smi topo -m`.
//
// Exit status: 0; 1 on any CUDA or tgemm error (at once) or a failed check
// or cuBLAS-XT call (at the end); 2 for bad arguments or settings.
#include <tgemm.h>

#include <cublasXt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "bench_error.hpp"
#include "gemm_check.hpp"
#include "gemm_reference.hpp"
#include "multi_check.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using bench::die;
using bench::open_csv;
using bench::program_name;
using namespace multi;


#define CUDA_CHECK(call)                                                                                         \
    do {                                                                                                         \
        const cudaError_t err_ = (call);                                                                         \
        if (err_ != cudaSuccess)                                                                                 \
            die("%s:%d: %s failed: %s (%s)", __FILE__, __LINE__, #call, cudaGetErrorName(err_),                  \
                cudaGetErrorString(err_));                                                                       \
    } while (0)

#define CUBLAS_CHECK(call)                                                                                       \
    do {                                                                                                         \
        const cublasStatus_t st_ = (call);                                                                       \
        if (st_ != CUBLAS_STATUS_SUCCESS)                                                                        \
            die("%s:%d: %s failed: cuBLAS status %d (%s)", __FILE__, __LINE__, #call, static_cast<int>(st_),     \
                cublasGetStatusString(st_));                                                                     \
    } while (0)

double now_s()
{
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

void usage(FILE *f)
{
    std::fprintf(f,
        "usage: bench_multi [--sizes N,...] [--shape M N K TA TB]... [--memory pinned|pageable|both]\n"
        "                   [--beta 0|1] [--reps N] [--target-seconds S] [--max-reps N] [--deadline S]\n"
        "                   [--csv PATH] [--xt-devices LIST] [--xt-bs LIST] [--xt-full-max N] [--xt-keep N]\n"
        "                   [--xt-pin off|on|both] [--no-xt] [--no-tgemm] [--sample N] [--full-max N]\n"
        "                   [--threads N] [--seed N]\n"
        "       bench_multi --links [--links-csv PATH] [--link-mib N] [--link-reps N]\n"
        "tgemm_sgemm on host operands over the GPUs of TGEMM_DEVICES (read by the library; a comma\n"
        "list of device numbers, all, or auto) against cublasXtSgemm on the same GPUs, one process\n"
        "per device set. Alpha 1, column-major, no padding.\n"
        "  --sizes N,...        square NN sizes (default 4096,8192,12288,16384)\n"
        "  --shape M N K TA TB  a shape, TA/TB = N or T (repeatable; replaces the default sizes)\n"
        "  --memory KIND        pinned, pageable or both (default both)\n"
        "  --beta B             0 (default; C poisoned with NaN before each call) or 1 (C = C0 before each)\n"
        "  --reps N             timed calls per configuration (default: what fits --target-seconds)\n"
        "  --target-seconds S   time of the timed calls of one configuration (default 1.5)\n"
        "  --max-reps N         at most this many timed calls (default 10; at least 3 unless a call\n"
        "                       takes over twice the target)\n"
        "  --deadline S         skip cuBLAS-XT configurations that would end after S seconds from\n"
        "                       the start (tgemm's are never skipped; default: no deadline)\n"
        "  --csv PATH           one row per configuration (parent directory created)\n"
        "  --xt-devices LIST    cuBLAS-XT's GPUs: numbers (0,1) or all (default: TGEMM_DEVICES's)\n"
        "  --xt-bs LIST         cublasXtSetBlockDim sizes (default 1024,2048,4096,8192)\n"
        "  --xt-full-max N      above this largest dimension only the --xt-keep fastest block sizes\n"
        "                       of the largest shape at or under it run (default 8192)\n"
        "  --xt-keep N          (default 2)\n"
        "  --xt-pin MODE        cublasXtSetPinningMemMode: off (default), on, or both\n"
        "  --no-xt, --no-tgemm  leave one side out\n"
        "  --sample N           elements in the sampled check (default 4096)\n"
        "  --full-max N         every element checked when no dimension passes N (default 4096)\n"
        "  --threads N          host threads for filling and checking (default: all cores)\n"
        "  --seed N             seed of the inputs (default 12345)\n"
        "  --links              link rates: host<->GPU pinned and pageable, each GPU alone and all at\n"
        "                       once; host memcpy; GPU<->GPU peer copies (no product is run unless\n"
        "                       --sizes or --shape is given too)\n"
        "  --links-csv PATH     their CSV\n"
        "  --link-mib N         bytes of each copy, MiB (default 256)\n"
        "  --link-reps N        timed copies per measurement (default 5)\n");
}

[[noreturn]] void bad_argument(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void bad_argument(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    std::fprintf(stderr, "%s: ", program_name);
    std::vfprintf(stderr, fmt, ap);
    va_end(ap);
    std::fprintf(stderr, "\n");
    usage(stderr);
    std::exit(2);
}

long long parse_int(const char *s, const char *what, long long lo, long long hi)
{
    char *end = nullptr;
    errno = 0;
    const long long v = std::strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
        bad_argument("%s: '%s' is not an integer in [%lld, %lld]", what, s, lo, hi);
    return v;
}

double parse_double(const char *s, const char *what, double lo, double hi)
{
    char *end = nullptr;
    errno = 0;
    const double v = std::strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !(v >= lo && v <= hi))
        bad_argument("%s: '%s' is not a number in [%g, %g]", what, s, lo, hi);
    return v;
}

std::vector<std::string> split(const std::string &s, char sep)
{
    std::vector<std::string> out;
    size_t start = 0;
    for (;;) {
        const size_t p = s.find(sep, start);
        out.push_back(s.substr(start, p == std::string::npos ? std::string::npos : p - start));
        if (p == std::string::npos)
            return out;
        start = p + 1;
    }
}

std::vector<long long> parse_int_list(const std::string &s, const char *what, long long lo, long long hi)
{
    std::vector<long long> out;
    for (const std::string &part : split(s, ','))
        out.push_back(parse_int(part.c_str(), what, lo, hi));
    return out;
}

std::string fmt_check(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

std::string join(const std::vector<int> &v, const char *sep)
{
    std::string s;
    for (size_t i = 0; i < v.size(); ++i)
        s += (i ? sep : "") + std::to_string(v[i]);
    return s;
}

// ------------------------------------------------------------------ host buffers

enum Memory { kPinned, kPageable, kMemories };
const char *const kMemoryName[kMemories] = {"pinned", "pageable"};

struct HostBuffer {
    float *p = nullptr;
    size_t count = 0;
    bool pinned = false;
    HostBuffer() = default;
    HostBuffer(size_t n, bool pin) : count(n), pinned(pin)
    {
        if (pin) {
            CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void **>(&p), n * sizeof(float), cudaHostAllocPortable));
        } else {
            p = static_cast<float *>(std::malloc(n * sizeof(float)));
            if (!p)
                die("no host memory for %.2f GiB", n * sizeof(float) / 1073741824.0);
        }
    }
    ~HostBuffer()
    {
        if (pinned)
            cudaFreeHost(p);
        else
            std::free(p);
    }
    HostBuffer(const HostBuffer &) = delete;
    HostBuffer &operator=(const HostBuffer &) = delete;
};

// The full reference on `device`: A and B copied there, two DGEMMs per block
// (bench/gemm_reference.hpp, which also checks sampled elements of its
// result against dot products), beta's term added on the host.
void make_full(const Shape &s, const float *A, const float *B, double beta, const float *C0, int device, Check &chk)
{
    const size_t nc = s.nc();
    chk.ref.reset(new (std::nothrow) double[nc]);
    chk.mag.reset(new (std::nothrow) double[nc]);
    if (!chk.ref || !chk.mag)
        die("no host memory for the FP64 reference (2 x %.2f GiB)", nc * sizeof(double) / 1073741824.0);
    CUDA_CHECK(cudaSetDevice(device));
    float *dA = nullptr, *dB = nullptr;
    CUDA_CHECK(cudaMalloc(&dA, s.na() * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dB, s.nb() * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dA, A, s.na() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dB, B, s.nb() * sizeof(float), cudaMemcpyHostToDevice));
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cublasHandle_t handle;
    CUBLAS_CHECK(cublasCreate(&handle));
    CUBLAS_CHECK(cublasSetStream(handle, stream));
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    gemm_reference::Problem p;
    p.ta = s.ta;
    p.tb = s.tb;
    p.m = s.m;
    p.n = s.n;
    p.k = s.k;
    p.alpha = 1.0;
    p.a = dA;
    p.lda = s.lda();
    p.b = dB;
    p.ldb = s.ldb();
    gemm_reference::Dgemm dgemm;
    dgemm.fn = reinterpret_cast<gemm_reference::DgemmFn>(&cublasDgemm_v2);
    dgemm.handle = handle;
    gemm_reference::compute(p, dgemm, stream, std::min(size_t(4) << 30, free_b / 2), chk.ref.get(), chk.mag.get());
    CUBLAS_CHECK(cublasDestroy(handle));
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(dA));
    CUDA_CHECK(cudaFree(dB));
    if (beta != 0.0) {
        double *ref = chk.ref.get(), *mag = chk.mag.get();
        parallel_for(static_cast<size_t>(s.n), [&](size_t b, size_t e) {
            gemm_check::add_beta_term(s.m, static_cast<int64_t>(e - b), beta, C0 + b * s.m, s.m, ref + b * s.m,
                                      mag + b * s.m, s.m);
        }, 16);
    }
    chk.full = true;
}

// parse_devices, or exit 2 saying why.
std::vector<int> devices_or_exit(const std::string &text, int count, const char *what)
{
    std::vector<int> v;
    std::string err;
    if (!parse_devices(text, count, v, err))
        bad_argument("%s: %s%s", what, err.c_str(),
                     std::strcmp(what, "TGEMM_DEVICES") == 0 && err[0] == '\'' ? ", or auto" : "");
    return v;
}

std::string csv_text(const std::string &s)
{
    std::string out = s;
    std::replace(out.begin(), out.end(), ',', '+');
    return out;
}

// ------------------------------------------------------------------ options

struct Options {
    std::vector<Shape> shapes;
    bool memory[kMemories] = {true, true};
    double beta = 0;
    int reps = 0;  // 0: by --target-seconds
    double target = 1.5;
    int max_reps = 10;
    double deadline = 0;
    std::string csv_path;
    std::string xt_devices;  // --xt-devices, or "" (TGEMM_DEVICES's)
    std::vector<int> xt_bs{1024, 2048, 4096, 8192};
    int64_t xt_full_max = 8192;
    int xt_keep = 2;
    bool xt_pin[2] = {true, false};  // [off, on]
    bool xt = true, tgemm = true;
    int64_t sample = 4096;
    int64_t full_max = 4096;
    uint64_t seed = 12345;
    bool links = false;
    std::string links_csv;
    size_t link_bytes = size_t(256) << 20;
    int link_reps = 5;
};


const char *const kCsvHeader = "m,n,k,ta,tb,beta,memory,setting,devices,ndev,impl,block,seconds,tflops,reps,"
                               "seconds_min,seconds_max,first_seconds,check,check_kind,status";

// ------------------------------------------------------------------ links

struct LinkCsv {
    FILE *f = nullptr;
    void row(const char *kind, const char *mode, const std::string &src, const std::string &dst, size_t bytes,
             double seconds, int peer)
    {
        const double gbs = seconds > 0 ? bytes / seconds / 1e9 : 0;
        if (f) {
            std::fprintf(f, "%s,%s,%s,%s,%zu,%.6e,%.2f,%s\n", kind, mode, src.c_str(), dst.c_str(), bytes, seconds, gbs,
                         peer < 0 ? "" : std::to_string(peer).c_str());
            std::fflush(f);
        }
    }
};

struct LinkDevice {
    int dev = 0;
    cudaStream_t up = nullptr, down = nullptr;
    cudaEvent_t e[4] = {};
    float *d_in = nullptr, *d_out = nullptr;  // device buffers
    float *h_in = nullptr, *h_out = nullptr;  // pinned
    float *p_in = nullptr, *p_out = nullptr;  // pageable
};

// The copies of `which` (0 up, 1 down, 2 both) on every device in `devs` at
// once, each device's from a host thread of its own (a copy from pageable
// memory holds its thread until it is done); per device the seconds from
// its events (up and down: the span of both), and the wall time of the
// whole.
struct Timed {
    std::vector<double> per;
    double wall = 0;
};

void copy_on(LinkDevice &d, int which, bool pinned, size_t bytes)
{
    CUDA_CHECK(cudaSetDevice(d.dev));
    CUDA_CHECK(cudaEventRecord(d.e[0], d.up));
    CUDA_CHECK(cudaStreamWaitEvent(d.down, d.e[0], 0));
    if (which == 0 || which == 2)
        CUDA_CHECK(cudaMemcpyAsync(d.d_in, pinned ? d.h_in : d.p_in, bytes, cudaMemcpyHostToDevice, d.up));
    if (which == 1 || which == 2)
        CUDA_CHECK(cudaMemcpyAsync(pinned ? d.h_out : d.p_out, d.d_out, bytes, cudaMemcpyDeviceToHost, d.down));
    CUDA_CHECK(cudaEventRecord(d.e[1], d.down));
    CUDA_CHECK(cudaStreamWaitEvent(d.up, d.e[1], 0));
    CUDA_CHECK(cudaEventRecord(d.e[2], d.up));
    CUDA_CHECK(cudaEventSynchronize(d.e[2]));
}

Timed copy_round(std::vector<LinkDevice> &ld, const std::vector<int> &devs, int which, bool pinned, size_t bytes)
{
    Timed t;
    const double t0 = now_s();
    if (devs.size() == 1) {
        copy_on(ld[devs[0]], which, pinned, bytes);
    } else {
        std::vector<std::thread> pool;
        for (int i : devs)
            pool.emplace_back(copy_on, std::ref(ld[i]), which, pinned, bytes);
        for (std::thread &th : pool)
            th.join();
    }
    t.wall = now_s() - t0;
    for (int i : devs) {
        float ms = 0;
        CUDA_CHECK(cudaSetDevice(ld[i].dev));
        CUDA_CHECK(cudaEventElapsedTime(&ms, ld[i].e[0], ld[i].e[2]));
        t.per.push_back(ms * 1e-3);
    }
    return t;
}

// The host's memcpy rate: `bytes` copied by `threads` threads, median of reps.
double host_memcpy_seconds(const float *src, float *dst, size_t bytes, unsigned threads, int reps)
{
    const unsigned saved = g_threads;
    g_threads = threads;
    std::vector<double> v;
    for (int r = 0; r <= reps; ++r) {
        const double t0 = now_s();
        copy(dst, src, bytes / sizeof(float));
        const double dt = now_s() - t0;
        if (r > 0)
            v.push_back(dt);
    }
    g_threads = saved;
    return median(v);
}

void run_links(const Options &opt, int count)
{
    const size_t bytes = opt.link_bytes, n = bytes / sizeof(float);
    const int reps = opt.link_reps;
    LinkCsv csv;
    if (!opt.links_csv.empty())
        csv.f = open_csv(opt.links_csv, "kind,mode,src,dst,bytes,seconds,gbs,peer_access");
    std::printf("\n== links: %.0f MiB per copy, median of %d after a warm-up; GB/s = 1e9 bytes/s\n",
                bytes / 1048576.0, reps);
    std::vector<LinkDevice> ld(static_cast<size_t>(count));
    for (int d = 0; d < count; ++d) {
        LinkDevice &x = ld[d];
        x.dev = d;
        CUDA_CHECK(cudaSetDevice(d));
        CUDA_CHECK(cudaStreamCreateWithFlags(&x.up, cudaStreamNonBlocking));
        CUDA_CHECK(cudaStreamCreateWithFlags(&x.down, cudaStreamNonBlocking));
        for (cudaEvent_t &e : x.e)
            CUDA_CHECK(cudaEventCreate(&e));
        CUDA_CHECK(cudaMalloc(&x.d_in, bytes));
        CUDA_CHECK(cudaMalloc(&x.d_out, bytes));
        CUDA_CHECK(cudaMemset(x.d_out, 0, bytes));
        CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void **>(&x.h_in), bytes, cudaHostAllocPortable));
        CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void **>(&x.h_out), bytes, cudaHostAllocPortable));
        x.p_in = static_cast<float *>(std::malloc(bytes));
        x.p_out = static_cast<float *>(std::malloc(bytes));
        if (!x.p_in || !x.p_out)
            die("no host memory for the link buffers");
        fill(x.h_in, n, 100 + d);
        fill(x.p_in, n, 100 + d);
        std::memset(x.h_out, 0, bytes);
        std::memset(x.p_out, 0, bytes);
    }
    const char *const kind[3] = {"h2d", "d2h", "both"};
    const double moved[3] = {1, 1, 2};
    std::vector<int> all;
    for (int d = 0; d < count; ++d)
        all.push_back(d);
    for (int pinned = 1; pinned >= 0; --pinned) {
        const char *mem = pinned ? "" : "-pageable";
        for (int w = 0; w < 3; ++w) {
            if (!pinned && w == 2)
                continue;
            std::string k = std::string(kind[w]) + mem;
            // Each GPU alone.
            std::printf("%-14s alone:", k.c_str());
            for (int d = 0; d < count; ++d) {
                std::vector<double> s;
                for (int r = 0; r <= reps; ++r) {
                    const Timed t = copy_round(ld, {d}, w, pinned, bytes);
                    if (r > 0)
                        s.push_back(t.per[0]);
                }
                const double sec = median(s);
                csv.row(k.c_str(), "alone", w == 1 ? std::to_string(d) : "host", w == 1 ? "host" : std::to_string(d),
                        static_cast<size_t>(moved[w] * bytes), sec, -1);
                std::printf("  GPU %d %6.1f GB/s", d, moved[w] * bytes / sec / 1e9);
            }
            std::printf("\n");
            if (count < 2)
                continue;
            // Every GPU at once.
            std::vector<std::vector<double>> s(static_cast<size_t>(count));
            std::vector<double> wall;
            for (int r = 0; r <= reps; ++r) {
                const Timed t = copy_round(ld, all, w, pinned, bytes);
                if (r == 0)
                    continue;
                for (int d = 0; d < count; ++d)
                    s[d].push_back(t.per[d]);
                wall.push_back(t.wall);
            }
            std::printf("%-14s all:  ", k.c_str());
            for (int d = 0; d < count; ++d) {
                const double sec = median(s[d]);
                csv.row(k.c_str(), "all", w == 1 ? std::to_string(d) : "host", w == 1 ? "host" : std::to_string(d),
                        static_cast<size_t>(moved[w] * bytes), sec, -1);
                std::printf("  GPU %d %6.1f GB/s", d, moved[w] * bytes / sec / 1e9);
            }
            const double wsec = median(wall);
            csv.row(k.c_str(), "all", w == 1 ? "all" : "host", w == 1 ? "host" : "all",
                    static_cast<size_t>(moved[w] * bytes * count), wsec, -1);
            std::printf("  together %6.1f GB/s\n", moved[w] * bytes * count / wsec / 1e9);
        }
    }
    // The host's memcpy, one thread and all of them, 4x the copy size.
    {
        const size_t hb = 4 * bytes, hn = hb / sizeof(float);
        std::unique_ptr<float[]> a(new float[hn]), b(new float[hn]);
        fill(a.get(), hn, 7);
        fill(b.get(), hn, 8);
        for (unsigned t : {1u, g_threads}) {
            const double sec = host_memcpy_seconds(a.get(), b.get(), hb, t, reps);
            csv.row("memcpy", ("threads-" + std::to_string(t)).c_str(), "host", "host", hb, sec, -1);
            std::printf("host memcpy, %u thread(s): %.1f GB/s (bytes copied)\n", t, hb / sec / 1e9);
            if (g_threads == 1)
                break;
        }
    }
    // Peer copies, every ordered pair.
    if (count >= 2) {
        std::vector<std::vector<int>> can(static_cast<size_t>(count), std::vector<int>(static_cast<size_t>(count), 0));
        for (int i = 0; i < count; ++i)
            for (int j = 0; j < count; ++j)
                if (i != j)
                    CUDA_CHECK(cudaDeviceCanAccessPeer(&can[i][j], i, j));
        auto peer_time = [&](int i, int j, bool both) {
            std::vector<double> s;
            for (int r = 0; r <= reps; ++r) {
                CUDA_CHECK(cudaSetDevice(i));
                CUDA_CHECK(cudaDeviceSynchronize());
                CUDA_CHECK(cudaSetDevice(j));
                CUDA_CHECK(cudaDeviceSynchronize());
                const double t0 = now_s();
                CUDA_CHECK(cudaSetDevice(i));
                CUDA_CHECK(cudaMemcpyPeerAsync(ld[j].d_in, j, ld[i].d_out, i, bytes, ld[i].up));
                if (both) {
                    CUDA_CHECK(cudaSetDevice(j));
                    CUDA_CHECK(cudaMemcpyPeerAsync(ld[i].d_in, i, ld[j].d_out, j, bytes, ld[j].up));
                }
                CUDA_CHECK(cudaStreamSynchronize(ld[i].up));
                CUDA_CHECK(cudaStreamSynchronize(ld[j].up));
                if (r > 0)
                    s.push_back(now_s() - t0);
            }
            return median(s);
        };
        for (int on = 0; on <= 1; ++on) {
            if (on)
                for (int i = 0; i < count; ++i)
                    for (int j = 0; j < count; ++j)
                        if (i != j && can[i][j]) {
                            CUDA_CHECK(cudaSetDevice(i));
                            const cudaError_t e = cudaDeviceEnablePeerAccess(j, 0);
                            if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled)
                                die("cudaDeviceEnablePeerAccess(%d) on device %d: %s", j, i, cudaGetErrorString(e));
                            (void)cudaGetLastError();
                        }
            std::printf("peer copies, GB/s, peer access %s (row: from, column: to; * = cudaDeviceCanAccessPeer)\n",
                        on ? "on" : "off");
            std::printf("       ");
            for (int j = 0; j < count; ++j)
                std::printf("   GPU %-3d", j);
            std::printf("\n");
            for (int i = 0; i < count; ++i) {
                std::printf("GPU %-3d", i);
                for (int j = 0; j < count; ++j) {
                    if (i == j) {
                        std::printf("  %8s", "-");
                        continue;
                    }
                    const double sec = peer_time(i, j, false);
                    csv.row("peer", on ? "on" : "off", std::to_string(i), std::to_string(j), bytes, sec, can[i][j]);
                    std::printf("  %7.1f%s", bytes / sec / 1e9, can[i][j] ? "*" : " ");
                }
                std::printf("\n");
            }
        }
        std::printf("peer copies both ways at once, peer access on, GB/s of both directions together:\n");
        for (int i = 0; i < count; ++i)
            for (int j = i + 1; j < count; ++j) {
                const double sec = peer_time(i, j, true);
                csv.row("peer", "on-both", std::to_string(i), std::to_string(j), 2 * bytes, sec,
                        can[i][j] && can[j][i]);
                std::printf("  GPU %d <-> GPU %d %7.1f\n", i, j, 2 * bytes / sec / 1e9);
            }
        for (int i = 0; i < count; ++i)
            for (int j = 0; j < count; ++j)
                if (i != j && can[i][j]) {
                    CUDA_CHECK(cudaSetDevice(i));
                    (void)cudaDeviceDisablePeerAccess(j);
                    (void)cudaGetLastError();
                }
    }
    for (LinkDevice &x : ld) {
        CUDA_CHECK(cudaSetDevice(x.dev));
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaStreamDestroy(x.up));
        CUDA_CHECK(cudaStreamDestroy(x.down));
        for (cudaEvent_t e : x.e)
            CUDA_CHECK(cudaEventDestroy(e));
        CUDA_CHECK(cudaFree(x.d_in));
        CUDA_CHECK(cudaFree(x.d_out));
        CUDA_CHECK(cudaFreeHost(x.h_in));
        CUDA_CHECK(cudaFreeHost(x.h_out));
        std::free(x.p_in);
        std::free(x.p_out);
    }
    if (csv.f) {
        if (std::fclose(csv.f) != 0)
            die("closing %s failed", opt.links_csv.c_str());
        std::printf("links csv: %s\n", opt.links_csv.c_str());
    }
    CUDA_CHECK(cudaSetDevice(0));
}

// ------------------------------------------------------------------ the products

struct Run {
    const Options &opt;
    std::string setting;          // TGEMM_DEVICES as given, or "unset"
    std::string tgemm_devices;    // the CSV's devices for tgemm rows
    int tgemm_ndev = 1;
    int tgemm_first = 0;          // current device at each tgemm call
    std::vector<int> xt_devs;
    cublasXtHandle_t xt[2] = {nullptr, nullptr};  // [pinning off, on]
    FILE *csv = nullptr;
    double start = 0;
    int failures = 0;
    // cuBLAS-XT's block sizes by speed, per memory kind and pinning mode: the
    // seconds of each at the largest shape at or under --xt-full-max so far.
    std::map<std::pair<int, int>, std::pair<int64_t, std::vector<std::pair<double, int>>>> xt_best;
    // Seconds per flop of tgemm's last shape and seconds per byte of setup,
    // for the deadline's estimate of what is still to come.
    double tgemm_spf[kMemories] = {0, 0};
    double setup_spb = 0;

    explicit Run(const Options &o) : opt(o) {}
};

struct Timing {
    double first = 0;
    std::vector<double> times;
    CheckResult check;  // the worst of the checks
    bool call_failed = false;
    std::string call_error;
};

void merge_check(CheckResult &into, const CheckResult &c)
{
    if (!c.passed && into.passed) {
        into.passed = false;
        into.detail = c.detail;
    }
    into.worst = std::max(into.worst, c.worst);
}

int reps_for(const Options &opt, double first)
{
    if (opt.reps > 0)
        return opt.reps;
    if (first > 2 * opt.target)
        return 1;
    const int r = static_cast<int>(opt.target / std::max(first, 1e-6));
    return std::max(3, std::min(opt.max_reps, r));
}

// call(): one product into C, true on success (else error set). prepare():
// C poisoned or set back to C0.
Timing time_config(const Options &opt, const Shape &s, const Check &chk, const float *C,
                   const std::function<bool(std::string &)> &call, const std::function<void()> &prepare)
{
    Timing t;
    t.check.passed = true;
    std::string err;
    prepare();
    double t0 = now_s();
    if (!call(err)) {
        t.call_failed = true;
        t.call_error = err;
        t.check.passed = false;
        return t;
    }
    t.first = now_s() - t0;
    merge_check(t.check, check_output(s, chk, C));
    // The count of timed calls from the warm-up call's time, then again from
    // the first timed call's where that is shorter (the warm-up call pays
    // for whatever the library or cuBLAS-XT sets up on first use).
    int reps = reps_for(opt, t.first);
    for (int r = 0; r < reps; ++r) {
        if (r == 1)
            reps = reps_for(opt, std::min(t.first, t.times[0]));
        prepare();
        t0 = now_s();
        if (!call(err)) {
            t.call_failed = true;
            t.call_error = err;
            t.check.passed = false;
            return t;
        }
        t.times.push_back(now_s() - t0);
    }
    merge_check(t.check, check_output(s, chk, C));
    return t;
}

// One configuration's line on standard output and row in the CSV; t null:
// not run (`why` says why on standard output, else the status).
void write_row(Run &run, const Shape &s, Memory mem, const std::string &devices, int ndev, const std::string &impl,
               int block, const Timing *t, const char *check_kind, const char *status, const char *why = nullptr)
{
    const double sec = t && !t->times.empty() ? median(t->times) : 0;
    const double mn = t && !t->times.empty() ? *std::min_element(t->times.begin(), t->times.end()) : 0;
    const double mx = t && !t->times.empty() ? *std::max_element(t->times.begin(), t->times.end()) : 0;
    const std::string block_s = block > 0 ? std::to_string(block) : "";
    if (t && !t->call_failed)
        std::printf("  %-9s %-8s %-20s %9.4f s %7.2f TFLOP/s  reps %2zu (min %.4f, max %.4f, first %.4f)  "
                    "check %.3g (%s)%s\n",
                    s.name().c_str(), kMemoryName[mem], impl.c_str(), sec, sec > 0 ? s.flops() / sec / 1e12 : 0.0,
                    t->times.size(), mn, mx, t->first, t->check.worst, check_kind,
                    std::strcmp(status, "ok") ? "  FAILED" : "");
    else
        std::printf("  %-9s %-8s %-20s %s\n", s.name().c_str(), kMemoryName[mem], impl.c_str(),
                    why ? why : t ? t->call_error.c_str() : status);
    std::fflush(stdout);
    if (!run.csv)
        return;
    const double chk = t && !t->call_failed ? t->check.worst : 0;
    std::fprintf(run.csv, "%lld,%lld,%lld,%c,%c,%g,%s,%s,%s,%d,%s,%s,", static_cast<long long>(s.m),
                 static_cast<long long>(s.n), static_cast<long long>(s.k), s.ta, s.tb, run.opt.beta, kMemoryName[mem],
                 csv_text(run.setting).c_str(), devices.c_str(), ndev, impl.c_str(), block_s.c_str());
    if (t && !t->call_failed && !t->times.empty())
        std::fprintf(run.csv, "%.6e,%.3f,%zu,%.6e,%.6e,%.6e,%s,%s,%s\n", sec, s.flops() / sec / 1e12,
                     t->times.size(), mn, mx, t->first, std::isfinite(chk) ? fmt_check(chk).c_str() : "inf",
                     check_kind, status);
    else
        std::fprintf(run.csv, ",,0,,,,,%s,%s\n", check_kind, status);
    std::fflush(run.csv);
}

// Bytes of host operands a shape allocates (A, B, C per memory kind; C0).
double shape_bytes(const Options &opt, const Shape &s)
{
    const double per = 4.0 * static_cast<double>(s.na() + s.nb() + s.nc());
    const int kinds = (opt.memory[kPinned] ? 1 : 0) + (opt.memory[kPageable] ? 1 : 0);
    return per * kinds + (opt.beta != 0 ? 4.0 * static_cast<double>(s.nc()) : 0.0);
}

// What the tgemm rows of shapes[from...] should take, from the last
// shape's rates; 0 before any was measured.
double tgemm_reserve(const Run &run, const std::vector<Shape> &shapes, size_t from)
{
    double total = 0;
    for (size_t i = from; i < shapes.size(); ++i) {
        const Shape &s = shapes[i];
        total += run.setup_spb * shape_bytes(run.opt, s);
        for (int m = 0; m < kMemories; ++m)
            if (run.opt.memory[m] && run.opt.tgemm) {
                const double call = run.tgemm_spf[m] * s.flops();
                total += call * (1 + reps_for(run.opt, call)) + 0.2;  // + two checks
            }
    }
    return total;
}

cublasXtHandle_t xt_handle(Run &run, int pin)
{
    if (!run.xt[pin]) {
        CUBLAS_CHECK(cublasXtCreate(&run.xt[pin]));
        std::vector<int> ids = run.xt_devs;
        CUBLAS_CHECK(cublasXtDeviceSelect(run.xt[pin], static_cast<int>(ids.size()), ids.data()));
        CUBLAS_CHECK(
            cublasXtSetPinningMemMode(run.xt[pin], pin ? CUBLASXT_PINNING_ENABLED : CUBLASXT_PINNING_DISABLED));
    }
    return run.xt[pin];
}

// cuBLAS-XT's block sizes for shape s: all of --xt-bs up to --xt-full-max;
// above it the --xt-keep fastest at the largest shape measured at or under
// it (all of them when there is none).
std::vector<int> xt_block_sizes(const Run &run, const Shape &s, int mem, int pin)
{
    if (s.largest() <= run.opt.xt_full_max)
        return run.opt.xt_bs;
    const auto it = run.xt_best.find({mem, pin});
    if (it == run.xt_best.end() || it->second.second.empty())
        return run.opt.xt_bs;
    std::vector<std::pair<double, int>> by_time = it->second.second;
    std::sort(by_time.begin(), by_time.end());
    std::vector<int> keep;
    for (size_t i = 0; i < by_time.size() && static_cast<int>(i) < run.opt.xt_keep; ++i)
        keep.push_back(by_time[i].second);
    std::printf("  cuBLAS-XT block sizes for %s %s: %s (the %d fastest at largest dimension %lld)\n",
                s.name().c_str(), kMemoryName[mem], join(keep, ", ").c_str(), run.opt.xt_keep,
                static_cast<long long>(it->second.first));
    return keep;
}

void run_shape(Run &run, const std::vector<Shape> &shapes, size_t index)
{
    const Options &opt = run.opt;
    const Shape &s = shapes[index];
    const double t_setup = now_s();
    std::printf("\n== %s: m=%lld n=%lld k=%lld %c%c, alpha 1, beta %g; %.2f GiB of host operands\n",
                s.name().c_str(), static_cast<long long>(s.m), static_cast<long long>(s.n),
                static_cast<long long>(s.k), s.ta, s.tb, opt.beta, shape_bytes(opt, s) / 1073741824.0);
    std::fflush(stdout);
    // The same values in both memory kinds; keys from the seed and the shape's index.
    const uint64_t key = (opt.seed << 12) ^ (static_cast<uint64_t>(index) << 4);
    struct Operands {
        std::unique_ptr<HostBuffer> a, b, c;
    } ops[kMemories];
    std::unique_ptr<HostBuffer> c0;
    if (opt.beta != 0) {
        c0.reset(new HostBuffer(s.nc(), false));
        fill(c0->p, s.nc(), key + 3);
    }
    const float *srcA = nullptr, *srcB = nullptr;
    for (int m = 0; m < kMemories; ++m) {
        if (!opt.memory[m])
            continue;
        Operands &o = ops[m];
        o.a.reset(new HostBuffer(s.na(), m == kPinned));
        o.b.reset(new HostBuffer(s.nb(), m == kPinned));
        o.c.reset(new HostBuffer(s.nc(), m == kPinned));
        fill(o.a->p, s.na(), key + 1);
        fill(o.b->p, s.nb(), key + 2);
        poison(o.c->p, s.nc());  // written once before use, as an application's C would be
        srcA = o.a->p;
        srcB = o.b->p;
    }
    Check chk;
    const double t_ref = now_s();
    if (s.largest() <= opt.full_max)
        make_full(s, srcA, srcB, opt.beta, c0 ? c0->p : nullptr, run.tgemm_first, chk);
    else
        make_sample(s, srcA, srcB, opt.beta, c0 ? c0->p : nullptr, opt.sample, opt.seed + index, chk);
    const char *check_kind = chk.full ? "full" : "sample";
    const double now = now_s();
    std::printf("  setup %.2f s (reference %.2f s: %s)\n", now - t_setup, now - t_ref,
                chk.full ? "every element, DGEMM on the device"
                         : (std::to_string(chk.rows.size() * chk.cols.size()) +
                            " sampled elements, FP64 dots on the host, "
                            "and every element finite").c_str());
    run.setup_spb = (now - t_setup) / shape_bytes(opt, s);

    for (int m = 0; m < kMemories; ++m) {
        if (!opt.memory[m])
            continue;
        const Memory mem = static_cast<Memory>(m);
        float *A = ops[m].a->p, *B = ops[m].b->p, *C = ops[m].c->p;
        const auto prepare = [&] {
            if (opt.beta == 0)
                poison(C, s.nc());
            else
                copy(C, c0->p, s.nc());
        };
        const float alpha = 1.0f, beta = static_cast<float>(opt.beta);
        if (opt.tgemm) {
            const auto call = [&](std::string &) {
                CUDA_CHECK(cudaSetDevice(run.tgemm_first));
                const tgemm_status st = tgemm_sgemm(s.ta == 'N' ? TGEMM_OP_N : TGEMM_OP_T,
                                                    s.tb == 'N' ? TGEMM_OP_N : TGEMM_OP_T, s.m, s.n, s.k, alpha, A,
                                                    s.lda(), B, s.ldb(), beta, C, s.m);
                if (st != TGEMM_SUCCESS)
                    die("tgemm_sgemm (%s, %s, TGEMM_DEVICES %s) returned %d: %s; detail: %s", s.name().c_str(),
                        kMemoryName[m], run.setting.c_str(), static_cast<int>(st), tgemm_status_string(st),
                        tgemm_last_error_detail());
                return true;
            };
            const Timing t = time_config(opt, s, chk, C, call, prepare);
            const bool ok = t.check.passed;
            if (!ok) {
                ++run.failures;
                std::fflush(stdout);
                std::fprintf(stderr, "%s: FAILED: tgemm, %s %s, TGEMM_DEVICES %s: %s\n", program_name,
                             s.name().c_str(), kMemoryName[m], run.setting.c_str(), t.check.detail.c_str());
            }
            write_row(run, s, mem, run.tgemm_devices, run.tgemm_ndev, "tgemm", 0, &t, check_kind, ok ? "ok" : "FAIL");
            if (!t.times.empty())
                run.tgemm_spf[m] = median(t.times) / s.flops();
        }
        if (!opt.xt)
            continue;
        const std::string xt_devices = join(run.xt_devs, "+");
        const int xt_ndev = static_cast<int>(run.xt_devs.size());
        for (int pin = 0; pin < 2; ++pin) {
            if (!opt.xt_pin[pin])
                continue;
            std::vector<std::pair<double, int>> measured;
            for (int bs : xt_block_sizes(run, s, m, pin)) {
                const std::string impl = std::string(pin ? "cublasxt-pin-bs" : "cublasxt-bs") + std::to_string(bs);
                // The deadline: this configuration's estimate (from the same
                // block size at an earlier shape, by flops) and the tgemm
                // work still to come must fit.
                if (opt.deadline > 0) {
                    double est = 0;
                    const auto it = run.xt_best.find({m, pin});
                    if (it != run.xt_best.end())
                        for (const auto &p : it->second.second)
                            if (p.second == bs) {
                                const double call = p.first * s.flops() /
                                                    (2.0 * it->second.first * it->second.first * it->second.first);
                                est = call * (1 + reps_for(opt, call));
                            }
                    const double left = opt.deadline - (now_s() - run.start) - tgemm_reserve(run, shapes, index + 1);
                    if (est > left || left <= 0) {
                        char why[96];
                        std::snprintf(why, sizeof why, "skipped: about %.1f s, %.1f s left before the deadline", est,
                                      std::max(0.0, left));
                        write_row(run, s, mem, xt_devices, xt_ndev, impl, bs, nullptr, check_kind, "skipped", why);
                        continue;
                    }
                }
                cublasXtHandle_t h = xt_handle(run, pin);
                CUBLAS_CHECK(cublasXtSetBlockDim(h, bs));
                const auto call = [&](std::string &err) {
                    const cublasStatus_t st = cublasXtSgemm(h, s.ta == 'N' ? CUBLAS_OP_N : CUBLAS_OP_T,
                                                            s.tb == 'N' ? CUBLAS_OP_N : CUBLAS_OP_T, s.m, s.n, s.k,
                                                            &alpha, A, s.lda(), B, s.ldb(), &beta, C, s.m);
                    for (int d : run.xt_devs) {
                        CUDA_CHECK(cudaSetDevice(d));
                        CUDA_CHECK(cudaDeviceSynchronize());
                    }
                    if (st != CUBLAS_STATUS_SUCCESS) {
                        err = std::string("cublasXtSgemm returned ") + std::to_string(static_cast<int>(st)) + " (" +
                              cublasGetStatusString(st) + ")";
                        return false;
                    }
                    return true;
                };
                const Timing t = time_config(opt, s, chk, C, call, prepare);
                const bool ok = t.check.passed && !t.call_failed;
                if (!ok) {
                    ++run.failures;
                    std::fflush(stdout);
                    std::fprintf(stderr, "%s: FAILED: %s, %s %s, devices %s: %s\n", program_name, impl.c_str(),
                                 s.name().c_str(), kMemoryName[m], xt_devices.c_str(),
                                 t.call_failed ? t.call_error.c_str() : t.check.detail.c_str());
                }
                write_row(run, s, mem, xt_devices, xt_ndev, impl, bs, &t, check_kind, ok ? "ok" : "FAIL");
                if (ok && !t.times.empty())
                    measured.push_back({median(t.times), bs});
            }
            if (s.m == s.n && s.n == s.k && s.largest() <= opt.xt_full_max && !measured.empty()) {
                auto &best = run.xt_best[{m, pin}];
                if (s.largest() >= best.first)
                    best = std::make_pair(s.largest(), measured);
            }
        }
    }
}

void describe_devices(int count)
{
    int driver = 0, runtime = 0;
    CUDA_CHECK(cudaDriverGetVersion(&driver));
    CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    int major = 0, minor = 0, patch = 0;
    CUBLAS_CHECK(cublasGetProperty(MAJOR_VERSION, &major));
    CUBLAS_CHECK(cublasGetProperty(MINOR_VERSION, &minor));
    CUBLAS_CHECK(cublasGetProperty(PATCH_LEVEL, &patch));
    std::printf("CUDA driver %d.%d, runtime %d.%d, cuBLAS %d.%d.%d; tgemm %s (header %s); %u host threads\n",
                driver / 1000, (driver % 1000) / 10, runtime / 1000, (runtime % 1000) / 10, major, minor, patch,
                tgemm_version_string(), TGEMM_VERSION_STRING, g_threads);
    for (int d = 0; d < count; ++d) {
        cudaDeviceProp prop;
        CUDA_CHECK(cudaGetDeviceProperties(&prop, d));
        char bus[32] = "?";
        CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, d));
        int numa = -1;
        if (cudaDeviceGetAttribute(&numa, cudaDevAttrHostNumaId, d) != cudaSuccess) {
            numa = -1;
            (void)cudaGetLastError();
        }
        std::printf("device %d: %s, %d SMs, %.1f GiB, PCI %s, host NUMA node %d\n", d, prop.name,
                    prop.multiProcessorCount, prop.totalGlobalMem / 1073741824.0, bus, numa);
    }
}

}  // namespace

int main(int argc, char **argv)
{
    program_name = "bench_multi";
    Options opt;
    bool any_shape = false;
    long long threads = 0;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto need = [&](int count) {
            if (i + count >= argc)
                bad_argument("%s needs %d argument(s)", a.c_str(), count);
        };
        if (a == "--help" || a == "-h") {
            usage(stdout);
            return 0;
        } else if (a == "--sizes") {
            need(1);
            for (long long n : parse_int_list(argv[++i], "--sizes", 1, INT_MAX)) {
                Shape s;
                s.m = s.n = s.k = n;
                opt.shapes.push_back(s);
            }
            any_shape = true;
        } else if (a == "--shape") {
            need(5);
            Shape s;
            s.m = parse_int(argv[i + 1], "--shape M", 1, INT_MAX);
            s.n = parse_int(argv[i + 2], "--shape N", 1, INT_MAX);
            s.k = parse_int(argv[i + 3], "--shape K", 1, INT_MAX);
            for (int t = 0; t < 2; ++t) {
                const std::string op = argv[i + 4 + t];
                if (op != "N" && op != "n" && op != "T" && op != "t")
                    bad_argument("--shape %s: '%s' is not N or T", t ? "TB" : "TA", op.c_str());
                (t ? s.tb : s.ta) = static_cast<char>(std::toupper(op[0]));
            }
            opt.shapes.push_back(s);
            any_shape = true;
            i += 5;
        } else if (a == "--memory") {
            need(1);
            const std::string m = argv[++i];
            if (m != "pinned" && m != "pageable" && m != "both")
                bad_argument("--memory takes pinned, pageable or both, not '%s'", m.c_str());
            opt.memory[kPinned] = m != "pageable";
            opt.memory[kPageable] = m != "pinned";
        } else if (a == "--beta") {
            need(1);
            opt.beta = static_cast<double>(parse_int(argv[++i], "--beta", 0, 1));
        } else if (a == "--reps") {
            need(1);
            opt.reps = static_cast<int>(parse_int(argv[++i], "--reps", 1, 100000));
        } else if (a == "--target-seconds") {
            need(1);
            opt.target = parse_double(argv[++i], "--target-seconds", 0, 3600);
        } else if (a == "--max-reps") {
            need(1);
            opt.max_reps = static_cast<int>(parse_int(argv[++i], "--max-reps", 3, 100000));
        } else if (a == "--deadline") {
            need(1);
            opt.deadline = parse_double(argv[++i], "--deadline", 0, 1e7);
        } else if (a == "--csv") {
            need(1);
            opt.csv_path = argv[++i];
        } else if (a == "--xt-devices") {
            need(1);
            opt.xt_devices = argv[++i];
        } else if (a == "--xt-bs") {
            need(1);
            opt.xt_bs.clear();
            for (long long b : parse_int_list(argv[++i], "--xt-bs", 1, 1 << 20))
                opt.xt_bs.push_back(static_cast<int>(b));
        } else if (a == "--xt-full-max") {
            need(1);
            opt.xt_full_max = parse_int(argv[++i], "--xt-full-max", 1, INT_MAX);
        } else if (a == "--xt-keep") {
            need(1);
            opt.xt_keep = static_cast<int>(parse_int(argv[++i], "--xt-keep", 1, 64));
        } else if (a == "--xt-pin") {
            need(1);
            const std::string m = argv[++i];
            if (m != "off" && m != "on" && m != "both")
                bad_argument("--xt-pin takes off, on or both, not '%s'", m.c_str());
            opt.xt_pin[0] = m != "on";
            opt.xt_pin[1] = m != "off";
        } else if (a == "--no-xt") {
            opt.xt = false;
        } else if (a == "--no-tgemm") {
            opt.tgemm = false;
        } else if (a == "--sample") {
            need(1);
            opt.sample = parse_int(argv[++i], "--sample", 1, 1 << 24);
        } else if (a == "--full-max") {
            need(1);
            opt.full_max = parse_int(argv[++i], "--full-max", 0, INT_MAX);
        } else if (a == "--threads") {
            need(1);
            threads = parse_int(argv[++i], "--threads", 1, 4096);
        } else if (a == "--seed") {
            need(1);
            opt.seed = static_cast<uint64_t>(parse_int(argv[++i], "--seed", 0, LLONG_MAX));
        } else if (a == "--links") {
            opt.links = true;
        } else if (a == "--links-csv") {
            need(1);
            opt.links_csv = argv[++i];
        } else if (a == "--link-mib") {
            need(1);
            opt.link_bytes = static_cast<size_t>(parse_int(argv[++i], "--link-mib", 1, 65536)) << 20;
        } else if (a == "--link-reps") {
            need(1);
            opt.link_reps = static_cast<int>(parse_int(argv[++i], "--link-reps", 1, 1000));
        } else {
            bad_argument("unknown argument '%s'", a.c_str());
        }
    }
    const bool products = any_shape || !opt.links;
    if (!any_shape)
        for (int64_t n : {4096, 8192, 12288, 16384}) {
            Shape s;
            s.m = s.n = s.k = n;
            opt.shapes.push_back(s);
        }
    if (products && !opt.tgemm && !opt.xt)
        bad_argument("--no-tgemm and --no-xt: nothing to run");
    g_threads = threads > 0 ? static_cast<unsigned>(threads) : std::max(1u, std::thread::hardware_concurrency());

    Run run(opt);
    run.start = now_s();
    int count = 0;
    const cudaError_t found = cudaGetDeviceCount(&count);
    if (found != cudaSuccess)
        die("no usable CUDA device: cudaGetDeviceCount says %s (%s)", cudaGetErrorName(found),
            cudaGetErrorString(found));
    if (count < 1)
        die("no CUDA device");

    // The device sets, before any work, so that a bad setting fails at once.
    const char *env = std::getenv("TGEMM_DEVICES");
    run.setting = env ? env : "unset";
    std::vector<int> listed;  // TGEMM_DEVICES's numbers (every device for all and auto)
    if (!env) {
        // One GPU: TGEMM_DEVICE's number, else device 0 (for local-rank,
        // tgemm's choice, which this program does not repeat).
        const char *one = std::getenv("TGEMM_DEVICE");
        int d = 0;
        std::vector<int> v;
        std::string err;
        if (one && *one && parse_devices(one, count, v, err) && v.size() == 1)
            d = v[0];
        else if (one && *one)
            std::printf("TGEMM_DEVICE=%s: cuBLAS-XT on device 0, the current device at each tgemm call\n", one);
        listed = {d};
        run.tgemm_devices = std::to_string(d);
    } else if (run.setting == "auto") {
        listed = devices_or_exit("all", count, "TGEMM_DEVICES");
        run.tgemm_devices = "auto";
    } else {
        listed = devices_or_exit(run.setting, count, "TGEMM_DEVICES");
        run.tgemm_devices = join(listed, "+");
    }
    run.tgemm_ndev = static_cast<int>(listed.size());
    run.tgemm_first = listed[0];
    run.xt_devs = opt.xt_devices.empty() ? listed : devices_or_exit(opt.xt_devices, count, "--xt-devices");
    {
        std::vector<int> seen;
        for (int d : run.xt_devs)
            if (std::find(seen.begin(), seen.end(), d) == seen.end())
                seen.push_back(d);
        if (seen.size() != run.xt_devs.size())
            std::printf("cuBLAS-XT: a device listed twice is used once\n");
        run.xt_devs = seen;
    }

    describe_devices(count);
    if (opt.links)
        run_links(opt, count);
    if (!products)
        return 0;

    std::printf("\nTGEMM_DEVICES%s%s: tgemm on %s (%s); the calling thread's current device: %d\n",
                env ? "=" : " ", run.setting.c_str(),
                run.setting == "auto" ? "the devices tgemm picks per call" : "devices",
                run.setting == "auto" ? (std::to_string(count) + " present").c_str()
                                      : join(listed, ", ").c_str(),
                run.tgemm_first);
    if (opt.xt)
        std::printf("cuBLAS-XT (cublasXtSgemm) on devices %s (%s), block sizes %s, pinning mode %s\n",
                    join(run.xt_devs, ", ").c_str(), opt.xt_devices.empty() ? "from TGEMM_DEVICES" : "--xt-devices",
                    join(opt.xt_bs, ", ").c_str(),
                    opt.xt_pin[0] && opt.xt_pin[1] ? "off and on" : opt.xt_pin[1] ? "on" : "off (its default)");
    std::printf("seed %llu (inputs uniform in (-1,1), splitmix64 by element); column-major, no padding; alpha 1, "
                "beta %g (%s before every call)\n",
                static_cast<unsigned long long>(opt.seed), opt.beta,
                opt.beta == 0 ? "C poisoned with NaN" : "C set to C0");
    std::printf("time = wall clock of one call alone (C in place when it returns), median of the reps after a "
                "checked warm-up call; reps %s; the last call's output is checked too\n",
                opt.reps > 0 ? std::to_string(opt.reps).c_str()
                             : ("what fits " + fmt_check(opt.target) + " s, 3 to " + std::to_string(opt.max_reps))
                                   .c_str());
    std::printf("check: |C - R| <= gamma_{K+2} (|A||B| + |beta||C0|), u = 2^-24 (bench/gemm_check.hpp): every "
                "element when no dimension passes %lld, else a grid of about %lld sampled elements and every "
                "element finite\n",
                static_cast<long long>(opt.full_max), static_cast<long long>(opt.sample));
    if (opt.deadline > 0)
        std::printf("deadline %.4g s: cuBLAS-XT configurations that would pass it are skipped\n", opt.deadline);
    if (!opt.csv_path.empty())
        run.csv = open_csv(opt.csv_path, kCsvHeader);
    for (size_t i = 0; i < opt.shapes.size(); ++i)
        run_shape(run, opt.shapes, i);
    for (cublasXtHandle_t h : run.xt)
        if (h)
            CUBLAS_CHECK(cublasXtDestroy(h));
    if (run.csv) {
        if (std::fclose(run.csv) != 0)
            die("closing %s failed", opt.csv_path.c_str());
        std::printf("csv: %s\n", opt.csv_path.c_str());
    }
    std::printf("total %.1f s\n", now_s() - run.start);
    if (run.failures) {
        std::fprintf(stderr, "%s: %d configuration(s) FAILED (above)\n", program_name, run.failures);
        return 1;
    }
    return 0;
}
