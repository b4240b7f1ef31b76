#include "core/settings.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>


namespace tgemm {
namespace {

bool parse_long(const char *s, long lo, long hi, long *out)
{
    if (s == nullptr || *s == '\0')
        return false;
    char *end = nullptr;
    errno = 0;
    const long v = std::strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

bool parse_double(const char *s, double *out)
{
    if (s == nullptr || *s == '\0')
        return false;
    char *end = nullptr;
    errno = 0;
    const double v = std::strtod(s, &end);
    if (errno != 0 || *end != '\0' || !(v >= 0))
        return false;
    *out = v;
    return true;
}

}  // namespace

bool parse_bytes(const char *s, uint64_t *out)
{
    if (s == nullptr || *s < '0' || *s > '9')
        return false;
    uint64_t v = 0;
    for (; *s >= '0' && *s <= '9'; ++s)
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, static_cast<uint64_t>(*s - '0'), &v))
            return false;
    int shift = 0;
    switch (*s) {
    case '\0': break;
    case 'k': case 'K': shift = 10; break;
    case 'm': case 'M': shift = 20; break;
    case 'g': case 'G': shift = 30; break;
    case 't': case 'T': shift = 40; break;
    default: return false;
    }
    if (*s != '\0' && s[1] != '\0')
        return false;
    if (v == 0 || v > (UINT64_MAX >> shift))
        return false;
    *out = v << shift;
    return true;
}

std::string expand_trace_name(const std::string &name, long pid, const char *rank)
{
    std::string out;
    for (size_t i = 0; i < name.size(); ++i) {
        const char next = i + 1 < name.size() ? name[i + 1] : '\0';
        if (name[i] == '%' && next == 'p') {
            out += std::to_string(pid);
        } else if (name[i] == '%' && next == 'r') {
            out += rank != nullptr && *rank ? rank : "0";
        } else if (name[i] == '%' && next == '%') {
            out += '%';
        } else {
            out += name[i];
            continue;
        }
        ++i;
    }
    return out;
}

std::string trace_file_name(const std::string &value)
{
    const char *rank = nullptr;
    for (const char *v : kRankVariables)
        if ((rank = std::getenv(v)) != nullptr && *rank)
            break;
    return expand_trace_name(value, static_cast<long>(getpid()), rank);
}

namespace {

void invalid(Settings &st, const char *name, const char *value, const char *expected)
{
    if (st.error.empty())
        st.error = std::string(name) + "='" + value + "' is invalid: expected " + expected;
}

// A 0-or-1 switch: *flag keeps its default when the variable is unset or empty.
void read_switch(Settings &st, const char *name, bool *flag)
{
    long v = 0;
    if (const char *e = std::getenv(name); e && *e) {
        if (parse_long(e, 0, 1, &v))
            *flag = v != 0;
        else
            invalid(st, name, e, "0 or 1");
    }
}

// A setting of auto, always or never (StreamKMode, PackMode).
template <class Mode>
void read_mode(Settings &st, const char *name, Mode *mode)
{
    if (const char *e = std::getenv(name); e && *e) {
        if (std::strcmp(e, "auto") == 0)
            *mode = Mode::Auto;
        else if (std::strcmp(e, "always") == 0)
            *mode = Mode::Always;
        else if (std::strcmp(e, "never") == 0)
            *mode = Mode::Never;
        else
            invalid(st, name, e, "auto, always or never");
    }
}

// TGEMM_DEVICE=local-rank: the first launcher variable set, which must be a
// rank >= 0.
void read_local_rank(Settings &st)
{
    st.device_local_rank = true;
    for (const char *name : kLocalRankVariables)
        if (const char *e = std::getenv(name); e && *e) {
            long v = 0;
            if (parse_long(e, 0, 1 << 30, &v)) {
                st.local_rank = static_cast<int>(v);
                st.local_rank_from = name;
            } else {
                invalid(st, name, e, "a node-local rank >= 0 (read for TGEMM_DEVICE=local-rank)");
            }
            return;
        }
}

// TGEMM_DEVICES: all, auto, or device numbers separated by commas.
void read_devices(Settings &st, const char *e)
{
    if (std::strcmp(e, "all") == 0) {
        st.spread = Spread::All;
        return;
    }
    if (std::strcmp(e, "auto") == 0) {
        st.spread = Spread::Auto;
        return;
    }
    const char *expected = "all, auto, or device numbers >= 0 separated by commas, such as 0,1 (at most 64)";
    std::vector<int> list;
    for (const char *s = e;;) {
        const char *comma = std::strchr(s, ',');
        const std::string item = comma != nullptr ? std::string(s, comma) : std::string(s);
        long v = 0;
        if (!parse_long(item.c_str(), 0, 1 << 20, &v) || list.size() >= kMaxListedDevices) {
            invalid(st, "TGEMM_DEVICES", e, expected);
            return;
        }
        list.push_back(static_cast<int>(v));
        if (comma == nullptr)
            break;
        s = comma + 1;
    }
    st.spread = Spread::List;
    st.devices = std::move(list);
}

Settings read_settings()
{
    Settings st;
    long v = 0;
    if (const char *e = std::getenv("TGEMM_DEVICE"); e && *e) {
        if (std::strcmp(e, "local-rank") == 0)
            read_local_rank(st);
        else if (parse_long(e, 0, 1 << 20, &v))
            st.device = static_cast<int>(v);
        else
            invalid(st, "TGEMM_DEVICE", e, "a CUDA device number >= 0, or local-rank");
    }
    if (const char *e = std::getenv("TGEMM_DEVICES"); e && *e)
        read_devices(st, e);
    if (const char *e = std::getenv("TGEMM_SPREAD_GRID"); e && *e) {
        long r = 0, c = 0;
        const char *x = std::strchr(e, 'x');
        if (x != nullptr && parse_long(std::string(e, x).c_str(), 1, 4096, &r) && parse_long(x + 1, 1, 4096, &c)) {
            st.spread_rows = r;
            st.spread_cols = c;
        } else {
            invalid(st, "TGEMM_SPREAD_GRID", e, "ROWSxCOLS, such as 2x2 (1 to 4096 each)");
        }
    }
    if (const char *e = std::getenv("TGEMM_VERBOSE"); e && *e) {
        if (parse_long(e, 0, 2, &v))
            st.verbose = static_cast<int>(v);
        else
            invalid(st, "TGEMM_VERBOSE", e, "0, 1 or 2");
    }
    if (const char *e = std::getenv("TGEMM_KERNEL"); e && *e)
        st.kernel = e;  // validated by the dispatcher, which knows the names
    read_switch(st, "TGEMM_SPREAD_PEER", &st.spread_peer);
    read_switch(st, "TGEMM_CLUSTERS", &st.clusters);
    read_switch(st, "TGEMM_TMA", &st.tma);
    read_mode(st, "TGEMM_STREAMK", &st.streamk);
    read_mode(st, "TGEMM_PACK", &st.pack);
    read_mode(st, "TGEMM_FP32_TC", &st.fp32_tc);
    if (const char *e = std::getenv("TGEMM_MATH"); e && *e) {
        if (std::strcmp(e, "strict") == 0)
            st.math = Math::Strict;
        else if (std::strcmp(e, "fp32-tc") == 0)
            st.math = Math::Fp32Tc;
        else  // on its own: tgemm_set_math overrides the variable, and with it this error
            st.math_error = std::string("TGEMM_MATH='") + e + "' is invalid: expected strict or fp32-tc";
    }
    if (const char *e = std::getenv("TGEMM_DEVICE_MEMORY_LIMIT"); e && *e) {
        if (!parse_bytes(e, &st.device_memory_limit))
            invalid(st, "TGEMM_DEVICE_MEMORY_LIMIT", e,
                    "a positive number of bytes, optionally with a K, M, G or T suffix (powers of 1024), such as 512M");
    }
    if (const char *e = std::getenv("TGEMM_HOST_COPY_THREADS"); e && *e) {
        if (parse_long(e, 1, kMaxHostCopyThreads, &v))
            st.host_copy_threads = static_cast<int>(v);
        else
            invalid(st, "TGEMM_HOST_COPY_THREADS", e, "a number of threads from 1 to 256");
    }
    if (const char *e = std::getenv("TGEMM_HOST_TRACE"); e && *e)
        st.host_trace = e;  // opened by the first call on host operands, which reports a failure
    if (const char *e = std::getenv("TGEMM_OFFLOAD"); e && *e) {
        if (std::strcmp(e, "auto") == 0)
            st.offload = Offload::Auto;
        else if (std::strcmp(e, "gpu") == 0 || std::strcmp(e, "always") == 0)
            st.offload = Offload::Always;
        else if (std::strcmp(e, "cpu") == 0 || std::strcmp(e, "never") == 0)
            st.offload = Offload::Never;
        else
            invalid(st, "TGEMM_OFFLOAD", e, "auto, gpu or cpu");
    }
    if (const char *e = std::getenv("TGEMM_OFFLOAD_MIN_FLOPS"); e && *e) {
        double d = 0;
        if (parse_double(e, &d))
            st.offload_min_flops = d;
        else
            invalid(st, "TGEMM_OFFLOAD_MIN_FLOPS", e, "a number of flops >= 0, such as 2e9");
    }
    const struct {
        const char *name;
        double *value;
    } rates[] = {{"TGEMM_OFFLOAD_CPU_GFLOPS", &st.offload_cpu_gflops}, {"TGEMM_OFFLOAD_LINK_GBS", &st.offload_link_gbs}};
    for (const auto &r : rates)
        if (const char *e = std::getenv(r.name); e && *e) {
            double d = 0;
            if (parse_double(e, &d) && d > 0)
                *r.value = d;
            else
                invalid(st, r.name, e, "a rate > 0, such as 250");
        }
    read_switch(st, "TGEMM_OFFLOAD_LEARN", &st.offload_learn);
    if (const char *e = std::getenv("TGEMM_CPU_BLAS"); e && *e)
        st.cpu_blas = e;
    if (const char *e = std::getenv("TGEMM_TRACE"); e && *e && std::strcmp(e, "0") != 0)
        st.trace = e;
    return st;
}

}  // namespace

const Settings &settings()
{
    static const Settings st = read_settings();
    return st;
}

}  // namespace tgemm
