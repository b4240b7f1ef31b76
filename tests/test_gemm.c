/* GPU correctness of tgemm against OpenBLAS.
 *
 * One CMocka test per table row, named after its case
 * (nt_127x129x63_lda130_ldb63_ldc127_a1_b0_dev). Every row runs twice: with
 * small-integer inputs, where FP32 is exact and results must equal OpenBLAS's
 * with ==, and with uniform random inputs, checked elementwise against the
 * dot-product error bound (common.h). C is poisoned before every call,
 * padding must come back bit for bit, A and B must be unchanged.
 *
 * TGEMM_TEST_MAX_DIM=N builds the table from the sizes <= N only, and leaves
 * out the special cases (used to run the table once per forced kernel family
 * and under compute-sanitizer). TGEMM_TEST_MAX_K=K also leaves out the
 * switch-point rows deeper than K (racecheck of a forced tiled family, where
 * a 2,000,000-deep row would take many minutes). Without a GPU every case
 * calls skip(); with a GPU setup that is there but broken, or with none
 * under TGEMM_TEST_REQUIRE_GPU=1, every case fails (gpu_available()).
 *
 * `test_gemm special-values` runs other rows instead: NaN and Inf in A, B
 * and C on each path of the dispatcher, the path checked from the plan
 * lines of TGEMM_VERBOSE=2 (see kSpecial).
 */
#include "common.h"

#include <fnmatch.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

/* ---------------------------------------------------------------- one case */

typedef struct {
    bool col_major;
    bool ta, tb;
    int64_t m, n, k;
    int64_t pad_a, pad_b, pad_c; /* ld = rows (or columns, row-major) + pad */
    float alpha, beta;
    mem_t mem_a, mem_b, mem_c;
    int offset;  /* added to every pointer; 1 makes them misaligned */
    bool use_ex; /* tgemm_sgemm_ex on a created stream, else tgemm_sgemm */
    uint64_t index;
} gemm_case_t;


/* A and B read back from the device equal what was uploaded: the product
 * never writes its inputs. */
static void assert_operands_unchanged(const buf_t *a, const float *A, shape_t SA, const buf_t *b, const float *B,
                                      shape_t SB)
{
    float *back = xmalloc((shape_elems(SA) > shape_elems(SB) ? shape_elems(SA) : shape_elems(SB)) * sizeof(float));
    buf_read(a, back);
    assert_memory_equal(back, A, shape_elems(SA) * sizeof(float));
    buf_read(b, back);
    assert_memory_equal(back, B, shape_elems(SB) * sizeof(float));
    free(back);
}

static void run_case(const gemm_case_t *t, bool exact)
{
    const uint64_t seed = test_seed_for(t->index * 2 + (exact ? 1 : 0));
    rng_t rng = {seed};
    const shapes_t shapes = shapes_of_call(t->col_major, t->ta, t->tb, t->m, t->n, t->k, t->pad_a, t->pad_b, t->pad_c);
    const shape_t SA = shapes.SA, SB = shapes.SB, SC = shapes.SC;

    float *A = xmalloc(shape_elems(SA) * sizeof(float));
    float *B = xmalloc(shape_elems(SB) * sizeof(float));
    float *C0 = xmalloc(shape_elems(SC) * sizeof(float));
    float *ref = xmalloc(shape_elems(SC) * sizeof(float));
    float *got = xmalloc(shape_elems(SC) * sizeof(float));
    fill_operands(A, SA, B, SB, C0, SC, t->beta, &rng, exact);

    /* The reference never sees the poison: with beta == 0 its C starts at 0. */
    if (t->beta != 0.0f)
        memcpy(ref, C0, shape_elems(SC) * sizeof(float));
    else
        fill_constant(ref, SC, 0.0f);
    const int layout = t->col_major ? REF_COL_MAJOR : REF_ROW_MAJOR;
    ref_sgemm(layout, t->ta ? REF_T : REF_N, t->tb ? REF_T : REF_N, (int)t->m, (int)t->n, (int)t->k, t->alpha,
              A, (int)SA.ld, B, (int)SB.ld, t->beta, ref, (int)SC.ld);
    double *bound = exact ? NULL
                          : error_bound(t->col_major, t->ta, t->tb, t->m, t->n, t->k, t->alpha, A, SA, B, SB,
                                        t->beta, C0, SC);

    buf_t a = buf_make(t->mem_a, A, shape_elems(SA), t->offset);
    buf_t b = buf_make(t->mem_b, B, shape_elems(SB), t->offset);
    buf_t c = buf_make(t->mem_c, C0, shape_elems(SC), t->offset);
    const tgemm_operation ta = t->ta ? TGEMM_OP_T : TGEMM_OP_N, tb = t->tb ? TGEMM_OP_T : TGEMM_OP_N;
    tgemm_status s;
    if (t->use_ex) {
        cudaStream_t stream;
        CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        s = tgemm_sgemm_ex(t->col_major ? TGEMM_LAYOUT_COL_MAJOR : TGEMM_LAYOUT_ROW_MAJOR, ta, tb, t->m, t->n,
                           t->k, t->alpha, a.ptr, SA.ld, b.ptr, SB.ld, t->beta, c.ptr, SC.ld, stream);
        CK(cudaStreamSynchronize(stream));
        CK(cudaStreamDestroy(stream));
    } else {
        s = tgemm_sgemm(ta, tb, t->m, t->n, t->k, t->alpha, a.ptr, SA.ld, b.ptr, SB.ld, t->beta, c.ptr, SC.ld);
    }
    if (s != TGEMM_SUCCESS)
        fail_msg("tgemm returned %d (%s): %s (seed 0x%016llx)", (int)s, tgemm_status_string(s),
                 tgemm_last_error_detail(), (unsigned long long)seed);

    buf_read(&c, got);
    check_c(exact ? "exact" : "random", got, ref, bound, SC, t->k, exact, seed);

    assert_operands_unchanged(&a, A, SA, &b, B, SB);
    buf_free(&a);
    buf_free(&b);
    buf_free(&c);
    free(A);
    free(B);
    free(C0);
    free(ref);
    free(got);
    free(bound);
}

static void test_case_row(void **state)
{
    REQUIRE_GPU();
    const gemm_case_t *t = *state;
    run_case(t, true);
    run_case(t, false);
}

/* ---------------------------------------------------------------- table */

static const int64_t kSizes[] = {1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, 63,
                                 64, 65, 127, 128, 129, 255, 256, 257, 1000, 1023, 1024, 1025};
#define NSIZES ((int)(sizeof kSizes / sizeof kSizes[0]))

static const float kAlphaBeta[][2] = {
    {1.0f, 0.0f}, {1.0f, 1.0f}, {-1.0f, 0.5f}, {0.5f, -2.0f}, {2.0f, 0.25f}, {0.0f, 3.0f}, {-0.25f, 0.0f}, {3.0f, -1.0f},
};
/* A, B, C memory kinds, cycled through the rows. */
static const mem_t kMems[][3] = {
    {MEM_DEVICE, MEM_DEVICE, MEM_DEVICE}, {MEM_HOST, MEM_HOST, MEM_HOST},
    {MEM_PINNED, MEM_PINNED, MEM_PINNED}, {MEM_HOST, MEM_DEVICE, MEM_DEVICE},
    {MEM_DEVICE, MEM_PINNED, MEM_HOST},   {MEM_MANAGED, MEM_MANAGED, MEM_MANAGED},
    {MEM_DEVICE, MEM_DEVICE, MEM_HOST},   {MEM_HOST, MEM_HOST, MEM_DEVICE},
};
static const int64_t kPads[][3] = {{0, 0, 0}, {1, 3, 2}, {3, 1, 0}, {4, 0, 1}, {0, 4, 5}, {9, 2, 0}};

static char *case_name(const gemm_case_t *t)
{
    const shapes_t s = shapes_of_call(t->col_major, t->ta, t->tb, t->m, t->n, t->k, t->pad_a, t->pad_b, t->pad_c);
    return xstrdup_printf("%c%c_%lldx%lldx%lld_lda%lld_ldb%lld_ldc%lld_a%g_b%g_%c%c%c%s%s%s", t->ta ? 't' : 'n',
                          t->tb ? 't' : 'n', (long long)t->m, (long long)t->n, (long long)t->k,
                          (long long)s.SA.ld, (long long)s.SB.ld, (long long)s.SC.ld, (double)t->alpha,
                          (double)t->beta, mem_tag[t->mem_a], mem_tag[t->mem_b], mem_tag[t->mem_c],
                          t->col_major ? "" : "_rowmajor", t->offset ? "_misaligned" : "", t->use_ex ? "_ex" : "");
}

/* Appends a row. A table past its capacity fails the whole run (exit
 * status 1, whatever TGEMM_TEST_FILTER selects) rather than dropping rows
 * unseen: raise kCap in main. */
static void add_row(gemm_case_t *rows, size_t cap, size_t *n, const gemm_case_t *t)
{
    if (*n == cap) {
        fprintf(stderr, "test_gemm: more than kCap = %zu table rows; raise kCap\n", cap);
        exit(1);
    }
    rows[(*n)++] = *t;
}

/* A column-major row on device memory: transpose pair `pair` (2: A
 * transposed, 1: B), the shape m, n, k, and the pads and entry point of
 * row number v. */
static gemm_case_t device_row(int pair, const int64_t shape[3], int v)
{
    gemm_case_t t;
    memset(&t, 0, sizeof t);
    t.col_major = true;
    t.ta = pair & 2;
    t.tb = pair & 1;
    t.m = shape[0];
    t.n = shape[1];
    t.k = shape[2];
    t.pad_a = kPads[v % 6][0];
    t.pad_b = kPads[v % 6][1];
    t.pad_c = kPads[v % 6][2];
    t.mem_a = t.mem_b = t.mem_c = MEM_DEVICE;
    t.use_ex = v % 2 == 1;
    return t;
}

/* Row v % 7 of kAlphaBeta without its alpha == 0 row (the scaling kernel). */
static const float *nonzero_alpha(int v)
{
    const int i = v % 7;
    return kAlphaBeta[i < 5 ? i : i + 1];
}

/* Builds the table: every transpose pair x every size in every role (m, n and
 * k cycle through the size list with different offsets, so shapes are not square),
 * with ld padding, alpha/beta, memory kinds, misalignment and the entry point
 * varying from row to row. Row-major rows go through tgemm_sgemm_ex. */
static size_t build_table(gemm_case_t *rows, size_t cap, const int64_t *sizes, int nsizes, int64_t max_k)
{
    size_t n = 0;
    for (int pair = 0; pair < 4; ++pair) {
        for (int i = 0; i < nsizes; ++i) {
            const int v = pair * nsizes + i;
            gemm_case_t t;
            memset(&t, 0, sizeof t);
            t.col_major = true;
            t.ta = pair & 2;
            t.tb = pair & 1;
            t.m = sizes[i];
            t.n = sizes[(i + 7) % nsizes];
            t.k = sizes[(i + 13) % nsizes];
            t.pad_a = kPads[v % 6][0];
            t.pad_b = kPads[v % 6][1];
            t.pad_c = kPads[v % 6][2];
            t.alpha = kAlphaBeta[v % 8][0];
            t.beta = kAlphaBeta[v % 8][1];
            t.mem_a = kMems[(v * 3) % 8][0];
            t.mem_b = kMems[(v * 3) % 8][1];
            t.mem_c = kMems[(v * 3) % 8][2];
            t.offset = v % 5 == 4 ? 1 : 0;
            t.use_ex = v % 3 == 1;
            add_row(rows, cap, &n, &t);
        }
    }
    /* Row-major rows at six places spread over the size list. */
    for (int pair = 0; pair < 4; ++pair) {
        for (int j = 0; j < 6; ++j) {
            const int i = (j * (nsizes - 1)) / 5, v = pair * 6 + j;
            gemm_case_t t;
            memset(&t, 0, sizeof t);
            t.col_major = false;
            t.ta = pair & 2;
            t.tb = pair & 1;
            t.m = sizes[(i + 3) % nsizes];
            t.n = sizes[i];
            t.k = sizes[(i + 5) % nsizes];
            t.pad_a = kPads[v % 6][0];
            t.pad_b = kPads[v % 6][1];
            t.pad_c = kPads[v % 6][2];
            t.alpha = kAlphaBeta[(v + 1) % 8][0];
            t.beta = kAlphaBeta[(v + 1) % 8][1];
            t.mem_a = kMems[v % 8][0];
            t.mem_b = kMems[v % 8][1];
            t.mem_c = kMems[v % 8][2];
            t.offset = v % 4 == 3 ? 1 : 0;
            t.use_ex = true;
            add_row(rows, cap, &n, &t);
        }
    }
    /* Where the dispatcher switches paths (src/dispatch/plan.cpp): the
     * streaming kernels for min(m, n) <= 16 in both of their access patterns
     * (every transpose pair decides which), the tiled kernels just above,
     * split-K for few tiles and long K, and k not a multiple of any step. */
    static const int64_t kSwitch[][3] = {
        {16, 3000, 1100}, {17, 3000, 1100}, {3000, 16, 1100}, {3000, 17, 1100}, {1, 4099, 2050},
        {4099, 1, 2050},  {5, 7, 9000},     {1, 1, 5000},     {64, 64, 5001},   {130, 70, 9999},
        {260, 250, 4097}, {33, 700, 3000},
        /* skinny_dots plans: several row groups per block with a partial
         * last block, each Y staging path (along K, along j, scalar for
         * s % 4 != 0), and K longer than one staged piece. */
        {16, 4099, 4100}, {4099, 16, 4100}, {8, 5000, 3000}, {12, 2600, 4000},
        {2600, 13, 1500}, {1, 9000, 300},  {16, 17, 100000}, {3, 1, 2000000},
        /* skinny_rows with more blocks than two per SM (no split of K) and
         * K longer than one staged piece of Y at s = 16 (1532). */
        {34000, 16, 1600},
        /* skinny_rows_ring (a block's K longer than one piece of Y): a
         * partial last lane of r, s = 13 of 16, warps' runs of K not whole
         * groups; and split in 6 slices of 2048 in cluster form. */
        {34001, 13, 1999}, {4100, 16, 12000},
        /* Peeling: a few rows and/or columns past a multiple of 128 run as
         * streaming strips beside the tiled main block. */
        {4097, 513, 1023}, {2052, 1024, 1024}, {1024, 2052, 1024},
        /* Stream-K: 200 tiles of 256 x 128, the 68 past one wave of 132
         * shared out and a wave of whole tiles after them (the H100 plans
         * this for NN); and 99 tiles, fewer than a wave. */
        {2560, 2560, 512}, {2304, 1408, 640},
        /* The async-ring family (64x64x16) where the H100 plans it: 512^3 K
         * split 2 and 384^3 split 3 in clusters; odd sizes (scalar copies,
         * the split through the workspace). */
        {512, 512, 512}, {384, 384, 384}, {509, 511, 515},
    };
    for (size_t i = 0; i < sizeof kSwitch / sizeof kSwitch[0]; ++i) {
        for (int pair = 0; pair < 4; ++pair) {
            if (kSwitch[i][0] > sizes[nsizes - 1] * 4 && nsizes < NSIZES)
                continue; /* a reduced run (TGEMM_TEST_MAX_DIM) keeps to small shapes */
            if (max_k > 0 && kSwitch[i][2] > max_k)
                continue;
            const int v = (int)i * 4 + pair;
            gemm_case_t t = device_row(pair, kSwitch[i], v);
            t.alpha = kAlphaBeta[(v + 3) % 8][0];
            t.beta = kAlphaBeta[(v + 3) % 8][1];
            t.offset = v % 7 == 6 ? 1 : 0;
            add_row(rows, cap, &n, &t);
        }
    }
    /* The rank-k kernel (src/kernels/rank_k.cu; step 4 of the table in
     * src/dispatch/plan.cpp): K from 1 to past its chunks of 16 (1, 2, 7,
     * 16, 31, 32, 33, 40, 100), m and n odd and on both sides of its 128 x
     * 128 tiles, leading dimensions padded (odd ldc: scalar stores),
     * operands one float past 16-byte alignment in every third row, alpha
     * and beta other than 0 and 1, and beta == 0 over a NaN-poisoned C. The
     * H100 plans it for the rows of 1000 x 1000 and larger (make test-gpu);
     * make test-kernels runs the rows up to 1028 with it forced
     * (TGEMM_KERNEL=rank-k), the others on the tiled kernels there. */
    static const int64_t kRankK[][3] = {
        {1000, 1000, 16}, {1025, 1023, 32}, {1000, 1000, 40}, {129, 127, 1},  {127, 129, 2},   {1000, 3, 7},
        {3, 1000, 31},    {1, 129, 32},     {257, 1, 33},     {513, 1000, 40}, {129, 1000, 100}, {1000, 129, 16},
        {128, 128, 17},   {4096, 4096, 16}, {3001, 2999, 33}, {2000, 3000, 2},
    };
    for (size_t i = 0; i < sizeof kRankK / sizeof kRankK[0]; ++i) {
        for (int pair = 0; pair < 4; ++pair) {
            const int64_t longest = kRankK[i][0] > kRankK[i][1] ? kRankK[i][0] : kRankK[i][1];
            if (longest > sizes[nsizes - 1] * 4 && nsizes < NSIZES)
                continue;
            const int v = (int)i * 4 + pair;
            gemm_case_t t = device_row(pair, kRankK[i], v);
            t.alpha = nonzero_alpha(v + 1)[0];
            t.beta = nonzero_alpha(v + 1)[1];
            t.offset = v % 3 == 2 ? 1 : 0;
            add_row(rows, cap, &n, &t);
        }
    }
    /* Rows whose layout is given in full (pads, alignment, memory kind).
     *
     * The streaming kernel fed by the tensor copy engine (sm_90 only; see
     * skinny_tma_fits in src/kernels/skinny_tma.cu): min(m, n) <= 16 with
     * 16-byte aligned operands whose strides are multiples of 4, s >= 1
     * (s >= 5 with the short operand contiguous along its s values),
     * k >= 1024, and (132 SMs) at least 119 blocks of 32 rows; the long
     * operand contiguous along its rows or along K, the short one along K or
     * along its s values: each of the four layouts at s = 16 and s <= 8 (its
     * two widths), and each transpose pair on at least one side. Explicit
     * pads, so each row lands on the side of each rule that it names; every
     * other row of the table that fits runs it too. Device memory unless
     * marked managed. */
    static const struct {
        int64_t m, n, k;
        bool ta, tb;
        int pad_a, pad_b, pad_c, offset;
        bool managed;
    } kExplicit[] = {
        {4096, 16, 4096, false, false, 0, 0, 0, 0, false},   /* the suite's skinny_n16 */
        {4099, 16, 4100, false, false, 1, 0, 3, 0, false},   /* a partial last block of r */
        {4100, 9, 1500, false, false, 4, 4, 1, 0, false},    /* s = 9 on the 16-wide kernel; K not a multiple of 128 */
        {4100, 8, 2000, false, false, 0, 0, 2, 0, false},    /* s = 8: the 8-wide kernel */
        {4096, 5, 1024, false, false, 0, 0, 0, 0, false},    /* the least s and K it takes (one turn of the ring) */
        {4096, 4, 1024, false, false, 0, 0, 0, 0, false},    /* s = 4 on the 8-wide kernel, the least K */
        {4096, 1, 4096, false, false, 0, 0, 0, 0, false},    /* the suite's gemv_n1 */
        {1, 4096, 4096, false, false, 0, 0, 0, 0, false},    /* the suite's gemv_m1: lda = 1, Y's j stride unused */
        {4099, 1, 1999, false, true, 1, 0, 2, 0, false},     /* n = 1 NT, ldb = 1: Y along k, K not a multiple of 4 */
        {1, 4100, 2000, true, true, 3, 0, 1, 0, false},      /* m = 1 TT: Y along k (lda = 2003), X along r */
        {4100, 2, 2048, true, false, 0, 0, 0, 0, false},     /* s = 2: X along k, Y along k */
        {3, 4100, 1500, false, true, 1, 0, 0, 0, false},     /* s = 3, Y along j (lda = 4): skinny_rows */
        {5, 4100, 1500, false, true, 3, 0, 0, 0, false},     /* s = 5, Y along j (lda = 8): the least s it takes so */
        {4096, 1, 1020, false, false, 0, 0, 0, 0, false},    /* K < 1024: skinny_gemv, 4 warps along r */
        {4096, 3, 4096, false, false, 1, 0, 0, 0, false},    /* lda = 4097: skinny_rows */
        {4096, 16, 1020, false, false, 0, 0, 0, 0, false},   /* K < 1024: not the TMA kernel's; a tiled plan (streaming_pays) */
        {3808, 16, 2048, false, false, 0, 0, 0, 0, false},   /* 119 blocks: fits */
        {3776, 16, 2048, false, false, 0, 0, 0, 0, false},   /* 118 blocks: skinny_rows */
        {34001, 13, 1999, false, false, 3, 1, 0, 0, false},  /* 1063 blocks in waves, partial last block */
        {12, 4100, 3000, true, true, 4, 0, 2, 0, false},     /* m <= 16, both transposed: C stored along r */
        {16, 4096, 4096, false, false, 0, 0, 0, 0, false},   /* the suite's skinny_m16: X along k (swizzled), Y along j */
        {9, 4099, 1500, false, false, 3, 0, 1, 0, false},    /* the same, s = 9, a partial last block */
        {4096, 16, 4096, true, false, 0, 0, 0, 0, false},    /* X along k, Y along k */
        {4100, 12, 2000, false, true, 0, 0, 1, 0, false},    /* X along r, Y along j */
        {10, 4100, 2048, true, false, 0, 0, 0, 0, false},    /* m <= 16 TN: X along k, Y along k */
        {16, 4096, 1024, false, true, 0, 0, 3, 0, false},    /* m <= 16 NT: X along r, Y along j */
        {4100, 16, 2048, true, true, 0, 0, 0, 0, false},     /* n <= 16 TT: X along k, Y along j */
        {4100, 8, 2048, true, false, 0, 0, 1, 0, false},     /* s = 8: X along k, Y along k */
        {8, 4100, 2048, false, false, 0, 0, 0, 0, false},    /* s = 8: X along k, Y along j */
        {4100, 6, 2048, false, true, 0, 2, 0, 0, false},     /* s = 6: X along r, Y along j */
        {16, 4100, 1500, false, false, 0, 0, 0, 0, false},   /* Y along j in rows of 16: bulk copies, the partial last stage by tensor map */
        {4100, 8, 1300, false, true, 0, 0, 1, 0, false},     /* the same in rows of 8 (n <= 8 NT) */
        {4096, 16, 4096, false, false, 0, 0, 0, 0, true}, /* managed memory */
        {4096, 16, 4096, false, false, 1, 0, 0, 0, false},   /* lda = 4097: not a multiple of 4, skinny_rows */
        {4096, 16, 4096, false, false, 0, 2, 0, 0, false},   /* ldb = 4098: skinny_rows */
        {4096, 16, 4096, false, false, 0, 0, 0, 1, false},   /* operands one float past 16-byte alignment */
        /* skinny_gemv (s = 1, X contiguous along r; src/kernels/skinny_gemv.cu)
         * where the H100 plans it: K split in clusters, a block's warps along
         * r and K, runs of K not whole groups, y strided, r past the last
         * block, K split through the workspace. */
        {1, 1017, 2963, false, true, 0, 0, 31, 0, false},   /* m = 1 NT, ldb odd: K split in 7 clusters */
        {1542, 1, 1445, false, false, 0, 0, 0, 0, false},   /* n = 1 NN, lda 1542: split 4 in clusters */
        {1, 6399, 366, true, true, 0, 26, 0, 0, false},     /* m = 1 TT: no split */
        {16007, 1, 300, false, false, 1, 0, 0, 0, false},   /* two warps along r, a partial last block */
        {1, 5000, 700, false, true, 2, 1, 0, 0, false},     /* y strided (lda = 3) */
        {64, 1, 20000, false, false, 0, 0, 0, 1, false},    /* K split through the workspace */
        {100000, 1, 40, false, false, 0, 0, 0, 0, false},   /* 8 warps along r, K unsplit */
        /* The branch-free K step of 256x128x16's TN kernel
         * (kBranchFreePairs in src/kernels/tiled/shapes.cuh): blocks of whole
         * tiles, aligned operands, K a multiple of 16 and at least 32. The
         * small rows reach it when the family is forced (make test runs
         * each family so); the last, the dispatcher's own plan on the H100
         * until op(A) was packed, now runs packed there (NN). */
        {512, 384, 96, true, false, 0, 0, 0, 0, false},     /* 6 whole tiles, 6 K steps */
        {300, 200, 32, true, false, 4, 0, 4, 0, false},     /* 1 whole tile beside 3 edge tiles; the least K (2 steps) */
        {256, 128, 16, true, false, 0, 0, 0, 0, false},     /* 1 step: the loop with tests */
        {512, 256, 40, true, false, 0, 0, 0, 0, false},     /* K not a multiple of 16: the loop with tests */
        {512, 256, 64, true, false, 0, 0, 0, 1, false},     /* unaligned operands: the loop with tests */
        {2048, 2048, 2048, true, false, 0, 0, 0, 0, false}, /* 128 whole tiles, 128 steps */
        /* The whole-tile ring (kWholeRingStep in src/kernels/tiled/mainloop.cuh)
         * of 256x128x16, 256x128x8, 128x256x8, 128x128x16, 64x256x16 and
         * 256x64x16, for the pairs
         * with an operand contiguous along M or N: blocks of whole tiles,
         * aligned, K a multiple of the family's step and at least
         * kWholeRingMinSteps (16) steps of it; edge tiles beside them, and
         * shorter K, take the loop with tests. */
        {512, 512, 256, false, false, 0, 0, 0, 0, false},   /* NN: whole tiles of every such family */
        {512, 512, 256, false, true, 4, 0, 4, 0, false},    /* NT */
        {512, 512, 256, true, true, 0, 4, 0, 0, false},     /* TT */
        {300, 260, 256, false, true, 4, 0, 4, 0, false},    /* 16 steps of 16, the least; edge tiles beside */
        {384, 256, 256, false, true, 4, 0, 4, 0, false},    /* the same, 384 rows: all whole for the 128-row tiles */
        {256, 256, 128, true, true, 0, 0, 0, 0, false},     /* 16 steps of 8: the families of 8 only */
        {512, 256, 240, false, false, 0, 0, 0, 0, false},   /* 15 steps of 16: the loop with tests */
        {512, 256, 264, false, false, 0, 0, 0, 0, false},   /* K not a multiple of 16 (of 8 it is) */
        {512, 512, 512, false, true, 0, 0, 0, 1, false},    /* unaligned operands: the loop with tests */
        {1024, 1024, 1024, true, true, 0, 0, 0, 0, false},  /* 64 to 128 steps */
        {1024, 1024, 1000, false, false, 0, 0, 0, 0, false}, /* split in slices of 512 and 488 (H100:
                                                              * 128x128x16 in clusters): neither on the ring */
        /* op(A) packed by columns (step 4 of the table in
         * src/dispatch/plan.cpp) where the H100's plan packs it; every
         * small row with op(A) transposed runs packed under TGEMM_PACK=always
         * (make test-gpu). */
        {4096, 4096, 4096, true, false, 0, 0, 0, 0, false}, /* the suite's sq4096_tn */
        {3001, 2999, 2049, true, false, 3, 4, 2, 0, false}, /* m not a multiple of the packed ld's 32; lda odd */
        /* Unaligned operands, which TGEMM_PACK=always copies as stored with
         * an aligned ld (src/dispatch/pack.cpp; make test-gpu), and the
         * cluster kernels of aligned operands beside an unaligned C. */
        {490, 8844, 334, false, true, 0, 0, 20, 0, false},  /* lda 490 */
        {624, 426, 783, false, true, 0, 0, 42, 0, false},   /* ldb 426, ldc 666: K split in clusters */
        {543, 4033, 137, true, false, 3, 17, 0, 0, false},  /* ldb 154, ldc 543 */
        {5278, 397, 124, false, true, 41, 0, 26, 0, false}, /* lda 5319, ldb 397, ldc 5304 */
        {512, 512, 512, false, false, 0, 0, 1, 0, false},   /* aligned operands, ldc 513: the cluster form */
    };
    for (size_t i = 0; i < sizeof kExplicit / sizeof kExplicit[0]; ++i) {
        const int64_t longest = kExplicit[i].m > kExplicit[i].n ? kExplicit[i].m : kExplicit[i].n;
        if (longest > sizes[nsizes - 1] * 4 && nsizes < NSIZES)
            continue;
        if (max_k > 0 && kExplicit[i].k > max_k)
            continue;
        gemm_case_t t;
        memset(&t, 0, sizeof t);
        t.col_major = true;
        t.ta = kExplicit[i].ta;
        t.tb = kExplicit[i].tb;
        t.m = kExplicit[i].m;
        t.n = kExplicit[i].n;
        t.k = kExplicit[i].k;
        t.pad_a = kExplicit[i].pad_a;
        t.pad_b = kExplicit[i].pad_b;
        t.pad_c = kExplicit[i].pad_c;
        t.alpha = nonzero_alpha((int)i + 2)[0];
        t.beta = nonzero_alpha((int)i + 2)[1];
        t.mem_a = t.mem_b = t.mem_c = kExplicit[i].managed ? MEM_MANAGED : MEM_DEVICE;
        t.offset = kExplicit[i].offset;
        t.use_ex = i % 2 == 1;
        add_row(rows, cap, &n, &t);
    }
    return n;
}

/* ---------------------------------------------------------------- semantics */

/* Runs a small problem whose inputs are given, on device or host memory. */
static tgemm_status call_on(mem_t kind, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
                            const float *A, shape_t SA, const float *B, shape_t SB, float beta, float *C, shape_t SC,
                            bool null_ab)
{
    buf_t a = buf_make(kind, A, shape_elems(SA), 0);
    buf_t b = buf_make(kind, B, shape_elems(SB), 0);
    buf_t c = buf_make(kind, C, shape_elems(SC), 0);
    const tgemm_status s = tgemm_sgemm(ta ? TGEMM_OP_T : TGEMM_OP_N, tb ? TGEMM_OP_T : TGEMM_OP_N, m, n, k, alpha,
                                       null_ab ? NULL : a.ptr, SA.ld, null_ab ? NULL : b.ptr, SB.ld, beta, c.ptr,
                                       SC.ld);
    buf_read(&c, C);
    buf_free(&a);
    buf_free(&b);
    buf_free(&c);
    return s;
}

/* alpha == 0: A and B are never read, even when they hold NaN or are NULL. */
static void test_alpha0_never_reads_ab(void **state)
{
    (void)state;
    REQUIRE_GPU();
    const int64_t m = 67, n = 33, k = 19;
    const shape_t SA = {m, k, m}, SB = {k, n, k}, SC = {m, n, m + 2};
    rng_t rng = {test_seed_for(100001)};
    float *A = xmalloc(shape_elems(SA) * 4), *B = xmalloc(shape_elems(SB) * 4);
    float *C0 = xmalloc(shape_elems(SC) * 4), *C = xmalloc(shape_elems(SC) * 4);
    fill_constant(A, SA, NAN);
    fill_constant(B, SB, NAN);
    fill_matrix(C0, SC, &rng, true);
    for (int kind = MEM_HOST; kind <= MEM_MANAGED; ++kind) {
        for (int null_ab = 0; null_ab <= 1; ++null_ab) {
            memcpy(C, C0, shape_elems(SC) * 4);
            assert_int_equal(call_on((mem_t)kind, false, false, m, n, k, 0.0f, A, SA, B, SB, -2.0f, C, SC, null_ab),
                             TGEMM_SUCCESS);
            for (int64_t j = 0; j < n; ++j)
                for (int64_t i = 0; i < SC.ld; ++i) {
                    const float want = i < m ? -2.0f * C0[j * SC.ld + i] : poison_pad();
                    if (!same_bits(C[j * SC.ld + i], want))
                        fail_msg("mem %c null_ab %d: C(%lld,%lld) = %g, want %g", mem_tag[kind], null_ab,
                                 (long long)i, (long long)j, (double)C[j * SC.ld + i], (double)want);
                }
        }
    }
    free(A), free(B), free(C0), free(C);
}

/* beta == 0: C is never read; NaN in C does not reach the result. */
static void test_beta0_never_reads_c(void **state)
{
    (void)state;
    REQUIRE_GPU();
    const int64_t m = 130, n = 65, k = 40;
    const shape_t SA = {m, k, m}, SB = {k, n, k}, SC = {m, n, m + 1};
    rng_t rng = {test_seed_for(100002)};
    float *A = xmalloc(shape_elems(SA) * 4), *B = xmalloc(shape_elems(SB) * 4);
    float *C = xmalloc(shape_elems(SC) * 4), *ref = xmalloc(shape_elems(SC) * 4);
    fill_matrix(A, SA, &rng, true);
    fill_matrix(B, SB, &rng, true);
    fill_constant(ref, SC, 0.0f);
    ref_sgemm(REF_COL_MAJOR, REF_N, REF_N, (int)m, (int)n, (int)k, 1.5f, A, (int)m, B, (int)k, 0.0f, ref, (int)SC.ld);
    for (int kind = MEM_HOST; kind <= MEM_MANAGED; ++kind) {
        fill_constant(C, SC, NAN);
        assert_int_equal(call_on((mem_t)kind, false, false, m, n, k, 1.5f, A, SA, B, SB, 0.0f, C, SC, false),
                         TGEMM_SUCCESS);
        check_c("beta0", C, ref, NULL, SC, k, true, 0);
    }
    free(A), free(B), free(C), free(ref);
}

/* k == 0: C := beta * C without reading A or B; beta == 0 gives zeros. */
static void test_k0_scales_c(void **state)
{
    (void)state;
    REQUIRE_GPU();
    const int64_t m = 300, n = 7;
    const shape_t SA = {m, 0, m}, SB = {1, n, 1}, SC = {m, n, m + 3};
    rng_t rng = {test_seed_for(100003)};
    float *C0 = xmalloc(shape_elems(SC) * 4), *C = xmalloc(shape_elems(SC) * 4), *ref = xmalloc(shape_elems(SC) * 4);
    fill_matrix(C0, SC, &rng, false);
    const float betas[] = {0.5f, -3.0f, 0.0f};
    for (int kind = MEM_HOST; kind <= MEM_MANAGED; ++kind) {
        for (size_t bi = 0; bi < 3; ++bi) {
            const float beta = betas[bi];
            if (beta == 0.0f)
                fill_constant(C, SC, NAN);
            else
                memcpy(C, C0, shape_elems(SC) * 4);
            for (int64_t j = 0; j < n; ++j)
                for (int64_t i = 0; i < SC.ld; ++i)
                    ref[j * SC.ld + i] = i < m ? beta * (beta == 0.0f ? 0.0f : C0[j * SC.ld + i]) : poison_pad();
            assert_int_equal(call_on((mem_t)kind, false, false, m, n, 0, 2.0f, NULL, SA, NULL, SB, beta, C, SC, true),
                             TGEMM_SUCCESS);
            check_c("k0", C, ref, NULL, SC, 0, true, 0);
        }
    }
    free(C0), free(C), free(ref);
}

/* The same inputs give the same bits, call after call, at shapes whose
 * plans split K (in clusters where the GPU has them, else through the
 * workspace; with aligned operands and not), one that does not, one in stream-K form (whichever block
 * arrives last adds a tile's parts) and one on the rank-k kernel. With TGEMM_TEST_BITS=FILE the results
 * are also compared with FILE's, or written there if it does not exist: `make
 * test-gpu` runs this once with the split-K cluster form and once without
 * (TGEMM_CLUSTERS=0), with one seed, so the two forms must agree bit for bit. */
static void test_deterministic(void **state)
{
    (void)state;
    REQUIRE_GPU();
    static const struct {
        int64_t m, n, k;
        bool ta;
    } shapes[] = {
        {1023, 1025, 2047, true}, {512, 512, 512, false}, {128, 128, 128, false},
        {256, 256, 8192, false},  {1000, 1000, 1000, false}, {4096, 4096, 256, false},
        {2560, 2560, 512, false}, {4096, 16, 4096, false},   {4096, 4096, 16, true},
        {511, 512, 512, false},   {727, 959, 551, true}, /* unaligned operands, K split in clusters */
    };
    const char *bits_path = getenv("TGEMM_TEST_BITS");
    FILE *bits_in = bits_path != NULL ? fopen(bits_path, "rb") : NULL;
    FILE *bits_out = bits_path != NULL && bits_in == NULL ? fopen(bits_path, "wb") : NULL;
    if (bits_path != NULL && bits_in == NULL && bits_out == NULL)
        fail_msg("TGEMM_TEST_BITS=%s: cannot read or create it", bits_path);
    for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; ++t) {
        const int64_t m = shapes[t].m, n = shapes[t].n, k = shapes[t].k;
        const bool ta = shapes[t].ta;
        const shape_t SA = ta ? (shape_t){k, m, k} : (shape_t){m, k, m}, SB = {k, n, k}, SC = {m, n, m};
        rng_t rng = {test_seed_for(100004 + t)};
        float *A = xmalloc(shape_elems(SA) * 4), *B = xmalloc(shape_elems(SB) * 4);
        float *C1 = xmalloc(shape_elems(SC) * 4), *C2 = xmalloc(shape_elems(SC) * 4);
        fill_matrix(A, SA, &rng, false);
        fill_matrix(B, SB, &rng, false);
        fill_matrix(C1, SC, &rng, false);
        memcpy(C2, C1, shape_elems(SC) * 4);
        assert_int_equal(call_on(MEM_DEVICE, ta, false, m, n, k, 1.5f, A, SA, B, SB, 0.5f, C1, SC, false),
                         TGEMM_SUCCESS);
        assert_int_equal(call_on(MEM_DEVICE, ta, false, m, n, k, 1.5f, A, SA, B, SB, 0.5f, C2, SC, false),
                         TGEMM_SUCCESS);
        if (memcmp(C1, C2, shape_elems(SC) * 4) != 0)
            fail_msg("%lldx%lldx%lld: two calls differ", (long long)m, (long long)n, (long long)k);
        if (bits_out != NULL)
            assert_int_equal(fwrite(C1, 4, shape_elems(SC), bits_out), shape_elems(SC));
        if (bits_in != NULL) {
            assert_int_equal(fread(C2, 4, shape_elems(SC), bits_in), shape_elems(SC));
            if (memcmp(C1, C2, shape_elems(SC) * 4) != 0)
                fail_msg("%lldx%lldx%lld: differs from the bits in %s", (long long)m, (long long)n, (long long)k,
                         bits_path);
        }
        free(A), free(B), free(C1), free(C2);
    }
    if (bits_in != NULL)
        fclose(bits_in);
    if (bits_out != NULL)
        assert_int_equal(fclose(bits_out), 0);
}

/* ---------------------------------------------------------------- threads */

enum { kThreads = 12, kPerThread = 3 };

typedef struct {
    gemm_case_t c;
    shape_t SA, SB, SC;
    float *A, *B, *C, *ref;
    tgemm_status status;
    bool guards_intact;
    char detail[256];
} thread_job_t;

static void *thread_main(void *arg)
{
    thread_job_t *jobs = arg;
    for (int i = 0; i < kPerThread; ++i) {
        thread_job_t *j = &jobs[i];
        buf_t a = buf_make(j->c.mem_a, j->A, shape_elems(j->SA), 0);
        buf_t b = buf_make(j->c.mem_b, j->B, shape_elems(j->SB), 0);
        buf_t c = buf_make(j->c.mem_c, j->C, shape_elems(j->SC), 0);
        j->status = tgemm_sgemm(j->c.ta ? TGEMM_OP_T : TGEMM_OP_N, j->c.tb ? TGEMM_OP_T : TGEMM_OP_N, j->c.m, j->c.n,
                                j->c.k, j->c.alpha, a.ptr, j->SA.ld, b.ptr, j->SB.ld, j->c.beta, c.ptr, j->SC.ld);
        snprintf(j->detail, sizeof j->detail, "%s", tgemm_last_error_detail());
        j->guards_intact = buf_guards_intact(&c);
        buf_copy(&c, j->C);
        buf_free(&a);
        buf_free(&b);
        buf_free(&c);
    }
    return NULL;
}

/* Many host threads at once, on host and device operands, each checked. */
static void test_concurrent_threads(void **state)
{
    (void)state;
    REQUIRE_GPU();
    const uint64_t seed = test_seed_for(100005);
    rng_t rng = {seed};
    thread_job_t *jobs = xmalloc(sizeof(thread_job_t) * kThreads * kPerThread);
    for (int i = 0; i < kThreads * kPerThread; ++i) {
        thread_job_t *j = &jobs[i];
        memset(j, 0, sizeof *j);
        j->c.col_major = true;
        j->c.ta = rng_next(&rng) & 1;
        j->c.tb = rng_next(&rng) & 1;
        j->c.m = 1 + (int64_t)(rng_next(&rng) % 300);
        j->c.n = 1 + (int64_t)(rng_next(&rng) % 300);
        j->c.k = 1 + (int64_t)(rng_next(&rng) % 300);
        j->c.alpha = 1.0f;
        j->c.beta = (i % 2) ? 0.5f : 0.0f;
        j->c.mem_a = j->c.mem_b = j->c.mem_c = (i % 3 == 0) ? MEM_DEVICE : (i % 3 == 1) ? MEM_HOST : MEM_PINNED;
        const shapes_t s = shapes_of_call(true, j->c.ta, j->c.tb, j->c.m, j->c.n, j->c.k, 1, 0, 2);
        j->SA = s.SA;
        j->SB = s.SB;
        j->SC = s.SC;
        j->A = xmalloc(shape_elems(j->SA) * 4);
        j->B = xmalloc(shape_elems(j->SB) * 4);
        j->C = xmalloc(shape_elems(j->SC) * 4);
        j->ref = xmalloc(shape_elems(j->SC) * 4);
        fill_matrix(j->A, j->SA, &rng, true);
        fill_matrix(j->B, j->SB, &rng, true);
        if (j->c.beta == 0.0f) { /* never read: poisoned, and the reference starts from zeros */
            fill_constant(j->C, j->SC, poison_c());
            fill_constant(j->ref, j->SC, 0.0f);
        } else {
            fill_matrix(j->C, j->SC, &rng, true);
            memcpy(j->ref, j->C, shape_elems(j->SC) * 4);
        }
        ref_sgemm(REF_COL_MAJOR, j->c.ta ? REF_T : REF_N, j->c.tb ? REF_T : REF_N, (int)j->c.m, (int)j->c.n,
                  (int)j->c.k, j->c.alpha, j->A, (int)j->SA.ld, j->B, (int)j->SB.ld, j->c.beta, j->ref, (int)j->SC.ld);
    }
    pthread_t th[kThreads];
    for (int t = 0; t < kThreads; ++t)
        assert_int_equal(pthread_create(&th[t], NULL, thread_main, &jobs[t * kPerThread]), 0);
    for (int t = 0; t < kThreads; ++t)
        assert_int_equal(pthread_join(th[t], NULL), 0);
    for (int i = 0; i < kThreads * kPerThread; ++i) {
        thread_job_t *j = &jobs[i];
        if (j->status != TGEMM_SUCCESS)
            fail_msg("job %d: status %d: %s", i, (int)j->status, j->detail);
        if (!j->guards_intact)
            fail_msg("job %d: an element just before or after C was written", i);
        check_c("thread", j->C, j->ref, NULL, j->SC, j->c.k, true, seed);
        free(j->A), free(j->B), free(j->C), free(j->ref);
    }
    free(jobs);
}

/* ---------------------------------------------------------------- out of memory */

/* Allocates device memory until cudaMalloc fails, in blocks of decreasing
 * size, so that afterwards not even a 2 MiB allocation succeeds. The free
 * memory the driver reports is not used: it can differ from what can still
 * be allocated. Returns the number of blocks; 2 MiB blocks come last. */
enum { kSmallBlock = 2 << 20 };
static size_t hog_device(void **blocks, size_t cap)
{
    size_t nb = 0;
    const size_t steps[] = {(size_t)1 << 30, (size_t)1 << 26, kSmallBlock};
    for (size_t s = 0; s < 3; ++s) {
        while (nb < cap && cudaMalloc(&blocks[nb], steps[s]) == cudaSuccess)
            ++nb;
        (void)cudaGetLastError();
    }
    return nb;
}

/* Out of device memory: a status, C unchanged, nothing leaked, and the next
 * call after memory is back succeeds. */
static void test_out_of_memory(void **state)
{
    (void)state;
    REQUIRE_GPU();
    const int64_t m = 2048, n = 2048, k = 2048; /* 16 MiB per staged operand */
    const shape_t S = {m, n, m};
    rng_t rng = {test_seed_for(100006)};
    float *A = xmalloc(shape_elems(S) * 4), *B = xmalloc(shape_elems(S) * 4);
    float *C = xmalloc(shape_elems(S) * 4), *C0 = xmalloc(shape_elems(S) * 4);
    fill_matrix(A, S, &rng, true);
    fill_matrix(B, S, &rng, true);
    fill_matrix(C0, S, &rng, true);
    memcpy(C, C0, shape_elems(S) * 4);
    /* Warm up so lazily created state exists before free memory is measured. */
    assert_int_equal(tgemm_sgemm(TGEMM_OP_N, TGEMM_OP_N, 64, 64, 64, 1.0f, A, m, B, k, 1.0f, C, m), TGEMM_SUCCESS);
    memcpy(C, C0, shape_elems(S) * 4);

    size_t free0 = 0, total = 0, free1 = 0;
    CK(cudaMemGetInfo(&free0, &total));
    /* First with no device memory left at all, then with 18 MiB: less than
     * the 256 MiB the host-operand path leaves to others
     * (src/driver/host_executor.cpp), so it must refuse before it
     * allocates anything. */
    const size_t room[] = {0, 9 * (size_t)kSmallBlock};
    /* Another process on the GPU that frees memory while the call runs
     * gives it room the test did not leave: such a try does not count,
     * and is made again (a few times at most). */
    enum { kTries = 5 };
    int tries = 0;
    for (int r = 0; r < 2; ++r) {
        static void *blocks[8192];
        size_t nb = hog_device(blocks, 8192);
        size_t released = 0;
        while (released < room[r] && nb > 0) {
            CK(cudaFree(blocks[--nb]));
            released += kSmallBlock;
        }
        const tgemm_status s = tgemm_sgemm(TGEMM_OP_N, TGEMM_OP_N, m, n, k, 1.0f, A, m, B, k, 1.0f, C, m);
        const char *detail = tgemm_last_error_detail();
        const bool has_detail = strlen(detail) > 0;
        size_t free_during = 0;
        CK(cudaMemGetInfo(&free_during, &total));
        for (size_t i = 0; i < nb; ++i)
            CK(cudaFree(blocks[i]));
        if (s == TGEMM_SUCCESS && free_during > room[r] + 64 * (size_t)kSmallBlock && ++tries < kTries) {
            print_message("room %zu bytes: %zu bytes free after the call: another process freed memory; again\n",
                          room[r], free_during);
            memcpy(C, C0, shape_elems(S) * 4);
            CK(cudaMemGetInfo(&free0, &total));
            --r;
            continue;
        }
        if (s != TGEMM_ERROR_OUT_OF_MEMORY)
            fail_msg("room %zu bytes: status %d (%s), want out of memory", room[r], (int)s, tgemm_status_string(s));
        assert_true(has_detail);
        assert_memory_equal(C, C0, shape_elems(S) * 4);
        CK(cudaMemGetInfo(&free1, &total));
        if (free1 + (size_t)kSmallBlock < free0)
            fail_msg("device memory leaked: %zu bytes free before, %zu after", free0, free1);
    }
    assert_int_equal(tgemm_sgemm(TGEMM_OP_N, TGEMM_OP_N, m, n, k, 1.0f, A, m, B, k, 1.0f, C, m), TGEMM_SUCCESS);
    free(A), free(B), free(C), free(C0);
}

/* ---------------------------------------------------------------- NaN and Inf */

/* `test_gemm special-values`: NaN, +Inf and -Inf in A, B and C
 * (put_special_values in tests/common.c) on each path of the dispatcher
 * (src/dispatch/plan.cpp), checked against special_reference: NaN
 * exactly where IEEE arithmetic puts it (a NaN operand, Inf * 0 inside a
 * sum, +Inf meeting -Inf, NaN in C with beta != 0), the same signed Inf
 * where it puts one, finite values elsewhere exact or within the usual
 * bound; beta == 0 on a NaN-poisoned C that must not be read. Each row
 * names the path its shape takes on the H100 (132 SMs) and fails unless
 * the plan lines TGEMM_VERBOSE=2 prints for the call show it: a NaN test on
 * a path that did not run proves nothing. The operands are aligned (leading
 * dimensions multiples of 4, none misaligned) where a path needs it.
 *
 * The special values sit at rows 0, 31, 64, 127, 129, 256, m/2 + 1 and
 * m - 1 of C (likewise columns) and at K indices 0, k - 1 and both sides
 * of k/2, 2048, k/3, ...: inside tiles and on their edges for every family,
 * in the first and the last slice of any split of K (and on both sides of
 * the middle), in the peeled strips (row m - 1, column n - 1), and in both
 * the whole and the shared-out tiles of stream-K (2560 x 2560 x 512 on
 * 256x128x16: rows 0 to 2047 of C lie in whole tiles up to column 2047 or
 * 2175, in shared-out ones beyond, and rows 2048 to 2559 in shared-out
 * ones only).
 *
 * Besides the default plans, the rows' plans are known under
 * TGEMM_CLUSTERS=0 (every split through the workspace), TGEMM_STREAMK=always
 * (every tiled plan in stream-K form; the rank-k rows stay on the rank-k
 * kernel), TGEMM_KERNEL=<family> (one tiled plan on that family, the
 * streaming shapes too) and TGEMM_KERNEL=rank-k (the rank-k kernel alone,
 * every row); make test-gpu and test-kernels run those. Other plan settings
 * are refused. */

typedef enum {
    PATH_SCALE,            /* alpha == 0: the scaling kernel, no plan line */
    PATH_TILED,            /* one tiled kernel over all of K */
    PATH_SPLIT_CLUSTER,    /* tiled, K split, the slices added in a thread-block cluster */
    PATH_SPLIT_WORKSPACE,  /* tiled, K split, the slices added by the reduction kernel */
    PATH_STREAMK,          /* tiled, the last wave's tiles shared out by K steps */
    PATH_PACKED,           /* an operand packed (op(A) by columns, or A or B aligned), then tiled */
    PATH_PEELED,           /* a tiled main block beside streaming strips */
    PATH_TMA,              /* the streaming kernel fed by the tensor copy engine */
    PATH_ROWS,             /* skinny_rows, K split */
    PATH_DOTS,             /* skinny_dots, K split */
    PATH_SKINNY_WORKSPACE, /* a streaming kernel, K split through the workspace */
    PATH_GEMV,             /* skinny_gemv, K split */
    PATH_RANK_K,           /* the rank-k kernel alone */
} path_t;

static const char *const kPathName[] = {"scale", "tiled",  "splitk_cluster", "splitk_workspace",
                                        "streamk", "packed", "peeled",         "tma",
                                        "rows",    "dots",   "skinny_workspace", "gemv",
                                        "rank_k"};

typedef struct {
    path_t path;
    bool ta, tb;
    int64_t m, n, k;
    float alpha, beta;
} special_case_t;

/* The H100 plans quoted are bench_plans' and the dispatcher's of this
 * writing (docs/notes/history-tiled.md, "Choosing among plans"); the families and
 * split factors may move with the cost model, the paths asserted may not
 * without a new shape here. Each shape takes its path on the H100 and on
 * the H200 alike (plan_dump --device): their memory differs, and with it
 * some choices between the split-K forms. */
static const special_case_t kSpecial[] = {
    {PATH_SCALE, false, false, 300, 200, 100, 0.0f, -2.0f},
    {PATH_TILED, true, true, 2048, 2048, 1024, -1.0f, 0.5f}, /* 128 tiles of 256x128x16: one wave */
    {PATH_TILED, false, false, 2048, 2048, 1024, 2.0f, 0.0f},
    {PATH_SPLIT_CLUSTER, false, false, 1024, 1024, 896, 0.5f, -1.0f},  /* 128x128x16 split 2 */
    {PATH_SPLIT_CLUSTER, false, false, 512, 512, 512, 1.0f, 0.25f},    /* 64x64x16 split 4 */
    /* Unaligned operands (lda odd), K split in clusters: */
    {PATH_SPLIT_CLUSTER, false, false, 511, 512, 512, 1.0f, 0.5f},    /* 64x64x16 split 4 */
    {PATH_SPLIT_CLUSTER, true, true, 727, 959, 551, -1.0f, 0.0f},     /* 64x64x16 split 2 */
    {PATH_SPLIT_CLUSTER, false, false, 1021, 1024, 1001, 1.0f, 0.5f}, /* 256x64x16 split 2 */
    {PATH_SPLIT_CLUSTER, false, false, 333, 640, 501, 2.0f, 0.0f},    /* 64x64x8 split 8 */
    {PATH_SPLIT_CLUSTER, false, true, 2047, 640, 761, 1.0f, 1.0f},    /* 128x64x8 split 3, last slice short */
    {PATH_SPLIT_CLUSTER, false, false, 333, 333, 501, 1.0f, 0.5f},    /* 32x32x8 split 8 */
    {PATH_SPLIT_WORKSPACE, false, false, 256, 256, 8192, 1.0f, 0.0f},  /* 128x128x16 split 32 */
    {PATH_SPLIT_WORKSPACE, false, false, 64, 64, 20000, 1.0f, 0.0f},   /* 64x64x16 split 125: 8 batches reduced */
    {PATH_SPLIT_WORKSPACE, false, true, 33, 70, 5000, -0.5f, 2.0f},    /* 64x64x16 split 63, last slice short */
    {PATH_STREAMK, false, false, 3072, 3072, 1024, 1.0f, 1.0f},        /* 264 tiles whole, 24 shared out */
    {PATH_PACKED, true, false, 2048, 2048, 2048, 0.25f, 2.0f},
    {PATH_PEELED, false, false, 4097, 513, 1023, -2.0f, 0.5f}, /* 1 row and 1 column peeled */
    {PATH_TMA, false, false, 4096, 16, 4096, 1.0f, -1.0f},
    {PATH_TMA, true, false, 16, 4096, 4096, 2.0f, 0.0f},
    {PATH_ROWS, false, true, 6000, 16, 1100, -1.0f, 0.5f}, /* not the TMA kernel's (skinny_tma_fits); split 4 */
    {PATH_DOTS, false, false, 16, 3000, 1100, 0.5f, 0.25f},
    {PATH_SKINNY_WORKSPACE, false, false, 5000, 4, 3000, 2.0f, -1.0f}, /* rows split 7: 280 blocks, more than clusters hold */
    {PATH_GEMV, false, true, 1, 1017, 2963, -1.0f, 0.5f},             /* split 7 in clusters */
    {PATH_RANK_K, false, true, 4096, 4096, 16, 1.0f, 0.5f},         /* one chunk of K */
    {PATH_RANK_K, true, false, 3000, 5000, 40, -0.5f, 0.0f},        /* three chunks, the last partial */
};

/* The plan settings of this run, which the expected plans follow. */
static struct {
    bool clusters;       /* TGEMM_CLUSTERS unset or 1 */
    bool streamk_always; /* TGEMM_STREAMK=always */
    const char *kernel;  /* TGEMM_KERNEL, or NULL */
} g_plan_env;

/* What the plan lines of one call showed. */
typedef struct {
    int lines;              /* "tgemm: device plan" lines */
    int packed, peeled;     /* op(A) packed; rows or columns peeled */
    int tiled, streamk;     /* tiled plans; of those, in stream-K form */
    int tma, rows, dots;    /* streaming plans */
    int gemv;               /* streaming plans on skinny_gemv */
    int rank_k;             /* rank-k plans */
    int split;              /* the largest split-k= of the plans not in stream-K form */
    int cluster, workspace; /* plans with K split, in each form */
    int foreign;            /* tiled plans on another family than TGEMM_KERNEL's */
} plans_t;

/* Reads the plan lines of `log`; passes other lines on to stderr. */
static plans_t read_plans(const char *log)
{
    plans_t s;
    memset(&s, 0, sizeof s);
    s.split = 1;
    for (const char *line = log; *line;) {
        const char *eol = strchr(line, '\n');
        const int len = (int)(eol ? (size_t)(eol - line) + 1 : strlen(line));
        char buf[512];
        snprintf(buf, sizeof buf, "%.*s", len, line);
        line += len;
        if (strncmp(buf, "tgemm: device plan ", 19) != 0) {
            fputs(buf, stderr);
            continue;
        }
        s.lines++;
        int split = 1;
        char form[16] = "none", family[32] = "";
        const char *t;
        if (strstr(buf, ": op(A) packed by columns") != NULL || strstr(buf, ": A packed as stored") != NULL ||
            strstr(buf, ": B packed as stored") != NULL) {
            s.packed++;
            continue;
        }
        if (strstr(buf, ": peeled ") != NULL) {
            s.peeled++;
            continue;
        }
        if ((t = strstr(buf, " tiled ")) != NULL) {
            s.tiled++;
            if (sscanf(t, " tiled %31s", family) != 1)
                fail_msg("unreadable plan line: %s", buf);
            if (g_plan_env.kernel != NULL && strcmp(family, g_plan_env.kernel) != 0)
                s.foreign++;
            if (strstr(t, " stream-k: ") != NULL) {
                s.streamk++;
                continue;
            }
        } else if (strstr(buf, " streaming tma ") != NULL) {
            s.tma++;
            continue;
        } else if (strstr(buf, " rank-k ") != NULL) {
            s.rank_k++;
            continue;
        } else if (strstr(buf, " streaming rows ") != NULL) {
            s.rows++;
        } else if (strstr(buf, " streaming dots ") != NULL) {
            s.dots++;
        } else if (strstr(buf, " streaming gemv ") != NULL) {
            s.gemv++;
        } else {
            fail_msg("unknown plan line: %s", buf);
        }
        if ((t = strstr(buf, " split-k=")) == NULL || sscanf(t, " split-k=%d (%15[a-z])", &split, form) != 2)
            fail_msg("unreadable plan line: %s", buf);
        if (split > s.split)
            s.split = split;
        if (split > 1 && strcmp(form, "cluster") == 0)
            s.cluster++;
        else if (split > 1 && strcmp(form, "workspace") == 0)
            s.workspace++;
        else if (split > 1)
            fail_msg("unknown split-K form: %s", buf);
    }
    return s;
}

/* NULL when the plans of one call are those `path` implies under this
 * run's settings; else what they should have been. */
static const char *path_mismatch(path_t path, const plans_t *s)
{
    const int streaming = s->tma + s->rows + s->dots + s->gemv;
    if (!g_plan_env.clusters && s->cluster > 0)
        return "no split of K in cluster form (TGEMM_CLUSTERS=0)";
    if (path == PATH_SCALE)
        return s->lines == 0 ? NULL : "no kernel plan: alpha == 0 runs the scaling kernel";
    if (g_plan_env.kernel != NULL && strcmp(g_plan_env.kernel, "rank-k") == 0)
        return s->lines == 1 && s->rank_k == 1 ? NULL : "the rank-k kernel alone (TGEMM_KERNEL=rank-k)";
    if (g_plan_env.kernel != NULL)
        return s->lines == 1 && s->tiled == 1 && s->foreign == 0 ? NULL : "one tiled plan, on TGEMM_KERNEL's family";
    if (g_plan_env.streamk_always && path <= PATH_PEELED)
        return s->tiled >= 1 && s->streamk == s->tiled ? NULL : "every tiled plan in stream-K form (TGEMM_STREAMK=always)";
    const bool one_tiled = s->lines == 1 && s->tiled == 1 && s->streamk == 0;
    switch (path) {
    case PATH_TILED:
        return one_tiled && s->split == 1 ? NULL : "one tiled plan over all of K";
    case PATH_SPLIT_CLUSTER:
        if (!g_plan_env.clusters)
            return one_tiled && s->workspace == 1 ? NULL : "one tiled plan, K split through the workspace";
        return one_tiled && s->cluster == 1 ? NULL : "one tiled plan, K split in cluster form";
    case PATH_SPLIT_WORKSPACE:
        return one_tiled && s->workspace == 1 ? NULL : "one tiled plan, K split through the workspace";
    case PATH_STREAMK:
        return s->lines == 1 && s->streamk == 1 ? NULL : "one tiled plan in stream-K form";
    case PATH_PACKED:
        return s->lines == 2 && s->packed == 1 && s->tiled == 1 ? NULL : "op(A) packed, then one tiled plan";
    case PATH_PEELED:
        return s->peeled == 1 && s->tiled == 1 && streaming >= 1 && s->lines == 2 + streaming
                   ? NULL
                   : "rows or columns peeled: one tiled plan and streaming ones";
    case PATH_TMA:
        return s->lines == 1 && s->tma == 1 ? NULL : "the streaming kernel fed by the tensor copy engine";
    case PATH_ROWS:
        return s->lines == 1 && s->rows == 1 && s->split > 1 ? NULL : "skinny_rows with K split";
    case PATH_DOTS:
        return s->lines == 1 && s->dots == 1 && s->split > 1 ? NULL : "skinny_dots with K split";
    case PATH_SKINNY_WORKSPACE:
        return s->lines == 1 && s->rows + s->dots + s->gemv == 1 && s->workspace == 1
                   ? NULL
                   : "a streaming kernel, K split through the workspace";
    case PATH_GEMV:
        return s->lines == 1 && s->gemv == 1 && s->split > 1 ? NULL : "skinny_gemv with K split";
    case PATH_RANK_K:
        return s->lines == 1 && s->rank_k == 1 ? NULL : "the rank-k kernel alone";
    default:
        return "a known path";
    }
}

static char *special_name(const special_case_t *t)
{
    return xstrdup_printf("special_%s_%c%c_%lldx%lldx%lld_a%g_b%g", kPathName[t->path], t->ta ? 't' : 'n',
                          t->tb ? 't' : 'n', (long long)t->m, (long long)t->n, (long long)t->k, (double)t->alpha,
                          (double)t->beta);
}

enum { kSpecialSeedBase = 10000 }; /* seeds apart from the table's and the other tests' */

static void run_special(const special_case_t *t, const char *name, bool exact)
{
    const uint64_t seed = test_seed_for(kSpecialSeedBase + 2 * (uint64_t)(t - kSpecial) + (exact ? 1 : 0));
    rng_t rng = {seed};
    const problem_t p = {true, t->ta, t->tb, t->m, t->n, t->k, t->alpha, t->beta,
                         shapes_of_call(true, t->ta, t->tb, t->m, t->n, t->k, 0, 0, 0)};
    const shape_t SA = p.s.SA, SB = p.s.SB, SC = p.s.SC;
    float *A = xmalloc(shape_elems(SA) * sizeof(float)), *B = xmalloc(shape_elems(SB) * sizeof(float));
    float *C0 = xmalloc(shape_elems(SC) * sizeof(float)), *got = xmalloc(shape_elems(SC) * sizeof(float));
    fill_operands(A, SA, B, SB, C0, SC, t->beta, &rng, exact);
    put_special_values(&p, A, B, t->beta != 0.0f ? C0 : NULL);
    special_counts_t counts;
    double *bound = NULL;
    double *want = special_reference(&p, A, B, C0, exact ? NULL : &bound, &counts);
    require_special_counts(name, &p, &counts);

    buf_t a = buf_make(MEM_DEVICE, A, shape_elems(SA), 0);
    buf_t b = buf_make(MEM_DEVICE, B, shape_elems(SB), 0);
    buf_t c = buf_make(MEM_DEVICE, C0, shape_elems(SC), 0);
    capture_t cap;
    capture_begin(&cap);
    const tgemm_status s = tgemm_sgemm(t->ta ? TGEMM_OP_T : TGEMM_OP_N, t->tb ? TGEMM_OP_T : TGEMM_OP_N, t->m, t->n,
                                       t->k, t->alpha, a.ptr, SA.ld, b.ptr, SB.ld, t->beta, c.ptr, SC.ld);
    char *log = capture_end(&cap);
    if (s != TGEMM_SUCCESS)
        fail_msg("%s: tgemm returned %d (%s): %s (seed 0x%016llx)", name, (int)s, tgemm_status_string(s),
                 tgemm_last_error_detail(), (unsigned long long)seed);
    const plans_t plans = read_plans(log);
    const char *mismatch = path_mismatch(t->path, &plans);
    if (mismatch != NULL)
        fail_msg("%s: the plan is not %s; pick a shape that takes this path. Plan lines:\n%s", name, mismatch, log);
    free(log);

    buf_read(&c, got);
    check_special(name, &p, got, want, bound, exact, seed);
    assert_operands_unchanged(&a, A, SA, &b, B, SB);
    buf_free(&a);
    buf_free(&b);
    buf_free(&c);
    free(A), free(B), free(C0), free(got), free(want), free(bound);
}

static void test_special_row(void **state)
{
    REQUIRE_GPU();
    const special_case_t *t = *state;
    char *name = special_name(t);
    run_special(t, name, true);
    run_special(t, name, false);
    free(name);
}

/* Reads the plan settings the rows' expected plans follow; false when the
 * run cannot be checked (see the comment above kSpecial). */
static bool read_plan_env(void)
{
    const char *verbose = getenv("TGEMM_VERBOSE"), *clusters = getenv("TGEMM_CLUSTERS");
    const char *streamk = getenv("TGEMM_STREAMK"), *kernel = getenv("TGEMM_KERNEL");
    const char *pack = getenv("TGEMM_PACK"), *tma = getenv("TGEMM_TMA");
    if (verbose == NULL || strcmp(verbose, "2") != 0)
        return false;
    if (clusters != NULL && *clusters && strcmp(clusters, "0") != 0 && strcmp(clusters, "1") != 0)
        return false;
    if (streamk != NULL && *streamk && strcmp(streamk, "auto") != 0 && strcmp(streamk, "always") != 0)
        return false;
    if ((pack != NULL && *pack && strcmp(pack, "auto") != 0) || (tma != NULL && *tma && strcmp(tma, "1") != 0))
        return false;
    g_plan_env.clusters = clusters == NULL || strcmp(clusters, "0") != 0;
    g_plan_env.streamk_always = streamk != NULL && strcmp(streamk, "always") == 0;
    g_plan_env.kernel = kernel != NULL && *kernel ? kernel : NULL;
    return true;
}

/* Under TGEMM_TEST_FILTER, whether it selects any of the `n` tests: a filter
 * that selects none would pass with nothing run (CMocka's wildcards, * and
 * ?, mean what they mean to fnmatch). */
static bool filter_selects(const char *filter, const struct CMUnitTest *tests, size_t n)
{
    if (!filter || !*filter)
        return true;
    for (size_t i = 0; i < n; ++i)
        if (fnmatch(filter, tests[i].name, 0) == 0)
            return true;
    fprintf(stderr, "TGEMM_TEST_FILTER=\"%s\" selects none of the %zu tests\n", filter, n);
    return false;
}

static int run_special_values(void)
{
    if (!read_plan_env()) {
        fprintf(stderr, "special-values needs TGEMM_VERBOSE=2 (its plan lines show the path each call took) and "
                        "takes of the plan settings only TGEMM_CLUSTERS, TGEMM_STREAMK=auto|always and "
                        "TGEMM_KERNEL\n");
        return 2;
    }
    const char *filter = getenv("TGEMM_TEST_FILTER");
    if (filter && *filter)
        cmocka_set_test_filter(filter);
    enum { kRows = sizeof kSpecial / sizeof kSpecial[0] };
    struct CMUnitTest tests[kRows];
    for (size_t i = 0; i < kRows; ++i)
        tests[i] = (struct CMUnitTest){special_name(&kSpecial[i]), test_special_row, NULL, NULL, (void *)&kSpecial[i]};
    const int failed = filter_selects(filter, tests, kRows) ? run_group("tgemm_gpu_special_values", tests, kRows) : 1;
    for (size_t i = 0; i < kRows; ++i)
        free((void *)tests[i].name);
    return failed ? 1 : 0;
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    (void)test_base_seed();
    if (argc == 2 && strcmp(argv[1], "deterministic") == 0) {  /* make test-gpu, with TGEMM_TEST_BITS */
        struct CMUnitTest only = cmocka_unit_test(test_deterministic);
        return run_group("tgemm_gpu_bits", &only, 1) ? 1 : 0;
    }
    if (argc == 2 && strcmp(argv[1], "special-values") == 0) /* make test-gpu, test-kernels */
        return run_special_values();
    if (argc != 1) {
        fprintf(stderr, "usage: %s [deterministic | special-values]\n", argv[0]);
        return 2;
    }
    /* TGEMM_TEST_FILTER: only the tests whose names match this pattern
     * (CMocka's wildcards * and ?), e.g. "*x16x*" for the sanitizers. */
    const char *filter = getenv("TGEMM_TEST_FILTER");
    if (filter && *filter)
        cmocka_set_test_filter(filter);
    const char *max_env = getenv("TGEMM_TEST_MAX_DIM");
    const int64_t max_dim = max_env && *max_env ? atoll(max_env) : 0;
    int nsizes = NSIZES;
    while (max_dim > 0 && nsizes > 1 && kSizes[nsizes - 1] > max_dim)
        --nsizes;

    enum { kCap = 400 };
    static gemm_case_t rows[kCap];
    const char *max_k_env = getenv("TGEMM_TEST_MAX_K");
    const int64_t max_k = max_k_env && *max_k_env ? atoll(max_k_env) : 0;
    const size_t nrows = build_table(rows, kCap, kSizes, nsizes, max_k);
    const struct CMUnitTest special[] = {
        cmocka_unit_test(test_alpha0_never_reads_ab), cmocka_unit_test(test_beta0_never_reads_c),
        cmocka_unit_test(test_k0_scales_c),           cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_concurrent_threads),    cmocka_unit_test(test_out_of_memory),
    };
    const size_t nspecial = sizeof special / sizeof special[0];
    struct CMUnitTest *tests = xmalloc(sizeof(struct CMUnitTest) * (nrows + nspecial));
    size_t nt = 0;
    for (size_t i = 0; i < nrows; ++i) {
        rows[i].index = i;
        tests[nt++] = (struct CMUnitTest){case_name(&rows[i]), test_case_row, NULL, NULL, &rows[i]};
    }
    if (max_dim == 0)
        for (size_t i = 0; i < nspecial; ++i)
            tests[nt++] = special[i];
    const int failed = filter_selects(filter, tests, nt) ? run_group("tgemm_gpu", tests, nt) : 1;
    for (size_t i = 0; i < nt; ++i)
        if (tests[i].test_func == test_case_row)
            free((void *)tests[i].name);
    free(tests);
    /* What the library keeps between calls (the host path's pinned staging,
     * the large scratch pools) goes back before exit, so that a run under
     * compute-sanitizer --leak-check full reports what tgemm loses, not
     * what it caches. */
    const tgemm_status released = tgemm_release_resources();
    if (released != TGEMM_SUCCESS) {
        fprintf(stderr, "tgemm_release_resources: %s\n", tgemm_status_string(released));
        return 1;
    }
    return failed ? 1 : 0;
}
