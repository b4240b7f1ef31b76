#!/usr/bin/env bash
# The library's fp32-tc math (issue 28) on an H100: build, the GPU tests
# (bit for bit against the CPU model, every path), the contract on the
# acceptance set against FP64, and timings of the mode against strict (and
# cuBLAS, in the same bench_gemm run) at 4096^3 and 8192^3.
#
#   bash research/ozaki/gpu/lib_check.sh [PHASE ...]     (from the repository root)
#
# PHASE: build, test, sanitize, strict, suite, accuracy, accuracy16k, passes,
# profile, timing, random, random-large, or
# all (the default: build, test, accuracy, timing, in that order). Each
# phase after build needs the build; run them one by one where a command
# may take at most 10 minutes. Logs and tables in $OUT (default ./out):
#   build.log            the build
#   test.log             make test-ozaki-model test-fp32-tc test-preload under TGEMM_TEST_REQUIRE_GPU=1
#                        (CPU model; GPU bit for bit on every path; trace and verbose lines;
#                        LD_PRELOAD with TGEMM_MATH=fp32-tc)
#   sanitize.log         compute-sanitizer memcheck over test_fp32_tc (every kernel of the mode)
#   strict.log           make test-gpu (the strict path's suite, unchanged) under TGEMM_TEST_REQUIRE_GPU=1
#   accuracy.md          per shape and input: max and normwise errors, strict and fp32-tc
#   accuracy.log         its TGEMM_VERBOSE=2 lines (which math ran each call, N, or why strict)
#   accuracy16k.md/.log  the same at 16384^3 (under auto: the mode runs there by itself)
#   passes.md            lib_passes: each pass of the call timed alone, against its bound
#                        (memory or tensor engine), beside the whole call and strict
#   ncu_*.txt            profile: ncu on one launch of each kernel of the call at PROFILE_SHAPE
#   suite.log            the strict suite's test_gemm (small rows) in the mode, forced on every size:
#                        its FP64 bounds, NaN/Inf and alpha/beta cases must hold there too
#   timing_strict.csv, timing_fp32-tc.csv, timing.log   bench_gemm in either math
#   random/              bench-random --math-compare over RANDOM_SEEDS (default 3 fresh) of 100
#                        problems, RANDOM_REPS (31) rounds: the fp32-tc math timed beside strict in
#                        the same rounds (never slower by more than 2%), and against cuBLAS
#   random_large/        the same with --large (every dimension 2048 to 20000), RANDOM_LARGE_COUNT
#                        (30) problems of one fresh seed, RANDOM_LARGE_REPS (9) rounds (the round-by-round
#                        interval needs 6 or more) in a time budget of RANDOM_LARGE_BUDGET seconds
#                        (default 10 a problem: with bench_random's own, 1.5, 27 of 30 large
#                        problems got fewer than 6 rounds, 25 of them 3): the mode's range and its edge
# Exit status: nonzero if any phase failed.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
JOBS=${JOBS:-$(nproc)}
phases=("$@")
[ ${#phases[@]} -eq 0 ] || [ "${phases[0]}" = all ] && phases=(build test accuracy timing)
fail=0
note() { echo "$@" | tee -a "$OUT/summary.log"; }

acc_bin=build/research/lib_accuracy
passes_bin=build/research/lib_passes
ozaki_objs="build/obj/kernels/ozaki/cert.o build/obj/kernels/ozaki/convert.o build/obj/kernels/ozaki/crt.o
    build/obj/kernels/ozaki/igemm.o build/obj/kernels/ozaki/pipeline.o build/obj/kernels/ozaki/stats.o
    build/obj/kernels/tensor_map.o"

for phase in "${phases[@]}"; do
    note "== $phase $(date -u +%FT%TZ) $(git rev-parse --short HEAD 2>/dev/null)"
    case $phase in
    build)
        {
            nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv
            make -j"$JOBS" lib build/tests/test_fp32_tc build/tests/test_ozaki_model build/tests/has_gpu \
                build/tests/test_gemm build/bench/bench_gemm &&
                mkdir -p build/research &&
                g++ -std=c++17 -O2 -Wall -Wextra -Werror -Iinclude -Itests -isystem /usr/local/cuda/include \
                    -o "$acc_bin" research/ozaki/gpu/lib_accuracy.cpp -Lbuild/lib -ltgemm \
                    -Wl,-rpath,"$PWD/build/lib" -L/usr/local/cuda/lib64 -lcudart -Wl,-rpath,/usr/local/cuda/lib64 \
                    -lpthread &&
                make -j"$JOBS" build/bench/bench_random &&
                g++ -std=c++17 -O2 -Wall -Wextra -Werror -Iinclude -Isrc -Itests -isystem /usr/local/cuda/include \
                    -o "$passes_bin" research/ozaki/gpu/lib_passes.cpp $ozaki_objs -Lbuild/lib -ltgemm \
                    -Wl,-rpath,"$PWD/build/lib" -L/usr/local/cuda/lib64 -lcudart -Wl,-rpath,/usr/local/cuda/lib64 \
                    -ldl -lpthread
        } > "$OUT/build.log" 2>&1 || { note "BUILD FAILED (build.log)"; exit 2; }
        ;;
    test)
        TGEMM_TEST_REQUIRE_GPU=1 make --no-print-directory test-ozaki-model test-fp32-tc test-preload \
            > "$OUT/test.log" 2>&1 || { fail=1; note "TEST FAILED (test.log)"; }
        grep -E '^== |FAILED|N = |declines|fp32-tc' "$OUT/test.log" | tee -a "$OUT/summary.log"
        ;;
    strict)
        TGEMM_TEST_REQUIRE_GPU=1 make --no-print-directory test-gpu > "$OUT/strict.log" 2>&1 ||
            { fail=1; note "STRICT SUITE FAILED (strict.log)"; }
        grep -E '^== ' "$OUT/strict.log" | tee -a "$OUT/summary.log"
        ;;
    sanitize)
        TGEMM_TEST_REQUIRE_GPU=1 compute-sanitizer --tool memcheck --error-exitcode 9 build/tests/test_fp32_tc \
            > "$OUT/sanitize.log" 2>&1 || { fail=1; note "MEMCHECK FAILED (sanitize.log)"; }
        tail -n 4 "$OUT/sanitize.log" | tee -a "$OUT/summary.log"
        ;;
    suite)
        TGEMM_TEST_REQUIRE_GPU=1 TGEMM_MATH=fp32-tc TGEMM_FP32_TC=always TGEMM_TEST_MAX_DIM=257 \
            build/tests/test_gemm > "$OUT/suite.log" 2>&1 || { fail=1; note "SUITE IN THE MODE FAILED (suite.log)"; }
        tail -n 3 "$OUT/suite.log" | tee -a "$OUT/summary.log"
        ;;
    random)
        make --no-print-directory bench-random BENCH_RANDOM_SEEDS="${RANDOM_SEEDS:-3}" SEED="${SEED:-}" \
            BENCH_RANDOM_REPS="${RANDOM_REPS:-31}" BENCH_RANDOM_ARGS=--math-compare BENCH_OUT="$OUT/random" > "$OUT/random.log" 2>&1 ||
            { fail=1; note "BENCH-RANDOM --math-compare FAILED (random.log)"; }
        grep -E '^bench-random: seeds|^\| all seeds \| (hot|cold) |slower than strict|^Checks' \
            "$OUT/random/random_report.md" | tee -a "$OUT/summary.log"
        ;;
    random-large)
        make --no-print-directory bench-random BENCH_RANDOM_SEEDS=1 SEED="${SEED:-}" \
            BENCH_RANDOM_COUNT="${RANDOM_LARGE_COUNT:-30}" BENCH_RANDOM_REPS="${RANDOM_LARGE_REPS:-9}" \
            BENCH_RANDOM_ARGS="--math-compare --large --time-budget ${RANDOM_LARGE_BUDGET:-$((10 * ${RANDOM_LARGE_COUNT:-30}))}" \
            BENCH_OUT="$OUT/random_large" > "$OUT/random_large.log" 2>&1 ||
            { fail=1; note "BENCH-RANDOM --large FAILED (random_large.log)"; }
        grep -E '^\| [0-9]+ \| (hot|cold) |slower than strict|^Checks' "$OUT/random_large/random_report.md" |
            tee -a "$OUT/summary.log"
        ;;
    accuracy16k)
        # auto: at 16384^3 the mode runs by itself; 32 columns (two per core of the H100 machine's 16) for the FP64 reference.
        LIB_ACCURACY_COLUMNS=32 TGEMM_VERBOSE=2 "$acc_bin" 16384x16384x16384 > "$OUT/accuracy16k${LIB_ACCURACY_CASES:+-part}.md" 2> "$OUT/accuracy16k.log" ||
            { fail=1; note "ACCURACY 16384^3: contract violated or error (accuracy16k.md, .log)"; }
        cat "$OUT/accuracy16k${LIB_ACCURACY_CASES:+-part}.md" | tee -a "$OUT/summary.log"
        grep -o 'fp32-tc moduli=[0-9]*\|strict (fp32-tc declined: [a-z-]*)' "$OUT/accuracy16k.log" | sort | uniq -c |
            tee -a "$OUT/summary.log"
        ;;
    passes)
        "$passes_bin" > "$OUT/passes.md" 2>&1 || { fail=1; note "PASSES FAILED (passes.md)"; }
        cat "$OUT/passes.md" | tee -a "$OUT/summary.log"
        ;;
    profile)
        # ncu on one launch of each kernel of the call (lib_passes at
        # PROFILE_SHAPE, default 8192x8192x8192:0.5): the two GEMMs differ only
        # in their template argument, so names are matched demangled.
        shape=${PROFILE_SHAPE:-8192x8192x8192:0.5}
        for k in 'gemm_kernel<.*CertEpi' 'gemm_kernel<.*ResidueEpi' crt_kernel convert_kernel mag_kernel \
            norm_part_kernel kmax_kernel; do
            name=$(printf '%s' "$k" | sed 's/[^A-Za-z_]//g')
            ncu --kernel-name-base demangled --kernel-name "regex:$k" --launch-skip 2 --launch-count 1 \
                --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats \
                --section InstructionStats --section LaunchStats --section Occupancy --section SchedulerStats \
                "$passes_bin" "$shape" > "$OUT/ncu_$name.txt" 2>&1 || { fail=1; note "NCU FAILED on $k (ncu_$name.txt)"; }
            grep -q 'No kernels were profiled' "$OUT/ncu_$name.txt" && { fail=1; note "NCU: no launch of $k"; }
            { echo "-- $k"; grep -E 'Duration|Compute \(SM\) Throughput|DRAM Throughput|Issue Slots Busy|Executed Instructions  ' \
                "$OUT/ncu_$name.txt"; } | tee -a "$OUT/summary.log"
        done
        ;;
    accuracy)
        # The mode on every size it can take, so that 1024^3 measures it too.
        TGEMM_FP32_TC=always TGEMM_VERBOSE=2 "$acc_bin" > "$OUT/accuracy.md" 2> "$OUT/accuracy.log" ||
            { fail=1; note "ACCURACY: contract violated or error (accuracy.md, accuracy.log)"; }
        cat "$OUT/accuracy.md" | tee -a "$OUT/summary.log"
        grep -c 'fp32-tc moduli' "$OUT/accuracy.log" | sed 's/^/calls in fp32-tc: /' | tee -a "$OUT/summary.log"
        grep -o 'strict (fp32-tc declined: [a-z-]*)' "$OUT/accuracy.log" | sort | uniq -c | tee -a "$OUT/summary.log"
        ;;
    timing)
        : > "$OUT/timing.log"
        for math in strict fp32-tc; do
            echo "== TGEMM_MATH=$math" >> "$OUT/timing.log"
            TGEMM_MATH=$math build/bench/bench_gemm --shape 4096 4096 4096 N N --shape 8192 8192 8192 N N \
                --shape 8192 8192 8192 T N --shape 16384 16384 16384 N N --shape 2048 2048 2048 N N --reps 20 --csv "$OUT/timing_$math.csv" >> "$OUT/timing.log" 2>&1 ||
                { fail=1; note "TIMING FAILED in $math (timing.log)"; }
        done
        # The mode forced on smaller products too: where it starts to win.
        echo "== TGEMM_MATH=fp32-tc TGEMM_FP32_TC=always" >> "$OUT/timing.log"
        TGEMM_MATH=fp32-tc TGEMM_FP32_TC=always build/bench/bench_gemm --shape 1024 1024 1024 N N \
            --shape 2048 2048 2048 N N --shape 3072 3072 3072 N N --reps 20 --csv "$OUT/timing_always.csv" \
            >> "$OUT/timing.log" 2>&1 || { fail=1; note "TIMING FAILED, mode forced (timing.log)"; }
        TGEMM_MATH=fp32-tc TGEMM_VERBOSE=2 build/bench/bench_gemm --shape 8192 8192 8192 N N --reps 1 --warmup 0 \
            2>&1 | grep -m 3 'tgemm: math' >> "$OUT/timing.log"
        tee -a "$OUT/summary.log" < "$OUT/timing.log"
        ;;
    *)
        note "unknown phase $phase (build, test, sanitize, strict, suite, accuracy, accuracy16k, passes, profile, timing, random, random-large, all)"
        exit 2
        ;;
    esac
done
note "== done: $([ $fail -eq 0 ] && echo ALL OK || echo FAILURES)"
exit $fail
