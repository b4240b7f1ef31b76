// The timeline of calls on host operands, for TGEMM_HOST_TRACE=FILE: what
// the host threads copied and when, what they waited for, and when each
// copy over the link and each kernel ran on the GPU. The tracer
// (host_tracer.hpp) collects rows while a call runs, at no cost when the
// setting is unset; this file formats them as CSV and appends them to the
// file after the call, one write per call. Plain C++, no CUDA.
//
// One row per event; times in microseconds from the start of the call
// (host clock; GPU times are placed on it through an event recorded on an
// idle stream at the start):
//
//   call        the whole call; `detail` has the shape, operand kinds and plan
//   stage_in    the calling thread copies one piece of A, B or C into a
//               pinned staging buffer (all threads together)
//   stage_out   ... one piece of C from a staging buffer into C
//   copy_part   one thread's part of a stage_in or stage_out; `thread` 0 is
//               the calling thread, 1.. the copy pool's workers
//   wait_buffer the calling thread waits for a staging buffer's copy to the
//               device to finish before reusing it
//   wait_out    ... for a piece of C to arrive in its staging buffer
//   wait_end    ... for the GPU to finish the call
//   h2d, kernel, d2h   a copy to the device, a kernel, a copy to the host,
//               as the GPU ran them
//   p2p         a panel of A or B copied from another worker's device (a
//               spread call's blocks sharing panels), as the GPU ran it
//
// Columns: call, event, task (index in the schedule), tile_row, tile_col,
// chunk (C tile and K chunk, in tiles and chunks), operand (A, B, C or -),
// thread, bytes, start_us, end_us, detail; -1 where a column does not apply.
#pragma once

#include <cstdint>
#include <string>

namespace tgemm {

enum class TraceEvent : unsigned char {
    Call,
    StageIn,
    StageOut,
    CopyPart,
    WaitBuffer,
    WaitOut,
    WaitEnd,
    H2D,
    Kernel,
    D2H,
    P2P,
};

struct TraceRow {
    TraceEvent event = TraceEvent::Call;
    int64_t task = -1;
    int64_t tile_row = -1, tile_col = -1, chunk = -1;
    char operand = '-';
    int thread = -1;
    uint64_t bytes = 0;
    double start_us = 0, end_us = 0;
    std::string detail;
};

const char *trace_event_name(TraceEvent e);

// The CSV header line, with its newline.
const char *trace_header();

// One CSV line, with its newline; `detail` quoted where it needs to be.
std::string format_trace_row(uint64_t call, const TraceRow &row);

// Opens `path` for appending (created with mode 0644 if missing). Returns
// the descriptor, or -1 with a message in *error.
int open_trace(const char *path, std::string *error);

// Appends `text` to the open trace `fd` in one write, after the header if
// the file is empty. Safe from several threads. False with a message in
// *error when the write fails.
bool append_trace(int fd, const std::string &text, std::string *error);

}  // namespace tgemm
