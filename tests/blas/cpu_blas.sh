#!/bin/sh
# make test-cpu-blas: which CPU BLAS the BLAS ABI forwards to when the
# program brings none that tgemm can reach (src/blas/cpu_blas.cpp).
#  - A program linked `-ltgemm -lopenblas` with --as-needed: the linker drops
#    OpenBLAS (libtgemm defines every symbol the program uses), so nothing
#    after libtgemm defines sgemm_. tgemm must find the system's OpenBLAS:
#    results bit for bit OpenBLAS's, path=cpu, never the built-in loops, and
#    TGEMM_VERBOSE=1 names the library. TGEMM_OFFLOAD=gpu without a GPU:
#    every call falls back, with exactly one warning line.
#  - The search order and what it rejects, with the candidates' names
#    (libopenblas.so.0, libflexiblas.so.3, libblas.so.3) placed first on
#    LD_LIBRARY_PATH as links to libtgemm itself, copies of it, a library
#    without sgemm_ and a stand-in BLAS that logs its calls
#    (tests/blas/fake_blas.c).
#  - TGEMM_CPU_BLAS: the library it names or none; the program's own BLAS
#    (found after libtgemm under LD_PRELOAD) before both.
#  - TGEMM_TRACE naming a file that cannot be opened: one line says so, the
#    trace goes to stderr.
#  - A BLAS's own error handlers, in a library it needs, are not the
#    program's: never called (they exit); tgemm's defaults print instead.
# usage: cpu_blas.sh BUILD_TESTS_DIR LIBTGEMM_FILE HAS_GPU_PROGRAM
set -eu
dir=$1 lib=$2 has_gpu=$3
fail() { echo "test-cpu-blas: $*" >&2; exit 1; }
unset TGEMM_OFFLOAD TGEMM_OFFLOAD_MIN_FLOPS TGEMM_CPU_BLAS TGEMM_TRACE TGEMM_DEVICE TGEMM_KERNEL TGEMM_VERBOSE \
      LD_PRELOAD LD_LIBRARY_PATH FAKE_BLAS_LOG
work=$dir/cpu_blas
rm -rf "$work"
mkdir -p "$work"
trace=$work/trace err=$work/stderr log=$work/fake.log
gpu=$("$has_gpu")
fake=$dir/fakeblas/libfakeblas.so nosgemm=$dir/fakeblas/libnosgemm.so callback=$dir/fakeblas/libcallback.so

# paths: the path= of each traced multiply, counted.
paths() { sed -n 's/.* path=\([^ ]*\) .*/\1/p' "$trace" | grep -v '^xerbla:' | sort | uniq -c | tr -s ' \n' ' '; }
# only_path P: every multiply in the trace took path P, and there was one.
only_path() {
    others=$(grep -v -e ' path=xerbla:' -e " path=$1 " "$trace" || true)
    [ -z "$others" ] || fail "trace lines without path=$1: $(echo "$others" | head -3)"
    grep -q " path=$1 " "$trace" || fail "no path=$1 in the trace"
}
# stderr_lines N: stderr has exactly N lines.
stderr_lines() { [ "$(wc -l < "$err")" -eq "$1" ] || fail "want $1 line(s) on stderr, got: $(cat "$err")"; }

prog=$dir/aslinked_prog
echo "== $prog: linked -ltgemm -lopenblas with --as-needed"
needed=$(readelf -d "$prog" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
echo "NEEDED: $needed"
case $needed in *libtgemm.so*) ;; *) fail "$prog does not need libtgemm" ;; esac
case $needed in *libopenblas*) fail "the linker kept libopenblas: --as-needed did not drop it, so this is not the case under test" ;; esac

echo "== TGEMM_OFFLOAD=cpu TGEMM_VERBOSE=1: forwarded to the system's OpenBLAS"
rm -f "$trace"
TGEMM_OFFLOAD=cpu TGEMM_TRACE=$trace TGEMM_VERBOSE=1 "$prog" exact reference 2> "$err" || fail "$(cat "$err")"
only_path cpu
stderr_lines 1
grep -q "^tgemm: CPU BLAS: .*libopenblas\.so\.0 (the system's, found as libopenblas\.so\.0)$" "$err" \
    || fail "TGEMM_VERBOSE=1 does not name the system's OpenBLAS: $(cat "$err")"
echo "paths: $(paths); $(cat "$err")"

echo "== TGEMM_TRACE naming a file that cannot be opened: said once, the trace on stderr"
TGEMM_OFFLOAD=cpu TGEMM_TRACE=$work/missing/trace "$prog" exact reference 2> "$err" || fail "$(cat "$err")"
[ "$(grep -c "^tgemm: TGEMM_TRACE=$work/missing/trace cannot be opened (No such file or directory); tracing to stderr\$" "$err")" -eq 1 ] \
    || fail "want one line saying the trace file cannot be opened: $(grep -v 'tgemm trace: ' "$err" | head -3)"
[ "$(grep -c '^tgemm trace: ' "$err")" -gt 1 ] || fail "the trace lines are not on stderr: $(head -3 "$err")"
[ "$(grep -vc '^tgemm trace: ' "$err")" -eq 1 ] || fail "stderr holds other lines: $(grep -v '^tgemm trace: ' "$err" | head -3)"

echo "== default settings: small calls on the CPU BLAS, never the built-in loops, nothing on stderr"
rm -f "$trace"
if [ "$gpu" = 1 ]; then mode=bound; else mode=exact; fi
TGEMM_TRACE=$trace "$prog" $mode reference 2> "$err" || fail "$(cat "$err")"
stderr_lines 0
! grep -q ' path=builtin ' "$trace" || fail "calls ran on the built-in loops: $(paths)"
grep ' m=1 n=1 k=1 ' "$trace" | grep -q ' path=cpu ' || fail "1x1x1 did not go to the CPU BLAS: $(paths)"
# The 1024^3 product: on the GPU (or falling back from it) where the model
# puts the GPU ahead, by more than the GPU's start (0.3 s,
# kGpuStartSeconds in src/blas/offload_model.hpp) with what the earlier
# `cold` calls would have saved (at most the sum of their estimates' gaps),
# unless an earlier call started it; else on the CPU BLAS with the reason:
# the model (the CPU ahead) or cold (the GPU ahead by less than its start,
# not yet started).
grep -q ' m=1024 n=1024 k=1024 ' "$trace" || fail "no trace line for 1024^3: $(paths)"
verdict=$(awk '{
    delete v
    for (i = 1; i <= NF; ++i) { split($i, kv, "="); v[kv[1]] = substr($i, length(kv[1]) + 2) }
    gain = (v["est_cpu_us"] - v["est_gpu_us"]) * 1e-6
    if (!($0 ~ / m=1024 n=1024 k=1024 /)) {
        if (v["path"] == "gpu") warm = 1
        if (v["auto"] == "cold" && gain > 0) saved += gain
        next
    }
    if (v["path"] == "gpu" || v["path"] == "cpu-fallback:no-device")
        ok = (v["auto"] == "model" || v["auto"] == "learned") && gain > 0 && (warm || saved + gain >= 0.3)
    else if (v["path"] == "cpu")
        ok = gain <= 0 || (v["auto"] == "cold" && !warm && gain < 0.3) || v["auto"] == "learned"
    print (ok ? "ok" : "wrong") " path=" v["path"] " auto=" v["auto"] " gain=" gain " s, earlier cold gains " saved " s" \
        (warm ? " (GPU started before)" : "")
    exit }' "$trace")
case $verdict in
ok*) ;;
*) fail "1024^3 ran where the policy does not put it: $verdict: $(grep ' m=1024 n=1024 k=1024 ' "$trace" | head -n 1)" ;;
esac
echo "paths: $(paths); 1024^3: $verdict"

echo "== TGEMM_OFFLOAD=gpu"
rm -f "$trace"
TGEMM_OFFLOAD=gpu TGEMM_TRACE=$trace "$prog" $mode reference 2> "$err" || fail "$(cat "$err")"
if [ "$gpu" = 1 ]; then
    only_path gpu
    stderr_lines 0
else
    only_path cpu-fallback:no-device
    stderr_lines 1
    grep -q "^tgemm: TGEMM_OFFLOAD=gpu, but the GPU could not run a BLAS call (.*); calls it cannot run go to .*libopenblas\.so\.0$" \
        "$err" || fail "not the one warning wanted: $(cat "$err")"
    echo "warning: $(cat "$err")"
fi
echo "paths: $(paths)"

# Candidates on LD_LIBRARY_PATH, which the loader searches before its cache.
# fixture NAME OPENBLAS FLEXIBLAS BLAS: $work/NAME holds libopenblas.so.0,
# libflexiblas.so.3 and libblas.so.3 made as each argument says: `self`
# links to the libtgemm in use, `copy` is a copy of it (another file),
# `nosgemm` a library without sgemm_, `fake` the stand-in BLAS.
fixture() {
    d=$work/$1
    mkdir -p "$d"
    shift
    for name in libopenblas.so.0 libflexiblas.so.3 libblas.so.3; do
        case $1 in
        self) ln -s "$lib" "$d/$name" ;;
        copy) cp "$lib" "$d/$name" ;;
        nosgemm) ln -s "$nosgemm" "$d/$name" ;;
        fake) ln -s "$fake" "$d/$name" ;;
        callback) ln -s "$callback" "$d/$name" ;;
        *) fail "fixture: $1" ;;
        esac
        shift
    done
}
# run_prog PROGRAM ENV...: runs it with TGEMM_OFFLOAD=cpu, the trace and
# the stand-in's log; it must pass, with its 5 products on path $want.
run_prog() {
    p=$1
    shift
    rm -f "$trace" "$log"
    env "$@" TGEMM_OFFLOAD=cpu TGEMM_TRACE="$trace" FAKE_BLAS_LOG="$log" "$p" > "$work/out" 2> "$err" \
        || fail "$p: $(cat "$work/out" "$err")"
    grep -q '^cpu_blas_prog: PASS (5 products)$' "$work/out" || fail "$(cat "$work/out")"
    [ "$(grep -c " path=$want " "$trace")" -eq 5 ] || fail "want 5 calls with path=$want: $(cat "$trace")"
}
# chosen LIBRARY HOW: the stand-in ran all 5 products, and TGEMM_VERBOSE=1
# named LIBRARY as the CPU BLAS, found HOW, on the only line of stderr.
chosen() {
    [ "$(wc -l < "$log" 2>/dev/null || echo 0)" -eq 5 ] || fail "the stand-in BLAS did not run the 5 products"
    stderr_lines 1
    [ "$(cat "$err")" = "tgemm: CPU BLAS: $1 ($2)" ] || fail "want 'tgemm: CPU BLAS: $1 ($2)', got: $(cat "$err")"
    echo "$(cat "$err")"
}
prog=$dir/cpu_blas_prog
want=cpu

echo "== search: libopenblas.so.0 first"
fixture first fake fake fake
run_prog "$prog" LD_LIBRARY_PATH="$work/first" TGEMM_VERBOSE=1
chosen "$work/first/libopenblas.so.0" "the system's, found as libopenblas.so.0"

echo "== search: libflexiblas.so.3 when libopenblas.so.0 has no sgemm_"
fixture second nosgemm fake self
run_prog "$prog" LD_LIBRARY_PATH="$work/second" TGEMM_VERBOSE=1
chosen "$work/second/libflexiblas.so.3" "the system's, found as libflexiblas.so.3"

echo "== search: libblas.so.3 when the others are libtgemm itself and a copy of it"
fixture third self copy fake
run_prog "$prog" LD_LIBRARY_PATH="$work/third" TGEMM_VERBOSE=1
chosen "$work/third/libblas.so.3" "the system's, found as libblas.so.3"

echo "== search: none usable: the built-in loops, one warning giving each reason"
fixture none self copy nosgemm
want=builtin
run_prog "$prog" LD_LIBRARY_PATH="$work/none"
stderr_lines 1
grep -q "libopenblas\.so\.0: sgemm_ is libtgemm's own" "$err" || fail "no reason for libopenblas.so.0: $(cat "$err")"
grep -q "libflexiblas\.so\.3: a copy of libtgemm" "$err" || fail "no reason for libflexiblas.so.3: $(cat "$err")"
grep -q "libblas\.so\.3: no sgemm_" "$err" || fail "no reason for libblas.so.3: $(cat "$err")"
grep -q 'TGEMM_CPU_BLAS' "$err" || fail "the warning does not name TGEMM_CPU_BLAS: $(cat "$err")"
echo "warning: $(cat "$err")"

echo "== a CPU BLAS that calls back into tgemm: the inner calls on the built-in loops, one warning"
fixture loop callback fake fake
rm -f "$trace" "$log"
env LD_LIBRARY_PATH="$work/loop" TGEMM_OFFLOAD=cpu TGEMM_TRACE="$trace" FAKE_BLAS_LOG="$log" "$prog" \
    > "$work/out" 2> "$err" || fail "call back: $(cat "$work/out" "$err")"
grep -q '^cpu_blas_prog: PASS (5 products)$' "$work/out" || fail "call back: $(cat "$work/out")"
[ "$(grep -c ' path=cpu ' "$trace")" -eq 5 ] || fail "call back: want 5 outer calls on path=cpu: $(cat "$trace")"
[ "$(grep -c ' path=builtin ' "$trace")" -eq 5 ] || fail "call back: want 5 inner calls on path=builtin: $(cat "$trace")"
stderr_lines 1
grep -q 'calls back into tgemm' "$err" || fail "call back: $(cat "$err")"
echo "warning: $(cat "$err")"

echo "== TGEMM_CPU_BLAS names a missing library: that one or none, never the system's"
run_prog "$prog" TGEMM_CPU_BLAS=/nonexistent/libnoblas.so.0
stderr_lines 1
grep -q 'TGEMM_CPU_BLAS: /nonexistent/libnoblas\.so\.0' "$err" || fail "$(cat "$err")"
echo "warning: $(cat "$err")"

echo "== TGEMM_CPU_BLAS before the system's"
want=cpu
run_prog "$prog" TGEMM_CPU_BLAS="$work/first/libblas.so.3" TGEMM_VERBOSE=1
chosen "$work/first/libblas.so.3" "TGEMM_CPU_BLAS"

echo "== the program's own BLAS, under LD_PRELOAD, before TGEMM_CPU_BLAS and the system's"
ldd "$dir/cpu_blas_prog_fake" | grep -q libfakeblas || fail "cpu_blas_prog_fake is not linked against the stand-in"
run_prog "$dir/cpu_blas_prog_fake" LD_PRELOAD="$lib" TGEMM_CPU_BLAS=libopenblas.so.0 TGEMM_VERBOSE=1
chosen "$fake" "loaded after libtgemm"
echo "== a BLAS whose exiting handlers lie in a library it needs: not called, the program goes on"
# As Debian's libblas.so.3 from OpenBLAS, whose cblas_xerbla is in
# libopenblas.so.0: handlers_prog defines none, libfakewrap.so (its BLAS)
# needs libfakecore.so, whose xerbla_ and cblas_xerbla exit with 99.
ldd "$dir/handlers_prog" | grep -q libfakecore || fail "handlers_prog does not load libfakecore.so"
LD_PRELOAD="$lib" TGEMM_OFFLOAD=cpu "$dir/handlers_prog" > "$work/out" 2> "$err" \
    || fail "handlers_prog stopped (status $?): $(cat "$work/out" "$err")"
grep -q '^handlers_prog: went on after 3 bad calls, C untouched$' "$work/out" || fail "$(cat "$work/out")"
stderr_lines 4
grep -q '^ \*\* On entry to SGEMM parameter number  3 had an illegal value$' "$err" || fail "$(cat "$err")"
grep -q '^Parameter 1 to routine cblas_sgemm was incorrect$' "$err" || fail "$(cat "$err")"
grep -q '^Parameter 5 to routine cblas_sgemm was incorrect$' "$err" || fail "$(cat "$err")"
echo "default messages: $(tr '\n' '|' < "$err")"

[ "$gpu" = 1 ] && echo "[       OK ] the CPU BLAS tgemm finds, its search order, and the GPU runs" \
    || { echo "[       OK ] the CPU BLAS tgemm finds and its search order"; echo "[  SKIPPED ] the GPU runs"; }
echo "test-cpu-blas: OK"
