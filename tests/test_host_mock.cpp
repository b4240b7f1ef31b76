// The host-operand executor (src/driver/host_executor.hpp), and execute()
// that leads to it, on the mock CUDA runtime of tests/mock_cuda.hpp, no GPU
// needed (make test-host-mock). A missing event or host wait shows up as a
// wrong result, a wait that can never be met as a "deadlock" abort, and
// injected failures check what each leaves in C.
//
// Checked: exact results against a CPU reference for random shapes,
// transposes, operand kinds, leading dimensions, alpha/beta and memory
// budgets; padding of C untouched, A and B unchanged; C untouched when the
// budget is too small; a copy split over several staging buffers; per-column
// copies where a pitch is too large; allocation failures that make the plan
// shrink; a kernel launch failing mid-call; work queued on the caller's
// stream first; many threads at once; tgemm_release_resources() freeing
// everything; plans with the small preferred sizes of tests, so that small
// products run lead groups (tiles interleaved chunk by chunk) and many C
// slots; no timing events made unless TGEMM_HOST_TRACE is set.
//
// Run with an argument, one scenario per process (settings are read once):
//   trace      TGEMM_HOST_TRACE=FILE (a new file): calls of several kinds,
//              then the file is read back and checked row by row
//   bad-trace  TGEMM_HOST_TRACE names a file that cannot be created: calls
//              fail with TGEMM_ERROR_INVALID_SETTING and C untouched
//   faults     failures at every call of every kind a call makes, one-off
//              and sticky, with beta == 0 and != 0, for pageable, pinned,
//              managed and device C, lead groups and out-of-core plans:
//              what each leaves in C is checked element by element against
//              the contract (run_host_operands), then, for the BLAS
//              contract, against the exact result once the parts left are
//              computed on the CPU; the same through execute(), also on
//              operands none of which is in host memory; a broken pipeline
//              is replaced; threads under a context that breaks
//   spread     TGEMM_DEVICES set (0,1,2; 0,0: two workers on one device;
//              auto), three mock devices, blocks of 32 and more
//              (set_spread_min_side) with small plans: through execute(),
//              random shapes, transposes, padding, alpha/beta (beta 0 on a
//              NaN C) on pageable and pinned operands exact, each block run
//              once, by the listed workers each on its device (a gate in
//              the mock makes every worker take one), or on the home device
//              where the call is not spread (auto: these small products
//              never are); blocks out of core under per-device caps (the
//              budgets read while sibling workers allocate), one device too
//              small for any plan; a failure on one device
//              (each kind of call, one-off and sticky, beta 0 and not,
//              pageable and pinned C, native and with `left`): the others
//              finish C exactly where its parts can be left to them, else
//              C keeps the single-GPU contract; every device breaking: the
//              call fails, `left` exact; threads at once, and while a
//              device breaks; the caller's stream waited for; device
//              pointers run on the device that owns them, operands of two
//              devices fail. With a listed device that does not exist
//              (0,5): every call fails with INVALID_DEVICE, C untouched.
//              With TGEMM_SPREAD_GRID: random shapes and threads only, on
//              the grid it forces (cut down where C has less room).

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <cuda_runtime_api.h>

#include "core/settings.hpp"
#include "core/status.hpp"
#include "driver/execute.hpp"
#include "driver/host_pipeline.hpp"
#include "driver/host_trace.hpp"
#include "driver/spread.hpp"
#include "driver/spread_plan.hpp"
#include "mock_cuda.hpp"
#include "runtime/host_copy.hpp"

// After tgemm's headers: cmocka defines a macro named fail. cmocka.h
// declares only part of its interface extern "C".
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}

using mock::mu;

// ---------------------------------------------------------------- problems

namespace {

using tgemm::MemKind;

struct Problem {
    int64_t m = 1, n = 1, k = 1;
    bool ta = false, tb = false;
    float alpha = 1.0f, beta = 0.0f;
    MemKind ka = MemKind::Pageable, kb = MemKind::Pageable, kc = MemKind::Pageable;
    int64_t pad_a = 0, pad_b = 0, pad_c = 0;
};

float bits(uint32_t u)
{
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

const float kPad = bits(0x7FC0DEADu);  // padding, never to be written
const float kUnread = bits(0x7FC0C0DEu);  // C when beta == 0, never to be read

struct Data {
    int64_t lda, ldb, ldc;
    std::vector<float> A, B, C, A0, B0, C0;
};

Data make_data(const Problem &p, std::mt19937_64 &rng)
{
    Data d;
    const int64_t ra = p.ta ? p.k : p.m, ca = p.ta ? p.m : p.k;
    const int64_t rb = p.tb ? p.n : p.k, cb = p.tb ? p.k : p.n;
    d.lda = std::max<int64_t>(1, ra) + p.pad_a;
    d.ldb = std::max<int64_t>(1, rb) + p.pad_b;
    d.ldc = std::max<int64_t>(1, p.m) + p.pad_c;
    const auto fill = [&rng](std::vector<float> &x, int64_t rows, int64_t cols, int64_t ld, bool unread) {
        x.assign(static_cast<size_t>(ld * std::max<int64_t>(1, cols)), kPad);
        for (int64_t c = 0; c < cols; ++c)
            for (int64_t r = 0; r < rows; ++r)
                x[static_cast<size_t>(r + c * ld)] = unread ? kUnread : static_cast<float>(static_cast<int>(rng() % 7) - 3);
    };
    fill(d.A, ra, ca, d.lda, false);
    fill(d.B, rb, cb, d.ldb, false);
    fill(d.C, p.m, p.n, d.ldc, p.beta == 0.0f);
    d.A0 = d.A;
    d.B0 = d.B;
    d.C0 = d.C;
    return d;
}

tgemm::GemmParams params(const Problem &pr, Data &d)
{
    tgemm::GemmParams p = {};
    p.trans_a = pr.ta;
    p.trans_b = pr.tb;
    p.m = pr.m;
    p.n = pr.n;
    p.k = pr.k;
    p.alpha = pr.alpha;
    p.beta = pr.beta;
    p.a = d.A.data();
    p.lda = d.lda;
    p.b = d.B.data();
    p.ldb = d.ldb;
    p.c = d.C.data();
    p.ldc = d.ldc;
    return p;
}

// Runs the product on host operands; with `left`, as the BLAS layer does
// (it finishes a failed call itself).
tgemm_status run(const Problem &pr, Data &d, cudaStream_t stream, std::vector<tgemm::Rect> *left = nullptr)
{
    const bool reads_ab = pr.k > 0 && pr.alpha != 0.0f;
    tgemm::DeviceInfo dev;
    dev.id = 0;
    return tgemm::run_host_operands(params(pr, d), reads_ab ? pr.ka : MemKind::Unused,
                                    reads_ab ? pr.kb : MemKind::Unused, pr.kc, dev, stream, tgemm::Math::Strict, left);
}

// "" if C (and A, B) are right, else what is wrong. Returns rather than
// fails, so that threads can use it.
std::string verify(const Problem &p, const Data &d)
{
    char msg[256];
    if (std::memcmp(d.A.data(), d.A0.data(), d.A.size() * 4) != 0 || std::memcmp(d.B.data(), d.B0.data(), d.B.size() * 4) != 0)
        return "A or B was modified";
    const bool reads_ab = p.k > 0 && p.alpha != 0.0f;
    for (int64_t j = 0; j < p.n; ++j)
        for (int64_t i = 0; i < d.ldc; ++i) {
            const float got = d.C[static_cast<size_t>(i + j * d.ldc)];
            if (i >= p.m) {
                if (std::memcmp(&got, &kPad, 4) == 0)
                    continue;
                std::snprintf(msg, sizeof msg, "padding C(%lld, %lld) was written", (long long)i, (long long)j);
                return msg;
            }
            double sum = 0;
            for (int64_t q = 0; reads_ab && q < p.k; ++q)
                sum += static_cast<double>(p.ta ? d.A[static_cast<size_t>(q + i * d.lda)] : d.A[static_cast<size_t>(i + q * d.lda)]) *
                       (p.tb ? d.B[static_cast<size_t>(j + q * d.ldb)] : d.B[static_cast<size_t>(q + j * d.ldb)]);
            const double c0 = p.beta == 0.0f ? 0.0 : p.beta * static_cast<double>(d.C0[static_cast<size_t>(i + j * d.ldc)]);
            const double want = (reads_ab ? p.alpha * sum : 0.0) + c0;
            if (static_cast<double>(got) != want) {
                std::snprintf(msg, sizeof msg, "C(%lld, %lld) = %g, want %g (%lldx%lldx%lld %c%c, alpha %g, beta %g)",
                              (long long)i, (long long)j, static_cast<double>(got), want, (long long)p.m,
                              (long long)p.n, (long long)p.k, p.ta ? 'T' : 'N', p.tb ? 'T' : 'N',
                              static_cast<double>(p.alpha), static_cast<double>(p.beta));
                return msg;
            }
        }
    return "";
}

void check(const Problem &p, const Data &d, const char *what)
{
    const std::string err = verify(p, d);
    if (!err.empty())
        fail_msg("%s: %s", what, err.c_str());
}

// The budget of the next calls: what the mock reports free, less the path's 256 MiB reserve.
void set_budget(uint64_t bytes)
{
    std::lock_guard<std::mutex> lk(mu);
    mock::device_free = (uint64_t{256} << 20) + bytes;
}

// A random problem, sizes from 1 to max_dim. With host_only, the operands
// are pageable or pinned host memory. Without `signs`, alpha and beta are
// >= 0: no result is then -0, which expected() (0 + beta * C) and the
// kernels' sums would tell apart from 0 (check_outcome compares bits).
Problem random_problem(std::mt19937_64 &rng, int64_t max_dim, bool host_only = false, bool signs = true)
{
    static const MemKind kinds[] = {MemKind::Pageable, MemKind::Pinned, MemKind::Device, MemKind::Managed};
    static const float alphas[] = {1.0f, -0.5f, 2.0f, 1.0f, 0.0f};
    static const float betas[] = {0.0f, 1.0f, 0.5f, -1.0f};
    const uint64_t n_kinds = host_only ? 2 : 4;
    Problem p;
    p.m = 1 + static_cast<int64_t>(rng() % max_dim);
    p.n = 1 + static_cast<int64_t>(rng() % max_dim);
    p.k = rng() % 12 == 0 ? 0 : 1 + static_cast<int64_t>(rng() % max_dim);
    p.ta = rng() & 1;
    p.tb = rng() & 1;
    p.alpha = alphas[rng() % 5];
    p.beta = betas[rng() % 4];
    if (!signs) {
        p.alpha = std::fabs(p.alpha);
        p.beta = std::fabs(p.beta);
    }
    p.ka = kinds[rng() % n_kinds];
    p.kb = kinds[rng() % n_kinds];
    p.kc = kinds[rng() % n_kinds];
    const bool reads_ab = p.k > 0 && p.alpha != 0.0f;
    if (!tgemm::is_host(p.kc) && !(reads_ab && (tgemm::is_host(p.ka) || tgemm::is_host(p.kb))))
        p.kc = rng() & 1 ? MemKind::Pageable : MemKind::Pinned;
    p.pad_a = static_cast<int64_t>(rng() % 3);
    p.pad_b = static_cast<int64_t>(rng() % 3);
    p.pad_c = static_cast<int64_t>(rng() % 3);
    return p;
}

// A random problem under the current budget: "" if it ran right or was
// refused with OUT_OF_MEMORY and C untouched, else what is wrong.
std::string random_call(std::mt19937_64 &rng, int64_t max_dim, cudaStream_t stream, bool *ran)
{
    const Problem p = random_problem(rng, max_dim);
    Data d = make_data(p, rng);
    const tgemm_status st = run(p, d, stream);
    *ran = st == TGEMM_SUCCESS;
    if (st == TGEMM_ERROR_OUT_OF_MEMORY)
        return std::memcmp(d.C.data(), d.C0.data(), d.C.size() * 4) == 0 ? "" : "out of memory, yet C was written";
    if (st != TGEMM_SUCCESS)
        return "status " + std::to_string(static_cast<int>(st)) + ": " + tgemm_last_error_detail();
    return verify(p, d);
}

// The same, failing the test on anything wrong; returns whether it ran.
bool random_call(std::mt19937_64 &rng, int64_t max_dim, cudaStream_t stream)
{
    bool ran = false;
    const std::string err = random_call(rng, max_dim, stream, &ran);
    if (!err.empty())
        fail_msg("%s", err.c_str());
    return ran;
}

cudaStream_t new_stream()
{
    cudaStream_t s = nullptr;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    return s;
}

// Whether the launches since the last reset took some tile's chunks apart
// (a lead group): C of X, then of Y, then of X again.
bool interleaved_launches()
{
    std::lock_guard<std::mutex> lk(mu);
    std::set<const float *> closed;
    const float *current = nullptr;
    bool seen = false;
    for (const float *c : mock::launched_c) {
        if (c == current)
            continue;
        if (closed.count(c) != 0)
            seen = true;
        if (current != nullptr)
            closed.insert(current);
        current = c;
    }
    mock::launched_c.clear();
    return seen;
}

// ---------------------------------------------------------------- tests

void test_random_calls(void **)
{
    std::mt19937_64 rng(2026);
    const cudaStream_t stream = new_stream();
    int ran = 0, refused = 0;
    for (int i = 0; i < 600; ++i) {
        // Budgets from 1 KiB (often too small) to 4 MiB, log-uniform.
        set_budget(static_cast<uint64_t>(std::exp(std::uniform_real_distribution<double>(std::log(1024.0), std::log(4194304.0))(rng))));
        (random_call(rng, 160, i % 3 == 0 ? nullptr : stream) ? ran : refused) += 1;
    }
    cudaStreamDestroy(stream);
    set_budget(uint64_t{80} << 30);
    if (mock::contract_violations != 0)
        fail_msg("%d kernel launches broke run_device_operands' contract", mock::contract_violations);
    std::printf("    %d calls ran, %d refused for lack of memory\n", ran, refused);
    assert_true(ran > 400 && refused > 10);
}

// Preferred tiles and chunks of 32 to 96 instead of 2048: small products
// take the schedules of large ones, lead groups included.
void test_random_small_plans(void **)
{
    std::mt19937_64 rng(2027);
    const cudaStream_t stream = new_stream();
    int ran = 0, led = 0;
    interleaved_launches();
    for (int i = 0; i < 400; ++i) {
        tgemm::set_host_plan_sizes(32 * (1 + static_cast<int64_t>(rng() % 3)),
                                   32 * (1 + static_cast<int64_t>(rng() % 3)), 32);
        // From 16 KiB to 4 MiB: from tiny tiles to all of A and B resident.
        set_budget(static_cast<uint64_t>(std::exp(std::uniform_real_distribution<double>(std::log(16384.0), std::log(4194304.0))(rng))));
        ran += random_call(rng, 200, i % 2 ? nullptr : stream);
        led += interleaved_launches();
    }
    tgemm::set_host_plan_sizes(0, 0, 0);
    cudaStreamDestroy(stream);
    set_budget(uint64_t{80} << 30);
    std::printf("    %d calls ran, %d of them with a lead group\n", ran, led);
    assert_true(ran > 300 && led > 50);
}

// A C tile of 100 x 41952 is more than one 16 MiB staging buffer holds.
void test_pieces(void **)
{
    std::mt19937_64 rng(1);
    Problem p;
    p.m = 100;
    p.n = 100000;
    p.k = 3;
    p.beta = 0.5f;
    p.pad_c = 3;
    Data d = make_data(p, rng);
    assert_int_equal(run(p, d, nullptr), TGEMM_SUCCESS);
    check(p, d, "pieces");
}

// Pitches beyond the device's limit: one copy per column.
void test_small_max_pitch(void **)
{
    {
        std::lock_guard<std::mutex> lk(mu);
        mock::max_pitch = 256;
    }
    tgemm::release_host_resources();  // pipelines read the pitch when they are made
    std::mt19937_64 rng(3);
    set_budget(uint64_t{1} << 20);
    int ran = 0;
    for (int i = 0; i < 60; ++i)
        ran += random_call(rng, 150, nullptr);
    assert_true(ran > 40);
    {
        std::lock_guard<std::mutex> lk(mu);
        mock::max_pitch = 1 << 30;
    }
    tgemm::release_host_resources();
    set_budget(uint64_t{80} << 30);
}

// cudaMemGetInfo promises plenty, allocations above 64 KiB fail: the call
// plans again with half the size until it fits.
void test_allocation_retry(void **)
{
    {
        std::lock_guard<std::mutex> lk(mu);
        mock::alloc_limit = 64 << 10;
    }
    std::mt19937_64 rng(4);
    Problem p;
    p.m = 300;
    p.n = 200;
    p.k = 250;
    p.beta = 1.0f;
    Data d = make_data(p, rng);
    assert_int_equal(run(p, d, nullptr), TGEMM_SUCCESS);
    check(p, d, "allocation retry");
    std::lock_guard<std::mutex> lk(mu);
    mock::alloc_limit = UINT64_MAX;
}

// A launch fails in the middle: an error, no hang, and the pipeline is
// clean for the next call.
void test_launch_failure(void **)
{
    std::mt19937_64 rng(5);
    set_budget(64 << 10);
    for (int kind = 0; kind < 2; ++kind) {
        Problem p;
        p.m = 200;
        p.n = 150;
        p.k = 170;
        p.beta = 0.5f;
        p.kc = kind ? MemKind::Pinned : MemKind::Pageable;
        Data d = make_data(p, rng);
        mock::arm(mock::Fault{mock::Launch, 5, false});
        assert_int_equal(run(p, d, nullptr), TGEMM_ERROR_CUDA);
        mock::arm(mock::Fault());
        assert_non_null(std::strstr(tgemm_last_error_detail(), "mock launch failure"));
        Data again = make_data(p, rng);
        assert_int_equal(run(p, again, nullptr), TGEMM_SUCCESS);
        check(p, again, "after a failure");
    }
    set_budget(uint64_t{80} << 30);
}

// A and B turn NaN, and an operation queued on `stream` (not run yet)
// writes their contents back, as work the caller queued before a call does.
void write_operands_on(cudaStream_t stream, Data &d)
{
    const std::vector<float> a = d.A, b = d.B;
    std::fill(d.A.begin(), d.A.end(), NAN);
    std::fill(d.B.begin(), d.B.end(), NAN);
    std::lock_guard<std::mutex> lk(mu);
    float *pa = d.A.data(), *pb = d.B.data();
    mock::Op op;
    op.fn = [pa, pb, a, b] {
        std::memcpy(pa, a.data(), a.size() * 4);
        std::memcpy(pb, b.data(), b.size() * 4);
    };
    mock::stream_of(stream)->queue.push_back(std::move(op));
    ++mock::stream_of(stream)->enqueued;
}

// Work queued on the caller's stream before the call writes A (device
// memory) and B (pageable, as a host function would): the call must see it.
void test_caller_stream(void **)
{
    std::mt19937_64 rng(6);
    const cudaStream_t stream = new_stream();
    for (int budget = 0; budget < 2; ++budget) {
        set_budget(budget ? (uint64_t{80} << 30) : (uint64_t{32} << 10));
        Problem p;
        p.m = 130;
        p.n = 90;
        p.k = 110;
        p.ka = MemKind::Device;
        p.kb = MemKind::Pageable;
        p.kc = MemKind::Pinned;
        Data d = make_data(p, rng);
        write_operands_on(stream, d);
        assert_int_equal(run(p, d, stream), TGEMM_SUCCESS);
        check(p, d, "caller's stream");
    }
    cudaStreamDestroy(stream);
    set_budget(uint64_t{80} << 30);
}

// Threads at once, more than there are pipelines.
void test_threads(void **)
{
    set_budget(uint64_t{2} << 20);
    std::vector<std::thread> th;
    std::vector<std::string> errors(10);
    for (int t = 0; t < 10; ++t)
        th.emplace_back([t, &errors] {
            std::mt19937_64 rng(100 + t);
            for (int i = 0; i < 8 && errors[t].empty(); ++i) {
                bool ran = false;
                errors[t] = random_call(rng, 120, nullptr, &ran);
            }
        });
    for (std::thread &x : th)
        x.join();
    set_budget(uint64_t{80} << 30);
    for (int t = 0; t < 10; ++t)
        if (!errors[t].empty())
            fail_msg("thread %d: %s", t, errors[t].c_str());
}

// Everything the path keeps goes back.
void test_release(void **)
{
    std::mt19937_64 rng(8);
    for (int i = 0; i < 5; ++i)
        random_call(rng, 100, nullptr);
    assert_int_equal(tgemm::release_host_resources(), TGEMM_SUCCESS);
    mock::drain_all();
    {
        std::lock_guard<std::mutex> lk(mu);
        assert_int_equal(mock::streams.size(), 0);
        assert_int_equal(mock::events.size(), 0);
        assert_int_equal(mock::host_allocs.size(), 0);
        assert_int_equal(mock::device_allocs.size(), 0);
    }
    for (int i = 0; i < 5; ++i)
        random_call(rng, 100, nullptr);
    assert_int_equal(tgemm::release_host_resources(), TGEMM_SUCCESS);
    assert_int_equal(tgemm::release_host_resources(), TGEMM_SUCCESS);
}

// Without TGEMM_HOST_TRACE the path makes no timing events (and writes no
// rows): the trace costs nothing when unset.
void test_no_trace_cost(void **)
{
    std::mt19937_64 rng(9);
    for (int i = 0; i < 20; ++i)
        random_call(rng, 100, nullptr);
    std::lock_guard<std::mutex> lk(mu);
    assert_int_equal(mock::timing_events, 0);
}

// ---------------------------------------------------------------- failures in the middle of a call

// What C must hold, m x n: small integers in, so every order of the sums
// gives these exactly.
std::vector<float> expected(const Problem &p, const Data &d)
{
    std::vector<float> want(static_cast<size_t>(p.m * p.n));
    const bool reads_ab = p.k > 0 && p.alpha != 0.0f;
    for (int64_t j = 0; j < p.n; ++j)
        for (int64_t i = 0; i < p.m; ++i) {
            double sum = 0;
            for (int64_t q = 0; reads_ab && q < p.k; ++q)
                sum += static_cast<double>(p.ta ? d.A0[static_cast<size_t>(q + i * d.lda)]
                                                : d.A0[static_cast<size_t>(i + q * d.lda)]) *
                       (p.tb ? d.B0[static_cast<size_t>(j + q * d.ldb)] : d.B0[static_cast<size_t>(q + j * d.ldb)]);
            const double c0 =
                p.beta == 0.0f ? 0.0 : p.beta * static_cast<double>(d.C0[static_cast<size_t>(i + j * d.ldc)]);
            want[static_cast<size_t>(i + j * p.m)] = static_cast<float>((reads_ab ? p.alpha * sum : 0.0) + c0);
        }
    return want;
}

// The CPU's share after a failure, as the BLAS fallback computes it: q is
// a part of the problem (part_of), run as reference SGEMM runs it (C not
// read when beta == 0; A and B not read when alpha == 0 or k == 0).
void cpu_gemm(const tgemm::GemmParams &q)
{
    const bool reads_ab = q.k > 0 && q.alpha != 0.0f;
    for (int64_t j = 0; j < q.n; ++j)
        for (int64_t i = 0; i < q.m; ++i) {
            float acc = 0.0f;
            for (int64_t l = 0; reads_ab && l < q.k; ++l)
                acc += (q.trans_a ? q.a[l + i * q.lda] : q.a[i + l * q.lda]) *
                       (q.trans_b ? q.b[j + l * q.ldb] : q.b[l + j * q.ldb]);
            float &c = q.c[i + j * q.ldc];
            c = (reads_ab ? q.alpha * acc : 0.0f) + (q.beta == 0.0f ? 0.0f : q.beta * c);
        }
}

bool same(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// One problem of the failure tests.
struct FaultCase {
    const char *name;
    Problem p;
    int64_t tile = 32, depth = 32;          // preferred plan sizes (0: the defaults)
    uint64_t budget = uint64_t{80} << 30;   // device memory
    bool recovers = true;                   // the caller finishes a failed call (BLAS): `left` asked for
    // Failures in every kind of call, warm and cold; else only in the calls
    // that move pieces of C (the rest is the same as in the other cases),
    // with no clean call after each (how many calls of those kinds a call
    // makes does not depend on the pipeline it finds).
    bool every_kind = true;
    // Through execute(), blocking, as tgemm_sgemm() and the BLAS layer call
    // it (it finds the operands' kinds and picks the path); else straight
    // to run_host_operands().
    bool execute = false;
};

// What the call left, status st: "" if it keeps its contract, else what is
// wrong. With `left` (the BLAS contract): the parts in it are disjoint, and
// hold C's original contents unless beta == 0; everything else of C holds
// its result; then computing the parts on the CPU gives the exact result.
// Without (the native API's): each element of host C holds its result or
// its original value; device or managed C may hold partial sums. Always:
// padding of C, A and B untouched. Column by column with memcmp, since
// some of these C have millions of elements.
std::string check_outcome(const Problem &p, Data &d, tgemm_status st, const std::vector<tgemm::Rect> *left,
                          const std::vector<float> &want)
{
    char msg[320];
    if (std::memcmp(d.A.data(), d.A0.data(), d.A.size() * 4) != 0 ||
        std::memcmp(d.B.data(), d.B0.data(), d.B.size() * 4) != 0)
        return "A or B was modified";
    for (int64_t j = 0; j < p.n; ++j)
        for (int64_t i = p.m; i < d.ldc; ++i)
            if (!same(d.C[static_cast<size_t>(i + j * d.ldc)], kPad))
                return "padding of C was written";
    if (st == TGEMM_SUCCESS && left != nullptr && !left->empty())
        return "success with parts of C left";
    const size_t col = static_cast<size_t>(p.m) * sizeof(float);
    const auto c_at = [&](int64_t i, int64_t j) { return d.C.data() + i + j * d.ldc; };
    // The first element of column j where C differs from `model` (m x n).
    const auto differs = [&](const std::vector<float> &model, int64_t *row, int64_t *column) {
        for (int64_t j = 0; j < p.n; ++j)
            if (std::memcmp(c_at(0, j), model.data() + j * p.m, col) != 0) {
                int64_t i = 0;
                while (same(*c_at(i, j), model[static_cast<size_t>(i + j * p.m)]))
                    ++i;
                *row = i;
                *column = j;
                return true;
            }
        return false;
    };
    int64_t i = 0, j = 0;
    if (left == nullptr) {
        if (!differs(want, &i, &j))
            return "";
        if (st == TGEMM_SUCCESS) {
            std::snprintf(msg, sizeof msg, "C(%lld, %lld) = %g, want %g", (long long)i, (long long)j,
                          (double)*c_at(i, j), (double)want[static_cast<size_t>(i + j * p.m)]);
            return msg;
        }
        if (p.kc == MemKind::Device || p.kc == MemKind::Managed)
            return "";
        for (j = 0; j < p.n; ++j)
            for (i = 0; i < p.m; ++i)
                if (!same(*c_at(i, j), want[static_cast<size_t>(i + j * p.m)]) &&
                    !same(*c_at(i, j), d.C0[static_cast<size_t>(i + j * d.ldc)])) {
                    std::snprintf(msg, sizeof msg, "C(%lld, %lld) = %g: neither its result %g nor its original %g",
                                  (long long)i, (long long)j, (double)*c_at(i, j),
                                  (double)want[static_cast<size_t>(i + j * p.m)],
                                  (double)d.C0[static_cast<size_t>(i + j * d.ldc)]);
                    return msg;
                }
        return "";
    }
    // What C must hold now: the result, except in the parts left, which
    // hold the original contents (anything, when beta == 0).
    std::vector<float> model = want;
    std::vector<char> in_left(static_cast<size_t>(p.m * p.n), 0);
    for (const tgemm::Rect &r : *left) {
        if (r.rows < 1 || r.cols < 1 || r.row < 0 || r.col < 0 || r.row + r.rows > p.m || r.col + r.cols > p.n) {
            std::snprintf(msg, sizeof msg, "part %lldx%lld at (%lld, %lld) outside C", (long long)r.rows,
                          (long long)r.cols, (long long)r.row, (long long)r.col);
            return msg;
        }
        for (int64_t c = r.col; c < r.col + r.cols; ++c) {
            char *mark = in_left.data() + r.row + c * p.m;
            if (std::memchr(mark, 1, static_cast<size_t>(r.rows)) != nullptr)
                return "parts of C left overlap";
            std::memset(mark, 1, static_cast<size_t>(r.rows));
            std::memcpy(model.data() + r.row + c * p.m,
                        p.beta != 0.0f ? d.C0.data() + r.row + c * d.ldc : c_at(r.row, c),
                        static_cast<size_t>(r.rows) * sizeof(float));
        }
    }
    if (differs(model, &i, &j)) {
        const bool pending = in_left[static_cast<size_t>(i + j * p.m)] != 0;
        std::snprintf(msg, sizeof msg, "C(%lld, %lld) = %g, %s, should hold %g", (long long)i, (long long)j,
                      (double)*c_at(i, j), pending ? "left to the caller" : "written back",
                      (double)model[static_cast<size_t>(i + j * p.m)]);
        return msg;
    }
    const tgemm::GemmParams whole = params(p, d);
    for (const tgemm::Rect &r : *left)
        cpu_gemm(tgemm::part_of(whole, r));
    if (differs(want, &i, &j)) {
        std::snprintf(msg, sizeof msg, "after the CPU's share, C(%lld, %lld) = %g, want %g", (long long)i,
                      (long long)j, (double)*c_at(i, j), (double)want[static_cast<size_t>(i + j * p.m)]);
        return msg;
    }
    return "";
}

// The product through execute(), on the per-thread stream, waiting, with the
// operands' kinds known to classify_pointer for the call.
tgemm_status run_execute(const Problem &pr, Data &d, std::vector<tgemm::Rect> *left)
{
    {
        std::lock_guard<std::mutex> lk(mu);
        mock::kinds = {{d.A.data(), d.A.size() * 4, pr.ka},
                       {d.B.data(), d.B.size() * 4, pr.kb},
                       {d.C.data(), d.C.size() * 4, pr.kc}};
    }
    const tgemm_status st = tgemm::execute(params(pr, d), cudaStreamPerThread, true, left);
    std::lock_guard<std::mutex> lk(mu);
    mock::kinds.clear();
    return st;
}

struct Outcome {
    tgemm_status status = TGEMM_SUCCESS;
    bool fired = false, then_fired = false;  // the fault struck; its follower too
    bool broke = false;                      // the context broke
    std::string error;                       // "" or what is wrong
};

// Runs fc with fault f; checks the contract, that nothing writes C after
// the call returned, and (after a failure that did not break the context)
// that the tile memory went back to the pool. A broken context is revived
// (a new process, as far as the mock knows).
Outcome run_with_fault(const FaultCase &fc, const Data &data, const std::vector<float> &want, const mock::Fault &f)
{
    Outcome o;
    Data d = data;
    std::vector<tgemm::Rect> left;
    size_t allocs = 0;
    {
        std::lock_guard<std::mutex> lk(mu);
        allocs = mock::device_allocs.size();
    }
    mock::arm(f);
    o.status = fc.execute ? run_execute(fc.p, d, fc.recovers ? &left : nullptr)
                          : run(fc.p, d, nullptr, fc.recovers ? &left : nullptr);
    const std::vector<float> returned = d.C;
    mock::drain_all();
    {
        std::lock_guard<std::mutex> lk(mu);
        o.fired = mock::fired;
        o.then_fired = mock::then_fired;
        o.broke = mock::dead;
        mock::fault = mock::Fault();
    }
    if (std::memcmp(returned.data(), d.C.data(), d.C.size() * 4) != 0)
        o.error = "C was written after the call returned";
    if (o.error.empty())
        o.error = check_outcome(fc.p, d, o.status, fc.recovers ? &left : nullptr, want);
    if (o.broke) {
        // Frees the pipeline given up, now that its streams can be seen idle.
        mock::revive();
        if (tgemm::release_host_resources() != TGEMM_SUCCESS && o.error.empty())
            o.error = "pipelines not freed after revival";
    } else {
        std::lock_guard<std::mutex> lk(mu);
        if (o.error.empty() && mock::device_allocs.size() != allocs)
            o.error = "tile memory not given back";
    }
    if (o.error.empty() && o.status != TGEMM_SUCCESS && o.status != TGEMM_ERROR_CUDA &&
        o.status != TGEMM_ERROR_OUT_OF_MEMORY)
        o.error = "status " + std::to_string(static_cast<int>(o.status));
    return o;
}

std::vector<FaultCase> fault_cases()
{
    std::vector<FaultCase> v;
    const auto add = [&v](const char *name, bool ta, bool tb, MemKind ka, MemKind kb, MemKind kc, float beta) {
        FaultCase c;
        c.name = name;
        c.p.m = 70;
        c.p.n = 50;
        c.p.k = 100;
        c.p.ta = ta;
        c.p.tb = tb;
        c.p.ka = ka;
        c.p.kb = kb;
        c.p.kc = kc;
        c.p.beta = beta;
        c.p.pad_a = 1;
        c.p.pad_b = 2;
        c.p.pad_c = 3;
        v.push_back(c);
        return &v.back();
    };
    const MemKind pg = MemKind::Pageable, pn = MemKind::Pinned, dv = MemKind::Device, mg = MemKind::Managed;
    // 3 x 2 tiles of 32, 4 chunks of K: the resident schedule (A, B and C
    // whole on the device), its two column blocks of tiles the lead, its
    // last kernel on the last tile; pieces of a pageable C copied out as
    // staging buffers come free.
    add("lead NN pageable C beta 0", false, false, pg, pn, pg, 0.0f);
    add("lead TN pageable C beta 0.5", true, false, pn, pg, pg, 0.5f);
    add("lead NT pinned C beta 0", false, true, pg, pg, pn, 0.0f);
    add("lead TT pinned C beta -1", true, true, pg, dv, pn, -1.0f);
    add("lead NN managed C beta 0.5", false, false, pg, pg, mg, 0.5f);
    add("lead TN managed C beta 0", true, false, pn, pn, mg, 0.0f);
    add("lead NT device C beta 0", false, true, pg, pg, dv, 0.0f);
    add("no host operand, managed C beta 1", true, true, dv, mg, mg, 1.0f);
    add("scale only, pageable C beta 0.5", false, false, pg, pg, pg, 0.5f)->p.alpha = 0.0f;
    // 3 x 3 tiles of 32: the resident schedule with a row of tiles after
    // the lead, one kernel cut into a run of two tiles and one tile.
    const auto rest = [](FaultCase *f) {
        f->p.m = 96;
        f->p.n = 70;
        return f;
    };
    rest(add("resident rest NT pageable C beta 0", false, true, pg, pn, pg, 0.0f));
    rest(add("resident rest TN pinned C beta 0.5", true, false, pn, pg, pn, 0.5f));
    rest(add("native resident rest NN device C beta 1", false, false, pg, pg, dv, 1.0f))->recovers = false;
    // 5 x 2 tiles of 32 under a budget that the resident schedule exceeds:
    // the tiled schedule's lead group (a C slot for each of its tiles, two
    // more for the rest), A and B whole.
    const auto tiled_lead = [](FaultCase *f) {
        f->p.m = 150;
        f->budget = 108000;
    };
    tiled_lead(add("tiled lead NN pageable C beta 0.5", false, false, pg, pg, pg, 0.5f));
    tiled_lead(add("tiled lead TT pinned C beta 0", true, true, pg, pg, pn, 0.0f));
    // One tile of 128 x 40, chunks of 64: the opening half a chunk deep,
    // the last kernel cut into parts of 64, 32 and 32 rows.
    for (const float beta : {0.0f, 0.5f}) {
        FaultCase *f = add(beta == 0.0f ? "resident parts NN pageable C beta 0" : "resident parts TT pinned C beta 0.5",
                           beta != 0.0f, beta != 0.0f, pg, pn, beta == 0.0f ? pg : pn, beta);
        f->p.m = 128;
        f->p.n = 40;
        f->p.k = 200;
        f->tile = 128;
        f->depth = 64;
    }
    // Out of core: A (and B) in chunks, two C slots taken in turn.
    add("out of core NN pageable C beta 0.5", false, false, pg, pg, pg, 0.5f)->budget = 40 << 10;
    add("out of core TT pinned C beta 2", true, true, pn, pn, pn, 2.0f)->budget = 40 << 10;
    add("out of core NT managed C beta 0", false, true, pg, pn, mg, 0.0f)->budget = 40 << 10;
    add("out of core TN pageable C beta 1", true, false, pg, pn, pg, 1.0f)->budget = 24 << 10;
    // A tile of 100 x 41952 (from the default sizes) is two pieces of
    // staging: pieces of one tile are written back one by one. (Pinned C
    // with beta != 0 goes through staging as pageable C does.)
    FaultCase *c = add("pieces pinned C beta 1", false, false, pg, pg, pn, 1.0f);
    c->p.m = 100;
    c->p.n = 42000;
    c->p.k = 2;
    c->tile = c->depth = 0;
    c->every_kind = false;
    // The native API: nothing asked back, each element its result or its
    // original value (host C).
    add("native lead NN pageable C beta 0.5", false, false, pg, pg, pg, 0.5f)->recovers = false;
    add("native lead TN pinned C beta 0.5", true, false, pg, pn, pn, 0.5f)->recovers = false;
    add("native lead TT device C beta 0.5", true, true, pg, pg, dv, 0.5f)->recovers = false;
    c = add("native out of core NN managed C beta 1", false, false, pg, pg, mg, 1.0f);
    c->recovers = false;
    c->budget = 40 << 10;
    // Through execute(): no operand in host memory, so the kernels run on
    // the operands in place, unless the caller finishes failed calls and C
    // must go through staging (managed C, beta != 0); host operands.
    add("execute: device A and B, managed C beta 0", false, true, dv, dv, mg, 0.0f)->execute = true;
    add("execute: device A, managed B and C beta 0.5", true, false, dv, mg, mg, 0.5f)->execute = true;
    add("execute: pageable A, device B, pinned C beta 0.5", true, true, pg, dv, pn, 0.5f)->execute = true;
    c = add("native execute: device A, B and C beta 0.5", false, false, dv, dv, dv, 0.5f);
    c->execute = true;
    c->recovers = false;
    c = add("native execute: managed A, B and C beta 1", true, false, mg, mg, mg, 1.0f);
    c->execute = true;
    c->recovers = false;
    return v;
}

// For every case: a failure at each call of each kind the call makes (and
// each copy and kernel faulting as it runs), one-off and sticky (a broken
// context, in which every later call fails), every outcome checked against
// the contract. A one-off failure is followed, at random, by a second one
// in the cleaning up: the first stream synchronisation or the first freeing
// of the tile memory after it (both asked again). After a broken context,
// and after failures that leave the pipeline changed, a clean call checks
// that the pipeline left behind (or made anew) works and brings it back to
// the state the call counts were taken in; otherwise the next failing call
// reuses it. Cold calls (pipelines freed first) put failures into the
// making of the pipeline too.
void test_fault_injection(void **)
{
    std::mt19937_64 rng(31);
    int64_t total = 0, per_kind[mock::kCalls][2] = {}, followers[mock::kCalls] = {};
    for (const FaultCase &fc : fault_cases()) {
        tgemm::set_host_plan_sizes(fc.tile, fc.depth, fc.tile ? 32 : 0);
        set_budget(fc.budget);
        const Data data = make_data(fc.p, rng);
        const std::vector<float> want = expected(fc.p, data);
        for (bool cold : {false, true}) {
            if (cold && !fc.every_kind)
                continue;
            // The calls of each kind a clean call makes, warm (after one
            // like it) or cold.
            for (int i = 0; i < 2; ++i) {
                if (cold)
                    assert_int_equal(tgemm::release_host_resources(), TGEMM_SUCCESS);
                const Outcome clean = run_with_fault(fc, data, want, mock::Fault());
                if (!clean.error.empty() || clean.status != TGEMM_SUCCESS)
                    fail_msg("%s: clean call: status %d, %s", fc.name, (int)clean.status, clean.error.c_str());
            }
            int64_t counts[mock::kCalls];
            {
                std::lock_guard<std::mutex> lk(mu);
                std::copy(mock::calls, mock::calls + mock::kCalls, counts);
            }
            for (int kind = 0; kind < mock::kCalls; ++kind) {
                // Cold: what only a cold call does more.
                const bool setup = kind == mock::Create || kind == mock::Alloc || kind == mock::Query;
                if (cold ? !setup
                         : !fc.every_kind && kind != mock::Copy && kind != mock::Record &&
                               kind != mock::EventSync && kind != mock::RunCopy)
                    continue;
                const bool runs = kind == mock::RunKernel || kind == mock::RunCopy;
                for (int64_t at = 0; at < counts[kind]; ++at)
                    for (bool sticky : {false, true}) {
                        if (runs && !sticky)
                            continue;
                        if (cold)
                            assert_int_equal(tgemm::release_host_resources(), TGEMM_SUCCESS);
                        mock::Fault f{kind, at, sticky};
                        if (!sticky && rng() % 2 == 0) {
                            f.then = rng() % 2 ? mock::StreamSync : mock::Free;
                            f.then_at = 0;
                        }
                        const Outcome o = run_with_fault(fc, data, want, f);
                        if (!o.fired || !o.error.empty())
                            fail_msg("%s, %s %s failure at call %lld of %lld%s%s: status %d, %s", fc.name,
                                     sticky ? "sticky" : "one-off", mock::kCallNames[kind], (long long)at,
                                     (long long)counts[kind], cold ? " (cold)" : "",
                                     o.then_fired ? (f.then == mock::StreamSync ? ", then a stream-sync failure"
                                                                                : ", then a free failure")
                                                  : "",
                                     (int)o.status, o.fired ? o.error.c_str() : "the failure never struck");
                        ++total;
                        ++per_kind[kind][sticky];
                        if (o.then_fired)
                            ++followers[f.then];
                        if (cold || !fc.every_kind || !(o.broke || setup))
                            continue;
                        const Outcome next = run_with_fault(fc, data, want, mock::Fault());
                        if (next.status != TGEMM_SUCCESS || !next.error.empty())
                            fail_msg("%s: the call after a %s %s failure at call %lld: status %d, %s", fc.name,
                                     sticky ? "sticky" : "one-off", mock::kCallNames[kind], (long long)at,
                                     (int)next.status, next.error.c_str());
                    }
            }
        }
    }
    tgemm::set_host_plan_sizes(0, 0, 0);
    set_budget(uint64_t{80} << 30);
    std::printf("    %lld failures injected (one-off+sticky):", (long long)total);
    for (int kind = 0; kind < mock::kCalls; ++kind)
        if (per_kind[kind][0] + per_kind[kind][1] > 0)
            std::printf(" %s %lld+%lld", mock::kCallNames[kind], (long long)per_kind[kind][0],
                        (long long)per_kind[kind][1]);
    std::printf("; one-off followed by a stream-sync failure %lld, by a free failure %lld\n",
                (long long)followers[mock::StreamSync], (long long)followers[mock::Free]);
    assert_true(followers[mock::StreamSync] > 100 && followers[mock::Free] > 100);
}

// After a failure that breaks the context, the pipeline is given up, not
// reused: the next call makes a new one (five more streams), and
// tgemm_release_resources() frees both, the one given up once its streams
// are found idle (here: after the mock's revival).
void test_broken_pipeline_replaced(void **)
{
    std::mt19937_64 rng(33);
    tgemm::set_host_plan_sizes(32, 32, 32);
    assert_int_equal(tgemm::release_host_resources(), TGEMM_SUCCESS);
    mock::drain_all();
    const auto counts = [](size_t *streams, size_t *events, size_t *host) {
        std::lock_guard<std::mutex> lk(mu);
        *streams = mock::streams.size();
        *events = mock::events.size();
        *host = mock::host_allocs.size();
    };
    size_t streams0 = 0, events0 = 0, host0 = 0, streams = 0, events = 0, host = 0;
    counts(&streams0, &events0, &host0);
    const FaultCase fc = fault_cases()[1];
    const Data data = make_data(fc.p, rng);
    const std::vector<float> want = expected(fc.p, data);
    Outcome o = run_with_fault(fc, data, want, mock::Fault());
    assert_true(o.status == TGEMM_SUCCESS && o.error.empty());
    counts(&streams, &events, &host);
    assert_int_equal(streams, streams0 + 5);
    mock::arm(mock::Fault{mock::RunKernel, 3, true});
    Data d = data;
    std::vector<tgemm::Rect> left;
    assert_int_equal(run(fc.p, d, nullptr, &left), TGEMM_ERROR_CUDA);
    const std::string err = check_outcome(fc.p, d, TGEMM_ERROR_CUDA, &left, want);
    if (!err.empty())
        fail_msg("%s", err.c_str());
    mock::revive();
    o = run_with_fault(fc, data, want, mock::Fault());
    assert_true(o.status == TGEMM_SUCCESS && o.error.empty());
    counts(&streams, &events, &host);
    assert_int_equal(streams, streams0 + 10);
    assert_int_equal(tgemm::release_host_resources(), TGEMM_SUCCESS);
    mock::drain_all();
    counts(&streams, &events, &host);
    assert_int_equal(streams, streams0);
    assert_int_equal(events, events0);
    assert_int_equal(host, host0);
    tgemm::set_host_plan_sizes(0, 0, 0);
}

// Calls one after another on the same pipeline, the resident schedule with
// a pageable C (its pieces copied out behind events of their kernels): the
// second call and every later one reuse the events the first made.
void test_calls_reuse_events(void **)
{
    std::mt19937_64 rng(37);
    for (const FaultCase &fc : fault_cases()) {
        if (fc.p.kc != MemKind::Pageable || fc.p.alpha == 0.0f)
            continue;
        tgemm::set_host_plan_sizes(fc.tile, fc.depth, fc.tile ? 32 : 0);
        set_budget(fc.budget);
        const Data data = make_data(fc.p, rng);
        const std::vector<float> want = expected(fc.p, data);
        size_t after_first = 0;
        for (int i = 0; i < 6; ++i) {
            const Outcome o = run_with_fault(fc, data, want, mock::Fault());
            if (!o.error.empty() || o.status != TGEMM_SUCCESS)
                fail_msg("%s: call %d: status %d, %s", fc.name, i, (int)o.status, o.error.c_str());
            std::lock_guard<std::mutex> lk(mu);
            if (i == 0)
                after_first = mock::events.size();
            else if (mock::events.size() != after_first)
                fail_msg("%s: %zu events after call %d, %zu after the first", fc.name, mock::events.size(), i + 1,
                         after_first);
        }
    }
    tgemm::set_host_plan_sizes(0, 0, 0);
    set_budget(uint64_t{80} << 30);
}

// Threads call at once, more than there are pipelines, and the context
// breaks under them: every call either succeeds or leaves what the BLAS
// layer completes exactly; the pipelines given up are replaced, so the
// calls after revival run (none waits forever for a pipeline).
void test_fault_threads(void **)
{
    tgemm::set_host_plan_sizes(32, 32, 32);
    set_budget(uint64_t{1} << 20);
    std::mt19937_64 rng(32);
    const std::vector<FaultCase> cases = fault_cases();
    for (int round = 0; round < 6; ++round) {
        const int64_t at = static_cast<int64_t>(rng() % 400);
        mock::arm(mock::Fault{round % 2 ? mock::Record : mock::RunKernel, at, true});
        std::vector<std::thread> th;
        std::vector<std::string> errors(8);
        for (int t = 0; t < 8; ++t)
            th.emplace_back([t, round, &cases, &errors] {
                std::mt19937_64 r(1000 * round + t);
                for (int i = 0; i < 4 && errors[t].empty(); ++i) {
                    FaultCase fc = cases[r() % 9];
                    fc.recovers = true;
                    Data d = make_data(fc.p, r);
                    const std::vector<float> want = expected(fc.p, d);
                    std::vector<tgemm::Rect> left;
                    const tgemm_status st = run(fc.p, d, nullptr, &left);
                    errors[t] = check_outcome(fc.p, d, st, &left, want);
                    if (!errors[t].empty())
                        errors[t] = std::string(fc.name) + ": " + errors[t];
                }
            });
        for (std::thread &x : th)
            x.join();
        bool broke = false;
        {
            std::lock_guard<std::mutex> lk(mu);
            broke = mock::dead;
        }
        for (int t = 0; t < 8; ++t)
            if (!errors[t].empty())
                fail_msg("round %d, thread %d: %s", round, t, errors[t].c_str());
        assert_true(broke);
        mock::revive();
        mock::arm(mock::Fault());
        assert_int_equal(tgemm::release_host_resources(), TGEMM_SUCCESS);
        for (int i = 0; i < 3; ++i)
            random_call(rng, 100, nullptr);
    }
    tgemm::set_host_plan_sizes(0, 0, 0);
    set_budget(uint64_t{80} << 30);
}

// ---------------------------------------------------------------- TGEMM_HOST_TRACE

struct CsvRow {
    uint64_t call = 0;
    std::string event;
    int64_t task = 0, tile_row = 0, tile_col = 0, chunk = 0;
    char operand = '-';
    int thread = 0;
    uint64_t bytes = 0;
    double start = 0, end = 0;
    std::string detail;
};

std::vector<std::string> split(const std::string &line, size_t fields)
{
    std::vector<std::string> out;
    size_t at = 0;
    while (out.size() + 1 < fields) {
        const size_t comma = line.find(',', at);
        if (comma == std::string::npos)
            break;
        out.push_back(line.substr(at, comma - at));
        at = comma + 1;
    }
    out.push_back(line.substr(at));
    return out;
}

// A number after `key=` in a call's detail.
double detail_value(const std::string &detail, const char *key)
{
    const std::string padded = " " + detail, field = std::string(" ") + key + "=";
    const size_t at = padded.find(field);
    if (at == std::string::npos)
        fail_msg("'%s' not in the call's detail: %s", key, detail.c_str());
    return std::atof(padded.c_str() + at + field.size());
}

// The problems the trace scenario runs, each once: pageable, pinned C,
// beta != 0, a lead group, pieces of C fewer than staging buffers.
struct TraceCase {
    Problem p;
    int64_t tile = 0, depth = 0;  // preferred sizes, 0 = defaults
};

std::vector<TraceCase> trace_cases()
{
    std::vector<TraceCase> v;
    TraceCase c;
    c.p.m = 150;
    c.p.n = 90;
    c.p.k = 200;
    c.tile = 64;
    c.depth = 64;
    v.push_back(c);  // 3 x 2 tiles, 4 chunks: a lead group of four tiles
    c.p.beta = 0.5f;
    c.p.kc = MemKind::Pinned;
    v.push_back(c);
    c = TraceCase();
    c.p.m = 100;
    c.p.n = 100000;
    c.p.k = 3;
    c.p.pad_c = 3;
    v.push_back(c);  // C in two pieces of staging
    return v;
}

void test_trace_file(void **)
{
    const char *path = std::getenv("TGEMM_HOST_TRACE");
    assert_non_null(path);
    std::mt19937_64 rng(11);
    const std::vector<TraceCase> cases = trace_cases();
    for (const TraceCase &tc : cases) {
        tgemm::set_host_plan_sizes(tc.tile, tc.depth, tc.tile ? 32 : 0);
        Data d = make_data(tc.p, rng);
        assert_int_equal(run(tc.p, d, nullptr), TGEMM_SUCCESS);
        check(tc.p, d, "traced call");
    }
    tgemm::set_host_plan_sizes(0, 0, 0);
    {
        std::lock_guard<std::mutex> lk(mu);
        assert_true(mock::timing_events > 0);
    }

    FILE *f = std::fopen(path, "r");
    assert_non_null(f);
    std::vector<std::string> lines;
    char buf[4096];
    while (std::fgets(buf, sizeof buf, f) != nullptr) {
        std::string line = buf;
        assert_true(!line.empty() && line.back() == '\n');
        line.pop_back();
        lines.push_back(line);
    }
    std::fclose(f);
    assert_true(lines.size() > cases.size());
    assert_string_equal((lines[0] + "\n").c_str(), tgemm::trace_header());

    std::vector<std::vector<CsvRow>> calls(cases.size());
    for (size_t i = 1; i < lines.size(); ++i) {
        const std::vector<std::string> f = split(lines[i], 12);
        if (f.size() != 12)
            fail_msg("line %zu has %zu fields: %s", i + 1, f.size(), lines[i].c_str());
        CsvRow r;
        r.call = std::strtoull(f[0].c_str(), nullptr, 10);
        r.event = f[1];
        r.task = std::atoll(f[2].c_str());
        r.tile_row = std::atoll(f[3].c_str());
        r.tile_col = std::atoll(f[4].c_str());
        r.chunk = std::atoll(f[5].c_str());
        r.operand = f[6].empty() ? '?' : f[6][0];
        r.thread = std::atoi(f[7].c_str());
        r.bytes = std::strtoull(f[8].c_str(), nullptr, 10);
        r.start = std::atof(f[9].c_str());
        r.end = std::atof(f[10].c_str());
        r.detail = f[11];
        if (r.call < 1 || r.call > calls.size())
            fail_msg("line %zu: call %llu", i + 1, (unsigned long long)r.call);
        if (!(r.start >= 0 && r.end >= r.start))
            fail_msg("line %zu: times %g to %g", i + 1, r.start, r.end);
        calls[r.call - 1].push_back(r);
    }

    for (size_t c = 0; c < calls.size(); ++c) {
        const std::vector<CsvRow> &rows = calls[c];
        const Problem &p = cases[c].p;
        // The call row comes first, with the plan.
        assert_true(!rows.empty() && rows[0].event == "call");
        const std::string &detail = rows[0].detail;
        assert_int_equal(detail_value(detail, "status"), 0);
        assert_int_equal(detail_value(detail, "m"), p.m);
        const double call_end = rows[0].end;
        const int threads = static_cast<int>(detail_value(detail, "copy_threads"));
        int64_t mb = 0, nb = 0, kb = 0;
        const size_t at = detail.find(" blocks=");
        assert_true(at != std::string::npos &&
                    std::sscanf(detail.c_str() + at, " blocks=%" SCNd64 "x%" SCNd64 "x%" SCNd64, &mb, &nb, &kb) == 3);

        std::map<std::string, int> count;
        std::map<char, uint64_t> h2d, staged_in;
        uint64_t d2h = 0, staged_out = 0, parts = 0;
        double last_stage_in = -1, first_stage_out = 1e300;
        std::set<int64_t> kernel_tasks;
        for (size_t i = 1; i < rows.size(); ++i) {
            const CsvRow &r = rows[i];
            ++count[r.event];
            const bool gpu = r.event == "h2d" || r.event == "kernel" || r.event == "d2h";
            // Host rows lie within the call; GPU rows only start after it did.
            if (!gpu && r.end > call_end)
                fail_msg("call %zu: %s ends at %g after the call (%g)", c + 1, r.event.c_str(), r.end, call_end);
            if (r.event == "copy_part") {
                if (r.thread < 0 || r.thread >= threads)
                    fail_msg("call %zu: copy part on thread %d of %d", c + 1, r.thread, threads);
                parts += r.bytes;
            } else if (r.event == "stage_in" || r.event == "stage_out") {
                // A stage row follows its parts, which add up to it.
                if (parts != r.bytes)
                    fail_msg("call %zu: %s of %llu bytes, its parts %llu", c + 1, r.event.c_str(),
                             (unsigned long long)r.bytes, (unsigned long long)parts);
                parts = 0;
                if (r.event == "stage_in") {
                    staged_in[r.operand] += r.bytes;
                    last_stage_in = std::max(last_stage_in, r.start);
                } else {
                    staged_out += r.bytes;
                    first_stage_out = std::min(first_stage_out, r.start);
                }
            } else if (r.event == "h2d") {
                h2d[r.operand] += r.bytes;
            } else if (r.event == "d2h") {
                d2h += r.bytes;
            } else if (r.event == "kernel") {
                kernel_tasks.insert(r.task);
                if (r.tile_row < 0 || r.tile_row >= mb || r.tile_col < 0 || r.tile_col >= nb || r.chunk < 0 ||
                    r.chunk >= kb)
                    fail_msg("call %zu: kernel of task %lld at tile (%lld, %lld) chunk %lld", c + 1,
                             (long long)r.task, (long long)r.tile_row, (long long)r.tile_col, (long long)r.chunk);
            } else if (r.event != "wait_buffer" && r.event != "wait_out" && r.event != "wait_end") {
                fail_msg("call %zu: unknown event %s", c + 1, r.event.c_str());
            }
        }
        // One kernel per task, every task once.
        const int64_t tasks = static_cast<int64_t>(detail_value(detail, "tasks"));
        assert_true(tasks >= mb * nb);
        assert_int_equal(count["kernel"], tasks);
        assert_int_equal(kernel_tasks.size(), tasks);
        assert_int_equal(count["wait_end"], 1);
        // What crosses the link is what the plan says; what is pageable
        // went through the copy threads on the way.
        uint64_t moved = d2h;
        for (const auto &kv : h2d)
            moved += kv.second;
        assert_true(static_cast<double>(moved) == detail_value(detail, "link_bytes"));
        for (char op : {'A', 'B'})
            assert_int_equal(staged_in[op], h2d[op]);
        const uint64_t c_bytes = static_cast<uint64_t>(p.m * p.n) * sizeof(float);
        assert_int_equal(d2h, c_bytes);
        if (p.kc == MemKind::Pageable) {
            assert_int_equal(staged_out, c_bytes);
            assert_int_equal(staged_in['C'], p.beta != 0.0f ? c_bytes : 0);
            // Fewer pieces of C than staging buffers: none is copied into C
            // before the last piece of A, B has gone to staging.
            assert_true(count["stage_out"] < 8 && first_stage_out >= last_stage_in);
        } else {
            assert_int_equal(count["stage_out"], 0);
        }
    }
}

// A trace file that cannot be opened: every call on host operands says so,
// before it touches C.
void test_bad_trace_file(void **)
{
    std::mt19937_64 rng(12);
    Problem p;
    p.m = 40;
    p.n = 30;
    p.k = 20;
    p.beta = 1.0f;
    for (int i = 0; i < 2; ++i) {
        Data d = make_data(p, rng);
        assert_int_equal(run(p, d, nullptr), TGEMM_ERROR_INVALID_SETTING);
        assert_non_null(std::strstr(tgemm_last_error_detail(), "TGEMM_HOST_TRACE="));
        assert_non_null(std::strstr(tgemm_last_error_detail(), "cannot be opened"));
        assert_memory_equal(d.C.data(), d.C0.data(), d.C.size() * sizeof(float));
    }
}

// ---------------------------------------------------------------- several GPUs (TGEMM_DEVICES)

// The spread scenarios run on kSpreadDevices mock devices; g_workers are
// the devices TGEMM_DEVICES lists, one per worker (all of them for all and
// auto), g_choose whether it is auto.
constexpr int kSpreadDevices = 3;
std::vector<int> g_workers;
bool g_choose = false;

// The distinct devices of g_workers.
std::vector<int> listed_devices()
{
    std::vector<int> v = g_workers;
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
}

bool listed(int dev) { return std::find(g_workers.begin(), g_workers.end(), dev) != g_workers.end(); }

// The device a call on host operands from a thread whose current device is
// `current` runs on when it is not spread (spread_home in execute.cpp).
int home_of(int current) { return listed(current) ? current : g_workers.front(); }

// The plan the call should take (plan_for in execute.cpp, operands in host
// memory): the model's, on the home device's peak.
tgemm::SpreadPlan expected_plan(const Problem &p, int home)
{
    const bool reads_ab = p.k > 0 && p.alpha != 0.0f;
    const tgemm::DeviceInfo *dev = nullptr;
    if (tgemm::device_info(home, &dev) != TGEMM_SUCCESS)
        fail_msg("device_info(%d): %s", home, tgemm_last_error_detail());
    tgemm::SpreadRequest r;
    r.m = p.m;
    r.n = p.n;
    r.k = reads_ab ? p.k : 0;
    r.a_host = r.b_host = reads_ab;
    r.c_in = p.beta != 0.0f;
    r.pageable = (reads_ab && (p.ka == MemKind::Pageable || p.kb == MemKind::Pageable)) || p.kc == MemKind::Pageable;
    r.copy_threads = tgemm::host_copy_threads();
    r.workers = static_cast<int>(g_workers.size());
    r.choose_workers = g_choose;
    r.peak_flops = tgemm::fp32_peak_flops(*dev);
    r.min_side = tgemm::spread_min_side();
    r.rows = tgemm::settings().spread_rows;
    r.cols = tgemm::settings().spread_cols;
    return tgemm::plan_spread(r);
}

// What the mock logged since the last take_logs().
struct Logs {
    std::vector<mock::Logged> budget, launches;  // one budget query per block run (run_host_operands)
    std::vector<std::pair<int, size_t>> allocs;
};

Logs take_logs()
{
    std::lock_guard<std::mutex> lk(mu);
    Logs l;
    l.budget.swap(mock::budget_log);
    l.launches.swap(mock::launch_log);
    l.allocs.swap(mock::alloc_log);
    return l;
}

// The product on the per-thread default stream, waiting, through
// execute(), as tgemm_sgemm() and the BLAS layer call it, or (`api`, no
// `left`) through tgemm_sgemm() itself; A, B and C registered with their
// kinds (device memory of dev_a, dev_b, dev_c where Device).
tgemm_status spread_call(const Problem &pr, Data &d, std::vector<tgemm::Rect> *left, int dev_a = -1, int dev_b = -1,
                         int dev_c = -1, bool api = false)
{
    const std::vector<mock::Range> ranges = {{d.A.data(), d.A.size() * 4, pr.ka, dev_a},
                                             {d.B.data(), d.B.size() * 4, pr.kb, dev_b},
                                             {d.C.data(), d.C.size() * 4, pr.kc, dev_c}};
    {
        std::lock_guard<std::mutex> lk(mu);
        mock::kinds.insert(mock::kinds.end(), ranges.begin(), ranges.end());
    }
    const tgemm::GemmParams q = params(pr, d);
    const tgemm_status st =
        !api || left != nullptr ? tgemm::execute(q, cudaStreamPerThread, true, left)
                                : tgemm_sgemm(q.trans_a ? TGEMM_OP_T : TGEMM_OP_N, q.trans_b ? TGEMM_OP_T : TGEMM_OP_N, q.m,
                                      q.n, q.k, q.alpha, q.a, q.lda, q.b, q.ldb, q.beta, q.c, q.ldc);
    std::lock_guard<std::mutex> lk(mu);
    for (const mock::Range &r : ranges)
        for (auto it = mock::kinds.begin(); it != mock::kinds.end(); ++it)
            if (it->begin == r.begin) {
                mock::kinds.erase(it);
                break;
            }
    return st;
}

// A call keeps the math it started with: tgemm_set_math while a call on
// host operands runs its tiles changes the calls after it, not that one
// (every tile's launch is given the math of its call).
void test_math_per_call(void **)
{
    std::mt19937_64 rng(29);
    Problem p;
    p.m = 150;
    p.n = 130;
    p.k = 70;
    p.beta = 0.5f;
    tgemm::set_host_plan_sizes(32, 32, 32);
    assert_int_equal(tgemm_set_math(TGEMM_MATH_STRICT), TGEMM_SUCCESS);
    take_logs();
    // One call through tgemm_sgemm(), `hook` at each of its launches: C
    // right, and every launch given `math`.
    const auto call = [&](std::function<void()> hook, tgemm::Math math, const char *what) {
        Data d = make_data(p, rng);
        {
            std::lock_guard<std::mutex> lk(mu);
            mock::on_launch = std::move(hook);
        }
        const tgemm_status st = spread_call(p, d, nullptr, -1, -1, -1, true);
        {
            std::lock_guard<std::mutex> lk(mu);
            mock::on_launch = nullptr;
        }
        const Logs logs = take_logs();
        assert_int_equal(st, TGEMM_SUCCESS);
        check(p, d, what);
        assert_true(logs.launches.size() >= 4);
        for (const mock::Logged &l : logs.launches)
            assert_int_equal(static_cast<int>(l.math), static_cast<int>(math));
    };
    call([] { tgemm_set_math(TGEMM_MATH_FP32_TC); }, tgemm::Math::Strict, "the math set during the call");
    call(nullptr, tgemm::Math::Fp32Tc, "the call after");  // it starts under the math set during the last
    assert_int_equal(tgemm_set_math(TGEMM_MATH_STRICT), TGEMM_SUCCESS);
    tgemm::set_host_plan_sizes(0, 0, 0);
}

// "" if the blocks of a call that succeeded ran as plan says, else what is
// wrong: one budget query per block, each worker (thread) on its own
// device, the workers' devices those TGEMM_DEVICES lists first (the calling
// thread the first), or, not spread, one run on the home device in the
// calling thread; every launch on a device that ran a block.
std::string check_blocks(const tgemm::SpreadPlan &plan, int home, const Logs &logs)
{
    char msg[256];
    const int64_t blocks = plan.workers > 1 ? tgemm::block_count(plan) : 1;
    if (static_cast<int64_t>(logs.budget.size()) != blocks) {
        std::snprintf(msg, sizeof msg, "%zu block runs, the plan has %lld (%lldx%lld, %d workers)",
                      logs.budget.size(), (long long)blocks, (long long)plan.rows, (long long)plan.cols,
                      plan.workers);
        return msg;
    }
    std::map<std::thread::id, int> device_of;
    for (const mock::Logged &b : logs.budget) {
        const auto at = device_of.emplace(b.thread, b.device).first;
        if (at->second != b.device)
            return "a worker ran blocks on two devices";
    }
    const std::thread::id self = std::this_thread::get_id();
    std::vector<int> used, want;
    for (const auto &t : device_of)
        used.push_back(t.second);
    if (plan.workers > 1)
        want.assign(g_workers.begin(), g_workers.begin() + plan.workers);
    else
        want = {home};
    std::sort(used.begin(), used.end());
    std::sort(want.begin(), want.end());
    if (used != want || device_of.count(self) == 0 || device_of[self] != (plan.workers > 1 ? g_workers[0] : home)) {
        std::string u, w;
        for (int x : used)
            u += std::to_string(x) + " ";
        for (int x : want)
            w += std::to_string(x) + " ";
        std::snprintf(msg, sizeof msg, "the workers ran on devices %s(%zu threads), want %s(%d workers, %lld blocks)",
                      u.c_str(), device_of.size(), w.c_str(), plan.workers, (long long)blocks);
        return msg;
    }
    for (const mock::Logged &l : logs.launches)
        if (device_of.count(l.thread) == 0 || device_of[l.thread] != l.device)
            return "a launch on a device or thread that ran no block";
    return "";
}

// After each spread test, passed or failed: the mock's and the library's
// settings as they were (a failed test leaves them as it found them).
int spread_reset(void **)
{
    mock::arm(mock::Fault());
    mock::gate(0);
    mock::pool_read_pause_ms = 0;
    mock::drain_all();
    bool broke = false;
    {
        std::lock_guard<std::mutex> lk(mu);
        broke = mock::dead;
        for (uint64_t &f : mock::device_free_on)
            f = 0;
        mock::kinds.clear();
    }
    if (broke) {
        mock::revive();
        (void)tgemm::release_host_resources();
    }
    mock::set_current_device(0);
    tgemm::set_host_plan_sizes(0, 0, 0);
    set_budget(uint64_t{80} << 30);
    take_logs();
    return 0;
}

// The mock's invariants after a scenario: no launch broke its contract and
// no call mixed devices.
void check_mock_invariants()
{
    std::lock_guard<std::mutex> lk(mu);
    if (mock::contract_violations != 0)
        fail_msg("%d kernel launches broke run_device_operands' contract", mock::contract_violations);
    if (mock::device_mismatches != 0)
        fail_msg("%d calls mixed devices", mock::device_mismatches);
}

// Random shapes, transposes, padding, alpha and beta, operands pageable or
// pinned, from threads whose current device varies: exact results, padding
// untouched, the blocks spread over the listed workers (the gate makes
// each take one) or, where C has no room for two blocks or auto finds that
// spreading does not pay, one run on the home device; the thread's current
// device unchanged.
void test_spread_random(void **)
{
    std::mt19937_64 rng(4000);
    int spread = 0, single = 0, blas = 0;
    const int peer_copies = mock::peer_copies;
    for (int i = 0; i < 120; ++i) {
        tgemm::set_host_plan_sizes(32 * (1 + static_cast<int64_t>(rng() % 2)),
                                   32 * (1 + static_cast<int64_t>(rng() % 3)), 32);
        set_budget(uint64_t{1} << 20);
        const Problem p = random_problem(rng, 200, true);
        Data d = make_data(p, rng);
        const int current = static_cast<int>(rng() % kSpreadDevices);
        mock::set_current_device(current);
        const int home = home_of(current);
        const tgemm::SpreadPlan plan = expected_plan(p, home);
        take_logs();
        mock::gate(plan.workers > 1 ? plan.workers : 0);
        std::vector<tgemm::Rect> left;
        const bool with_left = rng() % 3 == 0;
        const tgemm_status st = spread_call(p, d, with_left ? &left : nullptr);
        mock::gate(0);
        if (st != TGEMM_SUCCESS)
            fail_msg("call %d: status %d: %s", i, (int)st, tgemm_last_error_detail());
        if (with_left && !left.empty())
            fail_msg("call %d: success with parts of C left", i);
        std::string err = verify(p, d);
        if (err.empty())
            err = check_blocks(plan, home, take_logs());
        if (!err.empty())
            fail_msg("call %d (%lldx%lldx%lld, current device %d): %s", i, (long long)p.m, (long long)p.n,
                     (long long)p.k, current, err.c_str());
        if (mock::current_device() != current)
            fail_msg("call %d: the current device changed from %d to %d", i, current, mock::current_device());
        (plan.workers > 1 ? spread : single) += 1;
        blas += with_left;
    }
    mock::set_current_device(0);
    tgemm::set_host_plan_sizes(0, 0, 0);
    set_budget(uint64_t{80} << 30);
    check_mock_invariants();
    const int copied = mock::peer_copies - peer_copies;
    std::printf("    %d calls spread, %d on one device (%d with the BLAS fallback's left); %d panels copied from "
                "another worker's memory\n", spread, single, blas, copied);
    // auto: small products stay on one device; a list spreads most of them.
    if (g_choose)
        assert_int_equal(spread, 0);
    else
        assert_true(spread > 60);
    if (!tgemm::settings().spread_peer)
        assert_int_equal(copied, 0);
}

// Calls spread and out of core: each device's memory holds only slices of
// a block's A and B. Then caps that differ from device to device, one of
// them too small for any plan: its blocks fail (out of memory) and go to
// the others, unless C cannot be left to them (pinned C with beta != 0,
// the native API): then the call may fail, each element of C its result or
// its original value.
void test_spread_out_of_core(void **)
{
    std::mt19937_64 rng(4100);
    const std::vector<int> devs = listed_devices();
    tgemm::set_host_plan_sizes(32, 32, 32);
    // Workers read their budgets while others allocate (two of them on one
    // device where TGEMM_DEVICES lists it twice): each budget is still its
    // device's cap, as the mock models free memory.
    mock::pool_read_pause_ms = 2;
    int small_failed = 0, small_ran = 0;
    for (int i = 0; i < 24; ++i) {
        Problem p;
        p.m = 150 + static_cast<int64_t>(rng() % 60);
        p.n = 130 + static_cast<int64_t>(rng() % 60);
        p.k = 150 + static_cast<int64_t>(rng() % 90);
        p.ta = i & 1;
        p.tb = i & 2;
        p.alpha = i % 5 == 4 ? -0.5f : 1.0f;
        p.beta = i % 3 == 0 ? 0.0f : 0.5f;
        p.ka = i & 4 ? MemKind::Pinned : MemKind::Pageable;
        p.kb = i & 8 ? MemKind::Pinned : MemKind::Pageable;
        p.kc = i % 4 < 2 ? MemKind::Pinned : MemKind::Pageable;
        p.pad_a = 1;
        p.pad_c = 2;
        const tgemm::SpreadPlan plan = expected_plan(p, home_of(0));
        assert_true(plan.workers > 1);
        // The fewest bytes of a block's op(A) rows and op(B) columns.
        int64_t least = INT64_MAX;
        for (int64_t b = 0; b < tgemm::block_count(plan); ++b) {
            const tgemm::Rect r = tgemm::spread_block(plan, p.m, p.n, b);
            least = std::min(least, 4 * (r.rows + r.cols) * p.k);
        }
        // Caps from 28 KiB to less than that (56 KiB at most); from call 12
        // on, the last device listed (if there are two) has 1 KiB, too
        // little for any plan.
        const uint64_t lo = 28 << 10, hi = std::min<uint64_t>(56 << 10, static_cast<uint64_t>(least));
        assert_true(hi > lo);
        const bool tiny = i >= 12 && devs.size() > 1;
        {
            std::lock_guard<std::mutex> lk(mu);
            for (int d : devs)
                mock::device_free_on[d] = (uint64_t{256} << 20) + lo + rng() % (hi - lo);
            if (tiny)
                mock::device_free_on[devs.back()] = (uint64_t{256} << 20) + 1024;
        }
        Data d = make_data(p, rng);
        const std::vector<float> want = expected(p, d);
        take_logs();
        const bool with_left = i % 6 == 5;
        std::vector<tgemm::Rect> left;
        mock::gate(tiny ? 0 : plan.workers);
        const tgemm_status st = spread_call(p, d, with_left ? &left : nullptr);
        mock::gate(0);
        const Logs logs = take_logs();
        const bool may_fail = tiny && !with_left && p.beta != 0.0f && p.kc == MemKind::Pinned;
        if (st != TGEMM_SUCCESS && !(may_fail && st == TGEMM_ERROR_OUT_OF_MEMORY))
            fail_msg("call %d: status %d: %s", i, (int)st, tgemm_last_error_detail());
        const std::string err = check_outcome(p, d, st, with_left ? &left : nullptr, want);
        if (!err.empty())
            fail_msg("call %d (%lldx%lldx%lld): %s", i, (long long)p.m, (long long)p.n, (long long)p.k,
                     err.c_str());
        if (!tiny) {
            const std::string blocks = check_blocks(plan, home_of(0), logs);
            if (!blocks.empty())
                fail_msg("call %d: %s", i, blocks.c_str());
        }
        // Out of core: no device held a block's op(A) rows and op(B) columns whole.
        for (const auto &a : logs.allocs)
            if (static_cast<int64_t>(a.second) >= least)
                fail_msg("call %d: an arena of %zu bytes on device %d holds a block's A and B (%lld bytes)", i,
                         a.second, a.first, (long long)least);
        if (tiny) {
            for (const mock::Logged &l : logs.launches)
                if (l.device == devs.back())
                    fail_msg("call %d: a launch on device %d, whose memory holds no plan", i, devs.back());
            (st == TGEMM_SUCCESS ? small_ran : small_failed) += 1;
        }
    }
    {
        std::lock_guard<std::mutex> lk(mu);
        for (uint64_t &f : mock::device_free_on)
            f = 0;
    }
    tgemm::set_host_plan_sizes(0, 0, 0);
    check_mock_invariants();
    std::printf("    with a device too small: %d calls finished by the others, %d failed (pinned C, beta != 0)\n",
                small_ran, small_failed);
}

// ---------------------------------------------------------------- a GPU failing in a spread call

struct SpreadOutcome {
    tgemm_status status = TGEMM_SUCCESS;
    bool fired = false;       // the fault struck
    bool started = false;     // a block started (the call got past its own checks)
    bool all_broken = false;  // every worker's device broke
    std::string error;        // "" or what is wrong
};

// Runs p through execute() with `left`, as the BLAS layer does, or through
// tgemm_sgemm() under fault f, and checks what it leaves: C as the
// single-GPU contract says (check_outcome), C not written after the call
// returned, the tile memory of each device that did not break given back.
// Broken devices are revived and their pipelines freed.
SpreadOutcome spread_with_fault(const Problem &p, const Data &data, const std::vector<float> &want, bool with_left,
                                const mock::Fault &f)
{
    SpreadOutcome o;
    Data d = data;
    std::vector<tgemm::Rect> left;
    take_logs();
    mock::arm(f);
    o.status = spread_call(p, d, with_left ? &left : nullptr, -1, -1, -1, !with_left);
    const std::vector<float> returned = d.C;
    mock::drain_all();
    o.started = !take_logs().budget.empty();
    bool broke = false;
    {
        std::lock_guard<std::mutex> lk(mu);
        o.fired = mock::fired;
        broke = mock::dead;
        o.all_broken = true;
        for (int w : g_workers)
            o.all_broken = o.all_broken && mock::broken[w];
        for (const auto &a : mock::device_allocs)
            if (!mock::broken[a.second.device] && o.error.empty())
                o.error = "tile memory not given back on device " + std::to_string(a.second.device);
        mock::fault = mock::Fault();
    }
    if (o.error.empty() && std::memcmp(returned.data(), d.C.data(), d.C.size() * 4) != 0)
        o.error = "C was written after the call returned";
    if (o.error.empty() && !o.started && std::memcmp(d.C0.data(), d.C.data(), d.C.size() * 4) != 0)
        o.error = "no block started, yet C was written";
    if (o.error.empty())
        o.error = check_outcome(p, d, o.status, with_left ? &left : nullptr, want);
    // The native API: a success leaves no error detail, though a device
    // failed in it and the others took its parts over.
    if (o.error.empty() && !with_left && o.status == TGEMM_SUCCESS && tgemm_last_error_detail()[0] != '\0')
        o.error = std::string("a success left the error detail '") + tgemm_last_error_detail() + "'";
    if (broke) {
        mock::revive();
        if (tgemm::release_host_resources() != TGEMM_SUCCESS && o.error.empty())
            o.error = "pipelines not freed after revival";
    }
    if (o.error.empty() && o.status != TGEMM_SUCCESS && o.status != TGEMM_ERROR_CUDA &&
        o.status != TGEMM_ERROR_OUT_OF_MEMORY)
        o.error = "status " + std::to_string(static_cast<int>(o.status));
    return o;
}

// For each listed device, failures in each kind of call it makes (and its
// copies and kernels faulting as they run), one-off and sticky (its
// context breaks; the other devices keep working), at a random one of the
// calls of that kind a clean call made on it; beta 0 and 0.5, pageable and
// pinned C, the native API and the BLAS fallback's. Where the parts a
// failed worker leaves can go to the others (beta == 0, pageable C, or
// `left`), the call succeeds with C exact unless every worker's device
// broke or it failed before any block started (its own checks and the wait
// for the caller's stream run on the home device); else (pinned C, beta !=
// 0, native) it may fail, each element of C its result or its original
// value. Then every device breaking at once, at a kernel or a copy in the
// first half of the call: the call fails, and with `left` the parts in it
// hold their original contents and the rest of C its result.
void test_spread_faults(void **)
{
    std::mt19937_64 rng(4200);
    static const int kinds[] = {mock::Copy,      mock::Launch, mock::Record, mock::Wait,   mock::EventSync,
                                mock::StreamSync, mock::Alloc,  mock::Create, mock::Query,  mock::Free,
                                mock::Destroy,   mock::RunKernel, mock::RunCopy};
    tgemm::set_host_plan_sizes(32, 32, 32);
    set_budget(uint64_t{1} << 20);
    int64_t injected = 0, struck = 0, taken_over = 0, all_failed = 0;
    int64_t failed_early = 0, failed_all_broken = 0, failed_native = 0;
    for (int variant = 0; variant < 8; ++variant) {
        Problem p;
        p.m = 130;
        p.n = 100;
        p.k = 96;
        p.ta = rng() & 1;
        p.tb = rng() & 1;
        p.beta = variant & 1 ? 0.5f : 0.0f;
        p.ka = MemKind::Pageable;
        p.kb = MemKind::Pinned;
        p.kc = variant & 2 ? MemKind::Pinned : MemKind::Pageable;
        p.pad_a = 1;
        p.pad_b = 2;
        p.pad_c = 3;
        const bool with_left = variant & 4;
        const bool recoverable = with_left || p.beta == 0.0f || p.kc == MemKind::Pageable;
        const Data data = make_data(p, rng);
        const std::vector<float> want = expected(p, data);
        assert_true(expected_plan(p, home_of(0)).workers == static_cast<int>(g_workers.size()));
        char what[160];
        for (const int dev : listed_devices()) {
            // The calls of a warm call (the pipelines made by the first).
            for (int i = 0; i < 2; ++i) {
                const SpreadOutcome clean = spread_with_fault(p, data, want, with_left, mock::Fault());
                if (clean.status != TGEMM_SUCCESS || !clean.error.empty())
                    fail_msg("variant %d: clean call: status %d, %s", variant, (int)clean.status,
                             clean.error.c_str());
            }
            int64_t counts[mock::kCalls];
            {
                std::lock_guard<std::mutex> lk(mu);
                std::copy(mock::calls_on[dev], mock::calls_on[dev] + mock::kCalls, counts);
            }
            for (const int kind : kinds)
                for (const bool sticky : {false, true}) {
                    // A one-off failure of cudaStreamDestroy leaves the
                    // mock's stream alive, which no one destroys again (a
                    // leak LeakSanitizer reports; CUDA has none).
                    if (counts[kind] == 0 ||
                        (!sticky && (kind == mock::RunKernel || kind == mock::RunCopy || kind == mock::Destroy)))
                        continue;
                    // Calls are handed out as workers come for them, so a
                    // device may make fewer calls than in the clean call, or
                    // none of a kind when the others took all the work: a
                    // failure that did not strike is tried again earlier,
                    // then at the device's first call of the kind, until it
                    // strikes (a few tries: each call hands work out anew).
                    mock::Fault f{kind, static_cast<int64_t>(rng() % counts[kind]), sticky};
                    f.device = dev;
                    SpreadOutcome o = spread_with_fault(p, data, want, with_left, f);
                    for (int again = 0; again < 9 && !o.fired && o.error.empty(); ++again) {
                        f.at = again < 3 ? f.at / 2 : 0;
                        o = spread_with_fault(p, data, want, with_left, f);
                    }
                    std::snprintf(what, sizeof what, "%s C, beta %g%s: %s %s failure at call %lld of %lld on device %d",
                                  p.kc == MemKind::Pinned ? "pinned" : "pageable", (double)p.beta,
                                  with_left ? ", left" : "", sticky ? "sticky" : "one-off", mock::kCallNames[kind],
                                  (long long)f.at, (long long)counts[kind], dev);
                    if (!o.error.empty())
                        fail_msg("%s: status %d, %s", what, (int)o.status, o.error.c_str());
                    if (o.status != TGEMM_SUCCESS && recoverable && o.started && !o.all_broken)
                        fail_msg("%s: status %d (%s), though other workers could take its parts over", what,
                                 (int)o.status, tgemm_last_error_detail());
                    ++injected;
                    struck += o.fired;
                    taken_over += o.fired && o.status == TGEMM_SUCCESS;
                    if (o.status != TGEMM_SUCCESS)
                        ++(!o.started ? failed_early : o.all_broken ? failed_all_broken : failed_native);
                }
        }
        // Every device breaks at once, early in the call.
        for (const int kind : {mock::RunKernel, mock::RunCopy}) {
            const SpreadOutcome clean = spread_with_fault(p, data, want, with_left, mock::Fault());
            if (clean.status != TGEMM_SUCCESS || !clean.error.empty())
                fail_msg("variant %d: clean call: status %d, %s", variant, (int)clean.status, clean.error.c_str());
            int64_t total = 0;
            {
                std::lock_guard<std::mutex> lk(mu);
                total = mock::calls[kind];
            }
            mock::Fault f{kind, static_cast<int64_t>(rng() % (total / 2)), true};
            f.device = mock::kAllDevices;
            const SpreadOutcome o = spread_with_fault(p, data, want, with_left, f);
            std::snprintf(what, sizeof what, "%s C, beta %g%s: every device breaks at %s %lld of %lld",
                          p.kc == MemKind::Pinned ? "pinned" : "pageable", (double)p.beta, with_left ? ", left" : "",
                          mock::kCallNames[kind], (long long)f.at, (long long)total);
            if (!o.error.empty() || !o.fired || o.status == TGEMM_SUCCESS)
                fail_msg("%s: status %d, %s", what, (int)o.status,
                         !o.fired ? "the failure never struck" : o.error.empty() ? "success" : o.error.c_str());
            ++all_failed;
        }
    }
    tgemm::set_host_plan_sizes(0, 0, 0);
    set_budget(uint64_t{80} << 30);
    check_mock_invariants();
    std::printf("    %lld failures injected on one device, %lld struck: %lld calls succeeded, failed %lld before "
                "any block started, %lld with every worker's device broken, %lld with pinned C, beta != 0 "
                "(native); %lld with every device breaking\n",
                (long long)injected, (long long)struck, (long long)taken_over, (long long)failed_early,
                (long long)failed_all_broken, (long long)failed_native, (long long)all_failed);
    assert_true(struck * 20 > injected * 19);
    assert_true(taken_over * 4 > struck);
}

// Blocks that share panels (pinned A and B, resident plans, one block per
// worker): random sizes, transposes, padding and alpha, C not read (beta 0,
// or C on the device): exact results, panels copied between workers
// (unless TGEMM_SPREAD_PEER=0). Then failures of each kind, one-off and
// sticky, on each listed device at a random one of its calls: C as the
// contract says (spread_with_fault), and a worker whose device breaks after
// publishing its panels never feeds another a panel it did not load.
void test_spread_share(void **)
{
    std::mt19937_64 rng(4300);
    tgemm::set_host_plan_sizes(32, 32, 32);
    set_budget(uint64_t{1} << 20);
    const int copies0 = mock::peer_copies;
    const auto problem = [&] {
        Problem p;
        p.m = 64 + static_cast<int64_t>(rng() % 140);
        p.n = 64 + static_cast<int64_t>(rng() % 140);
        p.k = 160 + static_cast<int64_t>(rng() % 100);
        p.ta = rng() & 1;
        p.tb = rng() & 1;
        p.alpha = rng() & 1 ? 1.0f : -0.5f;
        p.ka = p.kb = MemKind::Pinned;
        const int c = static_cast<int>(rng() % 3);
        p.kc = c == 0 ? MemKind::Pinned : c == 1 ? MemKind::Pageable : MemKind::Device;
        p.beta = p.kc == MemKind::Device && (rng() & 1) ? 1.0f : 0.0f;
        p.pad_a = static_cast<int64_t>(rng() % 3);
        p.pad_b = static_cast<int64_t>(rng() % 3);
        p.pad_c = static_cast<int64_t>(rng() % 3);
        return p;
    };
    int spread = 0;
    for (int i = 0; i < 40; ++i) {
        const Problem p = problem();
        Data d = make_data(p, rng);
        const tgemm::SpreadPlan plan = expected_plan(p, home_of(0));
        const tgemm_status st = spread_call(p, d, nullptr);
        if (st != TGEMM_SUCCESS)
            fail_msg("call %d: status %d: %s", i, (int)st, tgemm_last_error_detail());
        const std::string err = verify(p, d);
        if (!err.empty())
            fail_msg("call %d (%lldx%lldx%lld): %s", i, (long long)p.m, (long long)p.n, (long long)p.k, err.c_str());
        spread += plan.workers > 1;
    }
    const int copied = mock::peer_copies - copies0;
    std::printf("    %d of 40 calls spread, %d panels copied from another worker's memory\n", spread, copied);
    assert_true(spread > 30);
    if (tgemm::settings().spread_peer)
        assert_true(copied > spread);
    else
        assert_int_equal(copied, 0);

    static const int kinds[] = {mock::Copy,       mock::Launch, mock::Record, mock::Wait,      mock::EventSync,
                                mock::StreamSync, mock::Alloc,  mock::Query,  mock::RunKernel, mock::RunCopy};
    int64_t injected = 0, struck = 0, taken_over = 0;
    for (int variant = 0; variant < 4; ++variant) {
        Problem p = problem();
        p.kc = variant & 1 ? MemKind::Pinned : MemKind::Pageable;
        p.beta = 0.0f;
        const bool with_left = variant & 2;
        const Data data = make_data(p, rng);
        const std::vector<float> want = expected(p, data);
        for (const int dev : listed_devices()) {
            int64_t counts[mock::kCalls];
            for (int i = 0; i < 2; ++i) {
                const SpreadOutcome clean = spread_with_fault(p, data, want, with_left, mock::Fault());
                if (clean.status != TGEMM_SUCCESS || !clean.error.empty())
                    fail_msg("variant %d: clean call: status %d, %s", variant, (int)clean.status, clean.error.c_str());
            }
            {
                std::lock_guard<std::mutex> lk(mu);
                std::copy(mock::calls_on[dev], mock::calls_on[dev] + mock::kCalls, counts);
            }
            for (const int kind : kinds)
                for (const bool sticky : {false, true}) {
                    if (counts[kind] == 0 || (!sticky && (kind == mock::RunKernel || kind == mock::RunCopy)))
                        continue;
                    mock::Fault f{kind, static_cast<int64_t>(rng() % counts[kind]), sticky};
                    f.device = dev;
                    const SpreadOutcome o = spread_with_fault(p, data, want, with_left, f);
                    if (!o.error.empty())
                        fail_msg("variant %d: %s %s failure at call %lld of %lld on device %d: status %d, %s", variant,
                                 sticky ? "sticky" : "one-off", mock::kCallNames[kind], (long long)f.at,
                                 (long long)counts[kind], dev, (int)o.status, o.error.c_str());
                    // beta == 0: the others take a failed worker's parts over.
                    if (o.status != TGEMM_SUCCESS && o.started && !o.all_broken)
                        fail_msg("variant %d: %s %s failure on device %d: status %d (%s)", variant,
                                 sticky ? "sticky" : "one-off", mock::kCallNames[kind], dev, (int)o.status,
                                 tgemm_last_error_detail());
                    ++injected;
                    struck += o.fired;
                    taken_over += o.fired && o.status == TGEMM_SUCCESS;
                }
        }
    }
    tgemm::set_host_plan_sizes(0, 0, 0);
    set_budget(uint64_t{80} << 30);
    check_mock_invariants();
    std::printf("    %lld failures injected, %lld struck, %lld calls finished by the other workers\n",
                (long long)injected, (long long)struck, (long long)taken_over);
    assert_true(struck * 10 > injected * 8);
}

// Threads call at once (each with a current device of its own), with more
// workers than a device has pipelines: all exact, none waits forever (the
// alarm). Then, where two devices are listed, the last one breaks while
// they run (every thread's current device the first listed): the calls
// whose parts can go to other workers still succeed.
void test_spread_threads(void **)
{
    tgemm::set_host_plan_sizes(32, 32, 32);
    set_budget(uint64_t{1} << 20);
    const std::vector<int> devs = listed_devices();
    for (int round = 0; round < 3; ++round) {
        const bool breaks = round == 2;
        if (breaks && (devs.size() < 2 || g_choose))
            break;
        if (breaks) {
            mock::Fault f{mock::RunKernel, 20, true};
            f.device = devs.back();
            mock::arm(f);
        }
        std::vector<std::thread> th;
        std::vector<std::string> errors(6);
        for (int t = 0; t < 6; ++t)
            th.emplace_back([t, round, breaks, &devs, &errors] {
                std::mt19937_64 rng(4300 + 100 * round + t);
                const int current = breaks ? devs.front() : t % kSpreadDevices;
                mock::set_current_device(current);
                for (int i = 0; i < 5 && errors[t].empty(); ++i) {
                    const Problem p = random_problem(rng, 160, true, false);
                    Data d = make_data(p, rng);
                    const std::vector<float> want = expected(p, d);
                    const bool with_left = rng() & 1;
                    std::vector<tgemm::Rect> left;
                    const tgemm_status st = spread_call(p, d, with_left ? &left : nullptr);
                    const bool recoverable = with_left || p.beta == 0.0f || p.kc == MemKind::Pageable;
                    errors[t] = check_outcome(p, d, st, with_left ? &left : nullptr, want);
                    if (errors[t].empty() && st != TGEMM_SUCCESS && (!breaks || recoverable))
                        errors[t] = "status " + std::to_string(static_cast<int>(st)) + ": " + tgemm_last_error_detail();
                    if (errors[t].empty() && mock::current_device() != current)
                        errors[t] = "the current device changed";
                    if (!errors[t].empty())
                        errors[t] = "call " + std::to_string(i) + " (" + std::to_string(p.m) + "x" +
                                    std::to_string(p.n) + "x" + std::to_string(p.k) + "): " + errors[t];
                }
            });
        for (std::thread &x : th)
            x.join();
        for (int t = 0; t < 6; ++t)
            if (!errors[t].empty())
                fail_msg("round %d, thread %d: %s", round, t, errors[t].c_str());
        if (breaks) {
            bool broke = false;
            {
                std::lock_guard<std::mutex> lk(mu);
                broke = mock::broken[devs.back()];
            }
            std::printf("    device %d %s while 6 threads called\n", devs.back(), broke ? "broke" : "did not break");
            assert_true(broke);
            mock::revive();
            assert_int_equal(tgemm::release_host_resources(), TGEMM_SUCCESS);
        }
    }
    tgemm::set_host_plan_sizes(0, 0, 0);
    set_budget(uint64_t{80} << 30);
    check_mock_invariants();
}

// Work queued before the call on the caller's stream, its own or the
// per-thread default stream, writes A and B (as a host function would): the
// workers read them only after it.
void test_spread_caller_stream(void **)
{
    std::mt19937_64 rng(4600);
    tgemm::set_host_plan_sizes(32, 32, 32);
    const cudaStream_t stream = new_stream();
    for (int i = 0; i < 4; ++i) {
        Problem p;
        p.m = 140;
        p.n = 110;
        p.k = 80;
        p.beta = 0.5f;
        p.ka = MemKind::Pinned;
        p.kc = i & 1 ? MemKind::Pinned : MemKind::Pageable;
        Data d = make_data(p, rng);
        assert_true(expected_plan(p, home_of(0)).workers > 1 || g_choose);
        const cudaStream_t s = i < 2 ? stream : cudaStreamPerThread;
        write_operands_on(s, d);
        {
            std::lock_guard<std::mutex> lk(mu);
            mock::kinds = {{d.A.data(), d.A.size() * 4, p.ka, -1}, {d.C.data(), d.C.size() * 4, p.kc, -1}};
        }
        const tgemm_status st = tgemm::execute(params(p, d), s, true);
        {
            std::lock_guard<std::mutex> lk(mu);
            mock::kinds.clear();
        }
        assert_int_equal(st, TGEMM_SUCCESS);
        check(p, d, "caller's stream");
    }
    cudaStreamDestroy(stream);
    tgemm::set_host_plan_sizes(0, 0, 0);
}

// Calls on device pointers stay on the device that owns them, whatever the
// calling thread's current device: C on device 1 with host A and B (the
// host-operand path on device 1), all three on device 2 (the kernels on
// device 2); operands on two devices, or on a device other than the
// current one with a stream of the caller's, fail with INVALID_DEVICE and
// C untouched.
void test_spread_device_pointers(void **)
{
    std::mt19937_64 rng(4400);
    tgemm::set_host_plan_sizes(32, 32, 32);
    Problem p;
    p.m = 150;
    p.n = 120;
    p.k = 90;
    p.beta = 0.5f;
    p.pad_c = 1;
    const auto ran_on = [](const Logs &logs, int dev) {
        for (const mock::Logged &l : logs.launches)
            if (l.device != dev)
                return false;
        for (const mock::Logged &l : logs.budget)
            if (l.device != dev)
                return false;
        return !logs.launches.empty();
    };
    struct Case {
        MemKind ka, kb;
        int dev_a, dev_b, dev_c, current;
        int runs_on;  // -1: fails with INVALID_DEVICE
    };
    const MemKind pg = MemKind::Pageable, pn = MemKind::Pinned, dv = MemKind::Device;
    const Case cases[] = {
        {pg, pg, -1, -1, 1, 0, 1}, {pn, pg, -1, -1, 1, 2, 1}, {dv, dv, 2, 2, 2, 0, 2},
        {dv, pg, 2, -1, 1, 0, -1}, {dv, dv, 0, 1, 2, 1, -1},
    };
    for (const Case &c : cases) {
        Problem q = p;
        q.ka = c.ka;
        q.kb = c.kb;
        q.kc = dv;
        Data d = make_data(q, rng);
        mock::set_current_device(c.current);
        take_logs();
        const tgemm_status st = spread_call(q, d, nullptr, c.dev_a, c.dev_b, c.dev_c);
        const Logs logs = take_logs();
        assert_int_equal(mock::current_device(), c.current);
        if (c.runs_on < 0) {
            assert_int_equal(st, TGEMM_ERROR_INVALID_DEVICE);
            assert_true(logs.launches.empty() && logs.budget.empty());
            assert_memory_equal(d.C.data(), d.C0.data(), d.C.size() * 4);
            continue;
        }
        if (st != TGEMM_SUCCESS)
            fail_msg("C on device %d: status %d: %s", c.dev_c, (int)st, tgemm_last_error_detail());
        check(q, d, "device C");
        if (!ran_on(logs, c.runs_on))
            fail_msg("C on device %d, current device %d: not all of the call ran on device %d", c.dev_c, c.current,
                     c.runs_on);
    }
    // With a stream of its own the call runs on the current device, which
    // does not own C.
    mock::set_current_device(0);
    const cudaStream_t stream = new_stream();
    Problem q = p;
    q.kc = dv;
    Data d = make_data(q, rng);
    {
        std::lock_guard<std::mutex> lk(mu);
        mock::kinds = {{d.C.data(), d.C.size() * 4, dv, 1}};
    }
    assert_int_equal(tgemm::execute(params(q, d), stream, true), TGEMM_ERROR_INVALID_DEVICE);
    {
        std::lock_guard<std::mutex> lk(mu);
        mock::kinds.clear();
    }
    assert_memory_equal(d.C.data(), d.C0.data(), d.C.size() * 4);
    cudaStreamDestroy(stream);
    tgemm::set_host_plan_sizes(0, 0, 0);
    check_mock_invariants();
}

// TGEMM_DEVICES lists a device the mock does not have: every call fails
// with INVALID_DEVICE, saying so, C untouched.
void test_spread_invalid(void **)
{
    std::mt19937_64 rng(4500);
    for (int i = 0; i < 2; ++i) {
        Problem p;
        p.m = 70;
        p.n = 60;
        p.k = 50;
        p.beta = 1.0f;
        p.kc = i ? MemKind::Pinned : MemKind::Pageable;
        Data d = make_data(p, rng);
        assert_int_equal(spread_call(p, d, nullptr), TGEMM_ERROR_INVALID_DEVICE);
        assert_non_null(std::strstr(tgemm_last_error_detail(), "TGEMM_DEVICES lists device"));
        assert_memory_equal(d.C.data(), d.C0.data(), d.C.size() * sizeof(float));
    }
}

}  // namespace

int main(int argc, char **argv)
{
    const std::string scenario = argc > 1 ? argv[1] : "";
    if (scenario == "trace") {
        const CMUnitTest tests[] = {cmocka_unit_test(test_trace_file)};
        return cmocka_run_group_tests_name("tgemm_host_mock trace", tests, nullptr, nullptr) ? 1 : 0;
    }
    if (scenario == "bad-trace") {
        const CMUnitTest tests[] = {cmocka_unit_test(test_bad_trace_file)};
        return cmocka_run_group_tests_name("tgemm_host_mock bad-trace", tests, nullptr, nullptr) ? 1 : 0;
    }
    if (!scenario.empty() && scenario != "faults" && scenario != "spread") {
        std::fprintf(stderr, "usage: test_host_mock [trace | bad-trace | faults | spread]; without one or with "
                             "faults or spread, TGEMM_HOST_TRACE unset; spread with TGEMM_DEVICES set\n");
        return 2;
    }
    if (std::getenv("TGEMM_HOST_TRACE") != nullptr) {
        std::fprintf(stderr, "test_host_mock: TGEMM_HOST_TRACE is set\n");
        return 2;
    }
    const char *devices = std::getenv("TGEMM_DEVICES");
    if ((scenario == "spread") != (devices != nullptr && *devices != 0) || std::getenv("TGEMM_DEVICE") != nullptr) {
        std::fprintf(stderr, "test_host_mock: TGEMM_DEVICES must be set for spread only, TGEMM_DEVICE never\n");
        return 2;
    }
    if (scenario == "spread") {
        // kSpreadDevices mock devices; the workers TGEMM_DEVICES lists.
        mock::device_count = kSpreadDevices;
        bool invalid = false;
        if (std::strcmp(devices, "all") == 0 || std::strcmp(devices, "auto") == 0) {
            for (int d = 0; d < kSpreadDevices; ++d)
                g_workers.push_back(d);
            g_choose = std::strcmp(devices, "auto") == 0;
        } else {
            for (const char *s = devices; *s != 0;) {
                char *end = nullptr;
                g_workers.push_back(static_cast<int>(std::strtol(s, &end, 10)));
                invalid = invalid || g_workers.back() >= kSpreadDevices;
                s = *end == ',' ? end + 1 : end;
            }
        }
        tgemm::set_spread_min_side(32);
        alarm(600);
        if (invalid) {
            const CMUnitTest tests[] = {cmocka_unit_test_teardown(test_spread_invalid, spread_reset)};
            return cmocka_run_group_tests_name("tgemm_host_mock spread (invalid)", tests, nullptr, nullptr) ? 1 : 0;
        }
        if (tgemm::settings().spread_rows > 0) {
            // TGEMM_SPREAD_GRID: the grid forced on every spread call.
            const CMUnitTest tests[] = {cmocka_unit_test_teardown(test_spread_random, spread_reset),
                                        cmocka_unit_test_teardown(test_spread_threads, spread_reset)};
            return cmocka_run_group_tests_name("tgemm_host_mock spread (grid)", tests, nullptr, nullptr) ? 1 : 0;
        }
        if (g_choose) {
            // auto: these products are too small to pay for spreading.
            const CMUnitTest tests[] = {cmocka_unit_test_teardown(test_spread_random, spread_reset), cmocka_unit_test_teardown(test_spread_threads, spread_reset),
                                        cmocka_unit_test_teardown(test_spread_caller_stream, spread_reset),
                                        cmocka_unit_test_teardown(test_spread_device_pointers, spread_reset)};
            return cmocka_run_group_tests_name("tgemm_host_mock spread (auto)", tests, nullptr, nullptr) ? 1 : 0;
        }
        const CMUnitTest tests[] = {cmocka_unit_test_teardown(test_spread_random, spread_reset), cmocka_unit_test_teardown(test_spread_out_of_core, spread_reset),
                                    cmocka_unit_test_teardown(test_spread_faults, spread_reset),
                                    cmocka_unit_test_teardown(test_spread_share, spread_reset),
                                    cmocka_unit_test_teardown(test_spread_threads, spread_reset),
                                    cmocka_unit_test_teardown(test_spread_caller_stream, spread_reset),
                                    cmocka_unit_test_teardown(test_spread_device_pointers, spread_reset)};
        return cmocka_run_group_tests_name("tgemm_host_mock spread", tests, nullptr, nullptr) ? 1 : 0;
    }
    if (scenario == "faults") {
        // A call that waits forever for a pipeline fails the test.
        alarm(900);
        const CMUnitTest tests[] = {cmocka_unit_test(test_broken_pipeline_replaced),
                                    cmocka_unit_test(test_fault_injection), cmocka_unit_test(test_fault_threads)};
        return cmocka_run_group_tests_name("tgemm_host_mock faults", tests, nullptr, nullptr) ? 1 : 0;
    }
    const CMUnitTest tests[] = {
        cmocka_unit_test(test_random_calls),  cmocka_unit_test(test_random_small_plans),
        cmocka_unit_test(test_pieces),        cmocka_unit_test(test_small_max_pitch),
        cmocka_unit_test(test_allocation_retry), cmocka_unit_test(test_launch_failure),
        cmocka_unit_test(test_caller_stream), cmocka_unit_test(test_threads),
        cmocka_unit_test(test_no_trace_cost), cmocka_unit_test(test_release),
        cmocka_unit_test(test_calls_reuse_events),
        cmocka_unit_test(test_math_per_call),
    };
    return cmocka_run_group_tests_name("tgemm_host_mock", tests, nullptr, nullptr) ? 1 : 0;
}
