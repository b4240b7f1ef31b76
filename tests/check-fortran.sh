#!/bin/sh
# make test-fortran: Fortran programs against a staged install (make
# test-install), with nothing but pkg-config's flags.
#  - examples/fortran/sgemm_example.f90 calls SGEMM: through the CPU BLAS
#    named by TGEMM_CPU_BLAS, with the GPU forced (on the GPU, or falling
#    back to the CPU without one, with one warning line), through the
#    system's CPU BLAS that tgemm finds itself (the program links no BLAS),
#    and with TGEMM_CPU_BLAS naming a missing library, which leaves no CPU
#    BLAS at all (the built-in loops, and exactly one warning line naming
#    TGEMM_CPU_BLAS);
#  - examples/fortran/native_example.f90 uses the ISO_C_BINDING module
#    installed as include/tgemm.f90;
#  - the module's constants equal the header's.
# Without a GPU the runs on the GPU count as skipped (their fallbacks are
# checked instead); a GPU setup that is there but broken fails (see
# tests/blas/has_gpu.c). Each check ends with a line "[       OK ] ..."
# for make test's summary.
# usage: check-fortran.sh DESTDIR PREFIX FC HAS_GPU_PROGRAM
set -eu
destdir=$1 prefix=$2 fc=$3 has_gpu=$4
root=$destdir$prefix
fail() { echo "check-fortran: $*" >&2; exit 1; }
unset TGEMM_OFFLOAD TGEMM_OFFLOAD_MIN_FLOPS TGEMM_CPU_BLAS TGEMM_TRACE TGEMM_DEVICE TGEMM_KERNEL TGEMM_VERBOSE LD_PRELOAD

[ -f "$root/include/tgemm.f90" ] || fail "missing $prefix/include/tgemm.f90"
export PKG_CONFIG_PATH="$root/lib/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$destdir"
libdir=$(pkg-config --variable=libdir tgemm)
case $libdir in "$destdir"/*) ;; *) libdir=$destdir$libdir ;; esac  # pkgconf adds the sysroot, pkg-config does not
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
gpu=$("$has_gpu") || fail "the GPU cannot be used, and this is no machine without one (above)"

# The module's parameters are the header's macros and enum values.
sed -n -e 's/^#define \(TGEMM_VERSION_[A-Z]*\) \([0-9][0-9]*\).*/\1=\2/p' \
       -e 's/^ *\(TGEMM_[A-Z0-9_]*\) = \([0-9][0-9]*\),\{0,1\} .*/\1=\2/p' include/tgemm.h | sort > "$out/header.txt"
sed -n 's/^ *integer(c_int), parameter :: \(TGEMM_[A-Z0-9_]*\) = \([0-9]*\)$/\1=\2/p' "$root/include/tgemm.f90" \
    | sort > "$out/module.txt"
[ -s "$out/header.txt" ] || fail "no constants found in include/tgemm.h"
diff -u "$out/header.txt" "$out/module.txt" || fail "tgemm.f90's constants differ from tgemm.h's"
echo "[       OK ] tgemm.f90's constants equal tgemm.h's"
# And it binds every function of the header.
sed -n 's/^TGEMM_API [^(]*[ *]\(tgemm_[a-z_]*\)(.*/\1/p' include/tgemm.h | sort > "$out/functions.txt"
sed -n "s/.*bind(c, name='\(tgemm_[a-z_]*\)').*/\1/p" "$root/include/tgemm.f90" | sort > "$out/bound.txt"
[ "$(wc -l < "$out/functions.txt")" -ge 10 ] || fail "too few functions found in include/tgemm.h: $(cat "$out/functions.txt")"
diff -u "$out/functions.txt" "$out/bound.txt" || fail "tgemm.f90 does not bind exactly tgemm.h's functions"
echo "[       OK ] tgemm.f90 binds every function of tgemm.h ($(wc -l < "$out/functions.txt"))"

echo "== $fc sgemm_example.f90 \$(pkg-config --libs tgemm)"
# shellcheck disable=SC2046
"$fc" -Wall -Werror -o "$out/sgemm_example" examples/fortran/sgemm_example.f90 $(pkg-config --libs tgemm) \
    -Wl,-rpath,"$libdir"

# run NAME ENV...: runs the example with ENV, stderr to $out/NAME.err and a
# trace to $out/NAME.trace; it must print PASS.
run() {
    name=$1
    shift
    rm -f "$out/$name.trace"
    env "$@" TGEMM_TRACE="$out/$name.trace" "$out/sgemm_example" > "$out/$name.out" 2> "$out/$name.err" \
        || fail "$name: exit status $?: $(cat "$out/$name.out" "$out/$name.err")"
    grep -q PASS "$out/$name.out" || fail "$name: $(cat "$out/$name.out")"
    echo "$name: $(cat "$out/$name.out"); paths: $(sed -n 's/.* path=\([^ ]*\) .*/\1/p' "$out/$name.trace" | sort | uniq -c | tr -s ' \n' ' ')"
}
# expect NAME PATH LINES: both calls took PATH, stderr has LINES lines.
expect() {
    [ "$(grep -c " path=$2 " "$out/$1.trace")" -eq 2 ] || fail "$1: want 2 calls with path=$2: $(cat "$out/$1.trace")"
    [ "$(wc -l < "$out/$1.err")" -eq "$3" ] || fail "$1: want $3 line(s) on stderr: $(cat "$out/$1.err")"
}

# on_gpu WHAT: the GPU run of WHAT passed, or was skipped without a GPU.
on_gpu() {
    if [ "$gpu" = 1 ]; then echo "[       OK ] $1: on the GPU"; else echo "[  SKIPPED ] $1: on the GPU"; fi
}
run cpu-blas TGEMM_CPU_BLAS=libopenblas.so.0
expect cpu-blas cpu 0
echo "[       OK ] sgemm_example: through TGEMM_CPU_BLAS"
run gpu-forced TGEMM_OFFLOAD=gpu TGEMM_CPU_BLAS=libopenblas.so.0
if [ "$gpu" = 1 ]; then
    expect gpu-forced gpu 0
else
    expect gpu-forced cpu-fallback:no-device 1
    grep -q '^tgemm: TGEMM_OFFLOAD=gpu, but the GPU could not run a BLAS call' "$out/gpu-forced.err" \
        || fail "gpu-forced: $(cat "$out/gpu-forced.err")"
    echo "[       OK ] sgemm_example, TGEMM_OFFLOAD=gpu without a GPU: falls back to the CPU BLAS, one warning"
fi
on_gpu "sgemm_example, TGEMM_OFFLOAD=gpu"
run system-blas
expect system-blas cpu 0
echo "[       OK ] sgemm_example with no setting: the system's CPU BLAS"
run builtin TGEMM_OFFLOAD=cpu TGEMM_CPU_BLAS=/nonexistent/libnoblas.so.0
expect builtin builtin 1
grep -q 'no CPU BLAS was found.*TGEMM_CPU_BLAS' "$out/builtin.err" || fail "builtin: $(cat "$out/builtin.err")"
echo "[       OK ] sgemm_example without a CPU BLAS: the built-in loops, one warning"
run no-blas-auto TGEMM_CPU_BLAS=/nonexistent/libnoblas.so.0
if [ "$gpu" = 1 ]; then
    expect no-blas-auto gpu 0
else
    expect no-blas-auto builtin 1
    grep -q 'no GPU was usable.*no CPU BLAS was found.*TGEMM_CPU_BLAS' "$out/no-blas-auto.err" \
        || fail "no-blas-auto: $(cat "$out/no-blas-auto.err")"
    echo "[       OK ] sgemm_example without a GPU or a CPU BLAS: the built-in loops, one warning"
fi
on_gpu "sgemm_example without a CPU BLAS"
echo "warning: $(cat "$out/builtin.err")"

echo "== $fc tgemm.f90 native_example.f90 \$(pkg-config --libs tgemm)"
# shellcheck disable=SC2046
"$fc" -Wall -Werror -J "$out" -o "$out/native_example" "$root/include/tgemm.f90" examples/fortran/native_example.f90 \
    $(pkg-config --libs tgemm) -Wl,-rpath,"$libdir"
"$out/native_example" > "$out/native.out" 2>&1 || fail "native_example: $(cat "$out/native.out")"
cat "$out/native.out"
if [ "$gpu" = 1 ]; then
    grep -q 'PASS (TGEMM_SUCCESS' "$out/native.out" || fail "native_example did not run on the GPU"
else
    grep -q 'PASS (TGEMM_ERROR_NO_DEVICE' "$out/native.out" || fail "native_example: no NO_DEVICE without a GPU"
    echo "[       OK ] native_example without a GPU: TGEMM_ERROR_NO_DEVICE"
fi
on_gpu native_example
echo "check-fortran: OK ($fc)"
