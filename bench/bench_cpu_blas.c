/* SGEMM through the CPU BLAS's cblas_sgemm, as any program linked against
 * OpenBLAS calls it. `make bench-blas` runs it twice: plain (OpenBLAS on the
 * host's cores) and with LD_PRELOAD=libtgemm.so TGEMM_OFFLOAD=gpu (the same
 * calls on the GPU, host operands copied in and out), then
 * bench/plot_blas.py puts the two side by side.
 *
 *   bench_cpu_blas [--max N] [--reps R] [--budget S] [--csv FILE]
 *
 * Square sizes from 64 up to N (default 8192), then a few rectangular and
 * transposed shapes no larger than N. Each shape gets fresh random inputs,
 * one warm-up call, then R timed calls (default 7; fewer for shapes whose
 * calls would exceed S seconds in all, default 10, but at least 3); the
 * median is reported. Linked against OpenBLAS only: it does not know tgemm,
 * it only notices whether libtgemm is loaded.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void cblas_sgemm(int layout, int TransA, int TransB, int M, int N, int K, float alpha, const float *A, int lda,
                 const float *B, int ldb, float beta, float *C, int ldc);

enum { ROW = 101, COL = 102, NT = 111, TR = 112 };

typedef struct {
    const char *name;
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

static float *random_matrix(size_t elems)
{
    float *x = malloc(elems * sizeof *x);
    if (!x) {
        fprintf(stderr, "bench_cpu_blas: cannot allocate %zu floats\n", elems);
        exit(1);
    }
    for (size_t i = 0; i < elems; ++i) {
        g_rng ^= g_rng << 13;
        g_rng ^= g_rng >> 7;
        g_rng ^= g_rng << 17;
        x[i] = (float)((double)(g_rng >> 40) * 0x1.0p-24 - 0.5);
    }
    return x;
}

static int compare_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Times one shape; returns the median seconds and stores the minimum and
 * the number of timed calls. */
static double time_shape(const shape_t *s, int reps, double budget, double *min_s, int *used)
{
    const int col = s->layout == COL;
    /* Stored rows x columns of A, B, C in the shape's layout. */
    const int a_rows = (col != (s->ta == TR)) ? s->m : s->k, a_cols = (col != (s->ta == TR)) ? s->k : s->m;
    const int b_rows = (col != (s->tb == TR)) ? s->k : s->n, b_cols = (col != (s->tb == TR)) ? s->n : s->k;
    const int c_rows = col ? s->m : s->n, c_cols = col ? s->n : s->m;
    float *A = random_matrix((size_t)a_rows * (size_t)a_cols);
    float *B = random_matrix((size_t)b_rows * (size_t)b_cols);
    float *C = random_matrix((size_t)c_rows * (size_t)c_cols);
    const int lda = a_rows, ldb = b_rows, ldc = c_rows;

    double t0 = now();
    cblas_sgemm(s->layout, s->ta, s->tb, s->m, s->n, s->k, 1.0f, A, lda, B, ldb, 0.5f, C, ldc);
    const double warm = now() - t0;
    int n = reps;
    if (warm * n > budget)
        n = (int)(budget / (warm > 0 ? warm : 1e-9));
    if (n < 3)
        n = 3;
    if (n > reps)
        n = reps;
    double *t = malloc((size_t)n * sizeof *t);
    if (!t)
        exit(1);
    for (int i = 0; i < n; ++i) {
        t0 = now();
        cblas_sgemm(s->layout, s->ta, s->tb, s->m, s->n, s->k, 1.0f, A, lda, B, ldb, 0.5f, C, ldc);
        t[i] = now() - t0;
    }
    qsort(t, (size_t)n, sizeof *t, compare_double);
    const double median = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    *min_s = t[0];
    *used = n;
    free(t);
    free(A);
    free(B);
    free(C);
    return median;
}

static int usage(const char *prog)
{
    fprintf(stderr, "usage: %s [--max N] [--reps R] [--budget SECONDS] [--csv FILE]\n", prog);
    return 2;
}

int main(int argc, char **argv)
{
    int max = 8192, reps = 7;
    double budget = 10.0;
    const char *csv_path = NULL;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--max") == 0 && i + 1 < argc)
            max = atoi(argv[++i]);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--budget") == 0 && i + 1 < argc)
            budget = atof(argv[++i]);
        else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc)
            csv_path = argv[++i];
        else
            return usage(argv[0]);
    }
    if (max < 1 || reps < 1)
        return usage(argv[0]);

    static const int kSquares[] = {64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192};
    static const shape_t kOthers[] = {
        {"nt_square", COL, NT, TR, 2048, 2048, 2048},  {"tn_square", COL, TR, NT, 2048, 2048, 2048},
        {"tt_square", COL, TR, TR, 2048, 2048, 2048},  {"row_nn_square", ROW, NT, NT, 2048, 2048, 2048},
        {"row_nt_rect", ROW, NT, TR, 1000, 3000, 500}, {"rank_k_update", COL, NT, TR, 4096, 4096, 128},
        {"tall_skinny", COL, NT, NT, 8192, 64, 1024},  {"inner_product", COL, TR, NT, 256, 256, 8192},
        {"wide_output", COL, NT, NT, 512, 8192, 512},
    };
    shape_t shapes[64];
    size_t count = 0;
    for (size_t i = 0; i < sizeof kSquares / sizeof kSquares[0]; ++i)
        if (kSquares[i] <= max)
            shapes[count++] = (shape_t){"square", COL, NT, NT, kSquares[i], kSquares[i], kSquares[i]};
    for (size_t i = 0; i < sizeof kOthers / sizeof kOthers[0]; ++i) {
        const shape_t *s = &kOthers[i];
        if (s->m <= max && s->n <= max && s->k <= max)
            shapes[count++] = *s;
    }

    const int tgemm = dlsym(RTLD_DEFAULT, "tgemm_version") != NULL;
    const char *offload = getenv("TGEMM_OFFLOAD");
    printf("bench_cpu_blas: cblas_sgemm %s\n",
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
        fprintf(csv, "shape,layout,transa,transb,m,n,k,reps,median_s,min_s,gflops,library\n");
    }
    for (size_t i = 0; i < count; ++i) {
        const shape_t *s = &shapes[i];
        double min_s = 0;
        int used = 0;
        const double median = time_shape(s, reps, budget, &min_s, &used);
        const double gflops = 2.0 * s->m * (double)s->n * s->k / median * 1e-9;
        const char *layout = s->layout == COL ? "col" : "row";
        const char ta = s->ta == TR ? 'T' : 'N', tb = s->tb == TR ? 'T' : 'N';
        printf("%-14s %6s %2c %2c %6d %6d %6d %5d %12.3f %12.3f %10.1f\n", s->name, layout, ta, tb, s->m, s->n, s->k,
               used, median * 1e3, min_s * 1e3, gflops);
        fflush(stdout);
        if (csv)
            fprintf(csv, "%s,%s,%c,%c,%d,%d,%d,%d,%.9g,%.9g,%.6g,%s\n", s->name, layout, ta, tb, s->m, s->n, s->k,
                    used, median, min_s, gflops, tgemm ? "tgemm" : "cpu-blas");
    }
    if (csv)
        fclose(csv);
    return 0;
}
