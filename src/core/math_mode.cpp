#include "core/math_mode.hpp"

#include <atomic>

namespace tgemm {
namespace {

// -1: not set by the API, so TGEMM_MATH decides.
std::atomic<int> g_math{-1};
// The last record packed into one word (so it is read whole): bit 0 set
// once written, bit 1 tc, bits 8..15 N, bits 16.. the reason.
std::atomic<unsigned> g_record{0};
std::atomic<unsigned> g_records{0};

}  // namespace

Math process_math()
{
    const int m = g_math.load(std::memory_order_relaxed);
    return m < 0 ? settings().math : static_cast<Math>(m);
}

void set_process_math(Math m)
{
    g_math.store(static_cast<int>(m), std::memory_order_relaxed);
}

const std::string &setting_error_for_calls()
{
    static const std::string none;
    if (!settings().error.empty())
        return settings().error;
    return g_math.load(std::memory_order_relaxed) < 0 ? settings().math_error : none;
}

const char *strict_why_name(StrictWhy why)
{
    switch (why) {
    case StrictWhy::None: return "none";
    case StrictWhy::Disabled: return "disabled";
    case StrictWhy::Device: return "device";
    case StrictWhy::Small: return "small";
    case StrictWhy::Shape: return "shape";
    case StrictWhy::Special: return "inf-nan";
    case StrictWhy::Uncertified: return "uncertified";
    case StrictWhy::Workspace: return "workspace";
    case StrictWhy::Capture: return "capture";
    }
    return "?";
}

void record_math(const MathRecord &r)
{
    const unsigned word = 1u | (r.tc ? 2u : 0u) | (static_cast<unsigned>(r.moduli & 0xff) << 8) |
                          (static_cast<unsigned>(r.why) << 16);
    g_record.store(word, std::memory_order_relaxed);
    g_records.fetch_add(1, std::memory_order_relaxed);
}

unsigned math_records()
{
    return g_records.load(std::memory_order_relaxed);
}

bool last_math(MathRecord *r)
{
    const unsigned word = g_record.load(std::memory_order_relaxed);
    if ((word & 1u) == 0)
        return false;
    r->tc = (word & 2u) != 0;
    r->moduli = static_cast<int>((word >> 8) & 0xffu);
    r->why = static_cast<StrictWhy>(word >> 16);
    return true;
}

}  // namespace tgemm
