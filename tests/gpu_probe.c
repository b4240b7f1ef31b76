#include "gpu_probe.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

gpu_probe_t gpu_probe_classify(cudaError_t error, int count, const char *driver, bool require, char *why,
                               size_t cap)
{
    gpu_probe_t p;
    if (error == cudaSuccess && count > 0) {
        snprintf(why, cap, "%s", "");
        return GPU_PROBE_PRESENT;
    }
    if (error == cudaSuccess || error == cudaErrorNoDevice) {
        p = GPU_PROBE_ABSENT;
        snprintf(why, cap, "the NVIDIA driver sees no device (cudaGetDeviceCount: %s)",
                 error == cudaSuccess ? "0 devices" : cudaGetErrorName(error));
    } else if (error == cudaErrorInsufficientDriver && !driver) {
        p = GPU_PROBE_ABSENT;
        snprintf(why, cap,
                 "no NVIDIA driver is installed (no /proc/driver/nvidia/version, no libcuda.so.1; "
                 "cudaGetDeviceCount: %s)",
                 cudaGetErrorName(error));
    } else {
        p = GPU_PROBE_BROKEN;
        snprintf(why, cap, "cudaGetDeviceCount: %s: %s%s%s%s", cudaGetErrorName(error), cudaGetErrorString(error),
                 driver ? " (an NVIDIA driver is installed: " : "", driver ? driver : "", driver ? ")" : "");
    }
    if (p == GPU_PROBE_ABSENT && require) {
        char reason[512];
        snprintf(reason, sizeof reason, "%s", why);
        snprintf(why, cap, "TGEMM_TEST_REQUIRE_GPU=1, but %s", reason);
        p = GPU_PROBE_BROKEN;
    }
    return p;
}

const char *nvidia_driver_evidence(void)
{
    static char where[512];
    if (access("/proc/driver/nvidia/version", F_OK) == 0)
        return "/proc/driver/nvidia/version";
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!h)
        return NULL;
    Dl_info info;
    void *sym = dlsym(h, "cuInit");
    snprintf(where, sizeof where, "%s", sym && dladdr(sym, &info) && info.dli_fname ? info.dli_fname : "libcuda.so.1");
    dlclose(h);
    return where;
}

static gpu_probe_t g_result;
static char g_reason[1024];

static void probe_once(void)
{
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    (void)cudaGetLastError();
    const char *req = getenv("TGEMM_TEST_REQUIRE_GPU");
    if (req && *req && strcmp(req, "0") != 0 && strcmp(req, "1") != 0) {
        g_result = GPU_PROBE_BROKEN;
        snprintf(g_reason, sizeof g_reason, "TGEMM_TEST_REQUIRE_GPU=%s: want 1 (a GPU is required) or 0", req);
        return;
    }
    const char *driver = e == cudaErrorInsufficientDriver ? nvidia_driver_evidence() : NULL;
    g_result = gpu_probe_classify(e, count, driver, req && strcmp(req, "1") == 0, g_reason, sizeof g_reason);
}

gpu_probe_t gpu_probe(const char **why)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, probe_once);
    *why = g_reason;
    return g_result;
}
