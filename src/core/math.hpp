// Small integer arithmetic every layer uses.
#pragma once

#include <cstdint>

namespace tgemm {

// ceil(a / b) for a >= 0, b > 0.
constexpr int64_t ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

}  // namespace tgemm
