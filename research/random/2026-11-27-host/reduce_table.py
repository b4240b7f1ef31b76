#!/usr/bin/env python3
"""The split-K reduction's cost by kernel variant: what a workspace plan's
time (bench_plans `us`) exceeds the same plan without its reduction
(`us_main`), averaged over the runs of each variant and then over the plans
of each range of slices.

    python3 reduce_table.py DIR    (DIR holding rp_<variant>_<run>_<op>.csv)
"""
import collections
import csv
import glob
import os
import sys


def main(d):
    cost = collections.defaultdict(list)
    for f in glob.glob(os.path.join(d, "rp_*.csv")):
        variant = os.path.basename(f).split("_")[1]
        for r in csv.DictReader(open(f)):
            if r["form"] != "workspace":
                continue
            key = (r["m"], r["n"], r["k"], r["transa"], r["transb"], r["family"], int(r["splits"]))
            cost[(variant, key)].append((float(r["us"]) - float(r["us_main"]), float(r["us"])))
    variants = sorted({v for v, _ in cost}, key=lambda v: (v != "base", v))
    keys = sorted({k for _, k in cost if all((v, k) in cost for v in variants)})
    ranges = collections.defaultdict(list)
    for k in keys:
        ranges[min(k[6] // 16, 7)].append(k)
    print("| slices | plans | " + " | ".join(f"reduction {v}, us" for v in variants) + " | " +
          " | ".join(f"plan {v}, us" for v in variants) + " |")
    print("|---|---:|" + "---:|" * (2 * len(variants)))
    for r in sorted(ranges):
        ks = ranges[r]
        lo, hi = r * 16, (r * 16 + 15 if r < 7 else max(k[6] for k in ks))
        cells = []
        for i in (0, 1):
            for v in variants:
                vals = [sum(x[i] for x in cost[(v, k)]) / len(cost[(v, k)]) for k in ks]
                cells.append(f"{sum(vals) / len(vals):.2f}")
        print(f"| {max(lo, 2)} to {hi} | {len(ks)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "reduce"))
