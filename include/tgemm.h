/*
 * tgemm: single-precision matrix multiply on NVIDIA GPUs behind a plain C ABI.
 *
 * This is the only public header. It is valid C99 (with -pedantic) and C++,
 * and it includes no CUDA header: the one CUDA type it mentions, the stream,
 * is forward-declared.
 */
#ifndef TGEMM_H
#define TGEMM_H

#include <stdint.h>

/**
 * @defgroup version Version
 * @brief Compile-time and run-time version of tgemm.
 *
 * The macros describe the header you compiled against; tgemm_version()
 * describes the library you run with. The Makefile reads the version from
 * these three macros, so this header is the one place it is written.
 * @{
 */
#define TGEMM_VERSION_MAJOR 0 /**< Incompatible ABI changes bump this. */
#define TGEMM_VERSION_MINOR 3 /**< Compatible additions bump this. */
#define TGEMM_VERSION_PATCH 0 /**< Fixes that change no interface. */

/** @cond TGEMM_INTERNAL */
#define TGEMM_STR_(x) #x
#define TGEMM_STR(x) TGEMM_STR_(x)
/** @endcond */

/** The version as one number, MAJOR * 10000 + MINOR * 100 + PATCH. */
#define TGEMM_VERSION_NUMBER \
    (TGEMM_VERSION_MAJOR * 10000 + TGEMM_VERSION_MINOR * 100 + TGEMM_VERSION_PATCH)

/** The version as a string, "MAJOR.MINOR.PATCH". */
#define TGEMM_VERSION_STRING \
    TGEMM_STR(TGEMM_VERSION_MAJOR) "." TGEMM_STR(TGEMM_VERSION_MINOR) "." TGEMM_STR(TGEMM_VERSION_PATCH)
/** @} */

/** @cond TGEMM_INTERNAL */
#if defined(TGEMM_BUILDING_LIBRARY) && defined(__GNUC__)
#define TGEMM_API __attribute__((visibility("default")))
#else
#define TGEMM_API
#endif
/** @endcond */

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @defgroup types Types
 * @brief Integer, stream, operation, layout and status types.
 * @{
 */

/**
 * @brief Integer type of every dimension and leading dimension.
 *
 * Signed 64-bit, on purpose: signed, so that a negative dimension is an
 * argument error that can be reported (as reference BLAS does) rather than a
 * huge unsigned size; 64-bit, so that a matrix with more than 2^31 elements,
 * or a leading dimension times a column index past 2^31, is described and
 * indexed exactly. A C or Fortran caller with 32-bit integers converts
 * implicitly (C) or passes `integer(c_int64_t)` (Fortran). The BLAS entry
 * points `sgemm_` and `cblas_sgemm` keep their standard 32-bit `int`.
 *
 * @code
 * tgemm_int m = 50000, n = 50000;   // C has 2.5e9 elements: fine
 * @endcode
 */
typedef int64_t tgemm_int;

/**
 * @brief A CUDA stream. The same type as `cudaStream_t` and `CUstream`.
 *
 * Pass a stream created by the CUDA runtime or driver API, `NULL` for the
 * legacy default stream, or `cudaStreamPerThread`.
 *
 * @code
 * cudaStream_t s;
 * cudaStreamCreate(&s);
 * tgemm_stream ts = s;   // the same pointer type
 * @endcode
 */
typedef struct CUstream_st *tgemm_stream;

/**
 * @brief What to apply to an input matrix. Values equal CBLAS's CBLAS_TRANSPOSE.
 *
 * @code
 * tgemm_sgemm(TGEMM_OP_T, TGEMM_OP_N, m, n, k, 1.0f, A, k, B, k, 0.0f, C, m); // C = A^T B
 * @endcode
 */
typedef enum tgemm_operation {
    TGEMM_OP_N = 111, /**< op(X) = X. */
    TGEMM_OP_T = 112, /**< op(X) = X^T. */
    TGEMM_OP_C = 113  /**< op(X) = X^H, which for real data is X^T. */
} tgemm_operation;

/**
 * @brief Storage order of all three matrices. Values equal CBLAS's CBLAS_LAYOUT.
 *
 * @code
 * // C[i][j] = sum_l A[i][l] * B[l][j] with C arrays in row-major order:
 * tgemm_sgemm_ex(TGEMM_LAYOUT_ROW_MAJOR, TGEMM_OP_N, TGEMM_OP_N, m, n, k,
 *                1.0f, &A[0][0], k, &B[0][0], n, 0.0f, &C[0][0], n, NULL);
 * @endcode
 */
typedef enum tgemm_layout {
    TGEMM_LAYOUT_ROW_MAJOR = 101, /**< Element (i, j) at X[i * ldx + j]. */
    TGEMM_LAYOUT_COL_MAJOR = 102  /**< Element (i, j) at X[i + j * ldx] (Fortran, BLAS; the default). */
} tgemm_layout;

/**
 * @brief Result of every tgemm call.
 *
 * Values 101 to 113 report an invalid argument; the value minus 100 is the
 * position of that argument in tgemm_sgemm(), which is also its number in
 * reference BLAS SGEMM (tgemm_status_argument() computes it).
 *
 * On an error status C is unchanged, with one exception: a CUDA failure
 * after part of the call's work was enqueued (a kernel fault, for one,
 * which breaks the CUDA context: every later CUDA call in the process
 * fails). A call that waits (tgemm_sgemm(), and tgemm_sgemm_ex() with an
 * operand in host memory) then returns once no copy or kernel of it can
 * write C any more, and C may be partly written:
 * - C in host memory: each tile of C (or each part of one, where a tile is
 *   copied out in parts) holds its result if the call wrote it back, else
 *   its original contents; with C in pinned memory, a tile whose copy into
 *   C was under way when the context broke may hold part of its result and
 *   the rest of its original contents.
 * - C in device or managed memory, which the kernels write in place: a part
 *   of C whose kernels had started may hold neither (a partial sum).
 *
 * tgemm_sgemm_ex() on device and managed operands only enqueues: work it
 * enqueued before a failure stays on the stream, and a failure after it
 * returned shows on the stream; C may then be partly written likewise.
 *
 * The BLAS entry points `sgemm_` and `cblas_sgemm`, which cannot return an
 * error, instead keep track of the tiles written back and compute the rest
 * on the CPU, so that C always holds the full result.
 *
 * @code
 * tgemm_status s = tgemm_sgemm(TGEMM_OP_N, TGEMM_OP_N, m, n, k, 1.0f, A, lda, B, ldb, 0.0f, C, ldc);
 * if (s == TGEMM_ERROR_NO_DEVICE)
 *     cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, A, lda, B, ldb, 0.0f, C, ldc);
 * else if (s != TGEMM_SUCCESS)
 *     fprintf(stderr, "%s: %s\n", tgemm_status_string(s), tgemm_last_error_detail());
 * @endcode
 */
typedef enum tgemm_status {
    TGEMM_SUCCESS = 0,                 /**< C holds the result. */
    TGEMM_ERROR_NO_DEVICE = 1,         /**< No usable CUDA device or driver is visible. */
    TGEMM_ERROR_INVALID_DEVICE = 2,    /**< The chosen device does not exist, or a device operand lives on another device. */
    TGEMM_ERROR_OUT_OF_MEMORY = 3,     /**< Device or pinned host memory could not be allocated. */
    TGEMM_ERROR_CUDA = 4,              /**< A CUDA call failed; tgemm_last_error_detail() names it. */
    TGEMM_ERROR_UNSUPPORTED = 5,       /**< The problem exceeds a limit of the device (for example the grid size). */
    TGEMM_ERROR_INVALID_SETTING = 6,   /**< An environment variable read by tgemm has an invalid value. */
    TGEMM_ERROR_INTERNAL = 7,          /**< A bug in tgemm; please report it. */
    TGEMM_ERROR_INVALID_LAYOUT = 100,  /**< layout is not a tgemm_layout value. */
    TGEMM_ERROR_INVALID_TRANSA = 101,  /**< transa is not a tgemm_operation value (SGEMM argument 1). */
    TGEMM_ERROR_INVALID_TRANSB = 102,  /**< transb is not a tgemm_operation value (SGEMM argument 2). */
    TGEMM_ERROR_INVALID_M = 103,       /**< m < 0 (SGEMM argument 3). */
    TGEMM_ERROR_INVALID_N = 104,       /**< n < 0 (SGEMM argument 4). */
    TGEMM_ERROR_INVALID_K = 105,       /**< k < 0 (SGEMM argument 5). */
    TGEMM_ERROR_NULL_A = 107,          /**< A is NULL but must be read (SGEMM argument 7). */
    TGEMM_ERROR_INVALID_LDA = 108,     /**< lda is below its minimum (SGEMM argument 8). */
    TGEMM_ERROR_NULL_B = 109,          /**< B is NULL but must be read (SGEMM argument 9). */
    TGEMM_ERROR_INVALID_LDB = 110,     /**< ldb is below its minimum (SGEMM argument 10). */
    TGEMM_ERROR_NULL_C = 112,          /**< C is NULL but must be written (SGEMM argument 12). */
    TGEMM_ERROR_INVALID_LDC = 113      /**< ldc is below its minimum (SGEMM argument 13). */
} tgemm_status;

/** @} */

/**
 * @defgroup gemm Matrix multiply
 * @brief C := alpha * op(A) * op(B) + beta * C in single precision.
 *
 * op(A) is m x k, op(B) is k x n, C is m x n. The semantics are those of
 * reference BLAS SGEMM, exactly:
 *
 * - Arguments are checked in reference order (transa, transb, m, n, k, lda,
 *   ldb, ldc); the first invalid one is reported and nothing is touched.
 *   In column-major storage the minimums are lda >= max(1, rows of A as
 *   stored), ldb likewise, ldc >= max(1, m).
 * - If m == 0 or n == 0, or if (alpha == 0 or k == 0) and beta == 1, the call
 *   returns TGEMM_SUCCESS at once, reads nothing and needs no GPU; every
 *   pointer may be NULL.
 * - If beta == 0, C is never read, so it may hold NaN or garbage on entry.
 * - If alpha == 0 (or k == 0), A and B are never read (they may be NULL) and
 *   C := beta * C.
 * - Only the m x n matrix C is written: rows m to ldc-1 of every column, and
 *   A and B, are never written.
 * - A NULL pointer for a matrix that must be read or written is reported
 *   (reference BLAS would crash).
 *
 * Arithmetic is strict IEEE FP32 with fused multiply-add on the CUDA cores; no
 * tensor cores and no TF32, unless the process selects the math mode
 * ::TGEMM_MATH_FP32_TC (see @ref math), which keeps the same error bound. The result differs from a CPU BLAS only by
 * rounding, within the usual dot-product bound |error| <= ~(k + 2) * 2^-24 *
 * (|alpha| |A| |B| + |beta| |C|) elementwise.
 *
 * Results are the same bit for bit from run to run for the same problem on
 * the same device with the same settings, except:
 * - a call that cannot get the scratch device memory its plan asks for
 *   (split-K partial sums, stream-K tile parts or a packed copy of op(A),
 *   at most 256 MiB each, from a pool) runs without it, adding in another
 *   order, and may round differently; with `TGEMM_CLUSTERS=0` this includes
 *   a split planned for a cluster whose slices would need more than 256 MiB;
 * - a call with an operand in host memory cuts C into tiles and K into
 *   ranges (of up to 2048, or all of K left, in the resident schedule) to
 *   fit the device memory available to it, so
 *   its result may differ by rounding from the same product on device
 *   pointers, and from one run to the next when the memory available
 *   changes the tiling;
 * - through `sgemm_` and `cblas_sgemm`, a call that runs on the CPU BLAS,
 *   or the tiles of C that it computes after a GPU failure, round as the
 *   CPU BLAS does.
 *
 * Pointers may be device, managed, pinned host or pageable host memory, in
 * any mix; tgemm finds out which and moves host data as needed. The device
 * is the calling thread's current CUDA device, or the one named by the
 * environment variable `TGEMM_DEVICE`; with `TGEMM_DEVICES`, calls whose
 * operands are all in host memory are spread over several devices. Calls
 * from many host threads at once are safe.
 *
 * When any operand is in host memory, the product runs in tiles: tiles of C
 * and chunks of K cross the PCIe link on copy streams of their own while
 * the kernels of earlier tiles run, so transfers overlap the arithmetic.
 * Pinned memory is copied by DMA directly; pageable memory passes through
 * pinned staging buffers that several host threads fill and empty. Device
 * and managed operands are used where they are. Where the device has room,
 * A and B each cross the link once (a panel of one stays on the device
 * while it is reused, all of the other likewise) and C crosses once each
 * way (in only when beta != 0). Products larger than the device's memory
 * work too, with smaller tiles and operands crossing more than once. The
 * environment variable `TGEMM_DEVICE_MEMORY_LIMIT` (bytes, or with a K, M,
 * G or T suffix: `512M`) caps the device memory each such call takes (calls
 * running at once each take up to it); by default it is the free memory
 * less 256 MiB. A call that cannot fit even the smallest
 * tiles returns ::TGEMM_ERROR_OUT_OF_MEMORY. Such calls keep staging and
 * tile buffers for the next call; tgemm_release_resources() frees them.
 * @{
 */

/**
 * @brief Column-major SGEMM; returns when C is written.
 *
 * Runs on the calling thread's per-thread default stream and waits for it,
 * whatever kind of memory the operands are in.
 *
 * @param[in]     transa op applied to A: TGEMM_OP_N, TGEMM_OP_T or TGEMM_OP_C.
 * @param[in]     transb op applied to B.
 * @param[in]     m      Rows of op(A) and of C; m >= 0.
 * @param[in]     n      Columns of op(B) and of C; n >= 0.
 * @param[in]     k      Columns of op(A) and rows of op(B); k >= 0.
 * @param[in]     alpha  Scalar multiplying op(A) * op(B).
 * @param[in]     A      lda x (k if transa is N, else m) matrix, column-major.
 * @param[in]     lda    Leading dimension of A; >= max(1, m) if transa is N, else >= max(1, k).
 * @param[in]     B      ldb x (n if transb is N, else k) matrix, column-major.
 * @param[in]     ldb    Leading dimension of B; >= max(1, k) if transb is N, else >= max(1, n).
 * @param[in]     beta   Scalar multiplying C on entry; 0 means C is not read.
 * @param[in,out] C      ldc x n matrix, column-major; its first m rows are overwritten.
 * @param[in]     ldc    Leading dimension of C; >= max(1, m).
 * @return TGEMM_SUCCESS, or an error status with C unchanged (unless CUDA
 * failed in the middle of the call: see ::tgemm_status for what C then
 * holds).
 *
 * @code
 * #include <tgemm.h>
 * // C (m x n) = A (m x k) * B (k x n), all column-major in host memory.
 * tgemm_status s = tgemm_sgemm(TGEMM_OP_N, TGEMM_OP_N, m, n, k,
 *                              1.0f, A, m, B, k, 0.0f, C, m);
 * if (s != TGEMM_SUCCESS)
 *     fprintf(stderr, "tgemm: %s\n", tgemm_status_string(s));
 * @endcode
 */
TGEMM_API tgemm_status tgemm_sgemm(tgemm_operation transa, tgemm_operation transb,
                                   tgemm_int m, tgemm_int n, tgemm_int k,
                                   float alpha, const float *A, tgemm_int lda,
                                   const float *B, tgemm_int ldb,
                                   float beta, float *C, tgemm_int ldc);

/**
 * @brief SGEMM with a storage layout and a CUDA stream.
 *
 * Row-major storage is computed as the equivalent column-major product
 * (C^T = op(B)^T op(A)^T), so both layouts run the same kernels. In row-major
 * storage the minimums are lda >= max(1, columns of A as stored), ldb likewise
 * and ldc >= max(1, n). Each bad argument is reported with its own status, as
 * by tgemm_sgemm(); a row-major call's arguments are checked as reference
 * CBLAS checks them, as the column-major call it becomes: n before m, ldb
 * before lda, and a NULL B before a NULL A.
 *
 * If every operand that is read or written is device or managed memory, the
 * call only enqueues work on @p stream and returns: C is ready once the stream
 * reaches that point, and the operands must stay valid until then. Two
 * exceptions wait for the stream first: under ::TGEMM_MATH_FP32_TC, once per
 * call that takes the mode (to learn its N); and with `TGEMM_DEVICES` set, a
 * call on the default stream that moves to the device owning its operands.
 * If any operand is host memory (pageable or pinned), the call returns when
 * C is written.
 *
 * @param[in]     layout TGEMM_LAYOUT_COL_MAJOR or TGEMM_LAYOUT_ROW_MAJOR.
 * @param[in]     transa op applied to A.
 * @param[in]     transb op applied to B.
 * @param[in]     m      Rows of op(A) and of C; m >= 0.
 * @param[in]     n      Columns of op(B) and of C; n >= 0.
 * @param[in]     k      Columns of op(A) and rows of op(B); k >= 0.
 * @param[in]     alpha  Scalar multiplying op(A) * op(B).
 * @param[in]     A      The matrix A, stored in @p layout.
 * @param[in]     lda    Leading dimension of A: the distance between columns
 *                       (column-major) or rows (row-major) of A as stored.
 * @param[in]     B      The matrix B, stored in @p layout.
 * @param[in]     ldb    Leading dimension of B, likewise.
 * @param[in]     beta   Scalar multiplying C on entry; 0 means C is not read.
 * @param[in,out] C      The m x n matrix C, stored in @p layout.
 * @param[in]     ldc    Leading dimension of C: >= max(1, m) column-major,
 *                       >= max(1, n) row-major.
 * @param[in]     stream The stream to run on; NULL is the legacy default stream.
 * @return TGEMM_SUCCESS, or an error status with C unchanged (unless CUDA
 * failed in the middle of the call: see ::tgemm_status for what C then
 * holds). An error inside a kernel that runs after an asynchronous call
 * returned shows up on the stream, as for any CUDA kernel.
 *
 * @code
 * // Device pointers, row-major C = A * B on the caller's stream.
 * tgemm_sgemm_ex(TGEMM_LAYOUT_ROW_MAJOR, TGEMM_OP_N, TGEMM_OP_N, m, n, k,
 *                1.0f, dA, k, dB, n, 0.0f, dC, n, stream);
 * cudaStreamSynchronize(stream);
 * @endcode
 */
TGEMM_API tgemm_status tgemm_sgemm_ex(tgemm_layout layout,
                                      tgemm_operation transa, tgemm_operation transb,
                                      tgemm_int m, tgemm_int n, tgemm_int k,
                                      float alpha, const float *A, tgemm_int lda,
                                      const float *B, tgemm_int ldb,
                                      float beta, float *C, tgemm_int ldc,
                                      tgemm_stream stream);

/** @} */

/**
 * @defgroup resources Resources
 * @brief What tgemm keeps between calls, and giving it back.
 * @{
 */

/**
 * @brief Frees the memory that calls on host operands keep for later calls.
 *
 * Calls with an operand in host memory keep, per device, up to two
 * pipelines (five CUDA streams with their events, and 128 MiB of pinned
 * staging buffers once a pageable operand needed them) and up to 768 MiB
 * of device memory for tile buffers, so that the next call starts at once.
 * Threads calling at once each lease a whole pipeline for the duration of a
 * call (further callers wait for one), so they never share staging
 * buffers. This function frees all of it; the next such call allocates
 * again. Calls in the math mode ::TGEMM_MATH_FP32_TC keep up to 8 GiB of
 * device memory per device for their scratch buffers (residue planes, the
 * certificate's operands; only what calls took); this function frees that
 * too. The small workspace pool of calls on device pointers (split-K
 * partial sums, at most 64 MiB kept) is not affected. A pipeline that a
 * call gave up after a CUDA failure (its streams could not be seen to
 * finish) is freed here once its streams can; in a broken CUDA context
 * that fails, and the status says so.
 *
 * Call it when no tgemm call is in flight in any thread. (Resources that a
 * call in flight is using are left alone, so such a call is not harmed, but
 * they are not freed.) tgemm does not free them at process exit, because
 * the CUDA runtime linked into it may already be shut down when exit
 * handlers run; the operating system and the driver reclaim them when the
 * process ends.
 *
 * @return TGEMM_SUCCESS, or the status of a CUDA call that failed. Without
 * any earlier call on host operands or in ::TGEMM_MATH_FP32_TC it touches
 * no GPU and succeeds.
 *
 * @code
 * tgemm_sgemm(TGEMM_OP_N, TGEMM_OP_N, m, n, k, 1.0f, A, m, B, k, 0.0f, C, m);
 * tgemm_release_resources(); // pinned and device memory go back now
 * @endcode
 *
 * @since 0.2.0
 */
TGEMM_API tgemm_status tgemm_release_resources(void);

/** @} */

/**
 * @defgroup math Math mode
 * @brief Which arithmetic computes the product: strict FP32 (the default)
 * or FP32-accurate arithmetic on the tensor cores.
 * The mode is one setting per process. It starts as the environment
 * variable `TGEMM_MATH` says (`strict`, the default, or `fp32-tc`; any other
 * value makes the calls that need the GPU return
 * ::TGEMM_ERROR_INVALID_SETTING, as other settings do, until tgemm_set_math()
 * sets the mode) and tgemm_set_math() changes it for the calls that start
 * after it. Every path follows it: device pointers, host operands, and the
 * BLAS entry points `sgemm_` and `cblas_sgemm` (through `TGEMM_MATH` under
 * `LD_PRELOAD`).
 *
 * ::TGEMM_MATH_FP32_TC computes a call with Ozaki scheme II on the INT8
 * tensor cores (the operands scaled per row and column to integers, their
 * products taken modulo N small moduli, C recovered by the Chinese
 * remainder theorem), with N chosen per call from the operands. Its
 * contract: for every element, the error is no larger than the bound strict
 * FP32 carries,
 * |C - C_exact|_ij <= gamma_K (|alpha| |A| |B| + |beta| |C|)_ij,
 * gamma_K = K u / (1 - K u), u = 2^-24 (the epilogue rounds as the strict
 * path's does). Before the products, a certificate computed from the
 * operands alone (their exponent spread per row of A and column of B, K)
 * picks the smallest N at most 12 for which every element keeps that
 * bound with a margin (a sixteenth of it, and at most 2 sqrt(K) u |A||B|,
 * so that the measured errors stay below strict FP32's at every K);
 * @ref fp32_tc derives it. Results are deterministic run to run.
 *
 * The strict path computes the call instead, bitwise as in
 * ::TGEMM_MATH_STRICT, where the mode cannot keep its contract at a gain:
 * the device is not compute capability 9.0 (Hopper); the product is too
 * small for the mode to be faster (under `TGEMM_FP32_TC=auto`, the
 * default: any of m, n, k below 3072); A or B holds Inf or NaN; alpha is
 * 0, or K is above 32768 or below 3; no N up to 12 is certified (inputs
 * whose rows or columns span many orders of magnitude); the mode's scratch
 * memory cannot be had; or the stream is being captured into a graph (the
 * mode waits once for its stream, to learn N). `TGEMM_VERBOSE=2` and `TGEMM_TRACE` say
 * which math ran, with N, or why strict ran instead.
 * @{
 */

/** @brief The math of a call. */
typedef enum tgemm_math_t {
    TGEMM_MATH_STRICT = 0,  /**< IEEE FP32 with fused multiply-add on the CUDA cores (the default). */
    TGEMM_MATH_FP32_TC = 1  /**< FP32-accurate on the tensor cores where it pays, else strict (see above). */
} tgemm_math_t;

/**
 * @brief Sets the math of the calls that start after it, for the whole process.
 * Overrides `TGEMM_MATH`. Safe to call from any thread; calls already running
 * keep the math they started with.
 * @param[in] math ::TGEMM_MATH_STRICT or ::TGEMM_MATH_FP32_TC.
 * @return TGEMM_SUCCESS, or ::TGEMM_ERROR_INVALID_SETTING if @p math is not
 * a tgemm_math_t value (the mode is then unchanged).
 * @code
 * tgemm_set_math(TGEMM_MATH_FP32_TC);
 * tgemm_sgemm(TGEMM_OP_N, TGEMM_OP_N, m, n, k, 1.0f, A, m, B, k, 0.0f, C, m);
 * @endcode
 *
 * @since 0.3.0
 */
TGEMM_API tgemm_status tgemm_set_math(tgemm_math_t math);

/**
 * @brief The process's math.
 * @return The last tgemm_set_math(), else what `TGEMM_MATH` says
 * (::TGEMM_MATH_STRICT where it is unset or invalid).
 *
 * @since 0.3.0
 */
TGEMM_API tgemm_math_t tgemm_get_math(void);

/** @} */

/**
 * @defgroup info Status, version and diagnostics
 * @{
 */

/**
 * @brief A one-line English description of a status.
 *
 * @param[in] status Any value, including ones that are not statuses.
 * @return A static string, never NULL.
 *
 * @code
 * printf("%s\n", tgemm_status_string(TGEMM_ERROR_INVALID_LDA));
 * // prints: invalid argument 8 (lda): below its minimum
 * @endcode
 */
TGEMM_API const char *tgemm_status_string(tgemm_status status);

/**
 * @brief The argument a status reports.
 *
 * @param[in] status A status returned by tgemm.
 * @return The argument's position in tgemm_sgemm() and in reference BLAS
 * SGEMM (1 = transa ... 13 = ldc), or 0 if the status names no argument.
 *
 * @code
 * if (tgemm_status_argument(s) != 0)
 *     fprintf(stderr, "argument %d is wrong\n", tgemm_status_argument(s));
 * @endcode
 */
TGEMM_API int tgemm_status_argument(tgemm_status status);

/**
 * @brief Details of the last error status returned to the calling thread.
 *
 * @return Such as the CUDA call that failed and CUDA's message, or for an
 * invalid argument its number, its value and what it must be (`argument 8:
 * lda = 3 is below max(1, m) = 4`); "" after a success. The string belongs to the calling thread and stays valid until
 * its next tgemm call.
 *
 * @code
 * if (tgemm_sgemm(...) == TGEMM_ERROR_CUDA)
 *     fprintf(stderr, "%s\n", tgemm_last_error_detail());
 * @endcode
 */
TGEMM_API const char *tgemm_last_error_detail(void);

/**
 * @brief Run-time version of the library.
 *
 * @return MAJOR * 10000 + MINOR * 100 + PATCH, as TGEMM_VERSION_NUMBER.
 *
 * @code
 * if (tgemm_version() / 10000 != TGEMM_VERSION_MAJOR)
 *     abort(); // built against an incompatible header
 * @endcode
 */
TGEMM_API int tgemm_version(void);

/**
 * @brief Run-time version of the library as a string.
 *
 * @return "MAJOR.MINOR.PATCH", a static string.
 *
 * @code
 * printf("tgemm %s\n", tgemm_version_string());
 * @endcode
 */
TGEMM_API const char *tgemm_version_string(void);

/** @} */

#ifdef __cplusplus
}
#endif

#endif /* TGEMM_H */
