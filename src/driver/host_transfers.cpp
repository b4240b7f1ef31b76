// The host-operand executor's transfers (host_executor.hpp): 2D copies over
// the link, pieces of pageable operands staged through the pipeline's
// pinned buffers on the host copy threads, and the pieces of C that wait in
// those buffers until they are copied into C.
#include "driver/host_executor.hpp"

#include "runtime/host_copy.hpp"

namespace tgemm {

// A 2D copy, reported as h2d or d2h.
tgemm_status HostRun::copy_async(float *dst, int64_t dld, const float *src, int64_t sld, int64_t rows, int64_t cols,
                                 cudaMemcpyKind kind, cudaStream_t s, char operand)
{
    return observe_gpu(s, kind == cudaMemcpyHostToDevice ? TraceEvent::H2D : TraceEvent::D2H, operand,
                       static_cast<uint64_t>(rows * cols) * sizeof(float),
                       [&] { return copy_2d(dst, dld, src, sld, rows, cols, kind, s); });
}

// Where a pitch is beyond what cudaMemcpy2D takes (huge leading
// dimensions), one copy per column.
tgemm_status HostRun::copy_2d(float *dst, int64_t dld, const float *src, int64_t sld, int64_t rows, int64_t cols,
                              cudaMemcpyKind kind, cudaStream_t s)
{
    const size_t width = static_cast<size_t>(rows) * sizeof(float);
    const char *what = kind == cudaMemcpyHostToDevice   ? "cudaMemcpy2DAsync (host to device)"
                       : kind == cudaMemcpyDeviceToHost ? "cudaMemcpy2DAsync (device to host)"
                                                        : "cudaMemcpy2DAsync (from another device)";
    if (cols > 1 && dld * 4 <= pl_.max_pitch && sld * 4 <= pl_.max_pitch)
        return check_cuda(cudaMemcpy2DAsync(dst, dld * sizeof(float), src, sld * sizeof(float), width,
                                            static_cast<size_t>(cols), kind, s),
                          what);
    for (int64_t j = 0; j < cols; ++j) {
        const tgemm_status st = check_cuda(cudaMemcpyAsync(dst + j * dld, src + j * sld, width, kind, s), what);
        if (st != TGEMM_SUCCESS)
            return st;
    }
    return TGEMM_SUCCESS;
}

// Copies a piece between host memory and a staging buffer on the copy
// threads.
void HostRun::stage(float *dst, int64_t dld, const float *src, int64_t sld, int64_t rows, int64_t cols, TraceEvent e,
                    char operand)
{
    (void)observe_host(e, place(), operand, static_cast<uint64_t>(rows * cols) * sizeof(float),
                       [&](std::vector<CopyPart> *parts) {
                           host_copy(dst, dld, src, sld, rows, cols, parts);
                           return TGEMM_SUCCESS;
                       });
}

// Waits on the host for ev, reported as e (for a piece of C, as that piece).
tgemm_status HostRun::host_wait(cudaEvent_t ev, TraceEvent e, const Staging *piece, const char *what)
{
    const TaskPlace at = piece != nullptr ? place_of(*piece) : place();
    const uint64_t bytes = piece != nullptr ? static_cast<uint64_t>(piece->rows * piece->cols) * sizeof(float) : 0;
    return observe_host(e, at, piece != nullptr ? 'C' : '-', bytes,
                        [&](std::vector<CopyPart> *) { return check_cuda(cudaEventSynchronize(ev), what); });
}

// A staging buffer for the next piece (`for_out`: of C, from the device),
// once the copy that last used it is done: the least recently used of those
// that hold no piece of C, else the one whose piece of C came first, after
// that piece is copied into C. A piece of C takes a free buffer only while
// kInputBuffers others stay free, so that pieces of A and B always have
// two to alternate between.
tgemm_status HostRun::acquire(Staging **buf, bool for_out)
{
    Staging *pick = nullptr;
    int free_count = 0;
    for (Staging &b : pl_.staging)
        if (b.out == nullptr) {
            ++free_count;
            if (pick == nullptr || b.used < pick->used)
                pick = &b;
        }
    if (for_out && free_count <= kInputBuffers)
        pick = nullptr;
    tgemm_status st;
    if (pick != nullptr) {
        st = host_wait(pick->done, TraceEvent::WaitBuffer, nullptr, "cudaEventSynchronize (staging)");
    } else {
        pick = oldest_out();
        st = drain(*pick);
    }
    pick->used = ++pl_.uses;
    *buf = pick;
    return st;
}

Staging *HostRun::oldest_out()
{
    Staging *pick = nullptr;
    for (Staging &b : pl_.staging)
        if (b.out != nullptr && (pick == nullptr || b.used < pick->used))
            pick = &b;
    return pick;
}

// Copies the piece of C in b to its place in C, once it has arrived. A
// piece whose arrival is not confirmed stays in b for finish().
tgemm_status HostRun::drain(Staging &b)
{
    const tgemm_status st = host_wait(b.done, TraceEvent::WaitOut, &b, "cudaEventSynchronize (copy out)");
    if (st == TGEMM_SUCCESS)
        land(b);
    return st;
}

// Copies the piece of C in b, which has arrived, to its place in C, where
// it is written back.
void HostRun::land(Staging &b)
{
    (void)observe_host(TraceEvent::StageOut, place_of(b), 'C', static_cast<uint64_t>(b.rows * b.cols) * sizeof(float),
                       [&](std::vector<CopyPart> *parts) {
                           host_copy(b.out, b.out_ld, b.ptr, b.rows, b.rows, b.cols, parts);
                           return TGEMM_SUCCESS;
                       });
    written_.push_back(Rect{b.c_row, b.c_col, b.rows, b.cols});
    b.out = nullptr;
}

// Copies the part r of a host operand (src, ld) to the device at dst (dld).
tgemm_status HostRun::load(const Rect &r, const float *src, int64_t ld, MemKind kind, float *dst, int64_t dld,
                           char operand)
{
    const float *from = src + r.row + r.col * ld;
    if (kind == MemKind::Pinned)
        return copy_async(dst, dld, from, ld, r.rows, r.cols, cudaMemcpyHostToDevice, pl_.in, operand);
    return for_each_piece(r.rows, r.cols, [&](int64_t r0, int64_t c0, int64_t pr, int64_t pc) {
        Staging *b = nullptr;
        tgemm_status st = acquire(&b, false);
        if (st != TGEMM_SUCCESS)
            return st;
        stage(b->ptr, pr, from + r0 + c0 * ld, ld, pr, pc, TraceEvent::StageIn, operand);
        if ((st = copy_async(dst + r0 + c0 * dld, dld, b->ptr, pr, pr, pc, cudaMemcpyHostToDevice, pl_.in,
                             operand)) != TGEMM_SUCCESS)
            return st;
        return record(b->done, pl_.in);
    });
}

// Copies a finished tile of C from the device (src, dld) to host C. A
// pageable C receives it later, when its staging buffer is needed again or
// at the end of the call.
tgemm_status HostRun::store(const Rect &r, const float *src, int64_t dld)
{
    float *to = p_.c + r.row + r.col * p_.ldc;
    if (kc_ == MemKind::Pinned) {
        const tgemm_status st = copy_async(to, p_.ldc, src, dld, r.rows, r.cols, cudaMemcpyDeviceToHost, pl_.out, 'C');
        if (st == TGEMM_SUCCESS)
            enqueued_.push_back(r);
        return st;
    }
    return for_each_piece(r.rows, r.cols, [&](int64_t r0, int64_t c0, int64_t pr, int64_t pc) {
        Staging *b = nullptr;
        const tgemm_status st = acquire(&b, true);
        return st != TGEMM_SUCCESS ? st
                                   : store_piece(Rect{r.row + r0, r.col + c0, pr, pc}, src + r0 + c0 * dld, dld, b);
    });
}

// Copies a piece of C (piece: rows and columns of C; src, dld: on the
// device) into staging buffer b, where it waits to be copied into C.
tgemm_status HostRun::store_piece(const Rect &piece, const float *src, int64_t dld, Staging *b)
{
    tgemm_status st;
    if ((st = copy_async(b->ptr, piece.rows, src, dld, piece.rows, piece.cols, cudaMemcpyDeviceToHost, pl_.out,
                         'C')) != TGEMM_SUCCESS ||
        (st = record(b->done, pl_.out)) != TGEMM_SUCCESS)
        return st;
    b->out = p_.c + piece.row + piece.col * p_.ldc;
    b->out_ld = p_.ldc;
    b->rows = piece.rows;
    b->cols = piece.cols;
    b->c_row = piece.row;
    b->c_col = piece.col;
    const TaskPlace at = place();
    b->task = at.task;
    b->tile_row = at.tile_row;
    b->tile_col = at.tile_col;
    return TGEMM_SUCCESS;
}

}  // namespace tgemm
