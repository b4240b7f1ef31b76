#!/usr/bin/env bash
# The several-GPU benchmark (issue 30) on a machine of 2, 4 or 8 GPUs:
#
#   make bench-programs          # builds build/bench/bench_multi (this script builds nothing)
#   OUT=DIR bash bench/multi_gpu.sh
#
# In order, everything written to $OUT:
#  - gpus.txt (nvidia-smi -L), nvidia-smi.txt, topo.txt (nvidia-smi topo -m:
#    NVLink, PCIe switches, CPU and NUMA affinity, which CUDA does not
#    tell), host.txt (lscpu, numactl --hardware, free);
#  - links.csv, links.log: bench_multi --links (host<->GPU pinned and
#    pageable, each GPU alone and all at once, host memcpy, peer copies);
#  - for each device set {0}, {0,1}, {0,1,2,3} (and {0,...,7}) that exists:
#    multi_gN.csv, multi_gN.log: TGEMM_DEVICES=SET bench_multi, tgemm and
#    cuBLAS-XT on the same GPUs, pinned and pageable operands, the sizes
#    of MULTI_SIZES (default 4096,8192,12288,16384);
#  - multi_auto.csv, multi_auto.log: TGEMM_DEVICES=auto, tgemm alone;
#  - plans_gN.log: TGEMM_VERBOSE=2, one call at the largest size on the
#    most GPUs from pinned memory: the grid of blocks tgemm spreads;
#  - multi_report.md: bench/multi_report.py over all of it;
#  - summary.txt: each step's exit status and seconds.
# The whole run keeps within MULTI_BUDGET seconds (default 300): each
# bench_multi process gets a --deadline, its share of what is left (the
# sets with fewer GPUs, whose cuBLAS-XT runs are the slowest, a larger
# one), past which it skips cuBLAS-XT configurations (never tgemm's), and
# is killed 60 s after it. On 4 H100s the run should take about 3
# minutes, and at most about 6 (the budget and one process's 60 s).
# MULTI_ARGS adds arguments to every product run (--beta 1, --xt-pin both,
# --shape ...). BENCH_MULTI names the program (default
# build/bench/bench_multi). Exit status: that of the first step that
# failed (a failed output check is one), else 0.
set -u
: "${OUT:?set OUT to the directory for the results}"
BIN=${BENCH_MULTI:-build/bench/bench_multi}
SIZES=${MULTI_SIZES:-4096,8192,12288,16384}
BUDGET=${MULTI_BUDGET:-300}
read -r -a EXTRA <<< "${MULTI_ARGS:-}"
here=$(dirname "$0")
mkdir -p "$OUT" || exit 2
[ -x "$BIN" ] || { echo "multi_gpu.sh: $BIN not found: run make bench-programs first" >&2; exit 2; }
# The library's settings stay at their defaults, but for TGEMM_DEVICES.
clean=(env -u TGEMM_DEVICE -u TGEMM_DEVICES -u TGEMM_KERNEL -u TGEMM_STREAMK -u TGEMM_PACK -u TGEMM_TMA
       -u TGEMM_CLUSTERS -u TGEMM_DEVICE_MEMORY_LIMIT -u TGEMM_HOST_COPY_THREADS -u TGEMM_HOST_TRACE
       -u TGEMM_VERBOSE -u TGEMM_OFFLOAD -u LD_PRELOAD)

start=$SECONDS
first_fail=0
: > "$OUT/summary.txt"
step() {  # NAME LOG COMMAND...: runs it, its output in LOG and on stdout
    local name=$1 log=$2 t0=$SECONDS rc
    shift 2
    echo "=== multi_gpu.sh [$((SECONDS - start)) s]: $name: $*"
    ( set -o pipefail; "$@" 2>&1 | tee "$log" )
    rc=$?
    printf '%-12s rc=%d %4d s\n' "$name" "$rc" $((SECONDS - t0)) >> "$OUT/summary.txt"
    [ "$rc" -eq 0 ] || [ "$first_fail" -ne 0 ] || first_fail=$rc
    return 0
}

# The GPUs: nvidia-smi's, or those CUDA_VISIBLE_DEVICES leaves.
command -v nvidia-smi > /dev/null 2>&1 \
    || { echo "multi_gpu.sh: no NVIDIA driver here (no nvidia-smi): this benchmark needs GPUs" >&2; exit 2; }
nvidia-smi -L > "$OUT/gpus.txt" 2>&1 || { cat "$OUT/gpus.txt"; echo "multi_gpu.sh: nvidia-smi -L failed" >&2; exit 2; }
ngpu=$(grep -c '^GPU ' "$OUT/gpus.txt")
if [ -n "${CUDA_VISIBLE_DEVICES+set}" ]; then
    visible=$(printf '%s' "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c .)
    [ "$visible" -lt "$ngpu" ] && ngpu=$visible
fi
[ "$ngpu" -ge 1 ] || { echo "multi_gpu.sh: no GPU" >&2; exit 2; }
echo "multi_gpu.sh: $ngpu GPU(s); budget $BUDGET s; sizes $SIZES"
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
nvidia-smi topo -m > "$OUT/topo.txt" 2>&1
{
    lscpu
    echo
    if command -v numactl > /dev/null; then numactl --hardware; else echo "numactl: not installed"; fi
    echo
    free -g
} > "$OUT/host.txt" 2>&1
cat "$OUT/topo.txt"

step links "$OUT/links.log" timeout -k 10 120 "${clean[@]}" "$BIN" --links --links-csv "$OUT/links.csv"

# Device sets, and each one's weight in the sharing of the time left.
sets=(0)
weights=(3)
[ "$ngpu" -ge 2 ] && { sets+=("0,1"); weights+=(2); }
[ "$ngpu" -ge 4 ] && { sets+=("0,1,2,3"); weights+=(2); }
[ "$ngpu" -ge 8 ] && { sets+=("0,1,2,3,4,5,6,7"); weights+=(2); }
AUTO_RESERVE=50  # tgemm alone under auto, the plans, the report
for i in "${!sets[@]}"; do
    set_=${sets[$i]}
    n=$(printf '%s' "$set_" | tr ',' '\n' | grep -c .)
    left=$((BUDGET - (SECONDS - start) - AUTO_RESERVE))
    wsum=0
    for w in "${weights[@]:$i}"; do wsum=$((wsum + w)); done
    deadline=$((left * weights[i] / wsum))
    [ "$deadline" -ge 20 ] || deadline=20
    step "g$n" "$OUT/multi_g$n.log" timeout -k 10 $((deadline + 60)) "${clean[@]}" TGEMM_DEVICES="$set_" \
        "$BIN" --sizes "$SIZES" --memory both --deadline "$deadline" --csv "$OUT/multi_g$n.csv" "${EXTRA[@]}"
done
left=$((BUDGET - (SECONDS - start) - 10))
[ "$left" -ge 20 ] || left=20
step auto "$OUT/multi_auto.log" timeout -k 10 "$left" "${clean[@]}" TGEMM_DEVICES=auto \
    "$BIN" --sizes "$SIZES" --memory both --no-xt --csv "$OUT/multi_auto.csv" "${EXTRA[@]}"

# The spread plan of one call at the largest size on the most GPUs
# (TGEMM_VERBOSE=2: the grid of blocks, each block's host plan), time permitting.
last=${sets[${#sets[@]}-1]}
n=$(printf '%s' "$last" | tr ',' '\n' | grep -c .)
largest=$(printf '%s' "$SIZES" | tr ',' '\n' | sort -n | tail -n 1)
left=$((BUDGET - (SECONDS - start) - 10))
if [ "$n" -gt 1 ] && [ "$left" -ge 30 ]; then
    step plans "$OUT/plans_g$n.log" timeout -k 10 "$left" "${clean[@]}" TGEMM_VERBOSE=2 TGEMM_DEVICES="$last" \
        "$BIN" --sizes "$largest" --memory pinned --no-xt --reps 1
fi

csvs=()
for f in "$OUT"/multi_g*.csv "$OUT"/multi_auto.csv; do [ -s "$f" ] && csvs+=("$f"); done
step report "$OUT/multi_report.log" python3 "$here/multi_report.py" --links "$OUT/links.csv" --topo "$OUT/topo.txt" \
    --md "$OUT/multi_report.md" "${csvs[@]}"
echo "total $((SECONDS - start)) s" >> "$OUT/summary.txt"
cat "$OUT/summary.txt"
exit "$first_fail"
