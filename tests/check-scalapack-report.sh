#!/bin/sh
# bench/scalapack_report.py (bench/scalapack_gpu.sh's tables) on made-up
# traces and runs, no GPU and no MPI: --calls groups the trace lines of
# a run's processes by shape, beta and path (cpu-fallback:REASON as
# cpu-fallback) with their counts and summed times, and refuses a line
# that is not a trace line; the report gives each configuration's time
# per mode with its speed-up against OpenBLAS alone at panel width 32 (a
# panel-width run against that same baseline), shows failed and skipped
# runs as such, divides the local calls by the PSGEMM calls of the run
# (warm-up included), gives the share of flops on the GPU, and lists the
# tester's runs; a CSV without a column it needs fails.
# One "[       OK ]" or "[  FAILED  ]" line per check (tests/run.sh counts them).
set -u
here=$(dirname "$0")
script="$here/../bench/scalapack_report.py"
. "$(dirname "$0")/check_lib.sh"
has() { grep -qxF -- "$1" "$2" || { echo "missing line: $1"; echo "in:"; cat "$2"; return 1; }; }

# Two processes of a gpu run: 3 PSGEMM calls (1 warm-up, 2 timed), each
# process 1 panel with beta 0 and 1 with beta 1 per call; process 1's
# beta-1 panels fell back to the CPU.
t='tgemm trace: entry=sgemm_ transa=N transb=N'
for _ in 1 2 3; do
    echo "$t m=100 n=200 k=32 alpha=1 beta=0 path=gpu time_us=1000.0" >> "$tmp/trace.0"
    echo "$t m=100 n=200 k=32 alpha=1 beta=1 path=gpu time_us=500.0" >> "$tmp/trace.0"
    echo "$t m=100 n=200 k=32 alpha=1 beta=0 path=gpu time_us=2000.0" >> "$tmp/trace.1"
    echo "$t m=100 n=200 k=32 alpha=1 beta=1 path=cpu-fallback:no-device auto=model est_cpu_us=1.0 est_gpu_us=2.0 time_us=4000.0" \
        >> "$tmp/trace.1"
done
python3 "$script" --calls g1 "$tmp/trace.0" "$tmp/trace.1" > "$tmp/calls.rows" 2> "$tmp/err"
check "--calls exits 0" test $? -eq 0
cat > "$tmp/want.rows" << 'EOF'
g1,N,N,100,200,32,0,gpu,6,9000.0
g1,N,N,100,200,32,1,cpu-fallback,3,12000.0
g1,N,N,100,200,32,1,gpu,3,1500.0
EOF
check "--calls: one row per shape, beta and path, counted and timed over the processes" cmp -s "$tmp/calls.rows" "$tmp/want.rows"
echo "garbage" > "$tmp/trace.bad"
python3 "$script" --calls g1 "$tmp/trace.bad" > /dev/null 2>&1
check "--calls refuses a line that is not a trace line" test $? -ne 0

{
    echo "run,transa,transb,m,n,k,beta,path,count,time_us"
    cat "$tmp/calls.rows"
} > "$tmp/calls.csv"
cat > "$tmp/runs.csv" << 'EOF'
run,group,np,grid,m,n,k,nb,kb,mode,warmup,reps,time_s_min,time_s_median,gflops,status,wall_s,calls,gpu_calls,cpu_calls
c1,sizes,4,2x2,4096,4096,4096,256,32,cpu,1,2,2.000000,2.100000,68.72,ok,9,0,0,0
a1,sizes,4,2x2,4096,4096,4096,256,32,auto,1,2,1.000000,1.100000,137.44,ok,9,0,0,0
g1,sizes,4,2x2,4096,4096,4096,256,32,gpu,1,2,,,,failed:1,9,12,9,0
g2,panel,4,2x2,4096,4096,4096,256,2048,gpu,1,2,0.500000,0.600000,274.88,ok,9,6,6,0
s1,large,4,,16384,16384,16384,256,32,cpu,1,1,,,,skipped:budget,0,,,
EOF
cat > "$tmp/pblas.csv" << 'EOF'
np,mode,status,check,calls,gpu,cpu,other
4,gpu,0,ok,6832,6832,0,0
EOF
python3 "$script" "$tmp/runs.csv" "$tmp/calls.csv" "$tmp/pblas.csv" > "$tmp/report.md" 2> "$tmp/err"
check "the report exits 0" test $? -eq 0
check "the tester's run" has "| 4 | gpu | 0 | ok | 6832 | 6832 | 0 | 0 |" "$tmp/report.md"
check "speed-ups against OpenBLAS alone; a failed run shown as failed" \
    has "| 4096 | 4 (2x2) | 256 | 32 | 2.000 s (69) | 1.000 s (137) | failed:1 | 2.00 | - |" "$tmp/report.md"
check "a panel-width run against the baseline at panel width 32" \
    has "| 4096 | 4 (2x2) | 256 | 2048 | - | - | 0.500 s (275) | - | 4.00 |" "$tmp/report.md"
check "a skipped run shown as skipped" has "| 16384 | 4 | 256 | 32 | skipped:budget | - | - | - | - |" "$tmp/report.md"
check "the run's label and its share of flops on the GPU (9 of 12 panels)" \
    has "**g1 (M=N=K=4096, grid 2x2, NB 256, panel 32, gpu)**: GPU flops 75%" "$tmp/report.md"
check "local calls per PSGEMM call (6 over 3 calls), mean time, share of time" \
    has "| NN | 100 x 200 x 32 | 0 | gpu | 2 | 1.50 ms | 40% |" "$tmp/report.md"
check "the GPU's beta-1 panels" has "| NN | 100 x 200 x 32 | 1 | gpu | 1 | 0.50 ms | 7% |" "$tmp/report.md"
check "the fallen-back panels" has "| NN | 100 x 200 x 32 | 1 | cpu-fallback | 1 | 4.00 ms | 53% |" "$tmp/report.md"
cut -d, -f1-12 "$tmp/runs.csv" > "$tmp/short.csv"
python3 "$script" "$tmp/short.csv" "$tmp/calls.csv" "$tmp/pblas.csv" > /dev/null 2> "$tmp/err"
check "a runs.csv without time_s_min fails" test $? -ne 0
check "... saying which columns are missing" grep -q "lacks the columns time_s_min" "$tmp/err"
exit $failed
