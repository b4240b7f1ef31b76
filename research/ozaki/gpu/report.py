#!/usr/bin/env python3
"""Markdown tables from an ozaki2_gpu log (run.sh's $OUT/ozaki2_gpu.log).

    python3 research/ozaki/gpu/report.py LOG

Two tables: the checks (every case run without --time: its bitwise
comparison with the CPU model and its FP64 errors), and the timings (every
--time case: each pass's time, the total's rate, and cuBLAS in the same
process where the log has it: SGEMM in its faster strict-FP32 mode on the
same operands, and the INT8 GEMM on the same residue planes).
"""
import re
import sys

CASE = re.compile(r"^case (?P<name>[^:]+): (?P<m>\d+)x(?P<n>\d+)x(?P<k>\d+) op=(?P<op>\w\w) .* N=(?P<N>\d+) "
                  r"phi=(?P<phi>[\d.]+)")
BITS = re.compile(r"bitwise vs CPU model: (\d+) of (\d+) elements differ")
FP64 = re.compile(r"vs FP64 \((\d+) of (\d+) columns\): max .* = ([\d.e+-]+), normwise = ([\d.e+-]+)")
TIME = re.compile(r"time \(ms, mean of (\d+) after a warm-up\): scaling ([\d.]+), conversion ([\d.]+), GEMMs "
                  r"([\d.]+) \(([\d.]+) TOPS int8 over (\d+) moduli\), CRT ([\d.]+), total ([\d.]+) -> ([\d.]+) TFLOP/s")
CERT = re.compile(r"certificate \(in the scaling time\): ([\d.]+) ms \(magnitude GEMM ([\d.]+)\); smallest N "
                  r"certified for every element: ([^;]+);")
CV = re.compile(r"certificate vs CPU model: (\d+) of (\d+) elements differ; smallest N certified for every "
                r"element: ([^ ]+(?: up to \d+)?)")
SERR = re.compile(r"cuBLAS SGEMM vs FP64 \(same columns\): max .* = ([\d.e+-]+), normwise = ([\d.e+-]+)")
CUBLAS = re.compile(r"cuBLAS same run: SGEMM ([\d.]+) ms \(([\d.]+) TFLOP/s; default ([\d.]+), pedantic ([\d.]+)\) "
                    r"-> Ozaki-II ([\d.]+)x; INT8 GEMM x\d+ ([\d.]+) ms \(([\d.]+) TOPS\) -> our GEMMs ([\d.]+)x")


def parse(path):
    cases, cmd, cur = [], "", None
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        if line.startswith("$ "):
            cmd = line[2:]
            continue
        m = CASE.match(line)
        if m:
            cur = dict(m.groupdict(), gemm="mma.sync" if "--gemm mma" in cmd else "wgmma", cmd=cmd)
            cases.append(cur)
            continue
        if cur is None:
            continue
        for key, rx in (("bits", BITS), ("fp64", FP64), ("time", TIME), ("cublas", CUBLAS), ("serr", SERR), ("cert", CERT), ("cv", CV)):
            m = rx.search(line)
            if m:
                cur[key] = m.groups()
        if line.strip() in ("OK", "FAIL"):
            cur["result"] = line.strip()
    return cases


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    cases = parse(sys.argv[1])
    checks = [c for c in cases if "time" not in c]
    timed = [c for c in cases if "time" in c]
    print("| case | m x n x k | op | N | phi | GEMM | bitwise vs model | certificate vs model | max rel. error | "
          "normwise | result |")
    print("|---|---|---|---:|---:|---|---|---|---:|---:|---|")
    for c in checks:
        bits = "%s of %s differ" % c["bits"] if "bits" in c else "-"
        cv = "%s of %s differ (N %s)" % c["cv"] if "cv" in c else "-"
        err = c.get("fp64", ("", "", "-", "-"))
        print("| %s | %sx%sx%s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            c["name"], c["m"], c["n"], c["k"], c["op"], c["N"], c["phi"], c["gemm"], bits, cv, err[2], err[3],
            c.get("result", "?")))
    print()
    print("| m x n x k | N | phi | GEMM | scaling ms (certificate; its GEMM) | certified N | conversion ms | GEMMs ms (TOPS) | CRT ms | total ms | "
          "TFLOP/s | cuBLAS SGEMM ms | speed-up | cuBLAS INT8 TOPS | GEMMs / cuBLAS INT8 | max rel. error "
          "(SGEMM) | normwise (SGEMM) |")
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for c in timed:
        t = c["time"]
        cb = c.get("cublas")
        err = c.get("fp64", ("", "", "-", "-"))
        se = c.get("serr")
        if se:
            err = ("", "", "%s (%s)" % (err[2], se[0]), "%s (%s)" % (err[3], se[1]))
        ce = c.get("cert")
        scal = "%s (%s; %s)" % (t[1], ce[0], ce[1]) if ce else t[1]
        print("| %sx%sx%s | %s | %s | %s | %s | %s | %s | %s (%s) | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            c["m"], c["n"], c["k"], c["N"], c["phi"], c["gemm"], scal, ce[2] if ce else "-", t[2], t[3], t[4], t[6],
            t[7], t[8],
            cb[0] if cb else "-", (cb[4] + "x") if cb else "-", cb[6] if cb else "-", (cb[7] + "x") if cb else "-",
            err[2], err[3]))


if __name__ == "__main__":
    main()
