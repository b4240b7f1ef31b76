#include "driver/host_trace.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <mutex>

namespace tgemm {

const char *trace_event_name(TraceEvent e)
{
    switch (e) {
    case TraceEvent::Call: return "call";
    case TraceEvent::StageIn: return "stage_in";
    case TraceEvent::StageOut: return "stage_out";
    case TraceEvent::CopyPart: return "copy_part";
    case TraceEvent::WaitBuffer: return "wait_buffer";
    case TraceEvent::WaitOut: return "wait_out";
    case TraceEvent::WaitEnd: return "wait_end";
    case TraceEvent::H2D: return "h2d";
    case TraceEvent::P2P: return "p2p";
    case TraceEvent::Kernel: return "kernel";
    case TraceEvent::D2H: return "d2h";
    }
    return "?";
}

const char *trace_header()
{
    return "call,event,task,tile_row,tile_col,chunk,operand,thread,bytes,start_us,end_us,detail\n";
}

std::string format_trace_row(uint64_t call, const TraceRow &row)
{
    char buf[256];
    std::snprintf(buf, sizeof buf, "%" PRIu64 ",%s,%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%c,%d,%" PRIu64
                                   ",%.3f,%.3f,",
                  call, trace_event_name(row.event), row.task, row.tile_row, row.tile_col, row.chunk, row.operand,
                  row.thread, row.bytes, row.start_us, row.end_us);
    std::string line = buf;
    // RFC 4180: a field with a comma, quote or line break is quoted, its
    // quotes doubled.
    if (row.detail.find_first_of(",\"\r\n") == std::string::npos) {
        line += row.detail;
    } else {
        line += '"';
        for (char c : row.detail) {
            if (c == '"')
                line += '"';
            line += c;
        }
        line += '"';
    }
    line += '\n';
    return line;
}

int open_trace(const char *path, std::string *error)
{
    const int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        *error = std::string("cannot be opened for appending: ") + std::strerror(errno);
    return fd;
}

bool append_trace(int fd, const std::string &text, std::string *error)
{
    static std::mutex mu;  // the header check and the write, as one step
    std::lock_guard<std::mutex> lk(mu);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        *error = std::string("fstat: ") + std::strerror(errno);
        return false;
    }
    const std::string out = st.st_size == 0 ? trace_header() + text : text;
    size_t done = 0;
    while (done < out.size()) {
        const ssize_t w = write(fd, out.data() + done, out.size() - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            *error = std::string("write: ") + (w < 0 ? std::strerror(errno) : "no progress");
            return false;
        }
        done += static_cast<size_t>(w);
    }
    return true;
}

}  // namespace tgemm
