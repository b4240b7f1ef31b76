#include "random_shapes.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "splitmix.hpp"

namespace bench {
namespace {

using Rng = SplitMix64;

// Over [least, most]; with least 1 the draws of the generator's first form.
int64_t log_uniform(Rng &r, int64_t least, int64_t most)
{
    const double lo = std::log(static_cast<double>(least));
    const double v = std::exp(lo + r.uniform() * (std::log(static_cast<double>(most) + 1.0) - lo));
    return std::clamp<int64_t>(static_cast<int64_t>(v), least, most);
}

// d moved to 1 to 3 below or above the nearest multiple of a tile edge.
int64_t near_edge(Rng &r, int64_t d, int64_t least, int64_t most)
{
    const int64_t edge = kRandomEdges[r.below(sizeof kRandomEdges / sizeof kRandomEdges[0])];
    const int64_t multiple = std::max<int64_t>(edge, (d + edge / 2) / edge * edge);
    const int64_t off = 1 + r.below(3);
    const int64_t v = r.below(2) == 0 ? multiple - off : multiple + off;
    return std::clamp<int64_t>(v, least, most);
}

// A leading dimension: the rows stored, padded by nothing half of the time,
// else by 1 to 64 (odd as often as even).
int64_t padded(Rng &r, int64_t rows)
{
    return rows + (r.below(2) == 0 ? 0 : 1 + r.below(64));
}

float scale(Rng &r)
{
    const float v = static_cast<float>(0.25 + 1.75 * r.uniform());
    return r.below(2) == 0 ? v : -v;
}

}  // namespace

double stored_bytes(const RandomShape &s)
{
    const double a_cols = s.ta == 'N' ? static_cast<double>(s.k) : static_cast<double>(s.m);
    const double b_cols = s.tb == 'N' ? static_cast<double>(s.n) : static_cast<double>(s.k);
    return 4.0 * (static_cast<double>(s.lda) * a_cols + static_cast<double>(s.ldb) * b_cols +
                  static_cast<double>(s.ldc) * static_cast<double>(s.n));
}

RandomLimits large_limits()
{
    RandomLimits l;
    l.min_dim = 2048;
    l.max_dim = 20000;
    l.max_flops = 2.2e12;
    l.max_bytes = 2.0 * (1 << 30);
    return l;
}

std::vector<RandomShape> draw_random_shapes(uint64_t seed, int count, const RandomLimits &limits)
{
    Rng r{seed};
    std::vector<RandomShape> out;
    out.reserve(static_cast<size_t>(std::max(count, 0)));
    while (static_cast<int>(out.size()) < count) {
        RandomShape s;
        int64_t *dims[] = {&s.m, &s.n, &s.k};
        for (int64_t *d : dims) {
            *d = log_uniform(r, limits.min_dim, limits.max_dim);
            if (r.uniform() < limits.edge_share)
                *d = near_edge(r, *d, limits.min_dim, limits.max_dim);
        }
        s.ta = r.below(2) == 0 ? 'N' : 'T';
        s.tb = r.below(2) == 0 ? 'N' : 'T';
        s.lda = padded(r, s.ta == 'N' ? s.m : s.k);
        s.ldb = padded(r, s.tb == 'N' ? s.k : s.n);
        s.ldc = padded(r, s.m);
        s.ab_class = static_cast<int>(r.below(3));
        if (s.ab_class == 1) {
            s.alpha = -1.0f;
            s.beta = 1.0f;
        } else if (s.ab_class == 2) {
            s.alpha = scale(r);
            s.beta = scale(r);
        }
        // Over a cap: drawn again (the draws stay log-uniform inside the caps).
        if (2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) > limits.max_flops ||
            stored_bytes(s) > limits.max_bytes)
            continue;
        out.push_back(s);
    }
    return out;
}

double flops(const RandomShape &s)
{
    return 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
}

double moved_bytes(const RandomShape &s)
{
    const double m = static_cast<double>(s.m), n = static_cast<double>(s.n), k = static_cast<double>(s.k);
    return 4.0 * (m * k + k * n + m * n * (s.beta != 0.0f ? 2.0 : 1.0));
}

double floor_us(const RandomShape &s)
{
    return 1e6 * std::max(moved_bytes(s) / kFloorBytes, flops(s) / kFloorFlops);
}

bool memory_bound(const RandomShape &s)
{
    return s.k <= 32 || std::min(s.m, s.n) <= 16;
}

bool ordinary(const RandomShape &s)
{
    return s.m > 16 && s.n > 16 && s.k > 64;
}

double percentile(std::vector<double> v, double p)
{
    if (v.empty())
        return 0.0;
    std::sort(v.begin(), v.end());
    const double pos = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(v.size() - 1);
    const size_t lo = static_cast<size_t>(pos);
    const double frac = pos - static_cast<double>(lo);
    return lo + 1 < v.size() ? v[lo] + (v[lo + 1] - v[lo]) * frac : v[lo];
}

double geomean(const std::vector<double> &v)
{
    if (v.empty())
        return 0.0;
    double sum = 0.0;
    for (double x : v)
        sum += std::log(x);
    return std::exp(sum / static_cast<double>(v.size()));
}

bool parse_shapes(const char *text, std::vector<RandomShape> *out, std::string *error)
{
    out->clear();
    int no = 0;
    for (const char *line = text; *line != '\0';) {
        const char *eol = std::strchr(line, '\n');
        std::string buf(line, eol != nullptr ? static_cast<size_t>(eol - line) : std::strlen(line));
        line = eol != nullptr ? eol + 1 : line + buf.size();
        ++no;
        if (const size_t hash = buf.find('#'); hash != std::string::npos)
            buf.resize(hash);
        RandomShape s;
        long long m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
        char ta = 0, tb = 0, extra = 0;
        const int got = std::sscanf(buf.c_str(), " %lld %lld %lld %c %c %lld %lld %lld %f %f %c", &m, &n, &k, &ta, &tb,
                                    &lda, &ldb, &ldc, &s.alpha, &s.beta, &extra);
        if (buf.find_first_not_of(" \t\r") == std::string::npos)
            continue;  // blank, or a comment only
        const bool ops = (ta == 'N' || ta == 'T') && (tb == 'N' || tb == 'T');
        if (got != 10 || !ops || m < 1 || n < 1 || k < 1 || lda < (ta == 'N' ? m : k) ||
            ldb < (tb == 'N' ? k : n) || ldc < m) {
            *error = "line " + std::to_string(no) +
                     ": not a problem 'm n k ta tb lda ldb ldc alpha beta' (N or T, each ld at least its rows)";
            return false;
        }
        s.m = m, s.n = n, s.k = k, s.ta = ta, s.tb = tb, s.lda = lda, s.ldb = ldb, s.ldc = ldc;
        s.ab_class = s.alpha == 1.0f && s.beta == 0.0f ? 0 : s.alpha == -1.0f && s.beta == 1.0f ? 1 : 2;
        out->push_back(s);
    }
    if (out->empty()) {
        *error = "no problem in it";
        return false;
    }
    return true;
}

}  // namespace bench
