#!/usr/bin/env python3
"""The problems a change to the dispatcher moves, sampled for an A/B of real calls.

    python3 bench/plan_changes.py BEFORE.txt AFTER.txt [--sample N] [--seed S]
            [--max-flops F] [--out SHAPES.txt]

BEFORE.txt, AFTER.txt: `plan_dump --count C --seed S` of the library before
and after the change (same count and seed, so that line i is the same
problem in both). Prints how many plans moved, of all problems and of the
ordinary ones (m, n > 16, K > 64), and the most common moves (first kernel
of each plan: a tiled family, stream-k, rank-k, streaming, pack, peel).
With --out it writes a `bench_random --shapes` file: N problems (default
100) drawn with --seed from the moved ones whose operands plan_dump placed
aligned (bench_random's buffers are; an unaligned offset would plan
otherwise there) and of at most --max-flops (default 1.5e11) flops, plus
every move to or from the rank-k kernel among them, each line carrying
its plan before and after as a comment. Time them with both libraries in
turn (base, new, new, base), as research/random/2026-11-27-tail did.
"""
import argparse
import collections
import random
import sys


def read(path):
    """[(problem text, plan text)] of a plan_dump output, comments dropped."""
    rows = []
    for line in open(path):
        if line.startswith("#") or " : " not in line:
            continue
        lhs, plan = line.rstrip("\n").split(" : ", 1)
        rows.append((lhs, plan.strip()))
    return rows


def first_kernel(plan):
    """The plan's first step: 'pack', 'peel', or the kernel (a tiled family's name for tiled)."""
    words = plan.split()
    if not words:
        return "?"
    if words[0] == "tiled" and len(words) > 1:
        return words[1]
    return words[0]


def problem(lhs):
    """(m, n, k, ta, tb, lda, ldb, ldc, aligned, alpha0, beta0) of a plan_dump problem text."""
    f = lhs.split()
    m, n, k = int(f[0]), int(f[1]), int(f[2])
    ta, tb = f[3][0], f[3][1]
    lda, ldb, ldc = (int(x) for x in f[4][len("ld="):].split(","))
    aligned = f[5] == "al=aaa"
    return m, n, k, ta, tb, lda, ldb, ldc, aligned, "alpha0=1" in lhs, "beta0=1" in lhs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--sample", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-flops", type=float, default=1.5e11)
    ap.add_argument("--out")
    a = ap.parse_args()
    before, after = read(a.before), read(a.after)
    if len(before) != len(after) or any(b[0] != c[0] for b, c in zip(before, after)):
        print("plan_changes: the two dumps are not of the same problems (count and seed must match)",
              file=sys.stderr)
        return 2
    moved, ordinary, ordinary_moved = [], 0, 0
    kinds = collections.Counter()
    for (lhs, old), (_, new) in zip(before, after):
        m, n, k = problem(lhs)[:3]
        is_ordinary = m > 16 and n > 16 and k > 64
        ordinary += is_ordinary
        if old != new:
            moved.append((lhs, old, new))
            ordinary_moved += is_ordinary
            kinds[(first_kernel(old), first_kernel(new))] += 1
    print(f"moved: {len(moved)} of {len(before)} plans ({100.0 * len(moved) / max(1, len(before)):.1f}%); "
          f"ordinary: {ordinary_moved} of {ordinary}")
    for (old, new), count in kinds.most_common(12):
        print(f"  {count:6d}  {old} -> {new}")
    if not a.out:
        return 0
    eligible = []
    for lhs, old, new in moved:
        m, n, k, ta, tb, lda, ldb, ldc, aligned, alpha0, beta0 = problem(lhs)
        if aligned and 2.0 * m * n * k <= a.max_flops:
            eligible.append((lhs, old, new))
    picked = random.Random(a.seed).sample(eligible, min(a.sample, len(eligible)))
    picked += [x for x in eligible if x not in picked and (x[1].startswith("rank-k") != x[2].startswith("rank-k"))]
    with open(a.out, "w") as f:
        f.write(f"# {len(picked)} of the {len(moved)} plans moved between {a.before} and {a.after}: "
                f"{min(a.sample, len(eligible))} drawn (seed {a.seed}) from the {len(eligible)} with aligned "
                f"operands and at most {a.max_flops:g} flops, and every move to or from rank-k among those\n")
        f.write("# m n k ta tb lda ldb ldc alpha beta   # plan before -> after\n")
        for lhs, old, new in picked:
            m, n, k, ta, tb, lda, ldb, ldc, aligned, alpha0, beta0 = problem(lhs)
            f.write(f"{m} {n} {k} {ta} {tb} {lda} {ldb} {ldc} {0 if alpha0 else 1} {0 if beta0 else 0.5}"
                    f"   # {old} -> {new}\n")
    print(f"wrote {len(picked)} problems to {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
