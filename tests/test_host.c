/* Operands in host memory, on the GPU, against OpenBLAS (make test-host;
 * every case skips without a GPU).
 *
 * Calls with an operand in host memory run in tiles of C and chunks of K
 * that stream over the link (src/driver/host_executor.cpp, planned by
 * src/driver/host_plan.cpp). The table crosses the tile and chunk edges of
 * the default plan (2048 x 2048 tiles, 2048-deep chunks) on both sides,
 * with pageable, pinned, device and managed operands mixed, padding on
 * every leading dimension (the padding of C must come back bit for bit; A
 * and B must come back unchanged), beta == 0 on a NaN-filled C, alpha == 0
 * on NaN-filled A and B, k == 0, row-major and misaligned operands. Each row
 * runs with small-integer inputs (results must equal OpenBLAS's exactly) or
 * uniform ones (within the dot-product bound of common.h). Rows with NaN
 * and Inf in A, B and C (kSpecialCases) must carry them through the K
 * chunks and tiles as IEEE arithmetic says (special_reference). Then: the
 * caller's stream is respected, a dozen threads call at once, and
 * tgemm_release_resources() between calls.
 *
 * make test-host runs the program several times:
 *   test_host              the default plans;
 *   TGEMM_DEVICES=0,0 test_host (and =all where there are several GPUs)
 *                          the same cases spread over two workers on one
 *                          GPU (or over every GPU): calls on host operands
 *                          only are cut into blocks of C, each run by the
 *                          pipeline of a worker's device;
 *   test_host out-of-core  with TGEMM_DEVICE_MEMORY_LIMIT=<bytes> and
 *                          TGEMM_VERBOSE=2: the same cases on tiles of tens
 *                          to hundreds, operands crossing the link many
 *                          times. Every call's plan line is captured from
 *                          stderr and checked: within the limit, and cut
 *                          into several tasks when the operands exceed it
 *                          (the special-value rows: K into several chunks).
 *                          With TGEMM_DEVICES too, each call on host operands
 *                          only (with room for two 256-wide blocks of C) must
 *                          show one spread line and a plan line per block.
 *   test_host broken-context h|p|m BETA
 *                          with TGEMM_OFFLOAD=gpu, TGEMM_TRACE=<file> and
 *                          TGEMM_CPU_BLAS=libopenblas.so.0: sgemm_ with C
 *                          in pageable, pinned or managed memory while the
 *                          CUDA context breaks half way through the call;
 *                          C must still be exact. One process per run: the
 *                          context stays broken.
 */
#include "common.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

static bool g_out_of_core;  /* the out-of-core scenario */
static uint64_t g_limit;    /* its TGEMM_DEVICE_MEMORY_LIMIT */

/* ---------------------------------------------------------------- plan lines */

/* What the plan lines of a log showed: how many, and the most tasks (tiles
 * x K chunks), tiles of C and K chunks that one plan had. */
typedef struct {
    int lines;
    long long tasks, tiles, chunks;
    int spreads;             /* spread lines (TGEMM_DEVICES) */
    long long spread_blocks; /* and their blocks, each planned as a call of its own */
} plans_seen_t;

/* Checks every plan line of `log` against the limit, passes other lines on
 * to stderr. */
static plans_seen_t check_plans(const char *log)
{
    plans_seen_t seen = {0, 0, 0, 0, 0, 0};
    for (const char *line = log; *line;) {
        const char *eol = strchr(line, '\n');
        const size_t len = eol ? (size_t)(eol - line) + 1 : strlen(line);
        if (strncmp(line, "tgemm: spread ", 14) == 0) {
            const char *b = strstr(line, " blocks=");
            long long rows = 0, cols = 0;
            if (!b || sscanf(b, " blocks=%lldx%lld", &rows, &cols) != 2 || rows * cols < 2)
                fail_msg("unreadable spread line: %.*s", (int)len, line);
            seen.spread_blocks += rows * cols;
            ++seen.spreads;
        } else if (strncmp(line, "tgemm: host plan ", 17) == 0) {
            const char *b = strstr(line, " blocks="), *d = strstr(line, " device_bytes=");
            long long mb = 0, nb = 0, kb = 0;
            unsigned long long bytes = 0;
            if (!b || !d || sscanf(b, " blocks=%lldx%lldx%lld", &mb, &nb, &kb) != 3 ||
                sscanf(d, " device_bytes=%llu", &bytes) != 1)
                fail_msg("unreadable plan line: %.*s", (int)len, line);
            if (bytes > g_limit)
                fail_msg("plan takes %llu bytes of device memory, limit %llu: %.*s", bytes,
                         (unsigned long long)g_limit, (int)len, line);
            if (mb * nb * kb > seen.tasks)
                seen.tasks = mb * nb * kb;
            if (mb * nb > seen.tiles)
                seen.tiles = mb * nb;
            if (kb > seen.chunks)
                seen.chunks = kb;
            ++seen.lines;
        } else {
            fwrite(line, 1, len, stderr);
        }
        line += len;
    }
    return seen;
}

/* ---------------------------------------------------------------- one call */

typedef struct {
    const char *name;
    bool row_major, ta, tb;
    int64_t m, n, k;
    int64_t pad_a, pad_b, pad_c; /* ld = rows (row-major: columns) as stored + pad */
    float alpha, beta;
    mem_t mem_a, mem_b, mem_c;
    int offset; /* added to every pointer: 1 misaligns them */
    bool use_ex; /* tgemm_sgemm_ex on a created stream, else tgemm_sgemm */
} host_case_t;

static shapes_t shapes_of(const host_case_t *t)
{
    return shapes_of_call(!t->row_major, t->ta, t->tb, t->m, t->n, t->k, t->pad_a, t->pad_b, t->pad_c);
}

/* The call itself, on `stream` when use_ex; k == 0 passes NULL for A and B. */
static tgemm_status gemm(const host_case_t *t, const shapes_t *s, const float *a, const float *b, float *c,
                         cudaStream_t stream)
{
    const tgemm_operation ta = t->ta ? TGEMM_OP_T : TGEMM_OP_N, tb = t->tb ? TGEMM_OP_T : TGEMM_OP_N;
    if (t->k == 0)
        a = b = NULL;
    if (t->use_ex || t->row_major)
        return tgemm_sgemm_ex(t->row_major ? TGEMM_LAYOUT_ROW_MAJOR : TGEMM_LAYOUT_COL_MAJOR, ta, tb, t->m, t->n,
                              t->k, t->alpha, a, s->SA.ld, b, s->SB.ld, t->beta, c, s->SC.ld, stream);
    return tgemm_sgemm(ta, tb, t->m, t->n, t->k, t->alpha, a, s->SA.ld, b, s->SB.ld, t->beta, c, s->SC.ld);
}

/* The same, with its plan line checked in the out-of-core scenario; with
 * `several` (the special-value rows), the plan must cut K into several
 * chunks where A and B are read, so that NaN and Inf of one chunk meet the
 * C of the others (beta = 1 after the first), else C into several tiles. */
/* The workers TGEMM_DEVICES starts: 1 when unset, the devices listed, or
 * every visible device for `all`; -1 for `auto` (the model decides). */
static int listed_workers(void)
{
    const char *e = getenv("TGEMM_DEVICES");
    if (!e || !*e)
        return 1;
    if (strcmp(e, "auto") == 0)
        return -1;
    int n = 1;
    if (strcmp(e, "all") == 0)
        CK(cudaGetDeviceCount(&n));
    else
        for (; *e; ++e)
            n += *e == ',';
    return n;
}

static tgemm_status gemm_checked(const host_case_t *t, const shapes_t *s, const float *a, const float *b, float *c,
                                 cudaStream_t stream, bool several)
{
    if (!g_out_of_core)
        return gemm(t, s, a, b, c, stream);
    capture_t cap;
    capture_begin(&cap);
    const tgemm_status st = gemm(t, s, a, b, c, stream);
    char *log = capture_end(&cap);
    const plans_seen_t seen = check_plans(log);
    free(log);
    if (st != TGEMM_SUCCESS)
        return st;
    /* With TGEMM_DEVICES, a call on host operands only whose C has room
     * for two blocks of 256 is spread: one plan line per block. */
    const bool host_only = t->mem_c != MEM_DEVICE && t->mem_c != MEM_MANAGED &&
                           (t->alpha == 0.0f || t->k == 0 ||
                            (t->mem_a != MEM_DEVICE && t->mem_a != MEM_MANAGED && t->mem_b != MEM_DEVICE &&
                             t->mem_b != MEM_MANAGED));
    const int64_t rows = t->row_major ? t->n : t->m, cols = t->row_major ? t->m : t->n;
    const bool room = (rows / 256 > 1 ? rows / 256 : 1) * (cols / 256 > 1 ? cols / 256 : 1) >= 2;
    const bool spread = listed_workers() >= 2 && host_only && room;
    if (listed_workers() >= 0 && seen.spreads != (spread ? 1 : 0))
        fail_msg("%s: %s spread over TGEMM_DEVICES=%s", t->name, spread ? "not" : "wrongly",
                 getenv("TGEMM_DEVICES") ? getenv("TGEMM_DEVICES") : "(unset)");
    if (seen.lines != (seen.spreads ? seen.spread_blocks : 1))
        fail_msg("%s: %d plan lines for one call (%lld spread blocks)", t->name, seen.lines, seen.spread_blocks);
    const double bytes = 4.0 * ((double)t->m * t->k + (double)t->k * t->n + (double)t->m * t->n);
    if (!seen.spreads && bytes > 2.0 * (double)g_limit && seen.tasks < 2)
        fail_msg("%s: %.0f bytes of operands ran as one task under a limit of %llu bytes", t->name, bytes,
                 (unsigned long long)g_limit);
    if (several && (t->alpha != 0.0f && t->k > 0 ? seen.chunks < 2 : seen.tiles < 2))
        fail_msg("%s: planned as %lld tiles and %lld K chunks: too few pieces for the special values to cross",
                 t->name, seen.tiles, seen.chunks);
    return st;
}

/* What OpenBLAS computes; for alpha == 0 or k == 0 it is beta * C by hand,
 * since OpenBLAS reads A and B even then. */
static void reference(const host_case_t *t, const shapes_t *s, const float *A, const float *B, const float *C0,
                      float *ref)
{
    const size_t nc = shape_elems(s->SC);
    if (t->alpha == 0.0f || t->k == 0) {
        for (int64_t o = 0; o < s->SC.outer; ++o)
            for (int64_t i = 0; i < s->SC.ld; ++i) {
                const size_t at = (size_t)(o * s->SC.ld + i);
                ref[at] = i >= s->SC.inner ? poison_pad() : t->beta == 0.0f ? 0.0f : t->beta * C0[at];
            }
        return;
    }
    if (t->beta != 0.0f)
        memcpy(ref, C0, nc * sizeof(float));
    else
        fill_constant(ref, s->SC, 0.0f);
    ref_sgemm(t->row_major ? REF_ROW_MAJOR : REF_COL_MAJOR, t->ta ? REF_T : REF_N, t->tb ? REF_T : REF_N, (int)t->m,
              (int)t->n, (int)t->k, t->alpha, A, (int)s->SA.ld, B, (int)s->SB.ld, t->beta, ref, (int)s->SC.ld);
}

/* One row, with small-integer inputs (exact) or uniform ones. With
 * `special`, NaN and Inf are put into A, B and (beta != 0) C
 * (put_special_values) and C is checked against special_reference. */
static void run_case(const host_case_t *t, uint64_t index, bool exact, bool special)
{
    const uint64_t seed = test_seed_for(index * 2 + (exact ? 1 : 0));
    rng_t rng = {seed};
    const shapes_t s = shapes_of(t);
    const problem_t prob = {!t->row_major, t->ta, t->tb, t->m, t->n, t->k, t->alpha, t->beta, s};
    const size_t na = shape_elems(s.SA), nb = shape_elems(s.SB), nc = shape_elems(s.SC);
    float *A = xmalloc(na * sizeof(float)), *B = xmalloc(nb * sizeof(float));
    float *C0 = xmalloc(nc * sizeof(float)), *ref = xmalloc(nc * sizeof(float)), *got = xmalloc(nc * sizeof(float));
    if (t->alpha == 0.0f && !special) { /* never read: NaN would show */
        fill_constant(A, s.SA, NAN);
        fill_constant(B, s.SB, NAN);
    } else {
        fill_matrix(A, s.SA, &rng, exact);
        fill_matrix(B, s.SB, &rng, exact);
    }
    if (t->beta != 0.0f)
        fill_matrix(C0, s.SC, &rng, exact);
    else
        fill_constant(C0, s.SC, poison_c()); /* never read */
    double *bound = NULL, *want = NULL;
    if (special) {
        put_special_values(&prob, A, B, t->beta != 0.0f ? C0 : NULL);
        special_counts_t counts;
        want = special_reference(&prob, A, B, C0, exact ? NULL : &bound, &counts);
        require_special_counts(t->name, &prob, &counts);
    } else {
        reference(t, &s, A, B, C0, ref);
        if (!exact)
            bound = error_bound(!t->row_major, t->ta, t->tb, t->m, t->n, t->k, t->alpha, A, s.SA, B, s.SB, t->beta,
                                C0, s.SC);
    }

    buf_t a = buf_make(t->mem_a, A, na, t->offset);
    buf_t b = buf_make(t->mem_b, B, nb, t->offset);
    buf_t c = buf_make(t->mem_c, C0, nc, t->offset);
    cudaStream_t stream = NULL;
    if (t->use_ex)
        CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    const tgemm_status st = gemm_checked(t, &s, a.ptr, b.ptr, c.ptr, stream, special);
    if (stream) {
        CK(cudaStreamSynchronize(stream));
        CK(cudaStreamDestroy(stream));
    }
    if (st != TGEMM_SUCCESS)
        fail_msg("%s: tgemm returned %d (%s): %s (seed 0x%016llx)", t->name, (int)st, tgemm_status_string(st),
                 tgemm_last_error_detail(), (unsigned long long)seed);

    buf_read(&c, got);
    if (special)
        check_special(t->name, &prob, got, want, bound, exact, seed);
    else
        check_c(t->name, got, ref, bound, s.SC, t->k, exact, seed);
    float *back = xmalloc((na > nb ? na : nb) * sizeof(float));
    buf_read(&a, back);
    assert_memory_equal(back, A, na * sizeof(float));
    buf_read(&b, back);
    assert_memory_equal(back, B, nb * sizeof(float));

    free(back);
    buf_free(&a);
    buf_free(&b);
    buf_free(&c);
    free(A), free(B), free(C0), free(ref), free(got), free(bound), free(want);
}

/* ---------------------------------------------------------------- the table */

#define H MEM_HOST
#define P MEM_PINNED
#define D MEM_DEVICE
#define M MEM_MANAGED

/* name, row_major, ta, tb, m, n, k, pad_a, pad_b, pad_c, alpha, beta, A, B, C, offset, use_ex */
static const host_case_t kCases[] = {
    {"nn_2100x2300x2500_hhh", false, false, false, 2100, 2300, 2500, 1, 3, 2, 1.0f, 0.0f, H, H, H, 0, false},
    {"nt_4096x2048x4096_ppp_whole_tiles", false, false, true, 4096, 2048, 4096, 0, 0, 0, 1.0f, 1.0f, P, P, P, 0, false},
    {"tn_2049x2047x2049_hpd", false, true, false, 2049, 2047, 2049, 2, 0, 1, -1.0f, 0.5f, H, P, D, 0, true},
    {"tt_3000x1500x2100_dph", false, true, true, 3000, 1500, 2100, 0, 5, 3, 0.5f, -2.0f, D, P, H, 0, false},
    {"nn_2050x4100x300_ddh_c_only", false, false, false, 2050, 4100, 300, 0, 0, 4, 1.0f, 2.0f, D, D, H, 0, true},
    {"nn_300x2050x4500_hhd", false, false, false, 300, 2050, 4500, 3, 1, 0, 1.0f, 0.0f, H, H, D, 0, false},
    {"nn_2100x2100x2100_hhm_managed_c", false, false, false, 2100, 2100, 2100, 0, 0, 2, 2.0f, 0.25f, H, H, M, 0, false},
    {"nt_1x5000x3000_hhh", false, false, true, 1, 5000, 3000, 0, 2, 0, 1.0f, 1.0f, H, H, H, 0, false},
    {"tn_5000x1x3000_ppp", false, true, false, 5000, 1, 3000, 1, 0, 3, 1.0f, 0.0f, P, P, P, 0, true},
    {"nn_4100x30x5000_hmh", false, false, false, 4100, 30, 5000, 0, 0, 1, -0.25f, 1.0f, H, M, H, 0, false},
    {"nn_2500x2100x100_alpha0_hhh", false, false, false, 2500, 2100, 100, 2, 2, 2, 0.0f, 3.0f, H, H, H, 0, false},
    {"nn_2100x2200x0_k0_pageable_c", false, false, false, 2100, 2200, 0, 0, 0, 3, 2.0f, -1.0f, H, H, H, 0, false},
    {"nn_2100x2200x0_k0_beta0_pinned_c", false, false, false, 2100, 2200, 0, 0, 0, 1, 2.0f, 0.0f, P, P, P, 0, true},
    {"rowmajor_nt_2100x1900x2200_hhh", true, false, true, 2100, 1900, 2200, 1, 2, 3, 1.0f, 0.5f, H, H, H, 0, true},
    {"rowmajor_tn_2300x2049x1000_phd", true, true, false, 2300, 2049, 1000, 0, 0, 0, -1.0f, 0.0f, P, H, D, 0, true},
    {"nn_2300x2200x2100_beta0_ppp_padc5", false, false, false, 2300, 2200, 2100, 0, 0, 5, 1.0f, 0.0f, P, P, P, 0, false},
    {"tt_2100x2100x2100_pads100_hhh", false, true, true, 2100, 2100, 2100, 100, 100, 100, 1.0f, -1.0f, H, H, H, 0, false},
    {"nn_2100x2050x2060_misaligned_hph", false, false, false, 2100, 2050, 2060, 1, 1, 1, 1.0f, 1.0f, H, P, H, 1, false},
    {"nt_2100x2050x2060_misaligned_pdp", false, false, true, 2100, 2050, 2060, 3, 0, 2, 1.0f, 0.0f, P, D, P, 1, true},
    {"nn_4500x2100x2100_hhh_panel_reuse", false, false, false, 4500, 2100, 2100, 0, 1, 0, 1.0f, 0.5f, H, H, H, 0, false},
    {"tn_4500x2100x2100_ppp_panel_reuse", false, true, false, 4500, 2100, 2100, 2, 0, 1, 1.0f, 0.0f, P, P, P, 0, true},
    {"nn_2048x2048x2048_hhh_one_tile", false, false, false, 2048, 2048, 2048, 0, 0, 0, 1.0f, 0.0f, H, H, H, 0, false},
    {"tn_2049x2049x4097_pph", false, true, false, 2049, 2049, 4097, 0, 0, 0, 1.0f, 1.0f, P, P, H, 0, false},
    {"nn_7x9x5_hhh", false, false, false, 7, 9, 5, 1, 0, 2, 1.0f, 0.5f, H, H, H, 0, false},
    {"tt_64x64x64_hph", false, true, true, 64, 64, 64, 0, 0, 0, 1.0f, 0.0f, H, P, H, 0, true},
};

/* NaN and Inf in A, B and C (put_special_values in tests/common.c), each
 * checked against special_reference. K runs over several 2048-deep chunks
 * of the default plan (k/2 - 1, k/2, 2047 and 2048 fall in different ones,
 * 0 and k - 1 in the first and the last) and over 3 to 18 chunks out of
 * core, so that a NaN or Inf of the first chunk must survive the later
 * chunks' accumulation (run with beta 1), and one of the last chunk must
 * reach the C that earlier chunks wrote; the first row's C spans 2 x 2
 * tiles of the default plan (rows and columns 2047 and 2048 on both sides
 * of their edge), and most rows' C many tiles out of core. NaN and Inf of
 * C must come in (beta != 0) or stay out (beta == 0, C NaN-poisoned), and
 * alpha == 0 must leave A and B unread. Out of core, the plan must show
 * several K chunks (several tiles for alpha == 0; gemm_checked). */
static const host_case_t kSpecialCases[] = {
    {"special_nn_2100x2300x4100_hhh", false, false, false, 2100, 2300, 4100, 1, 3, 2, 1.0f, 0.5f, H, H, H, 0, false},
    {"special_tn_2049x2047x4097_beta0_ppd", false, true, false, 2049, 2047, 4097, 0, 0, 0, -1.0f, 0.0f, P, P, D, 0,
     true},
    {"special_nt_300x2050x4500_hdp", false, false, true, 300, 2050, 4500, 3, 1, 0, 0.5f, -2.0f, H, D, P, 0, false},
    {"special_rowmajor_tt_2100x1900x2200_php", true, true, true, 2100, 1900, 2200, 1, 0, 3, 2.0f, 0.25f, P, H, P, 0,
     true},
    {"special_nn_2100x2200x100_alpha0_hhh", false, false, false, 2100, 2200, 100, 2, 2, 2, 0.0f, -2.0f, H, H, H, 0,
     false},
};

static void test_case_exact(void **state)
{
    REQUIRE_GPU();
    const host_case_t *t = *state;
    run_case(t, (uint64_t)(t - kCases), true, false);
}

static void test_case_random(void **state)
{
    REQUIRE_GPU();
    const host_case_t *t = *state;
    run_case(t, (uint64_t)(t - kCases), false, false);
}

/* Seeds apart from kCases' and the other tests'. */
enum { kSpecialSeedBase = 2000 };

static void test_special_exact(void **state)
{
    REQUIRE_GPU();
    const host_case_t *t = *state;
    run_case(t, kSpecialSeedBase + (uint64_t)(t - kSpecialCases), true, true);
}

static void test_special_random(void **state)
{
    REQUIRE_GPU();
    const host_case_t *t = *state;
    run_case(t, kSpecialSeedBase + (uint64_t)(t - kSpecialCases), false, true);
}

/* ---------------------------------------------------------------- the caller's stream */

static void CUDART_CB sleep_on_stream(void *ms)
{
    usleep((useconds_t)(uintptr_t)ms * 1000u);
}

typedef struct {
    float *dst;
    const float *src;
    size_t bytes;
} host_fill_t;

/* Sleeps 200 ms, then fills pageable memory: work on the caller's stream
 * that writes a host operand. */
static void CUDART_CB fill_on_stream(void *arg)
{
    const host_fill_t *f = arg;
    usleep(200000);
    memcpy(f->dst, f->src, f->bytes);
}

/* Work already queued on the caller's stream runs first: A (device memory)
 * is filled by a copy queued behind a 200 ms sleep on that stream, so a
 * call that did not wait for the stream would read the NaN A holds before;
 * likewise pageable B, filled by a host function on the stream. Work
 * queued after the call sees C written. */
static void test_caller_stream_order(void **state)
{
    (void)state;
    REQUIRE_GPU();
    const host_case_t t = {"stream_order", false, false, false, 700, 600, 500, 0, 0, 0, 1.0f, 0.0f, D, H, H, 0, true};
    const shapes_t s = shapes_of(&t);
    const size_t na = shape_elems(s.SA), nb = shape_elems(s.SB), nc = shape_elems(s.SC);
    rng_t rng = {test_seed_for(9001)};
    float *A = xmalloc(na * 4), *B = xmalloc(nb * 4), *C = xmalloc(nc * 4), *ref = xmalloc(nc * 4);
    fill_matrix(A, s.SA, &rng, true);
    fill_matrix(B, s.SB, &rng, true);
    fill_constant(C, s.SC, poison_c());
    reference(&t, &s, A, B, C, ref);
    buf_t pa = buf_make(MEM_PINNED, A, na, 0), da = buf_make(MEM_DEVICE, NULL, na, 0);
    buf_t dc = buf_make(MEM_DEVICE, NULL, nc, 0), back = buf_make(MEM_PINNED, NULL, nc, 0);
    CK(cudaMemset(da.ptr, 0xFF, na * 4));
    cudaStream_t stream;
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

    /* Host C. */
    CK(cudaLaunchHostFunc(stream, sleep_on_stream, (void *)(uintptr_t)200));
    CK(cudaMemcpyAsync(da.ptr, pa.ptr, na * 4, cudaMemcpyHostToDevice, stream));
    assert_int_equal(gemm_checked(&t, &s, da.ptr, B, C, stream, false), TGEMM_SUCCESS);
    check_c("stream_order host C", C, ref, NULL, s.SC, t.k, true, 0);

    /* Device C: read back on the same stream after the call. */
    CK(cudaStreamSynchronize(stream));
    CK(cudaMemset(da.ptr, 0xFF, na * 4));
    CK(cudaLaunchHostFunc(stream, sleep_on_stream, (void *)(uintptr_t)200));
    CK(cudaMemcpyAsync(da.ptr, pa.ptr, na * 4, cudaMemcpyHostToDevice, stream));
    host_case_t t2 = t;
    t2.mem_c = D;
    assert_int_equal(gemm_checked(&t2, &s, da.ptr, B, dc.ptr, stream, false), TGEMM_SUCCESS);
    CK(cudaMemcpyAsync(back.ptr, dc.ptr, nc * 4, cudaMemcpyDeviceToHost, stream));
    CK(cudaStreamSynchronize(stream));
    check_c("stream_order device C", back.ptr, ref, NULL, s.SC, t.k, true, 0);

    /* Pageable B written by the stream's own host function. */
    float *hb = xmalloc(nb * 4);
    fill_constant(hb, s.SB, NAN);
    host_fill_t fill = {hb, B, nb * 4};
    fill_constant(C, s.SC, poison_c());
    CK(cudaLaunchHostFunc(stream, fill_on_stream, &fill));
    assert_int_equal(gemm_checked(&t, &s, da.ptr, hb, C, stream, false), TGEMM_SUCCESS);
    check_c("stream_order pageable B", C, ref, NULL, s.SC, t.k, true, 0);
    CK(cudaStreamSynchronize(stream));
    free(hb);

    /* The legacy default stream. */
    fill_constant(C, s.SC, poison_c());
    assert_int_equal(gemm_checked(&t, &s, da.ptr, B, C, NULL, false), TGEMM_SUCCESS);
    check_c("stream_order legacy stream", C, ref, NULL, s.SC, t.k, true, 0);

    CK(cudaStreamDestroy(stream));
    buf_free(&pa), buf_free(&da), buf_free(&dc), buf_free(&back);
    free(A), free(B), free(C), free(ref);
}

/* ---------------------------------------------------------------- threads */

enum { kThreads = 12, kJobsPerThread = 2 };

typedef struct {
    host_case_t t;
    shapes_t s;
    float *A, *B, *C0, *ref;
    buf_t a, b, c;
    tgemm_status status;
    char detail[256];
} job_t;

static void *thread_main(void *arg)
{
    job_t *jobs = arg;
    for (int i = 0; i < kJobsPerThread; ++i) {
        job_t *j = &jobs[i];
        j->status = gemm(&j->t, &j->s, j->a.ptr, j->b.ptr, j->c.ptr, NULL);
        snprintf(j->detail, sizeof j->detail, "%s", tgemm_last_error_detail());
    }
    return NULL;
}

/* A dozen threads at once on host operands (more than there are pipelines,
 * so some wait for one), each result exact. Buffers are made and checked
 * on the main thread; the threads only call tgemm. */
static void test_concurrent_threads(void **state)
{
    (void)state;
    REQUIRE_GPU();
    static const mem_t kinds[][3] = {{H, H, H}, {P, P, P}, {H, P, D}, {D, H, P}, {H, H, D}, {P, H, H}};
    rng_t rng = {test_seed_for(9002)};
    job_t *jobs = xmalloc(sizeof(job_t) * kThreads * kJobsPerThread);
    for (int i = 0; i < kThreads * kJobsPerThread; ++i) {
        job_t *j = &jobs[i];
        memset(j, 0, sizeof *j);
        host_case_t *t = &j->t;
        t->name = "thread";
        t->ta = rng_next(&rng) & 1;
        t->tb = rng_next(&rng) & 1;
        const bool large = i % kJobsPerThread == 1; /* several tiles in the default plan */
        t->m = large ? 2100 : 1 + (int64_t)(rng_next(&rng) % 600);
        t->n = large ? 1100 : 1 + (int64_t)(rng_next(&rng) % 600);
        t->k = large ? 2200 : 1 + (int64_t)(rng_next(&rng) % 600);
        t->pad_a = 1;
        t->pad_c = 2;
        t->alpha = 1.0f;
        t->beta = (i % 3) ? 0.5f : 0.0f;
        t->mem_a = kinds[i % 6][0];
        t->mem_b = kinds[i % 6][1];
        t->mem_c = kinds[i % 6][2];
        j->s = shapes_of(&j->t);
        const size_t na = shape_elems(j->s.SA), nb = shape_elems(j->s.SB), nc = shape_elems(j->s.SC);
        j->A = xmalloc(na * 4);
        j->B = xmalloc(nb * 4);
        j->C0 = xmalloc(nc * 4);
        j->ref = xmalloc(nc * 4);
        fill_matrix(j->A, j->s.SA, &rng, true);
        fill_matrix(j->B, j->s.SB, &rng, true);
        if (t->beta != 0.0f)
            fill_matrix(j->C0, j->s.SC, &rng, true);
        else
            fill_constant(j->C0, j->s.SC, poison_c());
        reference(t, &j->s, j->A, j->B, j->C0, j->ref);
        j->a = buf_make(t->mem_a, j->A, na, 0);
        j->b = buf_make(t->mem_b, j->B, nb, 0);
        j->c = buf_make(t->mem_c, j->C0, nc, 0);
    }
    capture_t cap;
    if (g_out_of_core)
        capture_begin(&cap);
    pthread_t th[kThreads];
    for (int t = 0; t < kThreads; ++t)
        assert_int_equal(pthread_create(&th[t], NULL, thread_main, &jobs[t * kJobsPerThread]), 0);
    for (int t = 0; t < kThreads; ++t)
        assert_int_equal(pthread_join(th[t], NULL), 0);
    if (g_out_of_core) {
        char *log = capture_end(&cap);
        const plans_seen_t seen = check_plans(log);
        free(log);
        if (seen.lines != kThreads * kJobsPerThread - seen.spreads + seen.spread_blocks)
            fail_msg("%d plan lines for %d calls (%d spread over %lld blocks)", seen.lines, kThreads * kJobsPerThread,
                     seen.spreads, seen.spread_blocks);
    }
    for (int i = 0; i < kThreads * kJobsPerThread; ++i) {
        job_t *j = &jobs[i];
        if (j->status != TGEMM_SUCCESS)
            fail_msg("job %d: status %d: %s", i, (int)j->status, j->detail);
        float *got = xmalloc(shape_elems(j->s.SC) * 4);
        buf_read(&j->c, got);
        char what[64];
        snprintf(what, sizeof what, "thread job %d (%c%c%c)", i, mem_tag[j->t.mem_a], mem_tag[j->t.mem_b],
                 mem_tag[j->t.mem_c]);
        check_c(what, got, j->ref, NULL, j->s.SC, j->t.k, true, 0);
        free(got);
        buf_free(&j->a), buf_free(&j->b), buf_free(&j->c);
        free(j->A), free(j->B), free(j->C0), free(j->ref);
    }
    free(jobs);
}

/* ---------------------------------------------------------------- resources */

/* Releasing between calls: the next call allocates again and is right;
 * releasing twice, or with nothing held, succeeds. */
static void test_release_resources(void **state)
{
    (void)state;
    REQUIRE_GPU();
    const host_case_t pageable = {"release_pageable", false, false, true, 2100, 700, 2300, 0, 0, 1, 1.0f, 0.5f,
                                  H, H, H, 0, false};
    const host_case_t pinned = {"release_pinned", false, true, false, 300, 2100, 500, 0, 0, 0, 1.0f, 0.0f,
                                P, P, P, 0, true};
    run_case(&pageable, 1001, true, false);
    assert_int_equal(tgemm_release_resources(), TGEMM_SUCCESS);
    run_case(&pageable, 1002, true, false);
    run_case(&pinned, 1003, true, false);
    assert_int_equal(tgemm_release_resources(), TGEMM_SUCCESS);
    assert_int_equal(tgemm_release_resources(), TGEMM_SUCCESS);
    run_case(&pinned, 1004, true, false);
    run_case(&pageable, 1005, true, false);
}

/* ---------------------------------------------------------------- a broken context */

/* The BLAS ABI exported by libtgemm (not declared in tgemm.h). */
void sgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k, const float *alpha,
            const float *A, const int *lda, const float *B, const int *ldb, const float *beta, float *C,
            const int *ldc, size_t transa_len, size_t transb_len);

/* A kernel that waits `ns` nanoseconds on the GPU's clock, then traps: the
 * CUDA context breaks, as on a kernel fault, and every later CUDA call in
 * the process fails, tgemm's included (one context per device). It returns
 * without trapping if *cancel (mapped host memory) becomes nonzero first:
 * the test sets it when the call has returned, so that a trap timed too late
 * for the call can be tried again, earlier, in the same process. */
static const char kTrapPtx[] =
    ".version 6.0\n"
    ".target sm_50\n"
    ".address_size 64\n"
    ".visible .entry tgemm_test_trap_after(.param .u64 tgemm_test_trap_after_ns,\n"
    "                                      .param .u64 tgemm_test_trap_after_cancel)\n"
    "{\n"
    "    .reg .pred %p, %q;\n"
    "    .reg .b32 %r1;\n"
    "    .reg .b64 %rd<6>;\n"
    "    ld.param.u64 %rd1, [tgemm_test_trap_after_ns];\n"
    "    ld.param.u64 %rd5, [tgemm_test_trap_after_cancel];\n"
    "    mov.u64 %rd2, %globaltimer;\n"
    "$L_wait:\n"
    "    ld.volatile.u32 %r1, [%rd5];\n"
    "    setp.ne.u32 %q, %r1, 0;\n"
    "    @%q bra $L_done;\n"
    "    mov.u64 %rd3, %globaltimer;\n"
    "    sub.s64 %rd4, %rd3, %rd2;\n"
    "    setp.lt.u64 %p, %rd4, %rd1;\n"
    "    @%p bra $L_wait;\n"
    "    trap;\n"
    "$L_done:\n"
    "    ret;\n"
    "}\n";

static mem_t g_broken_c;   /* the broken-context scenario: C's memory */
static float g_broken_beta;

static double seconds_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The last line of a file (malloc'ed). */
static char *last_line(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("cannot read the trace %s", path);
    char buf[1024], *last = xstrdup_printf("%s", "");
    while (fgets(buf, sizeof buf, f)) {
        free(last);
        last = xstrdup_printf("%s", buf);
    }
    fclose(f);
    return last;
}

/* Whether a device listed in TGEMM_DEVICES other than the current one
 * still runs CUDA calls: after a kernel fault, CUDA may fail every later
 * call of the process, on every device (as it documents for such errors). */
static bool other_listed_device_works(void)
{
    int cur = 0, count = 0;
    CK(cudaGetDevice(&cur));
    CK(cudaGetDeviceCount(&count));
    const char *e = getenv("TGEMM_DEVICES");
    bool works = false;
    for (int d = 0; d < count && !works; ++d) {
        if (d == cur)
            continue;
        bool listed = e && strcmp(e, "all") == 0;
        for (const char *q = e; q && *q && !listed; q += strcspn(q, ","), q += *q == ',')
            listed = atoi(q) == d;
        void *p = NULL;
        if (listed && cudaSetDevice(d) == cudaSuccess && cudaMalloc(&p, 256) == cudaSuccess)
            works = cudaFree(p) == cudaSuccess;
    }
    (void)cudaSetDevice(cur);
    (void)cudaGetLastError();
    return works;
}

/* sgemm_ on pageable A and B and C in g_broken_c memory, while a kernel of
 * this program breaks the context half way through the call (timed by
 * calls like it before; tried again earlier where the call ends first):
 * the GPU fails in the middle, tgemm's BLAS layer computes the tiles of C
 * not yet written back on the CPU BLAS, and C must
 * equal OpenBLAS's result exactly (small-integer inputs), whatever beta
 * is. The trace must show the fallback, and the context must be broken, or
 * the run did not test what it is for. Memory is not freed afterwards:
 * freeing it needs the broken context. */
static void test_broken_context(void **state)
{
    (void)state;
    REQUIRE_GPU();
    const char *trace = getenv("TGEMM_TRACE");
    const int m = 8192, n = 8192, k = 2048;
    const float alpha = 1.0f, beta = g_broken_beta;
    rng_t rng = {test_seed_for(7001)};
    const shapes_t s = shapes_of_call(true, false, false, m, n, k, 0, 0, 0);
    const size_t na = shape_elems(s.SA), nb = shape_elems(s.SB), nc = shape_elems(s.SC);
    float *A = xmalloc(na * sizeof(float)), *B = xmalloc(nb * sizeof(float));
    float *C0 = xmalloc(nc * sizeof(float)), *ref = xmalloc(nc * sizeof(float));
    fill_matrix(A, s.SA, &rng, true);
    fill_matrix(B, s.SB, &rng, true);
    fill_matrix(C0, s.SC, &rng, true);
    buf_t c = buf_make(g_broken_c, C0, nc, 0);

    cudaLibrary_t lib;
    cudaKernel_t trap;
    cudaStream_t stream;
    CK(cudaLibraryLoadData(&lib, kTrapPtx, NULL, NULL, 0, NULL, NULL, 0));
    CK(cudaLibraryGetKernel(&trap, lib, "tgemm_test_trap_after"));
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

    /* Calls like the one to break: the first makes the pipeline, the
     * next two give the duration, the shorter of them (a call slowed by
     * something else, such as managed memory moving, would put the trap
     * past the end of the call). (With beta = 0.5 C takes halves,
     * quarters and eighths of integers: still exact.) */
    sgemm_("N", "N", &m, &n, &k, &alpha, A, &m, B, &k, &beta, c.ptr, &m, 1, 1);
    double took = 0.0;
    for (int rep = 0; rep < 2; ++rep) {
        const double t0 = seconds_now();
        sgemm_("N", "N", &m, &n, &k, &alpha, A, &m, B, &k, &beta, c.ptr, &m, 1, 1);
        const double t = seconds_now() - t0;
        took = rep == 0 || t < took ? t : took;
    }
    const dim3 one = {1, 1, 1};
    int *cancel = NULL;
    CK(cudaHostAlloc((void **)&cancel, sizeof *cancel, cudaHostAllocMapped | cudaHostAllocPortable));
    /* Spread over several GPUs (TGEMM_DEVICES, C in host memory): where
     * the other GPUs still work after the fault, they take over the parts
     * of C that the broken one did not write back and the call succeeds on
     * the GPU; where the fault broke CUDA for the whole process, they fail
     * too and the CPU BLAS computes what none wrote back. Either way
     * TGEMM_VERBOSE=1 shows the failure of the current device (where the
     * trap runs) during the call, and C is exact. */
    const bool spread = listed_workers() >= 2 && g_broken_c != MEM_MANAGED;
    if (spread && (!getenv("TGEMM_VERBOSE") || strcmp(getenv("TGEMM_VERBOSE"), "1") != 0))
        fail_msg("broken-context with TGEMM_DEVICES needs TGEMM_VERBOSE=1");
    /* The trap at half the call's time; where the call has returned before
     * it (the GPU ran this call faster than the ones that timed it, as when
     * another process's work on it stops), the trap is cancelled and tried
     * again at half this call's time, on fresh integers in C (every C
     * stays a few bits from integers, so that the result is exact). */
    capture_t cap;
    char *log = NULL;
    /* TGEMM_TEST_TRAP_LATE=1: the first trap at four times the call's time,
     * so that the call ends first and the retry is what breaks the context. */
    const char *late_env = getenv("TGEMM_TEST_TRAP_LATE");
    const bool late = late_env && strcmp(late_env, "1") == 0;
    double delay = took * (late ? 4.0 : 0.5);
    bool broke = false;
    int attempt = 0;
    for (; attempt < 6 && !broke; ++attempt) {
        if (attempt > 0) {
            fill_matrix(C0, s.SC, &rng, true);
            memcpy(c.ptr, C0, nc * sizeof(float));
        } else {
            memcpy(C0, c.ptr, nc * sizeof(float));
        }
        /* beta == 0: C is never read, by the GPU path or the fallback;
         * NaN there shows a read (s.SC has no padding). */
        if (beta == 0.0f)
            fill_constant(c.ptr, s.SC, poison_c());
        *(volatile int *)cancel = 0;
        unsigned long long ns = (unsigned long long)(delay * 1e9);
        void *args[] = {&ns, &cancel};
        if (spread)
            capture_begin(&cap);
        CK(cudaLaunchKernel((const void *)trap, one, one, args, 0, stream));
        const double t0 = seconds_now();
        sgemm_("N", "N", &m, &n, &k, &alpha, A, &m, B, &k, &beta, c.ptr, &m, 1, 1);
        const double t = seconds_now() - t0;
        *(volatile int *)cancel = 1;
        log = spread ? capture_end(&cap) : NULL;
        broke = cudaStreamSynchronize(stream) != cudaSuccess;
        if (!broke) {
            print_message("[ retry    ] the call took %.3f ms, the trap was set at %.3f ms: cancelled, set at %.3f ms\n",
                          t * 1e3, delay * 1e3, t * 0.5e3);
            delay = t * 0.5;
            free(log);
            log = NULL;
        }
    }
    if (!broke)
        fail_msg("the trap kernel did not break the CUDA context in 6 tries (each call ended first)");
    if (late && attempt < 2)
        fail_msg("TGEMM_TEST_TRAP_LATE=1: the first trap was not cancelled (the call took over four times as long)");
    char *line = last_line(trace);
    if (spread) {
        const bool others = other_listed_device_works();
        print_message("[ broken   ] after the fault the other listed GPUs %s; the call: %s", others ? "work" : "fail too",
                      line);
        if (others && !strstr(line, "path=gpu "))
            fail_msg("the spread call did not finish on the other GPUs, which still work: %s; its log: %s", line, log);
        if (!others && !strstr(line, "path=gpu ") && !strstr(line, "path=cpu-fallback:cuda-error"))
            fail_msg("the spread call neither finished on the GPUs nor fell back to the CPU: %s; its log: %s", line,
                     log);
        if (!strstr(log, "tgemm: "))
            fail_msg("no GPU failed in the middle of the spread call (trap at %.3f ms); its log: %s", delay * 1e3, log);
        free(log);
    } else if (!strstr(line, "path=cpu-fallback:cuda-error")) {
        fail_msg("the GPU did not fail in the middle of the call (trap at %.3f ms): %s", delay * 1e3, line);
    }
    free(line);

    memcpy(ref, C0, nc * sizeof(float));
    ref_sgemm(REF_COL_MAJOR, REF_N, REF_N, m, n, k, alpha, A, m, B, k, beta, ref, m);
    check_c("broken_context", c.ptr, ref, NULL, s.SC, k, true, test_seed_for(7001));
    free(A), free(B), free(C0), free(ref);
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    (void)test_base_seed();
    if (argc == 4 && strcmp(argv[1], "broken-context") == 0) {
        const char *kinds = "hpm", *kind = strchr(kinds, argv[2][0]);
        const char *offload = getenv("TGEMM_OFFLOAD"), *trace = getenv("TGEMM_TRACE");
        if (!kind || argv[2][0] == '\0' || argv[2][1] != '\0' || !offload || strcmp(offload, "gpu") != 0 || !trace ||
            !getenv("TGEMM_CPU_BLAS")) {
            fprintf(stderr, "broken-context h|p|m BETA needs TGEMM_OFFLOAD=gpu, TGEMM_TRACE=<file> and "
                            "TGEMM_CPU_BLAS=<a CPU BLAS>\n");
            return 2;
        }
        g_broken_c = kind[0] == 'h' ? MEM_HOST : kind[0] == 'p' ? MEM_PINNED : MEM_MANAGED;
        g_broken_beta = strtof(argv[3], NULL);
        const struct CMUnitTest tests[] = {cmocka_unit_test(test_broken_context)};
        return run_group("tgemm_host_broken_context", (struct CMUnitTest *)tests, 1) ? 1 : 0;
    }
    if (argc == 2 && strcmp(argv[1], "out-of-core") == 0) {
        const char *limit = getenv("TGEMM_DEVICE_MEMORY_LIMIT"), *verbose = getenv("TGEMM_VERBOSE");
        if (!limit || !verbose || strcmp(verbose, "2") != 0 || strspn(limit, "0123456789") != strlen(limit)) {
            fprintf(stderr, "out-of-core needs TGEMM_DEVICE_MEMORY_LIMIT=<bytes, digits only> and TGEMM_VERBOSE=2\n");
            return 2;
        }
        g_out_of_core = true;
        g_limit = strtoull(limit, NULL, 10);
    } else if (argc != 1) {
        fprintf(stderr, "usage: %s [out-of-core | broken-context h|p|m BETA] (see the comment at the top of "
                        "tests/test_host.c)\n",
                argv[0]);
        return 2;
    }

    const size_t ncases = sizeof kCases / sizeof kCases[0];
    const size_t nspecial_cases = sizeof kSpecialCases / sizeof kSpecialCases[0];
    const struct CMUnitTest special[] = {
        cmocka_unit_test(test_caller_stream_order),
        cmocka_unit_test(test_concurrent_threads),
        cmocka_unit_test(test_release_resources),
    };
    const size_t nspecial = sizeof special / sizeof special[0];
    const size_t named = 2 * (ncases + nspecial_cases); /* the tests whose names were allocated */
    struct CMUnitTest *tests = xmalloc(sizeof(struct CMUnitTest) * (named + nspecial));
    size_t nt = 0;
    for (size_t i = 0; i < ncases; ++i) {
        tests[nt++] = (struct CMUnitTest){xstrdup_printf("%s_exact", kCases[i].name), test_case_exact, NULL, NULL,
                                          (void *)&kCases[i]};
        tests[nt++] = (struct CMUnitTest){xstrdup_printf("%s_random", kCases[i].name), test_case_random, NULL, NULL,
                                          (void *)&kCases[i]};
    }
    for (size_t i = 0; i < nspecial_cases; ++i) {
        tests[nt++] = (struct CMUnitTest){xstrdup_printf("%s_exact", kSpecialCases[i].name), test_special_exact, NULL,
                                          NULL, (void *)&kSpecialCases[i]};
        tests[nt++] = (struct CMUnitTest){xstrdup_printf("%s_random", kSpecialCases[i].name), test_special_random,
                                          NULL, NULL, (void *)&kSpecialCases[i]};
    }
    for (size_t i = 0; i < nspecial; ++i)
        tests[nt++] = special[i];
    const int failed = run_group(g_out_of_core ? "tgemm_host_out_of_core" : "tgemm_host", tests, nt);
    for (size_t i = 0; i < named; ++i)
        free((void *)tests[i].name);
    free(tests);
    return failed ? 1 : 0;
}
