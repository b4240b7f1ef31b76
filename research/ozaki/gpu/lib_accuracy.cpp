// Issue 28's contract on the library's fp32-tc math (not part of make):
// per shape and input case of the acceptance set, the same device-pointer
// call in strict FP32 and in fp32-tc (through the public API), each
// against an FP64 reference on sampled columns: max |C - C64| / (|A||B|)
// elementwise and ||C - C64||_F / ||C64||_F; and every sampled element of
// the mode's C checked against contract (a), gamma_K |A||B| (alpha = 1,
// beta = 0) plus the FP64 reference's own rounding; and each math's rate
// on those inputs. Whether the mode ran, and with which N, is on stderr
// with TGEMM_VERBOSE=2.
//
//   lib_accuracy [MxNxK ...]   (default 1024^3, 4096^3, 8192^3, 8192x2048x4096, 3000x5000x700)
// LIB_ACCURACY_COLUMNS: columns sampled (default 48); LIB_ACCURACY_CASES:
// the input cases to run, names separated by commas (default all).
// Exit status 1 if any element of the mode's result breaks the bound.
#include <tgemm.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "cuda_check.hpp"
#include "ozaki_inputs.hpp"

namespace {

struct Errors {
    double max_rel = 0, norm = 0;
    int64_t over_bound = 0;
};

// Errors of C (m x n, ld m) on columns `cols` against FP64.
Errors errors(const ozaki_inputs::Matrix &A, const ozaki_inputs::Matrix &B, const std::vector<float> &C,
              const std::vector<int64_t> &cols, int64_t m, int64_t k)
{
    const unsigned nt = std::max(1u, std::thread::hardware_concurrency());
    std::vector<Errors> part(nt);
    std::vector<double> num(nt), den(nt);
    const double u = std::ldexp(1.0, -24), gamma = double(k) * u / (1.0 - double(k) * u);
    std::vector<std::thread> th;
    for (unsigned t = 0; t < nt; ++t)
        th.emplace_back([&, t] {
            std::vector<double> ref(m), z(m);
            for (size_t c = t; c < cols.size(); c += nt) {
                const int64_t j = cols[c];
                std::fill(ref.begin(), ref.end(), 0.0);
                std::fill(z.begin(), z.end(), 0.0);
                for (int64_t q = 0; q < k; ++q) {
                    const double b = B.v[q + j * B.ld];
                    const float *a = &A.v[q * A.ld];
                    for (int64_t i = 0; i < m; ++i) {
                        ref[i] += double(a[i]) * b;
                        z[i] += std::fabs(double(a[i]) * b);
                    }
                }
                for (int64_t i = 0; i < m; ++i) {
                    const double d = std::fabs(double(C[i + j * m]) - ref[i]);
                    if (z[i] > 0)
                        part[t].max_rel = std::max(part[t].max_rel, d / z[i]);
                    num[t] += d * d;
                    den[t] += ref[i] * ref[i];
                    if (!(d <= gamma * z[i] + double(k) * 0x1p-52 * z[i] + 0x1p-140))
                        ++part[t].over_bound;
                }
            }
        });
    for (auto &x : th)
        x.join();
    Errors e;
    double nn = 0, dd = 0;
    for (unsigned t = 0; t < nt; ++t) {
        e.max_rel = std::max(e.max_rel, part[t].max_rel);
        e.over_bound += part[t].over_bound;
        nn += num[t];
        dd += den[t];
    }
    e.norm = dd > 0 ? std::sqrt(nn / dd) : std::sqrt(nn);
    return e;
}

void run_once(int64_t m, int64_t n, int64_t k, const float *dA, const float *dB, float *dC)
{
    const tgemm_status st = tgemm_sgemm_ex(TGEMM_LAYOUT_COL_MAJOR, TGEMM_OP_N, TGEMM_OP_N, m, n, k, 1.0f, dA, m, dB, k,
                                           0.0f, dC, m, nullptr);
    if (st != TGEMM_SUCCESS) {
        std::fprintf(stderr, "tgemm: %s (%s)\n", tgemm_status_string(st), tgemm_last_error_detail());
        std::exit(2);
    }
}

// C of one call in `math`, then (with `tflops`) the median rate of five
// more calls on the same inputs, each timed alone with events (the mode's
// certificate and its wait for the stream included).
std::vector<float> call(tgemm_math_t math, int64_t m, int64_t n, int64_t k, const float *dA, const float *dB,
                        float *dC, double *tflops)
{
    if (tgemm_set_math(math) != TGEMM_SUCCESS)
        std::exit(2);
    run_once(m, n, k, dA, dB, dC);
    CK(cudaDeviceSynchronize());
    std::vector<float> c(size_t(m) * n);
    CK(cudaMemcpy(c.data(), dC, c.size() * 4, cudaMemcpyDeviceToHost));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<double> ms;
    for (int r = 0; r < 5; ++r) {
        CK(cudaEventRecord(e0, nullptr));
        run_once(m, n, k, dA, dB, dC);
        CK(cudaEventRecord(e1, nullptr));
        CK(cudaEventSynchronize(e1));
        float t = 0;
        CK(cudaEventElapsedTime(&t, e0, e1));
        ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    *tflops = 2.0 * double(m) * double(n) * double(k) / (ms[2] * 1e-3) / 1e12;
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    return c;
}

}  // namespace

int main(int argc, char **argv)
{
    std::vector<std::vector<int64_t>> shapes;
    for (int i = 1; i < argc; ++i) {
        long long m, n, k;
        if (std::sscanf(argv[i], "%lldx%lldx%lld", &m, &n, &k) != 3) {
            std::fprintf(stderr, "usage: lib_accuracy [MxNxK ...]\n");
            return 2;
        }
        shapes.push_back({m, n, k});
    }
    if (shapes.empty())
        shapes = {{1024, 1024, 1024}, {4096, 4096, 4096}, {8192, 8192, 8192}, {8192, 2048, 4096}, {3000, 5000, 700}};
    const uint64_t seed = 20261126;
    std::printf("seed %" PRIu64 "; errors on sampled columns (%s) against FP64; 'over' = elements of the fp32-tc "
                "result over gamma_K |A||B|\n\n",
                seed, std::getenv("LIB_ACCURACY_COLUMNS") ? std::getenv("LIB_ACCURACY_COLUMNS") : "48");
    std::printf("| m x n x k | input | strict max rel | fp32-tc max rel | strict normwise | fp32-tc normwise | over "
                "| strict TFLOP/s | fp32-tc TFLOP/s |\n");
    std::printf("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    int64_t over = 0;
    for (const auto &sh : shapes) {
        const int64_t m = sh[0], n = sh[1], k = sh[2];
        std::vector<int64_t> cols;
        const char *cols_env = std::getenv("LIB_ACCURACY_COLUMNS");
        const int64_t want = std::min<int64_t>(n, cols_env ? std::max(1, std::atoi(cols_env)) : 48);
        for (int64_t c = 0; c < want; ++c)
            cols.push_back(c * n / want);
        float *dA, *dB, *dC;
        CK(cudaMalloc(reinterpret_cast<void **>(&dA), size_t(m) * k * 4));
        CK(cudaMalloc(reinterpret_cast<void **>(&dB), size_t(k) * n * 4));
        CK(cudaMalloc(reinterpret_cast<void **>(&dC), size_t(m) * n * 4));
        for (const ozaki_inputs::Case &cs : ozaki_inputs::cases()) {
            const char *only = std::getenv("LIB_ACCURACY_CASES");
            if (only && *only && ("," + std::string(only) + ",").find("," + std::string(cs.name) + ",") == std::string::npos)
                continue;
            ozaki_inputs::Matrix A = ozaki_inputs::make_matrix(m, k, m, 0.0f);
            ozaki_inputs::Matrix B = ozaki_inputs::make_matrix(k, n, k, 0.0f);
            ozaki_inputs::fill(cs, false, false, m, n, k, seed + uint64_t(m * 3 + n * 5 + k * 7), A, B);
            CK(cudaMemcpy(dA, A.v.data(), A.v.size() * 4, cudaMemcpyHostToDevice));
            CK(cudaMemcpy(dB, B.v.data(), B.v.size() * 4, cudaMemcpyHostToDevice));
            std::fprintf(stderr, "== %lldx%lldx%lld %s\n", (long long)m, (long long)n, (long long)k, cs.name);
            double ts = 0, tt = 0;
            const Errors es = errors(A, B, call(TGEMM_MATH_STRICT, m, n, k, dA, dB, dC, &ts), cols, m, k);
            const Errors et = errors(A, B, call(TGEMM_MATH_FP32_TC, m, n, k, dA, dB, dC, &tt), cols, m, k);
            over += et.over_bound;
            std::printf("| %lldx%lldx%lld | %s | %.2e | %.2e | %.2e | %.2e | %lld | %.1f | %.1f |\n", (long long)m,
                        (long long)n, (long long)k, cs.name, es.max_rel, et.max_rel, es.norm, et.norm,
                        (long long)et.over_bound, ts, tt);
            std::fflush(stdout);
        }
        CK(cudaFree(dA));
        CK(cudaFree(dB));
        CK(cudaFree(dC));
    }
    std::printf("\n%s\n", over == 0 ? "contract (a): every sampled element within gamma_K |A||B|"
                                      : "contract (a) VIOLATED");
    return over == 0 ? 0 : 1;
}
