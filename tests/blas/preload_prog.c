/* An ordinary BLAS program: linked against OpenBLAS only, knowing nothing of
 * tgemm. `make test-preload` runs it plain and with LD_PRELOAD=libtgemm.so.
 *
 *   preload_prog exact       results must equal OpenBLAS's bit for bit
 *                            (plain, or preloaded and forwarded to OpenBLAS)
 *   preload_prog bound       results within the dot-product error bound of
 *                            OpenBLAS's (preloaded, on the GPU)
 *   preload_prog exact|bound reference
 *                            also: bad calls reach this program's xerbla_ /
 *                            cblas_xerbla with reference BLAS / CBLAS numbers,
 *                            and cblas_sgemm keeps the program's RowMajorStrg
 *                            as reference CBLAS does, also while another
 *                            thread makes valid calls (only under tgemm:
 *                            OpenBLAS numbers cblas_sgemm's arguments its own
 *                            way and has no RowMajorStrg). cblas_sgemm's
 *                            dimension errors come from the SGEMM reference
 *                            cblas_sgemm calls: to xerbla_ ("SGEMM ", that
 *                            call's number) where the program defines one;
 *                            built with -DCBLAS_XERBLA_ONLY (no xerbla_), to
 *                            cblas_xerbla (number + 1, "cblas_sgemm "), as
 *                            reference CBLAS's own xerbla_ passes them, and
 *                            sgemm_'s bad calls are not made
 *   preload_prog             (built with -DNO_HANDLERS) as `exact`, then bad
 *                            calls print the reference messages and the
 *                            program goes on
 *
 * The program defines reference CBLAS's global RowMajorStrg (OpenBLAS has
 * none); it is linked with -Wl,--export-dynamic-symbol=RowMajorStrg so that
 * a preloaded libtgemm finds it, as it finds reference CBLAS's in a program
 * linked against reference CBLAS.
 *
 * The reference is OpenBLAS itself, reached with dlopen + dlsym, which finds
 * OpenBLAS's own functions even when libtgemm interposes sgemm_ and
 * cblas_sgemm in the global scope.
 */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The two entry points, as the program's BLAS declares them. */
void sgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k, const float *alpha,
            const float *A, const int *lda, const float *B, const int *ldb, const float *beta, float *C,
            const int *ldc, size_t transa_len, size_t transb_len);
void cblas_sgemm(int layout, int TransA, int TransB, int M, int N, int K, float alpha, const float *A, int lda,
                 const float *B, int ldb, float beta, float *C, int ldc);
#include "bad_calls.h"

typedef void (*sgemm_fn)(const char *, const char *, const int *, const int *, const int *, const float *,
                         const float *, const int *, const float *, const int *, const float *, float *, const int *,
                         size_t, size_t);
typedef void (*cblas_sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *, int, float,
                               float *, int);
typedef void (*cblas_dgemm_fn)(int, int, int, int, int, int, double, const double *, int, const double *, int,
                               double, double *, int);

static sgemm_fn ref_sgemm;
static cblas_sgemm_fn ref_cblas_sgemm;
static cblas_dgemm_fn ref_cblas_dgemm;
static int failures;

static void load_reference(void)
{
    void *h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "preload_prog: cannot load libopenblas.so.0: %s\n", dlerror());
        exit(2);
    }
    *(void **)&ref_sgemm = dlsym(h, "sgemm_");
    *(void **)&ref_cblas_sgemm = dlsym(h, "cblas_sgemm");
    *(void **)&ref_cblas_dgemm = dlsym(h, "cblas_dgemm");
    if (!ref_sgemm || !ref_cblas_sgemm || !ref_cblas_dgemm) {
        fprintf(stderr, "preload_prog: OpenBLAS lacks sgemm_, cblas_sgemm or cblas_dgemm\n");
        exit(2);
    }
}

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "preload_prog: out of memory\n");
        exit(2);
    }
    return p;
}

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;

static float uniform(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (float)((double)(g_rng >> 11) * 0x1.0p-52 - 1.0);
}

/* ---------------------------------------------------------------- results */

typedef enum { ENTRY_F77, ENTRY_CBLAS_COL, ENTRY_CBLAS_ROW } entry_t;
static const char *const kEntryName[] = {"sgemm_", "cblas_sgemm col-major", "cblas_sgemm row-major"};

typedef struct {
    entry_t entry;
    char ta, tb; /* sgemm_ characters; CBLAS: N -> 111, T -> 112, C -> 113 */
    int m, n, k;
    float alpha, beta;
} case_t;

static int cblas_op(char c)
{
    return c == 'N' || c == 'n' ? 111 : c == 'T' || c == 't' ? 112 : 113;
}

static bool is_trans(char c)
{
    return c != 'N' && c != 'n';
}

/* Stored rows and columns of a matrix that is used as `rows` x `cols`
 * (op applied) in a given layout: {inner, outer}. */
static void stored(bool col, bool trans, int rows, int cols, int *inner, int *outer)
{
    const bool inner_is_rows = col != trans;
    *inner = inner_is_rows ? rows : cols;
    *outer = inner_is_rows ? cols : rows;
}

static void run_case(const case_t *t, bool exact)
{
    const bool col = t->entry != ENTRY_CBLAS_ROW;
    int ai, ao, bi, bo, ci, co;
    stored(col, is_trans(t->ta), t->m, t->k, &ai, &ao);
    stored(col, is_trans(t->tb), t->k, t->n, &bi, &bo);
    stored(col, false, t->m, t->n, &ci, &co);
    const int lda = (ai > 1 ? ai : 1) + 1, ldb = (bi > 1 ? bi : 1) + 2, ldc = (ci > 1 ? ci : 1) + 3;
    const size_t na = (size_t)lda * (size_t)ao, nb = (size_t)ldb * (size_t)bo, nc = (size_t)ldc * (size_t)co;
    float *A = xmalloc(na * sizeof *A), *B = xmalloc(nb * sizeof *B);
    float *C0 = xmalloc(nc * sizeof *C0), *got = xmalloc(nc * sizeof *got), *ref = xmalloc(nc * sizeof *ref);
    for (size_t i = 0; i < na; ++i)
        A[i] = uniform();
    for (size_t i = 0; i < nb; ++i)
        B[i] = uniform();
    /* beta == 0 must not read C: NaN there shows a read. */
    for (size_t i = 0; i < nc; ++i)
        C0[i] = t->beta == 0.0f ? NAN : uniform();
    memcpy(got, C0, nc * sizeof *got);
    memcpy(ref, C0, nc * sizeof *ref);

    const char tas[2] = {t->ta, 0}, tbs[2] = {t->tb, 0};
    if (t->entry == ENTRY_F77) {
        sgemm_(tas, tbs, &t->m, &t->n, &t->k, &t->alpha, A, &lda, B, &ldb, &t->beta, got, &ldc, 1, 1);
        ref_sgemm(tas, tbs, &t->m, &t->n, &t->k, &t->alpha, A, &lda, B, &ldb, &t->beta, ref, &ldc, 1, 1);
    } else {
        const int layout = col ? 102 : 101;
        cblas_sgemm(layout, cblas_op(t->ta), cblas_op(t->tb), t->m, t->n, t->k, t->alpha, A, lda, B, ldb, t->beta,
                    got, ldc);
        ref_cblas_sgemm(layout, cblas_op(t->ta), cblas_op(t->tb), t->m, t->n, t->k, t->alpha, A, lda, B, ldb,
                        t->beta, ref, ldc);
    }

    /* The bound: |alpha| |op(A)| |op(B)| + |beta| |C0|, in double. */
    double *bound = NULL;
    if (!exact) {
        double *a = xmalloc(na * sizeof *a), *b = xmalloc(nb * sizeof *b);
        bound = xmalloc(nc * sizeof *bound);
        for (size_t i = 0; i < na; ++i)
            a[i] = fabs((double)A[i]);
        for (size_t i = 0; i < nb; ++i)
            b[i] = fabs((double)B[i]);
        for (size_t i = 0; i < nc; ++i)
            bound[i] = t->beta == 0.0f ? 0.0 : fabs((double)t->beta * (double)C0[i]);
        ref_cblas_dgemm(col ? 102 : 101, is_trans(t->ta) ? 112 : 111, is_trans(t->tb) ? 112 : 111, t->m, t->n, t->k,
                        fabs((double)t->alpha), a, lda, b, ldb, 1.0, bound, ldc);
        free(a);
        free(b);
    }
    const double u = 0x1.0p-24, nu = (double)(t->k + 2) * u, gamma = nu / (1.0 - nu);
    int bad = 0;
    for (int o = 0; o < co && bad < 3; ++o) {
        for (int i = 0; i < ldc && bad < 3; ++i) {
            const size_t at = (size_t)o * (size_t)ldc + (size_t)i;
            bool ok;
            if (i >= ci)
                ok = memcmp(&got[at], &C0[at], sizeof(float)) == 0; /* padding untouched */
            else if (exact)
                ok = memcmp(&got[at], &ref[at], sizeof(float)) == 0;
            else
                ok = fabs((double)got[at] - (double)ref[at]) <= 2.0 * gamma * bound[at];
            if (!ok) {
                fprintf(stderr, "FAIL %s %c%c %dx%dx%d: element (inner %d, outer %d) = %.9g, OpenBLAS %.9g\n",
                        kEntryName[t->entry], t->ta, t->tb, t->m, t->n, t->k, i, o, (double)got[at], (double)ref[at]);
                bad++;
            }
        }
    }
    failures += bad;
    free(A);
    free(B);
    free(C0);
    free(got);
    free(ref);
    free(bound);
}

/* Every entry point with every transpose pair (characters in both cases,
 * ConjTrans for CBLAS) on small and odd shapes, then large shapes, above
 * the default automatic threshold, for a few pairs. */
static int run_all(bool exact)
{
    static const int kSmall[][3] = {{1, 1, 1}, {3, 5, 7}, {64, 64, 64}, {129, 65, 33}};
    static const int kLarge[][3] = {{520, 530, 540}, {1024, 1024, 1024}};
    static const char kN[] = "Nn", kT[] = "TtCc";
    int cases = 0;
    for (int e = ENTRY_F77; e <= ENTRY_CBLAS_ROW; ++e) {
        for (int pair = 0; pair < 4; ++pair) {
            for (size_t s = 0; s < sizeof kSmall / sizeof kSmall[0]; ++s) {
                const int v = e + pair + (int)s;
                case_t t = {(entry_t)e, (pair & 2) ? kT[v % 4] : kN[v % 2], (pair & 1) ? kT[(v + 1) % 4] : kN[(v + 1) % 2],
                            kSmall[s][0], kSmall[s][1], kSmall[s][2], v % 3 ? 1.0f : -0.5f, v % 2 ? 0.0f : 1.5f};
                run_case(&t, exact);
                cases++;
            }
        }
        for (size_t s = 0; s < sizeof kLarge / sizeof kLarge[0]; ++s) {
            case_t t = {(entry_t)e, s ? 'T' : 'N', e == ENTRY_CBLAS_ROW ? 'T' : 'N', kLarge[s][0], kLarge[s][1],
                        kLarge[s][2], 1.0f, s ? 0.0f : 2.0f};
            run_case(&t, exact);
            cases++;
        }
    }
    return cases;
}

/* ---------------------------------------------------------------- errors */

/* Reference CBLAS's global: 1 while a row-major cblas_sgemm reports an
 * error, else 0, and 0 after every bad call. */
int RowMajorStrg;

#ifndef NO_HANDLERS
static int g_xerbla_calls, g_xerbla_info, g_xerbla_row_major, g_cblas_calls, g_cblas_info, g_cblas_row_major;
static char g_xerbla_name[16], g_cblas_rout[32];

void cblas_xerbla(int info, const char *rout, const char *form, ...);

/* Reference cblas_xerbla's mapping of a gemm's numbers under RowMajorStrg
 * (an involution): the caller's argument from the swapped call's, and back. */
static int gemm_row_major_map(int info)
{
    return info == 4 || info == 5 ? 9 - info : info == 9 || info == 11 ? 20 - info : info;
}

#ifndef CBLAS_XERBLA_ONLY
void xerbla_(const char *srname, const int *info, size_t srname_len);

void xerbla_(const char *srname, const int *info, size_t srname_len)
{
    g_xerbla_calls++;
    g_xerbla_info = *info;
    g_xerbla_row_major = RowMajorStrg;
    snprintf(g_xerbla_name, sizeof g_xerbla_name, "%.*s", (int)srname_len, srname);
}
#endif

/* Reference cblas_xerbla's way: under RowMajorStrg, a gemm's numbers are
 * those of the column-major call a row-major call becomes (M and N, lda and
 * ldb swapped) and are mapped back to the caller's arguments. */
void cblas_xerbla(int info, const char *rout, const char *form, ...)
{
    (void)form;
    g_cblas_calls++;
    g_cblas_row_major = RowMajorStrg;
    g_cblas_info = RowMajorStrg && strstr(rout, "gemm") != NULL ? gemm_row_major_map(info) : info;
    snprintf(g_cblas_rout, sizeof g_cblas_rout, "%s", rout);
}

/* Each bad call must reach exactly one handler with the reference number
 * (when `numbers`: the handler `cblas` names, cblas_xerbla under the name
 * `rout` with the caller's argument once mapped, or xerbla_ ("SGEMM ")
 * with SGEMM's number; for a cblas_sgemm call, RowMajorStrg `row_major` in
 * the handler, and 0 after the call) and leave C alone. */
static void expect_error(const char *what, bool cblas, const char *rout, int want, int row_major, bool numbers,
                         float *c, size_t nc)
{
    const int calls = g_xerbla_calls + g_cblas_calls;
    const int info = cblas ? g_cblas_info : g_xerbla_info;
    const int handler_row_major = cblas ? g_cblas_row_major : g_xerbla_row_major;
    bool ok = calls == 1;
    if (numbers)
        ok = ok && (cblas ? g_cblas_calls == 1 && strcmp(g_cblas_rout, rout) == 0
                          : g_xerbla_calls == 1 && strcmp(g_xerbla_name, "SGEMM ") == 0) &&
             info == want && (row_major < 0 || (handler_row_major == row_major && RowMajorStrg == 0));
    for (size_t i = 0; i < nc; ++i) {
        ok = ok && c[i] == -7.0f;
        c[i] = -7.0f;
    }
    if (!ok) {
        fprintf(stderr,
                "FAIL error %s: xerbla_ %d call(s) info %d with RowMajorStrg %d, cblas_xerbla %d call(s) info %d "
                "('%s') with RowMajorStrg %d, RowMajorStrg %d after; want %s info %d%s\n",
                what, g_xerbla_calls, g_xerbla_info, g_xerbla_row_major, g_cblas_calls, g_cblas_info, g_cblas_rout,
                g_cblas_row_major, RowMajorStrg, cblas ? rout : "SGEMM ", want,
                row_major < 0 ? "" : (row_major ? " with RowMajorStrg 1, 0 after" : " with RowMajorStrg 0, 0 after"));
        failures++;
    }
    g_xerbla_calls = g_xerbla_info = g_xerbla_row_major = g_cblas_calls = g_cblas_info = g_cblas_row_major = 0;
    g_cblas_rout[0] = '\0';
}


/* A bad cblas_sgemm call, `want` the caller's argument. RowMajorStrg starts
 * at the value reference cblas_sgemm does not give it during the call: 0
 * before a row-major call (a program that never sets it), 1 before the
 * others. `dims`: an error SGEMM's own checks find (M, N, K, lda, ldb,
 * ldc), reported through the SGEMM reference cblas_sgemm calls. */
static void bad_cblas(const char *what, int want, bool dims, bool numbers, float *c, int layout, int ta, int tb,
                      int m, int n, int k, const float *a, int lda, const float *b, int ldb, int ldc)
{
    const int row_major = layout == 101;
    RowMajorStrg = !row_major;
    cblas_sgemm(layout, ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 1.0f, c, ldc);
#ifdef CBLAS_XERBLA_ONLY
    expect_error(what, true, dims ? "cblas_sgemm " : "cblas_sgemm", want, row_major, numbers, c, 64);
#else
    if (dims)
        expect_error(what, false, "", (row_major ? gemm_row_major_map(want) : want) - 1, row_major, numbers, c, 64);
    else
        expect_error(what, true, "cblas_sgemm", want, row_major, numbers, c, 64);
#endif
}

static void run_errors(bool numbers)
{
    float a[64], b[64], c[64];
    for (int i = 0; i < 64; ++i) {
        a[i] = b[i] = 1.0f;
        c[i] = -7.0f;
    }
    const float one = 1.0f;
    int m = 4, n = 3, k = 2, lda = 4, ldb = 2, ldc = 4, neg = -1, small = 1;
#ifndef CBLAS_XERBLA_ONLY
    sgemm_("X", "N", &m, &n, &k, &one, a, &lda, b, &ldb, &one, c, &ldc, 1, 1);
    expect_error("sgemm_ transa", false, "", 1, -1, numbers, c, 64);
    sgemm_("n", "q", &m, &n, &k, &one, a, &lda, b, &ldb, &one, c, &ldc, 1, 1);
    expect_error("sgemm_ transb", false, "", 2, -1, numbers, c, 64);
    sgemm_("N", "N", &neg, &n, &k, &one, a, &lda, b, &ldb, &one, c, &ldc, 1, 1);
    expect_error("sgemm_ m", false, "", 3, -1, numbers, c, 64);
    sgemm_("N", "N", &m, &neg, &k, &one, a, &lda, b, &ldb, &one, c, &ldc, 1, 1);
    expect_error("sgemm_ n", false, "", 4, -1, numbers, c, 64);
    sgemm_("N", "N", &m, &n, &neg, &one, a, &lda, b, &ldb, &one, c, &ldc, 1, 1);
    expect_error("sgemm_ k", false, "", 5, -1, numbers, c, 64);
    sgemm_("N", "N", &m, &n, &k, &one, a, &small, b, &ldb, &one, c, &ldc, 1, 1);
    expect_error("sgemm_ lda", false, "", 8, -1, numbers, c, 64);
    sgemm_("N", "t", &m, &n, &k, &one, a, &lda, b, &ldb, &one, c, &ldc, 1, 1);
    expect_error("sgemm_ ldb", false, "", 10, -1, numbers, c, 64);
    sgemm_("N", "N", &m, &n, &k, &one, a, &lda, b, &ldb, &one, c, &small, 1, 1);
    expect_error("sgemm_ ldc", false, "", 13, -1, numbers, c, 64);
    sgemm_("N", "N", &neg, &n, &k, &one, a, &small, b, &small, &one, c, &small, 1, 1);
    expect_error("sgemm_ m before lda", false, "", 3, -1, numbers, c, 64);
#else
    (void)one, (void)m, (void)n, (void)k, (void)lda, (void)ldb, (void)ldc, (void)neg, (void)small;
#endif

    bad_cblas("cblas layout", 1, false, numbers, c, 7, 111, 111, 4, 3, 2, a, 4, b, 2, 4);
    bad_cblas("cblas col TransA", 2, false, numbers, c, 102, 5, 111, 4, 3, 2, a, 4, b, 2, 4);
    /* 115: OpenBLAS takes 114 (its CblasConjNoTrans) as N, reference CBLAS rejects it. */
    bad_cblas("cblas row TransB", 3, false, numbers, c, 101, 111, 115, 4, 3, 2, a, 2, b, 3, 3);
    bad_cblas("cblas col M", 4, true, numbers, c, 102, 111, 111, -1, 3, 2, a, 4, b, 2, 4);
    bad_cblas("cblas col N", 5, true, numbers, c, 102, 111, 111, 4, -1, 2, a, 4, b, 2, 4);
    bad_cblas("cblas col lda", 9, true, numbers, c, 102, 111, 111, 4, 3, 2, a, 3, b, 2, 4);
    bad_cblas("cblas col ldb", 11, true, numbers, c, 102, 111, 111, 4, 3, 2, a, 4, b, 1, 4);
    bad_cblas("cblas col ldc", 14, true, numbers, c, 102, 111, 111, 4, 3, 2, a, 4, b, 2, 3);
    bad_cblas("cblas row N before M", 5, true, numbers, c, 101, 111, 111, -1, -1, 2, a, 2, b, 3, 3);
    bad_cblas("cblas row M", 4, true, numbers, c, 101, 111, 111, -1, 3, 2, a, 2, b, 3, 3);
    bad_cblas("cblas row lda", 9, true, numbers, c, 101, 111, 111, 4, 3, 2, a, 1, b, 3, 3);
    bad_cblas("cblas row ldb before lda", 11, true, numbers, c, 101, 111, 111, 4, 3, 2, a, 1, b, 2, 3);
    bad_cblas("cblas row ldc", 14, true, numbers, c, 101, 111, 111, 4, 3, 2, a, 2, b, 3, 2);
    /* tgemm's own checks: a NULL operand it must read is reported as the
     * caller's argument (8 A, 10 B, 13 C), which the mapping leaves alone. */
    if (numbers) {
        bad_cblas("cblas row NULL A", 8, false, numbers, c, 101, 111, 111, 4, 3, 2, NULL, 2, b, 3, 3);
        bad_cblas("cblas row NULL B", 10, false, numbers, c, 101, 111, 111, 4, 3, 2, a, 2, NULL, 3, 3);
        bad_cblas("cblas col NULL A", 8, false, numbers, c, 102, 111, 111, 4, 3, 2, NULL, 4, b, 2, 4);
    }
}

/* The same under calls from another thread: while one thread makes valid
 * calls in both layouts, every bad call of this one must still reach its
 * handler with its own layout's RowMajorStrg (tgemm writes the global only
 * while it reports an error, under a lock). */
static volatile int g_stop_valid_calls;

static void *valid_calls(void *arg)
{
    (void)arg;
    float a[4] = {1.0f, 2.0f, 3.0f, 4.0f}, b[4] = {1.0f, 0.5f, 0.25f, 2.0f}, c[4];
    while (!g_stop_valid_calls) {
        cblas_sgemm(101, 111, 111, 2, 2, 2, 1.0f, a, 2, b, 2, 0.0f, c, 2);
        cblas_sgemm(102, 111, 111, 2, 2, 2, 1.0f, a, 2, b, 2, 0.0f, c, 2);
    }
    return NULL;
}

static void run_errors_beside_valid_calls(void)
{
    float a[64], b[64], c[64];
    for (int i = 0; i < 64; ++i) {
        a[i] = b[i] = 1.0f;
        c[i] = -7.0f;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, valid_calls, NULL) != 0) {
        fprintf(stderr, "FAIL pthread_create\n");
        failures++;
        return;
    }
    const int before = failures;
    for (int i = 0; i < 2000 && failures == before; ++i) {
        bad_cblas("cblas row TransA beside valid calls", 2, false, true, c, 101, 5, 111, 4, 3, 2, a, 2, b, 3, 3);
        bad_cblas("cblas col TransB beside valid calls", 3, false, true, c, 102, 111, 5, 4, 3, 2, a, 4, b, 2, 4);
    }
    g_stop_valid_calls = 1;
    pthread_join(t, NULL);
}
#else
/* No handlers: the library's defaults print the reference messages (the
 * caller's argument numbers) and return; the program must go on, C must be
 * untouched and RowMajorStrg 0 after each cblas_sgemm call. */
static int g_after_layout;
static void set_row_major_strg(void)
{
    RowMajorStrg = 1;
}
static void record_row_major_strg(void)
{
    g_after_layout = RowMajorStrg;
}

static void run_errors_without_handlers(void)
{
    if (!bad_calls_leave_c(set_row_major_strg, record_row_major_strg)) {
        fprintf(stderr, "FAIL a bad call wrote C\n");
        failures++;
    }
    if (g_after_layout != 0 || RowMajorStrg != 0) {
        fprintf(stderr, "FAIL RowMajorStrg after the bad calls: %d and %d, want 0\n", g_after_layout, RowMajorStrg);
        failures++;
    }
}
#endif

int main(int argc, char **argv)
{
    load_reference();
#ifdef NO_HANDLERS
    (void)argc;
    (void)argv;
    const int cases = run_all(true);
    run_errors_without_handlers();
    printf("preload_prog nohandlers: %d products bit for bit OpenBLAS's, the program went on after every bad "
           "call: %s\n", cases, failures ? "FAILED" : "OK");
    return failures ? 1 : 0;
#else
    if (argc < 2 || (strcmp(argv[1], "exact") != 0 && strcmp(argv[1], "bound") != 0)) {
        fprintf(stderr, "usage: %s exact|bound [reference]\n", argv[0]);
        return 2;
    }
    const bool exact = strcmp(argv[1], "exact") == 0;
    const bool numbers = argc > 2 && strcmp(argv[2], "reference") == 0;
    const int cases = run_all(exact);
    run_errors(numbers);
    if (numbers)
        run_errors_beside_valid_calls();
    printf("preload_prog %s%s: %d products %s, bad calls checked%s: %s\n", argv[1], numbers ? " reference" : "", cases,
           exact ? "bit for bit OpenBLAS's" : "within the error bound of OpenBLAS's",
           numbers ? " with reference numbers" : "", failures ? "FAILED" : "OK");
    return failures ? 1 : 0;
#endif
}
