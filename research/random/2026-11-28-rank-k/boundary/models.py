"""The dispatcher's two models for products near the rank-k decision, from
plan_dump --model: sets c['mrk'] (the rank-k model, us), c['mt'] (the tiled
plan's) and c['fl'] (the tiled plans' memory floor) on each product dict of
S (keys m n k ta tb lda ldb ldc beta). Used by rules.py and
../../2026-11-28-rank-k-refit/refit.py."""
import re, subprocess
def attach(S, plan_dump):
    for beta in sorted(set(c['beta'] for c in S)):
        g = [c for c in S if c['beta'] == beta]
        args = []
        for c in g: args += ['--shape', *map(str, (c['m'], c['n'], c['k'], c['ta'], c['tb'], c['lda'], c['ldb'], c['ldc']))]
        o = subprocess.run([plan_dump, *args, '--beta', str(beta), '--model'], capture_output=True, text=True, check=True).stdout
        lines = [l for l in o.splitlines() if l.startswith('# model rank-k')]
        assert len(lines) == len(g)
        for c, l in zip(g, lines):
            c['mrk'] = float(re.search(r'rank-k seconds_us=([\d.]+)', l).group(1))
            c['mt'] = float(re.search(r'\| tiled .* seconds_us=([\d.]+)', l).group(1))
            c['fl'] = float(re.search(r'memory_floor_us=([\d.]+)', l).group(1))
