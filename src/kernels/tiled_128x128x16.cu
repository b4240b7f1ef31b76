#include "family.cuh"

namespace tgemm {
namespace kernels {
const KernelFamily tiled_128x128x16 = make_tiled_family<TileShape<128,128,16,64,32,1>>("128x128x16");
}
}  // namespace tgemm
