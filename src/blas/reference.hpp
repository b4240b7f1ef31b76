// The built-in CPU SGEMM: reference BLAS SGEMM's loops, used only when no
// CPU BLAS is found and the GPU cannot take the call. Slow but exact to the
// reference in loop order, scaling and the cases where C, A and B are read.
#pragma once

#include "core/problem.hpp"

namespace tgemm::blas {

// p is column-major and checked; m, n >= 1 and the call is not a quick
// return; a and b may be null when alpha == 0 (they are not read).
void reference_sgemm(const GemmParams &p);

}  // namespace tgemm::blas
