// splitmix64: a small generator whose sequence for a seed is the same on
// every platform and compiler (the benchmarks' and tools' random problems
// must be reproducible from a printed seed).
#pragma once

#include <cstdint>

namespace bench {

struct SplitMix64 {
    uint64_t state;
    uint64_t next()
    {
        uint64_t z = (state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    int64_t below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }  // [0, n)
    bool chance(int64_t in) { return below(in) == 0; }                                            // 1 in `in`
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }                    // [0, 1)
};

}  // namespace bench
