// The benchmarks' reaction to any failure: a message on stderr, exit 1.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

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

}  // namespace bench
