#!/usr/bin/env python3
"""How much time the dispatcher's plan loses against the fastest plan measured.

    python3 bench/plan_regret.py PLANS_CSV PICKED_LOG

PLANS_CSV: bench_plans output (every family x split-K x form, timed).
PICKED_LOG: standard error of libtgemm with TGEMM_VERBOSE=2 on the same
shapes (NN), whose "device plan" lines name the plan it runs.

Prints, per shape, the picked plan and its measured time, the fastest plan,
and the loss; then the mean loss over the shapes whose pick is in the table
(stream-K, peeled and streaming plans are not: they are listed, not scored).
"""
import csv
import math
import re
import sys

PLAN = re.compile(r"device plan m=(\d+) n=(\d+) k=(\d+) NN tiled (\S+) split-k=(\d+) \((\w+)\)")
OTHER = re.compile(r"device plan m=(\d+) n=(\d+) k=(\d+)(?: NN)?[: ](.*)")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    rows = list(csv.DictReader(open(sys.argv[1])))
    table = {}
    for r in rows:
        shape = (int(r["m"]), int(r["n"]), int(r["k"]))
        table.setdefault(shape, {})[(r["family"], int(r["splits"]), r["form"])] = float(r["us"])
    picked, other = {}, {}
    for line in open(sys.argv[2]):
        m = PLAN.search(line)
        if m:
            shape = tuple(int(x) for x in m.group(1, 2, 3))
            picked.setdefault(shape, (m.group(4), int(m.group(5)), m.group(6)))
            continue
        m = OTHER.search(line)
        if m:
            other.setdefault(tuple(int(x) for x in m.group(1, 2, 3)), m.group(4).strip())
    losses = []
    print(f"{'shape':<18} {'picked':<30} {'us':>8}  {'fastest':<30} {'us':>8}  loss")
    for shape in sorted(table, key=lambda s: s[0] * s[1] * s[2]):
        plans = table[shape]
        best = min(plans, key=plans.get)
        name = "x".join(map(str, shape))
        fastest = f"{best[0]} s{best[1]} {best[2]}"
        pick = picked.get(shape)
        if pick is None or pick not in plans:
            why = other.get(shape, "no plan line" if pick is None else f"{pick[0]} s{pick[1]} {pick[2]}: not timed")
            print(f"{name:<18} {why[:30]:<30} {'':>8}  {fastest:<30} {plans[best]:8.2f}  -")
            continue
        loss = plans[pick] / plans[best] - 1.0
        losses.append(loss)
        print(f"{name:<18} {pick[0] + ' s' + str(pick[1]) + ' ' + pick[2]:<30} {plans[pick]:8.2f}  "
              f"{fastest:<30} {plans[best]:8.2f}  {100 * loss:4.1f}%")
    if losses:
        mean = math.exp(sum(math.log1p(x) for x in losses) / len(losses)) - 1.0
        print(f"mean loss over {len(losses)} shapes: {100 * mean:.1f}% (geometric), worst {100 * max(losses):.1f}%")


if __name__ == "__main__":
    main()
