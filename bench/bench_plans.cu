// Every tiled plan the dispatcher can choose from, timed: for each shape,
// each family x split-K factor x form (none, workspace, cluster), launched
// as the library launches it, after checking its output element by element
// against a double-precision reference (bench/gemm_check.hpp, bench_gemm's
// check; max_err is the largest error over its bound). For tuning the
// dispatcher's cost model (src/dispatch/tiled.cpp, src/dispatch/factors.cpp); bench/plan_regret.py
// compares the plan the library picks with the fastest one measured.
//
//   bench_plans [--op AB] [--family NAME]... [--l2 hot|clean] M N K [M N K ...]    CSV on standard output
//
// Column-major, op(A) op(B) with AB one of NN (the default), NT, TN, TT, A
// and B stored as the op says with no padding (lda = m or k, ldb = k or
// n), ldc = m, alpha 1, beta 0, the same inputs for every plan of a shape
// (warm in L2 where they fit). The kernels are the pair's, aligned where
// A, B and C all are, else unaligned. Time per
// call: 40 back-to-back calls between two CUDA events, median of 5 such
// runs (--l2 hot, the default); with --l2 clean, each call alone between
// two events after a read of twice L2's size (bench/l2flush.cu), median of
// 40, so that neither its operands, C nor the workspace's slices are in L2
// at its start, as where a program's other work runs between calls. us_main
// is the same without the workspace form's reduction kernel; the l2 column
// says which. --family keeps the plans of the named families only (repeatable;
// for comparing builds of one family). Links the library's kernel objects directly (build/obj/kernels),
// not libtgemm.so, whose kernels are internal.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "gemm_check.hpp"
#include "kernels/family.hpp"

extern "C" cudaError_t bench_l2_clean(const void *buf, size_t bytes, float *sink, int blocks, cudaStream_t st);

using namespace tgemm;
using namespace tgemm::kernels;

namespace {

#define CHECK(x)                                                                                            \
    do {                                                                                                    \
        const cudaError_t e_ = (x);                                                                         \
        if (e_ != cudaSuccess) {                                                                            \
            std::fprintf(stderr, "bench_plans: %s: %s\n", #x, cudaGetErrorString(e_));                      \
            std::exit(1);                                                                                   \
        }                                                                                                   \
    } while (0)

__global__ void fill(float *p, size_t n, unsigned seed)
{
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<size_t>(gridDim.x) * blockDim.x) {
        unsigned x = static_cast<unsigned>(i) * 2654435761u ^ seed;
        x ^= x >> 13;
        x *= 0x5bd1e995u;
        x ^= x >> 15;
        p[i] = static_cast<float>(x & 0xffff) / 32768.0f - 1.0f;  // uniform in [-1, 1)
    }
}

// C = op(A) op(B) in double, one thread per element, and the sum of |a| |b|
// for the error bound; A and B unpadded (lda = m or k, ldb = k or n).
__global__ void reference(const float *a, const float *b, double *c, double *mag, long m, long n, long k, bool ta,
                          bool tb)
{
    const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x, j = blockIdx.y;
    if (i >= m)
        return;
    double s = 0.0, g = 0.0;
    for (long l = 0; l < k; ++l) {
        const double x = ta ? a[l + i * k] : a[i + l * m], y = tb ? b[j + l * n] : b[l + j * k];
        s += x * y;
        g += std::fabs(x * y);
    }
    c[i + j * m] = s;
    mag[i + j * m] = g;
}

// Split-K factors and the rule for K per slice, as the dispatcher has them
// (src/dispatch/tiled.cpp): each factor gives the slices its rounded chunk
// makes, the cluster form only where that is the factor.
const int kSplits[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128};
constexpr long kMinSplitSteps = 2;
constexpr size_t kWorkBytes = size_t{256} << 20;

}  // namespace

int main(int argc, char **argv)
{
    int first = 1;
    bool ta = false, tb = false;
    std::vector<std::string> only;  // --family: these families' plans alone
    bool clean = false;             // --l2 clean
    const KernelFamily *const *fams = kTiledFamilies;  // the registry's, in its order
    constexpr int kFams = kTiledFamilyCount;
    while (argc - first >= 2 && argv[first][0] == '-') {
        const std::string opt = argv[first], val = argv[first + 1];
        if (opt == "--op") {
            if (val.size() != 2 || (val[0] != 'N' && val[0] != 'T') || (val[1] != 'N' && val[1] != 'T')) {
                std::fprintf(stderr, "bench_plans: --op takes NN, NT, TN or TT\n");
                return 2;
            }
            ta = val[0] == 'T';
            tb = val[1] == 'T';
        } else if (opt == "--family") {
            if (std::none_of(fams, fams + kFams, [&](const KernelFamily *f) { return val == f->name; })) {
                std::fprintf(stderr, "bench_plans: --family %s: no such family\n", val.c_str());
                return 2;
            }
            only.push_back(val);
        } else if (opt == "--l2") {
            if (val != "hot" && val != "clean") {
                std::fprintf(stderr, "bench_plans: --l2 takes hot or clean\n");
                return 2;
            }
            clean = val == "clean";
        } else {
            break;
        }
        first += 2;
    }
    if (argc - first < 3 || (argc - first) % 3 != 0) {
        std::fprintf(stderr, "usage: bench_plans [--op AB] [--family NAME]... [--l2 hot|clean] M N K [M N K ...]\n");
        return 2;
    }
    int dev = 0, cc_major = 0;
    CHECK(cudaGetDevice(&dev));
    CHECK(cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, dev));
    int cap[kFams][kTiledMaxCluster + 1];
    for (int f = 0; f < kFams; ++f)
        CHECK(fams[f]->prepare(cc_major, cap[f]));
    float *work = nullptr;
    CHECK(cudaMalloc(&work, kWorkBytes));
    // --l2 clean: a zeroed buffer twice L2's size, read before each timed call.
    int l2_bytes = 0, sms = 0;
    CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, dev));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    const size_t flush_bytes = clean ? 2 * static_cast<size_t>(l2_bytes) : 0;
    void *flush = nullptr;
    float *sink = nullptr;
    if (clean) {
        CHECK(cudaMalloc(&flush, flush_bytes));
        CHECK(cudaMemset(flush, 0, flush_bytes));
        CHECK(cudaMalloc(&sink, sizeof(float)));
    }
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    std::printf("m,n,k,family,splits,form,k_chunk,blocks,cluster_capacity,us,max_err,transa,transb,us_main,l2\n");
    int failures = 0;
    for (int s = first; s + 2 < argc; s += 3) {
        const long m = std::atol(argv[s]), n = std::atol(argv[s + 1]), k = std::atol(argv[s + 2]);
        if (m < 1 || n < 1 || k < 1 || n > 65535) {
            std::fprintf(stderr, "bench_plans: bad shape %s %s %s\n", argv[s], argv[s + 1], argv[s + 2]);
            return 2;
        }
        float *a, *b, *c;
        double *ref, *mag;
        CHECK(cudaMalloc(&a, sizeof(float) * m * k));
        CHECK(cudaMalloc(&b, sizeof(float) * k * n));
        CHECK(cudaMalloc(&c, sizeof(float) * m * n));
        CHECK(cudaMalloc(&ref, sizeof(double) * m * n));
        CHECK(cudaMalloc(&mag, sizeof(double) * m * n));
        fill<<<256, 256>>>(a, static_cast<size_t>(m) * k, 1);
        fill<<<256, 256>>>(b, static_cast<size_t>(k) * n, 2);
        reference<<<dim3(static_cast<unsigned>((m + 127) / 128), static_cast<unsigned>(n)), 128>>>(a, b, ref, mag,
                                                                                                   m, n, k, ta, tb);
        CHECK(cudaDeviceSynchronize());
        std::vector<double> h_ref(static_cast<size_t>(m) * n), h_mag(h_ref.size());
        std::vector<float> h_c(h_ref.size());
        CHECK(cudaMemcpy(h_ref.data(), ref, sizeof(double) * h_ref.size(), cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(h_mag.data(), mag, sizeof(double) * h_mag.size(), cudaMemcpyDeviceToHost));
        const long lda = ta ? k : m, ldb = tb ? n : k;
        const GemmParams p{a, b, c, lda, ldb, m, m, n, k, 1.0f, 0.0f, ta, tb};
        // cudaMalloc'd, 256-byte aligned: a matrix's columns start on 16
        // bytes where its leading dimension is a multiple of 4.
        const bool aligned = lda % 4 == 0 && ldb % 4 == 0 && m % 4 == 0;
        for (int f = 0; f < kFams; ++f) {
            const KernelFamily &fa = *fams[f];
            if (!only.empty() && std::find(only.begin(), only.end(), fa.name) == only.end())
                continue;
            const long tiles = ((m + fa.bm - 1) / fa.bm) * ((n + fa.bn - 1) / fa.bn);
            int last = 1;  // the slices of the last split timed
            for (int asked : kSplits) {
                const long chunk = ((k + asked - 1) / asked + fa.bk - 1) / fa.bk * fa.bk;
                const int splits = asked == 1 ? 1 : static_cast<int>((k + chunk - 1) / chunk);
                if (asked > 1 && (chunk < kMinSplitSteps * fa.bk || splits <= last))
                    continue;
                if (asked > 1)
                    last = splits;
                for (int form = 0; form < (splits > 1 ? 2 : 1); ++form) {
                    const bool cluster = form == 1;
                    if (cluster && (splits != asked || splits > kTiledMaxCluster || cap[f][splits] == 0))
                        continue;
                    if (splits > 1 && !cluster && sizeof(float) * splits * m * n > kWorkBytes)
                        continue;
                    SplitK sk;
                    sk.splits = splits;
                    sk.k_chunk = splits > 1 ? chunk : 0;
                    sk.cluster = cluster;
                    sk.work = cluster ? nullptr : work;
                    sk.ring_k = ring_fits_k(k, splits, splits > 1 ? chunk : k, fa.bk);
                    const int variant = tiled_variant(ta, tb, aligned ? TiledAlignment::All : TiledAlignment::None);
                    const auto call = [&] {
                        cudaError_t e = fa.launch[variant](p, sk, nullptr);
                        if (e == cudaSuccess && splits > 1 && !cluster)
                            e = launch_splitk_reduce(p, sk, nullptr);
                        return e;
                    };
                    // C poisoned with NaN, one call, every element checked.
                    CHECK(cudaMemset(c, 0xFF, sizeof(float) * m * n));
                    CHECK(call());
                    CHECK(cudaDeviceSynchronize());
                    CHECK(cudaMemcpy(h_c.data(), c, sizeof(float) * h_c.size(), cudaMemcpyDeviceToHost));
                    const gemm_check::Report rep =
                        gemm_check::check(m, n, h_c.data(), m, h_ref.data(), m, h_mag.data(), m, k);
                    const double worst = rep.worst;
                    if (!rep.passed() || rep.checked != m * n) {
                        std::fprintf(stderr, "bench_plans: %ldx%ldx%ld %s split %d %s: %s\n", m, n, k, fa.name,
                                     splits, splits == 1 ? "none" : cluster ? "cluster" : "workspace",
                                     gemm_check::describe(rep).c_str());
                        ++failures;
                        continue;
                    }
                    for (int i = 0; i < 5; ++i)
                        CHECK(call());
                    // Median over 5 runs of 40 back-to-back launches, per launch in us;
                    // with --l2 clean, median of 40 launches each after L2's clean.
                    const auto median_us = [&](auto launch) {
                        std::vector<float> t;
                        for (int r = 0; clean && r < 40; ++r) {
                            CHECK(bench_l2_clean(flush, flush_bytes, sink, 4 * sms, nullptr));
                            CHECK(cudaEventRecord(e0));
                            CHECK(launch());
                            CHECK(cudaEventRecord(e1));
                            CHECK(cudaEventSynchronize(e1));
                            float ms = 0.0f;
                            CHECK(cudaEventElapsedTime(&ms, e0, e1));
                            t.push_back(ms * 1e3f);
                        }
                        for (int r = 0; !clean && r < 5; ++r) {
                            CHECK(cudaEventRecord(e0));
                            for (int i = 0; i < 40; ++i)
                                CHECK(launch());
                            CHECK(cudaEventRecord(e1));
                            CHECK(cudaEventSynchronize(e1));
                            float ms = 0.0f;
                            CHECK(cudaEventElapsedTime(&ms, e0, e1));
                            t.push_back(ms * 1e3f / 40);
                        }
                        std::sort(t.begin(), t.end());
                        return t[t.size() / 2];
                    };
                    const float us = median_us(call);
                    const float us_main = median_us([&] { return fa.launch[variant](p, sk, nullptr); });
                    std::printf("%ld,%ld,%ld,%s,%d,%s,%ld,%ld,%d,%.2f,%.3f,%c,%c,%.2f,%s\n", m, n, k, fa.name,
                                splits, splits == 1 ? "none" : cluster ? "cluster" : "workspace",
                                splits > 1 ? chunk : k, tiles * splits, cluster ? cap[f][splits] : 0, us, worst,
                                ta ? 'T' : 'N', tb ? 'T' : 'N', us_main, clean ? "clean" : "hot");
                    std::fflush(stdout);
                }
            }
        }
        CHECK(cudaFree(a));
        CHECK(cudaFree(b));
        CHECK(cudaFree(c));
        CHECK(cudaFree(ref));
        CHECK(cudaFree(mag));
    }
    return failures == 0 ? 0 : 1;
}
