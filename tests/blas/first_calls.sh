#!/bin/sh
# make test-first-calls: the process's first BLAS calls where tgemm's
# one-time set-up could hang the program (tests/blas/first_calls.c), under
# LD_PRELOAD=libtgemm.so with the default settings (TGEMM_OFFLOAD=auto):
#  - a library whose constructor calls cblas_sgemm, loaded by one thread
#    while another makes the process's first call (the CPU BLAS lookup
#    takes the dynamic loader's lock, which the loading thread holds);
#  - a fork() while another thread measures the CPU BLAS for the offload
#    model, the child then making a call the model weighs;
#  - a fork() while another thread's bad call is in the program's
#    cblas_xerbla (tgemm then holds the lock RowMajorStrg's writes take), the
#    child making a bad call and a valid one;
#  - TGEMM_TRACE=DIR/trace.%p, a call, a fork(), a call in the child: each
#    process's line in its own file.
# Each case waits for the moment it tests (the constructor under way, the
# measurement's first product logged by the stand-in BLAS of
# tests/blas/fake_blas.c) rather than sleeping. OpenBLAS runs on one thread
# (OPENBLAS_NUM_THREADS=1): its own thread pool across fork() is not what
# is tested. A hang fails at the timeout.
# usage: first_calls.sh BUILD_TESTS_DIR LIBTGEMM_FILE
set -u
dir=$1 lib=$2
here=$(dirname "$0")
. "$here/../check_lib.sh"
unset TGEMM_OFFLOAD TGEMM_OFFLOAD_MIN_FLOPS TGEMM_OFFLOAD_CPU_GFLOPS TGEMM_CPU_BLAS TGEMM_TRACE TGEMM_VERBOSE \
      LD_LIBRARY_PATH
export OPENBLAS_NUM_THREADS=1
run() {
    prog=$dir/first_calls
    [ "$1" != fork ] || prog=$dir/first_calls_fake
    LD_PRELOAD=$lib timeout 60 "$prog" "$@" > "$tmp/out" 2>&1
    status=$?
    cat "$tmp/out"
    [ "$status" -eq 0 ]
}
export FIRST_CALLS_MARK="$tmp/constructing" FAKE_BLAS_LOG="$tmp/fake.log"
check "a library's constructor calls cblas_sgemm while another thread makes the first call" \
    run loader "$dir/libfirst_calls_plugin.so"
check "a child forked while the CPU BLAS is measured makes its own weighed call" run fork
unset FIRST_CALLS_MARK FAKE_BLAS_LOG
check "a child forked while another thread's error handler runs reports its own error" run handler-fork
mkdir -p "$tmp/trace"
export TGEMM_TRACE="$tmp/trace/trace.%p"
check "TGEMM_TRACE's %p: a child forked after its parent's first line writes its own file" run trace "$tmp/trace"
unset TGEMM_TRACE
exit $failed
