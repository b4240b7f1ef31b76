#include "blas/offload_model.hpp"

#include <algorithm>
#include <cmath>

#include "driver/host_plan.hpp"

namespace tgemm::blas {
namespace {

double staged_seconds(const OffloadRates &r, double bytes)
{
    return bytes / (bytes < kSmallOperand ? r.link_small : r.link);
}

// Quarter octaves: log2 of the size, rounded to a quarter.
uint64_t bin(int64_t x)
{
    return static_cast<uint64_t>(std::lround(4.0 * std::log2(static_cast<double>(std::max<int64_t>(x, 1)))));
}

}  // namespace

OffloadEstimate model_seconds(const OffloadRates &r, int64_t m, int64_t n, int64_t k, bool beta)
{
    const double dm = static_cast<double>(m), dn = static_cast<double>(n), dk = static_cast<double>(k);
    const double flops = 2.0 * dm * dn * dk;
    OffloadEstimate e;
    e.cpu = r.cpu_call_seconds + flops / r.cpu_flops;

    const double a = 4.0 * dm * dk, b = 4.0 * dk * dn, c = 4.0 * dm * dn;
    double staging = staged_seconds(r, a) + staged_seconds(r, b) + staged_seconds(r, c);
    if (beta)
        staging += staged_seconds(r, c);
    // The first task needs its chunk of A and B (and its tile of C) before
    // a kernel starts; the last tile of C leaves after the last kernel.
    const double tm = static_cast<double>(std::min<int64_t>(m, kTileSide));
    const double tn = static_cast<double>(std::min<int64_t>(n, kTileSide));
    const double tk = static_cast<double>(std::min<int64_t>(k, kChunkDepth));
    const double fill = staged_seconds(r, 4.0 * tm * tk) + staged_seconds(r, 4.0 * tk * tn) +
                        staged_seconds(r, 4.0 * tm * tn) * (beta ? 2.0 : 1.0);
    e.gpu = r.gpu_overhead + std::max(staging, fill + flops / r.gpu_flops);
    return e;
}

const char *reason_name(Reason r)
{
    switch (r) {
    case Reason::Model: return "model";
    case Reason::Learned: return "learned";
    case Reason::Explore: return "explore";
    case Reason::Cold: return "cold";
    }
    return "?";
}

uint64_t OffloadLearner::class_key(int64_t m, int64_t n, int64_t k, bool beta)
{
    // Bins stay below 2^8 (sizes below 2^63); the top bit marks a used entry.
    return (uint64_t{1} << 63) | (bin(m) << 24) | (bin(n) << 16) | (bin(k) << 8) | (beta ? 1u : 0u);
}

OffloadLearner::Entry *OffloadLearner::find(uint64_t key, bool create)
{
    Entry &e = entries_[(key * 0x9E3779B97F4A7C15ull) >> 55];  // 9 bits: kEntries slots
    if (e.key == key)
        return &e;
    if (!create)
        return nullptr;
    e = Entry{};  // a class that collides takes the slot over
    e.key = key;
    return &e;
}

double OffloadLearner::Entry::factor(int side) const
{
    const int n = static_cast<int>(std::min<uint32_t>(measured[side], kKept));
    return std::exp(*std::min_element(log_factor[side], log_factor[side] + n));
}

OffloadChoice OffloadLearner::choose(int64_t m, int64_t n, int64_t k, bool beta, const OffloadEstimate &model,
                                     bool learn, bool gpu_warm)
{
    OffloadChoice c;
    c.estimate = model;
    c.side = model.gpu < model.cpu ? Side::Gpu : Side::Cpu;
    if (!learn)
        return c;
    std::lock_guard<std::mutex> lk(mu_);
    Entry *e = find(class_key(m, n, k, beta), true);
    ++e->calls_since_try;
    if (e->measured[0] != 0)
        c.estimate.cpu = model.cpu * e->factor(0);
    if (e->measured[1] != 0)
        c.estimate.gpu = model.gpu * e->factor(1);
    if (e->measured[0] != 0 || e->measured[1] != 0)
        c.reason = Reason::Learned;
    Side best = c.estimate.gpu < c.estimate.cpu ? Side::Gpu : Side::Cpu;
    // A close call keeps the side the class has been running on: calls of
    // one shape vary by more than the gap, and flipping on noise costs the
    // slower side's time half of the time.
    if (e->held >= 0 && static_cast<int>(best) != e->held && e->measured[e->held] != 0) {
        const double held_time = e->held == static_cast<int>(Side::Gpu) ? c.estimate.gpu : c.estimate.cpu;
        const double best_time = best == Side::Gpu ? c.estimate.gpu : c.estimate.cpu;
        if (best_time >= kSwitchMargin * held_time)
            best = static_cast<Side>(e->held);
    }
    if (e->held != static_cast<int8_t>(best))
        e->tries = 0;
    e->held = static_cast<int8_t>(best);
    const Side other = best == Side::Gpu ? Side::Cpu : Side::Gpu;
    const double t_best = best == Side::Gpu ? c.estimate.gpu : c.estimate.cpu;
    const double t_other = other == Side::Gpu ? c.estimate.gpu : c.estimate.cpu;
    c.side = best;
    // Try the other side once the best one has been measured, while the
    // estimates are close enough for the model to be wrong, or, estimated
    // slower still, once the class has spent enough since the last try for
    // this one to be cheap; again after intervals that double with each try
    // that leaves the class where it was, up to kMaxDoublings.
    const int doublings = std::min<int>(e->tries, kMaxDoublings);
    const bool unmeasured = e->measured[static_cast<int>(other)] == 0;
    const bool due = unmeasured || e->calls_since_try >= (kReexploreCalls << doublings);
    const bool may_try = other == Side::Cpu || gpu_warm;
    const bool close = t_other < kExploreFactor * t_best;
    const bool cheap = close || std::ldexp(t_other, doublings) <= kExploreShare * e->since_try;
    if (e->measured[static_cast<int>(best)] != 0 && due && may_try && cheap) {
        c.side = other;
        c.reason = Reason::Explore;
        e->since_try = 0.0;
        e->calls_since_try = 0;
        e->tries = static_cast<uint8_t>(std::min(e->tries + 1, kMaxDoublings));
    }
    // The GPU not started yet (kGpuStartSeconds): a call whose own saving
    // pays for the start takes it; shorter ones add their saving up, but
    // only once the class's CPU time is measured, since the model's CPU
    // rate can be far off.
    if (c.side == Side::Gpu && !gpu_warm) {
        const double gain = std::max(c.estimate.cpu - c.estimate.gpu, 0.0);
        const double counted = e->measured[static_cast<int>(Side::Cpu)] != 0 ? gain : 0.0;
        if (gain < kGpuStartSeconds && cold_gain_ + counted < kGpuStartSeconds) {
            cold_gain_ += counted;
            c.side = Side::Cpu;
            c.reason = Reason::Cold;
        }
    }
    return c;
}

void OffloadLearner::observe(int64_t m, int64_t n, int64_t k, bool beta, Side side, double seconds,
                             const OffloadEstimate &model)
{
    const double predicted = side == Side::Gpu ? model.gpu : model.cpu;
    if (!(seconds > 0.0) || !(predicted > 0.0))
        return;
    const double f = std::log(seconds / predicted);
    std::lock_guard<std::mutex> lk(mu_);
    Entry *e = find(class_key(m, n, k, beta), true);
    const int i = static_cast<int>(side);
    e->log_factor[i][e->measured[i] % kKept] = f;
    ++e->measured[i];
    e->since_try += seconds;
}

}  // namespace tgemm::blas
