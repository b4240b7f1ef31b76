// Deriving the planners' device model from a device description.
#include "dispatch/device_model.hpp"

#include <atomic>
#include <cstring>

#include "core/status.hpp"

namespace tgemm {

tgemm_status derive_device_model(const DeviceDescription &desc, DeviceModel *model)
{
    char why[128];
    if (!factors_cover_registry(why, sizeof why))
        return fail(TGEMM_ERROR_INTERNAL, "the dispatcher's factors do not match the kernel registry: %s", why);
    static std::atomic<uint64_t> serials{0};
    model->serial = serials.fetch_add(1, std::memory_order_relaxed) + 1;
    model->desc = desc;
    const ArchFactors &f = arch_factors(desc.cc_major, desc.cc_minor);
    // A device that reports no clock or memory bus (a driver that cannot
    // say) is planned with the clocks of the device the factors were
    // measured on, rather than with zero or infinite rates.
    if (desc.clock_khz <= 0)
        model->desc.clock_khz = f.measured_clock_khz;
    if (desc.memory_clock_khz <= 0 || desc.bus_width_bits <= 0) {
        model->desc.memory_clock_khz = f.measured_memory_clock_khz;
        model->desc.bus_width_bits = f.measured_bus_width_bits;
    }
    const DeviceDescription &d = model->desc;
    model->factors = &f;
    const double clock_hz = d.clock_khz * 1e3;
    model->sm_flops = 2.0 * fp32_lanes_per_sm(d.cc_major, d.cc_minor) * clock_hz;
    model->warp_flops = 0.5 * 2.0 * 32 * clock_hz;
    // Theoretical bandwidth: two transfers a memory clock over the bus. The
    // scale is exactly 1 on the device the factors were measured on.
    const auto theoretical = [](int memory_clock_khz, int bus_width_bits) {
        return 2.0 * (memory_clock_khz * 1e3) * bus_width_bits / 8.0;
    };
    model->memory_bandwidth = f.measured_bandwidth * (theoretical(d.memory_clock_khz, d.bus_width_bits) /
                                                      theoretical(f.measured_memory_clock_khz,
                                                                  f.measured_bus_width_bits));
    for (int i = 0; i < kernels::kTiledFamilyCount; ++i) {
        const KernelFamily *family = kernels::kTiledFamilies[i];
        const TiledFactors *row = nullptr;
        for (const TiledFactors &t : f.tiled)
            if (t.family != nullptr && std::strcmp(t.family, family->name) == 0)
                row = &t;
        if (row == nullptr)
            return fail(TGEMM_ERROR_INTERNAL, "no factors for the tiled family named %s", family->name);
        TiledModel &m = model->tiled[i];
        m.family = family;
        std::memcpy(m.efficiency, row->efficiency, sizeof m.efficiency);
        m.blocks_per_sm = row->blocks_per_sm;
        std::memcpy(m.unaligned, row->unaligned, sizeof m.unaligned);
        m.step_floor = row->step_floor > 0.0 ? row->step_floor : f.step_seconds;
        m.alone = row->alone > 0.0 ? row->alone : f.alone_factor;
        m.max_cluster = row->max_cluster;
        m.block_seconds = row->block_seconds;
        m.wave_seconds = row->wave_seconds;
        m.vector_block_seconds = row->vector_block_seconds;
        m.vector_wave_seconds = row->vector_wave_seconds;
        m.short_wave_seconds = row->short_wave_seconds;
        m.short_wave_steps = row->short_wave_steps;
        m.cluster_blocks = model->desc.tiled_cluster_blocks[i];
    }
    return TGEMM_SUCCESS;
}

}  // namespace tgemm
