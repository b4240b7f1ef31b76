#!/usr/bin/env python3
"""Calibrating the tiled planner's per-family fixed costs on random products.

    python3 bench/fit_plans.py shapes --seed S [--count 80] [--mn LO HI] [--k LO HI]
        M N K triples for bench_plans: m, n log-uniform over --mn (96 to
        8000), K over --k (16 to 4096), m n <= 1.6e7, 2 m n k <= 2e10
        (bounded so that every plan of a set is timed and checked within
        minutes)
    python3 bench/fit_plans.py unaligned SET.csv [SET.csv ...]
        Per family and transpose pair, the unaligned factor (the rate on
        unaligned operands over the aligned rate) that fits the unaligned
        plans of the sets best (log-rms, the block and wave costs as
        factors.cpp has them), and the pick loss of this model's own choice
        among each set's measured plans with the present factors and the
        fitted ones; with two sets or more, also each set with factors
        fitted on the others only (held out).
    python3 bench/fit_plans.py clusters SET.csv[.xz] [SET.csv[.xz] ...]
        The split-K cluster form against the model and the workspace form:
        the cluster plans' log-rms and mean log error (measured over
        modelled); per set, what the planner's rule (the best plan unsplit
        against the best split by the 3% margin) loses against the fastest
        plan measured; and, from rows with us_main, the cluster kernels'
        time over the workspace kernels' of the same family and split, by
        the grid's blocks per SM.
    python3 bench/fit_plans.py waves SET.csv[.xz] [SET.csv[.xz] ...]
        The plans without a split: measured over modelled time (geometric
        mean, and how many plans), per family, by the K steps a block walks
        and by whether the busiest SM runs a whole wave of the family's
        blocks or more (where short_wave_seconds applies).
    python3 bench/fit_plans.py reduction FIT.csv[,FIT.csv...] VAL.csv[,VAL.csv...] [--bandwidth B]
        The split-K reduction's cost, from the workspace plans timed with
        and without it (us - us_main): the fixed time, the slices' rate
        over the memory bandwidth B (default the H100's, 2.88e12) and the
        time per byte of C fitted by least squares with the batch's cost
        held at the present one (the sets cannot tell it from the slices'),
        and the present and fitted model's error on both sets (median
        absolute, and the 10th, 50th and 90th percentile of measured over
        modelled); run on another device's sets, B its measured bandwidth.
    python3 bench/fit_plans.py fit FIT.csv[,FIT.csv...] VAL.csv[,VAL.csv...] [--plan-dump build/bench/plan_dump]
        FIT, VAL: bench_plans output on independent sets, each a
        comma-separated list of files (NN, or a transposed pair's with
        bench_plans --op: the transa and transb columns; without them NN).
        Fits,
        per family, the seconds a block and a wave cost beside the K steps
        (non-negative least squares on the relative error; the K steps as
        src/dispatch/tiled.cpp models them with the factors below), for
        the scalar kernels on the sets' unaligned products and for the
        vector kernels on their aligned ones, and prints each family's
        log-rms error on both sets, present costs and fitted; then, with
        plan_dump (the library's own planner), what the plan picked loses
        against the fastest plan measured on each set.

The model here mirrors tiled_cost in src/dispatch/tiled.cpp and the sm_90 row
of src/dispatch/factors.cpp (efficiencies, blocks per SM, step floors):
change them together (tests/check-fit-plans.sh compares them).
"""
import argparse
import collections
import csv
import lzma
import math
import random
import subprocess
import sys

SM, CLOCK, BW = 132, 1.98e9, 2.88e12
SM_FLOPS, WARP_FLOPS = 2 * 128 * CLOCK, 0.5 * 2 * 32 * CLOCK
STEP, ALONE = 0.8e-6, 0.75
# The split-K reduction behind a workspace split (tiled.cpp's
# reduction_seconds): a fixed time, each batch of REDUCE_BATCH slices a thread
# loads, the slices read at REDUCE_SLICE times the memory bandwidth, and a
# time per byte of C (beta 0, as bench_plans times).
REDUCE, REDUCE_PER_BATCH, REDUCE_BATCH = 0.31e-6, 0.35e-6, 16
REDUCE_SLICE, REDUCE_C = 1.146, 1.30e-12
# name: bm, bn, bk, threads, efficiencies (NN, NT, TN, TT), blocks per SM, step
# floor, lone share, unaligned factors (NN, NT, TN, TT)
FAMILIES = {
    "256x128x16": (256, 128, 16, 256, (0.778, 0.777, 0.710, 0.761), 1, STEP, ALONE, (0.897, 0.897, 0.897, 0.897)),
    "256x128x8": (256, 128, 8, 256, (0.734, 0.786, 0.692, 0.738), 1, STEP, ALONE, (0.939, 0.939, 0.939, 0.939)),
    "128x256x8": (128, 256, 8, 256, (0.692, 0.681, 0.644, 0.711), 1, STEP, ALONE, (0.855, 0.855, 0.855, 0.855)),
    "128x128x8": (128, 128, 8, 256, (0.649, 0.662, 0.589, 0.647), 2, STEP, ALONE, (1.0, 1.0, 1.0, 1.0)),
    "128x128x16": (128, 128, 16, 256, (0.661, 0.739, 0.654, 0.670), 1, STEP, ALONE, (0.916, 0.916, 0.916, 0.916)),
    "128x64x8": (128, 64, 8, 128, (0.584, 0.622, 0.550, 0.556), 4, STEP, ALONE, (1.0, 1.0, 1.0, 1.0)),
    "64x128x8": (64, 128, 8, 128, (0.565, 0.617, 0.549, 0.596), 4, STEP, ALONE, (1.0, 1.0, 1.0, 1.0)),
    "64x64x8": (64, 64, 8, 128, (0.483, 0.546, 0.438, 0.469), 4, STEP, ALONE, (1.0, 1.0, 1.0, 1.0)),
    "64x64x16": (64, 64, 16, 128, (0.50, 0.50, 0.50, 0.50), 4, 0.59e-6, 1.0, (1.0, 1.0, 1.0, 1.0)),
    "32x32x8": (32, 32, 8, 32, (0.430, 0.489, 0.372, 0.429), 16, STEP, ALONE, (1.0, 1.0, 1.0, 1.0)),
    "64x256x16": (64, 256, 16, 256, (0.650, 0.709, 0.618, 0.704), 1, STEP, ALONE, (0.862, 0.895, 0.907, 0.829)),
    "256x64x16": (256, 64, 16, 256, (0.610, 0.732, 0.617, 0.566), 1, STEP, ALONE, (1.0, 0.854, 0.941, 0.842)),
}
# The seconds a block and a wave cost beside their K steps, as factors.cpp
# has them: the scalar kernels' (BLOCK_WAVE: an operand or C unaligned) and
# the vector kernels' (VECTOR_BLOCK_WAVE: all aligned).
BLOCK_WAVE = {
    "256x128x16": (7.18e-6, 0.09e-6),
    "256x128x8": (9.50e-6, 0.00e-6),
    "128x256x8": (8.28e-6, 0.00e-6),
    "128x128x8": (1.90e-6, 3.45e-6),
    "128x128x16": (5.15e-6, 0.58e-6),
    "128x64x8": (0.66e-6, 3.33e-6),
    "64x128x8": (0.88e-6, 3.27e-6),
    "64x64x8": (0.33e-6, 0.00e-6),
    "64x64x16": (0.00e-6, 1.57e-6),
    "32x32x8": (0.12e-6, 0.00e-6),
}
VECTOR_BLOCK_WAVE = {
    "256x128x16": (1.85e-6, 0.00e-6),
    "256x128x8": (2.15e-6, 0.00e-6),
    "128x256x8": (3.08e-6, 0.00e-6),
    "128x128x8": (0.68e-6, 0.00e-6),
    "128x128x16": (1.81e-6, 0.00e-6),
    "128x64x8": (0.06e-6, 0.00e-6),
    "64x128x8": (0.00e-6, 0.00e-6),
    "64x64x8": (0.00e-6, 1.36e-6),
    "64x64x16": (0.00e-6, 0.00e-6),
    "32x32x8": (0.00e-6, 1.14e-6),
}
# 64x256x16 and 256x64x16 are priced through 128x128x16 (factors.cpp).
for costs in (BLOCK_WAVE, VECTOR_BLOCK_WAVE):
    costs["64x256x16"] = costs["256x64x16"] = costs["128x128x16"]
# Each whole wave at full residency of a plan without a split while a block
# walks few K steps (the seconds, and the K steps up to which it is taken in
# full), as factors.cpp has them: short_wave_seconds, short_wave_steps.
SHORT_WAVE = {"32x32x8": (4e-6, 8)}
CLUSTER_BLOCKS = {"one block an SM": [0, 0, 132, 117, 120, 110, 102, 105, 120], "128x128x8": [0, 0, 264, 237, 248, 235, 234, 224, 240],
                  "128x64x8": [0, 0, 528, 489, 496, 470, 474, 483, 496], "64x64x16": [0, 0, 528, 489, 496, 470, 474, 483, 496],
                  "64x64x8": [0, 0, 528, 489, 496, 470, 474, 483, 496], "32x32x8": [0, 0, 1056, 981, 992, 965, 978, 973, 992]}


def cdiv(a, b):
    return -(-a // b)


def cluster_blocks(family, splits):
    key = "one block an SM" if FAMILIES[family][5] == 1 else family  # their capacities are alike
    return CLUSTER_BLOCKS.get(key, [0] * 9)[splits] if splits < 9 else 0


def features(m, n, k, family, splits, chunk, cluster, ta=False, tb=False, unaligned_factor=None):
    """(K steps' seconds, blocks on the busiest SM, waves, split's reduction
    seconds, the busiest SM's blocks of the first wave) of op(A) op(B), A
    and B unpadded as bench_plans stores them:
    without clusters, the busiest SM's whole waves of the blocks it holds at
    once (without a split, each with SHORT_WAVE's cost where K is short),
    then the rest as a partial wave with fewer resident; in cluster
    form, whole waves of the blocks that fit in clusters, the grid shared
    equally over them, each filling the busiest SM in proportion to the
    clusters' capacity (tiled_cost)."""
    bm, bn, bk, threads, effs, per_sm, floor, alone_share, unaligned = FAMILIES[family]
    eff = effs[2 * ta + tb]
    blocks = cdiv(m, bm) * cdiv(n, bn) * splits
    busiest = cdiv(blocks, SM)
    full, rest = divmod(busiest, per_sm)
    plain_per_sm = per_sm
    resident = min(per_sm, busiest)
    if cluster:  # the cluster kernels' residency may exceed the plain ones'
        cap = cluster_blocks(family, splits)
        full, rest = cdiv(blocks, cap), 0
        per_sm = max(per_sm, cdiv(cap, SM))
        # a wave of clusters fills the SMs in proportion to the capacity
        resident = min(per_sm, cdiv(cdiv(blocks, full) * cdiv(cap, SM), cap))
        busiest = full * resident
    aligned = is_aligned(m, n, k, ta, tb)
    u = unaligned[2 * ta + tb] if unaligned_factor is None else unaligned_factor
    steps = cdiv(chunk, bk) + 1

    def wave_steps(resident):
        alone = plain_per_sm > 1 and resident * threads / 32 < 16
        share = eff * (1.0 if aligned else u) * SM_FLOPS
        rate = min(max(share / per_sm, share * (alone_share if alone else 1.0) / resident), threads / 32 * WARP_FLOPS)
        return steps * max(floor, 2.0 * bm * bn * bk / rate)

    if splits == 1:
        reduce = 0.0
    elif cluster:
        reduce = 0.5e-6 + 0.1e-6 * cdiv(bm * bn // 4, splits * threads)
    else:
        reduce = (REDUCE + REDUCE_PER_BATCH * cdiv(splits - 1, REDUCE_BATCH) + splits * m * n * 4.0 / (REDUCE_SLICE * BW)
                  + m * n * 4.0 * REDUCE_C)
    short_seconds, short_steps = SHORT_WAVE.get(family, (0.0, 0.0))
    short = 0.0 if splits > 1 or short_seconds == 0.0 else full * short_seconds * min(1.0, short_steps / (steps - 1))
    return (full * wave_steps(resident) + (wave_steps(rest) if rest else 0.0) + short, busiest, full + (rest > 0), reduce,
            resident)


def ops(r):
    """(transa, transb) of a bench_plans row as booleans; NN without the columns."""
    return r.get("transa", "N") == "T", r.get("transb", "N") == "T"


def load(paths):
    """{family: plans} of the comma-separated bench_plans files `paths`."""
    plans = collections.defaultdict(list)
    for r in (r for path in paths.split(",") for r in csv.DictReader(open_text(path))):
        plans[r["family"]].append((int(r["m"]), int(r["n"]), int(r["k"]), int(r["splits"]), int(r["k_chunk"]),
                                   r["form"] == "cluster", float(r["us"]) * 1e-6, *ops(r)))
    return plans


def fixed_seconds(family, vector, busiest, waves, first, scalar=None, later=None):
    """The fixed costs of a plan (tiled.cpp's fixed_seconds): BLOCK_WAVE's (or `scalar`) for each
    block and wave of the scalar kernels and of the vector kernels' first wave, VECTOR_BLOCK_WAVE's
    (or `later`) for each later block and wave of the vector kernels."""
    block, wave = scalar or BLOCK_WAVE[family]
    if not vector:
        return block * busiest + wave * waves
    vector_block, vector_wave = later or VECTOR_BLOCK_WAVE[family]
    return block * first + wave + vector_block * (busiest - first) + vector_wave * (waves - 1)


def log_rms(rows, family, scalar=None, later=None):
    """The log-rms error of the unsplit plans of `rows` (fixed_seconds' costs)."""
    e = []
    for m, n, k, s, chunk, cl, t, ta, tb in rows:
        if s != 1:
            continue
        steps, busiest, waves, reduce, first = features(m, n, k, family, s, chunk, cl, ta, tb)
        fixed = fixed_seconds(family, is_aligned(m, n, k, ta, tb), busiest, waves, first, scalar, later)
        e.append(math.log((steps + fixed + reduce) / t))
    return math.sqrt(sum(x * x for x in e) / len(e)) if e else float("nan")


def regret(paths, plan_dump):
    best = collections.defaultdict(dict)
    for r in (r for path in paths.split(",") for r in csv.DictReader(open_text(path))):
        ta, tb = ops(r)
        best[(int(r["m"]), int(r["n"]), int(r["k"]), ta, tb)][(r["family"], int(r["splits"]), r["form"])] = \
            float(r["us"])
    shapes = list(best)
    args = [plan_dump]
    for m, n, k, ta, tb in shapes:
        args += ["--shape", str(m), str(n), str(k), "T" if ta else "N", "T" if tb else "N"]
    lines = subprocess.run(args, capture_output=True, text=True, check=True).stdout.splitlines()
    losses, other = [], 0
    for s, line in zip(shapes, lines):
        rhs = line.split(":", 1)[1].split()
        if rhs[0] != "tiled" or "|" in rhs:
            other += 1
            continue
        split = [x for x in rhs if x.startswith("split=")][0]
        pick = (rhs[1], int(split[6:]), rhs[rhs.index(split) + 1])
        if pick not in best[s]:
            other += 1
            continue
        losses.append(best[s][pick] / min(best[s].values()))
    g = math.exp(sum(math.log(x) for x in losses) / len(losses))
    return g, max(losses), len(losses), other


def plan_time(m, n, k, ta, tb, family, splits, chunk, cluster, factors):
    """The model's seconds for one plan, with `factors` {(family, pair): u} over FAMILIES' unaligned ones."""
    steps, busiest, waves, reduce, first = features(m, n, k, family, splits, chunk, cluster, ta, tb,
                                                    factors.get((family, 2 * ta + tb)))
    # the vector kernels' later-wave costs where the blocks store to C (tiled.cpp's vector_fixed)
    vector = is_aligned(m, n, k, ta, tb) and (splits == 1 or cluster)
    return steps + fixed_seconds(family, vector, busiest, waves, first) + reduce


def nnls2(x, y):
    """(b0, b1) >= 0 minimizing the sum of (x0 b0 + x1 b1 - y)^2 over the rows
    x of `x`: the unconstrained solution where both are >= 0, else the better
    of the one-variable solutions (each clipped at 0)."""
    s00, s01, s11 = (sum(r[i] * r[j] for r in x) for i, j in ((0, 0), (0, 1), (1, 1)))
    s0y, s1y = (sum(r[i] * v for r, v in zip(x, y)) for i in (0, 1))
    det = s00 * s11 - s01 * s01
    if det > 0:
        b = ((s11 * s0y - s01 * s1y) / det, (s00 * s1y - s01 * s0y) / det)
        if min(b) >= 0:
            return b
    tries = [(max(0.0, s0y / s00) if s00 > 0 else 0.0, 0.0), (0.0, max(0.0, s1y / s11) if s11 > 0 else 0.0)]
    return min(tries, key=lambda b: sum((r[0] * b[0] + r[1] * b[1] - v) ** 2 for r, v in zip(x, y)))


def open_text(path):
    """A bench_plans CSV, plain or xz-compressed."""
    return lzma.open(path, "rt") if path.endswith(".xz") else open(path)


def plans_by_shape(path):
    shapes = collections.defaultdict(list)
    for r in csv.DictReader(open_text(path)):
        shapes[(int(r["m"]), int(r["n"]), int(r["k"]), *ops(r))].append(
            (r["family"], int(r["splits"]), int(r["k_chunk"]), r["form"] == "cluster", float(r["us"]) * 1e-6))
    return shapes


def is_aligned(m, n, k, ta, tb):
    return (k if ta else m) % 4 == 0 and (n if tb else k) % 4 == 0 and m % 4 == 0


def fit_unaligned(sets):
    """{(family, pair): u} minimizing the log-rms error over the unaligned plans of `sets`."""
    rows = collections.defaultdict(list)
    for shapes in sets:
        for (m, n, k, ta, tb), plans in shapes.items():
            if not is_aligned(m, n, k, ta, tb):
                for family, splits, chunk, cluster, t in plans:
                    rows[(family, 2 * ta + tb)].append((m, n, k, ta, tb, splits, chunk, cluster, t))
    factors = {}
    for key, rs in rows.items():
        def err(u):
            return sum(math.log(plan_time(m, n, k, ta, tb, key[0], s, c, cl, {key: u}) / t) ** 2
                       for m, n, k, ta, tb, s, c, cl, t in rs)
        factors[key] = min((u / 1000 for u in range(500, 1301, 5)), key=err)
    return factors


SPLIT_MARGIN = 0.03  # src/dispatch/tiled.cpp, kSplitMargin


def pick_losses(shapes, factors, margin=0.0):
    """Per product, the measured time of the model's pick over the fastest plan measured. The pick is
    the plan the model finds fastest; with a margin, as the planner's rule has it, a split plan only
    where the model finds it faster than the best unsplit plan by the margin."""
    losses = []
    for (m, n, k, ta, tb), plans in shapes.items():
        def t(p):
            return plan_time(m, n, k, ta, tb, p[0], p[1], p[2], p[3], factors)
        pick = min(plans, key=t)
        unsplit = [p for p in plans if p[1] == 1]
        if margin > 0.0 and unsplit and pick[1] != 1:
            best_unsplit = min(unsplit, key=t)
            if not t(pick) < (1.0 - margin) * t(best_unsplit):
                pick = best_unsplit
        losses.append(pick[4] / min(p[4] for p in plans))
    return losses


def pick_loss(shapes, factors):
    """Geometric mean of the measured time of the model's pick over the fastest measured plan."""
    return geomean(pick_losses(shapes, factors))


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def cluster_report(paths):
    errors, pooled = [], []
    for path in paths:
        shapes = plans_by_shape(path)
        for (m, n, k, ta, tb), plans in shapes.items():
            errors += [math.log(p[4] / plan_time(m, n, k, ta, tb, *p[:4], {})) for p in plans if p[3]]
        losses = pick_losses(shapes, {}, SPLIT_MARGIN)
        pooled += losses
        print(f"{path}: {len(losses)} products, the pick loses {100 * (geomean(losses) - 1):.2f}%")
    print(f"all: {len(pooled)} products, the pick loses {100 * (geomean(pooled) - 1):.2f}%")
    if errors:
        print(f"cluster plans: {len(errors)}, log-rms error {math.sqrt(sum(e * e for e in errors) / len(errors)):.3f}, "
              f"mean {sum(errors) / len(errors):.3f}")
    # The K loops alone (us_main): cluster over workspace, same product, family and split.
    main_us, pairs = {}, collections.defaultdict(list)
    rows = [r for path in paths for r in csv.DictReader(open_text(path)) if r.get("us_main")]
    for r in rows:
        if r["form"] == "workspace":
            main_us[(r["m"], r["n"], r["k"], *ops(r), r["family"], r["splits"])] = float(r["us_main"])
    for r in rows:
        key = (r["m"], r["n"], r["k"], *ops(r), r["family"], r["splits"])
        if r["form"] != "cluster" or key not in main_us:
            continue
        per_sm, cap = int(r["blocks"]) / SM, int(r["cluster_capacity"])
        if int(r["blocks"]) > cap:
            bucket = "more than the clusters' capacity"
        elif per_sm < 0.9:
            bucket = "below 0.9"
        elif abs(per_sm - round(per_sm)) <= 0.1:
            bucket = f"{round(per_sm)} (within 0.1)"
        else:
            bucket = "between whole numbers"
        pairs[bucket].append(float(r["us_main"]) / main_us[key])
    if pairs:
        print(f"| blocks / {SM} SMs | plans | geomean | median | max |")
        print("|---|---:|---:|---:|---:|")
        for bucket in sorted(pairs):
            v = sorted(pairs[bucket])
            print(f"| {bucket} | {len(v)} | {geomean(v):.3f} | {v[len(v) // 2]:.3f} | {v[-1]:.2f} |")


STEP_BUCKETS = ((4, "1-4"), (8, "5-8"), (16, "9-16"), (40, "17-40"), (None, "over 40"))


def waves_report(paths):
    """The plans without a split, measured over modelled time (geometric mean, plans), per family, by
    the K steps a block walks and by whether the busiest SM runs a whole wave of blocks or more."""
    cells = collections.defaultdict(list)
    for path in paths:
        for (m, n, k, ta, tb), plans in plans_by_shape(path).items():
            for family, splits, chunk, cluster, t in plans:
                if splits != 1:
                    continue
                busiest = features(m, n, k, family, splits, chunk, cluster, ta, tb)[1]
                k_steps = cdiv(chunk, FAMILIES[family][2])
                bucket = next(name for top, name in STEP_BUCKETS if top is None or k_steps <= top)
                whole = busiest >= FAMILIES[family][5]
                cells[(family, whole, bucket)].append(t / plan_time(m, n, k, ta, tb, family, splits, chunk, cluster, {}))
    names = [name for _, name in STEP_BUCKETS]
    print("| family | busiest SM | " + " | ".join(f"K steps {b}" for b in names) + " |")
    print("|---|---|" + "---:|" * len(names))
    for family in FAMILIES:
        for whole in (False, True):
            row = [cells.get((family, whole, b), []) for b in names]
            if any(row):
                print(f"| {family} | {'a whole wave or more' if whole else 'less than a wave'} | " +
                      " | ".join(f"{geomean(v):.2f} ({len(v)})" if v else "-" for v in row) + " |")


def reduction_rows(paths):
    """(m, n, splits, seconds the reduction adds) of the workspace plans timed with us_main."""
    return [(int(r["m"]), int(r["n"]), int(r["splits"]), (float(r["us"]) - float(r["us_main"])) * 1e-6)
            for r in (r for path in paths.split(",") for r in csv.DictReader(open_text(path)))
            if r["form"] == "workspace" and r.get("us_main")]


def reduction_time(m, n, splits, fixed, slice_factor, c_seconds, bw):
    """tiled.cpp's reduction_seconds at beta 0 with the given factors."""
    c = m * n * 4.0
    return fixed + REDUCE_PER_BATCH * cdiv(splits - 1, REDUCE_BATCH) + splits * c / (slice_factor * bw) + c * c_seconds


def solve3(a, b):
    """x with a x = b for a 3 x 3 system (Gaussian elimination with partial pivoting)."""
    m = [row[:] + [v] for row, v in zip(a, b)]
    scale = [abs(a[i][i]) for i in range(3)]  # a is a normal matrix: a column's own size
    for i in range(3):
        p = max(range(i, 3), key=lambda r: abs(m[r][i]))
        if abs(m[p][i]) <= 1e-9 * scale[i]:
            raise SystemExit("fit_plans.py reduction: the sets cannot tell the terms apart (one split count, "
                             "or one size of C)")
        m[i], m[p] = m[p], m[i]
        for r in range(i + 1, 3):
            f = m[r][i] / m[i][i]
            m[r] = [x - f * y for x, y in zip(m[r], m[i])]
    x = [0.0] * 3
    for i in (2, 1, 0):
        x[i] = (m[i][3] - sum(m[i][j] * x[j] for j in range(i + 1, 3))) / m[i][i]
    return x


def fit_reduction(rows, bw):
    """(fixed, slice_factor, c_seconds) minimizing the squared error of reduction_time over `rows`."""
    x = [(1.0, s * m * n * 4.0, m * n * 4.0) for m, n, s, _ in rows]
    y = [t - REDUCE_PER_BATCH * cdiv(s - 1, REDUCE_BATCH) for m, n, s, t in rows]
    a = [[sum(r[i] * r[j] for r in x) for j in range(3)] for i in range(3)]
    b = [sum(r[i] * v for r, v in zip(x, y)) for i in range(3)]
    fixed, per_slice_byte, c_seconds = solve3(a, b)
    return fixed, 1.0 / (per_slice_byte * bw), c_seconds


def reduction_report(fit, val, bw):
    rows = {"fit": reduction_rows(fit), "validation": reduction_rows(val)}
    fitted = fit_reduction(rows["fit"], bw)
    present = (REDUCE, REDUCE_SLICE, REDUCE_C)
    print(f"fitted on {len(rows['fit'])} plans: fixed {fitted[0] * 1e6:.3f} us, slices at {fitted[1]:.3f} x the "
          f"bandwidth, C {fitted[2] * 1e12:.3f} us per MB (present: {present[0] * 1e6:.3f} us, {present[1]:.3f}, "
          f"{present[2] * 1e12:.3f})")
    for name, factors in (("present", present), ("fitted", fitted)):
        for set_name, rs in rows.items():
            errors = sorted(abs(t - reduction_time(m, n, s, *factors, bw)) for m, n, s, t in rs)
            ratios = sorted(t / reduction_time(m, n, s, *factors, bw) for m, n, s, t in rs)
            q = [ratios[int(f * (len(ratios) - 1))] for f in (0.1, 0.5, 0.9)]
            print(f"{name:8} {set_name:10} {len(rs):5} plans: median |error| {errors[len(errors) // 2] * 1e6:.2f} us, "
                  f"measured / modelled {q[0]:.3f} / {q[1]:.3f} / {q[2]:.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sh = sub.add_parser("shapes")
    sh.add_argument("--seed", type=int, required=True)
    sh.add_argument("--count", type=int, default=80)
    sh.add_argument("--mn", type=float, nargs=2, default=[96, 8000])
    sh.add_argument("--k", type=float, nargs=2, default=[16, 4096])
    un = sub.add_parser("unaligned")
    un.add_argument("sets", nargs="+")
    cl = sub.add_parser("clusters")
    cl.add_argument("sets", nargs="+")
    wv = sub.add_parser("waves")
    wv.add_argument("sets", nargs="+")
    rd = sub.add_parser("reduction")
    rd.add_argument("fit")
    rd.add_argument("val")
    rd.add_argument("--bandwidth", type=float, default=BW)
    ft = sub.add_parser("fit")
    ft.add_argument("fit")
    ft.add_argument("val")
    ft.add_argument("--plan-dump", default="build/bench/plan_dump")
    a = ap.parse_args()
    if a.cmd == "shapes":
        r, out = random.Random(a.seed), []
        while len(out) < a.count:
            m, n = (int(math.exp(r.uniform(math.log(a.mn[0]), math.log(a.mn[1])))) for _ in range(2))
            k = int(math.exp(r.uniform(math.log(a.k[0]), math.log(a.k[1]))))
            if m * n <= 1.6e7 and 2 * m * n * k <= 2e10:
                out.append(f"{m} {n} {k}")
        print(" ".join(out))
        return 0
    if a.cmd == "clusters":
        cluster_report(a.sets)
        return 0
    if a.cmd == "reduction":
        reduction_report(a.fit, a.val, a.bandwidth)
        return 0
    if a.cmd == "waves":
        waves_report(a.sets)
        return 0
    if a.cmd == "unaligned":
        sets = [plans_by_shape(p) for p in a.sets]
        factors = fit_unaligned(sets)
        pairs = ("NN", "NT", "TN", "TT")
        print("family      " + " ".join(f"{p:>12}" for p in pairs) + "   (fitted, present)")
        for family in FAMILIES:
            cells = [f"{factors[(family, q)]:.3f} {FAMILIES[family][8][q]:.3f}" if (family, q) in factors else "-"
                     for q in range(4)]
            print(f"{family:11} " + " ".join(f"{c:>12}" for c in cells))
        for i, (path, shapes) in enumerate(zip(a.sets, sets)):
            line = f"{path}: the model's pick loses {100 * (pick_loss(shapes, {}) - 1):.1f}% present, " \
                   f"{100 * (pick_loss(shapes, factors) - 1):.1f}% fitted"
            if len(sets) > 1:
                held = fit_unaligned(sets[:i] + sets[i + 1:])
                line += f", {100 * (pick_loss(shapes, held) - 1):.1f}% fitted on the others"
            print(line)
        return 0
    fit, val = load(a.fit), load(a.val)
    print("| family | kernels | block us, present / fitted | wave us, present / fitted "
          "| log-rms fit, present / fitted | validation, present / fitted |")
    print("|---|---|---|---|---|---|")
    for family in FAMILIES:
        for vector, table in ((False, BLOCK_WAVE), (True, VECTOR_BLOCK_WAVE)):
            def mine(rows, vector=vector):
                return [r for r in rows if is_aligned(r[0], r[1], r[2], r[7], r[8]) == vector]
            x, y = [], []
            for m, n, k, s, chunk, cl, t, ta, tb in mine(fit[family]):
                steps, busiest, waves, reduce, first = features(m, n, k, family, s, chunk, cl, ta, tb)
                if vector:  # the later blocks and waves, beside the first wave at the scalar kernels' costs
                    x.append(((busiest - first) / t, (waves - 1) / t))
                    y.append(1.0 - (steps + reduce + fixed_seconds(family, True, first, 1, first)) / t)
                else:
                    x.append((busiest / t, waves / t))
                    y.append(1.0 - (steps + reduce) / t)
            if not x:
                continue
            fitted, present = nnls2(x, y), table[family]
            new = {"later": fitted} if vector else {"scalar": fitted}
            errors = [f"{log_rms(mine(rows[family]), family):.3f} / {log_rms(mine(rows[family]), family, **new):.3f}"
                      for rows in (fit, val)]
            print(f"| {family} | {'vector' if vector else 'scalar'} | {present[0] * 1e6:.2f} / {fitted[0] * 1e6:.2f} "
                  f"| {present[1] * 1e6:.2f} / {fitted[1] * 1e6:.2f} | {errors[0]} | {errors[1]} |")
    for name, path in (("fit", a.fit), ("validation", a.val)):
        g, worst, n, other = regret(path, a.plan_dump)
        print(f"{name}: the pick loses {100 * (g - 1):.1f}% (geometric mean), worst {100 * (worst - 1):.0f}%, over "
              f"{n} products ({other} planned otherwise)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
