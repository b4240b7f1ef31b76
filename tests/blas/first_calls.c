/* The process's first BLAS calls made where tgemm's one-time set-up could
 * hang a program (run by tests/blas/first_calls.sh under
 * LD_PRELOAD=libtgemm.so; linked against OpenBLAS only, as preload_prog):
 *
 *   first_calls loader PLUGIN   one thread dlopen()s PLUGIN, whose
 *                               constructor calls cblas_sgemm (after a
 *                               pause) while holding the dynamic loader's
 *                               lock; meanwhile (once the constructor has
 *                               created the file FIRST_CALLS_MARK names)
 *                               this thread makes the process's first call,
 *                               whose lookup of the CPU BLAS needs that lock.
 *                               Both must finish.
 *   first_calls fork            (linked with the stand-in BLAS of
 *                               tests/blas/fake_blas.c, which logs each call
 *                               to FAKE_BLAS_LOG) one thread makes the first
 *                               call the offload model weighs, which measures
 *                               the CPU BLAS once; once the log shows the
 *                               measurement's first product, this thread
 *                               fork()s, and the child makes such a call
 *                               too: it must finish.
 *   first_calls handler-fork    one thread's bad row-major call is in this
 *                               program's cblas_xerbla (which waits there),
 *                               so tgemm holds the lock it writes
 *                               RowMajorStrg under; this thread fork()s, and
 *                               the child makes a bad call and a valid one:
 *                               both must return (RowMajorStrg 1 in the
 *                               child's handler, 0 after).
 *   first_calls trace DIR       with TGEMM_TRACE=DIR/trace.%p: a call, a
 *                               fork(), a call in the child: each process's
 *                               line in its own file (the child's name has
 *                               the child's id).
 *
 * Each product is checked; a hang is the caller's timeout.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void cblas_sgemm(int layout, int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda, const float *b,
                 int ldb, float beta, float *c, int ldc);

/* Reference CBLAS's global, which the program defines (exported, as
 * reference CBLAS's is), so that tgemm keeps it. */
int RowMajorStrg;
void cblas_xerbla(int info, const char *rout, const char *form, ...);

enum { kN = 300 };
static float a[kN * kN], b[kN * kN], c[kN * kN], c2[kN * kN];

/* C := A B with A and B all ones: every element is k. */
static int product_right(const float *x, int n, int k)
{
    for (int i = 0; i < n * n; ++i)
        if (x[i] != (float)k)
            return 0;
    return 1;
}

/* Waits (up to 20 s) until the file `path` has at least `lines` lines
 * (0: until it exists); false if it never does. */
static int wait_for_file(const char *path, int lines)
{
    for (int tries = 0; tries < 20000; ++tries) {
        FILE *f = path != NULL ? fopen(path, "r") : NULL;
        if (f != NULL) {
            int n = 0, ch;
            while ((ch = fgetc(f)) != EOF)
                n += ch == '\n';
            fclose(f);
            if (n >= lines)
                return 1;
        }
        usleep(1000);
    }
    fprintf(stderr, "first_calls: %s never had %d line(s)\n", path != NULL ? path : "(no file named)", lines);
    return 0;
}

static void *load_plugin(void *arg)
{
    void *h = dlopen((const char *)arg, RTLD_NOW);
    if (h == NULL)
        fprintf(stderr, "first_calls: %s\n", dlerror());
    return h;
}

static int loader(const char *plugin)
{
    pthread_t t;
    if (pthread_create(&t, NULL, load_plugin, (void *)plugin) != 0)
        return 1;
    if (!wait_for_file(getenv("FIRST_CALLS_MARK"), 0)) /* the other thread is in the plugin's constructor */
        return 1;
    float x[4] = {1, 1, 1, 1}, y[4];
    cblas_sgemm(102, 111, 111, 2, 2, 2, 1.0f, x, 2, x, 2, 0.0f, y, 2);
    void *h = NULL;
    pthread_join(t, &h);
    const float *table = h != NULL ? (const float *)dlsym(h, "plugin_table") : NULL;
    if (!product_right(y, 2, 2) || table == NULL || !product_right(table, 2, 2)) {
        fprintf(stderr, "first_calls loader: a product is wrong or the plugin did not load\n");
        return 1;
    }
    printf("first_calls loader: the first call and the plugin's constructor both finished: OK\n");
    return 0;
}

static void *first_weighed_call(void *arg)
{
    (void)arg;
    cblas_sgemm(102, 111, 111, kN, kN, kN, 1.0f, a, kN, b, kN, 0.0f, c, kN);
    return NULL;
}

static int forked(void)
{
    for (int i = 0; i < kN * kN; ++i)
        a[i] = b[i] = 1.0f;
    float x[4] = {1, 1, 1, 1}, y[4];
    cblas_sgemm(102, 111, 111, 2, 2, 2, 1.0f, x, 2, x, 2, 0.0f, y, 2); /* small: the CPU BLAS found, nothing weighed */
    pthread_t t;
    if (pthread_create(&t, NULL, first_weighed_call, NULL) != 0)
        return 1;
    /* The small call's line, then the measurement's first product's. */
    if (!wait_for_file(getenv("FAKE_BLAS_LOG"), 2))
        return 1;
    const pid_t pid = fork();
    if (pid == 0) {
        alarm(30); /* a hung child dies, so that the parent sees it and nothing is left running */
        cblas_sgemm(102, 111, 111, kN, kN, kN, 1.0f, a, kN, b, kN, 0.0f, c2, kN);
        _exit(product_right(c2, kN, kN) ? 0 : 3);
    }
    int status = 0;
    const int waited = pid > 0 && waitpid(pid, &status, 0) == pid;
    pthread_join(t, NULL);
    if (!waited || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || !product_right(c, kN, kN)) {
        fprintf(stderr, "first_calls fork: the child %s, or the parent's product is wrong\n",
                !waited ? "was not waited for" : WIFEXITED(status) ? "computed a wrong product" : "was killed");
        return 1;
    }
    printf("first_calls fork: a child forked during the first weighed call made its own: OK\n");
    return 0;
}

static volatile int g_in_handler, g_release_handler, g_handler_row_major = -1;

void cblas_xerbla(int info, const char *rout, const char *form, ...)
{
    (void)info, (void)rout, (void)form;
    g_handler_row_major = RowMajorStrg;
    g_in_handler = 1;
    while (!g_release_handler)
        usleep(1000);
}

static void bad_row_major_call(void)
{
    float x[4] = {1, 1, 1, 1}, y[4] = {0, 0, 0, 0};
    cblas_sgemm(101, 111, 111, 2, 2, 2, 1.0f, x, 1, x, 2, 0.0f, y, 2); /* lda 1 < k 2 */
}

static void *bad_call_thread(void *arg)
{
    (void)arg;
    bad_row_major_call();
    return NULL;
}

static int handler_fork(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, bad_call_thread, NULL) != 0)
        return 1;
    for (int tries = 0; !g_in_handler && tries < 20000; ++tries)
        usleep(1000);
    const pid_t pid = g_in_handler ? fork() : -1;
    if (pid == 0) {
        alarm(30); /* a hung child dies, so that the parent sees it */
        g_release_handler = 1;
        g_in_handler = 0;
        g_handler_row_major = -1;
        bad_row_major_call();
        float x[4] = {1, 1, 1, 1}, y[4];
        cblas_sgemm(101, 111, 111, 2, 2, 2, 1.0f, x, 2, x, 2, 0.0f, y, 2);
        _exit(g_in_handler && g_handler_row_major == 1 && RowMajorStrg == 0 && product_right(y, 2, 2) ? 0 : 3);
    }
    int status = 0;
    const int waited = pid > 0 && waitpid(pid, &status, 0) == pid;
    g_release_handler = 1;
    pthread_join(t, NULL);
    if (!waited || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "first_calls handler-fork: the child %s\n",
                !waited ? "was not forked or waited for" : WIFEXITED(status) ? "saw the wrong RowMajorStrg or product"
                                                                               : "hung (killed)");
        return 1;
    }
    printf("first_calls handler-fork: a child forked while a handler ran reported its own error: OK\n");
    return 0;
}

/* The lines in DIR/trace.PID, -1 if there is no such file. */
static int trace_lines(const char *dir, long pid)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/trace.%ld", dir, pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    int lines = 0, ch;
    while ((ch = fgetc(f)) != EOF)
        lines += ch == '\n';
    fclose(f);
    return lines;
}

static int traced(const char *dir)
{
    float x[4] = {1, 1, 1, 1}, y[4];
    cblas_sgemm(102, 111, 111, 2, 2, 2, 1.0f, x, 2, x, 2, 0.0f, y, 2); /* the parent's trace file opened */
    fflush(NULL);
    const pid_t pid = fork();
    if (pid == 0) {
        cblas_sgemm(102, 111, 111, 2, 2, 2, 1.0f, x, 2, x, 2, 0.0f, y, 2);
        _exit(product_right(y, 2, 2) ? 0 : 3);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "first_calls trace: the child failed\n");
        return 1;
    }
    const int parent = trace_lines(dir, (long)getpid()), child = trace_lines(dir, (long)pid);
    if (parent != 1 || child != 1) {
        fprintf(stderr, "first_calls trace: %d line(s) in the parent's file, %d in the child's; want 1 and 1\n",
                parent, child);
        return 1;
    }
    printf("first_calls trace: the parent's call in trace.%ld, the child's in trace.%ld: OK\n", (long)getpid(),
           (long)pid);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "loader") == 0)
        return loader(argv[2]);
    if (argc == 2 && strcmp(argv[1], "fork") == 0)
        return forked();
    if (argc == 3 && strcmp(argv[1], "trace") == 0)
        return traced(argv[2]);
    if (argc == 2 && strcmp(argv[1], "handler-fork") == 0)
        return handler_fork();
    fprintf(stderr, "usage: %s loader PLUGIN | fork | handler-fork | trace DIR\n", argv[0]);
    return 2;
}
