/* The BLAS ABI: sgemm_ and cblas_sgemm against reference BLAS / reference
 * CBLAS behaviour and against OpenBLAS.
 *
 * Settings are read once per process, so `make test-blas` runs this program
 * once per scenario, with the environment it needs, and names the scenario
 * as the first argument:
 *
 *   checks       every bad argument reaches this program's xerbla_ /
 *                cblas_xerbla with reference numbers; quick returns
 *   forward      TGEMM_OFFLOAD=cpu TGEMM_CPU_BLAS=libopenblas.so.0 TGEMM_TRACE=F:
 *                results bit for bit OpenBLAS's, one trace line per call,
 *                no CUDA context created; also run without TGEMM_CPU_BLAS
 *                (make test-cpu-blas), where tgemm must find the system's
 *                OpenBLAS itself, this program being linked with no BLAS
 *   fallback     TGEMM_OFFLOAD=gpu CUDA_VISIBLE_DEVICES= (+ CPU BLAS, trace):
 *                the GPU path fails, the CPU BLAS gives OpenBLAS's bits, and
 *                one warning line says that TGEMM_OFFLOAD=gpu found no GPU
 *   auto         TGEMM_OFFLOAD_CPU_GFLOPS=1 TGEMM_OFFLOAD_LEARN=0 (+ CPU
 *                BLAS, trace): small calls on the CPU without the model,
 *                larger ones where the model's estimate is smaller (the
 *                GPU, or falling back)
 *   auto-cpu     the same with TGEMM_OFFLOAD_CPU_GFLOPS=1000000: every call
 *                on the CPU BLAS, the model's too, and CUDA untouched
 *   auto-unusable-gpu  TGEMM_OFFLOAD_CPU_GFLOPS=1 CUDA_VISIBLE_DEVICES=
 *                (+ CPU BLAS, trace): the GPU the model prefers fails; the
 *                next calls of the shape learn to stay on the CPU BLAS
 *   builtin      TGEMM_OFFLOAD=cpu TGEMM_CPU_BLAS=<missing> (+ trace): the
 *                built-in loops, and one warning line
 *   bad-setting  TGEMM_OFFLOAD=sometimes (+ CPU BLAS): correct results and
 *                one warning line naming the variable (TGEMM_TEST_WARNING,
 *                else TGEMM_OFFLOAD)
 *   gpu          TGEMM_OFFLOAD=gpu (+ CPU BLAS, trace): GPU results within
 *                the dot-product bound, trace shows path=gpu; skip() without
 *                a GPU
 *
 * Every scenario that multiplies also runs rows with NaN, +Inf and -Inf in
 * A, B and C (put_special_values), checked by class against
 * special_reference (NaN where IEEE arithmetic and reference BLAS put it,
 * the same signed Inf, finite elsewhere) whatever the scenario's own check,
 * and, where the scenario traces, with the call's trace line naming the
 * scenario's path (forwarding, fallback, built-in loops, GPU, or the host's
 * scaling for alpha == 0).
 *
 * The program defines its own xerbla_ and cblas_xerbla, which record the
 * call instead of printing, and reference CBLAS's global RowMajorStrg:
 * its cblas_xerbla maps the numbers of a row-major call back to the
 * caller's arguments as reference cblas_xerbla does. With both defined,
 * reference cblas_sgemm's dimension errors reach xerbla_ (through the SGEMM
 * it calls); tests/blas/preload_prog.c covers a program with cblas_xerbla
 * alone.
 */
#include "common.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The BLAS ABI exported by libtgemm (not declared in tgemm.h). */
void sgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k, const float *alpha,
            const float *A, const int *lda, const float *B, const int *ldb, const float *beta, float *C,
            const int *ldc, size_t transa_len, size_t transb_len);
void cblas_sgemm(int layout, int TransA, int TransB, int M, int N, int K, float alpha, const float *A, int lda,
                 const float *B, int ldb, float beta, float *C, int ldc);

/* ---------------------------------------------------------------- error handlers */

typedef struct {
    int calls;
    int info;       /* cblas_xerbla: after the reference mapping below */
    int raw_info;   /* cblas_xerbla: the number as passed */
    int row_major;  /* RowMajorStrg during the call */
    char name[32];
    char text[128]; /* cblas_xerbla: form formatted with its arguments */
} handler_log_t;

static handler_log_t g_xerbla, g_cblas_xerbla;

/* Reference CBLAS's global (cblas_globals.c): its cblas_sgemm sets it to 1
 * for the duration of a row-major call and to 0 otherwise and on return.
 * Defined here, the program's own, as a program linked against reference
 * CBLAS reads the library's. */
int RowMajorStrg;

/* Reference cblas_xerbla's mapping for gemm under RowMajorStrg: a row-major
 * call is checked as the column-major call with M and N, lda and ldb
 * swapped, and reports that call's numbers. An involution. */
static int gemm_row_major_map(int info)
{
    switch (info) {
    case 4: return 5;
    case 5: return 4;
    case 9: return 11;
    case 11: return 9;
    default: return info;
    }
}

void xerbla_(const char *srname, const int *info, size_t srname_len);
void cblas_xerbla(int info, const char *rout, const char *form, ...);

void xerbla_(const char *srname, const int *info, size_t srname_len)
{
    g_xerbla.calls++;
    g_xerbla.info = *info;
    g_xerbla.row_major = RowMajorStrg;
    const size_t n = srname_len < sizeof g_xerbla.name - 1 ? srname_len : sizeof g_xerbla.name - 1;
    memcpy(g_xerbla.name, srname, n);
    g_xerbla.name[n] = '\0';
}

void cblas_xerbla(int info, const char *rout, const char *form, ...)
{
    g_cblas_xerbla.calls++;
    g_cblas_xerbla.raw_info = info;
    g_cblas_xerbla.row_major = RowMajorStrg;
    g_cblas_xerbla.info = RowMajorStrg && strstr(rout, "gemm") ? gemm_row_major_map(info) : info;
    snprintf(g_cblas_xerbla.name, sizeof g_cblas_xerbla.name, "%s", rout);
    va_list ap;
    va_start(ap, form);
    vsnprintf(g_cblas_xerbla.text, sizeof g_cblas_xerbla.text, form, ap);
    va_end(ap);
}

static void reset_handlers(void)
{
    memset(&g_xerbla, 0, sizeof g_xerbla);
    memset(&g_cblas_xerbla, 0, sizeof g_cblas_xerbla);
}

/* Calls made through the BLAS ABI in this process: the trace must have one
 * line for each. */
static int g_blas_calls;

static void call_sgemm(const char *ta, const char *tb, int m, int n, int k, float alpha, const float *A, int lda,
                       const float *B, int ldb, float beta, float *C, int ldc)
{
    g_blas_calls++;
    sgemm_(ta, tb, &m, &n, &k, &alpha, A, &lda, B, &ldb, &beta, C, &ldc, 1, 1);
}

/* RowMajorStrg holds `row_major_before` when the call starts; whatever it
 * held, reference cblas_sgemm leaves 0 behind. */
static void call_cblas_from(int row_major_before, int layout, int ta, int tb, int m, int n, int k, float alpha,
                            const float *A, int lda, const float *B, int ldb, float beta, float *C, int ldc)
{
    g_blas_calls++;
    RowMajorStrg = row_major_before;
    cblas_sgemm(layout, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    if (RowMajorStrg != 0)
        fail_msg("cblas_sgemm (layout %d) returned with RowMajorStrg = %d; reference CBLAS leaves 0", layout,
                 RowMajorStrg);
}

/* 2 is a value reference cblas_sgemm never leaves: the call must reset it. */
static void call_cblas(int layout, int ta, int tb, int m, int n, int k, float alpha, const float *A, int lda,
                       const float *B, int ldb, float beta, float *C, int ldc)
{
    call_cblas_from(2, layout, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

/* ---------------------------------------------------------------- bad arguments */

enum { kBufElems = 64 };

static void poison(float *x)
{
    for (int i = 0; i < kBufElems; ++i)
        x[i] = poison_c();
}

static void assert_poisoned(const float *x, const char *what)
{
    for (int i = 0; i < kBufElems; ++i)
        if (!same_bits(x[i], poison_c()))
            fail_msg("%s: C[%d] was written", what, i);
}

/* sgemm_: baseline m=4 n=3 k=2 lda=4 ldb=2 ldc=4 is valid. Rows where
 * several arguments are bad check that the first in reference order wins.
 * Null operands that must be used are reported as their argument (7, 9,
 * 12), where reference BLAS would crash. */
typedef struct {
    const char *name;
    char ta, tb;
    int m, n, k, lda, ldb, ldc;
    bool null_a, null_b, null_c;
    int want;
} f77_bad_t;

static const f77_bad_t kF77Bad[] = {
    {"transa_X", 'X', 'N', 4, 3, 2, 4, 2, 4, false, false, false, 1},
    {"transa_x", 'x', 'N', 4, 3, 2, 4, 2, 4, false, false, false, 1},
    {"transa_nul", '\0', 'N', 4, 3, 2, 4, 2, 4, false, false, false, 1},
    {"transa_R", 'R', 'N', 4, 3, 2, 4, 2, 4, false, false, false, 1},
    {"transb_X", 'N', 'X', 4, 3, 2, 4, 2, 4, false, false, false, 2},
    {"transb_y", 'n', 'y', 4, 3, 2, 4, 2, 4, false, false, false, 2},
    {"m_negative", 'N', 'N', -1, 3, 2, 4, 2, 4, false, false, false, 3},
    {"n_negative", 'N', 'N', 4, -1, 2, 4, 2, 4, false, false, false, 4},
    {"k_negative", 'N', 'N', 4, 3, -1, 4, 2, 4, false, false, false, 5},
    {"lda_n", 'N', 'N', 4, 3, 2, 3, 2, 4, false, false, false, 8},
    {"lda_t", 'T', 'N', 4, 3, 2, 1, 2, 4, false, false, false, 8},
    {"lda_c", 'c', 'N', 4, 3, 5, 4, 5, 4, false, false, false, 8},
    {"lda_zero_m0", 'N', 'N', 0, 3, 2, 0, 2, 1, false, false, false, 8},
    {"ldb_n", 'N', 'N', 4, 3, 2, 4, 1, 4, false, false, false, 10},
    {"ldb_t", 'N', 't', 4, 3, 2, 4, 2, 4, false, false, false, 10},
    {"ldb_zero_k0", 'N', 'N', 4, 3, 0, 4, 0, 4, false, false, false, 10},
    {"ldc", 'N', 'N', 4, 3, 2, 4, 2, 3, false, false, false, 13},
    {"ldc_zero_m0", 'N', 'N', 0, 3, 2, 1, 2, 0, false, false, false, 13},
    {"first_transa_before_transb", 'X', 'X', 4, 3, 2, 4, 2, 4, false, false, false, 1},
    {"first_transb_before_k", 'N', '7', 4, 3, -5, 4, 2, 4, false, false, false, 2},
    {"first_m_before_lda", 'N', 'N', -1, 3, 2, 0, 0, 0, false, false, false, 3},
    {"first_n_before_k", 'N', 'N', 4, -1, -1, 4, 2, 4, false, false, false, 4},
    {"first_k_before_lda", 'T', 'N', 4, 3, -1, 0, 2, 4, false, false, false, 5},
    {"first_lda_before_ldb", 'N', 'N', 4, 3, 2, 1, 1, 1, false, false, false, 8},
    {"first_ldb_before_ldc", 'N', 'N', 4, 3, 2, 4, 1, 1, false, false, false, 10},
    {"first_ldc_before_null", 'N', 'N', 4, 3, 2, 4, 2, 1, true, true, true, 13},
    {"null_a", 'N', 'N', 4, 3, 2, 4, 2, 4, true, false, false, 7},
    {"null_b", 'N', 'N', 4, 3, 2, 4, 2, 4, false, true, false, 9},
    {"null_c", 'N', 'N', 4, 3, 2, 4, 2, 4, false, false, true, 12},
    {"null_a_before_b", 'T', 'T', 4, 3, 2, 2, 3, 4, true, true, false, 7},
};

static void test_f77_bad(void **state)
{
    const f77_bad_t *b = *state;
    float a[kBufElems], bb[kBufElems], c[kBufElems];
    for (int i = 0; i < kBufElems; ++i)
        a[i] = bb[i] = 1.0f;
    poison(c);
    reset_handlers();
    const char ta[2] = {b->ta, '\0'}, tb[2] = {b->tb, '\0'};
    call_sgemm(ta, tb, b->m, b->n, b->k, 1.0f, b->null_a ? NULL : a, b->lda, b->null_b ? NULL : bb, b->ldb, 0.5f,
               b->null_c ? NULL : c, b->ldc);
    if (g_xerbla.calls != 1 || g_xerbla.info != b->want)
        fail_msg("%s: xerbla_ called %d time(s), last with info %d; want once with %d", b->name, g_xerbla.calls,
                 g_xerbla.info, b->want);
    assert_string_equal(g_xerbla.name, "SGEMM ");
    assert_int_equal(g_cblas_xerbla.calls, 0);
    assert_poisoned(c, b->name);
}

/* cblas_sgemm. Column-major baseline M=4 N=3 K=2 lda=4 ldb=2 ldc=4;
 * row-major baseline M=4 N=3 K=2 lda=2 ldb=3 ldc=3 (minimums on columns).
 * `want` is the caller's argument position (1 layout ... 14 ldc), the
 * number a reference-style cblas_xerbla arrives at. For row-major calls
 * reference CBLAS checks the swapped column-major call, so N is checked
 * before M and ldb before lda (and a null B before a null A), and numbers
 * that call's arguments with RowMajorStrg = 1 (M as 5, N as 4, lda as 11,
 * ldb as 9), which the handler maps back. The layout and the transposes
 * (a `text`) go to cblas_xerbla; the dimensions and leading dimensions are
 * checked by the SGEMM reference cblas_sgemm calls, whose XERBLA is this
 * program's xerbla_ ("SGEMM ", that call's SGEMM number: 1 less). Null
 * operands are tgemm's addition: passed to cblas_xerbla as 8, 10, 13, which
 * the mapping leaves alone. */
typedef struct {
    const char *name;
    int layout, ta, tb;
    int m, n, k, lda, ldb, ldc;
    bool null_a, null_b, null_c;
    int want;
    const char *text; /* what the form prints */
} cblas_bad_t;

static const cblas_bad_t kCblasBad[] = {
    {"layout_7", 7, 111, 111, 4, 3, 2, 4, 2, 4, false, false, false, 1, "Illegal layout setting, 7\n"},
    {"layout_0_before_transa", 0, 5, 111, 4, 3, 2, 4, 2, 4, false, false, false, 1, "Illegal layout setting, 0\n"},
    {"layout_before_m", 100, 111, 111, -1, 3, 2, 4, 2, 4, false, false, false, 1, "Illegal layout setting, 100\n"},
    {"cm_transa_110", 102, 110, 111, 4, 3, 2, 4, 2, 4, false, false, false, 2, "Illegal TransA setting, 110\n"},
    {"cm_transa_char_N", 102, 'N', 111, 4, 3, 2, 4, 2, 4, false, false, false, 2, "Illegal TransA setting, 78\n"},
    {"cm_transb_114", 102, 111, 114, 4, 3, 2, 4, 2, 4, false, false, false, 3, "Illegal TransB setting, 114\n"},
    {"cm_transa_before_transb", 102, 5, 6, 4, 3, 2, 4, 2, 4, false, false, false, 2, "Illegal TransA setting, 5\n"},
    {"cm_transb_before_m", 102, 111, 0, -1, 3, 2, 4, 2, 4, false, false, false, 3, "Illegal TransB setting, 0\n"},
    {"cm_m", 102, 111, 111, -1, 3, 2, 4, 2, 4, false, false, false, 4, ""},
    {"cm_n", 102, 111, 111, 4, -1, 2, 4, 2, 4, false, false, false, 5, ""},
    {"cm_k", 102, 111, 111, 4, 3, -1, 4, 2, 4, false, false, false, 6, ""},
    {"cm_lda_n", 102, 111, 111, 4, 3, 2, 3, 2, 4, false, false, false, 9, ""},
    {"cm_lda_t", 102, 112, 111, 4, 3, 2, 1, 2, 4, false, false, false, 9, ""},
    {"cm_lda_c", 102, 113, 111, 4, 3, 5, 4, 5, 4, false, false, false, 9, ""},
    {"cm_ldb_n", 102, 111, 111, 4, 3, 2, 4, 1, 4, false, false, false, 11, ""},
    {"cm_ldb_t", 102, 111, 112, 4, 3, 2, 4, 2, 4, false, false, false, 11, ""},
    {"cm_ldc", 102, 111, 111, 4, 3, 2, 4, 2, 3, false, false, false, 14, ""},
    {"cm_m_before_n", 102, 111, 111, -1, -1, 2, 4, 2, 4, false, false, false, 4, ""},
    {"cm_lda_before_ldb", 102, 111, 111, 4, 3, 2, 1, 1, 4, false, false, false, 9, ""},
    {"cm_ldb_before_ldc", 102, 111, 111, 4, 3, 2, 4, 1, 1, false, false, false, 11, ""},
    {"cm_null_a", 102, 111, 111, 4, 3, 2, 4, 2, 4, true, false, false, 8, ""},
    {"cm_null_b", 102, 111, 111, 4, 3, 2, 4, 2, 4, false, true, false, 10, ""},
    {"cm_null_c", 102, 111, 111, 4, 3, 2, 4, 2, 4, false, false, true, 13, ""},
    {"rm_transa_110", 101, 110, 111, 4, 3, 2, 2, 3, 3, false, false, false, 2, "Illegal TransA setting, 110\n"},
    {"rm_transb_114", 101, 111, 114, 4, 3, 2, 2, 3, 3, false, false, false, 3, "Illegal TransB setting, 114\n"},
    {"rm_transa_before_transb", 101, 5, 6, 4, 3, 2, 2, 3, 3, false, false, false, 2, "Illegal TransA setting, 5\n"},
    {"rm_transb_before_n", 101, 112, -3, 4, -1, 2, 4, 3, 3, false, false, false, 3, "Illegal TransB setting, -3\n"},
    {"rm_m", 101, 111, 111, -1, 3, 2, 2, 3, 3, false, false, false, 4, ""},
    {"rm_n", 101, 111, 111, 4, -1, 2, 2, 3, 3, false, false, false, 5, ""},
    {"rm_k", 101, 111, 111, 4, 3, -1, 2, 3, 3, false, false, false, 6, ""},
    {"rm_lda_n", 101, 111, 111, 4, 3, 2, 1, 3, 3, false, false, false, 9, ""},
    {"rm_lda_t", 101, 112, 111, 4, 3, 2, 3, 3, 3, false, false, false, 9, ""},
    {"rm_ldb_n", 101, 111, 111, 4, 3, 2, 2, 2, 3, false, false, false, 11, ""},
    {"rm_ldb_t", 101, 111, 113, 4, 3, 2, 2, 1, 3, false, false, false, 11, ""},
    {"rm_ldc", 101, 111, 111, 4, 3, 2, 2, 3, 2, false, false, false, 14, ""},
    {"rm_n_before_m", 101, 111, 111, -1, -1, 2, 2, 3, 3, false, false, false, 5, ""},
    {"rm_n_before_k", 101, 111, 111, 4, -1, -1, 2, 3, 3, false, false, false, 5, ""},
    {"rm_m_before_k", 101, 111, 111, -1, 3, -1, 2, 3, 3, false, false, false, 4, ""},
    {"rm_m_before_lda", 101, 111, 111, -1, 3, 2, 0, 3, 3, false, false, false, 4, ""},
    {"rm_ldb_before_lda", 101, 111, 111, 4, 3, 2, 1, 1, 3, false, false, false, 11, ""},
    {"rm_lda_before_ldc", 101, 111, 111, 4, 3, 2, 1, 3, 1, false, false, false, 9, ""},
    {"rm_null_a", 101, 111, 111, 4, 3, 2, 2, 3, 3, true, false, false, 8, ""},
    {"rm_null_b", 101, 111, 111, 4, 3, 2, 2, 3, 3, false, true, false, 10, ""},
    {"rm_null_c", 101, 111, 111, 4, 3, 2, 2, 3, 3, false, false, true, 13, ""},
    {"rm_null_b_before_a", 101, 111, 111, 4, 3, 2, 2, 3, 3, true, true, false, 10, ""},
};

static void test_cblas_bad(void **state)
{
    const cblas_bad_t *b = *state;
    float a[kBufElems], bb[kBufElems], c[kBufElems];
    for (int i = 0; i < kBufElems; ++i)
        a[i] = bb[i] = 1.0f;
    poison(c);
    reset_handlers();
    /* Reference cblas_sgemm sets RowMajorStrg to 1 in its row-major branch,
     * before any check but the layout's; 0 otherwise. Each call starts from
     * the other value: a row-major call from 0, as in a program that never
     * sets it. */
    const bool row = b->layout == 101;
    const bool null_operand = b->null_a || b->null_b || b->null_c;
    const int want_raw = row && !null_operand ? gemm_row_major_map(b->want) : b->want;
    call_cblas_from(row ? 0 : 1, b->layout, b->ta, b->tb, b->m, b->n, b->k, 1.0f, b->null_a ? NULL : a, b->lda,
                    b->null_b ? NULL : bb, b->ldb, 0.5f, b->null_c ? NULL : c, b->ldc);
    if (b->text[0] == '\0' && !null_operand) {
        if (g_xerbla.calls != 1 || g_xerbla.info != want_raw - 1 || g_xerbla.row_major != (row ? 1 : 0))
            fail_msg("%s: xerbla_ called %d time(s), last with info %d under RowMajorStrg %d; reference CBLAS's SGEMM "
                     "calls it once with %d under %d",
                     b->name, g_xerbla.calls, g_xerbla.info, g_xerbla.row_major, want_raw - 1, row ? 1 : 0);
        assert_string_equal(g_xerbla.name, "SGEMM ");
        assert_int_equal(g_cblas_xerbla.calls, 0);
        assert_poisoned(c, b->name);
        return;
    }
    if (g_cblas_xerbla.calls != 1 || g_cblas_xerbla.info != b->want)
        fail_msg("%s: cblas_xerbla called %d time(s), last with info %d (passed %d, RowMajorStrg %d); want once "
                 "with %d",
                 b->name, g_cblas_xerbla.calls, g_cblas_xerbla.info, g_cblas_xerbla.raw_info, g_cblas_xerbla.row_major,
                 b->want);
    if (g_cblas_xerbla.row_major != (row ? 1 : 0) || g_cblas_xerbla.raw_info != want_raw)
        fail_msg("%s: cblas_xerbla was passed %d with RowMajorStrg %d; reference CBLAS passes %d with %d", b->name,
                 g_cblas_xerbla.raw_info, g_cblas_xerbla.row_major, want_raw, row ? 1 : 0);
    assert_string_equal(g_cblas_xerbla.name, "cblas_sgemm");
    assert_string_equal(g_cblas_xerbla.text, b->text);
    assert_int_equal(g_xerbla.calls, 0);
    assert_poisoned(c, b->name);
}

/* Quick returns read nothing, touch nothing and report nothing: every
 * pointer may be NULL when m == 0 or n == 0; A and B may be NULL, and C is
 * left alone, when (alpha == 0 or k == 0) and beta == 1. */
static void test_quick_returns(void **state)
{
    (void)state;
    float c[kBufElems];
    const float nan = NAN;
    reset_handlers();
    call_sgemm("N", "N", 0, 5, 5, 1.0f, NULL, 1, NULL, 5, 0.0f, NULL, 1);
    call_sgemm("t", "c", 5, 0, 5, 1.0f, NULL, 5, NULL, 1, 0.0f, NULL, 5);
    call_sgemm("N", "N", 0, 0, 0, nan, NULL, 1, NULL, 1, nan, NULL, 1);
    call_cblas(102, 111, 111, 0, 5, 5, 1.0f, NULL, 1, NULL, 5, 0.0f, NULL, 1);
    call_cblas(101, 111, 111, 0, 3, 2, 1.0f, NULL, 2, NULL, 3, 0.0f, NULL, 3);
    call_cblas(101, 112, 113, 4, 0, 2, 1.0f, NULL, 4, NULL, 2, 0.0f, NULL, 1);
    poison(c);
    call_sgemm("N", "N", 4, 3, 2, 0.0f, NULL, 4, NULL, 2, 1.0f, c, 4);
    call_sgemm("T", "N", 4, 3, 2, -0.0f, NULL, 2, NULL, 2, 1.0f, c, 4);
    call_sgemm("N", "T", 4, 3, 0, 2.0f, NULL, 4, NULL, 3, 1.0f, c, 4);
    call_cblas(102, 111, 111, 4, 3, 2, 0.0f, NULL, 4, NULL, 2, 1.0f, c, 4);
    call_cblas(101, 111, 111, 4, 3, 0, nan, NULL, 1, NULL, 3, 1.0f, c, 3);
    call_cblas(101, 112, 112, 4, 3, 2, 0.0f, NULL, 4, NULL, 2, 1.0f, c, 3);
    assert_poisoned(c, "quick return");
    assert_int_equal(g_xerbla.calls, 0);
    assert_int_equal(g_cblas_xerbla.calls, 0);
}

/* ---------------------------------------------------------------- computing cases */

typedef enum { ENTRY_F77, ENTRY_CBLAS_COL, ENTRY_CBLAS_ROW } entry_t;
typedef enum { CHECK_BITWISE, CHECK_BOUND } check_t;

typedef struct {
    entry_t entry;
    char ta, tb; /* sgemm_ characters; for CBLAS: N -> 111, T -> 112, C -> 113 */
    int m, n, k;
    int pad_a, pad_b, pad_c;
    float alpha, beta;
    bool nan_ab;  /* alpha == 0 rows: A and B hold NaN ... */
    bool null_ab; /* ... or are NULL */
    bool special; /* NaN and Inf in A, B and C (test_blas_special) */
    uint64_t index;
} blas_case_t;

static check_t g_check;

static bool char_trans(char c)
{
    return c != 'N' && c != 'n';
}

static int cblas_op(char c)
{
    return c == 'N' || c == 'n' ? 111 : c == 'T' || c == 't' ? 112 : 113;
}

static void run_blas_case(const blas_case_t *t, bool exact)
{
    const uint64_t seed = test_seed_for(t->index * 2 + (exact ? 1 : 0));
    rng_t rng = {seed};
    const bool col = t->entry != ENTRY_CBLAS_ROW;
    const bool ta = char_trans(t->ta), tb = char_trans(t->tb);
    const shapes_t shapes = shapes_of_call(col, ta, tb, t->m, t->n, t->k, t->pad_a, t->pad_b, t->pad_c);
    const shape_t SA = shapes.SA, SB = shapes.SB, SC = shapes.SC;
    float *A = xmalloc(shape_elems(SA) * sizeof(float));
    float *B = xmalloc(shape_elems(SB) * sizeof(float));
    float *C0 = xmalloc(shape_elems(SC) * sizeof(float));
    float *ref = xmalloc(shape_elems(SC) * sizeof(float));
    float *got = xmalloc(shape_elems(SC) * sizeof(float));
    fill_operands(A, SA, B, SB, C0, SC, t->beta, &rng, exact);
    if (t->nan_ab) {
        fill_constant(A, SA, NAN);
        fill_constant(B, SB, NAN);
    }

    /* OpenBLAS through the same kind of entry point. For the bound check
     * its C starts at 0 when beta == 0, so the NaN never reaches it. */
    if (t->beta != 0.0f || g_check == CHECK_BITWISE)
        memcpy(ref, C0, shape_elems(SC) * sizeof(float));
    else
        fill_constant(ref, SC, 0.0f);
    const float *rA = t->null_ab ? NULL : A, *rB = t->null_ab ? NULL : B;
    const char tas[2] = {t->ta, '\0'}, tbs[2] = {t->tb, '\0'};
    if (t->alpha == 0.0f) {
        /* Reference BLAS: C := beta * C, A and B unread (zeros for beta == 0).
         * Computed here, exactly: OpenBLAS 0.3.26 (Ubuntu 24.04) reads A and B
         * even when alpha == 0, so NaN there reaches its result and NULL
         * crashes it; it cannot be the reference for this rule. */
        for (int64_t o = 0; o < SC.outer; ++o)
            for (int64_t i = 0; i < SC.inner; ++i)
                ref[o * SC.ld + i] = t->beta == 0.0f ? 0.0f : t->beta * C0[o * SC.ld + i];
    } else if (t->entry == ENTRY_F77) {
        ref_sgemm_f77(tas, tbs, t->m, t->n, t->k, t->alpha, rA, (int)SA.ld, rB, (int)SB.ld, t->beta, ref, (int)SC.ld);
    } else {
        ref_sgemm(col ? REF_COL_MAJOR : REF_ROW_MAJOR, cblas_op(t->ta), cblas_op(t->tb), t->m, t->n, t->k, t->alpha,
                  rA, (int)SA.ld, rB, (int)SB.ld, t->beta, ref, (int)SC.ld);
    }

    memcpy(got, C0, shape_elems(SC) * sizeof(float));
    reset_handlers();
    if (t->entry == ENTRY_F77)
        call_sgemm(tas, tbs, t->m, t->n, t->k, t->alpha, rA, (int)SA.ld, rB, (int)SB.ld, t->beta, got, (int)SC.ld);
    else
        call_cblas(col ? 102 : 101, cblas_op(t->ta), cblas_op(t->tb), t->m, t->n, t->k, t->alpha, rA, (int)SA.ld, rB,
                   (int)SB.ld, t->beta, got, (int)SC.ld);
    assert_int_equal(g_xerbla.calls + g_cblas_xerbla.calls, 0);

    if (g_check == CHECK_BITWISE) {
        for (size_t i = 0; i < shape_elems(SC); ++i)
            if (!same_bits(got[i], ref[i]))
                fail_msg("element %zu = %.9g, OpenBLAS %.9g: not the same bits (seed 0x%016llx)", i, (double)got[i],
                         (double)ref[i], (unsigned long long)seed);
    } else {
        double *bound = (exact || t->nan_ab) ? NULL
                                             : error_bound(col, ta, tb, t->m, t->n, t->k, t->alpha, A, SA, B, SB,
                                                           t->beta, C0, SC);
        check_c(exact ? "exact" : "random", got, ref, bound, SC, t->k, exact || t->nan_ab, seed);
        free(bound);
    }
    free(A);
    free(B);
    free(C0);
    free(ref);
    free(got);
}

static bool g_require_gpu;

static void test_blas_case(void **state)
{
    if (g_require_gpu)
        REQUIRE_GPU();
    const blas_case_t *t = *state;
    run_blas_case(t, true);
    if (!t->nan_ab)
        run_blas_case(t, false);
}

static const char *const kEntryTag[] = {"sgemm", "cblas_col", "cblas_row"};

static char *blas_case_name(const blas_case_t *t)
{
    return xstrdup_printf("%s_%c%c_%dx%dx%d_pad%d%d%d_a%g_b%g%s%s%s", kEntryTag[t->entry], t->ta, t->tb, t->m, t->n,
                          t->k, t->pad_a, t->pad_b, t->pad_c, (double)t->alpha, (double)t->beta,
                          t->nan_ab ? "_nan_ab" : "", t->null_ab ? "_null_ab" : "", t->special ? "_special" : "");
}

/* A table past its capacity fails the run (exit status 1) rather than
 * dropping rows unseen: raise kMaxTests. */
static void table_overflow(const char *what, size_t cap)
{
    fprintf(stderr, "test_blas: more than kMaxTests = %zu %s; raise kMaxTests\n", cap, what);
    exit(1);
}

static void add_case(blas_case_t *rows, size_t cap, size_t *n, const blas_case_t *t)
{
    if (*n == cap)
        table_overflow("cases", cap);
    rows[(*n)++] = *t;
}

/* Every entry point x transpose pair (upper- and lowercase characters and
 * CBLAS's ConjTrans in turn) x shape, with ld padding and alpha/beta varying
 * from row to row; then alpha == 0 rows whose A and B are NaN or NULL, and
 * beta == 0 rows (every table row with beta == 0 starts with NaN in C). */
static size_t build_cases(blas_case_t *rows, size_t cap, int max_dim)
{
    static const int kShapes[][3] = {{1, 1, 1},   {2, 3, 4},   {7, 5, 3},      {16, 16, 16},
                                     {33, 17, 65}, {65, 33, 1}, {127, 129, 63}, {200, 100, 300}};
    static const char kTrans[][6] = {{'N', 'n', 'N', 'n', 'N', 'n'}, {'T', 't', 'C', 'c', 'T', 'c'}};
    static const float kAlphaBeta[][2] = {{1.0f, 0.0f}, {1.0f, 1.0f}, {-1.0f, 0.5f}, {0.5f, -2.0f}, {2.0f, 0.0f}, {0.0f, 3.0f}};
    static const int kPads[][3] = {{0, 0, 0}, {1, 3, 2}, {3, 1, 0}, {0, 4, 5}};
    size_t n = 0;
    uint64_t index = 0;
    for (int e = ENTRY_F77; e <= ENTRY_CBLAS_ROW; ++e) {
        for (int pair = 0; pair < 4; ++pair) {
            for (size_t s = 0; s < sizeof kShapes / sizeof kShapes[0]; ++s) {
                const int v = (int)(e * 32 + pair * 8 + (int)s);
                blas_case_t t;
                memset(&t, 0, sizeof t);
                t.entry = (entry_t)e;
                t.ta = kTrans[(pair >> 1) & 1][((int)s + e) % 6];
                t.tb = kTrans[pair & 1][((int)s + 2 * e + pair) % 6];
                t.m = kShapes[s][0];
                t.n = kShapes[s][1];
                t.k = kShapes[s][2];
                if (t.m > max_dim || t.n > max_dim || t.k > max_dim)
                    continue;
                t.pad_a = kPads[v % 4][0];
                t.pad_b = kPads[v % 4][1];
                t.pad_c = kPads[v % 4][2];
                t.alpha = kAlphaBeta[v % 6][0];
                t.beta = kAlphaBeta[v % 6][1];
                t.index = index++;
                add_case(rows, cap, &n, &t);
            }
        }
    }
    /* alpha == 0: A and B never read, C := beta * C (beta == 0: exact zeros). */
    static const float kBetas[] = {0.0f, -2.0f};
    for (int e = ENTRY_F77; e <= ENTRY_CBLAS_ROW; ++e) {
        for (int nul = 0; nul <= 1; ++nul) {
            for (size_t bi = 0; bi < 2; ++bi) {
                blas_case_t t;
                memset(&t, 0, sizeof t);
                t.entry = (entry_t)e;
                t.ta = e == ENTRY_F77 ? 't' : 'N';
                t.tb = 'N';
                t.m = 67;
                t.n = 33;
                t.k = 19;
                t.pad_c = 2;
                t.alpha = 0.0f;
                t.beta = kBetas[bi];
                t.nan_ab = !nul;
                t.null_ab = nul;
                t.index = index++;
                add_case(rows, cap, &n, &t);
            }
        }
    }
    /* NaN, +Inf and -Inf in A, B and C (put_special_values in
     * tests/common.c): through every entry point, each transpose pair, a
     * zero beta (NaN-poisoned C, not to be read) and alpha == 0 (C scaled,
     * its NaN kept). Shapes within the builtin scenario's 130. */
    static const struct {
        int m, n, k, pair;
        float alpha, beta;
    } kSpecial[] = {
        {67, 33, 19, 0, 1.0f, 0.5f},   {130, 129, 65, 2, -2.0f, 0.0f}, {40, 100, 70, 1, 0.5f, -1.0f},
        {16, 16, 120, 3, 2.0f, 0.25f}, {67, 33, 19, 0, 0.0f, -2.0f},
    };
    for (int e = ENTRY_F77; e <= ENTRY_CBLAS_ROW; ++e) {
        for (size_t s = 0; s < sizeof kSpecial / sizeof kSpecial[0]; ++s) {
            blas_case_t t;
            memset(&t, 0, sizeof t);
            t.entry = (entry_t)e;
            t.ta = kTrans[(kSpecial[s].pair >> 1) & 1][((int)s + e) % 6];
            t.tb = kTrans[kSpecial[s].pair & 1][((int)s + 2 * e + 1) % 6];
            t.m = kSpecial[s].m;
            t.n = kSpecial[s].n;
            t.k = kSpecial[s].k;
            if (t.m > max_dim || t.n > max_dim || t.k > max_dim)
                continue;
            t.pad_a = kPads[((int)s + e) % 4][0];
            t.pad_b = kPads[((int)s + e) % 4][1];
            t.pad_c = kPads[((int)s + e) % 4][2];
            t.alpha = kSpecial[s].alpha;
            t.beta = kSpecial[s].beta;
            t.special = true;
            t.index = index++;
            add_case(rows, cap, &n, &t);
        }
    }
    return n;
}

/* ---------------------------------------------------------------- trace, stderr, CUDA */

static char *read_file_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return xstrdup_printf("%s", "");
    fseek(f, 0, SEEK_END);
    const long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = xmalloc((size_t)len + 1);
    const size_t got = fread(s, 1, (size_t)len, f);
    s[got] = '\0';
    fclose(f);
    return s;
}

static int count_lines_with(const char *text, const char *needle)
{
    int n = 0;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        const size_t len = end ? (size_t)(end - line) : strlen(line);
        const char *hit = strstr(line, needle);
        if (hit && hit < line + len)
            n++;
        line += len + (end ? 1 : 0);
    }
    return n;
}

/* What each trace line's path must be, from the line's m, n, k and beta
 * and the line itself. */
typedef const char *(*expected_path_fn)(double m, double n, double k, double beta, const char *line);

static const char *path_cpu(double m, double n, double k, double beta, const char *line)
{
    (void)m, (void)n, (void)k, (void)beta, (void)line;
    return "path=cpu ";
}

static const char *path_fallback(double m, double n, double k, double beta, const char *line)
{
    (void)m, (void)n, (void)k, (void)beta, (void)line;
    return "path=cpu-fallback:no-device ";
}

static const char *path_gpu(double m, double n, double k, double beta, const char *line)
{
    (void)m, (void)n, (void)k, (void)beta, (void)line;
    return "path=gpu ";
}

/* TGEMM_OFFLOAD=auto with TGEMM_OFFLOAD_LEARN=0 (src/blas/offload.cpp): below
 * 2e6 flops, or TGEMM_OFFLOAD_MIN_FLOPS if larger, the CPU BLAS without the
 * model; from there the model decides, and the line shows its estimates:
 * the GPU exactly when its estimate is the smaller one. */
static const char *path_auto(double m, double n, double k, double beta, const char *line)
{
    (void)beta;
    const char *e = getenv("TGEMM_OFFLOAD_MIN_FLOPS");
    const double threshold = fmax(e ? strtod(e, NULL) : 0.0, 2e6);
    const char *est = strstr(line, " auto=model est_cpu_us=");
    if (2.0 * m * n * k < threshold) {
        if (est || strstr(line, " auto="))
            fail_msg("the model was consulted below the threshold: %s", line);
        return "path=cpu ";
    }
    double cpu_us = 0, gpu_us = 0;
    if (!est || sscanf(est, " auto=model est_cpu_us=%lf est_gpu_us=%lf", &cpu_us, &gpu_us) != 2)
        fail_msg("no model estimates in an automatic decision: %s", line);
    if (!(cpu_us > 0 && gpu_us > 0))
        fail_msg("estimates must be positive: %s", line);
    if (cpu_us <= gpu_us)
        return "path=cpu ";
    return gpu_available() ? "path=gpu " : "path=cpu-fallback:no-device ";
}

static expected_path_fn g_expected_path;

/* The file TGEMM_TRACE names in this process: %p the process id, %r the
 * rank a launcher gave it (0 without one), %% a %. (malloc'ed) */
static char *trace_path(const char *name)
{
    const char *vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"};
    const char *rank = NULL;
    for (size_t i = 0; i < sizeof vars / sizeof vars[0] && !(rank && *rank); ++i)
        rank = getenv(vars[i]);
    char pid[32];
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    char *out = xmalloc(strlen(name) * 32 + 1), *o = out;
    for (const char *c = name; *c; ++c) {
        const char *put = NULL;
        if (c[0] == '%' && c[1] == 'p')
            put = pid;
        else if (c[0] == '%' && c[1] == 'r')
            put = rank && *rank ? rank : "0";
        else if (c[0] == '%' && c[1] == '%')
            put = "%";
        if (!put) {
            *o++ = *c;
            continue;
        }
        o += sprintf(o, "%s", put);
        ++c;
    }
    *o = '\0';
    return out;
}

/* The text of the file TGEMM_TRACE names in this process (malloc'ed). */
static char *read_trace(void)
{
    const char *name = getenv("TGEMM_TRACE");
    if (!name || !*name)
        fail_msg("this scenario needs TGEMM_TRACE=FILE");
    char *path = trace_path(name);
    char *text = read_file_text(path);
    free(path);
    return text;
}

/* Every BLAS call made so far has one trace line, and each line that ran
 * a multiply names the path the scenario implies. */
static void test_trace(void **state)
{
    (void)state;
    if (g_require_gpu)
        REQUIRE_GPU();
    char *text = read_trace();
    char *path = trace_path(getenv("TGEMM_TRACE"));
    const int lines = count_lines_with(text, "tgemm trace: ");
    if (lines != g_blas_calls)
        fail_msg("%s has %d trace lines, %d BLAS calls were made", path, lines, g_blas_calls);
    assert_true(count_lines_with(text, "entry=sgemm_ ") > 0);
    assert_true(count_lines_with(text, "entry=cblas_sgemm layout=col ") > 0);
    assert_true(count_lines_with(text, "entry=cblas_sgemm layout=row ") > 0);
    assert_true(count_lines_with(text, "transa=t ") > 0); /* sgemm_ characters are shown as passed */
    assert_true(count_lines_with(text, "transb=C ") > 0);
    int checked = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        int m = 0, n = 0, k = 0;
        const char *dims = strstr(line, " m=");
        if (!dims || sscanf(dims, " m=%d n=%d k=%d", &m, &n, &k) != 3)
            fail_msg("malformed trace line: %s", line);
        if (!strstr(line, " time_us="))
            fail_msg("no time in trace line: %s", line);
        if (strstr(line, "path=quick-return") || strstr(line, "path=xerbla:"))
            continue;
        /* alpha == 0 or k == 0 never reaches a multiply: C := beta * C on the
         * host, unless the scenario sends everything to the GPU. */
        if (strstr(line, "path=scale ")) {
            const char *a = strstr(line, " alpha=");
            if (!a || (k != 0 && strtod(a + 7, NULL) != 0.0))
                fail_msg("path=scale for a call that reads A and B: %s", line);
            continue;
        }
        const char *b = strstr(line, " beta=");
        if (!b)
            fail_msg("no beta in trace line: %s", line);
        const char *want = g_expected_path(m, n, k, strtod(b + 6, NULL), line);
        if (!strstr(line, want))
            fail_msg("trace line lacks '%s': %s", want, line);
        checked++;
    }
    assert_true(checked > 0);
    free(text);
    free(path);
}

/* Forwarding to the CPU BLAS never initialises CUDA: no device's primary
 * context (the one the CUDA runtime, and so tgemm, would use) is active.
 * Asked of the driver directly; without a driver there is nothing tgemm
 * could have initialised. */
typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_count_fn)(int *);
typedef int (*cu_get_fn)(int *, int);
typedef int (*cu_state_fn)(int, unsigned *, int *);

/* auto-unusable-gpu (no device, TGEMM_OFFLOAD_CPU_GFLOPS low enough that
 * the model prefers the GPU, by more than the GPU's start costs: see
 * kGpuStartSeconds): the first call of a shape tries the GPU and
 * falls back; what that cost is learned, and the calls of the shape settle
 * on the CPU BLAS instead of failing on the GPU again. C right each time. */
static void test_auto_learns_unusable_gpu(void **state)
{
    (void)state;
    enum { m = 200, n = 100, k = 300, calls = 6, settled = 3 };
    rng_t rng = {test_seed_for(77)};
    float *A = xmalloc((size_t)m * k * sizeof(float)), *B = xmalloc((size_t)k * n * sizeof(float));
    float *C = xmalloc((size_t)m * n * sizeof(float)), *R = xmalloc((size_t)m * n * sizeof(float));
    for (size_t i = 0; i < (size_t)m * k; ++i)
        A[i] = rng_small_int(&rng);
    for (size_t i = 0; i < (size_t)k * n; ++i)
        B[i] = rng_small_int(&rng);
    double *ref = xmalloc((size_t)m * n * sizeof(double));
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
            double s = 0;
            for (int l = 0; l < k; ++l)
                s += (double)A[i + (size_t)l * m] * B[l + (size_t)j * k];
            ref[i + (size_t)j * m] = s;
        }
    for (int c = 0; c < calls; ++c) {
        for (size_t i = 0; i < (size_t)m * n; ++i)
            C[i] = poison_c();
        reset_handlers();
        call_sgemm("N", "N", m, n, k, 1.0f, A, m, B, k, 0.0f, C, m);
        for (size_t i = 0; i < (size_t)m * n; ++i)
            if ((double)C[i] != ref[i]) /* small integers: every order of the sums is exact */
                fail_msg("call %d: C[%zu] = %g, want %g", c, i, (double)C[i], ref[i]);
    }
    char *text = read_trace();
    char *first = strstr(text, "tgemm trace:");
    assert_non_null(first);
    char *end = strchr(first, '\n');
    assert_non_null(end);
    *end = '\0';
    if (!strstr(first, " path=cpu-fallback:no-device ") || !strstr(first, " auto=model "))
        fail_msg("the first call should try the GPU the model prefers and fall back: %s", first);
    /* The process's first CPU BLAS call (the first fallback) is not learned
     * from, so the second call may try the GPU once more; the last calls
     * must have settled on the CPU. */
    char *last = end + 1;
    for (int skip = 0; skip < calls - 1 - settled; ++skip) {
        last = strchr(last, '\n');
        assert_non_null(last);
        ++last;
    }
    const int learned = count_lines_with(last, " path=cpu auto=learned ");
    printf("[ auto     ] first call: GPU tried, fell back; the last %d calls on the CPU BLAS, learned: %d\n", settled,
           learned);
    assert_int_equal(learned, settled);
    free(text), free(A), free(B), free(C), free(R), free(ref);
}

/* auto-cpu: the model was consulted for some calls, and none ran on the GPU. */
static void test_all_on_cpu(void **state)
{
    (void)state;
    char *text = read_trace();
    const int consulted = count_lines_with(text, " auto=model ");
    printf("[ auto     ] %d calls decided by the model\n", consulted);
    assert_true(consulted > 0);
    assert_int_equal(count_lines_with(text, "path=gpu"), 0);
    assert_int_equal(count_lines_with(text, "path=cpu-fallback"), 0);
    free(text);
}

static void test_cuda_untouched(void **state)
{
    (void)state;
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!cuda) {
        printf("[ cuda     ] no CUDA driver here: nothing can have been initialised\n");
        return;
    }
    cu_init_fn init;
    cu_count_fn count;
    cu_get_fn get;
    cu_state_fn ctx_state;
    *(void **)&init = dlsym(cuda, "cuInit");
    *(void **)&count = dlsym(cuda, "cuDeviceGetCount");
    *(void **)&get = dlsym(cuda, "cuDeviceGet");
    *(void **)&ctx_state = dlsym(cuda, "cuDevicePrimaryCtxGetState");
    assert_true(init && count && get && ctx_state);
    int n = 0;
    if (init(0) != 0 || count(&n) != 0)
        n = 0;
    for (int i = 0; i < n; ++i) {
        int dev = 0, active = 0;
        unsigned flags = 0;
        assert_int_equal(get(&dev, i), 0);
        assert_int_equal(ctx_state(dev, &flags, &active), 0);
        if (active)
            fail_msg("device %d has an active primary context after calls that only forwarded to the CPU BLAS", i);
    }
    printf("[ cuda     ] %d device(s), no primary context active\n", n);
}

/* stderr goes to a file for the whole scenario; this last test puts it
 * back, shows what was written, and checks that `needle` appeared on
 * exactly one line. */
static int g_saved_stderr = -1;
static char g_stderr_path[] = "/tmp/tgemm-test-blas-XXXXXX";
static const char *g_warning_needle;

static void capture_stderr(void)
{
    fflush(stderr);
    const int fd = mkstemp(g_stderr_path);
    if (fd < 0 || (g_saved_stderr = dup(2)) < 0 || dup2(fd, 2) < 0) {
        perror("test_blas: capturing stderr");
        exit(1);
    }
    close(fd);
}

static void test_one_warning(void **state)
{
    (void)state;
    fflush(stderr);
    dup2(g_saved_stderr, 2);
    char *text = read_file_text(g_stderr_path);
    unlink(g_stderr_path);
    printf("[ stderr   ] %s", *text ? text : "(empty)\n");
    const int hits = count_lines_with(text, g_warning_needle);
    if (hits != 1)
        fail_msg("stderr has %d lines with '%s', want exactly 1", hits, g_warning_needle);
    free(text);
}

/* ---------------------------------------------------------------- NaN and Inf */

/* The trace path of the calls with alpha == 0 (or k == 0): the host's
 * scaling, except where the scenario sends every call to the GPU. */
static const char *g_alpha0_path = "path=scale ";

static const char *path_builtin(double m, double n, double k, double beta, const char *line)
{
    (void)m, (void)n, (void)k, (void)beta, (void)line;
    return "path=builtin ";
}

/* Where the scenario names a path, the trace's last line must be this
 * call's and name it. */
static void check_last_trace_line(const blas_case_t *t)
{
    if (g_expected_path == NULL)
        return;
    char *text = read_trace();
    size_t len = strlen(text);
    while (len > 0 && text[len - 1] == '\n')
        text[--len] = '\0';
    const char *last = strrchr(text, '\n');
    last = last ? last + 1 : text;
    char dims[64];
    snprintf(dims, sizeof dims, " m=%d n=%d k=%d ", t->m, t->n, t->k);
    const char *want =
        t->alpha == 0.0f || t->k == 0 ? g_alpha0_path : g_expected_path(t->m, t->n, t->k, t->beta, last);
    if (strstr(last, dims) == NULL || strstr(last, want) == NULL)
        fail_msg("the trace's last line is not this call's (%s) on %s: %s", dims, want, last);
    free(text);
}

/* One special-value row: NaN and Inf placed by put_special_values, C
 * checked by class against special_reference (whatever the scenario's
 * check: OpenBLAS's bits are not the reference for the rule), and the
 * call's trace line against the scenario's path. */
static void run_special_case(const blas_case_t *t, bool exact)
{
    const uint64_t seed = test_seed_for(t->index * 2 + (exact ? 1 : 0));
    rng_t rng = {seed};
    const bool col = t->entry != ENTRY_CBLAS_ROW;
    const bool ta = char_trans(t->ta), tb = char_trans(t->tb);
    const problem_t p = {col, ta, tb, t->m, t->n, t->k, t->alpha, t->beta,
                         shapes_of_call(col, ta, tb, t->m, t->n, t->k, t->pad_a, t->pad_b, t->pad_c)};
    const shape_t SA = p.s.SA, SB = p.s.SB, SC = p.s.SC;
    float *A = xmalloc(shape_elems(SA) * sizeof(float)), *B = xmalloc(shape_elems(SB) * sizeof(float));
    float *got = xmalloc(shape_elems(SC) * sizeof(float));
    fill_operands(A, SA, B, SB, got, SC, t->beta, &rng, exact);
    put_special_values(&p, A, B, t->beta != 0.0f ? got : NULL);
    special_counts_t counts;
    double *bound = NULL;
    double *want = special_reference(&p, A, B, got, exact ? NULL : &bound, &counts);
    char *name = blas_case_name(t);
    require_special_counts(name, &p, &counts);

    const char tas[2] = {t->ta, '\0'}, tbs[2] = {t->tb, '\0'};
    reset_handlers();
    if (t->entry == ENTRY_F77)
        call_sgemm(tas, tbs, t->m, t->n, t->k, t->alpha, A, (int)SA.ld, B, (int)SB.ld, t->beta, got, (int)SC.ld);
    else
        call_cblas(col ? 102 : 101, cblas_op(t->ta), cblas_op(t->tb), t->m, t->n, t->k, t->alpha, A, (int)SA.ld, B,
                   (int)SB.ld, t->beta, got, (int)SC.ld);
    assert_int_equal(g_xerbla.calls + g_cblas_xerbla.calls, 0);
    check_last_trace_line(t);
    check_special(name, &p, got, want, bound, exact, seed);
    free(name);
    free(A), free(B), free(got), free(want), free(bound);
}

static void test_blas_special(void **state)
{
    if (g_require_gpu)
        REQUIRE_GPU();
    const blas_case_t *t = *state;
    run_special_case(t, true);
    run_special_case(t, false);
}

/* ---------------------------------------------------------------- scenarios */

enum { kMaxTests = 512 };
static struct CMUnitTest g_tests[kMaxTests];
static size_t g_ntests;
static blas_case_t g_cases[kMaxTests];

static void add_test(const char *name, CMUnitTestFunction fn, void *state)
{
    if (g_ntests == kMaxTests)
        table_overflow("tests", kMaxTests);
    g_tests[g_ntests++] = (struct CMUnitTest){name, fn, NULL, NULL, state};
}

static void add_cases(int max_dim)
{
    const size_t n = build_cases(g_cases, kMaxTests, max_dim);
    for (size_t i = 0; i < n; ++i)
        add_test(blas_case_name(&g_cases[i]), g_cases[i].special ? test_blas_special : test_blas_case, &g_cases[i]);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s SCENARIO (see the comment at the top of tests/test_blas.c)\n", argv[0]);
        return 2;
    }
    const char *sc = argv[1];
    if (strcmp(sc, "checks") == 0) {
        for (size_t i = 0; i < sizeof kF77Bad / sizeof kF77Bad[0]; ++i)
            add_test(xstrdup_printf("sgemm_bad_%s", kF77Bad[i].name), test_f77_bad, (void *)&kF77Bad[i]);
        for (size_t i = 0; i < sizeof kCblasBad / sizeof kCblasBad[0]; ++i)
            add_test(xstrdup_printf("cblas_bad_%s", kCblasBad[i].name), test_cblas_bad, (void *)&kCblasBad[i]);
        add_test("quick_returns", test_quick_returns, NULL);
    } else if (strcmp(sc, "forward") == 0 || strcmp(sc, "fallback") == 0) {
        g_check = CHECK_BITWISE;
        g_expected_path = strcmp(sc, "forward") == 0 ? path_cpu : path_fallback;
        if (strcmp(sc, "fallback") == 0) {
            g_warning_needle = "TGEMM_OFFLOAD=gpu";
            capture_stderr();
        }
        add_cases(1 << 30);
        add_test("trace", test_trace, NULL);
        if (strcmp(sc, "forward") == 0)
            add_test("cuda_untouched", test_cuda_untouched, NULL);
        else
            add_test("one_warning", test_one_warning, NULL);
    } else if (strcmp(sc, "auto") == 0 || strcmp(sc, "auto-cpu") == 0) {
        g_check = CHECK_BOUND;
        g_expected_path = path_auto;
        add_cases(1 << 30);
        add_test("trace", test_trace, NULL);
        if (strcmp(sc, "auto-cpu") == 0) {
            add_test("all_on_cpu", test_all_on_cpu, NULL);
            add_test("cuda_untouched", test_cuda_untouched, NULL);
        }
    } else if (strcmp(sc, "auto-unusable-gpu") == 0) {
        add_test("auto_learns_unusable_gpu", test_auto_learns_unusable_gpu, NULL);
    } else if (strcmp(sc, "builtin") == 0 || strcmp(sc, "bad-setting") == 0) {
        const bool builtin = strcmp(sc, "builtin") == 0;
        g_check = builtin ? CHECK_BOUND : CHECK_BITWISE;
        /* TGEMM_TEST_WARNING: the variable a bad-setting run must name. */
        const char *named = getenv("TGEMM_TEST_WARNING");
        g_warning_needle = builtin ? "TGEMM_CPU_BLAS" : named && *named ? named : "TGEMM_OFFLOAD";
        if (builtin)
            g_expected_path = path_builtin; /* the special-value rows' trace lines; no test_trace */
        capture_stderr();
        add_cases(builtin ? 130 : 1 << 30);
        add_test("one_warning", test_one_warning, NULL);
    } else if (strcmp(sc, "gpu") == 0) {
        g_check = CHECK_BOUND;
        g_require_gpu = true;
        g_expected_path = path_gpu;
        g_alpha0_path = "path=gpu ";
        add_cases(1 << 30);
        add_test("trace", test_trace, NULL);
    } else {
        fprintf(stderr, "unknown scenario '%s'\n", sc);
        return 2;
    }
    const char *group = xstrdup_printf("tgemm_blas_%s", sc);
    return run_group(group, g_tests, g_ntests) ? 1 : 0;
}
