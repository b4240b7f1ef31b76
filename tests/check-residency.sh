#!/bin/sh
# bench/residency.py: the tiled families' plain kernels against the blocks
# an SM the dispatcher plans for, and their cluster kernels against the
# blocks an SM holds in clusters, from ptxas's register reports and
# plan_dump --families (the arguments: plan_dump, then the folder of the
# objects' .ptxas.log files). First on made-up inputs: a 32-thread family
# planned at 16 blocks fits at 128 registers and falls short at 130 (15
# blocks, the units of 256 registers a warp), a cluster kernel's registers
# do not count against the plan but against the blocks an SM holds in
# clusters (at 8 of them, 200 registers fit 10; at 16, an unaligned
# cluster kernel of 136 registers fits 15 and falls short, one of 128
# fits), a missing report and a bad table are bad input; then on the
# build's own reports.
# One "[       OK ]" or "[  FAILED  ]" line per check (tests/run.sh counts them).
set -u
plan_dump=${1:-build/bench/plan_dump}
logs=${2:-build/obj/kernels}
here=$(dirname "$0")
. "$here/check_lib.sh"
res="$here/../bench/residency.py"

echo "32x32x8 32 4608 16 8" > "$tmp/families.txt"
report() {  # report PLAIN_REGISTERS CLUSTER_REGISTERS [UNALIGNED_CLUSTER_REGISTERS]
    mkdir -p "$tmp/logs"
    cat > "$tmp/logs/tiled_32x32x8.ptxas.log" <<LOG
ptxas info    : Compiling entry function '_ZN5tgemm7kernels11sgemm_tiledINS0_9TileShapeINS0_11Tile32x32x8EEELb0ELb0ELb0ELb0ELb0EEEvNS_10GemmParamsENS_6SplitKE' for 'sm_90a'
ptxas info    : Function properties for _ZN5tgemm7kernels11sgemm_tiled
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used $1 registers, used 0 barriers, 464 bytes cmem[0]
ptxas info    : Compiling entry function '_ZN5tgemm7kernels11sgemm_tiledINS0_9TileShapeINS0_11Tile32x32x8EEELb0ELb0ELb1ELb1ELb1EEEvNS_10GemmParamsENS_6SplitKE' for 'sm_90a'
ptxas info    : Used $2 registers, used 1 barriers, 464 bytes cmem[0]
ptxas info    : Compiling entry function '_ZN5tgemm7kernels11sgemm_tiledINS0_9TileShapeINS0_11Tile32x32x8EEELb0ELb0ELb0ELb1ELb0EEEvNS_10GemmParamsENS_6SplitKE' for 'sm_90a'
ptxas info    : Used ${3:-$2} registers, used 1 barriers, 464 bytes cmem[0]
LOG
}
# residency FAMILIES LOGS: runs the checker, its output in $tmp/out.txt (shown), its exit status in $status.
residency() {
    python3 "$res" "$1" "$2" > "$tmp/out.txt" 2>&1
    status=$?
    cat "$tmp/out.txt"
}
report 128 200
residency "$tmp/families.txt" "$tmp/logs"
check "128 registers, 32 threads: 16 blocks, as planned" [ "$status" -eq 0 ]
check "the cluster kernel's 200 registers left out" grep -q "^32x32x8 ok: at most 128 registers" "$tmp/out.txt"
report 130 100
residency "$tmp/families.txt" "$tmp/logs"
check "130 registers: short, exit 1" [ "$status" -eq 1 ]
check "the kernel and its 15 blocks named" grep -q "^32x32x8 short: .*Lb0ELb0ELb0ELb0ELb0E.* uses 130 registers .*: 15 blocks an SM, planned 16" "$tmp/out.txt"
echo "32x32x8 32 4608 16 16" > "$tmp/clusters16.txt"
report 128 128 136
residency "$tmp/clusters16.txt" "$tmp/logs"
check "16 blocks an SM in clusters, an unaligned cluster kernel of 136 registers: short, exit 1" [ "$status" -eq 1 ]
check "the cluster kernel and its blocks named" grep -q "^32x32x8 short: cluster kernel .*Lb0ELb0ELb0ELb1ELb0E.* uses 136 registers (32 threads): 15 blocks an SM, 16 in clusters" "$tmp/out.txt"
report 128 128 128
residency "$tmp/clusters16.txt" "$tmp/logs"
check "the same at 128 registers: ok" [ "$status" -eq 0 ]
rm -f "$tmp/logs/tiled_32x32x8.ptxas.log"
residency "$tmp/families.txt" "$tmp/logs"
check "a missing report: exit 2" [ "$status" -eq 2 ]
echo "32x32x8 32 4608 16" > "$tmp/bad.txt"
residency "$tmp/bad.txt" "$tmp/logs"
check "a family line without its blocks in clusters: exit 2" [ "$status" -eq 2 ]

"$plan_dump" --families > "$tmp/build.txt"
check "plan_dump --families prints the families" [ -s "$tmp/build.txt" ]
residency "$tmp/build.txt" "$logs"
check "every family of the build holds the blocks an SM it is planned at" [ "$status" -eq 0 ]

if [ "$failed" -ne 0 ]; then
    echo "check-residency: unexpected output (above)" >&2
    exit 1
fi
echo "check-residency: OK"
