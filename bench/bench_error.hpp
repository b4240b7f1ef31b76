// The benchmarks' reaction to any failure: a message on stderr, exit 1;
// and the CSV files they write, which fail the same way.
#pragma once

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>

namespace bench {

// The name messages start with: each benchmark program sets its own in main.
inline const char *program_name = "bench_gemm";

// Prints "PROGRAM: error: ", the prefix and the message; exits 1.
[[noreturn]] inline void vdie(const char *prefix, const char *fmt, va_list ap)
{
    std::fflush(stdout);
    std::fprintf(stderr, "%s: error: %s", program_name, prefix);
    std::vfprintf(stderr, fmt, ap);
    std::fprintf(stderr, "\n");
    std::exit(1);
}

// vdie with no prefix.
[[noreturn]] inline void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

inline void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vdie("", fmt, ap);
}

// path opened for writing, its parent directory created, header written;
// fatal on failure (so that a bad path fails before any work).
inline FILE *open_csv(const std::string &path, const char *header)
{
    const std::filesystem::path p(path);
    if (p.has_parent_path()) {
        std::error_code ec;
        std::filesystem::create_directories(p.parent_path(), ec);
        if (ec)
            die("cannot create directory %s: %s", p.parent_path().c_str(), ec.message().c_str());
    }
    FILE *csv = std::fopen(path.c_str(), "w");
    if (!csv)
        die("cannot open %s for writing: %s", path.c_str(), std::strerror(errno));
    std::fprintf(csv, "%s\n", header);
    std::fflush(csv);
    return csv;
}

}  // namespace bench
