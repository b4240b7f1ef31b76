#!/usr/bin/env python3
"""Summarise a TGEMM_HOST_TRACE file: where the time of calls on host operands goes.

    python3 bench/host_trace.py TRACE.csv [--calls all|last] [--timeline CALL]

For each kind of call (shape and operand kinds; the median over its calls,
the first, warm-up call of each kind left out when there are others), in ms
unless marked:

  total        the call, wall clock on the host
  kernels      the GPU's kernels back to back (the multiply alone, roughly): the sum of their spans
  kernels_busy the time some kernel ran (the union of their spans): less than kernels where kernels
               overlap (the resident schedule's two streams of kernels)
  gpu_first    when the first kernel started
  gpu_idle     gaps between kernels, from the first kernel's start to the last one's end
  gpu_tail     from the last kernel's end to the end of the call (last piece of C out)
  stage_in     host threads copying pieces of A, B, C into pinned staging: busy ms and GB/s
  stage_out    ... pieces of C from staging into C
  copy_busy    stage_in + stage_out: the host threads' share of the call
  wait_buffer, wait_out, wait_end   the calling thread blocked on the GPU
  part_GBs     one thread's rate within a part (median over parts)
  wake_us      from a piece's start to the start of its last part (median): threads joining late
  join_us      from the last part's end to the piece's end (median)
  h2d, d2h     the link: busy ms and GB/s while busy
  p2p          panels copied from another GPU (a spread call's blocks
               sharing panels): busy ms and GB/s while busy

--timeline CALL prints that call's rows in time order, host and GPU side by side.
See src/driver/host_trace.hpp for the events and columns.
"""
import argparse
import csv
import statistics
import sys
from collections import defaultdict


def load(path):
    calls = defaultdict(list)
    with open(path, newline='') as f:
        for row in csv.DictReader(f):
            for k in ('call', 'task', 'tile_row', 'tile_col', 'chunk', 'thread', 'bytes'):
                row[k] = int(row[k])
            row['start_us'] = float(row['start_us'])
            row['end_us'] = float(row['end_us'])
            calls[row['call']].append(row)
    return calls


def detail_fields(detail):
    out = {}
    for item in detail.split():
        if '=' in item:
            k, v = item.split('=', 1)
            out[k] = v
    return out


def union_ms(spans):
    """ms covered by the (start_us, end_us) spans."""
    busy, cur = 0.0, None
    for a, b in sorted(spans):
        if cur is None or a > cur[1]:
            if cur:
                busy += cur[1] - cur[0]
            cur = [a, b]
        else:
            cur[1] = max(cur[1], b)
    if cur:
        busy += cur[1] - cur[0]
    return busy / 1000.0


def summarise(rows):
    call = next(r for r in rows if r['event'] == 'call')
    d = detail_fields(call['detail'])
    total = call['end_us'] / 1000.0
    by = defaultdict(list)
    for r in rows:
        by[r['event']].append(r)
    s = {'total': total}
    kernels = sorted(by['kernel'], key=lambda r: r['start_us'])
    if kernels:
        s['kernels'] = sum(r['end_us'] - r['start_us'] for r in kernels) / 1000.0
        s['kernels_busy'] = union_ms((r['start_us'], r['end_us']) for r in kernels)
        s['gpu_first'] = kernels[0]['start_us'] / 1000.0
        idle, last = 0.0, kernels[0]['start_us']
        for r in kernels:
            idle += max(0.0, r['start_us'] - last)
            last = max(last, r['end_us'])
        s['gpu_idle'] = idle / 1000.0
        s['gpu_tail'] = total - last / 1000.0
    for ev in ('stage_in', 'stage_out'):
        busy = sum(r['end_us'] - r['start_us'] for r in by[ev])
        nbytes = sum(r['bytes'] for r in by[ev])
        s[ev] = busy / 1000.0
        s[ev + '_GBs'] = nbytes / busy / 1e3 if busy > 0 else 0.0
    s['copy_busy'] = s['stage_in'] + s['stage_out']
    for ev in ('wait_buffer', 'wait_out', 'wait_end'):
        s[ev] = sum(r['end_us'] - r['start_us'] for r in by[ev]) / 1000.0
    rates = [r['bytes'] / (r['end_us'] - r['start_us']) / 1e3 for r in by['copy_part'] if r['end_us'] > r['start_us']]
    s['part_GBs'] = statistics.median(rates) if rates else 0.0
    # Parts precede the stage row they belong to.
    wakes, joins, parts = [], [], []
    for r in rows:
        if r['event'] == 'copy_part':
            parts.append(r)
        elif r['event'] in ('stage_in', 'stage_out'):
            if parts:
                wakes.append(max(p['start_us'] for p in parts) - r['start_us'])
                joins.append(r['end_us'] - max(p['end_us'] for p in parts))
            parts = []
    s['wake_us'] = statistics.median(wakes) if wakes else 0.0
    s['join_us'] = statistics.median(joins) if joins else 0.0
    for ev in ('h2d', 'd2h', 'p2p'):
        busy = union_ms((r['start_us'], r['end_us']) for r in by[ev]) * 1000.0
        nbytes = sum(r['bytes'] for r in by[ev])
        s[ev] = busy / 1000.0
        s[ev + '_GBs'] = nbytes / busy / 1e3 if busy > 0 else 0.0
    key = 'm={m} n={n} k={k} A={A} B={B} C={C}'.format(**{k: d.get(k, '?') for k in 'm n k A B C'.split()})
    plan = 'tile={} schedule={} tasks={} lead={} cache_a={} cache_b={} threads={}'.format(
        d.get('tile'), d.get('schedule'), d.get('tasks'), d.get('lead'), d.get('cache_a'), d.get('cache_b'),
        d.get('copy_threads'))
    return key, plan, s


COLUMNS = ['total', 'kernels', 'kernels_busy', 'gpu_first', 'gpu_idle', 'gpu_tail', 'stage_in', 'stage_in_GBs', 'stage_out',
           'stage_out_GBs', 'copy_busy', 'wait_buffer', 'wait_out', 'wait_end', 'part_GBs', 'wake_us', 'join_us',
           'h2d', 'h2d_GBs', 'd2h', 'd2h_GBs', 'p2p', 'p2p_GBs']


def timeline(rows):
    for r in sorted(rows, key=lambda r: (r['start_us'], r['end_us'])):
        if r['event'] == 'call':
            continue
        side = 'gpu ' if r['event'] in ('h2d', 'p2p', 'kernel', 'd2h') else 'host'
        what = r['event'] + (' ' + r['operand'] if r['operand'] != '-' else '')
        if r['event'] == 'copy_part':
            what += ' t%d' % r['thread']
        print('%10.1f %10.1f %8.1f  %s %-16s task %3d tile (%d,%d) chunk %d  %.1f MiB' % (
            r['start_us'], r['end_us'], r['end_us'] - r['start_us'], side, what, r['task'], r['tile_row'],
            r['tile_col'], r['chunk'], r['bytes'] / 1048576.0))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('trace')
    ap.add_argument('--timeline', type=int, metavar='CALL', help="print one call's rows in time order")
    args = ap.parse_args()
    calls = load(args.trace)
    if not calls:
        sys.exit('no calls in %s' % args.trace)
    if args.timeline is not None:
        timeline(calls[args.timeline])
        return
    groups = defaultdict(list)
    for c in sorted(calls):
        key, plan, s = summarise(calls[c])
        groups[(key, plan)].append(s)
    for (key, plan), runs in groups.items():
        if len(runs) > 1:
            runs = runs[1:]  # the first call of a kind pays for allocations
        print('%s  (%s; median of %d calls)' % (key, plan, len(runs)))
        for col in COLUMNS:
            vals = [r[col] for r in runs if col in r]
            if vals:
                print('  %-14s %10.3f' % (col, statistics.median(vals)))
        print()


if __name__ == '__main__':
    main()
