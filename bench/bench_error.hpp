// The benchmarks' reaction to any failure: a message on stderr, exit 1.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace bench {

// Prints "bench_gemm: error: ", the prefix and the message; exits 1.
[[noreturn]] inline void vdie(const char *prefix, const char *fmt, va_list ap)
{
    std::fflush(stdout);
    std::fprintf(stderr, "bench_gemm: error: %s", prefix);
    std::vfprintf(stderr, fmt, ap);
    std::fprintf(stderr, "\n");
    std::exit(1);
}

}  // namespace bench
