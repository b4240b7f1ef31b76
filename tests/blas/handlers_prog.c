/* A program with no error handlers of its own whose BLAS brings them from a
 * library it depends on, as Debian's libblas.so.3 from OpenBLAS does
 * (sgemm_ in it, cblas_xerbla in libopenblas.so.0, which defines sgemm_
 * too). `make test-cpu-blas` links it with tests/blas/fake_blas.c's
 * libfakewrap.so, which needs libfakecore.so, whose xerbla_ and cblas_xerbla
 * exit as OpenBLAS's and reference CBLAS's do, and runs it under
 * LD_PRELOAD=libtgemm.so: tgemm must not call those (they are no handlers
 * of the program's), but print its default messages and return, so the
 * program goes on with C untouched. */
#include <stddef.h>
#include <stdio.h>

void sgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k, const float *alpha,
            const float *A, const int *lda, const float *B, const int *ldb, const float *beta, float *C,
            const int *ldc, size_t transa_len, size_t transb_len);
void cblas_sgemm(int layout, int TransA, int TransB, int M, int N, int K, float alpha, const float *A, int lda,
                 const float *B, int ldb, float beta, float *C, int ldc);

#include "bad_calls.h"

int main(void)
{
    if (!bad_calls_leave_c(NULL, NULL)) {
        printf("handlers_prog: a bad call wrote C\n");
        return 1;
    }
    printf("handlers_prog: went on after 3 bad calls, C untouched\n");
    return 0;
}
