#!/bin/sh
# bench/random_report.py on two small made-up seeds of bench_random output
# and a plans log, no GPU: the ratio is the faster cuBLAS mode over tgemm
# and a problem without cuBLAS times is left out; geometric mean, 5th
# percentile (linear between ranks), median and minimum per seed and
# pooled; the ordinary-product filter (m, n > 16 and K > 64); the
# memory-bound problems with a floor of at least 10 us, against 1.3x that
# floor and against cuBLAS; the worst problems in order with their plan
# lines, and not those of another shape; a failed check listed; a
# floor_us that disagrees with the shape warned about; --md writing what
# is printed; the plots skipped with a message without matplotlib, and
# written with it where it is installed. A seed of --math-compare: the
# fp32-tc math against strict per condition, where it ran, the problems
# it slowed by more than 2%, and a result of the mode outside its bound
# counted as a failed check.
# One "[       OK ]" or "[  FAILED  ]" line per check (tests/run.sh counts them).
set -u
here=$(dirname "$0")
report="$here/../bench/random_report.py"
. "$(dirname "$0")/check_lib.sh"
header=seed,index,m,n,k,ta,tb,lda,ldb,ldc,alpha,beta,ab_class,flops,floor_us,membound,tgemm_hot_us,cublas_def_hot_us,cublas_ped_hot_us,ratio_hot,tgemm_cold_us,cublas_def_cold_us,cublas_ped_cold_us,ratio_cold,max_err_over_bound_tgemm,max_err_over_bound_cublas,pad_ok,timing,cold,reps
# Seed 7, hot ratios 2, 1, 4, 1.5 and cold 0.5, 1, 2, 0.8; #2 has K 64: neither
# ordinary nor memory-bound; #3 is memory-bound
# with floor 44.533 us (beta 1: C read and written) and runs in 50 us cold.
cat > "$tmp/random_7.csv" <<EOF
$header
7,0,100,100,100,N,N,100,100,100,1,0,0,2e+06,0.042,0,10,20,40,2,10,5,8,0.5,0.1,0.1,1,wall,flush,9
7,1,200,300,400,N,T,200,300,200,-1,1,1,4.8e+07,0.717,0,10,10,12,1,10,10,10,1,0.1,0.1,1,wall,flush,9
7,2,1000,1000,64,T,N,64,1000,1000,1,0,0,1.28e+08,1.913,0,10,40,50,4,10,20,20,2,0.1,0.1,1,wall,rotate20,9
7,3,4000,4000,8,N,N,4000,8,4000,-1,1,1,2.56e+08,44.533,1,30,45,60,1.5,50,40,60,0.8,0.1,0.1,1,event,rotate3,9
EOF
# Seed 8: hot 1, 0.5, 2 and n/a (#3, no cuBLAS times), cold 1.25, 1, 0.5;
# #0 is memory-bound, floor 22.311 us, 40 us cold; #2's floor_us is wrong;
# #3 is memory-bound with a floor of 1.433 us, and failed its check; the
# plans log has another shape for it.
cat > "$tmp/random_8.csv" <<EOF
$header
8,0,4000,4000,8,N,N,4000,8,4000,1,0,0,2.56e+08,22.311,1,20,20,30,1,40,50,80,1.25,0.1,0.1,1,event,rotate5,9
8,1,1024,1024,1024,N,T,1024,1024,1024,1,0,0,2.147e+09,32.100,0,100,50,60,0.5,100,100,100,1,0.2,0.3,1,event,rotate2,9
8,2,4,4,4,T,T,4,4,4,1,0,0,128,5.000,1,2,4,4,2,4,4,2,0.5,0.1,0.1,1,wall,flush+fresh200,9
8,3,1000,1000,16,N,N,1000,16,1000,1,0,0,3.2e+07,1.433,1,5,n/a,n/a,n/a,5,n/a,n/a,n/a,2.5,n/a,0,wall,flush,9
EOF
cat > "$tmp/plans_8.log" <<'EOF'
== seed 8 count 4
== shape 0 m=4000 n=4000 k=8 NN lda=4000 ldb=8 ldc=4000 alpha=1 beta=0
tgemm: device 0: 132 SMs; blocks resident at once in clusters of 2, 3, ...:
tgemm: device plan m=4000 n=4000 k=8 NN tiled 128x128x8 split-k=1 (none) k-chunk=8
== shape 1 m=1024 n=1024 k=1024 NT lda=1024 ldb=1024 ldc=1024 alpha=1 beta=0
tgemm: device plan m=1024 n=1024 k=1024: op(A) packed by columns, ld=1024
tgemm: device plan m=1024 n=1024 k=1024 NT tiled 128x128x16 split-k=2 (cluster) k-chunk=512
== shape 2 m=4 n=4 k=4 TT lda=4 ldb=4 ldc=4 alpha=1 beta=0
tgemm: device plan m=4 n=4 k=4 TT tiled 32x32x8 split-k=1 (none) k-chunk=4
== shape 3 m=999 n=1000 k=16 NN lda=1000 ldb=16 ldc=1000 alpha=1 beta=0
tgemm: device plan m=999 n=1000 k=16 NN tiled 64x64x8 split-k=1 (none) k-chunk=16
EOF
# Seed 7's plans for #1 only: peeled, then a stream-K piece first.
cat > "$tmp/plans_7.log" <<'EOF'
== seed 7 count 4
== shape 1 m=200 n=300 k=400 NT lda=200 ldb=300 ldc=200 alpha=-1 beta=1
tgemm: device plan m=200 n=300 k=400: peeled 8 rows, 0 columns
tgemm: device plan m=192 n=300 k=400 NT tiled 128x128x16 stream-k: 2 tiles whole, 4 shared over 132 blocks (1 K steps each)
tgemm: device plan m=8 n=300 k=400 NT streaming rows s=8 groups=1 split-k=1 (none) k-chunk=400
EOF
# Seed 9, --math-compare: strict / fp32-tc hot 2, 0.9901, 0.9524 and cold
# 1.6667, 1, 1; the mode ran on #0 only; #2 is slower than strict by more
# than 2% hot; #1's fp32-tc result is outside its bound. Strict again:
# #1 slower than strict by more than 2% hot, #2 cold, #0 neither.
cat > "$tmp/random_9.csv" <<EOF
$header,tc_hot_us,tc_cold_us,tc_speedup_hot,tc_speedup_cold,tc_ran,max_err_over_bound_tc,again_hot_us,again_cold_us,again_speedup_hot,again_speedup_cold
9,0,5000,5000,5000,N,N,5000,5000,5000,1,0,0,2.5e+11,3736.921,0,100,110,120,1.1,100,110,120,1.1,0.2,0.2,1,event,rotate2,9,50,60,2.0000,1.6667,1,0.3,100,100,1.0000,1.0000
9,1,100,100,100,N,N,100,100,100,1,0,0,2e+06,0.042,0,10,20,40,2,10,20,40,2,0.1,0.1,1,wall,flush,9,10.1,10,0.9901,1.0000,0,1.5,10.5,10,0.9524,1.0000
9,2,3000,3000,3000,N,N,3000,3000,3000,1,0,0,5.4e+10,807.175,0,40,40,40,1,40,40,40,1,0.1,0.1,1,event,rotate3,9,42,40,0.9524,1.0000,0,0.1,40,41,1.0000,0.9756
EOF
# Seed 11, --math-compare with the round-by-round columns: fp32-tc's
# interval above 1/0.98 on #0 hot only (#2 cold's lower end 1.0202 is just
# below it); #1 has no interval (too few rounds); strict again's above on
# #2 hot (#0 hot's median and upper end above, its lower end below).
paired_cols=tc_paired_hot,tc_paired_hot_lo,tc_paired_hot_hi,tc_paired_cold,tc_paired_cold_lo,tc_paired_cold_hi
paired_cols=$paired_cols,again_paired_hot,again_paired_hot_lo,again_paired_hot_hi,again_paired_cold,again_paired_cold_lo
cat > "$tmp/random_11.csv" <<EOF
$(head -1 "$tmp/random_9.csv"),$paired_cols,again_paired_cold_hi
$(sed -n 2p "$tmp/random_9.csv" | sed 's/^9,/11,/'),1.0300,1.0250,1.0400,1.0100,0.9900,1.0300,1.0300,1.0100,1.0400,1.0000,0.9950,1.0050
$(sed -n 3p "$tmp/random_9.csv" | sed 's/^9,/11,/'),1.0500,n/a,n/a,1.0000,n/a,n/a,1.0000,n/a,n/a,1.0000,n/a,n/a
$(sed -n 4p "$tmp/random_9.csv" | sed 's/^9,/11,/'),1.0000,0.9900,1.0100,1.0300,1.0202,1.0400,1.0350,1.0300,1.0400,1.0000,0.9900,1.0100
EOF
# The same without the strict-again columns (files from before them).
cut -d, -f1-36 "$tmp/random_9.csv" > "$tmp/random_10.csv"
# A matplotlib that cannot be imported, put first on the path.
mkdir -p "$tmp/nompl/matplotlib"
echo 'raise ImportError("no matplotlib here")' > "$tmp/nompl/matplotlib/__init__.py"

PYTHONPATH="$tmp/nompl" python3 "$report" --plans "$tmp/plans_8.log" --plans "$tmp/plans_7.log" \
    --md "$tmp/report.md" --out "$tmp" \
    "$tmp/random_7.csv" "$tmp/random_8.csv" > "$tmp/out.txt" 2> "$tmp/err.txt"
status=$?
cat "$tmp/out.txt" "$tmp/err.txt"

has() { grep -qxF -- "$1" "$tmp/out.txt"; }

check "exits 0" [ "$status" -eq 0 ]
# Pooled hot: 0.5 1 1 1.5 2 2 4: geomean 12^(1/7), p5 at rank 0.3, median 1.5.
check "all seeds, all problems, hot" has "| all seeds | all | hot | 7 | 1.426 | 0.650 | 1.500 | 0.500 |"
# Pooled cold: 0.5 0.5 0.8 1 1 1.25 2: geomean 0.5^(1/7).
check "all seeds, all problems, cold" has "| all seeds | all | cold | 7 | 0.906 | 0.500 | 1.000 | 0.500 |"
# Seed 7 hot: 1 1.5 2 4: geomean 12^(1/4), p5 at rank 0.15, median 1.75.
check "seed 7, hot" has "| 7 | all | hot | 4 | 1.861 | 1.075 | 1.750 | 1.000 |"
check "seed 8, hot: the problem without cuBLAS left out" has "| 8 | all | hot | 3 | 1.000 | 0.550 | 1.000 | 0.500 |"
# Ordinary: 7#0, 7#1, 8#1 (7#2 has K 64, 7#3 and 8#3 K 8 and 16).
check "ordinary products, hot" has "| all seeds | ordinary | hot | 3 | 1.000 | 0.550 | 1.000 | 0.500 |"
check "ordinary products, cold" has "| all seeds | ordinary | cold | 3 | 0.794 | 0.550 | 1.000 | 0.500 |"
# Memory-bound with floor >= 10 us: 7#3 (44.5 us; 50 cold, within 1.3x;
# slower than cuBLAS cold) and 8#0 (22.3 us; 40 cold, not within); not 8#3.
check "memory-bound against the floor, seed 7" has "| 7 | 1 | 1 | 1 | 0 |"
check "memory-bound against the floor, pooled" has "| all seeds | 2 | 1 | 1 | 0 |"
check "targets: all, geomean, hot" has "| all: geomean | hot | >= 1.10 | 1.426 | yes |"
check "targets: ordinary, p5, cold" has "| ordinary: p5 | cold | >= 0.93 | 0.550 | no |"
check "checks: the failed problem counted" grep -qF "Checks: 7 of 8 tgemm results within the FP32 bound" "$tmp/out.txt"
check "checks: the failed problem listed" grep -qF "FAILED: seed 8 problem 3 (1000 x 1000 x 16 NN): error / bound 2.5, padding changed" "$tmp/out.txt"
# Worst by the smaller ratio, ties by seed and index: 7#0, 8#1, 8#2 (0.5), 7#3 (0.8).
worst=$(grep -E '^\| [78] \| [0-9]+ \| [0-9]+ \| [0-9]+ \| [0-9]+ \| (NN|NT|TN|TT) \|' "$tmp/out.txt" | cut -d'|' -f2,3 | tr -d ' ' | tr '\n' ' ')
check "worst problems in order" [ "$worst" = "7|0 8|1 8|2 7|3 7|1 8|0 7|2 " ]
check "worst problem's row" has "| 7 | 0 | 100 | 100 | 100 | NN | 100 | 100 | 100 | 1 | 0 | 2.000 | 0.500 | 0.20 / 0.20 | 0.0 | - |"
check "plan lines attached" grep -qF "| 8 | 1 | 1024 | 1024 | 1024 | NT | 1024 | 1024 | 1024 | 1 | 0 | 0.500 | 1.000 | 21.47 / 21.47 | 32.1 | op(A) packed by columns, ld=1024; tiled 128x128x16 split-k=2 (cluster) k-chunk=512 |" "$tmp/out.txt"
# By plan: 8#0, 8#1 (packed, ordinary), 8#2, 7#1 (peeled, stream-K, ordinary); 8#3's plan left out.
check "by plan: the problems counted" grep -qF "By plan (4 problems with plan lines;" "$tmp/out.txt"
check "by plan: packed" has "| packed: tiled 128x128x16 | 1 | 0.500 | 1.000 | 1 | 0.500 | 1.000 |"
check "by plan: peeled, stream-K" has "| peeled: tiled 128x128x16 stream-k | 1 | 1.000 | 1.000 | 1 | 1.000 | 1.000 |"
check "by plan: no ordinary product" has "| tiled 128x128x8 | 1 | 1.000 | 1.250 | 0 | - | - |"
check "by plan: tiled" has "| tiled 32x32x8 | 1 | 2.000 | 0.500 | 0 | - | - |"
check "the membound column agrees with the shapes" [ "$(grep -c membound "$tmp/err.txt")" -eq 0 ]
check "a plan of another shape left out, with a warning" \
    grep -qF "problem 3 of seed 8 is m=999 n=1000 k=16 there, 1000 x 1000 x 16 in the CSV: plan left out" "$tmp/err.txt"
check "a wrong floor_us warned about" grep -qF "problem 2: floor_us 5.000, but the shape gives 0.000" "$tmp/err.txt"
check "--md writes what is printed" sh -c "grep -v '^random_report.py:' '$tmp/out.txt' | cmp -s - '$tmp/report.md'"
check "without matplotlib: plots skipped, saying so" grep -qF "matplotlib is not installed: random_hist.png and random_scatter.png skipped" "$tmp/out.txt"
check "without matplotlib: no PNG written" [ ! -e "$tmp/random_hist.png" ] && [ ! -e "$tmp/random_scatter.png" ]

PYTHONPATH="$tmp/nompl" python3 "$report" "$tmp/random_9.csv" > "$tmp/out9.txt" 2> "$tmp/err9.txt"
cat "$tmp/out9.txt" "$tmp/err9.txt"
has9() { grep -qxF -- "$1" "$tmp/out9.txt"; }
check "math-compare: no fp32-tc table without its columns" [ "$(grep -c 'fp32-tc math against strict' "$tmp/out.txt")" -eq 0 ]
check "math-compare: hot" has9 "| 9 | hot | 3 | 1.236 | 0.952 | 2.000 | 1 | 2.000 | 2.000 | 1 | 1 |"
check "math-compare: cold" has9 "| 9 | cold | 3 | 1.186 | 1.000 | 1.667 | 1 | 1.667 | 1.667 | 0 | 1 |"
check "math-compare: the problem slowed listed" has9 "| 9 | 2 | 3000 | 3000 | 3000 | NN | declined | 0.952 | 1.000 |"
check "math-compare: only that one" [ "$(grep -cE '^\| 9 \| [0-9] \| [0-9]+ \| [0-9]+ \| [0-9]+ \| NN \| (ran|declined) \|' "$tmp/out9.txt")" -eq 1 ]
check "math-compare: largest error of the mode" has9 "Largest fp32-tc error / bound: 1.5."
check "math-compare: the mode's failed check counted" grep -qF "Checks: 2 of 3 tgemm results" "$tmp/out9.txt"
check "math-compare: and listed" grep -qF "FAILED: seed 9 problem 1 (100 x 100 x 100 NN): error / bound 0.1, fp32-tc 1.5, padding ok" "$tmp/out9.txt"

check "math-compare: no round-by-round table without its columns" \
    [ "$(grep -c 'Round by round' "$tmp/out9.txt")" -eq 0 ]
PYTHONPATH="$tmp/nompl" python3 "$report" "$tmp/random_11.csv" > "$tmp/out11.txt" 2> "$tmp/err11.txt"
cat "$tmp/out11.txt" "$tmp/err11.txt"
has11() { grep -qxF -- "$1" "$tmp/out11.txt"; }
check "round by round: hot" has11 "| 11 | hot | 3 | 1 | 1 | 1 |"
check "round by round: cold" has11 "| 11 | cold | 3 | 0 | 0 | 1 |"
check "round by round: the problem slowed listed" \
    has11 "| 11 | 0 | 5000 | 5000 | 5000 | NN | ran | hot | 1.030 | [1.025, 1.040] |"
check "round by round: only that one" \
    [ "$(grep -cE '^\| 11 \| [0-9] \| [0-9]+ \| [0-9]+ \| [0-9]+ \| NN \| (ran|declined) \| (hot|cold) \|' "$tmp/out11.txt")" -eq 1 ]
PYTHONPATH="$tmp/nompl" python3 "$report" "$tmp/random_10.csv" > "$tmp/out10.txt" 2> "$tmp/err10.txt"
check "math-compare without strict again: that column '-'" \
    grep -qxF "| 9 | hot | 3 | 1.236 | 0.952 | 2.000 | 1 | 2.000 | 2.000 | 1 | - |" "$tmp/out10.txt"

if python3 -c 'import matplotlib' 2>/dev/null; then
    python3 "$report" --out "$tmp" "$tmp/random_7.csv" "$tmp/random_8.csv" > /dev/null 2>&1
    check "with matplotlib: both PNGs written" \
        sh -c "head -c 4 '$tmp/random_hist.png' | grep -q PNG && head -c 4 '$tmp/random_scatter.png' | grep -q PNG"
else
    echo "check-random-report: matplotlib is not installed for python3: the plots themselves are not drawn here"
fi

if [ "$failed" -ne 0 ]; then
    echo "check-random-report: unexpected report (above)" >&2
    exit 1
fi
echo "check-random-report: OK"
