/* Linked into every CMocka test program: stdout is line-buffered from the
 * start, so that CMocka's progress lines (stdout) and its failure messages
 * (stderr) keep their order when make test's tests/run.sh sends both
 * through one pipe, where stdout would otherwise be block-buffered. */
#include <stdio.h>

__attribute__((constructor)) static void line_buffered_stdout(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
}
