// Stream-K's division of work (src/kernels/gemm_params.hpp), no GPU needed
// (make test-streamk-plan). The tiled stream-K kernel (sgemm_streamk in
// src/kernels/tiled/streamk.cuh) gives block c the K steps
// [streamk_begin(c), streamk_begin(c + 1)) of the shared-out tiles, cuts its
// run at tile boundaries into parts (walked from the run's end), leaves each part that is not a whole
// tile in workspace slot 2c (its run's first part) or 2c + 1, and the last
// block of a tile to arrive reads the tile's parts back through
// streamk_owner and streamk_slot. This replays that walk for every block on
// the host, for many divisions, with the blocks arriving in a random order,
// and checks that:
//   - the runs cover every K step of every tile once, none of them empty;
//   - every part the reader asks for was written, by the block it names,
//     for the tile it is reducing, and no slot is written twice;
//   - the reader adds the parts of each tile in K order and gets the tile's
//     whole sum, once per tile.
// It also checks ring_fits_k, the same header's test of K for the
// whole-tile ring.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

// cmocka.h declares only part of its interface extern "C".
extern "C" {
#include <cmocka.h>
}

#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>

#include "kernels/gemm_params.hpp"

using tgemm::StreamK;

namespace {

struct Slot {
    int64_t tile = -1;  // the tile whose part it holds (-1: never written)
    int64_t k0 = 0, k1 = 0;  // the part's K steps: [k0, k1)
    int64_t sum = 0;    // the sum of its steps' values
    int writes = 0;
};

// The value of K step k of tile u: distinct enough that a part added twice,
// missed or added out of order changes the result.
int64_t step_value(int64_t u, int64_t k)
{
    return (u * 1000003 + k * 7919) % 1000033 + 1;
}

// One division: returns the number of problems found (each reported).
int replay(int64_t sk_tiles, int64_t iters, int ctas, std::mt19937_64 &rng)
{
    StreamK sk;
    sk.sk_tiles = sk_tiles;
    sk.iters = iters;
    sk.ctas = ctas;
    int problems = 0;
    const auto report = [&](const char *what, int64_t a, int64_t b) {
        if (problems++ < 5)
            std::fprintf(stderr, "sk_tiles=%lld iters=%lld ctas=%d: %s (%lld, %lld)\n", (long long)sk_tiles,
                         (long long)iters, ctas, what, (long long)a, (long long)b);
    };

    // The runs: consecutive, non-empty, covering all steps; streamk_owner
    // inverts them.
    const int64_t total = sk_tiles * iters;
    if (streamk_begin(sk, 0) != 0 || streamk_begin(sk, ctas) != total)
        report("runs do not cover the steps", streamk_begin(sk, 0), streamk_begin(sk, ctas));
    for (int c = 0; c < ctas; ++c) {
        const int64_t b = streamk_begin(sk, c), e = streamk_begin(sk, c + 1);
        if (e <= b)
            report("empty run", c, b);
        if (streamk_owner(sk, b) != c || streamk_owner(sk, e - 1) != c)
            report("owner does not invert begin", c, streamk_owner(sk, b));
    }

    // Every block walks its run as the kernel does; parts that are not whole
    // tiles go to the workspace, in an order of arrival drawn at random.
    struct Part {
        int c;
        int64_t u, k0, k1;
        int slot;
    };
    std::vector<Slot> work(2 * static_cast<size_t>(ctas));
    std::vector<Part> arrivals;
    std::vector<int64_t> whole_done(sk_tiles, 0), reduced(sk_tiles, 0), counters(sk_tiles, 0);
    for (int c = 0; c < ctas; ++c) {
        const int64_t begin = streamk_begin(sk, c);
        for (int64_t end = streamk_begin(sk, c + 1); end > begin;) {  // from the run's end, as the kernel
            const int64_t u = (end - 1) / iters, t0 = u * iters;
            const int64_t first = std::max(begin, t0), k0 = first - t0, k1 = end - t0;
            if (k0 == 0 && k1 == iters)
                ++whole_done[u];
            else
                arrivals.push_back({c, u, k0, k1, first == begin ? 0 : 1});
            end = first;
        }
    }
    std::shuffle(arrivals.begin(), arrivals.end(), rng);
    for (const Part &a : arrivals) {
        Slot &s = work[2 * static_cast<size_t>(a.c) + a.slot];
        ++s.writes;
        s.tile = a.u;
        s.k0 = a.k0;
        s.k1 = a.k1;
        s.sum = 0;
        for (int64_t k = a.k0; k < a.k1; ++k)
            s.sum += step_value(a.u, k);
        if (s.writes > 1)
            report("slot written twice", a.c, a.slot);
        // The arrival is counted; the last block of the tile adds its parts.
        const int64_t t0 = a.u * iters, first = streamk_owner(sk, t0);
        const int64_t parts = streamk_owner(sk, t0 + iters - 1) - first + 1;
        if (++counters[a.u] != parts)
            continue;
        int64_t sum = 0, next_k = 0;
        for (int64_t i = 0; i < parts; ++i) {
            const int64_t b = first + i;
            const size_t index = 2 * static_cast<size_t>(b) + (i == 0 ? streamk_slot(sk, first, a.u) : 0);
            const Slot &part = work[index];
            if (part.tile != a.u || part.k0 != next_k)
                report("reader finds the wrong part", a.u, b);
            sum += part.sum;
            next_k = part.k1;
        }
        if (next_k != iters)
            report("parts do not reach the end of the tile", a.u, next_k);
        int64_t want = 0;
        for (int64_t k = 0; k < iters; ++k)
            want += step_value(a.u, k);
        if (sum != want)
            report("tile sum differs", a.u, sum - want);
        ++reduced[a.u];
    }
    for (int64_t u = 0; u < sk_tiles; ++u)
        if (whole_done[u] + reduced[u] != 1)
            report("tile not finished exactly once", u, whole_done[u] + reduced[u]);
    return problems;
}

void test_small_divisions(void **)
{
    std::mt19937_64 rng(12345);
    int problems = 0;
    for (int64_t tiles = 1; tiles <= 24; ++tiles)
        for (int64_t iters = 1; iters <= 24; ++iters)
            for (int ctas = 1; ctas <= 40 && ctas <= tiles * iters; ++ctas)
                problems += replay(tiles, iters, ctas, rng);
    assert_int_equal(problems, 0);
}

// The divisions the dispatcher makes on the H100 (132 SMs, one block of the
// large families per SM) for the suite's large products, and some with
// several blocks inside one tile.
void test_h100_divisions(void **)
{
    std::mt19937_64 rng(777);
    const struct {
        int64_t tiles, iters;
        int ctas;
    } cases[] = {
        {116, 256, 132},  // 4096^3 on 256x128x16: 116 tiles past 3 waves
        {68, 512, 132},   // 8192^3: 68 tiles past 15 waves
        {128, 128, 132},  // 2048^3: one wave, 4 SMs short
        {8, 320, 132},    // 5120^3: 8 tiles past 6 waves, cut in 16 or 17 parts each
        {1, 63, 63},      // one tile, one step per block
        {3, 5, 13},       // blocks inside tiles and across their ends
        {7, 1000, 131},
    };
    int problems = 0;
    for (const auto &c : cases)
        problems += replay(c.tiles, c.iters, c.ctas, rng);
    assert_int_equal(problems, 0);
}

// ring_fits_k (the same header): a launch's blocks of whole tiles take the
// whole-tile ring only where every slice of K is a multiple of the K step
// and kWholeRingMinSteps steps long, so that the slices of one tile (the
// blocks of a cluster) run the same loop.
void test_ring_fits_k(void **)
{
    using tgemm::kWholeRingMinSteps;
    using tgemm::ring_fits_k;
    assert_true(ring_fits_k(4096, 1, 4096, 16));
    assert_true(ring_fits_k(16 * kWholeRingMinSteps, 1, 16 * kWholeRingMinSteps, 16));
    assert_false(ring_fits_k(16 * kWholeRingMinSteps - 16, 1, 16 * kWholeRingMinSteps - 16, 16));
    assert_false(ring_fits_k(4104, 1, 4104, 16));  // not a multiple of 16 (of 8 it is)
    assert_true(ring_fits_k(4104, 1, 4104, 8));
    assert_true(ring_fits_k(1024, 2, 512, 16));     // 1024^3 split 2: 32 steps each
    assert_false(ring_fits_k(1000, 2, 512, 16));    // slices of 512 and 488: neither takes it
    assert_false(ring_fits_k(496, 2, 256, 16));     // slices of 16 and 15 steps: neither
    assert_true(ring_fits_k(8192, 32, 256, 16));    // 256 x 256 x 8192 in 32 slices of 16 steps
    assert_false(ring_fits_k(8192 - 16, 32, 256, 16));
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_divisions),
        cmocka_unit_test(test_h100_divisions),
        cmocka_unit_test(test_ring_fits_k),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
