#!/bin/sh
# bench/fit_plans.py, no GPU: its mirror of the tiled model agrees with the
# sm_90 row of src/dispatch/factors.cpp (efficiencies, blocks per SM,
# unaligned factors per transpose pair, step floors, lone shares, block
# and wave seconds of the scalar and the vector kernels, short waves'
# seconds and steps, the architecture's
# step and lone share), and
# `unaligned` recovers a factor from plan times made with it: 0.8 for
# 128x128x16 on TN, every other family's at its present value, with the
# pair's index as tiled.cpp takes it (2 ta + tb). With plan_dump (its
# path the first argument), the mirror's time of 600 random plans (every
# family, split and form, partial waves among them) against the tiled
# model's own (plan_dump --costs), term for term: within 1e-9; and the
# rank-k plans' --costs lines. `waves` on made-up plans.
# One "[       OK ]" or "[  FAILED  ]" line per check (tests/run.sh counts them).
set -u
plan_dump=${1:-}
here=$(dirname "$0")
. "$here/check_lib.sh"
bench=$(cd "$here/../bench" && pwd)
factors="$here/../src/dispatch/factors.cpp"

PYTHONPATH="$bench" python3 - "$factors" > "$tmp/mirror.txt" 2>&1 <<'PY'
import re, sys
import fit_plans as fp
src = open(sys.argv[1]).read()
row = src[src.index("constexpr ArchFactors kSm90"):]
num = r"[0-9.e+-]+"
arch = re.search(r"\{\s*9, 0,\s*[^,]+, [^,]+, [^,]+, [^,]+,\s*(" + num + r"),\s*// step_seconds\s*(" + num + r"),\s*// alone_factor", row)
print("step", "ok" if arch and float(arch.group(1)) == fp.STEP else "differs")
print("alone", "ok" if arch and float(arch.group(2)) == fp.ALONE else "differs")
rows = re.findall(r'\{"([0-9x]+)", \{(' + num + r'), (' + num + r'), (' + num + r'), (' + num + r')\}, (\d+), \{(' + num
                  + r'), (' + num + r'), (' + num + r'), (' + num + r')\}, (' + num + r'), (' + num + r'), \d+, (' + num
                  + r'), (' + num + r'), (' + num + r'), (' + num + r')(?:, (' + num + r'), (' + num + r'))?\}', row)
print("rows", len(rows), "families", len(fp.FAMILIES))
for r in rows:
    name, v = r[0], [float(x) for x in r[1:5]] + [int(r[5])] + [float(x) if x else 0.0 for x in r[6:]]
    f = fp.FAMILIES.get(name)
    if f is None:
        print(name, "missing")
        continue
    want = (tuple(v[0:4]), v[4], tuple(v[5:9]), v[9] if v[9] > 0 else fp.STEP, v[10] if v[10] > 0 else fp.ALONE,
            (v[11], v[12]), (v[13], v[14]), (v[15], v[16]))
    got = (tuple(f[4]), f[5], tuple(f[8]), f[6], f[7], fp.BLOCK_WAVE[name], fp.VECTOR_BLOCK_WAVE[name],
           fp.SHORT_WAVE.get(name, (0.0, 0.0)))
    print(name, "ok" if want == got else f"differs: factors.cpp {want}, fit_plans.py {got}")
PY
cat "$tmp/mirror.txt"
check "the mirror reads the architecture's step" grep -qx "step ok" "$tmp/mirror.txt"
check "the mirror reads the architecture's lone share" grep -qx "alone ok" "$tmp/mirror.txt"
families=$(grep -c '^TGEMM_TILED_FAMILY(' "$here/../src/kernels/families.def")
check "one row for each of the registry's families, in factors.cpp and the mirror" \
    grep -qx "rows $families families $families" "$tmp/mirror.txt"
check "every family's factors as factors.cpp has them" \
    sh -c "[ \$(grep -cE '^[0-9x]+ ok\$' '$tmp/mirror.txt') -eq $families ]"

# fit_plans.py SUBCOMMAND over the made-up set $tmp/NAME.csv (and any further
# arguments given): its output in $tmp/NAME.txt (printed), and the check
# that it exits 0.
run_fit() {
    cmd=$1 name=$2
    shift 2
    PYTHONPATH="$bench" python3 "$bench/fit_plans.py" "$cmd" "$tmp/$name.csv" "$@" > "$tmp/$name.txt" 2>&1
    status=$?
    cat "$tmp/$name.txt"
    check "$cmd exits 0" [ "$status" -eq 0 ]
}

# Plan times of 24 unaligned TN products (lda = k and m odd), every family
# timed with no split, made by the mirror with 128x128x16's TN factor 0.8.
PYTHONPATH="$bench" python3 - > "$tmp/tn.csv" <<'PY'
import random
import fit_plans as fp
r = random.Random(7)
print("m,n,k,family,splits,form,k_chunk,blocks,cluster_capacity,us,max_err,transa,transb")
for _ in range(24):
    m, n, k = 2 * r.randint(100, 2000) + 1, r.randint(200, 4000), 2 * r.randint(40, 1000) + 1
    for fam in fp.FAMILIES:
        t = fp.plan_time(m, n, k, True, False, fam, 1, k, False, {("128x128x16", 2): 0.8})
        print(f"{m},{n},{k},{fam},1,none,{k},0,0,{t * 1e6:.4f},0.01,T,N")
PY
run_fit unaligned tn
check "the factor used is recovered, at the TN column" \
    sh -c "grep -E '^128x128x16 +- +- +0\.800 0\.916 +- *\$' '$tmp/tn.txt' > /dev/null"
check "another family's fitted at its present value" \
    sh -c "grep -E '^256x128x16 +- +- +0\.895 0\.897 +- *\$|^256x128x16 +- +- +0\.900 0\.897 +- *\$' '$tmp/tn.txt' > /dev/null"
check "the set's pick loss reported" grep -qF "tn.csv: the model's pick loses" "$tmp/tn.txt"

# clusters: one product's three plans timed at the mirror's times, but the
# plan the planner's rule picks made 1.25 times the fastest of the others
# (its loss is then 25%); the cluster kernel's K loop 1.5 times the
# workspace kernel's at 132 blocks (one an SM, within the capacity).
PYTHONPATH="$bench" python3 - > "$tmp/clusters.csv" <<'PY'
import fit_plans as fp
m = n = k = 2048
fam = "128x128x8"
plans = [(fam, 1, k, False), (fam, 2, 1024, False), (fam, 2, 1024, True)]
t = {p: fp.plan_time(m, n, k, False, False, *p, {}) for p in plans}
unsplit, best = plans[0], min(plans, key=t.get)
pick = best if t[best] < (1.0 - fp.SPLIT_MARGIN) * t[unsplit] else unsplit
t[pick] = 1.25 * min(v for p, v in t.items() if p != pick)
print("m,n,k,family,splits,form,k_chunk,blocks,cluster_capacity,us,max_err,transa,transb,us_main")
for (f, s, c, cl), v in t.items():
    form = "none" if s == 1 else "cluster" if cl else "workspace"
    print(f"{m},{n},{k},{f},{s},{form},{c},132,{264 if cl else 0},{v * 1e6:.6f},0.01,N,N,"
          f"{150 if cl else 100}")
PY
run_fit clusters clusters
check "the pick's loss under the planner's rule" grep -qF "clusters.csv: 1 products, the pick loses 25.00%" \
    "$tmp/clusters.txt"
check "the cluster plans' error reported" grep -qE "^cluster plans: 1, log-rms error" "$tmp/clusters.txt"
check "cluster over workspace K loops at one block an SM" grep -qxF "| 1 (within 0.1) | 1 | 1.500 | 1.500 | 1.50 |" \
    "$tmp/clusters.txt"

# waves: two 32x32x8 plans without a split made 1.5 and 2 times the
# mirror's time, one of a whole wave of blocks with 4 K steps (their
# geometric mean 1.73 in that cell), one of a partial wave with 4 K steps
# made at the mirror's time (1.00), and a split plan, which is left out.
PYTHONPATH="$bench" python3 - > "$tmp/waves.csv" <<'PY'
import fit_plans as fp
rows = [(32 * 16 * fp.SM, 32, 32, 1, 1.5), (32 * 16 * fp.SM, 64, 32, 1, 2.0), (32 * 15 * fp.SM, 32, 32, 1, 1.0),
        (32 * 16 * fp.SM, 32, 64, 2, 3.0)]
print("m,n,k,family,splits,form,k_chunk,blocks,cluster_capacity,us,max_err,transa,transb")
for m, n, k, s, f in rows:
    c = k // s
    t = f * fp.plan_time(m, n, k, False, False, "32x32x8", s, c, False, {})
    print(f"{m},{n},{k},32x32x8,{s},{'none' if s == 1 else 'workspace'},{c},0,0,{t * 1e6:.6f},0.01,N,N")
PY
run_fit waves waves
check "waves: the whole wave's cell, the split plan left out" \
    grep -qxF "| 32x32x8 | a whole wave or more | 1.73 (2) | - | - | - | - |" "$tmp/waves.txt"
check "waves: the partial wave's cell" \
    grep -qxF "| 32x32x8 | less than a wave | 1.00 (1) | - | - | - | - |" "$tmp/waves.txt"

# reduction: the workspace plans of 30 products whose reduction (us -
# us_main) took the model's time at a fixed 1 us, slices at 0.9 times the
# bandwidth and 2 us per MB of C; the fit recovers the three, and the
# present factors' error is reported for both sets.
PYTHONPATH="$bench" python3 - > "$tmp/reduction.csv" <<'PY'
import random
import fit_plans as fp
r = random.Random(5)
print("m,n,k,family,splits,form,k_chunk,blocks,cluster_capacity,us,max_err,transa,transb,us_main")
for _ in range(30):
    m, n, s = r.randint(100, 4000), r.randint(100, 4000), r.randint(2, 40)
    t = fp.reduction_time(m, n, s, 1e-6, 0.9, 2e-12, fp.BW)
    print(f"{m},{n},{s * 64},128x128x16,{s},workspace,64,0,0,{100 + t * 1e6:.6f},0.01,N,N,100")
PY
run_fit reduction reduction "$tmp/reduction.csv"
check "reduction: the fixed time, slices' rate and C's time recovered" \
    grep -qE "^fitted on 30 plans: fixed 1\.000 us, slices at 0\.900 x the bandwidth, C 2\.000 us per MB" "$tmp/reduction.txt"
check "reduction: both sets' error under the present factors" \
    sh -c "grep -cE '^present +(fit|validation) +30 plans: median' '$tmp/reduction.txt' | grep -qx 2"

if [ -n "$plan_dump" ]; then
    PYTHONPATH="$bench" python3 - > "$tmp/plans.txt" <<'PY'
import math
import random
import fit_plans as fp
r = random.Random(11)
fams = list(fp.FAMILIES)
n = 0
while n < 600:
    m, nn = (int(math.exp(r.uniform(math.log(32), math.log(9000)))) for _ in range(2))
    k = int(math.exp(r.uniform(math.log(16), math.log(20000))))
    ta, tb = r.random() < 0.5, r.random() < 0.5
    fam = fams[n % len(fams)]
    bk = fp.FAMILIES[fam][2]
    splits = r.choice([1, 1, 2, 3, 4, 6, 8])
    chunk = -(-(-(-k // splits)) // bk) * bk
    if splits > 1 and -(-k // chunk) != splits:
        continue
    form = "none" if splits == 1 else r.choice(["workspace", "cluster"])
    if form == "cluster" and (fp.cluster_blocks(fam, splits) == 0 or (fam == "64x64x16" and splits > 6)):
        form = "workspace"
    t = fp.plan_time(m, nn, k, ta, tb, fam, splits, chunk, form == "cluster", {})
    print(m, nn, k, "T" if ta else "N", "T" if tb else "N", fam, splits, chunk, form, repr(t))
    n += 1
PY
    cut -d' ' -f1-9 "$tmp/plans.txt" | "$plan_dump" --costs > "$tmp/costs.txt"
    status=$?
    check "plan_dump --costs exits 0" [ "$status" -eq 0 ]
    paste -d' ' "$tmp/plans.txt" "$tmp/costs.txt" | awk '
        { mirror = $10; model = $11; d = mirror - model; if (d < 0) d = -d
          if (!(model > 0) || d > 1e-9 * model) { bad++; if (bad <= 5) print "differs:", $0 } }
        END { print (NR == 600 && bad == 0) ? "mirror ok" : "mirror differs on " bad + 0 " of " NR }' > "$tmp/parity.txt"
    cat "$tmp/parity.txt"
    check "the mirror's time of 600 plans is the tiled model's" grep -qx "mirror ok" "$tmp/parity.txt"
    # fit: plan times made by the mirror on 16 aligned NN products and 16
    # unaligned ones, every family unsplit, with 256x128x8's later blocks
    # of the vector kernels at 1 us; the fit recovers that cost (the first
    # wave and the scalar kernels at their present costs), then reports
    # the planner's pick on the set.
    PYTHONPATH="$bench" python3 - > "$tmp/fitset.csv" <<'PY'
import random
import fit_plans as fp
r = random.Random(13)
fp.VECTOR_BLOCK_WAVE["256x128x8"] = (1.0e-6, 0.0)
print("m,n,k,family,splits,form,k_chunk,blocks,cluster_capacity,us,max_err,transa,transb")
for i in range(32):
    m, n, k = 4 * r.randint(64, 2000), r.randint(256, 8000), 4 * r.randint(4, 128)
    if i % 2:
        m, k = m + 1, k + 1
    for fam in fp.FAMILIES:
        t = fp.plan_time(m, n, k, False, False, fam, 1, k, False, {})
        print(f"{m},{n},{k},{fam},1,none,{k},0,0,{t * 1e6:.6f},0.01,N,N")
PY
    PYTHONPATH="$bench" python3 "$bench/fit_plans.py" fit "$tmp/fitset.csv" "$tmp/fitset.csv" --plan-dump "$plan_dump" \
        > "$tmp/fit.txt" 2>&1
    status=$?
    cat "$tmp/fit.txt"
    check "fit exits 0" [ "$status" -eq 0 ]
    check "fit: the vector kernels' later blocks recovered" \
        grep -qE "^\| 256x128x8 \| vector \| 2\.15 / 1\.00 \| 0\.00 / 0\.00 \| 0\.0[1-9][0-9] / 0\.000 \|" "$tmp/fit.txt"
    check "fit: the scalar kernels' costs recovered" \
        grep -qF "| 256x128x8 | scalar | 9.50 / 9.50 | 0.00 / 0.00 | 0.000 / 0.000 |" "$tmp/fit.txt"
    check "fit: the pick's loss on the set" grep -qE "^fit: the pick loses [0-9.]+% \(geometric mean\)" "$tmp/fit.txt"
    # The rank-k model through --costs (FAMILY rank-k, one slice of all of
    # K, no form): a time for each line, growing with K; any split, other
    # chunk or form refused.
    printf '8192 8192 16 N N rank-k 1 16 none\n8192 8192 160 N N rank-k 1 160 none\n' |
        "$plan_dump" --costs > "$tmp/rank_k.txt"
    status=$?
    check "plan_dump --costs prices rank-k plans" [ "$status" -eq 0 ]
    check "their times grow with K" awk 'NR == 1 { a = $1 } NR == 2 { b = $1 } END { exit !(NR == 2 && a > 0 && b > a) }' \
        "$tmp/rank_k.txt"
    for bad in '2 80 none' '1 80 none' '1 160 workspace' '1 160 cluster'; do
        printf '8192 8192 160 N N rank-k %s\n' "$bad" | "$plan_dump" --costs > /dev/null 2>&1
        status=$?
        check "rank-k with SPLITS CHUNK FORM $bad refused" [ "$status" -eq 2 ]
    done
    # --model: before each given problem's plan, the models it was weighed
    # on: rank-k against the tiled plan for a C of more than 16 rows and
    # columns (pays=1 exactly where the plan is rank-k's), streaming
    # against tiled for a skinny one.
    "$plan_dump" --shape 8192 8192 32 N N --shape 4096 4096 4096 N N --shape 16 4096 4096 N N --model \
        > "$tmp/model.txt"
    status=$?
    cat "$tmp/model.txt"
    check "plan_dump --model exits 0" [ "$status" -eq 0 ]
    check "--model: rank-k and tiled times before each large C's plan, pays as planned" awk '
        /^# model rank-k / {
            pays = ($0 ~ / pays=1 /)
            ok = ($0 ~ /seconds_us=[0-9.]+ pays=[01] \| tiled [0-9x]+ split=[0-9]+.* seconds_us=[0-9.]+ memory_floor_us=[0-9.]+$/)
            next
        }
        /^# model / { skinny++; next }
        / : / { n++; if (n <= 2) good += ok && pays == ($0 ~ / : rank-k /) }
        END { exit !(n == 3 && good == 2 && skinny == 1) }' "$tmp/model.txt"
fi

if [ "$failed" -ne 0 ]; then
    echo "check-fit-plans: unexpected output (above)" >&2
    exit 1
fi
echo "check-fit-plans: OK"
