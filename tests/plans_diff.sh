#!/bin/sh
# The plans of tests/data/plans-*.txt.xz against those the dispatcher makes
# now (make test-plans). The file's first line is the plan_dump command line
# that made it (seed, count, device); the dump is run again with it and the
# two compared line by line.
#
#   tests/plans_diff.sh PLAN_DUMP BASELINE.txt.xz [WORKDIR]
set -u
dump=$1 baseline=$2 work=${3:-${TMPDIR:-/tmp}}
name=$(basename "$baseline" .txt.xz)
expected=$work/$name.expected actual=$work/$name.actual
mkdir -p "$work"
xz -dc "$baseline" > "$expected" || { echo "[  FAILED  ] $name: cannot read $baseline"; exit 1; }
args=$(head -n 1 "$expected" | sed -n 's/^# plan_dump //p')
[ -n "$args" ] || { echo "[  FAILED  ] $name: $baseline has no '# plan_dump ARGS' first line"; exit 1; }
# shellcheck disable=SC2086 # args are plan_dump's options, split on purpose
"$dump" $args > "$actual" || { echo "[  FAILED  ] $name: $dump $args failed"; exit 1; }
if cmp -s "$expected" "$actual"; then
    echo "[       OK ] $name: $(($(wc -l < "$actual") - 1)) plans unchanged ($args)"
    exit 0
fi
changed=$(diff "$expected" "$actual" | grep -c '^>')
echo "[  FAILED  ] $name: $changed plans differ ($args); the first:"
diff -u "$expected" "$actual" | sed -n '3,23p'
echo "A change that means to change plans rewrites the file: make plans-baseline"
exit 1
