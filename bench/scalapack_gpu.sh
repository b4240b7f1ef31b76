#!/usr/bin/env bash
# ScaLAPACK's PSGEMM with tgemm as the node BLAS on the GPU machine (issue
# 30, item 3): the PBLAS tester and timings of PSGEMM against the CPU BLAS.
#
#   OUT=/some/dir bash bench/scalapack_gpu.sh        (from the repository root or anywhere)
#   bash bench/scalapack_gpu.sh --download DIR       (on a Debian 12 machine with network:
#                                                     fetch the .deb files into DIR)
#
# The GPU machine has CUDA, OpenBLAS and a C compiler but no MPI, no
# ScaLAPACK and no network: Debian 12's Open MPI 4.1 and ScaLAPACK 2.2
# come as .deb files in MPIDEBS (default .deps/mpidebs, carried with the
# tree; --download makes it, about 14 MB). They are unpacked with dpkg -x
# into MPI_PREFIX (default /opt/mpi, emptied first; never / or /usr, which
# would overwrite the host's files), never installed: Open MPI runs from
# there with OPAL_PREFIX=MPI_PREFIX/usr, and its libraries are found
# through LD_LIBRARY_PATH, set for the MPI runs only (MPI_PREFIX/lib-links:
# one link per library's soname, since dpkg -x makes none of the links
# that alternatives or ldconfig would). The libraries a host normally has
# (libgfortran5, libquadmath0, libatomic1, liblapack3, libblas3) are used
# from the .deb files only where the host lacks them
# (MPI_PREFIX/fallback-lib), so the host's newer copies stay in use.
#
# mpirun runs on this machine only: processes forked by mpirun itself (plm
# isolated: no ssh), shared memory between them (pml ob1, btl self,vader),
# the runtime's sockets on loopback; --oversubscribe, --bind-to none (each
# process runs a multithreaded BLAS: OPENBLAS_NUM_THREADS = cores /
# processes); as root, with OMPI_ALLOW_RUN_AS_ROOT. The tgemm runs get
# SCALAPACK_BENCH_TGEMM_ENV (default TGEMM_DEVICE=local-rank: each process
# on the device of its node-local rank, all on device 0 where there is one
# GPU; set it empty for none).
#
# What runs (logs, CSV and a Markdown report under $OUT):
#  0. make test-scalapack against the unpacked prefix (with a GPU, its
#     forced-GPU runs too);
#  1. the PBLAS Level 3 tester spb3tst on tests/scalapack/PSBLAS3TST.dat,
#     LD_PRELOAD=libtgemm.so, 2 and 4 processes, TGEMM_OFFLOAD=gpu and
#     auto: report checked (tests/scalapack/check_pblas.sh), the paths
#     of its local calls counted from the trace (pblas.csv);
#  2. examples/psgemm timed (the slowest process's time of each call; one
#     untimed call first; each result checked on 8 columns, all rows,
#     against a double-precision product) with, as the node BLAS:
#       cpu   OpenBLAS alone (LD_PRELOAD=libopenblas.so.0, so that it is
#             OpenBLAS whatever libblas.so.3 is here);
#       auto  libtgemm preloaded before OpenBLAS, TGEMM_OFFLOAD=auto;
#       gpu   the same with TGEMM_OFFLOAD=gpu;
#     at 4096^3 and 8192^3 on 2 and 4 processes (block size NB 256),
#     8192^3 with NB 64 and 1024, 8192^3 with PBLAS's panel width set to
#     512 and 2048 instead of its 32 (bench/pilaenv_nb.c, preloaded), and
#     16384^3 on 4 processes (cpu, auto; gpu and auto with width 2048). Each
#     process's calls are traced (TGEMM_TRACE): runs.csv has a row per
#     run, calls.csv a row per distinct local call (shape, beta, path) and
#     run, with its count and time;
#  3. bench/scalapack_report.py: scalapack_report.md from the CSV files.
# The runs go in order of importance and stop when SCALAPACK_BENCH_BUDGET
# seconds (default 150) have gone on them, the rest recorded as skipped.
# Expect about 4 minutes in all on the H100 machine (16 cores) once
# libtgemm is built (make lib; carry build/ to avoid recompiling kernels).
#
# Settings: OUT (required), MPIDEBS, MPI_PREFIX, SCALAPACK_BENCH_BUDGET,
# SCALAPACK_BENCH_TGEMM_ENV, SCALAPACK_BENCH_ONLY (an extended regular
# expression: only the timed runs whose name, such as
# blocks-np4-s8192-nb64-kb32-auto, it matches), SCALAPACK_BENCH_PLAN (full, the default; or
# smoke: tiny products that show the machinery works, for a machine
# without a GPU), ALLOW_NO_GPU=1 (run without a GPU: TGEMM_OFFLOAD=gpu
# then falls back to the CPU; for trying the script out, never for
# figures). Exit status: 0 if every tester run passed and every product
# was correct; 1 otherwise (the report says which).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
repo=$PWD

CORE_PKGS=(openmpi-bin openmpi-common libopenmpi3 libpmix2 libhwloc15 libevent-2.1-7 libevent-core-2.1-7
           libevent-pthreads-2.1-7 libmunge2 libfabric1 libucx0 libpsm2-2 libpsm-infinipath1 libibverbs1
           ibverbs-providers librdmacm1 libnl-3-200 libnl-route-3-200 libnuma1 libscalapack-openmpi2.2
           libscalapack-openmpi-dev scalapack-mpi-test scalapack-test-common)
FALLBACK_PKGS=(libgfortran5 libquadmath0 libatomic1 liblapack3 libblas3)

if [ "${1:-}" = --download ]; then
    dir=${2:?usage: $0 --download DIR}
    mkdir -p "$dir" && cd "$dir" || exit 1
    apt-get download "${CORE_PKGS[@]}" "${FALLBACK_PKGS[@]}" || exit 1
    du -sh .
    exit 0
fi

: "${OUT:?set OUT to the folder for the logs, CSV and report}"
mkdir -p "$OUT" || exit 1
OUT=$(cd "$OUT" && pwd)
DEBS=${MPIDEBS:-$repo/.deps/mpidebs}
PREFIX=${MPI_PREFIX:-/opt/mpi}
PLAN=${SCALAPACK_BENCH_PLAN:-full}
ONLY=${SCALAPACK_BENCH_ONLY:-}
BUDGET=${SCALAPACK_BENCH_BUDGET:-150}
TGEMM_ENV=${SCALAPACK_BENCH_TGEMM_ENV-TGEMM_DEVICE=local-rank}
W=$OUT/scalapack
rm -rf "$W"
mkdir -p "$W/runs"
exec > >(tee "$OUT/scalapack_gpu.log") 2>&1
t_start=$SECONDS
stamp() { echo "--- $1 at $((SECONDS - t_start)) s"; }
fail() { echo "scalapack_gpu: $*" >&2; exit 1; }
failures=0

stamp machine
grep -E '^(PRETTY_NAME|VERSION_ID)=' /etc/os-release 2>/dev/null
ldd --version 2>/dev/null | head -n 1
cores=$(nproc)
echo "cores: $cores"
command -v nvidia-smi > /dev/null && nvidia-smi -L
free -g | head -n 2

# ---------------------------------------------------------------- unpack
stamp unpack
case $(readlink -m "$PREFIX") in
/ | /usr | /usr/* | /bin* | /lib* | /etc* | /sbin* | /var*) fail "MPI_PREFIX=$PREFIX: never unpack into the system's directories" ;;
esac
[ -d "$DEBS" ] || fail "no $DEBS: make it with $0 --download $DEBS on a Debian 12 machine with network"
deb_of() {
    local m=("$DEBS/$1"_*.deb)
    [ ${#m[@]} -eq 1 ] && [ -f "${m[0]}" ] || { echo "scalapack_gpu: want one $1_*.deb in $DEBS, found: ${m[*]}" >&2; return 1; }
    echo "${m[0]}"
}
rm -rf "$PREFIX"
mkdir -p "$PREFIX/fallback" "$PREFIX/lib-links" "$PREFIX/fallback-lib" || fail "cannot make $PREFIX"
PREFIX=$(cd "$PREFIX" && pwd)
for p in "${CORE_PKGS[@]}"; do
    f=$(deb_of "$p") || exit 1
    dpkg -x "$f" "$PREFIX" || fail "dpkg -x $f failed"
done
for p in "${FALLBACK_PKGS[@]}"; do
    f=$(deb_of "$p") || exit 1
    dpkg -x "$f" "$PREFIX/fallback" || fail "dpkg -x $f failed"
done
soname() { readelf -d "$1" 2>/dev/null | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p'; }
# The libraries (not the plugins) of the packages, by soname.
for d in usr/lib/x86_64-linux-gnu lib/x86_64-linux-gnu usr/lib/libpsm1 usr/lib/x86_64-linux-gnu/pmix2/lib; do
    for f in "$PREFIX/$d"/lib*.so.*; do
        [ -f "$f" ] && s=$(soname "$f") && [ -n "$s" ] && ln -sfn "$f" "$PREFIX/lib-links/$s"
    done
done
# The fallbacks, where the host has no loadable library of that soname.
host_has() {
    local p
    for p in $(ldconfig -p | awk -v s="$1" '$1 == s { print $NF }'); do
        [ -f "$p" ] && [ -s "$p" ] && return 0
    done
    return 1
}
while IFS= read -r f; do
    s=$(soname "$f")
    [ -n "$s" ] && [ ! -e "$PREFIX/fallback-lib/$s" ] || continue
    if host_has "$s"; then echo "fallback: $s: the host's"; else ln -sfn "$f" "$PREFIX/fallback-lib/$s"; echo "fallback: $s: from $f"; fi
done < <(find "$PREFIX/fallback" -name 'lib*.so.*' -type f | sort)
MPI_LD=$PREFIX/lib-links:$PREFIX/fallback-lib
MPIRUN=$PREFIX/usr/bin/mpirun.openmpi
# The command name alternatives would give it, for make test-scalapack.
mkdir -p "$PREFIX/bin" && ln -sfn "$MPIRUN" "$PREFIX/bin/mpirun"
TESTER=$PREFIX/usr/lib/x86_64-linux-gnu/scalapack/openmpi-tests/PBLAS/spb3tst
export OPAL_PREFIX=$PREFIX/usr
# PMIx looks for its plugins where Debian installs them; a host with another
# PMIx there hands the unpacked library plugins it cannot load, whose load
# errors on standard error would fail make test-scalapack (its check that
# nothing but tgemm's known lines reach standard error). Relocate it, and
# where a process still finds the host's plugins (mpirun itself did, on
# the H100 machine), keep PMIx from printing their load errors. Debian's
# PMIx has absolute install directories, which PMIX_INSTALL_PREFIX does not
# move (on the four-H200 machine every process still opened the host's
# plugins): each one is named. PMIx 4.2 takes show_load_errors as a list
# ("none"), older ones as a number. Without the zlib plugin PMIx warns that it
# cannot compress; nothing here needs compression.
pmix_dir=$PREFIX/usr/lib/x86_64-linux-gnu/pmix2
export PMIX_PREFIX=$pmix_dir PMIX_INSTALL_PREFIX=$pmix_dir PMIX_EXEC_PREFIX=$pmix_dir
export PMIX_LIBDIR=$pmix_dir/lib PMIX_PKGLIBDIR=$pmix_dir/lib/pmix
export PMIX_DATAROOTDIR=$pmix_dir/share PMIX_DATADIR=$pmix_dir/share PMIX_PKGDATADIR=$pmix_dir/share/pmix
export PMIX_MCA_mca_base_component_path=$pmix_dir/lib/pmix
export PMIX_MCA_mca_base_component_show_load_errors=none
export PMIX_MCA_pcompress_base_silence_warning=1
[ -x "$MPIRUN" ] && [ -x "$TESTER" ] || fail "no mpirun or spb3tst under $PREFIX"
missing=$(LD_LIBRARY_PATH=$MPI_LD ldd "$TESTER" "$PREFIX/usr/bin/orterun" | grep 'not found' | sort -u)
[ -z "$missing" ] || fail "libraries missing for the tester or mpirun: $missing"
LD_LIBRARY_PATH=$MPI_LD "$PREFIX/usr/bin/ompi_info" --version | head -n 1 || fail "ompi_info does not run from $PREFIX"
echo "unpacked $(du -sh "$PREFIX" | cut -f1) into $PREFIX"

# ---------------------------------------------------------------- build
stamp build
make -j"$cores" --no-print-directory lib build/tests/has_gpu > "$W/build.log" 2>&1 || { tail -n 30 "$W/build.log"; fail "make lib failed"; }
LIB=$repo/build/lib/libtgemm.so
SCALAPACK_LIBS="-L$PREFIX/usr/lib/x86_64-linux-gnu -lscalapack-openmpi -Wl,-rpath-link,$MPI_LD"
make --no-print-directory PSGEMM="$W/psgemm" SCALAPACK_LIBS="$SCALAPACK_LIBS" "$W/psgemm" >> "$W/build.log" 2>&1 \
    || { tail -n 30 "$W/build.log"; fail "examples/psgemm does not build against $PREFIX"; }
SHIM=$W/libpilaenv_nb.so
cc -std=c99 -O2 -Wall -Wextra -fPIC -shared -o "$SHIM" bench/pilaenv_nb.c || fail "bench/pilaenv_nb.c does not build"
gpu=$(build/tests/has_gpu) || fail "build/tests/has_gpu: the GPU cannot be used"
if [ "$gpu" != 1 ]; then
    [ -n "${ALLOW_NO_GPU:-}" ] || fail "no GPU here (ALLOW_NO_GPU=1 runs anyway, for trying the script out)"
    echo "no GPU: TGEMM_OFFLOAD=gpu falls back to the CPU in every run (ALLOW_NO_GPU)"
fi
OPENBLAS=
for p in $(ldconfig -p | awk '$1 == "libopenblas.so.0" { print $NF }'); do
    [ -s "$p" ] && { OPENBLAS=$p; break; }
done
[ -n "$OPENBLAS" ] || fail "no libopenblas.so.0 on this machine: the CPU baseline must be OpenBLAS"
echo "libtgemm: $LIB; OpenBLAS: $OPENBLAS; tgemm runs with: ${TGEMM_ENV:-(nothing more)}"

# ---------------------------------------------------------------- MPI
export OMPI_MCA_rmaps_base_oversubscribe=1
[ "$(id -u)" != 0 ] || export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# mpi SECONDS PROCESSES ARGS...: Debian's /etc/openmpi settings (not read
# from the unpacked prefix) given on the command line.
mpi() {
    local limit=$1 n=$2
    shift 2
    LD_LIBRARY_PATH=$MPI_LD OPENBLAS_NUM_THREADS=$(( cores / n > 0 ? cores / n : 1 )) timeout "$limit" \
        "$MPIRUN" -np "$n" --oversubscribe --bind-to none --mca plm isolated --mca pml ob1 --mca btl self,vader \
        --mca btl_vader_single_copy_mechanism none --mca oob_tcp_if_include lo --mca mtl ^ofi --mca osc ^ucx,pt2pt \
        --mca btl_base_warn_component_unused 0 "$@" < /dev/null
}

# trace_summary RUN PREFIX: the distinct local calls of PREFIX.* as rows
# of calls.csv.
trace_summary() {
    local files=("$2".*)
    [ -f "${files[0]}" ] || return 0
    python3 bench/scalapack_report.py --calls "$1" "${files[@]}" || failures=$((failures + 1))
}
echo "run,transa,transb,m,n,k,beta,path,count,time_us" > "$W/calls.csv"

# ---------------------------------------------------------------- make test-scalapack
# The suite's own target on this machine, against the unpacked prefix: with
# a GPU, its forced-GPU runs (the tester, a product with
# TGEMM_DEVICE=local-rank) as well as the default policy and the checks
# that must fail.
stamp test-scalapack
PATH=$PREFIX/bin:$PATH LD_LIBRARY_PATH=$MPI_LD make --no-print-directory test-scalapack HAVE_SCALAPACK=1 \
    SCALAPACK_LIBS="$SCALAPACK_LIBS" SCALAPACK_TEST_DIR="$(dirname "$TESTER")" TEST_RESULTS="$W/results" \
    > "$W/test-scalapack.log" 2>&1
status=$?
sh tests/summary.sh "$W/results" "$status" >> "$W/test-scalapack.log" 2>&1 || status=1
grep -E '^\[ +(OK|FAILED|SKIPPED) +\]|^== scalapack|^make test' "$W/test-scalapack.log"
[ "$status" -eq 0 ] || { echo "make test-scalapack failed (scalapack/test-scalapack.log)"; failures=$((failures + 1)); }

# ---------------------------------------------------------------- the tester
stamp tester
echo "np,mode,status,check,calls,gpu,cpu,other" > "$W/pblas.csv"
for np in 2 4; do
    want=$(( np == 2 ? 16 : 40 ))
    for mode in gpu auto; do
        name=spb3tst-np$np-$mode
        d=$W/runs/$name
        mkdir -p "$d"
        cp tests/scalapack/PSBLAS3TST.dat "$d/"
        settings=
        [ "$mode" = gpu ] && settings=TGEMM_OFFLOAD=gpu
        t0=$SECONDS
        # shellcheck disable=SC2086
        (cd "$d" && mpi 120 "$np" sh "$repo/tests/scalapack/per_rank.sh" "$d/trace" "LD_PRELOAD=$LIB $OPENBLAS" \
            $settings $TGEMM_ENV "$TESTER" > report 2> stderr)
        status=$?
        check=ok
        sh tests/scalapack/check_pblas.sh "$d/report" "$want" > "$d/check" 2>&1 || check=failed
        [ "$status" -eq 0 ] && [ "$check" = ok ] || failures=$((failures + 1))
        counts=$(cat "$d"/trace.* 2>/dev/null | awk '/ path=gpu / { g++ } / path=cpu / { c++ } END { print NR + 0, g + 0, c + 0, NR - g - c }')
        set -- $counts
        # With a GPU, TGEMM_OFFLOAD=gpu must have sent every call there.
        if [ "$gpu" = 1 ] && [ "$mode" = gpu ] && [ "$2" -ne "$1" ]; then
            check="failed:not-all-on-gpu"
            failures=$((failures + 1))
        fi
        echo "$np,$mode,$status,$check,$1,$2,$3,$4" >> "$W/pblas.csv"
        trace_summary "$name" "$d/trace" >> "$W/calls.csv"
        echo "$name: exit status $status, $(cat "$d/check"); local calls: $1 ($2 gpu, $3 cpu, $4 other); $((SECONDS - t0)) s"
    done
done

# ---------------------------------------------------------------- timings
stamp timings
echo "run,group,np,grid,m,n,k,nb,kb,mode,warmup,reps,time_s_min,time_s_median,gflops,status,wall_s,calls,gpu_calls,cpu_calls" \
    > "$W/runs.csv"
t_timing=$SECONDS
# product GROUP NP SIZE NB KB MODE WARMUP REPS [CHECK]
product() {
    local group=$1 np=$2 size=$3 nb=$4 kb=$5 mode=$6 warmup=$7 reps=$8 check=${9:-cols:8}
    local name=$group-np$np-s$size-nb$nb-kb$kb-$mode d preload settings status t0 line
    d=$W/runs/$name
    if [ -n "$ONLY" ] && ! printf '%s\n' "$name" | grep -Eq -e "$ONLY"; then
        return
    fi
    # Host memory: each process holds its blocks of A, B, C and C's copy,
    # process (0, 0) also all of C and op(A); 3 times that, to be safe.
    local need_kb=$(( (4 * size * size * 4 / np + 2 * size * size * 4) * 3 / 1024 ))
    if [ "$need_kb" -gt "$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)" ]; then
        echo "$name,$group,$np,,$size,$size,$size,$nb,$kb,$mode,$warmup,$reps,,,,skipped:memory,0,,," >> "$W/runs.csv"
        echo "$name: skipped (needs about $((need_kb / 1048576)) GiB of host memory)"
        return
    fi
    if [ $((SECONDS - t_timing)) -ge "$BUDGET" ]; then
        echo "$name,$group,$np,,$size,$size,$size,$nb,$kb,$mode,$warmup,$reps,,,,skipped:budget,0,,," >> "$W/runs.csv"
        echo "$name: skipped (budget of $BUDGET s spent)"
        return
    fi
    mkdir -p "$d"
    preload=$OPENBLAS
    settings=
    case $mode in
    auto) preload="$LIB $OPENBLAS"; settings=$TGEMM_ENV ;;
    gpu) preload="$LIB $OPENBLAS"; settings="TGEMM_OFFLOAD=gpu $TGEMM_ENV" ;;
    esac
    [ "$kb" = 32 ] || { preload="$preload $SHIM"; settings="$settings PILAENV_NB=$kb"; }
    t0=$SECONDS
    # shellcheck disable=SC2086
    mpi 90 "$np" sh "$repo/tests/scalapack/per_rank.sh" "$d/trace" "LD_PRELOAD=$preload" $settings \
        "$W/psgemm" -m "$size" -n "$size" -k "$size" -b "$nb" -s 1 -w "$warmup" -r "$reps" -c "$check" \
        > "$d/stdout" 2> "$d/stderr"
    status=$?
    local wall=$((SECONDS - t0)) result=ok
    if [ "$status" -ne 0 ] || ! grep -q '^psgemm: OK$' "$d/stdout"; then
        result="failed:$status"
        [ "$status" -eq 124 ] && result=timeout
        failures=$((failures + 1))
    fi
    line=$(grep '^psgemm: result ' "$d/stdout")
    field() { echo "$line" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
    local counts
    counts=$(cat "$d"/trace.* 2>/dev/null | awk '/ path=gpu / { g++ } / path=cpu / { c++ } END { print NR + 0, g + 0, c + 0 }')
    echo "$name,$group,$np,$(field grid),$size,$size,$size,$nb,$kb,$mode,$warmup,$reps,$(field time_s_min),$(field time_s_median),$(field gflops),$result,$wall,${counts// /,}" \
        >> "$W/runs.csv"
    [ "$mode" = cpu ] || trace_summary "$name" "$d/trace" >> "$W/calls.csv"
    echo "$name: $result, min $(field time_s_min) s, $(field gflops) GFLOP/s; traced calls (all, gpu, cpu): $counts; ${wall} s"
    grep -v -e '^Note: The following floating-point' "$d/stderr" | sort | uniq -c | head -n 5
}

if [ "$PLAN" = smoke ]; then
    for np in 2 4; do
        for mode in cpu auto gpu; do product smoke "$np" 300 32 32 "$mode" 1 2 full; done
    done
    product smoke-kb 4 300 32 128 gpu 1 2 full
else
    for size in 4096 8192; do
        for np in 2 4; do
            for mode in cpu auto gpu; do product sizes "$np" "$size" 256 32 "$mode" 1 2; done
        done
    done
    for kb in 512 2048; do
        for mode in cpu auto gpu; do product panel 4 8192 256 "$kb" "$mode" 1 2; done
    done
    product large 4 16384 256 32 cpu 1 1
    product large 4 16384 256 2048 gpu 1 2
    product large 4 16384 256 2048 auto 1 2
    product large 4 16384 256 32 auto 1 1
    for nb in 64 1024; do
        for mode in cpu auto; do product blocks 4 8192 "$nb" 32 "$mode" 1 2; done
    done
fi

# ---------------------------------------------------------------- report
stamp report
python3 bench/scalapack_report.py "$W/runs.csv" "$W/calls.csv" "$W/pblas.csv" > "$OUT/scalapack_report.md" \
    || { echo "bench/scalapack_report.py failed"; failures=$((failures + 1)); }
cat "$OUT/scalapack_report.md"
cp "$W/runs.csv" "$W/calls.csv" "$W/pblas.csv" "$OUT/"
# Every run's output and traces, packed (until here, a run cut short
# leaves them unpacked under $OUT/scalapack).
tar czf "$OUT/scalapack_runs.tar.gz" -C "$W" runs results build.log test-scalapack.log 2>/dev/null \
    && rm -rf "$W/runs" "$W/results" "$W/psgemm" "$SHIM"
stamp end
echo "scalapack_gpu: $failures failed runs"
[ "$failures" -eq 0 ]
