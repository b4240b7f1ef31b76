// The fp32-tc math's sizes, device buffers and phase 2 (ozaki.hpp): host
// code that places and orders the passes of the other kernel files.
#include "kernels/ozaki/passes.hpp"

namespace tgemm {
namespace ozaki {
namespace {

constexpr size_t kAlign = 256;  // every buffer: the TMA's and the vector accesses' alignment

size_t align_up(size_t b)
{
    return (b + kAlign - 1) / kAlign * kAlign;
}

int64_t round_up(int64_t x, int64_t a)
{
    return (x + a - 1) / a * a;
}

// Carves consecutive aligned pieces from a base (or, with a null base, adds
// up their sizes).
class Carver {
public:
    explicit Carver(void *base) : base_(static_cast<char *>(base)) {}
    template <class T>
    T *take(size_t count)
    {
        T *p = base_ != nullptr ? reinterpret_cast<T *>(base_ + used_) : nullptr;
        used_ += align_up(count * sizeof(T));
        return p;
    }
    size_t used() const { return used_; }

private:
    char *base_;
    size_t used_ = 0;
};

CertBuffers carve_cert(Carver &c, const Sizes &s, int64_t m, int64_t n, int64_t k)
{
    CertBuffers b;
    b.amax = c.take<unsigned>(k);
    b.bmax = c.take<unsigned>(k);
    b.ebal = c.take<int>(k);
    b.part_a = c.take<double>(s.chunks * m);
    b.part_b = c.take<double>(s.chunks * n);
    b.rmax_a = c.take<unsigned>(s.mp);
    b.rmax_b = c.take<unsigned>(s.np);
    b.shift_a = c.take<int>(s.mp);
    b.shift_b = c.take<int>(s.np);
    b.pw_a = c.take<double>(kCandidates * s.mp);
    b.pw_b = c.take<double>(kCandidates * s.np);
    b.ones_a = c.take<unsigned long long>(s.mp);
    b.ones_b = c.take<unsigned long long>(s.np);
    b.mag_a = c.take<uint8_t>(s.mp * s.kp);
    b.mag_b = c.take<uint8_t>(s.np * s.kp);
    b.result = c.take<int>(2);
    return b;
}

ProductBuffers carve_products(Carver &c, const Sizes &s, int n)
{
    ProductBuffers b;
    b.mu = c.take<int>(s.mp);
    b.nu = c.take<int>(s.np);
    b.ra = c.take<int8_t>(n * s.mp * s.kp);
    b.rb = c.take<int8_t>(n * s.np * s.kp);
    b.rc = c.take<int8_t>(n * s.mp * s.np);
    return b;
}

}  // namespace

Sizes sizes_of(int64_t m, int64_t n, int64_t k)
{
    Sizes s;
    s.mp = round_up(m > 1 ? m : 1, kGemmBM);
    s.np = round_up(n > 1 ? n : 1, kGemmBN);
    s.kp = round_up(k > 1 ? k : 1, kGemmBK);
    s.chunks = (k + kNormChunk - 1) / kNormChunk;
    return s;
}

bool fits(const Operands &op)
{
    // k: the certificate's int32 sums; m, n: the statistics' grid.y (256
    // rows per block) and the GEMM's int work-item count.
    constexpr int64_t kMaxRows = int64_t(65535) * 256;
    return op.k >= 3 && op.k <= kCertMaxK && op.m >= 1 && op.n >= 1 && op.m <= kMaxRows && op.n <= kMaxRows &&
           (op.ars == 1 || op.aks == 1) && (op.brs == 1 || op.bks == 1);
}

int tile_mode(const float *x, int64_t rs, int64_t ks)
{
    const bool kc = ks == 1;
    const int64_t ld = kc ? rs : ks;
    const bool vec = reinterpret_cast<uintptr_t>(x) % 16 == 0 && ld % 4 == 0;
    return (kc ? kTileKc : 0) | (vec ? kTileVec : 0);
}

size_t cert_bytes(const Sizes &s)
{
    Carver c(nullptr);
    // m <= mp, n <= np, k <= kp: sized for the padded extents.
    carve_cert(c, s, s.mp, s.np, s.kp);
    return c.used();
}

CertBuffers cert_buffers(void *work, const Sizes &s)
{
    Carver c(work);
    return carve_cert(c, s, s.mp, s.np, s.kp);
}

size_t product_bytes(const Sizes &s, int n)
{
    Carver c(nullptr);
    carve_products(c, s, n);
    return c.used();
}

ProductBuffers product_buffers(void *work, const Sizes &s, int n)
{
    Carver c(work);
    return carve_products(c, s, n);
}

cudaError_t launch_products(const Operands &op, const Sizes &s, const CertBuffers &cb, const ProductBuffers &pb,
                            int n, float alpha, float beta, float *c, int64_t ldc, int sm_count, cudaStream_t st)
{
    if (!fits(op) || n < kMinN || n > kMaxN)
        return cudaErrorInvalidValue;
    cudaError_t e;
    if ((e = launch_exponents(op, s, cb, pb.mu, pb.nu, n, st)) != cudaSuccess ||
        (e = launch_convert(op, s, cb.ebal, pb.mu, pb.nu, pb.ra, pb.rb, n, st)) != cudaSuccess ||
        (e = launch_residue_gemm(pb.ra, pb.rb, pb.rc, s, n, sm_count, st)) != cudaSuccess)
        return e;
    return launch_crt(op, s, pb, n, alpha, beta, c, ldc, st);
}

}  // namespace ozaki
}  // namespace tgemm
