#!/usr/bin/env python3
"""Report of the several-GPU benchmark (issue 30): bench_multi's CSV files.

    python3 bench/multi_report.py [--links CSV] [--topo FILE] [--md FILE] [--date DATE] CSV...
    python3 bench/multi_report.py --skeleton [--md FILE]

CSV: what `bench_multi --csv` writes, one file per device set
(bench/multi_gpu.sh: multi_g1.csv, multi_g2.csv, ..., multi_auto.csv);
--links: what `bench_multi --links --links-csv` writes; --topo: the output
of `nvidia-smi topo -m`. Prints one Markdown section, "## Several GPUs"
(what docs/performance.md holds; `bench/report.py RUN_DIR --section multi`
puts it there), and writes it to FILE with --md:
  - tgemm's TFLOP/s per size and device count, for each memory kind, with
    the speedup over one GPU; for pageable memory also the host copy limit,
    the time of copying A, B and C once at the host's memcpy rate (all
    threads, from --links), and how close the time comes to it;
  - the issue's targets at 16384^3 from pinned memory (2 GPUs >= 1.85x one,
    4 >= 3.5x, 8 >= 6.5x), met or missed, and the same speedups from
    pageable memory;
  - cuBLAS-XT's best time (over its block sizes and pinning modes) over
    tgemm's per size and device count: above 1, tgemm is faster; the target
    is faster at every size from 4096^3 up; then cuBLAS-XT's TFLOP/s per
    block size;
  - the links: host<->GPU per GPU alone and all at once, pinned and
    pageable, the sum of all at once against the sum alone (well under 1:
    the GPUs share a host link or memory), the host's memcpy, and peer
    copies per ordered pair with peer access off and on;
  - the checks: every configuration's worst error / bound, FAILED ones
    listed, skipped ones counted; and the topology.
Rows of the same configuration in several files are merged by the median
of their times. A device count is a row's ndev; tgemm's rows under
TGEMM_DEVICES=auto have their own column. --skeleton prints the section with
no numbers (docs/performance.md's placeholder before the first run).
Exit status: 0; 1 when a row failed its check; 2 for unreadable input.
Needs only python3.
"""
import argparse
import csv
import os
import re
import statistics
import sys

TITLE = "## Several GPUs (issue 30)"
TARGET_SIZE = 16384
TARGETS = {2: 1.85, 4: 3.5, 8: 6.5}  # speedup over one GPU at 16384^3, pinned
XT_TARGET_FROM = 4096  # faster than cuBLAS-XT at every size from 4096^3 up
SKELETON_SIZES = (4096, 8192, 12288, 16384)
SKELETON_DEVICES = (1, 2, 4)
MEMORIES = ("pinned", "pageable")

EXPLAIN = (
    "`bench/multi_gpu.sh`: one `bench_multi` process per device set (`TGEMM_DEVICES=0`, `0,1`, `0,1,2,3`, and "
    "`auto` for tgemm alone), each timing `tgemm_sgemm` on host operands in pinned memory (`cudaHostAlloc`, "
    "portable) and in pageable memory, square NN products, alpha 1, beta 0, against `cublasXtSgemm` on the same "
    "GPUs (`cublasXtDeviceSelect`) with block sizes 1024, 2048, 4096 and 8192 (above 8192^3 only the two fastest "
    "at 8192^3), pinning mode off, in the same process on the same inputs. Time: wall clock of one call (C in "
    "place when it returns), median of 3 to 10 calls after a checked warm-up call; C is poisoned with NaN before "
    "every call. Every output is checked against FP64 with the FP32 bound gamma_{K+2} |A||B| (every element up to "
    "4096^3; above, a grid of about 4096 sampled elements, and every element finite). Speedup: one GPU's time over "
    "this time. Regenerate with `bash bench/multi_gpu.sh` (OUT=DIR) and "
    "`python3 bench/report.py DIR --date DATE --section multi`.")


def num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def read_rows(paths):
    rows = []
    for p in paths:
        with open(p, newline="") as f:
            for r in csv.DictReader(f):
                r["_file"] = os.path.basename(p)
                rows.append(r)
    return rows


def shape_of(r):
    return (int(r["m"]), int(r["n"]), int(r["k"]), r["ta"], r["tb"], num(r["beta"]) or 0.0)


def shape_name(s):
    m, n, k, ta, tb, beta = s
    name = f"{m}^3" if m == n == k and ta == tb == "N" else f"{m}x{n}x{k} {ta}{tb}"
    return name + (f", beta {beta:g}" if beta else "")


def flops(s):
    return 2.0 * s[0] * s[1] * s[2]


def host_bytes(s):
    m, n, k = s[0], s[1], s[2]
    return 4.0 * (m * k + k * n + m * n)


def is_xt(impl):
    return impl.startswith("cublasxt")


def device_col(r):
    """The column a row belongs to: its device count, or 'auto'."""
    if r["impl"] == "tgemm" and r["setting"] == "auto":
        return "auto"
    return int(r["ndev"])


class Data:
    def __init__(self, rows):
        self.rows = rows
        # (shape, memory, col, impl) -> median seconds of the rows that passed
        times = {}
        for r in rows:
            if r["status"] != "ok" or num(r["seconds"]) is None:
                continue
            times.setdefault((shape_of(r), r["memory"], device_col(r), r["impl"]), []).append(num(r["seconds"]))
        self.time = {key: statistics.median(v) for key, v in times.items()}
        self.shapes = sorted({shape_of(r) for r in rows}, key=lambda s: (s[5], flops(s), s))
        cols = {device_col(r) for r in rows}
        self.counts = sorted(c for c in cols if c != "auto")
        self.auto = "auto" in cols

    def tgemm(self, s, mem, col):
        return self.time.get((s, mem, col, "tgemm"))

    def xt_best(self, s, mem, col):
        best = None
        for (ks, km, kc, impl), t in self.time.items():
            if ks == s and km == mem and kc == col and is_xt(impl) and (best is None or t < best[0]):
                best = (t, impl)
        return best


def gpus(c):
    return f"{c} GPU{'s' if int(c) > 1 else ''}"


def fmt_tf(s, t):
    return f"{flops(s) / t / 1e12:.1f}" if t else "-"


def memcpy_rate(links):
    """The host's memcpy rate, bytes/s, with the most threads measured."""
    best = None
    for r in links:
        if r["kind"] == "memcpy" and r["mode"].startswith("threads-"):
            t = int(r["mode"].split("-", 1)[1])
            if best is None or t > best[0]:
                best = (t, num(r["bytes"]) / num(r["seconds"]))
    return best


def speedup_table(d, mem, links, skeleton=False):
    counts = list(SKELETON_DEVICES) if skeleton else d.counts
    shapes = [(n, n, n, "N", "N", 0.0) for n in SKELETON_SIZES] if skeleton else d.shapes
    auto = skeleton or d.auto
    limit = None if skeleton else (memcpy_rate(links) if mem == "pageable" else None)
    head = "| size | " + " | ".join(gpus(c) for c in counts)
    rule = "|---|" + "---:|" * len(counts)
    if auto:
        head += " | auto"
        rule += "---:|"
    if mem == "pageable":
        head += " | host copy limit"
        rule += "---:|"
    out = [head + " |", rule]
    for s in shapes:
        base = None if skeleton else d.tgemm(s, mem, 1)
        cells = []
        for c in counts + (["auto"] if auto else []):
            t = None if skeleton else d.tgemm(s, mem, c)
            if not t:
                cells.append("-")
            elif c == 1 or not base:
                cells.append(fmt_tf(s, t))
            else:
                cells.append(f"{fmt_tf(s, t)} ({base / t:.2f}x)")
        if mem == "pageable":
            if limit:
                floor = host_bytes(s) / limit[1]
                best = min((d.tgemm(s, mem, c) for c in counts if d.tgemm(s, mem, c)), default=None)
                cells.append(f"{flops(s) / floor / 1e12:.1f}" + (f" ({floor / best:.0%} reached)" if best else ""))
            else:
                cells.append("-")
        out.append(f"| {shape_name(s)} | " + " | ".join(cells) + " |")
    return out


def target_rows(d, skeleton=False):
    s = (TARGET_SIZE, TARGET_SIZE, TARGET_SIZE, "N", "N", 0.0)
    out = ["| target (16384^3 NN, speedup over one GPU) | wanted | measured | |", "|---|---|---:|---|"]
    for mem in MEMORIES:
        base = None if skeleton else d.tgemm(s, mem, 1)
        for c, want in TARGETS.items():
            t = None if skeleton else d.tgemm(s, mem, c)
            got = base / t if base and t else None
            wanted = f">= {want}" if mem == "pinned" else "report (host copy limit)"
            if got is None:
                verdict, shown = "not measured", "-"
            elif mem == "pinned":
                verdict, shown = ("met" if got >= want else "missed"), f"{got:.2f}x"
            else:
                verdict, shown = "", f"{got:.2f}x"
            out.append(f"| {c} GPUs, {mem} | {wanted} | {shown} | {verdict} |")
    return out


def xt_tables(d, skeleton=False):
    counts = list(SKELETON_DEVICES) if skeleton else d.counts
    shapes = [(n, n, n, "N", "N", 0.0) for n in SKELETON_SIZES] if skeleton else d.shapes
    out = ["cuBLAS-XT's best time over tgemm's (above 1: tgemm faster), cuBLAS-XT's best block size in brackets:", "",
           "| memory | size | " + " | ".join(gpus(c) for c in counts) + " |",
           "|---|---|" + "---:|" * len(counts)]
    missed, met = [], 0
    for mem in MEMORIES:
        for s in shapes:
            cells = []
            for c in counts:
                t = None if skeleton else d.tgemm(s, mem, c)
                xt = None if skeleton else d.xt_best(s, mem, c)
                if not t or not xt:
                    cells.append("-")
                    continue
                ratio = xt[0] / t
                cells.append(f"{ratio:.2f} ({xt[1].replace('cublasxt-', '')})")
                if min(s[:3]) >= XT_TARGET_FROM:
                    if ratio > 1:
                        met += 1
                    else:
                        missed.append(f"{shape_name(s)} {mem} {gpus(c)} ({ratio:.2f})")
            out.append(f"| {mem} | {shape_name(s)} | " + " | ".join(cells) + " |")
    out.append("")
    if skeleton:
        out.append("Target: faster than cuBLAS-XT at its best block size at every size from 4096^3 up: not measured.")
    elif not met and not missed:
        out.append("Target: faster than cuBLAS-XT at every size from 4096^3 up: not measured (no cuBLAS-XT rows).")
    elif missed:
        out.append(f"Target: faster than cuBLAS-XT at every size from 4096^3 up: missed, {len(missed)} of "
                   f"{met + len(missed)} (" + "; ".join(missed) + ").")
    else:
        out.append(f"Target: faster than cuBLAS-XT at every size from 4096^3 up: met ({met} of {met}).")
    out.append("")
    # cuBLAS-XT per block size.
    impls = sorted({r["impl"] for r in d.rows if is_xt(r["impl"])},
                   key=lambda i: ("pin" in i, int(i.rsplit("bs", 1)[1]))) if not skeleton else \
        [f"cublasxt-bs{b}" for b in (1024, 2048, 4096, 8192)]
    out += ["cuBLAS-XT alone, TFLOP/s per block size (`pin-`: pinning mode on; - not run or skipped):", "",
            "| memory | GPUs | size | " + " | ".join(i.replace("cublasxt-", "") for i in impls) + " |",
            "|---|---:|---|" + "---:|" * len(impls)]
    for mem in MEMORIES:
        for c in counts:
            for s in shapes[-1:] if skeleton else shapes:
                cells = [fmt_tf(s, None if skeleton else d.time.get((s, mem, c, i))) for i in impls]
                if skeleton or any(x != "-" for x in cells):
                    out.append(f"| {mem} | {c} | {shape_name(s)} | " + " | ".join(cells) + " |")
    return out


def link_tables(links, skeleton=False):
    if skeleton or not links:
        return ["Not measured" + ("" if skeleton else " (no --links CSV)") + "."]
    gbs = {}
    for r in links:
        gbs[(r["kind"], r["mode"], r["src"], r["dst"])] = num(r["gbs"])
    gpus = sorted({int(x) for r in links for x in (r["src"], r["dst"]) if x.isdigit()})
    kinds = [("h2d", "host to GPU"), ("d2h", "GPU to host"), ("both", "both ways at once"),
             ("h2d-pageable", "host to GPU, pageable"), ("d2h-pageable", "GPU to host, pageable")]
    kinds = [k for k in kinds if any(r["kind"] == k[0] for r in links)]

    def rate(kind, mode, g):
        src, dst = ("host", str(g)) if not kind.startswith("d2h") else (str(g), "host")
        v = gbs.get((kind, mode, src, dst))
        return f"{v:.1f}" if v is not None else "-"

    out = ["Host and GPUs, GB/s (1e9 bytes/s; both ways: the two directions added), each GPU alone / all GPUs at "
           "once:", "", "| GPU | " + " | ".join(k[1] for k in kinds) + " |", "|---|" + "---:|" * len(kinds)]
    for g in gpus:
        out.append(f"| {g} | " + " | ".join(f"{rate(k, 'alone', g)} / {rate(k, 'all', g)}" for k, _ in kinds) + " |")
    if len(gpus) > 1:
        cells = []
        for k, _ in kinds:
            alone = [gbs.get((k, "alone", "host", str(g)) if not k.startswith("d2h") else (k, "alone", str(g), "host"))
                     for g in gpus]
            together = gbs.get((k, "all", "host", "all") if not k.startswith("d2h") else (k, "all", "all", "host"))
            if together and all(alone):
                cells.append(f"{together:.1f} ({together / sum(alone):.2f} of the sum alone)")
            else:
                cells.append("-")
        out.append("| all at once | " + " | ".join(cells) + " |")
    mc = sorted(((int(r["mode"].split("-", 1)[1]), num(r["gbs"])) for r in links if r["kind"] == "memcpy"))
    if mc:
        out += ["", "Host memcpy (bytes copied): " + ", ".join(f"{t} thread{'s' if t > 1 else ''} {v:.1f} GB/s"
                                                            for t, v in mc) + "."]
    peers = [r for r in links if r["kind"] == "peer"]
    if peers:
        out += ["", "Peer copies (`cudaMemcpyPeerAsync`), GB/s, row: from, column: to; peer access off / on; "
                "`*`: `cudaDeviceCanAccessPeer`:", "",
                "| from \\ to | " + " | ".join(str(g) for g in gpus) + " |", "|---|" + "---:|" * len(gpus)]
        access = {(r["src"], r["dst"]): r["peer_access"] == "1" for r in peers if r["mode"] == "on"}
        for i in gpus:
            cells = []
            for j in gpus:
                if i == j:
                    cells.append("-")
                    continue
                off = gbs.get(("peer", "off", str(i), str(j)))
                on = gbs.get(("peer", "on", str(i), str(j)))
                star = "*" if access.get((str(i), str(j))) else ""
                cells.append(f"{off:.1f} / {on:.1f}{star}" if off is not None and on is not None else "-")
            out.append(f"| {i} | " + " | ".join(cells) + " |")
        both = [(r["src"], r["dst"], num(r["gbs"])) for r in peers if r["mode"] == "on-both"]
        if both:
            out += ["", "Both ways at once, peer access on, the two directions added: " +
                    ", ".join(f"{a} <-> {b} {v:.1f} GB/s" for a, b, v in both) + "."]
    return out


def check_lines(rows):
    ok = [r for r in rows if r["status"] == "ok"]
    failed = [r for r in rows if r["status"] == "FAIL"]
    skipped = [r for r in rows if r["status"] == "skipped"]
    worst = max((num(r["check"]) for r in ok if num(r["check"]) is not None), default=None)
    out = [f"Checks: {len(ok)} of {len(ok) + len(failed)} configurations within the FP32 bound"
           + (f" (worst error / bound {worst:.3g})" if worst is not None else "") + "; "
           + f"{sum(r['check_kind'] == 'full' for r in ok + failed)} checked on every element, "
           + f"{sum(r['check_kind'] == 'sample' for r in ok + failed)} on a sample."]
    for r in failed:
        out.append(f"- FAILED: {r['impl']}, {shape_name(shape_of(r))} {r['memory']}, devices {r['devices']} "
                   f"(TGEMM_DEVICES {r['setting']}, {r['_file']}): error / bound {r['check'] or 'n/a'}")
    if skipped:
        out.append(f"Skipped for time (the run's deadline): {len(skipped)} cuBLAS-XT configuration(s): " +
                   "; ".join(f"{r['impl']} {shape_name(shape_of(r))} {r['memory']} {gpus(r['ndev'])}"
                             for r in skipped) + ".")
    return out


def section(rows, links, topo=None, date=None, skeleton=False):
    d = Data(rows)
    out = [TITLE, ""]
    if skeleton:
        out += ["Not measured yet: the numbers come from the first run on a machine of several GPUs.", ""]
    elif date:
        out += [f"Run of {date}.", ""]
    out += [EXPLAIN, ""]
    for mem in MEMORIES:
        out += [f"### tgemm from {mem} memory, TFLOP/s (speedup over one GPU)", ""]
        if mem == "pageable":
            out += ["Host copy limit: A, B and C copied once at the host's memcpy rate (all threads, from the "
                    "links below), as TFLOP/s, and the share of it the fastest device set reaches.", ""]
        out += speedup_table(d, mem, links, skeleton) + [""]
    out += ["### Targets", ""] + target_rows(d, skeleton) + [""]
    out += ["### tgemm against cuBLAS-XT", ""] + xt_tables(d, skeleton) + [""]
    out += ["### Links", ""] + link_tables(links, skeleton) + [""]
    if not skeleton:
        out += ["### Checks", ""] + check_lines(rows) + [""]
    if topo:
        topo = re.sub(r"\x1b\[[0-9;]*m", "", topo)  # nvidia-smi underlines its header
        out += ["### Topology (`nvidia-smi topo -m`)", "", "```text"] + topo.rstrip("\n").split("\n") + ["```", ""]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", nargs="*")
    ap.add_argument("--links")
    ap.add_argument("--topo")
    ap.add_argument("--md")
    ap.add_argument("--date")
    ap.add_argument("--skeleton", action="store_true")
    args = ap.parse_args()
    if not args.skeleton and not args.csv:
        ap.error("no CSV file (or --skeleton)")
    try:
        rows = read_rows(args.csv)
        links = read_rows([args.links]) if args.links and os.path.exists(args.links) else []
        topo = open(args.topo).read() if args.topo and os.path.exists(args.topo) else None
    except (OSError, KeyError, csv.Error) as e:
        print(f"multi_report.py: {e}", file=sys.stderr)
        return 2
    if args.links and not links:
        print(f"multi_report.py: {args.links}: no link rows", file=sys.stderr)
    try:
        lines = section(rows, links, topo, args.date, args.skeleton)
    except (KeyError, ValueError, TypeError) as e:
        print(f"multi_report.py: unexpected input: {e!r}", file=sys.stderr)
        return 2
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.md:
        with open(args.md, "w") as f:
            f.write(text)
    return 1 if any(r["status"] == "FAIL" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
