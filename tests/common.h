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

/* Fails the running test, naming the call and its error, when a CUDA
 * runtime call does not return cudaSuccess. For programs that include
 * cuda_runtime_api.h. */
#define CK(call)                                                                      \
    do {                                                                              \
        cudaError_t e_ = (call);                                                      \
        if (e_ != cudaSuccess)                                                        \
            fail_msg("%s failed: %s", #call, cudaGetErrorString(e_));                 \
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
/* A and B filled from r; C0 too when beta != 0, else poisoned (beta == 0
 * must never read C). */
void fill_operands(float *A, shape_t SA, float *B, shape_t SB, float *C0, shape_t SC, float beta, rng_t *r,
                   bool exact);

/* gamma(k + 2) = (k + 2) u / (1 - (k + 2) u), u = 2^-24: the factor of the
 * FP32 dot-product error bound for a K of k. */
double gamma_k2(int64_t k);
/* (k + 2) 2^-52: allowed beside gamma_k2 against an FP64 reference for the
 * reference's own rounding (at most (k + 2) 2^-53 of the bound). */
double fp64_slack(int64_t k);

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

/* alpha op(A) op(B) + beta C0 in double (OpenBLAS's dgemm on the FP32
 * values, each exact in double; C0 not read where beta == 0; padding 0). */
double *fp64_reference(bool col_major, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
                       const float *A, shape_t sa, const float *B, shape_t sb, float beta, const float *C0,
                       shape_t sc);

/* Checks C against fp64_reference's result: |c - want| <= gamma(k + 2) *
 * bound elementwise (the FP32 bound itself, not twice it: the reference
 * is exact but for its own rounding, (k + 2) 2^-53 of the bound, allowed
 * on top); padding bit for bit poison_pad(). */
void check_c_fp64(const char *what, const float *c, const double *want, const double *bound, shape_t sc, int64_t k,
                  uint64_t seed);

/* ---- NaN and Inf in the operands: where they go, what C must become.
 *
 * One call as these helpers take it; s is shapes_of_call's for it. */
typedef struct {
    bool col_major, ta, tb;
    int64_t m, n, k;
    float alpha, beta;
    shapes_t s;
} problem_t;

/* Puts NaN, +Inf and -Inf into op(A), op(B) and (C != NULL) C, over finite
 * values already there (small, so FP32 sums cannot overflow):
 *  - op(A)(i, l) on a few rows i of C: 0, 31, 64, 127, 129, 256, 2048,
 *    m/2 + 1, m - 1 (tile edges of every family, the host pipeline's 2048,
 *    the middle, the last row), at most m/4 of them, so that C keeps finite
 *    rows; l runs through 0, k - 1, k/2 - 1, k/2, 2047, 2048, k/3, ...: the
 *    first and the last K step, and both sides of the slice edges of the
 *    usual splits of K and of the host pipeline's K chunks;
 *  - op(B)(l, j) likewise on columns j of C;
 *  - beside every Inf, a 0 in the other operand (op(B)(l, j0) for op(A)'s
 *    Inf at (i, l), j0 a column without special values), so that Inf * 0
 *    is inside the sum of C(i, j0) and nothing else there is special;
 *  - in C, at rows 1, 32, 63, 128, 255, 257, 2047, m/2, m - 2 paired with
 *    columns likewise, none on a row or column reached through A or B.
 * A row reached through A holds one special value of A, a column reached
 * through B one of B, so that the causes of NaN that special_counts_t
 * counts all occur apart from each other. */
void put_special_values(const problem_t *p, float *A, float *B, float *C);

/* Elements of C by what the reference makes them (padding not counted). */
typedef struct {
    size_t nan_ab;       /* NaN: a NaN of op(A) or op(B) is in the sum */
    size_t nan_inf_zero; /* NaN: Inf * 0 is in the sum (no NaN operand) */
    size_t nan_c;        /* NaN: C held NaN, beta != 0 (the sum has neither of the above) */
    size_t nan_inf_inf;  /* NaN: +Inf met -Inf, in the sum or against beta * C */
    size_t pos_inf, neg_inf, finite;
} special_counts_t;

/* C := alpha op(A) op(B) + beta C in double with IEEE special values and
 * reference BLAS semantics: alpha == 0 or k == 0 reads neither A nor B,
 * beta == 0 never reads C. The sum of C(i, j) is NaN when one of its terms
 * is (a NaN operand, or Inf * 0) or when +Inf and -Inf terms meet, else
 * +-Inf when it has an infinite term, else the sum of the finite values
 * (OpenBLAS's dgemm over the operands with their special values made 0: no
 * element with a finite sum reads them). Terms are classified one by one,
 * so the result does not depend on the order of the sum: any order a kernel,
 * a split of K or stream-K takes gives the same class. Returns C as stored
 * (malloc'ed; padding 0); with bound != NULL also the error bound of
 * check_c for the finite elements; counts what C holds. */
double *special_reference(const problem_t *p, const float *A, const float *B, const float *C0, double **bound,
                          special_counts_t *counts);

/* Fails the running test unless the reference has each kind of element
 * the call must show: finite ones always; when A and B are read (alpha != 0,
 * k > 0) NaN from a NaN operand, NaN from Inf * 0, and an infinity; when C
 * is read (beta != 0) NaN from C and an infinity. A placement that stops
 * reaching a kind for some shape fails here instead of testing less. */
void require_special_counts(const char *what, const problem_t *p, const special_counts_t *counts);

/* Checks C against special_reference's result: NaN exactly where it has
 * NaN, the same signed infinity where it has one, finite elsewhere and
 * equal (exact) or within gamma(k + 2) * bound of that FP64 reference
 * (plus the reference's own rounding, (k + 2) 2^-53 of the bound); padding
 * bit for bit poison_pad(). Reports the first bad element (row, column of
 * C). */
void check_special(const char *what, const problem_t *p, const float *c, const double *want, const double *bound,
                   bool exact, uint64_t seed);

/* ---- standard error redirected to a file while tgemm runs, to read the
 * plan lines TGEMM_VERBOSE=2 prints. */
typedef struct {
    int saved, fd;
    char path[32];
} capture_t;

void capture_begin(capture_t *c);
/* Restores stderr; returns what was written meanwhile (malloc'ed). */
char *capture_end(capture_t *c);

/* ---- operands in each kind of memory tgemm accepts. A CUDA failure fails
 * the running test through fail_msg. */
typedef enum { MEM_HOST, MEM_PINNED, MEM_DEVICE, MEM_MANAGED } mem_t;
extern const char *const mem_tag; /* "hpdm": host (pageable), pinned, device, managed */

typedef struct {
    mem_t kind;
    float *base;  /* what was allocated */
    float *ptr;   /* what tgemm sees: after the guard elements and offset */
    size_t elems; /* elements after ptr */
} buf_t;

/* elems elements (plus offset before them) of `kind`, copied from src if
 * not NULL, between guard elements that hold poison_pad(). */
buf_t buf_make(mem_t kind, const float *src, size_t elems, int offset);
/* The elements into dst; fails the running test if a guard was written. */
void buf_read(const buf_t *b, float *dst);
/* buf_read's copy alone, and its guard check alone (for threads other
 * than the test's, where a test cannot fail). */
void buf_copy(const buf_t *b, float *dst);
bool buf_guards_intact(const buf_t *b);
void buf_free(buf_t *b);

/* Registers and runs a dynamic CMocka group. */
int run_group(const char *name, struct CMUnitTest *tests, size_t count);

void *xmalloc(size_t bytes);
char *xstrdup_printf(const char *fmt, ...);

#endif
