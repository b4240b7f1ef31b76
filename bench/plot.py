#!/usr/bin/env python3
"""Plot bench_gemm results.

    python3 bench/plot.py DIR

Reads DIR/squares.csv and DIR/suite.csv (each when present, as written by
bench_gemm --csv) and writes:

    DIR/squares.png      TFLOP/s against square size, tgemm and cuBLAS,
                         with the FP32 peak as a horizontal line
    DIR/suite_ratio.png  tgemm/cuBLAS speed ratio per suite shape, with a
                         line at 1.0 and the geometric mean in the title

Needs only python3 and matplotlib.
"""

import csv
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

FP32_PEAK_TFLOPS = 66.9  # H100 SXM, 132 SMs x 128 lanes x 2 x 1.98 GHz


def number(text):
    """A float from a CSV cell, or None for 'n/a', empty or unparsable cells."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def read_rows(path):
    if not os.path.isfile(path):
        print(f"plot.py: {path} not found, skipped")
        return None
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        print(f"plot.py: {path} has no rows, skipped")
        return None
    return rows


def plot_squares(rows, out):
    pts = []
    for r in rows:
        size = number(r.get("m"))
        if size is None:
            continue
        pts.append((size, number(r.get("tgemm_tflops")), number(r.get("cublas_tflops"))))
    pts.sort()
    fig, ax = plt.subplots(figsize=(8, 5))
    for idx, label, marker in ((1, "tgemm", "o"), (2, "cuBLAS (FP32)", "s")):
        xs = [p[0] for p in pts if p[idx] is not None]
        ys = [p[idx] for p in pts if p[idx] is not None]
        if xs:
            ax.plot(xs, ys, marker=marker, label=label)
    ax.axhline(FP32_PEAK_TFLOPS, color="gray", linestyle="--",
               label=f"FP32 peak {FP32_PEAK_TFLOPS} TFLOP/s")
    ax.set_xscale("log", base=2)
    if pts:
        ax.set_xticks([p[0] for p in pts])
        ax.set_xticklabels([str(int(p[0])) for p in pts], rotation=45)
    ax.set_xlabel("M = N = K (NN, column-major)")
    ax.set_ylabel("TFLOP/s")
    ax.set_ylim(bottom=0)
    ax.set_title("SGEMM, square sizes")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    print(f"plot.py: wrote {out}")


def plot_suite_ratio(rows, out):
    names, ratios = [], []
    for r in rows:
        ratio = number(r.get("ratio"))
        if ratio is None or ratio <= 0:
            continue
        names.append(r.get("name", "?"))
        ratios.append(ratio)
    if not ratios:
        print("plot.py: suite.csv has no tgemm/cuBLAS ratios (cuBLAS not loaded?), "
              f"{out} not written")
        return
    gmean = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
    fig, ax = plt.subplots(figsize=(max(8, 0.5 * len(names) + 2), 5))
    colors = ["tab:green" if x >= 1.0 else "tab:red" for x in ratios]
    ax.bar(range(len(names)), ratios, color=colors)
    ax.axhline(1.0, color="black", linewidth=1)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=60, ha="right")
    ax.set_ylabel("tgemm / cuBLAS speed ratio")
    ax.set_title(f"tgemm vs cuBLAS FP32 per shape, geometric mean {gmean:.3f}")
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    print(f"plot.py: wrote {out} (geometric mean {gmean:.3f} over {len(ratios)} shapes)")


def main(argv):
    if len(argv) != 2:
        print("usage: python3 bench/plot.py DIR", file=sys.stderr)
        return 2
    d = argv[1]
    if not os.path.isdir(d):
        print(f"plot.py: {d} is not a directory", file=sys.stderr)
        return 2
    rows = read_rows(os.path.join(d, "squares.csv"))
    if rows:
        plot_squares(rows, os.path.join(d, "squares.png"))
    rows = read_rows(os.path.join(d, "suite.csv"))
    if rows:
        plot_suite_ratio(rows, os.path.join(d, "suite_ratio.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
