#!/bin/sh
# make test-gpu-probe: GPU cases skip only where no NVIDIA driver is
# installed or the driver sees no device; a driver that is there but does
# not work fails them, with CUDA's error, and so does no GPU under
# TGEMM_TEST_REQUIRE_GPU=1 (tests/gpu_probe.h). Shown on any machine with a
# stand-in libcuda.so.1 (tests/stub_libcuda.c) found through
# LD_LIBRARY_PATH, on test_gemm (a few GPU cases), test_api (one case that
# needs the GPU among CPU-only ones), has_gpu (the scripts' probe, and
# tests/blas/preload.sh, which uses it) and the demo:
#  - a driver older than the CUDA runtime (cudaErrorInsufficientDriver, as
#    CUDA also says without a driver) and one whose cuInit fails
#    (cudaErrorUnknown): every one of them fails, none skips;
#  - a driver that sees no device: GPU cases skip, the reason given once,
#    has_gpu prints 0, the demo runs only its CPU part; with
#    TGEMM_TEST_REQUIRE_GPU=1 they fail instead;
#  - no driver at all (this machine's own CUDA where no driver is
#    installed; on a machine with one, its driver hidden from the programs
#    by tests/hide_driver.sh, root only, and skipped where that cannot be
#    done): as above.
# The programs' output is kept in files, out of this script's own.
# usage: check-gpu-probe.sh BUILD_TESTS_DIR DEMO LIBTGEMM
set -eu
dir=$1 demo=$2 lib=$3
stub=$(cd "$dir/stub" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "check-gpu-probe: $*" >&2; exit 1; }
# A program's output, indented so that tests/run.sh does not count its
# CMocka lines as this script's.
show() { echo; sed 's/^/    | /' "$1"; }
unset TGEMM_TEST_REQUIRE_GPU TGEMM_STUB_CUDA TGEMM_TEST_FILTER TGEMM_DEVICE CUDA_VISIBLE_DEVICES
export TGEMM_TEST_FILTER='nn_1x*'
[ -f "$stub/libcuda.so.1" ] || fail "no $stub/libcuda.so.1"

# run NAME ENV... -- COMMAND...: COMMAND under ENV, stdout and stderr to
# $out/NAME.out (has_gpu's stdout alone to $out/NAME.stdout); sets rc.
run() {
    log=$out/$1
    shift
    vars=
    while [ "$1" != -- ]; do vars="$vars $1"; shift; done
    shift
    rc=0
    # shellcheck disable=SC2086
    env $vars "$@" > "$log.stdout" 2> "$log.stderr" || rc=$?
    cat "$log.stdout" "$log.stderr" > "$log.out"
}
has() { grep -q -e "$2" "$out/$1.out" || fail "$1: no '$2' in: $(show "$out/$1.out")"; }
hasnt() { ! grep -q -e "$2" "$out/$1.out" || fail "$1: '$2' in: $(show "$out/$1.out")"; }
failed() { [ "$rc" -ne 0 ] || fail "$1 passed, want it to fail: $(show "$out/$1.out")"; }
passed() { [ "$rc" -eq 0 ] || fail "$1 failed (exit status $rc): $(show "$out/$1.out")"; }

# A driver is installed but CUDA cannot use it: everything fails with
# CUDA's error, nothing skips.
broken() {
    mode=$1 error=$2
    env="LD_LIBRARY_PATH=$stub${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} TGEMM_STUB_CUDA=$mode"
    # shellcheck disable=SC2086
    run "$mode-gemm" $env -- "$dir/test_gemm"
    failed "$mode-gemm"; has "$mode-gemm" "no usable GPU: cudaGetDeviceCount: $error"
    hasnt "$mode-gemm" '^\[  SKIPPED \]'; hasnt "$mode-gemm" '^\[ SKIPPING \]'
    # shellcheck disable=SC2086
    run "$mode-api" $env -- "$dir/test_api"
    failed "$mode-api"; has "$mode-api" '^\[  FAILED  \] 1 test(s)'; has "$mode-api" "$error"
    # shellcheck disable=SC2086
    run "$mode-has-gpu" $env -- "$dir/has_gpu"
    failed "$mode-has-gpu"; has "$mode-has-gpu" "$error"
    [ ! -s "$out/$mode-has-gpu.stdout" ] || fail "$mode-has-gpu printed $(show "$out/$mode-has-gpu.stdout")"
    # shellcheck disable=SC2086
    run "$mode-demo" $env -- "$demo" 64
    failed "$mode-demo"; has "$mode-demo" "$error"
    # shellcheck disable=SC2086
    run "$mode-preload" $env -- sh tests/blas/preload.sh "$dir" "$lib"
    failed "$mode-preload"; has "$mode-preload" "$error"
    echo "[       OK ] a driver that CUDA cannot use ($mode): test_gemm, test_api, has_gpu, preload.sh, the demo" \
         "fail with $error"
}
broken old cudaErrorInsufficientDriver
has old-gemm "an NVIDIA driver is installed: .*libcuda.so.1\|an NVIDIA driver is installed: /proc/driver/nvidia/version"
broken broken cudaErrorUnknown

# No GPU: GPU cases skip, with the reason once; under
# TGEMM_TEST_REQUIRE_GPU=1 they fail. NAME ENV...; each program run through
# $wrap (empty, or tests/hide_driver.sh).
wrap=
absent() {
    name=$1 reason=$2
    shift 2
    run "$name-gemm" "$@" -- $wrap "$dir/test_gemm"
    passed "$name-gemm"; has "$name-gemm" '^\[  SKIPPED \] [1-9][0-9]* test(s)'
    [ "$(grep -c '^\[ SKIPPING \]' "$out/$name-gemm.out")" = 1 ] \
        || fail "$name-gemm: want one [ SKIPPING ] line: $(show "$out/$name-gemm.out")"
    has "$name-gemm" "^\[ SKIPPING \] GPU cases: $reason"
    run "$name-has-gpu" "$@" -- $wrap "$dir/has_gpu"
    passed "$name-has-gpu"; [ "$(cat "$out/$name-has-gpu.stdout")" = 0 ] \
        || fail "$name-has-gpu: $(show "$out/$name-has-gpu.out")"
    has "$name-has-gpu" "^\[ SKIPPING \] GPU runs: $reason"
    run "$name-demo" "$@" -- $wrap "$demo" 64
    passed "$name-demo"; has "$name-demo" "No CUDA GPU is visible here"
    echo "[       OK ] $name: GPU cases skip, the reason given once; has_gpu prints 0; the demo runs on the CPU"
    run "$name-require-gemm" TGEMM_TEST_REQUIRE_GPU=1 "$@" -- $wrap "$dir/test_gemm"
    failed "$name-require-gemm"; has "$name-require-gemm" "TGEMM_TEST_REQUIRE_GPU=1, but $reason"
    hasnt "$name-require-gemm" '^\[  SKIPPED \]'
    run "$name-require-has-gpu" TGEMM_TEST_REQUIRE_GPU=1 "$@" -- $wrap "$dir/has_gpu"
    failed "$name-require-has-gpu"; has "$name-require-has-gpu" "TGEMM_TEST_REQUIRE_GPU=1, but $reason"
    echo "[       OK ] $name, TGEMM_TEST_REQUIRE_GPU=1: test_gemm and has_gpu fail"
}
absent no-device "the NVIDIA driver sees no device" \
    "LD_LIBRARY_PATH=$stub${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" TGEMM_STUB_CUDA=no-device
run bad-require LD_LIBRARY_PATH="$stub" TGEMM_STUB_CUDA=no-device TGEMM_TEST_REQUIRE_GPU=yes -- "$dir/test_gemm"
failed bad-require; has bad-require "TGEMM_TEST_REQUIRE_GPU=yes: want 1"
echo "[       OK ] TGEMM_TEST_REQUIRE_GPU=yes is refused"

driver=$("$dir/has_gpu" --driver)
hide="sh $(dirname "$0")/hide_driver.sh"
if [ "$driver" = none ]; then
    absent no-driver "no NVIDIA driver is installed" TGEMM_TEST_UNUSED=
elif [ "$($hide "$dir/has_gpu" --driver 2> /dev/null)" = none ]; then
    # A driver is installed here: the programs run where it is hidden.
    echo "the NVIDIA driver here ($driver) hidden from the programs (tests/hide_driver.sh)"
    wrap=$hide
    absent no-driver "no NVIDIA driver is installed" TGEMM_TEST_UNUSED=
    wrap=
else
    echo "[ SKIPPING ] an NVIDIA driver is installed here ($driver) and cannot be hidden" \
         "(tests/hide_driver.sh needs root and unshare -m): no machine without one to show"
    echo "[  SKIPPED ] no driver installed: GPU cases skip"
    echo "[  SKIPPED ] no driver installed, TGEMM_TEST_REQUIRE_GPU=1: GPU cases fail"
fi
