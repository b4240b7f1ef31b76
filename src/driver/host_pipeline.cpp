// The entry of the host-operand path (host_pipeline.hpp): leases a
// pipeline, attaches the TGEMM_HOST_TRACE tracer when the setting asks for
// it, and runs the executor.
#include "driver/host_pipeline.hpp"

#include <atomic>
#include <optional>

#include "core/settings.hpp"
#include "driver/host_executor.hpp"
#include "driver/host_pool.hpp"
#include "driver/host_tracer.hpp"

namespace tgemm {
namespace {

// Preferred plan sizes (set_host_plan_sizes, tests only); 0 = the defaults.
std::atomic<int64_t> g_tile_side{0}, g_chunk_depth{0}, g_chunk_floor{0};

PlanRequest preferred_sizes()
{
    PlanRequest r;
    if (const int64_t v = g_tile_side.load())
        r.tile_side = v;
    if (const int64_t v = g_chunk_depth.load())
        r.chunk_depth = v;
    if (const int64_t v = g_chunk_floor.load())
        r.chunk_floor = v;
    return r;
}

}  // namespace

tgemm_status run_host_operands(const GemmParams &p, MemKind ka, MemKind kb, MemKind kc, const DeviceInfo &dev,
                               cudaStream_t s, Math math, std::vector<Rect> *left, const PanelShare *share)
{
    if (left != nullptr)
        *left = {Rect{0, 0, p.m, p.n}};
    Lease lease;
    const tgemm_status st = lease.acquire(dev.id);
    if (st != TGEMM_SUCCESS)
        return st;
    std::optional<HostTracer> tracer;
    if (!settings().host_trace.empty())
        tracer.emplace(lease.pipeline());
    HostRun run(p, ka, kb, left != nullptr ? recoverable_c(kc, p.beta) : kc, dev, lease.pipeline(), lease.pool(),
                preferred_sizes(), tracer ? &*tracer : nullptr, math, left, share);
    const tgemm_status result = run.run(s);
    if (run.broken())
        lease.discard();
    return result;
}

void set_host_plan_sizes(int64_t tile_side, int64_t chunk_depth, int64_t chunk_floor)
{
    g_tile_side.store(tile_side);
    g_chunk_depth.store(chunk_depth);
    g_chunk_floor.store(chunk_floor);
}

}  // namespace tgemm
