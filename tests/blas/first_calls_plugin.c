/* A library whose constructor multiplies (a static table computed at load
 * time), after a pause that lets another thread start its own first call
 * (tests/blas/first_calls.c, loader): it creates the file FIRST_CALLS_MARK
 * names, then pauses, then multiplies. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

void cblas_sgemm(int layout, int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda, const float *b,
                 int ldb, float beta, float *c, int ldc);

float plugin_table[4];

__attribute__((constructor)) static void compute_table(void)
{
    const char *mark = getenv("FIRST_CALLS_MARK");
    if (mark != NULL && *mark) {
        const int fd = open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd >= 0)
            close(fd);
    }
    usleep(300000);
    const float x[4] = {1, 1, 1, 1};
    cblas_sgemm(102, 111, 111, 2, 2, 2, 1.0f, x, 2, x, 2, 0.0f, plugin_table, 2);
}
