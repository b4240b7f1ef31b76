// The streaming kernels' planner (skinny_split.cpp): the split of K and the
// row groups for a product run by kernels::launch_skinny, given what it
// needs to know of the device.
#pragma once

#include <cstdint>

#include "kernels/family.hpp"

namespace tgemm {

using kernels::SkinnyParams;

// What the planner needs of the device; the dispatcher fills it from its
// device model.
struct SkinnyDevice {
    int sm_count;
    // Blocks resident at once in clusters of n, n = 0 to
    // kernels::kSkinnyMaxCluster (prepare_skinny; all 0: no cluster form).
    const int *cluster_blocks;
    double bandwidth;       // bytes/s: the rate the kernels stream X at
    double launch_seconds;  // one more kernel on the stream (the split-K reduction)
};

// The split of K (work unset) for a skinny product; also sets p->groups.
SplitK skinny_split(SkinnyParams *p, const SkinnyDevice &dev);
// Values of r per block of the kernel that runs p (p->groups set).
int64_t skinny_rows_per_block(const SkinnyParams &p);

}  // namespace tgemm
