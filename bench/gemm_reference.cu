// bench_gemm's FP64 reference on the device: see gemm_reference.hpp.
#include "bench_error.hpp"
#include "gemm_reference.hpp"

#include "gemm_check.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

namespace gemm_reference {
namespace {

[[noreturn]] void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bench::vdie("FP64 reference of the output check: ", fmt, ap);
}

#define REF_CUDA(call)                                                                                           \
    do {                                                                                                         \
        const cudaError_t err_ = (call);                                                                         \
        if (err_ != cudaSuccess)                                                                                 \
            fatal("%s:%d: %s failed: %s (%s)", __FILE__, __LINE__, #call, cudaGetErrorName(err_),                \
                  cudaGetErrorString(err_));                                                                     \
    } while (0)

// Device memory for count elements, freed on scope exit.
template <typename T>
struct Buffer {
    T *p = nullptr;
    explicit Buffer(size_t count)
    {
        if (count > 0)
            REF_CUDA(cudaMalloc(&p, count * sizeof(T)));
    }
    ~Buffer() { cudaFree(p); }
    Buffer(const Buffer &) = delete;
    Buffer &operator=(const Buffer &) = delete;
};

// dst = src and, when dst_abs is not null, dst_abs = |src|: a rows x cols
// block widened to FP64 (column-major, leading dimensions lds and ldd).
__global__ void widen(const float *__restrict__ src, int64_t lds, int64_t rows, int64_t cols,
                      double *__restrict__ dst, double *__restrict__ dst_abs, int64_t ldd)
{
    for (int64_t c = blockIdx.y; c < cols; c += gridDim.y)
        for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; r < rows;
             r += static_cast<int64_t>(gridDim.x) * blockDim.x) {
            const double v = src[r + c * lds];
            dst[r + c * ldd] = v;
            if (dst_abs)
                dst_abs[r + c * ldd] = fabs(v);
        }
}

void launch_widen(const float *src, int64_t lds, int64_t rows, int64_t cols, double *dst, double *dst_abs,
                  int64_t ldd, cudaStream_t stream)
{
    const dim3 grid(static_cast<unsigned>(std::min<int64_t>((rows + 255) / 256, 64)),
                    static_cast<unsigned>(std::min<int64_t>(cols, 65535)));
    widen<<<grid, 256, 0, stream>>>(src, lds, rows, cols, dst, dst_abs, ldd);
    REF_CUDA(cudaGetLastError());
}

constexpr int kTile = 16;

// Without cuBLAS: for a rows x cols block of C over kk terms,
//   r = alpha op(A) op(B) and g = |alpha| |op(A)| |op(B)|,
// added to what r and g hold when accumulate. a holds op(A)'s block as
// stored: rows x kk ('N') or kk x rows ('T', ta true), leading dimension
// lda; b holds op(B)'s, kk x cols or cols x kk. One thread per element of
// C, the operands staged through shared memory a 16 x 16 tile at a time.
__global__ void sum_both(bool ta, bool tb, int64_t rows, int64_t cols, int64_t kk, const double *__restrict__ a,
                         int64_t lda, const double *__restrict__ b, int64_t ldb, double alpha, bool accumulate,
                         double *__restrict__ r, double *__restrict__ g, int64_t ldr)
{
    __shared__ double as[kTile][kTile + 1];  // as[q][x] = op(A)(i0 + x, p0 + q)
    __shared__ double bs[kTile][kTile + 1];  // bs[y][q] = op(B)(p0 + q, j0 + y)
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t i0 = static_cast<int64_t>(blockIdx.x) * kTile;
    const int64_t tiles_n = (cols + kTile - 1) / kTile;
    for (int64_t bj = blockIdx.y; bj < tiles_n; bj += gridDim.y) {
        const int64_t j0 = bj * kTile;
        double s = 0.0, sa = 0.0;
        for (int64_t p0 = 0; p0 < kk; p0 += kTile) {
            const int64_t ia = i0 + tx, qa = p0 + ty;
            as[ty][tx] = ia < rows && qa < kk ? (ta ? a[qa + ia * lda] : a[ia + qa * lda]) : 0.0;
            const int64_t qb = p0 + tx, jb = j0 + ty;
            bs[ty][tx] = qb < kk && jb < cols ? (tb ? b[jb + qb * ldb] : b[qb + jb * ldb]) : 0.0;
            __syncthreads();
            for (int q = 0; q < kTile; ++q) {
                const double x = as[q][tx], y = bs[ty][q];
                s = fma(x, y, s);
                sa = fma(fabs(x), fabs(y), sa);
            }
            __syncthreads();
        }
        const int64_t i = i0 + tx, j = j0 + ty;
        if (i < rows && j < cols) {
            const double rv = alpha * s, gv = fabs(alpha) * sa;
            r[i + j * ldr] = accumulate ? r[i + j * ldr] + rv : rv;
            g[i + j * ldr] = accumulate ? g[i + j * ldr] + gv : gv;
        }
    }
}

// out[s k + p] = x[idx[s] stride_i + p stride_p] for s < gridDim.y, p < k:
// op(A)'s rows or op(B)'s columns at the sampled elements.
__global__ void gather(const float *__restrict__ x, const int64_t *__restrict__ idx, int64_t stride_i,
                       int64_t stride_p, int64_t k, float *__restrict__ out)
{
    const int64_t s = blockIdx.y, base = idx[s] * stride_i;
    for (int64_t p = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; p < k;
         p += static_cast<int64_t>(gridDim.x) * blockDim.x)
        out[s * k + p] = x[base + p * stride_p];
}

void gather_on_device(const float *x, const std::vector<int64_t> &idx, int64_t stride_i, int64_t stride_p,
                      int64_t k, std::vector<float> *out, cudaStream_t stream)
{
    const size_t count = idx.size();
    Buffer<int64_t> d_idx(count);
    Buffer<float> d_out(count * static_cast<size_t>(k));
    REF_CUDA(cudaMemcpyAsync(d_idx.p, idx.data(), count * sizeof(int64_t), cudaMemcpyHostToDevice, stream));
    const dim3 grid(static_cast<unsigned>(std::min<int64_t>((k + 255) / 256, 256)), static_cast<unsigned>(count));
    gather<<<grid, 256, 0, stream>>>(x, d_idx.p, stride_i, stride_p, k, d_out.p);
    REF_CUDA(cudaGetLastError());
    out->resize(count * static_cast<size_t>(k));
    REF_CUDA(cudaMemcpyAsync(out->data(), d_out.p, out->size() * sizeof(float), cudaMemcpyDeviceToHost, stream));
    REF_CUDA(cudaStreamSynchronize(stream));
}

constexpr int kMaxSamples = 64;

// R and G at the sampled elements against FP64 dot products of op(A)'s row
// and op(B)'s column on the host. Both sides are FP64 sums of the same
// exact products (a product of two floats is exact in FP64), in orders that
// differ, each within gamma(k + 2, 2^-53) G of the exact value.
void spot_check(const Problem &p, const std::vector<std::pair<int64_t, int64_t>> &samples, const double *ref,
                const double *mag, cudaStream_t stream)
{
    std::vector<int64_t> is, js;
    for (const auto &ij : samples) {
        is.push_back(ij.first);
        js.push_back(ij.second);
    }
    // op(A)(i, q) = a[i + q lda] ('N') or a[q + i lda]; op(B)(q, j) = b[q + j ldb] ('N') or b[j + q ldb].
    std::vector<float> rows_a, cols_b;
    gather_on_device(p.a, is, p.ta == 'N' ? 1 : p.lda, p.ta == 'N' ? p.lda : 1, p.k, &rows_a, stream);
    gather_on_device(p.b, js, p.tb == 'N' ? p.ldb : 1, p.tb == 'N' ? 1 : p.ldb, p.k, &cols_b, stream);
    const double tol_factor = 2.0 * gemm_check::gamma(static_cast<double>(p.k) + 2.0, gemm_check::kUnitFp64);
    for (size_t s = 0; s < samples.size(); ++s) {
        double dot = 0, absdot = 0;
        gemm_check::dot_fp64(&rows_a[s * static_cast<size_t>(p.k)], 1, &cols_b[s * static_cast<size_t>(p.k)], 1,
                             p.k, &dot, &absdot);
        const double want_r = p.alpha * dot, want_g = std::fabs(p.alpha) * absdot;
        const size_t e = static_cast<size_t>(is[s] + js[s] * p.m);
        const double tol = tol_factor * want_g;
        if (!(std::fabs(ref[e] - want_r) <= tol) || !(std::fabs(mag[e] - want_g) <= tol))
            fatal("at C(%lld, %lld) of %lld x %lld x %lld %c%c: R = %.17g and G = %.17g, but the dot products on "
                  "the host give %.17g and %.17g (tolerance %.3e)",
                  static_cast<long long>(is[s]), static_cast<long long>(js[s]), static_cast<long long>(p.m),
                  static_cast<long long>(p.n), static_cast<long long>(p.k), p.ta, p.tb, ref[e], mag[e], want_r,
                  want_g, tol);
    }
}

// R and G block by block (mb x nb of C, kb of K at a time) into ref and
// mag; each block's first and last element are added to samples. The
// blocks' buffers are freed on return, before the sampling takes its own.
void compute_blocks(const Problem &p, const Dgemm &dgemm, cudaStream_t stream, int64_t mb, int64_t nb, int64_t kb,
                    double *ref, double *mag, std::vector<std::pair<int64_t, int64_t>> *samples)
{
    const bool ta = p.ta == 'T', tb = p.tb == 'T';
    const bool cublas = dgemm.fn != nullptr;  // else sum_both
    Buffer<double> a64(static_cast<size_t>(mb * kb)), b64(static_cast<size_t>(kb * nb));
    Buffer<double> a_abs(cublas ? static_cast<size_t>(mb * kb) : 0), b_abs(cublas ? static_cast<size_t>(kb * nb) : 0);
    Buffer<double> r(static_cast<size_t>(mb * nb)), g(static_cast<size_t>(mb * nb));
    for (int64_t i0 = 0; i0 < p.m; i0 += mb) {
        const int64_t rows = std::min(mb, p.m - i0);
        for (int64_t j0 = 0; j0 < p.n; j0 += nb) {
            const int64_t cols = std::min(nb, p.n - j0);
            for (int64_t k0 = 0; k0 < p.k; k0 += kb) {
                const int64_t kk = std::min(kb, p.k - k0);
                // op(A)'s rows i0.. and terms k0..: stored rows x kk, or kk x rows when transposed.
                const int64_t a_rows = ta ? kk : rows, a_cols = ta ? rows : kk;
                launch_widen(ta ? p.a + k0 + i0 * p.lda : p.a + i0 + k0 * p.lda, p.lda, a_rows, a_cols, a64.p,
                             a_abs.p, a_rows, stream);
                // op(B)'s terms k0.. and columns j0..: kk x cols, or cols x kk.
                const int64_t b_rows = tb ? cols : kk, b_cols = tb ? kk : cols;
                launch_widen(tb ? p.b + j0 + k0 * p.ldb : p.b + k0 + j0 * p.ldb, p.ldb, b_rows, b_cols, b64.p,
                             b_abs.p, b_rows, stream);
                if (cublas) {
                    const double beta = k0 > 0 ? 1.0 : 0.0, abs_alpha = std::fabs(p.alpha);
                    const int st_r = dgemm.fn(dgemm.handle, ta ? 1 : 0, tb ? 1 : 0, static_cast<int>(rows),
                                              static_cast<int>(cols), static_cast<int>(kk), &p.alpha, a64.p,
                                              static_cast<int>(a_rows), b64.p, static_cast<int>(b_rows), &beta, r.p,
                                              static_cast<int>(rows));
                    if (st_r != 0)
                        fatal("cublasDgemm_v2 (R) failed with cuBLAS status %d", st_r);
                    const int st_g = dgemm.fn(dgemm.handle, ta ? 1 : 0, tb ? 1 : 0, static_cast<int>(rows),
                                              static_cast<int>(cols), static_cast<int>(kk), &abs_alpha, a_abs.p,
                                              static_cast<int>(a_rows), b_abs.p, static_cast<int>(b_rows), &beta,
                                              g.p, static_cast<int>(rows));
                    if (st_g != 0)
                        fatal("cublasDgemm_v2 (G) failed with cuBLAS status %d", st_g);
                } else {
                    const dim3 grid(static_cast<unsigned>((rows + kTile - 1) / kTile),
                                    static_cast<unsigned>(std::min<int64_t>((cols + kTile - 1) / kTile, 65535)));
                    sum_both<<<grid, dim3(kTile, kTile), 0, stream>>>(ta, tb, rows, cols, kk, a64.p, a_rows, b64.p,
                                                                        b_rows, p.alpha, k0 > 0, r.p, g.p, rows);
                    REF_CUDA(cudaGetLastError());
                }
            }
            REF_CUDA(cudaMemcpy2DAsync(ref + i0 + j0 * p.m, static_cast<size_t>(p.m) * sizeof(double), r.p,
                                       static_cast<size_t>(rows) * sizeof(double),
                                       static_cast<size_t>(rows) * sizeof(double), static_cast<size_t>(cols),
                                       cudaMemcpyDeviceToHost, stream));
            REF_CUDA(cudaMemcpy2DAsync(mag + i0 + j0 * p.m, static_cast<size_t>(p.m) * sizeof(double), g.p,
                                       static_cast<size_t>(rows) * sizeof(double),
                                       static_cast<size_t>(rows) * sizeof(double), static_cast<size_t>(cols),
                                       cudaMemcpyDeviceToHost, stream));
            REF_CUDA(cudaStreamSynchronize(stream));
            samples->push_back({i0, j0});
            samples->push_back({i0 + rows - 1, j0 + cols - 1});
        }
    }
}

}  // namespace

void compute(const Problem &p, const Dgemm &dgemm, cudaStream_t stream, size_t budget, double *ref, double *mag)
{
    if (p.m < 1 || p.n < 1 || p.k < 1 || p.m > INT_MAX || p.n > INT_MAX || p.k > INT_MAX)
        fatal("unsupported shape %lld x %lld x %lld", static_cast<long long>(p.m), static_cast<long long>(p.n),
              static_cast<long long>(p.k));
    const bool cublas = dgemm.fn != nullptr;

    // Blocks of mb rows and nb columns of C, over kb terms of K: each
    // operand block widened (and its absolute values, for the DGEMM of G),
    // R's and G's block. Halved, the largest first, until they fit.
    int64_t mb = p.m, nb = p.n, kb = p.k;
    const auto bytes = [&] {
        const double copies = cublas ? 2.0 : 1.0;
        return 8.0 * (copies * (static_cast<double>(mb) * kb + static_cast<double>(kb) * nb) +
                      2.0 * static_cast<double>(mb) * nb);
    };
    while (bytes() > static_cast<double>(budget)) {
        if (mb == 1 && nb == 1 && kb == 1)
            fatal("%zu bytes of device memory are too few", budget);
        int64_t &d = mb >= nb && mb >= kb ? mb : nb >= kb ? nb : kb;
        d = (d + 1) / 2;
    }
    std::vector<std::pair<int64_t, int64_t>> samples = {{0, 0}, {p.m - 1, 0}, {0, p.n - 1}, {p.m - 1, p.n - 1}};
    compute_blocks(p, dgemm, stream, mb, nb, kb, ref, mag, &samples);

    // The corners, each block's first and last element, then pseudo-random
    // elements (a fixed LCG), as many as kMaxSamples and the budget allow.
    const int64_t fit = static_cast<int64_t>(budget / (2 * sizeof(float) * static_cast<size_t>(p.k)));
    const size_t count = static_cast<size_t>(std::min<int64_t>(kMaxSamples, fit));
    if (count < 4)
        fatal("%zu bytes of device memory are too few to sample the reference at K = %lld", budget,
              static_cast<long long>(p.k));
    uint64_t state = 0x9e3779b97f4a7c15ull ^ static_cast<uint64_t>(p.m * 31 + p.n * 17 + p.k);
    while (samples.size() < count) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        const uint64_t x = state >> 11;
        samples.push_back({static_cast<int64_t>(x % static_cast<uint64_t>(p.m)),
                           static_cast<int64_t>((x >> 20) % static_cast<uint64_t>(p.n))});
    }
    samples.resize(count);
    spot_check(p, samples, ref, mag, stream);
}

}  // namespace gemm_reference
