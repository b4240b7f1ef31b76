/* A CPU BLAS under a name of the test's choosing, for `make test-cpu-blas`
 * (tests/blas/cpu_blas.sh): which library tgemm forwards to is seen from
 * where it is installed, and that it was called from its log.
 *
 * sgemm_ and cblas_sgemm compute reference SGEMM with plain loops (the
 * programs that use this library multiply small integers, so any order of
 * the sums gives the same bits) and append one line per call to the file
 * FAKE_BLAS_LOG names, when it is set. Built with -DNO_SGEMM it defines
 * neither: a library that has the name of a BLAS and is not one. Built with
 * -DCALL_BACK its sgemm_ hands every call to the sgemm_ of the program's
 * scope, as a BLAS switch (FlexiBLAS) configured with libtgemm as its
 * backend would: into tgemm again. Built with -DEXITING_HANDLERS it also
 * defines xerbla_ and cblas_xerbla that stop the process, as OpenBLAS's and
 * reference CBLAS's do (exit status 99, one line on stderr).
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef NO_SGEMM
int fake_blas_without_sgemm(void);
int fake_blas_without_sgemm(void)
{
    return 0;
}
#else
void sgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k, const float *alpha,
            const float *A, const int *lda, const float *B, const int *ldb, const float *beta, float *C,
            const int *ldc, size_t transa_len, size_t transb_len);
void cblas_sgemm(int layout, int TransA, int TransB, int M, int N, int K, float alpha, const float *A, int lda,
                 const float *B, int ldb, float beta, float *C, int ldc);

static void log_call(const char *entry)
{
    const char *path = getenv("FAKE_BLAS_LOG");
    if (!path || !*path)
        return;
    const int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    char line[64];
    const size_t len = strlen(entry) < sizeof line - 2 ? strlen(entry) : sizeof line - 2;
    memcpy(line, entry, len);
    line[len] = '\n';
    if (write(fd, line, len + 1) < 0)
        line[0] = '\0';
    close(fd);
}

/* Column-major C := alpha op(A) op(B) + beta C; the arguments are valid
 * (tgemm checked them) and C is never read when beta == 0. */
static void multiply(int ta, int tb, int m, int n, int k, float alpha, const float *A, int lda, const float *B,
                     int ldb, float beta, float *C, int ldc)
{
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
            float s = 0.0f;
            for (int l = 0; l < k; ++l)
                s += (ta ? A[l + (size_t)i * lda] : A[i + (size_t)l * lda]) *
                     (tb ? B[j + (size_t)l * ldb] : B[l + (size_t)j * ldb]);
            float *c = &C[i + (size_t)j * ldc];
            *c = beta == 0.0f ? alpha * s : alpha * s + beta * *c;
        }
}

static int trans_char(char c)
{
    return c != 'N' && c != 'n';
}

void sgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k, const float *alpha,
            const float *A, const int *lda, const float *B, const int *ldb, const float *beta, float *C,
            const int *ldc, size_t transa_len, size_t transb_len)
{
    (void)transa_len;
    (void)transb_len;
    log_call("sgemm_");
#ifdef CALL_BACK
    typedef void (*sgemm_fn)(const char *, const char *, const int *, const int *, const int *, const float *,
                             const float *, const int *, const float *, const int *, const float *, float *,
                             const int *, size_t, size_t);
    sgemm_fn backend;
    *(void **)&backend = dlsym(RTLD_DEFAULT, "sgemm_");
    Dl_info self, other;
    const int found = backend && dladdr((void *)&trans_char, &self) && dladdr(*(void **)&backend, &other);
    if (found && other.dli_fbase != self.dli_fbase) {
        backend(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, 1, 1);
        return;
    }
#endif
    multiply(trans_char(*transa), trans_char(*transb), *m, *n, *k, *alpha, A, *lda, B, *ldb, *beta, C, *ldc);
}

#ifdef EXITING_HANDLERS
void xerbla_(const char *srname, const int *info, size_t srname_len);
void cblas_xerbla(int info, const char *rout, const char *form, ...);

static void stop(const char *line)
{
    if (write(STDERR_FILENO, line, strlen(line)) < 0)
        _exit(98);
    _exit(99);
}

void xerbla_(const char *srname, const int *info, size_t srname_len)
{
    (void)srname;
    (void)info;
    (void)srname_len;
    stop("fake BLAS: xerbla_ stops the program\n");
}

void cblas_xerbla(int info, const char *rout, const char *form, ...)
{
    (void)info;
    (void)rout;
    (void)form;
    stop("fake BLAS: cblas_xerbla stops the program\n");
}
#endif

void cblas_sgemm(int layout, int TransA, int TransB, int M, int N, int K, float alpha, const float *A, int lda,
                 const float *B, int ldb, float beta, float *C, int ldc)
{
    log_call("cblas_sgemm");
    if (layout == 102)
        multiply(TransA != 111, TransB != 111, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    else
        multiply(TransB != 111, TransA != 111, N, M, K, alpha, B, ldb, A, lda, beta, C, ldc);
}
#endif
