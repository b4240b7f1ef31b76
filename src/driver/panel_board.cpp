#include "driver/panel_board.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

namespace tgemm {
namespace {

// How long a worker sleeps between looks at a load still under way: a
// panel takes a millisecond or more to cross a host link.
constexpr std::chrono::microseconds kPoll{20};
// How long a worker waits for another to publish before it passes it over:
// workers start together, and plan in well under this.
constexpr std::chrono::milliseconds kLatePublish{20};

}  // namespace

PanelBoard::PanelBoard(int64_t rows, int64_t cols)
    : rows_(rows), cols_(cols), blocks_(static_cast<size_t>(rows * cols))
{
}

void PanelBoard::publish(int64_t b, const std::map<PanelKey, PanelCopy> &panels)
{
    std::lock_guard<std::mutex> lock(mu_);
    Block &x = blocks_[static_cast<size_t>(b)];
    if (x.state == State::Waiting) {
        x.state = State::Published;
        x.panels = panels;
    }
    cv_.notify_all();
}

bool PanelBoard::take(int64_t owner, int64_t reader, const PanelKey &k, PanelCopy *out)
{
    Block &x = blocks_[static_cast<size_t>(owner)];
    for (;;) {
        {
            std::unique_lock<std::mutex> lock(mu_);
            if (!cv_.wait_for(lock, kLatePublish, [&] { return x.state != State::Waiting; })) {
                x.state = State::Closed;
                cv_.notify_all();
            }
            if (x.state != State::Published)
                return false;
            const auto it = x.panels.find(k);
            if (it == x.panels.end())
                return false;
            *out = it->second;
            if (std::find(x.readers.begin(), x.readers.end(), reader) == x.readers.end())
                x.readers.push_back(reader);
        }
        const cudaError_t e = cudaEventQuery(out->ready);
        if (e == cudaSuccess)
            return true;
        if (e != cudaErrorNotReady) {
            // The owner's context failed: none of its panels is to be
            // trusted.
            std::lock_guard<std::mutex> lock(mu_);
            x.state = State::Closed;
            cv_.notify_all();
            return false;
        }
        std::this_thread::sleep_for(kPoll);
    }
}

void PanelBoard::done(int64_t b)
{
    std::lock_guard<std::mutex> lock(mu_);
    blocks_[static_cast<size_t>(b)].done = true;
    cv_.notify_all();
}

void PanelBoard::close(int64_t b)
{
    std::unique_lock<std::mutex> lock(mu_);
    Block &x = blocks_[static_cast<size_t>(b)];
    x.state = State::Closed;
    cv_.notify_all();
    cv_.wait(lock, [&] {
        for (const int64_t r : x.readers)
            if (r != b && !blocks_[static_cast<size_t>(r)].done)
                return false;
        return true;
    });
}

}  // namespace tgemm
