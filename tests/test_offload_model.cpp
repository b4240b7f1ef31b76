// TGEMM_OFFLOAD=auto's model and learner (src/blas/offload_model.*), on the
// CPU: the estimates of both sides against hand-computed values, and how
// measured calls of a shape class move the choice.
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <setjmp.h>

extern "C" {
#include <cmocka.h>
}

#include "blas/offload_model.hpp"

using namespace tgemm::blas;

namespace {

OffloadRates rates()
{
    OffloadRates r;
    r.cpu_flops = 1e12;
    r.cpu_call_seconds = 3e-6;
    r.gpu_overhead = 50e-6;
    r.link = 30e9;
    r.link_small = 8e9;
    r.gpu_flops = 30e12;
    return r;
}

void assert_close(double got, double want)
{
    if (std::fabs(got - want) > 1e-9 * std::fabs(want) + 1e-15)
        fail_msg("got %.12g, want %.12g", got, want);
}

// One 2048^3 task (the host pipeline's tile and chunk): every operand is
// 16 MiB and crosses in turn; the kernel waits for all of them.
void test_model_one_task(void **)
{
    const OffloadEstimate e = model_seconds(rates(), 2048, 2048, 2048, true);
    const double flops = 2.0 * 2048.0 * 2048.0 * 2048.0, piece = 4.0 * 2048.0 * 2048.0;
    assert_close(e.cpu, 3e-6 + flops / 1e12);
    assert_close(e.gpu, 50e-6 + 4 * piece / 30e9 + flops / 30e12);
}

// Many tasks: the staging of all operands (beta == 0: C only out) against
// the first task's fill plus all kernels.
void test_model_pipelined(void **)
{
    const int64_t m = 8192, n = 8192, k = 8192;
    const OffloadEstimate e = model_seconds(rates(), m, n, k, false);
    const double piece = 4.0 * 8192.0 * 8192.0, tile = 4.0 * 2048.0 * 2048.0;
    const double staging = 3 * piece / 30e9, fill = 3 * tile / 30e9, kernels = 2.0 * 8192.0 * 8192.0 * 8192.0 / 30e12;
    assert_close(e.gpu, 50e-6 + std::fmax(staging, fill + kernels));
}

// Operands under 1 MiB are staged by one thread, at link_small.
void test_model_small_operands(void **)
{
    const OffloadEstimate e = model_seconds(rates(), 64, 64, 64, true);
    const double op = 4.0 * 64 * 64;
    assert_close(e.gpu, 50e-6 + 4 * op / 8e9 + 2.0 * 64 * 64 * 64 / 30e12);
    assert_true(e.cpu < e.gpu);
}

void test_model_ranks_extremes(void **)
{
    const OffloadEstimate big = model_seconds(rates(), 8192, 8192, 8192, true);
    assert_true(big.gpu < big.cpu);
    // A rank-1 update moves all of C twice for 2 m n flops: the CPU's.
    const OffloadEstimate rank1 = model_seconds(rates(), 4096, 4096, 1, true);
    assert_true(rank1.cpu < rank1.gpu);
}

// Without learning the model's side, always.
void test_no_learning(void **)
{
    OffloadLearner l;
    const OffloadEstimate model{2e-3, 1e-3};
    for (int i = 0; i < 100; ++i) {
        const OffloadChoice c = l.choose(1000, 1000, 1000, true, model, false, true);
        assert_int_equal(static_cast<int>(c.side), static_cast<int>(Side::Gpu));
        assert_int_equal(static_cast<int>(c.reason), static_cast<int>(Reason::Model));
        l.observe(1000, 1000, 1000, true, Side::Gpu, 10.0, model);  // ignored by choose(learn = false)
    }
}

// The model prefers the GPU; the GPU turns out slower than modelled and
// the CPU faster: after one try of each, the class stays on the CPU.
void test_learns_the_faster_side(void **)
{
    OffloadLearner l;
    const OffloadEstimate model{2e-3, 1e-3};
    OffloadChoice c = l.choose(1000, 1000, 1000, true, model, true, true);
    assert_int_equal(static_cast<int>(c.side), static_cast<int>(Side::Gpu));
    assert_int_equal(static_cast<int>(c.reason), static_cast<int>(Reason::Model));
    l.observe(1000, 1000, 1000, true, Side::Gpu, 3e-3, model);
    // The GPU took 3 ms: the CPU (2 ms modelled) is now ahead.
    c = l.choose(1000, 1000, 1000, true, model, true, true);
    assert_int_equal(static_cast<int>(c.side), static_cast<int>(Side::Cpu));
    assert_int_equal(static_cast<int>(c.reason), static_cast<int>(Reason::Learned));
    assert_close(c.estimate.gpu, 3e-3);
    l.observe(1000, 1000, 1000, true, Side::Cpu, 1.5e-3, model);
    for (int i = 0; i < 20; ++i) {
        c = l.choose(1000, 1000, 1000, true, model, true, true);
        assert_int_equal(static_cast<int>(c.side), static_cast<int>(Side::Cpu));
        assert_int_equal(static_cast<int>(c.reason), static_cast<int>(Reason::Learned));
    }
    // Neighbouring sizes (within the quarter octave) share the class and
    // scale by the model.
    c = l.choose(1050, 1000, 980, true, OffloadEstimate{4e-3, 2e-3}, true, true);
    assert_close(c.estimate.cpu, 4e-3 * 0.75);
    assert_close(c.estimate.gpu, 2e-3 * 3.0);
    // beta == 0 is another class: the model alone.
    c = l.choose(1000, 1000, 1000, false, model, true, true);
    assert_int_equal(static_cast<int>(c.side), static_cast<int>(Side::Gpu));
    assert_int_equal(static_cast<int>(c.reason), static_cast<int>(Reason::Model));
}

// The model's side is tried first; the other side only after it has been
// measured, at once where it is estimated within kExploreFactor, and not
// while it is estimated slower by more and the class has spent less than
// 1 / kExploreShare times its estimate.
void test_explores_only_close_calls(void **)
{
    OffloadLearner l;
    const OffloadEstimate far{1e-3, 1e-3 * (kExploreFactor + 0.5)};
    const int before_cheap = static_cast<int>(far.gpu / kExploreShare / 1e-3) - 1;
    for (int i = 0; i < before_cheap; ++i) {
        const OffloadChoice c = l.choose(300, 300, 300, true, far, true, true);
        assert_int_equal(static_cast<int>(c.side), static_cast<int>(Side::Cpu));
        l.observe(300, 300, 300, true, Side::Cpu, 1e-3, far);
    }
    const OffloadEstimate close{1e-3, 1.5e-3};
    OffloadChoice c = l.choose(3000, 300, 300, true, close, true, true);
    assert_int_equal(static_cast<int>(c.side), static_cast<int>(Side::Cpu));
    c = l.choose(3000, 300, 300, true, close, true, true);  // the CPU not yet measured: no try of the GPU
    assert_int_equal(static_cast<int>(c.side), static_cast<int>(Side::Cpu));
    l.observe(3000, 300, 300, true, Side::Cpu, 1e-3, close);
    c = l.choose(3000, 300, 300, true, close, true, true);
    assert_int_equal(static_cast<int>(c.side), static_cast<int>(Side::Gpu));
    assert_int_equal(static_cast<int>(c.reason), static_cast<int>(Reason::Explore));
}

// A side the model puts far behind (a CPU rate measured while other
// processes held the cores) is tried once the class has spent 1 /
// kExploreShare times its estimate; measured faster, the class moves to it.
// Where the model was right, the class stays, and the tries wait twice as
// long each time (up to kMaxDoublings): their cost falls off.
void test_far_side_tried_when_cheap(void **)
{
    const OffloadEstimate wrong{100e-3, 5e-3};  // the CPU really takes 2.5 ms
    OffloadLearner l;
    int gpu_calls = 0;
    double spent = 0.0;
    for (;;) {
        const OffloadChoice c = l.choose(4096, 4096, 32, true, wrong, true, true);
        if (c.side == Side::Cpu) {
            assert_int_equal(static_cast<int>(c.reason), static_cast<int>(Reason::Explore));
            if (spent < wrong.cpu / kExploreShare)
                fail_msg("the CPU tried after %.3f s of calls, before %.3f s", spent, wrong.cpu / kExploreShare);
            l.observe(4096, 4096, 32, true, Side::Cpu, 2.5e-3, wrong);
            break;
        }
        l.observe(4096, 4096, 32, true, Side::Gpu, 5e-3, wrong);
        spent += 5e-3;
        if (++gpu_calls > 1000)
            fail_msg("the CPU never tried in %d calls", gpu_calls);
    }
    assert_int_equal(gpu_calls, static_cast<int>(wrong.cpu / kExploreShare / 5e-3 + 0.5));
    // The class is on the CPU now, its tries counted afresh: the GPU, within
    // kExploreFactor, is re-tried kReexploreCalls calls after the try that
    // moved it, then twice as many calls after that.
    const int first = static_cast<int>(kReexploreCalls), second = first + 2 * static_cast<int>(kReexploreCalls);
    for (int call = 1; call <= second + 8; ++call) {
        const OffloadChoice c = l.choose(4096, 4096, 32, true, wrong, true, true);
        const bool want_gpu = call == first || call == second;
        if ((c.side == Side::Gpu) != want_gpu)
            fail_msg("call %d after the move: %s, want %s", call, c.side == Side::Gpu ? "GPU" : "CPU",
                     want_gpu ? "a GPU try" : "the CPU");
        if (want_gpu)
            assert_int_equal(static_cast<int>(c.reason), static_cast<int>(Reason::Explore));
        l.observe(4096, 4096, 32, true, c.side, c.side == Side::Gpu ? 5e-3 : 2.5e-3, wrong);
    }

    const OffloadEstimate right{100e-3, 5e-3};  // and the CPU does take 100 ms
    OffloadLearner r;
    int tries[64], n = 0;
    const int calls = 20000;
    for (int i = 0; i < calls; ++i) {
        const OffloadChoice c = r.choose(4096, 4096, 32, true, right, true, true);
        if (c.side == Side::Cpu) {
            if (n == 64)
                fail_msg("more than 64 tries of the CPU in %d calls", calls);
            tries[n++] = i;
            r.observe(4096, 4096, 32, true, Side::Cpu, 100e-3, right);
        } else {
            r.observe(4096, 4096, 32, true, Side::Gpu, 5e-3, right);
        }
    }
    if (n < 3)
        fail_msg("%d tries of the CPU in %d calls: want it tried again, later each time", n, calls);
    // Between try i and i + 1 the class spends (GPU calls and the try
    // itself) at least 2^min(i, kMaxDoublings) times what the first waited for.
    for (int i = 1; i < n; ++i) {
        const double between = (tries[i] - tries[i - 1] - 1) * right.gpu + right.cpu;
        const double want = std::ldexp(right.cpu / kExploreShare, std::min(i, kMaxDoublings));
        if (between < want * (1 - 1e-9))
            fail_msg("tries %d and %d at calls %d and %d: %.3f s between, want %.3f", i, i + 1, tries[i - 1],
                     tries[i], between, want);
    }
    // Without the doubling a try would come every 80 calls, costing 24% of
    // the calls' time; with it, about 1%.
    const double overhead = n * (right.cpu - right.gpu) / (calls * right.gpu);
    if (overhead > 0.03)
        fail_msg("%d tries cost %.1f%% of %d calls' time", n, 100 * overhead, calls);
}

// However many tries a class has made while the sides were close, a side
// whose estimate then falls far behind (three disturbed tries) and is in
// truth faster is tried again within 2^kMaxDoublings / kExploreShare times
// its estimate, and the class moves to it.
void test_far_wait_bounded(void **)
{
    const OffloadEstimate model{1e-3, 1.2e-3};
    OffloadLearner l;
    int disturbed = 0, call = 0;
    for (; call < 20000 || disturbed < 3; ++call) {
        const OffloadChoice c = l.choose(2000, 2000, 64, true, model, true, true);
        const bool late = call >= 20000;
        if (c.side == Side::Gpu)
            disturbed += late ? 1 : 0;
        l.observe(2000, 2000, 64, true, c.side, c.side == Side::Cpu ? 1e-3 : late ? 10e-3 : 1.2e-3, model);
        if (call > 200000)
            fail_msg("no three GPU tries after call 20000");
    }
    const double bound = std::ldexp(10e-3, kMaxDoublings) / kExploreShare;  // seconds of CPU calls
    const int most = static_cast<int>(bound / 1e-3) + static_cast<int>(kReexploreCalls << kMaxDoublings) + 2;
    for (int i = 0;; ++i) {
        const OffloadChoice c = l.choose(2000, 2000, 64, true, model, true, true);
        if (c.side == Side::Gpu) {
            l.observe(2000, 2000, 64, true, Side::Gpu, 0.3e-3, model);  // the GPU now 3x faster
            break;
        }
        l.observe(2000, 2000, 64, true, Side::Cpu, 1e-3, model);
        if (i > most)
            fail_msg("the GPU not tried again within %d calls", most);
    }
    assert_int_equal(static_cast<int>(l.choose(2000, 2000, 64, true, model, true, true).side),
                     static_cast<int>(Side::Gpu));
}

// Once both sides are measured, the slower one is tried again while it
// stays within kExploreFactor: kReexploreCalls choices after, then after
// twice as many choices each time, up to kMaxDoublings doublings.
void test_reexplores(void **)
{
    OffloadLearner l;
    const OffloadEstimate model{1e-3, 1.2e-3};
    l.observe(700, 700, 700, true, Side::Cpu, 1e-3, model);
    l.observe(700, 700, 700, true, Side::Gpu, 1.2e-3, model);
    uint32_t want[16];
    int nwant = 0;
    for (uint32_t at = 0, gap = kReexploreCalls; at + gap <= 8192; gap = std::min(2 * gap, kReexploreCalls << kMaxDoublings))
        want[nwant++] = at += gap;
    int n = 0;
    for (uint32_t call = 1; call <= 8192; ++call)
        if (l.choose(700, 700, 700, true, model, true, true).side == Side::Gpu) {
            if (n >= nwant || call != want[n])
                fail_msg("try %d at call %u, want it at %u", n + 1, call, n < nwant ? want[n] : 0u);
            ++n;
        }
    assert_int_equal(n, nwant);
}

// The least of the last three measurements: two disturbed calls in a row
// do not move the estimate, three slow ones do.
void test_least_of_three(void **)
{
    OffloadLearner l;
    const OffloadEstimate model{1e-3, 1e-3};
    const auto gpu = [&] { return l.choose(500, 500, 500, true, model, true, true).estimate.gpu; };
    l.observe(500, 500, 500, true, Side::Gpu, 2e-3, model);
    assert_close(gpu(), 2e-3);
    l.observe(500, 500, 500, true, Side::Gpu, 8e-3, model);
    assert_close(gpu(), 2e-3);
    l.observe(500, 500, 500, true, Side::Gpu, 9e-3, model);
    assert_close(gpu(), 2e-3);
    l.observe(500, 500, 500, true, Side::Gpu, 1e-3, model);  // replaces the 2 ms one: 1, 8, 9
    assert_close(gpu(), 1e-3);
    for (int i = 0; i < 3; ++i)
        l.observe(500, 500, 500, true, Side::Gpu, 5e-3, model);
    assert_close(gpu(), 5e-3);
}

// The GPU is not tried before a GPU call has run in the process; the CPU
// always may be.
void test_gpu_tried_only_when_warm(void **)
{
    OffloadLearner l;
    const OffloadEstimate model{1e-3, 1.5e-3};
    l.observe(900, 900, 900, true, Side::Cpu, 1e-3, model);
    for (int i = 0; i < 10; ++i)
        assert_int_equal(static_cast<int>(l.choose(900, 900, 900, true, model, true, false).side),
                         static_cast<int>(Side::Cpu));
    assert_int_equal(static_cast<int>(l.choose(900, 900, 900, true, model, true, true).side),
                     static_cast<int>(Side::Gpu));
    const OffloadEstimate gpu_first{1.5e-3, 1e-3};
    l.observe(90, 90, 9000, true, Side::Gpu, 1e-3, gpu_first);
    const OffloadChoice c = l.choose(90, 90, 9000, true, gpu_first, true, false);
    assert_int_equal(static_cast<int>(c.side), static_cast<int>(Side::Cpu));
    assert_int_equal(static_cast<int>(c.reason), static_cast<int>(Reason::Explore));
}

// Before any GPU call in the process, the GPU is taken only once the time
// it would have saved reaches kGpuStartSeconds: a call that saves that much
// at once starts it; shorter ones run on the CPU (reason Cold) and add their
// saving up once their class's CPU time is measured; a class held on the
// GPU by a margin but estimated slower there subtracts nothing; with the
// GPU running, the model's side as usual.
void test_gpu_started_when_worth_it(void **)
{
    const OffloadEstimate big{kGpuStartSeconds + 0.2, 0.1};  // saves more than the start alone
    OffloadLearner a;
    OffloadChoice c = a.choose(8192, 8192, 8192, false, big, true, false);
    assert_int_equal(static_cast<int>(c.side), static_cast<int>(Side::Gpu));

    const OffloadEstimate small{4e-3, 1e-3};  // saves 3 ms a call
    OffloadLearner l;
    // A class on the GPU by the switch margin, its CPU 5% faster: kept on
    // the CPU while cold, its negative saving not counted.
    l.observe(700, 700, 700, true, Side::Gpu, 1e-3, small);
    assert_int_equal(static_cast<int>(l.choose(700, 700, 700, true, small, true, true).side),
                     static_cast<int>(Side::Gpu));  // the class held on the GPU
    for (int i = 0; i < 3; ++i)
        l.observe(700, 700, 700, true, Side::Cpu, 0.91e-3, small);
    for (int i = 0; i < static_cast<int>(kReexploreCalls) - 2; ++i) {  // before the CPU's next try
        c = l.choose(700, 700, 700, true, small, true, false);
        if (c.side == Side::Gpu || c.reason != Reason::Cold)
            fail_msg("call %d of the held class: %s, reason %s", i, c.side == Side::Gpu ? "GPU" : "CPU",
                     reason_name(c.reason));
    }
    // Its first call is not counted (its CPU not measured yet), then 3 ms
    // each, until this call's 3 ms would reach the start.
    const int want = 1 + static_cast<int>(std::ceil((kGpuStartSeconds - 3e-3) / 3e-3));
    int cold = 0;
    for (;;) {
        c = l.choose(2048, 2048, 32, true, small, true, false);
        if (c.side == Side::Gpu)
            break;
        assert_int_equal(static_cast<int>(c.reason), static_cast<int>(Reason::Cold));
        l.observe(2048, 2048, 32, true, Side::Cpu, 4e-3, small);
        if (++cold > 10 * want)
            fail_msg("the GPU never started after %d calls", cold);
    }
    if (cold != want)
        fail_msg("the GPU started after %d calls kept on the CPU, want %d", cold, want);
    c = l.choose(2048, 2048, 32, true, small, true, true);  // now running
    assert_int_equal(static_cast<int>(c.side), static_cast<int>(Side::Gpu));

    // Savings of classes whose CPU time is not measured are not counted.
    OffloadLearner u;
    for (int i = 0; i < 1000; ++i) {
        c = u.choose(100 + i, 3000, 3000, true, small, true, false);  // a new class each time
        (void)c;
    }
    c = u.choose(3000, 3000, 3000, true, small, true, false);
    assert_int_equal(static_cast<int>(c.reason), static_cast<int>(Reason::Cold));

    // The model alone (TGEMM_OFFLOAD_LEARN=0) takes its side whatever ran before.
    OffloadLearner m;
    assert_int_equal(static_cast<int>(m.choose(2048, 2048, 32, true, small, false, false).side),
                     static_cast<int>(Side::Gpu));
}

// A class running on the CPU stays there while the GPU's measured time is
// within kSwitchMargin of the CPU's, and moves once it is clearly faster.
void test_close_calls_keep_their_side(void **)
{
    OffloadLearner l;
    const OffloadEstimate model{1e-3, 1.5e-3};
    const auto side = [&] { return static_cast<int>(l.choose(192, 192, 192, true, model, true, true).side); };
    const int cpu = static_cast<int>(Side::Cpu), gpu = static_cast<int>(Side::Gpu);
    assert_int_equal(side(), cpu);
    for (int i = 0; i < 3; ++i) {
        l.observe(192, 192, 192, true, Side::Cpu, 1e-3, model);
        l.observe(192, 192, 192, true, Side::Gpu, 0.95e-3, model);  // 5% faster: not enough
    }
    for (int i = 0; i < 20; ++i)  // fewer than kReexploreCalls: no try of the GPU either
        if (side() == gpu)
            fail_msg("call %d moved to the GPU on a 5%% difference", i);
    for (int i = 0; i < 3; ++i)
        l.observe(192, 192, 192, true, Side::Gpu, 0.8e-3, model);  // 20% faster: moves
    assert_int_equal(side(), gpu);
    for (int i = 0; i < 3; ++i)
        l.observe(192, 192, 192, true, Side::Cpu, 0.75e-3, model);  // the CPU 6% faster than the GPU: stays
    assert_int_equal(side(), gpu);
}

}  // namespace

int main()
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_one_task),       cmocka_unit_test(test_model_pipelined),
        cmocka_unit_test(test_model_small_operands), cmocka_unit_test(test_model_ranks_extremes),
        cmocka_unit_test(test_no_learning),          cmocka_unit_test(test_learns_the_faster_side),
        cmocka_unit_test(test_explores_only_close_calls), cmocka_unit_test(test_reexplores),
        cmocka_unit_test(test_least_of_three), cmocka_unit_test(test_gpu_tried_only_when_warm),
        cmocka_unit_test(test_close_calls_keep_their_side), cmocka_unit_test(test_far_side_tried_when_cheap), cmocka_unit_test(test_far_wait_bounded),
        cmocka_unit_test(test_gpu_started_when_worth_it),
    };
    return cmocka_run_group_tests_name("tgemm_offload_model", tests, nullptr, nullptr);
}
