#!/usr/bin/env python3
"""Problems whose C has at most 16 rows or columns (the streaming kernels'
class), drawn like bench/random_shapes.cpp draws every problem (log-uniform
dimensions, tile edges oversampled, random transposes, leading dimensions
padded by nothing or 1 to 64, three alpha/beta classes, the same caps), but
with the short side log-uniform over 1 to 16.

    gen_skinny.py SEED COUNT [SHORT_MAX] > shapes.txt    (bench_random --shapes format)

SHORT_MAX (default 16) caps the short side: 1 draws matrix-vector products.
"""
import math
import random
import sys

EDGES = [8, 16, 32, 64, 128, 256]


def log_uniform(r, lo, hi):
    v = math.exp(math.log(lo) + r.random() * (math.log(hi + 1.0) - math.log(lo)))
    return max(lo, min(hi, int(v)))


def near_edge(r, d, lo, hi):
    e = r.choice(EDGES)
    mult = max(e, (d + e // 2) // e * e)
    off = 1 + r.randrange(3)
    return max(lo, min(hi, mult - off if r.randrange(2) == 0 else mult + off))


def dim(r, lo, hi):
    d = log_uniform(r, lo, hi)
    return near_edge(r, d, lo, hi) if r.random() < 0.25 else d


def padded(r, rows):
    return rows if r.randrange(2) == 0 else rows + 1 + r.randrange(64)


def scale(r):
    v = 0.25 + 1.75 * r.random()
    return v if r.randrange(2) == 0 else -v


def main():
    seed, count = int(sys.argv[1]), int(sys.argv[2])
    short_max = int(sys.argv[3]) if len(sys.argv) > 3 else 16
    r = random.Random(seed)
    print(f"# gen_skinny.py {' '.join(sys.argv[1:])}")
    made = 0
    while made < count:
        short, long_, k = log_uniform(r, 1, short_max), dim(r, 1, 20000), dim(r, 1, 20000)
        m, n = (short, long_) if r.randrange(2) == 0 else (long_, short)
        ta, tb = r.choice("NT"), r.choice("NT")
        lda = padded(r, m if ta == "N" else k)
        ldb = padded(r, k if tb == "N" else n)
        ldc = padded(r, m)
        cls = r.randrange(3)
        alpha, beta = (1.0, 0.0) if cls == 0 else (-1.0, 1.0) if cls == 1 else (scale(r), scale(r))
        stored = 4.0 * (lda * (k if ta == "N" else m) + ldb * (n if tb == "N" else k) + ldc * n)
        if 2.0 * m * n * k > 2.75e11 or stored > 512.0 * 2**20:
            continue
        print(f"{m} {n} {k} {ta} {tb} {lda} {ldb} {ldc} {alpha:.6g} {beta:.6g}")
        made += 1


main()
