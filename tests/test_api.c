/* The native API's behaviour that needs no GPU: argument checks in reference
 * BLAS order, quick returns with NULL pointers, statuses, version. Runs
 * everywhere; nothing here may skip. */
#include "common.h"
#include "gpu_probe.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

enum { kCElems = 64 };

/* A C buffer whose every element carries the poison bit pattern, to prove
 * a call did not touch it. */
static void poison_buffer(float *c)
{
    for (int i = 0; i < kCElems; ++i)
        c[i] = poison_c();
}

static void assert_untouched(const float *c)
{
    for (int i = 0; i < kCElems; ++i)
        assert_true(same_bits(c[i], poison_c()));
}

typedef struct {
    const char *name;
    int layout;
    int ta, tb;
    int64_t m, n, k, lda, ldb, ldc;
    bool null_a, null_b, null_c;
    tgemm_status want;
} bad_call_t;

/* One row per invalid argument, and rows where several are invalid so that
 * the first in reference order must win. Valid baseline: m=4 n=3 k=2. */
static const bad_call_t kBad[] = {
    {"transa", 102, 0, 111, 4, 3, 2, 4, 2, 4, false, false, false, TGEMM_ERROR_INVALID_TRANSA},
    {"transa_110", 102, 110, 111, 4, 3, 2, 4, 2, 4, false, false, false, TGEMM_ERROR_INVALID_TRANSA},
    {"transa_114", 102, 114, 111, 4, 3, 2, 4, 2, 4, false, false, false, TGEMM_ERROR_INVALID_TRANSA},
    {"transb", 102, 111, 'N', 4, 3, 2, 4, 2, 4, false, false, false, TGEMM_ERROR_INVALID_TRANSB},
    {"m_negative", 102, 111, 111, -1, 3, 2, 4, 2, 4, false, false, false, TGEMM_ERROR_INVALID_M},
    {"n_negative", 102, 111, 111, 4, -1, 2, 4, 2, 4, false, false, false, TGEMM_ERROR_INVALID_N},
    {"k_negative", 102, 111, 111, 4, 3, -1, 4, 2, 4, false, false, false, TGEMM_ERROR_INVALID_K},
    {"lda_n", 102, 111, 111, 4, 3, 2, 3, 2, 4, false, false, false, TGEMM_ERROR_INVALID_LDA},
    {"lda_t", 102, 112, 111, 4, 3, 2, 1, 2, 4, false, false, false, TGEMM_ERROR_INVALID_LDA},
    {"lda_c", 102, 113, 111, 4, 3, 5, 4, 5, 4, false, false, false, TGEMM_ERROR_INVALID_LDA},
    {"lda_zero_m0", 102, 111, 111, 0, 3, 2, 0, 2, 1, false, false, false, TGEMM_ERROR_INVALID_LDA},
    {"ldb_n", 102, 111, 111, 4, 3, 2, 4, 1, 4, false, false, false, TGEMM_ERROR_INVALID_LDB},
    {"ldb_t", 102, 111, 112, 4, 3, 2, 4, 2, 4, false, false, false, TGEMM_ERROR_INVALID_LDB},
    {"ldc", 102, 111, 111, 4, 3, 2, 4, 2, 3, false, false, false, TGEMM_ERROR_INVALID_LDC},
    {"ldc_zero_m0", 102, 111, 111, 0, 3, 2, 1, 2, 0, false, false, false, TGEMM_ERROR_INVALID_LDC},
    {"null_a", 102, 111, 111, 4, 3, 2, 4, 2, 4, true, false, false, TGEMM_ERROR_NULL_A},
    {"null_b", 102, 111, 111, 4, 3, 2, 4, 2, 4, false, true, false, TGEMM_ERROR_NULL_B},
    {"null_c", 102, 111, 111, 4, 3, 2, 4, 2, 4, false, false, true, TGEMM_ERROR_NULL_C},
    {"first_wins_m_before_lda", 102, 111, 111, -1, 3, 2, 0, 0, 0, false, false, false, TGEMM_ERROR_INVALID_M},
    {"first_wins_transb_before_k", 102, 111, 7, 4, 3, -5, 4, 2, 4, false, false, false, TGEMM_ERROR_INVALID_TRANSB},
    {"first_wins_lda_before_ldc", 102, 111, 111, 4, 3, 2, 1, 2, 1, false, false, false, TGEMM_ERROR_INVALID_LDA},
    {"first_wins_ldc_before_null", 102, 111, 111, 4, 3, 2, 4, 2, 1, true, true, true, TGEMM_ERROR_INVALID_LDC},
    {"layout", 7, 111, 111, 4, 3, 2, 4, 2, 4, false, false, false, TGEMM_ERROR_INVALID_LAYOUT},
    {"layout_before_transa", 0, 1, 111, 4, 3, 2, 4, 2, 4, false, false, false, TGEMM_ERROR_INVALID_LAYOUT},
    /* Row-major: minimums are on columns (lda >= k for N), ldc >= n, and the
     * dimension checks run in reference CBLAS's row-major order (n before m,
     * ldb before lda). */
    {"rm_lda_n", 101, 111, 111, 4, 3, 2, 1, 3, 3, false, false, false, TGEMM_ERROR_INVALID_LDA},
    {"rm_lda_t", 101, 112, 111, 4, 3, 2, 3, 3, 3, false, false, false, TGEMM_ERROR_INVALID_LDA},
    {"rm_ldb_n", 101, 111, 111, 4, 3, 2, 2, 2, 3, false, false, false, TGEMM_ERROR_INVALID_LDB},
    {"rm_ldb_t", 101, 111, 112, 4, 3, 2, 2, 1, 3, false, false, false, TGEMM_ERROR_INVALID_LDB},
    {"rm_ldc", 101, 111, 111, 4, 3, 2, 2, 3, 2, false, false, false, TGEMM_ERROR_INVALID_LDC},
    {"rm_n_before_m", 101, 111, 111, -1, -1, 2, 2, 3, 3, false, false, false, TGEMM_ERROR_INVALID_N},
    {"rm_ldb_before_lda", 101, 111, 111, 4, 3, 2, 1, 1, 3, false, false, false, TGEMM_ERROR_INVALID_LDB},
    {"rm_transa_before_transb", 101, 5, 6, 4, 3, 2, 2, 3, 3, false, false, false, TGEMM_ERROR_INVALID_TRANSA},
    {"rm_null_a", 101, 111, 111, 4, 3, 2, 2, 3, 3, true, false, false, TGEMM_ERROR_NULL_A},
    {"rm_null_b", 101, 111, 111, 4, 3, 2, 2, 3, 3, false, true, false, TGEMM_ERROR_NULL_B},
};

static void test_bad_argument(void **state)
{
    const bad_call_t *b = *state;
    float a[kCElems], bb[kCElems], c[kCElems];
    memset(a, 0, sizeof a);
    memset(bb, 0, sizeof bb);
    poison_buffer(c);
    const tgemm_status s =
        tgemm_sgemm_ex((tgemm_layout)b->layout, (tgemm_operation)b->ta, (tgemm_operation)b->tb, b->m, b->n, b->k,
                       1.0f, b->null_a ? NULL : a, b->lda, b->null_b ? NULL : bb, b->ldb, 0.5f,
                       b->null_c ? NULL : c, b->ldc, NULL);
    if (s != b->want)
        fail_msg("%s: status %d (%s), want %d (%s)", b->name, (int)s, tgemm_status_string(s), (int)b->want,
                 tgemm_status_string(b->want));
    assert_untouched(c);
    assert_true(strlen(tgemm_last_error_detail()) > 0);
    /* The detail names the argument and, for a dimension or a leading
     * dimension, its value. */
    const int arg = tgemm_status_argument(b->want);
    if (arg > 0) {
        static const char *const names[14] = {[3] = "m", [4] = "n", [5] = "k", [8] = "lda", [10] = "ldb", [13] = "ldc"};
        const int64_t values[14] = {[3] = b->m, [4] = b->n, [5] = b->k, [8] = b->lda, [10] = b->ldb, [13] = b->ldc};
        char needle[64];
        snprintf(needle, sizeof needle, "argument %d: ", arg);
        if (strncmp(tgemm_last_error_detail(), needle, strlen(needle)) != 0)
            fail_msg("%s: detail '%s' does not start with '%s'", b->name, tgemm_last_error_detail(), needle);
        if (names[arg] != NULL) {
            snprintf(needle, sizeof needle, "%s = %lld ", names[arg], (long long)values[arg]);
            if (strstr(tgemm_last_error_detail(), needle) == NULL)
                fail_msg("%s: detail '%s' does not give '%s'", b->name, tgemm_last_error_detail(), needle);
        }
    }
    /* The column-major entry reports the same for column-major rows. */
    if (b->layout == TGEMM_LAYOUT_COL_MAJOR) {
        const tgemm_status s2 = tgemm_sgemm((tgemm_operation)b->ta, (tgemm_operation)b->tb, b->m, b->n, b->k, 1.0f,
                                            b->null_a ? NULL : a, b->lda, b->null_b ? NULL : bb, b->ldb, 0.5f,
                                            b->null_c ? NULL : c, b->ldc);
        assert_int_equal(s2, b->want);
        assert_untouched(c);
    }
}

/* A leading dimension's detail gives the minimum it missed, in the
 * caller's terms: the rows of the matrix as stored (column-major) or its
 * columns (row-major). */
static void test_argument_details(void **state)
{
    (void)state;
    float a[kCElems] = {0}, b[kCElems] = {0}, c[kCElems];
    poison_buffer(c);
    assert_int_equal(tgemm_sgemm(TGEMM_OP_N, TGEMM_OP_N, 4, 3, 2, 1.0f, a, 3, b, 2, 0.0f, c, 4),
                     TGEMM_ERROR_INVALID_LDA);
    assert_string_equal(tgemm_last_error_detail(), "argument 8: lda = 3 is below max(1, m) = 4");
    assert_int_equal(tgemm_sgemm(TGEMM_OP_N, TGEMM_OP_T, 4, 3, 2, 1.0f, a, 4, b, 2, 0.0f, c, 4),
                     TGEMM_ERROR_INVALID_LDB);
    assert_string_equal(tgemm_last_error_detail(), "argument 10: ldb = 2 is below max(1, n) = 3");
    assert_int_equal(tgemm_sgemm_ex(TGEMM_LAYOUT_ROW_MAJOR, TGEMM_OP_T, TGEMM_OP_T, 4, 3, 2, 1.0f, a, 3, b, 3, 0.0f,
                                    c, 3, NULL),
                     TGEMM_ERROR_INVALID_LDA);
    assert_string_equal(tgemm_last_error_detail(), "argument 8: lda = 3 is below max(1, m) = 4");
    assert_int_equal(tgemm_sgemm_ex(TGEMM_LAYOUT_ROW_MAJOR, TGEMM_OP_N, TGEMM_OP_N, 4, 3, 2, 1.0f, a, 2, b, 3, 0.0f,
                                    c, 2, NULL),
                     TGEMM_ERROR_INVALID_LDC);
    assert_string_equal(tgemm_last_error_detail(), "argument 13: ldc = 2 is below max(1, n) = 3");
    assert_untouched(c);
}

/* Quick returns succeed with every pointer NULL (or never touch C), and need
 * no GPU. */
static void test_quick_returns(void **state)
{
    (void)state;
    float c[kCElems];
    const float nan = NAN;
    /* m == 0 or n == 0: everything may be NULL. */
    assert_int_equal(tgemm_sgemm(TGEMM_OP_N, TGEMM_OP_N, 0, 5, 5, 1.0f, NULL, 1, NULL, 5, 0.0f, NULL, 1), TGEMM_SUCCESS);
    assert_int_equal(tgemm_sgemm(TGEMM_OP_T, TGEMM_OP_T, 5, 0, 5, 1.0f, NULL, 5, NULL, 1, 0.0f, NULL, 5), TGEMM_SUCCESS);
    assert_int_equal(tgemm_sgemm(TGEMM_OP_N, TGEMM_OP_N, 0, 0, 0, nan, NULL, 1, NULL, 1, nan, NULL, 1), TGEMM_SUCCESS);
    assert_int_equal(tgemm_sgemm_ex(TGEMM_LAYOUT_ROW_MAJOR, TGEMM_OP_N, TGEMM_OP_N, 0, 3, 2, 1.0f, NULL, 2, NULL, 3,
                                    0.0f, NULL, 3, NULL),
                     TGEMM_SUCCESS);
    /* alpha == 0 and beta == 1: A, B never read, C never touched. */
    poison_buffer(c);
    assert_int_equal(tgemm_sgemm(TGEMM_OP_N, TGEMM_OP_N, 4, 3, 2, 0.0f, NULL, 4, NULL, 2, 1.0f, c, 4), TGEMM_SUCCESS);
    assert_untouched(c);
    assert_int_equal(tgemm_sgemm(TGEMM_OP_N, TGEMM_OP_N, 4, 3, 2, -0.0f, NULL, 4, NULL, 2, 1.0f, NULL, 4), TGEMM_SUCCESS);
    /* k == 0 and beta == 1: likewise, whatever alpha is. */
    assert_int_equal(tgemm_sgemm(TGEMM_OP_T, TGEMM_OP_N, 4, 3, 0, 2.0f, NULL, 1, NULL, 1, 1.0f, c, 4), TGEMM_SUCCESS);
    assert_untouched(c);
    /* A success clears the detail of an earlier error. */
    assert_int_equal(tgemm_sgemm(TGEMM_OP_N, TGEMM_OP_N, -1, 1, 1, 1.0f, NULL, 1, NULL, 1, 0.0f, NULL, 1),
                     TGEMM_ERROR_INVALID_M);
    assert_true(strlen(tgemm_last_error_detail()) > 0);
    assert_int_equal(tgemm_sgemm(TGEMM_OP_N, TGEMM_OP_N, 0, 1, 1, 1.0f, NULL, 1, NULL, 1, 0.0f, NULL, 1), TGEMM_SUCCESS);
    assert_string_equal(tgemm_last_error_detail(), "");
}

/* A call that needs the GPU either succeeds (GPU present) or reports
 * NO_DEVICE and leaves C alone (no GPU): both outcomes are asserted. The
 * product, 2 A^T B of small integers with B not symmetric, is exact, so a
 * result that ignores the transpose, alpha or B shows. */
static void test_real_call_matches_device_presence(void **state)
{
    (void)state;
    float a[4] = {1, 2, 3, 4}, b[4] = {5, -1, 2, 3}, c[kCElems], want[4];
    for (int j = 0; j < 2; ++j)
        for (int i = 0; i < 2; ++i)
            want[i + 2 * j] = 2.0f * (a[0 + 2 * i] * b[0 + 2 * j] + a[1 + 2 * i] * b[1 + 2 * j]);
    poison_buffer(c);
    const tgemm_status s = tgemm_sgemm(TGEMM_OP_T, TGEMM_OP_N, 2, 2, 2, 2.0f, a, 2, b, 2, 0.0f, c, 2);
    if (gpu_available()) {
        assert_int_equal(s, TGEMM_SUCCESS);
        for (int i = 0; i < 4; ++i)
            assert_true(c[i] == want[i]);
        for (int i = 4; i < kCElems; ++i)
            assert_true(same_bits(c[i], poison_c()));
    } else {
        assert_int_equal(s, TGEMM_ERROR_NO_DEVICE);
        assert_untouched(c);
        assert_non_null(strstr(tgemm_last_error_detail(), "cuda"));
    }
}

static void test_status_strings(void **state)
{
    (void)state;
    static const tgemm_status all[] = {
        TGEMM_SUCCESS, TGEMM_ERROR_NO_DEVICE, TGEMM_ERROR_INVALID_DEVICE, TGEMM_ERROR_OUT_OF_MEMORY,
        TGEMM_ERROR_CUDA, TGEMM_ERROR_UNSUPPORTED, TGEMM_ERROR_INVALID_SETTING, TGEMM_ERROR_INTERNAL,
        TGEMM_ERROR_INVALID_LAYOUT, TGEMM_ERROR_INVALID_TRANSA, TGEMM_ERROR_INVALID_TRANSB, TGEMM_ERROR_INVALID_M,
        TGEMM_ERROR_INVALID_N, TGEMM_ERROR_INVALID_K, TGEMM_ERROR_NULL_A, TGEMM_ERROR_INVALID_LDA,
        TGEMM_ERROR_NULL_B, TGEMM_ERROR_INVALID_LDB, TGEMM_ERROR_NULL_C, TGEMM_ERROR_INVALID_LDC,
    };
    const size_t n = sizeof all / sizeof all[0];
    for (size_t i = 0; i < n; ++i) {
        const char *s = tgemm_status_string(all[i]);
        assert_non_null(s);
        assert_true(strlen(s) > 5);
        assert_null(strstr(s, "unknown"));
        for (size_t j = 0; j < i; ++j)
            assert_string_not_equal(s, tgemm_status_string(all[j]));
        const int arg = tgemm_status_argument(all[i]);
        if ((int)all[i] > 100) {
            assert_int_equal(arg, (int)all[i] - 100);
            char needle[32];
            snprintf(needle, sizeof needle, "argument %d ", arg);
            assert_non_null(strstr(s, needle));
        } else {
            assert_int_equal(arg, 0);
        }
    }
    assert_non_null(strstr(tgemm_status_string((tgemm_status)999), "unknown"));
    assert_int_equal(tgemm_status_argument((tgemm_status)999), 0);
}

static void test_version(void **state)
{
    (void)state;
    assert_int_equal(tgemm_version(), TGEMM_VERSION_NUMBER);
    assert_int_equal(tgemm_version(),
                     TGEMM_VERSION_MAJOR * 10000 + TGEMM_VERSION_MINOR * 100 + TGEMM_VERSION_PATCH);
    assert_string_equal(tgemm_version_string(), TGEMM_VERSION_STRING);
    int ma = -1, mi = -1, pa = -1;
    assert_int_equal(sscanf(tgemm_version_string(), "%d.%d.%d", &ma, &mi, &pa), 3);
    assert_int_equal(ma, TGEMM_VERSION_MAJOR);
    assert_int_equal(mi, TGEMM_VERSION_MINOR);
    assert_int_equal(pa, TGEMM_VERSION_PATCH);
}

/* Operation and layout values are CBLAS's. */
static void test_enum_values(void **state)
{
    (void)state;
    assert_int_equal(TGEMM_OP_N, 111);
    assert_int_equal(TGEMM_OP_T, 112);
    assert_int_equal(TGEMM_OP_C, 113);
    assert_int_equal(TGEMM_LAYOUT_ROW_MAJOR, 101);
    assert_int_equal(TGEMM_LAYOUT_COL_MAJOR, 102);
    assert_int_equal(sizeof(tgemm_int), 8);
}

/* The test programs' own rule for GPU cases (tests/gpu_probe.h): run,
 * skip only without a driver or a device, fail on anything else, and fail
 * where a skip would be under TGEMM_TEST_REQUIRE_GPU=1. */
static void test_gpu_probe_rule(void **state)
{
    (void)state;
    static const char kDriver[] = "/proc/driver/nvidia/version";
    static const struct {
        cudaError_t error;
        int count;
        const char *driver;
        bool require;
        gpu_probe_t want;
        const char *why; /* in the reason */
    } rows[] = {
        {cudaSuccess, 1, kDriver, false, GPU_PROBE_PRESENT, ""},
        {cudaSuccess, 2, kDriver, true, GPU_PROBE_PRESENT, ""},
        {cudaSuccess, 0, kDriver, false, GPU_PROBE_ABSENT, "sees no device"},
        {cudaErrorNoDevice, 0, kDriver, false, GPU_PROBE_ABSENT, "sees no device (cudaGetDeviceCount: cudaErrorNo"},
        {cudaErrorInsufficientDriver, 0, NULL, false, GPU_PROBE_ABSENT, "no NVIDIA driver is installed"},
        {cudaErrorInsufficientDriver, 0, kDriver, false, GPU_PROBE_BROKEN, "cudaErrorInsufficientDriver"},
        {cudaErrorInsufficientDriver, 0, "/usr/lib/libcuda.so.1", false, GPU_PROBE_BROKEN, "/usr/lib/libcuda.so.1"},
        {cudaErrorUnknown, 0, NULL, false, GPU_PROBE_BROKEN, "cudaErrorUnknown"},
        {cudaErrorStubLibrary, 0, NULL, false, GPU_PROBE_BROKEN, "cudaErrorStubLibrary"},
        {cudaErrorSystemDriverMismatch, 0, NULL, false, GPU_PROBE_BROKEN, "cudaErrorSystemDriverMismatch"},
        {cudaErrorNoDevice, 0, kDriver, true, GPU_PROBE_BROKEN, "TGEMM_TEST_REQUIRE_GPU=1, but the NVIDIA driver"},
        {cudaErrorInsufficientDriver, 0, NULL, true, GPU_PROBE_BROKEN, "TGEMM_TEST_REQUIRE_GPU=1, but no NVIDIA"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i) {
        char why[512];
        const gpu_probe_t got =
            gpu_probe_classify(rows[i].error, rows[i].count, rows[i].driver, rows[i].require, why, sizeof why);
        if (got != rows[i].want || !strstr(why, rows[i].why))
            fail_msg("row %zu (%s, %d devices, driver %s, require %d): got %d \"%s\", want %d with \"%s\"", i,
                     cudaGetErrorName(rows[i].error), rows[i].count, rows[i].driver ? rows[i].driver : "none",
                     (int)rows[i].require, (int)got, why, (int)rows[i].want, rows[i].why);
    }
}

/* The test list is sized from the two tables it is made of, so that no
 * test can fall off its end. */
int main(void)
{
    const struct CMUnitTest others[] = {
        cmocka_unit_test(test_quick_returns), cmocka_unit_test(test_argument_details),
        cmocka_unit_test(test_real_call_matches_device_presence),
        cmocka_unit_test(test_status_strings), cmocka_unit_test(test_version), cmocka_unit_test(test_enum_values),
        cmocka_unit_test(test_gpu_probe_rule),
    };
    const size_t nbad = sizeof kBad / sizeof kBad[0], nothers = sizeof others / sizeof others[0];
    struct CMUnitTest tests[sizeof kBad / sizeof kBad[0] + sizeof others / sizeof others[0]];
    size_t n = 0;
    for (size_t i = 0; i < nbad; ++i)
        tests[n++] = (struct CMUnitTest){xstrdup_printf("bad_%s", kBad[i].name), test_bad_argument, NULL, NULL,
                                         (void *)&kBad[i]};
    for (size_t i = 0; i < nothers; ++i)
        tests[n++] = others[i];
    return run_group("tgemm_api", tests, n) ? 1 : 0;
}
