// Inputs of the fp32-tc math's tests (the acceptance set of issue 28 at
// small sizes): (u - 0.5) exp(phi N(0,1)) for phi = 0 .. 4, and the
// adversarial cases: zero rows and columns, subnormals, values near the
// range limits, rows and columns of wildly different scale, scale spread
// along k. Column-major operands with any transpose and ld padding.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace ozaki_inputs {

enum class Kind { Phi, Zeros, Subnormal, NearMax, HugeTiny, RowsCols, KScaled };

struct Case {
    const char *name;
    Kind kind;
    double phi;
};

inline const std::vector<Case> &cases()
{
    static const std::vector<Case> c = {
        {"phi0", Kind::Phi, 0.0},           {"phi0.5", Kind::Phi, 0.5},
        {"phi1", Kind::Phi, 1.0},           {"phi2", Kind::Phi, 2.0},
        {"phi4", Kind::Phi, 4.0},           {"zeros", Kind::Zeros, 0.5},
        {"subnormal", Kind::Subnormal, 0.5}, {"near-max", Kind::NearMax, 0.5},
        {"huge*tiny", Kind::HugeTiny, 0.5}, {"rows-cols-2^[-40,40]", Kind::RowsCols, 0.5},
        {"k-scaled-2^[-20,20]", Kind::KScaled, 0.5},
    };
    return c;
}

// One operand stored column-major: `rows` x `cols` with leading dimension
// ld >= rows; padding holds `pad`.
struct Matrix {
    int64_t rows = 0, cols = 0, ld = 0;
    std::vector<float> v;
    float &at(int64_t r, int64_t c) { return v[r + c * ld]; }
};

inline Matrix make_matrix(int64_t rows, int64_t cols, int64_t ld, float pad)
{
    Matrix x;
    x.rows = rows;
    x.cols = cols;
    x.ld = ld;
    x.v.assign(static_cast<size_t>(ld * cols), pad);
    return x;
}

// op(A) (m x k) and op(B) (k x n) for case c, stored as the transposes say.
// op(X)(r, kk) scaled as the case asks, through `set`.
inline void fill(const Case &c, bool ta, bool tb, int64_t m, int64_t n, int64_t k, uint64_t seed, Matrix &A,
                 Matrix &B)
{
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> uni(0.0, 1.0);
    std::normal_distribution<double> nrm(0.0, 1.0);
    auto value = [&]() { return static_cast<float>((uni(rng) - 0.5) * std::exp(c.phi * nrm(rng))); };
    auto a = [&](int64_t i, int64_t kk) -> float & { return ta ? A.at(kk, i) : A.at(i, kk); };
    auto b = [&](int64_t kk, int64_t j) -> float & { return tb ? B.at(j, kk) : B.at(kk, j); };
    for (int64_t kk = 0; kk < k; ++kk)
        for (int64_t i = 0; i < m; ++i)
            a(i, kk) = value();
    for (int64_t j = 0; j < n; ++j)
        for (int64_t kk = 0; kk < k; ++kk)
            b(kk, j) = value();
    // Every element of op(A) times 2^ea, of op(B) times 2^eb.
    auto scale = [&](int ea, int eb) {
        for (int64_t kk = 0; kk < k; ++kk) {
            for (int64_t i = 0; i < m; ++i)
                a(i, kk) = std::ldexp(a(i, kk), ea);
            for (int64_t j = 0; j < n; ++j)
                b(kk, j) = std::ldexp(b(kk, j), eb);
        }
    };
    switch (c.kind) {
    case Kind::Phi:
        break;
    case Kind::Zeros:  // a zero row of op(A), a zero column of op(B), a zero k
        for (int64_t kk = 0; kk < k; ++kk)
            a(m / 2, kk) = 0.0f;
        for (int64_t kk = 0; kk < k; ++kk)
            b(kk, n / 3) = 0.0f;
        for (int64_t i = 0; i < m; ++i)
            a(i, k / 2) = 0.0f;
        break;
    case Kind::Subnormal:  // op(A) 2^-135 (subnormal), op(B) 2^100
        scale(-135, 100);
        break;
    case Kind::NearMax:  // op(A) near the largest float, op(B) 2^-125
        scale(125, -125);
        break;
    case Kind::HugeTiny:  // op(A) 2^90, op(B) 2^-120
        scale(90, -120);
        break;
    case Kind::RowsCols: {  // each row of op(A) and column of op(B) scaled by 2^[-40, 40]
        std::uniform_int_distribution<int> e(-40, 40);
        for (int64_t i = 0; i < m; ++i) {
            const int s = e(rng);
            for (int64_t kk = 0; kk < k; ++kk)
                a(i, kk) = std::ldexp(a(i, kk), s);
        }
        for (int64_t j = 0; j < n; ++j) {
            const int s = e(rng);
            for (int64_t kk = 0; kk < k; ++kk)
                b(kk, j) = std::ldexp(b(kk, j), s);
        }
        break;
    }
    case Kind::KScaled: {  // column k of op(A) by 2^s_k, row k of op(B) by 2^-s_k
        std::uniform_int_distribution<int> e(-20, 20);
        for (int64_t kk = 0; kk < k; ++kk) {
            const int s = e(rng);
            for (int64_t i = 0; i < m; ++i)
                a(i, kk) = std::ldexp(a(i, kk), s);
            for (int64_t j = 0; j < n; ++j)
                b(kk, j) = std::ldexp(b(kk, j), -s);
        }
        break;
    }
    }
}

}  // namespace ozaki_inputs
