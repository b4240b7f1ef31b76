/* Behaviour under environment settings. Settings are read once per process,
 * so `make test-env` runs this program once per scenario, with the variable
 * set, and names the scenario as the first argument:
 *
 *   no-device    CUDA_VISIBLE_DEVICES=      -> NO_DEVICE, C unchanged
 *   bad-setting  TGEMM_DEVICE=abc           -> INVALID_SETTING naming the variable
 *   bad-device   TGEMM_DEVICE=999           -> INVALID_DEVICE (NO_DEVICE without a GPU)
 *   bad-kernel   TGEMM_KERNEL=nonsense      -> INVALID_SETTING (NO_DEVICE without a GPU)
 *   verbose      TGEMM_VERBOSE=1            -> errors are logged to stderr
 *   quiet        (nothing set)              -> nothing is ever printed
 *   bad-memory-limit   TGEMM_DEVICE_MEMORY_LIMIT=12Q (and other bad values)
 *                                           -> INVALID_SETTING naming the variable
 *   bad-copy-threads   TGEMM_HOST_COPY_THREADS=0 (and other bad values)
 *                                           -> INVALID_SETTING naming the variable
 *   bad-clusters       TGEMM_CLUSTERS=2 (and other bad values)
 *                                           -> INVALID_SETTING naming the variable
 *   bad-streamk        TGEMM_STREAMK=yes (and other bad values)
 *                                           -> INVALID_SETTING naming the variable
 *   bad-tma            TGEMM_TMA=2 (and other bad values)
 *                                           -> INVALID_SETTING naming the variable
 *   bad-spread-peer    TGEMM_SPREAD_PEER=2 (and other bad values)
 *                                           -> INVALID_SETTING naming the variable
 *   bad-pack           TGEMM_PACK=yes (and other bad values)
 *                                           -> INVALID_SETTING naming the variable
 *   bad-math           TGEMM_MATH=tc (and other bad values); then tgemm_set_math
 *                      overrides it
 *   bad-verbose        TGEMM_VERBOSE=3 (and other bad values)
 *                                           -> INVALID_SETTING naming the variable
 *   bad-fp32-tc        TGEMM_FP32_TC=1 (and other bad values)
 *                                           -> INVALID_SETTING naming the variable
 *   math-default       (nothing set)        -> tgemm_get_math() is strict; tgemm_set_math
 *                                              switches it, refuses a value that is not a
 *                                              tgemm_math_t and keeps the mode
 *   math-env           TGEMM_MATH=fp32-tc   -> tgemm_get_math() is fp32-tc until set back
 *   tiny-memory-limit  TGEMM_DEVICE_MEMORY_LIMIT=100
 *                                           -> OUT_OF_MEMORY naming the variable
 *                                              (NO_DEVICE without a GPU), C unchanged
 *   bad-devices        TGEMM_DEVICES=0,,1 (and other bad values)
 *                                           -> INVALID_SETTING naming the variable
 *   bad-spread-grid    TGEMM_SPREAD_GRID=2x (and other bad values)
 *                                           -> INVALID_SETTING naming the variable
 *   devices-bad-device TGEMM_DEVICES=0,999  -> INVALID_DEVICE naming the variable
 *                                              (NO_DEVICE without a GPU), C unchanged
 *   bad-local-rank     TGEMM_DEVICE=local-rank OMPI_COMM_WORLD_LOCAL_RANK=x
 *                                           -> INVALID_SETTING naming OMPI_COMM_WORLD_LOCAL_RANK
 *   local-rank         TGEMM_DEVICE=local-rank and one launcher variable = R
 *                      (or none): the call runs on device R mod count (or
 *                      the thread's current device), whatever device the
 *                      thread has current: C in that device's memory is
 *                      accepted and computed, C on another device refused
 *                      with INVALID_DEVICE
 */
#include <cuda_runtime_api.h>

#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { kN = 8 };

/* A small real problem on host memory; C starts poisoned. */
static tgemm_status real_call(float *c)
{
    static float a[kN * kN], b[kN * kN];
    for (int i = 0; i < kN * kN; ++i) {
        a[i] = (float)(i % 5);
        b[i] = (float)(i % 3);
    }
    for (int i = 0; i < kN * kN; ++i)
        c[i] = poison_c();
    return tgemm_sgemm(TGEMM_OP_N, TGEMM_OP_N, kN, kN, kN, 1.0f, a, kN, b, kN, 2.0f, c, kN);
}

static void assert_c_untouched(const float *c)
{
    for (int i = 0; i < kN * kN; ++i)
        assert_true(same_bits(c[i], poison_c()));
}

/* Quick returns never depend on the device or settings. */
static void assert_quick_return_ok(void)
{
    assert_int_equal(tgemm_sgemm(TGEMM_OP_N, TGEMM_OP_N, 0, 4, 4, 1.0f, NULL, 1, NULL, 4, 0.0f, NULL, 1),
                     TGEMM_SUCCESS);
}

static void test_no_device(void **state)
{
    (void)state;
    float c[kN * kN];
    assert_int_equal(real_call(c), TGEMM_ERROR_NO_DEVICE);
    assert_c_untouched(c);
    assert_true(strlen(tgemm_last_error_detail()) > 0);
    assert_quick_return_ok();
    /* The status is stable, not a one-off. */
    assert_int_equal(real_call(c), TGEMM_ERROR_NO_DEVICE);
}

static void test_bad_setting(void **state)
{
    (void)state;
    float c[kN * kN];
    assert_int_equal(real_call(c), TGEMM_ERROR_INVALID_SETTING);
    assert_c_untouched(c);
    assert_non_null(strstr(tgemm_last_error_detail(), "TGEMM_DEVICE"));
    assert_quick_return_ok();
}

static void test_bad_device(void **state)
{
    (void)state;
    float c[kN * kN];
    assert_int_equal(real_call(c), gpu_available() ? TGEMM_ERROR_INVALID_DEVICE : TGEMM_ERROR_NO_DEVICE);
    assert_c_untouched(c);
    assert_quick_return_ok();
}

static void test_bad_kernel(void **state)
{
    (void)state;
    float c[kN * kN];
    const tgemm_status s = real_call(c);
    if (gpu_available()) {
        assert_int_equal(s, TGEMM_ERROR_INVALID_SETTING);
        assert_non_null(strstr(tgemm_last_error_detail(), "TGEMM_KERNEL"));
    } else {
        assert_int_equal(s, TGEMM_ERROR_NO_DEVICE);
    }
    assert_c_untouched(c);
}

/* A malformed value of `name`: INVALID_SETTING naming it, C untouched. */
static void assert_invalid_setting(const char *name)
{
    float c[kN * kN];
    assert_int_equal(real_call(c), TGEMM_ERROR_INVALID_SETTING);
    assert_c_untouched(c);
    assert_non_null(strstr(tgemm_last_error_detail(), name));
    assert_quick_return_ok();
}

static void test_bad_memory_limit(void **state)
{
    (void)state;
    assert_invalid_setting("TGEMM_DEVICE_MEMORY_LIMIT");
}

static void test_bad_copy_threads(void **state)
{
    (void)state;
    assert_invalid_setting("TGEMM_HOST_COPY_THREADS");
}

static void test_bad_clusters(void **state)
{
    (void)state;
    assert_invalid_setting("TGEMM_CLUSTERS");
}

static void test_bad_streamk(void **state)
{
    (void)state;
    assert_invalid_setting("TGEMM_STREAMK");
}

static void test_bad_tma(void **state)
{
    (void)state;
    assert_invalid_setting("TGEMM_TMA");
}

static void test_bad_spread_peer(void **state)
{
    (void)state;
    assert_invalid_setting("TGEMM_SPREAD_PEER");
}

static void test_bad_pack(void **state)
{
    (void)state;
    assert_invalid_setting("TGEMM_PACK");
}

/* An invalid TGEMM_MATH fails the calls until tgemm_set_math overrides
 * it: then they run (or find no GPU) as with any valid math. */
static void test_bad_math(void **state)
{
    (void)state;
    assert_invalid_setting("TGEMM_MATH");
    assert_int_equal(tgemm_get_math(), TGEMM_MATH_STRICT);
    float c[kN * kN];
    assert_int_equal(tgemm_set_math(TGEMM_MATH_STRICT), TGEMM_SUCCESS);
    const tgemm_status s = real_call(c);
    if (gpu_available()) {
        assert_int_equal(s, TGEMM_SUCCESS);
    } else {
        assert_int_equal(s, TGEMM_ERROR_NO_DEVICE);
        assert_c_untouched(c);
    }
}

static void test_bad_verbose(void **state)
{
    (void)state;
    assert_invalid_setting("TGEMM_VERBOSE");
}

static void test_bad_fp32_tc(void **state)
{
    (void)state;
    assert_invalid_setting("TGEMM_FP32_TC");
}

/* tgemm_set_math and tgemm_get_math, starting from `initial`. */
static void check_set_math(tgemm_math_t initial)
{
    assert_int_equal(tgemm_get_math(), initial);
    assert_int_equal(tgemm_set_math((tgemm_math_t)7), TGEMM_ERROR_INVALID_SETTING);
    assert_non_null(strstr(tgemm_last_error_detail(), "tgemm_set_math"));
    assert_int_equal(tgemm_get_math(), initial);
    assert_int_equal(tgemm_set_math(TGEMM_MATH_FP32_TC), TGEMM_SUCCESS);
    assert_int_equal(tgemm_get_math(), TGEMM_MATH_FP32_TC);
    assert_int_equal(tgemm_set_math(TGEMM_MATH_STRICT), TGEMM_SUCCESS);
    assert_int_equal(tgemm_get_math(), TGEMM_MATH_STRICT);
    assert_int_equal(tgemm_set_math((tgemm_math_t)-1), TGEMM_ERROR_INVALID_SETTING);
    assert_int_equal(tgemm_get_math(), TGEMM_MATH_STRICT);
    assert_quick_return_ok();
}

static void test_math_default(void **state)
{
    (void)state;
    check_set_math(TGEMM_MATH_STRICT);
}

static void test_math_env(void **state)
{
    (void)state;
    check_set_math(TGEMM_MATH_FP32_TC);
}

/* 100 bytes cannot hold even the smallest tiles of an 8 x 8 x 8 product. */
static void test_tiny_memory_limit(void **state)
{
    (void)state;
    float c[kN * kN];
    const tgemm_status s = real_call(c);
    if (gpu_available()) {
        assert_int_equal(s, TGEMM_ERROR_OUT_OF_MEMORY);
        assert_non_null(strstr(tgemm_last_error_detail(), "TGEMM_DEVICE_MEMORY_LIMIT"));
    } else {
        assert_int_equal(s, TGEMM_ERROR_NO_DEVICE);
    }
    assert_c_untouched(c);
}

/* Runs fn with stdout and stderr captured into a file; returns its bytes. */
static size_t captured_output(void (*fn)(void), char *buf, size_t cap)
{
    fflush(stdout);
    fflush(stderr);
    char path[] = "/tmp/tgemm-test-XXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    const int out = dup(1), err = dup(2);
    assert_true(dup2(fd, 1) >= 0 && dup2(fd, 2) >= 0);
    fn();
    fflush(stdout);
    fflush(stderr);
    assert_true(dup2(out, 1) >= 0 && dup2(err, 2) >= 0);
    close(out);
    close(err);
    const off_t len = lseek(fd, 0, SEEK_END);
    assert_true(len >= 0);
    size_t got = 0;
    if (len > 0) {
        assert_true(lseek(fd, 0, SEEK_SET) == 0);
        const ssize_t r = read(fd, buf, cap - 1);
        assert_true(r >= 0);
        got = (size_t)r;
    }
    buf[got] = '\0';
    close(fd);
    unlink(path);
    return (size_t)len;
}

/* Failing and succeeding calls of every kind. */
static void many_calls(void)
{
    float c[kN * kN];
    (void)real_call(c);
    (void)tgemm_sgemm(TGEMM_OP_N, TGEMM_OP_N, -1, 1, 1, 1.0f, NULL, 1, NULL, 1, 0.0f, NULL, 1);
    (void)tgemm_sgemm((tgemm_operation)5, TGEMM_OP_N, 1, 1, 1, 1.0f, NULL, 1, NULL, 1, 0.0f, NULL, 1);
    (void)tgemm_sgemm(TGEMM_OP_N, TGEMM_OP_N, 2, 2, 2, 1.0f, NULL, 2, NULL, 2, 0.0f, c, 2);
    (void)tgemm_sgemm_ex((tgemm_layout)3, TGEMM_OP_N, TGEMM_OP_N, 1, 1, 1, 1.0f, NULL, 1, NULL, 1, 0.0f, NULL, 1, NULL);
    assert_quick_return_ok();
}

static void test_verbose_logs_errors(void **state)
{
    (void)state;
    char buf[4096];
    captured_output(many_calls, buf, sizeof buf);
    assert_non_null(strstr(buf, "tgemm: invalid argument 3 (m)"));
    assert_non_null(strstr(buf, "tgemm: invalid argument 1 (transa)"));
}

static void test_quiet_by_default(void **state)
{
    (void)state;
    char buf[4096];
    const size_t len = captured_output(many_calls, buf, sizeof buf);
    if (len != 0)
        fail_msg("tgemm printed %zu bytes without being asked: %s", len, buf);
}

static void test_bad_devices(void **state)
{
    (void)state;
    assert_invalid_setting("TGEMM_DEVICES");
}

static void test_bad_spread_grid(void **state)
{
    (void)state;
    assert_invalid_setting("TGEMM_SPREAD_GRID");
}

static void test_devices_bad_device(void **state)
{
    (void)state;
    float c[kN * kN];
    if (!gpu_available()) {
        assert_int_equal(real_call(c), TGEMM_ERROR_NO_DEVICE);
    } else {
        assert_int_equal(real_call(c), TGEMM_ERROR_INVALID_DEVICE);
        assert_non_null(strstr(tgemm_last_error_detail(), "TGEMM_DEVICES"));
    }
    assert_c_untouched(c);
}

static void test_bad_local_rank(void **state)
{
    (void)state;
    assert_invalid_setting("OMPI_COMM_WORLD_LOCAL_RANK");
}

/* A product with C in the memory of device `dev`; its status, and C
 * checked when it succeeds. */
static tgemm_status call_on_device_c(int dev)
{
    static float a[kN * kN], b[kN * kN];
    float c[kN * kN], want[kN * kN];
    for (int i = 0; i < kN * kN; ++i) {
        a[i] = (float)(i % 5);
        b[i] = (float)(i % 3);
        c[i] = (float)(i % 7);
    }
    for (int j = 0; j < kN; ++j)
        for (int i = 0; i < kN; ++i) {
            float acc = 0.0f;
            for (int q = 0; q < kN; ++q)
                acc += a[i + q * kN] * b[q + j * kN];
            want[i + j * kN] = acc + 2.0f * c[i + j * kN];
        }
    int saved = 0;
    float *dc = NULL;
    CK(cudaGetDevice(&saved));
    CK(cudaSetDevice(dev));
    CK(cudaMalloc((void **)&dc, sizeof c));
    CK(cudaMemcpy(dc, c, sizeof c, cudaMemcpyHostToDevice));
    CK(cudaSetDevice(saved));
    const tgemm_status s = tgemm_sgemm(TGEMM_OP_N, TGEMM_OP_N, kN, kN, kN, 1.0f, a, kN, b, kN, 2.0f, dc, kN);
    CK(cudaMemcpy(c, dc, sizeof c, cudaMemcpyDeviceToHost));
    CK(cudaFree(dc));
    for (int i = 0; i < kN * kN && s == TGEMM_SUCCESS; ++i)
        assert_true(c[i] == want[i]);
    return s;
}

static void test_local_rank(void **state)
{
    (void)state;
    if (!gpu_available()) {
        float c[kN * kN];
        assert_int_equal(real_call(c), TGEMM_ERROR_NO_DEVICE);
        skip();
    }
    const char *vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "MV2_COMM_WORLD_LOCAL_RANK",
                          "SLURM_LOCALID"};
    int count = 0, current = 0, rank = -1;
    CK(cudaGetDeviceCount(&count));
    for (size_t i = 0; i < sizeof vars / sizeof vars[0] && rank < 0; ++i)
        if (getenv(vars[i]) != NULL)
            rank = atoi(getenv(vars[i]));
    /* The thread's current device is another one where there is another. */
    const int want = rank >= 0 ? rank % count : 0;
    CK(cudaSetDevice(rank >= 0 ? (want + 1) % count : 0));
    CK(cudaGetDevice(&current));
    printf("local rank %d of %d device(s): expect device %d, current %d\n", rank, count,
           rank >= 0 ? want : current, current);
    assert_int_equal(call_on_device_c(rank >= 0 ? want : current), TGEMM_SUCCESS);
    if (count > 1) {
        const int other = ((rank >= 0 ? want : current) + 1) % count;
        assert_int_equal(call_on_device_c(other), TGEMM_ERROR_INVALID_DEVICE);
    }
}

int main(int argc, char **argv)
{
    static const struct {
        const char *scenario;
        struct CMUnitTest test;
    } all[] = {
        {"no-device", cmocka_unit_test(test_no_device)},
        {"bad-setting", cmocka_unit_test(test_bad_setting)},
        {"bad-device", cmocka_unit_test(test_bad_device)},
        {"bad-kernel", cmocka_unit_test(test_bad_kernel)},
        {"verbose", cmocka_unit_test(test_verbose_logs_errors)},
        {"quiet", cmocka_unit_test(test_quiet_by_default)},
        {"bad-memory-limit", cmocka_unit_test(test_bad_memory_limit)},
        {"bad-copy-threads", cmocka_unit_test(test_bad_copy_threads)},
        {"bad-clusters", cmocka_unit_test(test_bad_clusters)},
        {"bad-streamk", cmocka_unit_test(test_bad_streamk)},
        {"bad-tma", cmocka_unit_test(test_bad_tma)},
        {"bad-spread-peer", cmocka_unit_test(test_bad_spread_peer)},
        {"bad-pack", cmocka_unit_test(test_bad_pack)},
        {"bad-math", cmocka_unit_test(test_bad_math)},
        {"bad-verbose", cmocka_unit_test(test_bad_verbose)},
        {"bad-fp32-tc", cmocka_unit_test(test_bad_fp32_tc)},
        {"math-default", cmocka_unit_test(test_math_default)},
        {"math-env", cmocka_unit_test(test_math_env)},
        {"tiny-memory-limit", cmocka_unit_test(test_tiny_memory_limit)},
        {"bad-devices", cmocka_unit_test(test_bad_devices)},
        {"bad-spread-grid", cmocka_unit_test(test_bad_spread_grid)},
        {"devices-bad-device", cmocka_unit_test(test_devices_bad_device)},
        {"bad-local-rank", cmocka_unit_test(test_bad_local_rank)},
        {"local-rank", cmocka_unit_test(test_local_rank)},
    };
    if (argc != 2) {
        fprintf(stderr, "usage: %s SCENARIO (see the comment at the top of tests/test_env.c)\n", argv[0]);
        return 2;
    }
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) {
        if (strcmp(argv[1], all[i].scenario) == 0) {
            struct CMUnitTest t = all[i].test;
            return run_group(all[i].scenario, &t, 1) ? 1 : 0;
        }
    }
    fprintf(stderr, "unknown scenario '%s'\n", argv[1]);
    return 2;
}
