// The CPU model of the fp32-tc math: the library's pipeline (K balancing,
// scaling, the certificate, residues, one exact integer GEMM per modulus,
// Garner's CRT and the alpha/beta epilogue) on the host, with the element
// functions the kernels use (src/kernels/ozaki/element.hpp) and the same
// summation orders, so that a GPU result in this math equals the model's
// bit for bit. Column-major operands as tgemm_sgemm takes them.
#pragma once

#include <cstdint>
#include <vector>

namespace ozaki_model {

struct Problem {
    bool trans_a = false, trans_b = false;
    int64_t m = 0, n = 0, k = 0;
    float alpha = 1.0f, beta = 0.0f;
    const float *a = nullptr;
    int64_t lda = 0;
    const float *b = nullptr;
    int64_t ldb = 0;
};

enum class Outcome {
    Ran,          // C written at `moduli`
    Special,      // an operand holds Inf or NaN: the strict path's
    Shape,        // k outside [3, 32768] (alpha == 0 and k == 0 are the strict path's too)
    Uncertified,  // no N up to the maximum is certified (or K balancing was inexact)
};

struct Result {
    Outcome outcome = Outcome::Shape;
    int moduli = 0;               // N (Ran), else 0
    int certified = 0;            // the largest N certified at gamma_K over the call's elements (kMaxN + 1 if none);
                                  // the call runs the same at element.hpp's tighter cert_target
    std::vector<int> mu, nu;      // the exponents at `moduli`
};

// C := alpha op(A) op(B) + beta C in the fp32-tc math where the certificate
// allows it (C untouched otherwise); C is ldc x n, only its m x n part is
// read (where beta != 0) and written. `force_n` > 0 runs that N whatever
// the certificate says (for the soundness checks).
Result gemm(const Problem &p, float *c, int64_t ldc, int force_n = 0);

}  // namespace ozaki_model
