// The certificate for contract (a) on the GPU (../certify.hpp, NOTES.md (f)):
// for every element, the smallest N in [nmin, nmax] at which its truncation
// bound is certified within strict FP32's, bit for bit as oz2::certify.
// Included by ozaki2_gpu.cu after the element functions and igemm_wgmma.cuh.
//
// Passes, on the K-balanced operands (x = ldexp_f(op(X)_rk, sign e_k)):
//   rowmax_kernel   max_k |x| per row, as float bits (atomicMax: exact, order-free)
//   cert_rows_kernel s_r = 7 - ilogb(max) (0 for a zero row) and, per candidate
//                   N, pw[N][r] = 2^(s_r - mu_r(N) - 16) with mu_r(N) the
//                   fast-cs exponent of the row's sum of squares for T(N)
//   mag_kernel      Xu[r][kk] = floor(2^s_r |x|) (u8, K-contiguous, zero padded)
//                   and I_r = sum_k ceil(2^(s_r + 16) |x|) (int64 atomicAdd:
//                   integers, so the sum does not depend on the order)
//   the magnitude GEMM (wg::gemm_kernel<CertEpi>, u8 x u8 -> s32, K <= 32768
//                   so that 255^2 K < 2^31 and no K block is needed), whose
//                   epilogue writes per element its smallest certified N
//                   (nmax + 1 where none) as a byte, column-major Mp x Np.
#pragma once

namespace cert {

constexpr int kBits = 8, kD = 24 - kBits;
constexpr int kMaxK = 32768;  // 255^2 * 32768 < 2^31

// |x| = mant 2^ex with mant < 2^24 (subnormals normalised, as frexp does).
OZ_HD void decompose(float x, long long &mant, int &ex)
{
    const unsigned b = f2u(x) & 0x7fffffffu, eb = b >> 23, fr = b & 0x7fffffu;
    if (b == 0) { mant = 0; ex = 0; return; }
    if (eb) { mant = (long long)(fr | 0x800000u); ex = int(eb) - 150; return; }
    const int sh = clz32(fr) - 8;
    mant = (long long)(fr << sh);
    ex = -149 - sh;
}

// floor(2^s |x|) and ceil(2^s |x|), exact (results below 2^40 here).
OZ_HD long long floor_scaled(float x, int s)
{
    long long mant; int ex;
    decompose(x, mant, ex);
    if (mant == 0) return 0;
    const int sh = ex + s;
    if (sh >= 0) return mant << sh;
    if (-sh >= 32) return 0;
    return mant >> -sh;
}
OZ_HD long long ceil_scaled(float x, int s)
{
    long long mant; int ex;
    decompose(x, mant, ex);
    if (mant == 0) return 0;
    const int sh = ex + s;
    if (sh >= 0) return mant << sh;
    if (-sh >= 32) return 1;
    const long long q = mant >> -sh;
    return (q << -sh) == mant ? q : q + 1;
}

// floor(2^s |x|) and ceil(2^(s + 16) |x|) in 32-bit arithmetic, for s with
// 2^s |x| < 2^8 (s from the row's maximum): as the mantissa of a nonzero x
// has its top bit at 2^23, both are right shifts of it (by 16 or more, and
// by 0 or more), and both results are below 2^24.
OZ_HD void mag_pair(float x, int s, unsigned &fl, unsigned &ce)
{
    const unsigned b = f2u(x) & 0x7fffffffu, eb = b >> 23, fr = b & 0x7fffffu;
    if (b == 0) { fl = 0; ce = 0; return; }
    unsigned mant;
    int ex;
    if (eb) { mant = fr | 0x800000u; ex = int(eb) - 150; }
    else { const int sh = clz32(fr) - 8; mant = fr << sh; ex = -149 - sh; }
    const int r1 = -(ex + s), r2 = r1 - kD;  // right shifts: r1 >= 16, r2 >= 0
    fl = r1 >= 32 ? 0u : mant >> r1;
    if (r2 >= 32) { ce = 1u; return; }
    const unsigned q = mant >> r2;
    ce = (q << r2) == mant ? q : q + 1u;
}

// The per-element test, the model's test_core: lhs = IA pc + IB pr (no fma),
// pass iff lhs (1 + 2^-40) <= g L'.
__device__ __forceinline__ bool test_core(double ia, double ib, double pr, double pc, double g, double lp)
{
    const double lhs = __dadd_rn(__dmul_rn(ia, pc), __dmul_rn(ib, pr));
    const double rhs = __dmul_rn(g, lp);
    return __dmul_rn(lhs, 1.0 + 0x1p-40) <= rhs;
}

// 32 x 32 tile of op(X) at (r0, k0), element (r, kk) at X[r rs + kk ks],
// zeros outside R x K, stored as t[kk][r]; block (32, 8). Coalesced in either
// orientation (the certificate's passes are not tuned).
__device__ __forceinline__ void load32(float (*t)[33], const float *__restrict__ X, int64_t rs, int64_t ks,
                                       int64_t R, int64_t K, int64_t r0, int64_t k0)
{
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        int r, kk;
        if (rs == 1) { r = threadIdx.x; kk = threadIdx.y + 8 * j; }
        else { r = threadIdx.y + 8 * j; kk = threadIdx.x; }
        t[kk][r] = (r0 + r < R && k0 + kk < K) ? X[(r0 + r) * rs + (k0 + kk) * ks] : 0.0f;
    }
}

__global__ void rowmax_kernel(const float *__restrict__ X, int64_t rs, int64_t ks, int64_t R, int64_t K,
                              const int *__restrict__ ebal, int sign, unsigned *__restrict__ rmax)
{
    __shared__ float s[32][33];
    // Row blocks along x: the blocks running at once add into different rows'
    // sums (same-address atomics from one row block's k blocks would queue).
    const int64_t r0 = int64_t(blockIdx.x) * 32, k0 = int64_t(blockIdx.y) * 32;
    load32(s, X, rs, ks, R, K, r0, k0);
    __syncthreads();
    if (threadIdx.y == 0 && r0 + threadIdx.x < R) {
        float mx = 0.0f;
        const int kn = K - k0 < 32 ? int(K - k0) : 32;
        for (int kk = 0; kk < kn; ++kk) mx = fmaxf(mx, fabsf(ldexp_f(s[kk][threadIdx.x], sign * ebal[k0 + kk])));
        atomicMax(rmax + r0 + threadIdx.x, __float_as_uint(mx));
    }
}

// s[r] and pw[(N - nmin) * Rp + r] for rows r < Rp (padding rows: s = 0,
// pw = 0; their I stays 0, which marks a zero row).
// part: the scaling's chunk sums of squares (nch x R), summed as it does.
__global__ void cert_rows_kernel(int64_t R, int64_t Rp, const unsigned *__restrict__ rmax,
                                 const double *__restrict__ part, int64_t nch, const double *__restrict__ T, int nmin,
                                 int nN, int *__restrict__ s, double *__restrict__ pw)
{
    const int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (r >= Rp) return;
    const float mx = r < R ? __uint_as_float(rmax[r]) : 0.0f;
    const int sr = mx == 0.0f ? 0 : kBits - 1 - ilogb_bits(mx);
    s[r] = sr;
    const double norm2 = r < R ? norm_total(part + r, R, nch) : 0.0;
    for (int t = 0; t < nN; ++t)
        pw[t * Rp + r] = mx == 0.0f ? 0.0 : ldexp(1.0, sr - mu_value(norm2, T[t]) - kD);
}

// Xu and I (I zeroed by the caller).
__global__ void mag_kernel(const float *__restrict__ X, int64_t rs, int64_t ks, int64_t R, int64_t K, int64_t Rp,
                           int64_t Kp, const int *__restrict__ ebal, int sign, const int *__restrict__ srow,
                           uint8_t *__restrict__ out, unsigned long long *__restrict__ I)
{
    __shared__ float s[32][33];
    // Row blocks along x: the blocks running at once add into different rows'
    // sums (same-address atomics from one row block's k blocks would queue).
    const int64_t r0 = int64_t(blockIdx.x) * 32, k0 = int64_t(blockIdx.y) * 32;
    load32(s, X, rs, ks, R, K, r0, k0);
    __syncthreads();
    const int kk = threadIdx.x;
    const int e = (k0 + kk < K) ? sign * ebal[k0 + kk] : 0;
OZ_UNROLL
    for (int j = 0; j < 4; ++j) {
        const int r = threadIdx.y + 8 * j;
        const int64_t gr = r0 + r;
        unsigned c = 0;
        if (gr < Rp) {
            const float x = ldexp_f(s[kk][r], e);  // 0 outside the matrix
            unsigned fl;
            mag_pair(x, srow[gr], fl, c);
            out[size_t(gr) * size_t(Kp) + size_t(k0 + kk)] = uint8_t(fl);
        }
        // Sum over the 32 k of this row in the warp (each term < 2^24: the
        // sum fits 32 bits; integers, so exact in any order).
        for (int o = 16; o > 0; o >>= 1) c += __shfl_xor_sync(0xffffffffu, c, o);
        if (kk == 0 && gr < R && c) atomicAdd(I + gr, (unsigned long long)c);
    }
}

// The magnitude GEMM's epilogue: per element, the smallest N from which every
// candidate up to nmax passes (the model's nreq), nmin for a zero row or
// column, nmax + 1 where none.
struct CertEpi {
    static constexpr bool kU8 = true;
    static constexpr int kKBlocks = 1 << 30;  // K <= 32768: never reduced
    const unsigned long long *IA, *IB;
    const double *pwA, *pwB;  // [N - nmin][Mp], [N - nmin][Np]
    int64_t Mp, Np;
    double g;
    int nmin, nmax;

    __device__ __forceinline__ void reduce(int (&)[128], int) const {}
    __device__ __forceinline__ uint8_t nreq(int64_t i, int64_t j, unsigned long long ia, int lp) const
    {
        const unsigned long long ib = IB[j];
        if (ia == 0 || ib == 0) return uint8_t(nmin);
        if (g <= 0.0) return uint8_t(nmax + 1);
        // The test can only get easier as N grows (mu, nu grow with T, so
        // both terms of lhs shrink, and rounding is monotone): the first
        // N that passes is the model's nreq (its scan goes down from nmax).
        const double rhs_l = double(lp);
        for (int N = nmin; N <= nmax; ++N) {
            const int t = N - nmin;
            if (test_core(double(ia), double(ib), pwA[t * Mp + i], pwB[t * Np + j], g, rhs_l)) return uint8_t(N);
        }
        return uint8_t(nmax + 1);
    }
    __device__ __forceinline__ void stage(const int (&d)[128], unsigned char *tile, int row0, int lane, int, int m0,
                                          int n0) const
    {
        const int g8 = lane >> 2, q = lane & 3;
        const unsigned long long ia0 = IA[m0 + row0 + g8], ia1 = IA[m0 + row0 + g8 + 8];
#pragma unroll
        for (int c = 0; c < 128; ++c) {
            const int row = row0 + g8 + ((c >> 1) & 1) * 8;
            const int col = (c >> 2) * 8 + 2 * q + (c & 1);
            tile[col * wg::BM + row] = nreq(m0 + row, n0 + col, ((c >> 1) & 1) ? ia1 : ia0, d[c]);
        }
    }
};

}  // namespace cert

namespace cert {

// Device buffers of one call's certificate, for candidates N in [nmin, nmax].
struct Buffers {
    int nmin = 0, nmax = 0;
    int64_t Mp = 0, Np = 0, Kp = 0;
    unsigned *rmaxA = nullptr, *rmaxB = nullptr;
    int *sA = nullptr, *sB = nullptr;
    double *pwA = nullptr, *pwB = nullptr, *T = nullptr;
    unsigned long long *IA = nullptr, *IB = nullptr;
    uint8_t *Au = nullptr, *Bu = nullptr, *nreq = nullptr;  // nreq: Mp x Np, column-major
    cudaEvent_t mid = nullptr;  // recorded between the passes and the magnitude GEMM
};

inline Buffers make_buffers(int64_t Mp, int64_t Np, int64_t Kp, int nmin, int nmax)
{
    Buffers b;
    b.nmin = nmin; b.nmax = nmax; b.Mp = Mp; b.Np = Np; b.Kp = Kp;
    const int nN = nmax - nmin + 1;
    CK(cudaMalloc(&b.rmaxA, Mp * 4)); CK(cudaMalloc(&b.rmaxB, Np * 4));
    CK(cudaMalloc(&b.sA, Mp * 4)); CK(cudaMalloc(&b.sB, Np * 4));
    CK(cudaMalloc(&b.pwA, size_t(nN) * Mp * 8)); CK(cudaMalloc(&b.pwB, size_t(nN) * Np * 8));
    CK(cudaMalloc(&b.T, size_t(nN) * 8));
    CK(cudaMalloc(&b.IA, Mp * 8)); CK(cudaMalloc(&b.IB, Np * 8));
    CK(cudaMalloc(&b.Au, size_t(Mp) * Kp)); CK(cudaMalloc(&b.Bu, size_t(Np) * Kp));
    CK(cudaMalloc(&b.nreq, size_t(Mp) * Np));
    CK(cudaEventCreate(&b.mid));
    std::vector<double> T(nN);
    for (int t = 0; t < nN; ++t) T[t] = oz2::log2_T(nmin + t);
    CK(cudaMemcpy(b.T, T.data(), nN * 8, cudaMemcpyHostToDevice));
    return b;
}

inline void free_buffers(Buffers &b)
{
    cudaFree(b.rmaxA); cudaFree(b.rmaxB); cudaFree(b.sA); cudaFree(b.sB); cudaFree(b.pwA); cudaFree(b.pwB);
    cudaFree(b.T); cudaFree(b.IA); cudaFree(b.IB); cudaFree(b.Au); cudaFree(b.Bu); cudaFree(b.nreq);
    cudaEventDestroy(b.mid);
    b = Buffers();
}

// The whole certificate of one call (k <= kMaxK): b.nreq on return (stream order).
// op(A)(i, kk) at A[i ars + kk aks], op(B)(kk, j) at B[j brs + kk bks]; ebal
// the K-balancing exponents; partA/B the scaling's chunk sums of squares
// (nch x m, nch x n).
inline void run(Buffers &b, const float *A, int64_t ars, int64_t aks, int64_t m, const float *B, int64_t brs,
                int64_t bks, int64_t n, int64_t k, const int *ebal, const double *partA, const double *partB,
                int64_t nch)
{
    if (k > kMaxK) {  // int32 magnitude sums
        std::fprintf(stderr, "cert::run: k = %lld, Mp = %lld, Np = %lld out of range\n", static_cast<long long>(k),
                     static_cast<long long>(b.Mp), static_cast<long long>(b.Np));
        std::exit(2);
    }
    const int nN = b.nmax - b.nmin + 1;
    CK(cudaMemsetAsync(b.rmaxA, 0, b.Mp * 4)); CK(cudaMemsetAsync(b.rmaxB, 0, b.Np * 4));
    CK(cudaMemsetAsync(b.IA, 0, b.Mp * 8)); CK(cudaMemsetAsync(b.IB, 0, b.Np * 8));
    const unsigned kt32 = unsigned((k + 31) / 32), kp32 = unsigned(b.Kp / 32);
    rowmax_kernel<<<dim3(unsigned((m + 31) / 32), kt32), dim3(32, 8)>>>(A, ars, aks, m, k, ebal, +1, b.rmaxA);
    rowmax_kernel<<<dim3(unsigned((n + 31) / 32), kt32), dim3(32, 8)>>>(B, brs, bks, n, k, ebal, -1, b.rmaxB);
    cert_rows_kernel<<<unsigned((b.Mp + 255) / 256), 256>>>(m, b.Mp, b.rmaxA, partA, nch, b.T, b.nmin, nN, b.sA,
                                                            b.pwA);
    cert_rows_kernel<<<unsigned((b.Np + 255) / 256), 256>>>(n, b.Np, b.rmaxB, partB, nch, b.T, b.nmin, nN, b.sB,
                                                            b.pwB);
    mag_kernel<<<dim3(unsigned(b.Mp / 32), kp32), dim3(32, 8)>>>(A, ars, aks, m, k, b.Mp, b.Kp, ebal, +1, b.sA, b.Au,
                                                                 b.IA);
    mag_kernel<<<dim3(unsigned(b.Np / 32), kp32), dim3(32, 8)>>>(B, brs, bks, n, k, b.Np, b.Kp, ebal, -1, b.sB, b.Bu,
                                                                 b.IB);
    CK(cudaGetLastError());
    CK(cudaEventRecord(b.mid));
    CertEpi epi;
    epi.IA = b.IA; epi.IB = b.IB; epi.pwA = b.pwA; epi.pwB = b.pwB; epi.Mp = b.Mp; epi.Np = b.Np;
    epi.g = oz2::cert_gamma(k); epi.nmin = b.nmin; epi.nmax = b.nmax;
    wg::launch(reinterpret_cast<const int8_t *>(b.Au), reinterpret_cast<const int8_t *>(b.Bu),
               reinterpret_cast<int8_t *>(b.nreq), b.Mp, b.Np, b.Kp, 1, epi);
    CK(cudaGetLastError());
}

}  // namespace cert

namespace cert {

// mag_pair against the general floor_scaled / ceil_scaled on random x
// (normal and subnormal) and row maxima at or above |x|; returns mismatches.
inline int mag_selftest(int count)
{
    std::mt19937_64 rng(12345);
    int bad = 0;
    for (int i = 0; i < count; ++i) {
        const unsigned bits = unsigned(rng()) & 0x7fffffffu;
        float x;
        std::memcpy(&x, &bits, 4);
        if (!std::isfinite(x)) continue;
        const float mx = std::min(std::ldexp(std::fabs(x), int(rng() % 31)), std::numeric_limits<float>::max());
        const int s = mx == 0.0f ? 0 : kBits - 1 - ilogb_bits(mx);
        unsigned fl, ce;
        mag_pair(x, s, fl, ce);
        if ((long long)fl != floor_scaled(x, s) || (long long)ce != ceil_scaled(x, s + kD)) ++bad;
    }
    return bad;
}

}  // namespace cert
