// The executor of one call on host operands: plans it within the device
// memory it may use (host_plan.hpp), allocates the tile buffers, enqueues
// every task of the plan on a leased pipeline's streams (copies in,
// kernels, copies out; in the resident schedule two streams of kernels)
// ordered by events, moves pieces of pageable operands through the pinned
// staging buffers on the host copy threads, and waits for the end. After a failure it works out what C holds (the contract of
// run_host_operands in host_pipeline.hpp).
//
// Its events (copies, kernels, host waits) go to one observer
// (host_observer.hpp), when one is attached.
//
// host_executor.cpp holds the call, its tasks and the recovery after a
// failure; host_transfers.cpp the copies and the staging buffers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "core/problem.hpp"
#include "core/settings.hpp"
#include "core/status.hpp"
#include "runtime/device.hpp"
#include "driver/host_observer.hpp"
#include "driver/host_plan.hpp"
#include "driver/host_pool.hpp"
#include "driver/panel_board.hpp"
#include "tgemm.h"

namespace tgemm {

// Calls fn(r0, c0, rows, cols) for the pieces of a rows x cols block that
// each fit in one staging buffer, down the columns; stops at the first
// failure.
template <typename Fn>
tgemm_status for_each_piece(int64_t rows, int64_t cols, Fn fn)
{
    const int64_t pr = std::min(rows, kStagingElems);
    const int64_t pc = std::min(cols, kStagingElems / pr);
    for (int64_t c0 = 0; c0 < cols; c0 += pc)
        for (int64_t r0 = 0; r0 < rows; r0 += pr) {
            const tgemm_status st = fn(r0, c0, std::min(pr, rows - r0), std::min(pc, cols - c0));
            if (st != TGEMM_SUCCESS)
                return st;
        }
    return TGEMM_SUCCESS;
}

class HostRun {
public:
    // p and the operand kinds as run_host_operands receives them (kc as C is
    // handled); `sizes` carries the preferred plan sizes (PlanRequest's
    // tile_side, chunk_depth, chunk_floor); `observer` may be null; `share`
    // (may be null) is this call's place in a spread call whose blocks
    // share panels (panel_board.hpp); every tile runs under `math`.
    HostRun(const GemmParams &p, MemKind ka, MemKind kb, MemKind kc, const DeviceInfo &dev, Pipeline &pl,
            cudaMemPool_t pool, const PlanRequest &sizes, HostRunObserver *observer, Math math,
            std::vector<Rect> *left, const PanelShare *share = nullptr);

    // The whole call, work ordered after what is queued on `caller`, which
    // waits for all of it. Fills *left (if given) as host_pipeline.hpp says.
    tgemm_status run(cudaStream_t caller);

    // Whether a failure left the pipeline's streams busy or unknown; it
    // must then not be used again.
    bool broken() const { return broken_; }

private:
    // host_executor.cpp: the call and its tasks.
    tgemm_status run_call(cudaStream_t caller);
    tgemm_status wait(cudaStream_t s, cudaEvent_t ev);
    tgemm_status record(cudaEvent_t ev, cudaStream_t s);
    tgemm_status record_wait(cudaEvent_t ev, cudaStream_t s, cudaStream_t waiter);
    tgemm_status allocate_staging();
    tgemm_status budget(uint64_t *bytes, bool *by_setting);
    tgemm_status plan_and_allocate();
    std::string describe_plan() const;
    tgemm_status load_operand(const OperandStep &s, const Slots &slots, cudaEvent_t *free, const float *src,
                              int64_t ld, MemKind kind, char operand, bool *loaded);
    const float *operand(const OperandStep &s, const Slots &slots, const float *src, int64_t ld,
                         int64_t *out_ld) const;
    tgemm_status run_task(int64_t t, const Task &x);
    // host_panels.cpp: panels shared with the other blocks of a spread call.
    bool plan_sharing();
    tgemm_status load_own_panels();
    tgemm_status get_panel(const OperandStep &s, const Slots &slots, const float *src, int64_t ld, MemKind kind,
                           char operand);
    tgemm_status wait_panels(cudaStream_t ks);
    void release_panels();
    cudaStream_t kernel_stream(const Task &x, bool *several_tiles) const;
    tgemm_status defer_store(const Task &x, cudaStream_t ks);
    tgemm_status issue_stores(bool block);
    tgemm_status finish(cudaStream_t caller, tgemm_status st);
    void recover();
    void not_written_back(std::vector<Rect> *left);
    template <typename Fn>
    void for_each_final_part(Fn fn) const;

    // host_transfers.cpp: copies and staging buffers.
    tgemm_status copy_async(float *dst, int64_t dld, const float *src, int64_t sld, int64_t rows, int64_t cols,
                            cudaMemcpyKind kind, cudaStream_t s, char operand);
    tgemm_status copy_2d(float *dst, int64_t dld, const float *src, int64_t sld, int64_t rows, int64_t cols,
                         cudaMemcpyKind kind, cudaStream_t s);
    void stage(float *dst, int64_t dld, const float *src, int64_t sld, int64_t rows, int64_t cols, TraceEvent e,
               char operand);
    tgemm_status host_wait(cudaEvent_t ev, TraceEvent e, const Staging *piece, const char *what);
    tgemm_status acquire(Staging **buf, bool for_out);
    Staging *oldest_out();
    tgemm_status drain(Staging &b);
    void land(Staging &b);
    tgemm_status load(const Rect &r, const float *src, int64_t ld, MemKind kind, float *dst, int64_t dld,
                      char operand);
    tgemm_status store(const Rect &r, const float *src, int64_t dld);
    tgemm_status store_piece(const Rect &piece, const float *src, int64_t dld, Staging *b);

    // The observer's view of the task being enqueued, and of a piece of C
    // waiting in a staging buffer.
    TaskPlace place() const;
    static TaskPlace place_of(const Staging &piece);

    // Runs fn(parts) (parts: where host_copy records its parts, or null),
    // reported to the observer, if any, as host step e.
    template <typename Fn>
    tgemm_status observe_host(TraceEvent e, const TaskPlace &at, char operand, uint64_t bytes, Fn fn)
    {
        if (obs_ == nullptr)
            return fn(nullptr);
        const double start = obs_->now_us();
        const tgemm_status st = fn(obs_->copy_parts());
        obs_->host_step(e, at, operand, bytes, start);
        return st;
    }

    // Runs fn(), which enqueues GPU work on s, reported to the observer, if
    // any, as GPU event e of the current task.
    template <typename Fn>
    tgemm_status observe_gpu(cudaStream_t s, TraceEvent e, char operand, uint64_t bytes, Fn fn)
    {
        if (obs_ != nullptr)
            obs_->gpu_begin(s, e, place(), operand, bytes);
        const tgemm_status st = fn();
        if (obs_ != nullptr)
            obs_->gpu_end(s);
        return st;
    }

    const GemmParams &p_;
    const MemKind ka_, kb_, kc_;
    const DeviceInfo &dev_;
    Pipeline &pl_;
    const cudaMemPool_t pool_;
    HostRunObserver *const obs_;
    const Math math_;
    bool reads_ab_ = false;
    bool pageable_ = false;  // some operand the call reads or writes is pageable host memory
    PlanRequest req_;
    HostPlan plan_;
    float *arena_ = nullptr;  // until finish() frees it
    int64_t task_ = -1;       // the task being enqueued, -1 = none
    Task cur_;
    // Tasks so far that copied anything in, and how many of them each
    // stream of kernels (comp, comp2) has waited for.
    int64_t loads_ = 0;
    int64_t loads_seen_[2] = {0, 0};
    // Pieces of a pageable C whose copies out wait, in order, for a staging
    // buffer that no piece of A or B needs (defer_store): each with its
    // task and the event recorded after the task's kernel (in
    // pl_.stored_c; `waited` once the out stream waits for it). Used in the
    // resident schedule, whose C stays on the device, so that the calling
    // thread does not wait for a kernel to finish while pieces of A and B
    // remain to be staged; from the last task that loads anything on,
    // stores wait as they must.
    struct PendingPiece {
        Rect rect;           // of C
        int64_t offset = 0;  // of its first element, floats from the arena start
        int event = 0;
        bool waited = false;
        int64_t task = -1;
        Task at;
    };
    bool defer_stores_ = false;
    int64_t last_load_task_ = -1;
    std::vector<PendingPiece> pending_;
    size_t pending_head_ = 0;
    std::vector<int> free_events_;  // indices into pl_.stored_c not in use by pending_
    // Failure bookkeeping. Parts of C written back (host copies from
    // staging done; after a failure, also the enqueued_ ones), parts whose
    // last write is enqueued (copies into pinned C, the last kernel of a
    // tile of device or managed C), and what the caller asked for.
    std::vector<Rect> written_, enqueued_;
    std::vector<Rect> *const left_;
    bool broken_ = false;
    // Panel sharing (host_panels.cpp): each load of A or B in task order,
    // whether this block loads it from the host (else another block does,
    // and this one copies it from there), the next one run_task meets, the
    // loads whose events each stream of kernels has waited for, and
    // whether the board has been told this block is done.
    struct PanelLoad {
        PanelKey key;
        int64_t owner = 0;  // the block that loads it from the host
    };
    const PanelShare *const share_;
    bool sharing_ = false;
    std::vector<PanelLoad> panels_;
    size_t next_panel_ = 0;
    size_t panels_seen_[2] = {0, 0};
    bool released_ = false;
};

}  // namespace tgemm
