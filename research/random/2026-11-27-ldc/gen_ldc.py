#!/usr/bin/env python3
"""Pairs of problems that differ only in ldc: a multiple of 4 (C takes
16-byte accesses) and the same plus 1 or 2 (it does not). Rank-k draws
(K 1 to 40, C of 4 to 120 MB) and low-K tiled draws (K 41 to 400).
Usage: gen_ldc.py SEED COUNT > shapes.txt"""
import math, random, sys

seed, count = int(sys.argv[1]), int(sys.argv[2])
rng = random.Random(seed)
def logu(lo, hi):
    return int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))
out = []
while len(out) < 2 * count:
    lowk = len(out) >= count  # second half: K 41 to 400
    k = logu(41, 400) if lowk else logu(1, 40)
    m = logu(100, 20000); n = logu(100, 20000)
    cbytes = 4.0 * m * n
    if not (4e6 <= cbytes <= 1.2e8) or min(m, n) <= 16:
        continue
    ta, tb = rng.choice('NT'), rng.choice('NT')
    lda = (k if ta == 'T' else m) + rng.choice([0, 0, rng.randint(1, 40)])
    ldb = (n if tb == 'T' else k) + rng.choice([0, 0, rng.randint(1, 40)])
    al, be = rng.choice([(1, 0), (-1, 1), (round(rng.uniform(-2, 2), 4), round(rng.uniform(-2, 2), 4))])
    ldc4 = (m + 3) // 4 * 4
    for ldc in (ldc4, ldc4 + rng.choice([1, 2])):
        out.append(f"{m} {n} {k} {ta} {tb} {lda} {ldb} {ldc} {al} {be}")
print("\n".join(out))
