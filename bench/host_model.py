#!/usr/bin/env python3
"""A model of the host-operand pipeline (src/driver/host_plan.cpp, host_executor.cpp): predicted call times.

    python3 bench/host_model.py [--shape M N K] [--c-in] [--timeline SCHEDULE] [rates ...]

Replays a call the way the executor enqueues it: one host thread that copies
pieces of pageable operands through eight 16 MiB pinned staging buffers (the
copy threads count as one resource: the calling thread waits for each
piece), one stream of copies in, the kernels, one stream of copies out, each
in order, and events between them. The schedules (src/driver/host_plan.hpp):

  tiled      2048 x 2048 tiles, 2048-deep chunks, one kernel per chunk of a
             tile; the first two rows of tiles K-outer (the lead group), A
             and B whole on the device; a finished tile of pageable C takes
             a staging buffer at once (the library before the resident
             schedule, and still where the device cannot hold A, B and C)
  resident1  A, B and C whole on the device: the opening (every tile's first
             K/4 of a chunk, squares growing from the corner; only the
             lead's tiles when C is read), the lead (rows of tiles K-outer,
             two, or more where C is not read: kLeadFeed), each later row of
             tiles in one kernel, the last kernel
             cut into runs of tiles and parts of a tile (the kernels as
             host_plan.cpp makes them); pieces of a pageable C wait for a
             staging buffer that no piece of A or B needs; one stream of
             kernels
  resident   the same on two streams of kernels, as the library runs it: a
             kernel within one tile on the stream of its outer block's
             parity, one over several tiles on both

The kernels. A launch of m x n x k runs 256 x 128 blocks of 16-deep K steps
(the dispatcher's family for these shapes) on 132 SMs: whole waves of
blocks, each block --iter-us per K step and --block-us for its prologue
and epilogue; stream-K (no partial last wave) where the launch has at least
--streamk-waves waves of blocks and 64 K steps; split-K (up to 8 slices, one
wave) where it has fewer blocks than SMs. --iter-us and --block-us default to
the values that put one 2048^3 kernel at --tile-ms and one 8192^3 kernel at
--whole-ms (both measured on the H100). Every kernel also leaves --launch-us
of idle GPU after it. Where the next kernel runs on the other stream of
kernels (neither spanning several tiles), it takes the SMs this one's last
wave leaves idle: this kernel then counts as its blocks' work spread over
all SMs, with no idle time after it. That the H100 overlaps the two so is
this model's assumption, for the trace of the resident schedule to check.

Calibration (the defaults): an H100 trace of the tiled schedule, 8192^3 NN,
beta = 0 (bench_gemm --host), median of 5 calls, ms (model in brackets):

            total          kernels        gpu_first    gaps         tail
  pageable  25.0 (24.9)    22.13 (22.11)  1.34 (1.36)  0.73 (0.75)  0.70 (0.66)
  pinned    23.2 (23.2)    21.78 (21.76)  0.80 (0.81)  0.24 (0.27)  0.40 (0.40)

from the rates measured in the same trace: host to device 47.5 GB/s pinned,
40.6 pageable (from the staging buffers, while the copy threads fill
others), device to host 44.1 and 49.0, staging 48.9 GB/s in and out with 12
copy threads, kernels 1.6% slower during pageable calls (--pageable-kernel);
--setup-* is the time before the first copy. --jitter makes each pageable
transfer's time vary (an exponential share of it, mean --jitter, the mean
time unchanged): the host's memory rate moves from piece to piece, and
without it the model's pageable GPU idle time is 0.5 ms, not the measured
0.73; pageable times are the mean of --seeds draws. --scale-pageable slows
the pageable link and staging rates together: the host's memory rate moves
by up to a third from run to run (docs/notes/history-host.md).

Output: for each schedule and memory kind, the call time, its ratio to the
multiply alone (one kernel of m x n x k in this model), the kernels' busy
time, when the first kernel starts, the GPU's idle time between kernels, the
time after the last kernel, the number of kernels, and the bytes the first
kernel waits for. --timeline prints one schedule's kernels (pageable, one
draw) with their start and end.
"""
import argparse
import math
import random

MiB = 1 << 20
SMS, BM, BN, BK = 132, 256, 128, 16


def kernel_times(m, n, k, a):
    """One launch of m x n x k as the dispatcher plans it (see the docstring): its time alone, and its time
    when the next launch's blocks take the SMs its last wave leaves idle (its blocks' work spread over all
    SMs)."""
    ci, cf = a.iter_us * 1e-3, a.block_us * 1e-3
    tiles = math.ceil(m / BM) * math.ceil(n / BN)
    iters = math.ceil(k / BK)
    if tiles >= SMS:
        waves = math.ceil(tiles / SMS)
        if tiles % SMS and tiles >= a.streamk_waves * SMS and iters >= 64:
            t = tiles * iters / SMS * ci + waves * cf
            return t, t
        return waves * (iters * ci + cf), tiles * (iters * ci + cf) / SMS
    s = 1
    while tiles * s * 2 <= SMS and s < 8 and iters // (2 * s) >= 32:
        s *= 2
    reduce = cf if s > 1 else 0.0
    per_block = math.ceil(iters / s) * ci + cf
    return per_block + reduce, tiles * s * per_block / SMS + reduce


def kernel_ms(m, n, k, a):
    return kernel_times(m, n, k, a)[0]


def fit_kernel(a):
    """--iter-us and --block-us from one 2048^3 kernel (128 blocks, one wave, 128 steps) and one 8192^3
    kernel (stream-K: 2048 blocks of 512 steps over 132 SMs, 16 waves of prologues)."""
    rows = [(128.0, 1.0, a.tile_ms), (2048 * 512 / SMS, 16.0, a.whole_ms)]
    (a1, b1, c1), (a2, b2, c2) = rows
    det = a1 * b2 - a2 * b1
    if a.iter_us is None:
        a.iter_us = (c1 * b2 - b1 * c2) / det * 1e3
    if a.block_us is None:
        a.block_us = (a1 * c2 - a2 * c1) / det * 1e3


def preferred_sizes(m, n, k, side=2048, depth=2048):
    """host_plan.cpp's preferred_sizes: tile sides and chunk depth."""
    q = 32
    elems = side * side
    mt, nt = min(m, side), min(n, side)
    if mt < side:
        nt = min(n, math.ceil(elems / mt / q) * q)
    if nt < side:
        mt = min(m, math.ceil(elems / nt / q) * q)
    return mt, nt, min(k, depth)


# A schedule is a list of kernels: (m, n, k, [bytes copied in before it], [bytes of C copied out after it], label).


def tiled_schedule(m, n, k, c_in):
    """The tiled schedule in core: A and B whole with a lead group of two rows of tiles where K has four
    chunks, else A panels and B whole, tile by tile (rows outer)."""
    mt, nt, kt = preferred_sizes(m, n, k)
    mb, nb, kb = math.ceil(m / mt), math.ceil(n / nt), math.ceil(k / kt)
    lead = min(mb * nb, 2 * nb) if kb >= 4 and mb * nb > 1 else 0
    grid = [(i, j) for i in range(mb) for j in range(nb)]
    order = [(i, j, c) for c in range(kb) for (i, j) in grid[:lead]]
    order += [(i, j, c) for (i, j) in grid[lead:] for c in range(kb)]
    seen_a, seen_b, out = set(), set(), []
    for i, j, c in order:
        rows, cols = min(mt, m - i * mt), min(nt, n - j * nt)
        d = min(kt, k - c * kt)
        loads = []
        if (i, c) not in seen_a:
            seen_a.add((i, c))
            loads.append(4 * rows * d)
        if (j, c) not in seen_b:
            seen_b.add((j, c))
            loads.append(4 * d * cols)
        if c == 0 and c_in:
            loads.append(4 * rows * cols)
        out.append((rows, cols, d, loads, [4 * rows * cols] if c == kb - 1 else [], 'tile (%d,%d) chunk %d' % (i, j, c),
                    0))
    return out


def resident_units(m, n, k, c_in):
    """The resident schedule's kernels as host_plan.cpp's resident_task makes them: (row, col, rows, cols,
    k0, k1, load outer, load inner)."""
    q = 32
    mt, nt, kt = preferred_sizes(m, n, k)
    mb, nb = math.ceil(m / mt), math.ceil(n / nt)
    rows_outer = mb <= nb
    O, I = (mb, nb) if rows_outer else (nb, mb)
    so, si, eo, ei = (mt, nt, m, n) if rows_outer else (nt, mt, n, m)
    L = 2  # host_plan.cpp's lead_blocks: kernels per chunk of the lead's K steps at least 1.5 (kLeadFeed)
    while L < O - 1 and L * I < 1.5 * (L + I) and not c_in:
        L += 1
    L = min(L, O)
    d0 = max(q, kt // 4 // q * q)
    first_end = (d0 // kt + 1) * kt
    bounds = [0, d0] + list(range(first_end, k, kt)) + [k]
    steps = list(zip(bounds[:-1], bounds[1:]))
    ob = L if c_in else O

    def ring(outer):
        side, t = min(outer, I), []
        for s in range(side):
            t += [(s, i) for i in range(s)] + [(o, s) for o in range(s + 1)]
        if I > outer:
            t += [(o, i) for i in range(side, I) for o in range(outer)]
        else:
            t += [(o, i) for o in range(side, outer) for i in range(I)]
        return t

    units = []  # (outer block, inner from, inner to, k0, k1, load outer, load inner)
    for o, i in ring(ob):
        units.append((o, i, i + 1, 0, d0, i == 0, o == 0))
    for k0, k1 in steps[1:]:
        for i in range(I):
            for o in range(L):
                units.append((o, i, i + 1, k0, k1, i == 0, o == 0))
    for o in range(L, O):
        units.append((o, 0, I, d0 if o < ob else 0, k, True, False))
    # The cut: runs of tiles halving, then the last tile in parts of its outer side. The first piece loads
    # the inner operand's part; the outer one's, the first run (it spans it) or, without runs, every part.
    o, ia, ib, k0, k1, lo, li = units.pop()
    runs, w, at = [], ib - ia, ia
    while True:
        run = w - w // 2 if w > 1 else 1
        runs.append((at, at + run))
        if w <= 1:
            break
        at += run
        w //= 2
    olen = min(so, eo - o * so)
    if olen >= 4 * q:
        half = olen // 2 // q * q
        quarter = (olen - half) // 2 // q * q
        parts = [(0, half), (half, quarter), (half + quarter, olen - half - quarter)]
    else:
        parts = [(0, olen)]
    out = [(o * so, olen, a0, a1) for a0, a1 in runs[:-1]]
    out += [(o * so + p0, plen, ib - 1, ib) for p0, plen in parts]
    out = [(at_o, len_o, a0, a1, lo and (j == 0 or len(runs) == 1), li and j == 0)
           for j, (at_o, len_o, a0, a1) in enumerate(out)]
    units = [(uo * so, min(so, eo - uo * so), a, b, k0_, k1_, lo_, li_) for uo, a, b, k0_, k1_, lo_, li_ in units]
    units += [(at_o, len_o, a, b, k0, k1, lo_, li_) for at_o, len_o, a, b, lo_, li_ in out]
    res = []
    for at_o, len_o, a, b, k0_, k1_, lo_, li_ in units:
        at_i, len_i = a * si, min(b * si, ei) - a * si
        r0, c0, rows, cols = (at_o, at_i, len_o, len_i) if rows_outer else (at_i, at_o, len_i, len_o)
        la, lb = (lo_, li_) if rows_outer else (li_, lo_)
        res.append((r0, c0, rows, cols, k0_, k1_, la, lb))
    return res


def resident_schedule(m, n, k, c_in, streams=2):
    """Kernels of the resident schedule; with two streams of kernels, one within a tile runs on the stream
    of its outer block's parity, one over several tiles on both (host_executor.cpp: kernel_stream)."""
    mt, nt, kt = preferred_sizes(m, n, k)
    rows_outer = math.ceil(m / mt) <= math.ceil(n / nt)
    out = []
    for r0, c0, rows, cols, k0, k1, la, lb in resident_units(m, n, k, c_in):
        loads = ([4 * rows * (k1 - k0)] if la else []) + ([4 * cols * (k1 - k0)] if lb else [])
        if c_in and k0 == 0:
            loads.append(4 * rows * cols)
        several = r0 // mt != (r0 + rows - 1) // mt or c0 // nt != (c0 + cols - 1) // nt
        stream = None if several else (r0 // mt if rows_outer else c0 // nt) % streams
        out.append((rows, cols, k1 - k0, loads, [4 * rows * cols] if k1 == k else [],
                    'C (%d,%d) %dx%d K %d-%d' % (r0, c0, rows, cols, k0, k1), stream))
    return out


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


def pieces(nbytes, size=16 * MiB):
    while nbytes > 0:
        yield min(nbytes, size)
        nbytes -= size


def simulate(kernels, a, pinned, defer, seed):
    """One call: its times in ms. defer: pieces of a pageable C wait for a staging buffer no piece of A or B
    needs, until the last kernel that loads anything (the resident schedule's executor)."""
    rng = random.Random(seed)

    def jitter():
        return 1.0 if pinned or a.jitter == 0 else rng.expovariate(1.0 / a.jitter) + 1.0 - a.jitter

    scale = 1.0 if pinned else a.scale_pageable
    stage_in = lambda b: b / (a.stage_in * scale * 1e9) * 1e3 * jitter()
    stage_out = lambda b: b / (a.stage_out * scale * 1e9) * 1e3 * jitter()
    h2d = (a.h2d_pinned if pinned else a.h2d_pageable * scale) * 1e9
    d2h = (a.d2h_pinned if pinned else a.d2h_pageable * scale) * 1e9
    slow = 1.0 if pinned else a.pageable_kernel
    api = 0.005  # one enqueue on the host
    host = a.setup_pinned if pinned else a.setup_pageable
    s_in, s_comp, s_out = Stream(), Stream(), Stream()
    bufs = [{'done': 0.0, 'out': 0, 'used': 0} for _ in range(8)]
    uses = [0]
    pending = []
    last_load = max(i for i, x in enumerate(kernels) if x[3]) if defer else -1

    def drain(b):
        nonlocal host
        host = max(host, b['done']) + stage_out(b['out'])
        b['out'] = 0

    def acquire(for_out):
        nonlocal host
        free = [b for b in bufs if not b['out']]
        if free and not (for_out and len(free) <= 2):
            b = min(free, key=lambda b: b['used'])
            host = max(host, b['done'])
        else:
            b = min((b for b in bufs if b['out']), key=lambda b: b['used'])
            drain(b)
        uses[0] += 1
        b['used'] = uses[0]
        return b

    def issue(block):
        nonlocal host
        while pending and (block or sum(1 for b in bufs if not b['out']) > 2):
            p, done = pending.pop(0)
            host += api
            b = acquire(True)
            b['done'] = s_out.op(host, p / d2h * 1e3 * jitter(), [done])
            b['out'] = p

    timeline = []
    # A kernel's last wave shares the SMs with the next kernel when that one runs on the other stream of
    # kernels and neither spans several tiles (a stream of None); the launch's idle time is hidden too.
    overlapped = [i + 1 < len(kernels) and kernels[i][6] is not None and kernels[i + 1][6] is not None and
                  kernels[i][6] != kernels[i + 1][6] for i in range(len(kernels))]
    for t, (km, kn, kk, loads, stores, label, _) in enumerate(kernels):
        for nbytes in loads:
            for p in pieces(nbytes):
                if pinned:
                    host += api
                    s_in.op(host, p / h2d * 1e3)
                else:
                    b = acquire(False)
                    host += stage_in(p) + api
                    b['done'] = s_in.op(host, p / h2d * 1e3 * jitter())
        host += api
        alone, shared = kernel_times(km, kn, kk, a)
        dur = (shared if overlapped[t] else alone) * slow
        gap = 0.0 if overlapped[t] else a.launch_us * 1e-3
        done = s_comp.op(host, dur + gap, [s_in.t] if loads else []) - gap
        s_comp.busy -= gap
        timeline.append((done - dur, done, label))
        for nbytes in stores:
            for p in pieces(nbytes):
                if pinned:
                    host += api
                    s_out.op(host, p / d2h * 1e3, [done])
                elif defer:
                    pending.append((p, done))
                else:
                    host += api
                    b = acquire(True)
                    b['done'] = s_out.op(host, p / d2h * 1e3 * jitter(), [done])
                    b['out'] = p
        if defer and not pinned:
            issue(t >= last_load)
    issue(True)
    for b in sorted((b for b in bufs if b['out']), key=lambda b: b['used']):
        drain(b)
    end = max(host, s_in.t, s_comp.t, s_out.t) + a.end_ms
    idle, last = 0.0, timeline[0][0]
    for start, stop, _ in timeline:
        idle += max(0.0, start - last)
        last = max(last, stop)
    return {'total': end, 'kernels': s_comp.busy, 'first': timeline[0][0], 'gaps': idle, 'tail': end - last,
            'h2d': s_in.busy, 'd2h': s_out.busy, 'timeline': timeline}


def predict(kernels, a, pinned, defer):
    runs = [simulate(kernels, a, pinned, defer, s) for s in range(1 if pinned else a.seeds)]
    return {key: sum(r[key] for r in runs) / len(runs) for key in runs[0] if key != 'timeline'}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--shape', nargs=3, type=int, default=[8192, 8192, 8192], metavar=('M', 'N', 'K'))
    ap.add_argument('--c-in', action='store_true', help='beta != 0: host C is read')
    ap.add_argument('--tile-ms', type=float, default=0.34)
    ap.add_argument('--whole-ms', type=float, default=20.45)
    ap.add_argument('--iter-us', type=float, default=None)
    ap.add_argument('--block-us', type=float, default=None)
    ap.add_argument('--streamk-waves', type=float, default=5.5)
    ap.add_argument('--launch-us', type=float, default=3.7)
    ap.add_argument('--h2d-pinned', type=float, default=47.5)
    ap.add_argument('--h2d-pageable', type=float, default=40.6)
    ap.add_argument('--d2h-pinned', type=float, default=44.1)
    ap.add_argument('--d2h-pageable', type=float, default=49.0)
    ap.add_argument('--stage-in', type=float, default=48.9)
    ap.add_argument('--stage-out', type=float, default=48.9)
    ap.add_argument('--scale-pageable', type=float, default=1.0,
                    help='scales the pageable link and staging rates (a slower host)')
    ap.add_argument('--pageable-kernel', type=float, default=22.13 / 21.78)
    ap.add_argument('--setup-pinned', type=float, default=0.09)
    ap.add_argument('--setup-pageable', type=float, default=0.17)
    ap.add_argument('--end-ms', type=float, default=0.02)
    ap.add_argument('--jitter', type=float, default=0.4)
    ap.add_argument('--seeds', type=int, default=20)
    ap.add_argument('--timeline', choices=('tiled', 'resident1', 'resident'))
    a = ap.parse_args()
    fit_kernel(a)
    m, n, k = a.shape
    alone = kernel_ms(m, n, k, a)
    schedules = [('tiled', tiled_schedule(m, n, k, a.c_in), False)]
    mt, nt, kt = preferred_sizes(m, n, k)
    if k > 0 and math.ceil(k / kt) >= 4:
        schedules.append(('resident1', resident_schedule(m, n, k, a.c_in, streams=1), True))
        schedules.append(('resident', resident_schedule(m, n, k, a.c_in), True))
    print('%dx%dx%d%s: multiply alone %.2f ms (kernel steps %.3f us, blocks %.1f us)'
          % (m, n, k, ' beta != 0' if a.c_in else '', alone, a.iter_us, a.block_us))
    print('%-9s %-9s %8s %6s %8s %7s %6s %6s %5s %9s' % ('schedule', 'operands', 'total', 'ratio', 'kernels',
                                                         'first', 'gaps', 'tail', 'n', 'first MiB'))
    for name, kernels, defer in schedules:
        for pinned in (False, True):
            r = predict(kernels, a, pinned, defer)
            print('%-9s %-9s %8.2f %6.3f %8.2f %7.2f %6.2f %6.2f %5d %9.1f' % (
                name, 'pinned' if pinned else 'pageable', r['total'], r['total'] / alone, r['kernels'], r['first'],
                r['gaps'], r['tail'], len(kernels), sum(kernels[0][3]) / MiB))
    if a.timeline:
        kernels = dict((s[0], s) for s in schedules)[a.timeline]
        for start, stop, label in simulate(kernels[1], a, False, kernels[2], 0)['timeline']:
            print('%9.3f %9.3f  %s' % (start, stop, label))


if __name__ == '__main__':
    main()
