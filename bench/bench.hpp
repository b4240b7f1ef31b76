// What the benchmark's files share (bench_gemm.cpp and its parts, and
// bench_random.cpp): the error exit, cuBLAS loaded at run time, a shape and
// its results, the context of a run, and the entry points of each part.
//   bench_support.cpp  cuBLAS loading, the device, the command line and
//                      the CSV file, small helpers, closing a run
//   bench_check.cpp    the FP64 reference and the output check
//   bench_shapes.cpp   the suites' shapes
//   bench_device.cpp   device-pointer mode: timing, host overhead, the table
//   bench_host.cpp     host-operand mode (--host)
#pragma once

#include <tgemm.h>

#include <cuda_runtime.h>

#include "bench_error.hpp"
#include "gemm_check.hpp"
#include "gemm_reference.hpp"

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace bench {

// ------------------------------------------------------------------ errors

// die() and open_csv() are in bench_error.hpp.
#define CUDA_CHECK(call)                                                                   \
    do {                                                                                   \
        cudaError_t err_ = (call);                                                         \
        if (err_ != cudaSuccess)                                                           \
            die("%s:%d: %s failed: %s (%s)", __FILE__, __LINE__, #call,                    \
                cudaGetErrorName(err_), cudaGetErrorString(err_));                         \
    } while (0)

// ------------------------------------------------------------------ cuBLAS, loaded at run time

// Declared here instead of including cublas_v2.h: the handle is an opaque
// pointer (its struct declared in gemm_reference.hpp); status, operation and
// math mode are C enums (int-sized).
typedef cublasContext *cublasHandle_t;
constexpr int CUBLAS_STATUS_SUCCESS_ = 0;
constexpr int CUBLAS_OP_N_ = 0;
constexpr int CUBLAS_OP_T_ = 1;
constexpr int CUBLAS_DEFAULT_MATH_ = 0; // pure FP32: no TF32, no tensor cores
constexpr int CUBLAS_PEDANTIC_MATH_ = 2; // pure FP32 and no other shortcut either: its own choice of kernels

typedef int (*cublasCreate_fn)(cublasHandle_t *);
typedef int (*cublasDestroy_fn)(cublasHandle_t);
typedef int (*cublasSetStream_fn)(cublasHandle_t, cudaStream_t);
typedef int (*cublasSetMathMode_fn)(cublasHandle_t, int);
typedef int (*cublasGetVersion_fn)(cublasHandle_t, int *);
typedef int (*cublasSgemm_fn)(cublasHandle_t, int transa, int transb, int m, int n, int k,
                              const float *alpha, const float *A, int lda, const float *B,
                              int ldb, const float *beta, float *C, int ldc);

struct Cublas {
    bool ok = false;
    void *lib = nullptr;
    std::string libname;
    cublasHandle_t handle = nullptr;
    cublasCreate_fn create = nullptr;
    cublasDestroy_fn destroy = nullptr;
    cublasSetStream_fn set_stream = nullptr;
    cublasSetMathMode_fn set_math_mode = nullptr;
    cublasSgemm_fn sgemm = nullptr;
    // The output check's FP64 reference: cublasDgemm_v2 on a handle of its
    // own, so that nothing the timed handle is set to (math mode, workspace)
    // changes for it. Null when libcublas lacks it.
    gemm_reference::DgemmFn dgemm = nullptr;
    cublasHandle_t ref_handle = nullptr;
    // A handle in CUBLAS_PEDANTIC_MATH_ (bench_random), or null; finish
    // destroys it.
    cublasHandle_t pedantic = nullptr;
};

void cublas_check(int status, const char *what);
// A new handle of the loaded cuBLAS on stream, in math mode `mode`; any
// failure is fatal (what names the handle in the message).
cublasHandle_t cublas_handle(Cublas &cb, cudaStream_t stream, int mode, const char *what);

// Returns false (after saying why) when no usable libcublas is found; the
// benchmark then times tgemm alone. Errors after a successful load are fatal.
bool cublas_load(Cublas &cb, cudaStream_t stream);

// ------------------------------------------------------------------ shapes and results

struct Shape {
    std::string name;
    int64_t m, n, k;
    char ta, tb; // 'N' or 'T'
};

struct Result {
    Shape s;
    bool skipped = false;
    double t_us = 0, c_us = 0;          // the figures compared (event median or per-call wall)
    double t_event_us = 0, c_event_us = 0;
    bool wall = false;                  // t_us/c_us are per-call wall times
    double floor_us = 0;
    const char *floor_kind = "";
    double worst_resid = 0;             // tgemm's largest |C - R| / bound over its checked outputs
    int nsets = 1;
};

// The storage of a shape's operands, column-major with no padding: leading
// dimensions and element counts of A, B and C.
struct Storage {
    int64_t lda, ldb, ldc;
    size_t nA, nB, nC;
};

inline Storage storage(const Shape &s)
{
    const int64_t lda = s.ta == 'N' ? s.m : s.k, colsA = s.ta == 'N' ? s.k : s.m;
    const int64_t ldb = s.tb == 'N' ? s.k : s.n, colsB = s.tb == 'N' ? s.n : s.k;
    return {lda, ldb, s.m, static_cast<size_t>(lda * colsA), static_cast<size_t>(ldb * colsB),
            static_cast<size_t>(s.m * s.n)};
}

// FP32 FFMA peak of the H100 SXM: 132 SMs x 128 lanes x 2 flops x 1.98 GHz.
constexpr double PEAK_FLOPS = 66.9e12;
// Device memory bandwidth of the H100 SXM (HBM3), bytes read + written.
constexpr double PEAK_BYTES = 2.88e12;
constexpr int MAX_SETS = 64;
constexpr int WALL_CALLS = 200;         // calls per per-call-wall measurement
constexpr int WALL_ROUNDS = 5;          // median over this many such measurements
constexpr int OVERHEAD_CALLS = 1000;

// Link speeds of the H100 machine with pinned memory (docs/notes/history-host.md).
// The floor of a call on host operands is the larger of its transfer time
// at these speeds (A and B in, C out; both directions can run at once) and
// the multiply alone on device pointers, tgemm's, measured in the same run.
constexpr double LINK_IN = 55e9;    // bytes/s, host to device
constexpr double LINK_OUT = 37e9;   // device to host
constexpr double LINK_BOTH = 98e9;  // both directions at once, added

double median(std::vector<double> v);
double now_us();
tgemm_operation tg_op(char t);
int cb_op(char t);
void tgemm_check(tgemm_status st, const char *where);
// Uniform in (-1, 1), the same stream on every platform for a given seed.
float uniform_pm1(std::mt19937 &rng);
std::string fmt(const char *f, double v);

// ------------------------------------------------------------------ one shape

// What L2 holds when a timed call starts (--l2; device pointers, event timing):
//   alternate  calls alternate tgemm / cuBLAS, nothing between them (the default)
//   clean      the same, each timed call after a read of twice L2's size
//              (bench/l2flush.cu): L2 holds only clean lines of another buffer
//   dirty      each timed call after a memset of L2's size: L2 full of lines
//              still to be written back, the worst case a call can meet
//   separate   all of tgemm's timed calls back to back, then all of cuBLAS's
enum class L2Mode { alternate, clean, dirty, separate };

extern "C" cudaError_t bench_l2_clean(const void *buf, size_t bytes, float *sink, int blocks, cudaStream_t st);

struct Ctx {
    cudaStream_t stream = nullptr;
    Cublas cb;
    size_t l2_bytes = 0;
    int sm_count = 0;
    L2Mode l2_mode = L2Mode::alternate;
    void *l2_buf = nullptr;  // clean / dirty: 2 x L2 bytes, zeros
    float *l2_sink = nullptr;
    int reps = 30;
    int warmup = 5;
    uint32_t seed = 12345;
    bool ref_kernel = false;  // --reference kernel, or no cublasDgemm_v2
    bool overhead = true;     // time the 64^3 host overhead first (--no-overhead: not)
};

// Operands and output of the timed calls. writer names the library whose
// call wrote C last (null: none yet), for the check after timing.
struct Set {
    float *A = nullptr, *B = nullptr, *C = nullptr;
    const char *writer = nullptr;
};

void copy_to_host(std::vector<float> &h, const float *d, size_t count);

// ------------------------------------------------------------------ the run's setup (bench_support.cpp)

// The current CUDA device: sets ctx.l2_bytes and ctx.sm_count and prints
// the device, the driver, the runtime and tgemm's version. Without a
// usable device (none installed, no driver) the program ends with a
// message saying so.
void open_device(Ctx &ctx);
// ctx.l2_buf (2 x L2 bytes of zeros) and ctx.l2_sink: what bench_l2_clean
// reads and writes, and what --l2 dirty sets.
void alloc_l2_buffer(Ctx &ctx);
// s as an integer in [lo, hi]; otherwise says so, prints usage on stderr
// and exits 2.
long long parse_int(const char *s, const char *what, long long lo, long long hi, void (*usage)(FILE *));

// ------------------------------------------------------------------ output check (bench_check.cpp)

// The FP64 reference of one set of operands, alpha op(A) op(B), in host
// memory, M x N, leading dimension M. bench_gemm's calls have beta 0;
// bench_random adds the beta term (gemm_check::add_beta_term).
struct Reference {
    std::unique_ptr<double[]> ref, mag;  // R and G of bench/gemm_check.hpp
    bool warned = false;                 // the warning of check_output given
};

Reference make_reference(const Shape &s, const float *A, int64_t lda, const float *B, int64_t ldb, double alpha,
                         Ctx &ctx);
double check_output(const std::string &what, const Shape &s, Reference &ref, const float *C, int64_t ldc);
// check_output's comparison without its verdict: the report, for a caller
// that goes on after a failure. Warns as check_output does.
gemm_check::Report compare_output(const Shape &s, Reference &ref, const float *C, int64_t ldc);

// ------------------------------------------------------------------ the parts' entry points

std::vector<Shape> suite_shapes();   // --suite
std::vector<Shape> square_shapes();  // --squares
std::vector<Shape> host_shapes();    // --host without --shape

// Device pointers: the host overhead, then the table of shapes (and the CSV
// rows) against cuBLAS, the geometric mean; closes the run (finish).
void run_device_suite(const std::vector<Shape> &shapes, Ctx &ctx, FILE *csv, const std::string &csv_path);
// Host operands: one row per path of every shape, then the targets of
// 8192^3 NN when it was measured; closes the run (finish).
void run_host_suite(const std::vector<Shape> &shapes, Ctx &ctx, FILE *csv, const std::string &csv_path);
// Closes the CSV file and releases the stream and cuBLAS.
void finish(Ctx &ctx, FILE *csv, const std::string &csv_path);

}  // namespace bench
