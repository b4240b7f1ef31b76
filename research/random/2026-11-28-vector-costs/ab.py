"""The vector kernels' later-wave fixed costs in real calls (issue 27, H100).
moved.txt: 97 problems whose plan the change moves (80 of draw.py's aligned
draws, seed 880101, 8,000 drawn, 157 moved; the 17 moves of plan_dump
--count 20000 --seed 5), timed by bench_random --shapes on one H100 lease:
the library before the change five times (runs/d19_base1-4: four runs of
one call; d20_base5) and after it twice (d20_new1, d20_new2), cuBLAS beside
each. Prints the A/A spread of the base runs, then new time over base time
(geometric means) by the kind of move and by the new plan's form, and the
worst and best problems. Run: python3 ab.py"""
import collections, csv, math, os, re
here = os.path.dirname(os.path.abspath(__file__))
def load(f): return {int(r['index']): r for r in csv.DictReader(open(os.path.join(here, 'runs', f)))}
def gm(x): x = list(x); return math.exp(sum(map(math.log, x)) / len(x)) if x else float('nan')
B = [load(f'd19_base{i}.csv') for i in (1, 2, 3, 4)] + [load('d20_base5.csv')]
N = [load('d20_new1.csv'), load('d20_new2.csv')]
plans = {}
for name in ('moved_aligned.plans', 'moved_random.plans'):
    for line in open(os.path.join(here, name)):
        shape, moves = line.split(' | ', 1)
        x = shape.split()
        key = tuple(x[:8]) if 'ld=' not in shape else (x[0], x[1], x[2], x[3][0], x[3][1], *x[4][3:].split(','))
        plans[key] = moves.strip().split(' -> ')
def kind(p):
    if p.startswith('rank-k'): return 'rank-k'
    if 'stream-k' in p: return 'stream-k'
    m = re.search(r'tiled \S+ \S+ split=(\d+)', p)
    return 'tiled, split' if m and m.group(1) != '1' else 'tiled'
def form(p):
    last = p.split(' | ')[-1] if 'streaming' not in p else p
    return next((f for f in ('workspace', 'cluster', 'stream-k') if f in last), 'none')
def t(runs, i, L): return gm(float(r[i][f'tgemm_{L}_us']) for r in runs)
def ratio(runs, i, L): return gm(float(r[i][f'ratio_{L}']) for r in runs)
idx = sorted(B[0])
print('every result within the FP32 bound, padding untouched:',
      all(float(r[i]['max_err_over_bound_tgemm']) <= 1 and r[i]['pad_ok'] == '1' for r in B + N for i in idx))
print('A/A, each base run over the mean of the five, hot:',
      ', '.join(f"{gm(float(B[k][i]['tgemm_hot_us']) / t(B, i, 'hot') for i in idx):.4f}" for k in range(5)))
groups = collections.defaultdict(list)
for i in idx:
    r = B[0][i]
    a, b = plans[(r['m'], r['n'], r['k'], r['ta'], r['tb'], r['lda'], r['ldb'], r['ldc'])]
    groups['all'].append(i)
    groups[f'{kind(a)} -> {kind(b)}'].append(i)
    groups[f'new plan: {form(b)}'].append(i)
print('\n| problems | count | new / base time, hot | cold | ratio to cuBLAS hot, base -> new | cold | >5% faster / slower (hot) |')
print('|---|---:|---:|---:|---|---|---|')
for k in sorted(groups, key=lambda k: (k != 'all', k.startswith('new'), -len(groups[k]))):
    ii = groups[k]
    th = [t(N, i, 'hot') / t(B, i, 'hot') for i in ii]
    tc = [t(N, i, 'cold') / t(B, i, 'cold') for i in ii]
    print(f"| {k} | {len(ii)} | {gm(th):.3f} | {gm(tc):.3f} | {gm(ratio(B, i, 'hot') for i in ii):.3f} -> "
          f"{gm(ratio(N, i, 'hot') for i in ii):.3f} | {gm(ratio(B, i, 'cold') for i in ii):.3f} -> "
          f"{gm(ratio(N, i, 'cold') for i in ii):.3f} | {sum(x < 0.95 for x in th)} / {sum(x > 1.05 for x in th)} |")
order = sorted(idx, key=lambda i: t(N, i, 'hot') / t(B, i, 'hot'))
print('\n| problem | op | base us | new us | new / base | plan before -> after |\n|---|---|---:|---:|---:|---|')
for i in order[:6] + order[-6:]:
    r = B[0][i]
    a, b = plans[(r['m'], r['n'], r['k'], r['ta'], r['tb'], r['lda'], r['ldb'], r['ldc'])]
    def short(p):  # the last kernel: its kind, family, split and form
        x = p.split(' | ')[-1].split()
        return ' '.join(x[:2] + [w for w in x[2:] if w.startswith('split=') or w in ('none', 'workspace', 'cluster')])
    print(f"| {r['m']} x {r['n']} x {r['k']} | {r['ta']}{r['tb']} | {t(B, i, 'hot'):.1f} | {t(N, i, 'hot'):.1f} | "
          f"{t(N, i, 'hot') / t(B, i, 'hot'):.3f} | {short(a)} -> {short(b)} |")
