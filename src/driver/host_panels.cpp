// The host-operand executor's side of panel sharing (host_executor.hpp,
// panel_board.hpp): in a spread call whose blocks run at once, the loads of
// A and B that this block makes from the host, queued ahead of its
// kernels, and the ones it copies from the block that makes them.
//
// Only the resident schedule shares (every panel of A and B is loaded once,
// into a place of its own, so a load can be queued at any time), and only
// where A and B come straight from pinned memory and C is not loaded (so
// the copy stream carries nothing that the kernels need earlier).
#include "driver/host_executor.hpp"

namespace tgemm {

// Whether this block shares, and if so its loads of A and B in task order,
// each with the block that loads it from the host: the blocks of a grid row
// (which read the same rows of op(A)) take turns along the order of loads
// of A, those of a grid column along the order of loads of B.
bool HostRun::plan_sharing()
{
    if (share_ == nullptr || !plan_.resident || !reads_ab_ || req_.c_in || ka_ != MemKind::Pinned ||
        kb_ != MemKind::Pinned)
        return false;
    const PanelBoard &board = *share_->board;
    const int64_t row = share_->row(), col = share_->col();
    int64_t loads_a = 0, loads_b = 0;
    for (int64_t t = 0; t < task_count(plan_); ++t) {
        const Task x = host_task(plan_, req_, t);
        if (x.a.load) {
            const Rect &r = x.a.rect;
            panels_.push_back({PanelKey{p_.a + r.row + r.col * p_.lda, r.rows, r.cols},
                               row * board.cols() + loads_a++ % board.cols()});
        }
        if (x.b.load) {
            const Rect &r = x.b.rect;
            panels_.push_back({PanelKey{p_.b + r.row + r.col * p_.ldb, r.rows, r.cols},
                               loads_b++ % board.rows() * board.cols() + col});
        }
    }
    return true;
}

// Queues every load this block makes from the host, in task order, each
// followed by its event, and publishes them.
tgemm_status HostRun::load_own_panels()
{
    tgemm_status st = check_cuda(grow_events(pl_.panel_ready, panels_.size(), cudaEventDisableTiming),
                                 "cudaEventCreateWithFlags");
    std::map<PanelKey, PanelCopy> own;
    size_t i = 0;
    for (int64_t t = 0; st == TGEMM_SUCCESS && t < task_count(plan_); ++t) {
        task_ = t;
        cur_ = host_task(plan_, req_, t);
        for (const bool is_a : {true, false}) {
            const OperandStep &s = is_a ? cur_.a : cur_.b;
            if (!s.load || st != TGEMM_SUCCESS)
                continue;
            const size_t q = i++;
            if (panels_[q].owner != share_->block)
                continue;
            const Slots &slots = is_a ? plan_.a : plan_.b;
            float *dst = arena_ + s.offset;
            if ((st = load(s.rect, is_a ? p_.a : p_.b, is_a ? p_.lda : p_.ldb, MemKind::Pinned, dst, slots.ld,
                           is_a ? 'A' : 'B')) == TGEMM_SUCCESS &&
                (st = record(pl_.panel_ready[q], pl_.in)) == TGEMM_SUCCESS)
                own[panels_[q].key] = PanelCopy{dst, slots.ld, pl_.panel_ready[q]};
        }
    }
    task_ = -1;
    if (st == TGEMM_SUCCESS)
        share_->board->publish(share_->block, own);
    return st;
}

// The next load of A or B in task order (step s of the task being run): a
// panel this block loaded already; else the owner's copy, once its load is
// over, copied over the GPUs' link; else a load from the host. Its event
// follows it.
tgemm_status HostRun::get_panel(const OperandStep &s, const Slots &slots, const float *src, int64_t ld, MemKind kind,
                                char operand)
{
    const size_t q = next_panel_++;
    const PanelLoad &pn = panels_[q];
    if (pn.owner == share_->block)
        return TGEMM_SUCCESS;
    float *dst = arena_ + s.offset;
    PanelCopy from;
    tgemm_status st;
    if (share_->board->take(pn.owner, share_->block, pn.key, &from)) {
        st = observe_gpu(pl_.peer, TraceEvent::P2P, operand, static_cast<uint64_t>(s.rect.rows * s.rect.cols) * 4,
                         [&] {
                             return copy_2d(dst, slots.ld, from.ptr, from.ld, s.rect.rows, s.rect.cols,
                                            cudaMemcpyDefault, pl_.peer);
                         });
        return st != TGEMM_SUCCESS ? st : record(pl_.panel_ready[q], pl_.peer);
    }
    if ((st = load(s.rect, src, ld, kind, dst, slots.ld, operand)) != TGEMM_SUCCESS)
        return st;
    return record(pl_.panel_ready[q], pl_.in);
}

// Stream ks (of kernels) waits for every load of A and B up to the task
// being run that it has not waited for: the task's own, and those of
// earlier tasks whose kernels ran on the other stream.
tgemm_status HostRun::wait_panels(cudaStream_t ks)
{
    size_t &seen = panels_seen_[ks == pl_.comp2 ? 1 : 0];
    for (; seen < next_panel_; ++seen) {
        const tgemm_status st = wait(ks, pl_.panel_ready[seen]);
        if (st != TGEMM_SUCCESS)
            return st;
    }
    return TGEMM_SUCCESS;
}

// Tells the board this block reads no more from the others and closes its
// own panels, waiting for the blocks that read them: before its device
// memory is freed, and at the end of every call of a shared block.
void HostRun::release_panels()
{
    if (share_ == nullptr || released_)
        return;
    released_ = true;
    share_->board->done(share_->block);
    share_->board->close(share_->block);
}

}  // namespace tgemm
