// How a product with host operands is cut into pieces that stream over the
// link: the sizes of the C tiles and K chunks, the order of the kernels,
// which operand stays on the device while it is reused, and the device
// buffers all of this takes. Pure arithmetic, no CUDA: host_executor.cpp
// runs a plan, and tests/test_host_plan.cpp checks every plan it can think
// of.
//
// C is cut into tiles of mt x nt, K into chunks of kt. Tiles are visited in
// an outer loop over blocks of one dimension and an inner loop over the
// other. With rows_outer the outer loop walks row blocks: the A panel (mt
// rows, all of K) is the "outer operand", used by every tile of its row; B
// is the "inner operand", whose column panels change from tile to tile.
// Otherwise the roles of A and B swap. Each kernel (a task) multiplies a
// range of K into a part of C, with beta for the part's first range and 1
// after it, and a part of host C leaves the device after its last range.
//
// Two schedules.
//
// The resident schedule, where the device holds every host operand whole
// (all of A, B and C that crosses the link) and K has at least
// kLeadMinChunks chunks. Its kernels:
//   the opening  one short K step, [0, open_depth), on every tile, from the
//                corner (0, 0) outwards in growing squares, so that each new
//                slice of A or B that arrives serves as many tiles as it
//                can; the first kernel waits for one slice of A and one of
//                B, a few MiB, instead of whole chunks. When C is read
//                (beta != 0) every tile of the opening must bring its C in
//                first, so the opening covers only the lead's tiles.
//   the lead     the first outer blocks (two, or more where the inner
//                blocks are few and C is not read: kLeadFeed), K-outer:
//                the rest of the first chunk, then chunk by chunk, each step
//                over the lead's tiles one inner block at a time (all the
//                lead's tiles of it), so that each new chunk of B, and of
//                A, soon has kernels to feed. These kernels wait for chunks
//                still crossing the link; the host stages pageable operands
//                more slowly than the link carries them, and the lead asks
//                the link for less per kernel than a row of tiles would.
//   the rest     once the lead has brought all of the inner operand in,
//                each later outer block is one kernel over all of its tiles
//                and all of its K not yet done: few, large launches, whose
//                blocks fill the GPU better than one tile's do.
//   the cut      the last kernel is cut so that little of C is left to
//                cross the link after it: its tiles into runs of half, a
//                quarter, ... of them, down to one tile, and that tile into
//                parts of 1/2, 1/4 and 1/4 of its outer side. Each run's C
//                crosses the link while the next ones compute.
// Each element of C thus sums K in the same ranges on every run of the same
// plan, and a plan depends only on the sizes, which operands cross the
// link, whether C is read and the device memory the call may use.
//
// The tiled schedule, everywhere else (K shorter, or device memory too
// small to hold the operands). Each tile runs one kernel per K chunk, and a
// host operand's device copy is kept as one of:
//   Panel  (outer operand) the panel of the current outer block, all of K,
//          loaded chunk by chunk while the first tile of the block runs and
//          reused by the rest; two slots, so the next panel can load while
//          this one is in use. The operand crosses the link once.
//   Whole  (inner operand) all of it, loaded chunk by chunk during the first
//          pass of the outer loop and reused by every later pass. Once.
//   Chunk  only the chunk the current kernel reads, two slots (double
//          buffering). The operand crosses once per tile that reads it.
// Host C has two tile slots: one is computed while the other drains.
// Where A and B both stay whole (memory permitting), the first `lead` tiles
// of the loop order (two outer blocks) run K-outer, as the lead above does:
// every lead tile's first chunk, then every lead tile's second, and so on;
// the tiles after them run tile by tile. Each lead tile has its own C slot;
// two more serve the tiles after them.
//
// Device and managed operands (and A, B when they are not read) are used in
// place. Every device buffer is a column-major copy of a part of the
// operand as stored (transposed operands stay transposed), with a leading
// dimension rounded up to kLdAlign.
#pragma once

#include <cstdint>

namespace tgemm {

// Preferred C tile side: a 2048 x 2048 tile is 256 blocks of 128 x 128,
// about one full wave of the tiled kernels. One 2048-deep K step of it
// multiplies in longer than a 2048 x 2048 chunk takes to cross the link, so
// once a panel is cached the copies hide behind the kernels.
constexpr int64_t kTileSide = 2048;
// Preferred K chunk: the first kernel waits for one chunk of A and of B,
// not for whole panels.
constexpr int64_t kChunkDepth = 2048;
// The resident schedule's opening is this fraction of a chunk deep (rounded
// down to kTileQuantum, at least one quantum): a quarter of a chunk's slices
// of A and B arrive in a quarter of the time, and the opening's kernels,
// one per tile, are still deep enough not to be dominated by their fixed
// cost.
constexpr int64_t kOpenDivisor = 4;
// K chunks a plan needs for a lead group (and for the resident schedule):
// with two or three, the lead's last step, in which all its tiles finish at
// once, is too large a part of it, and the opening delays every tile of C
// by too large a part of the multiply.
constexpr int64_t kLeadMinChunks = 4;
// Outer blocks in the tiled schedule's lead group, and the fewest in the
// resident schedule's lead.
constexpr int64_t kLeadBlocks = 2;
// The resident schedule's lead takes outer blocks (up to all but one) until
// each of its K steps runs at least this many kernels per chunk of A or B
// it brings in: L outer blocks of I tiles run L * I kernels per L + I
// chunks. A chunk of a 2048-wide tile takes a little longer to cross the
// link from pageable memory than its kernel takes to run, and the lead must
// keep ahead of the link when the host stages more slowly than usual. Not
// when C is read: the lead's tiles then bring their C in too.
constexpr double kLeadFeed = 1.5;
// When memory is short, K chunks shrink to this before tiles shrink: a short
// chunk costs one more kernel per tile, a small tile costs idle SMs.
constexpr int64_t kChunkFloor = 256;
// Tile sides and chunk depths below the full dimension are multiples of
// this, and never smaller: the smallest plan has 32 x 32 tiles, 32-deep.
constexpr int64_t kTileQuantum = 32;
// Leading dimensions of device buffers are multiples of 4 floats, so every
// column starts 16-byte aligned and the vectorised kernels apply.
constexpr int64_t kLdAlign = 4;
// Slots start 64 floats (256 bytes) apart at least.
constexpr int64_t kSlotAlign = 64;

enum class Cache : unsigned char { InPlace, Panel, Whole, Chunk, Tile };

struct PlanRequest {
    int64_t m = 0, n = 0, k = 0;  // k = 0 when A and B are not read (alpha == 0 or k == 0)
    bool trans_a = false, trans_b = false;
    bool a_host = false, b_host = false, c_host = false;  // operands that cross the link
    bool c_in = false;                                    // host C is read (beta != 0)
    uint64_t budget = 0;                                  // bytes the device buffers may take
    // The preferred sizes above; tests make them small, so that small
    // products take the schedules of large ones. Multiples of kTileQuantum.
    int64_t tile_side = kTileSide, chunk_depth = kChunkDepth, chunk_floor = kChunkFloor;
};

// One operand's device buffers: `count` slots of ld x cols, `stride` floats
// apart, the first at `offset` floats from the start of the arena.
struct Slots {
    Cache cache = Cache::InPlace;
    int count = 0;
    int64_t ld = 0;
    int64_t stride = 0;
    int64_t offset = 0;
};

struct HostPlan {
    int64_t mt = 0, nt = 0, kt = 0;  // tile sides and chunk depth (kt = 0 when k = 0)
    int64_t mb = 0, nb = 0, kb = 0;  // row blocks, column blocks, K chunks (kb >= 1)
    bool rows_outer = true;
    int64_t lead = 0;                // tiles of the lead group, run K-outer first; 0 = none
    bool resident = false;           // the resident schedule (every host operand Whole)
    int64_t open_depth = 0;          // resident: K depth of the opening
    int64_t open_blocks = 0;         // resident: outer blocks the opening covers
    int64_t tasks = 0;               // kernels of the schedule
    Slots a, b, c;
    int64_t arena_elems = 0;         // floats of device memory all slots take
    double link_bytes = 0;           // bytes the plan moves over the link
};

// Picks the plan: the resident schedule at the preferred sizes where it
// applies and fits the budget; else the preferred sizes if some tiled plan
// at those sizes fits (the one that moves the fewest bytes, then one with a
// lead group, then the one that takes the least memory), else smaller ones,
// K chunks first. Returns false when even 32 x 32 x 32 pieces do not fit;
// *need_bytes then holds what they take.
bool plan_host(const PlanRequest &r, HostPlan *plan, uint64_t *need_bytes);

inline uint64_t arena_bytes(const HostPlan &p) { return static_cast<uint64_t>(p.arena_elems) * sizeof(float); }
inline int64_t task_count(const HostPlan &p) { return p.tasks; }

// A part of a matrix as stored: rows x cols from (row, col).
struct Rect {
    int64_t row = 0, col = 0, rows = 0, cols = 0;
};

// What one kernel of the schedule reads or writes from one operand.
struct OperandStep {
    Rect rect;           // the part of the stored operand
    bool load = false;   // copy it to the device before the kernel
    bool reuse = false;  // the copy (for C: the kernel's first write) lands in a slot that earlier
                         // tasks used; wait until their kernels (for C: its copy out) are done
    int slot = 0;
    int64_t offset = 0;  // floats from the arena start to the rect's first element
};

// Task t of the schedule (0 <= t < task_count): one kernel on a range of K
// of a part of C (a tile, a run of tiles of one outer block, or a part of a
// tile). Tasks run in order t = 0, 1, ... (the schedules above). c.rect
// leaves the device after the kernel when `last` and C is a host operand.
// Steps of in-place operands only carry the rect.
struct Task {
    int64_t i0 = 0, j0 = 0, k0 = 0;          // origin of the part of C, start of the K range
    int64_t rows = 0, cols = 0, depth = 0;   // their extent (depth 0 when k = 0)
    bool first = false, last = false;        // the first / last K range of this part of C
    OperandStep a, b, c;
};

Task host_task(const HostPlan &plan, const PlanRequest &r, int64_t t);

}  // namespace tgemm
