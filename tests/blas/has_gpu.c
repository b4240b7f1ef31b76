/* Lets test scripts decide what to expect from runs that may or may not
 * reach a GPU, by the rule of tests/gpu_probe.h:
 *  - CUDA sees a device: prints 1;
 *  - no NVIDIA driver is installed, or the driver sees no device: prints
 *    0, and on stderr the reason as "[ SKIPPING ] ..." for make test's
 *    summary;
 *  - anything else (a driver too old or broken, another CUDA error, no GPU
 *    under TGEMM_TEST_REQUIRE_GPU=1): prints nothing, the reason on stderr,
 *    and exits 1, so that the script fails rather than skip.
 * With --driver it prints what shows an NVIDIA driver installed, or "none". */
#include <stdio.h>
#include <string.h>

#include "gpu_probe.h"

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--driver") == 0) {
        const char *d = nvidia_driver_evidence();
        printf("%s\n", d ? d : "none");
        return 0;
    }
    const char *why;
    switch (gpu_probe(&why)) {
    case GPU_PROBE_PRESENT: printf("1\n"); return 0;
    case GPU_PROBE_ABSENT:
        fprintf(stderr, "[ SKIPPING ] GPU runs: %s\n", why);
        printf("0\n");
        return 0;
    case GPU_PROBE_BROKEN: break;
    }
    fprintf(stderr, "has_gpu: no usable GPU: %s\n", why);
    return 1;
}
