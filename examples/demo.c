/* tgemm demo (make demo): C = A * B on the GPU from ordinary host arrays,
 * checked against OpenBLAS and timed against it.
 *
 *   build/examples/demo [N]      N x N x N, default 4096
 *
 * Without a GPU (no NVIDIA driver, or no device) it says so, runs only the
 * CPU BLAS, and exits 0; with a driver CUDA cannot use (too old, broken)
 * it prints CUDA's error and exits 1. */
#include <dlfcn.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>
#include <tgemm.h>

typedef void (*cblas_sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *, int, float,
                               float *, int);

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static float *alloc_floats(size_t n)
{
    float *p = malloc(n * sizeof *p);
    if (!p) {
        fprintf(stderr, "demo: out of host memory\n");
        exit(1);
    }
    return p;
}

/* Whether an NVIDIA driver is installed: the kernel driver, or its
 * library libcuda.so.1. */
static bool driver_installed(void)
{
    if (access("/proc/driver/nvidia/version", F_OK) == 0)
        return true;
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (h)
        dlclose(h);
    return h != NULL;
}

int main(int argc, char **argv)
{
    const int n = argc > 1 ? atoi(argv[1]) : 4096;
    if (n < 1) {
        fprintf(stderr, "usage: %s [N >= 1]\n", argv[0]);
        return 2;
    }
    const size_t elems = (size_t)n * (size_t)n;
    const double flops = 2.0 * n * (double)n * n;
    printf("tgemm %s demo: C = A * B, %d x %d x %d in single precision, operands in host memory\n",
           tgemm_version_string(), n, n, n);

    void *ob = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    cblas_sgemm_fn cpu_sgemm = ob ? (cblas_sgemm_fn)dlsym(ob, "cblas_sgemm") : NULL;
    if (!cpu_sgemm) {
        fprintf(stderr, "demo: OpenBLAS (libopenblas.so.0) is needed for the check; run 'make deps'\n");
        return 1;
    }

    float *A = alloc_floats(elems), *B = alloc_floats(elems), *C = alloc_floats(elems), *R = alloc_floats(elems);
    uint64_t s = 0x2545F4914F6CDD1Dull;
    for (size_t i = 0; i < elems; ++i) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        A[i] = (float)((double)(s >> 11) * 0x1.0p-53 * 2.0 - 1.0);
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        B[i] = (float)((double)(s >> 11) * 0x1.0p-53 * 2.0 - 1.0);
    }

    double t0 = now();
    cpu_sgemm(102, 111, 111, n, n, n, 1.0f, A, n, B, n, 0.0f, R, n);
    const double t_cpu = now() - t0;
    printf("OpenBLAS (CPU):                   %9.2f ms  %7.2f TFLOP/s\n", 1e3 * t_cpu, flops / t_cpu * 1e-12);

    int devices = 0;
    const cudaError_t e = cudaGetDeviceCount(&devices);
    if (e != cudaSuccess || devices == 0) {
        float one = 0.0f;
        const tgemm_status st = tgemm_sgemm(TGEMM_OP_N, TGEMM_OP_N, 1, 1, 1, 1.0f, &one, 1, &one, 1, 0.0f, &one, 1);
        /* CUDA says cudaErrorInsufficientDriver both without a driver and
         * with one too old for it: only the first is a machine without a GPU. */
        const bool driver = driver_installed();
        if (e == cudaSuccess || e == cudaErrorNoDevice || (e == cudaErrorInsufficientDriver && !driver)) {
            printf("No CUDA GPU is visible here (%s), so tgemm cannot run (tgemm says: %s).\n"
                   "Run this demo on a machine with an NVIDIA GPU and driver to see the GPU result.\n",
                   e == cudaSuccess ? "no device" : cudaGetErrorName(e), tgemm_status_string(st));
            return 0;
        }
        fprintf(stderr, "demo: CUDA cannot use the GPU: %s (%s)%s\n", cudaGetErrorName(e), cudaGetErrorString(e),
                e == cudaErrorInsufficientDriver ? "; the NVIDIA driver installed is older than this CUDA runtime needs"
                                                 : "");
        return 1;
    }
    struct cudaDeviceProp prop;
    int dev = 0;
    cudaGetDevice(&dev);
    cudaGetDeviceProperties(&prop, dev);
    printf("GPU: %s (device %d, %d SMs)\n", prop.name, dev, prop.multiProcessorCount);

    /* The first call pays for CUDA's start-up; time the second. */
    tgemm_status st = tgemm_sgemm(TGEMM_OP_N, TGEMM_OP_N, 64, 64, 64, 1.0f, A, n, B, n, 0.0f, C, n);
    if (st == TGEMM_SUCCESS) {
        t0 = now();
        st = tgemm_sgemm(TGEMM_OP_N, TGEMM_OP_N, n, n, n, 1.0f, A, n, B, n, 0.0f, C, n);
    }
    const double t_gpu = now() - t0;
    if (st != TGEMM_SUCCESS) {
        fprintf(stderr, "demo: tgemm failed: %s (%s)\n", tgemm_status_string(st), tgemm_last_error_detail());
        return 1;
    }
    printf("tgemm (GPU, with host transfers): %9.2f ms  %7.2f TFLOP/s  (%.1fx the CPU BLAS)\n", 1e3 * t_gpu,
           flops / t_gpu * 1e-12, t_cpu / t_gpu);

    /* Each element may differ from OpenBLAS's by at most twice the FP32
     * dot-product bound gamma(n + 2) * (|A| |B|)_ij; |A| |B| comes from one
     * more CPU product (its own rounding is far below the bound's slack). */
    for (size_t i = 0; i < elems; ++i) {
        A[i] = fabsf(A[i]);
        B[i] = fabsf(B[i]);
    }
    float *AB = alloc_floats(elems);
    cpu_sgemm(102, 111, 111, n, n, n, 1.0f, A, n, B, n, 0.0f, AB, n);
    const double nu = (n + 2.0) * 0x1.0p-24, gamma = nu / (1.0 - nu);
    double worst = 0.0; /* largest |difference| / allowed */
    for (size_t i = 0; i < elems; ++i) {
        const double r = fabs((double)C[i] - (double)R[i]) / (2.0 * gamma * (double)AB[i] + 1e-30);
        if (!(r <= worst))
            worst = isnan(r) ? INFINITY : r;
    }
    free(AB);
    const double bound = 1.0;
    const int ok = worst <= bound;
    printf("check against OpenBLAS, every element: largest difference is %.3g of the FP32 error bound: %s\n", worst,
           ok ? "PASSED" : "FAILED");
    free(A), free(B), free(C), free(R);
    return ok ? 0 : 1;
}
