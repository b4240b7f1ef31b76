#!/usr/bin/env bash
# Build and run the Ozaki-II GPU prototype: bit-for-bit checks against the
# CPU model, FP64 errors, timings. Log in $OUT/ozaki2_gpu.log (default ./out).
# Usage (repository root, H100): bash research/ozaki/gpu/run.sh
set -uo pipefail
cd "$(dirname "$0")"
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
LOG=$OUT/ozaki2_gpu.log
: > "$LOG"
log() { echo "$@" | tee -a "$LOG"; }
run() { log "\$ $*"; "$@" 2>&1 | tee -a "$LOG"; local rc=${PIPESTATUS[0]}; log "rc=$rc"; return $rc; }

fail=0
log "== $(date -u +%FT%TZ) $(git rev-parse --short HEAD 2>/dev/null) =="
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv 2>&1 | tee -a "$LOG"
run make -j4 || { log "BUILD FAILED"; exit 2; }
run ./ozaki2_gpu --host-check -N 7 || fail=1   # CPU-only emulation (no GPU needed)

# 1. Bit-for-bit against the CPU model (default cases: 256^3, 512x384x1000
#    with ld padding and alpha/beta, 1024^3, TT 200x136x300, k-scaled,
#    subnormal, alpha = 0), N = 7 and 8, two phi.
run ./ozaki2_gpu -N 7 --phi 0.5 || fail=1
run ./ozaki2_gpu -N 8 --phi 1 || fail=1
run ./ozaki2_gpu -N 6 --phi 2 256x256x256 || fail=1
# Wider exponent ranges: the certificate must agree with the model's where
# it certifies only a larger N (phi 2) or nothing (phi 4).
run ./ozaki2_gpu -N 8 --phi 2 512x512x512 384x96x1024 || fail=1
run ./ozaki2_gpu -N 8 --phi 4 256x256x256 || fail=1
# K past one int32 block of either GEMM (reduction inside the K loop).
run ./ozaki2_gpu -N 7 --phi 1 64x200x140000 || fail=1
# The mma.sync kernel, for comparison.
run ./ozaki2_gpu -N 7 --phi 0.5 --gemm mma || fail=1
if [ $fail -ne 0 ]; then
    # Diagnostic: the same with plain 32-bit shared loads instead of ldmatrix.
    log "== checks failed: rerunning with the LDS (no ldmatrix) variant =="
    run ./ozaki2_gpu_lds -N 7 --phi 0.5 || true
fi

# 2. Timings (FP64 errors on 48 sampled columns, GEMM residues sampled).
run ./ozaki2_gpu -N 7 --phi 0.5 --time --reps 5 || fail=1
run ./ozaki2_gpu -N 7 --phi 1 --time --reps 3 8192x8192x8192 || fail=1
run ./ozaki2_gpu -N 8 --phi 1 --time --reps 3 8192x8192x8192 || fail=1
run ./ozaki2_gpu -N 7 --phi 0.5 --time --reps 3 --gemm mma 8192x8192x8192 || fail=1
run ./ozaki2_gpu -N 7 --phi 0.5 --time --reps 3 16384x16384x16384 1024x1024x1024 || fail=1

log "== done: $([ $fail -eq 0 ] && echo ALL OK || echo FAILURES) =="
exit $fail
