/* The long tier (make test-long, GPU only): large and odd sizes checked
 * elementwise, on small integers exactly against OpenBLAS and on uniform
 * inputs against an FP64 reference, and one C with more than 2^31 elements
 * checked elementwise against FP64. Every case skips without a GPU. */
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

typedef struct {
    const char *name;
    bool ta, tb;
    int64_t m, n, k;
    int64_t pad;
    float alpha, beta;
} big_case_t;

static const big_case_t kBig[] = {
    {"nn_4096x4096x4096", false, false, 4096, 4096, 4096, 0, 1.0f, 0.0f},
    {"nt_4096x4096x4096", false, true, 4096, 4096, 4096, 0, 1.0f, 0.0f},
    {"tn_4096x4096x4096", true, false, 4096, 4096, 4096, 0, 1.0f, 0.0f},
    {"tt_4096x4096x4096", true, true, 4096, 4096, 4096, 0, 1.0f, 0.0f},
    {"nn_4097x4095x1023_pad3", false, false, 4097, 4095, 1023, 3, -1.5f, 0.5f},
    {"tt_4095x4097x2049_pad1", true, true, 4095, 4097, 2049, 1, 0.75f, -1.0f},
    {"nt_1x8191x4097", false, true, 1, 8191, 4097, 0, 1.0f, 1.0f},
    {"tn_8191x1x4097", true, false, 8191, 1, 4097, 2, 1.0f, 0.0f},
    {"nn_16x8192x4096", false, false, 16, 8192, 4096, 0, 2.0f, 0.0f},
    {"tn_8192x16x4096", true, false, 8192, 16, 4096, 0, 1.0f, 0.25f},
    {"nn_256x256x32768", false, false, 256, 256, 32768, 0, 1.0f, 0.0f},
    {"tt_8193x8193x33", true, true, 8193, 8193, 33, 5, 1.0f, 1.0f},
};

/* One run of a case: small-integer operands (`exact`: every sum is an
 * integer below 2^24, so the result equals OpenBLAS's whatever the order
 * of the sums, and a lost or repeated slice of K shows), or uniform ones
 * checked against an FP64 reference within gamma(k + 2) |alpha| |A| |B| +
 * |beta| |C0|. C is NaN where beta == 0 (never read). */
static void run_big(const big_case_t *t, bool exact, uint64_t seed)
{
    rng_t rng = {seed};
    const shape_t sa = shape_of_a(true, t->ta, t->m, t->k, 0), sb = shape_of_b(true, t->tb, t->k, t->n, 0);
    const shape_t SA = {sa.inner, sa.outer, sa.inner + t->pad}, SB = {sb.inner, sb.outer, sb.inner + t->pad};
    const shape_t SC = {t->m, t->n, t->m + t->pad};
    float *A = xmalloc(shape_elems(SA) * 4), *B = xmalloc(shape_elems(SB) * 4);
    float *C0 = xmalloc(shape_elems(SC) * 4), *got = xmalloc(shape_elems(SC) * 4);
    fill_operands(A, SA, B, SB, C0, SC, t->beta, &rng, exact);

    float *dA, *dB, *dC;
    CK(cudaMalloc((void **)&dA, shape_elems(SA) * 4));
    CK(cudaMalloc((void **)&dB, shape_elems(SB) * 4));
    CK(cudaMalloc((void **)&dC, shape_elems(SC) * 4));
    CK(cudaMemcpy(dA, A, shape_elems(SA) * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dB, B, shape_elems(SB) * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dC, C0, shape_elems(SC) * 4, cudaMemcpyHostToDevice));
    const tgemm_status s = tgemm_sgemm(t->ta ? TGEMM_OP_T : TGEMM_OP_N, t->tb ? TGEMM_OP_T : TGEMM_OP_N, t->m, t->n,
                                       t->k, t->alpha, dA, SA.ld, dB, SB.ld, t->beta, dC, SC.ld);
    if (s != TGEMM_SUCCESS)
        fail_msg("%s: %s: %s", t->name, tgemm_status_string(s), tgemm_last_error_detail());
    CK(cudaMemcpy(got, dC, shape_elems(SC) * 4, cudaMemcpyDeviceToHost));
    cudaFree(dA), cudaFree(dB), cudaFree(dC);

    if (exact) {
        float *ref = xmalloc(shape_elems(SC) * 4);
        if (t->beta != 0.0f)
            memcpy(ref, C0, shape_elems(SC) * 4);
        else
            fill_constant(ref, SC, 0.0f);
        ref_sgemm(REF_COL_MAJOR, t->ta ? REF_T : REF_N, t->tb ? REF_T : REF_N, (int)t->m, (int)t->n, (int)t->k,
                  t->alpha, A, (int)SA.ld, B, (int)SB.ld, t->beta, ref, (int)SC.ld);
        check_c(t->name, got, ref, NULL, SC, t->k, true, seed);
        free(ref);
    } else {
        double *want = fp64_reference(true, t->ta, t->tb, t->m, t->n, t->k, t->alpha, A, SA, B, SB, t->beta, C0, SC);
        double *bound = error_bound(true, t->ta, t->tb, t->m, t->n, t->k, t->alpha, A, SA, B, SB, t->beta, C0, SC);
        check_c_fp64(t->name, got, want, bound, SC, t->k, seed);
        free(want), free(bound);
    }
    free(A), free(B), free(C0), free(got);
}

static void test_big(void **state)
{
    REQUIRE_GPU();
    const big_case_t *t = *state;
    const uint64_t seed = test_seed_for((uint64_t)(t - kBig) + 500);
    run_big(t, true, seed);
    run_big(t, false, seed + 1);
}

/* C has m * n > 2^31 elements (and ldc * n more), so any 32-bit index
 * arithmetic in the kernels would land elsewhere. C0(i, j) is a formula, so
 * only one host copy of C is needed. */
static float c0_of(int64_t i, int64_t j)
{
    return (float)((i * 7 + j * 13) % 17 - 8) * 0.125f;
}

static void test_c_over_2_31_elements(void **state)
{
    (void)state;
    REQUIRE_GPU();
    const int64_t m = 50000, n = 45000, k = 16, ldc = m + 3;
    const float alpha = 1.0f, beta = -0.5f;
    assert_true(m * n > ((int64_t)1 << 31));
    const uint64_t seed = test_seed_for(900);
    rng_t rng = {seed};
    size_t free_b = 0, total = 0;
    CK(cudaMemGetInfo(&free_b, &total));
    const size_t c_bytes = (size_t)(ldc * n) * 4;
    if (free_b < c_bytes + ((size_t)1 << 30))
        fail_msg("the GPU has %zu bytes free; this case needs %zu", free_b, c_bytes + ((size_t)1 << 30));

    float *A = xmalloc((size_t)(m * k) * 4), *B = xmalloc((size_t)(k * n) * 4), *C = xmalloc(c_bytes);
    for (int64_t i = 0; i < m * k; ++i)
        A[i] = rng_uniform(&rng);
    for (int64_t i = 0; i < k * n; ++i)
        B[i] = rng_uniform(&rng);
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < ldc; ++i)
            C[j * ldc + i] = i < m ? c0_of(i, j) : poison_pad();

    float *dA, *dB, *dC;
    CK(cudaMalloc((void **)&dA, (size_t)(m * k) * 4));
    CK(cudaMalloc((void **)&dB, (size_t)(k * n) * 4));
    CK(cudaMalloc((void **)&dC, c_bytes));
    CK(cudaMemcpy(dA, A, (size_t)(m * k) * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dB, B, (size_t)(k * n) * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dC, C, c_bytes, cudaMemcpyHostToDevice));
    const tgemm_status s = tgemm_sgemm(TGEMM_OP_N, TGEMM_OP_N, m, n, k, alpha, dA, m, dB, k, beta, dC, ldc);
    if (s != TGEMM_SUCCESS)
        fail_msg("%s: %s", tgemm_status_string(s), tgemm_last_error_detail());
    CK(cudaMemcpy(C, dC, c_bytes, cudaMemcpyDeviceToHost));
    cudaFree(dA), cudaFree(dB), cudaFree(dC);

    /* Every element against FP64, a block of columns at a time (OpenBLAS's
     * dgemm on A and the block of B, then the magnitudes for the bound):
     * |C - want| <= gamma(k + 2) (|alpha| |A| |B| + |beta| |C0|), plus the
     * double's own rounding; the padding rows untouched. */
    enum { kCols = 2048 };
    const double gamma = gamma_k2(k), slack = fp64_slack(k);
    double *a = xmalloc((size_t)(m * k) * sizeof(double)), *abs_a = xmalloc((size_t)(m * k) * sizeof(double));
    double *b = xmalloc((size_t)(k * kCols) * sizeof(double)), *abs_b = xmalloc((size_t)(k * kCols) * sizeof(double));
    double *want = xmalloc((size_t)(m * kCols) * sizeof(double)), *bound = xmalloc((size_t)(m * kCols) * sizeof(double));
    for (int64_t x = 0; x < m * k; ++x) {
        a[x] = (double)A[x];
        abs_a[x] = fabs(a[x]);
    }
    for (int64_t j0 = 0; j0 < n; j0 += kCols) {
        const int64_t cols = n - j0 < kCols ? n - j0 : kCols;
        for (int64_t x = 0; x < k * cols; ++x) {
            b[x] = (double)B[j0 * k + x];
            abs_b[x] = fabs(b[x]);
        }
        for (int64_t j = 0; j < cols; ++j)
            for (int64_t i = 0; i < m; ++i) {
                want[j * m + i] = (double)beta * c0_of(i, j0 + j);
                bound[j * m + i] = fabs(want[j * m + i]);
            }
        ref_dgemm(REF_COL_MAJOR, REF_N, REF_N, (int)m, (int)cols, (int)k, (double)alpha, a, (int)m, b, (int)k, 1.0,
                  want, (int)m);
        ref_dgemm(REF_COL_MAJOR, REF_N, REF_N, (int)m, (int)cols, (int)k, fabs((double)alpha), abs_a, (int)m, abs_b,
                  (int)k, 1.0, bound, (int)m);
        for (int64_t j = 0; j < cols; ++j) {
            const float *col = C + (j0 + j) * ldc;
            for (int64_t i = 0; i < m; ++i) {
                const double w = want[j * m + i], allowed = (gamma + slack) * bound[j * m + i];
                if (!(fabs((double)col[i] - w) <= allowed))
                    fail_msg("C(%lld,%lld) = %.9g, FP64 %.17g, allowed error %.3g (seed 0x%016llx)", (long long)i,
                             (long long)(j0 + j), (double)col[i], w, allowed, (unsigned long long)seed);
            }
            for (int64_t i = m; i < ldc; ++i)
                if (!same_bits(col[i], poison_pad()))
                    fail_msg("padding row %lld of column %lld was written", (long long)i, (long long)(j0 + j));
        }
    }
    free(A), free(B), free(C), free(a), free(abs_a), free(b), free(abs_b), free(want), free(bound);
}

int main(void)
{
    (void)test_base_seed();
    struct CMUnitTest tests[32];
    size_t n = 0;
    for (size_t i = 0; i < sizeof kBig / sizeof kBig[0]; ++i)
        tests[n++] = (struct CMUnitTest){kBig[i].name, test_big, NULL, NULL, (void *)&kBig[i]};
    tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_c_over_2_31_elements);
    return run_group("tgemm_long", tests, n) ? 1 : 0;
}
