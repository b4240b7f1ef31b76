/* SGEMM through cblas_sgemm, as any program linked against OpenBLAS calls
 * it. `make bench-blas` runs it in rounds (bench/bench_blas.py): plain
 * (OpenBLAS on the host's cores), and under LD_PRELOAD=libtgemm.so with
 * TGEMM_OFFLOAD=auto and with TGEMM_OFFLOAD=gpu, the three interleaved, and
 * compares the medians.
 *
 *   bench_cpu_blas [--max N] [--reps R] [--warmup W] [--warmup-ms MS] [--budget S]
 *                  [--random COUNT --seed SEED] [--shape LAYOUT TA TB M N K]...
 *                  [--mix] [--fortran] [--direct [--direct-gpu]] [--lead-in SECONDS] [--csv FILE]
 *
 * The shapes: square sizes from 64 up to N (default 8192), then rectangular
 * and transposed shapes (low K, rank-k updates, skinny, tall, wide) no
 * larger than N; or, with --random, COUNT shapes drawn log-uniformly (m, n,
 * k from 1 to N, at most 2 * 4096^3 flops, random transposes and layout)
 * from SEED; or the shapes given with --shape (LAYOUT col or row, TA and TB
 * N or T). Each shape gets fresh random inputs, W warm-up calls (default
 * 1; more where they take less than MS milliseconds in all, default 0:
 * the first calls over fresh host memory, and on cores that were idle,
 * run slower for some milliseconds), then R timed calls (default 7; fewer for shapes whose calls would
 * exceed S seconds in all, default 10, but at least 3). The table shows the
 * median and minimum; the CSV has one row per timed call, so that runs can
 * be pooled. --mix precedes every call with an untimed 128 x 128 x 128 call
 * on other operands, as a program that mixes small and large products
 * does (under `auto` the small one runs on the CPU BLAS). --fortran calls
 * sgemm_ (the Fortran BLAS entry, column-major shapes only) instead of
 * cblas_sgemm. --lead-in runs 2048^3 products, untimed, for SECONDS before
 * the shapes (default 0), as a program's earlier work: under `auto`, tgemm
 * starts the GPU in a process only once doing so has paid (its start costs
 * a large fraction of a second), so without such work a fresh process runs
 * its first mid-size shapes on the CPU BLAS whatever their steady state;
 * the other modes pay their start-up (CUDA context, BLAS threads) in the
 * first shape's warm-up calls anyway. --direct follows every timed call with the same product on
 * the CPU BLAS's own cblas_sgemm (looked up in the OpenBLAS the program is
 * linked with, past any interposer), timed apart: under LD_PRELOAD, the CPU
 * BLAS's time in the same process and at the same moment as tgemm's call,
 * which tells a cost of the process (what tgemm's GPU calls left behind)
 * from one of the machine (a slow run of the plain program too).
 * --direct-gpu (with --direct, under LD_PRELOAD) adds the same product on
 * tgemm's GPU path (tgemm_sgemm_ex on the host operands, which the forced
 * GPU mode runs), the two in turn first: with `auto` interposed, each
 * timed call then has both sides beside it, measured in the same process
 * within milliseconds, which takes the machine's drift between processes
 * out of the comparison of `auto` with the faster side. Linked
 * against OpenBLAS only: it does not know tgemm, it only notices whether
 * libtgemm is loaded.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void cblas_sgemm(int layout, int TransA, int TransB, int M, int N, int K, float alpha, const float *A, int lda,
                 const float *B, int ldb, float beta, float *C, int ldc);
void sgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k, const float *alpha,
            const float *A, const int *lda, const float *B, const int *ldb, const float *beta, float *C,
            const int *ldc, size_t transa_len, size_t transb_len);

enum { ROW = 101, COL = 102, NT = 111, TR = 112 };

typedef struct {
    char name[24];
    int layout, ta, tb;
    int m, n, k;
} shape_t;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t g_rng = 0x2545F4914F6CDD1Dull;

static uint64_t next_random(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return g_rng;
}

static float *random_matrix(size_t elems)
{
    float *x = malloc((elems ? elems : 1) * sizeof *x);
    if (!x) {
        fprintf(stderr, "bench_cpu_blas: cannot allocate %zu floats\n", elems);
        exit(1);
    }
    for (size_t i = 0; i < elems; ++i)
        x[i] = (float)((double)(next_random() >> 40) * 0x1.0p-24 - 0.5);
    return x;
}

static int compare_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* --fortran: sgemm_ instead of cblas_sgemm. */
static int g_fortran = 0;

/* --direct: the CPU BLAS's own cblas_sgemm, and the seconds of its last call. */
typedef void (*cblas_sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *, int, float,
                               float *, int);
static cblas_sgemm_fn g_direct = NULL;
static double g_direct_seconds = 0.0;

/* --direct-gpu: tgemm_sgemm_ex (tgemm.h; its enumerators have CBLAS's
 * values), and the seconds of its last call. */
typedef int (*tgemm_sgemm_ex_fn)(int, int, int, int64_t, int64_t, int64_t, float, const float *, int64_t,
                                 const float *, int64_t, float, float *, int64_t, void *);
static tgemm_sgemm_ex_fn g_direct_gpu = NULL;
/* CUDA's cudaStreamPerThread handle, where the BLAS entry points run their
 * GPU calls (the program does not include CUDA's headers). */
static void *const kPerThreadStream = (void *)0x2;
static double g_direct_gpu_seconds = 0.0;
static unsigned g_direct_turn = 0;

/* OpenBLAS's cblas_sgemm, not the interposer's: dlsym on the library's own
 * handle looks in that library first. */
static cblas_sgemm_fn find_direct(void)
{
    void *h = dlopen("libopenblas.so.0", RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        h = dlopen("libopenblas.so", RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        return NULL;
    cblas_sgemm_fn f;
    *(void **)&f = dlsym(h, "cblas_sgemm");
    return f;
}

/* One call of shape s on A, B, C, preceded with `mix_ops` by an untimed
 * kMix^3 product on them; returns the call's seconds. */
enum { kMix = 128 };
static double timed_call(const shape_t *s, const float *A, int lda, const float *B, int ldb, float *C, int ldc,
                         float *mix_ops)
{
    if (mix_ops)
        cblas_sgemm(COL, NT, NT, kMix, kMix, kMix, 1.0f, mix_ops, kMix, mix_ops + kMix * kMix, kMix, 0.0f,
                    mix_ops + 2 * kMix * kMix, kMix);
    const float alpha = 1.0f, beta = 0.5f;
    const char ta = s->ta == TR ? 'T' : 'N', tb = s->tb == TR ? 'T' : 'N';
    const double t0 = now();
    if (g_fortran)
        sgemm_(&ta, &tb, &s->m, &s->n, &s->k, &alpha, A, &lda, B, &ldb, &beta, C, &ldc, 1, 1);
    else
        cblas_sgemm(s->layout, s->ta, s->tb, s->m, s->n, s->k, alpha, A, lda, B, ldb, beta, C, ldc);
    const double seconds = now() - t0;
    /* With both, they take turns to go first: a call right after one of
     * the other side runs on caches and cores that side has just used. */
    const int gpu_first = g_direct_gpu && (g_direct_turn++ & 1);
    for (int i = 0; i < 2; ++i) {
        if (i == gpu_first && g_direct) {
            const double t1 = now();
            g_direct(s->layout, s->ta, s->tb, s->m, s->n, s->k, alpha, A, lda, B, ldb, beta, C, ldc);
            g_direct_seconds = now() - t1;
        } else if (i != gpu_first && g_direct_gpu) {
            const double t1 = now();
            if (g_direct_gpu(s->layout, s->ta, s->tb, s->m, s->n, s->k, alpha, A, lda, B, ldb, beta, C, ldc,
                             kPerThreadStream)) {
                fprintf(stderr, "bench_cpu_blas: --direct-gpu: tgemm_sgemm_ex failed on %s %dx%dx%d\n", s->name, s->m,
                        s->n, s->k);
                exit(1);
            }
            g_direct_gpu_seconds = now() - t1;
        }
    }
    return seconds;
}

/* --lead-in: 2048^3 products on their own operands for `seconds`. */
static void lead_in(double seconds)
{
    enum { kLead = 2048 };
    float *ops = random_matrix(3 * (size_t)kLead * kLead);
    const double t0 = now();
    while (now() - t0 < seconds)
        cblas_sgemm(COL, NT, NT, kLead, kLead, kLead, 1.0f, ops, kLead, ops + (size_t)kLead * kLead, kLead, 0.0f,
                    ops + 2 * (size_t)kLead * kLead, kLead);
    free(ops);
}

/* Warm-up calls by time stop here at the latest (tiny shapes). */
enum { kMaxWarmup = 2000 };

/* Times one shape: the timed calls' seconds go to t (at most reps of them),
 * with --direct the direct calls' to d, with --direct-gpu tgemm's to g;
 * returns how many there are. */
static int time_shape(const shape_t *s, int warmup, double warmup_s, int reps, double budget, int mix, double *t,
                      double *d, double *g)
{
    float *mix_ops = mix ? random_matrix(3 * kMix * kMix) : NULL;
    const int col = s->layout == COL;
    /* Stored rows x columns of A, B, C in the shape's layout. */
    const int a_rows = (col != (s->ta == TR)) ? s->m : s->k, a_cols = (col != (s->ta == TR)) ? s->k : s->m;
    const int b_rows = (col != (s->tb == TR)) ? s->k : s->n, b_cols = (col != (s->tb == TR)) ? s->n : s->k;
    const int c_rows = col ? s->m : s->n, c_cols = col ? s->n : s->m;
    float *A = random_matrix((size_t)a_rows * (size_t)a_cols);
    float *B = random_matrix((size_t)b_rows * (size_t)b_cols);
    float *C = random_matrix((size_t)c_rows * (size_t)c_cols);
    const int lda = a_rows, ldb = b_rows, ldc = c_rows;

    double warm = 0, warmed = 0;
    for (int i = 0; i < warmup || (warmed < warmup_s && i < kMaxWarmup); ++i) {
        warm = timed_call(s, A, lda, B, ldb, C, ldc, mix_ops);
        warmed += warm;
    }
    int n = reps;
    if (warm * n > budget)
        n = (int)(budget / (warm > 0 ? warm : 1e-9));
    if (n < 3)
        n = 3;
    if (n > reps)
        n = reps;
    for (int i = 0; i < n; ++i) {
        t[i] = timed_call(s, A, lda, B, ldb, C, ldc, mix_ops);
        d[i] = g_direct_seconds;
        g[i] = g_direct_gpu_seconds;
    }
    free(A);
    free(B);
    free(C);
    free(mix_ops);
    return n;
}

static int usage(const char *prog)
{
    fprintf(stderr, "usage: %s [--max N] [--reps R] [--warmup W] [--warmup-ms MS] [--budget SECONDS] [--random COUNT --seed SEED] "
                    "[--shape LAYOUT TA TB M N K]... [--mix] [--fortran] [--direct [--direct-gpu]] [--lead-in SECONDS] "
                    "[--csv FILE]\n", prog);
    return 2;
}

static shape_t make_shape(const char *name, int layout, int ta, int tb, int m, int n, int k)
{
    shape_t s;
    snprintf(s.name, sizeof s.name, "%s", name);
    s.layout = layout;
    s.ta = ta;
    s.tb = tb;
    s.m = m;
    s.n = n;
    s.k = k;
    return s;
}

/* log-uniform in [1, max] */
static int log_uniform(int max)
{
    const double u = (double)(next_random() >> 11) * 0x1.0p-53;
    const int v = (int)floor(exp(u * log((double)max + 1.0)));
    return v < 1 ? 1 : v > max ? max : v;
}

int main(int argc, char **argv)
{
    int max = 8192, reps = 7, warmup = 1, random_count = 0, mix = 0, direct = 0, direct_gpu = 0;
    shape_t given[64];
    size_t given_count = 0;
    unsigned long long seed = 1;
    double budget = 10.0, warmup_ms = 0.0, lead_seconds = 0.0;
    const char *csv_path = NULL;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--max") == 0 && i + 1 < argc)
            max = atoi(argv[++i]);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--warmup") == 0 && i + 1 < argc)
            warmup = atoi(argv[++i]);
        else if (strcmp(argv[i], "--warmup-ms") == 0 && i + 1 < argc)
            warmup_ms = atof(argv[++i]);
        else if (strcmp(argv[i], "--budget") == 0 && i + 1 < argc)
            budget = atof(argv[++i]);
        else if (strcmp(argv[i], "--random") == 0 && i + 1 < argc)
            random_count = atoi(argv[++i]);
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc)
            csv_path = argv[++i];
        else if (strcmp(argv[i], "--mix") == 0)
            mix = 1;
        else if (strcmp(argv[i], "--fortran") == 0)
            g_fortran = 1;
        else if (strcmp(argv[i], "--direct") == 0)
            direct = 1;
        else if (strcmp(argv[i], "--direct-gpu") == 0)
            direct_gpu = 1;
        else if (strcmp(argv[i], "--lead-in") == 0 && i + 1 < argc) {
            char *end = NULL;
            lead_seconds = strtod(argv[++i], &end);
            if (end == argv[i] || *end != '\0' || !(lead_seconds >= 0.0 && lead_seconds <= 3600.0))
                return usage(argv[0]);
        }
        else if (strcmp(argv[i], "--shape") == 0 && i + 6 < argc && given_count < 64) {
            const char *layout = argv[i + 1], *ta = argv[i + 2], *tb = argv[i + 3];
            given[given_count] = make_shape("given", strcmp(layout, "row") == 0 ? ROW : COL,
                                            ta[0] == 'T' ? TR : NT, tb[0] == 'T' ? TR : NT, atoi(argv[i + 4]),
                                            atoi(argv[i + 5]), atoi(argv[i + 6]));
            if (given[given_count].m < 1 || given[given_count].n < 1 || given[given_count].k < 1)
                return usage(argv[0]);
            ++given_count;
            i += 6;
        } else
            return usage(argv[0]);
    }
    if (max < 1 || reps < 1 || warmup < 0 || !(warmup_ms >= 0.0) || random_count < 0 || !(lead_seconds >= 0.0))
        return usage(argv[0]);
    if (direct_gpu && !direct)
        return usage(argv[0]);
    if (direct && !(g_direct = find_direct())) {
        fprintf(stderr, "bench_cpu_blas: --direct: no OpenBLAS cblas_sgemm in this process\n");
        return 1;
    }
    if (direct_gpu && !(*(void **)&g_direct_gpu = dlsym(RTLD_DEFAULT, "tgemm_sgemm_ex"))) {
        fprintf(stderr, "bench_cpu_blas: --direct-gpu: libtgemm is not loaded (LD_PRELOAD=libtgemm.so)\n");
        return 1;
    }

    static const int kSquares[] = {64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192};
    const shape_t others[] = {
        make_shape("nt_square", COL, NT, TR, 2048, 2048, 2048),
        make_shape("tn_square", COL, TR, NT, 2048, 2048, 2048),
        make_shape("tt_square", COL, TR, TR, 2048, 2048, 2048),
        make_shape("row_nn_square", ROW, NT, NT, 2048, 2048, 2048),
        make_shape("row_nt_rect", ROW, NT, TR, 1000, 3000, 500),
        make_shape("rank_k_update", COL, NT, TR, 4096, 4096, 128),
        make_shape("rank32_update", COL, NT, NT, 8192, 8192, 32),
        make_shape("rank1_update", COL, NT, TR, 4096, 4096, 1),
        make_shape("low_k", COL, NT, NT, 1000, 1000, 100),
        make_shape("mid_low_k", COL, NT, NT, 3000, 3000, 500),
        make_shape("tall_skinny", COL, NT, NT, 8192, 64, 1024),
        make_shape("short_wide", COL, NT, NT, 64, 8192, 8192),
        make_shape("tall_thin", COL, TR, NT, 20000, 200, 200),
        make_shape("inner_product", COL, TR, NT, 256, 256, 8192),
        make_shape("long_k", COL, NT, TR, 512, 512, 20000),
        make_shape("wide_output", COL, NT, NT, 512, 8192, 512),
        make_shape("rect_mid", COL, NT, NT, 2000, 300, 2000),
        make_shape("gemv_like", COL, NT, NT, 4096, 1, 4096),
    };
    size_t cap = sizeof kSquares / sizeof kSquares[0] + sizeof others / sizeof others[0] + (size_t)random_count +
                 given_count;
    shape_t *shapes = malloc(cap * sizeof *shapes);
    if (!shapes)
        return 1;
    size_t count = 0;
    if (given_count > 0) {
        for (size_t i = 0; i < given_count; ++i)
            shapes[count++] = given[i];
    } else if (random_count > 0) {
        g_rng ^= seed * 0x9E3779B97F4A7C15ull;
        if (g_rng == 0)
            g_rng = 1;
        while (count < (size_t)random_count) {
            const int m = log_uniform(max), n = log_uniform(max), k = log_uniform(max);
            if (2.0 * m * (double)n * k > 2.0 * 4096.0 * 4096.0 * 4096.0)
                continue;
            const int ta = next_random() & 1 ? TR : NT, tb = next_random() & 1 ? TR : NT;
            const int layout = next_random() % 4 == 0 ? ROW : COL;
            char name[24];
            snprintf(name, sizeof name, "random%zu", count);
            shapes[count++] = make_shape(name, layout, ta, tb, m, n, k);
        }
    } else {
        for (size_t i = 0; i < sizeof kSquares / sizeof kSquares[0]; ++i)
            if (kSquares[i] <= max)
                shapes[count++] = make_shape("square", COL, NT, NT, kSquares[i], kSquares[i], kSquares[i]);
        for (size_t i = 0; i < sizeof others / sizeof others[0]; ++i) {
            const shape_t *s = &others[i];
            if (s->m <= max && s->n <= max && s->k <= max)
                shapes[count++] = *s;
        }
    }

    const int tgemm = dlsym(RTLD_DEFAULT, "tgemm_version") != NULL;
    const char *offload = getenv("TGEMM_OFFLOAD");
    const char *library = !tgemm ? "cpu-blas" : offload && strcmp(offload, "gpu") == 0 ? "tgemm-gpu"
                          : offload && strcmp(offload, "cpu") == 0                     ? "tgemm-cpu"
                                                                                       : "tgemm-auto";
    printf("bench_cpu_blas: %s %s\n", g_fortran ? "sgemm_" : "cblas_sgemm",
           tgemm ? "interposed by libtgemm (LD_PRELOAD)" : "of the CPU BLAS the program is linked with");
    if (tgemm)
        printf("bench_cpu_blas: TGEMM_OFFLOAD=%s\n", offload ? offload : "(unset: auto)");
    printf("%-14s %6s %2s %2s %6s %6s %6s %5s %12s %12s %10s\n", "shape", "layout", "ta", "tb", "m", "n", "k",
           "reps", "median_ms", "min_ms", "GFLOP/s");

    FILE *csv = NULL;
    if (csv_path) {
        csv = fopen(csv_path, "w");
        if (!csv) {
            perror(csv_path);
            return 1;
        }
        fprintf(csv, "shape,layout,transa,transb,m,n,k,rep,seconds,library,direct_seconds,direct_gpu_seconds\n");
    }
    double *t = malloc((size_t)reps * sizeof *t), *d = malloc((size_t)reps * sizeof *d);
    double *g = malloc((size_t)reps * sizeof *g);
    if (!t || !d || !g)
        return 1;
    if (lead_seconds > 0.0)
        lead_in(lead_seconds);
    for (size_t i = 0; i < count; ++i) {
        const shape_t *s = &shapes[i];
        if (g_fortran && s->layout != COL)
            continue;  /* sgemm_ is column-major only */
        const int used = time_shape(s, warmup, warmup_ms * 1e-3, reps, budget, mix, t, d, g);
        const char *layout = s->layout == COL ? "col" : "row";
        const char ta = s->ta == TR ? 'T' : 'N', tb = s->tb == TR ? 'T' : 'N';
        if (csv)
            for (int r = 0; r < used; ++r) {
                fprintf(csv, "%s,%s,%c,%c,%d,%d,%d,%d,%.9g,%s,", s->name, layout, ta, tb, s->m, s->n, s->k, r, t[r],
                        library);
                if (direct)
                    fprintf(csv, "%.9g", d[r]);
                fputc(',', csv);
                if (direct_gpu)
                    fprintf(csv, "%.9g", g[r]);
                fputc('\n', csv);
            }
        qsort(t, (size_t)used, sizeof *t, compare_double);
        const double median = used % 2 ? t[used / 2] : 0.5 * (t[used / 2 - 1] + t[used / 2]);
        const double gflops = 2.0 * s->m * (double)s->n * s->k / median * 1e-9;
        printf("%-14s %6s %2c %2c %6d %6d %6d %5d %12.3f %12.3f %10.1f\n", s->name, layout, ta, tb, s->m, s->n, s->k,
               used, median * 1e3, t[0] * 1e3, gflops);
        fflush(stdout);
    }
    free(t);
    free(d);
    free(g);
    free(shapes);
    if (csv)
        fclose(csv);
    return 0;
}
