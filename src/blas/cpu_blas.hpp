// The CPU BLAS that small calls are forwarded to, found once per process,
// without CUDA, in this order:
//
//   1. the next sgemm_ in the process after libtgemm: with LD_PRELOAD, the
//      program's own BLAS;
//   2. the library TGEMM_CPU_BLAS names, when it is set: that one or none,
//      so a wrong name shows up as the built-in loops' warning rather than
//      as another BLAS;
//   3. the system's CPU BLAS, when TGEMM_CPU_BLAS is unset: the first of
//      kSystemBlas that loads and defines a usable sgemm_. Programs reach
//      this when the linker dropped their BLAS (`-ltgemm -lopenblas` under
//      --as-needed: libtgemm already defines every symbol they use), or
//      when their BLAS was loaded with RTLD_LOCAL (Python's extension
//      modules, numpy's BLAS among them), out of reach of step 1.
//
// Libraries are opened RTLD_LOCAL, so nothing they define enters the scope
// the program's symbols are resolved in, and stay loaded for good. An sgemm_
// is never used when it belongs to libtgemm itself or to another copy of it
// (an object that also defines tgemm_version): forwarding would recurse or
// come back. TGEMM_VERBOSE >= 1 prints, once, which library was chosen and
// how, or why none was.
#pragma once

#include <cstddef>
#include <string>

namespace tgemm::blas {

// The gfortran ABI of SGEMM: everything by reference, then the two hidden
// lengths of the character arguments (size_t since GCC 8).
using SgemmFn = void (*)(const char *, const char *, const int *, const int *, const int *, const float *,
                         const float *, const int *, const float *, const int *, const float *, float *,
                         const int *, size_t, size_t);

// The system's CPU BLAS, by the names its packages give it, best first.
// OpenBLAS is the only one of them that is always an optimised BLAS.
// FlexiBLAS is a switch over a backend that its user or administrator chose
// (FLEXIBLAS, flexiblasrc), which makes it the system's choice of
// implementation where it is installed. libblas.so.3 is whatever the
// distribution's alternatives select: usually an optimised BLAS, but
// possibly the reference BLAS, the same loops as tgemm's built-in ones, so
// it comes last. Other libraries (BLIS, MKL; an ILP64 OpenBLAS has no
// sgemm_ of this ABI) only by TGEMM_CPU_BLAS.
constexpr const char *kSystemBlas[] = {"libopenblas.so.0", "libflexiblas.so.3", "libblas.so.3"};

struct CpuBlas {
    SgemmFn sgemm = nullptr;         // null when no CPU BLAS was found
    std::string name;                // the file name of the object that defines sgemm
    std::string how;                 // how it was found, for messages
    std::string missing;             // why none was found, when sgemm is null
};

// Thread-safe; the first call resolves, later calls return the same result.
const CpuBlas &cpu_blas();

// Whether `fn` lies in a shared library that defines an sgemm_ of its own:
// a BLAS, such as the CPU BLAS tgemm forwards to or one it depends on
// (Debian's libblas.so.3 from OpenBLAS defines sgemm_, and its
// cblas_xerbla is in libopenblas.so.0, which defines sgemm_ too). The
// program's executable and libraries without sgemm_ are no BLAS.
bool defined_by_a_blas(const void *fn);

}  // namespace tgemm::blas
