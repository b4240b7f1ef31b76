#include "ozaki_model.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/ozaki/element.hpp"

namespace ozaki_model {
namespace {

using namespace tgemm::ozaki;

constexpr GarnerTable kGarner = TGEMM_OZAKI_GARNER;
constexpr int64_t kNormChunk = 256;  // the norm kernel's chunk of K (stats.cu)

// op(A) as m rows of k and op(B) as n rows of k (column j of op(B)), K-balanced.
struct Balanced {
    std::vector<float> a, b;  // a[i*k + kk], b[j*k + kk]
    bool special = false;
    bool inexact = false;  // a balanced value is not exact: nothing is certified
};

Balanced balance(const Problem &p)
{
    const int64_t m = p.m, n = p.n, k = p.k;
    Balanced x;
    x.a.resize(m * k);
    x.b.resize(n * k);
    for (int64_t i = 0; i < m; ++i)
        for (int64_t kk = 0; kk < k; ++kk)
            x.a[i * k + kk] = p.trans_a ? p.a[kk + i * p.lda] : p.a[i + kk * p.lda];
    for (int64_t j = 0; j < n; ++j)
        for (int64_t kk = 0; kk < k; ++kk)
            x.b[j * k + kk] = p.trans_b ? p.b[j + kk * p.ldb] : p.b[kk + j * p.ldb];
    for (float v : x.a)
        x.special = x.special || nonfinite(v);
    for (float v : x.b)
        x.special = x.special || nonfinite(v);
    if (x.special)
        return x;
    for (int64_t kk = 0; kk < k; ++kk) {
        float ma = 0.0f, mb = 0.0f;
        for (int64_t i = 0; i < m; ++i)
            ma = std::max(ma, std::fabs(x.a[i * k + kk]));
        for (int64_t j = 0; j < n; ++j)
            mb = std::max(mb, std::fabs(x.b[j * k + kk]));
        const int e = ebal_value(ma, mb);
        for (int64_t i = 0; i < m; ++i) {
            const float xb = ldexp_f(x.a[i * k + kk], e);
            x.inexact = x.inexact || balance_flags(x.a[i * k + kk], xb, e) != 0;
            x.a[i * k + kk] = xb;
        }
        for (int64_t j = 0; j < n; ++j) {
            const float xb = ldexp_f(x.b[j * k + kk], -e);
            x.inexact = x.inexact || balance_flags(x.b[j * k + kk], xb, -e) != 0;
            x.b[j * k + kk] = xb;
        }
    }
    return x;
}

// Sum of squares of a row in the norm kernels' order: chunks of kNormChunk
// summed sequentially from 0, the chunk sums added in order from 0.
double sumsq(const float *x, int64_t k)
{
    double total = 0.0;
    for (int64_t c0 = 0; c0 < k; c0 += kNormChunk) {
        double acc = 0.0;
        for (int64_t kk = c0; kk < std::min(k, c0 + kNormChunk); ++kk) {
            const double d = static_cast<double>(x[kk]);
            acc = dadd(acc, dmul(d, d));
        }
        total = dadd(total, acc);
    }
    return total;
}

struct RowStats {
    float mx = 0.0f;
    int shift = 0;
    double ss = 0.0;
    uint64_t ones = 0;  // I_r: sum of ceil(2^(s + 16) |x|)
    std::vector<uint8_t> mag;
};

RowStats row_stats(const float *x, int64_t k)
{
    RowStats r;
    for (int64_t kk = 0; kk < k; ++kk)
        r.mx = std::max(r.mx, std::fabs(x[kk]));
    r.shift = cert_shift(r.mx);
    r.ss = sumsq(x, k);
    r.mag.resize(k);
    for (int64_t kk = 0; kk < k; ++kk) {
        unsigned fl, ce;
        mag_pair(x[kk], r.shift, fl, ce);
        r.mag[kk] = static_cast<uint8_t>(fl);
        r.ones += ce;
    }
    return r;
}

// The certificate for the whole call: *certified, the largest of the
// elements' smallest N certified at gamma_K - 2u (contract (a)), and the
// return value, the N the call runs: the same at cert_target (kMaxN + 1:
// none).
int certify(const std::vector<RowStats> &ra, const std::vector<RowStats> &rb, int64_t k, int *certified)
{
    constexpr int nc = kMaxN - kMinN + 1;
    const double g = cert_gamma(k), gt = cert_target(k);
    auto powers = [](const RowStats &r) {
        std::vector<double> pw(nc);
        for (int t = 0; t < nc; ++t)
            pw[t] = cert_power(r.mx, r.shift, r.ss, kMinN + t);
        return pw;
    };
    std::vector<std::vector<double>> pa, pb;
    for (const RowStats &r : ra)
        pa.push_back(powers(r));
    for (const RowStats &r : rb)
        pb.push_back(powers(r));
    int ncall = kMinN, run = kMinN;
    for (size_t i = 0; i < ra.size(); ++i)
        for (size_t j = 0; j < rb.size(); ++j) {
            int32_t lp = 0;  // exact: 255^2 k < 2^31
            for (int64_t kk = 0; kk < k; ++kk)
                lp += static_cast<int32_t>(ra[i].mag[kk]) * rb[j].mag[kk];
            ncall = std::max(ncall, cert_raise(ra[i].ones, rb[j].ones, pa[i].data(), pb[j].data(), 1, 1, g, lp, kMinN));
            run = std::max(run, cert_raise(ra[i].ones, rb[j].ones, pa[i].data(), pb[j].data(), 1, 1, gt, lp, kMinN));
        }
    *certified = ncall;
    return run;
}

template <int N>
void run(const Problem &p, const Balanced &x, const std::vector<int> &mu, const std::vector<int> &nu, float *c,
         int64_t ldc)
{
    const int64_t m = p.m, n = p.n, k = p.k;
    // The N residue planes of an operand of `rows` rows of k with exponents e.
    auto planes = [k](const std::vector<float> &x, int64_t rows, const std::vector<int> &e) {
        std::vector<int8_t> r(N * rows * k);
        for (int64_t i = 0; i < rows; ++i)
            for (int64_t kk = 0; kk < k; ++kk) {
                int res[N];
                residues<N>(x[i * k + kk], e[i], res);
                for (int l = 0; l < N; ++l)
                    r[(l * rows + i) * k + kk] = static_cast<int8_t>(res[l]);
            }
        return r;
    };
    const std::vector<int8_t> ra = planes(x.a, m, mu), rb = planes(x.b, n, nu);
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < m; ++i) {
            int r[N];
            for (int l = 0; l < N; ++l) {
                int64_t dot = 0;
                const int8_t *pa = &ra[(l * m + i) * k], *pb = &rb[(l * n + j) * k];
                for (int64_t kk = 0; kk < k; ++kk)
                    dot += static_cast<int64_t>(pa[kk]) * pb[kk];
                r[l] = sym_rt(static_cast<int>(dot % kmod(l)), kmod(l));
            }
            float &cij = c[i + j * ldc];
            cij = crt_element<N>(r, mu[i] + nu[j], p.alpha, p.beta, p.beta != 0.0f ? cij : 0.0f, kGarner);
        }
}

}  // namespace

Result gemm(const Problem &p, float *c, int64_t ldc, int force_n)
{
    Result res;
    if (p.k < 3 || p.k > kCertMaxK || p.alpha == 0.0f)
        return res;  // Shape
    const Balanced x = balance(p);
    if (x.special) {
        res.outcome = Outcome::Special;
        return res;
    }
    std::vector<RowStats> sa, sb;
    for (int64_t i = 0; i < p.m; ++i)
        sa.push_back(row_stats(&x.a[i * p.k], p.k));
    for (int64_t j = 0; j < p.n; ++j)
        sb.push_back(row_stats(&x.b[j * p.k], p.k));
    res.certified = kMaxN + 1;
    const int needed = x.inexact ? kMaxN + 1 : certify(sa, sb, p.k, &res.certified);
    const int n = force_n > 0 ? force_n : needed;
    if (n > kMaxN) {
        res.outcome = Outcome::Uncertified;
        return res;
    }
    for (const RowStats &r : sa)
        res.mu.push_back(mu_value(r.ss, n));
    for (const RowStats &r : sb)
        res.nu.push_back(mu_value(r.ss, n));
    switch (n) {
    case 5: run<5>(p, x, res.mu, res.nu, c, ldc); break;
    case 6: run<6>(p, x, res.mu, res.nu, c, ldc); break;
    case 7: run<7>(p, x, res.mu, res.nu, c, ldc); break;
    case 8: run<8>(p, x, res.mu, res.nu, c, ldc); break;
    case 9: run<9>(p, x, res.mu, res.nu, c, ldc); break;
    case 10: run<10>(p, x, res.mu, res.nu, c, ldc); break;
    case 11: run<11>(p, x, res.mu, res.nu, c, ldc); break;
    default: run<12>(p, x, res.mu, res.nu, c, ldc); break;
    }
    res.outcome = Outcome::Ran;
    res.moduli = n;
    return res;
}

}  // namespace ozaki_model
