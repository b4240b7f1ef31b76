// Per-call certificate for contract (a) of the FP32-accurate Ozaki-II mode:
// decides, from the operands alone and in arithmetic a GPU reproduces bit for
// bit, for which N every element's truncation bound is within strict FP32's
// worst-case bound. Derivation and proofs: NOTES.md (f).
//
// Same layouts as ozaki2.hpp (A m x k row-major, B column by column, C
// row-major). A and B are the operands the INT8 products see, i.e. after
// K balancing (balance_k), and mu, nu are the exponents the products use
// (scaling_exponents with the same Params).
//
// The test, per element ij and candidate N (E: NOTES.md (b)):
//   E_ij(N) = 2^-mu_i(N) ||b_j||_1 + 2^-nu_j(N) ||a_i||_1
//          <= (gamma_K - 2u) L_ij,   L_ij <= (|A||B|)_ij,
// with every ingredient an exact integer or an exact power of two:
//   L_ij  = 2^-(s_i+t_j) L'_ij,  L'_ij = sum_k floor(2^s_i |a_ik|) floor(2^t_j |b_kj|)
//          (one unsigned 8-bit GEMM with int32 accumulation),
//   ||a_i||_1 <= 2^-(s_i+d) IA_i,  IA_i = sum_k ceil(2^(s_i+d) |a_ik|)   (int64),
// and the comparison done in double with one explicit margin (NOTES.md (f)).
#pragma once
#include "ozaki2.hpp"

#include <cstdint>
#include <vector>

namespace oz2 {

// What the statistics pass produces for the certificate, per row of A and
// column of B: the floor-scaled magnitudes (the operands of the magnitude
// GEMM) and the integer upper bounds of the 1-norms.
struct MagOperands {
    int bits = 8;                  // Au, Bu in [0, 2^bits - 1]; 8: u8 wgmma, 7: s8,
                                   // 16: two bytes, four u8 GEMMs (see mag_gemm)
    int64_t m = 0, n = 0, k = 0;
    std::vector<int> s, t;         // Au_ik = floor(2^s_i |a_ik|), Bu_kj = floor(2^t_j |b_kj|)
    std::vector<char> zA, zB;      // row i of A / column j of B is all zero
    std::vector<uint16_t> Au, Bu;  // m x k and n x k, contiguous in k
    std::vector<int64_t> IA, IB;   // sum_k ceil(2^(s_i + d) |a_ik|), d = 24 - bits
    int d() const { return 24 - bits; }
};

// s_i = bits - 1 - ilogb(max_k |a_ik|) (so 2^s_i max_k |a_ik| in [2^(bits-1), 2^bits)),
// t_j likewise; all quantities exact, from the float's (mantissa, exponent).
void mag_operands(int64_t m, int64_t n, int64_t k, const float *A, const float *B, int bits,
                  MagOperands &mo);

// L'_ij exactly. bits <= 8: sum_k Au_ik Bu_kj with int32 accumulation in
// K blocks of kblock ((2^bits - 1)^2 kblock < 2^31; 32768 = 256 k-tiles of
// 128 for u8), the blocks summed in int64, as the GPU would. bits = 16: the
// same sum from four u8 GEMMs of the magnitudes' high and low bytes,
// modelled in int64 (on a GPU each is an int32-blocked u8 GEMM).
void mag_gemm(const MagOperands &mo, int64_t kblock, int threads, std::vector<int64_t> &Lp);

// (gamma_K - 2u) in double, u = 2^-24, gamma_K = K u / (1 - K u); 0 when
// no element can be certified: K < 3 (gamma_K - 2u <= 0) or K > 2^22 (the
// margins of NOTES.md (f) are argued for K u <= 1/4).
double cert_gamma(int64_t k);

// The per-element test for one candidate exponent pair (mu_i, nu_j).
// Sound in floating point: true (E_ij <= (gamma_K - 2u) L_ij) is implied
// whenever it returns true (NOTES.md (f)). Zero row / column: true (the
// product is exactly 0 on both paths).
bool cert_pass(const MagOperands &mo, const std::vector<int64_t> &Lp, double g, int64_t i,
               int64_t j, int mu_i, int nu_j);

struct CertParams {
    int nmin = 2, nmax = kMaxModuli;  // candidate N
    int bits = 8;
    int64_t kblock = 32768;
    Scaling scaling = Scaling::FastCS;
    int threads = 2;
};

struct Certificate {
    int nmin = 0, nmax = 0;
    std::vector<uint16_t> pass;    // m x n: bit N set when the element is certified at N
    std::vector<uint8_t> nreq;     // m x n: smallest certified N, nmax + 1 if none; the
                                   // test is monotone in N, so pass(N) == (nreq <= N)
    std::vector<int64_t> nfail;    // index N: elements failing at N (N in [nmin, nmax])
    int ncall = 0;                 // smallest N at which every element passes; nmax + 1 if none
    MagOperands mo;                // kept for diagnostics
    std::vector<int64_t> Lp;
};

// The whole certificate: statistics, one magnitude GEMM, and the epilogue
// test for every candidate N (mu(N), nu(N) from scaling_exponents).
void certify(int64_t m, int64_t n, int64_t k, const float *A, const float *B,
             const CertParams &cp, Certificate &cert);

// Per tile (tm x tn, row-major over tiles), the largest nreq of its
// elements: the one byte per tile a GPU epilogue would write (a max, so
// independent of the reduction order). A tile fails at N iff its byte > N.
std::vector<uint8_t> tile_nreq(const Certificate &cert, int64_t m, int64_t n, int64_t tm, int64_t tn);

// Fallback plan, deterministic from the tile bytes alone: either N for the
// whole call, with the tiles (tm x tn) holding an element not certified at N
// recomputed by the strict kernel, or the strict path for the whole call.
// Cost model in units of one INT8 modulus GEMM of the full size: N for the
// products (+1 for the magnitude GEMM, paid in every case), strict_cost for
// a full strict SGEMM, scaled by the fraction of tiles it recomputes.
struct TilePlan {
    bool all_strict = false;
    int n = 0;                     // moduli for the call (0 when all_strict)
    int64_t tiles = 0, strict_tiles = 0;
    double cost = 0;               // model cost of the plan (all strict: strict_cost)
};
TilePlan plan_tiles(const Certificate &cert, int64_t m, int64_t n, int64_t tm, int64_t tn,
                    double strict_cost);

// Self-test of the integer parts (K-block split against plain int64,
// floor/ceil against long double); returns the number of failures.
int cert_selftest();

}  // namespace oz2
