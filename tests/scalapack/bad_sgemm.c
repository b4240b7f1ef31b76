/* A wrong SGEMM, for make test-scalapack (tests/scalapack/scalapack.sh):
 * preloaded in tgemm's place, it must make the PBLAS tester report
 * failures and examples/psgemm exit 1, so that a test that accepts their
 * output is seen to be able to refuse it.
 *
 * sgemm_ hands the call to the next sgemm_ in the process (the program's
 * BLAS) and then, when k >= 2 and alpha != 0, adds the first rank-1 term
 * once more to the last element of C: alpha op(A)(m, 1) op(B)(1, n), the
 * error of a kernel that counts one slice of K twice. The arguments are
 * not checked (a wrong BLAS for tests, nothing else). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

typedef void sgemm_fn(const char *, const char *, const int *, const int *, const int *, const float *,
                      const float *, const int *, const float *, const int *, const float *, float *, const int *,
                      size_t, size_t);

void sgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k, const float *alpha,
            const float *A, const int *lda, const float *B, const int *ldb, const float *beta, float *C,
            const int *ldc, size_t la, size_t lb)
{
    static sgemm_fn *next;
    if (!next) {
        next = (sgemm_fn *)dlsym(RTLD_NEXT, "sgemm_");
        if (!next) {
            fprintf(stderr, "bad_sgemm: no sgemm_ after this library\n");
            abort();
        }
    }
    next(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, la, lb);
    if (*m < 1 || *n < 1 || *k < 2 || *alpha == 0.0f)
        return;
    const size_t i = (size_t)*m - 1, j = (size_t)*n - 1;
    const int ta = *transa != 'N' && *transa != 'n', tb = *transb != 'N' && *transb != 'n';
    const float a = ta ? A[i * (size_t)*lda] : A[i];  /* op(A)(i, 0) */
    const float b = tb ? B[j] : B[j * (size_t)*ldb];  /* op(B)(0, j) */
    C[i + j * (size_t)*ldc] += *alpha * a * b;
}
