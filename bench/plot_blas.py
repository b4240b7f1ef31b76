#!/usr/bin/env python3
"""Compare bench_cpu_blas runs: the CPU BLAS alone against libtgemm preloaded.

    python3 bench/plot_blas.py CPU_CSV TGEMM_CSV OUT_DIR

Reads the two CSV files bench_cpu_blas --csv wrote (the same shapes, plain
and under LD_PRELOAD=libtgemm.so TGEMM_OFFLOAD=gpu) and

  - prints a table: shape, CPU BLAS time, tgemm time, speedup;
  - writes OUT_DIR/blas_compare.csv with the same columns;
  - prints the smallest square size where tgemm is faster, and the size
    from which it is faster at every larger square size (the crossover
    that sets TGEMM_OFFLOAD_MIN_FLOPS, 2 * n^3 at that size);
  - draws OUT_DIR/blas_compare.png: median time against square size, both
    curves, log-log (needs matplotlib; the table and CSV do not).
"""

import csv
import os
import sys


def read(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit(f"plot_blas.py: {path} has no rows")
    return {key(r): r for r in rows}


def key(row):
    return (row["shape"], row["layout"], row["transa"], row["transb"], int(row["m"]), int(row["n"]), int(row["k"]))


def crossover(squares):
    """(smallest n where tgemm wins, smallest n from which it always wins)."""
    first = next((n for n, s in squares if s > 1.0), None)
    always = None
    for n, s in reversed(squares):
        if s <= 1.0:
            break
        always = n
    return first, always


def plot(squares_cpu, squares_tgemm, path):
    try:
        import matplotlib
    except ImportError:
        print("plot_blas.py: matplotlib is not installed (pip install matplotlib): no plot drawn")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 5))
    ax.loglog([n for n, _ in squares_cpu], [t * 1e3 for _, t in squares_cpu], "o-", label="CPU BLAS (cblas_sgemm)")
    ax.loglog([n for n, _ in squares_tgemm], [t * 1e3 for _, t in squares_tgemm], "s-",
              label="tgemm (LD_PRELOAD, TGEMM_OFFLOAD=gpu)")
    ax.set_xlabel("n (square SGEMM, n x n x n, host memory)")
    ax.set_ylabel("median time per call (ms)")
    ax.set_title("cblas_sgemm: CPU BLAS against tgemm on the GPU")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot_blas.py: wrote {path}")


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    cpu, tgemm, out_dir = read(sys.argv[1]), read(sys.argv[2]), sys.argv[3]
    os.makedirs(out_dir, exist_ok=True)
    rows = []
    for k, c in cpu.items():
        t = tgemm.get(k)
        if t is None:
            continue
        cpu_s, tgemm_s = float(c["median_s"]), float(t["median_s"])
        rows.append((k, cpu_s, tgemm_s, cpu_s / tgemm_s))
    if not rows:
        sys.exit("plot_blas.py: the two files have no shape in common")

    header = f"{'shape':<14} {'layout':>6} {'op':>3} {'m':>6} {'n':>6} {'k':>6} {'cpu_blas_ms':>12} {'tgemm_ms':>12} {'speedup':>8}"
    print(header)
    out_csv = os.path.join(out_dir, "blas_compare.csv")
    with open(out_csv, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["shape", "layout", "transa", "transb", "m", "n", "k", "cpu_blas_s", "tgemm_s", "speedup"])
        for (shape, layout, ta, tb, m, n, k), cpu_s, tgemm_s, speedup in rows:
            print(f"{shape:<14} {layout:>6} {ta + tb:>3} {m:>6} {n:>6} {k:>6} {cpu_s * 1e3:12.3f} {tgemm_s * 1e3:12.3f} {speedup:8.2f}")
            w.writerow([shape, layout, ta, tb, m, n, k, f"{cpu_s:.9g}", f"{tgemm_s:.9g}", f"{speedup:.4g}"])
    print(f"plot_blas.py: wrote {out_csv}")

    squares = sorted((k[4], s) for k, _, _, s in rows if k[0] == "square")
    if squares:
        first, always = crossover(squares)
        if first is None:
            print("crossover: tgemm is not faster at any square size measured")
        else:
            print(f"crossover: smallest square size where tgemm wins: {first} (speedup "
                  f"{dict(squares)[first]:.2f})")
            if always is not None:
                print(f"crossover: tgemm wins at every square size from {always} up; "
                      f"TGEMM_OFFLOAD_MIN_FLOPS={2.0 * always ** 3:.3g} (2 * {always}^3)")
            else:
                print("crossover: tgemm loses again at the largest square size measured")
        sq = [k for k, _, _, _ in rows if k[0] == "square"]
        plot(sorted((k[4], float(cpu[k]["median_s"])) for k in sq),
             sorted((k[4], float(tgemm[k]["median_s"])) for k in sq),
             os.path.join(out_dir, "blas_compare.png"))


if __name__ == "__main__":
    main()
