#!/usr/bin/env python3
"""Markdown tables from bench/scalapack_gpu.sh's CSV files.

    python3 bench/scalapack_report.py runs.csv calls.csv pblas.csv > report.md
    python3 bench/scalapack_report.py --calls RUN TRACE... >> calls.csv

runs.csv   one row per timed PSGEMM run: run, group, np, grid, m, n, k, nb,
           kb (PBLAS's panel width), mode (cpu: OpenBLAS alone; auto, gpu:
           libtgemm preloaded with that TGEMM_OFFLOAD), warmup, reps,
           time_s_min, time_s_median, gflops, status (ok, failed:N,
           timeout, skipped:budget), wall_s, calls, gpu_calls, cpu_calls
calls.csv  one row per distinct local SGEMM call of a run, from the
           processes' traces: run, transa, transb, m, n, k, beta, path
           (gpu, cpu, cpu-fallback, scale, ...), count, time_us (the sum)
pblas.csv  one row per run of the PBLAS tester: np, mode, status, check,
           calls, gpu, cpu, other

--calls reads the TGEMM_TRACE files of one run (one per process) and
prints its rows of calls.csv (no header): one per distinct transa,
transb, m, n, k, beta and path (the part before any ':', so
cpu-fallback:no-device counts as cpu-fallback), sorted.

The report has three sections: the tester's runs; PSGEMM's time per configuration, each
mode against OpenBLAS alone on ScaLAPACK as shipped (same size, processes
and block size, panel width 32), speed-up > 1 meaning faster; and the
local calls of each traced run: the distinct shapes, how many per PSGEMM
call, where they ran and their mean time, and the share of the local
flops that ran on the GPU. Exit status 1 if a file cannot be read or lacks
a column.
"""
import csv
import sys
from collections import defaultdict


def read(path, columns):
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        rows = list(reader)
        missing = [c for c in columns if c not in (reader.fieldnames or [])]
    if missing:
        raise SystemExit(f"scalapack_report: {path} lacks the columns {', '.join(missing)}")
    return rows


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def fmt_time(row):
    if row is None:
        return "-"
    if row["status"] != "ok":
        return row["status"]
    t, g = num(row["time_s_min"]), num(row["gflops"])
    return f"{t:.3f} s ({g:.0f})" if t is not None and g is not None else "?"


def calls_rows(run, paths):
    """calls.csv rows of one run from its trace files."""
    count = defaultdict(int)
    time_us = defaultdict(float)
    for path in paths:
        with open(path) as f:
            for line in f:
                if not line.startswith("tgemm trace: "):
                    raise SystemExit(f"scalapack_report: {path}: not a trace line: {line.rstrip()}")
                v = dict(t.split("=", 1) for t in line.split()[2:] if "=" in t)
                try:
                    key = (v["transa"], v["transb"], int(v["m"]), int(v["n"]), int(v["k"]), v.get("beta", ""),
                           v["path"].split(":", 1)[0])
                    t = float(v["time_us"])
                except (KeyError, ValueError):
                    raise SystemExit(f"scalapack_report: {path}: a trace line without its fields: {line.rstrip()}")
                count[key] += 1
                time_us[key] += t
    return [f"{run},{a},{b},{m},{n},{k},{beta},{p},{count[key]},{time_us[key]:.1f}"
            for key in sorted(count) for (a, b, m, n, k, beta, p) in [key]]


def main(argv):
    if len(argv) >= 3 and argv[1] == "--calls":
        for row in calls_rows(argv[2], argv[3:]):
            print(row)
        return 0
    if len(argv) != 4:
        raise SystemExit(__doc__)
    runs = read(argv[1], ["run", "group", "np", "grid", "m", "nb", "kb", "mode", "warmup", "reps",
                          "time_s_min", "gflops", "status", "calls", "gpu_calls", "cpu_calls"])
    calls = read(argv[2], ["run", "transa", "transb", "m", "n", "k", "beta", "path", "count", "time_us"])
    pblas = read(argv[3], ["np", "mode", "status", "check", "calls", "gpu", "cpu", "other"])
    out = []

    out.append("## PBLAS tester (spb3tst, tests/scalapack/PSBLAS3TST.dat), LD_PRELOAD=libtgemm.so\n")
    out.append("| processes | TGEMM_OFFLOAD | exit status | report | local calls | on the GPU | on the CPU | other |")
    out.append("|---:|---|---:|---|---:|---:|---:|---:|")
    for r in pblas:
        out.append(f"| {r['np']} | {r['mode']} | {r['status']} | {r['check']} | {r['calls']} | {r['gpu']} "
                   f"| {r['cpu']} | {r['other']} |")

    out.append("\n## PSGEMM, M = N = K\n")
    out.append("Time of the fastest timed call (the slowest process's), GFLOP/s in parentheses; speed-up "
               "against OpenBLAS alone with ScaLAPACK as shipped (panel width 32) at the same size, "
               "processes and block size.\n")
    configs = {}
    for r in runs:
        key = (int(r["m"]), int(r["np"]), r["grid"], int(r["nb"]), int(r["kb"]))
        configs.setdefault(key, {})[r["mode"]] = r
    baseline = {}
    for (m, np_, _, nb, kb), modes in configs.items():
        if kb == 32 and "cpu" in modes and modes["cpu"]["status"] == "ok":
            baseline[(m, np_, nb)] = num(modes["cpu"]["time_s_min"])
    out.append("| M=N=K | processes | NB | panel | cpu (OpenBLAS) | auto | gpu | auto speed-up | gpu speed-up |")
    out.append("|---:|---|---:|---:|---|---|---|---:|---:|")
    for key in sorted(configs, key=lambda k: (k[0], k[1], k[4], k[3])):
        m, np_, grid, nb, kb = key
        modes = configs[key]
        base = baseline.get((m, np_, nb))

        def speedup(mode):
            r = modes.get(mode)
            t = num(r["time_s_min"]) if r is not None and r["status"] == "ok" else None
            return f"{base / t:.2f}" if base and t else "-"

        procs = f"{np_} ({grid})" if grid else str(np_)
        out.append(f"| {m} | {procs} | {nb} | {kb} | {fmt_time(modes.get('cpu'))} | {fmt_time(modes.get('auto'))} "
                   f"| {fmt_time(modes.get('gpu'))} | {speedup('auto')} | {speedup('gpu')} |")

    out.append("\n## Local SGEMM calls (all processes, from TGEMM_TRACE)\n")
    out.append("Per PSGEMM call (warm-up included in the count, divided out); beta 0 is each process's first "
               "panel, beta 1 the rest. GPU flops: the share of 2 m n k that ran on the GPU.\n")
    per_run = defaultdict(list)
    for c in calls:
        per_run[c["run"]].append(c)
    run_info = {r["run"]: r for r in runs}
    for name in sorted(per_run):
        rows = per_run[name]
        info = run_info.get(name)
        ncalls = int(info["warmup"]) + int(info["reps"]) if info else 1
        flops = defaultdict(float)
        for c in rows:
            flops[c["path"]] += 2.0 * int(c["m"]) * int(c["n"]) * int(c["k"]) * int(c["count"])
        total = sum(flops.values())
        share = f"{100.0 * flops.get('gpu', 0.0) / total:.0f}%" if total else "-"
        label = name if info is None else f"{name} (M=N=K={info['m']}, grid {info['grid']}, NB {info['nb']}, " \
                                          f"panel {info['kb']}, {info['mode']})"
        out.append(f"**{label}**: GPU flops {share}\n")
        out.append("| op | m x n x k | beta | path | calls per PSGEMM | mean time | share of time |")
        out.append("|---|---|---:|---|---:|---:|---:|")
        time_total = sum(float(c["time_us"]) for c in rows) or 1.0
        rows.sort(key=lambda c: -float(c["time_us"]))
        for c in rows[:10]:
            cnt = int(c["count"])
            per = cnt / ncalls if info else cnt
            out.append(f"| {c['transa']}{c['transb']} | {c['m']} x {c['n']} x {c['k']} | {c['beta']} | {c['path']} "
                       f"| {per:g} | {float(c['time_us']) / cnt / 1000.0:.2f} ms "
                       f"| {100.0 * float(c['time_us']) / time_total:.0f}% |")
        if len(rows) > 10:
            out.append(f"| ... | {len(rows) - 10} more shapes | | | | | |")
        out.append("")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
