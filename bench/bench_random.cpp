// bench_random: tgemm against cuBLAS on problems drawn at random from a
// seed (issue 27): the shapes users bring, not the suite's.
//
//   bench_random [--seed N] [--count N] [--csv PATH] [--reps N] [--time-budget SECONDS] [--plans]
//                [--math-compare] [--large] [--shapes FILE]
//
// The problems: `count` (default 100) from bench/random_shapes.hpp for the
// seed: m, n, k log-uniform over 1 to 20,000 with tile edges oversampled,
// every transpose pair, leading dimensions padded by nothing or by 1 to 64,
// alpha/beta 1/0, -1/1 or both drawn, within caps on flops and bytes. The
// seed is the first line of standard output; without --seed it is a fresh
// one (/dev/urandom, else the clock), so that every run can be repeated.
//
// Each problem, on device pointers, column-major:
//  - Operands: a "set" is one allocation holding A, B and C with the
//    problem's leading dimensions, each at a 256-byte offset (the
//    alignment cudaMalloc gives). Values uniform in (-1, 1) from mt19937
//    seeded with {seed's low and high 32 bits, index}, in the order A, B,
//    C0; the padding rows of all three hold the NaN 0x7FC0DEAD.
//  - Check, before any timing: tgemm, cuBLAS in its default math mode and
//    cuBLAS in pedantic math mode each run once on C = C0, and each C is
//    compared element by element with an FP64 reference,
//    |C - R| <= gamma_{K+2} (|alpha| |op(A)| |op(B)| + |beta| |C0|)
//    (bench/gemm_check.hpp; R and |op(A)| |op(B)| from
//    bench/gemm_reference.hpp on the device, the beta terms added on the
//    host). C's padding must come back bit for bit, and tgemm must leave A
//    and B as they were. A tgemm failure is printed with the shape and its
//    worst element, the run goes on, and the exit status is 1 at the end;
//    a cuBLAS failure is a warning.
//  - Timing, of tgemm_sgemm_ex on a stream and cublasSgemm_v2 on two
//    handles (CUBLAS_DEFAULT_MATH and CUBLAS_PEDANTIC_MATH), in two L2
//    conditions: hot, every call on set 0, back to back; cold, every call
//    on operands that are not in L2 (how: see cold_plan below). Warm-up
//    calls first; then rounds of one call (or one batch) per library, the
//    first library of each round taking turns; the median of the rounds.
//    A shape whose fastest library takes under kWallBelowUs per call (warm-
//    up, event-timed) is timed by the wall clock of batches of back-to-back
//    calls with one synchronisation after them, so that the host's launch
//    cost counts as a user sees it; others by CUDA events around each call.
//    ratio = min(default, pedantic) / tgemm: above 1, tgemm is faster.
//  - Time: each shape's timed rounds get half of what is left of the time
//    budget (--time-budget, default 1.5 s a problem) divided among the
//    problems still to come, and the rounds are cut to fit, to kMinReps
//    at the fewest: the largest problems get fewer rounds, none is skipped.
//  - C's padding, of every set, is checked again after timing.
//  - One CSV row (columns: kCsvHeader); one line on standard output.
// At the end: for all problems and for ordinary products (m, n > 16,
// K > 64), in each L2 condition, the count, geometric mean, 5th
// percentile, median and minimum of the ratios; the memory-bound problems
// (K <= 32 or min(m, n) <= 16) whose floor is at least 10 us: how many run
// within 1.3x their floor (cold) and how many slower than cuBLAS; the 15
// worst problems by the smaller of their two ratios. The floor is the
// larger of the bytes that must move / 2.88 TB/s and flops / 66.9 TFLOP/s
// (bench/random_shapes.hpp). bench/random_report.py reads the CSV files of
// several seeds and reports the same, with plots.
//
// --math-compare (issue 28): tgemm is also called in the fp32-tc math
// (tgemm_set_math before each call, strict for the others), as a fourth
// library in the same rounds: checked against the same bound (contract (a)
// of the mode, which is strict's), timed in both L2 conditions; per problem
// speedup = strict / fp32-tc, and whether the mode ran (its C differs from
// strict's: where it declines, the strict path computes the call, bit for
// bit). Strict is also timed a second time in each round (strict again,
// its C checked equal to the first's bit for bit): how far apart two
// timings of the same call fall, against which a 2% difference between
// the maths is read. And round by round (bench/paired.hpp): each round's
// fp32-tc time and strict-again time over that round's strict time, the
// median and its 95% interval (the sign test's order statistics; none
// under 6 rounds), so that what drifts from round to round cancels; a
// problem is slower by more than 2% there where the interval lies wholly
// above 1/0.98. The summary gives the speedup's distribution, the
// problems the mode ran, those slower than strict by more than 2% by the
// medians and round by round, and the same for strict again.
//
// --large: the problems of bench/random_shapes.hpp's large_limits() (every
// dimension 2,048 to 20,000, up to 2.2e12 flops), around and above the
// sizes from which the fp32-tc math runs.
//
// --shapes FILE: the problems of FILE, one a line ("m n k ta tb lda ldb ldc
// alpha beta", '#' to the end of a line ignored), instead of drawn ones:
// the worst of a run replayed, or one product in several layouts. The
// seed still draws the inputs; --count and --large do not apply.
//
// --plans: for each problem, set 0 allocated as above (zeros, padding
// included), a line "== shape INDEX m=.. n=.. k=.. TATB lda=.. ldb=..
// ldc=.. alpha=.. beta=.." on standard error, one tgemm call, nothing
// else: under TGEMM_VERBOSE=2 the library's plan lines ("tgemm: device
// plan ...", src/dispatch/describe.cpp) follow each marker. Standard
// error starts with "== seed SEED count COUNT".
//
// Exit status: 0; 1 on any CUDA, tgemm or cuBLAS error (at once, with a
// message) or when a tgemm result failed its check (at the end); 2 for bad
// arguments. cuBLAS is loaded at run time (bench_support.cpp); without it
// tgemm alone is timed and the ratio columns are n/a.
#include "bench.hpp"
#include "paired.hpp"
#include "random_shapes.hpp"

#include <algorithm>
#include <cinttypes>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <utility>

using namespace bench;

namespace {

enum Lib { kTgemm, kDefault, kPedantic, kTgemmTc, kTgemmAgain, kLibs };
const char *const kLibName[kLibs] = {"tgemm", "cuBLAS default", "cuBLAS pedantic", "tgemm fp32-tc",
                                     "tgemm strict again"};
enum Cond { kHot, kCold, kConds };
const char *const kCondName[kConds] = {"hot", "cold"};

constexpr uint32_t kPoison = 0x7FC0DEADu;      // the padding's NaN
constexpr double kWallBelowUs = 20.0;          // below: wall time of batches
constexpr int kWarmupRounds = 3;               // hot, untimed but for the timing decision
constexpr int kMinReps = 3;
constexpr double kSecondsPerShape = 1.5;       // default budget: 100 problems in 2.5 minutes
constexpr size_t kFreshBytes = size_t(256) << 20;  // at most, for the fresh sets of a cold batch
constexpr int kWorst = 15;
constexpr double kTcSlower = 0.98;             // issue 28: never slower than strict by more than 2%

const char *const kCsvHeader =
    "seed,index,m,n,k,ta,tb,lda,ldb,ldc,alpha,beta,ab_class,flops,floor_us,membound,tgemm_hot_us,"
    "cublas_def_hot_us,cublas_ped_hot_us,ratio_hot,tgemm_cold_us,cublas_def_cold_us,cublas_ped_cold_us,"
    "ratio_cold,max_err_over_bound_tgemm,max_err_over_bound_cublas,pad_ok,timing,cold,reps,"
    "tc_hot_us,tc_cold_us,tc_speedup_hot,tc_speedup_cold,tc_ran,max_err_over_bound_tc,again_hot_us,again_cold_us,"
    "again_speedup_hot,again_speedup_cold,tc_paired_hot,tc_paired_hot_lo,tc_paired_hot_hi,tc_paired_cold,"
    "tc_paired_cold_lo,tc_paired_cold_hi,again_paired_hot,again_paired_hot_lo,again_paired_hot_hi,again_paired_cold,"
    "again_paired_cold_lo,again_paired_cold_hi";

// ------------------------------------------------------------------ operands

// Where A, B and C lie in a set: byte offsets, 256-byte multiples.
struct Layout {
    size_t nA, nB, nC;  // elements as stored, padding included
    size_t off_b, off_c, bytes;
};

size_t round256(size_t b)
{
    return (b + 255) / 256 * 256;
}

Layout layout_of(const RandomShape &s)
{
    Layout l;
    l.nA = static_cast<size_t>(s.lda * (s.ta == 'N' ? s.k : s.m));
    l.nB = static_cast<size_t>(s.ldb * (s.tb == 'N' ? s.n : s.k));
    l.nC = static_cast<size_t>(s.ldc * s.n);
    l.off_b = round256(l.nA * sizeof(float));
    l.off_c = l.off_b + round256(l.nB * sizeof(float));
    l.bytes = l.off_c + round256(l.nC * sizeof(float));
    return l;
}

// A set's operands (bench::Set; its writer is not used here).
Set set_at(char *base, const Layout &l)
{
    Set st;
    st.A = reinterpret_cast<float *>(base);
    st.B = reinterpret_cast<float *>(base + l.off_b);
    st.C = reinterpret_cast<float *>(base + l.off_c);
    return st;
}

float poison()
{
    float f;
    std::memcpy(&f, &kPoison, sizeof f);
    return f;
}

bool is_poison(float f)
{
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u == kPoison;
}

// rows x cols, leading dimension ld: values uniform in (-1, 1), the
// padding rows poisoned.
std::vector<float> random_matrix(int64_t rows, int64_t cols, int64_t ld, std::mt19937 &rng)
{
    std::vector<float> h(static_cast<size_t>(ld * cols));
    for (int64_t j = 0; j < cols; ++j)
        for (int64_t i = 0; i < ld; ++i)
            h[static_cast<size_t>(i + j * ld)] = i < rows ? uniform_pm1(rng) : poison();
    return h;
}

// Rows m to ldc - 1 of every column of C (device memory): all still the poison?
bool padding_intact(const RandomShape &s, const float *C, cudaStream_t stream)
{
    if (s.ldc == s.m)
        return true;
    const size_t rows = static_cast<size_t>(s.ldc - s.m);
    std::vector<float> pad(rows * static_cast<size_t>(s.n));
    CUDA_CHECK(cudaMemcpy2DAsync(pad.data(), rows * sizeof(float), C + s.m, static_cast<size_t>(s.ldc) * sizeof(float),
                                 rows * sizeof(float), static_cast<size_t>(s.n), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return std::all_of(pad.begin(), pad.end(), is_poison);
}

// ------------------------------------------------------------------ the run

struct Row {
    RandomShape s;
    int index = 0;
    double us[kConds][kLibs] = {};  // 0: not measured
    double err_tgemm = 0, err_cublas = 0, err_tc = 0;
    bool tc_ran = false;  // the fp32-tc call's C differs from strict's
    bool pad_ok = true;
    bool wall = false;
    std::string cold;
    int reps = 0;
    // --math-compare: fp32-tc's and strict again's time over strict's, round
    // by round (paired.hpp): the median and its 95% interval.
    PairedRatio tc_paired[kConds], again_paired[kConds];

    double ratio(int c) const
    {
        const double best = std::min(us[c][kDefault], us[c][kPedantic]);
        return best > 0 && us[c][kTgemm] > 0 ? best / us[c][kTgemm] : 0.0;
    }
    // strict / fp32-tc; 0 without --math-compare.
    double tc_speedup(int c) const { return speedup(c, kTgemmTc); }
    // strict / strict again, the same call timed twice in each round: how
    // far apart two timings of one code path fall (--math-compare).
    double again_speedup(int c) const { return speedup(c, kTgemmAgain); }
    double speedup(int c, int lib) const
    {
        return us[c][kTgemm] > 0 && us[c][lib] > 0 ? us[c][kTgemm] / us[c][lib] : 0.0;
    }
};

struct Run {
    Ctx ctx;
    uint64_t seed = 0;
    int reps = 9;
    double deadline_us = 0;
    FILE *csv = nullptr;
    std::string csv_path;
    std::vector<Row> rows;
    std::vector<int> failed;  // indices whose tgemm result failed a check
    std::vector<int> libs{kTgemm};  // the libraries timed, tgemm (strict) first
    bool cublas = false;
    bool compare = false;           // --math-compare: kTgemmTc and kTgemmAgain among them
};

std::string describe_shape(const RandomShape &s)
{
    char buf[160];
    std::snprintf(buf, sizeof buf, "%" PRId64 " x %" PRId64 " x %" PRId64 " %c%c lda %" PRId64 " ldb %" PRId64
                  " ldc %" PRId64 " alpha %.6g beta %.6g", s.m, s.n, s.k, s.ta, s.tb, s.lda, s.ldb, s.ldc,
                  static_cast<double>(s.alpha), static_cast<double>(s.beta));
    return buf;
}

void call(Run &run, const RandomShape &s, int lib, const Set &st)
{
    Ctx &ctx = run.ctx;
    if (lib == kTgemm || lib == kTgemmTc || lib == kTgemmAgain) {
        if (run.compare)
            tgemm_check(tgemm_set_math(lib == kTgemmTc ? TGEMM_MATH_FP32_TC : TGEMM_MATH_STRICT), "tgemm_set_math");
        // The message only on failure: a timed batch must not pay for it.
        const tgemm_status status = tgemm_sgemm_ex(TGEMM_LAYOUT_COL_MAJOR, tg_op(s.ta), tg_op(s.tb), s.m, s.n, s.k,
                                                   s.alpha, st.A, s.lda, st.B, s.ldb, s.beta, st.C, s.ldc, ctx.stream);
        if (status != TGEMM_SUCCESS)
            tgemm_check(status, describe_shape(s).c_str());
        return;
    }
    const int status = ctx.cb.sgemm(lib == kDefault ? ctx.cb.handle : ctx.cb.pedantic, cb_op(s.ta), cb_op(s.tb),
                                    static_cast<int>(s.m), static_cast<int>(s.n), static_cast<int>(s.k), &s.alpha,
                                    st.A, static_cast<int>(s.lda), st.B, static_cast<int>(s.ldb), &s.beta, st.C,
                                    static_cast<int>(s.ldc));
    if (status != CUBLAS_STATUS_SUCCESS_)
        die("cublasSgemm_v2 (%s) failed with cuBLAS status %d on %s", kLibName[lib], status,
            describe_shape(s).c_str());
}

void sync(Ctx &ctx)
{
    CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    CUDA_CHECK(cudaGetLastError());
}

// Each library once on set 0 with C = C0, against the reference; the
// padding of C, and for tgemm A and B, as they were. Fills the row's
// errors, pad_ok and tc_ran; records a tgemm failure in run.failed.
void check_all(Run &run, const RandomShape &s, const Shape &sh, const Set &st, const Layout &l,
               const std::vector<float> &hA, const std::vector<float> &hB, const std::vector<float> &hC0, Row &row)
{
    Ctx &ctx = run.ctx;
    Reference ref = make_reference(sh, st.A, s.lda, st.B, s.ldb, s.alpha, ctx);
    gemm_check::add_beta_term(s.m, s.n, s.beta, hC0.data(), s.ldc, ref.ref.get(), ref.mag.get(), s.m);
    std::vector<float> hC, back, strict_c;
    bool seen[kLibs] = {};
    for (const int lib : run.libs) {
        if (std::exchange(seen[lib], true))
            continue;  // a library timed twice a round is checked once
        CUDA_CHECK(cudaMemcpyAsync(st.C, hC0.data(), l.nC * sizeof(float), cudaMemcpyHostToDevice, ctx.stream));
        call(run, s, lib, st);
        sync(ctx);
        copy_to_host(hC, st.C, l.nC);
        const gemm_check::Report rep = compare_output(sh, ref, hC.data(), s.ldc);
        bool pad = true;
        for (int64_t j = 0; j < s.n && pad; ++j)
            for (int64_t i = s.m; i < s.ldc && pad; ++i)
                pad = is_poison(hC[static_cast<size_t>(i + j * s.ldc)]);
        std::string what;
        if (!rep.passed())
            what = "outside the FP32 bound: " + gemm_check::describe(rep);
        if (!pad)
            what += std::string(what.empty() ? "" : "; ") + "C's padding rows changed";
        const bool ours = lib == kTgemm || lib == kTgemmTc || lib == kTgemmAgain;
        if (ours) {
            // A changed operand is put back, so that cuBLAS is judged on the inputs of the reference.
            const std::pair<const float *, const std::vector<float> *> operands[] = {{st.A, &hA}, {st.B, &hB}};
            for (const auto &[dev, host] : operands) {
                copy_to_host(back, dev, host->size());
                if (std::memcmp(back.data(), host->data(), host->size() * sizeof(float)) == 0)
                    continue;
                what += std::string(what.empty() ? "" : "; ") + (dev == st.A ? "A changed" : "B changed");
                CUDA_CHECK(cudaMemcpyAsync(const_cast<float *>(dev), host->data(), host->size() * sizeof(float),
                                           cudaMemcpyHostToDevice, ctx.stream));
            }
            if (lib == kTgemm) {
                row.err_tgemm = rep.worst;
                strict_c = hC;
            } else if (lib == kTgemmAgain) {
                // The strict path is bitwise reproducible.
                if (std::memcmp(hC.data(), strict_c.data(), hC.size() * sizeof(float)) != 0)
                    what += std::string(what.empty() ? "" : "; ") + "C differs from the first strict call's";
            } else {
                row.err_tc = rep.worst;
                row.tc_ran = std::memcmp(hC.data(), strict_c.data(), hC.size() * sizeof(float)) != 0;
            }
            row.pad_ok = row.pad_ok && pad;
        } else {
            row.err_cublas = std::max(row.err_cublas, rep.worst);
        }
        if (what.empty())
            continue;
        std::fflush(stdout);
        if (ours) {
            std::fprintf(stderr, "%s: FAILED: %s on problem %d (%s): %s\n", program_name, kLibName[lib], row.index,
                         describe_shape(s).c_str(), what.c_str());
            if (run.failed.empty() || run.failed.back() != row.index)  // both maths may fail one problem
                run.failed.push_back(row.index);
        } else {
            std::fprintf(stderr, "%s: warning: %s on problem %d (%s): %s\n", program_name, kLibName[lib], row.index,
                         describe_shape(s).c_str(), what.c_str());
        }
    }
}

// How the cold calls find their operands out of L2, whichever costs less
// for the problem:
//  - rotation, when the set is large enough that at most MAX_SETS sets
//    make up 3x L2: the calls take the sets in turn, so that between two
//    calls on one set the others have moved at least 3x L2 through it.
//    Nothing runs between the calls: the cheapest, but it takes that much
//    memory and a copy of set 0 per set, and for a small set as many
//    sets as calls.
//  - flush, for smaller sets: bench_l2_clean reads 2x L2 before each
//    event-timed call (outside its events), on set 0; a wall-timed batch
//    follows one such read and takes fresh sets, each used once, as many
//    as the batch has calls (at most kFreshBytes of them).
struct ColdPlan {
    bool flush = false;
    std::vector<Set> sets;  // rotation: set 0 and the copies; flush + wall: the fresh sets
    size_t next = 0;
    std::string text;
};

// ------------------------------------------------------------------ timing

// The median over `reps` rounds of each library's time per call, in us;
// with `rounds`, each library's time in each round too, in round order.
void measure(Run &run, const RandomShape &s, Cond cond, bool wall, int reps, const Set &hot, ColdPlan &cold,
             double out[kLibs], std::vector<double> *rounds = nullptr)
{
    Ctx &ctx = run.ctx;
    const bool flush = cond == kCold && cold.flush;
    auto clean = [&] {
        CUDA_CHECK(bench_l2_clean(ctx.l2_buf, 2 * ctx.l2_bytes, ctx.l2_sink, 2 * ctx.sm_count, ctx.stream));
    };
    auto next = [&]() -> const Set & {
        if (cond == kHot || (flush && !wall))
            return hot;
        const Set &st = cold.sets[cold.next];
        cold.next = (cold.next + 1) % cold.sets.size();
        return st;
    };
    std::vector<double> v[kLibs];
    const int libs = static_cast<int>(run.libs.size());
    if (wall) {
        const int batch = flush ? static_cast<int>(cold.sets.size()) : WALL_CALLS;
        for (int r = 0; r < reps; ++r)
            for (int q = 0; q < libs; ++q) {
                const int lib = run.libs[static_cast<size_t>((r + q) % libs)];
                if (flush) {
                    clean();
                    cold.next = 0;
                }
                sync(ctx);
                const double t0 = now_us();
                for (int i = 0; i < batch; ++i)
                    call(run, s, lib, next());
                CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
                v[lib].push_back((now_us() - t0) / batch);
            }
    } else {
        std::vector<cudaEvent_t> ev(static_cast<size_t>(2 * reps * libs));
        for (cudaEvent_t &e : ev)
            CUDA_CHECK(cudaEventCreate(&e));
        for (int r = 0; r < reps; ++r)
            for (int q = 0; q < libs; ++q) {
                const int slot = (r + q) % libs;
                const int lib = run.libs[static_cast<size_t>(slot)];
                const size_t e = static_cast<size_t>(2 * (r * libs + slot));
                if (flush)
                    clean();
                CUDA_CHECK(cudaEventRecord(ev[e], ctx.stream));
                call(run, s, lib, next());
                CUDA_CHECK(cudaEventRecord(ev[e + 1], ctx.stream));
            }
        sync(ctx);
        for (int r = 0; r < reps; ++r)
            for (int slot = 0; slot < libs; ++slot) {
                const size_t e = static_cast<size_t>(2 * (r * libs + slot));
                float ms = 0;
                CUDA_CHECK(cudaEventElapsedTime(&ms, ev[e], ev[e + 1]));
                v[run.libs[static_cast<size_t>(slot)]].push_back(1000.0 * ms);
            }
        for (cudaEvent_t &e : ev)
            CUDA_CHECK(cudaEventDestroy(e));
    }
    sync(ctx);
    for (int lib = 0; lib < kLibs; ++lib) {
        out[lib] = median(v[lib]);
        if (rounds)
            rounds[lib] = v[lib];
    }
}

// The extra memory of the cold calls (see ColdPlan), set 0's contents
// copied into each; base receives the allocation to free.
ColdPlan plan_cold(Run &run, const Layout &l, bool wall, const Set &set0, char **base)
{
    Ctx &ctx = run.ctx;
    ColdPlan p;
    const size_t stride = round256(l.bytes);
    const size_t rotation = (3 * ctx.l2_bytes + stride - 1) / stride + 1;
    size_t extra = 0;
    if (rotation <= static_cast<size_t>(MAX_SETS)) {
        p.sets.push_back(set0);
        extra = rotation - 1;
        p.text = "rotate" + std::to_string(rotation);
    } else {
        p.flush = true;
        extra = wall ? std::max<size_t>(1, std::min<size_t>(WALL_CALLS, kFreshBytes / stride)) : 0;
        p.text = wall ? "flush+fresh" + std::to_string(extra) : "flush";
    }
    *base = nullptr;
    if (extra == 0)
        return p;
    CUDA_CHECK(cudaMalloc(base, extra * stride));
    for (size_t i = 0; i < extra; ++i) {
        CUDA_CHECK(cudaMemcpyAsync(*base + i * stride, set0.A, l.bytes, cudaMemcpyDeviceToDevice, ctx.stream));
        p.sets.push_back(set_at(*base + i * stride, l));
    }
    sync(ctx);
    return p;
}

// Warm-up, the choice of clock, the rounds that fit the budget, then hot
// and cold measured; every set's C padding checked afterwards.
void time_shape(Run &run, const RandomShape &s, const Layout &l, const Set &set0, size_t remaining, Row &row)
{
    Ctx &ctx = run.ctx;
    ColdPlan none;
    double warm[kLibs] = {}, best[kLibs] = {};
    std::fill(best, best + kLibs, 1e30);
    for (int w = 0; w < kWarmupRounds; ++w) {
        measure(run, s, kHot, false, 1, set0, none, warm);
        if (w > 0)
            for (const int lib : run.libs)
                best[lib] = std::min(best[lib], warm[lib]);
    }
    const double fastest = *std::min_element(best, best + kLibs);
    row.wall = fastest < kWallBelowUs;

    char *extra = nullptr;
    ColdPlan cold = plan_cold(run, l, row.wall, set0, &extra);
    row.cold = cold.text;

    // One round of both conditions costs about this much, in us.
    double sum = 0;
    for (const int lib : run.libs)
        sum += best[lib];
    const double libs = static_cast<double>(run.libs.size());
    const double flush_us = 2.0 * static_cast<double>(ctx.l2_bytes) / kFloorBytes * 1e6 + 5.0;
    const double cold_batch = cold.flush ? static_cast<double>(cold.sets.size()) : WALL_CALLS;
    const double per_round = row.wall ? sum * (WALL_CALLS + cold_batch) + (flush_us + 40.0) * libs
                                      : 2.0 * sum + (cold.flush ? flush_us * libs : 0.0);
    const double share = 0.5 * std::max(0.0, run.deadline_us - now_us()) / static_cast<double>(remaining);
    row.reps = static_cast<int>(std::clamp(share / per_round, static_cast<double>(std::min(kMinReps, run.reps)),
                                           static_cast<double>(run.reps)));

    measure(run, s, kCold, row.wall, 1, set0, cold, warm);  // the cold sets' first use
    for (const Cond c : {kHot, kCold}) {
        std::vector<double> rounds[kLibs];
        measure(run, s, c, row.wall, row.reps, set0, cold, row.us[c], run.compare ? rounds : nullptr);
        if (run.compare) {
            row.tc_paired[c] = paired_ratio(rounds[kTgemmTc], rounds[kTgemm]);
            row.again_paired[c] = paired_ratio(rounds[kTgemmAgain], rounds[kTgemm]);
        }
    }

    bool pad = padding_intact(s, set0.C, ctx.stream);
    for (const Set &st : cold.sets)
        pad = pad && padding_intact(s, st.C, ctx.stream);
    if (!pad) {
        std::fflush(stdout);
        std::fprintf(stderr, "%s: FAILED: problem %d (%s): C's padding rows changed during the timed calls\n",
                     program_name, row.index, describe_shape(s).c_str());
        if (row.pad_ok)
            run.failed.push_back(row.index);
        row.pad_ok = false;
    }
    CUDA_CHECK(cudaFree(extra));
}

// ------------------------------------------------------------------ output

std::string us_or_na(double us, const char *f = "%.3f")
{
    return us > 0 ? fmt(f, us) : "n/a";
}

void write_csv(Run &run, const Row &r)
{
    if (!run.csv)
        return;
    const RandomShape &s = r.s;
    std::fprintf(run.csv, "%" PRIu64 ",%d,%" PRId64 ",%" PRId64 ",%" PRId64 ",%c,%c,%" PRId64 ",%" PRId64
                 ",%" PRId64 ",%.9g,%.9g,%d,%.6g,%.3f,%d",
                 run.seed, r.index, s.m, s.n, s.k, s.ta, s.tb, s.lda, s.ldb, s.ldc, static_cast<double>(s.alpha),
                 static_cast<double>(s.beta), s.ab_class, flops(s), floor_us(s), memory_bound(s) ? 1 : 0);
    for (int c = 0; c < kConds; ++c)
        std::fprintf(run.csv, ",%s,%s,%s,%s", us_or_na(r.us[c][kTgemm]).c_str(), us_or_na(r.us[c][kDefault]).c_str(),
                     us_or_na(r.us[c][kPedantic]).c_str(), us_or_na(r.ratio(c), "%.4f").c_str());
    std::fprintf(run.csv, ",%.4g,%s,%d,%s,%s,%d", r.err_tgemm, run.cublas ? fmt("%.4g", r.err_cublas).c_str() : "n/a",
                 r.pad_ok ? 1 : 0, r.wall ? "wall" : "event", r.cold.c_str(), r.reps);
    if (run.compare) {
        std::fprintf(run.csv, ",%.3f,%.3f,%.4f,%.4f,%d,%.4g,%.3f,%.3f,%.4f,%.4f", r.us[kHot][kTgemmTc],
                     r.us[kCold][kTgemmTc], r.tc_speedup(kHot), r.tc_speedup(kCold), r.tc_ran ? 1 : 0, r.err_tc,
                     r.us[kHot][kTgemmAgain], r.us[kCold][kTgemmAgain], r.again_speedup(kHot),
                     r.again_speedup(kCold));
        // The interval's ends n/a where the rounds are too few for one.
        const auto paired = [&](const PairedRatio &p) {
            std::fprintf(run.csv, ",%s,%s,%s", p.rounds > 0 ? fmt("%.4f", p.median).c_str() : "n/a",
                         p.lo > 0 ? fmt("%.4f", p.lo).c_str() : "n/a", p.hi > 0 ? fmt("%.4f", p.hi).c_str() : "n/a");
        };
        for (const PairedRatio *p : {r.tc_paired, r.again_paired})
            for (int c = 0; c < kConds; ++c)
                paired(p[c]);
        std::fprintf(run.csv, "\n");
    } else {
        std::fprintf(run.csv, ",n/a,n/a,n/a,n/a,n/a,n/a,n/a,n/a,n/a,n/a");
        for (int i = 0; i < 12; ++i)
            std::fprintf(run.csv, ",n/a");
        std::fprintf(run.csv, "\n");
    }
    std::fflush(run.csv);
    if (std::ferror(run.csv))
        die("writing %s failed", run.csv_path.c_str());
}

void print_row(const Run &run, const Row &r)
{
    const RandomShape &s = r.s;
    std::printf("%4d %6" PRId64 " %6" PRId64 " %6" PRId64 " %c%c %6" PRId64 " %6" PRId64 " %6" PRId64
                " %7.3g %7.3g %9.2f %3s |",
                r.index, s.m, s.n, s.k, s.ta, s.tb, s.lda, s.ldb, s.ldc, static_cast<double>(s.alpha),
                static_cast<double>(s.beta), floor_us(s), memory_bound(s) ? "mem" : "");
    for (int c = 0; c < kConds; ++c)
        std::printf(" %9s %9s %9s %6s |", us_or_na(r.us[c][kTgemm], "%.2f").c_str(),
                    us_or_na(r.us[c][kDefault], "%.2f").c_str(), us_or_na(r.us[c][kPedantic], "%.2f").c_str(),
                    us_or_na(r.ratio(c)).c_str());
    std::printf(" %7.2g %5s %s %s x%d", r.err_tgemm, r.pad_ok ? "ok" : "BAD", r.wall ? "wall" : "event",
                r.cold.c_str(), r.reps);
    if (run.compare)
        std::printf(" | fp32-tc %s %s %s: strict/tc %.3f %.3f err %.2g | strict/again %.3f %.3f",
                    us_or_na(r.us[kHot][kTgemmTc], "%.2f").c_str(), us_or_na(r.us[kCold][kTgemmTc], "%.2f").c_str(),
                    r.tc_ran ? "ran" : "strict", r.tc_speedup(kHot), r.tc_speedup(kCold), r.err_tc,
                    r.again_speedup(kHot), r.again_speedup(kCold));
    std::printf("\n");
    std::fflush(stdout);
}

void print_header(const Run &run)
{
    std::printf("%4s %6s %6s %6s %2s %6s %6s %6s %7s %7s %9s %3s | %9s %9s %9s %6s | %9s %9s %9s %6s | %7s %5s %s\n",
                "#", "m", "n", "k", "op", "lda", "ldb", "ldc", "alpha", "beta", "floor_us", "", "hot:tgemm",
                "default", "pedantic", "ratio", "cold:tgemm", "default", "pedantic", "ratio", "err", "pad",
                "timing cold reps");
    if (run.compare)
        std::printf("  (then | fp32-tc hot cold us, whether the mode ran: strict / fp32-tc hot cold, err | strict / "
                    "strict again hot cold)\n");
}

// The fp32-tc math against strict (--math-compare).
void print_tc_summary(const Run &run)
{
    std::printf("\nfp32-tc against strict (speedup = strict / fp32-tc, same rounds; 'ran': its C differs from "
                "strict's)\n");
    for (int c = 0; c < kConds; ++c) {
        std::vector<double> all, ran;
        for (const Row &r : run.rows) {
            if (r.tc_speedup(c) <= 0)
                continue;
            all.push_back(r.tc_speedup(c));
            if (r.tc_ran)
                ran.push_back(r.tc_speedup(c));
        }
        std::printf("%-4s all %zu problems: geomean %.3f  min %.3f  max %.3f; the mode ran on %zu: geomean %.3f  "
                    "min %.3f\n",
                    kCondName[c], all.size(), geomean(all), percentile(all, 0), percentile(all, 100), ran.size(),
                    geomean(ran), percentile(ran, 0));
    }
    int slower = 0, again_slower = 0;
    for (const Row &r : run.rows) {
        const double again_lo = std::min(r.again_speedup(kHot), r.again_speedup(kCold));
        again_slower += again_lo > 0 && again_lo < kTcSlower;
        const double lo = std::min(r.tc_speedup(kHot), r.tc_speedup(kCold));
        if (lo <= 0 || lo >= kTcSlower)
            continue;
        ++slower;
        std::printf("  slower than strict by more than 2%%: #%d %s  %s  strict/tc hot %.3f cold %.3f\n", r.index,
                    describe_shape(r.s).c_str(), r.tc_ran ? "ran" : "declined", r.tc_speedup(kHot),
                    r.tc_speedup(kCold));
    }
    double worst = 0;
    for (const Row &r : run.rows)
        worst = std::max(worst, r.err_tc);
    std::printf("slower than strict by more than 2%%: %d of %zu problems; largest fp32-tc error / bound %.3g\n", slower,
                run.rows.size(), worst);
    std::printf("strict again slower than strict by more than 2%% (the same call timed twice): %d of %zu problems\n",
                again_slower, run.rows.size());
    // Round by round: slower by more than 2% where the 95% interval of the
    // time ratio lies wholly above 1/0.98 (paired.hpp), in either condition.
    int paired_slower = 0, paired_again = 0, no_interval = 0;
    const double above = 1.0 / kTcSlower;
    for (const Row &r : run.rows) {
        bool tc = false, again = false, none = false;
        for (int c = 0; c < kConds; ++c) {
            tc = tc || r.tc_paired[c].lo > above;
            again = again || r.again_paired[c].lo > above;
            none = none || r.tc_paired[c].lo <= 0;
        }
        paired_slower += tc;
        paired_again += again;
        no_interval += none;
        if (tc)
            std::printf("  slower than strict by more than 2%% at 95%%, round by round: #%d %s  %s  tc/strict hot "
                        "%.3f [%.3f, %.3f] cold %.3f [%.3f, %.3f]\n",
                        r.index, describe_shape(r.s).c_str(), r.tc_ran ? "ran" : "declined", r.tc_paired[kHot].median,
                        r.tc_paired[kHot].lo, r.tc_paired[kHot].hi, r.tc_paired[kCold].median,
                        r.tc_paired[kCold].lo, r.tc_paired[kCold].hi);
    }
    std::printf("round by round (each round's time over strict's in the same round, 95%% interval of the median "
                "wholly above %.4f): fp32-tc slower on %d, strict again on %d of %zu problems (%d with too few "
                "rounds for an interval)\n",
                above, paired_slower, paired_again, run.rows.size(), no_interval);
}

void print_distribution(const char *what, const std::vector<const Row *> &rows)
{
    for (int c = 0; c < kConds; ++c) {
        std::vector<double> v;
        for (const Row *r : rows)
            if (r->ratio(c) > 0)
                v.push_back(r->ratio(c));
        if (v.empty()) {
            std::printf("%-18s %-4s %5d problems, no ratio\n", what, kCondName[c], 0);
            continue;
        }
        std::printf("%-18s %-4s %5zu problems  geomean %.3f  p5 %.3f  median %.3f  min %.3f\n", what, kCondName[c],
                    v.size(), geomean(v), percentile(v, 5), percentile(v, 50), percentile(v, 0));
    }
}

void summary(const Run &run)
{
    std::printf("\nratio = min(cuBLAS default, cuBLAS pedantic) / tgemm, per call: above 1, tgemm is faster\n");
    std::vector<const Row *> all, ordinary_rows, mem;
    for (const Row &r : run.rows) {
        all.push_back(&r);
        if (ordinary(r.s))
            ordinary_rows.push_back(&r);
        if (memory_bound(r.s) && floor_us(r.s) >= 10.0)
            mem.push_back(&r);
    }
    print_distribution("all", all);
    print_distribution("ordinary products", ordinary_rows);
    int near_floor = 0, slower_cold = 0, slower_hot = 0;
    for (const Row *r : mem) {
        near_floor += r->us[kCold][kTgemm] <= 1.3 * floor_us(r->s);
        slower_cold += r->ratio(kCold) > 0 && r->ratio(kCold) < 1.0;
        slower_hot += r->ratio(kHot) > 0 && r->ratio(kHot) < 1.0;
    }
    std::printf("memory-bound, floor >= 10 us: %zu problems; within 1.3x the floor (cold) %d; slower than cuBLAS: "
                "cold %d, hot %d\n",
                mem.size(), near_floor, slower_cold, slower_hot);
    if (run.compare)
        print_tc_summary(run);
    if (run.cublas) {
        std::vector<const Row *> worst = all;
        const auto key = [](const Row *r) { return std::min(r->ratio(kHot), r->ratio(kCold)); };
        std::sort(worst.begin(), worst.end(), [&](const Row *a, const Row *b) { return key(a) < key(b); });
        worst.resize(std::min<size_t>(worst.size(), kWorst));
        std::printf("\nthe %zu worst (by the smaller ratio); TFLOP/s of tgemm hot / cold:\n", worst.size());
        for (const Row *r : worst) {
            const double f = flops(r->s);
            std::printf("  #%-4d %s  ratio hot %.3f cold %.3f  %.2f / %.2f TFLOP/s\n", r->index,
                        describe_shape(r->s).c_str(), r->ratio(kHot), r->ratio(kCold),
                        f / r->us[kHot][kTgemm] * 1e-6, f / r->us[kCold][kTgemm] * 1e-6);
        }
    }
    if (!run.failed.empty()) {
        std::string list;
        for (int i : run.failed)
            list += " " + std::to_string(i);
        std::fflush(stdout);
        std::fprintf(stderr, "%s: tgemm failed its check on %zu of %zu problems:%s\n", program_name, run.failed.size(),
                     run.rows.size(), list.c_str());
    } else {
        std::printf("every tgemm result within its bound, padding and operands untouched\n");
    }
}

// ------------------------------------------------------------------ the two modes

Shape shape_of(const RandomShape &s, int index)
{
    return {"random #" + std::to_string(index), s.m, s.n, s.k, s.ta, s.tb};
}

void run_plans(Run &run, const std::vector<RandomShape> &shapes)
{
    for (size_t i = 0; i < shapes.size(); ++i) {
        const RandomShape &s = shapes[i];
        const Layout l = layout_of(s);
        char *base = nullptr;
        CUDA_CHECK(cudaMalloc(&base, l.bytes));
        CUDA_CHECK(cudaMemsetAsync(base, 0, l.bytes, run.ctx.stream));
        sync(run.ctx);
        std::fprintf(stderr, "== shape %zu m=%" PRId64 " n=%" PRId64 " k=%" PRId64 " %c%c lda=%" PRId64 " ldb=%" PRId64
                     " ldc=%" PRId64 " alpha=%.9g beta=%.9g\n",
                     i, s.m, s.n, s.k, s.ta, s.tb, s.lda, s.ldb, s.ldc, static_cast<double>(s.alpha),
                     static_cast<double>(s.beta));
        call(run, s, kTgemm, set_at(base, l));
        sync(run.ctx);
        CUDA_CHECK(cudaFree(base));
    }
    std::printf("plans: %zu problems, one tgemm call each (TGEMM_VERBOSE=2 prints the plans on standard error)\n",
                shapes.size());
}

void run_timed(Run &run, const std::vector<RandomShape> &shapes)
{
    print_header(run);
    for (size_t i = 0; i < shapes.size(); ++i) {
        const RandomShape &s = shapes[i];
        Row row;
        row.s = s;
        row.index = static_cast<int>(i);
        const Layout l = layout_of(s);
        char *base = nullptr;
        CUDA_CHECK(cudaMalloc(&base, l.bytes));
        const Set set0 = set_at(base, l);
        {
            std::seed_seq sseq{static_cast<uint32_t>(run.seed), static_cast<uint32_t>(run.seed >> 32),
                               static_cast<uint32_t>(i)};
            std::mt19937 rng(sseq);
            const std::vector<float> hA = random_matrix(s.ta == 'N' ? s.m : s.k, s.ta == 'N' ? s.k : s.m, s.lda, rng);
            const std::vector<float> hB = random_matrix(s.tb == 'N' ? s.k : s.n, s.tb == 'N' ? s.n : s.k, s.ldb, rng);
            const std::vector<float> hC0 = random_matrix(s.m, s.n, s.ldc, rng);
            CUDA_CHECK(cudaMemcpyAsync(set0.A, hA.data(), l.nA * sizeof(float), cudaMemcpyHostToDevice, run.ctx.stream));
            CUDA_CHECK(cudaMemcpyAsync(set0.B, hB.data(), l.nB * sizeof(float), cudaMemcpyHostToDevice, run.ctx.stream));
            sync(run.ctx);
            check_all(run, s, shape_of(s, row.index), set0, l, hA, hB, hC0, row);
        }
        time_shape(run, s, l, set0, shapes.size() - i, row);
        CUDA_CHECK(cudaFree(base));
        print_row(run, row);
        write_csv(run, row);
        run.rows.push_back(row);
    }
    summary(run);
}

// ------------------------------------------------------------------ command line

void usage(FILE *f)
{
    std::fprintf(f,
        "usage: bench_random [--seed N] [--count N] [--csv PATH] [--reps N] [--time-budget SECONDS] [--plans]\n"
        "                    [--math-compare] [--large] [--shapes FILE]\n"
        "  --seed N           the problems' and inputs' seed (default: a fresh one; always printed first)\n"
        "  --count N          problems drawn (default 100)\n"
        "  --csv PATH         one row per problem (parent directory is created)\n"
        "  --reps N           timed rounds per library and L2 condition (default 9; fewer, down to 3,\n"
        "                     for the largest problems when the time budget needs it)\n"
        "  --time-budget S    seconds the whole run should take (default 1.5 per problem)\n"
        "  --plans            one untimed tgemm call per problem, nothing else: with TGEMM_VERBOSE=2,\n"
        "                     each problem's plan lines follow a line '== shape INDEX ...' on stderr\n"
        "  --math-compare     tgemm in the fp32-tc math too, timed beside strict (speedup = strict / fp32-tc),\n"
        "                     and strict a second time in each round (the timing's own spread)\n"
        "  --large            problems with every dimension 2048 to 20000 (the fp32-tc math's range)\n"
        "  --shapes FILE      the problems of FILE instead of drawn ones, one a line: m n k ta tb lda ldb ldc\n"
        "                     alpha beta ('#' starts a comment); the seed still draws the inputs\n");
}

// The problems of --shapes FILE (parse_shapes); exits on a bad file.
std::vector<RandomShape> read_shapes(const char *path)
{
    FILE *f = std::fopen(path, "r");
    if (f == nullptr)
        die("cannot open %s", path);
    std::string text;
    char buf[4096];
    for (size_t got; (got = std::fread(buf, 1, sizeof buf, f)) > 0;)
        text.append(buf, got);
    std::fclose(f);
    std::vector<RandomShape> out;
    std::string error;
    if (!parse_shapes(text.c_str(), &out, &error))
        die("%s: %s", path, error.c_str());
    return out;
}

uint64_t fresh_seed()
{
    uint32_t v = 0;
    if (FILE *f = std::fopen("/dev/urandom", "rb")) {
        const size_t got = std::fread(&v, sizeof v, 1, f);
        std::fclose(f);
        if (got == 1)
            return v;
    }
    return static_cast<uint64_t>(now_us()) & 0xffffffffu;
}

}  // namespace

int main(int argc, char **argv)
{
    program_name = "bench_random";
    Run run;
    bool have_seed = false, plans = false, large = false;
    const char *shapes_path = nullptr;
    long long count = 100;
    double budget_s = -1;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            usage(stdout);
            return 0;
        }
        if (a == "--plans" || a == "--math-compare" || a == "--large") {
            (a == "--plans" ? plans : a == "--large" ? large : run.compare) = true;
            continue;
        }
        if (a != "--seed" && a != "--count" && a != "--csv" && a != "--reps" && a != "--time-budget" &&
            a != "--shapes") {
            std::fprintf(stderr, "bench_random: unknown argument '%s'\n", a.c_str());
            usage(stderr);
            return 2;
        }
        if (i + 1 >= argc) {
            std::fprintf(stderr, "bench_random: %s needs an argument\n", a.c_str());
            usage(stderr);
            return 2;
        }
        const char *v = argv[++i];
        if (a == "--seed") {
            run.seed = static_cast<uint64_t>(parse_int(v, "--seed", 0, LLONG_MAX, usage));
            have_seed = true;
        } else if (a == "--count") {
            count = parse_int(v, "--count", 1, 100000, usage);
        } else if (a == "--csv") {
            run.csv_path = v;
        } else if (a == "--shapes") {
            shapes_path = v;
        } else if (a == "--reps") {
            run.reps = static_cast<int>(parse_int(v, "--reps", 1, 10000, usage));
        } else {
            budget_s = static_cast<double>(parse_int(v, "--time-budget", 1, 100000000, usage));
        }
    }
    if (!have_seed)
        run.seed = fresh_seed();
    std::printf("seed %" PRIu64 "\n", run.seed);
    std::fflush(stdout);
    const std::vector<RandomShape> shapes =
        shapes_path != nullptr ? read_shapes(shapes_path)
                               : draw_random_shapes(run.seed, static_cast<int>(count), large ? large_limits() : RandomLimits{});
    count = static_cast<long long>(shapes.size());
    if (plans)
        std::fprintf(stderr, "== seed %" PRIu64 " count %lld\n", run.seed, count);
    if (!run.csv_path.empty() && !plans)
        run.csv = open_csv(run.csv_path, kCsvHeader);

    Ctx &ctx = run.ctx;
    open_device(ctx);
    CUDA_CHECK(cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking));
    if (plans) {
        run_plans(run, shapes);
        finish(ctx, nullptr, "");
        return 0;
    }
    alloc_l2_buffer(ctx);
    if (cublas_load(ctx.cb, ctx.stream)) {
        ctx.cb.pedantic = cublas_handle(ctx.cb, ctx.stream, CUBLAS_PEDANTIC_MATH_, "PEDANTIC_MATH");
        run.cublas = true;
        run.libs.insert(run.libs.end(), {kDefault, kPedantic});
    }
    // --math-compare: strict, default, fp32-tc, pedantic, strict again,
    // default (timed twice a round). Inside a round, in every rotation of
    // that order, each tgemm call follows a cuBLAS call (the call before a
    // timed one leaves its L2 writes and its launch state behind), so that
    // no tgemm call pays for another's place (at the joins of rounds one
    // may follow another); strict against strict again measures how far
    // apart two timings of the same call fall: the noise that a 2% rule on
    // strict against fp32-tc is read against.
    if (run.compare) {
        run.libs.insert(run.libs.begin() + (run.cublas ? 2 : 1), kTgemmTc);
        run.libs.push_back(kTgemmAgain);
        if (run.cublas)
            run.libs.push_back(kDefault);
    }
    ctx.ref_kernel = !ctx.cb.ok || !ctx.cb.dgemm;
    run.deadline_us = now_us() + 1e6 * (budget_s > 0 ? budget_s : kSecondsPerShape * static_cast<double>(count));
    if (run.compare)
        std::printf("fp32-tc math compared (TGEMM_FP32_TC=%s): tgemm_set_math before each tgemm call\n",
                    std::getenv("TGEMM_FP32_TC") ? std::getenv("TGEMM_FP32_TC") : "auto");
    std::printf("%lld problems (%s%s); inputs uniform in (-1, 1), mt19937 seeded with {seed, "
                "index}; padding NaN; column-major, device pointers\n", count,
                shapes_path != nullptr ? shapes_path : "bench/random_shapes.hpp", large ? ", large_limits" : "");
    std::printf("check before timing: tgemm%s against FP64, |C - R| <= gamma_{K+2} (|alpha||A||B| + |beta||C0|), "
                "reference from %s\n",
                run.cublas ? " and cuBLAS (default, pedantic)" : "",
                ctx.ref_kernel ? "the benchmark's own FP64 kernel" : "cublasDgemm_v2");
    std::printf("timing: %d rounds at most (%d at the fewest, to fit %.0f s), libraries in turn; event = CUDA events "
                "per call, wall = %d back-to-back calls per round (fastest under %.0f us); hot = set 0 back to "
                "back, cold = rotateN (N sets in turn), flush (2x L2 read before each call), flush+freshN (one "
                "read, then N unused sets)\n",
                run.reps, kMinReps, (run.deadline_us - now_us()) / 1e6, WALL_CALLS, kWallBelowUs);
    std::printf("floor = max(4(mk + kn + mn(1 or 2)) bytes / %.2f TB/s, 2mnk / %.1f TFLOP/s); mem = memory-bound "
                "(K <= 32 or min(m, n) <= 16)\n\n",
                kFloorBytes / 1e12, kFloorFlops / 1e12);
    run_timed(run, shapes);
    finish(ctx, run.csv, run.csv_path);
    return run.failed.empty() ? 0 : 1;
}
