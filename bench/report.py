#!/usr/bin/env python3
"""Regenerate the measured part of docs/performance.md from a benchmark run.

    python3 bench/report.py RUN_DIR [--date YYYY-MM-DD] [--device TEXT]
    python3 bench/report.py RUN_DIR --date YYYY-MM-DD --section blas|random|suite

--section replaces only that section and keeps the rest of the generated
tables: blas from blas_offload.csv (with the run's date in it); random
from random_report.md, random_hist.png and random_scatter.png (`make
bench-random`); suite from suite.csv; multi, "Several GPUs", from what
bench/multi_gpu.sh leaves in RUN_DIR (multi_*.csv, links.csv, topo.txt;
`make bench-multi`), through bench/multi_report.py.

RUN_DIR is what `tests/gpu-session.sh bench sweep` leaves (unpacked from
session.tar.gz): suite.csv, squares.csv, blas_offload.csv, host.csv,
sweep_*.csv and the PNG plots; whichever are present are reported. The
tables above the marker line in docs/performance.md are replaced; what
is below it (a pointer to docs/notes/) is kept, and so is the Several GPUs
section when RUN_DIR has no multi_*.csv. Plots are copied to docs/performance/.
"""
import argparse
import csv
import glob
import math
import os
import shutil
import sys

import multi_report  # bench/multi_report.py: the Several GPUs section

DOC = os.path.join(os.path.dirname(__file__), "..", "docs", "performance.md")
PLOTS = os.path.join(os.path.dirname(__file__), "..", "docs", "performance")
BLAS_HEADING = "## BLAS ABI on host memory: the CPU BLAS, `auto` and the GPU forced"
MARKER = "<!-- end of generated tables: the analysis below is written by hand -->"

# A few lines under each section's heading: what it measures, how to read it.
EXPLAIN = {
    "suite": "The issue 4 suite on device pointers (`bench_gemm --suite`). tgemm / cuBLAS is cuBLAS's time over "
             "tgemm's: above 1, tgemm is faster. The floor is the shape's compute or memory bound on this GPU; "
             "time / floor says how far a call is from it. `timing` says which clock the row used (above).",
    "squares": "Square NN products from 32 to 16384 (`bench_gemm --squares`), read as the suite. Below 512 the "
               "per-call host overhead dominates; from 2048 up both libraries run near the FP32 peak.",
    "host": "Operands in host memory (`bench_gemm --host`): `tgemm_sgemm` from pageable and pinned memory, the "
            "naive cuBLAS path (copy in, multiply, copy out) from the same memory, and the multiply alone on "
            "device pointers. vs_naive is the naive path's time over this one's; x_multiply is this time over "
            "the multiply alone; the floor is the larger of the link's transfer time and the multiply alone, "
            "and pct_of_floor how close the call comes to it. resid is the largest |C - R| / bound of the "
            "output check (at most 1).",
    "sweep": "Each tiled family forced (`TGEMM_KERNEL`) on the same shapes (`tests/gpu-session.sh sweep`): how "
             "fast a family runs a shape on its own. The dispatcher's measured factors for the H100 come from "
             "such runs; the best of a column is what a plan on one family can reach.",
}
NOTES = ("\n\n## Past work\n\nHow these figures came about, what was tried and why the code is as it is: "
         "docs/notes/ (history.md lists the files).\n")

LARGE_SQUARES = {"sq8192", "sq4096_nn", "sq4096_nt", "sq4096_tn", "sq4096_tt"}
MEMORY_BOUND = {"skinny_m16", "skinny_n16", "gemv_m1", "gemv_n1"}
SMALL = {"small512", "small128", "tiny32"}


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def suite_section(path):
    data = rows(path)
    out = ["## tgemm against cuBLAS, device pointers (the issue 4 suite)", "", EXPLAIN["suite"], ""]
    out.append("| shape | M | N | K | op | tgemm TFLOP/s | cuBLAS TFLOP/s | tgemm / cuBLAS | tgemm us | cuBLAS us"
               " | floor us (kind) | tgemm time / floor | timing |")
    out.append("|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---|")
    ratios = []
    for r in data:
        ratio = num(r["ratio"])
        if ratio:
            ratios.append((ratio, r["name"]))
        t, fl = num(r["tgemm_us"]), num(r["floor_us"])
        over = f"{t / fl:.2f}x" if t and fl else "n/a"
        out.append(f"| {r['name']} | {r['m']} | {r['n']} | {r['k']} | {r['ta']}{r['tb']} | {num(r['tgemm_tflops']):.2f}"
                   f" | {r['cublas_tflops']} | {r['ratio']} | {num(r['tgemm_us']):.1f} | {r['cublas_us']}"
                   f" | {num(r['floor_us']):.1f} ({r['floor_kind']}) | {over} | {r['timing']} |")
    out.append("")
    if ratios:
        geo = math.exp(sum(math.log(x) for x, _ in ratios) / len(ratios))
        worst = min(ratios)
        by = {r["name"]: r for r in data}
        large = [num(by[n]["ratio"]) for n in LARGE_SQUARES if n in by]
        mem = [(num(by[n]["tgemm_us"]) / num(by[n]["floor_us"]), n) for n in MEMORY_BOUND if n in by]
        small = [num(by[n]["ratio"]) for n in SMALL if n in by]
        out.append("Against the issue 4 targets, from this run:")
        out.append("")
        out.append("| target | wanted | measured | met |")
        out.append("|---|---|---|---|")
        out.append(f"| geometric mean of tgemm/cuBLAS | >= 1.05 | {geo:.3f} over {len(ratios)} shapes"
                   f" | {'yes' if geo >= 1.05 else 'no'} |")
        out.append(f"| every shape | >= 0.90 | min {worst[0]:.3f} ({worst[1]}) | {'yes' if worst[0] >= 0.9 else 'no'} |")
        if large:
            out.append(f"| large squares | >= 1.0 | {min(large):.3f} to {max(large):.3f} | {'yes' if min(large) >= 1 else 'no'} |")
        if mem:
            w = max(mem)
            out.append(f"| memory-bound shapes, time / memory floor | <= 1.3 | up to {w[0]:.2f} ({w[1]})"
                       f" | {'yes' if w[0] <= 1.3 else 'no'} |")
        if small:
            out.append(f"| small problems, time per call vs cuBLAS | ratio >= 1.0 | {min(small):.3f} to {max(small):.3f}"
                       f" | {'yes' if min(small) >= 1 else 'no'} |")
        out.append("")
    return out


def squares_section(path):
    data = rows(path)
    out = ["## Square sizes, NN", "", EXPLAIN["squares"], "", "![TFLOP/s against size](performance/squares.png)", "",
           "| n | tgemm TFLOP/s | cuBLAS TFLOP/s | tgemm / cuBLAS | tgemm us | cuBLAS us |",
           "|---:|---:|---:|---:|---:|---:|"]
    for r in data:
        out.append(f"| {r['m']} | {num(r['tgemm_tflops']):.2f} | {r['cublas_tflops']} | {r['ratio']}"
                   f" | {num(r['tgemm_us']):.1f} | {r['cublas_us']} |")
    out.append("")
    return out


def blas_section(path, date=None, beside=None):
    """The BLAS section from blas_offload.csv at path; with `beside`, a
    run's blas_beside.csv (bench_blas.py --beside) as a second table."""
    data = rows(path)
    worst_auto = max(num(r["auto_over_best"]) for r in data)
    worst_spread = max(num(r["gpu_spread"]) for r in data)
    per_call = "gpu_call_spread" in data[0]
    run = f" Run of {date}." if date else ""
    out = [BLAS_HEADING, "",
           "![CPU BLAS, auto and the GPU](performance/blas_offload.png)", "",
           "`cblas_sgemm` on pageable host operands from a program linked only against OpenBLAS "
           "(`make bench-blas`, bench/bench_blas.py, `OPENBLAS_THREAD_TIMEOUT=4` in all modes): plain, under "
           "`LD_PRELOAD=libtgemm.so` with `TGEMM_OFFLOAD=auto` and with `TGEMM_OFFLOAD=gpu`, in 5 interleaved "
           "rounds (each process first runs 2048^3 products for a second, as a program's earlier work: `auto` starts "
           "the GPU in a process only once that has paid, docs/notes/history-host.md has a run without; then it "
           "warms each shape with 3 calls and at least 30 ms of calls, and times 3); "
           "medians of every timed call of every round. `auto` is the side of the shape's last call (`*`: its "
           "first calls tried the other side); auto/best is `auto`'s median over the faster side's. GPU spread: "
           "each round is a repetition (the median of its timed calls), and the spread is the largest distance "
           "of a repetition from the median of the repetitions" +
           ("; per call: the largest distance of a single call from the median of all calls" if per_call else "") +
           f". Goals: auto/best <= 1.15 (worst here {worst_auto:.3f}), spread <= 10% (worst here "
           f"{100 * worst_spread:.1f}%).{run}", ""]
    head = "| shape | layout | op | M | N | K | CPU BLAS ms | auto ms | GPU ms | auto | auto/best | GPU spread |"
    rule = "|---|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|"
    if per_call:
        head += " per call |"
        rule += "---:|"
    out += [head, rule]
    for r in data:
        line = (f"| {r['shape']} | {r['layout']} | {r['transa']}{r['transb']} | {r['m']} | {r['n']} | {r['k']}"
                f" | {1e3 * num(r['cpu_s']):.3f} | {1e3 * num(r['auto_s']):.3f} | {1e3 * num(r['gpu_s']):.3f}"
                f" | {r['auto_path']} | {num(r['auto_over_best']):.3f} | {100 * num(r['gpu_spread']):.1f}% |")
        if per_call:
            line += f" {100 * num(r['gpu_call_spread']):.1f}% |"
        out.append(line)
    out.append("")
    if beside:
        out += beside_lines(beside)
    return out


def beside_lines(path):
    data = rows(path)
    within = sum(num(r["auto_over_best"]) <= 1.15 for r in data)
    worst = max(data, key=lambda r: num(r["auto_over_best"]))
    out = ["`auto` against both sides measured beside it (`make bench-blas BENCH_BLAS_ARGS=--beside`, another run "
           "of the same session): each timed call of the `auto` process is followed by the same product on OpenBLAS's "
           "own cblas_sgemm and on tgemm's GPU path (tgemm_sgemm_ex on the host operands), the two in turn first, so "
           "that the three are timed in one process within milliseconds; auto/best is `auto`'s median over the "
           "faster side's median there. The goal is the same (<= 1.15): "
           f"{within} of {len(data)} shapes, worst {num(worst['auto_over_best']):.3f} ({worst['shape']} "
           f"{worst['m']}x{worst['n']}x{worst['k']}). In such a run `auto`'s own calls run beside the other "
           "side's, so its table above comes from a run without.", "",
           "| shape | layout | op | M | N | K | auto ms | CPU BLAS beside ms | GPU beside ms | auto | auto/best |",
           "|---|---|---|---:|---:|---:|---:|---:|---:|---|---:|"]
    for r in data:
        out.append(f"| {r['shape']} | {r['layout']} | {r['transa']}{r['transb']} | {r['m']} | {r['n']} | {r['k']}"
                   f" | {1e3 * num(r['auto_s']):.3f} | {1e3 * num(r['cpu_beside_s']):.3f}"
                   f" | {1e3 * num(r['gpu_beside_s']):.3f} | {r['auto_path']} | {num(r['auto_over_best']):.3f} |")
    out.append("")
    return out


def multi_section(run, date=None):
    """The Several GPUs section from bench/multi_gpu.sh's files in run, or
    None when there are none."""
    csvs = sorted(glob.glob(os.path.join(run, "multi_g*.csv"))) + \
        sorted(glob.glob(os.path.join(run, "multi_auto.csv")))
    if not csvs:
        return None
    links = os.path.join(run, "links.csv")
    topo = os.path.join(run, "topo.txt")
    gpus = os.path.join(run, "gpus.txt")
    if date and os.path.exists(gpus):
        # nvidia-smi -L: "GPU 0: NAME (UUID: ...)", one line a GPU.
        names = [l.split(":", 1)[1].split("(UUID")[0].strip() for l in open(gpus) if l.startswith("GPU ")]
        if names:
            kinds = sorted(set(names))
            date += " on " + ", ".join("%d x %s" % (names.count(k), k) for k in kinds)
    return multi_report.section(multi_report.read_rows(csvs),
                                multi_report.read_rows([links]) if os.path.exists(links) else [],
                                open(topo).read() if os.path.exists(topo) else None, date)


def generated_section(text, heading):
    """The lines of the generated section under `heading` in text (up to the
    next heading of its level or the marker), or []."""
    top = text.partition(MARKER)[0]
    start = top.find(heading)
    if start < 0:
        return []
    nxt = top.find("\n## ", start + len(heading))
    return top[start:nxt + 1 if nxt >= 0 else len(top)].rstrip("\n").split("\n") + [""]


def replace_section(heading, lines):
    """Replaces the generated section under `heading` in the doc (up to the
    next heading or the marker) with `lines`; appends it to the generated
    part where there is none."""
    text = open(DOC).read()
    top, marker, kept = text.partition(MARKER)
    start = top.find(heading)
    if start < 0:
        start = len(top)
    nxt = top.find("\n## ", start + len(heading))
    end = nxt + 1 if nxt >= 0 else len(top)
    top = top[:start] + "\n".join(lines) + "\n" + top[end:]
    with open(DOC, "w") as f:
        f.write(top + marker + kept)


def host_section(path):
    data = rows(path)
    if not data:
        return []
    cols = list(data[0].keys())
    out = ["## Host-memory operands (issue 5)", "", EXPLAIN["host"], "", "| " + " | ".join(cols) + " |",
           "|" + "---|" * len(cols)]
    for r in data:
        out.append("| " + " | ".join(r[c] for c in cols) + " |")
    out.append("")
    return out


def sweep_section(run):
    files = sorted(f for f in os.listdir(run) if f.startswith("sweep_") and f.endswith(".csv"))
    if not files:
        return []
    shapes = None
    table = []
    for f in files:
        data = rows(os.path.join(run, f))
        if shapes is None:
            shapes = [r["name"] for r in data]
        by = {r["name"]: r for r in data}
        table.append((f[len("sweep_"):-4], [by.get(s, {}).get("tgemm_tflops", "") for s in shapes]))
    out = ["## Each tiled family forced (TGEMM_KERNEL), TFLOP/s", "",
           EXPLAIN["sweep"], "",
           "| family | " + " | ".join(shapes) + " |", "|---|" + "---:|" * len(shapes)]
    for fam, vals in table:
        out.append(f"| {fam} | " + " | ".join(f"{num(v):.1f}" if num(v) else "" for v in vals) + " |")
    out.append("")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run")
    ap.add_argument("--date", required=True)
    ap.add_argument("--section", choices=["blas", "random", "suite", "multi"])
    ap.add_argument("--beside", metavar="RUN2",
                    help="with --section blas: RUN2's blas_beside.csv (bench_blas.py --beside) as a second table")
    ap.add_argument("--device", default="NVIDIA H100 80GB HBM3 (132 SMs), driver 580.159, CUDA 13.0")
    args = ap.parse_args()
    if args.beside and args.section != "blas":
        ap.error("--beside goes with --section blas")
    run = args.run
    if args.section == "blas":
        beside = os.path.join(args.beside, "blas_beside.csv") if args.beside else None
        replace_section(BLAS_HEADING, blas_section(os.path.join(run, "blas_offload.csv"), args.date, beside))
        png = os.path.join(run, "blas_offload.png")
        if os.path.exists(png):
            shutil.copy(png, os.path.join(PLOTS, "blas_offload.png"))
        print(f"report: replaced the BLAS section of {os.path.normpath(DOC)}")
        return 0
    if args.section == "random":
        lines = open(os.path.join(run, "random_report.md")).read().rstrip("\n").split("\n")
        lines[1:1] = ["", f"Run of {args.date} on {args.device}.", "",
                      "![ratio histogram](performance/random_hist.png)",
                      "![ratio against flops](performance/random_scatter.png)"]
        replace_section(lines[0], lines + [""])
        for png in ("random_hist.png", "random_scatter.png"):
            if os.path.exists(os.path.join(run, png)):
                shutil.copy(os.path.join(run, png), os.path.join(PLOTS, png))
        print(f"report: replaced the random-shape section of {os.path.normpath(DOC)}")
        return 0
    if args.section == "multi":
        lines = multi_section(run, args.date)
        if lines is None:
            print(f"report: no multi_*.csv in {run} (bench/multi_gpu.sh writes them)", file=sys.stderr)
            return 1
        replace_section(multi_report.TITLE, lines)
        print(f"report: replaced the Several GPUs section of {os.path.normpath(DOC)}")
        return 0
    if args.section == "suite":
        lines = suite_section(os.path.join(run, "suite.csv"))
        lines[1:1] = ["", f"Run of {args.date} on {args.device}."]
        replace_section(lines[0], lines)
        print(f"report: replaced the suite section of {os.path.normpath(DOC)}")
        return 0
    out = ["# tgemm performance", "",
           f"Measured on {args.device}, {args.date}, by `tests/gpu-session.sh bench sweep` "
           "(which runs `make bench`); regenerate this part with "
           "`python3 bench/report.py RUN_DIR --date DATE`. tgemm and cuBLAS (cublasSgemm, default math mode: "
           "pure FP32) run in the same process on the same inputs, alternating call by call, every output "
           "checked element by element against an FP64 reference before timing and after; median of at least 20 calls with CUDA events, or for M*N*K <= 512^3 the wall time "
           "per call of 200 back-to-back calls (host overhead included). Inputs rotate through several sets "
           "when they would fit in L2. Floors: 2MNK / 66.9 TFLOP/s and 4(MK+KN+MN) bytes / 2.88 TB/s.", ""]
    sections = [("suite.csv", suite_section), ("squares.csv", squares_section),
                ("blas_offload.csv", blas_section), ("host.csv", host_section)]
    for name, fn in sections:
        p = os.path.join(run, name)
        if os.path.exists(p):
            out += fn(p)
    out += sweep_section(run)
    multi = multi_section(run, args.date)
    if multi is None and os.path.exists(DOC):
        multi = generated_section(open(DOC).read(), multi_report.TITLE)
    out += multi or []
    os.makedirs(PLOTS, exist_ok=True)
    for png in ("squares.png", "suite_ratio.png", "blas_offload.png", "host.png"):
        p = os.path.join(run, png)
        if os.path.exists(p):
            shutil.copy(p, os.path.join(PLOTS, png))
    if os.path.exists(os.path.join(run, "suite_ratio.png")):
        out.insert(out.index("## tgemm against cuBLAS, device pointers (the issue 4 suite)") + 4,
                   "![tgemm / cuBLAS per suite shape](performance/suite_ratio.png)\n")
    kept = NOTES
    if os.path.exists(DOC):
        text = open(DOC).read()
        if MARKER in text:
            kept = text.split(MARKER, 1)[1]
    with open(DOC, "w") as f:
        f.write("\n".join(out) + "\n" + MARKER + kept)
    print(f"report: wrote {os.path.normpath(DOC)}")


if __name__ == "__main__":
    sys.exit(main())
