// CPU model of Ozaki scheme II (CRT form) on INT8 products, in the exact
// integer arithmetic a GPU implementation would use. Our own code; the method
// is from Ozaki, Uchino, Imamura (arXiv 2504.08009) and Uchino, Ozaki,
// Imamura (arXiv 2508.03984, the GEMMul8 library). See NOTES.md.
//
// Layouts (chosen so both operands are contiguous in k, like a TN INT8 GEMM):
//   A: m x k row-major, a_ik = A[i*k + kk]
//   B: k x n stored column by column, b_kj = B[j*k + kk]
//   C: m x n row-major, c_ij = C[i*n + j]
#pragma once
#include <cstdint>
#include <vector>

namespace oz2 {

enum class Scaling {
    Fast,      // per row of A / column of B from max |a_ik|, |b_kj| and K
    FastCS,    // per row / column from the 2-norm (Cauchy-Schwarz)
    Accurate,  // per row / column from a 6-bit INT8 upper bound of |A||B|
};
const char *scaling_name(Scaling s);

constexpr int kMaxModuli = 14;

// fast-cs sums of squares are taken in this fixed order (so that a GPU can
// split a row over many threads and still reproduce the model bit for bit):
// chunks of kNormChunk consecutive k, each summed in double sequentially in
// increasing k starting from 0, then the chunk sums added in increasing chunk
// order starting from 0.
constexpr int64_t kNormChunk = 256;
// Pairwise coprime, each <= 256 so that a residue fits int8 in the
// symmetric range [-128, 127] (GEMMul8's INT8 list starts the same way).
extern const int kModuli[kMaxModuli];

struct Params {
    int nmod = 8;                  // number of moduli N (2..kMaxModuli)
    Scaling scaling = Scaling::Fast;
    int64_t kblock = 131071;       // int32 accumulation block along K (<= 131071)
    int threads = 2;
};

// Per-call diagnostics of the model (filled by gemm()).
struct Info {
    double log2_P = 0;             // log2 of the product of the N moduli
    double log2_T = 0;             // log2 of P/2 - 1, the CRT's safe magnitude
    int int8_gemms = 0;            // INT8 GEMMs issued (N, +1 for Accurate)
    std::vector<int> mu, nu;       // exponents: A' = trunc(2^mu_i a_i.), B' = trunc(2^nu_j b_.j)
};

// C := alpha * A*B + beta * C, the scheme as a GPU would run it.
void gemm(int64_t m, int64_t n, int64_t k, float alpha, const float *A, const float *B,
          float beta, float *C, const Params &p, Info *info = nullptr);

// Exponents only (the scaling step), for the bound analysis.
void scaling_exponents(int64_t m, int64_t n, int64_t k, const float *A, const float *B,
                       const Params &p, std::vector<int> &mu, std::vector<int> &nu);

// K balancing (our addition, not in GEMMul8): A := A D, B := D^-1 B with
// D = diag(2^e_k), e_k = floor((ilogb max_j |b_kj| - ilogb max_i |a_ik|) / 2).
// Exact (powers of two; the GPU would add e_k to the exponent inside the
// conversion, so no float over/underflow), products a_ik b_kj unchanged,
// and it removes exponent spread along k that row/column scaling cannot.
void balance_k(int64_t m, int64_t n, int64_t k, const float *A, const float *B,
               std::vector<float> &Ab, std::vector<float> &Bb);

// sum_t x[t]^2 in double in kNormChunk's order: fast-cs's squared 2-norm.
double sumsq(const float *x, int64_t k);

// log2(P/2 - 1) for the first N moduli.
double log2_T(int nmod);

// Self-test: Garner + residue path against exact int128 products on small
// random integer-valued data; returns the number of mismatches.
int selftest();

}  // namespace oz2
