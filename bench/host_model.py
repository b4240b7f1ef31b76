#!/usr/bin/env python3
"""A model of the host-operand pipeline (src/driver/host_executor.cpp, host_pool.cpp): predicted call times.

    python3 bench/host_model.py [--shape M N K] [--stage-ms MS] [--stage-out-ms MS] [--kernel-ms MS] ...

Replays the schedule of one call the way the executor enqueues it, with one
host thread that copies pieces of pageable operands through eight 16 MiB
pinned staging buffers (the copy pool counts as one resource: the calling
thread waits for each piece), one stream of copies in, one of kernels and
one of copies out, each in order, and events between them. Its inputs:

  --stage-ms      host time to stage 16 MiB in (all copy threads together)
  --stage-out-ms  ... out
  --kernel-ms     one 2048^3 kernel (0.403 ms: sq2048 in docs/performance.md)
  --h2d, --d2h    link speeds in GB/s (55 and 37 pinned: the H100 machine, docs/notes/history-host.md)
  --overhead-ms   per-call time the model does not see (1.0: what makes its
                  pinned 8192^3 time match the measured 28.5 ms)

Each schedule is printed for pageable and for pinned operands:

  before   tile by tile (A panels, B whole), staging buffers in turn, a piece
           of C copied into C when its buffer comes round again, the last
           ones after the GPU is done (commit 424fd9b)
  drains   the same tiles; buffers without a piece of C first, two kept for
           A and B, pieces of C copied at the end as they arrive
  lead     drains, and the first two rows of tiles K-outer (A and B whole)

Calibration (the defaults): staging at 0.5 ms per 16 MiB in (34 GB/s) and
0.7 ms out (24 GB/s) puts `before` within 8% of the four pageable times
measured on the H100 machine before the change (docs/notes/history-host.md):
8192^3 37.0 ms (model 37.0), 4096^3 9.9 (9.8), 16384 x 16384 x 1024 51.0
(51.4), 2048 x 2048 x 32768 20.7 (19.1); pinned 8192^3 28.5 (28.5), but
the model's fixed overhead is too large for the smaller pinned calls (4096^3
4.6, model 5.5). A TGEMM_HOST_TRACE of the real thing (bench/host_trace.py)
measures the staging rates to put in.
"""
import argparse
import math

MiB = 1 << 20


class Stream:
    """An in-order queue: an operation starts when enqueued, when the one before it is done and when
    the events it waits for are."""

    def __init__(self):
        self.t = 0.0
        self.busy = 0.0

    def op(self, enqueued, duration, deps=()):
        start = max([enqueued, self.t] + list(deps))
        self.t = start + duration
        self.busy += duration
        return self.t


def tasks(m, n, k, lead, tile=2048, depth=2048):
    """The tasks of the plan in order: (kernel ms factor, pieces in (bytes), bytes of C out after it)."""
    mb, nb, kb = math.ceil(m / tile), math.ceil(n / tile), math.ceil(k / depth)
    grid = [(i, j) for i in range(mb) for j in range(nb)]
    order = [(i, j, c) for c in range(kb) for (i, j) in grid[:lead]]
    order += [(i, j, c) for (i, j) in grid[lead:] for c in range(kb)]
    seen_a, seen_b, out = set(), set(), []
    for i, j, c in order:
        rows, cols = min(tile, m - i * tile), min(tile, n - j * tile)
        d = min(depth, k - c * depth)
        loads = []
        if (i, c) not in seen_a:
            seen_a.add((i, c))
            loads.append(4 * rows * d)
        if (j, c) not in seen_b:
            seen_b.add((j, c))
            loads.append(4 * d * cols)
        out.append((rows * cols * d / 2048.0 ** 3, loads, 4 * rows * cols if c == kb - 1 else 0))
    return out


def simulate(task_list, a):
    """Call time in ms under a schedule (a.policy: 'before' or 'drains')."""
    pinned, policy = a.pinned, a.policy
    stage_in = lambda b: a.stage_ms * 1e-3 * b / (16 * MiB)
    stage_out = lambda b: a.stage_out_ms * 1e-3 * b / (16 * MiB)
    host = 0.0
    s_in, s_comp, s_out = Stream(), Stream(), Stream()
    bufs = [{'done': 0.0, 'out': 0, 'used': 0} for _ in range(8)]
    state = {'next': 0, 'uses': 0}

    def drain(b):
        nonlocal host
        host = max(host, b['done']) + stage_out(b['out'])
        b['out'] = 0

    def acquire(for_out):
        nonlocal host
        if policy == 'before':
            b = bufs[state['next']]
            state['next'] = (state['next'] + 1) % len(bufs)
        else:
            free = [b for b in bufs if not b['out']]
            if free and not (for_out and len(free) <= 2):
                b = min(free, key=lambda b: b['used'])
            else:
                b = min((b for b in bufs if b['out']), key=lambda b: b['used'])
        if b['out']:
            drain(b)
        else:
            host = max(host, b['done'])
        state['uses'] += 1
        b['used'] = state['uses']
        return b

    api = 5e-6  # an enqueue
    for factor, loads, out_bytes in task_list:
        for nbytes in loads:
            for piece in pieces(nbytes):
                if pinned:
                    host += api
                    s_in.op(host, piece / (a.h2d * 1e9))
                else:
                    b = acquire(False)
                    host += stage_in(piece) + api
                    b['done'] = s_in.op(host, piece / (a.h2d * 1e9))
        host += api
        done = s_comp.op(host, factor * a.kernel_ms * 1e-3, [s_in.t] if loads else [])
        for piece in pieces(out_bytes):
            host += api
            if pinned:
                s_out.op(host, piece / (a.d2h * 1e9), [done])
            else:
                b = acquire(True)
                b['done'] = s_out.op(host, piece / (a.d2h * 1e9), [done])
                b['out'] = piece
    end = max(s_in.t, s_comp.t, s_out.t)
    if policy == 'before':
        host = max(host, end)
    for b in sorted((b for b in bufs if b['out']), key=lambda b: b['used']):
        drain(b)
    return max(host, end) * 1e3 + a.overhead_ms, s_comp.busy * 1e3


def pieces(nbytes):
    while nbytes > 0:
        p = min(nbytes, 16 * MiB)
        yield p
        nbytes -= p


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--shape', nargs=3, type=int, default=[8192, 8192, 8192], metavar=('M', 'N', 'K'))
    ap.add_argument('--stage-ms', type=float, default=0.5)
    ap.add_argument('--stage-out-ms', type=float, default=0.7)
    ap.add_argument('--kernel-ms', type=float, default=0.403)
    ap.add_argument('--h2d', type=float, default=55.0)
    ap.add_argument('--d2h', type=float, default=37.0)
    ap.add_argument('--overhead-ms', type=float, default=1.0)
    a = ap.parse_args()
    m, n, k = a.shape
    nb, tiles, kb = math.ceil(n / 2048), math.ceil(m / 2048) * math.ceil(n / 2048), math.ceil(k / 2048)
    lead = min(tiles, 2 * nb) if kb >= 4 and tiles > 1 else 0  # as host_plan.cpp
    print('%dx%dx%d, staging %.3f ms in / %.3f ms out per 16 MiB (%.1f / %.1f GB/s), kernel %.3f ms per 2048^3'
          % (m, n, k, a.stage_ms, a.stage_out_ms, 16 * MiB / a.stage_ms / 1e6, 16 * MiB / a.stage_out_ms / 1e6,
             a.kernel_ms))
    print('%-8s %12s %12s   (multiply alone: %.1f ms)' % ('schedule', 'pageable ms', 'pinned ms',
                                                          simulate(tasks(m, n, k, 0), argparse.Namespace(
                                                              **dict(vars(a), pinned=True, policy='before')))[1]))
    for name, policy, lead_tiles in (('before', 'before', 0), ('drains', 'drains', 0), ('lead', 'drains', lead)):
        t = []
        for pinned in (False, True):
            args = argparse.Namespace(**dict(vars(a), pinned=pinned, policy=policy))
            t.append(simulate(tasks(m, n, k, lead_tiles), args)[0])
        print('%-8s %12.1f %12.1f' % (name, t[0], t[1]))


if __name__ == '__main__':
    main()
