#!/bin/sh
# Reads the report of ScaLAPACK's PBLAS Level 3 tester (spb3tst) and says
# whether it passed: the tester exits 0 whatever it finds, and reports a
# grid too large for the processes it has as skipped, so its exit status
# and a missing FAILED say nothing.
#
#   check_pblas.sh REPORT GEMM_TESTS
#
# Passes (exit 0, one line of counts) only if the report ran to its end;
# its summary table lists PSGEMM; of the routines the input tests (those
# with tests in the table), none failed a test, each passed at least one,
# and each one's total is its passed plus failed plus skipped; PSGEMM
# passed exactly GEMM_TESTS tests (the input's tests times the grids that
# fit in the processes) with as many "Computational check: PSGEMM ...
# PASSED" lines; and no line of the report says FAILED or ERROR other
# than the table's header. Else exit 1, with the reason.
set -eu
report=$1 want=$2
fail() { echo "check_pblas: $report: $*" >&2; exit 1; }
[ -s "$report" ] || fail "no report"
grep -q '^ *End of Tests\.' "$report" || fail "the tests did not run to their end: $(tail -n 5 "$report")"
table=$(grep -E '^ *\| +P[SDCZ][A-Z0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ *$' "$report" || true)
[ -n "$table" ] || fail "no summary table"
table=$(echo "$table" | awk '$3 > 0')
[ -n "$table" ] || fail "no routine was tested"
row() { echo "$table" | awk "$1"; }
bad=$(row '$5 != 0')
[ -z "$bad" ] || fail "routines failed (| ROUTINE TOTAL PASSED FAILED SKIPPED): $bad"
bad=$(row '$4 == 0')
[ -z "$bad" ] || fail "routines passed nothing (| ROUTINE TOTAL PASSED FAILED SKIPPED): $bad"
bad=$(row '$3 != $4 + $5 + $6')
[ -z "$bad" ] || fail "totals do not add up (| ROUTINE TOTAL PASSED FAILED SKIPPED): $bad"
gemm=$(row '$2 == "PSGEMM" { print $4 }')
[ -n "$gemm" ] || fail "PSGEMM was not tested"
[ "$gemm" -eq "$want" ] || fail "PSGEMM passed $gemm tests, want $want: $(echo "$table" | grep PSGEMM)"
checks=$(grep -c 'Computational check: PSGEMM  *PASSED' "$report" || true)
[ "$checks" -eq "$want" ] || fail "$checks PSGEMM computational checks passed, want $want"
others=$(grep -n -E 'FAILED|ERROR' "$report" | grep -v -E 'SUBROUTINE +TOTAL TESTS +PASSED +FAILED +SKIPPED' || true)
[ -z "$others" ] || fail "$(echo "$others" | head -n 5)"
echo "check_pblas: $(echo "$table" | awk '{ t += $3; p += $4; s += $6; n++ } END { printf "%d routines, %d tests: %d passed, %d skipped", n, t, p, s }'); PSGEMM $gemm passed"
