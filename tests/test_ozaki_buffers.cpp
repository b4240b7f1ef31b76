// The fp32-tc math's host side (src/kernels/ozaki/pipeline.cu), no GPU:
// padded sizes, which problems the kernels take, the tile kernels' load
// pattern, and the device buffers carved from one workspace: every piece
// aligned for the tensor copies and vector accesses, inside the bytes
// asked for, none overlapping another, each as large as its kernels use.
// Also the dispatcher's declines (src/dispatch/fp32_tc.cpp) under
// TGEMM_FP32_TC=auto: the early ones, made before any plan, and the plan's.
#include <algorithm>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <setjmp.h>
#include <utility>
#include <vector>

// Before cmocka.h, whose fail() macro would take the library's fail().
#include "dispatch/fp32_tc.hpp"

extern "C" {
#include <cmocka.h>
}

#include "kernels/ozaki/ozaki.hpp"

using namespace tgemm::ozaki;

namespace {

// [begin, end) of each piece, relative to the base.
using Pieces = std::vector<std::pair<uintptr_t, uintptr_t>>;

template <class T>
void add(Pieces &p, const void *base, const T *ptr, int64_t count)
{
    const uintptr_t b = reinterpret_cast<uintptr_t>(ptr) - reinterpret_cast<uintptr_t>(base);
    p.push_back({b, b + static_cast<uintptr_t>(count) * sizeof(T)});
}

void check_pieces(Pieces p, size_t bytes)
{
    std::sort(p.begin(), p.end());
    for (size_t i = 0; i < p.size(); ++i) {
        if (p[i].first % 256 != 0)
            fail_msg("piece %zu at offset %zu: not 256-byte aligned", i, static_cast<size_t>(p[i].first));
        if (p[i].second > bytes)
            fail_msg("piece %zu ends at %zu, past the %zu bytes", i, static_cast<size_t>(p[i].second), bytes);
        if (i > 0 && p[i].first < p[i - 1].second)
            fail_msg("pieces %zu and %zu overlap", i - 1, i);
    }
}

void test_sizes(void **)
{
    const Sizes s = sizes_of(1000, 300, 257);
    assert_int_equal(s.mp, 1024);
    assert_int_equal(s.np, 512);
    assert_int_equal(s.kp, 384);
    assert_int_equal(s.chunks, 2);
    const Sizes one = sizes_of(1, 1, 3);
    assert_int_equal(one.mp, kGemmBM);
    assert_int_equal(one.np, kGemmBN);
    assert_int_equal(one.kp, kGemmBK);
    assert_int_equal(one.chunks, 1);
}

void test_fits(void **)
{
    Operands op;
    op.ars = 1;
    op.aks = 100;
    op.brs = 100;
    op.bks = 1;
    op.m = op.n = 100;
    const int64_t ks[] = {2, 3, 32768, 32769};
    const bool want[] = {false, true, true, false};
    for (int i = 0; i < 4; ++i) {
        op.k = ks[i];
        assert_int_equal(fits(op), want[i]);
    }
    op.k = 100;
    op.m = int64_t(65535) * 256;
    assert_true(fits(op));
    op.m += 1;  // the statistics' grid.y
    assert_false(fits(op));
    op.m = 100;
    op.aks = 7;
    op.ars = 3;  // neither stride 1
    assert_false(fits(op));
}

void test_tile_mode(void **)
{
    alignas(16) static float x[64];
    assert_int_equal(tile_mode(x, 8, 1), kTileKc | kTileVec);
    assert_int_equal(tile_mode(x, 7, 1), kTileKc);
    assert_int_equal(tile_mode(x, 1, 12), kTileVec);
    assert_int_equal(tile_mode(x + 1, 1, 12), 0);
}

void test_buffers(void **)
{
    const int64_t shapes[][3] = {{1, 1, 3}, {1000, 300, 257}, {4096, 8192, 2048}, {129, 257, 32768}};
    for (const auto &sh : shapes) {
        const Sizes s = sizes_of(sh[0], sh[1], sh[2]);
        // A base that is itself 256-byte aligned, as the pool's are; never dereferenced.
        void *base = reinterpret_cast<void *>(uintptr_t(1) << 40);
        const size_t cb_bytes = cert_bytes(s);
        const CertBuffers cb = cert_buffers(base, s);
        Pieces p;
        add(p, base, cb.amax, sh[2]);
        add(p, base, cb.bmax, sh[2]);
        add(p, base, cb.ebal, sh[2]);
        add(p, base, cb.part_a, s.chunks * sh[0]);
        add(p, base, cb.part_b, s.chunks * sh[1]);
        add(p, base, cb.rmax_a, s.mp);
        add(p, base, cb.rmax_b, s.np);
        add(p, base, cb.shift_a, s.mp);
        add(p, base, cb.shift_b, s.np);
        add(p, base, cb.pw_a, kCandidates * s.mp);
        add(p, base, cb.pw_b, kCandidates * s.np);
        add(p, base, cb.ones_a, s.mp);
        add(p, base, cb.ones_b, s.np);
        add(p, base, cb.mag_a, s.mp * s.kp);
        add(p, base, cb.mag_b, s.np * s.kp);
        add(p, base, cb.result, 2);
        check_pieces(p, cb_bytes);
        for (int n = kMinN; n <= kMaxN; ++n) {
            const ProductBuffers pb = product_buffers(base, s, n);
            Pieces q;
            add(q, base, pb.mu, s.mp);
            add(q, base, pb.nu, s.np);
            add(q, base, pb.ra, n * s.mp * s.kp);
            add(q, base, pb.rb, n * s.np * s.kp);
            add(q, base, pb.rc, n * s.mp * s.np);
            check_pieces(q, product_bytes(s, n));
        }
    }
}

// Without a driver (this machine in CI) or on a device other than 9.0, the
// mode is not available, and asking is no error.
void test_prepare_elsewhere(void **)
{
    bool available = true;
    assert_int_equal(prepare_ozaki(8, 0, &available), cudaSuccess);
    assert_false(available);
    available = true;
    assert_int_equal(prepare_ozaki(10, 0, &available), cudaSuccess);
    assert_false(available);
}

// Without a GPU the plan never reaches its capture test: every case here
// is declined before it.
void test_declines(void **)
{
    static tgemm::DeviceModel model;
    model.desc.fp32_tc = true;
    model.desc.sm_count = 132;
    float a[1] = {}, b[1] = {}, c[1] = {};
    const auto nn = [&](int64_t m, int64_t n, int64_t k, float alpha) {
        return tgemm::GemmParams{a, b, c, m, k, m, m, n, k, alpha, 0.0f, false, false};
    };
    using tgemm::StrictWhy;
    const struct {
        tgemm::GemmParams p;
        bool device;
        StrictWhy early, plan;
    } cases[] = {
        {nn(64, 64, 64, 1.0f), true, StrictWhy::Small, StrictWhy::Small},
        {nn(8192, 8192, tgemm::kTcMinDim - 1, 1.0f), true, StrictWhy::Small, StrictWhy::Small},
        {nn(tgemm::kTcMinDim - 1, 8192, 8192, 1.0f), true, StrictWhy::Small, StrictWhy::Small},
        {nn(8192, tgemm::kTcMinDim - 1, 8192, 1.0f), true, StrictWhy::Small, StrictWhy::Small},
        {nn(64, 64, 64, 0.0f), true, StrictWhy::Small, StrictWhy::Small},
        {nn(8192, 8192, 8192, 1.0f), false, StrictWhy::Device, StrictWhy::Device},
        {nn(tgemm::kTcMinDim, tgemm::kTcMinDim, tgemm::kTcMinDim, 0.0f), true, StrictWhy::None, StrictWhy::Shape},
        {nn(tgemm::kTcMinDim, tgemm::kTcMinDim, kCertMaxK + 1, 1.0f), true, StrictWhy::None, StrictWhy::Shape},
    };
    for (const auto &t : cases) {
        model.desc.fp32_tc = t.device;
        const StrictWhy early = tgemm::tc_early_decline(t.p, model);
        const StrictWhy plan = tgemm::plan_fp32_tc(t.p, model, nullptr).why;
        if (early != t.early || plan != t.plan)
            fail_msg("%lld x %lld x %lld alpha %g, device %d: early %s, plan %s; want %s, %s",
                     static_cast<long long>(t.p.m), static_cast<long long>(t.p.n), static_cast<long long>(t.p.k),
                     static_cast<double>(t.p.alpha), t.device ? 1 : 0, tgemm::strict_why_name(early),
                     tgemm::strict_why_name(plan), tgemm::strict_why_name(t.early), tgemm::strict_why_name(t.plan));
    }
}

}  // namespace

int main()
{
    // The declines read TGEMM_FP32_TC once: the default, auto.
    unsetenv("TGEMM_FP32_TC");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),   cmocka_unit_test(test_fits),
        cmocka_unit_test(test_tile_mode), cmocka_unit_test(test_buffers),
        cmocka_unit_test(test_prepare_elsewhere), cmocka_unit_test(test_declines),
    };
    return cmocka_run_group_tests_name("tgemm_ozaki_buffers", tests, nullptr, nullptr);
}
