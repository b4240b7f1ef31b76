// The one core behind sgemm_ and cblas_sgemm: given a checked, column-major
// problem that is not a quick return, decide where it runs and run it.
//
//   TGEMM_OFFLOAD=cpu   the CPU BLAS
//   TGEMM_OFFLOAD=gpu   the GPU
//   auto (default)      the side offload_model.hpp expects to finish first;
//                       calls below 2e6 flops (or TGEMM_OFFLOAD_MIN_FLOPS,
//                       when larger) stay on the CPU BLAS without asking it
//
// A GPU attempt that fails for any reason goes to the CPU BLAS
// (cpu_blas.hpp says which) for the parts of C it did not write back (all
// of C, unless it failed in the middle of a call on host operands), which
// it left as they were; the parts it wrote back hold their results,
// whatever beta is. Under TGEMM_OFFLOAD=gpu the first such failure prints
// one warning per process. Without a CPU BLAS the GPU is tried (unless
// TGEMM_OFFLOAD=cpu), and failing that the built-in reference loops compute
// C, with one warning per process. An invalid TGEMM_* setting sends every
// call to the CPU, with one warning per process naming the variable.
// alpha == 0 or k == 0 (C := beta*C, reading neither A nor B) runs on the
// host, traced as `scale`, unless TGEMM_OFFLOAD=gpu sends it to the GPU.
#pragma once

#include "blas/trace.hpp"
#include "core/problem.hpp"

namespace tgemm::blas {

void run_sgemm(const GemmParams &p, CallTrace &trace);

}  // namespace tgemm::blas
