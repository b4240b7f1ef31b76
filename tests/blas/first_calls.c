/* The process's first BLAS calls made where tgemm's one-time set-up could
 * hang a program (run by tests/blas/first_calls.sh under
 * LD_PRELOAD=libtgemm.so; linked against OpenBLAS only, as preload_prog):
 *
 *   first_calls loader PLUGIN   one thread dlopen()s PLUGIN, whose
 *                               constructor calls cblas_sgemm (after a
 *                               pause) while holding the dynamic loader's
 *                               lock; meanwhile this thread makes the
 *                               process's first call, whose lookup of the
 *                               CPU BLAS needs that lock. Both must finish.
 *   first_calls fork            one thread makes the first call the offload
 *                               model weighs (it measures the CPU BLAS once);
 *                               meanwhile this thread fork()s, and the child
 *                               makes such a call too: it must finish.
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
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void cblas_sgemm(int layout, int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda, const float *b,
                 int ldb, float beta, float *c, int ldc);

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
    usleep(100000); /* the other thread is in the plugin's constructor */
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
    usleep(2000); /* the other thread is measuring the CPU BLAS */
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
    fprintf(stderr, "usage: %s loader PLUGIN | fork | trace DIR\n", argv[0]);
    return 2;
}
