#!/usr/bin/env python3
"""Prints the tables of docs/performance.md "A matrix-vector kernel" from
this directory's CSVs and plan logs (bench_random --csv, TGEMM_VERBOSE=2
--plans): each set's ratios against cuBLAS, base (77baecb) and new, and
tgemm's own speedup on the problems that take skinny_gemv and on the rest.

    python3 gemv_tables.py
"""
import csv
import lzma
import math
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))


def load(path):
    with open(os.path.join(HERE, path)) as f:
        return {int(r["index"]): r for r in csv.DictReader(f)}


def plans(path):
    out = {}
    with lzma.open(os.path.join(HERE, path), "rt") as f:
        for line in f:
            m = re.search(r"device plan m=(\d+) n=(\d+) k=(\d+) (\w\w) (.*)", line)
            if m:
                out.setdefault((int(m[1]), int(m[2]), int(m[3]), m[4]), m[5])
    return out


def gm(v):
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def key(r):
    return int(r["m"]), int(r["n"]), int(r["k"]), r["ta"] + r["tb"]


def mean_of(runs, i, col):
    return gm([float(r[i][col]) for r in runs])


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))]


def compare(title, base_runs, new_runs, new_plans):
    base = [load(p) for p in base_runs]
    new = [load(p) for p in new_runs]
    plan = plans(new_plans)
    idx = sorted(new[0])
    print(f"\n{title}: {len(idx)} problems; base {', '.join(base_runs)}; new {', '.join(new_runs)}")
    print("| problems | count | ratio hot base -> new | ratio cold base -> new | p5 hot | p5 cold | min hot | min cold |"
          " tgemm speedup hot | cold |")
    print("|---|---:|---|---|---|---|---|---|---:|---:|")
    groups = [("all", idx), ("skinny_gemv", [i for i in idx if "gemv" in plan.get(key(new[0][i]), "")]),
              ("other plans", [i for i in idx if "gemv" not in plan.get(key(new[0][i]), "")])]
    for name, sel in groups:
        if not sel:
            continue
        cols = []
        for c in ("ratio_hot", "ratio_cold"):
            b = [mean_of(base, i, c) for i in sel]
            n = [mean_of(new, i, c) for i in sel]
            cols.append((b, n))
        sp = [gm([mean_of(base, i, c) / mean_of(new, i, c) for i in sel])
              for c in ("tgemm_hot_us", "tgemm_cold_us")]
        print(f"| {name} | {len(sel)} | {gm(cols[0][0]):.3f} -> {gm(cols[0][1]):.3f} | "
              f"{gm(cols[1][0]):.3f} -> {gm(cols[1][1]):.3f} | "
              f"{pct(cols[0][0], 0.05):.3f} -> {pct(cols[0][1], 0.05):.3f} | "
              f"{pct(cols[1][0], 0.05):.3f} -> {pct(cols[1][1], 0.05):.3f} | "
              f"{min(cols[0][0]):.3f} -> {min(cols[0][1]):.3f} | {min(cols[1][0]):.3f} -> {min(cols[1][1]):.3f} | "
              f"{sp[0]:.3f} | {sp[1]:.3f} |")
    return base, new, plan, idx


def per_problem(base, new, plan, idx):
    print()
    print("| m | n | k | op | plan (new) | tgemm hot us | tgemm cold us | ratio hot | ratio cold |")
    print("|---:|---:|---:|---|---|---|---|---|---|")
    for i in idx:
        r = new[0][i]
        print(f"| {r['m']} | {r['n']} | {r['k']} | {r['ta']}{r['tb']} | {plan.get(key(r), '?')} | "
              f"{mean_of(base, i, 'tgemm_hot_us'):.1f} -> {mean_of(new, i, 'tgemm_hot_us'):.1f} | "
              f"{mean_of(base, i, 'tgemm_cold_us'):.1f} -> {mean_of(new, i, 'tgemm_cold_us'):.1f} | "
              f"{mean_of(base, i, 'ratio_hot'):.2f} -> {mean_of(new, i, 'ratio_hot'):.2f} | "
              f"{mean_of(base, i, 'ratio_cold'):.2f} -> {mean_of(new, i, 'ratio_cold'):.2f} |")


def main():
    w = compare("final: the worst s = 1 problems (worst_gemv.txt)", ["final/wbase.csv"], ["final/wnew.csv"],
                "final/plans_worst_new.log.xz")
    per_problem(*w)
    compare("final: 160 s = 1 problems (gemv_9280101.txt)", ["final/gbase.csv"], ["final/gnew.csv"],
            "final/plans_gemv_new.log.xz")
    for s in ("9290001", "9290002", "9290003"):
        compare(f"final: bench_random seed {s} (new, then base)", [f"final/base_{s}.csv"], [f"final/new_{s}.csv"],
                f"final/plans_new_{s}.log.xz")
    compare("first version (every candidate priced each call)", ["first/base1.csv", "first/base2.csv"],
            ["first/new1.csv", "first/new2.csv"], "first/plans_new.log.xz")
    compare("few candidates a call, capacity of the asked split (before the fix)",
            ["planner/cheap_base1.csv", "planner/cheap_base2.csv"], ["planner/cheap_new1.csv", "planner/cheap_new2.csv"],
            "planner/cheap_plans_new.log.xz")


if __name__ == "__main__":
    main()
