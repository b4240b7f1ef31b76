// The shapes the benchmark runs: the issue 4 suite (--suite, the table of
// docs/performance.md), the powers of two (--squares) and the host-operand
// shapes (--host). --shape adds one of the caller's (bench_gemm.cpp).
#include "bench.hpp"

namespace bench {

std::vector<Shape> suite_shapes()
{
    return {
        {"sq8192", 8192, 8192, 8192, 'N', 'N'},
        {"sq4096_nn", 4096, 4096, 4096, 'N', 'N'},
        {"sq4096_nt", 4096, 4096, 4096, 'N', 'T'},
        {"sq4096_tn", 4096, 4096, 4096, 'T', 'N'},
        {"sq4096_tt", 4096, 4096, 4096, 'T', 'T'},
        {"sq2048", 2048, 2048, 2048, 'N', 'N'},
        {"sq1024", 1024, 1024, 1024, 'N', 'N'},
        {"odd4095", 4095, 4095, 4095, 'N', 'N'},
        {"odd1000", 1000, 1000, 1000, 'N', 'N'},
        {"ragged", 4097, 513, 1023, 'N', 'N'},
        {"lowk", 4096, 4096, 128, 'N', 'N'},
        {"rank32", 8192, 8192, 32, 'N', 'N'},
        {"skinny_m16", 16, 4096, 4096, 'N', 'N'},
        {"skinny_n16", 4096, 16, 4096, 'N', 'N'},
        {"gemv_m1", 1, 4096, 4096, 'N', 'N'},
        {"gemv_n1", 4096, 1, 4096, 'N', 'N'},
        {"bigk", 256, 256, 8192, 'N', 'N'},
        {"small512", 512, 512, 512, 'N', 'N'},
        {"small128", 128, 128, 128, 'N', 'N'},
        {"tiny32", 32, 32, 32, 'N', 'N'},
    };
}

std::vector<Shape> square_shapes()
{
    std::vector<Shape> shapes;
    for (int64_t n = 32; n <= 16384; n *= 2)
        shapes.push_back({"sq" + std::to_string(n), n, n, n, 'N', 'N'});
    return shapes;
}

std::vector<Shape> host_shapes()
{
    return {
        {"host_sq8192", 8192, 8192, 8192, 'N', 'N'},
        {"host_sq4096", 4096, 4096, 4096, 'N', 'N'},
        {"host_16kx16kx1k", 16384, 16384, 1024, 'N', 'N'},
        {"host_2kx2kx32k", 2048, 2048, 32768, 'N', 'N'},
    };
}

}  // namespace bench
