#include "family.cuh"

namespace tgemm {
namespace kernels {
const KernelFamily tiled_64x64x8 = make_tiled_family<TileShape<64,64,8,32,32,4>>("64x64x8");
}
}  // namespace tgemm
