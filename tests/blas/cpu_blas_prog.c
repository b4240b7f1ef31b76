/* A small BLAS program for `make test-cpu-blas` (tests/blas/cpu_blas.sh):
 * five small products through sgemm_ and cblas_sgemm, whichever library
 * defines them (libtgemm linked directly, or a BLAS with libtgemm
 * preloaded). Inputs are small integers, so every product is exact in FP32
 * in any order of the sums and is checked with ==; where beta == 0, C
 * starts as NaN. Prints PASS and the
 * number of products, or FAIL; exits 1 on failure.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>

void sgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k, const float *alpha,
            const float *A, const int *lda, const float *B, const int *ldb, const float *beta, float *C,
            const int *ldc, size_t transa_len, size_t transb_len);
void cblas_sgemm(int layout, int TransA, int TransB, int M, int N, int K, float alpha, const float *A, int lda,
                 const float *B, int ldb, float beta, float *C, int ldc);

enum { kMax = 24, kElems = kMax * kMax };

static float g_a[kElems], g_b[kElems], g_c[kElems], g_want[kElems];

/* op(X)(i, j) of a column-major X. */
static float at(const float *x, int ld, int trans, int i, int j)
{
    return trans ? x[j + i * ld] : x[i + j * ld];
}

/* One column-major product through sgemm_ (cblas == 0) or cblas_sgemm
 * (layout 102, or 101 on the transposed problem, which is the same
 * arithmetic on the same memory); true when C is right, padding included. */
static int product(int cblas, int row_major, int ta, int tb, int m, int n, int k, float alpha, float beta)
{
    const int lda = (ta ? k : m) + 1, ldb = (tb ? n : k) + 2, ldc = m + 3;
    for (int i = 0; i < kElems; ++i) {
        g_a[i] = (float)((i * 7 + 3) % 9 - 4);
        g_b[i] = (float)((i * 5 + 1) % 7 - 3);
        g_c[i] = g_want[i] = (float)(i % 5 - 2);
    }
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
            float s = 0.0f;
            for (int l = 0; l < k; ++l)
                s += at(g_a, lda, ta, i, l) * at(g_b, ldb, tb, l, j);
            g_want[i + j * ldc] = alpha * s + beta * g_want[i + j * ldc];
            /* beta == 0 must not read C: NaN there shows a read. */
            if (beta == 0.0f)
                g_c[i + j * ldc] = NAN;
        }
    if (!cblas) {
        const char tas[2] = {ta ? 't' : 'N', 0}, tbs[2] = {tb ? 'T' : 'n', 0};
        sgemm_(tas, tbs, &m, &n, &k, &alpha, g_a, &lda, g_b, &ldb, &beta, g_c, &ldc, 1, 1);
    } else if (!row_major) {
        cblas_sgemm(102, ta ? 112 : 111, tb ? 112 : 111, m, n, k, alpha, g_a, lda, g_b, ldb, beta, g_c, ldc);
    } else {
        /* Row-major C^T (n x m) = op(B)^T op(A)^T: the same memory. */
        cblas_sgemm(101, tb ? 112 : 111, ta ? 112 : 111, n, m, k, alpha, g_b, ldb, g_a, lda, beta, g_c, ldc);
    }
    for (int i = 0; i < kElems; ++i)
        if (g_c[i] != g_want[i]) {
            fprintf(stderr, "cpu_blas_prog: %s ta=%d tb=%d %dx%dx%d: element %d = %g, want %g\n",
                    cblas ? "cblas_sgemm" : "sgemm_", ta, tb, m, n, k, i, (double)g_c[i], (double)g_want[i]);
            return 0;
        }
    return 1;
}

int main(void)
{
    int ok = 1, products = 0;
    ok &= product(0, 0, 0, 0, 7, 5, 3, 1.0f, 0.0f), products++;
    ok &= product(0, 0, 1, 0, 16, 9, 12, -1.0f, 2.0f), products++;
    ok &= product(0, 0, 0, 1, 5, 11, 8, 2.0f, 1.0f / 2.0f), products++;
    ok &= product(1, 0, 0, 0, 9, 9, 9, 1.0f, -1.0f), products++;
    ok &= product(1, 1, 1, 1, 6, 13, 4, 0.5f, 0.0f), products++;
    printf("cpu_blas_prog: %s (%d products)\n", ok ? "PASS" : "FAIL", products);
    return ok ? 0 : 1;
}
