#include "blas/cpu_blas.hpp"

#include <dlfcn.h>
#include <link.h>

#include <atomic>

#include "blas/output.hpp"
#include "core/settings.hpp"

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

const void *object_of(const void *sym)
{
    Dl_info info;
    return sym != nullptr && dladdr(sym, &info) != 0 ? info.dli_fbase : nullptr;
}

// Accepts `sym` as the CPU BLAS's sgemm_ unless it is missing or belongs to
// a libtgemm: this one (forwarding would recurse) or another copy of it,
// known by `tgemm_sym`, its tgemm_version looked up the same way, lying in
// the same object. Else says why not in `why`.
bool accept(void *sym, void *tgemm_sym, CpuBlas *out, std::string *why)
{
    if (sym == nullptr) {
        *why = "no sgemm_";
        return false;
    }
    Dl_info info;
    if (dladdr(sym, &info) == 0 || info.dli_fbase == nullptr) {
        *why = "sgemm_ belongs to no known object";
        return false;
    }
    if (info.dli_fbase == own_object()) {
        *why = "sgemm_ is libtgemm's own";
        return false;
    }
    if (object_of(tgemm_sym) == info.dli_fbase) {
        *why = std::string("a copy of libtgemm (") + (info.dli_fname ? info.dli_fname : "?") + ")";
        return false;
    }
    out->sgemm = reinterpret_cast<SgemmFn>(sym);
    out->name = info.dli_fname != nullptr ? info.dli_fname : "";
    return true;
}

// Loads `path` and accepts its sgemm_; a library that is not accepted is
// closed again. `why` gets the reason, prefixed with the path.
bool load(const std::string &path, CpuBlas *out, std::string *why)
{
    // Loaded for good when accepted. RTLD_LOCAL keeps its symbols out of the
    // global scope the program resolves in.
    void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        const char *err = dlerror();
        *why = err != nullptr ? err : path + ": cannot be loaded";
        return false;
    }
    std::string reason;
    if (accept(dlsym(handle, "sgemm_"), dlsym(handle, "tgemm_version"), out, &reason)) {
        if (out->name.empty())
            out->name = path;
        return true;
    }
    dlclose(handle);
    *why = path + ": " + reason;
    return false;
}

CpuBlas resolve()
{
    CpuBlas r;
    std::string why;
    if (accept(dlsym(RTLD_NEXT, "sgemm_"), dlsym(RTLD_NEXT, "tgemm_version"), &r, &why)) {
        r.how = "loaded after libtgemm";
        return r;
    }
    r.missing = "after libtgemm: " + why;
    const std::string &path = settings().cpu_blas;
    if (!path.empty()) {
        if (load(path, &r, &why)) {
            r.how = "TGEMM_CPU_BLAS";
            return r;
        }
        r.missing += "; TGEMM_CPU_BLAS: " + why;
        return r;
    }
    r.missing += "; TGEMM_CPU_BLAS is not set";
    for (const char *name : kSystemBlas) {
        if (load(name, &r, &why)) {
            r.how = std::string("the system's, found as ") + name;
            r.missing.clear();
            return r;
        }
        r.missing += "; " + why;
    }
    return r;
}

}  // namespace

const CpuBlas &cpu_blas()
{
    // Resolved with no lock held: resolve() takes the dynamic loader's lock
    // (dlsym, dlopen), and a library whose constructor calls the BLAS while
    // it is loaded holds that lock and would wait on ours while this thread,
    // resolving, waited on the loader. Threads that race resolve alike; the
    // first to publish its result is kept (the others' libraries stay
    // loaded, as the first's). A child forked meanwhile resolves again.
    static std::atomic<const CpuBlas *> resolved{nullptr};
    if (const CpuBlas *b = resolved.load(std::memory_order_acquire))
        return *b;
    const CpuBlas *mine = new CpuBlas(resolve());  // never destroyed: calls may run during exit
    const CpuBlas *first = nullptr;
    if (!resolved.compare_exchange_strong(first, mine, std::memory_order_acq_rel, std::memory_order_acquire)) {
        delete mine;
        return *first;
    }
    if (settings().verbose > 0) {
        if (mine->sgemm != nullptr)
            print_line("tgemm: CPU BLAS: %s (%s)\n", mine->name.c_str(), mine->how.c_str());
        else
            print_line("tgemm: no CPU BLAS: %s\n", mine->missing.c_str());
    }
    return *mine;
}

bool defined_by_a_blas(const void *fn)
{
    Dl_info info;
    link_map *map = nullptr;
    if (dladdr1(fn, &info, reinterpret_cast<void **>(&map), RTLD_DL_LINKMAP) == 0 || info.dli_fbase == nullptr ||
        info.dli_fname == nullptr || info.dli_fname[0] == '\0')
        return false;
    // The executable (first in the list of loaded objects) is the program,
    // whatever it defines: where it takes sgemm_'s address, its own
    // canonical entry would look like a definition.
    if (map == nullptr || map->l_prev == nullptr)
        return false;
    // The library by its name, already loaded (a handle to it, not a new
    // copy); its own sgemm_ lies in it, a dependency's elsewhere.
    void *handle = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (handle == nullptr)
        return false;
    const bool blas = object_of(dlsym(handle, "sgemm_")) == info.dli_fbase;
    dlclose(handle);
    return blas;
}

}  // namespace tgemm::blas
