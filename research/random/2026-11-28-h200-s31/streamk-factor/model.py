#!/usr/bin/env python3
"""Measured / modelled time of the stream-K plans in this folder and in ../losers.

    model.py PLAN_DUMP_109 PLAN_DUMP_100

PLAN_DUMP_109: bench/plan_dump built at 983283d (stream-K step factor 1.09);
PLAN_DUMP_100: the same with the factor at 1.00. Each problem is planned on
the h200 description with its own leading dimensions and beta; the modelled
time is plan_dump --model's "tiled ... seconds_us" (the tiled planner's
pick, stream-K included). Measured: the hot time, the geometric mean of the
two runs of each library here (new1, new2), the single run in ../losers.
Writes model.csv beside this file and prints the medians the docs quote.
"""
import csv, math, os, re, statistics, subprocess, sys

here = os.path.dirname(os.path.abspath(__file__))
pd109, pd100 = sys.argv[1], sys.argv[2]


def load(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def model(pd, r, env=None):
    e = dict(os.environ)
    e.update(env or {})
    out = subprocess.run([pd, '--device', 'h200', '--shape', r['m'], r['n'], r['k'], r['ta'], r['tb'], r['lda'],
                          r['ldb'], r['ldc'], '--beta', r['beta'], '--model'],
                         capture_output=True, text=True, env=e, check=True).stdout
    m = re.search(r'tiled (\S+) split=(\d+)( cluster)? seconds_us=([\d.]+)', out)
    plan = out.strip().splitlines()[-1].split(' : ')[-1]
    return (float(m.group(4)) if m else None), plan


def aligned(r):
    return all(int(r[x]) % 4 == 0 for x in ('lda', 'ldb', 'ldc'))


def summary(name, v):
    v = sorted(v)
    print('%-44s %3d  median %.3f  p10 %.3f  p90 %.3f  max %.3f' %
          (name, len(v), statistics.median(v), v[len(v) // 10], v[9 * len(v) // 10], v[-1]))


rows = []
# ../losers: the TGEMM_STREAMK=always run, at either factor.
for r in load(os.path.join(here, '..', 'losers', 'streamk_always.csv')):
    t = float(r['tgemm_hot_us'])
    for label, pd in (('1.09', pd109), ('1.00', pd100)):
        sec, plan = model(pd, r, {'TGEMM_STREAMK': 'always'})
        if sec is not None and plan.split('| ')[-1].startswith('stream-k'):
            rows.append(('losers', label, r['m'], r['n'], r['k'], r['ta'] + r['tb'], aligned(r), t, sec, plan))
# Here: the stream-K plans the factor 1.00 chose, as run (new1, new2).
for a, b in zip(load(os.path.join(here, 'new1.csv')), load(os.path.join(here, 'new2.csv'))):
    sec, plan = model(pd100, a)
    if sec is None or 'stream-k' not in plan:
        continue
    t = math.sqrt(float(a['tgemm_hot_us']) * float(b['tgemm_hot_us']))
    rows.append(('moved', '1.00', a['m'], a['n'], a['k'], a['ta'] + a['tb'], aligned(a), t, sec, plan))

with open(os.path.join(here, 'model.csv'), 'w', newline='') as f:
    w = csv.writer(f)
    w.writerow(['set', 'factor', 'm', 'n', 'k', 'op', 'aligned', 'measured_us', 'modelled_us', 'plan'])
    w.writerows(rows)

for label in ('1.09', '1.00'):
    summary('losers, stream-K plans, factor ' + label, [t / s for st, lb, *_, al, t, s, p in rows
                                                        if st == 'losers' and lb == label])
for al, tb, name in ((True, True, 'moved, all aligned, NT or TT'), (True, False, 'moved, all aligned, NN or TN'),
                     (False, False, 'moved, not all aligned, NN or TN'), (False, True, 'moved, not all aligned, NT or TT')):
    summary(name, [t / s for st, lb, m, n, k, op, a, t, s, p in rows
                   if st == 'moved' and a == al and (op[1] == 'T') == tb])
