// The driver's single call into the dispatcher (device_call.hpp).
#include "driver/device_call.hpp"

#include "dispatch/dispatch.hpp"

namespace tgemm {

tgemm_status run_device_operands(const GemmParams &p, const DeviceInfo &dev, cudaStream_t s)
{
    return launch_gemm(p, dev, s);
}

}  // namespace tgemm
