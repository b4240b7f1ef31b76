// The streaming kernels' planner (skinny_split in src/dispatch/skinny_split.cpp),
// no GPU needed (make test-skinny-plan): for products whose C has at most 16
// rows or columns it chooses the split of K, the row groups per block and
// whether the split is finished inside a thread-block cluster. Linked from
// the library's own objects; nothing here touches a device.
//
// Also skinny_tma_fits (src/kernels/skinny_tma.cu): which products go to
// the kernel fed by the tensor copy engine instead.
//
// Every plan must cover K exactly (non-empty slices, chunks a multiple of
// the kernel's K step), keep groups a power of two (1 for skinny_rows), and
// use the cluster form only when all its blocks fit in the cluster
// capacity it was given and its sums fit the shared memory set aside for
// them. Then the plans for the H100 suite shapes that docs/performance.md
// reports.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

// cmocka.h declares only part of its interface extern "C".
extern "C" {
#include <cmocka.h>
}

#include <cstdio>
#include <initializer_list>

#include "dispatch/skinny_split.hpp"
#include "kernels/family.hpp"

using tgemm::SplitK;
using tgemm::kernels::SkinnyParams;

namespace {

constexpr int kSms = 132;
// H100 80GB HBM3: blocks resident at once in clusters of n (TGEMM_VERBOSE=2).
const int kH100Clusters[tgemm::kernels::kSkinnyMaxCluster + 1] = {0, 0, 264, 237, 248, 235, 234, 224, 240};
const int kNoClusters[tgemm::kernels::kSkinnyMaxCluster + 1] = {};

// The H100's bandwidth and launch cost, as the dispatcher's device model has them.
tgemm::SplitK split(SkinnyParams *p, const int *clusters)
{
    return tgemm::skinny_split(p, tgemm::SkinnyDevice{kSms, clusters, 2.88e12, 3e-6});
}

SkinnyParams params(int64_t r, int s, int64_t k, bool rows)
{
    SkinnyParams p = {};
    p.r = r;
    p.s = s;
    p.k = k;
    p.x_r = rows ? 1 : k + 3;  // skinny_rows: X contiguous along r; skinny_dots: along k (padded ld)
    p.x_k = rows ? r + 3 : 1;
    p.vec = true;
    return p;
}

int64_t blocks_of(const SkinnyParams &p, const SplitK &sk)
{
    const int64_t per = tgemm::skinny_rows_per_block(p);
    return (p.r + per - 1) / per * sk.splits;
}

void check_plan(int64_t r, int s, int64_t k, bool rows, const int *clusters)
{
    SkinnyParams p = params(r, s, k, rows);
    const SplitK sk = split(&p, clusters);
    char what[160];
    std::snprintf(what, sizeof what, "%s r=%lld s=%d k=%lld: splits=%d chunk=%lld groups=%d cluster=%d",
                  rows ? "rows" : "dots", static_cast<long long>(r), s, static_cast<long long>(k), sk.splits,
                  static_cast<long long>(sk.k_chunk), p.groups, sk.cluster);
    const int64_t step = rows ? 64 : 128;
    if (sk.splits < 1 || sk.k_chunk < 1 || sk.k_chunk % step != 0)
        fail_msg("%s: chunk not a positive multiple of %lld", what, static_cast<long long>(step));
    // Every slice holds some of K, and together they hold all of it.
    if (static_cast<int64_t>(sk.splits - 1) * sk.k_chunk >= k || static_cast<int64_t>(sk.splits) * sk.k_chunk < k)
        fail_msg("%s: slices do not cover K exactly", what);
    if (p.groups != 1 && p.groups != 2 && p.groups != 4 && p.groups != 8)
        fail_msg("%s: groups not 1, 2, 4 or 8", what);
    if (rows && p.groups != 1)
        fail_msg("%s: skinny_rows has one group", what);
    if (sk.cluster) {
        if (sk.splits < 2 || sk.splits > tgemm::kernels::kSkinnyMaxCluster)
            fail_msg("%s: cluster of %d blocks", what, sk.splits);
        if (blocks_of(p, sk) > clusters[sk.splits])
            fail_msg("%s: %lld blocks, but clusters of %d hold %d", what, static_cast<long long>(blocks_of(p, sk)),
                     sk.splits, clusters[sk.splits]);
        const int bucket = s <= 1 ? 1 : s <= 2 ? 2 : s <= 4 ? 4 : s <= 8 ? 8 : 16;
        if (tgemm::skinny_rows_per_block(p) * bucket * 4 > 16 * 1024)
            fail_msg("%s: the block's sums exceed 16 KiB", what);
    }
}

void test_invariants(void **)
{
    const int64_t rs[] = {1, 2, 3, 16, 17, 100, 1000, 1025, 4096, 4099, 40000, 300000};
    const int ss[] = {1, 2, 3, 4, 5, 8, 12, 13, 16};
    const int64_t ks[] = {1, 7, 64, 127, 128, 129, 1000, 1100, 4096, 4100, 100000, 2000000};
    int plans = 0;
    for (bool rows : {false, true})
        for (const int *clusters : {kNoClusters, kH100Clusters})
            for (int64_t r : rs)
                for (int s : ss)
                    for (int64_t k : ks) {
                        check_plan(r, s, k, rows, clusters);
                        ++plans;
                    }
    std::printf("checked %d plans\n", plans);
}

// Without cluster capacity (below sm_90) no plan uses the cluster form.
void test_no_clusters(void **)
{
    for (bool rows : {false, true})
        for (int64_t k : {int64_t{1000}, int64_t{4096}, int64_t{100000}}) {
            SkinnyParams p = params(4096, 16, k, rows);
            const SplitK sk = split(&p, kNoClusters);
            assert_false(sk.cluster);
        }
}

// The plans behind the suite figures in docs/performance.md (H100).
void test_h100_suite_plans(void **)
{
    {  // skinny_m16: C is 16 x 4096, X = B^T contiguous along K
        SkinnyParams p = params(4096, 16, 4096, false);
        const SplitK sk = split(&p, kH100Clusters);
        assert_int_equal(sk.splits, 8);
        assert_int_equal(sk.k_chunk, 512);
        assert_int_equal(p.groups, 4);
        assert_false(sk.cluster);  // 256 blocks; clusters of 8 hold 240
    }
    {  // gemv_m1: one pass over K, no split
        SkinnyParams p = params(4096, 1, 4096, false);
        const SplitK sk = split(&p, kH100Clusters);
        assert_int_equal(sk.splits, 1);
        assert_int_equal(p.groups, 1);
    }
    for (int s : {1, 16}) {  // gemv_n1, skinny_n16: 32 blocks x 7 slices in clusters of 7 (224 of 224)
        SkinnyParams p = params(4096, s, 4096, true);
        const SplitK sk = split(&p, kH100Clusters);
        assert_int_equal(sk.splits, 7);
        assert_true(sk.cluster);
    }
}

}  // namespace

// skinny_tma_fits: which products the kernel fed by the tensor copy engine
// takes (the layout and alignment the copy engine needs, s and K large
// enough, blocks that fill 132 SMs in mostly full waves). Pointers are only
// inspected, never read.
SkinnyParams tma_params(int64_t r, int s, int64_t k)
{
    SkinnyParams p = {};
    p.r = r;
    p.s = s;
    p.k = k;
    p.x = reinterpret_cast<const float *>(uintptr_t{1} << 20);
    p.x_r = 1;
    p.x_k = (r + 3) / 4 * 4;  // leading dimensions padded to a multiple of 4
    p.y = reinterpret_cast<const float *>(uintptr_t{3} << 20);
    p.y_j = (k + 3) / 4 * 4;
    p.y_k = 1;
    return p;
}

void test_tma_fits(void **)
{
    using tgemm::kernels::skinny_tma_fits;
    const auto fits = [](const SkinnyParams &p) { return skinny_tma_fits(p, kSms); };
    assert_true(fits(tma_params(4096, 16, 4096)));  // the suite's skinny_n16
    assert_true(fits(tma_params(4096, tgemm::kernels::kSkinnyTmaMinSYk, tgemm::kernels::kSkinnyTmaMinK)));
    assert_false(fits(tma_params(4096, tgemm::kernels::kSkinnyTmaMinSYk - 1, 4096)));
    SkinnyParams yj = tma_params(4096, tgemm::kernels::kSkinnyTmaMinS, 4096);  // Y contiguous along j
    yj.y_k = 8;
    yj.y_j = 1;
    assert_true(fits(yj));
    yj.s = tgemm::kernels::kSkinnyTmaMinS - 1;
    assert_false(fits(yj));
    assert_false(fits(tma_params(4096, 16, tgemm::kernels::kSkinnyTmaMinK - 4)));
    assert_false(fits(tma_params(4096, 17, 4096)));
    assert_true(fits(tma_params(3808, 16, 2048)));    // 119 blocks of 32 on 132 SMs
    assert_false(fits(tma_params(3776, 16, 2048)));   // 118
    assert_false(fits(tma_params(4256, 16, 2048)));   // 133: a second wave of one block
    assert_true(fits(tma_params(34001, 13, 1999)));   // 1063 blocks: 9 waves, the last 0.05 short
    assert_true(fits(tma_params(8448, 16, 4096)));    // 264: two full waves
    SkinnyParams p = tma_params(4096, 16, 4096);
    p.x_k = 4097;  // a stride the copy engine cannot take
    assert_false(fits(p));
    p = tma_params(4096, 16, 4096);
    p.y_j = 4098;
    assert_false(fits(p));
    p = tma_params(4096, 16, 4096);
    p.x += 1;  // 4 bytes past 16-byte alignment
    assert_false(fits(p));
    p = tma_params(4096, 16, 4096);
    p.y += 2;
    assert_false(fits(p));
    p = tma_params(4096, 16, 4096);
    p.x_k = int64_t{1} << 38;  // a stride of 2^40 bytes: past the copy engine's limit
    assert_false(fits(p));
    p.x_k = (int64_t{1} << 38) - 4;
    assert_true(fits(p));
    assert_true(fits(tma_params(INT32_MAX - 64, 16, 4096)));    // the largest r it takes
    assert_false(fits(tma_params(INT32_MAX - 16, 16, 4096)));   // r0 + 32 would pass INT32_MAX
    assert_false(fits(tma_params(4096, 16, int64_t{INT32_MAX})));  // K past the 32-bit coordinates
    p = tma_params(4096, 1, 4096);  // GEMV: the vector's stride between columns is never used
    p.y_j = 1;
    assert_true(fits(p));
    p.s = 2;  // with two columns it is
    assert_false(fits(p));
    p = tma_params(4096, 1, 1999);
    p.y_j = 1999;
    assert_true(fits(p));
    p = tma_params(4096, 16, 4096);
    p.x_r = 4096;  // X contiguous along k (skinny_dots' pattern): its rows 16-byte aligned
    p.x_k = 1;
    assert_true(fits(p));
    p.x_r = 4098;
    assert_false(fits(p));
    p = tma_params(4096, 16, 4096);
    p.y_j = 1;  // Y contiguous along j
    p.y_k = 16;
    assert_true(fits(p));
    p.y_k = 18;
    assert_false(fits(p));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_invariants),
        cmocka_unit_test(test_no_clusters),
        cmocka_unit_test(test_h100_suite_plans),
        cmocka_unit_test(test_tma_fits),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
