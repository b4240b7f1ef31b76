// Host cost per call of tgemm_sgemm_ex and cublasSgemm_v2 on device
// operands: the time to enqueue a call (100 calls without a wait, after a
// sync), the wall time per call of 200 back-to-back calls and a sync, and
// the GPU time per call (CUDA events around 100 calls).
//
//   host_overhead M N K TA TB LDA LDB LDC BETA [...]    CSV on standard output
//
// Built on the GPU machine: nvcc -O2 -Iinclude host_overhead.cpp -Lbuild/lib -ltgemm -lcublas
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "tgemm.h"

namespace {

double now_us()
{
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void check(bool ok, const char *what)
{
    if (!ok) {
        std::fprintf(stderr, "host_overhead: %s failed\n", what);
        std::exit(1);
    }
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

int main(int argc, char **argv)
{
    if (argc < 10 || (argc - 1) % 9 != 0) {
        std::fprintf(stderr, "usage: host_overhead M N K TA TB LDA LDB LDC BETA [...]\n");
        return 2;
    }
    cudaStream_t s;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess, "stream");
    cublasHandle_t h;
    check(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
    check(cublasSetStream(h, s) == CUBLAS_STATUS_SUCCESS, "cublasSetStream");
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    std::printf("m,n,k,ta,tb,lda,ldb,ldc,beta,lib,enqueue_us,wall_us,gpu_us\n");
    for (int a = 1; a + 8 < argc; a += 9) {
        const int m = std::atoi(argv[a]), n = std::atoi(argv[a + 1]), k = std::atoi(argv[a + 2]);
        const bool ta = argv[a + 3][0] == 'T', tb = argv[a + 4][0] == 'T';
        const int lda = std::atoi(argv[a + 5]), ldb = std::atoi(argv[a + 6]), ldc = std::atoi(argv[a + 7]);
        const float alpha = 1.0f, beta = static_cast<float>(std::atof(argv[a + 8]));
        const size_t sa = static_cast<size_t>(lda) * (ta ? m : k), sb = static_cast<size_t>(ldb) * (tb ? k : n),
                     sc = static_cast<size_t>(ldc) * n;
        float *A, *B, *C;
        check(cudaMalloc(&A, sa * 4) == cudaSuccess && cudaMalloc(&B, sb * 4) == cudaSuccess &&
                  cudaMalloc(&C, sc * 4) == cudaSuccess, "cudaMalloc");
        cudaMemset(A, 0, sa * 4);
        cudaMemset(B, 0, sb * 4);
        cudaMemset(C, 0, sc * 4);
        for (int lib = 0; lib < 2; ++lib) {
            const auto call = [&] {
                if (lib == 0)
                    check(tgemm_sgemm_ex(TGEMM_LAYOUT_COL_MAJOR, ta ? TGEMM_OP_T : TGEMM_OP_N, tb ? TGEMM_OP_T : TGEMM_OP_N,
                                         m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, s) == TGEMM_SUCCESS,
                          "tgemm_sgemm_ex");
                else
                    check(cublasSgemm(h, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k, &alpha,
                                      A, lda, B, ldb, &beta, C, ldc) == CUBLAS_STATUS_SUCCESS,
                          "cublasSgemm");
            };
            std::vector<double> enq, wall, gpu;
            for (int i = 0; i < 20; ++i)
                call();
            cudaStreamSynchronize(s);
            for (int r = 0; r < 7; ++r) {
                cudaStreamSynchronize(s);
                double t0 = now_us();
                for (int i = 0; i < 100; ++i)
                    call();
                enq.push_back((now_us() - t0) / 100);
                cudaStreamSynchronize(s);
                t0 = now_us();
                for (int i = 0; i < 200; ++i)
                    call();
                cudaStreamSynchronize(s);
                wall.push_back((now_us() - t0) / 200);
                cudaEventRecord(e0, s);
                for (int i = 0; i < 100; ++i)
                    call();
                cudaEventRecord(e1, s);
                cudaEventSynchronize(e1);
                float ms = 0;
                cudaEventElapsedTime(&ms, e0, e1);
                gpu.push_back(ms * 1e3 / 100);
            }
            std::printf("%d,%d,%d,%c,%c,%d,%d,%d,%g,%s,%.2f,%.2f,%.2f\n", m, n, k, ta ? 'T' : 'N', tb ? 'T' : 'N', lda,
                        ldb, ldc, static_cast<double>(beta), lib == 0 ? "tgemm" : "cublas", median(enq), median(wall),
                        median(gpu));
            std::fflush(stdout);
        }
        cudaFree(A);
        cudaFree(B);
        cudaFree(C);
    }
    return 0;
}
