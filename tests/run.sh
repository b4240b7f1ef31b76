#!/bin/sh
# Runs one test program for make test and records what it did, for the
# summary that tests/summary.sh prints at the end.
#
#   tests/run.sh RESULTS NAME -- COMMAND [ARG...]
#
# COMMAND's output (stdout and stderr together) is shown as it comes and
# kept in RESULTS/NAME.XXXXXX.log; RESULTS/NAME.XXXXXX.result records the
# command, the TGEMM_* settings it ran under, its exit status and its
# counts. NAME groups runs of one program in the summary. The counts are
# read from the output:
#  - a CMocka program (it prints "[==========] Running N test(s)."): its
#    cases that passed and skipped; those that started but did neither
#    (failures, errors, a crash part-way) count as failed;
#  - any other program: its lines "[       OK ] WHAT", "[  SKIPPED ] WHAT"
#    and "[  FAILED  ] WHAT", one per check, if it prints any; else it is
#    one test, passed when it exits 0. A script that runs CMocka programs
#    must keep their output out of its own.
# Either way, an exit status other than 0 with no failure counted counts as
# one failure. A line "[ SKIPPING ] WHY" gives the reason for the program's
# skips; the program should print it once, not once per case
# (tests/common.c's gpu_available() does).
# Exits with COMMAND's status, or 1 if it exited 0 with failures counted.
set -u
results=$1 name=$2
shift 2
[ "${1:-}" = -- ] || { echo "usage: tests/run.sh RESULTS NAME -- COMMAND [ARG...]" >&2; exit 2; }
shift
command=$*
mkdir -p "$results"
base=$(mktemp "$results/$name.XXXXXX") || exit 2
start=$(date +%s.%N)

{ "$@" 2>&1; echo $? > "$base.status"; } | tee "$base.log"
status=$(cat "$base.status")
rm -f "$base.status"

# passed failed skipped, then the distinct skip reasons, one a line.
counts=$(awk -v status="$status" '
    # CMocka prints a case that skips or fails once as it runs and once more
    # in the list after its group; a process that dies leaves its group
    # unlisted. The lists give their lengths, so the cases are the lines
    # less the lists, in whatever order stdout and stderr arrived.
    /^\[==========\] Running [0-9]+ test\(s\)\./ { cmocka = 1; started += $3 }
    /^\[       OK \] / { passed++ }
    /^\[  SKIPPED \] / { if ($5 == "test(s)," && $6 == "listed") skip_listed += $4; else skip_lines++ }
    /^\[  FAILED  \] / { if ($5 == "test(s)," && $6 == "listed") fail_listed += $4; else fail_lines++ }
    /^\[ SKIPPING \] / {
        why = $0
        sub(/^\[ SKIPPING \] /, "", why)
        if (!(why in seen)) { seen[why] = 1; reasons[++nr] = why }
    }
    END {
        skipped = skip_lines - skip_listed
        failed = cmocka ? started - passed - skipped : fail_lines - fail_listed
        if (!cmocka && passed + skipped + failed == 0)
            passed = status == 0
        if (status != 0 && failed == 0)
            failed = 1
        print passed + 0, failed + 0, skipped + 0
        for (i = 1; i <= nr; i++)
            print reasons[i]
    }' "$base.log")
set -- $(echo "$counts" | head -n 1)
passed=$1 failed=$2 skipped=$3
settings=$(env | grep -E '^(TGEMM_|CUDA_VISIBLE_DEVICES=|LD_PRELOAD=)' | sort | tr '\n' ' ' | sed 's/ $//')
{
    echo "name=$name"
    echo "start=$start"
    echo "command=$command"
    echo "settings=$settings"
    echo "status=$status"
    echo "passed=$passed"
    echo "failed=$failed"
    echo "skipped=$skipped"
    echo "log=$base.log"
    echo "$counts" | tail -n +2 | sed -n 's/^./reason=&/p'
} > "$base.result"
rm -f "$base"
echo "== $name: $passed passed, $failed failed, $skipped skipped (exit status $status)"
[ "$status" -ne 0 ] && exit "$status"
[ "$failed" -eq 0 ]
