#!/usr/bin/env bash
# Everything that needs the GPU, in one command, with every log kept:
# build, the full suite (GPU cases running), the long tier, compute-sanitizer
# memcheck and racecheck on a reduced set, and the benchmarks.
#
#   tests/gpu-session.sh [STEP...]   steps: info build test test-a test-k test-b groups long sanitize (memcheck, racecheck)
#                                    bench sweep rankk profile sass hosttrace hostthreads
#
# Logs, CSV and PNG files are written to a work folder and packed into
# $OUT/session.tar.gz after every step (the device tool returns few files,
# and none from a call it cuts off at its time limit), with the summary in
# $OUT/summary.txt at the end. Each step runs even if an earlier one
# failed; the exit status is that of the first failure.
set -u
# A GPU session must run every GPU case: with no GPU found, or a driver CUDA
# cannot use, the test programs fail instead of skipping (tests/gpu_probe.h).
export TGEMM_TEST_REQUIRE_GPU=1
FINAL=${OUT:-build/gpu-session}
OUT=$(mktemp -d)
mkdir -p "$FINAL"
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(info build test long sanitize bench)
JOBS=$(nproc)
FC=${FC:-$(command -v gfortran || command -v gfortran-13 || command -v gfortran-12 || echo gfortran)}
export FC

declare -A status
first_fail=0
run_step() {
    local name=$1
    shift
    local t0=$SECONDS
    echo "=== $name: $*"
    ( set -o pipefail; "$@" 2>&1 | tee "$OUT/$name.log" )
    local rc=$?
    status[$name]="rc=$rc $((SECONDS - t0))s"
    [ $rc -eq 0 ] || [ $first_fail -ne 0 ] || first_fail=$rc
    pack
}

# Copies what the steps so far left into $FINAL, after every step, so that
# a session the device tool cuts off at its time limit still returns them.
pack() {
    for f in suite.csv squares.csv host.csv host_trace_summary.txt; do
        [ -f "$OUT/$f" ] && cp "$OUT/$f" "$FINAL/$f"
    done
    [ -f "$OUT/host_trace.csv" ] && gzip -c "$OUT/host_trace.csv" > "$FINAL/host_trace.csv.gz"
    tar czf "$FINAL/session.tar.gz" -C "$OUT" .
}

for step in "${steps[@]}"; do
    case $step in
    info)
        run_step info sh -c 'nvidia-smi; nvcc --version; nproc; free -g' ;;
    build)
        run_step build make -j"$JOBS" all build/tests/test_api build/tests/test_gemm build/tests/test_env build/tests/test_long \
            build/tests/test_host
        cat build/obj/kernels/*.ptxas.log > "$OUT/ptxas.log" 2>/dev/null ;;
    test)
        run_step test make test ;;
    test-a|test-k|test-b)
        # make test in three device calls of one GPU each (the whole takes
        # longer than one call allows; docs/performance.md has the times):
        # test-a test-gpu and test-host, test-k test-kernels, test-b every
        # other run of make test. The results of the three add up to make
        # test's; each prints its summary. Each target is made on its own
        # and the results so far are packed after it, so that a call cut at
        # its time limit keeps them.
        heavy="test-gpu test-kernels test-host"
        case $step in
        test-a) runs="test-gpu test-host" ;;
        test-k) runs="test-kernels" ;;
        *) runs=$(make -s print-test-runs | tr ' ' '\n' | grep -vxE "$(echo $heavy | tr ' ' '|')" | tr '\n' ' ') ;;
        esac
        rm -rf build/tests/results
        rc=0
        for run in $runs; do
            t0=$SECONDS
            make --no-print-directory -k TEST_RUNS_SERIAL=1 "$run" >> "$OUT/$step.runs.log" 2>&1 || rc=2
            echo "$run $((SECONDS - t0))s" >> "$OUT/$step.times.txt"
            sh tests/summary.sh build/tests/results $rc > "$OUT/$step.summary-so-far.txt" 2>&1
            tar czf "$OUT/$step.results.tar.gz" build/tests/results
            pack
        done
        run_step "$step" sh tests/summary.sh build/tests/results $rc ;;
    groups)
        # make test's runs at once on a machine of four GPUs or more, where
        # in turn they take longer than one device call allows: test-host
        # with every GPU visible (its runs spread over all of them),
        # test-gpu and test-kernels on a GPU each, the rest in order on
        # another (they share the install tree and docs/html: one make),
        # then one summary of them all. With fewer GPUs, make test.
        if [ "$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')" -lt 4 ]; then
            run_step test make test
        else
            run_step groups_build make -j"$JOBS" test-programs
            rm -rf build/tests/results
            rest=$(make -s print-test-runs | tr ' ' '\n' | grep -vxE 'test-host|test-gpu|test-kernels' | tr '\n' ' ')
            for g in "all test-host" "0 test-gpu" "1 test-kernels" "2 $rest"; do
                set -- $g
                gpus=$1
                shift
                (
                    [ "$gpus" = all ] || export CUDA_VISIBLE_DEVICES=$gpus
                    make --no-print-directory -k TEST_RUNS_SERIAL=1 "$@" > "$OUT/group_$1.log" 2>&1
                    echo $? > "$OUT/group_$1.status"
                ) &
            done
            wait
            rc=0
            for f in "$OUT"/group_*.status; do [ "$(cat "$f")" = 0 ] || rc=2; done
            run_step groups sh tests/summary.sh build/tests/results $rc
        fi ;;
    long)
        run_step long make test-long ;;
    sanitize|memcheck|racecheck)
        # Reduced sets. memcheck: every row up to 65 with the default
        # dispatch; rows up to 257 with 256x128x16 forced (whole tiles, so
        # its straight-line load path and whole-tile ring run), the ring's
        # rows of 16 steps of 8 on 256x128x8 and its 512 x 512 rows on
        # 128x256x8; rows up to 130 on 64x256x16 and on 256x64x16 (tiles
        # of unequal sides); every row up to 65 with op(A) packed wherever it is
        # transposed (TGEMM_PACK=always); the streaming rows (s = 16, 13,
        # the 4xxx-row ones with s < 10, and the m <= 16 rows where the
        # kernel fed by the tensor copy engine runs, GEMV's s = 1 included);
        # the host path out of core; rows up to 257 on the rank-k kernel
        # (forced); rows up to 130 on 64x64x16 (its async ring, 4-byte
        # copies where operands are unaligned). racecheck: tiny rows, with the default
        # dispatch, with 128x128x8 forced and in stream-K form (rows no deeper
        # than 20000), rows up to 33 with op(A) packed, streaming rows (skinny_rows_ring; the TMA kernel,
        # GEMV's included), 256x128x16's branch-free TN step (forced), and
        # the whole-tile ring: NN and NT on 256x128x16, 16 steps of 8 with an
        # operand through registers on 128x256x8, 16 of 16 on 128x128x16;
        # rows up to 33 on the rank-k kernel (forced; 17 and 32 deep: two
        # chunks through its two stages) and on 64x64x16 (forced: its ring
        # of four stages).
        [ "$step" = racecheck ] ||
        run_step memcheck sh -c 'TGEMM_TEST_MAX_DIM=65 compute-sanitizer --tool memcheck --error-exitcode 9 build/tests/test_gemm &&
            TGEMM_KERNEL=256x128x16 TGEMM_TEST_MAX_DIM=257 TGEMM_TEST_MAX_K=20000 compute-sanitizer --tool memcheck --error-exitcode 9 build/tests/test_gemm &&
            TGEMM_KERNEL=256x128x8 TGEMM_TEST_FILTER="??_256x256x128_*" compute-sanitizer --tool memcheck --error-exitcode 9 build/tests/test_gemm &&
            TGEMM_KERNEL=128x256x8 TGEMM_TEST_FILTER="??_512x512x*" compute-sanitizer --tool memcheck --error-exitcode 9 build/tests/test_gemm &&
            TGEMM_KERNEL=64x256x16 TGEMM_TEST_MAX_DIM=130 compute-sanitizer --tool memcheck --error-exitcode 9 build/tests/test_gemm &&
            TGEMM_KERNEL=256x64x16 TGEMM_TEST_MAX_DIM=130 compute-sanitizer --tool memcheck --error-exitcode 9 build/tests/test_gemm &&
            TGEMM_STREAMK=always TGEMM_TEST_MAX_DIM=129 TGEMM_TEST_MAX_K=20000 compute-sanitizer --tool memcheck --error-exitcode 9 build/tests/test_gemm &&
            TGEMM_PACK=always TGEMM_TEST_MAX_DIM=65 compute-sanitizer --tool memcheck --error-exitcode 9 build/tests/test_gemm &&
            TGEMM_TEST_FILTER="*x16x*" compute-sanitizer --tool memcheck --error-exitcode 9 build/tests/test_gemm &&
            TGEMM_TEST_FILTER="*x13x*" compute-sanitizer --tool memcheck --error-exitcode 9 build/tests/test_gemm &&
            TGEMM_TEST_FILTER="*_4???x?x*" compute-sanitizer --tool memcheck --error-exitcode 9 build/tests/test_gemm &&
            TGEMM_TEST_FILTER="tt_12x4100x*" compute-sanitizer --tool memcheck --error-exitcode 9 build/tests/test_gemm &&
            TGEMM_TEST_FILTER="??_16x4*" compute-sanitizer --tool memcheck --error-exitcode 9 build/tests/test_gemm &&
            TGEMM_TEST_FILTER="??_?x4*" compute-sanitizer --tool memcheck --error-exitcode 9 build/tests/test_gemm &&
            TGEMM_TEST_FILTER="??_10x4100x*" compute-sanitizer --tool memcheck --error-exitcode 9 build/tests/test_gemm &&
            TGEMM_TEST_FILTER="??_4100x12x*" compute-sanitizer --tool memcheck --error-exitcode 9 build/tests/test_gemm &&
            TGEMM_KERNEL=rank-k TGEMM_TEST_MAX_DIM=257 TGEMM_TEST_MAX_K=20000 compute-sanitizer --tool memcheck --error-exitcode 9 build/tests/test_gemm &&
            TGEMM_KERNEL=64x64x16 TGEMM_TEST_MAX_DIM=130 compute-sanitizer --tool memcheck --error-exitcode 9 build/tests/test_gemm &&
            TGEMM_DEVICE_MEMORY_LIMIT=8388608 TGEMM_VERBOSE=2 compute-sanitizer --tool memcheck --error-exitcode 9 build/tests/test_host out-of-core'
        [ "$step" = memcheck ] ||
        run_step racecheck sh -c 'TGEMM_TEST_MAX_DIM=17 compute-sanitizer --tool racecheck --error-exitcode 9 build/tests/test_gemm &&
            TGEMM_KERNEL=128x128x8 TGEMM_TEST_MAX_DIM=17 TGEMM_TEST_MAX_K=20000 compute-sanitizer --tool racecheck --error-exitcode 9 build/tests/test_gemm &&
            TGEMM_STREAMK=always TGEMM_TEST_MAX_DIM=17 TGEMM_TEST_MAX_K=20000 compute-sanitizer --tool racecheck --error-exitcode 9 build/tests/test_gemm &&
            TGEMM_PACK=always TGEMM_TEST_MAX_DIM=33 compute-sanitizer --tool racecheck --error-exitcode 9 build/tests/test_gemm &&
            TGEMM_TEST_FILTER="n?_34001x13x1999*" compute-sanitizer --tool racecheck --error-exitcode 9 build/tests/test_gemm &&
            TGEMM_TEST_FILTER="nn_4100x9x1500*" compute-sanitizer --tool racecheck --error-exitcode 9 build/tests/test_gemm &&
            TGEMM_TEST_FILTER="nn_9x4099x1500*" compute-sanitizer --tool racecheck --error-exitcode 9 build/tests/test_gemm &&
            TGEMM_TEST_FILTER="nn_8x4100x2048*" compute-sanitizer --tool racecheck --error-exitcode 9 build/tests/test_gemm &&
            TGEMM_TEST_FILTER="tt_1x4100x2000*" compute-sanitizer --tool racecheck --error-exitcode 9 build/tests/test_gemm &&
            TGEMM_TEST_FILTER="nn_4096x1x4096*" compute-sanitizer --tool racecheck --error-exitcode 9 build/tests/test_gemm &&
            TGEMM_KERNEL=256x128x16 TGEMM_TEST_FILTER="tn_512x384x96*" compute-sanitizer --tool racecheck --error-exitcode 9 build/tests/test_gemm &&
            TGEMM_KERNEL=256x128x16 TGEMM_TEST_FILTER="tn_300x200x32*" compute-sanitizer --tool racecheck --error-exitcode 9 build/tests/test_gemm &&
            TGEMM_KERNEL=256x128x16 TGEMM_TEST_FILTER="n?_512x512x256*" compute-sanitizer --tool racecheck --error-exitcode 9 build/tests/test_gemm &&
            TGEMM_KERNEL=128x256x8 TGEMM_TEST_FILTER="tt_256x256x128_*" compute-sanitizer --tool racecheck --error-exitcode 9 build/tests/test_gemm &&
            TGEMM_KERNEL=128x128x16 TGEMM_TEST_FILTER="nt_384x256x256*" compute-sanitizer --tool racecheck --error-exitcode 9 build/tests/test_gemm &&
            TGEMM_KERNEL=rank-k TGEMM_TEST_MAX_DIM=33 TGEMM_TEST_MAX_K=20000 compute-sanitizer --tool racecheck --error-exitcode 9 build/tests/test_gemm &&
            TGEMM_KERNEL=64x64x16 TGEMM_TEST_MAX_DIM=33 TGEMM_TEST_MAX_K=20000 compute-sanitizer --tool racecheck --error-exitcode 9 build/tests/test_gemm' ;;
    bench)
        run_step bench make bench BENCH_OUT="$OUT" ;;
    sweep)
        # Each tiled family forced on the same shapes: the efficiencies in
        # the dispatcher's cost model come from here. The families are the
        # registry's (src/kernels/families.def) unless SWEEP_FAMILIES names some.
        make -j"$JOBS" build/bench/bench_gemm >/dev/null
        for f in ${SWEEP_FAMILIES:-$(sed -n 's/^TGEMM_TILED_FAMILY(\([0-9x]*\),.*/\1/p' src/kernels/families.def)}; do
            run_step "sweep_$f" env TGEMM_KERNEL=$f build/bench/bench_gemm --reps 20 \
                --shape 4096 4096 4096 N N --shape 4096 4096 4096 N T --shape 4096 4096 4096 T N \
                --shape 4096 4096 4096 T T --shape 2048 2048 2048 N N --shape 1024 1024 1024 N N \
                --shape 512 512 512 N N --shape 256 256 8192 N N --shape 4095 4095 4095 N N --csv "$OUT/sweep_$f.csv"
        done ;;
    rankk)
        # The rank-k kernel's factors (src/dispatch/factors.cpp: rank_k_*
        # and tiled_c_efficiency): rank-k updates and longer K with the
        # default plans, with the rank-k kernel forced, and on the tiled
        # family these shapes were planned on before it (256x128x8 forced).
        make -j"$JOBS" build/bench/bench_gemm >/dev/null
        rk_shapes=()
        for k in 1 2 4 8 16 24 32 40 64 100 128 200; do rk_shapes+=(--shape 8192 8192 $k N N); done
        for s in "4096 4096 16 T N" "4096 4096 32 N T" "4096 4096 128 T T" "20000 20000 8 N N" "2048 2048 16 N N" \
                 "1000 1000 8 N N" "3001 2999 33 N N" "8833 23 10 N N" "300 500 3 N N"; do
            rk_shapes+=(--shape $s)
        done
        run_step rankk_default build/bench/bench_gemm --reps 20 "${rk_shapes[@]}" --csv "$OUT/rankk_default.csv"
        run_step rankk_forced env TGEMM_KERNEL=rank-k build/bench/bench_gemm --reps 20 "${rk_shapes[@]}" \
            --csv "$OUT/rankk_forced.csv"
        run_step rankk_tiled env TGEMM_KERNEL=256x128x8 build/bench/bench_gemm --reps 20 "${rk_shapes[@]}" \
            --csv "$OUT/rankk_tiled.csv" ;;
    profile)
        # Where the large squares' kernel (256x128x16, as the dispatcher
        # picks it at 4096^3 NN) and cuBLAS's spend their issue cycles: ncu
        # with PC sampling, clocks as found, one call of each, the samples
        # per SASS instruction summarized by bench/ncu_stalls.py. cuBLAS 13.0
        # runs 4096^3 NN on its tilesize256x128x8 kernel (H100).
        # PROFILE_SHAPE (bench_gemm's "M N K TA TB"), PROFILE_TGEMM and
        # PROFILE_CUBLAS (ncu kernel filters) profile another shape, such
        # as the unaligned 4095^3 NN, whose kernels' names differ.
        make -j"$JOBS" build/bench/bench_gemm >/dev/null
        # ncu prints template arguments as (int)256.
        for who in tgemm cublas; do
            if [ $who = tgemm ]; then pick=${PROFILE_TGEMM:-'regex:TileShape<tgemm::kernels::Tile256x128x16>'}
            else pick=${PROFILE_CUBLAS:-'regex:xmma_gemm_f32f32.*tilesize256x128x8'}; fi
            run_step "profile_$who" ncu --clock-control none --set full --import-source no \
                --kernel-name-base demangled -k "$pick" -s 3 -c 1 -f -o "$OUT/profile_$who" \
                build/bench/bench_gemm --reps 20 --warmup 3 --shape ${PROFILE_SHAPE:-4096 4096 4096 N N}
            ncu -i "$OUT/profile_$who.ncu-rep" --page details --csv > "$OUT/profile_${who}_details.csv" 2>&1
            ncu -i "$OUT/profile_$who.ncu-rep" --page source --csv --print-source sass 2>&1 |
                gzip > "$OUT/profile_${who}_sass.csv.gz"
            run_step "profile_${who}_stalls" python3 bench/ncu_stalls.py "$OUT/profile_${who}_sass.csv.gz"
        done ;;
    sass)
        # Register-bank pressure of every tiled kernel's main loop
        # (bench/sass_banks.py): a kernel far above its family's others has
        # drawn an unlucky register allocation from ptxas.
        run_step sass make sass ;;
    hosttrace)
        # Where 8192^3 on host operands spends its time: TGEMM_HOST_TRACE's
        # CSV (host_trace.csv), its summary and the model's prediction.
        run_step hosttrace make bench-host-trace BENCH_OUT="$OUT" ;;
    hostthreads)
        # 8192^3 from pageable memory with 4 to 16 staging threads.
        make -j"$JOBS" build/bench/bench_gemm >/dev/null
        for t in ${HOST_THREADS:-4 8 12 14 16}; do
            run_step "hostthreads_$t" env TGEMM_HOST_COPY_THREADS=$t build/bench/bench_gemm --host --reps 5 \
                --shape 8192 8192 8192 N N --csv "$OUT/hostthreads_$t.csv"
        done ;;
    *)
        echo "unknown step $step"; first_fail=2 ;;
    esac
done

echo "=== summary"
for k in "${!status[@]}"; do echo "$k ${status[$k]}"; done | sort | tee "$OUT/summary.txt"
cp "$OUT/summary.txt" "$FINAL/summary.txt"
pack
exit $first_fail
