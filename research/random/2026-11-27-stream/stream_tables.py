#!/usr/bin/env python3
"""Prints the tables of docs/performance.md "The streaming kernels' tails
and Y staging" from this directory's CSVs and plan logs (bench_random --csv,
TGEMM_VERBOSE=2 --plans). base = main before the change (11b85f0), new =
bbde3fa, ring = bbde3fa plus ring/dots_ring.patch (not kept).

    python3 stream_tables.py
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
    out, cur = {}, None
    with lzma.open(os.path.join(HERE, path), "rt") as f:
        for line in f:
            m = re.match(r"== shape (\d+)", line)
            if m:
                cur = int(m[1])
            elif cur is not None and "plan m=" in line and cur not in out:
                out[cur] = re.sub(r".*plan m=\S+ n=\S+ k=\S+ \S+ ", "", line.strip())
    return out


def gm(v):
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def kind(plan):
    w = plan.split()
    return " ".join(w[:2]) if w and w[0] in ("streaming", "tiled") else w[0] if w else "?"


def cold(r):
    return float(r["tgemm_cold_us"])


def hot(r):
    return float(r["tgemm_hot_us"])


def within(rows):
    return sum(cold(r) <= 1.3 * float(r["floor_us"]) for r in rows.values())


def sets_table():
    print("| set | problems | ratio hot base -> new | ratio cold base -> new | within 1.3x floor (cold) | tgemm speedup hot | cold |")
    print("|---|---:|---|---|---|---:|---:|")
    for name, label in (("mb80", "memory-bound draws (shapes_mb80.txt)"), ("mb_prof", "profiled (shapes_profiled.txt)"),
                        ("worst15", "15 worst of seeds 9290001-3")):
        b, n = load(f"kernel/{name}_base.csv"), load(f"kernel/{name}_new.csv")
        rb = [float(b[i]["ratio_hot"]) for i in b]
        rn = [float(n[i]["ratio_hot"]) for i in n]
        cb = [float(b[i]["ratio_cold"]) for i in b]
        cn = [float(n[i]["ratio_cold"]) for i in n]
        sh = gm([hot(b[i]) / hot(n[i]) for i in n])
        sc = gm([cold(b[i]) / cold(n[i]) for i in n])
        mb = {i: r for i, r in b.items() if r["membound"] == "1" and float(r["floor_us"]) >= 10}
        mn = {i: r for i, r in n.items() if i in mb}
        print(f"| {label} | {len(n)} | {gm(rb):.3f} -> {gm(rn):.3f} | {gm(cb):.3f} -> {gm(cn):.3f} | "
              f"{within(mb)} -> {within(mn)} of {len(mb)} | {sh:.3f} | {sc:.3f} |")


def kinds_table(prefix, label_new, sets, base_dir="kernel", new_dir="kernel", new_tag="new", plan_dir="kernel"):
    print(f"\n| plan ({label_new}) | problems | tgemm speedup hot | cold | slowest cold |")
    print("|---|---:|---:|---:|---:|")
    acc = {}
    for name in sets:
        b, n = load(f"{base_dir}/{name}_base.csv"), load(f"{new_dir}/{name}_{new_tag}.csv")
        p = plans(f"{plan_dir}/plans_{name}_new.log.xz")
        for i in n:
            k = kind(p.get(i, "?"))
            acc.setdefault(k, []).append((hot(b[i]) / hot(n[i]), cold(b[i]) / cold(n[i])))
    for k, v in sorted(acc.items(), key=lambda x: -len(x[1])):
        print(f"| {k} | {len(v)} | {gm([a for a, _ in v]):.3f} | {gm([c for _, c in v]):.3f} | {min(c for _, c in v):.3f} |")


def profiled_table():
    b, n = load("kernel/mb_prof_base.csv"), load("kernel/mb_prof_new.csv")
    p = plans("kernel/plans_mb_prof_new.log.xz")
    print("\n| m | n | k | op | plan | floor us | tgemm cold us base -> new | ratio cold base -> new |")
    print("|---:|---:|---:|---|---|---:|---|---|")
    for i in sorted(n, key=lambda i: cold(b[i]) / cold(n[i]), reverse=True):
        r = n[i]
        print(f"| {r['m']} | {r['n']} | {r['k']} | {r['ta']}{r['tb']} | {p.get(i, '?')} | {float(r['floor_us']):.1f} | "
              f"{cold(b[i]):.1f} -> {cold(r):.1f} | {float(b[i]['ratio_cold']):.2f} -> {float(r['ratio_cold']):.2f} |")


def ring_table():
    n, g = load("kernel/mb80_new.csv"), load("ring/mb80_ring.csv")
    p = plans("ring/plans_mb80_ring.log.xz")
    d = [i for i in g if kind(p.get(i, "?")) == "streaming dots"]
    o = [i for i in g if i not in d]
    print("\n| problems of shapes_mb80.txt | count | ring over bbde3fa, tgemm time cold (above 1: ring slower) |")
    print("|---|---:|---:|")
    print(f"| on skinny_dots | {len(d)} | {gm([cold(g[i]) / cold(n[i]) for i in d]):.3f} |")
    print(f"| the others | {len(o)} | {gm([cold(g[i]) / cold(n[i]) for i in o]):.3f} |")


def seeds_table():
    print("\n| plan (seeds 9300001-3) | problems | tgemm speedup hot | cold | slowest cold |")
    print("|---|---:|---:|---:|---:|")
    acc = {}
    for s in (9300001, 9300002, 9300003):
        b, n = load(f"final/base_{s}.csv"), load(f"final/new_{s}.csv")
        p = plans(f"final/plans_new_{s}.log.xz")
        for i in n:
            k = kind(p.get(i, "?"))
            k = k if k.startswith("streaming") else "other (kernels unchanged)"
            acc.setdefault(k, []).append((hot(b[i]) / hot(n[i]), cold(b[i]) / cold(n[i])))
    for k, v in sorted(acc.items(), key=lambda x: -len(x[1])):
        print(f"| {k} | {len(v)} | {gm([a for a, _ in v]):.3f} | {gm([c for _, c in v]):.3f} | {min(c for _, c in v):.3f} |")


sets_table()
kinds_table("kernel", "bbde3fa over 11b85f0", ("mb80", "mb_prof", "worst15"))
profiled_table()
ring_table()
seeds_table()
