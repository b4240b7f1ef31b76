# Draw low-K ordinary products near the rank-k / tiled decision boundary:
#   draw.py SEED COUNT OUT [aligned]   (aligned: every ld a multiple of 4, the vector kernels' path)
import math, os, random, subprocess, sys, re
seed = int(sys.argv[1]); want = int(sys.argv[2]); out = sys.argv[3]
aligned = len(sys.argv) > 4 and sys.argv[4] == 'aligned'
rng = random.Random(seed)
PD = os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../../../build/bench/plan_dump')
def lu(a, b): return int(round(math.exp(rng.uniform(math.log(a), math.log(b)))))
cands = []
while len(cands) < 12 * want:
    m, n, k = lu(256, 16000), lu(256, 16000), lu(12, 512)
    if 2.0 * m * n * k > 2e11 or 4.0 * m * n > 1.2e9: continue
    ta, tb = rng.choice('NT'), rng.choice('NT')
    def pad(): return 0 if rng.random() < 0.5 else rng.randint(1, 40)
    def ld(d): return (d + 3) // 4 * 4 + 4 * (pad() // 4) if aligned else d + pad()
    lda = ld(k if ta == 'T' else m); ldb = ld(n if tb == 'T' else k); ldc = ld(m)
    alpha, beta = rng.choice([(1.0, 0.0), (-1.0, 1.0), (1.3, 0.7)])
    cands.append((m, n, k, ta, tb, lda, ldb, ldc, alpha, beta))
keep = []
for beta in (0.0, 1.0, 0.7):
    group = [c for c in cands if c[9] == beta]
    args = []
    for c in group: args += ['--shape', *map(str, c[:8])]
    o = subprocess.run([PD, *args, '--beta', str(beta), '--model'], capture_output=True, text=True, check=True).stdout
    lines = [l for l in o.splitlines() if l.startswith('# model rank-k')]
    assert len(lines) == len(group), (len(lines), len(group))
    for c, l in zip(group, lines):
        rk = float(re.search(r'rank-k seconds_us=([\d.]+)', l).group(1))
        t = float(re.search(r'\| tiled .* seconds_us=([\d.]+)', l).group(1))
        fl = float(re.search(r'memory_floor_us=([\d.]+)', l).group(1))
        r = rk / max(t, fl)
        if (0.6 if aligned else 0.75) <= r <= 1.3: keep.append(c)
rng.shuffle(keep)
keep = keep[:want]
with open(out, 'w') as f:
    for c in keep: f.write('%d %d %d %s %s %d %d %d %g %g\n' % c)
print(len(keep), 'of', len(cands))
