// The fp32-tc math's INT8 GEMMs on the Hopper tensor cores (wgmma, TMA,
// warp specialization): one per modulus (ResidueEpi), and the certificate's
// u8 magnitude GEMM (CertEpi). sm_90a only: the kernel's body is compiled
// for that target alone (OZ_WGMMA); prepare_ozaki keeps every other device
// off it.
//
// Contract: Ra (N planes of Mp x Kp) and Rb (N planes of Np x Kp), int8,
// K-contiguous, zero padded; Mp a multiple of 128, Np of 256, Kp of 128, the
// planes 16-byte aligned. Writes Rc[l][j*Mp + i] = sym_{p_l}(sum_k Ra[l][i][k]
// Rb[l][j][k]) for every padded i, j, exactly (the int32 sums are reduced to
// their residue before they can overflow; the residue does not depend on
// where). Work items: (modulus, 128-row block, 256-column block), N * Mp/128 *
// Np/256 of them, at most 2^31.
//
// Block: 384 threads. Warpgroup 0 is the producer (one thread issues the
// tensor copies of a 128x128 tile of Ra and a 256x128 tile of Rb per stage,
// 128-byte swizzle, into a ring of 4 stages of 48 KB); warpgroups 1 and 2
// each multiply 64 rows by the 256 columns with
// wgmma.m64n256k32.s32.s8.s8 (both operands K-major from shared memory,
// 128 int32 accumulators per thread), one stage released per k-block as soon
// as the next k-block's multiplies are issued. The epilogue reduces each
// accumulator to its symmetric residue (compile-time modulus), stages the
// 128x256 int8 tile column-major in its own shared memory and writes it with
// 16-byte stores; the magnitude GEMM's epilogue (CertEpi) stores no tile:
// it folds its elements into the call's N, result[0] = max(result[0], the
// largest smallest-certified N of its elements), and once the call is known
// to decline (an element certified by no N, or result[1]'s flags from the
// statistics) its blocks take no further work items where an item has
// STAGES k-blocks or more: the outcome is then settled, whatever the rest
// would find. Persistent blocks, one per SM (tile_of gives the order).
#include "kernels/ozaki/passes.hpp"
#include "kernels/tensor_map.hpp"
#include "kernels/tma.cuh"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <climits>

// The kernel's body: sm_90a's wgmma and setmaxnreg exist nowhere else.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define OZ_WGMMA 1
#endif
// Other targets compile the epilogues without the body that calls them.
#pragma nv_diag_suppress 177

namespace tgemm {
namespace ozaki {
namespace {

using namespace tgemm::kernels::tma;

constexpr int BM = 128, BN = 256, BK = 128, STAGES = 4, THREADS = 384;
constexpr int A_BYTES = BM * BK, B_BYTES = BN * BK, STAGE_BYTES = A_BYTES + B_BYTES;
constexpr int TILE_BYTES = BM * BN;  // the int8 output tile
// + barriers, the stop word (16 bytes), alignment slack
constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + TILE_BYTES + 2 * STAGES * 8 + 16 + 1024;
// After a reduction |acc| <= 128; a k-block adds at most 128 * 128^2, so 1023
// k-blocks keep |acc| <= 1023 * 2^21 + 128 < 2^31.
constexpr int KBLOCKS_PER_REDUCTION = 1023;
static_assert(BM == kGemmBM && BN == kGemmBN && BK == kGemmBK, "the padded sizes are the tile's multiples");

// Device helpers: seen by the host pass (never called there) and by the sm_90a pass.
#if !defined(__CUDA_ARCH__) || defined(OZ_WGMMA)
// A K-major operand tile of rows of 128 bytes copied with the 128-byte
// swizzle (1024-byte aligned 8-row groups): start address, leading offset
// unused (1), stride between 8-row groups 1024 bytes, swizzle mode 1.
__device__ __forceinline__ uint64_t desc_sw128(const void *p)
{
    const uint64_t a = smem_addr(p);
    return ((a & 0x3FFFF) >> 4) | (uint64_t(1) << 16) | (uint64_t(1024 >> 4) << 32) | (uint64_t(1) << 62);
}

__device__ __forceinline__ void copy_box3(void *dst, const CUtensorMap *map, int c0, int c1, int c2, uint64_t *bar)
{
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
        ::"r"(smem_addr(dst)), "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(smem_addr(bar))
        : "memory");
}

__device__ __forceinline__ void fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }

// Pins the accumulators at this point of the program: the compiler may not
// move their reads or writes across it (the asynchronous multiplies own them
// between their issue and the wait).
__device__ __forceinline__ void pin(int (&d)[128])
{
#pragma unroll
    for (int c = 0; c < 128; ++c) asm volatile("" : "+r"(d[c])::"memory");
}
__device__ __forceinline__ void commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int n>
__device__ __forceinline__ void wait_group() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(n) : "memory"); }

// The 128 accumulator operands of one m64n256 wgmma, as asm text and as
// operands.
#define WG_ACC_TEXT \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15," \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31," \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47," \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63," \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79," \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95," \
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111," \
    "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define WG_ACC_OPERANDS \
    "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]), \
    "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]), \
    "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]), \
    "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31]), \
    "+r"(d[32]), "+r"(d[33]), "+r"(d[34]), "+r"(d[35]), "+r"(d[36]), "+r"(d[37]), "+r"(d[38]), "+r"(d[39]), \
    "+r"(d[40]), "+r"(d[41]), "+r"(d[42]), "+r"(d[43]), "+r"(d[44]), "+r"(d[45]), "+r"(d[46]), "+r"(d[47]), \
    "+r"(d[48]), "+r"(d[49]), "+r"(d[50]), "+r"(d[51]), "+r"(d[52]), "+r"(d[53]), "+r"(d[54]), "+r"(d[55]), \
    "+r"(d[56]), "+r"(d[57]), "+r"(d[58]), "+r"(d[59]), "+r"(d[60]), "+r"(d[61]), "+r"(d[62]), "+r"(d[63]), \
    "+r"(d[64]), "+r"(d[65]), "+r"(d[66]), "+r"(d[67]), "+r"(d[68]), "+r"(d[69]), "+r"(d[70]), "+r"(d[71]), \
    "+r"(d[72]), "+r"(d[73]), "+r"(d[74]), "+r"(d[75]), "+r"(d[76]), "+r"(d[77]), "+r"(d[78]), "+r"(d[79]), \
    "+r"(d[80]), "+r"(d[81]), "+r"(d[82]), "+r"(d[83]), "+r"(d[84]), "+r"(d[85]), "+r"(d[86]), "+r"(d[87]), \
    "+r"(d[88]), "+r"(d[89]), "+r"(d[90]), "+r"(d[91]), "+r"(d[92]), "+r"(d[93]), "+r"(d[94]), "+r"(d[95]), \
    "+r"(d[96]), "+r"(d[97]), "+r"(d[98]), "+r"(d[99]), "+r"(d[100]), "+r"(d[101]), "+r"(d[102]), "+r"(d[103]), \
    "+r"(d[104]), "+r"(d[105]), "+r"(d[106]), "+r"(d[107]), "+r"(d[108]), "+r"(d[109]), "+r"(d[110]), "+r"(d[111]), \
    "+r"(d[112]), "+r"(d[113]), "+r"(d[114]), "+r"(d[115]), "+r"(d[116]), "+r"(d[117]), "+r"(d[118]), "+r"(d[119]), \
    "+r"(d[120]), "+r"(d[121]), "+r"(d[122]), "+r"(d[123]), "+r"(d[124]), "+r"(d[125]), "+r"(d[126]), "+r"(d[127])
#define WG_MMA(TYPE)                                                                              \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"                                   \
                 "wgmma.mma_async.sync.aligned.m64n256k32.s32." TYPE "." TYPE " {" WG_ACC_TEXT \
                 "}, %128, %129, p;\n}\n"                                                        \
                 : WG_ACC_OPERANDS                                                                \
                 : "l"(da), "l"(db), "r"(1))

// d += A B^T over 32 values of K: A 64 rows, B 256 rows, both K-major;
// signed bytes (residues) or unsigned (the certificate's magnitudes).
template <bool U8>
__device__ __forceinline__ void mma(int (&d)[128], uint64_t da, uint64_t db)
{
    if constexpr (U8)
        WG_MMA("u8");
    else
        WG_MMA("s8");
}

__device__ __forceinline__ void consumers_sync() { asm volatile("bar.sync 1, 256;\n" ::: "memory"); }
#endif

// Accumulator element c (0..127) of thread t of a warpgroup: row
// 16*(t/32) + (t%32)/4 + 8*((c/2)%2), column 8*(c/4) + 2*(t%4) + c%2.
template <int Q>
__device__ __forceinline__ void stage_residues(const int (&d)[128], unsigned char *tile, int row0, int lane)
{
    const int g = lane >> 2, q = lane & 3;
#pragma unroll
    for (int c = 0; c < 128; ++c) {
        const int row = row0 + g + ((c >> 1) & 1) * 8;
        const int col = (c >> 2) * 8 + 2 * q + (c & 1);
        tile[col * BM + row] = static_cast<unsigned char>(static_cast<int8_t>(symq<Q>(d[c])));
    }
}

// The residue GEMMs' epilogue: the accumulators reduced to their symmetric
// residue (kKBlocks: where the int32 sums must be reduced on the way).
struct ResidueEpi {
    static constexpr bool kU8 = false;
    static constexpr bool kStores = true;
    static constexpr bool kSettles = false;  // every work item is written
    static constexpr int kKBlocks = KBLOCKS_PER_REDUCTION;
    __device__ __forceinline__ void reduce(int (&d)[128], int l) const
    {
        const int q = kmod(l);
#pragma unroll
        for (int c = 0; c < 128; ++c) d[c] = sym_rt(d[c], q);
    }
    __device__ __forceinline__ void stage(const int (&d)[128], unsigned char *tile, int row0, int lane, int l, int,
                                          int) const
    {
        switch (l) {
        case 0: stage_residues<kmod(0)>(d, tile, row0, lane); break;
        case 1: stage_residues<kmod(1)>(d, tile, row0, lane); break;
        case 2: stage_residues<kmod(2)>(d, tile, row0, lane); break;
        case 3: stage_residues<kmod(3)>(d, tile, row0, lane); break;
        case 4: stage_residues<kmod(4)>(d, tile, row0, lane); break;
        case 5: stage_residues<kmod(5)>(d, tile, row0, lane); break;
        case 6: stage_residues<kmod(6)>(d, tile, row0, lane); break;
        case 7: stage_residues<kmod(7)>(d, tile, row0, lane); break;
        case 8: stage_residues<kmod(8)>(d, tile, row0, lane); break;
        case 9: stage_residues<kmod(9)>(d, tile, row0, lane); break;
        case 10: stage_residues<kmod(10)>(d, tile, row0, lane); break;
        case 11: stage_residues<kmod(11)>(d, tile, row0, lane); break;
        case 12: stage_residues<kmod(12)>(d, tile, row0, lane); break;
        default: stage_residues<kmod(13)>(d, tile, row0, lane); break;
        }
    }
};

// The magnitude GEMM's epilogue (NOTES.md (f), (h)): nothing is stored.
// Each consumer thread keeps, over its elements of all its block's work
// items (those it runs, where the GEMM stops early), the running maximum of
// their smallest candidate N certified at g (kMinN for a zero row or
// column, kMaxN + 1 where none), and puts it into result with one
// atomicMax per warp at the end: the call's N, whatever order the elements
// come in. Each element is tested at the running value
// (element.hpp's cert_pass, a zero row or column passing; the 128 tests of
// an item are independent of each other and usually all pass); an element that fails is queued, and
// the queue is searched upwards after the item (cert_raise: the test only
// gets easier as n grows), the largest it needs becoming the value. The
// test is short straight-line code so that the epilogue stays small: the
// rare search runs from one copy, not one per element. g > 0 (the host
// launches the certificate only for K in [3, kCertMaxK]). K <= 32768, so
// 255^2 K < 2^31 and the int32 sums are never reduced.
struct CertEpi {
    static constexpr bool kU8 = true;
    static constexpr bool kStores = false;
    static constexpr bool kSettles = true;
    static constexpr int kKBlocks = 1 << 30;
    const unsigned long long *IA, *IB;
    const double *pwA, *pwB;  // [N - kMinN][Mp], [N - kMinN][Np]
    int64_t Mp, Np;
    double g;
    int *result;

    __device__ __forceinline__ void reduce(int (&)[128], int) const {}
    // Accumulator element c = 4 a + 2 h + b of the thread is at row r + 8 h,
    // column 8 a + 2 q + b of the tile at (m0, n0): taken column by column,
    // so that a column's loads serve its two elements and then die.
    __device__ __forceinline__ void fold(const int (&d)[128], int row0, int lane, int m0, int n0, int &nrun) const
    {
        if (nrun > kMaxN)
            return;  // nothing certifies; it cannot rise further
        const int64_t r = m0 + row0 + (lane >> 2), t = nrun - kMinN;
        const int q = lane & 3;
        const unsigned long long ia0 = IA[r], ia1 = IA[r + 8];
        const bool rz[2] = {ia0 == 0, ia1 == 0};
        const double a[2] = {static_cast<double>(ia0), static_cast<double>(ia1)};
        const double pr[2] = {pwA[t * Mp + r], pwA[t * Mp + r + 8]};
        unsigned long long failed[128];  // (c, lp) of the elements that fail at nrun
        int nf = 0;
#pragma unroll
        for (int j = 0; j < 32; ++j)
#pragma unroll
            for (int b = 0; b < 2; ++b) {
                const int64_t col = n0 + 8 * j + 2 * q + b;
                const unsigned long long ib = IB[col];
                const double bd = static_cast<double>(ib), pc = pwB[t * Np + col];
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const int c = 4 * j + 2 * h + b;
                    const bool ok = rz[h] || ib == 0 || cert_pass(a[h], bd, pr[h], pc, g, double(d[c]));
                    if (!ok)
                        failed[nf++] = (static_cast<unsigned long long>(c) << 32) | static_cast<unsigned>(d[c]);
                }
            }
        int need = nrun;
        for (int i = 0; i < nf; ++i) {
            const int c = static_cast<int>(failed[i] >> 32), lp = static_cast<int>(failed[i] & 0xffffffffu);
            const int h = (c >> 1) & 1;
            const int64_t col = n0 + 8 * (c >> 2) + 2 * q + (c & 1);
            need = max(need, cert_raise(IA[r + 8 * h], IB[col], pwA + r + 8 * h, pwB + col, Mp, Np, g, lp, nrun + 1));
        }
        if (need > kMaxN)
            atomicMax(result, need);  // now, not at flush: settled() for every block
        nrun = need;
    }
    // Whether the call declines whatever the remaining items hold: an
    // element certified by no N (published by fold as soon as it is found),
    // or Inf/NaN or an inexact balance flagged by the statistics. Read by
    // the producer before each item; other blocks' atomics reach it late or
    // early, which changes only how much work is skipped, never the result.
    __device__ __forceinline__ bool settled() const
    {
        const volatile int *r = result;
        return r[0] > kMaxN || r[1] != 0;
    }
    __device__ __forceinline__ void flush(int nrun) const
    {
        const int mx = __reduce_max_sync(0xffffffffu, nrun);
        if ((threadIdx.x & 31) == 0)
            atomicMax(result, mx);
    }
};

// Work item w (of N * tiles) -> modulus l and the tile's first row and
// column. Moduli outermost; inside a modulus, groups of GROUP_ROWS row blocks
// are walked column by column, so that the blocks running at once share few
// row and column panels and those stay in L2.
constexpr int GROUP_ROWS = 16;
__device__ __forceinline__ void tile_of(int w, int tiles_m, int tiles_n, int &l, int &m0, int &n0)
{
    const int tiles = tiles_m * tiles_n;
    l = w / tiles;
    const int t = w - l * tiles;
    const int span = GROUP_ROWS * tiles_n, group = t / span, first = group * GROUP_ROWS;
    const int rows = min(GROUP_ROWS, tiles_m - first), r = t - group * span;
    m0 = (first + r % rows) * BM;
    n0 = (r / rows) * BN;
}

// Persistent: each block takes work items blockIdx.x, blockIdx.x + gridDim.x,
// ...; the ring of stages runs on across items (the producer fetches the next
// tile while the consumers write the last one), and the output tile has its
// own shared memory.
template <class Epi>
__global__ void __launch_bounds__(THREADS, 1)
gemm_kernel(const __grid_constant__ CUtensorMap mapA, const __grid_constant__ CUtensorMap mapB,
            int8_t *__restrict__ Rc, int64_t Mp, int64_t Np, int64_t Kp, int N, const Epi epi)
{
#ifdef OZ_WGMMA
    extern __shared__ unsigned char smem_raw[];
    unsigned char *smem = reinterpret_cast<unsigned char *>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
    unsigned char *tile = smem + STAGES * STAGE_BYTES;
    uint64_t *full = reinterpret_cast<uint64_t *>(tile + TILE_BYTES);
    uint64_t *empty = full + STAGES;
    volatile int *stop = reinterpret_cast<volatile int *>(empty + STAGES);  // the producer's "no more items"
    const int group = threadIdx.x >> 7, t = threadIdx.x & 127, lane = threadIdx.x & 31;
    const int KT = static_cast<int>(Kp / BK);
    const int tiles_m = static_cast<int>(Mp / BM), tiles_n = static_cast<int>(Np / BN);
    const int total = N * tiles_m * tiles_n;
    if (threadIdx.x == 0) {
        ring_init(full, empty, STAGES, 8);  // one arrival per consumer warp
        if constexpr (Epi::kSettles)
            *stop = 0;
    }
    __syncthreads();

    if (group == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
        if (t == 0) {
            int it = 0;
            for (int w = blockIdx.x; w < total; w += gridDim.x) {
                // Only with an item of STAGES k-blocks or more: the stage the
                // stop takes is then freed only once every consumer warp has
                // begun the item before, so each reads the one stop word at
                // this item and none earlier. With fewer, the producer runs
                // more than an item ahead, and a warp still in an earlier
                // item's epilogue could read the word there, stop before the
                // others, and leave copies in flight. (K of (STAGES - 1) x BK
                // and less: the GEMM is short anyway.)
                bool settled = false;
                if constexpr (Epi::kSettles)
                    settled = KT >= STAGES && epi.settled();
                if (settled) {
                    // The next stage, when free, carries no data but the stop
                    // word: the consumers meet it where the item would begin.
                    const int s = it % STAGES;
                    if (it >= STAGES) bar_wait(&empty[s], ((it / STAGES) - 1) & 1);
                    *stop = 1;
                    bar_arrive(&full[s]);
                    break;
                }
                int l, m0, n0;
                tile_of(w, tiles_m, tiles_n, l, m0, n0);
                for (int kt = 0; kt < KT; ++kt, ++it) {
                    const int s = it % STAGES;
                    if (it >= STAGES) bar_wait(&empty[s], ((it / STAGES) - 1) & 1);
                    unsigned char *sa = smem + s * STAGE_BYTES;
                    bar_expect(&full[s], STAGE_BYTES);
                    copy_box3(sa, &mapA, kt * BK, m0, l, &full[s]);
                    copy_box3(sa + A_BYTES, &mapB, kt * BK, n0, l, &full[s]);
                }
            }
        }
        return;
    }
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
    const int cw = group - 1;  // rows 64*cw .. 64*cw+63 of the tile
    const int ct = threadIdx.x - 128;
    int it = 0;
    int nrun = kMinN;  // a folding epilogue's running value (CertEpi)
    for (int w = blockIdx.x; w < total; w += gridDim.x) {
        int l, m0, n0;
        tile_of(w, tiles_m, tiles_n, l, m0, n0);
        int d[128];
#pragma unroll
        for (int c = 0; c < 128; ++c) d[c] = 0;
        int kb = 0;
        if constexpr (Epi::kSettles) {
            // The item's first stage, or the producer's stop in its place
            // (waited for again below, at once). Outside the loop of
            // multiplies, so that no wgmma sits on a path that may diverge.
            bar_wait(&full[it % STAGES], (it / STAGES) & 1);
            if (*stop)
                break;  // no copy is in flight: every stage issued before the stop was consumed
        }
        for (int kt = 0; kt < KT; ++kt, ++it) {
            const int s = it % STAGES;
            bar_wait(&full[s], (it / STAGES) & 1);
            const unsigned char *sa = smem + s * STAGE_BYTES;
            const uint64_t da = desc_sw128(sa + cw * 64 * BK), db = desc_sw128(sa + A_BYTES);
            pin(d);
            fence();
#pragma unroll
            for (int kk = 0; kk < BK / 32; ++kk) mma<Epi::kU8>(d, da + 2 * kk, db + 2 * kk);  // +32 bytes of K
            commit();
            wait_group<1>();
            pin(d);
            if (kt > 0 && lane == 0) bar_arrive(&empty[(it - 1) % STAGES]);
            if (++kb == Epi::kKBlocks) {
                kb = 0;
                wait_group<0>();
                pin(d);
                epi.reduce(d, l);
            }
        }
        wait_group<0>();
        pin(d);
        if (lane == 0) bar_arrive(&empty[(it - 1) % STAGES]);

        if constexpr (Epi::kStores) {
            consumers_sync();  // the previous item's stores have read the output tile
            epi.stage(d, tile, cw * 64 + (t >> 5) * 16, lane, l, m0, n0);
            consumers_sync();
            int8_t *out = Rc + size_t(l) * size_t(Mp) * size_t(Np);
#pragma unroll
            for (int i = 0; i < TILE_BYTES / 16 / 256; ++i) {
                const int chunk = ct + i * 256, col = chunk >> 3, piece = chunk & 7;
                *reinterpret_cast<int4 *>(out + (int64_t(n0) + col) * Mp + m0 + piece * 16) =
                    *reinterpret_cast<const int4 *>(tile + col * BM + piece * 16);
            }
        } else {
            epi.fold(d, cw * 64 + (t >> 5) * 16, lane, m0, n0, nrun);
        }
    }
    if constexpr (!Epi::kStores)
        epi.flush(nrun);
#endif
}

// A 3-D map over N planes of rows x Kp int8 (K contiguous), box {128, box_rows, 1}.
bool make_map(CUtensorMap *map, const int8_t *base, int64_t rows, int64_t Kp, int N, int box_rows)
{
    const PFN_cuTensorMapEncodeTiled_v12000 encode = kernels::tensor_map_encoder();
    if (encode == nullptr)
        return false;
    cuuint64_t dims[3] = {cuuint64_t(Kp), cuuint64_t(rows), cuuint64_t(N)};
    cuuint64_t strides[2] = {cuuint64_t(Kp), cuuint64_t(rows * Kp)};
    cuuint32_t box[3] = {cuuint32_t(BK), cuuint32_t(box_rows), 1};
    cuuint32_t es[3] = {1, 1, 1};
    return encode(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, const_cast<int8_t *>(base), dims, strides, box, es,
                  CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// One block per SM (sm_count, the device's), persistent over the work items.
template <class Epi>
cudaError_t launch(const int8_t *Ra, const int8_t *Rb, int8_t *Rc, int64_t Mp, int64_t Np, int64_t Kp, int N,
                   const Epi &epi, int sm_count, cudaStream_t st)
{
    CUtensorMap ma, mb;
    if (!make_map(&ma, Ra, Mp, Kp, N, BM) || !make_map(&mb, Rb, Np, Kp, N, BN))
        return cudaErrorInvalidValue;
    const int64_t total = int64_t(N) * (Mp / BM) * (Np / BN);
    if (total > INT32_MAX - sm_count || Kp / BK > INT32_MAX)  // the kernel counts in int
        return cudaErrorInvalidValue;
    gemm_kernel<Epi><<<unsigned(std::min<int64_t>(total, sm_count)), THREADS, SMEM_BYTES, st>>>(ma, mb, Rc, Mp, Np,
                                                                                              Kp, N, epi);
    return cudaGetLastError();
}

}  // namespace

cudaError_t prepare_ozaki(int cc_major, int cc_minor, bool *available)
{
    *available = false;
    if (cc_major != 9 || cc_minor != 0 || kernels::tensor_map_encoder() == nullptr)
        return cudaSuccess;
    cudaFuncAttributes fa;
    if (cudaFuncGetAttributes(&fa, gemm_kernel<ResidueEpi>) != cudaSuccess) {
        (void)cudaGetLastError();  // no code for this device: the strict path serves
        return cudaSuccess;
    }
    if (fa.binaryVersion != 90)  // only the sm_90a image has the kernel's body
        return cudaSuccess;
    cudaError_t e = cudaFuncSetAttribute(gemm_kernel<ResidueEpi>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         SMEM_BYTES);
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(gemm_kernel<CertEpi>, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES);
    if (e != cudaSuccess)
        return e;
    *available = true;
    return cudaSuccess;
}

cudaError_t launch_residue_gemm(const int8_t *ra, const int8_t *rb, int8_t *rc, const Sizes &s, int n, int sm_count,
                                cudaStream_t st)
{
    return launch(ra, rb, rc, s.mp, s.np, s.kp, n, ResidueEpi(), sm_count, st);
}

cudaError_t launch_magnitude_gemm(const CertBuffers &cb, const Sizes &s, double g, int sm_count, cudaStream_t st)
{
    CertEpi epi;
    epi.IA = cb.ones_a;
    epi.IB = cb.ones_b;
    epi.pwA = cb.pw_a;
    epi.pwB = cb.pw_b;
    epi.Mp = s.mp;
    epi.Np = s.np;
    epi.g = g;
    epi.result = cb.result;
    return launch(reinterpret_cast<const int8_t *>(cb.mag_a), reinterpret_cast<const int8_t *>(cb.mag_b), nullptr,
                  s.mp, s.np, s.kp, 1, epi, sm_count, st);
}

}  // namespace ozaki
}  // namespace tgemm
