#!/usr/bin/env python3
"""cblas_sgemm on host operands: the CPU BLAS alone, tgemm's `auto` offload
and tgemm with the GPU forced, interleaved, side by side (`make bench-blas`).

    python3 bench/bench_blas.py --bin BENCH_CPU_BLAS --lib LIBTGEMM --out DIR
                                [--rounds 5] [--reps 3] [--warmup 3] [--warmup-ms 30] [--max N]
                                [--random COUNT --seed SEED] [--env KEY=VALUE]... [--direct]
                                [--lead-in SECONDS] [--beside]
    python3 bench/bench_blas.py --report DIR     (tables and plot of an earlier run)

Each round runs bench_cpu_blas three times over the same shapes (each
shape warmed by --warmup calls, default 3, and at least --warmup-ms of
calls, default 30: the first calls over fresh host memory, on cores that
were idle, run up to twice as long; then --reps timed ones): plain
(the program is linked only against OpenBLAS), under LD_PRELOAD=libtgemm.so
with TGEMM_OFFLOAD=auto, and with TGEMM_OFFLOAD=gpu; the order of the three
rotates from round to round, so that a drift of the machine touches all
three alike; then `auto` runs once more with TGEMM_TRACE to record which
side it chose for each call (`auto` learns from the calls it times, so
its first calls of a shape may try both sides). Every timed call of every round is pooled per shape and mode;
the tables give the medians, the side `auto` chose (from TGEMM_TRACE), how
far `auto` is from the faster side, and the spread of the forced GPU path:
each round is one repetition of the shape (its time: the median of the
round's timed calls), and the spread is the largest distance of a
repetition from the median of the repetitions; the largest distance of a
single call is shown beside it. Goals checked: `auto` within 1.15x of the
faster side on every shape, and every forced-GPU repetition within 10% of
their median.

Each process first runs 2048^3 products for --lead-in seconds (default 1;
0 for none), as a program's earlier work: under `auto` tgemm starts the
GPU in a process only once that has paid (the start costs a large
fraction of a second), and the shapes here are measured as in a program
whose GPU side is running, the start-up of the other modes being paid in
their first warm-up calls. With --lead-in 0, `auto`'s first mid-size
shapes stay on the CPU BLAS until their savings have paid the start.

--direct follows every timed call, in all three modes, with the same
product on OpenBLAS's own cblas_sgemm (bench_cpu_blas --direct), timed
apart; a second table then gives the median of those per mode: the CPU
BLAS in the plain program, beside tgemm's `auto` calls and beside the
forced GPU calls, in the same processes and minutes. Where `auto` runs on
the CPU and is slower than the plain program, it says whether the CPU
BLAS itself ran slower in that process (its direct calls too) or the
forwarding cost it (only `auto`'s calls).

--beside follows every timed call of the `auto` process with the same
product on OpenBLAS's own cblas_sgemm and on tgemm's GPU path
(tgemm_sgemm_ex on the host operands, what the forced GPU mode runs), the
two in turn first (bench_cpu_blas --direct --direct-gpu). `auto` is then
compared with both sides measured in its own process within
milliseconds: the ratio of its median to the faster side's, and the
number of shapes within the goal by that measure, beside the one across
processes (whose rounds run seconds apart on a machine whose speed can
drift in between).

Writes DIR/blas_offload.csv (one row per shape), with --beside
DIR/blas_beside.csv, and DIR/blas_offload.png (median time per square
size for the three, log-log; needs matplotlib).
Exits 1 when a goal is missed.
"""

import argparse
import csv
import glob
import os
import statistics
import subprocess
import sys

MODES = ("cpu", "auto", "gpu")
FALLBACK = "blas_gpu_fallback.txt"  # the forced GPU runs' warnings, where the GPU could not run them
AUTO_GOAL = 1.15
SPREAD_GOAL = 0.10
CLEAN = ("TGEMM_OFFLOAD", "TGEMM_OFFLOAD_MIN_FLOPS", "TGEMM_CPU_BLAS", "TGEMM_TRACE", "TGEMM_KERNEL",
         "TGEMM_VERBOSE", "TGEMM_DEVICE_MEMORY_LIMIT", "TGEMM_HOST_COPY_THREADS", "TGEMM_HOST_TRACE", "LD_PRELOAD")


def run_one(args, mode, csv_name, trace=None):
    env = {k: v for k, v in os.environ.items() if k not in CLEAN and not k.startswith("TGEMM_OFFLOAD_")}
    if mode != "cpu":
        env["LD_PRELOAD"] = os.path.abspath(args.lib)
        env["TGEMM_OFFLOAD"] = mode
    if trace:
        env["TGEMM_TRACE"] = trace
    for kv in args.env:
        key, _, value = kv.partition("=")
        env[key] = value
    cmd = [args.bin, "--max", str(args.max), "--reps", str(args.reps), "--warmup", str(args.warmup),
           "--warmup-ms", str(args.warmup_ms),
           "--csv", os.path.join(args.out, csv_name)]
    if args.beside and mode == "auto":
        cmd += ["--direct", "--direct-gpu"]
    elif args.direct:
        cmd.append("--direct")
    if args.lead_in > 0:
        cmd += ["--lead-in", str(args.lead_in)]
    if args.random:
        cmd += ["--random", str(args.random), "--seed", str(args.seed)]
    done = subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    sys.stderr.write(done.stderr)
    # The forced GPU path's one warning: its calls ran on the CPU BLAS instead.
    if mode == "gpu" and "TGEMM_OFFLOAD=gpu, but the GPU could not run" in done.stderr:
        with open(os.path.join(args.out, FALLBACK), "a") as f:
            f.write(done.stderr)


def run_round(args, r):
    order = MODES[r % 3:] + MODES[:r % 3]
    for mode in order:
        print(f"== round {r + 1}/{args.rounds}: {mode}", flush=True)
        run_one(args, mode, f"blas_{mode}_{r}.csv")


def key(row):
    return (row["shape"], row["layout"], row["transa"], row["transb"], int(row["m"]), int(row["n"]), int(row["k"]))


def load(out):
    """shape -> mode -> round -> the round's timed seconds, the same for the
    direct calls (--direct; empty without) and for the GPU calls beside
    (--beside; empty without), and the shapes in order."""
    times = {}
    direct = {}
    direct_gpu = {}
    order = []
    for mode in MODES:
        for path in sorted(glob.glob(os.path.join(out, f"blas_{mode}_*.csv"))):
            rnd = os.path.basename(path)[len(f"blas_{mode}_"):-len(".csv")]
            with open(path, newline="") as f:
                for row in csv.DictReader(f):
                    k = key(row)
                    if k not in times:
                        times[k] = {m: {} for m in MODES}
                        order.append(k)
                    times[k][mode].setdefault(rnd, []).append(float(row["seconds"]))
                    for col, into in (("direct_seconds", direct), ("direct_gpu_seconds", direct_gpu)):
                        if row.get(col):
                            into.setdefault(k, {m: {} for m in MODES})[mode].setdefault(rnd, []).append(
                                float(row[col]))
    return times, direct, direct_gpu, order


def spreads(rounds):
    """(repetition spread, call spread) of one shape's rounds: the largest
    distance of a round's median from the median of those, and of a single
    call from the median of all calls."""
    reps = [statistics.median(v) for v in rounds.values()]
    calls = [x for v in rounds.values() for x in v]
    mid_r, mid_c = statistics.median(reps), statistics.median(calls)
    return (max(abs(x - mid_r) / mid_r for x in reps), max(abs(x - mid_c) / mid_c for x in calls))


def auto_choices(out):
    """(m, n, k, layout, transa, transb) -> the sides auto's trace shows, in
    call order. Only calls with beta != 0 count: bench_cpu_blas times its
    shapes with beta 0.5, and its other calls (--lead-in's 2048^3 products,
    --mix's 128^3 ones) have beta 0."""
    chosen = {}
    for path in glob.glob(os.path.join(out, "blas_trace_*.txt")):
        with open(path) as f:
            for line in f:
                fields = dict(p.split("=", 1) for p in line.split() if "=" in p)
                if "path" not in fields or float(fields.get("beta", "1")) == 0.0:
                    continue
                k = (int(fields["m"]), int(fields["n"]), int(fields["k"]), fields.get("layout", "col"),
                     fields["transa"], fields["transb"])
                chosen.setdefault(k, []).append(fields["path"].split(":")[0])
    return chosen


def write_csv(path, rows):
    """rows (dicts with the same keys) to path, floats to 6 significant digits."""
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})
    print(f"bench_blas.py: wrote {path}")


def report(out):
    times, direct, direct_gpu, order = load(out)
    if not order:
        sys.exit(f"bench_blas.py: no results in {out}")
    chosen = auto_choices(out)
    rows = []
    for k in order:
        t = times[k]
        if not all(t[m] for m in MODES):
            continue
        med = {m: statistics.median([x for v in t[m].values() for x in v]) for m in MODES}
        best = min(med["cpu"], med["gpu"])
        spread, call_spread = spreads(t["gpu"])
        name, layout, ta, tb, m, n, kk = k
        # The side of the shape's last call; * when its first calls tried the other.
        paths = chosen.get((m, n, kk, layout, ta, tb), [])
        side = (paths[-1] + ("*" if len(set(paths)) > 1 else "")) if paths else "?"
        rows.append(dict(shape=name, layout=layout, transa=ta, transb=tb, m=m, n=n, k=kk, cpu_s=med["cpu"],
                         auto_s=med["auto"], gpu_s=med["gpu"], auto_path=side, auto_over_best=med["auto"] / best,
                         gpu_spread=spread, gpu_call_spread=call_spread, rounds=len(t["gpu"]),
                         calls=sum(len(v) for v in t["gpu"].values())))

    print("auto: the side of each shape's last call (* where its first calls tried the other side)")
    print(f"{'shape':<14} {'layout':>6} {'op':>3} {'m':>6} {'n':>6} {'k':>6} {'cpu_ms':>10} {'auto_ms':>10} "
          f"{'gpu_ms':>10} {'auto':>5} {'auto/best':>9} {'gpu_spread':>10} {'per_call':>9}")
    for r in rows:
        flag = " <" if r["auto_over_best"] > AUTO_GOAL or r["gpu_spread"] > SPREAD_GOAL else ""
        print(f"{r['shape']:<14} {r['layout']:>6} {r['transa'] + r['transb']:>3} {r['m']:>6} {r['n']:>6} "
              f"{r['k']:>6} {r['cpu_s'] * 1e3:10.3f} {r['auto_s'] * 1e3:10.3f} {r['gpu_s'] * 1e3:10.3f} "
              f"{r['auto_path']:>5} {r['auto_over_best']:9.3f} {r['gpu_spread'] * 100:9.1f}% "
              f"{r['gpu_call_spread'] * 100:8.1f}%{flag}")
    write_csv(os.path.join(out, "blas_offload.csv"), rows)
    if any(d["cpu"] for d in direct.values()):
        direct_table(rows, direct)
    if direct_gpu:
        beside_table(rows, direct, direct_gpu, out)
    if direct or direct_gpu:
        print("note: with --direct or --beside the calls timed below ran beside the extra calls, which slow "
              "them (caches, cores); the goals below judge such processes")

    if os.path.exists(os.path.join(out, FALLBACK)):
        print(f"the forced GPU runs fell back to the CPU BLAS (no usable GPU: {FALLBACK}): the gpu column and "
              "auto's are not the GPU's, so no goal is judged and no crossover drawn")
        return False
    worst_auto = max(rows, key=lambda r: r["auto_over_best"])
    worst_spread = max(rows, key=lambda r: r["gpu_spread"])
    ok_auto = worst_auto["auto_over_best"] <= AUTO_GOAL
    ok_spread = worst_spread["gpu_spread"] <= SPREAD_GOAL
    print(f"auto against the faster side: worst {worst_auto['auto_over_best']:.3f} ({worst_auto['shape']} "
          f"{worst_auto['m']}x{worst_auto['n']}x{worst_auto['k']}), goal <= {AUTO_GOAL}: "
          f"{'met' if ok_auto else 'MISSED'}")
    print(f"forced GPU, repetitions (rounds) around their median: worst {worst_spread['gpu_spread'] * 100:.1f}% "
          f"({worst_spread['shape']} {worst_spread['m']}x{worst_spread['n']}x{worst_spread['k']}), goal <= "
          f"{SPREAD_GOAL * 100:.0f}%: {'met' if ok_spread else 'MISSED'}")
    squares = sorted((r["m"], r) for r in rows if r["shape"] == "square")
    gpu_wins = [n for n, r in squares if r["gpu_s"] < r["cpu_s"]]
    if gpu_wins:
        print(f"crossover: the GPU is faster than the CPU BLAS from square size {gpu_wins[0]}")
    plot(squares, os.path.join(out, "blas_offload.png"))
    return ok_auto and ok_spread


def median_of(rounds):
    return statistics.median([x for v in rounds.values() for x in v]) if rounds else float("nan")


def direct_table(rows, direct):
    """The CPU BLAS called directly beside each mode's calls (--direct)."""
    print("CPU BLAS called directly after each timed call, in the process of each mode (median ms); "
          "auto/direct: auto's calls over the direct calls of its own process")
    print(f"{'shape':<14} {'layout':>6} {'op':>3} {'m':>6} {'n':>6} {'k':>6} {'plain':>10} {'in auto':>10} "
          f"{'in gpu':>10} {'auto':>5} {'auto/direct':>11}")
    for r in rows:
        k = (r["shape"], r["layout"], r["transa"], r["transb"], r["m"], r["n"], r["k"])
        d = direct.get(k)
        if not d:
            continue
        med = {m: median_of(d[m]) for m in MODES}
        print(f"{r['shape']:<14} {r['layout']:>6} {r['transa'] + r['transb']:>3} {r['m']:>6} {r['n']:>6} "
              f"{r['k']:>6} {med['cpu'] * 1e3:10.3f} {med['auto'] * 1e3:10.3f} {med['gpu'] * 1e3:10.3f} "
              f"{r['auto_path']:>5} {r['auto_s'] / med['auto']:11.3f}")


def beside_table(rows, direct, direct_gpu, out):
    """`auto` against both sides timed beside its calls in its own process
    (--beside); writes out/blas_beside.csv."""
    print("both sides timed beside each auto call, in auto's process (median ms); auto/best: auto's median "
          "over the faster side's there")
    print(f"{'shape':<14} {'layout':>6} {'op':>3} {'m':>6} {'n':>6} {'k':>6} {'auto':>10} {'CPU':>10} "
          f"{'GPU':>10} {'side':>5} {'auto/best':>9}")
    worst, within, count = None, 0, 0
    table = []
    for r in rows:
        k = (r["shape"], r["layout"], r["transa"], r["transb"], r["m"], r["n"], r["k"])
        if k not in direct or k not in direct_gpu or not direct[k]["auto"] or not direct_gpu[k]["auto"]:
            continue
        cpu, gpu = median_of(direct[k]["auto"]), median_of(direct_gpu[k]["auto"])
        ratio = r["auto_s"] / min(cpu, gpu)
        count += 1
        within += ratio <= AUTO_GOAL
        if worst is None or ratio > worst[0]:
            worst = (ratio, r)
        flag = " <" if ratio > AUTO_GOAL else ""
        print(f"{r['shape']:<14} {r['layout']:>6} {r['transa'] + r['transb']:>3} {r['m']:>6} {r['n']:>6} "
              f"{r['k']:>6} {r['auto_s'] * 1e3:10.3f} {cpu * 1e3:10.3f} {gpu * 1e3:10.3f} {r['auto_path']:>5} "
              f"{ratio:9.3f}{flag}")
        table.append({f: r[f] for f in ("shape", "layout", "transa", "transb", "m", "n", "k", "auto_s")} |
                     dict(cpu_beside_s=cpu, gpu_beside_s=gpu, auto_path=r["auto_path"], auto_over_best=ratio))
    if table:
        write_csv(os.path.join(out, "blas_beside.csv"), table)
    if worst:
        w = worst[1]
        print(f"auto against the faster side beside it: within {AUTO_GOAL} on {within} of {count} shapes, worst "
              f"{worst[0]:.3f} ({w['shape']} {w['m']}x{w['n']}x{w['k']})")


def plot(squares, path):
    if not squares:
        return
    try:
        import matplotlib
    except ImportError:
        print("bench_blas.py: matplotlib is not installed: no plot drawn")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 5))
    sizes = [n for n, _ in squares]
    for mode, style, label in (("cpu", "o-", "CPU BLAS alone"), ("gpu", "s-", "tgemm, TGEMM_OFFLOAD=gpu"),
                               ("auto", "x--", "tgemm, TGEMM_OFFLOAD=auto")):
        ax.loglog(sizes, [r[f"{mode}_s"] * 1e3 for _, r in squares], style, label=label)
    ax.set_xlabel("n (square SGEMM, n x n x n, pageable host memory)")
    ax.set_ylabel("median time per call (ms)")
    ax.set_title("cblas_sgemm: CPU BLAS, auto offload and the GPU")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"bench_blas.py: wrote {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin")
    ap.add_argument("--lib")
    ap.add_argument("--out")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--warmup-ms", type=float, default=30.0)
    ap.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                    help="set in all three modes (e.g. OPENBLAS_THREAD_TIMEOUT=4)")
    ap.add_argument("--max", type=int, default=8192)
    ap.add_argument("--random", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--direct", action="store_true",
                    help="time OpenBLAS called directly after every call, in every mode")
    ap.add_argument("--beside", action="store_true",
                    help="time OpenBLAS and tgemm's GPU path beside every auto call, in auto's process")
    ap.add_argument("--lead-in", type=float, default=1.0, metavar="SECONDS",
                    help="2048^3 products before the shapes, untimed (0: none)")
    ap.add_argument("--report", metavar="DIR")
    args = ap.parse_args()
    if args.report:
        sys.exit(0 if report(args.report) else 1)
    if not args.lead_in >= 0.0 or args.lead_in > 3600.0:
        ap.error("--lead-in takes seconds from 0 to 3600")
    if not (args.bin and args.lib and args.out):
        ap.error("--bin, --lib and --out are required (or --report DIR)")
    os.makedirs(args.out, exist_ok=True)
    for old in glob.glob(os.path.join(args.out, "blas_*_*.csv")) + glob.glob(os.path.join(args.out, "blas_trace_*.txt")) \
            + glob.glob(os.path.join(args.out, "blas_beside.csv")) + glob.glob(os.path.join(args.out, FALLBACK)):
        os.remove(old)
    for r in range(args.rounds):
        run_round(args, r)
    # Where `auto` sent each call: the same run once more with TGEMM_TRACE,
    # untimed (writing the trace costs small calls a few microseconds).
    print("== auto, traced", flush=True)
    run_one(args, "auto", "auto_traced.csv", os.path.join(args.out, "blas_trace_auto.txt"))
    sys.exit(0 if report(args.out) else 1)


if __name__ == "__main__":
    main()
