# Products drawn broadly (aligned and not, every transpose, padded leading dimensions, three alpha/beta classes);
# keep those whose plan on DEVICE differs between two plan_dumps.  draw.py SEED COUNT BASE_PD NEW_PD DEVICE OUT
import math, random, subprocess, sys
seed, count, base, new, dev, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
r = random.Random(seed)
def lu(a, b): return int(round(math.exp(r.uniform(math.log(a), math.log(b)))))
C = []
while len(C) < count:
    m, n, k = lu(1, 20000), lu(1, 20000), lu(1, 20000)
    if 2.0 * m * n * k > 2e11 or 4.0 * (m * n + m * k + k * n) > 1.5e9: continue
    ta, tb = r.choice('NT'), r.choice('NT')
    al = r.random() < 0.5
    def ld(d): return ((d + 3) // 4 * 4 + (0 if r.random() < 0.5 else 4 * r.randint(1, 10))) if al else d + (0 if r.random() < 0.5 else r.randint(1, 40))
    lda, ldb, ldc = ld(k if ta == 'T' else m), ld(n if tb == 'T' else k), ld(m)
    alpha, beta = r.choice([(1.0, 0.0), (-1.0, 1.0), (1.3, 0.7)])
    C.append((m, n, k, ta, tb, lda, ldb, ldc, alpha, beta))
moved = []
for beta in (0.0, 1.0, 0.7):
    g = [c for c in C if c[9] == beta]
    args = []
    for c in g: args += ['--shape', *map(str, c[:8])]
    pl = [subprocess.run([pd, '--device', dev, *args, '--beta', str(beta)], capture_output=True, text=True, check=True).stdout.splitlines() for pd in (base, new)]
    pl = [[l for l in x if ' : ' in l] for x in pl]
    assert len(pl[0]) == len(g) == len(pl[1])
    for c, a, b in zip(g, *pl):
        if a.split(' : ')[1] != b.split(' : ')[1]: moved.append((c, a.split(' : ')[1], b.split(' : ')[1]))
print(len(moved), 'of', len(C), 'moved', file=sys.stderr)
r.shuffle(moved)
with open(out, 'w') as f:
    for c, a, b in moved: f.write('%d %d %d %s %s %d %d %d %g %g\n' % c)
with open(out + '.plans', 'w') as f:
    for c, a, b in moved: f.write('%s | %s -> %s\n' % (' '.join(map(str, c)), a, b))
