"""Each moved problem's modelled gain (plan_dump --costs of its tiled plan before and
after) beside its measured one (ab_moved.txt), and the measured gain by K steps per slice.

    python3 predicted.py PLAN_DUMP   (run in this folder)

Only problems whose plans before and after are one tiled plan each are priced
(--costs takes operands unpadded and aligned, so the figures are the model's view
of the pair, not of the padded call)."""
import math, re, subprocess, sys

PAT = r'^tiled (\S+) (\d+)x(\d+)x(\d+) split=(\d+) (\w+) k_chunk=(\d+)'
shapes = [l for l in open('shapes.txt') if not l.startswith('#')]
measured = {}
for line in open('ab_moved.txt'):
    p = line.split()
    if len(p) == 13 and p[0].isdigit():
        measured[int(p[0])] = (float(p[10]), float(p[12]))

def gm(x):
    return math.exp(sum(map(math.log, x)) / len(x)) if x else float('nan')

rows, costs = [], []
for i, line in enumerate(shapes):
    problem, plans = line.split('#')
    before, after = (s.strip() for s in plans.split('->'))
    b, a = re.match(PAT, before), re.match(PAT, after)
    if i not in measured or not a:
        continue
    steps = int(a.group(7)) // int(a.group(1).split('x')[2])
    rows.append((steps, a.group(6), measured[i], problem.strip(), before, after, b))
    if b:
        m, n, k, ta, tb = problem.split()[:5]
        costs += [f"{m} {n} {k} {ta} {tb} {x.group(1)} {x.group(5)} {x.group(7)} {x.group(6)}" for x in (b, a)]
out = iter(subprocess.run([sys.argv[1], '--costs'], input='\n'.join(costs), capture_output=True, text=True).stdout.split())
print('cluster plans after, by K steps a slice: count, measured new/base hot, cold')
for lo, hi in [(0, 3), (3, 5), (5, 9), (9, 17), (17, 10**9)]:
    s = [r for r in rows if lo <= r[0] < hi and r[1] == 'cluster']
    print(f'  {lo}-{hi - 1 if hi < 10**9 else "":>3} {len(s):3d} {gm([r[2][0] for r in s]):.3f} {gm([r[2][1] for r in s]):.3f}')
print('modelled before/after, measured new/base hot, steps a slice, problem | plan after')
listed = []
for r in rows:
    if r[6]:
        pb, pa = float(next(out)), float(next(out))
        listed.append((pb / pa, r[2][0], r[0], r[3], r[5][:60]))
for x in sorted(listed):
    print('%.3f %.3f %4d  %s | %s' % x)
