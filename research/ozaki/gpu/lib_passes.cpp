// Where the time of the library's fp32-tc call goes (issue 28), not part of
// make: the passes of src/kernels/ozaki, launched one by one through their
// own launchers (kernels/ozaki/passes.hpp and ozaki.hpp, linked from the
// build's objects) with CUDA events around each, on the inputs of the
// acceptance set, beside the whole call through the public API
// (tgemm_sgemm_ex in TGEMM_MATH_FP32_TC, certificate and its wait
// included) and strict FP32. Each pass against its bound: bytes it must
// move / 2.88 TB/s, and for the two GEMMs their integer operations / the
// INT8 tensor engine's peak (kTensorOps). The whole call less the sum of
// the passes is what the call adds around them: the wait for the
// certificate's result, the launches, the workspace pool.
//
//   lib_passes [MxNxK[:phi] ...]   (default 8192^3 at phi 0.5 and 1, 4096^3 and 16384^3 at 0.5)
//
// Markdown on standard output: one table per problem. Medians of kReps.
#include <tgemm.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "kernels/ozaki/passes.hpp"
#include "cuda_check.hpp"
#include "ozaki_inputs.hpp"

namespace {

using namespace tgemm::ozaki;

constexpr int kReps = 7;
constexpr double kBytesPerS = 2.88e12;   // device memory, read + written (../shared/PERF.md)
constexpr double kTensorOps = 1979e12;   // H100 SXM dense INT8 peak, ops/s (the data sheet's)

// Median time of f on stream 0 in ms, events around each of kReps calls
// after one untimed.
double time_ms(const std::function<void()> &f)
{
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    f();
    CK(cudaDeviceSynchronize());
    std::vector<double> v;
    for (int r = 0; r < kReps; ++r) {
        CK(cudaEventRecord(e0, nullptr));
        f();
        CK(cudaEventRecord(e1, nullptr));
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        v.push_back(ms);
    }
    CK(cudaGetLastError());
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

struct Pass {
    std::string name;
    double ms;
    double floor_ms;  // its bound
    const char *bound;
};

void run(int64_t m, int64_t n, int64_t k, double phi, int sm_count)
{
    const ozaki_inputs::Case *cs = nullptr;
    for (const ozaki_inputs::Case &c : ozaki_inputs::cases())
        if (c.kind == ozaki_inputs::Kind::Phi && c.phi == phi)
            cs = &c;
    if (cs == nullptr) {
        std::fprintf(stderr, "lib_passes: no input case with phi %g\n", phi);
        std::exit(2);
    }
    ozaki_inputs::Matrix A = ozaki_inputs::make_matrix(m, k, m, 0.0f);
    ozaki_inputs::Matrix B = ozaki_inputs::make_matrix(k, n, k, 0.0f);
    ozaki_inputs::fill(*cs, false, false, m, n, k, 20261126 + uint64_t(m * 3 + n * 5 + k * 7), A, B);
    float *dA, *dB, *dC;
    CK(cudaMalloc(reinterpret_cast<void **>(&dA), A.v.size() * 4));
    CK(cudaMalloc(reinterpret_cast<void **>(&dB), B.v.size() * 4));
    CK(cudaMalloc(reinterpret_cast<void **>(&dC), size_t(m) * n * 4));
    CK(cudaMemcpy(dA, A.v.data(), A.v.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dB, B.v.data(), B.v.size() * 4, cudaMemcpyHostToDevice));

    // The public call in either math.
    auto whole = [&](tgemm_math_t math) {
        if (tgemm_set_math(math) != TGEMM_SUCCESS)
            std::exit(2);
        return time_ms([&] {
            if (tgemm_sgemm_ex(TGEMM_LAYOUT_COL_MAJOR, TGEMM_OP_N, TGEMM_OP_N, m, n, k, 1.0f, dA, m, dB, k, 0.0f, dC,
                               m, nullptr) != TGEMM_SUCCESS) {
                std::fprintf(stderr, "tgemm: %s\n", tgemm_last_error_detail());
                std::exit(2);
            }
        });
    };
    const double strict_ms = whole(TGEMM_MATH_STRICT);
    const double call_ms = whole(TGEMM_MATH_FP32_TC);

    // The passes, as dispatch/fp32_tc.cpp orders them (op(A) = A, op(B) = B: N N).
    Operands op;
    op.a = dA;
    op.ars = 1;
    op.aks = m;
    op.b = dB;
    op.brs = k;
    op.bks = 1;
    op.m = m;
    op.n = n;
    op.k = k;
    const Sizes s = sizes_of(m, n, k);
    void *cert_work, *prod_work;
    CK(cudaMalloc(&cert_work, cert_bytes(s)));
    const CertBuffers cb = cert_buffers(cert_work, s);
    CK(launch_certificate(op, s, cb, sm_count, nullptr));
    int result[2];
    CK(cudaMemcpy(result, cb.result, sizeof result, cudaMemcpyDeviceToHost));
    if (result[1] != 0 || result[0] > kMaxN) {
        std::printf("%lld x %lld x %lld, phi %g: the certificate declines (N %d, flags %d)\n\n", (long long)m,
                    (long long)n, (long long)k, phi, result[0], result[1]);
        CK(cudaFree(cert_work));
        CK(cudaFree(dA));
        CK(cudaFree(dB));
        CK(cudaFree(dC));
        return;
    }
    const int nm = result[0];
    CK(cudaMalloc(&prod_work, product_bytes(s, nm)));
    const ProductBuffers pb = product_buffers(prod_work, s, nm);
    const double cert_all = time_ms([&] { CK(launch_certificate(op, s, cb, sm_count, nullptr)); });
    const double stats = time_ms([&] { CK(launch_stats(op, s, cb, nullptr)); });
    const double mag = time_ms([&] { CK(launch_magnitude_gemm(cb, s, cert_target(k), sm_count, nullptr)); });
    const double expo = time_ms([&] { CK(launch_exponents(op, s, cb, pb.mu, pb.nu, nm, nullptr)); });
    const double conv = time_ms([&] { CK(launch_convert(op, s, cb.ebal, pb.mu, pb.nu, pb.ra, pb.rb, nm, nullptr)); });
    const double gemm = time_ms([&] { CK(launch_residue_gemm(pb.ra, pb.rb, pb.rc, s, nm, sm_count, nullptr)); });
    const double crt = time_ms([&] { CK(launch_crt(op, s, pb, nm, 1.0f, 0.0f, dC, m, nullptr)); });

    const double M = double(m), N = double(n), K = double(k), mp = double(s.mp), np = double(s.np),
                 kp = double(s.kp), ab = 4 * (M * K + K * N), nmd = double(nm);
    const auto ms_of_bytes = [](double b) { return b / kBytesPerS * 1e3; };
    const auto ms_of_ops = [](double o) { return o / kTensorOps * 1e3; };
    std::vector<Pass> passes = {
        {"certificate: statistics (K balancing; sums of squares and row maxima)", stats, ms_of_bytes(2 * ab),
         "A, B read twice"},
        {"certificate: magnitudes", cert_all - stats - mag, ms_of_bytes(ab + (mp + np) * kp),
         "A, B read; u8 planes written"},
        {"certificate: u8 GEMM of the magnitudes, its test per element, the call's N", mag, ms_of_ops(2 * mp * np * kp),
         "tensor engine"},
        {"exponents mu, nu", expo, ms_of_bytes(8 * (M + N)), "sums read"},
        {"conversion to " + std::to_string(nm) + " residue planes", conv, ms_of_bytes(ab + nmd * (mp + np) * kp),
         "A, B read; planes written"},
        {std::to_string(nm) + " INT8 GEMMs, sums reduced mod p", gemm, ms_of_ops(nmd * 2 * mp * np * kp),
         "tensor engine"},
        {"CRT, scaling back, alpha/beta epilogue", crt, ms_of_bytes(nmd * mp * np + 4 * M * N),
         "residues read, C written"},
    };
    double sum = 0;
    for (const Pass &p : passes)
        sum += p.ms;
    const double flops = 2 * M * N * K;
    std::printf("### %lld x %lld x %lld, phi %g: N = %d\n\n", (long long)m, (long long)n, (long long)k, phi, nm);
    std::printf("| pass | ms | share of the call | bound ms | bound | time / bound |\n|---|---:|---:|---:|---|---:|\n");
    for (const Pass &p : passes)
        std::printf("| %s | %.3f | %.1f%% | %.3f | %s | %.2f |\n", p.name.c_str(), p.ms, 100 * p.ms / call_ms,
                    p.floor_ms, p.bound, p.ms / p.floor_ms);
    std::printf("| the passes, one by one | %.3f | %.1f%% | | | |\n", sum, 100 * sum / call_ms);
    std::printf("| around them (wait for N, launches, pool) | %.3f | %.1f%% | | | |\n", call_ms - sum,
                100 * (call_ms - sum) / call_ms);
    std::printf("| **the call** (tgemm_sgemm_ex, fp32-tc) | %.3f | 100%% | | | %.1f TFLOP/s |\n", call_ms,
                flops / call_ms * 1e-9);
    std::printf("| strict FP32 (same inputs) | %.3f | | | | %.1f TFLOP/s |\n\n", strict_ms, flops / strict_ms * 1e-9);
    std::printf("The %d INT8 GEMMs run at %.0f TOPS (%.0f%% of %.0f).\n\n", nm, nmd * 2 * mp * np * kp / gemm * 1e-9,
                100 * ms_of_ops(nmd * 2 * mp * np * kp) / gemm, kTensorOps * 1e-12);
    std::fflush(stdout);
    CK(cudaFree(prod_work));
    CK(cudaFree(cert_work));
    CK(cudaFree(dA));
    CK(cudaFree(dB));
    CK(cudaFree(dC));
}

}  // namespace

int main(int argc, char **argv)
{
    struct Job {
        long long m, n, k;
        double phi;
    };
    std::vector<Job> jobs;
    for (int i = 1; i < argc; ++i) {
        Job j{0, 0, 0, 0.5};
        if (std::sscanf(argv[i], "%lldx%lldx%lld:%lf", &j.m, &j.n, &j.k, &j.phi) < 3) {
            std::fprintf(stderr, "usage: lib_passes [MxNxK[:phi] ...]\n");
            return 2;
        }
        jobs.push_back(j);
    }
    if (jobs.empty())
        jobs = {{8192, 8192, 8192, 0.5}, {8192, 8192, 8192, 1.0}, {4096, 4096, 4096, 0.5}, {16384, 16384, 16384, 0.5}};
    int dev = 0, sm = 0, major = 0, minor = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sm, cudaDevAttrMultiProcessorCount, dev));
    CK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    CK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
    bool available = false;
    CK(prepare_ozaki(major, minor, &available));
    if (!available) {
        std::fprintf(stderr, "lib_passes: the INT8 GEMM does not run on this device\n");
        return 2;
    }
    std::printf("Passes of the fp32-tc call, CUDA events, median of %d; bounds: %.2f TB/s, INT8 %.0f TOPS\n\n", kReps,
                kBytesPerS * 1e-12, kTensorOps * 1e-12);
    for (const Job &j : jobs)
        run(j.m, j.n, j.k, j.phi, sm);
    return 0;
}
