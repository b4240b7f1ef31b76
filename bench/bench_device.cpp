// Device-pointer mode: each shape timed for tgemm and cuBLAS on the same
// inputs in one process (CUDA events, or the wall time per call of
// back-to-back calls for small problems), every output checked before and
// after; the host-side cost of one call; the table, its CSV rows
// (name,m,n,k,ta,tb,tgemm_us,cublas_us,tgemm_tflops,cublas_tflops,ratio,
// floor_us,floor_kind,pct_of_floor,timing) and the geometric mean.
#include "bench.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace bench {

namespace {

Result run_shape(const Shape &s, size_t index, Ctx &ctx)
{
    Result res;
    res.s = s;
    const int64_t M = s.m, N = s.n, K = s.k;
    const Storage dims = storage(s);
    const int64_t lda = dims.lda, ldb = dims.ldb, ldc = dims.ldc;
    const size_t nA = dims.nA, nB = dims.nB, nC = dims.nC;
    const size_t set_bytes = (nA + nB + nC) * sizeof(float);
    const float alpha = 1.0f, beta = 0.0f;

    // Cache-resident shapes: rotate through enough distinct A/B/C sets that
    // together they exceed 4x L2, so no call finds its operands in L2.
    int nsets = 1;
    if (set_bytes < 2 * ctx.l2_bytes)
        nsets = static_cast<int>(std::min<size_t>(MAX_SETS, 4 * ctx.l2_bytes / set_bytes + 1));
    res.nsets = nsets;

    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    const size_t margin = size_t(512) << 20; // workspaces of tgemm and cuBLAS
    const size_t need = set_bytes * static_cast<size_t>(nsets);
    if (need + margin > free_b) {
        std::printf("%-*s skipped: needs %.2f GiB of device memory (+0.5 GiB margin), %.2f GiB free\n",
                    16, s.name.c_str(), need / 1073741824.0, free_b / 1073741824.0);
        res.skipped = true;
        return res;
    }

    // Inputs: uniform in (-1, 1), a generator per shape seeded with {seed, index}.
    std::seed_seq sseq{ctx.seed, static_cast<uint32_t>(index)};
    std::mt19937 rng(sseq);
    std::vector<Set> sets(static_cast<size_t>(nsets));
    std::vector<float> hA0(nA), hB0(nB), scratchA, scratchB;
    for (int si = 0; si < nsets; ++si) {
        Set &st = sets[static_cast<size_t>(si)];
        CUDA_CHECK(cudaMalloc(&st.A, nA * sizeof(float)));
        CUDA_CHECK(cudaMalloc(&st.B, nB * sizeof(float)));
        CUDA_CHECK(cudaMalloc(&st.C, nC * sizeof(float)));
        std::vector<float> &hA = si == 0 ? hA0 : scratchA;
        std::vector<float> &hB = si == 0 ? hB0 : scratchB;
        hA.resize(nA);
        hB.resize(nB);
        for (float &x : hA)
            x = uniform_pm1(rng);
        for (float &x : hB)
            x = uniform_pm1(rng);
        CUDA_CHECK(cudaMemcpy(st.A, hA.data(), nA * sizeof(float), cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(st.B, hB.data(), nB * sizeof(float), cudaMemcpyHostToDevice));
        // C is NaN (all bits set). With beta = 0 neither library reads C, so it is
        // never reset between calls; the NaN only makes unwritten elements visible
        // to the output checks below.
        CUDA_CHECK(cudaMemset(st.C, 0xFF, nC * sizeof(float)));
    }
    std::vector<float>().swap(scratchA);
    std::vector<float>().swap(scratchB);

    auto call_tgemm = [&](Set &st) {
        tgemm_check(tgemm_sgemm_ex(TGEMM_LAYOUT_COL_MAJOR, tg_op(s.ta), tg_op(s.tb), M, N, K, alpha,
                                   st.A, lda, st.B, ldb, beta, st.C, ldc, ctx.stream),
                    s.name.c_str());
        st.writer = "tgemm";
    };
    auto call_cublas = [&](Set &st) {
        int status = ctx.cb.sgemm(ctx.cb.handle, cb_op(s.ta), cb_op(s.tb), static_cast<int>(M),
                                  static_cast<int>(N), static_cast<int>(K), &alpha, st.A,
                                  static_cast<int>(lda), st.B, static_cast<int>(ldb), &beta, st.C,
                                  static_cast<int>(ldc));
        if (status != CUBLAS_STATUS_SUCCESS_)
            die("cublasSgemm_v2 (%s) failed with cuBLAS status %d", s.name.c_str(), status);
        st.writer = "cuBLAS";
    };
    auto sync = [&]() {
        CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
        CUDA_CHECK(cudaGetLastError());
    };

    // ---- check both libraries on set 0, before any timing, against the
    // FP64 reference of set 0's operands (kept for the check after timing)
    Reference ref0 = make_reference(s, sets[0].A, lda, sets[0].B, ldb, alpha, ctx);
    std::vector<float> hC;
    {
        std::vector<float> hA, hB;
        auto check_one = [&](const char *lib, bool is_tgemm) -> double {
            CUDA_CHECK(cudaMemsetAsync(sets[0].C, 0xFF, nC * sizeof(float), ctx.stream));
            if (is_tgemm)
                call_tgemm(sets[0]);
            else
                call_cublas(sets[0]);
            sync();
            copy_to_host(hA, sets[0].A, nA);
            copy_to_host(hB, sets[0].B, nB);
            copy_to_host(hC, sets[0].C, nC);
            if (std::memcmp(hA.data(), hA0.data(), nA * sizeof(float)) != 0)
                die("%s modified A on %s", lib, s.name.c_str());
            if (std::memcmp(hB.data(), hB0.data(), nB * sizeof(float)) != 0)
                die("%s modified B on %s", lib, s.name.c_str());
            return check_output(lib, s, ref0, hC.data(), ldc);
        };
        res.worst_resid = check_one("tgemm", true);
        if (ctx.cb.ok)
            check_one("cuBLAS", false);
    }
    std::vector<float>().swap(hA0);
    std::vector<float>().swap(hB0);

    // Rotation: every call, of either library, takes the next set.
    int next_set = 0;
    auto next = [&]() -> Set & {
        Set &st = sets[static_cast<size_t>(next_set)];
        next_set = (next_set + 1) % nsets;
        return st;
    };

    // ---- warm-up, then alternating calls, each between its own pair of events
    for (int w = 0; w < ctx.warmup; ++w) {
        call_tgemm(next());
        if (ctx.cb.ok)
            call_cublas(next());
    }
    sync();

    const int reps = ctx.reps;
    std::vector<cudaEvent_t> ev(static_cast<size_t>(4 * reps));
    for (cudaEvent_t &e : ev)
        CUDA_CHECK(cudaEventCreate(&e));
    // Before each timed call, outside its events: the L2 state of --l2.
    auto prepare_l2 = [&]() {
        if (ctx.l2_mode == L2Mode::clean)
            CUDA_CHECK(bench_l2_clean(ctx.l2_buf, 2 * ctx.l2_bytes, ctx.l2_sink, 2 * ctx.sm_count, ctx.stream));
        else if (ctx.l2_mode == L2Mode::dirty)
            CUDA_CHECK(cudaMemsetAsync(ctx.l2_buf, 0, ctx.l2_bytes, ctx.stream));
    };
    auto timed = [&](bool is_tgemm, size_t b) {
        prepare_l2();
        CUDA_CHECK(cudaEventRecord(ev[b], ctx.stream));
        if (is_tgemm)
            call_tgemm(next());
        else
            call_cublas(next());
        CUDA_CHECK(cudaEventRecord(ev[b + 1], ctx.stream));
    };
    const bool separate = ctx.l2_mode == L2Mode::separate;
    for (int r = 0; r < reps; ++r) {
        timed(true, static_cast<size_t>(4 * r));
        if (ctx.cb.ok && !separate)
            timed(false, static_cast<size_t>(4 * r + 2));
    }
    if (ctx.cb.ok && separate)
        for (int r = 0; r < reps; ++r)
            timed(false, static_cast<size_t>(4 * r + 2));
    sync();
    std::vector<double> tt, tc;
    for (int r = 0; r < reps; ++r) {
        const size_t b = static_cast<size_t>(4 * r);
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, ev[b + 0], ev[b + 1]));
        tt.push_back(1000.0 * ms);
        if (ctx.cb.ok) {
            CUDA_CHECK(cudaEventElapsedTime(&ms, ev[b + 2], ev[b + 3]));
            tc.push_back(1000.0 * ms);
        }
    }
    for (cudaEvent_t &e : ev)
        CUDA_CHECK(cudaEventDestroy(e));
    res.t_event_us = median(tt);
    res.c_event_us = median(tc);
    res.t_us = res.t_event_us;
    res.c_us = res.c_event_us;

    // ---- small shapes: time per call with host overhead included
    const double mnk = static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
    if (mnk <= 512.0 * 512.0 * 512.0) {
        std::vector<double> wt, wc;
        for (int round = 0; round < WALL_ROUNDS; ++round) {
            for (int lib = 0; lib < (ctx.cb.ok ? 2 : 1); ++lib) {
                sync();
                const double t0 = now_us();
                for (int i = 0; i < WALL_CALLS; ++i) {
                    if (lib == 0)
                        call_tgemm(next());
                    else
                        call_cublas(next());
                }
                CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
                const double t1 = now_us();
                (lib == 0 ? wt : wc).push_back((t1 - t0) / WALL_CALLS);
            }
        }
        sync();
        res.wall = true;
        res.t_us = median(wt);
        res.c_us = median(wc);
    }

    // ---- after timing: the C of every set, as the benchmark's last call on
    // it left it, against the reference of that set's operands
    sync();
    for (size_t si = 0; si < sets.size(); ++si) {
        Set &st = sets[si];
        if (!st.writer)
            continue;
        Reference other;
        if (si != 0)
            other = make_reference(s, st.A, lda, st.B, ldb, alpha, ctx);
        Reference &ref = si == 0 ? ref0 : other;
        copy_to_host(hC, st.C, nC);
        const std::string what = std::string(st.writer) + " (its last call on set " + std::to_string(si) + ")";
        const double worst = check_output(what, s, ref, hC.data(), ldc);
        if (std::strcmp(st.writer, "tgemm") == 0)
            res.worst_resid = std::max(res.worst_resid, worst);
    }

    for (Set &st : sets) {
        CUDA_CHECK(cudaFree(st.A));
        CUDA_CHECK(cudaFree(st.B));
        CUDA_CHECK(cudaFree(st.C));
    }

    const double compute_us = 2.0 * mnk / PEAK_FLOPS * 1e6;
    const double bytes = 4.0 * (static_cast<double>(M) * K + static_cast<double>(K) * N +
                                static_cast<double>(M) * N);
    const double memory_us = bytes / PEAK_BYTES * 1e6;
    res.floor_us = std::max(compute_us, memory_us);
    res.floor_kind = compute_us >= memory_us ? "compute" : "memory";
    return res;
}

// ------------------------------------------------------------------ host overhead

// Host-side cost of one call with device pointers, 64 x 64 x 64: median over
// OVERHEAD_CALLS calls of the wall time from before the call to its return.
// The stream is drained every 100 calls, outside the timed region. Each
// library's last output is checked like any other.
void host_overhead(Ctx &ctx)
{
    const int64_t n = 64;
    const size_t count = static_cast<size_t>(n * n);
    const float alpha = 1.0f, beta = 0.0f;
    float *A = nullptr, *B = nullptr, *C = nullptr;
    CUDA_CHECK(cudaMalloc(&A, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&B, count * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&C, count * sizeof(float)));
    std::vector<float> h(count);
    std::mt19937 rng(ctx.seed);
    for (float &x : h)
        x = uniform_pm1(rng);
    CUDA_CHECK(cudaMemcpy(A, h.data(), count * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(B, h.data(), count * sizeof(float), cudaMemcpyHostToDevice));
    const Shape shape{"overhead64", n, n, n, 'N', 'N'};
    Reference ref = make_reference(shape, A, n, B, n, alpha, ctx);

    for (int lib = 0; lib < (ctx.cb.ok ? 2 : 1); ++lib) {
        CUDA_CHECK(cudaMemsetAsync(C, 0xFF, count * sizeof(float), ctx.stream));
        auto call = [&]() {
            if (lib == 0) {
                tgemm_check(tgemm_sgemm_ex(TGEMM_LAYOUT_COL_MAJOR, TGEMM_OP_N, TGEMM_OP_N, n, n, n,
                                           alpha, A, n, B, n, beta, C, n, ctx.stream),
                            "host overhead 64^3");
            } else {
                int st = ctx.cb.sgemm(ctx.cb.handle, CUBLAS_OP_N_, CUBLAS_OP_N_, 64, 64, 64, &alpha,
                                      A, 64, B, 64, &beta, C, 64);
                if (st != CUBLAS_STATUS_SUCCESS_)
                    die("cublasSgemm_v2 (host overhead 64^3) failed with cuBLAS status %d", st);
            }
        };
        for (int i = 0; i < 20; ++i) // warm-up: first-call initialisation
            call();
        std::vector<double> samples;
        samples.reserve(OVERHEAD_CALLS);
        for (int i = 0; i < OVERHEAD_CALLS; ++i) {
            if (i % 100 == 0) {
                CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
                CUDA_CHECK(cudaGetLastError());
            }
            const double t0 = now_us();
            call();
            const double t1 = now_us();
            samples.push_back(t1 - t0);
        }
        CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
        CUDA_CHECK(cudaGetLastError());
        copy_to_host(h, C, count);
        check_output(lib == 0 ? "tgemm" : "cuBLAS", shape, ref, h.data(), n);
        std::printf("%s host overhead per call: %.2f us (64x64x64, device pointers, median of %d)\n",
                    lib == 0 ? "tgemm" : "cublasSgemm_v2", median(samples), OVERHEAD_CALLS);
    }
    if (!ctx.cb.ok)
        std::printf("cublasSgemm_v2 host overhead per call: n/a (cuBLAS not loaded)\n");
    CUDA_CHECK(cudaFree(A));
    CUDA_CHECK(cudaFree(B));
    CUDA_CHECK(cudaFree(C));
}

void print_header(int w)
{
    std::printf("%-*s %6s %6s %6s %2s %2s %9s %9s %7s %11s %11s %10s %-7s %7s %8s  %s\n", w, "name",
                "M", "N", "K", "ta", "tb", "tgemm_TF", "cublas_TF", "ratio", "tgemm_us",
                "cublas_us", "floor_us", "bound", "%floor", "resid", "timing");
}

}  // namespace

void run_device_suite(const std::vector<Shape> &shapes, Ctx &ctx, FILE *csv, const std::string &csv_path)
{
    if (ctx.overhead) {
        host_overhead(ctx);
        std::printf("\n");
    }

    int w = 4;
    for (const Shape &s : shapes)
        w = std::max(w, static_cast<int>(s.name.size()));
    print_header(w);

    std::vector<Result> results;
    for (size_t idx = 0; idx < shapes.size(); ++idx) {
        const Shape &s = shapes[idx];
        std::fflush(stdout);
        Result r = run_shape(s, idx, ctx);
        if (r.skipped)
            continue;
        const double flops = 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) *
                             static_cast<double>(s.k);
        const double ttf = flops / (r.t_us * 1e-6) / 1e12;
        const bool have_c = ctx.cb.ok;
        const double ctf = have_c ? flops / (r.c_us * 1e-6) / 1e12 : 0;
        const double ratio = have_c ? r.c_us / r.t_us : 0;
        const double pct = 100.0 * r.floor_us / r.t_us;
        std::string timing = r.wall ? "per_call_wall" : "event";
        if (r.wall)
            timing += " (events: tgemm " + fmt("%.2f", r.t_event_us) + " us" +
                      (have_c ? ", cuBLAS " + fmt("%.2f", r.c_event_us) + " us" : "") + ")";
        if (r.nsets > 1)
            timing += " [" + std::to_string(r.nsets) + " sets]";
        std::printf("%-*s %6lld %6lld %6lld %2c %2c %9.2f %9s %7s %11.2f %11s %10.2f %-7s %6.1f%% "
                    "%8.1e  %s\n",
                    w, s.name.c_str(), (long long)s.m, (long long)s.n, (long long)s.k, s.ta, s.tb,
                    ttf, have_c ? fmt("%.2f", ctf).c_str() : "n/a",
                    have_c ? fmt("%.3f", ratio).c_str() : "n/a", r.t_us,
                    have_c ? fmt("%.2f", r.c_us).c_str() : "n/a", r.floor_us, r.floor_kind, pct,
                    r.worst_resid, timing.c_str());
        if (csv) {
            std::fprintf(csv, "%s,%lld,%lld,%lld,%c,%c,%.3f,%s,%.4f,%s,%s,%.3f,%s,%.2f,%s\n",
                         s.name.c_str(), (long long)s.m, (long long)s.n, (long long)s.k, s.ta, s.tb,
                         r.t_us, have_c ? fmt("%.3f", r.c_us).c_str() : "n/a", ttf,
                         have_c ? fmt("%.4f", ctf).c_str() : "n/a",
                         have_c ? fmt("%.4f", ratio).c_str() : "n/a", r.floor_us, r.floor_kind, pct,
                         r.wall ? "per_call_wall" : "event");
            std::fflush(csv);
            if (std::ferror(csv))
                die("writing %s failed", csv_path.c_str());
        }
        results.push_back(r);
    }

    std::printf("\nresid = tgemm's largest |C - R| / bound over its checked outputs (must be <= 1; cuBLAS "
                "checked too)\n");
    std::printf("all %zu measured shapes checked (tgemm%s); %zu skipped\n", results.size(),
                ctx.cb.ok ? " and cuBLAS" : "", shapes.size() - results.size());
    if (ctx.cb.ok && !results.empty()) {
        double logsum = 0, minr = 0;
        std::string minname;
        for (const Result &r : results) {
            const double ratio = r.c_us / r.t_us;
            logsum += std::log(ratio);
            if (minname.empty() || ratio < minr) {
                minr = ratio;
                minname = r.s.name;
            }
        }
        std::printf("geometric mean of ratios (tgemm speed / cuBLAS speed): %.3f over %zu shapes\n",
                    std::exp(logsum / static_cast<double>(results.size())), results.size());
        std::printf("minimum ratio: %.3f (%s)\n", minr, minname.c_str());
    } else {
        std::printf("geometric mean of ratios: n/a (cuBLAS not loaded)\n");
    }

    finish(ctx, csv, csv_path);
}

}  // namespace bench
