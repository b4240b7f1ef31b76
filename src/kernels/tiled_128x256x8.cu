#include "family.cuh"

namespace tgemm {
namespace kernels {
const KernelFamily tiled_128x256x8 = make_tiled_family<TileShape<128,256,8,64,64,1>>("128x256x8");
}
}  // namespace tgemm
