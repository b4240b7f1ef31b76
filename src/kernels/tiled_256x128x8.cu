#include "family.cuh"

namespace tgemm {
namespace kernels {
// Blocks of whole tiles take their operands contiguous along M or N through a
// ring of 2 stages of copies (kWholeRingStep in sgemm_tiled.cuh).
const KernelFamily tiled_256x128x8 = make_tiled_family<TileShape<256,128,8,128,32,1,true,8,0,2>>("256x128x8");
}
}  // namespace tgemm
