/* Whether the test programs run their GPU cases, skip them, or fail them
 * (tests/gpu_probe.c; used by gpu_available() and by tests/blas/has_gpu). */
#ifndef TGEMM_TESTS_GPU_PROBE_H
#define TGEMM_TESTS_GPU_PROBE_H

#include <stdbool.h>
#include <stddef.h>

#include <cuda_runtime_api.h>

typedef enum {
    GPU_PROBE_PRESENT, /* CUDA sees a device: GPU cases run */
    GPU_PROBE_ABSENT,  /* no NVIDIA driver is installed, or the driver sees no device: GPU cases skip */
    GPU_PROBE_BROKEN,  /* anything else, or ABSENT under TGEMM_TEST_REQUIRE_GPU=1: GPU cases fail */
} gpu_probe_t;

/* The decision from cudaGetDeviceCount's error and count, the evidence of
 * an installed NVIDIA driver (NULL: none), and whether a GPU is required.
 * CUDA reports cudaErrorInsufficientDriver both when no driver is
 * installed and when the installed one is older than the runtime needs;
 * only the first is a machine without a GPU. For ABSENT and BROKEN, `why`
 * gets the reason (cap bytes). */
gpu_probe_t gpu_probe_classify(cudaError_t error, int count, const char *driver, bool require, char *why,
                               size_t cap);

/* What shows an NVIDIA driver installed: "/proc/driver/nvidia/version" (the
 * kernel driver) or the path of a libcuda.so.1 that loads; NULL if neither. */
const char *nvidia_driver_evidence(void);

/* The decision for this process, made once: cudaGetDeviceCount, the
 * driver's evidence, and TGEMM_TEST_REQUIRE_GPU (1: a GPU is required; 0
 * or unset: not; anything else is BROKEN). *why gets the reason (ABSENT,
 * BROKEN) or "". */
gpu_probe_t gpu_probe(const char **why);

#endif
