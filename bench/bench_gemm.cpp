// bench_gemm: time tgemm against cuBLAS (pure FP32) on the same GPU, same
// inputs, in the same process.
//
//   bench_gemm [--suite] [--squares] [--host] [--shape M N K TA TB]... [--csv PATH]
//              [--reps N] [--warmup N] [--seed N] [--l2 MODE] [--reference cublas|kernel] [--no-overhead]
//
// With --host the operands are in host memory: tgemm_sgemm on pageable and
// on pinned memory against the naive cuBLAS path (copy in, multiply, copy
// out) from the same memory and against the multiply alone on device
// pointers, wall clock, each against the floor of the link and the multiply.
//
// Every timed configuration's output is checked element by element against
// an FP64 reference of the same inputs (bench/gemm_check.hpp: |C - R| <=
// gamma_{K+2} |alpha| (|A||B|) elementwise; R and |A||B| from two DGEMMs on
// the device, bench/gemm_reference.hpp): once before it is timed, and the
// outputs the timed calls leave behind once after. Any CUDA, tgemm or cuBLAS
// error, or a failed check, ends the program with exit status 1 and a
// message on stderr naming the worst element and its bound. cuBLAS is
// loaded at run time with dlopen, so the benchmark neither links it nor
// needs its headers; without it, tgemm alone is timed and the reference
// comes from the benchmark's own FP64 kernel.
//
// Conventions: column-major storage; lda/ldb/ldc are the rows of the matrix
// as stored; alpha = 1, beta = 0.
//
// The parts: bench.hpp says which file holds what. This file reads the
// command line, opens the CSV, describes the device and the method, and
// hands the shapes to the device-pointer or the host-operand mode.
#include "bench.hpp"

#include <algorithm>
#include <climits>
#include <cstring>

using namespace bench;

namespace {

void usage(FILE *f)
{
    std::fprintf(f,
        "usage: bench_gemm [--suite] [--squares] [--host] [--shape M N K TA TB]... [--csv PATH]\n"
        "                  [--reps N] [--warmup N] [--seed N] [--l2 MODE] [--reference cublas|kernel]\n"
        "                  [--no-overhead]\n"
        "  --suite            the standard shape suite\n"
        "  --host             operands in host memory instead: pageable and pinned against the\n"
        "                     naive cuBLAS path and the multiply alone (the host suite, or --shape)\n"
        "  --squares          square NN sizes 32 ... 16384 (powers of 2)\n"
        "  --shape M N K TA TB  one column-major shape, TA/TB = N or T (repeatable)\n"
        "  --csv PATH         one row per shape (parent directory is created)\n"
        "  --reps N           timed calls per library (default 30, at least 20 used)\n"
        "  --warmup N         untimed calls per library first (default 5)\n"
        "  --seed N           seed of the input generator (default 12345)\n"
        "  --l2 MODE          L2 before each event-timed call: alternate (default: calls of\n"
        "                     tgemm and cuBLAS in turn), clean (after a read of 2x L2),\n"
        "                     dirty (after a memset of L2's size), separate (each library's\n"
        "                     calls back to back)\n"
        "  --reference R      the FP64 reference of the output check: cublas (cublasDgemm_v2, the\n"
        "                     default when cuBLAS loads) or kernel (the benchmark's own FP64 kernel,\n"
        "                     slower; the default without cuBLAS)\n"
        "  --no-overhead      skip the 64^3 host-overhead timing (1,000 calls of each library) that\n"
        "                     comes first in device-pointer mode, so that a profiler's first\n"
        "                     launches are the shapes'\n");
}

long long parse_int(const char *s, const char *what, long long lo, long long hi)
{
    return bench::parse_int(s, what, lo, hi, usage);
}

char parse_op(const char *s, const char *what)
{
    if ((s[0] == 'N' || s[0] == 'n') && s[1] == '\0')
        return 'N';
    if ((s[0] == 'T' || s[0] == 't') && s[1] == '\0')
        return 'T';
    std::fprintf(stderr, "bench_gemm: %s: '%s' is not N or T\n", what, s);
    usage(stderr);
    std::exit(2);
}

}  // namespace

int main(int argc, char **argv)
{
    Ctx ctx;
    std::vector<Shape> shapes;
    std::string csv_path;
    bool any = false;
    long long reps = -1, warmup = 5;  // reps: 30 by default, at least 20; with --host 9, at least 5
    bool host = false;
    std::string reference;  // --reference: "cublas", "kernel" or "" (cuBLAS when it loads)

    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto need = [&](int count) {
            if (i + count >= argc) {
                std::fprintf(stderr, "bench_gemm: %s needs %d argument(s)\n", a.c_str(), count);
                usage(stderr);
                std::exit(2);
            }
        };
        if (a == "--suite") {
            for (const Shape &s : suite_shapes())
                shapes.push_back(s);
            any = true;
        } else if (a == "--squares") {
            for (const Shape &s : square_shapes())
                shapes.push_back(s);
            any = true;
        } else if (a == "--host") {
            host = true;
            any = true;
        } else if (a == "--shape") {
            need(5);
            Shape s;
            s.m = parse_int(argv[i + 1], "--shape M", 1, INT_MAX);
            s.n = parse_int(argv[i + 2], "--shape N", 1, INT_MAX);
            s.k = parse_int(argv[i + 3], "--shape K", 1, INT_MAX);
            s.ta = parse_op(argv[i + 4], "--shape TA");
            s.tb = parse_op(argv[i + 5], "--shape TB");
            s.name = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) +
                     "_" + static_cast<char>(s.ta + 32) + static_cast<char>(s.tb + 32);
            shapes.push_back(s);
            any = true;
            i += 5;
        } else if (a == "--csv") {
            need(1);
            csv_path = argv[++i];
        } else if (a == "--reps") {
            need(1);
            reps = parse_int(argv[++i], "--reps", 1, 1000000);
        } else if (a == "--warmup") {
            need(1);
            warmup = parse_int(argv[++i], "--warmup", 0, 1000000);
        } else if (a == "--seed") {
            need(1);
            ctx.seed = static_cast<uint32_t>(parse_int(argv[++i], "--seed", 0, UINT32_MAX));
        } else if (a == "--no-overhead") {
            ctx.overhead = false;
        } else if (a == "--reference") {
            need(1);
            const std::string m = argv[++i];
            if (m == "cublas" || m == "kernel") {
                reference = m;
            } else {
                std::fprintf(stderr, "bench_gemm: --reference takes cublas or kernel, not '%s'\n", m.c_str());
                return 2;
            }
        } else if (a == "--l2") {
            need(1);
            const std::string m = argv[++i];
            if (m == "alternate")
                ctx.l2_mode = L2Mode::alternate;
            else if (m == "clean")
                ctx.l2_mode = L2Mode::clean;
            else if (m == "dirty")
                ctx.l2_mode = L2Mode::dirty;
            else if (m == "separate")
                ctx.l2_mode = L2Mode::separate;
            else {
                std::fprintf(stderr, "bench_gemm: --l2 takes alternate, clean, dirty or separate, not '%s'\n",
                             m.c_str());
                return 2;
            }
        } else if (a == "--help" || a == "-h") {
            usage(stdout);
            return 0;
        } else {
            std::fprintf(stderr, "bench_gemm: unknown argument '%s'\n", a.c_str());
            usage(stderr);
            return 2;
        }
    }
    if (!any) {
        std::fprintf(stderr, "bench_gemm: nothing to run: give --suite, --squares or --shape\n");
        usage(stderr);
        return 2;
    }
    if (host && shapes.empty())
        shapes = host_shapes();
    const long long min_reps = host ? 5 : 20;
    ctx.reps = static_cast<int>(std::max(reps < 0 ? (host ? 9 : 30) : reps, min_reps));
    ctx.warmup = static_cast<int>(warmup);

    FILE *csv = nullptr;
    if (!csv_path.empty())
        csv = open_csv(csv_path, host ? "name,m,n,k,ta,tb,path,memory,time_ms,tflops,vs_naive,x_multiply,floor_ms,"
                                        "floor_kind,pct_of_floor,resid"
                                      : "name,m,n,k,ta,tb,tgemm_us,cublas_us,tgemm_tflops,cublas_tflops,ratio,"
                                        "floor_us,floor_kind,pct_of_floor,timing");

    open_device(ctx);
    if (ctx.l2_mode == L2Mode::clean || ctx.l2_mode == L2Mode::dirty)
        alloc_l2_buffer(ctx);
    const char *raised = reps >= 0 && reps < min_reps ? " (raised to the minimum)" : "";
    if (host) {
        std::printf("seed %u (inputs uniform in (-1,1), mt19937 seeded with {seed, shape index}); reps %d%s; "
                    "alpha 1, beta 0, column-major, operands in host memory\n",
                    ctx.seed, ctx.reps, raised);
        std::printf("time = wall clock of one call to its return (C in place), median of the reps, every path in "
                    "turn; the checked first call of each path is its warm-up\n");
        std::printf("floor = max(transfer, tgemm's multiply alone on device pointers), transfer = max(in / %.0f GB/s, "
                    "out / %.0f GB/s, (in + out) / %.0f GB/s) (pinned link of the H100 machine), in = A + B, out = C\n",
                    LINK_IN / 1e9, LINK_OUT / 1e9, LINK_BOTH / 1e9);
        std::printf("vs_naive = naive path's time from the same memory (pinned for device rows) / time; x_mult = "
                    "time / tgemm's multiply alone; %%floor = floor / time\n");
    } else {
        std::printf("seed %u (inputs uniform in (-1,1), mt19937 seeded with {seed, shape index}); "
                    "reps %d%s, warm-up %d; alpha 1, beta 0, column-major, device pointers\n",
                    ctx.seed, ctx.reps, raised, ctx.warmup);
        std::printf("floor = max(2MNK / %.1f TFLOP/s, 4(MK+KN+MN) bytes / %.2f TB/s); %%floor = "
                    "floor / tgemm time\n",
                    PEAK_FLOPS / 1e12, PEAK_BYTES / 1e12);
        static const char *const l2_text[] = {
            "calls alternating tgemm/cuBLAS",
            "calls alternating tgemm/cuBLAS, each after a read of 2x L2 (--l2 clean)",
            "calls alternating tgemm/cuBLAS, each after a memset of L2's size (--l2 dirty)",
            "each library's calls back to back (--l2 separate)"};
        std::printf("timing: event = median of per-call CUDA events, %s; "
                    "per_call_wall (M*N*K <= 512^3) = wall time of %d back-to-back calls + one sync, "
                    "/ %d, median of %d\n",
                    l2_text[static_cast<int>(ctx.l2_mode)], WALL_CALLS, WALL_CALLS, WALL_ROUNDS);
    }

    CUDA_CHECK(cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking));
    cublas_load(ctx.cb, ctx.stream);
    if (reference == "cublas" && (!ctx.cb.ok || !ctx.cb.dgemm))
        die("--reference cublas: cublasDgemm_v2 is not available");
    ctx.ref_kernel = reference == "kernel" || !ctx.cb.ok || !ctx.cb.dgemm;
    std::printf("output check: every timed configuration, before timing and after, element by element: "
                "|C - R| <= gamma_{K+2} |alpha| (|A||B|) with u = 2^-24 (bench/gemm_check.hpp); R and |A||B| in "
                "FP64 from %s\n",
                ctx.ref_kernel ? "the benchmark's own FP64 kernel" : "cublasDgemm_v2");
    if (host) {
        run_host_suite(shapes, ctx, csv, csv_path);
        return 0;
    }
    run_device_suite(shapes, ctx, csv, csv_path);
    return 0;
}
