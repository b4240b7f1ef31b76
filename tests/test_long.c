/* The long tier (make test-long, GPU only): large and odd sizes checked
 * elementwise against OpenBLAS, and one C with more than 2^31 elements
 * checked by a residual against a random vector, which costs O(mn) instead
 * of O(mnk). Every case skips without a GPU. */
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

static void test_big(void **state)
{
    REQUIRE_GPU();
    const big_case_t *t = *state;
    const uint64_t seed = test_seed_for((uint64_t)(t - kBig) + 500);
    rng_t rng = {seed};
    const shape_t sa = shape_of_a(true, t->ta, t->m, t->k, 0), sb = shape_of_b(true, t->tb, t->k, t->n, 0);
    const shape_t SA = {sa.inner, sa.outer, sa.inner + t->pad}, SB = {sb.inner, sb.outer, sb.inner + t->pad};
    const shape_t SC = {t->m, t->n, t->m + t->pad};
    float *A = xmalloc(shape_elems(SA) * 4), *B = xmalloc(shape_elems(SB) * 4);
    float *C0 = xmalloc(shape_elems(SC) * 4), *ref = xmalloc(shape_elems(SC) * 4), *got = xmalloc(shape_elems(SC) * 4);
    fill_matrix(A, SA, &rng, false);
    fill_matrix(B, SB, &rng, false);
    if (t->beta != 0.0f) {
        fill_matrix(C0, SC, &rng, false);
        memcpy(ref, C0, shape_elems(SC) * 4);
    } else {
        fill_constant(C0, SC, poison_c());
        fill_constant(ref, SC, 0.0f);
    }
    ref_sgemm(REF_COL_MAJOR, t->ta ? REF_T : REF_N, t->tb ? REF_T : REF_N, (int)t->m, (int)t->n, (int)t->k, t->alpha,
              A, (int)SA.ld, B, (int)SB.ld, t->beta, ref, (int)SC.ld);
    double *bound = error_bound(true, t->ta, t->tb, t->m, t->n, t->k, t->alpha, A, SA, B, SB, t->beta, C0, SC);

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
    check_c(t->name, got, ref, bound, SC, t->k, false, seed);
    cudaFree(dA), cudaFree(dB), cudaFree(dC);
    free(A), free(B), free(C0), free(ref), free(got), free(bound);
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

    /* r = C t - (alpha A (B t) + beta C0 t), with bound
     * gamma(k+2) (|alpha| |A| (|B| |t|) + |beta| |C0| |t|), all in double. */
    double *t = xmalloc((size_t)n * sizeof(double)), *bt = xmalloc((size_t)k * sizeof(double));
    double *abt = xmalloc((size_t)k * sizeof(double));
    double *r = calloc((size_t)m, sizeof(double)), *bound = calloc((size_t)m, sizeof(double));
    assert_non_null(r);
    assert_non_null(bound);
    for (int64_t j = 0; j < n; ++j)
        t[j] = (double)rng_uniform(&rng);
    for (int64_t l = 0; l < k; ++l) {
        bt[l] = abt[l] = 0.0;
        for (int64_t j = 0; j < n; ++j) {
            bt[l] += (double)B[j * k + l] * t[j];
            abt[l] += fabs((double)B[j * k + l] * t[j]);
        }
    }
    for (int64_t j = 0; j < n; ++j) {
        const float *col = C + j * ldc;
        for (int64_t i = 0; i < m; ++i) {
            const double c0 = (double)c0_of(i, j);
            r[i] += ((double)col[i] - beta * c0) * t[j];
            bound[i] += fabs(beta * c0 * t[j]);
        }
        for (int64_t i = m; i < ldc; ++i)
            if (!same_bits(col[i], poison_pad()))
                fail_msg("padding row %lld of column %lld was written", (long long)i, (long long)j);
    }
    const double nu = (double)(k + 2) * 0x1.0p-24, gamma = nu / (1.0 - nu);
    for (int64_t i = 0; i < m; ++i) {
        double abt_i = 0.0;
        for (int64_t l = 0; l < k; ++l) {
            r[i] -= alpha * (double)A[l * m + i] * bt[l];
            abt_i += fabs((double)A[l * m + i]) * abt[l];
        }
        /* Each output element carries the rounding of C's computation and of
         * the final subtraction of beta C0 in double; 2x covers both. */
        const double allowed = 2.0 * gamma * (fabs(alpha) * abt_i + bound[i]) + 1e-12;
        if (!(fabs(r[i]) <= allowed))
            fail_msg("row %lld: residual %.3g exceeds %.3g (seed 0x%016llx)", (long long)i, fabs(r[i]), allowed,
                     (unsigned long long)seed);
    }
    /* The last columns, past element 2^31, elementwise in double. */
    for (int64_t j = n - 3; j < n; ++j)
        for (int64_t i = 0; i < m; ++i) {
            double want = beta * (double)c0_of(i, j), mag = fabs(want);
            for (int64_t l = 0; l < k; ++l) {
                want += alpha * (double)A[l * m + i] * (double)B[j * k + l];
                mag += fabs((double)A[l * m + i] * (double)B[j * k + l]);
            }
            if (!(fabs((double)C[j * ldc + i] - want) <= 2.0 * gamma * mag))
                fail_msg("C(%lld,%lld) = %.9g, want %.9g", (long long)i, (long long)j, (double)C[j * ldc + i], want);
        }
    free(A), free(B), free(C), free(t), free(bt), free(abt), free(r), free(bound);
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
