#include "blas/xerbla.hpp"

#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <mutex>

#include "blas/cpu_blas.hpp"
#include "blas/output.hpp"
#include "core/per_process.hpp"

// The handlers are weak undefined references: the dynamic linker binds them
// to the first definition in the process's global scope (the program's own
// handler, or one in a library it loaded), and leaves them null when there is
// none. A weak reference is allowed by -z defs and exports nothing.
extern "C" {
__attribute__((weak, visibility("default"))) void xerbla_(const char *srname, const int *info, size_t srname_len);
__attribute__((weak, visibility("default"))) void cblas_xerbla(int info, const char *rout, const char *form, ...);
// Reference CBLAS defines it (cblas_globals.c); a program may define its own.
__attribute__((weak, visibility("default"))) extern int RowMajorStrg;
}

namespace tgemm::blas {
namespace {

constexpr char kSgemmName[] = "SGEMM ";  // reference passes the name padded to 6
constexpr char kCblasName[] = "cblas_sgemm";

constexpr char kCblasFromSgemmName[] = "cblas_sgemm ";  // reference CBLAS's xerbla_ makes it from "SGEMM "

// A handler defined by a BLAS library (the CPU BLAS tgemm forwards to, or
// OpenBLAS behind Debian's libblas.so.3) is that library's default, not the
// program's: reference CBLAS's and OpenBLAS's cblas_xerbla exit the process,
// which tgemm never does. Only the program's handlers (in the executable or
// in a library that is no BLAS) are called.
template <typename Fn>
bool program_handler(Fn fn)
{
    return fn != nullptr && !defined_by_a_blas(reinterpret_cast<const void *>(fn));
}

// Reference CBLAS's default message, the number mapped back to the caller's
// argument; reference cblas_xerbla then calls exit(-1), tgemm returns.
void print_cblas_message(int caller_info, const char *form, int value)
{
    char line[160];
    int len = std::snprintf(line, sizeof line, "Parameter %d to routine %s was incorrect\n", caller_info, kCblasName);
    if (len > 0 && static_cast<size_t>(len) < sizeof line && form[0] != '\0') {
        const int more = std::snprintf(line + len, sizeof line - static_cast<size_t>(len), form, value);
        if (more > 0)
            len += more;
    }
    write_text(STDERR_FILENO, line, len, sizeof line);
}

// The lock RowMajorStrg's writes take (xerbla.hpp), where the process
// defines it; recursive, for a handler that makes a call of its own. One
// per process: a child forked while a thread of its parent held it would
// find the parent's held for ever.
std::recursive_mutex &row_major_strg_mutex()
{
    static PerProcess<std::recursive_mutex> mutex;
    return mutex.get();
}

// RowMajorStrg as reference cblas_sgemm has it while an error is reported,
// 0 after.
class HandlerLayout {
public:
    explicit HandlerLayout(bool row_major)
    {
        if (&RowMajorStrg == nullptr)
            return;
        lock_ = std::unique_lock<std::recursive_mutex>(row_major_strg_mutex());
        RowMajorStrg = row_major ? 1 : 0;
    }
    ~HandlerLayout()
    {
        if (&RowMajorStrg != nullptr)
            RowMajorStrg = 0;
    }
    HandlerLayout(const HandlerLayout &) = delete;
    HandlerLayout &operator=(const HandlerLayout &) = delete;

private:
    std::unique_lock<std::recursive_mutex> lock_;
};

}  // namespace

void report_sgemm_error(int info)
{
    if (program_handler(&xerbla_)) {
        xerbla_(kSgemmName, &info, sizeof kSgemmName - 1);
        return;
    }
    // Reference XERBLA's text (the name trimmed, as LEN_TRIM does); it then
    // executes STOP, tgemm returns.
    print_line(" ** On entry to SGEMM parameter number %2d had an illegal value\n", info);
}

void report_cblas_error(int info, int caller_info, const char *form, int value, bool row_major)
{
    const HandlerLayout layout(row_major);
    if (program_handler(&cblas_xerbla)) {
        if (form[0] != '\0')
            cblas_xerbla(info, kCblasName, form, value);
        else
            cblas_xerbla(info, kCblasName, form);
        return;
    }
    print_cblas_message(caller_info, form, value);
}

void report_cblas_sgemm_error(int info, int caller_info, bool row_major)
{
    // Reference cblas_sgemm leaves these to the SGEMM it calls, whose XERBLA
    // is the program's xerbla_ where it has one; else reference CBLAS's
    // xerbla_, which passes info + 1 and "cblas_" with the lower-cased
    // routine name to cblas_xerbla.
    const HandlerLayout layout(row_major);
    if (program_handler(&xerbla_)) {
        xerbla_(kSgemmName, &info, sizeof kSgemmName - 1);
        return;
    }
    if (program_handler(&cblas_xerbla)) {
        cblas_xerbla(info + 1, kCblasFromSgemmName, "");
        return;
    }
    print_cblas_message(caller_info, "", 0);
}

RowMajorStrgReset::~RowMajorStrgReset()
{
    if (&RowMajorStrg == nullptr)
        return;
    // Where another thread is reporting an error, its handler runs with the
    // value it needs and leaves 0 when it returns: no wait.
    std::unique_lock<std::recursive_mutex> lock(row_major_strg_mutex(), std::try_to_lock);
    if (lock.owns_lock())
        RowMajorStrg = 0;
}

}  // namespace tgemm::blas
