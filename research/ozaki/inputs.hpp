// The accuracy study's inputs, shared by accuracy.cpp and certify_test.cpp:
// (u - 0.5) exp(phi N(0,1)) entries and the adversarial variants, with the
// random numbers drawn in one fixed order (so results stay reproducible from
// their seeds). Layouts as ozaki2.hpp: A m x k row-major, B n x k.
#pragma once
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace oz2 {

// A study case: shape, and the input family (phi, kind; apply_kind).
struct Shape { int64_t m, n, k; };

struct Case {
    std::string name;
    double phi;       // (u - 0.5) * exp(phi * N(0,1))
    int kind;         // 0 plain, 1 zeros, 2 subnormal, 3 huge*tiny, 4 near max out,
                      // 5 row/col scale, 6 k scale, 7 alpha/beta
    float alpha = 1.0f, beta = 0.0f;
};


inline void gen_inputs(std::vector<float> &x, double phi, std::mt19937_64 &rng)
{
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::normal_distribution<double> g(0.0, 1.0);
    for (auto &v : x) v = float((u(rng) - 0.5) * std::exp(phi * g(rng)));
}

// kind: 1 zeros (30% of entries, a zero row of A and column of B), 2
// subnormal A x2^-135 / B x2^100, 3 huge A x2^120 / tiny B x2^-125, 4 near
// the maximum (x2^62, x2^60), 5 rows and columns scaled by 2^[-40,40], 6
// K-scaled 2^[-20,20] (A's column k by 2^e, B's row k by 2^-e); 0 none.
inline void apply_kind(int kind, int64_t m, int64_t n, int64_t k, std::vector<float> &A, std::vector<float> &B,
                       std::mt19937_64 &rng)
{
    std::uniform_real_distribution<double> u01(0, 1);
    std::uniform_int_distribution<int> sc40(-40, 40), sc20(-20, 20);
    switch (kind) {
    case 1:
        for (auto &v : A) if (u01(rng) < 0.3) v = 0;
        for (auto &v : B) if (u01(rng) < 0.3) v = 0;
        for (int64_t t = 0; t < k; ++t) { A[3 * k + t] = 0; B[5 * k + t] = 0; }
        break;
    case 2: for (auto &v : A) v = std::ldexp(v, -135); for (auto &v : B) v = std::ldexp(v, 100); break;
    case 3: for (auto &v : A) v = std::ldexp(v, 120); for (auto &v : B) v = std::ldexp(v, -125); break;
    case 4: for (auto &v : A) v = std::ldexp(v, 62); for (auto &v : B) v = std::ldexp(v, 60); break;
    case 5:
        for (int64_t i = 0; i < m; ++i) { int e = sc40(rng); for (int64_t t = 0; t < k; ++t) A[i * k + t] = std::ldexp(A[i * k + t], e); }
        for (int64_t j = 0; j < n; ++j) { int e = sc40(rng); for (int64_t t = 0; t < k; ++t) B[j * k + t] = std::ldexp(B[j * k + t], e); }
        break;
    case 6:
        for (int64_t t = 0; t < k; ++t) {
            int e = sc20(rng);
            for (int64_t i = 0; i < m; ++i) A[i * k + t] = std::ldexp(A[i * k + t], e);
            for (int64_t j = 0; j < n; ++j) B[j * k + t] = std::ldexp(B[j * k + t], -e);
        }
        break;
    default: break;
    }
}

}  // namespace oz2
