/* A stand-in for the NVIDIA driver's libcuda.so.1, built as
 * build/tests/stub/libcuda.so.1 and found through LD_LIBRARY_PATH by
 * tests/check-gpu-probe.sh, so that a machine without a GPU can show how
 * the test programs meet an installed driver that does not work.
 * TGEMM_STUB_CUDA picks what it reports to the CUDA runtime:
 *   old        a driver version older than the runtime's (the runtime
 *              returns cudaErrorInsufficientDriver, as with no driver)
 *   broken     cuInit fails with CUDA_ERROR_UNKNOWN
 *   no-device  cuInit fails with CUDA_ERROR_NO_DEVICE
 * The runtime takes every other driver function through cuGetProcAddress;
 * each of them fails. */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

enum { kSuccess = 0, kNoDevice = 100, kNotFound = 500, kUnknown = 999 };

#define STUB_API __attribute__((visibility("default")))

static const char *mode(void)
{
    const char *m = getenv("TGEMM_STUB_CUDA");
    return m ? m : "";
}

STUB_API int cuDriverGetVersion(int *version)
{
    *version = strcmp(mode(), "old") == 0 ? 9000 : CUDART_VERSION;
    return kSuccess;
}

STUB_API int cuInit(unsigned flags)
{
    (void)flags;
    if (strcmp(mode(), "no-device") == 0)
        return kNoDevice;
    if (strcmp(mode(), "old") == 0)
        return kSuccess;
    return kUnknown;
}

static int unavailable(void)
{
    return kUnknown;
}

STUB_API int cuGetProcAddress_v2(const char *symbol, void **fn, int version, unsigned long long flags, int *status)
{
    (void)version, (void)flags;
    if (status)
        *status = 0;
    if (strcmp(symbol, "cuInit") == 0)
        *fn = (void *)cuInit;
    else if (strcmp(symbol, "cuDriverGetVersion") == 0)
        *fn = (void *)cuDriverGetVersion;
    else if (strcmp(symbol, "cuGetProcAddress") == 0)
        *fn = (void *)cuGetProcAddress_v2;
    else
        *fn = (void *)unavailable;
    return kSuccess;
}

STUB_API int cuGetProcAddress(const char *symbol, void **fn, int version, unsigned long long flags)
{
    return cuGetProcAddress_v2(symbol, fn, version, flags, NULL);
}
