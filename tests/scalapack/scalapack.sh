#!/bin/sh
# make test-scalapack: ScaLAPACK (Debian's Open MPI build) with
# LD_PRELOAD=libtgemm.so as the node BLAS, 4 MPI processes on this
# machine (mpirun --oversubscribe, shared memory only):
#  - the PBLAS Level 3 tester of scalapack-mpi-test (spb3tst) on
#    tests/scalapack/PSBLAS3TST.dat: PSGEMM's four transpose pairs on eight
#    shapes (K below, at and above the tester's panel width of 16, M or N
#    of 1, submatrices at offsets, block sizes 3 to 32, first blocks of
#    other sizes) on five grids (2x2, 1x4, 4x1, 1x2, 2x1), and the seven
#    other Level 3 routines, which also call SGEMM locally; its report is
#    read by check_pblas.sh (the tester exits 0 whatever it finds);
#  - examples/psgemm on five shapes, transposes and grids, each checking
#    every element of the distributed product against a serial one;
#  - for each run, the trace of every process (TGEMM_TRACE, one file per
#    rank): every process of the grid called sgemm_ through libtgemm, on
#    the expected paths only, and for examples/psgemm the local calls add
#    up to the whole product (the sum of m n k over all processes is
#    M N K): all of PSGEMM's local work went through libtgemm.
# With a GPU, the tester and one product run again with TGEMM_OFFLOAD=gpu,
# every call on the GPU, the product with TGEMM_DEVICE=local-rank (each
# process on the device of its node-local rank, from Open MPI's
# OMPI_COMM_WORLD_LOCAL_RANK); without one (no driver, or no device), the
# product runs so, falling back to the CPU with one warning per process
# and no other (local-rank accepted), and the GPU runs count as skipped. A GPU that is there but
# unusable fails (tests/blas/has_gpu.c).
#
# The checks are seen to refuse wrong results: with a wrong SGEMM
# preloaded instead (bad_sgemm.c: one rank-1 term counted twice) the
# tester's report is refused and examples/psgemm exits 1, as it does with
# one element of C corrupted (-X); a report where every grid was too large
# for the processes (1 process) is refused too.
#
# usage: scalapack.sh WORKDIR LIBTGEMM HAS_GPU PSGEMM BAD_SGEMM_LIB [TESTER_DIR]
# TESTER_DIR holds spb3tst (Debian: .../scalapack/openmpi-tests/PBLAS of
# scalapack-mpi-test, found through dpkg when not given). Outside CI, a
# missing mpirun, tester or ScaLAPACK (PSGEMM not built) is reported and
# the target not run; with CI set, it fails.
set -eu
work=$1 lib=$2 has_gpu=$3 psgemm=$4 bad=$5 testdir=${6:-}
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "test-scalapack: $*" >&2; exit 1; }
unset TGEMM_OFFLOAD TGEMM_OFFLOAD_MIN_FLOPS TGEMM_OFFLOAD_CPU_GFLOPS TGEMM_OFFLOAD_LINK_GBS TGEMM_OFFLOAD_LEARN \
      TGEMM_CPU_BLAS TGEMM_TRACE TGEMM_DEVICE TGEMM_KERNEL TGEMM_VERBOSE TGEMM_DEVICE_MEMORY_LIMIT \
      TGEMM_HOST_COPY_THREADS TGEMM_HOST_TRACE LD_PRELOAD PSGEMM_NB

if [ -z "$testdir" ] && command -v dpkg > /dev/null 2>&1; then
    testdir=$(dpkg -L scalapack-mpi-test 2>/dev/null | sed -n 's|/openmpi-tests/PBLAS/spb3tst$|/openmpi-tests/PBLAS|p' |
              head -n 1)
fi
missing=
command -v mpirun > /dev/null 2>&1 || missing="$missing mpirun (openmpi-bin);"
[ -n "$testdir" ] && [ -x "$testdir/spb3tst" ] || missing="$missing spb3tst (scalapack-mpi-test);"
[ -x "$psgemm" ] || missing="$missing $psgemm (built where libscalapack-openmpi-dev is installed);"
if [ -n "$missing" ]; then
    [ -z "${CI:-}" ] || fail "required in CI, missing:$missing make deps installs them"
    echo "test-scalapack: missing:$missing not run"
    echo "[ SKIPPING ] Open MPI and ScaLAPACK are not installed (openmpi-bin, libscalapack-openmpi-dev, scalapack-mpi-test)"
    echo "[  SKIPPED ] ScaLAPACK under LD_PRELOAD"
    exit 0
fi
[ -f "$lib" ] || fail "no $lib"
[ -f "$bad" ] || fail "no $bad"

# Open MPI on one machine with no network: processes forked by mpirun
# itself (no ssh), talking through shared memory; its runtime's own
# sockets on the loopback interface. As root it needs to be told twice.
# More processes than cores, each with a single-threaded BLAS.
export OMPI_MCA_rmaps_base_oversubscribe=1 OPENBLAS_NUM_THREADS=1
if [ "$(id -u)" = 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
mpi() {
    n=$1
    shift
    timeout 300 mpirun -np "$n" --oversubscribe --bind-to none --mca plm isolated --mca pml ob1 \
        --mca btl self,vader --mca btl_vader_single_copy_mechanism none --mca oob_tcp_if_include lo "$@" < /dev/null
}

gpu=$("$has_gpu") || fail "$has_gpu failed (a broken CUDA driver?)"
if [ "$gpu" = 1 ]; then gpu_paths="gpu"; else gpu_paths="cpu-fallback:no-device"; fi
# Under the default policy: the CPU BLAS, or the GPU where the model
# sends a call there (where there is none, that call falls back).
auto_paths="cpu scale gpu cpu-fallback:no-device"
echo "test-scalapack: mpirun $(command -v mpirun), spb3tst in $testdir; ${gpu_paths%% *} for TGEMM_OFFLOAD=gpu"

# check_trace NAME PREFIX RANKS "PATHS" [MNK]: the trace files PREFIX.0 to
# PREFIX.(RANKS-1) each have sgemm_ lines and nothing else, every path is
# one of PATHS (or a quick return), and with MNK, the sum of m n k over
# all of them is MNK.
check_trace() {
    name=$1 prefix=$2 ranks=$3 paths=$4 mnk=${5:-}
    r=0
    while [ "$r" -lt "$ranks" ]; do
        [ -s "$prefix.$r" ] || fail "$name: rank $r has no trace ($prefix.$r): its sgemm_ calls did not reach libtgemm"
        r=$((r + 1))
    done
    [ ! -e "$prefix.$ranks" ] || fail "$name: a trace from rank $ranks, of a job of $ranks"
    pattern=' path=(quick-return'
    for p in $paths; do pattern="$pattern|$p"; done
    pattern="$pattern) "
    foreign=$(cat "$prefix".* | grep -v '^tgemm trace: entry=sgemm_ ' | head -n 3 || true)
    [ -z "$foreign" ] || fail "$name: trace lines not of sgemm_: $foreign"
    off=$(cat "$prefix".* | grep -v -E "$pattern" | head -n 3 || true)
    [ -z "$off" ] || fail "$name: trace lines off the expected paths ($paths): $off"
    lines=$(cat "$prefix".* | wc -l)
    if [ -n "$mnk" ]; then
        sum=$(cat "$prefix".* | awk '{ m = n = k = 0
                  for (i = 1; i <= NF; i++) {
                      if ($i ~ /^m=/) m = substr($i, 3); else if ($i ~ /^n=/) n = substr($i, 3)
                      else if ($i ~ /^k=/) k = substr($i, 3)
                  }
                  s += m * n * k } END { printf "%.0f\n", s }')
        [ "$sum" = "$mnk" ] || fail "$name: the local calls traced add up to m n k = $sum, want M N K = $mnk"
    fi
    echo "$name: trace: $lines sgemm_ calls on $ranks processes:$(cat "$prefix".* |
        sed -n 's/.* path=\([^ ]*\).*/\1/p' | sort | uniq -c | awk '{ printf " %s %s", $1, $2 }')${mnk:+; m n k add up to $mnk}"
}

# check_stderr NAME FILE WARNINGS: FILE holds only gfortran's notes on
# floating-point exceptions at exit and, WARNINGS times, tgemm's warning
# that TGEMM_OFFLOAD=gpu falls back to the CPU BLAS.
check_stderr() {
    name=$1 file=$2 warnings=$3
    n=$(grep -c '^tgemm: TGEMM_OFFLOAD=gpu, but the GPU could not run a BLAS call' "$file" || true)
    [ "$n" -eq "$warnings" ] || fail "$name: $n fallback warnings, want $warnings: $(cat "$file")"
    other=$(grep -v -e '^Note: The following floating-point exceptions are signalling' \
                    -e '^tgemm: TGEMM_OFFLOAD=gpu, but the GPU could not run a BLAS call' "$file" || true)
    [ -z "$other" ] || fail "$name: standard error: $other"
}

# fresh_dir NAME: $dir = WORKDIR/NAME, emptied.
fresh_dir() {
    dir=$work/$1
    rm -rf "$dir"
    mkdir -p "$dir"
}

# pblas NAME PROCESSES GEMM_TESTS "PATHS" [VAR=value...]: the tester in
# WORKDIR/NAME under the settings given, its report and traces checked.
pblas() {
    name=$1 np=$2 want=$3 paths=$4
    shift 4
    fresh_dir "$name"
    cp "$here/PSBLAS3TST.dat" "$dir/"
    status=0
    (cd "$dir" && mpi "$np" sh "$here/per_rank.sh" "$dir/trace" LD_PRELOAD="$lib" "$@" "$testdir/spb3tst" \
        > report 2> stderr) || status=$?
    [ "$status" -eq 0 ] || fail "$name: exit status $status: $(tail -n 20 "$dir/report") $(cat "$dir/stderr")"
    sh "$here/check_pblas.sh" "$dir/report" "$want" > "$dir/check" 2>&1 || fail "$name: $(cat "$dir/check")"
    warnings=0
    case " $* " in *" TGEMM_OFFLOAD=gpu "*) [ "$gpu" = 1 ] || warnings=$np ;; esac
    check_stderr "$name" "$dir/stderr" "$warnings"
    check_trace "$name" "$dir/trace" "$np" "$paths"
    echo "$name: $(cat "$dir/check")"
    echo "[       OK ] $name: spb3tst, $np processes${*:+, $*}"
}

# product NAME "PATHS" [VAR=value...] -- PSGEMM_ARGS: examples/psgemm on
# 4 processes in WORKDIR/NAME under LD_PRELOAD=libtgemm.so, checked.
product() {
    name=$1 paths=$2
    shift 2
    settings=
    while [ "$1" != -- ]; do settings="$settings $1"; shift; done
    shift
    fresh_dir "$name"
    status=0
    # shellcheck disable=SC2086
    mpi 4 sh "$here/per_rank.sh" "$dir/trace" LD_PRELOAD="$lib" $settings "$psgemm" "$@" > "$dir/stdout" \
        2> "$dir/stderr" || status=$?
    [ "$status" -eq 0 ] || fail "$name: exit status $status: $(cat "$dir/stdout" "$dir/stderr")"
    grep -q '^psgemm: OK$' "$dir/stdout" || fail "$name: no 'psgemm: OK': $(cat "$dir/stdout")"
    grep -q '^psgemm: check full: [0-9]* elements of [0-9]* columns, 0 over the bound' "$dir/stdout" \
        || fail "$name: not every element checked: $(cat "$dir/stdout")"
    line=$(grep '^psgemm: result ' "$dir/stdout") || fail "$name: no result line: $(cat "$dir/stdout")"
    grid=$(echo "$line" | sed -n 's/.* grid=\([0-9]*\)x\([0-9]*\) .*/\1 \2/p')
    mnk=$(echo "$line" | sed -n 's/.* m=\([0-9]*\) n=\([0-9]*\) k=\([0-9]*\) .*/\1 \2 \3/p' |
          awk '{ printf "%.0f\n", $1 * $2 * $3 }')
    warnings=0
    case " $settings " in *" TGEMM_OFFLOAD=gpu "*) [ "$gpu" = 1 ] || warnings=4 ;; esac
    check_stderr "$name" "$dir/stderr" "$warnings"
    check_trace "$name" "$dir/trace" "$(echo "$grid" | awk '{ print $1 * $2 }')" "$paths" "$mnk"
    echo "$name: $(grep -E '^psgemm: (result|check)' "$dir/stdout" | sed 's/^psgemm: //' | paste -s -d ';' -)"
    echo "[       OK ] $name: psgemm $*${settings:+ ($settings )}"
}

echo "== the PBLAS tester and examples/psgemm under LD_PRELOAD=libtgemm.so, default policy"
pblas spb3tst 4 40 "$auto_paths"
product psgemm-nn "$auto_paths" -- -m 300 -n 250 -k 200 -b 32
product psgemm-tt "$auto_paths" -- -m 301 -n 257 -k 199 -b 16 -A T -B T -x -1.5 -y 0.5
product psgemm-nt "$auto_paths" -- -m 64 -n 64 -k 1000 -b 24 -B T
product psgemm-tn "$auto_paths" -- -m 500 -n 40 -k 300 -b 7 -A T -y 1
product psgemm-1x4 "$auto_paths" -- -m 97 -n 203 -k 150 -b 10 -p 1 -q 4

echo "== TGEMM_OFFLOAD=gpu"
if [ "$gpu" = 1 ]; then
    pblas spb3tst-gpu 4 40 gpu TGEMM_OFFLOAD=gpu
    product psgemm-gpu gpu TGEMM_OFFLOAD=gpu TGEMM_DEVICE=local-rank -- -m 300 -n 250 -k 200 -b 32 -A T
else
    product psgemm-fallback "$gpu_paths" TGEMM_OFFLOAD=gpu TGEMM_DEVICE=local-rank -- -m 300 -n 250 -k 200 -b 32 -A T
    echo "[  SKIPPED ] spb3tst and psgemm with TGEMM_OFFLOAD=gpu: on the GPU"
fi

echo "== the checks refuse wrong results"
# A wrong SGEMM instead of libtgemm: the tester (PSGEMM alone) must fail
# its tests and its report be refused; examples/psgemm must fail.
fresh_dir refuse-tester
sed -e 's/^\(PS[A-Z0-9]* *\)T\(	put F\)/\1F\2/' -e 's/^PSGEMM  F/PSGEMM  T/' "$here/PSBLAS3TST.dat" > "$dir/PSBLAS3TST.dat"
[ "$(grep -c '^PS[A-Z0-9]* *T	put F' "$dir/PSBLAS3TST.dat")" -eq 1 ] || fail "refuse-tester: the input does not test PSGEMM alone"
(cd "$dir" && mpi 4 env LD_PRELOAD="$bad" "$testdir/spb3tst" > report 2> stderr) || fail "refuse-tester: exit status $?"
grep -q 'Computational check: PSGEMM  *FAILED' "$dir/report" || fail "refuse-tester: the wrong SGEMM passed: $(cat "$dir/report")"
! sh "$here/check_pblas.sh" "$dir/report" 40 > "$dir/check" 2>&1 || fail "refuse-tester: a failed report was accepted"
grep -q 'routines failed' "$dir/check" || fail "refuse-tester: refused for another reason: $(cat "$dir/check")"
echo "refuse-tester: $(grep -c 'Computational check: PSGEMM  *FAILED' "$dir/report") PSGEMM tests failed; $(head -n 1 "$dir/check")"
echo "[       OK ] the tester's report is refused with a wrong SGEMM"

# One process: every grid of the input is too large, every test skipped.
fresh_dir refuse-skipped
cp "$here/PSBLAS3TST.dat" "$dir/"
(cd "$dir" && mpi 1 "$testdir/spb3tst" > report 2> stderr) || fail "refuse-skipped: exit status $?"
! sh "$here/check_pblas.sh" "$dir/report" 40 > "$dir/check" 2>&1 || fail "refuse-skipped: a report with nothing passed was accepted"
grep -q 'routines passed nothing' "$dir/check" || fail "refuse-skipped: refused for another reason: $(cat "$dir/check")"
echo "refuse-skipped: $(head -n 1 "$dir/check")"
echo "[       OK ] the tester's report is refused when every grid is skipped"

# refuse NAME WANT_FAILED [VAR=value...] -- PSGEMM_ARGS
refuse() {
    name=$1 want=$2
    shift 2
    settings=
    while [ "$1" != -- ]; do settings="$settings $1"; shift; done
    shift
    fresh_dir "$name"
    status=0
    # shellcheck disable=SC2086
    mpi 4 env $settings "$psgemm" "$@" > "$dir/stdout" 2> "$dir/stderr" || status=$?
    [ "$status" -ne 0 ] || fail "$name: exit status 0 from a wrong product: $(cat "$dir/stdout")"
    grep -q '^psgemm: FAILED' "$dir/stdout" || fail "$name: no 'psgemm: FAILED' line: $(cat "$dir/stdout" "$dir/stderr")"
    n=$(sed -n 's/^psgemm: check full: .*, \([0-9]*\) over the bound.*/\1/p' "$dir/stdout")
    case $want in
    +) [ "${n:-0}" -gt 0 ] || fail "$name: no element over the bound: $(cat "$dir/stdout")" ;;
    *) [ "${n:-}" = "$want" ] || fail "$name: $n elements over the bound, want $want: $(cat "$dir/stdout")" ;;
    esac
    echo "$name: exit status $status; $n elements over the bound"
    echo "[       OK ] $name: psgemm $* fails"
}
refuse refuse-bad-sgemm + LD_PRELOAD="$bad" -- -m 200 -n 150 -k 100 -b 16 -A T
refuse refuse-corrupt 1 LD_PRELOAD="$lib" -- -m 130 -n 90 -k 70 -b 8 -X
echo "test-scalapack: OK"
