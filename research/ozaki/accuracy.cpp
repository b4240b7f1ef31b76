// Accuracy of the Ozaki-II model against strict FP32 on the issue's
// acceptance set (small sizes). Prints markdown. See NOTES.md.
//
//   ./accuracy [quick]      quick: 256^3 and one rectangular shape only
#include "inputs.hpp"
#include "ozaki2.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using std::vector;

using oz2::Case;
using oz2::Shape;

struct Err { double max_rel = 0, normwise = 0; };

// max_ij |C - C64| / (|alpha||A||B| + |beta||C0|)_ij and ||C - C64||_F / ||C64||_F
static Err errors(const vector<float> &C, const vector<double> &C64, const vector<double> &den)
{
    Err e; double num = 0, dn = 0;
    for (size_t t = 0; t < C.size(); ++t) {
        double d = std::fabs(double(C[t]) - C64[t]);
        if (!std::isfinite(C[t])) d = INFINITY;
        if (d > 0) e.max_rel = std::max(e.max_rel, den[t] > 0 ? d / den[t] : INFINITY);
        num += d * d; dn += C64[t] * C64[t];
    }
    e.normwise = dn > 0 ? std::sqrt(num / dn) : (num > 0 ? INFINITY : 0);
    return e;
}

// Strict FP32: sequential order, non-fused (fma == false) or fused.
static void strict(const Shape &s, float alpha, const vector<float> &A, const vector<float> &B,
                   float beta, vector<float> &C, bool fma)
{
    for (int64_t i = 0; i < s.m; ++i)
        for (int64_t j = 0; j < s.n; ++j) {
            const float *a = &A[i * s.k], *b = &B[j * s.k];
            float acc = 0.0f;
            if (fma) for (int64_t t = 0; t < s.k; ++t) acc = std::fma(a[t], b[t], acc);
            else for (int64_t t = 0; t < s.k; ++t) { float p = a[t] * b[t]; acc = acc + p; }
            float v = alpha * acc;
            float &c = C[i * s.n + j];
            c = beta != 0.0f ? std::fma(beta, c, v) : v;
        }
}

// Certification of contract (a) from the scaling exponents: the truncation
// error of element ij is at most
//   Bnd_ij = 2^-mu_i * sum_k |b_kj| + 2^-nu_j * sum_k |a_ik|
// (NOTES.md (b)); contract (a) holds when Bnd_ij <= (gamma_K - 2u) (|A||B|)_ij.
// Returns log2 of max_ij Bnd_ij / ((gamma_K - 2u) (|A||B|)_ij): <= 0 certifies.
static double cert_log2(const Shape &s, const vector<float> &A, const vector<float> &B,
                        const vector<double> &absAB, const vector<int> &mu, const vector<int> &nu)
{
    const double u = std::ldexp(1.0, -24);
    const double gam = s.k * u / (1 - s.k * u) - 2 * u;
    vector<double> SA(s.m, 0), SB(s.n, 0);
    for (int64_t i = 0; i < s.m; ++i) for (int64_t t = 0; t < s.k; ++t) SA[i] += std::fabs(A[i * s.k + t]);
    for (int64_t j = 0; j < s.n; ++j) for (int64_t t = 0; t < s.k; ++t) SB[j] += std::fabs(B[j * s.k + t]);
    double worst = 0;
    for (int64_t i = 0; i < s.m; ++i)
        for (int64_t j = 0; j < s.n; ++j) {
            double ab = absAB[i * s.n + j];
            if (ab == 0) continue;  // every term has a zero factor: the scheme is exact there
            double bnd = std::ldexp(SB[j], -mu[i]) + std::ldexp(SA[i], -nu[j]);
            worst = std::max(worst, bnd / (gam * ab));
        }
    return worst > 0 ? std::log2(worst) : -INFINITY;
}

static void fmt(char *buf, double v)
{
    if (std::isinf(v)) std::snprintf(buf, 32, "inf");
    else if (v == 0) std::snprintf(buf, 32, "0");
    else std::snprintf(buf, 32, "%.1e", v);
}

int main(int argc, char **argv)
{
    bool quick = argc > 1 && !std::strcmp(argv[1], "quick");
    int bad = oz2::selftest();
    std::printf("selftest (Garner + residue path vs exact int128, N = 2..14): %d mismatches\n\n", bad);
    if (bad) return 1;

    vector<Shape> shapes = {{256, 256, 256}, {512, 512, 512}, {128, 192, 4096}, {384, 96, 1024}};
    if (quick) shapes = {{256, 256, 256}, {128, 192, 4096}};
    vector<Case> cases = {
        {"phi=0", 0.0, 0}, {"phi=0.5", 0.5, 0}, {"phi=1", 1.0, 0}, {"phi=2", 2.0, 0}, {"phi=4", 4.0, 0},
        {"zeros (30%, zero row/col), phi=1", 1.0, 1},
        {"subnormal A (x2^-135) * B (x2^100), phi=0.5", 0.5, 2},
        {"huge A (x2^120) * tiny B (x2^-125), phi=0.5", 0.5, 3},
        {"near-max C: A x2^62, B x2^60, phi=0.5", 0.5, 4},
        {"rows of A, cols of B scaled 2^[-40,40], phi=0.5", 0.5, 5},
        {"k-scaled: A(:,k) x2^s_k, B(k,:) x2^-s_k, s_k in [-20,20], phi=0.5", 0.5, 6},
        {"alpha=-1.2345678e-3, beta=3.3333333, C0 ~ N(0,1)*|AB|, phi=1", 1.0, 7, -1.2345678e-3f, 3.3333333f},
    };
    const oz2::Scaling modes[] = {oz2::Scaling::Fast, oz2::Scaling::FastCS, oz2::Scaling::Accurate};

    for (const Shape &s : shapes) {
        for (size_t ci = 0; ci < cases.size(); ++ci) {
            const Case &cs = cases[ci];
            if (cs.kind != 0 && s.m == 512) continue;  // adversarial cases at the cheaper shapes
            const uint64_t seed = 1000003ull * (ci + 1) + uint64_t(s.m * 7 + s.n * 11 + s.k * 13);
            std::mt19937_64 rng(seed);
            vector<float> A(s.m * s.k), B(s.n * s.k), C0(s.m * s.n, 0.0f);
            oz2::gen_inputs(A, cs.phi, rng); oz2::gen_inputs(B, cs.phi, rng);
            oz2::apply_kind(cs.kind, s.m, s.n, s.k, A, B, rng);
            // Reference in FP64 (products of floats are exact in double).
            vector<double> C64(s.m * s.n), absAB(s.m * s.n), den(s.m * s.n);
            for (int64_t i = 0; i < s.m; ++i)
                for (int64_t j = 0; j < s.n; ++j) {
                    double acc = 0, aa = 0;
                    for (int64_t t = 0; t < s.k; ++t) {
                        double p = double(A[i * s.k + t]) * double(B[j * s.k + t]);
                        acc += p; aa += std::fabs(p);
                    }
                    C64[i * s.n + j] = acc; absAB[i * s.n + j] = aa;
                }
            if (cs.kind == 7) {
                std::normal_distribution<double> g(0, 1);
                for (size_t t = 0; t < C0.size(); ++t) C0[t] = float(g(rng) * absAB[t]);
            }
            for (size_t t = 0; t < C64.size(); ++t) {
                double c = double(cs.alpha) * C64[t] + double(cs.beta) * double(C0[t]);
                den[t] = std::fabs(double(cs.alpha)) * absAB[t] + std::fabs(double(cs.beta)) * std::fabs(double(C0[t]));
                C64[t] = c;
            }
            std::printf("### %ldx%ldx%ld, %s (seed %llu)\n\n", long(s.m), long(s.n), long(s.k), cs.name.c_str(),
                        (unsigned long long)seed);
            std::printf("| method | max rel | normwise | cert log2 |\n|---|---|---|---|\n");
            char b1[32], b2[32];
            for (int f = 0; f < 2; ++f) {
                vector<float> C = C0;
                strict(s, cs.alpha, A, B, cs.beta, C, f == 1);
                Err e = errors(C, C64, den);
                fmt(b1, e.max_rel); fmt(b2, e.normwise);
                std::printf("| strict FP32 %s | %s | %s | |\n", f ? "FMA" : "seq", b1, b2);
            }
            for (oz2::Scaling md : modes) {
                for (int N = 6; N <= 10; ++N) {
                    oz2::Params p; p.nmod = N; p.scaling = md;
                    vector<float> C = C0;
                    oz2::Info info;
                    oz2::gemm(s.m, s.n, s.k, cs.alpha, A.data(), B.data(), cs.beta, C.data(), p, &info);
                    Err e = errors(C, C64, den);
                    double cl = cert_log2(s, A, B, absAB, info.mu, info.nu);
                    fmt(b1, e.max_rel); fmt(b2, e.normwise);
                    std::printf("| ozaki2 %s N=%d | %s | %s | %+.1f |\n", oz2::scaling_name(md), N, b1, b2, cl);
                }
            }
            // K balancing + accurate scaling (our addition).
            vector<float> Ab, Bb;
            oz2::balance_k(s.m, s.n, s.k, A.data(), B.data(), Ab, Bb);
            for (int N = 6; N <= 10; ++N) {
                oz2::Params p; p.nmod = N; p.scaling = oz2::Scaling::Accurate;
                vector<float> C = C0;
                oz2::Info info;
                oz2::gemm(s.m, s.n, s.k, cs.alpha, Ab.data(), Bb.data(), cs.beta, C.data(), p, &info);
                Err e = errors(C, C64, den);
                double cl = cert_log2(s, Ab, Bb, absAB, info.mu, info.nu);
                fmt(b1, e.max_rel); fmt(b2, e.normwise);
                std::printf("| ozaki2 kbal+accurate N=%d | %s | %s | %+.1f |\n", N, b1, b2, cl);
            }
            // Smallest N certified by the bound, per scaling (exponents only).
            std::printf("\nsmallest N with cert <= 0:");
            for (oz2::Scaling md : modes) {
                int found = 0;
                for (int N = 2; N <= oz2::kMaxModuli && !found; ++N) {
                    oz2::Params p; p.nmod = N; p.scaling = md;
                    vector<int> mu, nu;
                    oz2::scaling_exponents(s.m, s.n, s.k, A.data(), B.data(), p, mu, nu);
                    if (cert_log2(s, A, B, absAB, mu, nu) <= 0) found = N;
                }
                if (found) std::printf(" %s %d;", oz2::scaling_name(md), found);
                else std::printf(" %s >14;", oz2::scaling_name(md));
            }
            {
                int found = 0;
                for (int N = 2; N <= oz2::kMaxModuli && !found; ++N) {
                    oz2::Params p; p.nmod = N; p.scaling = oz2::Scaling::Accurate;
                    vector<int> mu, nu;
                    oz2::scaling_exponents(s.m, s.n, s.k, Ab.data(), Bb.data(), p, mu, nu);
                    if (cert_log2(s, Ab, Bb, absAB, mu, nu) <= 0) found = N;
                }
                if (found) std::printf(" kbal+accurate %d;", found); else std::printf(" kbal+accurate >14;");
            }
            std::printf("\n\n");
            std::fflush(stdout);
        }
    }
    return 0;
}
