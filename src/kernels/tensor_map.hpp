// The driver's tensor-map encoder (cuTensorMapEncodeTiled), reached through
// the runtime because the library does not link libcuda: what the kernels
// fed by the tensor copy engine (skinny_tma.cu, ozaki/igemm.cu) describe
// their operands with. Host code.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

namespace tgemm {
namespace kernels {

// Looked up once per process (the entry point serves every device),
// thread-safe; null where the driver lacks it.
PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder();

}  // namespace kernels
}  // namespace tgemm
