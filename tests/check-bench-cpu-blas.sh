#!/bin/sh
# bench_cpu_blas on its own, plain (linked against OpenBLAS, no tgemm, no
# GPU): its CSV (one row per timed call, every row as many fields as the
# header; with --direct the direct calls' seconds, empty columns without;
# the same with --fortran), and its refusals (--direct-gpu without
# --direct, --direct-gpu without libtgemm loaded, a --lead-in that is not
# seconds from 0 to 3600).
# One "[       OK ]" or "[  FAILED  ]" line per check (tests/run.sh counts them).
#
#   tests/check-bench-cpu-blas.sh BENCH_CPU_BLAS
set -u
bin=$1
. "$(dirname "$0")/check_lib.sh"
# fields FILE: every line has as many comma-separated fields as the header
fields() {
    awk -F, 'NR == 1 { n = NF; next } NF != n { bad = 1 } END { exit bad || NR < 2 }' "$1"
}
# column FILE NAME: the values of the named column, one a line
column() {
    awk -F, -v name="$2" 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == name) c = i; next } { print $c }' "$1"
}
# timed FILE: every row's direct_seconds above 0
timed() {
    [ "$(column "$1" direct_seconds | awk '!($1 > 0) { bad = 1 } END { print bad + 0 }')" = 0 ]
}
run() {  # CSV, then options: rc of bench_cpu_blas
    csv=$1
    shift
    env -u LD_PRELOAD "$bin" --max 96 --reps 2 --warmup 1 "$@" --csv "$csv" > "$tmp/out.txt" 2>&1
}

run "$tmp/plain.csv"
check "plain: runs, CSV rows as wide as the header" fields "$tmp/plain.csv"
check "plain: squares 64 and 96, two timed calls each" [ "$(column "$tmp/plain.csv" m | tr '\n' ' ')" = "64 64 96 96 " ]
check "plain: the CPU BLAS's library name" [ "$(column "$tmp/plain.csv" library | sort -u)" = "cpu-blas" ]
check "plain: no direct calls, empty columns" \
    [ "$(column "$tmp/plain.csv" direct_seconds | sort -u)$(column "$tmp/plain.csv" direct_gpu_seconds | sort -u)" = "" ]

run "$tmp/direct.csv" --direct
check "--direct: CSV rows as wide as the header" fields "$tmp/direct.csv"
check "--direct: every direct call timed (seconds > 0)" timed "$tmp/direct.csv"
check "--direct: no GPU column" [ "$(column "$tmp/direct.csv" direct_gpu_seconds | sort -u)" = "" ]

run "$tmp/fortran.csv" --direct --fortran
check "--fortran --direct: sgemm_ rows as wide as the header" fields "$tmp/fortran.csv"
check "--fortran --direct: every direct call timed" timed "$tmp/fortran.csv"

run "$tmp/x.csv" --direct-gpu
check "--direct-gpu without --direct: usage, status 2" [ $? -eq 2 ]
run "$tmp/x.csv" --direct --direct-gpu
rc=$?
check "--direct-gpu without libtgemm: status 1, says why" \
    sh -c "[ $rc -eq 1 ] && grep -q 'libtgemm is not loaded' '$tmp/out.txt'"
for bad in inf -1 3601 abc ""; do
    run "$tmp/x.csv" --lead-in "$bad"
    check "--lead-in '$bad' refused (status 2)" [ $? -eq 2 ]
done
run "$tmp/lead.csv" --lead-in 0.05
check "--lead-in 0.05: runs" fields "$tmp/lead.csv"
exit "$failed"
