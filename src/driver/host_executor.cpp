// The host-operand executor: the call, its tasks, and what a failure leaves
// (host_executor.hpp). The copies and staging buffers it uses are in
// host_transfers.cpp.
#include "driver/host_executor.hpp"

#include <cstdio>
#include <set>
#include <tuple>

#include "core/check.hpp"
#include "core/settings.hpp"
#include "driver/device_call.hpp"

namespace tgemm {
namespace {

// Device memory left free for everything else unless
// TGEMM_DEVICE_MEMORY_LIMIT asks for less: the CUDA runtime's own needs,
// the dispatcher's workspace (split-K sums and packed operands, bounded,
// and optional: without it the plan needs none), other users of the GPU.
constexpr uint64_t kDeviceReserve = uint64_t{256} << 20;

// Joins rectangles of a tiling that meet along a whole side: runs down
// each column of them, then runs across each row of the result.
void join_rects(std::vector<Rect> *v)
{
    const auto down = [](const Rect &a, const Rect &b) {
        return std::make_tuple(a.col, a.cols, a.row) < std::make_tuple(b.col, b.cols, b.row);
    };
    const auto across = [](const Rect &a, const Rect &b) {
        return std::make_tuple(a.row, a.rows, a.col) < std::make_tuple(b.row, b.rows, b.col);
    };
    std::sort(v->begin(), v->end(), down);
    std::vector<Rect> out;
    for (const Rect &r : *v)
        if (!out.empty() && out.back().col == r.col && out.back().cols == r.cols &&
            out.back().row + out.back().rows == r.row)
            out.back().rows += r.rows;
        else
            out.push_back(r);
    std::sort(out.begin(), out.end(), across);
    v->clear();
    for (const Rect &r : out)
        if (!v->empty() && v->back().row == r.row && v->back().rows == r.rows &&
            v->back().col + v->back().cols == r.col)
            v->back().cols += r.cols;
        else
            v->push_back(r);
}

const char *kind_name(MemKind k)
{
    switch (k) {
    case MemKind::Unused: return "unused";
    case MemKind::Pageable: return "pageable";
    case MemKind::Pinned: return "pinned";
    case MemKind::Device: return "device";
    case MemKind::Managed: return "managed";
    }
    return "?";
}

const char *cache_name(Cache c)
{
    switch (c) {
    case Cache::InPlace: return "in-place";
    case Cache::Panel: return "panel";
    case Cache::Whole: return "whole";
    case Cache::Chunk: return "chunk";
    case Cache::Tile: return "tile";
    }
    return "?";
}

}  // namespace

HostRun::HostRun(const GemmParams &p, MemKind ka, MemKind kb, MemKind kc, const DeviceInfo &dev, Pipeline &pl,
                 cudaMemPool_t pool, const PlanRequest &sizes, HostRunObserver *observer, Math math,
                 std::vector<Rect> *left, const PanelShare *share)
    : p_(p), ka_(ka), kb_(kb), kc_(kc), dev_(dev), pl_(pl), pool_(pool), obs_(observer), math_(math), left_(left),
      share_(share)
{
    reads_ab_ = sgemm_reads_ab(p.k, p.alpha);
    req_.m = p.m;
    req_.n = p.n;
    req_.k = reads_ab_ ? p.k : 0;
    req_.trans_a = p.trans_a;
    req_.trans_b = p.trans_b;
    req_.a_host = is_host(ka);
    req_.b_host = is_host(kb);
    req_.c_host = is_host(kc);
    req_.c_in = req_.c_host && p.beta != 0.0f;
    req_.tile_side = sizes.tile_side;
    req_.chunk_depth = sizes.chunk_depth;
    req_.chunk_floor = sizes.chunk_floor;
    pageable_ = kc == MemKind::Pageable || (reads_ab_ && (ka == MemKind::Pageable || kb == MemKind::Pageable));
}

tgemm_status HostRun::run(cudaStream_t caller)
{
    tgemm_status st = obs_ != nullptr ? obs_->begin_call(pl_.in) : TGEMM_SUCCESS;
    if (st == TGEMM_SUCCESS) {
        st = run_call(caller);
        if (obs_ != nullptr)
            obs_->end_call(st, plan_.mb > 0 ? describe_plan() : std::string());
    }
    release_panels();
    if (left_ != nullptr) {
        left_->clear();
        if (st != TGEMM_SUCCESS)
            not_written_back(left_);
    }
    return st;
}

// Once anything is enqueued, failures too end in finish().
tgemm_status HostRun::run_call(cudaStream_t caller)
{
    tgemm_status st = allocate_staging();
    if (st != TGEMM_SUCCESS)
        return st;
    if ((st = check_cuda(cudaEventRecord(pl_.start, caller), "cudaEventRecord (caller's stream)")) == TGEMM_SUCCESS)
        st = wait(pl_.comp, pl_.start);
    // Host threads read and write pageable operands themselves, so they
    // start only after the work queued on the caller's stream, which may
    // write those operands (host functions), is done.
    if (st == TGEMM_SUCCESS && pageable_)
        st = check_cuda(cudaEventSynchronize(pl_.start), "cudaEventSynchronize (caller's stream)");
    if (st == TGEMM_SUCCESS)
        st = plan_and_allocate();
    // The arena is stream-ordered on the compute stream; the copy streams
    // may use it once they wait for this point.
    if (st == TGEMM_SUCCESS && (st = record_wait(pl_.ready, pl_.comp, pl_.in)) == TGEMM_SUCCESS &&
        (st = wait(pl_.out, pl_.ready)) == TGEMM_SUCCESS)
        st = wait(pl_.comp2, pl_.ready);
    if (st == TGEMM_SUCCESS && (sharing_ = plan_sharing()) &&
        (st = wait(pl_.peer, pl_.ready)) == TGEMM_SUCCESS)
        st = load_own_panels();
    // A block of a shared call that shares nothing says so at once, so that
    // the others do not wait for its panels.
    if (st == TGEMM_SUCCESS && share_ != nullptr && !sharing_)
        share_->board->publish(share_->block, {});
    for (int64_t t = 0; st == TGEMM_SUCCESS && t < task_count(plan_); ++t)
        st = run_task(t, host_task(plan_, req_, t));
    if (st == TGEMM_SUCCESS)
        st = issue_stores(true);
    // After a failure, the pieces still waiting are not written back.
    pending_.clear();
    pending_head_ = 0;
    return finish(caller, st);
}

tgemm_status HostRun::wait(cudaStream_t s, cudaEvent_t ev)
{
    return check_cuda(cudaStreamWaitEvent(s, ev, 0), "cudaStreamWaitEvent");
}

tgemm_status HostRun::record(cudaEvent_t ev, cudaStream_t s)
{
    return check_cuda(cudaEventRecord(ev, s), "cudaEventRecord");
}

// Stream `waiter` waits for what is enqueued on `s` so far.
tgemm_status HostRun::record_wait(cudaEvent_t ev, cudaStream_t s, cudaStream_t waiter)
{
    const tgemm_status st = record(ev, s);
    return st != TGEMM_SUCCESS ? st : wait(waiter, ev);
}

// All staging buffers exist before any work is enqueued, so a call that
// fails for lack of pinned memory has not touched C.
tgemm_status HostRun::allocate_staging()
{
    if (!pageable_)
        return TGEMM_SUCCESS;
    for (Staging &b : pl_.staging) {
        if (b.ptr != nullptr)
            continue;
        const cudaError_t e = cudaHostAlloc(reinterpret_cast<void **>(&b.ptr), kStagingBytes, cudaHostAllocPortable);
        if (e != cudaSuccess) {
            b.ptr = nullptr;
            return fail_cuda(e, "cudaHostAlloc (staging buffer)");
        }
    }
    return TGEMM_SUCCESS;
}

// Device memory this call may use: free memory plus what the tile pool
// holds unused, less the reserve, and at most the setting.
tgemm_status HostRun::budget(uint64_t *bytes, bool *by_setting)
{
    size_t free_b = 0, total_b = 0;
    uint64_t reserved = 0, used = 0;
    tgemm_status st;
    if ((st = check_cuda(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo")) != TGEMM_SUCCESS ||
        (st = check_cuda(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReservedMemCurrent, &reserved),
                         "cudaMemPoolGetAttribute")) != TGEMM_SUCCESS ||
        (st = check_cuda(cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrUsedMemCurrent, &used),
                         "cudaMemPoolGetAttribute")) != TGEMM_SUCCESS)
        return st;
    const uint64_t avail = free_b + (reserved - used);
    *bytes = avail > kDeviceReserve ? avail - kDeviceReserve : 0;
    const uint64_t limit = settings().device_memory_limit;
    *by_setting = limit != 0 && limit < *bytes;
    if (*by_setting)
        *bytes = limit;
    return TGEMM_SUCCESS;
}

// Plans within the budget and allocates the arena and the C slots' events;
// when the allocation fails anyway (other allocations since the budget was
// read), plans again within half the failed size.
tgemm_status HostRun::plan_and_allocate()
{
    bool by_setting = false;
    tgemm_status st = budget(&req_.budget, &by_setting);
    if (st != TGEMM_SUCCESS)
        return st;
    for (;;) {
        uint64_t need = 0;
        if (!plan_host(req_, &plan_, &need))
            return fail(TGEMM_ERROR_OUT_OF_MEMORY,
                        "host operands need at least %llu bytes of device memory (with the smallest tiles); %llu "
                        "are available (%s)",
                        static_cast<unsigned long long>(need), static_cast<unsigned long long>(req_.budget),
                        by_setting ? "TGEMM_DEVICE_MEMORY_LIMIT" : "free device memory less a reserve of 256 MiB");
        void *arena = nullptr;
        const cudaError_t e = cudaMallocFromPoolAsync(&arena, arena_bytes(plan_), pool_, pl_.comp);
        if (e == cudaSuccess) {
            arena_ = static_cast<float *>(arena);
            break;
        }
        if (e != cudaErrorMemoryAllocation)
            return fail_cuda(e, "cudaMallocFromPoolAsync (tile buffers)");
        (void)cudaGetLastError();
        req_.budget = arena_bytes(plan_) / 2;
    }
    if ((st = check_cuda(grow_events(pl_.free_c, static_cast<size_t>(plan_.c.count), cudaEventDisableTiming),
                         "cudaEventCreateWithFlags")) != TGEMM_SUCCESS)
        return st;
    defer_stores_ = kc_ == MemKind::Pageable && plan_.c.cache == Cache::Whole;
    // The pipeline's events for deferred copies are all free when a call
    // starts (the call before it ended on every stream): reused, not grown.
    free_events_.clear();
    for (size_t i = pl_.stored_c.size(); i > 0; --i)
        free_events_.push_back(static_cast<int>(i - 1));
    for (int64_t t = task_count(plan_) - 1; defer_stores_ && t >= 0 && last_load_task_ < 0; --t) {
        const Task x = host_task(plan_, req_, t);
        if (x.a.load || x.b.load || x.c.load)
            last_load_task_ = t;
    }
    if (settings().verbose >= 2)
        std::fprintf(stderr, "tgemm: host plan %s\n", describe_plan().c_str());
    return TGEMM_SUCCESS;
}

std::string HostRun::describe_plan() const
{
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "m=%lld n=%lld k=%lld A=%s B=%s C=%s tile=%lldx%lldx%lld blocks=%lldx%lldx%lld order=%s "
                  "cache_a=%s cache_b=%s device_bytes=%llu budget=%llu link_mib=%.1f lead=%lld c_slots=%d "
                  "link_bytes=%.0f schedule=%s open_depth=%lld tasks=%lld",
                  static_cast<long long>(p_.m), static_cast<long long>(p_.n), static_cast<long long>(p_.k),
                  kind_name(ka_), kind_name(kb_), kind_name(kc_), static_cast<long long>(plan_.mt),
                  static_cast<long long>(plan_.nt), static_cast<long long>(plan_.kt),
                  static_cast<long long>(plan_.mb), static_cast<long long>(plan_.nb),
                  static_cast<long long>(plan_.kb), plan_.rows_outer ? "rows" : "columns",
                  cache_name(plan_.a.cache), cache_name(plan_.b.cache),
                  static_cast<unsigned long long>(arena_bytes(plan_)),
                  static_cast<unsigned long long>(req_.budget), plan_.link_bytes / 1048576.0,
                  static_cast<long long>(plan_.lead), plan_.c.count, plan_.link_bytes,
                  plan_.resident ? "resident" : "tiled", static_cast<long long>(plan_.open_depth),
                  static_cast<long long>(task_count(plan_)));
    return buf;
}

TaskPlace HostRun::place() const
{
    TaskPlace at;
    at.task = task_;
    if (task_ >= 0) {
        at.tile_row = cur_.i0 / plan_.mt;
        at.tile_col = cur_.j0 / plan_.nt;
        at.chunk = cur_.k0 / std::max<int64_t>(plan_.kt, 1);
    }
    return at;
}

TaskPlace HostRun::place_of(const Staging &piece)
{
    TaskPlace at;
    at.task = piece.task;
    at.tile_row = piece.tile_row;
    at.tile_col = piece.tile_col;
    return at;
}

// Copies in one operand's part of task x when the plan says so.
tgemm_status HostRun::load_operand(const OperandStep &s, const Slots &slots, cudaEvent_t *free, const float *src,
                                   int64_t ld, MemKind kind, char operand, bool *loaded)
{
    if (!s.load)
        return TGEMM_SUCCESS;
    tgemm_status st;
    if (s.reuse && (st = wait(pl_.in, free[s.slot])) != TGEMM_SUCCESS)
        return st;
    *loaded = true;
    return load(s.rect, src, ld, kind, arena_ + s.offset, slots.ld, operand);
}

// The kernel's view of A or B: its slot, or the operand in place.
const float *HostRun::operand(const OperandStep &s, const Slots &slots, const float *src, int64_t ld,
                              int64_t *out_ld) const
{
    if (slots.cache == Cache::InPlace) {
        *out_ld = ld;
        return src + s.rect.row + s.rect.col * ld;
    }
    *out_ld = slots.ld;
    return arena_ + s.offset;
}

// The stream of task x's kernel: in the resident schedule, a kernel within
// one tile runs on the stream of its outer block's parity, so that the
// next tile's kernel (in the opening and the lead, mostly of the other
// outer block) starts on the SMs that the last wave of this one's blocks
// leaves idle, while each tile's kernels stay in order on one stream. A
// kernel over several tiles runs on comp after both streams' earlier
// kernels, and both streams' later kernels follow it (*several_tiles).
cudaStream_t HostRun::kernel_stream(const Task &x, bool *several_tiles) const
{
    *several_tiles = false;
    if (!plan_.resident)
        return pl_.comp;
    *several_tiles =
        x.i0 / plan_.mt != (x.i0 + x.rows - 1) / plan_.mt || x.j0 / plan_.nt != (x.j0 + x.cols - 1) / plan_.nt;
    const int64_t outer = plan_.rows_outer ? x.i0 / plan_.mt : x.j0 / plan_.nt;
    return !*several_tiles && outer % 2 == 1 ? pl_.comp2 : pl_.comp;
}

tgemm_status HostRun::run_task(int64_t t, const Task &x)
{
    task_ = t;
    cur_ = x;
    tgemm_status st;
    bool loaded = false;
    const bool c_host = plan_.c.cache != Cache::InPlace;
    if (sharing_) {
        if ((x.a.load && (st = get_panel(x.a, plan_.a, p_.a, p_.lda, ka_, 'A')) != TGEMM_SUCCESS) ||
            (x.b.load && (st = get_panel(x.b, plan_.b, p_.b, p_.ldb, kb_, 'B')) != TGEMM_SUCCESS))
            return st;
    } else if ((st = load_operand(x.a, plan_.a, pl_.free_a, p_.a, p_.lda, ka_, 'A', &loaded)) != TGEMM_SUCCESS ||
               (st = load_operand(x.b, plan_.b, pl_.free_b, p_.b, p_.ldb, kb_, 'B', &loaded)) != TGEMM_SUCCESS) {
        return st;
    }
    // A slot of C is written (by the copy in, else by the kernel) only
    // after the tile it held before has left for the host.
    if (c_host && x.c.reuse && (st = wait(x.c.load ? pl_.in : pl_.comp, pl_.free_c[x.c.slot])) != TGEMM_SUCCESS)
        return st;
    if (x.c.load) {
        loaded = true;
        if ((st = load(x.c.rect, p_.c, p_.ldc, kc_, arena_ + x.c.offset, plan_.c.ld, 'C')) != TGEMM_SUCCESS)
            return st;
    }
    // The kernel waits for every copy in enqueued so far that its stream has
    // not waited for: its own, and, with two streams of kernels, those of
    // earlier tasks whose kernels ran on the other stream and whose parts
    // of A and B it reads too.
    bool several_tiles = false;
    const cudaStream_t ks = kernel_stream(x, &several_tiles);
    int64_t &seen = loads_seen_[ks == pl_.comp2 ? 1 : 0];
    loads_ += loaded;
    if (seen < loads_ && (st = record_wait(pl_.loaded, pl_.in, ks)) != TGEMM_SUCCESS)
        return st;
    seen = loads_;
    if (sharing_ && (st = wait_panels(ks)) != TGEMM_SUCCESS)
        return st;
    if (several_tiles && (st = record_wait(pl_.joined, pl_.comp2, pl_.comp)) != TGEMM_SUCCESS)
        return st;

    GemmParams d = p_;
    d.m = x.rows;
    d.n = x.cols;
    d.k = x.depth;
    if (reads_ab_) {
        d.a = operand(x.a, plan_.a, p_.a, p_.lda, &d.lda);
        d.b = operand(x.b, plan_.b, p_.b, p_.ldb, &d.ldb);
    }
    d.c = c_host ? arena_ + x.c.offset : p_.c + x.i0 + x.j0 * p_.ldc;
    d.ldc = c_host ? plan_.c.ld : p_.ldc;
    d.beta = x.first ? p_.beta : 1.0f;
    st = observe_gpu(ks, TraceEvent::Kernel, '-', 0, [&] { return run_device_operands(d, dev_, ks, math_); });
    if (st != TGEMM_SUCCESS || (several_tiles && (st = record_wait(pl_.joined, pl_.comp, pl_.comp2)) != TGEMM_SUCCESS))
        return st;
    if (!c_host && x.last)
        enqueued_.push_back(Rect{x.i0, x.j0, x.rows, x.cols});
    const auto slotted = [](Cache c) { return c == Cache::Panel || c == Cache::Chunk; };
    if (slotted(plan_.a.cache) && (st = record(pl_.free_a[x.a.slot], pl_.comp)) != TGEMM_SUCCESS)
        return st;
    if (slotted(plan_.b.cache) && (st = record(pl_.free_b[x.b.slot], pl_.comp)) != TGEMM_SUCCESS)
        return st;
    if (!c_host || !x.last)
        return defer_stores_ ? issue_stores(t >= last_load_task_) : TGEMM_SUCCESS;
    if (defer_stores_)
        return defer_store(x, ks);
    if ((st = record_wait(pl_.computed, ks, pl_.out)) != TGEMM_SUCCESS ||
        (st = store(x.c.rect, arena_ + x.c.offset, plan_.c.ld)) != TGEMM_SUCCESS)
        return st;
    return record(pl_.free_c[x.c.slot], pl_.out);
}

// Queues the copies out of task x's part of C (a pageable C that stays on
// the device) behind an event after its kernel (on ks), then issues what
// it may.
tgemm_status HostRun::defer_store(const Task &x, cudaStream_t ks)
{
    int ev = 0;
    if (!free_events_.empty()) {
        ev = free_events_.back();
        free_events_.pop_back();
    } else {
        ev = static_cast<int>(pl_.stored_c.size());
        const tgemm_status st = check_cuda(grow_events(pl_.stored_c, pl_.stored_c.size() + 1, cudaEventDisableTiming),
                                           "cudaEventCreateWithFlags");
        if (st != TGEMM_SUCCESS)
            return st;
    }
    tgemm_status st = record(pl_.stored_c[static_cast<size_t>(ev)], ks);
    if (st != TGEMM_SUCCESS) {
        free_events_.push_back(ev);
        return st;
    }
    (void)for_each_piece(x.c.rect.rows, x.c.rect.cols, [&](int64_t r0, int64_t c0, int64_t pr, int64_t pc) {
        PendingPiece q;
        q.rect = Rect{x.c.rect.row + r0, x.c.rect.col + c0, pr, pc};
        q.offset = x.c.offset + r0 + c0 * plan_.c.ld;
        q.event = ev;
        q.task = task_;
        q.at = x;
        pending_.push_back(q);
        return TGEMM_SUCCESS;
    });
    return issue_stores(task_ >= last_load_task_);
}

// Issues the deferred copies out in order: while a staging buffer is free
// beyond the kInputBuffers kept for A and B, or, with `block`, all of
// them, waiting for buffers as acquire() does.
tgemm_status HostRun::issue_stores(bool block)
{
    const int64_t task = task_;
    const Task cur = cur_;
    tgemm_status st = TGEMM_SUCCESS;
    while (st == TGEMM_SUCCESS && pending_head_ < pending_.size()) {
        int free_count = 0;
        for (const Staging &b : pl_.staging)
            free_count += b.out == nullptr;
        if (!block && free_count <= kInputBuffers)
            break;
        PendingPiece &q = pending_[pending_head_];
        // The piece is traced as part of its own task.
        task_ = q.task;
        cur_ = q.at;
        if (!q.waited) {
            if ((st = wait(pl_.out, pl_.stored_c[static_cast<size_t>(q.event)])) != TGEMM_SUCCESS)
                break;
            for (size_t i = pending_head_; i < pending_.size() && pending_[i].event == q.event; ++i)
                pending_[i].waited = true;
        }
        Staging *b = nullptr;
        if ((st = acquire(&b, true)) != TGEMM_SUCCESS ||
            (st = store_piece(q.rect, arena_ + q.offset, plan_.c.ld, b)) != TGEMM_SUCCESS)
            break;
        ++pending_head_;
        if (pending_head_ == pending_.size() || pending_[pending_head_].event != q.event)
            free_events_.push_back(q.event);
    }
    task_ = task;
    cur_ = cur;
    if (pending_head_ == pending_.size()) {
        pending_.clear();
        pending_head_ = 0;
    }
    return st;
}

// Joins the copy streams and the second stream of kernels into the compute
// stream, frees the arena there, makes the caller's stream wait; moves the
// pieces of a pageable C still in staging buffers into place as they
// arrive, and waits for the end. Runs after errors too: recover() then
// leaves the pipeline idle, or marks it broken.
tgemm_status HostRun::finish(cudaStream_t caller, tgemm_status st)
{
    task_ = -1;
    cudaError_t e = cudaEventRecord(pl_.in_done, pl_.in);
    if (e == cudaSuccess)
        e = cudaEventRecord(pl_.out_done, pl_.out);
    if (e == cudaSuccess)
        e = cudaEventRecord(pl_.joined, pl_.comp2);
    if (e == cudaSuccess)
        e = cudaStreamWaitEvent(pl_.comp, pl_.joined, 0);
    if (e == cudaSuccess)
        e = cudaStreamWaitEvent(pl_.comp, pl_.in_done, 0);
    if (e == cudaSuccess)
        e = cudaStreamWaitEvent(pl_.comp, pl_.out_done, 0);
    // Only a block that shares panels copies anything on the peer stream.
    if (e == cudaSuccess && sharing_ && (e = cudaEventRecord(pl_.peer_done, pl_.peer)) == cudaSuccess)
        e = cudaStreamWaitEvent(pl_.comp, pl_.peer_done, 0);
    // Another block may still read the panels in the arena of a shared
    // one: it is freed after the end, once they are done.
    if (e == cudaSuccess && arena_ != nullptr && share_ == nullptr &&
        (e = cudaFreeAsync(arena_, pl_.comp)) == cudaSuccess)
        arena_ = nullptr;
    if (e == cudaSuccess)
        e = cudaEventRecord(pl_.end, pl_.comp);
    if (e == cudaSuccess)
        e = cudaStreamWaitEvent(caller, pl_.end, 0);
    if (e != cudaSuccess && st == TGEMM_SUCCESS)
        st = fail_cuda(e, "finishing a call on host operands");
    // The pieces of C left in staging, oldest first: each arrived with the
    // copies before it, while later kernels may still run.
    for (Staging *b = oldest_out(); b != nullptr && st == TGEMM_SUCCESS; b = oldest_out())
        st = drain(*b);
    if (st == TGEMM_SUCCESS) {
        (void)observe_host(TraceEvent::WaitEnd, place(), '-', 0, [&](std::vector<CopyPart> *) {
            e = cudaEventSynchronize(pl_.end);
            return TGEMM_SUCCESS;
        });
        if (e == cudaSuccess && arena_ != nullptr) {
            release_panels();
            if ((e = cudaFreeAsync(arena_, pl_.comp)) == cudaSuccess)
                arena_ = nullptr;
        }
        if (e == cudaSuccess)
            return TGEMM_SUCCESS;
        st = fail_cuda(e, "finishing a call on host operands");
    }
    recover();
    return st;
}

// After a failure: waits for the five streams to go idle, asking each
// twice, since a failure that persists is a broken context, in which
// nothing runs any more. Once they are idle, every copy and kernel enqueued
// has finished and nothing else will: the pieces of C waiting in staging go
// into place, the parts of C whose last write was enqueued are written
// back, and the arena goes back to the pool (if freeing it fails, it stays
// allocated: there is nothing else to do). Otherwise nothing more is
// written back and the pipeline is broken.
void HostRun::recover()
{
    for (cudaStream_t s : {pl_.in, pl_.comp, pl_.comp2, pl_.out, pl_.peer})
        if (cudaStreamSynchronize(s) != cudaSuccess && cudaStreamSynchronize(s) != cudaSuccess)
            broken_ = true;
    // Whatever this block's streams did is over; blocks reading its panels
    // finish before its memory goes.
    release_panels();
    if (broken_) {
        for (Staging &b : pl_.staging)
            b.out = nullptr;
        return;
    }
    for (Staging *b = oldest_out(); b != nullptr; b = oldest_out())
        land(*b);
    written_.insert(written_.end(), enqueued_.begin(), enqueued_.end());
    if (arena_ != nullptr &&
        (cudaFreeAsync(arena_, pl_.comp) == cudaSuccess || cudaFreeAsync(arena_, pl_.comp) == cudaSuccess))
        arena_ = nullptr;
}

// Calls fn(rect) for each part of C that leaves the device whole, as the
// plan has them: every tile (tiled schedule), or every task's part where
// it is the part's last (resident schedule).
template <typename Fn>
void HostRun::for_each_final_part(Fn fn) const
{
    if (plan_.resident) {
        for (int64_t t = 0; t < task_count(plan_); ++t) {
            const Task x = host_task(plan_, req_, t);
            if (x.last)
                fn(Rect{x.i0, x.j0, x.rows, x.cols});
        }
        return;
    }
    for (int64_t bi = 0; bi < plan_.mb; ++bi)
        for (int64_t bj = 0; bj < plan_.nb; ++bj)
            fn(Rect{bi * plan_.mt, bj * plan_.nt, std::min(plan_.mt, p_.m - bi * plan_.mt),
                    std::min(plan_.nt, p_.n - bj * plan_.nt)});
}

// The parts of C not written back, after a failure: all of C when none is,
// else each part of C the plan writes back whole (for a pageable C, each
// piece of a part that has pieces written back) missing from written_,
// joined where they meet along a whole side.
void HostRun::not_written_back(std::vector<Rect> *left)
{
    if (written_.empty()) {
        left->push_back(Rect{0, 0, p_.m, p_.n});
        return;
    }
    const auto key = [](const Rect &r) { return std::make_tuple(r.row, r.col, r.rows, r.cols); };
    std::set<std::tuple<int64_t, int64_t, int64_t, int64_t>> written;
    for (const Rect &r : written_)
        written.insert(key(r));
    for_each_final_part([&](const Rect &t) {
        if (written.count(key(t)) != 0)
            return;
        std::vector<Rect> pieces;
        bool some = false;
        if (kc_ == MemKind::Pageable)
            (void)for_each_piece(t.rows, t.cols, [&](int64_t r0, int64_t c0, int64_t pr, int64_t pc) {
                const Rect q{t.row + r0, t.col + c0, pr, pc};
                if (written.count(key(q)) != 0)
                    some = true;
                else
                    pieces.push_back(q);
                return TGEMM_SUCCESS;
            });
        if (some)
            left->insert(left->end(), pieces.begin(), pieces.end());
        else
            left->push_back(t);
    });
    join_rects(left);
}

}  // namespace tgemm
