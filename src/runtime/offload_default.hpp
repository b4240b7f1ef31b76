// When a BLAS call (sgemm_, cblas_sgemm) on host operands is worth sending to
// the GPU in automatic mode. Both numbers come from `make bench-blas` on the
// H100 machine (16 Xeon cores, OpenBLAS 0.3.26) with the pipelined host path,
// 2026-11-22; the figures are in docs/performance.md.
#pragma once

namespace tgemm {

// Work from which tgemm beat the CPU BLAS: 384^3 ran 0.63x as fast as
// OpenBLAS, 512^3 1.06x, 1024^3 2.18x. Overridable with
// TGEMM_OFFLOAD_MIN_FLOPS.
constexpr double kDefaultOffloadMinFlops = 2.0 * 512 * 512 * 512;

// Flops per byte that must cross the PCIe link (A, B, C out, and C in when
// beta != 0). Below it the copies cost more than the CPU's arithmetic: a
// rank-128 update of a 4096^2 C (63 flop/byte) ran exactly as fast on both
// (1.00x), 512^3 (85 flop/byte) 1.06x.
constexpr double kOffloadMinFlopsPerByte = 64.0;

}  // namespace tgemm
