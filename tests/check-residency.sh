#!/bin/sh
# bench/residency.py: the tiled families' plain kernels against the blocks
# an SM the dispatcher plans for (src/dispatch/factors.cpp), from ptxas's
# register reports (the first argument: the folder of the objects'
# .ptxas.log files). First on made-up inputs: a 32-thread family planned at
# 16 blocks fits at 128 registers and falls short at 130 (15 blocks, the
# units of 256 registers a warp), a cluster kernel's registers do not
# count, a missing report is bad input; then on the build's own reports.
# One "[       OK ]" or "[  FAILED  ]" line per check (tests/run.sh counts them).
set -u
logs=${1:-build/obj/kernels}
here=$(dirname "$0")
. "$here/check_lib.sh"
res="$here/../bench/residency.py"

cat > "$tmp/factors.cpp" <<'CPP'
constexpr ArchFactors kSm90 = {
    {
        {"32x32x8", {0.430, 0.489, 0.372, 0.429}, 16, {1.0, 1.0, 1.0, 1.0}, 0.0, 0.0, 8, 0.12e-6, 0.00e-6},
    },
};
CPP
cat > "$tmp/shapes.cuh" <<'CUH'
struct Tile32x32x8 {
    static constexpr int BM = 32, BN = 32, BK = 8, WM = 32, WN = 32, kMinBlocks = 8;
    static constexpr int kUnalignedUnroll = 8, kAsyncStages = 0, kWholeRing = 0;
};
CUH
report() {  # report PLAIN_REGISTERS CLUSTER_REGISTERS
    mkdir -p "$tmp/logs"
    cat > "$tmp/logs/tiled_32x32x8.ptxas.log" <<LOG
ptxas info    : Compiling entry function '_ZN5tgemm7kernels11sgemm_tiledINS0_9TileShapeINS0_11Tile32x32x8EEELb0ELb0ELb0ELb0ELb0EEEvNS_10GemmParamsENS_6SplitKE' for 'sm_90a'
ptxas info    : Function properties for _ZN5tgemm7kernels11sgemm_tiled
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used $1 registers, used 0 barriers, 464 bytes cmem[0]
ptxas info    : Compiling entry function '_ZN5tgemm7kernels11sgemm_tiledINS0_9TileShapeINS0_11Tile32x32x8EEELb0ELb0ELb1ELb1ELb1EEEvNS_10GemmParamsENS_6SplitKE' for 'sm_90a'
ptxas info    : Used $2 registers, used 1 barriers, 464 bytes cmem[0]
LOG
}
# residency FACTORS SHAPES LOGS: runs the checker, its output in $tmp/out.txt (shown), its exit status in $status.
residency() {
    python3 "$res" "$1" "$2" "$3" > "$tmp/out.txt" 2>&1
    status=$?
    cat "$tmp/out.txt"
}
report 128 200
residency "$tmp/factors.cpp" "$tmp/shapes.cuh" "$tmp/logs"
check "128 registers, 32 threads: 16 blocks, as planned" [ "$status" -eq 0 ]
check "the cluster kernel's 200 registers left out" grep -q "^32x32x8 ok: at most 128 registers" "$tmp/out.txt"
report 130 100
residency "$tmp/factors.cpp" "$tmp/shapes.cuh" "$tmp/logs"
check "130 registers: short, exit 1" [ "$status" -eq 1 ]
check "the kernel and its 15 blocks named" grep -q "^32x32x8 short: .*Lb0ELb0ELb0ELb0ELb0E.* uses 130 registers .*: 15 blocks an SM, planned 16" "$tmp/out.txt"
rm -f "$tmp/logs/tiled_32x32x8.ptxas.log"
residency "$tmp/factors.cpp" "$tmp/shapes.cuh" "$tmp/logs"
check "a missing report: exit 2" [ "$status" -eq 2 ]

residency "$here/../src/dispatch/factors.cpp" "$here/../src/kernels/tiled/shapes.cuh" "$logs"
check "every family of the build holds the blocks an SM it is planned at" [ "$status" -eq 0 ]

if [ "$failed" -ne 0 ]; then
    echo "check-residency: unexpected output (above)" >&2
    exit 1
fi
echo "check-residency: OK"
