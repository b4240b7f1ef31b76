/* Prints 1 when CUDA sees a device, else 0: lets test scripts decide what
 * to expect from runs that may or may not reach a GPU. */
#include <stdio.h>

#include <cuda_runtime_api.h>

int main(void)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess)
        count = 0;
    printf("%d\n", count > 0 ? 1 : 0);
    return 0;
}
