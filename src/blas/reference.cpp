#include "blas/reference.hpp"

#include <cstdint>

namespace tgemm::blas {

// Follows BLAS/SRC/sgemm.f statement by statement after its quick return:
// alpha == 0 scales C (zeros for beta == 0, C unread); the N-by-N and
// N-by-T forms scale a column of C and then add alpha*B(l,j) times a
// column of A; the T forms compute each dot product and then apply alpha
// and beta. beta == 0 never reads C.
void reference_sgemm(const GemmParams &p)
{
    const int64_t m = p.m, n = p.n, k = p.k, lda = p.lda, ldb = p.ldb, ldc = p.ldc;
    const float alpha = p.alpha, beta = p.beta;
    const float *A = p.a, *B = p.b;
    float *C = p.c;
    auto a = [&](int64_t i, int64_t l) { return A[i + l * lda]; };
    auto b = [&](int64_t l, int64_t j) { return B[l + j * ldb]; };
    auto c = [&](int64_t i, int64_t j) -> float & { return C[i + j * ldc]; };

    if (alpha == 0.0f) {
        for (int64_t j = 0; j < n; ++j)
            for (int64_t i = 0; i < m; ++i)
                c(i, j) = beta == 0.0f ? 0.0f : beta * c(i, j);
        return;
    }
    if (!p.trans_a) {
        // C := alpha*A*op(B) + beta*C, a column of C at a time.
        for (int64_t j = 0; j < n; ++j) {
            if (beta == 0.0f) {
                for (int64_t i = 0; i < m; ++i)
                    c(i, j) = 0.0f;
            } else if (beta != 1.0f) {
                for (int64_t i = 0; i < m; ++i)
                    c(i, j) = beta * c(i, j);
            }
            for (int64_t l = 0; l < k; ++l) {
                const float temp = alpha * (p.trans_b ? b(j, l) : b(l, j));
                for (int64_t i = 0; i < m; ++i)
                    c(i, j) = c(i, j) + temp * a(i, l);
            }
        }
        return;
    }
    // C := alpha*A**T*op(B) + beta*C, one dot product per element.
    for (int64_t j = 0; j < n; ++j) {
        for (int64_t i = 0; i < m; ++i) {
            float temp = 0.0f;
            for (int64_t l = 0; l < k; ++l)
                temp = temp + a(l, i) * (p.trans_b ? b(j, l) : b(l, j));
            c(i, j) = beta == 0.0f ? alpha * temp : alpha * temp + beta * c(i, j);
        }
    }
}

}  // namespace tgemm::blas
