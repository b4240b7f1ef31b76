#include "runtime/host_copy.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <system_error>
#include <thread>

#include "core/settings.hpp"

namespace tgemm {
namespace {

constexpr int64_t kParallelMinElems = int64_t{1} << 18;  // 1 MiB: below it, threads cost more than they save
constexpr int64_t kTaskMinElems = int64_t{1} << 16;      // 256 KiB per part at least
constexpr int kPartsPerThread = 4;

using Clock = std::chrono::steady_clock;

int64_t now_ns()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

void cpu_relax()
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

// 0 on threads that are not the pool's workers (the callers).
thread_local int t_worker_index = 0;

// A fixed set of worker threads serving a queue of jobs. A job is a number
// of independent tasks; the thread that posts it takes tasks too, so every
// job finishes even while all workers are busy with other jobs.
class CopyPool {
public:
    static CopyPool &instance()
    {
        // Never destroyed: workers may still wait on the queue while the
        // process exits, and a destructor would have to join them.
        static CopyPool *pool = new CopyPool();
        return *pool;
    }

    int threads() const { return workers_ + 1; }

    void run(int64_t tasks, const std::function<void(int64_t)> &fn)
    {
        Job job{&fn, tasks};
        bool wake;
        {
            std::lock_guard<std::mutex> lk(mu_);
            queue_.push_back(&job);
            queued_.store(static_cast<int>(queue_.size()), std::memory_order_release);
            wake = sleepers_ > 0;
        }
        if (wake)
            work_cv_.notify_all();
        for (;;) {
            int64_t i;
            {
                std::lock_guard<std::mutex> lk(mu_);
                if (job.next == job.tasks)
                    break;
                i = claim(job);
            }
            fn(i);
            job.done.fetch_add(1, std::memory_order_acq_rel);
        }
        // The parts still running on workers are short: poll for them a
        // while before sleeping.
        const auto until = Clock::now() + std::chrono::microseconds(kCopySpinUs);
        while (job.done.load(std::memory_order_acquire) != job.tasks && Clock::now() < until)
            cpu_relax();
        if (job.done.load(std::memory_order_acquire) != job.tasks) {
            std::unique_lock<std::mutex> lk(mu_);
            done_cv_.wait(lk, [&] { return job.done.load(std::memory_order_acquire) == job.tasks; });
        }
    }

private:
    struct Job {
        const std::function<void(int64_t)> *fn;
        int64_t tasks;
        int64_t next = 0;                // first unclaimed task (under mu_); queued while next < tasks
        std::atomic<int64_t> done{0};
    };

    CopyPool()
    {
        const int hw = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
        const int want_threads = settings().host_copy_threads > 0 ? settings().host_copy_threads
                                                                  : std::min(kCopyThreads, hw);
        const int want = std::max(0, want_threads - 1);
        try {
            for (; workers_ < want; ++workers_) {
                const int index = workers_ + 1;
                std::thread([this, index] { work(index); }).detach();
            }
        } catch (const std::system_error &) {
            // Fewer workers: every job still completes on its own thread.
        }
    }

    // Claims the next task of a job that has one left (lock held).
    int64_t claim(Job &job)
    {
        const int64_t i = job.next++;
        if (job.next == job.tasks) {
            queue_.erase(std::find(queue_.begin(), queue_.end(), &job));
            queued_.store(static_cast<int>(queue_.size()), std::memory_order_release);
        }
        return i;
    }

    void work(int index)
    {
        t_worker_index = index;
        std::unique_lock<std::mutex> lk(mu_);
        for (;;) {
            if (queue_.empty()) {
                // Poll without the lock for a while: the next copy of a
                // call usually follows within microseconds.
                lk.unlock();
                const auto until = Clock::now() + std::chrono::microseconds(kCopySpinUs);
                while (queued_.load(std::memory_order_acquire) == 0 && Clock::now() < until)
                    cpu_relax();
                lk.lock();
                if (queue_.empty()) {
                    ++sleepers_;
                    work_cv_.wait(lk, [&] { return !queue_.empty(); });
                    --sleepers_;
                }
            }
            Job &job = *queue_.front();
            const int64_t i = claim(job);
            const int64_t tasks = job.tasks;
            const std::function<void(int64_t)> &fn = *job.fn;
            lk.unlock();
            fn(i);
            // The job's owner may return as soon as the count is complete:
            // nothing of the job is touched after it.
            const bool last = job.done.fetch_add(1, std::memory_order_acq_rel) + 1 == tasks;
            lk.lock();
            if (last)
                done_cv_.notify_all();
        }
    }

    int workers_ = 0;
    std::mutex mu_;
    std::condition_variable work_cv_, done_cv_;
    std::deque<Job *> queue_;
    std::atomic<int> queued_{0};  // queue_.size(), for polling without the lock
    int sleepers_ = 0;            // workers waiting on work_cv_ (under mu_)
};

// Copies elements [begin, end) of the block, counted down its columns.
void copy_range(float *dst, int64_t dld, const float *src, int64_t sld, int64_t rows, int64_t begin, int64_t end)
{
    int64_t col = begin / rows, row = begin % rows;
    for (int64_t at = begin; at < end; ++col, row = 0) {
        const int64_t len = std::min(rows - row, end - at);
        std::memcpy(dst + col * dld + row, src + col * sld + row, static_cast<size_t>(len) * sizeof(float));
        at += len;
    }
}

}  // namespace

int host_copy_threads()
{
    return CopyPool::instance().threads();
}

void host_copy(float *dst, int64_t dld, const float *src, int64_t sld, int64_t rows, int64_t cols,
               std::vector<CopyPart> *parts)
{
    const int64_t total = rows * cols;
    if (parts != nullptr)
        parts->clear();
    if (total <= 0)
        return;
    if (total < kParallelMinElems) {
        const int64_t t0 = parts != nullptr ? now_ns() : 0;
        copy_range(dst, dld, src, sld, rows, 0, total);
        if (parts != nullptr)
            parts->push_back(CopyPart{t_worker_index, t0, now_ns(), total});
        return;
    }
    CopyPool &pool = CopyPool::instance();
    const int64_t tasks = std::max<int64_t>(
        1, std::min<int64_t>(int64_t{kPartsPerThread} * pool.threads(), total / kTaskMinElems));
    if (parts != nullptr)
        parts->assign(static_cast<size_t>(tasks), CopyPart{});
    pool.run(tasks, [&](int64_t i) {
        const int64_t begin = total * i / tasks, end = total * (i + 1) / tasks;
        if (parts == nullptr) {
            copy_range(dst, dld, src, sld, rows, begin, end);
            return;
        }
        CopyPart &part = (*parts)[static_cast<size_t>(i)];
        part.thread = t_worker_index;
        part.begin_ns = now_ns();
        copy_range(dst, dld, src, sld, rows, begin, end);
        part.end_ns = now_ns();
        part.elems = end - begin;
    });
}

}  // namespace tgemm
