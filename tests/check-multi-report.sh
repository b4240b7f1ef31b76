#!/bin/sh
# bench/multi_report.py on made-up bench_multi output of 1, 2 and 4 GPUs,
# a TGEMM_DEVICES=auto run and a links CSV, no GPU: TFLOP/s and speedups
# over one GPU per memory kind (a configuration in two files merged by the
# median of its times); the host copy limit of pageable memory from the
# memcpy rate; the 16384^3 pinned targets met (2 GPUs) and missed (4 GPUs);
# cuBLAS-XT's best block size against tgemm and the target's misses
# listed; the link tables (all at once against the sum alone, memcpy, peer
# copies off / on); a failed check listed with exit status 1, a skipped
# configuration counted; --md writing what is printed; exit status 0
# without the failed row; --skeleton's placeholder tables.
# One "[       OK ]" or "[  FAILED  ]" line per check (tests/run.sh counts them).
set -u
here=$(dirname "$0")
report="$here/../bench/multi_report.py"
. "$(dirname "$0")/check_lib.sh"
header=m,n,k,ta,tb,beta,memory,setting,devices,ndev,impl,block,seconds,tflops,reps,seconds_min,seconds_max,first_seconds,check,check_kind,status
# One GPU. 16384^3: flops 8.796e12; pinned tgemm 0.2 s here and 0.18 and
# 0.22 in g1b.csv (median 0.2 s: 44.0 TFLOP/s); cuBLAS-XT's best 0.3 s
# (bs8192; bs4096 0.4 s), ratio 1.50. 4096^3 (1.374e11 flops): 0.004 s,
# cuBLAS-XT 0.006 s (1.50); pageable 16384^3 0.4 s (22.0).
cat > "$tmp/multi_g1.csv" <<EOF
$header
4096,4096,4096,N,N,0,pinned,0,0,1,tgemm,,0.004,34.36,10,0.004,0.004,0.01,0.01,full,ok
4096,4096,4096,N,N,0,pinned,0,0,1,cublasxt-bs2048,2048,0.008,17.18,10,0.008,0.008,0.01,0.02,full,ok
4096,4096,4096,N,N,0,pinned,0,0,1,cublasxt-bs4096,4096,0.006,22.9,10,0.006,0.006,0.01,0.02,full,ok
16384,16384,16384,N,N,0,pinned,0,0,1,tgemm,,0.2,43.98,7,0.2,0.2,0.3,0.01,sample,ok
16384,16384,16384,N,N,0,pinned,0,0,1,cublasxt-bs4096,4096,0.4,22,3,0.4,0.4,0.5,0.01,sample,ok
16384,16384,16384,N,N,0,pinned,0,0,1,cublasxt-bs8192,8192,0.3,29.3,3,0.3,0.3,0.5,0.01,sample,ok
16384,16384,16384,N,N,0,pageable,0,0,1,tgemm,,0.4,22,3,0.4,0.4,0.5,0.01,sample,ok
EOF
cat > "$tmp/multi_g1b.csv" <<EOF
$header
16384,16384,16384,N,N,0,pinned,0,0,1,tgemm,,0.18,48.9,7,0.2,0.2,0.3,0.01,sample,ok
16384,16384,16384,N,N,0,pinned,0,0,1,tgemm,,0.22,40.0,7,0.2,0.2,0.3,0.01,sample,ok
EOF
# Two GPUs: 16384^3 pinned 0.105 s (1.90x, met), pageable 0.25 s (1.60x);
# 4096^3 0.0025 s (1.60x) and cuBLAS-XT 0.002 s there (ratio 0.80: a miss);
# cuBLAS-XT at 16384^3 skipped.
cat > "$tmp/multi_g2.csv" <<EOF
$header
4096,4096,4096,N,N,0,pinned,0+1,0+1,2,tgemm,,0.0025,54.98,10,0.004,0.004,0.01,0.01,full,ok
4096,4096,4096,N,N,0,pinned,0+1,0+1,2,cublasxt-bs2048,2048,0.002,68.7,10,0.008,0.008,0.01,0.02,full,ok
16384,16384,16384,N,N,0,pinned,0+1,0+1,2,tgemm,,0.105,83.8,7,0.2,0.2,0.3,0.03,sample,ok
16384,16384,16384,N,N,0,pinned,0+1,0+1,2,cublasxt-bs4096,4096,,,0,,,,,sample,skipped
16384,16384,16384,N,N,0,pageable,0+1,0+1,2,tgemm,,0.25,35.2,3,0.4,0.4,0.5,0.02,sample,ok
EOF
# Four GPUs: 16384^3 pinned 0.0625 s (3.20x: missed); its pageable row failed its check.
cat > "$tmp/multi_g4.csv" <<EOF
$header
16384,16384,16384,N,N,0,pinned,0+1+2+3,0+1+2+3,4,tgemm,,0.0625,140.7,7,0.06,0.07,0.1,0.04,sample,ok
16384,16384,16384,N,N,0,pageable,0+1+2+3,0+1+2+3,4,tgemm,,0.2,44,3,0.2,0.2,0.3,inf,sample,FAIL
EOF
# auto: 16384^3 pinned 0.07 s (2.86x).
cat > "$tmp/multi_auto.csv" <<EOF
$header
16384,16384,16384,N,N,0,pinned,auto,auto,4,tgemm,,0.07,125.7,7,0.07,0.07,0.1,0.02,sample,ok
EOF
# Links of two GPUs: 53.7 GB/s each alone, 26.8 each and 53.7 together at
# once (0.50 of the sum alone); memcpy 53.69 GB/s with 32 threads, so the
# pageable host copy limit of 16384^3 is 3 x 2^30 bytes / 53.69e9 = 0.060 s:
# 146.6 TFLOP/s, of which 0.25 s reaches 24%.
cat > "$tmp/links.csv" <<'EOF'
kind,mode,src,dst,bytes,seconds,gbs,peer_access
h2d,alone,host,0,268435456,5e-3,53.69,
h2d,alone,host,1,268435456,5e-3,53.69,
h2d,all,host,0,268435456,1e-2,26.84,
h2d,all,host,1,268435456,1e-2,26.84,
h2d,all,host,all,536870912,1e-2,53.69,
d2h,alone,0,host,268435456,8e-3,33.56,
d2h,alone,1,host,268435456,8e-3,33.56,
d2h,all,0,host,268435456,8e-3,33.56,
d2h,all,1,host,268435456,8e-3,33.56,
d2h,all,all,host,536870912,8e-3,67.12,
memcpy,threads-1,host,host,1073741824,0.1,10.74,
memcpy,threads-32,host,host,1073741824,0.02,53.69,
peer,off,0,1,268435456,0.01,26.84,1
peer,off,1,0,268435456,0.01,26.84,1
peer,on,0,1,268435456,0.001,268.4,1
peer,on,1,0,268435456,0.001,268.4,1
peer,on-both,0,1,536870912,0.001,536.9,1
EOF
printf '\tGPU0\tGPU1\nGPU0\t X \tNV18\n' > "$tmp/topo.txt"

python3 "$report" --links "$tmp/links.csv" --topo "$tmp/topo.txt" --md "$tmp/report.md" \
    "$tmp/multi_g1.csv" "$tmp/multi_g1b.csv" "$tmp/multi_g2.csv" "$tmp/multi_g4.csv" "$tmp/multi_auto.csv" \
    > "$tmp/out.txt" 2> "$tmp/err.txt"
status=$?
cat "$tmp/out.txt" "$tmp/err.txt"

has() { grep -qxF -- "$1" "$tmp/out.txt"; }
# the line of the table under heading $1 that starts with $2
row_under() { awk -v h="$1" -v r="$2" 'index($0, h) == 1 {on = 1; next} /^###/ {on = 0} on && index($0, r) == 1' "$tmp/out.txt"; }

check "a failed check: exit status 1" [ "$status" -eq 1 ]
check "the section's heading" has "## Several GPUs (issue 30)"
check "pinned: columns per device count and auto" \
    [ "$(row_under '### tgemm from pinned' '| size ')" = "| size | 1 GPU | 2 GPUs | 4 GPUs | auto |" ]
check "pinned 16384^3: median of the merged rows, speedups" \
    [ "$(row_under '### tgemm from pinned' '| 16384^3 ')" = "| 16384^3 | 44.0 | 83.8 (1.90x) | 140.7 (3.20x) | 125.7 (2.86x) |" ]
check "pinned 4096^3: no 4-GPU or auto rows" \
    [ "$(row_under '### tgemm from pinned' '| 4096^3 ')" = "| 4096^3 | 34.4 | 55.0 (1.60x) | - | - |" ]
check "pageable 16384^3: the failed row left out, the host copy limit" \
    [ "$(row_under '### tgemm from pageable' '| 16384^3 ')" = "| 16384^3 | 22.0 | 35.2 (1.60x) | - | - | 146.6 (24% reached) |" ]
check "target met: 2 GPUs pinned" has "| 2 GPUs, pinned | >= 1.85 | 1.90x | met |"
check "target missed: 4 GPUs pinned" has "| 4 GPUs, pinned | >= 3.5 | 3.20x | missed |"
check "target not measured: 8 GPUs" has "| 8 GPUs, pinned | >= 6.5 | - | not measured |"
check "pageable speedup reported" has "| 2 GPUs, pageable | report (host copy limit) | 1.60x |  |"
check "cuBLAS-XT: its best block size against tgemm" \
    [ "$(row_under '### tgemm against cuBLAS-XT' '| pinned | 16384^3 ')" = "| pinned | 16384^3 | 1.50 (bs8192) | - | - |" ]
check "cuBLAS-XT: faster than tgemm at 4096^3 on 2 GPUs" \
    [ "$(row_under '### tgemm against cuBLAS-XT' '| pinned | 4096^3 ')" = "| pinned | 4096^3 | 1.50 (bs4096) | 0.80 (bs2048) | - |" ]
check "cuBLAS-XT target missed, the miss listed" \
    has "Target: faster than cuBLAS-XT at every size from 4096^3 up: missed, 1 of 3 (4096^3 pinned 2 GPUs (0.80))."
check "cuBLAS-XT per block size" has "| pinned | 1 | 16384^3 | - | 22.0 | 29.3 |"
check "links: host to GPU alone / all at once" has "| 0 | 53.7 / 26.8 | 33.6 / 33.6 |"
check "links: all at once against the sum alone" \
    has "| all at once | 53.7 (0.50 of the sum alone) | 67.1 (1.00 of the sum alone) |"
check "links: host memcpy" has "Host memcpy (bytes copied): 1 thread 10.7 GB/s, 32 threads 53.7 GB/s."
check "links: peer copies off / on" has "| 0 | - | 26.8 / 268.4* |"
check "links: both ways at once" has "Both ways at once, peer access on, the two directions added: 0 <-> 1 536.9 GB/s."
check "checks: counted" grep -qF "Checks: 15 of 16 configurations within the FP32 bound (worst error / bound 0.04); 5 checked on every element, 11 on a sample." "$tmp/out.txt"
check "checks: the failure listed" \
    has "- FAILED: tgemm, 16384^3 pageable, devices 0+1+2+3 (TGEMM_DEVICES 0+1+2+3, multi_g4.csv): error / bound inf"
check "checks: the skipped configuration counted" \
    grep -qF "Skipped for time (the run's deadline): 1 cuBLAS-XT configuration(s): cublasxt-bs4096 16384^3 pinned 2 GPUs." "$tmp/out.txt"
check "the topology" sh -c "grep -qF 'GPU0	 X 	NV18' '$tmp/out.txt'"
check "--md writes what is printed" cmp -s "$tmp/out.txt" "$tmp/report.md"

python3 "$report" --links "$tmp/links.csv" "$tmp/multi_g1.csv" "$tmp/multi_g2.csv" > "$tmp/ok.txt" 2>&1
check "no failed row: exit status 0" [ $? -eq 0 ]
check "without the 4-GPU file, no 4-GPU column" grep -qxF "| 16384^3 | 44.0 | 83.8 (1.90x) |" "$tmp/ok.txt"

python3 "$report" --skeleton > "$tmp/skel.txt" 2>&1
check "--skeleton: exit status 0" [ $? -eq 0 ]
check "--skeleton: a placeholder row per size" grep -qxF "| 16384^3 | - | - | - | - |" "$tmp/skel.txt"
check "--skeleton: the targets not measured" grep -qxF "| 4 GPUs, pinned | >= 3.5 | - | not measured |" "$tmp/skel.txt"
check "--skeleton: says it is not measured" grep -qF "Not measured yet" "$tmp/skel.txt"

python3 "$report" > "$tmp/none.txt" 2>&1
check "no CSV: exit status 2" [ $? -eq 2 ]

if [ "$failed" -ne 0 ]; then
    echo "check-multi-report: unexpected report (above)" >&2
    exit 1
fi
echo "check-multi-report: OK"
