#include "family.cuh"

namespace tgemm {
namespace kernels {
// Blocks of whole tiles take their operands contiguous along M or N through a
// ring of 2 stages of copies (kWholeRingStep in sgemm_tiled.cuh).
const KernelFamily tiled_128x128x16 = make_tiled_family<TileShape<128,128,16,64,32,1,true,16,0,2>>("128x128x16");
}
}  // namespace tgemm
