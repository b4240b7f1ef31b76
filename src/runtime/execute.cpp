#include "execute.hpp"

#include "api/check.hpp"
#include "api/status.hpp"
#include "dispatch/dispatch.hpp"
#include "runtime/device.hpp"
#include "runtime/settings.hpp"

namespace tgemm {
namespace {

// Device memory owned for the duration of one call.
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    DeviceBuffer(const DeviceBuffer &) = delete;
    DeviceBuffer &operator=(const DeviceBuffer &) = delete;
    ~DeviceBuffer()
    {
        if (ptr_ != nullptr)
            (void)cudaFree(ptr_);
    }

    tgemm_status allocate(int64_t rows, int64_t cols)
    {
        int64_t elems = 0;
        if (__builtin_mul_overflow(rows, cols, &elems) || elems > INT64_MAX / 4)
            return fail(TGEMM_ERROR_UNSUPPORTED, "a %lld x %lld staging buffer does not fit in memory",
                        static_cast<long long>(rows), static_cast<long long>(cols));
        const cudaError_t e = cudaMalloc(reinterpret_cast<void **>(&ptr_), static_cast<size_t>(elems) * sizeof(float));
        if (e != cudaSuccess) {
            ptr_ = nullptr;
            return fail_cuda(e, "cudaMalloc");
        }
        return TGEMM_SUCCESS;
    }

    float *get() const { return ptr_; }

private:
    float *ptr_ = nullptr;
};

// Copies a rows x cols column-major host matrix into a packed device buffer.
tgemm_status stage_in(const float *src, int64_t ld, int64_t rows, int64_t cols, DeviceBuffer &buf, cudaStream_t s)
{
    tgemm_status st = buf.allocate(rows, cols);
    if (st != TGEMM_SUCCESS)
        return st;
    const cudaError_t e = cudaMemcpy2DAsync(buf.get(), rows * sizeof(float), src, ld * sizeof(float),
                                            rows * sizeof(float), cols, cudaMemcpyHostToDevice, s);
    return e == cudaSuccess ? TGEMM_SUCCESS : fail_cuda(e, "cudaMemcpy2DAsync (host to device)");
}

tgemm_status synchronize(cudaStream_t s)
{
    const cudaError_t e = cudaStreamSynchronize(s);
    return e == cudaSuccess ? TGEMM_SUCCESS : fail_cuda(e, "cudaStreamSynchronize");
}

// Copy in, multiply, copy out, for problems with at least one host operand.
// Only the m rows of each column of C cross the link, so rows m..ldc-1 of
// host C are never written.
tgemm_status run_staged(const GemmParams &p, MemKind ka, MemKind kb, MemKind kc, const DeviceInfo &dev,
                        cudaStream_t s)
{
    GemmParams d = p;
    DeviceBuffer ba, bb, bc;
    tgemm_status st = TGEMM_SUCCESS;
    if (is_host(ka)) {
        st = stage_in(p.a, p.lda, p.trans_a ? p.k : p.m, p.trans_a ? p.m : p.k, ba, s);
        if (st != TGEMM_SUCCESS)
            return st;
        d.a = ba.get();
        d.lda = p.trans_a ? p.k : p.m;
    }
    if (is_host(kb)) {
        st = stage_in(p.b, p.ldb, p.trans_b ? p.n : p.k, p.trans_b ? p.k : p.n, bb, s);
        if (st != TGEMM_SUCCESS)
            return st;
        d.b = bb.get();
        d.ldb = p.trans_b ? p.n : p.k;
    }
    if (is_host(kc)) {
        if (p.beta != 0.0f)
            st = stage_in(p.c, p.ldc, p.m, p.n, bc, s);
        else
            st = bc.allocate(p.m, p.n);
        if (st != TGEMM_SUCCESS)
            return st;
        d.c = bc.get();
        d.ldc = p.m;
    }
    st = launch_gemm(d, dev, s);
    if (st != TGEMM_SUCCESS) {
        (void)cudaStreamSynchronize(s);
        return st;
    }
    if (is_host(kc)) {
        const cudaError_t e = cudaMemcpy2DAsync(p.c, p.ldc * sizeof(float), d.c, p.m * sizeof(float),
                                                p.m * sizeof(float), p.n, cudaMemcpyDeviceToHost, s);
        if (e != cudaSuccess) {
            (void)cudaStreamSynchronize(s);
            return fail_cuda(e, "cudaMemcpy2DAsync (device to host)");
        }
    }
    return synchronize(s);
}

}  // namespace

tgemm_status execute(const GemmParams &p, cudaStream_t s, bool wait)
{
    if (!settings().error.empty())
        return fail(TGEMM_ERROR_INVALID_SETTING, "%s", settings().error.c_str());
    int dev_id = -1;
    tgemm_status st = choose_device(&dev_id);
    if (st != TGEMM_SUCCESS)
        return st;
    DeviceGuard guard;
    if ((st = guard.enter(dev_id)) != TGEMM_SUCCESS)
        return st;
    const DeviceInfo *dev = nullptr;
    if ((st = device_info(dev_id, &dev)) != TGEMM_SUCCESS)
        return st;

    MemKind ka = MemKind::Unused, kb = MemKind::Unused, kc = MemKind::Unused;
    if (sgemm_reads_ab(p.k, p.alpha)) {
        if ((st = classify_pointer(p.a, dev_id, &ka)) != TGEMM_SUCCESS ||
            (st = classify_pointer(p.b, dev_id, &kb)) != TGEMM_SUCCESS)
            return st;
    }
    if ((st = classify_pointer(p.c, dev_id, &kc)) != TGEMM_SUCCESS)
        return st;

    if (is_host(ka) || is_host(kb) || is_host(kc))
        return run_staged(p, ka, kb, kc, *dev, s);
    if ((st = launch_gemm(p, *dev, s)) != TGEMM_SUCCESS)
        return st;
    return wait ? synchronize(s) : TGEMM_SUCCESS;
}

}  // namespace tgemm
