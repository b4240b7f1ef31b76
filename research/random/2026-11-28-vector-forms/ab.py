"""The vector kernels' later-wave costs kept to plans whose blocks store to C
(issue 27, H100). moved.txt: the 58 problems whose plan the change moves
(49 of ../2026-11-28-vector-costs/draw.py's aligned draws, seed 880101,
8,000 drawn; the 9 moves of plan_dump --count 20000 --seed 5), timed by
bench_random --shapes on one lease: the library before the change, the
change twice, the library before again (runs/d4_*). moved.plans: each
problem's plan before -> after (plan_dump --beta). Prints the A/A spread,
new over base time (geometric means) by the kind of move, and the problems.
Run: python3 ab.py"""
import collections, csv, math, os
here = os.path.dirname(os.path.abspath(__file__))
def load(f): return {int(r['index']): r for r in csv.DictReader(open(os.path.join(here, 'runs', f)))}
def gm(x): x = list(x); return math.exp(sum(map(math.log, x)) / len(x)) if x else float('nan')
B = [load('d4_base1.csv'), load('d4_base2.csv')]
N = [load('d4_new1.csv'), load('d4_new2.csv')]
moves = [line.split(' | ', 1)[1].strip().split(' -> ') for line in open(os.path.join(here, 'moved.plans'))]
idx = sorted(B[0])
assert len(idx) == len(moves)
def form(p):
    last = p.split(' | ')[-1]
    if last.startswith('stream-k'): return 'stream-K'
    if last.startswith('rank-k'): return 'rank-k'
    if last.startswith('streaming'): return 'streaming'
    return 'workspace' if 'workspace' in last else 'cluster' if 'cluster' in last else 'no split'
def t(runs, i, L): return gm(float(r[i][f'tgemm_{L}_us']) for r in runs)
print('every result within the FP32 bound, padding untouched:',
      all(float(r[i]['max_err_over_bound_tgemm']) <= 1 and r[i]['pad_ok'] == '1' for r in B + N for i in idx))
print('A/A, base run 1 over run 2 (hot, cold):',
      ', '.join(f"{gm(float(B[0][i][f'tgemm_{L}_us']) / float(B[1][i][f'tgemm_{L}_us']) for i in idx):.4f}"
                for L in ('hot', 'cold')))
groups = collections.defaultdict(list)
for i, (a, b) in zip(idx, moves):
    groups['all'].append(i)
    groups[f'{form(a)} -> {form(b)}' if a != b else 'plan unchanged'].append(i)
print('\n| move | count | new / base time, hot | cold | ratio to cuBLAS hot, base -> new | >5% faster / slower (hot) |')
print('|---|---:|---:|---:|---|---|')
for k in sorted(groups, key=lambda k: (k != 'all', -len(groups[k]), k)):
    ii = groups[k]
    th = [t(N, i, 'hot') / t(B, i, 'hot') for i in ii]
    print(f"| {k} | {len(ii)} | {gm(th):.3f} | {gm(t(N, i, 'cold') / t(B, i, 'cold') for i in ii):.3f} | "
          f"{gm(float(r[i]['ratio_hot']) for r in B for i in ii):.3f} -> "
          f"{gm(float(r[i]['ratio_hot']) for r in N for i in ii):.3f} | {sum(x < 0.95 for x in th)} / {sum(x > 1.05 for x in th)} |")
print('\n| problem | op | base us | new us | new / base | plan before -> after |\n|---|---|---:|---:|---:|---|')
def short(p):
    x = p.split(' | ')[-1].split()
    return ' '.join([x[0], x[1]] + [w for w in x if w.startswith('split=')] +
                    [w for w in ('none', 'cluster', 'workspace') if w in x])
for i, (a, b) in sorted(zip(idx, moves), key=lambda z: t(N, z[0], 'hot') / t(B, z[0], 'hot')):
    r = B[0][i]
    print(f"| {r['m']} x {r['n']} x {r['k']} | {r['ta']}{r['tb']} | {t(B, i, 'hot'):.1f} | {t(N, i, 'hot'):.1f} | "
          f"{t(N, i, 'hot') / t(B, i, 'hot'):.3f} | {short(a)} -> {short(b)} |")
# The rule kept (the workspace form alone at the scalar costs): the problems of moved.txt whose plan it moves
# (kept.plans, plan_dump --beta), each timed above with the same plan as the change's.
kept = {tuple(line.split(' | ')[0].split()[:8]) for line in open(os.path.join(here, 'kept.plans'))}
ii = [i for i in idx if (B[0][i]['m'], B[0][i]['n'], B[0][i]['k'], B[0][i]['ta'], B[0][i]['tb'], B[0][i]['lda'],
                         B[0][i]['ldb'], B[0][i]['ldc']) in kept]
assert len(ii) == len(kept)
print(f"\nThe rule kept: the {len(ii)} problems it moves, new / base time hot "
      f"{gm(t(N, i, 'hot') / t(B, i, 'hot') for i in ii):.3f}, cold {gm(t(N, i, 'cold') / t(B, i, 'cold') for i in ii):.3f}; "
      f"ratio to cuBLAS hot {gm(float(r[i]['ratio_hot']) for r in B for i in ii):.3f} -> "
      f"{gm(float(r[i]['ratio_hot']) for r in N for i in ii):.3f}\n")
print('| problem | op | base us | new us | new / base | ratio to cuBLAS hot, base -> new | plan before -> after |')
print('|---|---|---:|---:|---:|---|---|')
for i, (a, b) in sorted(((i, m) for i, m in zip(idx, moves) if i in ii), key=lambda z: t(N, z[0], 'hot') / t(B, z[0], 'hot')):
    r = B[0][i]
    print(f"| {r['m']} x {r['n']} x {r['k']} | {r['ta']}{r['tb']} | {t(B, i, 'hot'):.1f} | {t(N, i, 'hot'):.1f} | "
          f"{t(N, i, 'hot') / t(B, i, 'hot'):.3f} | {gm(float(x[i]['ratio_hot']) for x in B):.3f} -> "
          f"{gm(float(x[i]['ratio_hot']) for x in N):.3f} | {short(a)} -> {short(b)} |")
# The section before's 80 aligned problems (../2026-11-28-vector-costs: the base library five times, the change
# twice): the rule returns the 3 of reverted.txt to the base plan and keeps the change's plan on the others.
old = os.path.join(here, '..', '2026-11-28-vector-costs')
OB = [load(os.path.join(old, 'runs', f'd19_base{i}.csv')) for i in (1, 2, 3, 4)] + [load(os.path.join(old, 'runs', 'd20_base5.csv'))]
ON = [load(os.path.join(old, 'runs', f'd20_new{i}.csv')) for i in (1, 2)]
back = {tuple(line.split()[:8]) for line in open(os.path.join(here, 'reverted.txt'))}
shapes = [tuple(line.split()[:8]) for line in open(os.path.join(old, 'moved.txt'))][:80]
change = [t(ON, i, 'hot') / t(OB, i, 'hot') for i in range(80)]
rule = [1.0 if shapes[i] in back else change[i] for i in range(80)]
print(f"\nthe 80 aligned problems of ../2026-11-28-vector-costs, hot: the change {gm(change):.3f} of the base time, "
      f"the rule kept {gm(rule):.3f}; returned to the base plan: "
      + ', '.join(f"{' x '.join(shapes[i][:3])} ({change[i]:.3f})" for i in range(80) if shapes[i] in back))
