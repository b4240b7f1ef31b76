#!/bin/sh
# make test-preload: a program linked only against OpenBLAS, run plain and
# with LD_PRELOAD=libtgemm.so, forwarding (TGEMM_OFFLOAD=cpu) and on the GPU
# (TGEMM_OFFLOAD=gpu; without a GPU every call must fall back to the CPU,
# and the run on the GPU counts as skipped; a GPU setup that is there but
# broken fails, see tests/blas/has_gpu.c), there also in the fp32-tc math
# (TGEMM_MATH=fp32-tc). Also a program with cblas_xerbla alone, and the
# default xerbla handlers, preloaded and linked directly. Each check ends with a line
# "[       OK ] ..." for make test's summary.
# usage: preload.sh BUILD_TESTS_DIR LIBTGEMM
set -eu
dir=$1 lib=$2
fail() { echo "test-preload: $*" >&2; exit 1; }
unset TGEMM_OFFLOAD TGEMM_OFFLOAD_MIN_FLOPS TGEMM_CPU_BLAS TGEMM_TRACE TGEMM_DEVICE TGEMM_KERNEL TGEMM_VERBOSE LD_PRELOAD
trace=$dir/preload.trace
err=$dir/preload.stderr

# The program uses OpenBLAS and nothing else.
ldd "$dir/preload_prog" | grep -q libopenblas || fail "preload_prog is not linked against OpenBLAS"
! ldd "$dir/preload_prog" | grep -q libtgemm || fail "preload_prog must not be linked against libtgemm"

gpu=$("$dir/has_gpu") || fail "the GPU cannot be used, and this is no machine without one (above)"

echo "== plain (OpenBLAS alone)"
"$dir/preload_prog" exact
echo "[       OK ] plain, OpenBLAS alone"

# Every multiply line of the trace must show `want` ($1), and both entry
# points must appear.
check_trace() {
    want=$1
    grep -q 'entry=sgemm_ .*path=' "$trace" || fail "no sgemm_ lines in the trace"
    grep -q 'entry=cblas_sgemm layout=col .*path=' "$trace" || fail "no column-major cblas_sgemm lines in the trace"
    grep -q 'entry=cblas_sgemm layout=row .*path=' "$trace" || fail "no row-major cblas_sgemm lines in the trace"
    others=$(grep -v -e 'path=xerbla:' -e "path=$want " "$trace" || true)
    [ -z "$others" ] || fail "trace lines without path=$want: $(echo "$others" | head -3)"
    grep -q "path=$want " "$trace" || fail "no path=$want lines in the trace"
    echo "trace: $(grep -c "path=$want " "$trace") calls with path=$want"
}

echo "== LD_PRELOAD, TGEMM_OFFLOAD=cpu: forwarded to OpenBLAS"
rm -f "$trace"
LD_PRELOAD=$lib TGEMM_OFFLOAD=cpu TGEMM_TRACE=$trace "$dir/preload_prog" exact reference
check_trace cpu
echo "[       OK ] LD_PRELOAD, TGEMM_OFFLOAD=cpu: forwarded to OpenBLAS"

echo "== LD_PRELOAD, TGEMM_OFFLOAD=gpu"
rm -f "$trace"
if [ "$gpu" = 1 ]; then
    LD_PRELOAD=$lib TGEMM_OFFLOAD=gpu TGEMM_TRACE=$trace "$dir/preload_prog" bound reference
    check_trace gpu
    echo "[       OK ] LD_PRELOAD, TGEMM_OFFLOAD=gpu: on the GPU"
    # The fp32-tc math through TGEMM_MATH alone, forced onto the program's
    # small products: the same bounds, and the trace names the math.
    echo "== LD_PRELOAD, TGEMM_OFFLOAD=gpu, TGEMM_MATH=fp32-tc"
    rm -f "$trace"
    LD_PRELOAD=$lib TGEMM_OFFLOAD=gpu TGEMM_MATH=fp32-tc TGEMM_FP32_TC=always TGEMM_TRACE=$trace \
        "$dir/preload_prog" bound reference
    check_trace gpu
    grep -q 'path=gpu math=fp32-tc:[0-9]' "$trace" || fail "no call ran in the fp32-tc math: $(head -3 "$trace")"
    echo "[       OK ] LD_PRELOAD, TGEMM_MATH=fp32-tc: $(grep -c 'math=fp32-tc:' "$trace") calls on the tensor cores"
else
    LD_PRELOAD=$lib TGEMM_OFFLOAD=gpu TGEMM_TRACE=$trace "$dir/preload_prog" exact reference
    check_trace cpu-fallback:no-device
    echo "[       OK ] LD_PRELOAD, TGEMM_OFFLOAD=gpu without a GPU: every call falls back to the CPU"
    echo "[  SKIPPED ] LD_PRELOAD, TGEMM_OFFLOAD=gpu: on the GPU"
    echo "[  SKIPPED ] LD_PRELOAD, TGEMM_MATH=fp32-tc: on the tensor cores"
fi

# cblas_xerbla alone in the program (no xerbla_): cblas_sgemm's dimension
# errors reach it as reference CBLAS's own xerbla_ passes them (SGEMM's
# number + 1, "cblas_sgemm "), RowMajorStrg as for the others; nothing on
# stderr. Preloaded (OpenBLAS's xerbla_ in the process is no handler of the
# program's) and linked with libtgemm.
echo "== cblas_xerbla alone in the program, preloaded and linked"
LD_PRELOAD=$lib TGEMM_OFFLOAD=cpu "$dir/preload_prog_cblasonly" exact reference 2> "$err" || fail "$(cat "$err")"
[ ! -s "$err" ] || fail "unexpected stderr: $(cat "$err")"
TGEMM_OFFLOAD=cpu TGEMM_CPU_BLAS=libopenblas.so.0 "$dir/direct_prog_cblasonly" exact reference 2> "$err" \
    || fail "$(cat "$err")"
[ ! -s "$err" ] || fail "unexpected stderr: $(cat "$err")"
echo "[       OK ] cblas_xerbla alone in the program: dimension errors as reference CBLAS's xerbla_ passes them"

# Without handlers of the program's own: the weak xerbla_ / cblas_xerbla
# references bind to OpenBLAS's, which tgemm does not call (OpenBLAS's
# cblas_xerbla exits); its defaults print the reference text and return,
# naming the caller's argument: a row-major call's bad N is argument 5
# (reference CBLAS passes 4 and its cblas_xerbla maps it back to 5).
check_default_messages() {
    grep -q '^ \*\* On entry to SGEMM parameter number  3 had an illegal value$' "$err" \
        || fail "no reference xerbla_ message: $(cat "$err")"
    grep -q '^Parameter 1 to routine cblas_sgemm was incorrect$' "$err" || fail "no cblas layout message: $(cat "$err")"
    grep -q '^Illegal layout setting, 7$' "$err" || fail "no 'Illegal layout setting' line: $(cat "$err")"
    grep -q '^Parameter 5 to routine cblas_sgemm was incorrect$' "$err" || fail "no cblas N message: $(cat "$err")"
    [ "$(wc -l < "$err")" -eq 4 ] || fail "unexpected stderr: $(cat "$err")"
}
echo "== LD_PRELOAD, no handlers in the program"
LD_PRELOAD=$lib TGEMM_OFFLOAD=cpu "$dir/preload_prog_nohandlers" 2> "$err"
check_default_messages
echo "[       OK ] LD_PRELOAD, no handlers in the program: the default messages"
echo "== linked with libtgemm, no handlers in the program"
TGEMM_OFFLOAD=cpu TGEMM_CPU_BLAS=libopenblas.so.0 "$dir/direct_prog_nohandlers" 2> "$err"
check_default_messages
echo "[       OK ] linked with libtgemm, no handlers in the program: the default messages"
echo "test-preload: OK"
