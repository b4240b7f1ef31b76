#include "blas/output.hpp"

#include <unistd.h>

#include <cstdarg>
#include <cstdio>

namespace tgemm::blas {

void write_text(int fd, const char *text, int len, size_t cap)
{
    if (len <= 0 || cap == 0)
        return;
    size_t left = static_cast<size_t>(len) < cap ? static_cast<size_t>(len) : cap - 1;
    while (left > 0) {
        const ssize_t w = write(fd, text, left);
        if (w <= 0)
            return;
        text += w;
        left -= static_cast<size_t>(w);
    }
}

void print_line(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    const int len = std::vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    write_text(STDERR_FILENO, line, len, sizeof line);
}

}  // namespace tgemm::blas
