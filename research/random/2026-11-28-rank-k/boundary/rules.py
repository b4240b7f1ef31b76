"""The rank-k decision on 120 products drawn near it (draw.py, seed 5120281):
each timed with rank-k forced (s_rk1, s_rk2) and with rank-k never weighed
(s_alt1, s_alt2: the tiled plan; a library built with kTiledModelShare =
1e9), ratio to cuBLAS's faster mode in the same run, geometric mean of the
two runs. Prints the models' errors by K and what rank_k_pays loses against
the faster of the two for several values of kTiledModelShare.
Run after building plan_dump (the checkout's model):  python3 rules.py"""
import csv, math, os, sys
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from models import attach  # noqa: E402
PD = os.path.join(here, '../../../../build/bench/plan_dump')
def load(f): return {int(r['index']): r for r in csv.DictReader(open(os.path.join(here, f)))}
def gm(x): x = list(x); return math.exp(sum(map(math.log, x)) / len(x)) if x else float('nan')
rk = [load(f's_rk{i}.csv') for i in (1, 2)]
alt = [load(f's_alt{i}.csv') for i in (1, 2)]
S = []
for i in sorted(rk[0]):
    r = rk[0][i]
    c = dict(m=int(r['m']), n=int(r['n']), k=int(r['k']), ta=r['ta'], tb=r['tb'], lda=int(r['lda']), ldb=int(r['ldb']),
             ldc=int(r['ldc']), beta=float(r['beta']))
    for L in ('hot', 'cold'):
        c['rk_' + L] = gm(float(x[i][f'ratio_{L}']) for x in rk)
        c['alt_' + L] = gm(float(x[i][f'ratio_{L}']) for x in alt)
    c['rk_us'] = gm(float(x[i]['tgemm_hot_us']) for x in rk)
    c['alt_us'] = gm(float(x[i]['tgemm_hot_us']) for x in alt)
    S.append(c)
attach(S, PD)
print('| K | products | tiled time / rank-k time | rank-k faster | rank-k model / measured | tiled model / measured | tiled floor / measured |')
print('|---|---:|---:|---:|---:|---:|---:|')
for lo, hi in ((1, 32), (33, 64), (65, 128), (129, 256), (257, 512)):
    g = [c for c in S if lo <= c['k'] <= hi]
    print(f"| {lo} to {hi} | {len(g)} | {gm(c['alt_us'] / c['rk_us'] for c in g):.3f} | {sum(c['rk_hot'] > c['alt_hot'] for c in g)} | "
          f"{gm(c['mrk'] / c['rk_us'] for c in g):.3f} | {gm(c['mt'] / c['alt_us'] for c in g):.3f} | {gm(c['fl'] / c['alt_us'] for c in g):.3f} |")
print()
print('| rule | rank-k taken | ratio hot | ratio cold |')
print('|---|---:|---:|---:|')
for L in ('',):
    print(f"| the faster of the two, each product | | {gm(max(c['rk_hot'], c['alt_hot']) for c in S):.3f} | {gm(max(c['rk_cold'], c['alt_cold']) for c in S):.3f} |")
    print(f"| rank-k always | {len(S)} | {gm(c['rk_hot'] for c in S):.3f} | {gm(c['rk_cold'] for c in S):.3f} |")
    print(f"| tiled always | 0 | {gm(c['alt_hot'] for c in S):.3f} | {gm(c['alt_cold'] for c in S):.3f} |")
    for sh in (0.85, 0.9, 0.95, 1.0, 1.05, 1.1):
        pick = [c['mrk'] * sh < max(c['mt'], c['fl']) for c in S]
        print(f"| kTiledModelShare {sh} | {sum(pick)} | " +
              ' | '.join(f"{gm((c['rk_' + L] if p else c['alt_' + L]) for c, p in zip(S, pick)):.3f}" for L in ('hot', 'cold')) + ' |')
