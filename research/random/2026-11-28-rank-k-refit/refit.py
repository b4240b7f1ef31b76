"""The rank-k kernel after the conflict-free copies (3a42a48), near the rank-k
/ tiled decision. A: last session's 120 products (../2026-11-28-rank-k/
boundary/sample.txt), rank-k forced now (A_rk1) against then (s_rk1, s_rk2;
the tiled plan's times s_alt1, s_alt2 from then). B: 100 fresh products
(sampleB.txt, draw.py seed 232795980), rank-k forced (B_rk1, B_rk2) and the
tiled plan (B_alt1, B_alt2: a library with kTiledModelShare 1e9). Prints the
speedup, the models' errors by K (hot and cold), the decision rule for
several shares, and least-squares refits of the rank-k model's factors on A
checked on B. Run after building plan_dump:  python3 refit.py"""
import csv, math, os, sys
here = os.path.dirname(os.path.abspath(__file__))
old = os.path.join(here, '../2026-11-28-rank-k/boundary')
sys.path.insert(0, old)
from models import attach  # noqa: E402
PD = os.path.join(here, '../../../build/bench/plan_dump')
SMF, BW = 2 * 128 * 1.98e9, 2.88e12    # an SM's FFMA flops/s, the bandwidth (factors.cpp)
def load(f): return {int(r['index']): r for r in csv.DictReader(open(f))}
def gm(x): x = list(x); return math.exp(sum(map(math.log, x)) / len(x))
def col(runs, i, key): return gm(float(x[i][key]) for x in runs)
def build(rk, alt):
    S = []
    for i in sorted(rk[0]):
        r = rk[0][i]
        c = dict(m=int(r['m']), n=int(r['n']), k=int(r['k']), ta=r['ta'], tb=r['tb'], lda=int(r['lda']),
                 ldb=int(r['ldb']), ldc=int(r['ldc']), beta=float(r['beta']))
        for L in ('hot', 'cold'):
            c['rk_' + L] = col(rk, i, 'ratio_' + L); c['alt_' + L] = col(alt, i, 'ratio_' + L)
            c['rk_us_' + L] = col(rk, i, f'tgemm_{L}_us'); c['alt_us_' + L] = col(alt, i, f'tgemm_{L}_us')
        blocks = math.ceil(c['m'] / 128) * math.ceil(c['n'] / 128)
        c['sums'] = math.ceil(blocks / 264) * 2 * 128 * 128 * c['k'] / (SMF / min(2, math.ceil(blocks / 132))) * 1e6
        c['bytes'] = ((c['m'] + c['n']) * c['k'] + (2 if c['beta'] else 1) * c['m'] * c['n']) * 4 / BW * 1e6
        S.append(c)
    attach(S, PD)
    return S
def model(p, c): return c['sums'] / p[0] + c['bytes'] / p[1] + p[2]   # rank_k_cost's form
def rms(p, S, L): return math.sqrt(sum(math.log(model(p, c) / c['rk_us_' + L]) ** 2 for c in S) / len(S))
def simplex(f, x0, it=3000):
    n = len(x0); pts = [list(x0)] + [[v * 1.2 if j == i else v for j, v in enumerate(x0)] for i in range(n)]
    val = [f(p) for p in pts]
    for _ in range(it):
        o = sorted(range(n + 1), key=lambda i: val[i]); pts = [pts[i] for i in o]; val = [val[i] for i in o]
        c = [sum(p[j] for p in pts[:-1]) / n for j in range(n)]
        xr = [2 * c[j] - pts[-1][j] for j in range(n)]; fr = f(xr)
        if fr < val[0]:
            xe = [3 * c[j] - 2 * pts[-1][j] for j in range(n)]; fe = f(xe)
            pts[-1], val[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < val[-2]: pts[-1], val[-1] = xr, fr
        else:
            xc = [(c[j] + pts[-1][j]) / 2 for j in range(n)]; fc = f(xc)
            if fc < val[-1]: pts[-1], val[-1] = xc, fc
            else: pts = [pts[0]] + [[(pts[0][j] + p[j]) / 2 for j in range(n)] for p in pts[1:]]; val = [f(p) for p in pts]
    return pts[0]
A = build([load(os.path.join(here, 'A_rk1.csv'))], [load(os.path.join(old, f's_alt{i}.csv')) for i in (1, 2)])
A_then = build([load(os.path.join(old, f's_rk{i}.csv')) for i in (1, 2)], [load(os.path.join(old, f's_alt{i}.csv')) for i in (1, 2)])
B = build([load(os.path.join(here, f'B_rk{i}.csv')) for i in (1, 2)], [load(os.path.join(here, f'B_alt{i}.csv')) for i in (1, 2)])
KB = ((1, 32), (33, 64), (65, 128), (129, 256), (257, 512))
print('| K | A: rank-k now / then (hot) | A: model / measured, hot | cold | B: model / measured, hot | cold | B: tiled model / measured, hot | B: rank-k faster |')
print('|---|---:|---:|---:|---:|---:|---:|---:|')
for lo, hi in KB + ((1, 512),):
    a = [(x, y) for x, y in zip(A, A_then) if lo <= x['k'] <= hi]; b = [c for c in B if lo <= c['k'] <= hi]
    print(f"| {lo} to {hi} | {gm(x['rk_us_hot'] / y['rk_us_hot'] for x, y in a):.3f} ({len(a)}) | "
          f"{gm(x['mrk'] / x['rk_us_hot'] for x, _ in a):.3f} | {gm(x['mrk'] / x['rk_us_cold'] for x, _ in a):.3f} | "
          f"{gm(c['mrk'] / c['rk_us_hot'] for c in b):.3f} | {gm(c['mrk'] / c['rk_us_cold'] for c in b):.3f} | "
          f"{gm(c['mt'] / c['alt_us_hot'] for c in b):.3f} | {sum(c['rk_hot'] > c['alt_hot'] for c in b)} of {len(b)} |")
print('\n| rank-k model | fitted on A | A rms (log), hot / cold | B rms, hot / cold |\n|---|---|---|---|')
fits = {'library (0.70, 1, 5.9 us)': [0.70, 1.0, 5.9]}
for L in ('hot', 'cold'):
    fits[f'refit to {L} times'] = simplex(lambda p: sum(math.log(model(p, c) / c['rk_us_' + L]) ** 2 for c in A)
                                          if min(p) > 0 else 1e9, [0.7, 1.0, 5.0])
for name, p in fits.items():
    print(f"| {name} | {', '.join(f'{v:.3f}' for v in p)} | {rms(p, A, 'hot'):.3f} / {rms(p, A, 'cold'):.3f} | "
          f"{rms(p, B, 'hot'):.3f} / {rms(p, B, 'cold'):.3f} |")
print('\n| rule (rank-k where model x share < tiled model, floor) | A: taken | A ratio hot | cold | B: taken | B ratio hot | cold |')
print('|---|---:|---:|---:|---:|---:|---:|')
def row(name, pick):
    out = []
    for S in (A, B):
        ps = [pick(c) for c in S]
        out += [str(sum(ps)), *(f"{gm((c['rk_' + L] if q else c['alt_' + L]) for c, q in zip(S, ps)):.3f}" for L in ('hot', 'cold'))]
    print(f"| {name} | " + ' | '.join(out) + ' |')
row('the faster of the two, each product (hot)', lambda c: c['rk_hot'] > c['alt_hot'])
row('rank-k always', lambda c: True)
row('tiled always', lambda c: False)
for sh in (0.85, 0.9, 0.95, 1.0, 1.05):
    row(f'library model, share {sh}', lambda c, sh=sh: c['mrk'] * sh < max(c['mt'], c['fl']))
for L in ('hot', 'cold'):
    for sh in (0.9, 0.95, 1.0, 1.05):
        p = fits[f'refit to {L} times']
        row(f'refit ({L}) model, share {sh}', lambda c, sh=sh, p=p: model(p, c) * sh < max(c['mt'], c['fl']))
for sh in (0.95, 1.0):
    row(f'measured rank-k time (hot) in place of the model, share {sh}',
        lambda c, sh=sh: c['rk_us_hot'] * sh < max(c['mt'], c['fl']))
