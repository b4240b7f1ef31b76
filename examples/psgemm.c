/* PSGEMM, ScaLAPACK's distributed SGEMM, on a BLACS process grid, checked
 * against a serial product (make test-scalapack, bench/scalapack_gpu.sh).
 *
 *   mpirun -np 4 build/examples/psgemm [options]
 *   LD_PRELOAD=build/lib/libtgemm.so mpirun -np 4 ... build/examples/psgemm ...
 *
 *   -m M -n N -k K    C (M x N) := alpha op(A) (M x K) op(B) (K x N) + beta C
 *                     (default 1024 each)
 *   -b NB             the distribution's block size, rows and columns
 *                     (default: $PSGEMM_NB, else 64)
 *   -A N|T -B N|T     op(A), op(B) (default N N)
 *   -p P -q Q         the process grid (default: P x Q = the number of
 *                     processes, P the largest divisor up to its square root;
 *                     processes beyond P x Q take no part)
 *   -x ALPHA -y BETA  (default 1 and 0; with BETA != 0, C starts random)
 *   -s SEED           the seed of A, B and C (default: from the clock; printed)
 *   -c full|cols:NC   check every element (default), or every element of NC
 *                     columns drawn from the seed (for sizes where the serial
 *                     product would take long)
 *   -w W -r R         W untimed calls, then R timed ones (default 0 and 1);
 *                     C is reset before each, the last one is checked
 *   -X                corrupt one element of C after the product (a check
 *                     that cannot fail is no check: this one must)
 *
 * A, B and C are stored whole (op(A) = A^T stores A as K x M), distributed
 * block-cyclically in NB x NB blocks from process (0, 0). Each element is a
 * function of (seed, matrix, row, column), a float in [-1, 1) with at most
 * 24 significant bits, so every process fills its own blocks and process
 * (0, 0) regenerates what the check needs. Process (0, 0) gathers C and
 * checks each element against a double-precision product computed with
 * plain loops (no BLAS, so no preloaded library computes the reference):
 *
 *   |C_ij - R_ij| <= (gamma(K + 2, 2^-24) + 2 gamma(K + 2, 2^-53)) G_ij + (K + 2) 2^-149,
 *   R = alpha op(A) op(B) + beta C0,  G = |alpha| |op(A)| |op(B)| + |beta| |C0|,
 *   gamma(n, u) = n u / (1 - n u),
 *
 * the bound of bench/gemm_check.hpp: every correct FP32 result meets it,
 * whatever the order of its sums (PSGEMM adds K in panels, in an order that
 * depends on the grid).
 *
 * Output: the settings, then one line "psgemm: result key=value ..." (the
 * slowest process's time of each timed call: min, median, max; GFLOP/s of
 * the fastest), the check, and "psgemm: OK" or "psgemm: FAILED ...". Exit
 * status 0 only if every checked element is within its bound; 1 for a wrong
 * result, 2 for bad arguments, 3 for a setup error.
 *
 * Only BLACS's C interface and PBLAS/ScaLAPACK's Fortran entry points are
 * used, declared here (Debian ships no header for them): no MPI header is
 * needed, and the program links against libscalapack-openmpi alone. */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* BLACS (C interface), in libscalapack-openmpi. */
void Cblacs_pinfo(int *mypnum, int *nprocs);
void Cblacs_get(int ctxt, int what, int *val);
void Cblacs_gridinit(int *ctxt, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int ctxt);
void Cblacs_barrier(int ctxt, const char *scope);
void Cblacs_abort(int ctxt, int errornum);
void Cblacs_exit(int notdone);
void Csgesd2d(int ctxt, int m, int n, const float *A, int lda, int rdest, int cdest);
void Csgerv2d(int ctxt, int m, int n, float *A, int lda, int rsrc, int csrc);
void Cigebs2d(int ctxt, const char *scope, const char *top, int m, int n, const int *A, int lda);
void Cigebr2d(int ctxt, const char *scope, const char *top, int m, int n, int *A, int lda, int rsrc, int csrc);
void Cdgamx2d(int ctxt, const char *scope, const char *top, int m, int n, double *A, int lda, int *rA, int *cA,
              int ldia, int rdest, int cdest);
/* ScaLAPACK tools and PBLAS (Fortran calling convention; psgemm_ is C
 * underneath and takes no hidden string lengths). */
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc, const int *nprocs);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb, const int *irsrc,
               const int *icsrc, const int *ictxt, const int *lld, int *info);
void psgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k, const float *alpha,
             const float *a, const int *ia, const int *ja, const int *desca, const float *b, const int *ib,
             const int *jb, const int *descb, const float *beta, float *c, const int *ic, const int *jc,
             const int *descc);

enum { MAT_A = 1, MAT_B = 2, MAT_C = 3, MAX_SHOWN = 10 };

static int ctxt = -1, me = 0;

static void die(int status, const char *fmt, const char *what)
{
    fprintf(stderr, "psgemm: process %d: ", me);
    fprintf(stderr, fmt, what);
    fputc('\n', stderr);
    if (ctxt >= 0)
        Cblacs_abort(ctxt, status);
    exit(status);
}

static void *alloc(size_t count, size_t size)
{
    void *p = malloc(count ? count * size : 1);
    if (!p)
        die(3, "out of memory (%s)", "malloc");
    return p;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Element (i, j) of the stored matrix `which`: a float in [-1, 1) with 24
 * significant bits at most, the same on every process. */
static float value(uint64_t seed, int which, int64_t i, int64_t j)
{
    const uint64_t h = splitmix64(seed ^ splitmix64(((uint64_t)which << 60) ^ ((uint64_t)j << 30) ^ (uint64_t)i));
    return (float)((int64_t)(h >> 40) - (INT64_C(1) << 23)) * 0x1p-23f;
}

/* Global index of local index l (0-based) in a dimension distributed in
 * blocks of nb over nprocs processes from process 0, on process p. */
static int64_t l2g(int64_t l, int p, int nprocs, int nb)
{
    return (l / nb) * nprocs * nb + (int64_t)p * nb + l % nb;
}

/* The local part of a rows x cols matrix on this process, filled. */
static float *local_matrix(uint64_t seed, int which, int rows, int cols, int nb, int myrow, int mycol, int P, int Q,
                           int *desc)
{
    const int zero = 0;
    const int mloc = numroc_(&rows, &nb, &myrow, &zero, &P), nloc = numroc_(&cols, &nb, &mycol, &zero, &Q);
    int lld = mloc > 1 ? mloc : 1, info = 0;
    descinit_(desc, &rows, &cols, &nb, &nb, &zero, &zero, &ctxt, &lld, &info);
    if (info != 0)
        die(2, "descinit_ rejected a descriptor (%s)", which == MAT_A ? "A" : which == MAT_B ? "B" : "C");
    float *x = alloc((size_t)lld * (size_t)(nloc > 0 ? nloc : 1), sizeof *x);
    for (int lj = 0; lj < nloc; ++lj) {
        const int64_t gj = l2g(lj, mycol, Q, nb);
        for (int li = 0; li < mloc; ++li)
            x[li + (size_t)lj * lld] = value(seed, which, l2g(li, myrow, P, nb), gj);
    }
    return x;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double gamma_n(double n, double u)
{
    return n * u < 1.0 ? n * u / (1.0 - n * u) : INFINITY;
}

static void usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s [-m M] [-n N] [-k K] [-b NB] [-A N|T] [-B N|T] [-p P -q Q] [-x ALPHA] [-y BETA]\n"
            "          [-s SEED] [-c full|cols:NC] [-w WARMUP] [-r REPS] [-X]\n",
            argv0);
}

static int parse_int(const char *s, int min, int *out)
{
    char *end;
    const long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < min || v > 1000000000L)
        return 0;
    *out = (int)v;
    return 1;
}

int main(int argc, char **argv)
{
    int np = 1;
    Cblacs_pinfo(&me, &np);

    int M = 1024, N = 1024, K = 1024, NB = 64, P = 0, Q = 0, warmup = 0, reps = 1, check_cols = 0, corrupt = 0;
    char ta = 'N', tb = 'N';
    float alpha = 1.0f, beta = 0.0f;
    uint64_t seed = 0;
    int have_seed = 0;
    const char *env_nb = getenv("PSGEMM_NB");
    if (env_nb && *env_nb && !parse_int(env_nb, 1, &NB)) {
        if (me == 0)
            fprintf(stderr, "psgemm: PSGEMM_NB=%s is not a block size\n", env_nb);
        Cblacs_exit(0);
        return 2;
    }
    int bad = 0, opt;
    while ((opt = getopt(argc, argv, "m:n:k:b:A:B:p:q:x:y:s:c:w:r:X")) != -1) {
        char *end = NULL;
        switch (opt) {
        case 'm': bad |= !parse_int(optarg, 0, &M); break;
        case 'n': bad |= !parse_int(optarg, 0, &N); break;
        case 'k': bad |= !parse_int(optarg, 0, &K); break;
        case 'b': bad |= !parse_int(optarg, 1, &NB); break;
        case 'p': bad |= !parse_int(optarg, 1, &P); break;
        case 'q': bad |= !parse_int(optarg, 1, &Q); break;
        case 'w': bad |= !parse_int(optarg, 0, &warmup); break;
        case 'r': bad |= !parse_int(optarg, 1, &reps); break;
        case 'A':
        case 'B': {
            const char t = optarg[0] == 'n' ? 'N' : optarg[0] == 't' ? 'T' : optarg[0];
            bad |= (t != 'N' && t != 'T') || optarg[1] != '\0';
            *(opt == 'A' ? &ta : &tb) = t;
            break;
        }
        case 'x': alpha = strtof(optarg, &end); bad |= *optarg == '\0' || *end != '\0'; break;
        case 'y': beta = strtof(optarg, &end); bad |= *optarg == '\0' || *end != '\0'; break;
        case 's':
            seed = strtoull(optarg, &end, 0);
            bad |= *optarg == '\0' || *end != '\0';
            have_seed = 1;
            break;
        case 'c':
            if (strcmp(optarg, "full") == 0)
                check_cols = 0;
            else
                bad |= strncmp(optarg, "cols:", 5) != 0 || !parse_int(optarg + 5, 1, &check_cols);
            break;
        case 'X': corrupt = 1; break;
        default: bad = 1;
        }
    }
    if (!bad && (P == 0) != (Q == 0))
        bad = 1;
    if (P == 0) {
        for (P = 1; (P + 1) * (P + 1) <= np; ++P)
            ;
        while (np % P != 0)
            --P;
        Q = np / P;
    }
    if (bad || optind != argc || (int64_t)P * Q > np) {
        if (me == 0) {
            if ((int64_t)P * Q > np)
                fprintf(stderr, "psgemm: a %d x %d grid needs %d processes, there are %d\n", P, Q, P * Q, np);
            usage(argv[0]);
        }
        Cblacs_exit(0);
        return 2;
    }

    Cblacs_get(-1, 0, &ctxt);
    Cblacs_gridinit(&ctxt, "Row", P, Q);
    int myrow = -1, mycol = -1;
    Cblacs_gridinfo(ctxt, &P, &Q, &myrow, &mycol);
    if (myrow < 0 || myrow >= P || mycol < 0 || mycol >= Q) {
        /* Outside the grid: nothing to do. */
        Cblacs_exit(0);
        return 0;
    }
    const int root = myrow == 0 && mycol == 0;

    /* The seed: process (0, 0)'s, sent to all, as two 32-bit halves. */
    int s2[2];
    if (root) {
        if (!have_seed)
            seed = splitmix64((uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32));
        s2[0] = (int)(uint32_t)(seed >> 32);
        s2[1] = (int)(uint32_t)seed;
        Cigebs2d(ctxt, "All", " ", 2, 1, s2, 2);
    } else {
        Cigebr2d(ctxt, "All", " ", 2, 1, s2, 2, 0, 0);
    }
    seed = ((uint64_t)(uint32_t)s2[0] << 32) | (uint32_t)s2[1];

    const int ra = ta == 'N' ? M : K, ca = ta == 'N' ? K : M; /* A as stored */
    const int rb = tb == 'N' ? K : N, cb = tb == 'N' ? N : K; /* B as stored */
    if (check_cols > N)
        check_cols = N;
    if (root) {
        printf("psgemm: %d processes, grid %d x %d; C (%d x %d) = %g op(A) op(B) + %g C, K = %d, op(A) = %s, "
               "op(B) = %s; blocks %d x %d; seed %llu\n",
               np, P, Q, M, N, (double)alpha, (double)beta, K, ta == 'N' ? "A" : "A^T", tb == 'N' ? "B" : "B^T", NB,
               NB, (unsigned long long)seed);
        fflush(stdout);
    }

    int desca[9], descb[9], descc[9];
    float *a = local_matrix(seed, MAT_A, ra, ca, NB, myrow, mycol, P, Q, desca);
    float *b = local_matrix(seed, MAT_B, rb, cb, NB, myrow, mycol, P, Q, descb);
    float *c = local_matrix(seed, MAT_C, M, N, NB, myrow, mycol, P, Q, descc);
    const int mloc = numroc_(&M, &NB, &myrow, &(int){0}, &P), nloc = numroc_(&N, &NB, &mycol, &(int){0}, &Q);
    const int ldc = descc[8];
    const size_t csize = (size_t)ldc * (size_t)nloc;
    float *c0 = alloc(csize, sizeof *c0);
    memcpy(c0, c, csize * sizeof *c);

    /* The calls: each starts together on every process; its time is the
     * slowest process's. */
    const int one = 1, calls = warmup + reps;
    double *times = alloc((size_t)reps, sizeof *times);
    for (int r = 0; r < calls; ++r) {
        memcpy(c, c0, csize * sizeof *c);
        Cblacs_barrier(ctxt, "All");
        const double t0 = now();
        psgemm_(&ta, &tb, &M, &N, &K, &alpha, a, &one, &one, desca, b, &one, &one, descb, &beta, c, &one, &one,
                descc);
        double t = now() - t0;
        Cdgamx2d(ctxt, "All", " ", 1, 1, &t, 1, NULL, NULL, -1, -1, -1);
        if (r >= warmup)
            times[r - warmup] = t;
    }
    free(a);
    free(b);

    if (corrupt) {
        /* One element, owned by whichever process: C(M/2, N/2) := -C + 1. */
        const int64_t gi = M / 2, gj = N / 2;
        if (M > 0 && N > 0 && (gi / NB) % P == myrow && (gj / NB) % Q == mycol) {
            const int64_t li = (gi / (NB * (int64_t)P)) * NB + gi % NB, lj = (gj / (NB * (int64_t)Q)) * NB + gj % NB;
            c[li + lj * ldc] = 1.0f - c[li + lj * ldc];
        }
    }

    /* Gather C on process (0, 0). */
    float *C = NULL;
    if (root) {
        C = alloc((size_t)M * (size_t)N, sizeof *C);
        float *buf = alloc(csize, sizeof *buf);
        for (int pr = 0; pr < P; ++pr)
            for (int pc = 0; pc < Q; ++pc) {
                const int ml = numroc_(&M, &NB, &pr, &(int){0}, &P), nl = numroc_(&N, &NB, &pc, &(int){0}, &Q);
                if (ml == 0 || nl == 0)
                    continue;
                const float *src = c;
                if (pr != 0 || pc != 0) {
                    /* No process has more of C than process (0, 0). */
                    Csgerv2d(ctxt, ml, nl, buf, ml, pr, pc);
                    src = buf;
                }
                for (int lj = 0; lj < nl; ++lj) {
                    const int64_t gj = l2g(lj, pc, Q, NB);
                    for (int li = 0; li < ml; ++li)
                        C[l2g(li, pr, P, NB) + gj * M] = src[li + (size_t)lj * ml];
                }
            }
        free(buf);
    } else if (mloc > 0 && nloc > 0) {
        Csgesd2d(ctxt, mloc, nloc, c, ldc, 0, 0);
    }
    free(c);
    free(c0);

    /* The check, on process (0, 0): the columns, then each against R and G
     * accumulated in double over op(A), regenerated by columns of K. */
    int failed = 0;
    if (root) {
        qsort(times, (size_t)reps, sizeof *times, cmp_double);
        const double flops = 2.0 * M * (double)N * K;
        printf("psgemm: result ranks=%d grid=%dx%d m=%d n=%d k=%d nb=%d transa=%c transb=%c alpha=%g beta=%g "
               "seed=%llu warmup=%d reps=%d time_s_min=%.6f time_s_median=%.6f time_s_max=%.6f gflops=%.2f\n",
               np, P, Q, M, N, K, NB, ta, tb, (double)alpha, (double)beta, (unsigned long long)seed, warmup, reps,
               times[0], times[reps / 2], times[reps - 1], times[0] > 0 ? flops / times[0] * 1e-9 : 0.0);

        const int ncols = check_cols ? check_cols : N;
        int *cols = alloc((size_t)ncols, sizeof *cols);
        if (check_cols) {
            /* Distinct columns from the seed, the first and last among them. */
            char *taken = alloc((size_t)N, 1);
            memset(taken, 0, (size_t)N);
            int n = 0;
            cols[n++] = 0, taken[0] = 1;
            if (ncols > 1)
                cols[n++] = N - 1, taken[N - 1] = 1;
            for (uint64_t s = seed; n < ncols;) {
                s = splitmix64(s);
                const int j = (int)(s % (uint64_t)N);
                if (!taken[j])
                    cols[n++] = j, taken[j] = 1;
            }
            free(taken);
        } else {
            for (int j = 0; j < N; ++j)
                cols[j] = j;
        }
        float *opa = alloc((size_t)M * (size_t)K, sizeof *opa); /* op(A), M x K */
        for (int p = 0; p < K; ++p)
            for (int i = 0; i < M; ++i)
                opa[i + (size_t)p * M] = ta == 'N' ? value(seed, MAT_A, i, p) : value(seed, MAT_A, p, i);
        double *ref = alloc((size_t)M, sizeof *ref), *mag = alloc((size_t)M, sizeof *mag);
        const double factor = gamma_n(K + 2.0, 0x1p-24) + 2.0 * gamma_n(K + 2.0, 0x1p-53);
        const double floor_ = (K + 2.0) * 0x1p-149;
        double worst = 0;
        int64_t checked = 0, detectable = 0;
        for (int t = 0; t < ncols; ++t) {
            const int j = cols[t];
            memset(ref, 0, (size_t)M * sizeof *ref);
            memset(mag, 0, (size_t)M * sizeof *mag);
            for (int p = 0; p < K; ++p) {
                const double bv = tb == 'N' ? value(seed, MAT_B, p, j) : value(seed, MAT_B, j, p), ab = fabs(bv);
                const float *col = opa + (size_t)p * M;
                for (int i = 0; i < M; ++i) {
                    ref[i] += (double)col[i] * bv;
                    mag[i] += fabs((double)col[i]) * ab;
                }
            }
            for (int i = 0; i < M; ++i) {
                const double c0v = beta != 0.0f ? value(seed, MAT_C, i, j) : 0.0;
                const double r = (double)alpha * ref[i] + (double)beta * c0v;
                const double g = fabs((double)alpha) * mag[i] + fabs((double)beta) * fabs(c0v);
                const double bound = factor * g + floor_;
                const double got = C[i + (size_t)j * M], err = fabs(got - r);
                ++checked;
                detectable += fabs(r) > bound;
                if (!(err <= bound)) {
                    if (failed++ < MAX_SHOWN)
                        printf("psgemm: C(%d, %d) = %.9g, want %.9g within %.3g (|C - R| = %.3g)\n", i + 1, j + 1,
                               got, r, bound, err);
                    worst = INFINITY;
                } else if (bound > 0 && err / bound > worst) {
                    worst = err / bound;
                }
            }
        }
        printf("psgemm: check %s: %lld elements of %d columns, %d over the bound; worst |C - R| / bound %.3g; "
               "elements where C = 0 would fail: %lld\n",
               check_cols ? "cols" : "full", (long long)checked, ncols, failed, worst, (long long)detectable);
        if (failed)
            printf("psgemm: FAILED: %d elements of C off their bound (seed %llu)\n", failed,
                   (unsigned long long)seed);
        else
            printf("psgemm: OK\n");
        fflush(stdout);
        free(opa);
        free(ref);
        free(mag);
        free(cols);
        free(C);
    }
    if (root)
        Cigebs2d(ctxt, "All", " ", 1, 1, &failed, 1);
    else
        Cigebr2d(ctxt, "All", " ", 1, 1, &failed, 1, 0, 0);
    free(times);
    Cblacs_gridexit(ctxt);
    Cblacs_exit(0);
    return failed ? 1 : 0;
}
