// The plans that spread a product on host operands over several GPUs
// (src/driver/spread_plan.cpp), no GPU needed (make test-spread-plan).
//
// Checked: for random products, worker counts and operand kinds, the blocks
// cover C exactly once, each at least min_side on a side, edges on
// multiples of kSpreadAlign where the sizes allow, no more than
// kSpreadMaxBlocksPerWorker per worker, workers no more than blocks; a
// listed set of devices spreads whenever C has room for two blocks; `auto`
// spreads only where the model says it pays, and then its time is the
// smallest over the worker counts it may use; blocks that share panels get
// one block per worker where C has room; the model's choices on the
// products the decision turns on: large squares from pinned memory spread
// over every GPU, small ones and link-bound pageable ones stay on one.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

// cmocka.h declares only part of its interface extern "C".
extern "C" {
#include <cmocka.h>
}

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "driver/spread_plan.hpp"

namespace {

using tgemm::Rect;
using tgemm::SpreadPlan;
using tgemm::SpreadRequest;

constexpr double kH100Peak = 2.0 * 128 * 132 * 1.98e9;

SpreadRequest square(int64_t s, int workers, bool pageable, bool choose)
{
    SpreadRequest r;
    r.m = r.n = r.k = s;
    r.a_host = r.b_host = true;
    r.pageable = pageable;
    r.copy_threads = 12;
    r.workers = workers;
    r.choose_workers = choose;
    r.peak_flops = kH100Peak;
    return r;
}

// Every element of C in exactly one block; the blocks' shapes.
void check_blocks(const SpreadRequest &r, const SpreadPlan &p)
{
    const int64_t blocks = tgemm::block_count(p);
    assert_true(blocks >= 1);
    assert_true(p.workers >= 1 && p.workers <= r.workers);
    assert_true(p.workers <= blocks);
    if (p.workers == 1) {
        assert_int_equal(blocks, 1);
        return;
    }
    if (r.rows == 0)
        assert_true(blocks <= static_cast<int64_t>(tgemm::kSpreadMaxBlocksPerWorker) * r.workers);
    std::vector<unsigned char> hits(static_cast<size_t>(r.m * r.n), 0);
    for (int64_t i = 0; i < blocks; ++i) {
        const Rect b = tgemm::spread_block(p, r.m, r.n, i);
        assert_true(b.rows >= 1 && b.cols >= 1);
        assert_true(b.row >= 0 && b.col >= 0 && b.row + b.rows <= r.m && b.col + b.cols <= r.n);
        // Sides of at least min_side, less what aligning the edges takes.
        assert_true(p.rows == 1 || b.rows >= r.min_side - tgemm::kSpreadAlign);
        assert_true(p.cols == 1 || b.cols >= r.min_side - tgemm::kSpreadAlign);
        if (r.m / p.rows >= tgemm::kSpreadAlign)
            assert_int_equal(b.row % tgemm::kSpreadAlign, 0);
        if (r.n / p.cols >= tgemm::kSpreadAlign)
            assert_int_equal(b.col % tgemm::kSpreadAlign, 0);
        for (int64_t j = b.col; j < b.col + b.cols; ++j)
            for (int64_t q = b.row; q < b.row + b.rows; ++q)
                ++hits[static_cast<size_t>(q + j * r.m)];
    }
    for (const unsigned char h : hits)
        assert_int_equal(h, 1);
}

void test_random_plans(void **)
{
    const unsigned seed = std::random_device{}();
    std::printf("seed %u\n", seed);
    std::mt19937 rng(seed);
    for (int t = 0; t < 3000; ++t) {
        SpreadRequest r;
        const auto side = [&] { return static_cast<int64_t>(std::exp2(std::uniform_real_distribution<>(0, 14)(rng))); };
        r.m = side();
        r.n = side();
        r.k = rng() % 4 == 0 ? 0 : side();
        r.a_host = rng() % 4 != 0;
        r.b_host = rng() % 4 != 0;
        r.c_in = rng() % 2 == 0;
        r.pageable = rng() % 3 == 0;
        r.copy_threads = 1 + static_cast<int>(rng() % 32);
        r.workers = 1 + static_cast<int>(rng() % 8);
        r.choose_workers = rng() % 2 == 0;
        r.share = rng() % 2 == 0;
        r.peak_flops = kH100Peak;
        r.min_side = rng() % 2 == 0 ? tgemm::kSpreadMinSide : 32 + static_cast<int64_t>(rng() % 200);
        if (rng() % 8 == 0) {
            r.rows = 1 + static_cast<int64_t>(rng() % 6);
            r.cols = 1 + static_cast<int64_t>(rng() % 6);
        }
        const SpreadPlan p = tgemm::plan_spread(r);
        check_blocks(r, p);
        const bool room = std::max<int64_t>(1, r.m / r.min_side) * std::max<int64_t>(1, r.n / r.min_side) >= 2;
        if (r.rows > 0) {
            if (p.workers > 1) {
                assert_int_equal(p.rows, std::min(r.rows, std::max<int64_t>(1, r.m / r.min_side)));
                assert_int_equal(p.cols, std::min(r.cols, std::max<int64_t>(1, r.n / r.min_side)));
            }
            continue;
        }
        if (!r.choose_workers && r.workers >= 2)
            assert_int_equal(p.workers > 1, room);
        // Blocks that share panels: one round where C has room for it.
        if (r.share && p.workers > 1) {
            const int64_t max_rows = std::max<int64_t>(1, r.m / r.min_side);
            const int64_t max_cols = std::max<int64_t>(1, r.n / r.min_side);
            bool fits = false;
            for (int64_t rows = 1; rows <= max_rows && rows <= r.workers; ++rows)
                fits = fits || (r.workers % rows == 0 && r.workers / rows <= max_cols);
            if (!r.choose_workers && fits)
                assert_int_equal(tgemm::block_count(p), p.workers);
        }
        if (r.choose_workers && p.workers > 1)
            assert_true(p.seconds <= tgemm::kSpreadPays * p.one_gpu_seconds);
        if (r.choose_workers) {
            // No worker count the plan may use does better than the one taken.
            for (int w = 2; w <= r.workers; ++w) {
                SpreadRequest q = r;
                q.workers = w;
                q.choose_workers = false;
                const SpreadPlan o = tgemm::plan_spread(q);
                if (p.workers > 1 && o.workers > 1)
                    assert_true(p.seconds <= o.seconds * (1 + 1e-9));
            }
        }
    }
}

void test_model_choices(void **)
{
    // 16384^3 from pinned memory: every GPU, at least one block each, and
    // the model's time within half again of the ideal share of the one-GPU time.
    for (const int w : {2, 4, 8}) {
        const SpreadPlan p = tgemm::plan_spread(square(16384, w, false, true));
        std::printf("16384^3 pinned, %d GPUs: %" PRId64 "x%" PRId64 " blocks on %d, model %.1f ms, one GPU %.1f ms\n",
                    w, p.rows, p.cols, p.workers, p.seconds * 1e3, p.one_gpu_seconds * 1e3);
        assert_int_equal(p.workers, w);
        assert_true(tgemm::block_count(p) >= w);
        assert_true(p.seconds < p.one_gpu_seconds / w * 1.5);
    }
    // Blocks that share panels: a block per GPU (two rounds of unshared
    // blocks wait longer for their panels and pay twice the start and end).
    for (const int w : {2, 4, 8}) {
        SpreadRequest r = square(16384, w, false, true);
        r.share = true;
        const SpreadPlan p = tgemm::plan_spread(r);
        std::printf("16384^3 pinned, %d GPUs, shared panels: %" PRId64 "x%" PRId64 " blocks, model %.1f ms\n", w,
                    p.rows, p.cols, p.seconds * 1e3);
        assert_int_equal(p.workers, w);
        assert_int_equal(tgemm::block_count(p), w);
    }
    // Small products stay on one GPU under auto.
    for (const int64_t s : {256, 512, 1024})
        assert_int_equal(tgemm::plan_spread(square(s, 4, false, true)).workers, 1);
    // From pageable memory the host's copy rate bounds the call: a product
    // whose copies take longer than its multiply gains nothing.
    SpreadRequest thin = square(16384, 4, true, true);
    thin.k = 1024;
    assert_int_equal(tgemm::plan_spread(thin).workers, 1);
    // But a listed set spreads whatever the model says.
    assert_int_equal(tgemm::plan_spread(square(1024, 4, true, false)).workers, 4);
    // A grid asked for (TGEMM_SPREAD_GRID) is taken, within the blocks of
    // min_side that fit.
    SpreadRequest grid = square(16384, 2, false, true);
    grid.rows = 3;
    grid.cols = 5;
    SpreadPlan g = tgemm::plan_spread(grid);
    assert_int_equal(g.rows, 3);
    assert_int_equal(g.cols, 5);
    assert_int_equal(g.workers, 2);
    grid.m = 600;
    g = tgemm::plan_spread(grid);
    assert_int_equal(g.rows, 2);
    assert_int_equal(g.cols, 5);
    // One worker, or no room for two blocks: one GPU.
    assert_int_equal(tgemm::plan_spread(square(16384, 1, false, false)).workers, 1);
    assert_int_equal(tgemm::plan_spread(square(300, 4, false, false)).workers, 1);
}

}  // namespace

int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const CMUnitTest tests[] = {cmocka_unit_test(test_random_plans), cmocka_unit_test(test_model_choices)};
    return cmocka_run_group_tests_name("tgemm_spread_plan", tests, nullptr, nullptr) ? 1 : 0;
}
