/* Shared helpers of the tgemm test programs. */
#ifndef TGEMM_TESTS_COMMON_H
#define TGEMM_TESTS_COMMON_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <tgemm.h>

/* ---- random numbers: splitmix64, seeded per test and printed on failure */
typedef struct {
    uint64_t state;
} rng_t;

uint64_t rng_next(rng_t *r);
float rng_uniform(rng_t *r);   /* uniform in [-1, 1) */
float rng_small_int(rng_t *r); /* one of -3 .. 3, so sums of products stay exact in FP32 */

/* The run's base seed: TGEMM_TEST_SEED if set, else fresh from the clock.
 * Printed once, so any failure can be repeated. */
uint64_t test_base_seed(void);
uint64_t test_seed_for(uint64_t case_index);

/* Whether CUDA sees a device (tests/gpu_probe.h): true if it does; false,
 * its reason printed once per process, when no NVIDIA driver is installed
 * or the driver sees no device, so that GPU cases call skip(); any other
 * outcome (a driver too old for the runtime or broken, any other CUDA
 * error, or no GPU under TGEMM_TEST_REQUIRE_GPU=1) fails the running test
 * with its message instead, so that a broken GPU cannot pass as none. */
bool gpu_available(void);
#define REQUIRE_GPU()              \
    do {                           \
        if (!gpu_available())      \
            skip();                \
    } while (0)

/* ---- OpenBLAS, loaded by soname so the reference is always OpenBLAS's,
 * whatever else the process has loaded (libtgemm exports cblas_sgemm too). */
enum { REF_ROW_MAJOR = 101, REF_COL_MAJOR = 102, REF_N = 111, REF_T = 112 };
void ref_sgemm(int layout, int ta, int tb, int m, int n, int k, float alpha, const float *A, int lda,
               const float *B, int ldb, float beta, float *C, int ldc);
/* OpenBLAS's own Fortran sgemm_ (the gfortran ABI), for comparing with tgemm's sgemm_. */
void ref_sgemm_f77(const char *ta, const char *tb, int m, int n, int k, float alpha, const float *A, int lda,
                   const float *B, int ldb, float beta, float *C, int ldc);
void ref_dgemm(int layout, int ta, int tb, int m, int n, int k, double alpha, const double *A, int lda,
               const double *B, int ldb, double beta, double *C, int ldc);

/* ---- matrices in memory: `outer` lines of `inner` elements, `ld` apart.
 * Column-major: inner = rows; row-major: inner = columns. */
typedef struct {
    int64_t inner, outer, ld;
} shape_t;

size_t shape_elems(shape_t s);
shape_t shape_of_a(bool col_major, bool trans, int64_t m, int64_t k, int64_t ld);
shape_t shape_of_b(bool col_major, bool trans, int64_t k, int64_t n, int64_t ld);
shape_t shape_of_c(bool col_major, int64_t m, int64_t n, int64_t ld);
/* The same shape with ld = max(1, inner) + pad, the smallest valid ld plus pad. */
shape_t shape_padded(shape_t s, int64_t pad);

/* The three operands of one call: shape_of_a/b/c, each padded by its pad. */
typedef struct {
    shape_t SA, SB, SC;
} shapes_t;
shapes_t shapes_of_call(bool col_major, bool ta, bool tb, int64_t m, int64_t n, int64_t k, int64_t pad_a,
                        int64_t pad_b, int64_t pad_c);

/* Bit patterns that no computation produces: padding and unread C carry them. */
float poison_pad(void);   /* NaN with payload 0xDEAD */
float poison_c(void);     /* NaN with payload 0xC0DE */
bool same_bits(float a, float b);

/* Fills the inner x outer region with values (exact small integers or
 * uniform) and every padding element with poison_pad(). */
void fill_matrix(float *x, shape_t s, rng_t *r, bool exact);
void fill_constant(float *x, shape_t s, float v); /* region only; padding gets poison_pad() */

/* Checks C against the OpenBLAS reference element by element.
 *  exact: every element must equal the reference (small-integer inputs);
 *  else:  |c - ref| <= 2 * gamma(k + 2) * bound, with
 *         gamma(n) = n u / (1 - n u), u = 2^-24, and bound the elementwise
 *         |alpha| |op(A)| |op(B)| + |beta| |C0| computed in double. This is
 *         the classical dot-product error bound applied to each of the two
 *         results, so their difference is at most twice it.
 *  Padding of C must come back bit for bit (it was poison_pad()).
 * On failure, reports the first bad element and the seed through fail_msg. */
void check_c(const char *what, const float *c, const float *ref, const double *bound, shape_t sc, int64_t k,
             bool exact, uint64_t seed);

/* The bound above for a layout/transpose, from the inputs (padding ignored). */
double *error_bound(bool col_major, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
                    const float *A, shape_t sa, const float *B, shape_t sb, float beta, const float *C0,
                    shape_t sc);

/* ---- operands in each kind of memory tgemm accepts. A CUDA failure fails
 * the running test through fail_msg. */
typedef enum { MEM_HOST, MEM_PINNED, MEM_DEVICE, MEM_MANAGED } mem_t;
extern const char *const mem_tag; /* "hpdm": host (pageable), pinned, device, managed */

typedef struct {
    mem_t kind;
    float *base;  /* what was allocated */
    float *ptr;   /* what tgemm sees: base + offset */
    size_t elems; /* elements after ptr */
} buf_t;

/* elems elements (plus offset before them) of `kind`, copied from src if not NULL. */
buf_t buf_make(mem_t kind, const float *src, size_t elems, int offset);
void buf_read(const buf_t *b, float *dst);
void buf_free(buf_t *b);

/* Registers and runs a dynamic CMocka group. */
int run_group(const char *name, struct CMUnitTest *tests, size_t count);

void *xmalloc(size_t bytes);
char *xstrdup_printf(const char *fmt, ...);

#endif
