// Lines the BLAS ABI writes (warnings, default error messages, the trace):
// each goes out with one write call where the system allows, so lines from
// several threads never interleave, and nothing is buffered in stdio.
#pragma once

#include <cstddef>

namespace tgemm::blas {

// Writes the first `len` bytes of `text` to `fd`, `len` being what
// snprintf returned for a buffer of `cap` bytes (clipped to cap - 1; nothing
// for len <= 0). Errors are ignored: there is nowhere left to report them.
void write_text(int fd, const char *text, int len, size_t cap);

// printf to stderr, one line of at most 1 KiB.
void print_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace tgemm::blas
