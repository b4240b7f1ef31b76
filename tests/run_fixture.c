/* A CMocka program whose results are known, for tests/check-run.sh: make
 * test's counting is checked on the real output of the CMocka it links.
 * Two cases pass and one skips, its reason printed once (as
 * gpu_available() does); with the argument "fail" one more case fails,
 * with "crash" the process aborts in it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static const char *g_mode = "";

static void test_pass(void **state)
{
    (void)state;
    assert_int_equal(1 + 1, 2);
}

static void test_skip(void **state)
{
    (void)state;
    skip();
}

static void test_bad(void **state)
{
    (void)state;
    if (strcmp(g_mode, "crash") == 0)
        abort();
    if (strcmp(g_mode, "fail") == 0)
        fail_msg("failing on purpose");
}

int main(int argc, char **argv)
{
    if (argc > 1)
        g_mode = argv[1];
    printf("[ SKIPPING ] the fixture's reason\n");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pass),
        cmocka_unit_test(test_skip),
        cmocka_unit_test(test_pass),
    };
    const struct CMUnitTest more[] = {cmocka_unit_test(test_bad)};
    const int failed = cmocka_run_group_tests_name("fixture", tests, NULL, NULL);
    if (*g_mode)
        return failed + cmocka_run_group_tests_name("fixture_bad", more, NULL, NULL);
    return failed;
}
