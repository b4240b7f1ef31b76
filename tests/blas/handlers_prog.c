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

int main(void)
{
    float a[16], b[16], c[16];
    for (int i = 0; i < 16; ++i) {
        a[i] = b[i] = 1.0f;
        c[i] = -7.0f;
    }
    const float one = 1.0f;
    int m = -1, n = 2, k = 2, ld = 2;
    sgemm_("N", "N", &m, &n, &k, &one, a, &ld, b, &ld, &one, c, &ld, 1, 1);
    cblas_sgemm(7, 111, 111, 2, 2, 2, 1.0f, a, 2, b, 2, 1.0f, c, 2);
    cblas_sgemm(101, 111, 111, 2, -1, 2, 1.0f, a, 2, b, 2, 1.0f, c, 2);
    for (int i = 0; i < 16; ++i)
        if (c[i] != -7.0f) {
            printf("handlers_prog: a bad call wrote C\n");
            return 1;
        }
    printf("handlers_prog: went on after 3 bad calls, C untouched\n");
    return 0;
}
