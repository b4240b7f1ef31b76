#!/bin/sh
# make test-harness, part two: make test's counting (tests/run.sh) and
# summary (tests/summary.sh) on runs whose results are known: the CMocka
# fixture passing, failing and aborting part-way, scripts with and without
# lines per check, commands that fail or pass silently; then the summary
# of them all, and of passing runs only. The runs' own output is kept out
# of this script's, which tests/run.sh counts in turn.
# usage: check-run.sh FIXTURE
set -eu
fixture=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "check-run: $*" >&2; exit 1; }
# Output of the runs, indented so that tests/run.sh does not count its
# lines as this script's.
show() { echo; sed 's/^/    | /' "$1"; }

# expect NAME STATUS PASSED FAILED SKIPPED REASONS -- COMMAND...: runs
# COMMAND through tests/run.sh as NAME; its exit status must be 0 or not
# as STATUS (0 or 1) says, and its record must hold the counts and the
# number of distinct skip reasons.
expect() {
    name=$1 want_status=$2 want="passed=$3 failed=$4 skipped=$5 reasons=$6"
    shift 7
    rc=0
    sh tests/run.sh "$dir/$name" "$name" -- "$@" > "$dir/$name.out" 2>&1 || rc=1
    [ "$rc" = "$want_status" ] || fail "$name: tests/run.sh exited $rc, want $want_status: $(show "$dir/$name.out")"
    result=$(ls "$dir/$name"/*.result)
    got="$(grep -E '^(passed|failed|skipped)=' "$result" | tr '\n' ' ')reasons=$(grep -c '^reason=' "$result" || true)"
    [ "$got" = "$want" ] || fail "$name: got $got, want $want"
    mkdir -p "$dir/all"
    cp "$result" "$dir/all/"
    echo "[       OK ] counts of $name: $want"
}
expect cmocka-pass 0 2 0 1 1 -- "$fixture"
expect cmocka-fail 1 2 1 1 1 -- "$fixture" fail
expect cmocka-crash 1 2 1 1 1 -- "$fixture" crash
expect script-lines 0 2 0 1 1 -- sh -c 'echo "[       OK ] a"; echo "[ SKIPPING ] why"; echo "[  SKIPPED ] b";
                                         echo "[ SKIPPING ] why"; echo "[       OK ] c"'
expect script-exit 1 1 1 0 0 -- sh -c 'echo "[       OK ] a"; exit 3'
expect silent-pass 0 1 0 0 0 -- true
expect silent-fail 1 0 1 0 0 -- false
grep -q '^reason=the fixture'"'"'s reason$' "$dir/cmocka-pass"/*.result || fail "cmocka-pass: reason not recorded"
TGEMM_SOMETHING=1 sh tests/run.sh "$dir/all" settings -- true > /dev/null
grep -qE '^settings=(.* )?TGEMM_SOMETHING=1( |$)' "$dir/all"/settings.*.result || fail "settings: TGEMM_SOMETHING=1 not recorded"
echo "[       OK ] settings recorded"

# Two more runs of one program, skipping for the same reason: the summary
# names that reason once for it.
sh tests/run.sh "$dir/all" fixture -- "$fixture" > /dev/null
sh tests/run.sh "$dir/all" fixture -- "$fixture" > /dev/null
rc=0
sh tests/summary.sh "$dir/all" 0 > "$dir/summary.out" || rc=$?
[ "$rc" = 1 ] || fail "summary of failed runs: exit status $rc, want 1: $(show "$dir/summary.out")"
total='make test: 10 runs of 9 programs, 15 tests passed, 4 failed, 6 skipped'
grep -qx "$total" "$dir/summary.out" || fail "summary: no line '$total': $(show "$dir/summary.out")"
grep -qx 'make test: FAILED' "$dir/summary.out" || fail "summary: no FAILED line: $(show "$dir/summary.out")"
[ "$(sed -n '/^failed runs:/,/^make test:/p' "$dir/summary.out" | grep -c '^  ')" = 4 ] \
    || fail "summary: want the 4 failed runs listed: $(show "$dir/summary.out")"
grep -qE '^fixture +2 +4 +0 +2$' "$dir/summary.out" \
    || fail "summary: no row 'fixture 2 4 0 2': $(show "$dir/summary.out")"
[ "$(sed -n '/^fixture /,/^[^ ]/p' "$dir/summary.out" | grep -c "skipped: the fixture's reason")" = 1 ] \
    || fail "summary: the fixture's reason must be given once: $(show "$dir/summary.out")"
echo "[       OK ] summary of failed runs"

mkdir "$dir/good"
cp "$dir/all"/fixture.*.result "$dir/all"/silent-pass.*.result "$dir/good/"
sh tests/summary.sh "$dir/good" 0 > "$dir/good.out" || fail "summary of passing runs failed: $(show "$dir/good.out")"
grep -qx 'make test: all passed (some skipped, see above)' "$dir/good.out" || fail "summary: $(show "$dir/good.out")"
echo "[       OK ] summary of passing runs"
rc=0
sh tests/summary.sh "$dir/good" 2 > "$dir/good.out" || rc=$?
[ "$rc" = 1 ] && grep -q 'FAILED (a step outside' "$dir/good.out" \
    || fail "summary after a failed step: exit status $rc: $(show "$dir/good.out")"
echo "[       OK ] summary after a step outside the runs failed"
rc=0
sh tests/summary.sh "$dir/none" 0 > "$dir/none.out" || rc=$?
[ "$rc" = 1 ] || fail "summary of no runs: exit status $rc, want 1"
echo "[       OK ] summary of no runs fails"
