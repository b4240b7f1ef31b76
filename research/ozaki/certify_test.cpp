// The practical certificate (certify.hpp) on the accuracy study's input
// families, against the certificate with the exact |A||B| (accuracy.cpp's
// cert_log2), and a soundness check of both against the model's measured
// errors. Prints markdown; exits nonzero if any check fails. See NOTES.md (f).
//
//   ./certify_test [quick]      quick: 256^3 and 128x192x4096 only
//
// Scheme checked: K balancing + fast-cs scaling (what the GPU prototype runs).
// Inputs: the same generator, seeds and case list as accuracy.cpp, so that a
// shape and case present in both programs are the same matrices.
#include "certify.hpp"
#include "inputs.hpp"
#include "ozaki2.hpp"

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using std::vector;

using oz2::Case;
using oz2::Shape;

// The study's inputs (inputs.hpp, the draws in accuracy.cpp's order), and FP64 references.
static void make_case(const Shape &s, const Case &cs, uint64_t seed, vector<float> &A,
                      vector<float> &B, vector<float> &C0, vector<double> &absAB,
                      vector<double> &AB)
{
    std::mt19937_64 rng(seed);
    A.assign(s.m * s.k, 0.0f); B.assign(s.n * s.k, 0.0f); C0.assign(s.m * s.n, 0.0f);
    oz2::gen_inputs(A, cs.phi, rng); oz2::gen_inputs(B, cs.phi, rng);
    oz2::apply_kind(cs.kind, s.m, s.n, s.k, A, B, rng);
    absAB.assign(s.m * s.n, 0); AB.assign(s.m * s.n, 0);
    for (int64_t i = 0; i < s.m; ++i)
        for (int64_t j = 0; j < s.n; ++j) {
            // Products of floats are exact in double; the sums in long double
            // (64-bit significand) are within k 2^-64 of exact before the
            // final rounding to double.
            long double acc = 0, aa = 0;
            for (int64_t t = 0; t < s.k; ++t) {
                double p = double(A[i * s.k + t]) * double(B[j * s.k + t]);
                acc += p; aa += std::fabs(p);
            }
            AB[i * s.n + j] = double(acc); absAB[i * s.n + j] = double(aa);
        }
    if (cs.kind == 7) {
        std::normal_distribution<double> g(0, 1);
        for (size_t t = 0; t < C0.size(); ++t) C0[t] = float(g(rng) * absAB[t]);
    }
}

[[noreturn]] static void die(const char *what)
{
    std::printf("\n**CHECK FAILED: %s**\n", what);
    std::fflush(stdout);
    std::exit(1);
}

// Fraction as text: "0", or 3 significant digits.
static std::string frac(int64_t a, int64_t b)
{
    if (a == 0) return "0";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", double(a) / double(b));
    return buf;
}

static std::string nstr(int N) { return N > oz2::kMaxModuli ? ">14" : std::to_string(N); }

int main(int argc, char **argv)
{
    const bool quick = argc > 1 && !std::strcmp(argv[1], "quick");
    const int threads = 2;
    const int st = oz2::cert_selftest();
    std::printf("cert selftest (floors, ceilings, K-block split): %d failures\n\n", st);
    if (st) return 1;

    vector<Shape> shapes = {{256, 256, 256}, {512, 512, 512}, {384, 96, 1024}, {128, 192, 4096}, {128, 128, 8192}};
    if (quick) shapes = {{256, 256, 256}, {128, 192, 4096}};
    const vector<Case> cases = {
        {"phi=0", 0.0, 0}, {"phi=0.5", 0.5, 0}, {"phi=1", 1.0, 0}, {"phi=2", 2.0, 0}, {"phi=4", 4.0, 0},
        {"zeros (30%, zero row/col), phi=1", 1.0, 1},
        {"subnormal A (x2^-135) * B (x2^100), phi=0.5", 0.5, 2},
        {"huge A (x2^120) * tiny B (x2^-125), phi=0.5", 0.5, 3},
        {"near-max C: A x2^62, B x2^60, phi=0.5", 0.5, 4},
        {"rows of A, cols of B scaled 2^[-40,40], phi=0.5", 0.5, 5},
        {"k-scaled: A(:,k) x2^s_k, B(k,:) x2^-s_k, s_k in [-20,20], phi=0.5", 0.5, 6},
        {"alpha=-1.2345678e-3, beta=3.3333333, C0 ~ N(0,1)*|AB|, phi=1", 1.0, 7, -1.2345678e-3f, 3.3333333f},
    };
    const double u = 0x1p-24, u53 = 0x1p-53;
    const int64_t TM = 64, TN = 64;       // tile of the fallback plan (small shapes here)
    const double strict_cost = 25.0;      // strict SGEMM in INT8-modulus GEMMs (1367 TOPS / 53.6 TFLOP/s)

    std::printf("Scheme: K balancing + fast-cs scaling. \"N\": smallest N in 2..14 at which every element\n"
                "is certified (exact: E_ij <= (gamma_K - 2u)(|A||B|)_ij with exact |A||B| and 1-norms;\n"
                "u8 / s8: the practical certificate with floor-scaled magnitudes of 8, 7 bits; 16-bit:\n"
                "16 bits as two bytes, four u8 GEMMs).\n"
                "\"fail@N\": fraction of elements not certified at N. Tiles: %ldx%ld. Plan: the u8\n"
                "certificate's cheapest choice (N + strict tiles, or all strict) with strict = %.0f modulus\n"
                "GEMMs. Check: the model run at every N where the certificates pass some elements;\n"
                "each certified element's |C - C64| must be within strict's worst-case bound\n"
                "(gamma_K |A||B| for alpha = 1, beta = 0; with the alpha/beta epilogue otherwise).\n"
                "\"max err/bnd\": largest ratio among certified elements; \"exceed\": uncertified\n"
                "elements whose error exceeded the bound (model runs at those N); \"err/E\": largest\n"
                "|C - C64| / (E_ij + u(Z_ij + E_ij)) over all elements and those N (alpha = 1, beta = 0).\n\n",
                long(TM), long(TN), strict_cost);
    std::printf("| shape | case | N exact | N u8 | N s8 | N 16-bit | fail@7 exact / u8 | fail@8 exact / u8 "
                "| tiles fail@7 / @8 (u8) | plan (u8) | L'=0 (u8) | checked (N range) | max err/bnd | exceed | err/E | seed |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    std::fflush(stdout);

    int64_t total_checked = 0;
    for (const Shape &s : shapes) {
        for (size_t ci = 0; ci < cases.size(); ++ci) {
            const Case &cs = cases[ci];
            if (cs.kind != 0 && s.m == 512) continue;  // adversarial cases at the cheaper shapes
            const uint64_t seed = 1000003ull * (ci + 1) + uint64_t(s.m * 7 + s.n * 11 + s.k * 13);
            const int64_t m = s.m, n = s.n, k = s.k;
            vector<float> A, B, C0;
            vector<double> Z, AB;
            make_case(s, cs, seed, A, B, C0, Z, AB);
            vector<float> Ab, Bb;
            oz2::balance_k(m, n, k, A.data(), B.data(), Ab, Bb);
            // K balancing must leave every product unchanged (else the balanced
            // problem is not the caller's and no certificate about it helps).
            for (int64_t i = 0; i < m; ++i)
                for (int64_t j = 0; j < n; ++j) {
                    long double aa = 0;
                    for (int64_t t = 0; t < k; ++t) aa += std::fabs(double(Ab[i * k + t]) * double(Bb[j * k + t]));
                    if (double(aa) != Z[i * n + j]) die("K balancing changed a product");
                }

            // Exact certificate (accuracy.cpp's cert_log2, per element), on the
            // balanced operands.
            const double gK = k * u / (1 - k * u);
            const double gam = gK - 2 * u;
            vector<double> SA(m), SB(n);
            for (int64_t i = 0; i < m; ++i) {
                long double a = 0;
                for (int64_t t = 0; t < k; ++t) a += std::fabs(Ab[i * k + t]);
                SA[i] = double(a);
            }
            for (int64_t j = 0; j < n; ++j) {
                long double b = 0;
                for (int64_t t = 0; t < k; ++t) b += std::fabs(Bb[j * k + t]);
                SB[j] = double(b);
            }
            vector<uint16_t> xpass(m * n, 0);
            int nexact = oz2::kMaxModuli + 1;
            int64_t xfail[oz2::kMaxModuli + 1] = {};
            vector<vector<int>> MU(oz2::kMaxModuli + 1), NU(oz2::kMaxModuli + 1);
            for (int N = 2; N <= oz2::kMaxModuli; ++N) {
                oz2::Params p; p.nmod = N; p.scaling = oz2::Scaling::FastCS; p.threads = threads;
                oz2::scaling_exponents(m, n, k, Ab.data(), Bb.data(), p, MU[N], NU[N]);
                for (int64_t i = 0; i < m; ++i)
                    for (int64_t j = 0; j < n; ++j) {
                        const double z = Z[i * n + j];
                        const double E = std::ldexp(SB[j], -MU[N][i]) + std::ldexp(SA[i], -NU[N][j]);
                        // Z = 0: every term has a zero factor and the scheme is exact there.
                        if (z == 0 || E <= gam * z) xpass[i * n + j] |= uint16_t(1u << N);
                        else ++xfail[N];
                    }
                if (xfail[N] == 0 && nexact > oz2::kMaxModuli) nexact = N;
            }

            // Practical certificates: u8 (the GPU's), s8 (7 bits: the residue
            // GEMM's s8 kernel as is), 16 bits (what-if).
            oz2::Certificate c8, c7, c16;
            oz2::CertParams cp; cp.threads = threads;
            cp.bits = 8; oz2::certify(m, n, k, Ab.data(), Bb.data(), cp, c8);
            cp.bits = 7; oz2::certify(m, n, k, Ab.data(), Bb.data(), cp, c7);
            cp.bits = 16; oz2::certify(m, n, k, Ab.data(), Bb.data(), cp, c16);

            // Lemma checks: L_ij <= (|A||B|)_ij and 2^-(s+d) IA_i >= ||a_i||_1
            // (Z and SA are long double sums rounded to double, within
            // 2^-53 + k 2^-64 of the true values; the tolerance covers that).
            int64_t lzero = 0;
            for (const oz2::Certificate *c : {&c7, &c8, &c16}) {
                const oz2::MagOperands &mo = c->mo;
                for (int64_t i = 0; i < m; ++i)
                    for (int64_t j = 0; j < n; ++j) {
                        if (mo.zA[i] || mo.zB[j]) continue;
                        const double L = std::ldexp(double(c->Lp[i * n + j]), -(mo.s[i] + mo.t[j]));
                        if (L > Z[i * n + j] * (1 + (k + 1) * 2 * u53)) die("L_ij > (|A||B|)_ij");
                        if (c == &c8 && c->Lp[i * n + j] == 0) ++lzero;
                    }
                for (int64_t i = 0; i < m; ++i)
                    if (std::ldexp(double(mo.IA[i]), -(mo.s[i] + mo.d())) < SA[i] * (1 - (k + 1) * 2 * u53))
                        die("2^-(s+d) IA_i < ||a_i||_1");
                for (int64_t j = 0; j < n; ++j)
                    if (std::ldexp(double(mo.IB[j]), -(mo.t[j] + mo.d())) < SB[j] * (1 - (k + 1) * 2 * u53))
                        die("2^-(t+d) IB_j < ||b_j||_1");
            }
            // The practical certificates imply the exact one (L <= Z), and a
            // wider magnitude GEMM certifies at least as much (nested floors).
            // And each is monotone in N (what lets a GPU keep one byte, the
            // smallest certified N, per element or tile).
            for (int64_t t = 0; t < m * n; ++t) {
                if ((c8.pass[t] & ~xpass[t]) || (c7.pass[t] & ~c8.pass[t]) || (c8.pass[t] & ~c16.pass[t]))
                    die("certificates not nested (s8 <= u8 <= 16-bit <= exact)");
                for (const oz2::Certificate *c : {&c7, &c8, &c16})
                    for (int N = 2; N <= oz2::kMaxModuli; ++N)
                        if (bool(c->pass[t] >> N & 1u) != (c->nreq[t] <= N)) die("certificate not monotone in N");
            }

            // Soundness against the model: every N at which some element is
            // certified (by any of them) but not every element by u8.
            // (Elements of a zero row or column pass at every N: not counted for nlo.)
            int nlo = 0;
            for (int N = 2; N <= oz2::kMaxModuli && !nlo; ++N)
                for (int64_t t = 0; t < m * n && !nlo; ++t)
                    if ((xpass[t] >> N & 1u) && !c8.mo.zA[t / n] && !c8.mo.zB[t % n]) nlo = N;
            const int nhi = std::min(c8.ncall, oz2::kMaxModuli);
            int64_t checked = 0, exceed = 0, outside = 0;
            double worst = 0, worst_e = 0;
            for (int N = nlo; nlo && N <= nhi; ++N) {
                oz2::Params p; p.nmod = N; p.scaling = oz2::Scaling::FastCS; p.threads = threads;
                vector<float> C = C0;
                oz2::Info info;
                oz2::gemm(m, n, k, cs.alpha, Ab.data(), Bb.data(), cs.beta, C.data(), p, &info);
                if (info.mu != MU[N] || info.nu != NU[N]) die("model's exponents differ from scaling_exponents");
                const double al = std::fabs(double(cs.alpha)), be = std::fabs(double(cs.beta));
                for (int64_t i = 0; i < m; ++i)
                    for (int64_t j = 0; j < n; ++j) {
                        const int64_t t = i * n + j;
                        const double z = Z[t], c0 = std::fabs(double(C0[t]));
                        const double ref = double(cs.alpha) * AB[t] + double(cs.beta) * double(C0[t]);
                        // Strict's worst-case bound after its epilogue: e = gamma_K Z
                        // before it; v = fl(alpha r), c = fl(beta c0 + v) (NOTES.md (f)).
                        const double e = gK * z;
                        const double bnd = (cs.alpha == 1.0f && cs.beta == 0.0f)
                                               ? e
                                               : al * e + u * (2 + u) * al * (z + e) + u * be * c0;
                        // The FP64 reference's own error (long double sum of exact
                        // products, then two double operations), over-estimated
                        // as (k + 2) 2^-53 (|alpha| Z + |beta||c0|).
                        const double tol = (k + 2) * 2 * u53 * (al * z + be * c0);
                        if (std::fabs(ref) > double(FLT_MAX) || (bnd > 0 && bnd < 0x1p-120)) { ++outside; continue; }
                        const double err = std::fabs(double(C[t]) - ref);
                        if (cs.alpha == 1.0f && cs.beta == 0.0f) {
                            // NOTES.md (b)'s bound of the mode itself, every element:
                            // E + (u + 2^-47)(Z + E) (final rounding, Horner in double).
                            const double E = std::ldexp(SB[j], -MU[N][i]) + std::ldexp(SA[i], -NU[N][j]);
                            const double eb = E + (u + 0x1p-47) * (z + E);
                            if (err > eb * (1 + 0x1p-40) + tol) {
                                std::printf("\n%ldx%ldx%ld %s N=%d element (%ld,%ld): |C-C64| = %.6e > E + u(Z+E) = %.6e\n",
                                            long(m), long(n), long(k), cs.name.c_str(), N, long(i), long(j), err, eb);
                                die("the truncation bound E_ij of NOTES.md (b) is violated");
                            }
                            if (eb > 0) worst_e = std::max(worst_e, err / eb);
                        }
                        const bool cert = (xpass[t] | c16.pass[t]) >> N & 1u;
                        if (!std::isfinite(C[t]) || err > bnd + tol) {
                            if (cert) {
                                std::printf("\n%ldx%ldx%ld %s N=%d element (%ld,%ld): |C-C64| = %.6e > bound %.6e "
                                            "(Z = %.6e, exact %d, u8 %d, 16-bit %d)\n",
                                            long(m), long(n), long(k), cs.name.c_str(), N, long(i), long(j), err,
                                            bnd, z, int(xpass[t] >> N & 1u), int(c8.pass[t] >> N & 1u),
                                            int(c16.pass[t] >> N & 1u));
                                die("a certified element exceeds strict FP32's worst-case bound");
                            }
                            ++exceed;
                        } else if (cert) {
                            ++checked;
                            if (bnd > 0) worst = std::max(worst, err / bnd);
                        }
                    }
            }
            if (outside) die("elements outside FP32's normal range in a test case (bound does not apply)");
            total_checked += checked;

            // Tiles failing at N = 7, 8 and the plan.
            auto tiles_failing = [&](const oz2::Certificate &c, int N) {
                const vector<uint8_t> tb = oz2::tile_nreq(c, m, n, TM, TN);
                int64_t bad = 0;
                for (uint8_t b : tb) bad += b > N;
                return frac(bad, int64_t(tb.size()));
            };
            const oz2::TilePlan plan = oz2::plan_tiles(c8, m, n, TM, TN, strict_cost);
            char planbuf[64];
            if (plan.all_strict) std::snprintf(planbuf, sizeof planbuf, "strict");
            else if (plan.strict_tiles == 0) std::snprintf(planbuf, sizeof planbuf, "N=%d", plan.n);
            else std::snprintf(planbuf, sizeof planbuf, "N=%d + %ld/%ld strict", plan.n, long(plan.strict_tiles), long(plan.tiles));
            const int64_t mn = m * n;
            std::string cname;  // '|' would split a markdown cell
            for (char ch : cs.name) { if (ch == '|') cname += '\\'; cname += ch; }
            char ebuf[32];
            if (cs.alpha == 1.0f && cs.beta == 0.0f) std::snprintf(ebuf, sizeof ebuf, "%.2g", worst_e);
            else std::snprintf(ebuf, sizeof ebuf, "-");
            std::printf("| %ldx%ldx%ld | %s | %s | %s | %s | %s | %s / %s | %s / %s | %s / %s | %s | %s | %ld (%d..%d) | %.2g | %ld | %s | %llu |\n",
                        long(m), long(n), long(k), cname.c_str(), nstr(nexact).c_str(), nstr(c8.ncall).c_str(),
                        nstr(c7.ncall).c_str(), nstr(c16.ncall).c_str(), frac(xfail[7], mn).c_str(),
                        frac(c8.nfail[7], mn).c_str(), frac(xfail[8], mn).c_str(), frac(c8.nfail[8], mn).c_str(),
                        tiles_failing(c8, 7).c_str(), tiles_failing(c8, 8).c_str(), planbuf, frac(lzero, mn).c_str(),
                        long(checked), nlo, nhi, worst, long(exceed), ebuf, (unsigned long long)seed);
            std::fflush(stdout);
        }
    }
    std::printf("\nAll checks passed: %ld certified (element, N) pairs within strict FP32's worst-case bound.\n",
                long(total_checked));
    return 0;
}
