// Preparing a device for the kernels and caching its model, once per device.
#include "core/settings.hpp"
#include "core/status.hpp"
#include "dispatch/dispatch.hpp"
#include "dispatch/planners.hpp"
#include "kernels/ozaki/ozaki.hpp"

namespace tgemm {
namespace {

PerDevice<DeviceModel> g_models;

tgemm_status prepare(const DeviceInfo &dev, DeviceModel *model)
{
    DeviceDescription desc;
    const tgemm_status st = describe_device(dev, &desc);
    if (st != TGEMM_SUCCESS)
        return st;
    const tgemm_status derived = derive_device_model(desc, model);
    if (derived == TGEMM_SUCCESS && settings().verbose >= 2)
        log_device_model(*model);
    return derived;
}

}  // namespace

tgemm_status describe_device(const DeviceInfo &dev, DeviceDescription *desc)
{
    desc->id = dev.id;
    desc->cc_major = dev.cc_major;
    desc->cc_minor = dev.cc_minor;
    desc->sm_count = dev.sm_count;
    desc->max_grid_x = dev.max_grid_x;
    desc->clock_khz = dev.clock_khz;
    desc->memory_clock_khz = dev.memory_clock_khz;
    desc->bus_width_bits = dev.bus_width_bits;
    for (int i = 0; i < kernels::kTiledFamilyCount; ++i) {
        const KernelFamily &f = *kernels::kTiledFamilies[i];
        const cudaError_t err = f.prepare(dev.cc_major, desc->tiled_cluster_blocks[i]);
        if (err != cudaSuccess)
            return fail_cuda(err, f.name);
    }
    const cudaError_t err = kernels::prepare_skinny(dev.cc_major, desc->skinny_cluster_blocks);
    if (err != cudaSuccess)
        return fail_cuda(err, "skinny kernels");
    const cudaError_t tma_err = kernels::prepare_skinny_tma(dev.cc_major, &desc->skinny_tma);
    if (tma_err != cudaSuccess)
        return fail_cuda(tma_err, "streaming kernel fed by the tensor copy engine");
    const cudaError_t oz_err = ozaki::prepare_ozaki(dev.cc_major, dev.cc_minor, &desc->fp32_tc);
    if (oz_err != cudaSuccess)
        return fail_cuda(oz_err, "fp32-tc kernels");
    return TGEMM_SUCCESS;
}

tgemm_status prepare_device_model(const DeviceInfo &dev, const DeviceModel **model)
{
    return g_models.get(dev.id, [&dev](int, DeviceModel *m) { return prepare(dev, m); }, model);
}

}  // namespace tgemm
