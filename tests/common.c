#include "common.h"

#include "gpu_probe.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* ---------------------------------------------------------------- checking */

static double *abs_copy(const float *x, shape_t s)
{
    double *d = xmalloc(shape_elems(s) * sizeof *d);
    for (int64_t o = 0; o < s.outer; ++o)
        for (int64_t i = 0; i < s.ld; ++i)
            d[o * s.ld + i] = i < s.inner ? fabs((double)x[o * s.ld + i]) : 0.0;
    return d;
}

double *error_bound(bool col_major, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
                    const float *A, shape_t sa, const float *B, shape_t sb, float beta, const float *C0,
                    shape_t sc)
{
    double *bound = xmalloc(shape_elems(sc) * sizeof *bound);
    for (int64_t o = 0; o < sc.outer; ++o)
        for (int64_t i = 0; i < sc.ld; ++i)
            bound[o * sc.ld + i] = (i < sc.inner && beta != 0.0f) ? fabs((double)beta * C0[o * sc.ld + i]) : 0.0;
    if (alpha != 0.0f && k > 0) {
        double *a = abs_copy(A, sa), *b = abs_copy(B, sb);
        ref_dgemm(col_major ? REF_COL_MAJOR : REF_ROW_MAJOR, ta ? REF_T : REF_N, tb ? REF_T : REF_N, (int)m,
                  (int)n, (int)k, fabs((double)alpha), a, (int)sa.ld, b, (int)sb.ld, 1.0, bound, (int)sc.ld);
        free(a);
        free(b);
    }
    return bound;
}

void check_c(const char *what, const float *c, const float *ref, const double *bound, shape_t sc, int64_t k,
             bool exact, uint64_t seed)
{
    const double u = 0x1.0p-24;
    const double nu = (double)(k + 2) * u;
    const double gamma = nu / (1.0 - nu);
    for (int64_t o = 0; o < sc.outer; ++o) {
        for (int64_t i = 0; i < sc.ld; ++i) {
            const size_t at = (size_t)(o * sc.ld + i);
            if (i >= sc.inner) {
                if (!same_bits(c[at], poison_pad()))
                    fail_msg("%s: padding element (inner %lld, outer %lld) was written (seed 0x%016llx)", what,
                             (long long)i, (long long)o, (unsigned long long)seed);
                continue;
            }
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

/* ---------------------------------------------------------------- buffers */

const char *const mem_tag = "hpdm";

static void check_cuda(cudaError_t e, const char *what)
{
    if (e != cudaSuccess)
        fail_msg("%s failed: %s", what, cudaGetErrorString(e));
}

buf_t buf_make(mem_t kind, const float *src, size_t elems, int offset)
{
    buf_t b = {kind, NULL, NULL, elems};
    const size_t bytes = (elems + (size_t)offset) * sizeof(float);
    switch (kind) {
    case MEM_HOST: b.base = xmalloc(bytes); break;
    case MEM_PINNED: check_cuda(cudaMallocHost((void **)&b.base, bytes), "cudaMallocHost"); break;
    case MEM_DEVICE: check_cuda(cudaMalloc((void **)&b.base, bytes), "cudaMalloc"); break;
    case MEM_MANAGED:
        check_cuda(cudaMallocManaged((void **)&b.base, bytes, cudaMemAttachGlobal), "cudaMallocManaged");
        break;
    }
    b.ptr = b.base + offset;
    if (src)
        check_cuda(cudaMemcpy(b.ptr, src, elems * sizeof(float), cudaMemcpyDefault), "cudaMemcpy");
    return b;
}

void buf_read(const buf_t *b, float *dst)
{
    check_cuda(cudaMemcpy(dst, b->ptr, b->elems * sizeof(float), cudaMemcpyDefault), "cudaMemcpy");
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
