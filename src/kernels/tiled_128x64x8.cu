#include "family.cuh"

namespace tgemm {
namespace kernels {
const KernelFamily tiled_128x64x8 = make_tiled_family<TileShape<128,64,8,64,32,4>>("128x64x8");
}
}  // namespace tgemm
