// The fp32-tc math on the GPU (TGEMM_MATH=fp32-tc, forced onto every size
// by TGEMM_FP32_TC=always, which main sets where the environment does not):
//  - device pointers: C equals the CPU model (tests/ozaki_model.cpp) bit for
//    bit, every transpose, ld padding, alpha/beta, edge tiles, row-major;
//    C's padding untouched, C unread where beta == 0 (poisoned);
//  - where the model declines (phi = 4 uncertified, Inf/NaN, an inexact K
//    balancing), C equals the strict path's bit for bit;
//  - deterministic: the same call twice gives the same bits;
//  - an all-zero op(A): the smallest N (5), the model's bits;
//  - host operands (the pipeline), sgemm_ and cblas_sgemm in the mode: the
//    model's bits too.
// GPU cases skip where no GPU is visible (fail under TGEMM_TEST_REQUIRE_GPU=1).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

extern "C" {
#include "common.h"
}

#include "ozaki_inputs.hpp"
#include "ozaki_model.hpp"

extern "C" {
void sgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k, const float *alpha,
            const float *a, const int *lda, const float *b, const int *ldb, const float *beta, float *c,
            const int *ldc);
void cblas_sgemm(int layout, int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda,
                 const float *b, int ldb, float beta, float *c, int ldc);
}

using ozaki_inputs::Matrix;

namespace {

enum class Path { Device, DeviceRowMajor, Host, Sgemm, Cblas };

struct Spec {
    const char *name;
    int64_t m, n, k;
    bool ta, tb;
    int64_t pad;          // added to every leading dimension
    float alpha, beta;
    const char *input;    // an ozaki_inputs case name
    Path path;
    bool zero_a = false;  // op(A) all zeros: every element certified at the smallest N
    bool declines = false;  // the inputs are meant to be declined (strict runs); else the mode runs
};

const ozaki_inputs::Case &input_case(const char *name)
{
    for (const ozaki_inputs::Case &c : ozaki_inputs::cases())
        if (std::strcmp(c.name, name) == 0)
            return c;
    fail_msg("no input case %s", name);
    return ozaki_inputs::cases()[0];
}

struct Operands {
    Matrix A, B, C0;
};

Operands make(const Spec &s, uint64_t seed)
{
    Operands o;
    const int64_t ar = s.ta ? s.k : s.m, ac = s.ta ? s.m : s.k;
    const int64_t br = s.tb ? s.n : s.k, bc = s.tb ? s.k : s.n;
    o.A = ozaki_inputs::make_matrix(ar, ac, ar + s.pad, poison_pad());
    o.B = ozaki_inputs::make_matrix(br, bc, br + s.pad, poison_pad());
    ozaki_inputs::fill(input_case(s.input), s.ta, s.tb, s.m, s.n, s.k, seed, o.A, o.B);
    if (s.zero_a)
        for (int64_t c = 0; c < ac; ++c)
            for (int64_t r = 0; r < ar; ++r)
                o.A.at(r, c) = 0.0f;
    o.C0 = ozaki_inputs::make_matrix(s.m, s.n, s.m + s.pad, poison_pad());
    rng_t r = {seed ^ 0x9e3779b97f4a7c15ull};
    for (int64_t j = 0; j < s.n; ++j)
        for (int64_t i = 0; i < s.m; ++i)
            o.C0.at(i, j) = s.beta != 0.0f ? rng_uniform(&r) : poison_c();
    return o;
}

float *to_device(const std::vector<float> &h)
{
    void *v = nullptr;
    CK(cudaMalloc(&v, h.size() * sizeof(float)));
    float *d = static_cast<float *>(v);
    CK(cudaMemcpy(d, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
    return d;
}

// The call on `path`; returns C (ldc x n, padding included).
std::vector<float> run(const Spec &s, const Operands &o)
{
    std::vector<float> c = o.C0.v;
    const tgemm_operation ta = s.ta ? TGEMM_OP_T : TGEMM_OP_N, tb = s.tb ? TGEMM_OP_T : TGEMM_OP_N;
    const int m = int(s.m), n = int(s.n), k = int(s.k), lda = int(o.A.ld), ldb = int(o.B.ld), ldc = int(o.C0.ld);
    switch (s.path) {
    case Path::Device:
    case Path::DeviceRowMajor: {
        float *dA = to_device(o.A.v), *dB = to_device(o.B.v), *dC = to_device(c);
        tgemm_status st;
        if (s.path == Path::Device) {
            st = tgemm_sgemm_ex(TGEMM_LAYOUT_COL_MAJOR, ta, tb, m, n, k, s.alpha, dA, lda, dB, ldb, s.beta, dC, ldc,
                                nullptr);
        } else {
            // Row-major C^T = op(B)^T op(A)^T: the same storage, A and B swapped.
            st = tgemm_sgemm_ex(TGEMM_LAYOUT_ROW_MAJOR, tb, ta, n, m, k, s.alpha, dB, ldb, dA, lda, s.beta, dC, ldc,
                                nullptr);
        }
        if (st != TGEMM_SUCCESS)
            fail_msg("%s: %s (%s)", s.name, tgemm_status_string(st), tgemm_last_error_detail());
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(c.data(), dC, c.size() * sizeof(float), cudaMemcpyDeviceToHost));
        CK(cudaFree(dA));
        CK(cudaFree(dB));
        CK(cudaFree(dC));
        break;
    }
    case Path::Host: {
        const tgemm_status st =
            tgemm_sgemm(ta, tb, m, n, k, s.alpha, o.A.v.data(), lda, o.B.v.data(), ldb, s.beta, c.data(), ldc);
        if (st != TGEMM_SUCCESS)
            fail_msg("%s: %s (%s)", s.name, tgemm_status_string(st), tgemm_last_error_detail());
        break;
    }
    case Path::Sgemm: {
        const char cta = s.ta ? 'T' : 'N', ctb = s.tb ? 'T' : 'N';
        sgemm_(&cta, &ctb, &m, &n, &k, &s.alpha, o.A.v.data(), &lda, o.B.v.data(), &ldb, &s.beta, c.data(), &ldc);
        break;
    }
    case Path::Cblas:
        cblas_sgemm(102, s.ta ? 112 : 111, s.tb ? 112 : 111, m, n, k, s.alpha, o.A.v.data(), lda, o.B.v.data(), ldb,
                    s.beta, c.data(), ldc);
        break;
    }
    return c;
}

void expect_bits(const Spec &s, const char *what, const std::vector<float> &got, const std::vector<float> &want,
                 int64_t ldc, uint64_t seed)
{
    size_t bad = 0;
    int64_t first_i = -1, first_j = -1;
    for (int64_t j = 0; j < s.n; ++j)
        for (int64_t i = 0; i < ldc; ++i)
            if (!same_bits(got[i + j * ldc], want[i + j * ldc]) && bad++ == 0) {
                first_i = i;
                first_j = j;
            }
    if (bad != 0) {
        const size_t e = size_t(first_i + first_j * ldc);
        fail_msg("%s: %zu elements differ from %s (first (%lld, %lld)%s: %a, want %a); seed 0x%016llx", s.name, bad,
                 what, (long long)first_i, (long long)first_j, first_i >= s.m ? " in the padding" : "",
                 double(got[e]), double(want[e]), (unsigned long long)seed);
    }
}

// The spec's call against the model (or, where the model declines, against
// the strict path), and against itself run again.
void check(const Spec &s)
{
    REQUIRE_GPU();
    const uint64_t seed = test_seed_for(std::hash<std::string>()(s.name));
    const Operands o = make(s, seed);
    ozaki_model::Problem p;
    p.trans_a = s.ta;
    p.trans_b = s.tb;
    p.m = s.m;
    p.n = s.n;
    p.k = s.k;
    p.alpha = s.alpha;
    p.beta = s.beta;
    p.a = o.A.v.data();
    p.lda = o.A.ld;
    p.b = o.B.v.data();
    p.ldb = o.B.ld;
    std::vector<float> want = o.C0.v;
    const ozaki_model::Result r = ozaki_model::gemm(p, want.data(), o.C0.ld);
    // Each spec is meant to run in the mode or to be declined: a model that
    // declined what it should run would leave only strict against strict.
    if ((r.outcome == ozaki_model::Outcome::Ran) == s.declines)
        fail_msg("%s: the model %s; the spec means it to %s", s.name,
                 r.outcome == ozaki_model::Outcome::Ran ? "runs the mode" : "declines",
                 s.declines ? "decline" : "run the mode");
    assert_int_equal(tgemm_set_math(TGEMM_MATH_FP32_TC), TGEMM_SUCCESS);
    const std::vector<float> got = run(s, o);
    if (r.outcome == ozaki_model::Outcome::Ran) {
        std::printf("  %s: N = %d\n", s.name, r.moduli);
        if (s.zero_a)
            assert_int_equal(r.moduli, 5);  // the kernels' smallest N, reached only so
        expect_bits(s, "the CPU model", got, want, o.C0.ld, seed);
    } else {
        std::printf("  %s: the model declines (%d): strict\n", s.name, int(r.outcome));
        assert_int_equal(tgemm_set_math(TGEMM_MATH_STRICT), TGEMM_SUCCESS);
        const std::vector<float> strict = run(s, o);
        assert_int_equal(tgemm_set_math(TGEMM_MATH_FP32_TC), TGEMM_SUCCESS);
        expect_bits(s, "the strict path", got, strict, o.C0.ld, seed);
        // And against FP64 (not only tgemm against itself), where C is
        // column-major as stored here.
        if (s.path != Path::DeviceRowMajor) {
            const shape_t sa = {o.A.rows, o.A.cols, o.A.ld}, sb = {o.B.rows, o.B.cols, o.B.ld},
                          sc = {s.m, s.n, o.C0.ld};
            double *fp64 = fp64_reference(true, s.ta, s.tb, s.m, s.n, s.k, s.alpha, o.A.v.data(), sa, o.B.v.data(),
                                          sb, s.beta, o.C0.v.data(), sc);
            double *bound = error_bound(true, s.ta, s.tb, s.m, s.n, s.k, s.alpha, o.A.v.data(), sa, o.B.v.data(), sb,
                                        s.beta, o.C0.v.data(), sc);
            check_c_fp64(s.name, got.data(), fp64, bound, sc, s.k, seed);
            free(fp64);
            free(bound);
        }
    }
    expect_bits(s, "the same call's first run", run(s, o), got, o.C0.ld, seed);
}

const Spec kSpecs[] = {
    {"nn_256x256x256_phi0.5", 256, 256, 256, false, false, 0, 1.0f, 0.0f, "phi0.5", Path::Device},
    {"nn_512x384x1000_ld_alpha_beta", 512, 384, 1000, false, false, 3, -1.2345678e-3f, 3.3333333f, "phi0.5",
     Path::Device},
    {"tt_200x136x300_edges_ld", 200, 136, 300, true, true, 5, 1.0f, 0.0f, "phi1", Path::Device},
    {"tn_130x65x259_ld4", 130, 65, 259, true, false, 3, 2.5f, -1.0f, "phi0.5", Path::Device},
    {"nt_131x67x300_ld4", 131, 67, 300, false, true, 1, 1.0f, 0.0f, "phi1", Path::Device},
    {"nn_257x129x33_edges", 257, 129, 33, false, false, 0, 1.0f, 1.0f, "phi0", Path::Device},
    {"tt_1x300x77", 1, 300, 77, true, true, 0, 1.0f, 0.0f, "phi0.5", Path::Device},
    {"nt_300x1x513", 300, 1, 513, false, true, 2, 1.0f, 0.0f, "phi0.5", Path::Device},
    {"nn_256x192x320_subnormal", 256, 192, 320, false, false, 0, 1.0f, 0.0f, "subnormal", Path::Device},
    {"nn_256x256x256_k_scaled", 256, 256, 256, false, false, 0, 1.0f, 0.0f, "k-scaled-2^[-20,20]", Path::Device},
    {"tn_160x96x200_rows_cols", 160, 96, 200, true, false, 1, 1.0f, 0.5f, "rows-cols-2^[-40,40]", Path::Device},
    {"nn_128x128x128_zeros", 128, 128, 128, false, false, 0, 1.0f, 0.0f, "zeros", Path::Device},
    {"nn_128x96x160_near_max", 128, 96, 160, false, false, 0, 1.0f, 0.0f, "near-max", Path::Device},
    {"nn_96x64x200_huge_tiny", 96, 64, 200, false, false, 0, -3.0f, 0.0f, "huge*tiny", Path::Device},
    {"nn_384x96x1024_phi2", 384, 96, 1024, false, false, 0, 1.0f, 0.0f, "phi2", Path::Device},
    {"nn_256x256x256_phi4_strict", 256, 256, 256, false, false, 0, 1.0f, 0.0f, "phi4", Path::Device, false, true},
    // More work items than an H100 has SMs (the persistent GEMM's blocks take
    // several, its ring of stages running on across them), and more than 16
    // row blocks (its groups of rows, the last one partial).
    {"nn_1024x1024x256_persistent", 1024, 1024, 256, false, false, 0, 1.0f, 0.0f, "phi0.5", Path::Device},
    {"tn_2176x512x64_row_groups", 2176, 512, 64, true, false, 0, 1.0f, 0.0f, "phi1", Path::Device},
    // Declined with two work items or more per block of the certificate's
    // GEMM (on an H100's 132 SMs), the call must still decline and run
    // strict: with items of one k-block, where the GEMM runs every item;
    // with items of five k-blocks and three items a block, where it stops
    // handing out items once an element is certified by no N (densely so at
    // phi 4): the producer's check before the third item comes after the
    // first item's fold (with four k-blocks an item, only after the
    // second's).
    {"nn_8448x1024x40_phi4_settled", 8448, 1024, 40, false, false, 0, 1.0f, 0.0f, "phi4", Path::Device, false, true},
    {"tn_8448x1024x40_phi2_settled", 8448, 1024, 40, true, false, 2, 1.0f, 0.5f, "phi2", Path::Device, false, true},
    {"nn_8448x1536x640_phi4_settled", 8448, 1536, 640, false, false, 0, 1.0f, 0.0f, "phi4", Path::Device, false, true},
    {"row_major_nt_150x70x90", 150, 70, 90, false, true, 2, 1.0f, 2.0f, "phi0.5", Path::DeviceRowMajor},
    {"host_nn_300x200x500", 300, 200, 500, false, false, 1, 1.0f, 0.0f, "phi0.5", Path::Host},
    {"host_tn_200x150x700_beta", 200, 150, 700, true, false, 0, 0.75f, -2.0f, "phi1", Path::Host},
    {"sgemm_nt_180x120x400", 180, 120, 400, false, true, 2, 1.0f, 0.0f, "phi0.5", Path::Sgemm},
    {"cblas_tt_120x180x300", 120, 180, 300, true, true, 0, 1.5f, 1.0f, "phi1", Path::Cblas},
    {"nn_200x150x300_zero_a_beta", 200, 150, 300, false, false, 1, 1.0f, 0.5f, "phi0.5", Path::Device, true},
};

void test_spec(void **state)
{
    check(*static_cast<const Spec *>(*state));
}

// Inf or NaN in op(A): the strict path's result, bit for bit.
void test_special_values(void **)
{
    REQUIRE_GPU();
    const Spec s = {"nn_64x64x64_nan_inf", 64, 64, 64, false, false, 0, 1.0f, 0.0f, "phi0.5", Path::Device};
    Operands o = make(s, test_seed_for(77));
    o.A.at(5, 7) = NAN;
    o.A.at(9, 3) = INFINITY;
    assert_int_equal(tgemm_set_math(TGEMM_MATH_FP32_TC), TGEMM_SUCCESS);
    const std::vector<float> got = run(s, o);
    assert_int_equal(tgemm_set_math(TGEMM_MATH_STRICT), TGEMM_SUCCESS);
    const std::vector<float> strict = run(s, o);
    expect_bits(s, "the strict path", got, strict, o.C0.ld, 77);
}

}  // namespace

int main()
{
    // The mode on every size it can take (test programs' small problems), and
    // the BLAS entry points on the GPU whatever their size.
    setenv("TGEMM_MATH", "fp32-tc", 0);
    setenv("TGEMM_FP32_TC", "always", 0);
    setenv("TGEMM_OFFLOAD", "gpu", 0);
    // TGEMM_TEST_FILTER: the cases whose names match (CMocka's pattern), as
    // for test_gemm.
    const char *filter = getenv("TGEMM_TEST_FILTER");
    if (filter && *filter)
        cmocka_set_test_filter(filter);
    std::vector<CMUnitTest> tests;
    for (const Spec &s : kSpecs)
        tests.push_back(CMUnitTest{s.name, test_spec, nullptr, nullptr, const_cast<Spec *>(&s)});
    tests.push_back(CMUnitTest{"special_values", test_special_values, nullptr, nullptr, nullptr});
    return _cmocka_run_group_tests("tgemm_fp32_tc", tests.data(), tests.size(), nullptr, nullptr);
}
