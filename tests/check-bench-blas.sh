#!/bin/sh
# bench/bench_blas.py --report on made-up rounds of bench_cpu_blas output,
# no GPU: the medians of every timed call per mode, the side auto took
# (from its trace; * where its calls took both), auto over the faster
# side, and the forced GPU path's spread over repetitions (a round's
# median against the median of the rounds) beside the single calls'
# spread; the goals (auto <= 1.15 of the faster side, repetitions within
# 10%) missed and met, and the exit status that says so.
# One "[       OK ]" or "[  FAILED  ]" line per check (tests/run.sh counts them).
set -u
here=$(dirname "$0")
script="$here/../bench/bench_blas.py"
. "$(dirname "$0")/check_lib.sh"
# rows MODE ROUND SHAPE_M MS... : one CSV row per timed call
rows() {
    mode=$1 round=$2 m=$3
    shift 3
    f="$tmp/run/blas_${mode}_${round}.csv"
    [ -f "$f" ] || echo "shape,layout,transa,transb,m,n,k,rep,seconds,library" > "$f"
    rep=0
    for ms in "$@"; do
        echo "square,col,N,N,$m,$m,$m,$rep,$(awk "BEGIN { print $ms / 1000 }"),x" >> "$f"
        rep=$((rep + 1))
    done
}
mkdir -p "$tmp/run"
# 64^3: CPU 1 ms, auto 1.2 ms (on the CPU: 1.2 of the faster side), GPU
# rounds 2 2 2 | 2 2 2.6 | 2.4 2.4 2.4: repetitions 2, 2, 2.4 (20% from
# their median 2), single calls up to 2.6 (30%).
# 128^3: CPU 4 ms, auto 2.1 (its calls on both sides: "gpu*"), GPU rounds
# 2 2 2 | 2.1 2.1 2.1 | 2 2 2: 5% either way; auto 1.05 of the GPU.
for r in 0 1 2; do rows cpu $r 64 1 1 1; rows auto $r 64 1.2 1.2 1.2; done
rows gpu 0 64 2 2 2; rows gpu 1 64 2 2 2.6; rows gpu 2 64 2.4 2.4 2.4
for r in 0 1 2; do rows cpu $r 128 4 4 4; rows auto $r 128 2.1 2.1 2.1; done
rows gpu 0 128 2 2 2; rows gpu 1 128 2.1 2.1 2.1; rows gpu 2 128 2 2 2
t="tgemm trace: entry=cblas_sgemm layout=col transa=N transb=N"
{
    echo "$t m=64 n=64 k=64 alpha=1 beta=0.5 path=cpu"
    echo "$t m=128 n=128 k=128 alpha=1 beta=0.5 path=cpu"
    echo "$t m=128 n=128 k=128 alpha=1 beta=0.5 path=gpu"
    # A call of beta 0 (--lead-in's, --mix's) is not one of the shape's.
    echo "$t m=64 n=64 k=64 alpha=1 beta=0 path=gpu"
} > "$tmp/run/blas_trace_auto.txt"

python3 "$script" --report "$tmp/run" > "$tmp/out.txt" 2>&1
status=$?
row() {  # SIZE: the table row of that square
    grep -E "^square +col +NN +$1 +$1 +$1 " "$tmp/out.txt"
}
fields() {  # SIZE, then the expected fields 7 to 13 of its row
    size=$1
    shift
    [ "$(row "$size" | awk '{print $7, $8, $9, $10, $11, $12, $13}')" = "$*" ]
}
check "a goal missed: exit status 1" [ "$status" -eq 1 ]
check "64^3: medians, side, auto/best, spreads" fields 64 "1.000 1.200 2.000 cpu 1.200 20.0% 30.0%"
check "128^3: medians, both sides tried, auto/best, spreads" fields 128 "4.000 2.100 2.000 gpu* 1.050 5.0% 5.0%"
check "64^3 flagged" sh -c "grep -E '^square +col +NN +64 .* <\$' '$tmp/out.txt' >/dev/null"
check "auto goal missed on 64^3" grep -q "auto against the faster side: worst 1.200 (square 64x64x64), goal <= 1.15: MISSED" "$tmp/out.txt"
check "spread goal counted over repetitions" grep -q "repetitions (rounds) around their median: worst 20.0% (square 64x64x64), goal <= 10%: MISSED" "$tmp/out.txt"
check "CSV written with both spreads" sh -c "head -1 '$tmp/run/blas_offload.csv' | grep -q 'gpu_spread,gpu_call_spread,rounds,calls'"

# Only 128^3: both goals met, exit status 0.
mkdir -p "$tmp/met"
for f in "$tmp"/run/blas_*_*.csv; do grep -v ",64,64,64," "$f" > "$tmp/met/$(basename "$f")"; done
grep "m=128" "$tmp/run/blas_trace_auto.txt" > "$tmp/met/blas_trace_auto.txt"
python3 "$script" --report "$tmp/met" > "$tmp/met.txt" 2>&1
status=$?
check "goals met: exit status 0" [ "$status" -eq 0 ]
check "auto goal met" grep -q "goal <= 1.15: met" "$tmp/met.txt"
check "spread goal met" grep -q "goal <= 10%: met" "$tmp/met.txt"

# --direct: each row also has the time of OpenBLAS called directly after
# the call. 64^3 as above; the direct calls take 1 ms in the plain process,
# 1.2 beside auto (the CPU BLAS itself slower there: auto/direct 1.000) and
# 1.1 beside the forced GPU calls. Without the column (the first run) no
# such table is printed.
mkdir -p "$tmp/direct"
for f in "$tmp"/run/blas_*_*.csv; do
    mode=$(basename "$f" | cut -d_ -f2)
    case $mode in cpu) d=0.001 ;; auto) d=0.0012 ;; *) d=0.0011 ;; esac
    awk -v d="$d" 'NR == 1 { print $0 ",direct_seconds"; next } /,64,64,64,/ { print $0 "," d }' "$f" \
        > "$tmp/direct/$(basename "$f")"
done
cp "$tmp/run/blas_trace_auto.txt" "$tmp/direct/"
python3 "$script" --report "$tmp/direct" > "$tmp/direct.txt" 2>&1
check "direct calls: a table per mode, auto over its own process's direct calls" \
    sh -c "grep -E '^square +col +NN +64 +64 +64 +1.000 +1.200 +1.100 +cpu +1.000\$' '$tmp/direct.txt' >/dev/null"
check "without direct calls: no direct table" sh -c "! grep -q 'called directly' '$tmp/out.txt'"

# --beside: the auto process's rows also have both sides timed beside
# each call: 64^3 CPU 1 ms and GPU 2 beside auto's 1.2 (1.200 of the
# faster side there), 128^3 CPU 4 and GPU 2 beside auto's 2.1 (1.050).
# With --direct too, the other modes' rows have their direct calls (1 ms),
# and both tables are printed.
mkdir -p "$tmp/beside"
for f in "$tmp"/run/blas_*_*.csv; do
    case $(basename "$f") in
    blas_auto_*)
        awk 'NR == 1 { print $0 ",direct_seconds,direct_gpu_seconds"; next }
             /,64,64,64,/ { print $0 ",0.001,0.002"; next } { print $0 ",0.004,0.002" }' "$f" ;;
    *) awk 'NR == 1 { print $0 ",direct_seconds,direct_gpu_seconds"; next } { print $0 ",0.001," }' "$f" ;;
    esac > "$tmp/beside/$(basename "$f")"
done
cp "$tmp/run/blas_trace_auto.txt" "$tmp/beside/"
python3 "$script" --report "$tmp/beside" > "$tmp/beside.txt" 2>&1
check "beside: 64^3 auto over the faster side in its process, flagged" \
    sh -c "grep -E '^square +col +NN +64 +64 +64 +1.200 +1.000 +2.000 +cpu +1.200 <\$' '$tmp/beside.txt' >/dev/null"
check "beside: 128^3 within the goal" \
    sh -c "grep -E '^square +col +NN +128 +128 +128 +2.100 +4.000 +2.000 +gpu\\* +1.050\$' '$tmp/beside.txt' >/dev/null"
check "beside: the count and the worst" \
    grep -q "auto against the faster side beside it: within 1.15 on 1 of 2 shapes, worst 1.200 (square 64x64x64)" "$tmp/beside.txt"
check "beside and direct: the direct table too" grep -q "CPU BLAS called directly" "$tmp/beside.txt"
check "beside: blas_beside.csv, a row per shape" \
    grep -qF "square,col,N,N,128,128,128,0.0021,0.004,0.002,gpu*,1.05" "$tmp/beside/blas_beside.csv"
# The forced GPU runs fell back (their warning recorded): no goal judged,
# no crossover, exit status 1, whatever the times say.
mkdir -p "$tmp/fallback"
cp "$tmp"/met/* "$tmp/fallback/"
echo "tgemm: TGEMM_OFFLOAD=gpu, but the GPU could not run a BLAS call (no device)" > "$tmp/fallback/blas_gpu_fallback.txt"
python3 "$script" --report "$tmp/fallback" > "$tmp/fallback.txt" 2>&1
status=$?
check "GPU runs fell back: exit status 1" [ "$status" -eq 1 ]
check "GPU runs fell back: said so" grep -q "the forced GPU runs fell back to the CPU BLAS" "$tmp/fallback.txt"
check "GPU runs fell back: no goal, no crossover" sh -c "! grep -qE 'goal <= |^crossover:' '$tmp/fallback.txt'"
[ "$failed" -eq 0 ] || { echo "--- report:"; cat "$tmp/out.txt" "$tmp/direct.txt" "$tmp/beside.txt" "$tmp/fallback.txt"; }
exit "$failed"
