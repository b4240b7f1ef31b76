#!/usr/bin/env python3
"""Host cost per call and wall time per call of back-to-back calls
(host_overhead.cpp), tgemm of each library against cuBLAS in the same
processes: the mean over the runs of each library (each run's figures are
medians of 7 rounds).

    python3 host_table.py LIB=FILE.csv [LIB=FILE.csv ...]
"""
import collections
import csv
import sys


def main(args):
    libs = [a.split("=", 1) for a in args]
    data = collections.defaultdict(list)
    shapes = []
    for name, path in libs:
        for r in csv.DictReader(open(path)):
            if r["m"] == "m":
                continue
            shape = f"{r['m']} x {r['n']} x {r['k']} {r['ta']}{r['tb']}"
            if shape not in shapes:
                shapes.append(shape)
            who = "cuBLAS" if r["lib"] == "cublas" else name
            data[(shape, who)].append((float(r["enqueue_us"]), float(r["wall_us"])))
    cols = [n for n, _ in libs] + ["cuBLAS"]
    print("| shape | " + " | ".join(f"{c} enqueue" for c in cols) + " | " + " | ".join(f"{c} wall" for c in cols) + " |")
    print("|---|" + "---:|" * (2 * len(cols)))
    for s in shapes:
        cells = []
        for i in (0, 1):
            for c in cols:
                v = data[(s, c)]
                cells.append(f"{sum(x[i] for x in v) / len(v):.1f}" if v else "")
        print(f"| {s} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
