// When a BLAS call (sgemm_, cblas_sgemm) on host operands is worth sending to
// the GPU in automatic mode. Both numbers come from `make bench-blas` on the
// H100 machine (16 Xeon cores, OpenBLAS 0.3.26), 2026-11-22; the figures are
// in docs/performance.md.
#pragma once

namespace tgemm {

// Work from which tgemm beat the CPU BLAS at every square size measured:
// 1024^3 ran 0.82x as fast as OpenBLAS, 1536^3 1.27x. Overridable with
// TGEMM_OFFLOAD_MIN_FLOPS.
constexpr double kDefaultOffloadMinFlops = 2.0 * 1536 * 1536 * 1536;

// Flops per byte that must cross the PCIe link (A, B, C out, and C in when
// beta != 0). Below it the copies cost more than the CPU's arithmetic: a
// rank-128 update of a 4096^2 C (63 flop/byte) ran 0.28x as fast as
// OpenBLAS, 1536^3 (257 flop/byte) 1.27x, 1024^3 (171 flop/byte) 0.82x.
constexpr double kOffloadMinFlopsPerByte = 200.0;

}  // namespace tgemm
