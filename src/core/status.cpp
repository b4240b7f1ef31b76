#include "core/status.hpp"

#include <cstdarg>
#include <cstdio>

#include "core/settings.hpp"

namespace tgemm {
namespace {

thread_local char t_detail[512];

void log_if_verbose(tgemm_status s)
{
    if (settings().verbose > 0)
        std::fprintf(stderr, "tgemm: %s%s%s\n", tgemm_status_string(s), t_detail[0] ? ": " : "", t_detail);
}

}  // namespace

void clear_error_detail()
{
    t_detail[0] = '\0';
}

tgemm_status fail(tgemm_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(t_detail, sizeof t_detail, fmt, ap);
    va_end(ap);
    log_if_verbose(s);
    return s;
}

tgemm_status fail_cuda(cudaError_t e, const char *what)
{
    tgemm_status s;
    switch (e) {
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorStubLibrary:
    case cudaErrorDevicesUnavailable:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
        s = TGEMM_ERROR_NO_DEVICE;
        break;
    case cudaErrorInvalidDevice:
        s = TGEMM_ERROR_INVALID_DEVICE;
        break;
    case cudaErrorMemoryAllocation:
        s = TGEMM_ERROR_OUT_OF_MEMORY;
        break;
    default:
        s = TGEMM_ERROR_CUDA;
        break;
    }
    // Reading the last error resets it unless the context is broken; the
    // caller's own CUDA runtime keeps its state, as tgemm links its own.
    (void)cudaGetLastError();
    return fail(s, "%s: %s (%s)", what, cudaGetErrorName(e), cudaGetErrorString(e));
}

tgemm_status invalid_argument(int arg, const char *why, ...)
{
    char text[192];
    va_list ap;
    va_start(ap, why);
    std::vsnprintf(text, sizeof text, why, ap);
    va_end(ap);
    return fail(static_cast<tgemm_status>(100 + arg), "argument %d: %s", arg, text);
}

}  // namespace tgemm

extern "C" {

TGEMM_API const char *tgemm_status_string(tgemm_status status)
{
    switch (status) {
    case TGEMM_SUCCESS: return "success";
    case TGEMM_ERROR_NO_DEVICE: return "no CUDA device or driver is available";
    case TGEMM_ERROR_INVALID_DEVICE: return "invalid device: the chosen device does not exist or an operand lives on another device";
    case TGEMM_ERROR_OUT_OF_MEMORY: return "out of device or pinned host memory";
    case TGEMM_ERROR_CUDA: return "a CUDA call failed";
    case TGEMM_ERROR_UNSUPPORTED: return "the problem exceeds a limit of the device";
    case TGEMM_ERROR_INVALID_SETTING: return "an environment setting (TGEMM_*) has an invalid value";
    case TGEMM_ERROR_INTERNAL: return "internal error in tgemm";
    case TGEMM_ERROR_INVALID_LAYOUT: return "invalid argument (layout): not a tgemm_layout value";
    case TGEMM_ERROR_INVALID_TRANSA: return "invalid argument 1 (transa): not N, T or C";
    case TGEMM_ERROR_INVALID_TRANSB: return "invalid argument 2 (transb): not N, T or C";
    case TGEMM_ERROR_INVALID_M: return "invalid argument 3 (m): negative";
    case TGEMM_ERROR_INVALID_N: return "invalid argument 4 (n): negative";
    case TGEMM_ERROR_INVALID_K: return "invalid argument 5 (k): negative";
    case TGEMM_ERROR_NULL_A: return "invalid argument 7 (A): NULL but must be read";
    case TGEMM_ERROR_INVALID_LDA: return "invalid argument 8 (lda): below its minimum";
    case TGEMM_ERROR_NULL_B: return "invalid argument 9 (B): NULL but must be read";
    case TGEMM_ERROR_INVALID_LDB: return "invalid argument 10 (ldb): below its minimum";
    case TGEMM_ERROR_NULL_C: return "invalid argument 12 (C): NULL but must be written";
    case TGEMM_ERROR_INVALID_LDC: return "invalid argument 13 (ldc): below its minimum";
    }
    return "unknown tgemm status";
}

TGEMM_API int tgemm_status_argument(tgemm_status status)
{
    const int s = static_cast<int>(status);
    return s > 100 && s <= 113 ? s - 100 : 0;
}

TGEMM_API const char *tgemm_last_error_detail(void)
{
    return tgemm::t_detail;
}

TGEMM_API int tgemm_version(void)
{
    return TGEMM_VERSION_NUMBER;
}

TGEMM_API const char *tgemm_version_string(void)
{
    return TGEMM_VERSION_STRING;
}

}  // extern "C"
