#!/bin/sh
# bench_plans: its refusals (an --l2 mode other than hot or clean, an --op
# other than NN, NT, TN or TT, shapes not in threes), and with a GPU (the
# has_gpu probe; GPU cases skip only where it says none, as the suite's)
# one family's plans of a small product in each L2 mode: every row as wide
# as the header, its l2 column the mode asked for, a time above 0 and the
# output inside its bound (max_err at most 1).
# One "[       OK ]" or "[  FAILED  ]" line per check (tests/run.sh counts them).
#
#   tests/check-bench-plans.sh BENCH_PLANS HAS_GPU
set -u
bin=$1 has_gpu=$2
. "$(dirname "$0")/check_lib.sh"
refused() {  # options...: exit status 2 and a message naming the problem
    "$bin" "$@" > "$tmp/out.txt" 2>&1
    [ $? -eq 2 ] && grep -q -e "^bench_plans: --l2 takes" -e "^bench_plans: --op takes" -e "^usage: bench_plans" "$tmp/out.txt"
}
check "--l2 other than hot or clean refused" refused --l2 warm 64 64 16
check "--op other than NN, NT, TN, TT refused" refused --op XN 64 64 16
check "shapes not in threes refused" refused --l2 clean 64 64
gpu=$("$has_gpu") || { echo "[  FAILED  ] the GPU cannot be used, and this is no machine without one (above)"; exit 1; }
if [ "$gpu" = 0 ]; then  # has_gpu printed the reason
    echo "[  SKIPPED ] bench_plans --l2 hot and clean"
else
    for mode in hot clean; do
        "$bin" --family 64x64x8 --l2 $mode 200 136 64 > "$tmp/$mode.csv" 2> "$tmp/$mode.err"
        rc=$?
        check "--l2 $mode: exits 0" [ "$rc" -eq 0 ]
        check "--l2 $mode: rows as wide as the header, the l2 column $mode, times above 0, inside the bound" \
            awk -F, -v mode=$mode 'NR == 1 { n = NF; for (i = 1; i <= NF; ++i) c[$i] = i; next }
                NF != n || $c["l2"] != mode || !($c["us"] > 0) || !($c["max_err"] <= 1) { bad = 1 }
                END { exit bad || NR < 3 }' "$tmp/$mode.csv"
    done
fi
exit $failed
