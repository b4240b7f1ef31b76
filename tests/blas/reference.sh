#!/bin/sh
# make test-reference: the reference BLAS test programs (Debian's
# libblas-test) with LD_PRELOAD=libtgemm.so over reference libblas3:
# xblat3s calls SGEMM from Fortran, xscblat3 calls cblas_sgemm in both
# layouts with its own reference-style cblas_xerbla, which reads reference
# CBLAS's RowMajorStrg. Each runs its stock input and a larger one of ours
# (tests/blas/*_large*: N up to the testers' limit of 65, more alpha and
# beta values, SGEMM alone). With a GPU every call is forced onto it
# (TGEMM_OFFLOAD=gpu); without one the default policy sends them to the CPU
# BLAS, here reference SGEMM.
#
# The testers exit 0 whatever they find, so their reports are read: every
# line of the routine under test says PASSED, every tested routine passed,
# no line reports a failure, and the trace has one line per call the tester
# counted, each on the expected path.
#
# usage: reference.sh WORKDIR LIBTGEMM HAS_GPU_PROGRAM [REFBLAS_DIR]
# REFBLAS_DIR holds the testers, their inputs and reference libblas.so.3
# (Debian: /usr/lib/<multiarch>/blas); found through dpkg when not given.
set -eu
work=$1 lib=$2 has_gpu=$3 refdir=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "test-reference: $*" >&2; exit 1; }
unset TGEMM_OFFLOAD TGEMM_OFFLOAD_MIN_FLOPS TGEMM_CPU_BLAS TGEMM_TRACE TGEMM_DEVICE TGEMM_KERNEL TGEMM_VERBOSE \
      TGEMM_DEVICE_MEMORY_LIMIT TGEMM_HOST_COPY_THREADS TGEMM_HOST_TRACE LD_PRELOAD

if [ -z "$refdir" ]; then
    if command -v dpkg >/dev/null 2>&1; then
        refdir=$(dpkg -L libblas-test 2>/dev/null | sed -n 's|/xscblat3$||p' | head -n 1)
    fi
    if [ -z "$refdir" ]; then
        [ -z "${CI:-}" ] || fail "the reference BLAS testers are required in CI: install libblas-test and libblas3, or set REFBLAS_DIR"
        echo "test-reference: reference BLAS testers not found (install libblas-test and libblas3, or set REFBLAS_DIR): not run"
        echo "[ SKIPPING ] the reference BLAS testers are not installed (libblas-test, libblas3; or REFBLAS_DIR)"
        echo "[  SKIPPED ] the reference BLAS testers under LD_PRELOAD"
        exit 0
    fi
fi
[ -d "$refdir" ] || fail "REFBLAS_DIR $refdir is not a directory"
refdir=$(cd "$refdir" && pwd)
for f in xblat3s xscblat3 sblat3.in sin3 libblas.so.3; do
    [ -e "$refdir/$f" ] || fail "$refdir lacks $f (libblas-test and libblas3 unpacked there?)"
done
# Reference CBLAS, not another BLAS under its name: it defines RowMajorStrg,
# and the testers load it from there.
nm -D --defined-only "$refdir/libblas.so.3" | grep -q ' RowMajorStrg$' \
    || fail "$refdir/libblas.so.3 is not reference BLAS with CBLAS (no RowMajorStrg)"
for t in xblat3s xscblat3; do
    LD_LIBRARY_PATH=$refdir ldd "$refdir/$t" | grep -q "libblas\.so\.3 => $refdir/libblas\.so\.3 " \
        || fail "$t does not load $refdir/libblas.so.3: $(LD_LIBRARY_PATH=$refdir ldd "$refdir/$t")"
done

gpu=$("$has_gpu") || fail "$has_gpu failed (a broken CUDA driver?)"
if [ "$gpu" = 1 ]; then
    mode="TGEMM_OFFLOAD=gpu"
    paths="gpu"
else
    mode=
    paths="cpu scale"
fi
echo "test-reference: testers and reference libblas.so.3 from $refdir; ${mode:-no GPU, the default policy}"

# run NAME TESTER INPUT SUMMARY ROUTINE ENTRY LINES ROUTINES
# Runs TESTER < INPUT in WORKDIR/NAME. SUMMARY is the report file the input
# names, or - for standard output. ROUTINE is the tester's name for SGEMM,
# ENTRY the trace's, LINES how many PASSED lines ROUTINE gets, ROUTINES how
# many routines the input tests.
run() {
    name=$1 tester=$2 input=$3 summary=$4 routine=$5 entry=$6 lines=$7 routines=$8
    dir=$work/$name
    rm -rf "$dir"
    mkdir -p "$dir"
    status=0
    (cd "$dir" && env $mode LD_LIBRARY_PATH="$refdir" LD_PRELOAD="$lib" TGEMM_TRACE="$dir/trace" \
        "$refdir/$tester" < "$input" > stdout 2> stderr) || status=$?
    report=$dir/stdout
    [ "$summary" = - ] || report=$dir/$summary
    [ "$status" -eq 0 ] || fail "$name: exit status $status: $(cat "$dir/stdout" "$dir/stderr")"
    [ -f "$report" ] || fail "$name: no report $report"
    [ ! -s "$dir/stderr" ] || fail "$name: wrote to standard error: $(cat "$dir/stderr")"
    grep -q 'END OF TESTS' "$report" || fail "$name: the tests did not finish: $(cat "$report")"
    bad=$(grep -n -i -E 'fail|instead|suspect|not detected|fatal|wrong|\*\*\*' "$report" || true)
    [ -z "$bad" ] || fail "$name: $(echo "$bad" | head -n 10)"
    others=$(grep -E "^ *$routine " "$report" | grep -v ' PASSED ' || true)
    [ -z "$others" ] || fail "$name: $others"
    n=$(grep -c -E "^ *$routine +PASSED " "$report" || true)
    [ "$n" -eq "$lines" ] || fail "$name: $n PASSED lines for $routine, want $lines: $(cat "$report")"
    grep -q -E "^ *$routine +PASSED THE TESTS OF ERROR-EXITS" "$report" || fail "$name: error exits of $routine not tested"
    n=$(grep -c ' PASSED ' "$report" || true)
    want=$((routines * (lines)))
    [ "$n" -eq "$want" ] || fail "$name: $n PASSED lines, want $want: $(cat "$report")"

    # The trace: one line per call. The tester counts the calls of its
    # computational tests; its error exits each give one xerbla line.
    calls=$(sed -n "s/^ *$routine .*( *\([0-9][0-9]*\) CALLS).*/\1/p" "$report" | awk '{s += $1} END {print s + 0}')
    [ "$calls" -gt 0 ] || fail "$name: no computational calls reported"
    trace=$dir/trace
    [ -f "$trace" ] || fail "$name: no trace: libtgemm was not preloaded"
    foreign=$(grep -v "^tgemm trace: entry=$entry " "$trace" | head -n 3 || true)
    [ -z "$foreign" ] || fail "$name: trace lines not of $entry: $foreign"
    traced=$(grep -c -v ' path=xerbla:' "$trace" || true)
    [ "$traced" -eq "$calls" ] || fail "$name: $traced calls traced, the tester made $calls"
    errors=$(grep -c ' path=xerbla:' "$trace" || true)
    [ "$errors" -gt 0 ] || fail "$name: no error exits reached libtgemm"
    pattern=' path=(quick-return|xerbla:[0-9]+'
    for p in $paths; do pattern="$pattern|$p"; done
    pattern="$pattern) "
    off=$(grep -v -E "$pattern" "$trace" | head -n 3 || true)
    [ -z "$off" ] || fail "$name: trace lines off the expected paths ($paths): $off"
    main=$(grep -c " path=${paths%% *} " "$trace" || true)
    [ "$main" -gt 0 ] || fail "$name: no call took path=${paths%% *}"
    echo "$name: $(grep -E "^ *$routine +PASSED" "$report" | sed 's/^ *//' | tr -s ' ' | paste -s -d ';' -)"
    echo "$name: trace: $(sed -n 's/.* path=\([^ :]*\).*/\1/p' "$trace" | sort | uniq -c | awk '{printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $2}')"
    echo "[       OK ] $name (${mode:-default policy})"
}

run xblat3s xblat3s "$refdir/sblat3.in" sblat3.out SGEMM sgemm_ 2 6
run xscblat3 xscblat3 "$refdir/sin3" - cblas_sgemm cblas_sgemm 3 6
run xblat3s-large xblat3s "$here/sblat3_large.in" sblat3_large.out SGEMM sgemm_ 2 1
run xscblat3-large xscblat3 "$here/sin3_large" - cblas_sgemm cblas_sgemm 3 1
[ "$gpu" = 1 ] || echo "[  SKIPPED ] the reference BLAS testers with the GPU forced"
echo "test-reference: OK"
