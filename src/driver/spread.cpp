// The workers of a spread call (spread.hpp): a queue of parts of C, one
// thread per listed device, each running the parts it takes through its
// device's host-operand pipeline.
#include "driver/spread.hpp"

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "core/settings.hpp"
#include "core/status.hpp"
#include "driver/execute.hpp"
#include "driver/host_pipeline.hpp"
#include "driver/host_pool.hpp"
#include "driver/panel_board.hpp"

namespace tgemm {
namespace {

std::atomic<int64_t> g_min_side{0};

// What the workers share: the parts of C no worker has taken, how many
// parts are being run, and the first failure.
struct Queue {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<Rect> todo;
    int running = 0;
    bool stop = false;  // a failure that cannot be taken over: no worker takes another part
    tgemm_status status = TGEMM_SUCCESS;
    std::string detail;
    int failed_device = -1;
};

// Rect r of a part of C that starts at `at`, in the coordinates of C.
Rect shifted(const Rect &r, const Rect &at)
{
    return Rect{r.row + at.row, r.col + at.col, r.rows, r.cols};
}

class Worker {
public:
    // With `share`, the worker's first part is block share->block of the
    // plan, `first`, run sharing panels with the other workers' first
    // blocks.
    Worker(const GemmParams &p, MemKind ka, MemKind kb, MemKind kc, int device, bool recoverable, Math math, Queue &q,
           const PanelShare *share = nullptr, Rect first = {})
        : p_(p), ka_(ka), kb_(kb), kc_(kc), device_(device), recoverable_(recoverable), math_(math), q_(q),
          share_(share), first_(first)
    {
    }

    // Runs parts until none is left or this worker fails; the thread's
    // current device is restored at the end.
    void operator()()
    {
        DeviceGuard guard;
        cudaStream_t stream = nullptr;
        Rect part;
        bool ok = true;
        if (share_ != nullptr) {
            part = first_;
            const bool mine = take_first();
            std::vector<Rect> left;
            const tgemm_status st = mine ? run_part(part, guard, &stream, &left, share_) : TGEMM_SUCCESS;
            // Where the block's run could not tell the board itself (no
            // pipeline, say), this does; else it changes nothing.
            share_->board->done(share_->block);
            share_->board->close(share_->block);
            ok = !mine || done(part, st, left);
        }
        while (ok && take(&part)) {
            std::vector<Rect> left;
            const tgemm_status st = run_part(part, guard, &stream, &left, nullptr);
            if (!done(part, st, left))
                break;
        }
        if (stream != nullptr)
            (void)cudaStreamDestroy(stream);
    }

private:
    // Takes the first block out of the queue; false if another worker has
    // it already.
    bool take_first()
    {
        std::lock_guard<std::mutex> lock(q_.mu);
        for (auto it = q_.todo.begin(); it != q_.todo.end(); ++it)
            if (it->row == first_.row && it->col == first_.col && it->rows == first_.rows && it->cols == first_.cols) {
                q_.todo.erase(it);
                ++q_.running;
                return true;
            }
        return false;
    }

    // The next part of C, waiting while others run parts that may come
    // back; false once there is nothing left to do.
    bool take(Rect *part)
    {
        std::unique_lock<std::mutex> lock(q_.mu);
        q_.cv.wait(lock, [&] { return q_.stop || !q_.todo.empty() || q_.running == 0; });
        if (q_.stop || q_.todo.empty())
            return false;
        *part = q_.todo.front();
        q_.todo.pop_front();
        ++q_.running;
        return true;
    }

    // One part on this worker's device, through a stream of its own (made
    // on first use) as the caller's stream of that call.
    tgemm_status run_part(const Rect &part, DeviceGuard &guard, cudaStream_t *stream, std::vector<Rect> *left,
                          const PanelShare *share)
    {
        *left = {Rect{0, 0, part.rows, part.cols}};
        tgemm_status st = guard.enter(device_);
        const DeviceInfo *dev = nullptr;
        if (st == TGEMM_SUCCESS)
            st = device_info(device_, &dev);
        if (st == TGEMM_SUCCESS && *stream == nullptr)
            st = check_cuda(cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
        if (st != TGEMM_SUCCESS)
            return st;
        return run_host_operands(part_of(p_, part), ka_, kb_, kc_, *dev, *stream, math_,
                                 recoverable_ ? left : nullptr, share);
    }

    // Records the outcome of a part; false when this worker stops.
    bool done(const Rect &part, tgemm_status st, const std::vector<Rect> &left)
    {
        std::lock_guard<std::mutex> lock(q_.mu);
        --q_.running;
        q_.cv.notify_all();
        if (st == TGEMM_SUCCESS)
            return true;
        if (q_.failed_device < 0) {
            q_.status = st;
            q_.detail = tgemm_last_error_detail();
            q_.failed_device = device_;
        }
        if (recoverable_) {
            for (const Rect &r : left)
                q_.todo.push_back(shifted(r, part));
        } else {
            q_.stop = true;
        }
        return false;
    }

    const GemmParams &p_;
    const MemKind ka_, kb_, kc_;
    const int device_;
    const bool recoverable_;
    const Math math_;
    Queue &q_;
    const PanelShare *const share_;
    const Rect first_;
};


}  // namespace

bool panels_shareable(const std::vector<int> &devices, int workers)
{
    // Pairs found able (access turned on) or not, once per process.
    static std::mutex mu;
    static std::set<std::pair<int, int>> enabled, refused;
    std::lock_guard<std::mutex> lock(mu);
    for (int i = 0; i < workers; ++i)
        for (int j = 0; j < workers; ++j) {
            const int a = devices[static_cast<size_t>(i)], b = devices[static_cast<size_t>(j)];
            if (a == b || enabled.count({a, b}) != 0)
                continue;
            if (refused.count({a, b}) != 0)
                return false;
            int can = 0;
            DeviceGuard guard;
            bool ok = cudaDeviceCanAccessPeer(&can, a, b) == cudaSuccess && can != 0 && guard.enter(a) == TGEMM_SUCCESS;
            if (ok) {
                const cudaError_t e = cudaDeviceEnablePeerAccess(b, 0);
                ok = e == cudaSuccess || e == cudaErrorPeerAccessAlreadyEnabled;
            }
            ok = ok && open_tile_pool(b, a) == TGEMM_SUCCESS;
            // Whatever failed here must not be taken for a later call's error.
            (void)cudaGetLastError();
            if (!ok) {
                refused.insert({a, b});
                return false;
            }
            enabled.insert({a, b});
        }
    return true;
}

tgemm_status spread_devices(const std::vector<int> **devices, bool *choose)
{
    static const std::vector<int> none;
    const Settings &set = settings();
    *devices = &none;
    *choose = set.spread == Spread::Auto;
    if (set.spread == Spread::One)
        return TGEMM_SUCCESS;
    int count = 0;
    const tgemm_status st = visible_devices(&count);
    if (st != TGEMM_SUCCESS)
        return st;
    if (set.spread != Spread::List) {
        // The visible devices do not change during the process.
        static const std::vector<int> all = [count] {
            std::vector<int> v;
            for (int d = 0; d < count; ++d)
                v.push_back(d);
            return v;
        }();
        *devices = &all;
        return TGEMM_SUCCESS;
    }
    for (const int d : set.devices)
        if (d >= count)
            return fail(TGEMM_ERROR_INVALID_DEVICE, "TGEMM_DEVICES lists device %d but only %d device(s) are visible",
                        d, count);
    *devices = &set.devices;
    return TGEMM_SUCCESS;
}

tgemm_status run_spread(const GemmParams &p, MemKind ka, MemKind kb, MemKind kc, const SpreadPlan &plan,
                        const std::vector<int> &devices, cudaStream_t s, Math math, std::vector<Rect> *left)
{
    tgemm_status st = check_cuda(cudaStreamSynchronize(s), "cudaStreamSynchronize (caller's stream)");
    if (st != TGEMM_SUCCESS)
        return st;
    Queue q;
    for (int64_t i = 0; i < block_count(plan); ++i)
        q.todo.push_back(spread_block(plan, p.m, p.n, i));
    // Parts that fail go back to the queue where what they leave is known
    // and can be computed again: always with beta == 0 (C is not read) or
    // pageable C, and with `left` (C is then handled as recoverable_c says).
    const bool recoverable = left != nullptr || p.beta == 0.0f || kc == MemKind::Pageable;
    // Where the grid has one block per worker, all run at once, and the
    // blocks share panels of A and B (from pinned memory) over peer copies.
    const bool share = settings().spread_peer && block_count(plan) == plan.workers && ka == MemKind::Pinned &&
                       kb == MemKind::Pinned && panels_shareable(devices, plan.workers);
    if (settings().verbose >= 2)
        std::fprintf(stderr, "tgemm: spread m=%lld n=%lld k=%lld over %d device(s): blocks=%lldx%lld model_ms=%.2f "
                     "one_gpu_ms=%.2f share_panels=%s\n", static_cast<long long>(p.m), static_cast<long long>(p.n),
                     static_cast<long long>(p.k), plan.workers, static_cast<long long>(plan.rows),
                     static_cast<long long>(plan.cols), plan.seconds * 1e3, plan.one_gpu_seconds * 1e3,
                     share ? "yes" : "no");
    PanelBoard board(plan.rows, plan.cols);
    std::vector<PanelShare> shares(static_cast<size_t>(plan.workers));
    for (int w = 0; w < plan.workers; ++w)
        shares[static_cast<size_t>(w)] = PanelShare{&board, w};
    const auto worker = [&](int w) {
        const size_t i = static_cast<size_t>(w);
        return share ? Worker(p, ka, kb, kc, devices[i], recoverable, math, q, &shares[i],
                              spread_block(plan, p.m, p.n, w))
                     : Worker(p, ka, kb, kc, devices[i], recoverable, math, q);
    };
    // The calling thread is the first worker; a thread that cannot be
    // started leaves its parts to the others, and shares nothing.
    std::vector<std::thread> threads;
    int started = 1;
    for (int w = 1; w < plan.workers; ++w, ++started) {
        try {
            threads.emplace_back(worker(w));
        } catch (...) {
            break;
        }
    }
    for (int w = started; share && w < plan.workers; ++w)
        board.close(w);
    worker(0)();
    for (std::thread &t : threads)
        t.join();
    if (q.todo.empty() && !q.stop)
        return TGEMM_SUCCESS;
    // Only a recoverable call (always one with `left`) puts parts back.
    if (left != nullptr)
        left->assign(q.todo.begin(), q.todo.end());
    return fail(q.status, "device %d: %s", q.failed_device, q.detail.c_str());
}

void set_spread_min_side(int64_t side) { g_min_side.store(side); }

int64_t spread_min_side()
{
    const int64_t v = g_min_side.load();
    return v > 0 ? v : kSpreadMinSide;
}

}  // namespace tgemm
