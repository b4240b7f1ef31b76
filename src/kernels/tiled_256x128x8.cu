#include "family.cuh"

namespace tgemm {
namespace kernels {
// Blocks of whole tiles take their operands contiguous along M or N through a
// ring of 2 stages of copies (kWholeRingStep in sgemm_tiled.cuh), but at NN,
// where the ring measured slower (H100, 4096^3: 49.1 -> 48.5 TFLOP/s).
const KernelFamily tiled_256x128x8 =
    make_tiled_family<TileShape<256,128,8,128,32,1,true,8,0,2,pair_bit(false, false)>>("256x128x8");
}
}  // namespace tgemm
