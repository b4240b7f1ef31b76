// Panels of A and B shared between the blocks of one spread call
// (spread.hpp) that run at once, one block per worker. The blocks of a row
// of the grid read the same rows of op(A), those of a column the same
// columns of op(B); each such panel crosses a host link once, into one
// worker's device memory, and the others copy it from there over the
// GPUs' own links (peer copies), which are several times faster and leave
// the host links to the rest.
//
// Which worker loads a panel from the host: the blocks that need it take
// turns along their load order (ordinal % partners). A worker queues the
// loads of all its own panels at the start of its block, publishes them
// here with an event each, and takes the others' panels as its kernels
// need them: once the event of the other worker's load is seen complete
// on the host, so that a copy never reads a panel whose load failed or
// was never made. A panel that is not published (its owner's plan cut the
// operand otherwise, or the owner failed or never ran) is loaded from the
// host as without sharing. Pure bookkeeping: no CUDA call but
// cudaEventQuery.
//
// A worker keeps its device memory until every worker that took one of its
// panels is done (its streams idle, so its copies are over); it closes its
// panels to new takers first. Each worker marks itself done before it waits
// for its own readers, so two workers that read from each other do not wait
// for each other. A worker that has not published a little while after
// another looks for its panels (it may be waiting for a pipeline that a
// block of this call holds) is passed over for the rest of the call.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include <cuda_runtime_api.h>

namespace tgemm {

// A panel: the part of a host operand it copies (its first element's
// address and extent; the leading dimension is the operand's).
struct PanelKey {
    const float *first = nullptr;
    int64_t rows = 0, cols = 0;
    bool operator<(const PanelKey &o) const
    {
        return std::tie(first, rows, cols) < std::tie(o.first, o.rows, o.cols);
    }
};

// Where a published panel lies on its owner's device, and the event
// recorded after its load.
struct PanelCopy {
    const float *ptr = nullptr;
    int64_t ld = 0;
    cudaEvent_t ready = nullptr;
};

class PanelBoard {
public:
    // A grid of rows x cols blocks, block b = row * cols + col.
    PanelBoard(int64_t rows, int64_t cols);

    int64_t rows() const { return rows_; }
    int64_t cols() const { return cols_; }

    // Block b's panels that it loads itself, queued; other blocks may take
    // them from now on. Once per block, and not after close(b).
    void publish(int64_t b, const std::map<PanelKey, PanelCopy> &panels);

    // Panel k of block `owner` for block `reader`, once its load is seen
    // complete, in *out; false when it is not to be had (not published,
    // closed, or its load failed): then load it from the host. Waits a
    // little for an owner that has not published yet.
    bool take(int64_t owner, int64_t reader, const PanelKey &k, PanelCopy *out);

    // Block b reads nothing more from the others' memory.
    void done(int64_t b);
    // Block b's panels are not to be taken any more (it failed, finished,
    // or never ran); waits until every block that took one is done.
    void close(int64_t b);

private:
    enum class State : unsigned char { Waiting, Published, Closed };
    struct Block {
        State state = State::Waiting;
        bool done = false;
        std::map<PanelKey, PanelCopy> panels;
        std::vector<int64_t> readers;  // blocks that took or are taking its panels
    };

    std::mutex mu_;
    std::condition_variable cv_;
    const int64_t rows_, cols_;
    std::vector<Block> blocks_;
};

// What one block of a spread call shares: the call's board and the block's
// place in its grid.
struct PanelShare {
    PanelBoard *board = nullptr;
    int64_t block = 0;
    int64_t row() const { return block / board->cols(); }
    int64_t col() const { return block % board->cols(); }
};

}  // namespace tgemm
