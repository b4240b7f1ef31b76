#include "driver/spread_plan.hpp"

#include <algorithm>

namespace tgemm {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Where part i of `parts` of [0, extent) starts: evenly spaced, on multiples
// of kSpreadAlign where every part is still at least one of them long.
int64_t cut(int64_t extent, int64_t parts, int64_t i)
{
    if (i >= parts)
        return extent;
    const int64_t step = extent / parts >= kSpreadAlign ? kSpreadAlign : 1;
    const int64_t units = ceil_div(extent, step);
    return std::min(extent, units * i / parts * step);
}

// One block of the largest size of a rows x cols grid, on one GPU; `shared`:
// the grid's blocks share panels, each loading its share of them.
double block_seconds(const SpreadRequest &r, int64_t rows, int64_t cols, bool shared)
{
    const double br = static_cast<double>(ceil_div(r.m, rows));
    const double bc = static_cast<double>(ceil_div(r.n, cols));
    const double k = static_cast<double>(r.k);
    const double multiply = 2.0 * br * bc * k / (r.peak_flops * kSpreadFfmaShare);
    const double a_share = shared ? static_cast<double>(cols) : 1.0;
    const double b_share = shared ? static_cast<double>(rows) : 1.0;
    const double in = 4.0 * ((r.a_host ? br * k / a_share : 0) + (r.b_host ? k * bc / b_share : 0) +
                             (r.c_in ? br * bc : 0));
    const double out = 4.0 * br * bc;
    const double link = r.pageable ? 0 : std::max(in / kSpreadLinkIn, out / kSpreadLinkOut);
    return std::max(multiply, link) + kSpreadBlockCost;
}

// The model's time for a rows x cols grid on `workers` workers.
double grid_seconds(const SpreadRequest &r, int64_t rows, int64_t cols, int workers)
{
    const int64_t blocks = rows * cols;
    const int64_t used = std::min<int64_t>(workers, blocks);
    const double block = block_seconds(r, rows, cols, r.share && blocks <= workers);
    double t = static_cast<double>(ceil_div(blocks, used)) * block + (used > 1 ? kStragglerShare * block : 0);
    if (r.pageable) {
        // Every block's operands pass through the host's staging threads.
        const double k = static_cast<double>(r.k);
        const double m = static_cast<double>(r.m), n = static_cast<double>(r.n);
        const double bytes = 4.0 * ((r.a_host ? m * k * static_cast<double>(cols) : 0) +
                                    (r.b_host ? k * n * static_cast<double>(rows) : 0) +
                                    (r.c_in ? 2.0 : 1.0) * m * n);
        t = std::max(t, bytes / (kSpreadPageablePerThread * std::max(1, r.copy_threads)));
    }
    return t;
}

}  // namespace

SpreadPlan plan_spread(const SpreadRequest &r)
{
    SpreadPlan best;
    best.one_gpu_seconds = grid_seconds(r, 1, 1, 1);
    best.seconds = best.one_gpu_seconds;
    const int64_t max_rows = std::max<int64_t>(1, r.m / r.min_side);
    const int64_t max_cols = std::max<int64_t>(1, r.n / r.min_side);
    if (r.workers < 2 || max_rows * max_cols < 2 || r.peak_flops <= 0)
        return best;
    SpreadPlan spread;
    if (r.rows > 0 && r.cols > 0) {
        spread.rows = std::min(r.rows, max_rows);
        spread.cols = std::min(r.cols, max_cols);
        spread.workers = static_cast<int>(std::min<int64_t>(r.workers, spread.rows * spread.cols));
        spread.seconds = grid_seconds(r, spread.rows, spread.cols, spread.workers);
        spread.one_gpu_seconds = best.one_gpu_seconds;
        return spread.workers > 1 ? spread : best;
    }
    bool found = false;
    int64_t least_reads = 0;
    // With `one_round`, only grids of a block per worker.
    const auto search = [&](bool one_round) {
        for (int w = r.choose_workers ? 2 : r.workers; w <= r.workers; ++w) {
            const int64_t cap = static_cast<int64_t>(kSpreadMaxBlocksPerWorker) * w;
            // A listed set of devices gets a block for each where C has room.
            const int64_t fewest =
                r.choose_workers ? 2 : std::max<int64_t>(2, std::min<int64_t>(w, max_rows * max_cols));
            for (int64_t rows = 1; rows <= std::min(max_rows, cap); ++rows)
                for (int64_t cols = 1; cols <= std::min(max_cols, cap / rows); ++cols) {
                    if (rows * cols < fewest || (one_round && rows * cols != w))
                        continue;
                    const double t = grid_seconds(r, rows, cols, w);
                    // Ties go to fewer workers, then to fewer blocks, then to
                    // the blocks that read the least of A and B.
                    const int64_t reads = ceil_div(r.m, rows) + ceil_div(r.n, cols);
                    const bool tie = found && t <= spread.seconds * (1 + 1e-9) &&
                                     std::min<int64_t>(w, rows * cols) == spread.workers &&
                                     rows * cols == block_count(spread) && reads < least_reads;
                    if (!found || t < spread.seconds * (1 - 1e-9) || tie) {
                        found = true;
                        least_reads = reads;
                        spread.rows = rows;
                        spread.cols = cols;
                        spread.workers = static_cast<int>(std::min<int64_t>(w, rows * cols));
                        spread.seconds = t;
                    }
                }
        }
    };
    if (r.share)
        search(true);
    // Under auto, where no grid of one round pays, more rounds may.
    if (found && r.choose_workers && spread.seconds > kSpreadPays * best.one_gpu_seconds)
        found = false;
    if (!found)
        search(false);
    if (!found || (r.choose_workers && spread.seconds > kSpreadPays * best.one_gpu_seconds))
        return best;
    spread.one_gpu_seconds = best.one_gpu_seconds;
    return spread;
}

Rect spread_block(const SpreadPlan &p, int64_t m, int64_t n, int64_t i)
{
    const int64_t bi = i / p.cols, bj = i % p.cols;
    Rect b;
    b.row = cut(m, p.rows, bi);
    b.col = cut(n, p.cols, bj);
    b.rows = cut(m, p.rows, bi + 1) - b.row;
    b.cols = cut(n, p.cols, bj + 1) - b.col;
    return b;
}

}  // namespace tgemm
