// The plan of every problem of a random set, one canonical line each
// (bench/plan_dump.hpp): what the dispatcher would run on a described
// device, without the device. `make test-plans` diffs the H100's lines
// against tests/data/plans-h100.txt.xz; `make plans-baseline` rewrites
// that file when a change means to change plans.
//
//   plan_dump [--device h100|a100|h200] [--count N] [--seed S] [--no-workspace]
//             [--unreported-clocks]   (clocks and memory bus reported as 0)
//   plan_dump --check-tables
//   plan_dump --check-workspace [--device D] [--count N] [--seed S]
//   plan_dump [--device D] --shape M N K TA TB [LDA LDB LDC]... [--beta B] [--time N] [--model]
//   plan_dump [--device D] --costs < PLANS
//   plan_dump [--device D] --families
//
// --no-workspace prints the plans used when the workspace cannot be had.
// The settings (TGEMM_STREAMK, TGEMM_PACK, TGEMM_TMA, TGEMM_CLUSTERS,
// TGEMM_KERNEL) apply as in the library. --check-tables checks that the
// dispatcher's factors cover the kernel registry. --check-workspace checks
// each plan's workspace layout and the plan drop_workspace leaves. --shape
// plans the problems given instead of random ones (operands aligned,
// leading dimensions the smallest unless given, alpha 1, beta 0 unless
// --beta); --time N plans each once and then N times more first, and
// prints the time of the first plan and the mean of the others (the host's
// cost of planning a call, of a new shape and of one planned before);
// --model prints, before each given problem's plan, the models it was
// weighed on: for C of at most 16 rows or columns the streaming model's
// terms against the tiled plan's, for other C the rank-k model's time,
// whether rank-k pays, and the tiled plan's time and memory floor.
// --costs reads one tiled plan a line, `M N K TA TB FAMILY SPLITS
// CHUNK FORM` (FORM none, workspace or cluster; operands unpadded and
// aligned, alpha 1, beta 0, as bench_plans times them), and prints the
// tiled model's seconds for each (inf where the family has no such cluster
// form); FAMILY rank-k (SPLITS 1, CHUNK K, FORM none) prints the rank-k
// model's.
// tests/check-fit-plans.sh holds bench/fit_plans.py's mirror of the tiled
// model to it. --families prints each tiled family's `NAME THREADS
// SMEM_BYTES BLOCKS_PER_SM CLUSTER_PER_SM`: the registry's block and shared
// memory of its plain kernels, the blocks an SM the model plans it at, and
// the most blocks an SM holds in clusters by the device's counts (0: no
// cluster form), for bench/residency.py.
#include <algorithm>
#include <chrono>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/math.hpp"
#include "core/status.hpp"
#include "dispatch/dispatch.hpp"
#include "dispatch/planners.hpp"
#include "dispatch/skinny_split.hpp"
#include "plan_dump.hpp"

namespace {

using namespace tgemm;

plan_dump::Piece dump_piece(const PiecePlan &x)
{
    plan_dump::Piece d;
    d.kind = kernel_kind_name(x.kind);
    d.m = x.p.m;
    d.n = x.p.n;
    d.k = x.p.k;
    d.splits = x.splits;
    d.cluster = x.cluster;
    d.k_chunk = x.k_chunk;
    switch (x.kind) {
    case KernelKind::Tiled:
    case KernelKind::StreamK:
        d.family = x.family->name;
        d.grid_x = tiles(*x.family, x.p);
        d.dp = x.sk.dp_tiles;
        d.sk = x.sk.sk_tiles;
        d.iters = x.sk.iters;
        d.ctas = x.sk.ctas;
        break;
    case KernelKind::Streaming:
    case KernelKind::StreamingTma:
        d.s = x.skinny.s;
        d.groups = x.skinny.groups;
        d.gemv_rw = x.skinny.gemv_rw;
        d.rows = x.skinny.x_r == 1;
        d.vec = x.skinny.vec;
        d.y_vec = x.skinny.y_vec;
        d.grid_x = ceil_div(x.skinny.r, x.kind == KernelKind::StreamingTma ? kernels::kSkinnyTmaRows
                                                                          : skinny_rows_per_block(x.skinny));
        break;
    case KernelKind::RankK:
        d.grid_x = rank_k_tiles(x.p);
        break;
    case KernelKind::Scale:
        break;
    }
    return d;
}

// The workspace of one plan: the packed A at offset 0, the packed B past
// it, each piece's share at a kWorkspaceAlign offset past them, none
// overlapping, all inside workspace_bytes; after drop_workspace no step
// uses any. Returns the first broken rule, or nullptr.
const char *workspace_fault(CallPlan plan)
{
    const CallSteps &s = plan.steps;
    const GemmParams &p = plan.problem;
    if (workspace_bytes(plan) % kWorkspaceAlign != 0)
        return "workspace size not a multiple of the alignment";
    size_t end = 0;  // the highest byte used so far
    const OperandPack &pa = s.pack_a, &pb = s.pack_b;
    if ((pa.ld > 0) != (pa.bytes > 0) || (pb.ld > 0) != (pb.bytes > 0))
        return "pack size without a packed operand, or the reverse";
    if (pa.ld > 0) {
        if (pa.offset != 0 || pa.transposed != p.trans_a || pa.ld < p.m || pa.ld % 4 != 0 ||
            pa.bytes != static_cast<size_t>(pa.ld) * p.k * sizeof(float))
            return "the packed A is not ld x k floats at offset 0, ld >= m a multiple of 4";
        end = pa.bytes;
    }
    if (pb.ld > 0) {
        const int64_t rows = p.trans_b ? p.n : p.k, cols = p.trans_b ? p.k : p.n;
        if (pb.offset % kWorkspaceAlign != 0 || pb.offset < end || pb.ld < rows || pb.ld % 4 != 0 ||
            pb.bytes != static_cast<size_t>(pb.ld) * cols * sizeof(float))
            return "the packed B is not ld x its columns past the packed A, ld >= its rows a multiple of 4";
        end = pb.offset + pb.bytes;
    }
    for (int i = 0; i < s.pieces; ++i) {
        const PiecePlan &x = s.piece[i];
        if (x.packed_a != (pa.ld > 0) || x.packed_b != (pb.ld > 0))
            return "a piece of a packed plan not marked as reading the packed operand, or the reverse";
        const bool needs = x.kind == KernelKind::StreamK || (x.splits > 1 && !x.cluster);
        if (needs != (x.work_bytes > 0))
            return "a piece's workspace share does not match its kernel";
        if (x.work_bytes == 0)
            continue;
        if (x.work_offset % kWorkspaceAlign != 0 || x.work_offset < end)
            return "a piece's share is misaligned or overlaps the one before";
        if (x.kind != KernelKind::StreamK &&
            x.work_bytes != static_cast<size_t>(x.splits) * x.p.m * x.p.n * sizeof(float))
            return "split-K share is not splits x m x n floats";
        end = x.work_offset + x.work_bytes;
    }
    if (end > workspace_bytes(plan))
        return "a share ends past the workspace";
    if (drop_workspace(&plan) != TGEMM_SUCCESS)
        return "drop_workspace failed";
    if (workspace_bytes(plan) != 0 || plan.steps.pack_a.ld != 0 || plan.steps.pack_b.ld != 0)
        return "the plan without workspace still uses some";
    for (int i = 0; i < plan.steps.pieces; ++i) {
        const PiecePlan &x = plan.steps.piece[i];
        if (x.kind == KernelKind::StreamK || (x.splits > 1 && !x.cluster) || x.packed_a || x.packed_b ||
            x.work_bytes != 0)
            return "a piece of the plan without workspace still needs some";
    }
    return nullptr;
}

int check_tables()
{
    char why[128];
    if (!factors_cover_registry(why, sizeof why)) {
        std::printf("[  FAILED  ] factors cover the kernel registry: %s\n", why);
        return 1;
    }
    std::printf("[       OK ] factors cover the kernel registry\n");
    return 0;
}

}  // namespace

// --families: each tiled family's threads, shared bytes, planned blocks an
// SM and blocks an SM in clusters.
int print_families(const DeviceModel &model)
{
    const int sms = model.desc.sm_count;
    for (const TiledModel &e : model.tiled) {
        int cluster = 0;  // the most blocks an SM holds in any cluster size
        for (int n = 2; n <= kTiledMaxCluster; ++n)
            cluster = std::max(cluster, (e.cluster_blocks[n] + sms - 1) / sms);
        std::printf("%s %d %zu %d %d\n", e.family->name, e.family->threads, e.family->smem_bytes, e.blocks_per_sm,
                    cluster);
    }
    return 0;
}

// --costs: the model's seconds of each plan read from standard input (a
// tiled family's, or rank-k's).
int print_costs(const DeviceModel &model)
{
    long long m, n, k, splits, chunk;
    char ta, tb, family[32], form[16];
    int lines = 0;
    while (std::scanf(" %lld %lld %lld %c %c %31s %lld %lld %15s", &m, &n, &k, &ta, &tb, family, &splits, &chunk,
                      form) == 9) {
        int f = 0;
        while (f < kernels::kTiledFamilyCount && std::strcmp(kernels::kTiledFamilies[f]->name, family) != 0)
            ++f;
        const bool rank_k = std::strcmp(family, kernel_kind_name(KernelKind::RankK)) == 0;
        const std::string fm = form;
        const bool bad_rank_k = rank_k && (splits != 1 || chunk != k || fm != "none");  // one launch over all of K
        if ((f == kernels::kTiledFamilyCount && !rank_k) || bad_rank_k || m < 1 || n < 1 || k < 1 || splits < 1 ||
            chunk < 1 || (fm != "none" && fm != "workspace" && fm != "cluster")) {
            std::fprintf(stderr, "plan_dump: --costs: bad plan on line %d\n", lines + 1);
            return 2;
        }
        const bool trans_a = ta == 'T', trans_b = tb == 'T';
        const GemmParams p = {reinterpret_cast<const float *>(plan_dump::kBaseA),
                              reinterpret_cast<const float *>(plan_dump::kBaseB),
                              reinterpret_cast<float *>(plan_dump::kBaseC), trans_a ? k : m, trans_b ? n : k, m, m, n, k,
                              1.0f, 0.0f, trans_a, trans_b};
        std::printf("%.17g\n", rank_k ? plan_rank_k(p, model).seconds
                                       : tiled_plan_seconds(p, model, f, static_cast<int>(splits), chunk, fm == "cluster"));
        ++lines;
    }
    return lines > 0 ? 0 : 2;
}

int main(int argc, char **argv)
{
    std::string device = "h100";
    long long count = 20000;
    unsigned long long seed = 1;
    bool no_workspace = false;
    bool unreported = false;  // the device reports no clocks (a driver that cannot say)
    bool check_workspace = false;
    bool costs = false, families = false;
    long long time_reps = 0;  // --time: plan each given problem this many times, print the time per plan
    // --model: the streaming and tiled models' times of each given skinny
    // problem, the rank-k and tiled models' of the others.
    bool model_lines = false;
    std::vector<plan_dump::Problem> given;
    float beta = 0.0f;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--shape" && i + 5 < argc) {
            plan_dump::Problem pr{};
            pr.m = std::atoll(argv[i + 1]);
            pr.n = std::atoll(argv[i + 2]);
            pr.k = std::atoll(argv[i + 3]);
            pr.ta = argv[i + 4][0] == 'T';
            pr.tb = argv[i + 5][0] == 'T';
            i += 5;
            pr.lda = pr.ta ? pr.k : pr.m;
            pr.ldb = pr.tb ? pr.n : pr.k;
            pr.ldc = pr.m;
            if (i + 3 < argc && std::isdigit(static_cast<unsigned char>(argv[i + 1][0]))) {
                pr.lda = std::atoll(argv[i + 1]);
                pr.ldb = std::atoll(argv[i + 2]);
                pr.ldc = std::atoll(argv[i + 3]);
                i += 3;
            }
            pr.alpha = 1.0f;
            given.push_back(pr);
        } else if (a == "--beta" && i + 1 < argc)
            beta = static_cast<float>(std::atof(argv[++i]));
        else if (a == "--device" && i + 1 < argc)
            device = argv[++i];
        else if (a == "--time" && i + 1 < argc)
            time_reps = std::atoll(argv[++i]);
        else if (a == "--model")
            model_lines = true;
        else if (a == "--count" && i + 1 < argc)
            count = std::atoll(argv[++i]);
        else if (a == "--seed" && i + 1 < argc)
            seed = std::strtoull(argv[++i], nullptr, 10);
        else if (a == "--no-workspace")
            no_workspace = true;
        else if (a == "--unreported-clocks")
            unreported = true;
        else if (a == "--check-workspace")
            check_workspace = true;
        else if (a == "--costs")
            costs = true;
        else if (a == "--families")
            families = true;
        else if (a == "--check-tables")
            return check_tables();
        else {
            std::fprintf(stderr, "usage: %s [--device h100|a100|h200] [--count N] [--seed S] [--no-workspace]"
                                 " [--unreported-clocks] [--check-workspace]\n"
                                 "       %s [--device D] --shape M N K TA TB [LDA LDB LDC]... [--beta B] [--time N] [--model]\n"
                                 "       %s [--device D] --costs < PLANS\n"
                                 "       %s [--device D] --families\n"
                                 "       %s --check-tables\n", argv[0], argv[0], argv[0], argv[0], argv[0]);
            return 2;
        }
    }
    const plan_dump::Device *dev = plan_dump::find_device(device);
    if (dev == nullptr) {
        std::fprintf(stderr, "plan_dump: unknown device %s\n", device.c_str());
        return 2;
    }
    DeviceDescription desc;
    desc.id = 0;
    desc.cc_major = dev->cc_major;
    desc.cc_minor = dev->cc_minor;
    desc.sm_count = dev->sm_count;
    desc.max_grid_x = dev->max_grid_x;
    desc.clock_khz = dev->clock_khz;
    desc.memory_clock_khz = dev->memory_clock_khz;
    desc.bus_width_bits = dev->bus_width_bits;
    if (unreported)
        desc.clock_khz = desc.memory_clock_khz = desc.bus_width_bits = 0;
    desc.skinny_tma = dev->skinny_tma;
    static_assert(sizeof desc.skinny_cluster_blocks == sizeof dev->skinny, "one count per cluster size");
    static_assert(sizeof desc.tiled_cluster_blocks == sizeof dev->tiled, "a row per registered family");
    std::memcpy(desc.skinny_cluster_blocks, dev->skinny, sizeof dev->skinny);
    std::memcpy(desc.tiled_cluster_blocks, dev->tiled, sizeof dev->tiled);
    static DeviceModel model;
    if (derive_device_model(desc, &model) != TGEMM_SUCCESS) {
        std::fprintf(stderr, "plan_dump: %s\n", tgemm_last_error_detail());
        return 1;
    }
    if (costs)
        return print_costs(model);
    if (families)
        return print_families(model);

    for (plan_dump::Problem &pr : given)
        pr.beta = beta;
    if (!given.empty())
        count = static_cast<long long>(given.size());
    if (!check_workspace && given.empty())
        std::printf("# plan_dump --device %s --count %lld --seed %llu%s\n", device.c_str(), count, seed,
                    no_workspace ? " --no-workspace" : "");
    plan_dump::Rng rng{seed};
    long long checked = 0, with_workspace = 0, packed = 0;
    for (long long i = 0; i < count; ++i) {
        const plan_dump::Problem pr = given.empty() ? plan_dump::draw_problem(rng) : given[static_cast<size_t>(i)];
        const GemmParams p = {reinterpret_cast<const float *>(plan_dump::kBaseA) + pr.a_off,
                              reinterpret_cast<const float *>(plan_dump::kBaseB) + pr.b_off,
                              reinterpret_cast<float *>(plan_dump::kBaseC) + pr.c_off,
                              pr.lda, pr.ldb, pr.ldc, pr.m, pr.n, pr.k, pr.alpha, pr.beta, pr.ta, pr.tb};
        CallPlan plan;
        plan_dump::Call call;
        if (time_reps > 0 && !given.empty()) {
            const auto us_since = [](std::chrono::steady_clock::time_point t0) {
                return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
            };
            auto t0 = std::chrono::steady_clock::now();
            (void)plan_call(p, model, &plan);
            const double first = us_since(t0);
            t0 = std::chrono::steady_clock::now();
            for (long long r = 0; r < time_reps; ++r)
                (void)plan_call(p, model, &plan);
            std::printf("# plan_call first %.3f us, again %.3f us: ", first, us_since(t0) / time_reps);
        }
        if (model_lines && !given.empty() && p.k > 0 && p.alpha != 0.0f && (p.m <= kSkinnyMax || p.n <= kSkinnyMax)) {
            const PiecePlan stream = plan_streaming(p, model);
            const StreamingTerms t = streaming_terms(stream, model);
            const PiecePlan tiled = plan_tiled(p, model, nullptr);
            std::printf("# model %s waves=%g trips=%g latency_us=%.3f memory_us=%.3f finish_us=%.3f seconds_us=%.3f "
                        "floored_us=%.3f | tiled %s split=%d%s seconds_us=%.3f floored_us=%.3f\n",
                        kernel_kind_name(stream.kind), t.waves, t.trips, 1e6 * t.latency, 1e6 * t.memory,
                        1e6 * t.finish, 1e6 * stream.seconds, 1e6 * host_floored(stream, model), tiled.family->name,
                        tiled.splits, tiled.cluster ? " cluster" : "", 1e6 * tiled.seconds,
                        1e6 * host_floored(tiled, model));
        }
        if (model_lines && !given.empty() && p.k > 0 && p.alpha != 0.0f && p.m > kSkinnyMax && p.n > kSkinnyMax) {
            const PiecePlan rank_k = plan_rank_k(p, model);
            const PiecePlan tiled = plan_tiled(p, model, nullptr);
            std::printf("# model rank-k seconds_us=%.3f pays=%d | tiled %s split=%d%s seconds_us=%.3f "
                        "memory_floor_us=%.3f\n",
                        1e6 * rank_k.seconds, rank_k_pays(rank_k, tiled, model) ? 1 : 0, tiled.family->name,
                        tiled.splits, tiled.cluster ? " cluster" : "", 1e6 * tiled.seconds,
                        1e6 * tiled_memory_floor(tiled.p, model));
        }
        tgemm_status st = plan_call(p, model, &plan);
        if (check_workspace) {
            if (st != TGEMM_SUCCESS)
                continue;  // no plan (a grid limit): nothing to lay out
            if (const char *fault = workspace_fault(plan)) {
                std::printf("[  FAILED  ] workspace of %s: %s\n", plan_dump::format_line(pr, call).c_str(), fault);
                return 1;
            }
            ++checked;
            with_workspace += workspace_bytes(plan) > 0;
            packed += plan.steps.pack_a.ld > 0 || plan.steps.pack_b.ld > 0;
            continue;
        }
        if (st == TGEMM_SUCCESS && no_workspace)
            st = drop_workspace(&plan);
        if (st != TGEMM_SUCCESS) {
            call.error = tgemm_last_error_detail();
        } else {
            call.pack_a_ld = plan.steps.pack_a.ld;
            call.pack_a_transposed = plan.steps.pack_a.transposed;
            call.pack_b_ld = plan.steps.pack_b.ld;
            call.peel_m = plan.steps.peel_m;
            call.peel_n = plan.steps.peel_n;
            call.pieces = plan.steps.pieces;
            for (int j = 0; j < plan.steps.pieces; ++j)
                call.piece[j] = dump_piece(plan.steps.piece[j]);
        }
        std::printf("%s\n", plan_dump::format_line(pr, call).c_str());
    }
    if (check_workspace) {
        if (with_workspace == 0 || packed == 0) {
            std::printf("[  FAILED  ] workspace layouts: no plan of the %lld used a workspace, or none packed\n", checked);
            return 1;
        }
        std::printf("[       OK ] workspace layouts of %lld plans (%lld with a workspace, %lld packed), and their "
                    "plans without it\n", checked, with_workspace, packed);
    }
    return 0;
}
