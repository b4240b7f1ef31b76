// The dispatcher's measured factors: what its cost model cannot derive from
// a device's properties (kernel efficiencies, latencies, fixed costs), one
// row per architecture where they were measured. docs/notes/dispatch.md
// keeps the measurements behind them.
#pragma once

#include <cstdint>

#include "kernels/family.hpp"

namespace tgemm {

// One tiled family's factors, keyed by its registry name (kernels/families.def).
struct TiledFactors {
    const char *family;
    // Fraction of the FP32 FFMA peak per SM with the SM full, for each
    // transpose pair: [NN, NT, TN, TT].
    double efficiency[4];
    int blocks_per_sm;  // resident blocks per SM (registers, shared memory)
    // Its speed with unaligned operands (scalar loads) over its aligned speed,
    // for each transpose pair: [NN, NT, TN, TT].
    double unaligned[4] = {1.0, 1.0, 1.0, 1.0};
    // A K step's latency floor and a lone block's share of the efficiency;
    // 0: the architecture's step_seconds and alone_factor.
    double step_floor = 0.0;
    double alone = 0.0;
    int max_cluster = kTiledMaxCluster;  // the largest cluster of its split-K cluster form
    // What a block costs its SM beside its K steps (its first copies, its
    // epilogue), times the blocks on the busiest SM, and what each wave of
    // blocks costs; fitted to every plan of random products timed on the
    // device (docs/notes/dispatch.md): block_seconds and wave_seconds for
    // the scalar kernels (an operand or the output unaligned) and for the
    // first wave of the vector kernels (operands and output aligned), the
    // vector_ pair for each later block and wave of the vector kernels.
    double block_seconds = 0.0;
    double wave_seconds = 0.0;
    double vector_block_seconds = 0.0;
    double vector_wave_seconds = 0.0;
    // What each whole wave at full residency of a plan without a split
    // costs beside those while its blocks walk few K steps: the blocks of
    // such a wave start and end together, so their first copies and their
    // stores to C overlap no other block's K steps. Taken in full up to
    // short_wave_steps K steps a block, and as short_wave_steps over the
    // steps beyond; 0: none (set for the families whose measured times at
    // short K say so, docs/notes/dispatch.md). Stream-K's cost does not
    // take it: set it only for families without stream-K.
    double short_wave_seconds = 0.0;
    double short_wave_steps = 0.0;
};

// An architecture's factors, and the device they were measured on (its
// theoretical memory bandwidth scales the measured one to other devices).
struct ArchFactors {
    int cc_major, cc_minor;
    int measured_clock_khz;  // the SM clock of the device the row was measured on
    int measured_memory_clock_khz;
    int measured_bus_width_bits;
    double measured_bandwidth;  // bytes/s, read and written by a streaming copy
    // A K step's latency floor: global load, barrier, FFMA chain.
    double step_seconds;
    // A family measured with several blocks per SM runs a lone block (fewer
    // than 16 warps on the SM) at this fraction of its efficiency.
    double alone_factor;
    double launch_seconds;        // one more kernel on the stream
    // The split-K reduction behind its split-K kernel (launched to overlap
    // its end): a fixed time, each batch of slices a thread loads
    // (kernels::kSplitkReduceBatch), the slices read at reduce_slice_factor
    // times the memory bandwidth, and a time per byte of C that a faster
    // memory does not shorten (a thread's loads of its elements' slices
    // wait in turn); C read where beta != 0 at the memory bandwidth.
    double reduce_seconds;
    double reduce_batch_seconds;
    double reduce_slice_factor;
    double reduce_c_seconds_per_byte;
    // The host's time to issue a call of one kernel (a shape planned
    // before), and each further kernel: back-to-back calls cost at least
    // that much each, whatever their kernels' time.
    double host_call_seconds;
    double host_launch_seconds;
    // L2's bandwidth over the memory's, for operands read again from it.
    double l2_bandwidth_factor;
    double cluster_sync_seconds;  // split-K cluster form: its two cluster barriers
    double dsmem_round_seconds;   // cluster form: one round of reads of the other blocks' shared memory
    // Stream-K's reduction: the rate at which a block leaves or reads back a
    // part of a tile (one block's share of L2 and memory).
    double streamk_part_bandwidth;
    // The shared-out tiles' K steps take this much longer than whole tiles':
    // on the vector kernels (vector_kernels(p, c_aligned(p)), the kernels
    // launch picks for every operand and C aligned), and on the scalar ones.
    double streamk_step_factor;
    double streamk_step_factor_scalar;
    double pack_efficiency;    // the pack kernel's share of the memory bandwidth
    double stream_efficiency;  // the streaming kernels' share of it, about (peeled strips)
    // The streaming kernels' latency: a block's fixed time (launch into the
    // SM, the warps' sums added, the stores), and each round trip to memory
    // its warps wait for (a piece of Y staged, a group of X loads in flight).
    double stream_block_seconds;
    double stream_trip_seconds;
    // The most of the memory bandwidth a tiled plan moves its operands and
    // C at (a block's epilogue overlaps none of its own K steps): a floor
    // under their modelled time where K is short.
    double tiled_memory_efficiency;
    // The rank-k kernel (kernels/rank_k.cu): its share of the memory
    // bandwidth for the bytes it must move (A, B and C once), its K loop's
    // share of the FFMA peak with the SM full, and what a block costs
    // beside its bytes and FFMAs (its first copies, its round trips to C).
    double rank_k_memory_efficiency;
    double rank_k_efficiency;
    double rank_k_block_seconds;
    TiledFactors tiled[kernels::kTiledFamilyCount];
};

// The row for compute capability major.minor: its own where measured,
// else the sm_90 row (the only one measured so far).
const ArchFactors &arch_factors(int cc_major, int cc_minor);

// Whether every registered tiled family has exactly one row in every
// architecture's table; else false and `why` (at most `size` bytes) says
// which family is missing or repeated. Also a static check where the
// tables are defined.
bool factors_cover_registry(char *why, int size);

}  // namespace tgemm
