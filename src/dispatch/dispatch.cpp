#include "dispatch.hpp"

#include <cstdint>
#include <cstring>
#include <string>

#include "api/status.hpp"
#include "runtime/settings.hpp"

namespace tgemm {
namespace {

using namespace kernels;

const KernelFamily *const kAllFamilies[] = {
    &tiled_32x32x8, &tiled_64x64x8, &tiled_128x128x8, &tiled_128x256x8, &tiled_256x128x8,
};

int64_t tiles(const KernelFamily &f, const GemmParams &p)
{
    return ((p.m + f.bm - 1) / f.bm) * ((p.n + f.bn - 1) / f.bn);
}

// The dispatch table. Rows are tried in order; the first whose condition
// holds picks the family. "Enough tiles" means at least one block per SM, so
// the larger, more efficient tile does not leave SMs idle.
const KernelFamily *table(const GemmParams &p, const DeviceInfo &d)
{
    if (tiles(tiled_128x128x8, p) >= d.sm_count) return &tiled_128x128x8;
    if (tiles(tiled_64x64x8, p) >= d.sm_count) return &tiled_64x64x8;
    return &tiled_32x32x8;
}

const KernelFamily *forced_family(const std::string &name)
{
    for (const KernelFamily *f : kAllFamilies)
        if (name == f->name)
            return f;
    return nullptr;
}

bool aligned16(const void *ptr)
{
    return (reinterpret_cast<uintptr_t>(ptr) & 15u) == 0;
}

}  // namespace

tgemm_status prepare_kernels(const DeviceInfo &)
{
    for (const KernelFamily *f : kAllFamilies) {
        const cudaError_t e = f->prepare();
        if (e != cudaSuccess)
            return fail_cuda(e, f->name);
    }
    return TGEMM_SUCCESS;
}

const KernelFamily *choose_family(const GemmParams &p, const DeviceInfo &dev)
{
    const std::string &forced = settings().kernel;
    return forced.empty() ? table(p, dev) : forced_family(forced);
}

tgemm_status launch_gemm(const GemmParams &p, const DeviceInfo &dev, cudaStream_t s)
{
    if (p.k == 0 || p.alpha == 0.0f) {
        const cudaError_t e = launch_scale(p.c, p.m, p.n, p.ldc, p.beta, s);
        return e == cudaSuccess ? TGEMM_SUCCESS : fail_cuda(e, "scale kernel launch");
    }
    const KernelFamily *f = choose_family(p, dev);
    if (f == nullptr) {
        std::string names;
        for (const KernelFamily *g : kAllFamilies)
            names += std::string(names.empty() ? "" : ", ") + g->name;
        return fail(TGEMM_ERROR_INVALID_SETTING, "TGEMM_KERNEL='%s' is not a kernel family; known: %s",
                    settings().kernel.c_str(), names.c_str());
    }
    const int64_t blocks = tiles(*f, p);
    if (blocks > dev.max_grid_x)
        return fail(TGEMM_ERROR_UNSUPPORTED, "%lld blocks of %dx%d exceed the grid limit %d",
                    static_cast<long long>(blocks), f->bm, f->bn, dev.max_grid_x);
    const bool aligned = aligned16(p.a) && aligned16(p.b) && aligned16(p.c) &&
                         p.lda % 4 == 0 && p.ldb % 4 == 0 && p.ldc % 4 == 0;
    const int idx = (p.trans_a ? 4 : 0) | (p.trans_b ? 2 : 0) | (aligned ? 1 : 0);
    const cudaError_t e = f->launch[idx](p, static_cast<unsigned>(blocks), s);
    return e == cudaSuccess ? TGEMM_SUCCESS : fail_cuda(e, "sgemm kernel launch");
}

}  // namespace tgemm
