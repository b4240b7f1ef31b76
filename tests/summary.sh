#!/bin/sh
# The summary at the end of make test: for each program (the NAME given to
# tests/run.sh) its runs and their tests passed, failed and skipped, with
# the reasons for its skips, each once; then the failed runs with their
# settings and logs, and the totals.
#
#   tests/summary.sh RESULTS [STATUS]
#
# STATUS is the exit status of the make that ran the tests: when it is not
# 0 but no run recorded a failure, a step outside the recorded programs
# failed (a build, an install), and the summary says so.
# Exits 1 if anything failed or no run was recorded, else 0.
set -u
results=$1 status=${2:-0}

echo "== make test: summary"
[ -d "$results" ] && ls "$results"/*.result > /dev/null 2>&1 || {
    echo "no test program was run (nothing in $results)"
    exit 1
}
# One line per run, in the order they started: start, then the fields.
for f in "$results"/*.result; do
    awk -F= '{ k = $1; sub(/^[^=]*=/, ""); v[k] = (k == "reason" && v[k] != "") ? v[k] "\036" $0 : $0 }
             END { printf "%s\037%s\037%s\037%s\037%s\037%s\037%s\037%s\037%s\037%s\n", v["start"], v["name"],
                          v["passed"], v["failed"], v["skipped"], v["status"], v["command"], v["settings"],
                          v["log"], v["reason"] }' "$f"
done | sort -t "$(printf '\037')" -k1,1n | awk -F '\037' -v status="$status" '
    {
        name = $2
        if (!(name in runs)) order[++n] = name
        runs[name]++
        passed[name] += $3; failed[name] += $4; skipped[name] += $5
        tp += $3; tf += $4; ts += $5; tr++
        if ($4 > 0 || $6 != 0)
            bad[++nb] = sprintf("  %s: %s%s: exit status %s, %d failed; log %s", name,
                                $8 != "" ? $8 " " : "", $7, $6, $4, $9)
        nrs = split($10, rs, "\036")
        for (i = 1; i <= nrs; i++)
            if (rs[i] != "" && !((name, rs[i]) in seen)) {
                seen[name, rs[i]] = 1
                reasons[name] = reasons[name] sprintf("      skipped: %s\n", rs[i])
            }
    }
    END {
        printf "%-22s %5s %8s %7s %8s\n", "program", "runs", "passed", "failed", "skipped"
        for (i = 1; i <= n; i++) {
            k = order[i]
            printf "%-22s %5d %8d %7d %8d\n", k, runs[k], passed[k], failed[k], skipped[k]
            if (skipped[k] > 0)
                printf "%s", reasons[k] != "" ? reasons[k] : "      skipped: (the program gave no reason)\n"
        }
        if (nb > 0) {
            print "failed runs:"
            for (i = 1; i <= nb; i++) print bad[i]
        }
        printf "make test: %d runs of %d programs, %d tests passed, %d failed, %d skipped\n", tr, n, tp, tf, ts
        if (tf > 0 || nb > 0) { print "make test: FAILED"; exit 1 }
        if (status != 0) { print "make test: FAILED (a step outside the programs above failed; see the output above)"; exit 1 }
        print "make test: all passed" (ts > 0 ? " (some skipped, see above)" : "")
    }'
