// bench_multi's host side, plain C++ with no CUDA, so that the CPU test
// (tests/test_bench_multi.cpp, make test-bench-multi) compiles the same
// code: the host threads' fill, poison and copy of big arrays, the shapes,
// the output check at a sampled grid (or every element, from a reference
// the caller computes), and the parser of device lists.
#pragma once

#include "gemm_check.hpp"
#include "splitmix.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace multi {

// ------------------------------------------------------------------ host threads

// Threads of parallel_for (bench_multi: every core unless --threads).
inline unsigned g_threads = 1;

// fn(begin, end) over [0, n) in up to g_threads parts of at least `grain`
// items (but one), the last part on this thread.
inline void parallel_for(size_t n, const std::function<void(size_t, size_t)> &fn, size_t grain = 4096)
{
    const size_t parts = std::max<size_t>(1, std::min<size_t>(g_threads, n / grain + 1));
    std::vector<std::thread> pool;
    for (size_t t = 0; t < parts; ++t) {
        const size_t b = n * t / parts, e = n * (t + 1) / parts;
        if (t + 1 < parts)
            pool.emplace_back(fn, b, e);
        else
            fn(b, e);
    }
    for (std::thread &th : pool)
        th.join();
}

// Element idx of matrix `key`: uniform in (-1, 1) from 24 bits of
// splitmix64, the same for any number of threads.
inline float value_at(uint64_t key, uint64_t idx)
{
    uint64_t z = key * 0x9e3779b97f4a7c15ull + idx * 0xd1b54a32d192ed03ull + 0x632be59bd9b4e019ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    const uint32_t u = static_cast<uint32_t>(z >> 40);
    return static_cast<float>((static_cast<double>(u) + 0.5) * (1.0 / 8388608.0) - 1.0);
}

inline void fill(float *p, size_t n, uint64_t key)
{
    parallel_for(n, [=](size_t b, size_t e) {
        for (size_t i = b; i < e; ++i)
            p[i] = value_at(key, i);
    });
}

constexpr uint32_t kPoison = 0x7FC0DEADu;

inline void poison(float *p, size_t n)
{
    float nan;
    std::memcpy(&nan, &kPoison, sizeof nan);
    parallel_for(n, [=](size_t b, size_t e) { std::fill(p + b, p + e, nan); });
}

inline void copy(float *dst, const float *src, size_t n)
{
    parallel_for(n, [=](size_t b, size_t e) { std::memcpy(dst + b, src + b, (e - b) * sizeof(float)); });
}

// ------------------------------------------------------------------ shapes

struct Shape {
    int64_t m = 0, n = 0, k = 0;
    char ta = 'N', tb = 'N';
    int64_t lda() const { return ta == 'N' ? m : k; }
    int64_t ldb() const { return tb == 'N' ? k : n; }
    size_t na() const { return static_cast<size_t>(m) * static_cast<size_t>(k); }
    size_t nb() const { return static_cast<size_t>(k) * static_cast<size_t>(n); }
    size_t nc() const { return static_cast<size_t>(m) * static_cast<size_t>(n); }
    double flops() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }
    int64_t largest() const { return std::max(m, std::max(n, k)); }
    std::string name() const
    {
        if (m == n && n == k && ta == 'N' && tb == 'N')
            return std::to_string(m) + "^3";
        return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " " + ta + tb;
    }
};

// ------------------------------------------------------------------ the check

struct Check {
    // Full: R and G of every element (M x N, leading dimension M).
    std::unique_ptr<double[]> ref, mag;
    // Sampled: rows x cols grid; R and G at (rows[a], cols[b]) in sref[a + b * rows.size()].
    std::vector<int64_t> rows, cols;
    std::vector<double> sref, smag;
    bool full = false;
};

struct CheckResult {
    double worst = 0;  // largest |C - R| / bound
    bool passed = false;
    std::string detail;
};

// Sorted, without repeats: 0, n - 1 and one random index from each of
// `bands` equal bands of [0, n).
inline std::vector<int64_t> stratified(int64_t n, int64_t bands, bench::SplitMix64 &rng)
{
    std::vector<int64_t> v{0, n - 1};
    bands = std::min(bands, n);
    for (int64_t b = 0; b < bands; ++b) {
        const int64_t lo = n * b / bands, hi = n * (b + 1) / bands;
        if (hi > lo)
            v.push_back(lo + rng.below(hi - lo));
    }
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
}

// The sampled reference: op(A)'s sampled rows and op(B)'s sampled columns
// gathered, then FP64 dot products; beta's term from C0.
inline void make_sample(const Shape &s, const float *A, const float *B, double beta, const float *C0, int64_t sample,
                        uint64_t seed, Check &chk)
{
    bench::SplitMix64 rng{seed ^ 0x5a17e5ull};
    const int64_t bands = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(sample)))));
    chk.rows = stratified(s.m, bands, rng);
    chk.cols = stratified(s.n, bands, rng);
    const size_t R = chk.rows.size(), C = chk.cols.size(), K = static_cast<size_t>(s.k);
    std::vector<float> arows(R * K), bcols(C * K);
    const int64_t lda = s.lda(), ldb = s.ldb();
    parallel_for(R, [&](size_t b, size_t e) {
        for (size_t a = b; a < e; ++a)
            for (size_t p = 0; p < K; ++p) {
                const int64_t i = chk.rows[a], q = static_cast<int64_t>(p);
                arows[a * K + p] = s.ta == 'N' ? A[i + q * lda] : A[q + i * lda];
            }
    }, 1);
    parallel_for(C, [&](size_t b, size_t e) {
        for (size_t c = b; c < e; ++c)
            for (size_t p = 0; p < K; ++p) {
                const int64_t j = chk.cols[c], q = static_cast<int64_t>(p);
                bcols[c * K + p] = s.tb == 'N' ? B[q + j * ldb] : B[j + q * ldb];
            }
    }, 1);
    chk.sref.assign(R * C, 0.0);
    chk.smag.assign(R * C, 0.0);
    parallel_for(R * C, [&](size_t b, size_t e) {
        for (size_t x = b; x < e; ++x) {
            const size_t a = x % R, c = x / R;
            double dot, absdot;
            gemm_check::dot_fp64(&arows[a * K], 1, &bcols[c * K], 1, s.k, &dot, &absdot);
            if (beta != 0.0) {
                const double c0 = C0[chk.rows[a] + chk.cols[c] * s.m];
                dot += beta * c0;
                absdot += std::fabs(beta) * std::fabs(c0);
            }
            chk.sref[x] = dot;
            chk.smag[x] = absdot;
        }
    }, 16);
}

inline CheckResult check_output(const Shape &s, const Check &chk, const float *C)
{
    CheckResult res;
    gemm_check::Report rep;
    if (chk.full) {
        rep = gemm_check::check_parallel(s.m, s.n, C, s.m, chk.ref.get(), s.m, chk.mag.get(), s.m, s.k,
                                         static_cast<int>(g_threads));
        res.passed = rep.passed() && rep.checked == s.m * s.n;
        res.worst = rep.worst;
        if (!res.passed)
            res.detail = gemm_check::describe(rep);
        return res;
    }
    // Sampled: the grid against its reference...
    const size_t R = chk.rows.size(), Cn = chk.cols.size();
    const double factor = gemm_check::bound_factor(s.k), floor = gemm_check::bound_floor(s.k);
    double worst = 0;
    int64_t failed = 0, wi = -1, wj = -1;
    double wc = 0, wr = 0, wb = 0;
    for (size_t x = 0; x < R * Cn; ++x) {
        const int64_t i = chk.rows[x % R], j = chk.cols[x / R];
        const double c = C[i + j * s.m], r = chk.sref[x], bound = factor * chk.smag[x] + floor;
        const double err = std::fabs(c - r);
        const double ratio = std::isfinite(c) ? err / bound : INFINITY;
        if (!(err <= bound))
            ++failed;
        if (ratio > worst || wi < 0) {
            worst = ratio;
            wi = i;
            wj = j;
            wc = c;
            wr = r;
            wb = bound;
        }
    }
    // ... and every element finite.
    std::vector<int64_t> nonfinite(g_threads + 1, 0);
    std::vector<int64_t> first_bad(g_threads + 1, -1);
    const size_t nc = s.nc();
    std::atomic<size_t> slot{0};
    parallel_for(nc, [&](size_t b, size_t e) {
        const size_t me = slot++;
        int64_t count = 0, first = -1;
        for (size_t x = b; x < e; ++x)
            if (!std::isfinite(C[x])) {
                if (first < 0)
                    first = static_cast<int64_t>(x);
                ++count;
            }
        nonfinite[me] = count;
        first_bad[me] = first;
    });
    int64_t bad = 0, first = -1;
    for (size_t t = 0; t < nonfinite.size(); ++t) {
        bad += nonfinite[t];
        if (first_bad[t] >= 0 && (first < 0 || first_bad[t] < first))
            first = first_bad[t];
    }
    res.worst = bad ? INFINITY : worst;
    res.passed = failed == 0 && bad == 0 && std::isfinite(factor);
    if (!res.passed) {
        char buf[512];
        std::snprintf(buf, sizeof buf,
                      "%lld of %zu sampled elements over their bound (worst C(%lld, %lld) = %.9g, FP64 reference "
                      "%.17g, bound %.6e, error / bound %.3g); %lld of %zu elements not finite%s",
                      static_cast<long long>(failed), R * Cn, static_cast<long long>(wi), static_cast<long long>(wj),
                      wc, wr, wb, worst, static_cast<long long>(bad), nc,
                      first >= 0 ? (", the first at C(" + std::to_string(first % s.m) + ", " +
                                    std::to_string(first / s.m) + ")").c_str()
                                 : "");
        res.detail = buf;
    }
    return res;
}

// ------------------------------------------------------------------ device sets

// A list of device numbers ("0,1,2"), each in [0, count), or "all": every
// one. False, with the reason in err, for anything else ("auto" included:
// its set is the library's to choose, and the caller's to handle).
inline bool parse_devices(const std::string &text, int count, std::vector<int> &out, std::string &err)
{
    out.clear();
    if (text == "all") {
        for (int d = 0; d < count; ++d)
            out.push_back(d);
        return true;
    }
    size_t start = 0;
    for (;;) {
        const size_t p = text.find(',', start);
        const std::string part = text.substr(start, p == std::string::npos ? std::string::npos : p - start);
        char *end = nullptr;
        errno = 0;
        const long d = std::strtol(part.c_str(), &end, 10);
        if (part.empty() || !std::isdigit(static_cast<unsigned char>(part[0])) || errno != 0 || *end != '\0') {
            err = "'" + text + "' is not a list of device numbers (0,1,...) or all";
            return false;
        }
        if (d >= count) {
            err = "device " + std::to_string(d) + " does not exist (" + std::to_string(count) + " device(s))";
            return false;
        }
        out.push_back(static_cast<int>(d));
        if (p == std::string::npos)
            return true;
        start = p + 1;
    }
}

}  // namespace multi
