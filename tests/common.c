#include "common.h"

#include "gpu_probe.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

uint64_t rng_next(rng_t *r)
{
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

float rng_uniform(rng_t *r)
{
    return (float)((double)(rng_next(r) >> 11) * 0x1.0p-52 - 1.0);
}

float rng_small_int(rng_t *r)
{
    return (float)((int)(rng_next(r) % 7) - 3);
}

uint64_t test_base_seed(void)
{
    static uint64_t seed;
    static bool have;
    if (!have) {
        const char *e = getenv("TGEMM_TEST_SEED");
        if (e && *e) {
            seed = strtoull(e, NULL, 0);
        } else {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            seed = (uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec;
        }
        have = true;
        printf("[ seed     ] TGEMM_TEST_SEED=0x%016llx repeats this run\n", (unsigned long long)seed);
        fflush(stdout);
    }
    return seed;
}

uint64_t test_seed_for(uint64_t case_index)
{
    rng_t r = {test_base_seed() ^ (case_index * 0xD1B54A32D192ED03ull)};
    return rng_next(&r);
}

/* The reason GPU cases skip, printed once per process for make test's
 * summary (tests/run.sh), not once per case. */
static void announce_skip(void)
{
    const char *why;
    if (gpu_probe(&why) == GPU_PROBE_ABSENT) {
        printf("[ SKIPPING ] GPU cases: %s\n", why);
        fflush(stdout);
    }
}

bool gpu_available(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, announce_skip);
    const char *why;
    switch (gpu_probe(&why)) {
    case GPU_PROBE_PRESENT: return true;
    case GPU_PROBE_ABSENT: return false;
    case GPU_PROBE_BROKEN: break;
    }
    fail_msg("no usable GPU: %s", why);
    return false;
}

/* ---------------------------------------------------------------- OpenBLAS */

typedef void (*cblas_sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *, int,
                               float, float *, int);
typedef void (*sgemm_f77_fn)(const char *, const char *, const int *, const int *, const int *, const float *,
                             const float *, const int *, const float *, const int *, const float *, float *,
                             const int *, size_t, size_t);
typedef void (*cblas_dgemm_fn)(int, int, int, int, int, int, double, const double *, int, const double *,
                               int, double, double *, int);

static void *openblas(void)
{
    static void *h;
    if (!h) {
        const char *names[] = {"libopenblas.so.0", "libopenblas.so", "libopenblasp.so.0"};
        for (size_t i = 0; i < sizeof names / sizeof names[0] && !h; ++i)
            h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "tests: cannot load OpenBLAS (libopenblas.so.0): %s\n", dlerror());
            abort();
        }
    }
    return h;
}

static void *openblas_sym(const char *name)
{
    void *f = dlsym(openblas(), name);
    if (!f) {
        fprintf(stderr, "tests: OpenBLAS lacks %s\n", name);
        abort();
    }
    return f;
}

void ref_sgemm(int layout, int ta, int tb, int m, int n, int k, float alpha, const float *A, int lda,
               const float *B, int ldb, float beta, float *C, int ldc)
{
    static cblas_sgemm_fn f;
    if (!f)
        *(void **)&f = openblas_sym("cblas_sgemm");
    f(layout, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

void ref_sgemm_f77(const char *ta, const char *tb, int m, int n, int k, float alpha, const float *A, int lda,
                   const float *B, int ldb, float beta, float *C, int ldc)
{
    static sgemm_f77_fn f;
    if (!f)
        *(void **)&f = openblas_sym("sgemm_");
    f(ta, tb, &m, &n, &k, &alpha, A, &lda, B, &ldb, &beta, C, &ldc, 1, 1);
}

void ref_dgemm(int layout, int ta, int tb, int m, int n, int k, double alpha, const double *A, int lda,
               const double *B, int ldb, double beta, double *C, int ldc)
{
    static cblas_dgemm_fn f;
    if (!f)
        *(void **)&f = openblas_sym("cblas_dgemm");
    f(layout, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

/* ---------------------------------------------------------------- shapes */

size_t shape_elems(shape_t s)
{
    return (size_t)(s.ld * (s.outer > 0 ? s.outer : 1));
}

shape_t shape_of_a(bool col_major, bool trans, int64_t m, int64_t k, int64_t ld)
{
    const bool inner_is_m = col_major != trans;
    shape_t s = {inner_is_m ? m : k, inner_is_m ? k : m, ld};
    return s;
}

shape_t shape_of_b(bool col_major, bool trans, int64_t k, int64_t n, int64_t ld)
{
    const bool inner_is_k = col_major != trans;
    shape_t s = {inner_is_k ? k : n, inner_is_k ? n : k, ld};
    return s;
}

shape_t shape_of_c(bool col_major, int64_t m, int64_t n, int64_t ld)
{
    shape_t s = {col_major ? m : n, col_major ? n : m, ld};
    return s;
}

shape_t shape_padded(shape_t s, int64_t pad)
{
    s.ld = (s.inner > 1 ? s.inner : 1) + pad;
    return s;
}

shapes_t shapes_of_call(bool col_major, bool ta, bool tb, int64_t m, int64_t n, int64_t k, int64_t pad_a,
                        int64_t pad_b, int64_t pad_c)
{
    shapes_t s = {shape_padded(shape_of_a(col_major, ta, m, k, 0), pad_a),
                  shape_padded(shape_of_b(col_major, tb, k, n, 0), pad_b),
                  shape_padded(shape_of_c(col_major, m, n, 0), pad_c)};
    return s;
}

static float float_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

float poison_pad(void) { return float_from_bits(0x7FC0DEADu); }
float poison_c(void) { return float_from_bits(0x7FC0C0DEu); }

bool same_bits(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

void fill_matrix(float *x, shape_t s, rng_t *r, bool exact)
{
    for (int64_t o = 0; o < s.outer; ++o)
        for (int64_t i = 0; i < s.ld; ++i)
            x[o * s.ld + i] = i < s.inner ? (exact ? rng_small_int(r) : rng_uniform(r)) : poison_pad();
}

void fill_constant(float *x, shape_t s, float v)
{
    for (int64_t o = 0; o < s.outer; ++o)
        for (int64_t i = 0; i < s.ld; ++i)
            x[o * s.ld + i] = i < s.inner ? v : poison_pad();
}

void fill_operands(float *A, shape_t SA, float *B, shape_t SB, float *C0, shape_t SC, float beta, rng_t *r,
                   bool exact)
{
    fill_matrix(A, SA, r, exact);
    fill_matrix(B, SB, r, exact);
    if (beta != 0.0f)
        fill_matrix(C0, SC, r, exact);
    else
        fill_constant(C0, SC, poison_c());
}

/* ---------------------------------------------------------------- checking */

/* x's region in double (each FP32 value exactly), |x| where `magnitude`;
 * padding 0. */
static double *double_copy(const float *x, shape_t s, bool magnitude)
{
    double *d = xmalloc(shape_elems(s) * sizeof *d);
    for (int64_t o = 0; o < s.outer; ++o)
        for (int64_t i = 0; i < s.ld; ++i) {
            const double v = i < s.inner ? (double)x[o * s.ld + i] : 0.0;
            d[o * s.ld + i] = magnitude ? fabs(v) : v;
        }
    return d;
}

/* alpha op(A) op(B) + beta C0 in double by OpenBLAS's dgemm, or with the
 * magnitudes of everything where `magnitude`; C0 is not read where beta == 0. */
static double *double_product(bool magnitude, bool col_major, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                              float alpha, const float *A, shape_t sa, const float *B, shape_t sb, float beta,
                              const float *C0, shape_t sc)
{
    double *c = xmalloc(shape_elems(sc) * sizeof *c);
    for (int64_t o = 0; o < sc.outer; ++o)
        for (int64_t i = 0; i < sc.ld; ++i) {
            const double v = (i < sc.inner && beta != 0.0f) ? (double)beta * C0[o * sc.ld + i] : 0.0;
            c[o * sc.ld + i] = magnitude ? fabs(v) : v;
        }
    if (alpha != 0.0f && k > 0) {
        double *a = double_copy(A, sa, magnitude), *b = double_copy(B, sb, magnitude);
        ref_dgemm(col_major ? REF_COL_MAJOR : REF_ROW_MAJOR, ta ? REF_T : REF_N, tb ? REF_T : REF_N, (int)m,
                  (int)n, (int)k, magnitude ? fabs((double)alpha) : (double)alpha, a, (int)sa.ld, b, (int)sb.ld,
                  1.0, c, (int)sc.ld);
        free(a);
        free(b);
    }
    return c;
}

double *error_bound(bool col_major, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
                    const float *A, shape_t sa, const float *B, shape_t sb, float beta, const float *C0,
                    shape_t sc)
{
    return double_product(true, col_major, ta, tb, m, n, k, alpha, A, sa, B, sb, beta, C0, sc);
}

double *fp64_reference(bool col_major, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
                       const float *A, shape_t sa, const float *B, shape_t sb, float beta, const float *C0,
                       shape_t sc)
{
    return double_product(false, col_major, ta, tb, m, n, k, alpha, A, sa, B, sb, beta, C0, sc);
}

double gamma_k2(int64_t k)
{
    const double nu = (double)(k + 2) * 0x1.0p-24;
    return nu / (1.0 - nu);
}

double fp64_slack(int64_t k)
{
    return (double)(k + 2) * 0x1.0p-52;
}

/* Whether element (inner i, outer o) lies in C's padding, which must still
 * be poison_pad(). */
static bool in_checked_padding(const char *what, const float *c, shape_t sc, int64_t i, int64_t o, uint64_t seed)
{
    if (i < sc.inner)
        return false;
    if (!same_bits(c[o * sc.ld + i], poison_pad()))
        fail_msg("%s: padding element (inner %lld, outer %lld) was written (seed 0x%016llx)", what, (long long)i,
                 (long long)o, (unsigned long long)seed);
    return true;
}

void check_c_fp64(const char *what, const float *c, const double *want, const double *bound, shape_t sc, int64_t k,
                  uint64_t seed)
{
    const double gamma = gamma_k2(k), slack = fp64_slack(k);
    for (int64_t o = 0; o < sc.outer; ++o)
        for (int64_t i = 0; i < sc.ld; ++i) {
            const size_t at = (size_t)(o * sc.ld + i);
            if (in_checked_padding(what, c, sc, i, o, seed))
                continue;
            const double allowed = (gamma + slack) * bound[at];
            if (!(fabs((double)c[at] - want[at]) <= allowed))
                fail_msg("%s: element (inner %lld, outer %lld) = %.9g, FP64 %.17g, allowed error %.3g "
                         "(seed 0x%016llx)",
                         what, (long long)i, (long long)o, (double)c[at], want[at], allowed, (unsigned long long)seed);
        }
}

void check_c(const char *what, const float *c, const float *ref, const double *bound, shape_t sc, int64_t k,
             bool exact, uint64_t seed)
{
    const double gamma = gamma_k2(k);
    for (int64_t o = 0; o < sc.outer; ++o) {
        for (int64_t i = 0; i < sc.ld; ++i) {
            const size_t at = (size_t)(o * sc.ld + i);
            if (in_checked_padding(what, c, sc, i, o, seed))
                continue;
            bool ok;
            double allowed = 0.0;
            if (exact) {
                ok = c[at] == ref[at];
            } else {
                allowed = 2.0 * gamma * bound[at];
                ok = fabs((double)c[at] - (double)ref[at]) <= allowed;
            }
            if (!ok)
                fail_msg("%s: element (inner %lld, outer %lld) = %.9g, OpenBLAS %.9g, allowed error %.3g "
                         "(seed 0x%016llx)",
                         what, (long long)i, (long long)o, (double)c[at], (double)ref[at], allowed,
                         (unsigned long long)seed);
        }
    }
}

/* ---------------------------------------------------------------- special values */

/* op(A)(i, l), op(B)(l, j) and C(i, j) as stored. */
static size_t at_a(const problem_t *p, int64_t i, int64_t l)
{
    return (size_t)(p->col_major != p->ta ? i + l * p->s.SA.ld : l + i * p->s.SA.ld);
}

static size_t at_b(const problem_t *p, int64_t l, int64_t j)
{
    return (size_t)(p->col_major != p->tb ? l + j * p->s.SB.ld : j + l * p->s.SB.ld);
}

static size_t at_c(const problem_t *p, int64_t i, int64_t j)
{
    return (size_t)(p->col_major ? i + j * p->s.SC.ld : j + i * p->s.SC.ld);
}

/* The distinct values of cand[] in [0, d) and not in avoid[], in order, at
 * most `most` of them. */
static int pick_lines(const int64_t *cand, int ncand, int64_t d, const int64_t *avoid, int navoid, int64_t most,
                      int64_t *out)
{
    int n = 0;
    for (int c = 0; c < ncand && n < most; ++c) {
        bool ok = cand[c] >= 0 && cand[c] < d;
        for (int x = 0; ok && x < n; ++x)
            ok = out[x] != cand[c];
        for (int x = 0; ok && x < navoid; ++x)
            ok = avoid[x] != cand[c];
        if (ok)
            out[n++] = cand[c];
    }
    return n;
}

enum { kSpecialLines = 9, kSpecialDepths = 12 };

/* Rows (or columns) of C reached through A (or B), of dimension d. */
static int reached_lines(int64_t d, int64_t *out)
{
    const int64_t cand[kSpecialLines] = {0, 31, 64, 127, 129, 256, 2048, d / 2 + 1, d - 1};
    return pick_lines(cand, kSpecialLines, d, NULL, 0, d / 4, out);
}

/* Rows (or columns) of C's own special values, off those reached. */
static int c_lines(int64_t d, const int64_t *reached, int nreached, int64_t *out)
{
    const int64_t cand[kSpecialLines] = {1, 32, 63, 128, 255, 257, 2047, d / 2, d - 2};
    return pick_lines(cand, kSpecialLines, d, reached, nreached, kSpecialLines, out);
}

/* The first line from `start` on (cyclically) that is not in avoid[]. */
static int64_t line_off(int64_t start, int64_t d, const int64_t *avoid, int navoid)
{
    for (int64_t t = 0; t < d; ++t) {
        const int64_t v = (start + t) % d;
        bool free_line = true;
        for (int x = 0; free_line && x < navoid; ++x)
            free_line = avoid[x] != v;
        if (free_line)
            return v;
    }
    return -1;
}

void put_special_values(const problem_t *p, float *A, float *B, float *C)
{
    const int64_t m = p->m, n = p->n, k = p->k;
    int64_t rows[kSpecialLines], cols[kSpecialLines], depths[kSpecialDepths];
    const int nrows = reached_lines(m, rows), ncols = reached_lines(n, cols);
    const int64_t dcand[kSpecialDepths] = {0,         k - 1,         k / 2 - 1, k / 2,         2047,      2048,
                                           k / 3,     2 * k / 3 - 1, k / 4 - 1, 3 * k / 4,     k / 8,     7 * k / 8 - 1};
    const int ndepths = pick_lines(dcand, kSpecialDepths, k, NULL, 0, kSpecialDepths, depths);
    const float inf = INFINITY, nan = NAN;
    const float a_values[3] = {inf, nan, -inf}, b_values[3] = {nan, -inf, inf}, c_values[3] = {nan, inf, -inf};
    for (int t = 0; t < nrows && ndepths > 0; ++t) {
        const int64_t i = rows[t], l = depths[t % ndepths];
        A[at_a(p, i, l)] = a_values[t % 3];
        if (isinf(a_values[t % 3]))
            B[at_b(p, l, line_off(n / 3 + t, n, cols, ncols))] = 0.0f;
    }
    for (int t = 0; t < ncols && ndepths > 0; ++t) {
        const int64_t j = cols[t], l = depths[t % ndepths];
        B[at_b(p, l, j)] = b_values[t % 3];
        if (isinf(b_values[t % 3]))
            A[at_a(p, line_off(m / 3 + t, m, rows, nrows), l)] = 0.0f;
    }
    if (C == NULL)
        return;
    int64_t crows[kSpecialLines], ccols[kSpecialLines];
    const int ncrows = c_lines(m, rows, nrows, crows), nccols = c_lines(n, cols, ncols, ccols);
    const int nc = ncrows > nccols ? ncrows : nccols;
    for (int t = 0; t < nc && ncrows > 0 && nccols > 0; ++t)
        C[at_c(p, crows[t % ncrows], ccols[t % nccols])] = c_values[t % 3];
}

/* What one term a * b with a special factor contributes to its sum. */
enum { kTermNaN = 1, kTermInfZero = 2, kTermPosInf = 4, kTermNegInf = 8 };

static unsigned char term_kind(float a, float b)
{
    if (isnan(a) || isnan(b))
        return kTermNaN;
    if ((isinf(a) && b == 0.0f) || (isinf(b) && a == 0.0f))
        return kTermInfZero;
    return (double)a * (double)b > 0.0 ? kTermPosInf : kTermNegInf; /* one factor infinite, neither zero */
}

/* x as doubles, its special values and its padding 0. */
static double *finite_copy(const float *x, shape_t s)
{
    double *d = xmalloc(shape_elems(s) * sizeof *d);
    for (int64_t o = 0; o < s.outer; ++o)
        for (int64_t i = 0; i < s.ld; ++i)
            d[o * s.ld + i] = i < s.inner && isfinite(x[o * s.ld + i]) ? (double)x[o * s.ld + i] : 0.0;
    return d;
}

double *special_reference(const problem_t *p, const float *A, const float *B, const float *C0, double **bound,
                          special_counts_t *counts)
{
    const shape_t SA = p->s.SA, SB = p->s.SB, SC = p->s.SC;
    const size_t nc = shape_elems(SC);
    const bool reads_ab = p->alpha != 0.0f && p->k > 0, reads_c = p->beta != 0.0f;
    double *sum = xmalloc(nc * sizeof *sum), *abs_sum = xmalloc(nc * sizeof *abs_sum);
    unsigned char *kinds = xmalloc(nc);
    memset(sum, 0, nc * sizeof *sum);
    memset(abs_sum, 0, nc * sizeof *abs_sum);
    memset(kinds, 0, nc);
    if (reads_ab) {
        const int layout = p->col_major ? REF_COL_MAJOR : REF_ROW_MAJOR;
        const int ta = p->ta ? REF_T : REF_N, tb = p->tb ? REF_T : REF_N;
        double *a = finite_copy(A, SA), *b = finite_copy(B, SB);
        ref_dgemm(layout, ta, tb, (int)p->m, (int)p->n, (int)p->k, 1.0, a, (int)SA.ld, b, (int)SB.ld, 0.0, sum,
                  (int)SC.ld);
        if (bound != NULL) {
            for (size_t e = 0; e < shape_elems(SA); ++e)
                a[e] = fabs(a[e]);
            for (size_t e = 0; e < shape_elems(SB); ++e)
                b[e] = fabs(b[e]);
            ref_dgemm(layout, ta, tb, (int)p->m, (int)p->n, (int)p->k, 1.0, a, (int)SA.ld, b, (int)SB.ld, 0.0,
                      abs_sum, (int)SC.ld);
        }
        free(a);
        free(b);
        /* Every term with a special factor: a row of C for each in op(A),
         * a column for each in op(B). */
        const bool a_inner_m = p->col_major != p->ta, b_inner_k = p->col_major != p->tb;
        for (int64_t o = 0; o < SA.outer; ++o)
            for (int64_t x = 0; x < SA.inner; ++x) {
                const float v = A[o * SA.ld + x];
                if (isfinite(v))
                    continue;
                const int64_t i = a_inner_m ? x : o, l = a_inner_m ? o : x;
                for (int64_t j = 0; j < p->n; ++j)
                    kinds[at_c(p, i, j)] |= term_kind(v, B[at_b(p, l, j)]);
            }
        for (int64_t o = 0; o < SB.outer; ++o)
            for (int64_t x = 0; x < SB.inner; ++x) {
                const float v = B[o * SB.ld + x];
                if (isfinite(v))
                    continue;
                const int64_t l = b_inner_k ? x : o, j = b_inner_k ? o : x;
                for (int64_t i = 0; i < p->m; ++i)
                    kinds[at_c(p, i, j)] |= term_kind(A[at_a(p, i, l)], v);
            }
    }
    double *want = xmalloc(nc * sizeof *want);
    memset(want, 0, nc * sizeof *want);
    if (bound != NULL) {
        *bound = xmalloc(nc * sizeof **bound);
        memset(*bound, 0, nc * sizeof **bound);
    }
    memset(counts, 0, sizeof *counts);
    for (int64_t j = 0; j < p->n; ++j)
        for (int64_t i = 0; i < p->m; ++i) {
            const size_t at = at_c(p, i, j);
            const unsigned char kind = kinds[at];
            const double s = (kind & (kTermNaN | kTermInfZero)) || (kind & kTermPosInf && kind & kTermNegInf) ? NAN
                             : kind & kTermPosInf                                                           ? INFINITY
                             : kind & kTermNegInf                                                           ? -INFINITY
                                                                                                            : sum[at];
            const double c0 = reads_c ? (double)C0[at] : 0.0;
            const double w = (reads_ab ? (double)p->alpha * s : 0.0) + (reads_c ? (double)p->beta * c0 : 0.0);
            want[at] = w;
            if (bound != NULL)
                (*bound)[at] = fabs((double)p->alpha) * abs_sum[at] + (isfinite(c0) ? fabs((double)p->beta * c0) : 0.0);
            if (isnan(w)) {
                if (kind & kTermNaN)
                    counts->nan_ab++;
                else if (kind & kTermInfZero)
                    counts->nan_inf_zero++;
                else if (isnan(c0))
                    counts->nan_c++;
                else
                    counts->nan_inf_inf++;
            } else if (isinf(w)) {
                if (w > 0)
                    counts->pos_inf++;
                else
                    counts->neg_inf++;
            } else {
                counts->finite++;
            }
        }
    free(sum);
    free(abs_sum);
    free(kinds);
    return want;
}

void require_special_counts(const char *what, const problem_t *p, const special_counts_t *n)
{
    const bool reads_ab = p->alpha != 0.0f && p->k > 0, reads_c = p->beta != 0.0f;
    const char *missing = n->finite == 0                                              ? "finite element"
                          : reads_ab && n->nan_ab == 0                                ? "NaN from a NaN of A or B"
                          : reads_ab && n->nan_inf_zero == 0                          ? "NaN from Inf * 0"
                          : reads_c && n->nan_c == 0                                  ? "NaN from C"
                          : (reads_ab || reads_c) && n->pos_inf + n->neg_inf == 0 ? "infinity"
                                                                                      : NULL;
    if (missing != NULL)
        fail_msg("%s: the special values give C no %s: put_special_values does not suit this shape", what, missing);
}

void check_special(const char *what, const problem_t *p, const float *c, const double *want, const double *bound,
                   bool exact, uint64_t seed)
{
    const shape_t SC = p->s.SC;
    const double gamma = gamma_k2(p->k), slack = fp64_slack(p->k);  /* want is a double sum */
    for (int64_t o = 0; o < SC.outer; ++o) {
        for (int64_t x = 0; x < SC.ld; ++x) {
            const size_t at = (size_t)(o * SC.ld + x);
            if (in_checked_padding(what, c, SC, x, o, seed))
                continue;
            const double got = c[at], w = want[at];
            double allowed = 0.0;
            bool ok;
            if (isnan(w))
                ok = isnan(got);
            else if (isinf(w))
                ok = got == w;
            else if (!isfinite(got))
                ok = false;
            else if (exact)
                ok = got == w;
            else
                ok = fabs(got - w) <= (allowed = (gamma + slack) * bound[at]);
            if (!ok)
                fail_msg("%s: C(%lld, %lld) = %.9g, want %.9g, allowed error %.3g (seed 0x%016llx)", what,
                         (long long)(p->col_major ? x : o), (long long)(p->col_major ? o : x), got, w, allowed,
                         (unsigned long long)seed);
        }
    }
}

/* ---------------------------------------------------------------- stderr */

void capture_begin(capture_t *c)
{
    fflush(stderr);
    strcpy(c->path, "/tmp/tgemm-test-XXXXXX");
    c->fd = mkstemp(c->path);
    c->saved = dup(2);
    if (c->fd < 0 || c->saved < 0 || dup2(c->fd, 2) < 0)
        fail_msg("cannot redirect stderr to %s", c->path);
}

char *capture_end(capture_t *c)
{
    fflush(stderr);
    dup2(c->saved, 2);
    close(c->saved);
    const off_t len = lseek(c->fd, 0, SEEK_END);
    char *text = xmalloc((size_t)(len > 0 ? len : 0) + 1);
    size_t got = 0;
    if (len > 0 && lseek(c->fd, 0, SEEK_SET) == 0) {
        const ssize_t r = read(c->fd, text, (size_t)len);
        got = r > 0 ? (size_t)r : 0;
    }
    text[got] = '\0';
    close(c->fd);
    unlink(c->path);
    return text;
}

/* ---------------------------------------------------------------- buffers */

const char *const mem_tag = "hpdm";

static void check_cuda(cudaError_t e, const char *what)
{
    if (e != cudaSuccess)
        fail_msg("%s failed: %s", what, cudaGetErrorString(e));
}

/* Guard elements on each side of every buffer, poison_pad() bits, so a
 * write just outside what tgemm was given shows: a multiple of 4 elements
 * (256 bytes), which keeps ptr's alignment what offset makes it. */
enum { kGuardElems = 64 };

/* A copy to or from a buffer's memory: plain host memory needs no CUDA. */
static void copy_checked(mem_t kind, void *dst, const void *src, size_t bytes)
{
    if (kind == MEM_HOST)
        memcpy(dst, src, bytes);
    else
        check_cuda(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault), "cudaMemcpy");
}

buf_t buf_make(mem_t kind, const float *src, size_t elems, int offset)
{
    buf_t b = {kind, NULL, NULL, elems};
    const size_t before = kGuardElems + (size_t)offset;
    const size_t bytes = (before + elems + kGuardElems) * sizeof(float);
    switch (kind) {
    case MEM_HOST: b.base = xmalloc(bytes); break;
    case MEM_PINNED: check_cuda(cudaMallocHost((void **)&b.base, bytes), "cudaMallocHost"); break;
    case MEM_DEVICE: check_cuda(cudaMalloc((void **)&b.base, bytes), "cudaMalloc"); break;
    case MEM_MANAGED:
        check_cuda(cudaMallocManaged((void **)&b.base, bytes, cudaMemAttachGlobal), "cudaMallocManaged");
        break;
    }
    b.ptr = b.base + before;
    float guard[kGuardElems + 4];
    for (size_t i = 0; i < kGuardElems + 4; ++i)
        guard[i] = poison_pad();
    copy_checked(kind, b.base, guard, before * sizeof(float));
    copy_checked(kind, b.ptr + elems, guard, kGuardElems * sizeof(float));
    if (src) {
        copy_checked(kind, b.ptr, src, elems * sizeof(float));
        /* From pageable memory cudaMemcpy may return before the copy lands,
         * and a stream created non-blocking is not ordered after it: a call
         * on such a stream could read the buffer half written. */
        if (kind != MEM_HOST)
            check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    }
    return b;
}

bool buf_guards_intact(const buf_t *b)
{
    const size_t before = (size_t)(b->ptr - b->base);
    float guard[kGuardElems + 4];
    copy_checked(b->kind, guard, b->base, before * sizeof(float));
    bool ok = true;
    for (size_t i = 0; i < before; ++i)
        ok = ok && same_bits(guard[i], poison_pad());
    copy_checked(b->kind, guard, b->ptr + b->elems, kGuardElems * sizeof(float));
    for (size_t i = 0; i < kGuardElems; ++i)
        ok = ok && same_bits(guard[i], poison_pad());
    return ok;
}

void buf_copy(const buf_t *b, float *dst)
{
    copy_checked(b->kind, dst, b->ptr, b->elems * sizeof(float));
}

void buf_read(const buf_t *b, float *dst)
{
    buf_copy(b, dst);
    if (!buf_guards_intact(b))
        fail_msg("an element just before or after a buffer given to tgemm (%zu elements) was written", b->elems);
}

void buf_free(buf_t *b)
{
    switch (b->kind) {
    case MEM_HOST: free(b->base); break;
    case MEM_PINNED: cudaFreeHost(b->base); break;
    case MEM_DEVICE:
    case MEM_MANAGED: cudaFree(b->base); break;
    }
    b->base = b->ptr = NULL;
}

int run_group(const char *name, struct CMUnitTest *tests, size_t count)
{
    return _cmocka_run_group_tests(name, tests, count, NULL, NULL);
}

void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "tests: out of host memory (%zu bytes)\n", bytes);
        abort();
    }
    return p;
}

char *xstrdup_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0) {
        fprintf(stderr, "tests: out of memory\n");
        abort();
    }
    va_end(ap);
    return s;
}
