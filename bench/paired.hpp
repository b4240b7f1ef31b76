// Two code paths timed in the same rounds (bench_random --math-compare):
// per round r the ratio q_r = x_r / base_r, their median, and the
// distribution-free confidence interval of that median from the order
// statistics (the sign test's): [q_(j), q_(n+1-j)], j the largest rank
// with P(Binomial(n, 1/2) < j) <= (1 - confidence) / 2. The two calls of
// a round run next to each other, so what drifts from round to round
// (clocks, other work on the machine) cancels in q_r; a ratio whose
// interval lies wholly above 1/0.98 (1.0204) is slower by more than 2%
// beyond what the rounds' spread explains. No CUDA: tests/test_bench_check.cpp runs it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace bench {

struct PairedRatio {
    int rounds = 0;     // rounds with both times
    double median = 0;  // 0 without rounds
    // The interval at the confidence asked; both 0 where the rounds are too
    // few for any (under 6 at 95%).
    double lo = 0, hi = 0;
};

// j above for n rounds (0: no interval at that confidence), at most the
// median's rank. Each term P(X = i) from logarithms, so that 0.5^n does not
// underflow for long runs.
inline int sign_rank(int n, double confidence)
{
    const double tail = (1.0 - confidence) / 2.0;
    const double log_all = std::lgamma(n + 1.0) - n * std::log(2.0);
    double below = 0.0;  // P(X < i)
    int j = 0;
    for (int i = 1; i <= (n + 1) / 2; ++i) {
        below += std::exp(log_all - std::lgamma(static_cast<double>(i)) - std::lgamma(n - i + 2.0));  // P(X = i - 1)
        if (below > tail)
            break;
        j = i;
    }
    return j;
}

// Rounds where either time is missing (not above 0) are left out.
inline PairedRatio paired_ratio(const std::vector<double> &x, const std::vector<double> &base,
                                double confidence = 0.95)
{
    std::vector<double> q;
    for (size_t r = 0; r < std::min(x.size(), base.size()); ++r)
        if (x[r] > 0 && base[r] > 0)
            q.push_back(x[r] / base[r]);
    PairedRatio out;
    out.rounds = static_cast<int>(q.size());
    if (q.empty())
        return out;
    std::sort(q.begin(), q.end());
    const size_t n = q.size();
    out.median = n % 2 ? q[n / 2] : 0.5 * (q[n / 2 - 1] + q[n / 2]);
    const int j = sign_rank(static_cast<int>(n), confidence);
    if (j > 0) {
        out.lo = q[static_cast<size_t>(j - 1)];
        out.hi = q[n - static_cast<size_t>(j)];
    }
    return out;
}

}  // namespace bench
