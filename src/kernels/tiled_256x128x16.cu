#include "family.cuh"

namespace tgemm {
namespace kernels {
const KernelFamily tiled_256x128x16 = make_tiled_family<TileShape<256,128,16,128,32,1,true,8>>("256x128x16");
}
}  // namespace tgemm
