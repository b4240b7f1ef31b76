#include "family.cuh"

namespace tgemm {
namespace kernels {
// Blocks of whole tiles take their operands contiguous along M or N through a
// ring of 2 stages of copies (kWholeRingStep in sgemm_tiled.cuh).
const KernelFamily tiled_128x256x8 = make_tiled_family<TileShape<128,256,8,64,64,1,true,8,0,2>>("128x256x8");
}
}  // namespace tgemm
