// The CPU BLAS that small calls are forwarded to: the next sgemm_ in the
// process, else the library TGEMM_CPU_BLAS names. Resolved once per process,
// without CUDA, and never by looking sgemm_ up through libtgemm itself.
#pragma once

#include <cstddef>
#include <string>

namespace tgemm::blas {

// The gfortran ABI of SGEMM: everything by reference, then the two hidden
// lengths of the character arguments (size_t since GCC 8).
using SgemmFn = void (*)(const char *, const char *, const int *, const int *, const int *, const float *,
                         const float *, const int *, const float *, const int *, const float *, float *,
                         const int *, size_t, size_t);

struct CpuBlas {
    SgemmFn sgemm = nullptr;         // null when no CPU BLAS was found
    const void *object = nullptr;    // load address of the object that defines sgemm
    std::string name;                // that object's file name
    std::string missing;             // why none was found, when sgemm is null
};

// Thread-safe; the first call resolves, later calls return the same result.
const CpuBlas &cpu_blas();

// Whether `fn` lies in the shared object the CPU BLAS was found in (false
// when there is no CPU BLAS).
bool defined_by_cpu_blas(const void *fn);

}  // namespace tgemm::blas
