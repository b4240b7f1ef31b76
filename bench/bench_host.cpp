// Host-operand mode (--host): tgemm_sgemm on pageable and on pinned host
// operands against the naive cuBLAS path (copy in, multiply, copy out) from
// the same memory and against the multiply alone on device pointers, wall
// clock, each against the floor of the link and the multiply. CSV columns:
// name,m,n,k,ta,tb,path,memory,time_ms,tflops,vs_naive,x_multiply,floor_ms,
// floor_kind,pct_of_floor,resid.
#include "bench.hpp"

#include <algorithm>
#include <cstring>

namespace bench {

namespace {

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
    const Storage dims = storage(s);
    const int64_t lda = dims.lda, ldb = dims.ldb, ldc = dims.ldc;
    const size_t nA = dims.nA, nB = dims.nB, nC = dims.nC;
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

}  // namespace

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

}  // namespace bench
