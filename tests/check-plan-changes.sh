#!/bin/sh
# bench/plan_changes.py, no GPU: two plan dumps of the same 3,000 problems,
# the library's planner as it is and with TGEMM_STREAMK=never (so that the
# stream-K plans move and nothing else): the count of moved plans equals
# diff's, the moves are classed by first kernel (stream-k to a tiled
# family among them), the shapes file holds at least the sample asked for
# and as many as it says, each line one of the moved problems with aligned
# operands in bench_random --shapes form, and dumps of different problems
# are refused.
# One "[       OK ]" or "[  FAILED  ]" line per check (tests/run.sh counts them).
set -u
plan_dump=$1
here=$(dirname "$0")
. "$here/check_lib.sh"
tool="$here/../bench/plan_changes.py"

env -u TGEMM_KERNEL -u TGEMM_STREAMK -u TGEMM_PACK -u TGEMM_TMA -u TGEMM_CLUSTERS \
    "$plan_dump" --count 3000 --seed 3 > "$tmp/before.txt"
env -u TGEMM_KERNEL -u TGEMM_PACK -u TGEMM_TMA -u TGEMM_CLUSTERS TGEMM_STREAMK=never \
    "$plan_dump" --count 3000 --seed 3 > "$tmp/after.txt"
python3 "$tool" "$tmp/before.txt" "$tmp/after.txt" --sample 12 --seed 5 --out "$tmp/shapes.txt" > "$tmp/out.txt" 2>&1
status=$?
cat "$tmp/out.txt"
check "exits 0" [ "$status" -eq 0 ]
moved=$(diff "$tmp/before.txt" "$tmp/after.txt" | grep -c '^>')
check "the moved count is diff's ($moved)" grep -q "^moved: $moved of 3000 plans" "$tmp/out.txt"
check "some plans moved" [ "$moved" -gt 12 ]
check "moves classed by first kernel" grep -qE '^ +[0-9]+  stream-k -> 256x128x(8|16)$' "$tmp/out.txt"
lines=$(grep -vc '^#' "$tmp/shapes.txt")
check "at least the sample asked for (12), as many as it says ($lines)" \
    sh -c "[ $lines -ge 12 ] && grep -q '^wrote $lines problems to ' '$tmp/out.txt'"
python3 - "$tmp/before.txt" "$tmp/after.txt" "$tmp/shapes.txt" > "$tmp/lines.txt" <<'PY'
import sys
before = [l.split(" : ", 1) for l in open(sys.argv[1]) if " : " in l and not l.startswith("#")]
after = [l.split(" : ", 1) for l in open(sys.argv[2]) if " : " in l and not l.startswith("#")]
moved = {}
for (lhs, old), (_, new) in zip(before, after):
    if old != new and " al=aaa " in lhs:
        f = lhs.split()
        ld = f[4][3:].split(",")
        moved[(f[0], f[1], f[2], f[3][0], f[3][1], ld[0], ld[1], ld[2])] = (old.strip(), new.strip())
bad = 0
for line in open(sys.argv[3]):
    if line.startswith("#"):
        continue
    fields, comment = line.split("#", 1)
    f = fields.split()
    key = tuple(f[:8])
    if len(f) != 10 or key not in moved or comment.strip() != f"{moved[key][0]} -> {moved[key][1]}":
        bad += 1
        print("not a moved aligned problem:", line.strip())
print("lines ok" if bad == 0 else f"{bad} bad lines")
PY
cat "$tmp/lines.txt"
check "each line a moved problem with aligned operands, its plans as comment" grep -qx "lines ok" "$tmp/lines.txt"
env -u TGEMM_KERNEL -u TGEMM_STREAMK -u TGEMM_PACK -u TGEMM_TMA -u TGEMM_CLUSTERS \
    "$plan_dump" --count 3000 --seed 4 > "$tmp/other.txt"
python3 "$tool" "$tmp/before.txt" "$tmp/other.txt" > "$tmp/refused.txt" 2>&1
status=$?
check "dumps of different problems refused (exit 2)" [ "$status" -eq 2 ]
check "with a message saying so" grep -q "not of the same problems" "$tmp/refused.txt"

if [ "$failed" -ne 0 ]; then
    echo "check-plan-changes: unexpected output (above)" >&2
    exit 1
fi
echo "check-plan-changes: OK"
