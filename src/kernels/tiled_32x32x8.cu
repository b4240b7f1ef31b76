#include "family.cuh"

namespace tgemm {
namespace kernels {
const KernelFamily tiled_32x32x8 = make_tiled_family<TileShape<32,32,8,32,32,8>>("32x32x8");
}
}  // namespace tgemm
