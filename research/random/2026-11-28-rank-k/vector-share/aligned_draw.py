# Aligned problems (m, n, k and leading dimensions multiples of 4) planned by two plan_dumps; the moves.
import math, os, random, subprocess, sys, collections
rng = random.Random(int(sys.argv[1])); count = int(sys.argv[2]); base, new = sys.argv[3], sys.argv[4]; out = sys.argv[5]
def lu(a, b): return int(round(math.exp(rng.uniform(math.log(a), math.log(b)))))
probs = []
while len(probs) < count:
    m, n, k = (4 * max(1, lu(1, 5000) // 1) for _ in range(3))
    if 2.0 * m * n * k > 1.5e11 or 4.0 * (m * n + m * k + k * n) > 1.5e9: continue
    ta, tb = rng.choice('NT'), rng.choice('NT')
    pad = lambda: 0 if rng.random() < 0.6 else 4 * rng.randint(1, 16)
    lda = (k if ta == 'T' else m) + pad(); ldb = (n if tb == 'T' else k) + pad(); ldc = m + pad()
    beta = rng.choice([0.0, 1.0, 0.7])
    probs.append((m, n, k, ta, tb, lda, ldb, ldc, beta))
def plans(pd):
    res = {}
    for beta in (0.0, 1.0, 0.7):
        g = [i for i, p in enumerate(probs) if p[8] == beta]
        args = []
        for i in g: args += ['--shape', *map(str, probs[i][:8])]
        o = subprocess.run([pd, *args, '--beta', str(beta)], capture_output=True, text=True, check=True).stdout
        lines = [l for l in o.splitlines() if ' : ' in l and not l.startswith('#')]
        assert len(lines) == len(g)
        for i, l in zip(g, lines): res[i] = l.split(' : ', 1)[1]
    return res
b, n = plans(base), plans(new)
moved = [i for i in range(count) if b[i] != n[i]]
kind = lambda s: s.split()[0] if s.split()[0] != 'tiled' else s.split()[1]
c = collections.Counter((kind(b[i]), kind(n[i])) for i in moved)
print(f'moved {len(moved)} of {count}')
for (x, y), v in c.most_common(20): print(f'{v:6d}  {x} -> {y}')
rng.shuffle(moved)
with open(out, 'w') as f:
    for i in moved[:int(sys.argv[6])]:
        p = probs[i]; alpha = 1.0 if p[8] == 0.0 else (-1.0 if p[8] == 1.0 else 1.3)
        f.write('%d %d %d %s %s %d %d %d %g %g  # %s -> %s\n' % (*p[:8], alpha, p[8], b[i], n[i]))
