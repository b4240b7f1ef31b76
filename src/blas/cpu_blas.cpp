#include "blas/cpu_blas.hpp"

#include <dlfcn.h>

#include "runtime/settings.hpp"

namespace tgemm::blas {
namespace {

// Any function of libtgemm serves to find libtgemm's own load address.
const void *own_object()
{
    Dl_info info;
    if (dladdr(reinterpret_cast<const void *>(&own_object), &info) == 0)
        return nullptr;
    return info.dli_fbase;
}

// Accepts `sym` as the CPU BLAS's sgemm_ unless it is missing or lies in
// libtgemm itself (forwarding to it would recurse); else says why not in
// `why`, naming the place it was looked for as `where`.
bool accept(void *sym, const std::string &where, CpuBlas *out, std::string *why)
{
    if (sym == nullptr) {
        *why = "no sgemm_ in " + where;
        return false;
    }
    Dl_info info;
    if (dladdr(sym, &info) == 0 || info.dli_fbase == nullptr) {
        *why = "the sgemm_ in " + where + " belongs to no known object";
        return false;
    }
    if (info.dli_fbase == own_object()) {
        *why = "the sgemm_ in " + where + " is libtgemm's own";
        return false;
    }
    out->sgemm = reinterpret_cast<SgemmFn>(sym);
    out->object = info.dli_fbase;
    out->name = info.dli_fname != nullptr ? info.dli_fname : where;
    return true;
}

CpuBlas resolve()
{
    CpuBlas r;
    std::string why_next, why_env;
    // The objects loaded after libtgemm: with LD_PRELOAD, the program's own BLAS.
    if (accept(dlsym(RTLD_NEXT, "sgemm_"), "the libraries loaded after libtgemm", &r, &why_next))
        return r;
    const std::string &path = settings().cpu_blas;
    if (path.empty()) {
        r.missing = why_next + " and TGEMM_CPU_BLAS is not set";
        return r;
    }
    // Loaded for good: the library stays until the process exits. RTLD_LOCAL
    // keeps its symbols out of the global scope the program resolves in.
    void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        const char *err = dlerror();
        r.missing = why_next + "; TGEMM_CPU_BLAS: " + (err ? err : path + " cannot be loaded");
        return r;
    }
    if (!accept(dlsym(handle, "sgemm_"), "TGEMM_CPU_BLAS=" + path, &r, &why_env))
        r.missing = why_next + "; " + why_env;
    return r;
}

}  // namespace

const CpuBlas &cpu_blas()
{
    static const CpuBlas blas = resolve();
    return blas;
}

bool defined_by_cpu_blas(const void *fn)
{
    const CpuBlas &blas = cpu_blas();
    Dl_info info;
    return blas.object != nullptr && dladdr(fn, &info) != 0 && info.dli_fbase == blas.object;
}

}  // namespace tgemm::blas
