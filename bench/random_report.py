#!/usr/bin/env python3
"""Report of the random-shape benchmark (bench_random) over one or more seeds.

    python3 bench/random_report.py [--plans LOG]... [--md FILE] [--out DIR] CSV...

CSV: what `bench_random --csv` writes, one file per seed. LOG: the standard
error of `TGEMM_VERBOSE=2 bench_random --plans --seed S`, whose lines
"== seed S ...", "== shape INDEX ..." and "tgemm: device plan ..." give
each problem its plan lines. Prints Markdown (usable as it is in
docs/performance.md; --md also writes it to FILE): the distribution of
ratios per seed and over all seeds (count, geometric mean, 5th percentile,
median, minimum; all problems and ordinary products, hot and cold), the
issue 27 targets, the memory-bound problems against their floor, the checks
(the fp32-tc results too where the files have them), the fp32-tc math against
strict (files of --math-compare; round by round where the files have its
columns), the 15 worst problems with their plans, and, with plan logs,
the geometric mean of the ratios by plan kind. Writes DIR/random_hist.png
(log2 ratios, hot and cold) and DIR/random_scatter.png (ratio against
flops, by transpose pair) when matplotlib is there, and says so when it is
not. DIR defaults to the first CSV's directory.

The definitions are bench_random's (bench/random_shapes.hpp): ratio =
min(cuBLAS default, cuBLAS pedantic) / tgemm, above 1 tgemm is faster;
ordinary: m, n > 16 and K > 64; memory-bound: K <= 32 or min(m, n) <= 16;
floor = max(4 (mk + kn + mn (2 if beta else 1)) / 2.88e12, 2mnk / 66.9e12)
seconds; percentiles interpolate linearly between the nearest ranks.
Needs only python3 (and matplotlib for the plots).
"""
import argparse
import csv
import math
import os
import sys

from report import num  # bench/report.py: a CSV cell as a float, None for 'n/a'

PEAK_FLOPS = 66.9e12
PEAK_BYTES = 2.88e12
WORST = 15
MEM_FLOOR_MIN_US = 10.0
MEM_FLOOR_FACTOR = 1.3
CONDS = ("hot", "cold")
PAIRS = ("NN", "NT", "TN", "TT")
# Issue 27's targets: (set, statistic, at least).
TARGETS = [("all", "geomean", 1.10), ("all", "p5", 0.95), ("all", "min", 0.85),
           ("ordinary", "geomean", 1.02), ("ordinary", "p5", 0.93)]
# Issue 28: the fp32-tc math never slower than strict by more than 2%.
TC_SLOWER = 0.98


def percentile(values, p):
    """numpy's default: linear between the two nearest ranks; 0 for no values."""
    if not values:
        return 0.0
    v = sorted(values)
    pos = min(max(p, 0.0), 100.0) / 100.0 * (len(v) - 1)
    lo = int(pos)
    if lo + 1 >= len(v):
        return v[lo]
    return v[lo] + (v[lo + 1] - v[lo]) * (pos - lo)


def geomean(values):
    return math.exp(sum(math.log(x) for x in values) / len(values)) if values else 0.0


def floor_us(m, n, k, beta):
    moved = 4.0 * (m * k + k * n + m * n * (2.0 if beta != 0 else 1.0))
    return 1e6 * max(moved / PEAK_BYTES, 2.0 * m * n * k / PEAK_FLOPS)


def memory_bound(m, n, k):
    return k <= 32 or min(m, n) <= 16


def ordinary(m, n, k):
    return m > 16 and n > 16 and k > 64


class Problem:
    def __init__(self, row, path):
        self.seed = row["seed"]
        self.index = int(row["index"])
        self.m, self.n, self.k = (int(row[c]) for c in ("m", "n", "k"))
        self.op = row["ta"] + row["tb"]
        self.lds = (row["lda"], row["ldb"], row["ldc"])
        self.alpha, self.beta = row["alpha"], row["beta"]
        self.flops = 2.0 * self.m * self.n * self.k
        self.floor = floor_us(self.m, self.n, self.k, float(self.beta))
        self.membound = memory_bound(self.m, self.n, self.k)
        self.ordinary = ordinary(self.m, self.n, self.k)
        self.us, self.ratio = {}, {}
        for c in CONDS:
            t = num(row[f"tgemm_{c}_us"])
            cub = [x for x in (num(row[f"cublas_def_{c}_us"]), num(row[f"cublas_ped_{c}_us"])) if x]
            self.us[c] = t
            self.ratio[c] = min(cub) / t if t and len(cub) == 2 else None
        # --math-compare's columns (absent in older files, n/a without it).
        self.tc_speedup = {c: num(row.get(f"tc_speedup_{c}", "n/a")) for c in CONDS}
        self.tc_ran = row.get("tc_ran") == "1"
        # strict / strict again: the same call timed twice in each round.
        self.again_speedup = {c: num(row.get(f"again_speedup_{c}", "n/a")) for c in CONDS}
        # Round by round (bench/paired.hpp): fp32-tc's and strict again's time over strict's in the same
        # round, the median and its 95% interval (n/a: too few rounds); absent in older files.
        self.paired = {(who, c): tuple(num(row.get(f"{who}_paired_{c}{end}", "n/a")) for end in ("", "_lo", "_hi"))
                       for who in ("tc", "again") for c in CONDS}
        self.err_tc = num(row.get("max_err_over_bound_tc", "n/a"))
        self.err_tgemm = num(row["max_err_over_bound_tgemm"])
        self.err_cublas = num(row["max_err_over_bound_cublas"])
        self.pad_ok = row["pad_ok"] == "1"
        self.plans = []
        written = num(row["floor_us"])
        if written is None or abs(written - self.floor) > max(0.01, 1e-3 * self.floor):
            print(f"random_report.py: warning: {path}: problem {self.index}: floor_us {row['floor_us']}, "
                  f"but the shape gives {self.floor:.3f}", file=sys.stderr)
        if (row["membound"] == "1") != self.membound:
            print(f"random_report.py: warning: {path}: problem {self.index}: membound {row['membound']} "
                  f"disagrees with the shape", file=sys.stderr)

    def worst_ratio(self):
        r = [x for x in self.ratio.values() if x is not None]
        return min(r) if r else None

    def compared(self):
        return all(self.tc_speedup[c] is not None for c in CONDS)

    def passed(self):
        tc_ok = not self.compared() or (self.err_tc is not None and self.err_tc <= 1.0)
        return self.err_tgemm is not None and self.err_tgemm <= 1.0 and self.pad_ok and tc_ok


def read_csv(path):
    with open(path, newline="") as f:
        return [Problem(r, path) for r in csv.DictReader(f)]


def read_plans(path, problems):
    """Attaches the plan lines of a --plans log to the problems of its seed."""
    by_key = {(p.seed, p.index): p for p in problems}
    seed, current = None, None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("== seed "):
                seed = line.split()[2]
            elif line.startswith("== shape "):
                words = line.split()
                current = by_key.get((seed, int(words[2])))
                if current is not None and words[3:6] != [f"m={current.m}", f"n={current.n}", f"k={current.k}"]:
                    print(f"random_report.py: warning: {path}: problem {words[2]} of seed {seed} is "
                          f"{' '.join(words[3:6])} there, {current.m} x {current.n} x {current.k} in the CSV: "
                          "plan left out", file=sys.stderr)
                    current = None
            elif "tgemm: device plan " in line and current is not None:
                current.plans.append(line.split("tgemm: device plan ", 1)[1])


def plan_text(p):
    """The plan lines less their repeated shape: 'tiled 128x128x8 split-k=1 ...'; '-' without a log."""
    out = []
    for line in p.plans:
        words = line.split()
        rest = words[3:] if len(words) > 3 and words[0].startswith("m=") else words
        if rest and rest[0] in PAIRS:
            rest = rest[1:]
        out.append(" ".join(rest).lstrip(": "))
    return "; ".join(out) if out else "-"


def plan_kind(p):
    """The plan's first kernel ('tiled 64x64x16', 'tiled 128x128x16 stream-k', 'rank-k', 'streaming rows',
    ...), after 'packed: ' and/or 'peeled: ' where the plan copies or peels operands; None without a log."""
    marks, kernel = [], None
    for line in p.plans:
        if ": peeled " in line:
            marks.append("peeled")
        elif " packed " in line:
            marks.append("packed")
        elif kernel is None:
            words = line.split()
            pair = next((i for i, w in enumerate(words) if w in PAIRS), None)
            rest = words[pair + 1:] if pair is not None else []
            if rest[:1] == ["tiled"] and len(rest) > 2:
                kernel = "tiled " + rest[1] + (" stream-k" if rest[2].startswith("stream-k") else "")
            elif rest[:1] == ["streaming"] and len(rest) > 1:
                kernel = "streaming " + rest[1]
            elif rest:
                kernel = rest[0]
    if kernel is None:
        return None
    return "".join(f"{m}: " for m in dict.fromkeys(marks)) + kernel


def stats(values):
    return {"count": len(values), "geomean": geomean(values), "p5": percentile(values, 5),
            "median": percentile(values, 50), "min": min(values) if values else 0.0}


def ratios(problems, cond, only_ordinary=False):
    return [p.ratio[cond] for p in problems if p.ratio[cond] is not None and (p.ordinary or not only_ordinary)]


def distribution_table(groups):
    out = ["| seed | problems | L2 | count | geomean | p5 | median | min |", "|---|---|---|---:|---:|---:|---:|---:|"]
    for name, probs in groups:
        for label, only in (("all", False), ("ordinary", True)):
            for c in CONDS:
                s = stats(ratios(probs, c, only))
                if s["count"] == 0:
                    out.append(f"| {name} | {label} | {c} | 0 | - | - | - | - |")
                    continue
                out.append(f"| {name} | {label} | {c} | {s['count']} | {s['geomean']:.3f} | {s['p5']:.3f}"
                           f" | {s['median']:.3f} | {s['min']:.3f} |")
    return out


def targets_table(problems):
    out = ["| target | L2 | wanted | measured | met |", "|---|---|---|---:|---|"]
    for which, stat, least in TARGETS:
        for c in CONDS:
            s = stats(ratios(problems, c, which == "ordinary"))
            got = f"{s[stat]:.3f}" if s["count"] else "-"
            met = "yes" if s["count"] and s[stat] >= least else "no"
            out.append(f"| {which}: {stat} | {c} | >= {least:.2f} | {got} | {met} |")
    return out


def memory_table(groups):
    out = ["| seed | memory-bound, floor >= 10 us | within 1.3x floor (cold) | slower than cuBLAS (cold)"
           " | slower than cuBLAS (hot) |", "|---|---:|---:|---:|---:|"]
    for name, probs in groups:
        mem = [p for p in probs if p.membound and p.floor >= MEM_FLOOR_MIN_US]
        near = sum(1 for p in mem if p.us["cold"] is not None and p.us["cold"] <= MEM_FLOOR_FACTOR * p.floor)
        slower = [sum(1 for p in mem if p.ratio[c] is not None and p.ratio[c] < 1.0) for c in ("cold", "hot")]
        out.append(f"| {name} | {len(mem)} | {near} | {slower[0]} | {slower[1]} |")
    return out


def tflops(p, c):
    return f"{p.flops / p.us[c] * 1e-6:.2f}" if p.us[c] else "-"


def fmt_ratio(x):
    return f"{x:.3f}" if x is not None else "n/a"


def worst_table(problems):
    ranked = sorted((p for p in problems if p.worst_ratio() is not None),
                    key=lambda p: (p.worst_ratio(), p.seed, p.index))[:WORST]
    out = [f"The {len(ranked)} worst problems, by the smaller of the two ratios:", "",
           "| seed | # | m | n | k | op | lda | ldb | ldc | alpha | beta | ratio hot | ratio cold"
           " | tgemm TFLOP/s hot / cold | floor us | plan |",
           "|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---|"]
    for p in ranked:
        out.append(f"| {p.seed} | {p.index} | {p.m} | {p.n} | {p.k} | {p.op} | {p.lds[0]} | {p.lds[1]} | {p.lds[2]}"
                   f" | {float(p.alpha):.4g} | {float(p.beta):.4g} | {fmt_ratio(p.ratio['hot'])} | {fmt_ratio(p.ratio['cold'])}"
                   f" | {tflops(p, 'hot')} / {tflops(p, 'cold')} | {p.floor:.1f} | {plan_text(p)} |")
    return out


def plan_table(problems):
    """Geometric mean of the ratios by plan kind (problems with plan lines only)."""
    kinds = {}
    for p in problems:
        k = plan_kind(p)
        if k is not None:
            kinds.setdefault(k, []).append(p)
    if not kinds:
        return []
    out = [f"By plan ({sum(len(v) for v in kinds.values())} problems with plan lines; the plan's first kernel, "
           "'packed:' or 'peeled:' where it copies or peels operands), geometric mean of the ratios:", "",
           "| plan | problems | hot | cold | ordinary | ordinary hot | ordinary cold |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    for k, ps in sorted(kinds.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        cells = [fmt_ratio(geomean(r)) if r else "-" for r in (ratios(ps, c, only) for only in (False, True)
                                                                 for c in CONDS)]
        out.append(f"| {k} | {len(ps)} | {cells[0]} | {cells[1]} | {sum(p.ordinary for p in ps)} | {cells[2]} "
                   f"| {cells[3]} |")
    return out


def checks_text(problems):
    bad = [p for p in problems if not p.passed()]
    errs = [p.err_tgemm for p in problems if p.err_tgemm is not None]
    cub = [p.err_cublas for p in problems if p.err_cublas is not None]
    line = (f"Checks: {len(problems) - len(bad)} of {len(problems)} tgemm results within the FP32 bound with C's "
            f"padding untouched; largest error / bound: tgemm {max(errs) if errs else 0:.3g}, cuBLAS "
            f"{max(cub) if cub else 0:.3g}.")
    out = [line]
    for p in bad:
        out.append(f"- FAILED: seed {p.seed} problem {p.index} ({p.m} x {p.n} x {p.k} {p.op}): error / bound "
                   f"{p.err_tgemm if p.err_tgemm is None else format(p.err_tgemm, '.3g')}{'' if not p.compared() else ', fp32-tc ' + (str(p.err_tc) if p.err_tc is None else format(p.err_tc, '.3g'))}, padding {'ok' if p.pad_ok else 'changed'}")
    return out


def tc_table(groups):
    """--math-compare: the fp32-tc math against strict, per seed and pooled, and the problems it slowed."""
    out = ["The fp32-tc math against strict (`--math-compare`: tgemm_set_math before each tgemm call, both in "
           "the same rounds; speedup = strict time / fp32-tc time; 'ran': its C differs from strict's, else the "
           "mode declined and strict computed the call). The last column times strict against itself: the same "
           "call once more in each round (strict again), the problems where the second timing came out more than "
           "2% slower than the first, which is how often timing alone puts a call 2% behind:", "",
           "| seed | L2 | problems | geomean | min | max | mode ran | geomean where it ran | min where it ran"
           " | slower than strict by > 2% | strict again slower than strict by > 2% |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    slowed = []
    for name, probs in groups:
        cmp = [p for p in probs if p.compared()]
        if not cmp:
            continue
        for c in CONDS:
            v = [p.tc_speedup[c] for p in cmp]
            ran = [p.tc_speedup[c] for p in cmp if p.tc_ran]
            slow = sum(1 for x in v if x < TC_SLOWER)
            again = [p.again_speedup[c] for p in cmp if p.again_speedup[c] is not None]
            again_slow = sum(1 for x in again if x < TC_SLOWER) if again else "-"
            out.append(f"| {name} | {c} | {len(v)} | {geomean(v):.3f} | {min(v):.3f} | {max(v):.3f} | {len(ran)}"
                       f" | {geomean(ran):.3f} | {min(ran) if ran else 0:.3f} | {slow} | {again_slow} |")
        if name != "all seeds":
            slowed += [p for p in cmp if min(p.tc_speedup.values()) < TC_SLOWER]
    errs = [p.err_tc for _, probs in groups for p in probs if p.err_tc is not None]
    out += ["", f"Largest fp32-tc error / bound: {max(errs) if errs else 0:.3g}."]
    if slowed:
        out += ["", "| seed | # | m | n | k | op | mode | strict/fp32-tc hot | cold |",
                "|---|---:|---:|---:|---:|---|---|---:|---:|"]
        for p in sorted(slowed, key=lambda p: min(p.tc_speedup.values())):
            out.append(f"| {p.seed} | {p.index} | {p.m} | {p.n} | {p.k} | {p.op} | {'ran' if p.tc_ran else 'declined'}"
                       f" | {p.tc_speedup['hot']:.3f} | {p.tc_speedup['cold']:.3f} |")
    return out


def paired_table(groups):
    """--math-compare, round by round: the problems whose time ratio to strict's has its 95% interval
    wholly above 1 / 0.98, for fp32-tc and for strict again; [] for files without those columns."""
    above = 1.0 / TC_SLOWER
    out, listed = [], []
    for name, probs in groups:
        cmp = [p for p in probs if p.compared() and p.paired[("tc", "hot")][0] is not None]
        if not cmp:
            continue
        for c in CONDS:
            slow = [p for p in cmp if (p.paired[("tc", c)][1] or 0) > above]
            again = sum(1 for p in cmp if (p.paired[("again", c)][1] or 0) > above)
            none = sum(1 for p in cmp if p.paired[("tc", c)][1] is None)
            out.append(f"| {name} | {c} | {len(cmp)} | {len(slow)} | {again} | {none} |")
            if name != "all seeds":
                listed += [(p, c) for p in slow]
    if not out:
        return []
    head = ["Round by round (each round's time over strict's in the same round, so that what drifts between "
            "rounds cancels; slower by more than 2% where the 95% interval of the median lies wholly above "
            f"{above:.4f}):", "",
            "| seed | L2 | problems | fp32-tc slower by > 2% | strict again slower by > 2% | no interval (under 6 rounds) |",
            "|---|---|---:|---:|---:|---:|"]
    out = head + out
    if listed:
        out += ["", "| seed | # | m | n | k | op | mode | L2 | fp32-tc / strict | 95% interval |",
                "|---|---:|---:|---:|---:|---|---|---|---:|---|"]
        for p, c in listed:
            med, lo, hi = p.paired[("tc", c)]
            out.append(f"| {p.seed} | {p.index} | {p.m} | {p.n} | {p.k} | {p.op} | {'ran' if p.tc_ran else 'declined'}"
                       f" | {c} | {med:.3f} | [{lo:.3f}, {hi:.3f}] |")
    return out


def markdown(problems, seeds):
    groups = [(s, [p for p in problems if p.seed == s]) for s in seeds]
    if len(seeds) > 1:
        groups.append(("all seeds", problems))
    counts = ", ".join(f"{s} ({len(g)})" for s, g in groups if s != "all seeds")
    out = ["## Random shapes (`make bench-random`)", "",
           f"Seeds (problems): {counts}. ratio = min(cuBLAS default, cuBLAS pedantic) / tgemm, time per call: "
           "above 1, tgemm is faster. hot: calls back to back on the same operands; cold: operands out of L2. "
           "ordinary: m, n > 16 and K > 64. Memory-bound: K <= 32 or min(m, n) <= 16; floor = max(bytes that must "
           "move / 2.88 TB/s, flops / 66.9 TFLOP/s).", ""]
    out += distribution_table(groups) + [""]
    out += [f"Against the issue 27 targets ({'all seeds' if len(seeds) > 1 else 'seed ' + seeds[0]}):", ""]
    out += targets_table(problems) + [""]
    out += memory_table(groups) + [""]
    out += checks_text(problems) + [""]
    if any(p.compared() for p in problems):
        out += tc_table(groups) + [""]
        table = paired_table(groups)
        if table:
            out += table + [""]
    out += worst_table(problems) + [""]
    table = plan_table(problems)
    if table:
        out += table + [""]
    return out


def plot(problems, out_dir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("random_report.py: matplotlib is not installed: random_hist.png and random_scatter.png skipped")
        return
    fig, ax = plt.subplots(figsize=(8, 4.5))
    logs = [math.log2(x) for c in CONDS for x in ratios(problems, c)]
    lo, hi = (min(logs), max(logs)) if logs else (-1.0, 1.0)
    edges = [lo + (hi - lo + 1e-9) * i / 40 for i in range(41)]  # the same bins for both conditions
    for c, color in zip(CONDS, ("tab:red", "tab:blue")):
        r = ratios(problems, c)
        if r:
            ax.hist([math.log2(x) for x in r], bins=edges, alpha=0.5, color=color,
                    label=f"{c}: geomean {geomean(r):.3f}, n = {len(r)}")
    ax.axvline(0.0, color="black", linewidth=1)
    ax.set_xlabel("log2(cuBLAS time / tgemm time): right of 0, tgemm is faster")
    ax.set_ylabel("problems")
    ax.set_title("Random shapes: tgemm against the faster cuBLAS mode")
    ax.legend()
    fig.tight_layout()
    hist = os.path.join(out_dir, "random_hist.png")
    fig.savefig(hist, dpi=120)
    plt.close(fig)

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    colors = dict(zip(PAIRS, ("tab:blue", "tab:orange", "tab:green", "tab:red")))
    for ax, c in zip(axes, CONDS):
        for pair in PAIRS:
            pts = [(p.flops, p.ratio[c]) for p in problems if p.op == pair and p.ratio[c] is not None]
            if pts:
                ax.scatter([x for x, _ in pts], [y for _, y in pts], s=14, color=colors[pair], label=pair)
        ax.axhline(1.0, color="black", linewidth=1)
        ax.set_xscale("log")
        ax.set_yscale("log", base=2)
        ax.set_xlabel("flops (2mnk)")
        ax.set_title(f"{c}")
    axes[0].set_ylabel("cuBLAS time / tgemm time")
    axes[1].legend(title="op(A) op(B)")
    fig.tight_layout()
    scatter = os.path.join(out_dir, "random_scatter.png")
    fig.savefig(scatter, dpi=120)
    plt.close(fig)
    print(f"random_report.py: wrote {hist} and {scatter}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", nargs="+", help="bench_random --csv files")
    ap.add_argument("--plans", action="append", default=[], help="a --plans log (repeatable)")
    ap.add_argument("--md", help="also write the Markdown to this file")
    ap.add_argument("--out", help="directory of the PNGs (default: the first CSV's)")
    args = ap.parse_args()
    problems, seeds = [], []
    for path in args.csv:
        if not os.path.isfile(path):
            print(f"random_report.py: {path} not found, left out", file=sys.stderr)
            continue
        rows = read_csv(path)
        for p in rows:
            if p.seed not in seeds:
                seeds.append(p.seed)
        problems += rows
    if not problems:
        sys.exit("random_report.py: no problems in the CSV files given")
    for path in args.plans:
        if os.path.isfile(path):
            read_plans(path, problems)
        else:
            print(f"random_report.py: {path} not found, plans left out", file=sys.stderr)
    text = "\n".join(markdown(problems, seeds)) + "\n"
    sys.stdout.write(text)
    if args.md:
        with open(args.md, "w") as f:
            f.write(text)
    plot(problems, args.out or os.path.dirname(os.path.abspath(args.csv[0])))


if __name__ == "__main__":
    main()
