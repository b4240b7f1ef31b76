#include "family.cuh"

namespace tgemm {
namespace kernels {
const KernelFamily tiled_128x128x8 = make_tiled_family<TileShape<128,128,8,64,32,2>>("128x128x8");
}
}  // namespace tgemm
