#include "family.cuh"

namespace tgemm {
namespace kernels {
// The async ring's family (TileShape::kAsyncStages): 4 stages of 16 K, so a
// block of a small product has its first three steps' copies in flight at
// once.
const KernelFamily tiled_64x64x16 = make_tiled_family<TileShape<64,64,16,32,32,4,true,16,4>>("64x64x16");
}
}  // namespace tgemm
