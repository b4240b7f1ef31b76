#include "blas/trace.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "blas/output.hpp"
#include "core/math_mode.hpp"
#include "core/per_process.hpp"
#include "core/settings.hpp"

namespace tgemm::blas {
namespace {

// The trace's file for this process: the name trace_file_name gives it,
// opened in append mode (each line is one write, and appends of one write
// are never interleaved) by its first traced call: a child forked after
// its parent's first line opens its own (%p is its id); its copy of the
// parent's descriptor stays open (the child may have closed it and reused
// the number). fd -1 with errno's value when it cannot be opened.
struct TraceFile {
    std::string name;
    int fd = -1;
    int why = 0;
    std::atomic<bool> reported{false};
};

// The trace's file descriptor: stderr for "1" or "stderr", else this
// process's file (TraceFile); one that cannot be opened is reported once
// and the process's trace goes to stderr.
int trace_fd()
{
    const std::string &t = settings().trace;
    if (t == "1" || t == "stderr")
        return STDERR_FILENO;
    static PerProcess<TraceFile> file;
    TraceFile &f = file.get(
        [&t](TraceFile &tf) {
            tf.name = trace_file_name(t);
            tf.fd = open(tf.name.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
            tf.why = errno;
        },
        [](TraceFile &tf) {  // another thread of this process opened it first
            if (tf.fd >= 0)
                close(tf.fd);
        });
    if (f.fd >= 0)
        return f.fd;
    if (!f.reported.exchange(true))
        print_line("tgemm: TGEMM_TRACE=%s cannot be opened (%s); tracing to stderr\n", f.name.c_str(),
                   std::strerror(f.why));
    return STDERR_FILENO;
}

// A transpose as the caller gave it: the character for sgemm_, N/T/C for a
// valid CBLAS value, else the number.
void describe_op(char *out, size_t cap, bool cblas, int v)
{
    if (!cblas) {
        const unsigned char c = static_cast<unsigned char>(v);
        if (c > 32 && c < 127)
            std::snprintf(out, cap, "%c", c);
        else
            std::snprintf(out, cap, "\\x%02x", c);
    } else if (v >= 111 && v <= 113) {
        std::snprintf(out, cap, "%c", "NTC"[v - 111]);
    } else {
        std::snprintf(out, cap, "%d", v);
    }
}

}  // namespace

CallTrace::CallTrace(const char *entry, bool cblas, int layout, int transa, int transb, int m, int n, int k)
    : on_(!settings().trace.empty()),
      entry_(entry),
      cblas_(cblas),
      layout_(layout),
      transa_(transa),
      transb_(transb),
      m_(m),
      n_(n),
      k_(k)
{
    if (on_) {
        start_ = std::chrono::steady_clock::now();
        math_records_ = math_records();
    }
}

CallTrace::~CallTrace()
{
    if (!on_)
        return;
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start_).count();
    char ta[8], tb[8], layout[24] = "", path[96];
    describe_op(ta, sizeof ta, cblas_, transa_);
    describe_op(tb, sizeof tb, cblas_, transb_);
    if (cblas_ && (layout_ == 101 || layout_ == 102))
        std::snprintf(layout, sizeof layout, " layout=%s", layout_ == 101 ? "row" : "col");
    else if (cblas_)
        std::snprintf(layout, sizeof layout, " layout=%d", layout_);
    if (info_ != 0)
        std::snprintf(path, sizeof path, "%s%d", path_, info_);
    else
        std::snprintf(path, sizeof path, "%s%s", path_, detail_ != nullptr ? detail_ : "");
    char scalars[64] = "";
    if (have_scalars_)
        std::snprintf(scalars, sizeof scalars, " alpha=%g beta=%g", static_cast<double>(alpha_),
                      static_cast<double>(beta_));
    char offload[96] = "";
    if (offload_ != nullptr)
        std::snprintf(offload, sizeof offload, " auto=%s est_cpu_us=%.1f est_gpu_us=%.1f", offload_,
                      est_cpu_s_ * 1e6, est_gpu_s_ * 1e6);
    char math[48] = "";
    MathRecord rec;
    if (process_math() == Math::Fp32Tc && math_records() != math_records_ && last_math(&rec)) {
        if (rec.tc)
            std::snprintf(math, sizeof math, " math=fp32-tc:%d", rec.moduli);
        else
            std::snprintf(math, sizeof math, " math=strict:%s", strict_why_name(rec.why));
    }
    char line[528];
    write_text(trace_fd(), line,
               std::snprintf(line, sizeof line,
                             "tgemm trace: entry=%s%s transa=%s transb=%s m=%d n=%d k=%d%s path=%s%s%s time_us=%.1f\n",
                             entry_, layout, ta, tb, m_, n_, k_, scalars, path, math, offload, us),
               sizeof line);
}

}  // namespace tgemm::blas
