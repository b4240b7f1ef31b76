#include "family.cuh"

namespace tgemm {
namespace kernels {
const KernelFamily tiled_64x128x8 = make_tiled_family<TileShape<64,128,8,64,32,4,false>>("64x128x8");  // its cluster form spills
}
}  // namespace tgemm
