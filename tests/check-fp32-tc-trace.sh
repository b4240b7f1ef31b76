#!/bin/sh
# make test-fp32-tc: what the fp32-tc math says about itself. Runs the GPU
# test program again with TGEMM_TRACE and TGEMM_VERBOSE=2 and checks that
#  - the trace lines of sgemm_ and cblas_sgemm carry math=fp32-tc:N;
#  - TGEMM_VERBOSE=2 has a "tgemm: math ... fp32-tc moduli=N" line, and the
#    strict path's reasons for the uncertified (phi = 4) and Inf/NaN calls.
# Skips where no GPU is visible (has_gpu decides, as for the other scripts).
# usage: check-fp32-tc-trace.sh TEST_PROGRAM HAS_GPU SCRATCH_DIR
set -eu
prog=$1 has_gpu=$2 dir=$3
gpu=$("$has_gpu") || exit 1
if [ "$gpu" != 1 ]; then
    echo "[  SKIPPED ] fp32-tc trace and TGEMM_VERBOSE=2 lines: no GPU"
    exit 0
fi
trace=$dir/fp32_tc.trace
rm -f "$trace"
rc=0
TGEMM_TRACE="$trace" TGEMM_VERBOSE=2 "$prog" > "$dir/fp32_tc.out" 2> "$dir/fp32_tc.err" || rc=$?
if [ "$rc" != 0 ]; then
    echo "[  FAILED  ] $prog under TGEMM_TRACE and TGEMM_VERBOSE=2: exit status $rc (output in $dir/fp32_tc.out)"
    exit 1
fi
status=0
expect() {  # expect FILE PATTERN WHAT
    if grep -Eq "$2" "$1"; then
        echo "[       OK ] $3"
    else
        echo "[  FAILED  ] $3: no line matching '$2' in $1"
        status=1
    fi
}
expect "$trace" 'entry=sgemm_ .* math=fp32-tc:[0-9]+' "trace: sgemm_ says math=fp32-tc:N"
expect "$trace" 'entry=cblas_sgemm .* math=fp32-tc:[0-9]+' "trace: cblas_sgemm says math=fp32-tc:N"
expect "$dir/fp32_tc.err" '^tgemm: math m=[0-9]+ n=[0-9]+ k=[0-9]+ fp32-tc moduli=[0-9]+$' "verbose: the mode and its N"
expect "$dir/fp32_tc.err" 'strict \(fp32-tc declined: uncertified\)' "verbose: strict where nothing is certified"
expect "$dir/fp32_tc.err" 'strict \(fp32-tc declined: inf-nan\)' "verbose: strict for Inf and NaN"
exit $status
