// The streaming kernels' entry points (family.hpp): per device, the shared
// memory their kernels may use and their cluster capacity (prepare_skinny);
// per product, the technique that runs it (launch_skinny): skinny_gemv where
// the planner chose it (s == 1), else skinny_rows or skinny_rows_ring where
// X is contiguous along r; skinny_dots where it is contiguous along k. The
// split of K comes from the planner (dispatch/skinny_split.cpp,
// dispatch/streaming.cpp).
#include "kernels/skinny_common.cuh"

namespace tgemm {
namespace kernels {

using namespace skinny;

cudaError_t prepare_skinny(int cc_major, int *cluster_blocks)
{
    // Cluster form: only where the kernels that run on this device carry
    // their cluster code.
    const bool cluster_code = dots_cluster_code(cc_major);
    // The cluster form's sums need kPartBytes more; ask for them only where
    // it can run (GPUs of compute capability 8.6 and 8.9 allow 99 KiB a block).
    const int max_bytes = static_cast<int>(kSmemBytes + (cluster_code ? kPartBytes : 0));
    const cudaError_t e[] = {prepare_rows(max_bytes), prepare_dots(max_bytes), prepare_rows_ring(max_bytes),
                             prepare_gemv(max_bytes)};
    for (cudaError_t x : e)
        if (x != cudaSuccess)
            return x;
    // How many blocks run at once in clusters of n, at the two blocks per SM
    // every cluster launch has (kClusterSmem).
    for (int n = 0; n <= kMaxCluster; ++n)
        cluster_blocks[n] = 0;
    if (cluster_code)
        count_clusters(cluster_blocks);
    return cudaSuccess;
}

cudaError_t launch_skinny(const SkinnyParams &p, const SplitK &sk, cudaStream_t st)
{
    if (p.x_r != 1)
        return launch_dots(p, sk, st);
    if (p.gemv_rw > 0)
        return launch_gemv(p, sk, st);
    return rows_ring_takes(p, sk) ? launch_rows_ring(p, sk, st) : launch_rows(p, sk, st);
}

}  // namespace kernels
}  // namespace tgemm
