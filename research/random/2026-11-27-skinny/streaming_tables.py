#!/usr/bin/env python3
"""Tables of research/random/2026-11-27-skinny (run from this directory).

pipelined/: base (5d204b0) and new (unaligned X pipelined) on all.txt, two
  runs each, interleaved (base new new base); K <= 64 with families forced.
tiled/: the streaming kernels (new) against the tiled planner (plan.cpp's
  streaming branch off) on all2.txt, interleaved (new tiled tiled new);
  model_lines.txt: plan_dump --model for each problem.
validation/: base against the final tree on fresh_9270003.txt (sk_*) and
  three bench_random seeds (s928000N_*).
Ratios are cuBLAS's faster mode over tgemm (above 1 tgemm is faster); a
problem's value over two runs is their geometric mean.
"""
import csv
import math
import re


def load(path):
    return {tuple(r[c] for c in ("m", "n", "k", "ta", "tb", "lda", "ldb", "ldc", "alpha", "beta")): r
            for r in csv.DictReader(open(path))}


def gm(v):
    return math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")


def p5(v):
    s = sorted(v)
    pos = 0.05 * (len(s) - 1)
    lo = int(pos)
    return s[lo] + (s[min(lo + 1, len(s) - 1)] - s[lo]) * (pos - lo)


def pair(a, b, key, col):
    return math.sqrt(float(a[key][col]) * float(b[key][col]))


def x_layout(key):
    m, n, k = int(key[0]), int(key[1]), int(key[2])
    ta, tb, lda, ldb = key[3] == "T", key[4] == "T", int(key[5]), int(key[6])
    if n <= m:  # X = op(A)
        x_r, x_k = (lda, 1) if ta else (1, lda)
    else:       # X = op(B)
        x_r, x_k = (1, ldb) if tb else (ldb, 1)
    kernel = "rows" if x_r == 1 else "dots"
    stride = x_k if x_r == 1 else x_r
    return kernel, stride % 4 == 0


def model_lines(path):
    out, cur = {}, None
    for line in open(path):
        if line.startswith("== "):
            cur = tuple(line.split()[1:11])
        elif line.startswith("# model"):
            s, t = line.split("|")
            d = {k: float(v) for k, v in re.findall(r"(\w+)=([\d.e+-]+)", s)}
            d.update({"t_" + k: float(v) for k, v in re.findall(r"(\w+)=([\d.e+-]+)", t)})
            d["kind"] = line.split()[2]
            out[cur] = d
    return out


def norm(key):  # the shapes files' alpha/beta as the CSVs print them
    return key[:8] + tuple(f"{float(x):g}" for x in key[8:])


def table(title, head, rows):
    print(f"\n{title}\n")
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("---" if i == 0 else "---:" for i in range(len(head))) + "|")
    for r in rows:
        print("| " + " | ".join(r) + " |")


# --- pipelined loads
P = {n: load(f"pipelined/{n}.csv") for n in ("base1", "base2", "new1", "new2")}
rows = []
for kernel in ("rows", "dots"):
    for vec in (True, False):
        ks = [k for k in P["base1"] if min(int(k[0]), int(k[1])) <= 16 and x_layout(k) == (kernel, vec)]
        cells = [f"skinny_{kernel}", "aligned" if vec else "unaligned", str(len(ks))]
        for L in ("hot", "cold"):
            cells.append(f"{gm([pair(P['base1'], P['base2'], k, f'tgemm_{L}_us') / pair(P['new1'], P['new2'], k, f'tgemm_{L}_us') for k in ks]):.3f}")
        for L in ("hot", "cold"):
            b = [pair(P["base1"], P["base2"], k, f"ratio_{L}") for k in ks]
            n = [pair(P["new1"], P["new2"], k, f"ratio_{L}") for k in ks]
            cells.append(f"{gm(b):.3f} -> {gm(n):.3f}")
        rows.append(cells)
table("Unaligned X pipelined: base time / new time (geomean), and the ratio to cuBLAS, by X's layout",
      ["kernel (planned)", "X", "problems", "speedup hot", "speedup cold", "ratio hot", "ratio cold"], rows)

F = {n: load(f"pipelined/{n}.csv") for n in ("k_default", "k_32", "k_64", "k_rankk")}
rows = []
for kernel in ("rows", "dots"):
    ks = [k for k in F["k_default"] if x_layout(k)[0] == kernel]
    cells = [f"skinny_{kernel}", str(len(ks))]
    for n in ("k_default", "k_32", "k_64", "k_rankk"):
        h = [float(F[n][k]["ratio_hot"]) for k in ks]
        c = [float(F[n][k]["ratio_cold"]) for k in ks]
        cells.append(f"{gm(h):.3f} / {gm(c):.3f} (min {min(h + c):.2f})")
    rows.append(cells)
table("K <= 64, one run each: ratio hot / cold (geomean, min) with the streaming plan and with families forced",
      ["streaming kernel", "problems", "streaming", "32x32x8", "64x64x8", "rank-k"], rows)

# --- streaming against the tiled planner
T = {n: load(f"tiled/{n}.csv") for n in ("new1", "new2", "tiled1", "tiled2")}
M = model_lines("tiled/model_lines.txt")
data = []
for key in T["new1"]:
    d = M.get(norm(key)) or M.get(key)
    if d is None or d["kind"] != "streaming":
        continue
    data.append(dict(key=key, d=d,
                     sc=pair(T["new1"], T["new2"], key, "tgemm_cold_us"), tc=pair(T["tiled1"], T["tiled2"], key, "tgemm_cold_us"),
                     sh_r=pair(T["new1"], T["new2"], key, "ratio_hot"), sc_r=pair(T["new1"], T["new2"], key, "ratio_cold"),
                     th_r=pair(T["tiled1"], T["tiled2"], key, "ratio_hot"), tc_r=pair(T["tiled1"], T["tiled2"], key, "ratio_cold")))
rows = []
for kernel in ("rows", "dots"):
    for lo, hi in ((1, 64), (65, 512), (513, 4096), (4097, 20000)):
        s = [o for o in data if x_layout(o["key"])[0] == kernel and lo <= int(o["key"][2]) <= hi]
        if s:
            rows.append([f"skinny_{kernel}", f"{lo} to {hi}", str(len(s)),
                         f"{gm([o['sh_r'] for o in s]):.3f} / {gm([o['sc_r'] for o in s]):.3f}",
                         f"{gm([o['th_r'] for o in s]):.3f} / {gm([o['tc_r'] for o in s]):.3f}",
                         f"{gm([max(o['sh_r'], o['th_r']) for o in s]):.3f} / {gm([max(o['sc_r'], o['tc_r']) for o in s]):.3f}"])
table("Streaming plan against the tiled planner's plan: ratio hot / cold, geomean (best of: the better of the two per problem)",
      ["streaming kernel", "K", "problems", "streaming", "tiled", "best of"], rows)

HOST = 5.5


def smodel(d, c0, trip):
    return max(max(d["waves"] * (c0 + d["trips"] * trip), d["memory_us"]) + d["finish_us"], HOST)


def rms(v):
    return math.sqrt(sum(x * x for x in v) / len(v))


best = min((rms([math.log(smodel(o["d"], c0, L) / o["sc"]) for o in data]), c0, L)
           for c0 in [x * 0.25 for x in range(0, 17)] for L in [x * 0.05 for x in range(4, 41)])
print(f"\nFit (operands out of L2, {len(data)} problems): block {best[1]:.2f} us, trip {best[2]:.2f} us, "
      f"log-rms error {best[0]:.3f}; the tiled model (host-floored) against the tiled plans' times: "
      f"log-rms {rms([math.log(o['d']['t_floored_us'] / o['tc']) for o in data]):.3f}")
c0, L = best[1], best[2]
rows = []
for label, pick in (("streaming always", lambda o: False), ("tiled always", lambda o: True),
                    ("model (ties stream)", lambda o: o["d"]["t_floored_us"] < smodel(o["d"], c0, L)),
                    ("best of the two", None)):
    if pick is None:
        h = [max(o["sh_r"], o["th_r"]) for o in data]
        c = [max(o["sc_r"], o["tc_r"]) for o in data]
        n = "-"
    else:
        h = [o["th_r"] if pick(o) else o["sh_r"] for o in data]
        c = [o["tc_r"] if pick(o) else o["sc_r"] for o in data]
        n = str(sum(1 for o in data if pick(o)))
    rows.append([label, n, f"{gm(h):.3f} / {gm(c):.3f}", f"{p5(h):.3f} / {p5(c):.3f}", f"{min(h):.3f} / {min(c):.3f}"])
table("The choice, in sample: ratio hot / cold", ["rule", "tiled", "geomean", "p5", "min"], rows)

# --- validation
V = {n: load(f"validation/{n}.csv") for n in ("sk_base1", "sk_base2", "sk_new1", "sk_new2")}
MV = model_lines("validation/model_lines.txt")
rows = []
for lab, a, b in (("base (5d204b0)", "sk_base1", "sk_base2"), ("new", "sk_new1", "sk_new2")):
    h = [pair(V[a], V[b], k, "ratio_hot") for k in V[a]]
    c = [pair(V[a], V[b], k, "ratio_cold") for k in V[a]]
    rows.append([lab, str(len(h)), f"{gm(h):.3f} / {gm(c):.3f}", f"{p5(h):.3f} / {p5(c):.3f}", f"{min(h):.3f} / {min(c):.3f}",
                 str(sum(1 for x in h + c if x < 0.85))])
table("Out of sample (fresh_9270003.txt, 150 problems, base new new base): ratio hot / cold",
      ["library", "problems", "geomean", "p5", "min", "ratios < 0.85"], rows)
err_s, err_t = [], []
for k in V["sk_new1"]:
    d = MV.get(norm(k)) or MV.get(k)
    if d is None or d["kind"] != "streaming":
        continue
    meas = pair(V["sk_new1"], V["sk_new2"], k, "tgemm_cold_us")
    if d["t_floored_us"] < d["floored_us"]:
        err_t.append(math.log(d["t_floored_us"] / meas))
    else:
        err_s.append(math.log(d["floored_us"] / meas))
print(f"\nOut of sample, model against measured (cold): streaming plans {len(err_s)}, log-rms {rms(err_s):.3f}, "
      f"mean {sum(err_s) / len(err_s):+.3f}; tiled plans {len(err_t)}, log-rms {rms(err_t):.3f}, "
      f"mean {sum(err_t) / len(err_t):+.3f}")
