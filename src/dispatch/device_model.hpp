// The device as the planners see it: rates derived from the device's
// properties, the measured factors of its architecture (dispatch/factors.hpp)
// and the cluster capacities its kernels reported.
#pragma once

#include "dispatch/factors.hpp"
#include "kernels/family.hpp"
#include "runtime/device.hpp"
#include "tgemm.h"

namespace tgemm {

// What a device model is derived from: the device's properties and what
// the kernels' prepare functions reported for it. Plain data, so that a
// CPU tool can describe a device it does not have (bench/plan_dump.cpp).
struct DeviceDescription {
    int id = -1;
    int cc_major = 0, cc_minor = 0;
    int sm_count = 0;
    int max_grid_x = 0;
    int clock_khz = 0;         // SM clock
    int memory_clock_khz = 0;  // memory clock
    int bus_width_bits = 0;    // memory bus width
    // Blocks resident at once in clusters of n (entries 0 and 1 are 0; all
    // 0 where the cluster form is not available): the streaming kernels'
    // and each tiled family's, in the registry's order.
    int skinny_cluster_blocks[kernels::kSkinnyMaxCluster + 1] = {};
    int tiled_cluster_blocks[kernels::kTiledFamilyCount][kTiledMaxCluster + 1] = {};
    bool skinny_tma = false;  // the streaming kernel fed by the tensor copy engine runs here
    bool fp32_tc = false;     // the fp32-tc math's INT8 GEMM runs here (kernels/ozaki)
};

// One tiled family on this device: the kernel and its resolved factors.
struct TiledModel {
    const KernelFamily *family;
    double efficiency[4];  // [NN, NT, TN, TT]
    int blocks_per_sm;
    double unaligned[4];   // [NN, NT, TN, TT]
    double step_floor;
    double alone;
    int max_cluster;
    double block_seconds, wave_seconds;
    double vector_block_seconds, vector_wave_seconds;  // TiledFactors says which blocks each pair prices
    double short_wave_seconds, short_wave_steps;
    const int *cluster_blocks;  // DeviceDescription::tiled_cluster_blocks[i]
};

struct DeviceModel {
    DeviceDescription desc;
    const ArchFactors *factors;
    double sm_flops;          // FP32 FFMA rate of one SM: 2 x its FP32 lanes x clock
    double warp_flops;        // one warp alone: half its scheduler's issue rate
    double memory_bandwidth;  // the measured bandwidth scaled by this device's theoretical one
    TiledModel tiled[kernels::kTiledFamilyCount];  // in the registry's order
    // Set anew by each derive_device_model (never 0): tells models apart
    // for what the planners remember between calls (one object may be
    // derived again for another device). A model is not changed in place
    // after it is derived: derive it again.
    uint64_t serial = 0;

    DeviceModel() = default;
    DeviceModel(const DeviceModel &) = delete;  // tiled[] points into desc
    DeviceModel &operator=(const DeviceModel &) = delete;
};


// Derives *model from a description; pure. Fails (TGEMM_ERROR_INTERNAL)
// when the factors table does not cover the kernel registry.
tgemm_status derive_device_model(const DeviceDescription &desc, DeviceModel *model);

// The description of a device tgemm runs on: its properties, then the
// kernels' prepare functions (shared memory limits, cluster capacities).
// Needs the device current.
tgemm_status describe_device(const DeviceInfo &dev, DeviceDescription *desc);

}  // namespace tgemm
