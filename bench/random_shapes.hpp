// Problems drawn at random from a seed, for the random-shape benchmark
// (issue 27): sizes log-uniform with edges oversampled, every transpose
// pair, padded leading dimensions, three alpha/beta classes, within caps on
// flops and memory so that a run of a few hundred stays within minutes.
// The same seed gives the same problems on every machine (a 64-bit
// generator of our own, no std:: distribution whose output may differ).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace bench {

struct RandomShape {
    int64_t m = 1, n = 1, k = 1;
    char ta = 'N', tb = 'N';
    int64_t lda = 1, ldb = 1, ldc = 1;
    float alpha = 1.0f, beta = 0.0f;
    int ab_class = 0;  // 0: alpha 1, beta 0; 1: alpha -1, beta 1; 2: both drawn from +-[0.25, 2]
};

struct RandomLimits {
    int64_t min_dim = 1;                 // m, n, k drawn log-uniform over [min_dim, max_dim]
    int64_t max_dim = 20000;
    double max_flops = 2.75e11;          // 2 m n k, at most
    double max_bytes = 512.0 * (1 << 20);  // A, B and C as stored (with their padding), at most
    double edge_share = 0.25;            // chance that a dimension is put near a multiple of a tile edge
};

// The tile edges a dimension is put near: a multiple of one of these, 1 to
// 3 below or above it.
constexpr int kRandomEdges[] = {8, 16, 32, 64, 128, 256};

// The draws of `bench_random --large`, for the fp32-tc math (issue 28):
// products around and above the sizes from which it runs (4096 in every
// dimension), up to 16384 x 8192 x 8192.
RandomLimits large_limits();

// `count` problems from `seed`.
std::vector<RandomShape> draw_random_shapes(uint64_t seed, int count, const RandomLimits &limits = {});

// Problems given as text, one a line: "m n k ta tb lda ldb ldc alpha beta"
// (ta, tb N or T; column-major, so lda >= m for N, >= k for T, and so on),
// blank lines and anything from '#' on ignored; ab_class from alpha and
// beta. False, with *error "line L: what", at the first line that is not
// such a problem, or when there is none.
bool parse_shapes(const char *text, std::vector<RandomShape> *out, std::string *error);

// Bytes of A, B and C as stored (column-major, with their leading dimensions).
double stored_bytes(const RandomShape &s);

// ------------------------------------------------------------------ what the report judges
// bench/random_report.py computes the same from the CSV: keep the two alike.

constexpr double kFloorFlops = 66.9e12;  // FP32 FFMA peak of the H100 SXM, flop/s
constexpr double kFloorBytes = 2.88e12;  // its device memory, bytes read + written per second

// 2 m n k.
double flops(const RandomShape &s);
// Bytes a call must move: A and B read once, C written once and, when beta
// is not 0, read once (the operands as used, not their padding).
double moved_bytes(const RandomShape &s);
// The shortest time a call can take, in microseconds: the larger of
// moved_bytes / kFloorBytes and flops / kFloorFlops.
double floor_us(const RandomShape &s);
// Memory-bound by shape: K <= 32, or m or n <= 16.
bool memory_bound(const RandomShape &s);
// An ordinary product: m and n over 16 and K over 64.
bool ordinary(const RandomShape &s);

// The p-th percentile (0 to 100) of v, interpolated linearly between the
// two nearest ranks (numpy's default); 0 for an empty v.
double percentile(std::vector<double> v, double p);
// exp(mean(log v)); 0 for an empty v.
double geomean(const std::vector<double> &v);

}  // namespace bench
