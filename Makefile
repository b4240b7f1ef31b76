# tgemm: build, test, install, document and benchmark libtgemm.so.
#
#   make                 build build/lib/libtgemm.so
#   make test            the test suite and its summary (GPU cases skip where no GPU
#                        is installed, fail where one is but CUDA cannot use it)
#   make test-long       large and >2^31-element cases (needs a GPU)
#   make demo            multiply on the GPU, check against OpenBLAS, time both
#   make bench           benchmarks (needs a GPU; cuBLAS is loaded at run time): device
#                        pointers, then host operands (--host), then bench-blas:
#                        cblas_sgemm plain against LD_PRELOAD=libtgemm.so
#   make bench-host-trace  the timeline of 8192^3 on host operands (TGEMM_HOST_TRACE)
#   make bench-random    tgemm against cuBLAS on random problems (GPU): BENCH_RANDOM_SEEDS (3)
#                        fresh seeds, or SEED, SEED+1, ...; BENCH_RANDOM_COUNT (100) problems
#                        each; plans, CSV, Markdown report and plots in BENCH_OUT (build/bench);
#                        BENCH_RANDOM_ARGS=--math-compare adds the fp32-tc math against strict
#   make bench-multi     several GPUs (issue 30): tgemm over TGEMM_DEVICES against cuBLAS-XT, the
#                        links; CSV, logs and multi_report.md in BENCH_OUT/multi (bench/multi_gpu.sh)
#   make bench-programs  build every benchmark program without running it
#   make plan-dump       build/bench/plan_dump: the dispatcher's plans of random problems on a
#                        described GPU, no GPU needed (make test-plans holds the H100's to
#                        tests/data/plans-h100.txt.xz; make plans-baseline rewrites that file
#                        when a change means to change plans)
#   make install         PREFIX=/usr/local DESTDIR= (staged installs)
#   make docs            Doxygen HTML in docs/html, warnings are errors
#   make deps            install the Debian/Ubuntu packages the above need (.ci/packages)
#   make clean
#   make help            this list (README.md's "Make targets" has every target)
#
# make, make demo, make test and make test-long compile on every core
# unless the command line gives -j (make -j1 builds one file at a time);
# the tests themselves run one after another.

# The version lives in the header only.
VERSION_MAJOR := $(shell sed -n 's/^\#define TGEMM_VERSION_MAJOR \([0-9]*\).*/\1/p' include/tgemm.h)
VERSION_MINOR := $(shell sed -n 's/^\#define TGEMM_VERSION_MINOR \([0-9]*\).*/\1/p' include/tgemm.h)
VERSION_PATCH := $(shell sed -n 's/^\#define TGEMM_VERSION_PATCH \([0-9]*\).*/\1/p' include/tgemm.h)
VERSION := $(VERSION_MAJOR).$(VERSION_MINOR).$(VERSION_PATCH)

# CUDA: $CUDA_HOME, else /usr/local/cuda, else wherever nvcc is on PATH.
CUDA_HOME ?= $(or $(wildcard /usr/local/cuda),$(patsubst %/bin/nvcc,%,$(shell command -v nvcc 2>/dev/null)))
NVCC := $(CUDA_HOME)/bin/nvcc
CUDA_LIBDIR := $(or $(wildcard $(CUDA_HOME)/lib64),$(CUDA_HOME)/lib)
# Hopper machine code (sm_90a) plus PTX that newer GPUs compile at load time.
CUDA_ARCHS ?= -gencode=arch=compute_90a,code=sm_90a -gencode=arch=compute_80,code=compute_80

CC ?= cc
CXX ?= g++
# Fortran: FC if given, else the first of gfortran, gfortran-13, gfortran-12
# on PATH (some systems ship only a versioned gfortran).
ifneq ($(filter default undefined,$(origin FC)),)
FC := $(notdir $(firstword $(foreach f,gfortran gfortran-13 gfortran-12,$(shell command -v $(f) 2>/dev/null)) gfortran))
endif

# Make 4.3 shows a -j given to it only to recipes, in MAKEFLAGS: so the
# targets above decide there, starting their builds as a sub-make with
# $(JOBS), which inherits a -j given and otherwise asks for every core.
NPROC := $(shell nproc 2>/dev/null || echo 1)
JOBS = $(if $(findstring -j,$(MAKEFLAGS)),,-j$(NPROC))

PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
DOCDIR ?= $(PREFIX)/share/doc/tgemm
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig

BUILD := build
LIBNAME := libtgemm.so
SONAME := $(LIBNAME).$(VERSION_MAJOR)
REALNAME := $(LIBNAME).$(VERSION)
LIB := $(BUILD)/lib/$(REALNAME)

WARN := -Wall -Wextra
CPPFLAGS_LIB := -Iinclude -Isrc -isystem $(CUDA_HOME)/include -DTGEMM_BUILDING_LIBRARY
CXXFLAGS_LIB := -std=c++17 -O2 -g -fPIC -fvisibility=hidden -fvisibility-inlines-hidden $(WARN) -Werror
NVCCFLAGS := -std=c++17 -O3 -lineinfo $(CUDA_ARCHS) -Xcompiler -fPIC,-fvisibility=hidden,-Wall \
             -Xptxas -warn-spills --resource-usage

LIB_CXX_SRC := $(wildcard src/*/*.cpp)
LIB_CU_SRC := $(wildcard src/kernels/*.cu src/kernels/ozaki/*.cu)
# The registry of tiled kernel families (src/kernels/families.def): one
# generated .cu and one object per family; STREAMK_FAMILIES, those whose
# line says they have the stream-K form.
KERNEL_FAMILIES := ${shell sed -n 's/^TGEMM_TILED_FAMILY(\([^,]*\),.*/\1/p' src/kernels/families.def}
STREAMK_FAMILIES := ${shell sed -n 's/^TGEMM_TILED_FAMILY(\([^,]*\), *1)$$/\1/p' src/kernels/families.def}
TILED_GEN := $(KERNEL_FAMILIES:%=$(BUILD)/gen/kernels/tiled_%.cu)
TILED_OBJ := $(KERNEL_FAMILIES:%=$(BUILD)/obj/kernels/tiled_%.o)
LIB_OBJ := $(LIB_CXX_SRC:src/%.cpp=$(BUILD)/obj/%.o) $(LIB_CU_SRC:src/%.cu=$(BUILD)/obj/%.o) $(TILED_OBJ)
LIB_DEPS := $(LIB_OBJ:.o=.d)

.PHONY: all lib help bench-plans test test-programs test-harness test-gpu-probe test-long test-cpu test-gpu test-host test-skinny-plan test-offload-model test-ozaki-model test-fp32-tc test-streamk-plan test-host-plan test-host-mock test-kernels test-env \
        plan-dump test-plans plans-baseline \
        test-headers test-symbols test-blas test-preload test-fortran test-install test-docs test-tools demo bench bench-blas \
        bench-host-trace bench-random bench-multi bench-programs \
        install install-shared install-includes install-pc install-docs uninstall docs deps clean resources sass

all:
	@$(MAKE) --no-print-directory $(JOBS) lib

lib: $(BUILD)/lib/$(LIBNAME)

$(BUILD)/obj/%.o: src/%.cpp
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS_LIB) $(CXXFLAGS_LIB) -MMD -MP -c $< -o $@

# ptxas's register/spill report for each kernel lands next to the object;
# a kernel that spills fails the build, and its object is removed so that
# the next make does not take it as built.
define nvcc_object
	@mkdir -p $(@D)
	$(NVCC) $(CPPFLAGS_LIB) $(NVCCFLAGS) -MMD -MP -c $< -o $@ 2> $(@:.o=.ptxas.log) \
	    || { cat $(@:.o=.ptxas.log); exit 1; }
	@! grep -i 'bytes spill' $(@:.o=.ptxas.log) | grep -v ' 0 bytes spill stores, 0 bytes spill loads' \
	    || { echo "register spills in $<"; rm -f $@; exit 1; }
endef

$(BUILD)/obj/%.o: src/%.cu
	$(nvcc_object)

# The fp32-tc math's kernels round every operation as written (the CPU
# model reproduces them bit for bit): no contraction into FMA.
$(BUILD)/obj/kernels/ozaki/%.o: NVCCFLAGS += -fmad=false

$(TILED_OBJ): $(BUILD)/obj/kernels/tiled_%.o: $(BUILD)/gen/kernels/tiled_%.cu
	$(nvcc_object)

# A tiled family's .cu: kernels::tiled_<name> defined from its configuration
# (TGEMM_DEFINE_TILED_FAMILY, src/kernels/tiled/family.cuh) with the
# registry's stream-K flag. Written only when its text changes, so that
# editing one registry line (or this Makefile) rebuilds only what it changed;
# through a file of its own per process, since an unchanged file stays older
# than the Makefile and two makes at once both write it again.
$(TILED_GEN): $(BUILD)/gen/kernels/tiled_%.cu: src/kernels/families.def Makefile
	@mkdir -p $(@D)
	@flag=$$(sed -n 's/^TGEMM_TILED_FAMILY($*, *\([01]\))$$/\1/p' $<); \
	test -n "$$flag" || { echo "$*: not a family of $<"; exit 1; }; \
	printf '%s\n' '// Generated from src/kernels/families.def by the Makefile: the tiled family $*.' \
	    '#include "kernels/tiled/family.cuh"' '' 'namespace tgemm {' 'namespace kernels {' \
	    "TGEMM_DEFINE_TILED_FAMILY($*, $$flag)" '}  // namespace kernels' '}  // namespace tgemm' > $@.tmp.$$$$; \
	if cmp -s $@.tmp.$$$$ $@; then rm -f $@.tmp.$$$$; else mv -f $@.tmp.$$$$ $@; fi

$(LIB): $(LIB_OBJ) src/tgemm.map
	@mkdir -p $(@D)
	$(CXX) -shared -o $@ $(LIB_OBJ) -Wl,-soname,$(SONAME) -Wl,--version-script=src/tgemm.map \
	    -Wl,--no-undefined -Wl,-z,defs -L$(CUDA_LIBDIR) -lcudart_static -ldl -lpthread -lrt

$(BUILD)/lib/$(SONAME): $(LIB)
	ln -sf $(REALNAME) $@

$(BUILD)/lib/$(LIBNAME): $(BUILD)/lib/$(SONAME)
	ln -sf $(SONAME) $@

-include $(LIB_DEPS)

# ---------------------------------------------------------------- tests

TEST_CFLAGS := -std=c99 -O2 -g $(WARN) -Werror -Iinclude -Itests -isystem $(CUDA_HOME)/include -D_GNU_SOURCE
TEST_LIBS := -L$(BUILD)/lib -ltgemm -Wl,-rpath,$(abspath $(BUILD)/lib) \
             -L$(CUDA_LIBDIR) -lcudart -Wl,-rpath,$(CUDA_LIBDIR) -lcmocka -ldl -lm -lpthread
TEST_COMMON := tests/common.c tests/gpu_probe.c tests/line_buffered.c
TEST_BINS := $(BUILD)/tests/test_api $(BUILD)/tests/test_gemm $(BUILD)/tests/test_env $(BUILD)/tests/test_long \
             $(BUILD)/tests/test_host

$(BUILD)/tests/%: tests/%.c $(TEST_COMMON) tests/common.h tests/gpu_probe.h $(BUILD)/lib/$(LIBNAME)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -o $@ $< $(TEST_COMMON) $(TEST_LIBS)

# make test builds everything its runs need (TEST_PROGRAMS) in parallel,
# then makes the run targets (TEST_RUNS) one at a time in a sub-make: they
# share the GPU, docs/html and build/stage, and their output stays readable.
# It keeps going past a failed run (-k), so that the summary printed at the
# end (tests/summary.sh) lists every failure, and fails if any run failed.
#
# Registering a test program with make test and its summary:
#  - a rule that builds it, and its path added to TEST_PROGRAMS;
#  - a run target (test-NAME, in .PHONY) whose recipe starts the program,
#    and every other check, through $(RUN_TEST) PROGRAM -- COMMAND ARGS
#    (settings go before $(RUN_TEST): VAR=value $(RUN_TEST) ...); PROGRAM
#    names it in the summary, where all its runs are added up;
#  - the run target added to TEST_RUNS.
# tests/run.sh counts the tests of a run from its output: a CMocka
# program's cases; a script's lines "[       OK ] what", "[  SKIPPED ] what"
# and "[  FAILED  ] what" (if it prints none, it is one test that passes
# when it exits 0; a script must keep the output of CMocka programs it runs
# out of its own). A program that skips prints why once, on a line
# "[ SKIPPING ] reason" (a CMocka program's GPU cases get it from
# gpu_available()); the summary shows each reason once per program.
TEST_PROGRAMS = $(BUILD)/lib/$(LIBNAME) $(BUILD)/tests/test_api $(BUILD)/tests/test_gemm $(BUILD)/tests/test_env \
                $(BUILD)/tests/test_host $(BUILD)/tests/test_blas $(BUILD)/tests/test_skinny_plan \
                $(BUILD)/tests/test_streamk_plan $(BUILD)/tests/test_host_plan $(BUILD)/tests/test_host_mock \
                $(BUILD)/tests/test_spread_plan $(PRELOAD_BINS) $(BUILD)/tests/run_fixture $(BUILD)/tests/stub/libcuda.so.1 $(BUILD)/examples/demo \
                $(BUILD)/tests/test_offload_model $(BUILD)/tests/test_ozaki_model $(BUILD)/tests/test_ozaki_buffers $(BUILD)/tests/test_fp32_tc \
                $(CPU_BLAS_BINS) $(BUILD)/tests/test_bench_check $(PLAN_DUMP) $(BUILD)/bench/bench_cpu_blas
TEST_RUNS := test-harness test-cpu test-skinny-plan test-streamk-plan test-host-plan test-spread-plan test-host-mock test-gpu test-host \
             test-kernels test-gpu-probe test-env test-headers test-symbols test-install test-docs test-blas test-preload test-fortran \
             test-tools test-offload-model test-ozaki-model test-fp32-tc test-cpu-blas test-numpy test-reference test-bench-check test-plans
TEST_RESULTS := $(BUILD)/tests/results
RUN_TEST := sh tests/run.sh $(TEST_RESULTS)
test:
	@rm -rf $(TEST_RESULTS)
	@$(MAKE) --no-print-directory $(JOBS) test-programs
	@$(MAKE) --no-print-directory -k TEST_RUNS_SERIAL=1 $(TEST_RUNS); sh tests/summary.sh $(TEST_RESULTS) $$?

ifdef TEST_RUNS_SERIAL
.NOTPARALLEL:
endif

# make test's runs in order (tests/gpu-session.sh's groups step).
.PHONY: print-test-runs
print-test-runs:
	@echo $(TEST_RUNS)

# make test's own machinery: builds on every core unless -j is given
# (tests/check-make.sh); the counting and the summary of runs whose results
# are known (tests/check-run.sh, with a CMocka program of known results).
$(BUILD)/tests/run_fixture: tests/run_fixture.c tests/line_buffered.c
	@mkdir -p $(@D)
	$(CC) -std=c99 -O2 $(WARN) -Werror -o $@ $^ -lcmocka

test-harness: $(BUILD)/tests/run_fixture
	$(RUN_TEST) check-make -- sh tests/check-make.sh "$(MAKE)"
	$(RUN_TEST) check-run -- sh tests/check-run.sh $(BUILD)/tests/run_fixture

test-cpu: $(BUILD)/tests/test_api
	$(RUN_TEST) test_api -- $(BUILD)/tests/test_api

# The GPU suite; then its small rows with every split-K through the
# workspace (TGEMM_CLUSTERS=0), and with every tiled plan in stream-K form
# (TGEMM_STREAMK=always); the skinny_n16 rows with the tensor-copy streaming
# kernel turned off (TGEMM_TMA=0: the same shapes on skinny_rows); the small
# rows with op(A) packed wherever it is transposed (TGEMM_PACK=always); NaN
# and Inf on every path, each path checked from the plan lines, with the
# default plans, every split through the workspace and every tiled plan in
# stream-K form (special-values); then the determinism shapes once with the cluster
# form and once without, one seed, compared bit for bit.
GEMM_BITS := $(BUILD)/tests/gemm_bits.bin
test-gpu: $(BUILD)/tests/test_gemm
	$(RUN_TEST) test_gemm -- $(BUILD)/tests/test_gemm
	TGEMM_CLUSTERS=0 TGEMM_TEST_MAX_DIM=257 $(RUN_TEST) test_gemm -- $(BUILD)/tests/test_gemm
	TGEMM_STREAMK=always TGEMM_TEST_MAX_DIM=257 $(RUN_TEST) test_gemm -- $(BUILD)/tests/test_gemm
	TGEMM_TMA=0 TGEMM_TEST_FILTER='nn_4096x16x4096*' $(RUN_TEST) test_gemm -- $(BUILD)/tests/test_gemm
	TGEMM_PACK=always TGEMM_TEST_MAX_DIM=257 $(RUN_TEST) test_gemm -- $(BUILD)/tests/test_gemm
	TGEMM_VERBOSE=2 $(RUN_TEST) test_gemm -- $(BUILD)/tests/test_gemm special-values
	TGEMM_VERBOSE=2 TGEMM_CLUSTERS=0 $(RUN_TEST) test_gemm -- $(BUILD)/tests/test_gemm special-values
	TGEMM_VERBOSE=2 TGEMM_STREAMK=always $(RUN_TEST) test_gemm -- $(BUILD)/tests/test_gemm special-values
	rm -f $(GEMM_BITS)
	seed=$$(od -An -N8 -tu8 /dev/urandom | tr -d ' '); \
	TGEMM_TEST_SEED=$$seed TGEMM_TEST_BITS=$(GEMM_BITS) $(RUN_TEST) test_gemm -- $(BUILD)/tests/test_gemm deterministic && \
	TGEMM_TEST_SEED=$$seed TGEMM_CLUSTERS=0 TGEMM_TEST_BITS=$(GEMM_BITS) $(RUN_TEST) test_gemm -- $(BUILD)/tests/test_gemm deterministic

# The streaming kernels' planner (split of K, row groups, cluster form;
# src/dispatch/skinny_split.cpp, plain C++) and the tensor-copy kernel's
# test of which products it takes (host code in its kernel's object): the
# unit test links those objects and needs no GPU.
$(BUILD)/tests/test_skinny_plan: tests/test_skinny_plan.cpp tests/line_buffered.c $(BUILD)/obj/dispatch/skinny_split.o \
                                 $(BUILD)/obj/kernels/skinny_tma.o $(BUILD)/obj/kernels/tensor_map.o
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -O2 -g $(WARN) -Werror -Iinclude -Isrc -isystem $(CUDA_HOME)/include -o $@ $< \
	    tests/line_buffered.c $(BUILD)/obj/dispatch/skinny_split.o $(BUILD)/obj/kernels/skinny_tma.o \
	    $(BUILD)/obj/kernels/tensor_map.o \
	    -L$(CUDA_LIBDIR) -lcudart_static -lcmocka -ldl -lpthread -lrt

test-skinny-plan: $(BUILD)/tests/test_skinny_plan
	$(RUN_TEST) test_skinny_plan -- $(BUILD)/tests/test_skinny_plan

# TGEMM_OFFLOAD=auto's model of both sides and what it learns from measured
# calls (src/blas/offload_model.cpp): plain C++, no GPU.
$(BUILD)/tests/test_offload_model: tests/test_offload_model.cpp tests/line_buffered.c $(BUILD)/obj/blas/offload_model.o
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -O2 -g $(WARN) -Werror -Iinclude -Isrc -o $@ $< tests/line_buffered.c \
	    $(BUILD)/obj/blas/offload_model.o -lcmocka

test-offload-model: $(BUILD)/tests/test_offload_model
	$(RUN_TEST) test_offload_model -- $(BUILD)/tests/test_offload_model

# The fp32-tc math's CPU model (tests/ozaki_model.cpp, on the kernels' own
# element functions, src/kernels/ozaki/element.hpp) against FP64 and the
# contract bound, no GPU. -ffp-contract=off: every rounding as written.
OZAKI_MODEL_SRC := tests/ozaki_model.cpp tests/ozaki_model.hpp tests/ozaki_inputs.hpp src/kernels/ozaki/element.hpp
$(BUILD)/tests/test_ozaki_model: tests/test_ozaki_model.cpp tests/line_buffered.c $(OZAKI_MODEL_SRC)
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -O2 -g $(WARN) -Werror -ffp-contract=off -Isrc -Itests -o $@ $< tests/ozaki_model.cpp \
	    tests/line_buffered.c -lcmocka

# Its host side: sizes, limits and the workspace's pieces (pipeline.cu),
# and the dispatcher's declines (dispatch/fp32_tc.cpp), linked from the
# library's objects with the static runtime; no GPU.
OZAKI_OBJ := $(patsubst src/%.cu,$(BUILD)/obj/%.o,$(wildcard src/kernels/ozaki/*.cu)) $(BUILD)/obj/kernels/tensor_map.o
OZAKI_PLAN_OBJ := $(BUILD)/obj/dispatch/fp32_tc.o $(BUILD)/obj/core/settings.o $(BUILD)/obj/core/math_mode.o \
                  $(BUILD)/obj/core/status.o
$(BUILD)/tests/test_ozaki_buffers: tests/test_ozaki_buffers.cpp tests/line_buffered.c $(OZAKI_OBJ) $(OZAKI_PLAN_OBJ)
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -O2 -g $(WARN) -Werror -Iinclude -Isrc -isystem $(CUDA_HOME)/include -o $@ $< \
	    tests/line_buffered.c $(OZAKI_OBJ) $(OZAKI_PLAN_OBJ) -L$(CUDA_LIBDIR) -lcudart_static -lcmocka -ldl -lpthread -lrt

test-ozaki-model: $(BUILD)/tests/test_ozaki_model $(BUILD)/tests/test_ozaki_buffers
	$(RUN_TEST) test_ozaki_model -- $(BUILD)/tests/test_ozaki_model
	$(RUN_TEST) test_ozaki_buffers -- $(BUILD)/tests/test_ozaki_buffers

# The fp32-tc math on the GPU: C equals the CPU model bit for bit on every
# path (tests/test_fp32_tc.cpp: a C++ CMocka program on the C helpers),
# then the trace and TGEMM_VERBOSE=2 lines it writes.
FP32_TC_OBJ := $(TEST_COMMON:tests/%.c=$(BUILD)/tests/fp32_tc/%.o)
$(FP32_TC_OBJ): $(BUILD)/tests/fp32_tc/%.o: tests/%.c tests/common.h tests/gpu_probe.h
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -c $< -o $@

$(BUILD)/tests/test_fp32_tc: tests/test_fp32_tc.cpp $(OZAKI_MODEL_SRC) $(FP32_TC_OBJ) $(BUILD)/lib/$(LIBNAME)
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -O2 -g $(WARN) -Werror -ffp-contract=off -Iinclude -Isrc -Itests -isystem $(CUDA_HOME)/include \
	    -o $@ $< tests/ozaki_model.cpp $(FP32_TC_OBJ) $(TEST_LIBS)

test-fp32-tc: $(BUILD)/tests/test_fp32_tc $(BUILD)/tests/has_gpu
	$(RUN_TEST) test_fp32_tc -- $(BUILD)/tests/test_fp32_tc
	$(RUN_TEST) check-fp32-tc-trace -- sh tests/check-fp32-tc-trace.sh $(BUILD)/tests/test_fp32_tc \
	    $(BUILD)/tests/has_gpu $(BUILD)/tests

# Stream-K's division of the tiles' K steps among blocks and the reading
# back of their parts (src/kernels/gemm_params.hpp), replayed on the host.
$(BUILD)/tests/test_streamk_plan: tests/test_streamk_plan.cpp tests/line_buffered.c src/kernels/gemm_params.hpp
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -O2 -g $(WARN) -Werror -Iinclude -Isrc -o $@ $< tests/line_buffered.c -lcmocka

test-streamk-plan: $(BUILD)/tests/test_streamk_plan
	$(RUN_TEST) test_streamk_plan -- $(BUILD)/tests/test_streamk_plan

# The dispatcher's plan for 20,000 random problems on a described H100
# (bench/plan_dump.cpp: CPU only, the plan functions are pure) against the
# plans kept in tests/data/plans-h100.txt.xz; make plans-baseline rewrites
# that file when a change means to change plans. plan-dump builds the tool
# (--device a100|h200 describe other devices).
PLAN_DUMP := $(BUILD)/bench/plan_dump
PLANS_H100 := tests/data/plans-h100.txt.xz
PLANS_H100_ARGS := --device h100 --count 20000 --seed 1
PLAN_DUMP_OBJ := $(patsubst %,$(BUILD)/obj/dispatch/%.o,factors device_model tiled streaming rank_k skinny_split pack peel plan) \
                 $(BUILD)/obj/core/status.o $(BUILD)/obj/core/settings.o $(filter $(BUILD)/obj/kernels/%,$(LIB_OBJ))
$(PLAN_DUMP): bench/plan_dump.cpp bench/plan_dump.hpp bench/splitmix.hpp $(PLAN_DUMP_OBJ)
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -O2 -g $(WARN) -Werror -Iinclude -Isrc -isystem $(CUDA_HOME)/include -o $@ $< $(PLAN_DUMP_OBJ) \
	    -L$(CUDA_LIBDIR) -lcudart_static -ldl -lpthread -lrt

plan-dump: $(PLAN_DUMP)

test-plans: $(PLAN_DUMP)
	env -u TGEMM_KERNEL -u TGEMM_STREAMK -u TGEMM_PACK -u TGEMM_TMA -u TGEMM_CLUSTERS \
	    $(RUN_TEST) plan_dump -- sh tests/plans_diff.sh $(PLAN_DUMP) $(PLANS_H100) $(BUILD)/tests
	env -u TGEMM_KERNEL -u TGEMM_STREAMK -u TGEMM_PACK -u TGEMM_TMA -u TGEMM_CLUSTERS \
	    $(RUN_TEST) plan_dump -- $(PLAN_DUMP) --check-tables
	env -u TGEMM_KERNEL -u TGEMM_STREAMK -u TGEMM_PACK -u TGEMM_TMA -u TGEMM_CLUSTERS \
	    $(RUN_TEST) plan_dump -- sh tests/plans_unreported.sh $(PLAN_DUMP)
	env -u TGEMM_KERNEL -u TGEMM_STREAMK -u TGEMM_PACK -u TGEMM_TMA -u TGEMM_CLUSTERS \
	    $(RUN_TEST) plan_dump -- $(PLAN_DUMP) --check-workspace --count 20000 --seed 5
	env -u TGEMM_KERNEL -u TGEMM_STREAMK -u TGEMM_CLUSTERS TGEMM_PACK=always \
	    $(RUN_TEST) plan_dump -- $(PLAN_DUMP) --check-workspace --count 5000 --seed 6

# The rank-k planner (src/dispatch/rank_k.cpp) through plan_call on the
# described H100, linked from the plan dump's objects: which products it
# takes and which it leaves; then with TGEMM_KERNEL=rank-k (every product
# on it) and with a tiled family forced (never on it). No GPU.
$(BUILD)/tests/test_rank_k_plan: tests/test_rank_k_plan.cpp tests/line_buffered.c bench/plan_dump.hpp \
                                 bench/splitmix.hpp $(PLAN_DUMP_OBJ)
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -O2 -g $(WARN) -Werror -Iinclude -Isrc -Ibench -isystem $(CUDA_HOME)/include -o $@ $< \
	    tests/line_buffered.c $(PLAN_DUMP_OBJ) -L$(CUDA_LIBDIR) -lcudart_static -lcmocka -ldl -lpthread -lrt

.PHONY: test-rank-k-plan
TEST_PROGRAMS += $(BUILD)/tests/test_rank_k_plan
TEST_RUNS += test-rank-k-plan
test-rank-k-plan: $(BUILD)/tests/test_rank_k_plan
	env -u TGEMM_KERNEL -u TGEMM_STREAMK -u TGEMM_PACK -u TGEMM_TMA -u TGEMM_CLUSTERS \
	    $(RUN_TEST) test_rank_k_plan -- $(BUILD)/tests/test_rank_k_plan
	env -u TGEMM_STREAMK -u TGEMM_PACK -u TGEMM_TMA -u TGEMM_CLUSTERS TGEMM_KERNEL=rank-k \
	    $(RUN_TEST) test_rank_k_plan -- $(BUILD)/tests/test_rank_k_plan forced-rank-k
	env -u TGEMM_STREAMK -u TGEMM_PACK -u TGEMM_TMA -u TGEMM_CLUSTERS TGEMM_KERNEL=256x128x8 \
	    $(RUN_TEST) test_rank_k_plan -- $(BUILD)/tests/test_rank_k_plan forced-family

plans-baseline: $(PLAN_DUMP)
	env -u TGEMM_KERNEL -u TGEMM_STREAMK -u TGEMM_PACK -u TGEMM_TMA -u TGEMM_CLUSTERS \
	    $(PLAN_DUMP) $(PLANS_H100_ARGS) | xz -9e > $(PLANS_H100)

# The host-operand path's planner, its parallel host copy, the parser of
# TGEMM_DEVICE_MEMORY_LIMIT and the CSV of TGEMM_HOST_TRACE are plain C++;
# their unit test links the library's own objects and needs no GPU. Then the
# copy's parts again with TGEMM_HOST_COPY_THREADS=3.
HOST_PLAN_OBJ := $(BUILD)/obj/driver/host_plan.o $(BUILD)/obj/runtime/host_copy.o $(BUILD)/obj/core/settings.o \
                 $(BUILD)/obj/driver/host_trace.o
$(BUILD)/tests/test_host_plan: tests/test_host_plan.cpp tests/line_buffered.c $(HOST_PLAN_OBJ)
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -O2 -g $(WARN) -Werror -Iinclude -Isrc -o $@ $< tests/line_buffered.c $(HOST_PLAN_OBJ) -lcmocka -lpthread

# How a product on host operands is spread over several GPUs
# (src/driver/spread_plan.cpp): plain C++, no GPU.
$(BUILD)/tests/test_spread_plan: tests/test_spread_plan.cpp tests/line_buffered.c $(BUILD)/obj/driver/spread_plan.o
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -O2 -g $(WARN) -Werror -Iinclude -Isrc -o $@ $< tests/line_buffered.c \
	    $(BUILD)/obj/driver/spread_plan.o -lcmocka

test-spread-plan: $(BUILD)/tests/test_spread_plan
	$(RUN_TEST) test_spread_plan -- $(BUILD)/tests/test_spread_plan

test-host-plan: $(BUILD)/tests/test_host_plan
	env -u TGEMM_HOST_COPY_THREADS $(RUN_TEST) test_host_plan -- $(BUILD)/tests/test_host_plan
	TGEMM_HOST_COPY_THREADS=3 $(RUN_TEST) test_host_plan -- $(BUILD)/tests/test_host_plan test_host_copy_parts

# The host-operand executor (and execute(), which leads to it) on a mock
# CUDA runtime (tests/mock_cuda.cpp) that runs copies and kernels late and
# in random order, so missing waits and misplaced copies show up as wrong
# results without a GPU (tests/test_host_mock.cpp); with AddressSanitizer
# for copies past a buffer's end.
HOST_MOCK_OBJ := $(HOST_PLAN_OBJ) $(BUILD)/obj/driver/host_pipeline.o $(BUILD)/obj/driver/host_pool.o \
                 $(BUILD)/obj/driver/host_executor.o $(BUILD)/obj/driver/host_transfers.o \
                 $(BUILD)/obj/driver/host_tracer.o $(BUILD)/obj/runtime/workspace.o \
                 $(BUILD)/obj/core/status.o $(BUILD)/obj/core/math_mode.o $(BUILD)/obj/driver/execute.o \
                 $(BUILD)/obj/driver/spread.o \
                 $(BUILD)/obj/driver/spread_plan.o $(BUILD)/obj/driver/panel_board.o \
                 $(BUILD)/obj/driver/host_panels.o $(BUILD)/obj/api/entry.o
$(BUILD)/tests/test_host_mock: tests/test_host_mock.cpp tests/mock_cuda.cpp tests/mock_cuda.hpp tests/line_buffered.c \
                               $(HOST_MOCK_OBJ)
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -O1 -g -fsanitize=address -fno-omit-frame-pointer $(WARN) -Werror -Iinclude -Isrc \
	    -isystem $(CUDA_HOME)/include -o $@ $< tests/mock_cuda.cpp tests/line_buffered.c $(HOST_MOCK_OBJ) \
	    -lcmocka -lpthread

# Then failures injected at every call of every kind, one-off and sticky;
# then TGEMM_HOST_TRACE: a trace written and read back, and a file that
# cannot be created; then TGEMM_DEVICES on three mock devices (spread):
# calls spread over devices 0, 1 and 2, over two workers on device 0, and
# with auto (small products stay on one device), each checked exact, with
# out-of-core blocks, a device failing mid-call, concurrent callers and
# device pointers; a listed device that does not exist; a grid forced by
# TGEMM_SPREAD_GRID; blocks that share panels over peer copies (the default)
# and blocks that do not (TGEMM_SPREAD_PEER=0).
HOST_TRACE_CSV := $(BUILD)/tests/host_trace.csv
HOST_MOCK_ENV := env -u TGEMM_HOST_TRACE -u TGEMM_DEVICES -u TGEMM_DEVICE -u TGEMM_SPREAD_GRID -u TGEMM_SPREAD_PEER
test-host-mock: $(BUILD)/tests/test_host_mock
	$(HOST_MOCK_ENV) $(RUN_TEST) test_host_mock -- $(BUILD)/tests/test_host_mock
	$(HOST_MOCK_ENV) $(RUN_TEST) test_host_mock -- $(BUILD)/tests/test_host_mock faults
	rm -f $(HOST_TRACE_CSV)
	$(HOST_MOCK_ENV) TGEMM_HOST_TRACE=$(HOST_TRACE_CSV) $(RUN_TEST) test_host_mock -- $(BUILD)/tests/test_host_mock trace
	$(HOST_MOCK_ENV) TGEMM_HOST_TRACE=/nonexistent/dir/trace.csv $(RUN_TEST) test_host_mock -- \
	    $(BUILD)/tests/test_host_mock bad-trace
	$(HOST_MOCK_ENV) TGEMM_DEVICES=0,1,2 $(RUN_TEST) test_host_mock -- $(BUILD)/tests/test_host_mock spread
	$(HOST_MOCK_ENV) TGEMM_DEVICES=0,0 $(RUN_TEST) test_host_mock -- $(BUILD)/tests/test_host_mock spread
	$(HOST_MOCK_ENV) TGEMM_DEVICES=auto $(RUN_TEST) test_host_mock -- $(BUILD)/tests/test_host_mock spread
	$(HOST_MOCK_ENV) TGEMM_DEVICES=0,5 $(RUN_TEST) test_host_mock -- $(BUILD)/tests/test_host_mock spread
	$(HOST_MOCK_ENV) TGEMM_DEVICES=0,1,2 TGEMM_SPREAD_GRID=5x3 $(RUN_TEST) test_host_mock -- \
	    $(BUILD)/tests/test_host_mock spread
	$(HOST_MOCK_ENV) TGEMM_DEVICES=0,1,2 TGEMM_SPREAD_PEER=0 $(RUN_TEST) test_host_mock -- \
	    $(BUILD)/tests/test_host_mock spread

# Host operands on the GPU (cases skip without one): the default plans, then
# out of core under device memory limits of 1 MiB and 8 MiB, with every
# call's plan checked against the limit; the same spread over two workers
# of one GPU (TGEMM_DEVICES=0,0), and over every GPU where there are
# several, each block's plan within the limit, and sgemm_ spread over them
# while the first GPU's context breaks (the others must finish C where they
# still work, else the CPU BLAS; C exact either way); then
# sgemm_ while the CUDA context breaks half way through the call, C in
# pageable, pinned and managed memory, beta != 0 and == 0, one process per
# run since the context stays broken, and once with the first trap set too
# late, so that the test's retry of a trap the call outran is what breaks
# it (tests/test_host.c).
BROKEN_TRACE := $(BUILD)/tests/broken_context.trace
test-host: $(BUILD)/tests/test_host
	$(RUN_TEST) test_host -- $(BUILD)/tests/test_host
	TGEMM_DEVICE_MEMORY_LIMIT=1048576 TGEMM_VERBOSE=2 $(RUN_TEST) test_host -- $(BUILD)/tests/test_host out-of-core
	TGEMM_DEVICE_MEMORY_LIMIT=8388608 TGEMM_VERBOSE=2 $(RUN_TEST) test_host -- $(BUILD)/tests/test_host out-of-core
	TGEMM_DEVICES=0,0 $(RUN_TEST) test_host -- $(BUILD)/tests/test_host
	TGEMM_DEVICES=0,0 TGEMM_DEVICE_MEMORY_LIMIT=8388608 TGEMM_VERBOSE=2 \
	    $(RUN_TEST) test_host -- $(BUILD)/tests/test_host out-of-core
	if [ "$$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')" -gt 1 ]; then \
	    TGEMM_DEVICES=all $(RUN_TEST) test_host -- $(BUILD)/tests/test_host && \
	    TGEMM_DEVICES=all TGEMM_DEVICE_MEMORY_LIMIT=4194304 TGEMM_VERBOSE=2 \
	        $(RUN_TEST) test_host -- $(BUILD)/tests/test_host out-of-core && \
	    for run in "h 0.5" "p 0.5" "p 0"; do \
	        echo "== broken-context $$run, TGEMM_DEVICES=all"; rm -f $(BROKEN_TRACE); \
	        $(BLAS_ENV) TGEMM_DEVICES=all TGEMM_VERBOSE=1 TGEMM_OFFLOAD=gpu TGEMM_CPU_BLAS=libopenblas.so.0 \
	            TGEMM_TRACE=$(BROKEN_TRACE) $(RUN_TEST) test_host -- $(BUILD)/tests/test_host broken-context $$run \
	            || exit 1; \
	    done; fi
	rc=0; for run in "h 0.5" "p 0.5" "m 0.5" "h 0" "p 0" "m 0" "late p 0.5"; do \
	    echo "== broken-context $$run"; rm -f $(BROKEN_TRACE); \
	    case "$$run" in late*) late=1;; *) late=0;; esac; \
	    $(BLAS_ENV) TGEMM_OFFLOAD=gpu TGEMM_CPU_BLAS=libopenblas.so.0 TGEMM_TRACE=$(BROKEN_TRACE) \
	        TGEMM_TEST_TRAP_LATE=$$late $(RUN_TEST) test_host -- $(BUILD)/tests/test_host broken-context $${run#late } \
	        || rc=1; \
	done; exit $$rc

# With each family, the NaN and Inf rows too (special-values). Then the
# families that have a stream-K form, each in that form, and one without it
# under TGEMM_STREAMK=always (planned as without the setting). Then the
# rank-k kernel the same way (TGEMM_KERNEL=rank-k: every product on it).
test-kernels: $(BUILD)/tests/test_gemm
	@rc=0; for f in $(KERNEL_FAMILIES); do \
	    echo "== TGEMM_KERNEL=$$f"; \
	    TGEMM_KERNEL=$$f TGEMM_TEST_MAX_DIM=257 $(RUN_TEST) test_gemm -- $(BUILD)/tests/test_gemm || rc=1; \
	    TGEMM_KERNEL=$$f TGEMM_VERBOSE=2 $(RUN_TEST) test_gemm -- $(BUILD)/tests/test_gemm special-values || rc=1; \
	done; exit $$rc
	@rc=0; for f in $(STREAMK_FAMILIES); do \
	    echo "== TGEMM_KERNEL=$$f TGEMM_STREAMK=always"; \
	    TGEMM_KERNEL=$$f TGEMM_STREAMK=always TGEMM_TEST_MAX_DIM=257 $(RUN_TEST) test_gemm -- $(BUILD)/tests/test_gemm || rc=1; \
	done; exit $$rc
	@echo "== TGEMM_KERNEL=128x128x8 TGEMM_STREAMK=always (a family without stream-K: its own plans)"
	TGEMM_KERNEL=128x128x8 TGEMM_STREAMK=always TGEMM_TEST_MAX_DIM=33 $(RUN_TEST) test_gemm -- $(BUILD)/tests/test_gemm
	@echo "== TGEMM_KERNEL=rank-k"
	TGEMM_KERNEL=rank-k TGEMM_TEST_MAX_DIM=257 $(RUN_TEST) test_gemm -- $(BUILD)/tests/test_gemm
	TGEMM_KERNEL=rank-k TGEMM_VERBOSE=2 $(RUN_TEST) test_gemm -- $(BUILD)/tests/test_gemm special-values

# Behaviour under environment settings; each scenario is its own process
# because settings are read once.
test-env: $(BUILD)/tests/test_env
	CUDA_VISIBLE_DEVICES= $(RUN_TEST) test_env -- $(BUILD)/tests/test_env no-device
	TGEMM_DEVICE=abc $(RUN_TEST) test_env -- $(BUILD)/tests/test_env bad-setting
	TGEMM_DEVICE=999 $(RUN_TEST) test_env -- $(BUILD)/tests/test_env bad-device
	TGEMM_KERNEL=nonsense $(RUN_TEST) test_env -- $(BUILD)/tests/test_env bad-kernel
	TGEMM_VERBOSE=1 $(RUN_TEST) test_env -- $(BUILD)/tests/test_env verbose
	$(RUN_TEST) test_env -- $(BUILD)/tests/test_env quiet
	rc=0; for v in abc 0 0K -5M 12Q 1.5G 4KB 99999999999999999999 16777216T; do \
	    echo "== TGEMM_DEVICE_MEMORY_LIMIT=$$v"; \
	    TGEMM_DEVICE_MEMORY_LIMIT=$$v $(RUN_TEST) test_env -- $(BUILD)/tests/test_env bad-memory-limit || rc=1; \
	done; exit $$rc
	rc=0; for v in abc 0 -3 1.5 257 99999999999999999999; do \
	    echo "== TGEMM_HOST_COPY_THREADS=$$v"; \
	    TGEMM_HOST_COPY_THREADS=$$v $(RUN_TEST) test_env -- $(BUILD)/tests/test_env bad-copy-threads || rc=1; \
	done; exit $$rc
	rc=0; for v in 2 -1 yes on 01x; do \
	    echo "== TGEMM_CLUSTERS=$$v"; \
	    TGEMM_CLUSTERS=$$v $(RUN_TEST) test_env -- $(BUILD)/tests/test_env bad-clusters || rc=1; \
	done; exit $$rc
	rc=0; for v in 1 0 yes Auto always1; do \
	    echo "== TGEMM_STREAMK=$$v"; \
	    TGEMM_STREAMK=$$v $(RUN_TEST) test_env -- $(BUILD)/tests/test_env bad-streamk || rc=1; \
	done; exit $$rc
	rc=0; for v in 2 -1 no off 1x; do \
	    echo "== TGEMM_TMA=$$v"; \
	    TGEMM_TMA=$$v $(RUN_TEST) test_env -- $(BUILD)/tests/test_env bad-tma || rc=1; \
	done; exit $$rc
	rc=0; for v in 2 -1 no off 1x; do \
	    echo "== TGEMM_SPREAD_PEER=$$v"; \
	    TGEMM_SPREAD_PEER=$$v $(RUN_TEST) test_env -- $(BUILD)/tests/test_env bad-spread-peer || rc=1; \
	done; exit $$rc
	rc=0; for v in 1 0 yes Never auto1; do \
	    echo "== TGEMM_PACK=$$v"; \
	    TGEMM_PACK=$$v $(RUN_TEST) test_env -- $(BUILD)/tests/test_env bad-pack || rc=1; \
	done; exit $$rc
	rc=0; for v in 1 fp32 FP32-TC tc strict1; do \
	    echo "== TGEMM_MATH=$$v"; \
	    TGEMM_MATH=$$v $(RUN_TEST) test_env -- $(BUILD)/tests/test_env bad-math || rc=1; \
	done; exit $$rc
	rc=0; for v in 3 9 -1 x 1.5; do \
	    echo "== TGEMM_VERBOSE=$$v"; \
	    TGEMM_VERBOSE=$$v $(RUN_TEST) test_env -- $(BUILD)/tests/test_env bad-verbose || rc=1; \
	done; exit $$rc
	rc=0; for v in 1 0 yes Always; do \
	    echo "== TGEMM_FP32_TC=$$v"; \
	    TGEMM_FP32_TC=$$v $(RUN_TEST) test_env -- $(BUILD)/tests/test_env bad-fp32-tc || rc=1; \
	done; exit $$rc
	$(RUN_TEST) test_env -- $(BUILD)/tests/test_env math-default
	TGEMM_MATH=fp32-tc $(RUN_TEST) test_env -- $(BUILD)/tests/test_env math-env
	TGEMM_DEVICE_MEMORY_LIMIT=100 $(RUN_TEST) test_env -- $(BUILD)/tests/test_env tiny-memory-limit
	rc=0; for v in abc 0, ,0 0,,1 -1 1.5 Auto all1 0:1 '0 1' \
	    0,1,2,3,4,5,6,7,8,9,0,1,2,3,4,5,6,7,8,9,0,1,2,3,4,5,6,7,8,9,0,1,2,3,4,5,6,7,8,9,0,1,2,3,4,5,6,7,8,9,0,1,2,3,4,5,6,7,8,9,0,1,2,3,4; do \
	    echo "== TGEMM_DEVICES=$$v"; \
	    TGEMM_DEVICES="$$v" $(RUN_TEST) test_env -- $(BUILD)/tests/test_env bad-devices || rc=1; \
	done; exit $$rc
	TGEMM_DEVICES=0,999 $(RUN_TEST) test_env -- $(BUILD)/tests/test_env devices-bad-device
	rc=0; for v in 2 0x2 2x 2x2x2 x2 2X2 -1x2 4097x1; do \
	    echo "== TGEMM_SPREAD_GRID=$$v"; \
	    TGEMM_SPREAD_GRID=$$v $(RUN_TEST) test_env -- $(BUILD)/tests/test_env bad-spread-grid || rc=1; \
	done; exit $$rc
	TGEMM_DEVICE=local-rank OMPI_COMM_WORLD_LOCAL_RANK=x $(RUN_TEST) test_env -- $(BUILD)/tests/test_env bad-local-rank
	rc=0; for v in OMPI_COMM_WORLD_LOCAL_RANK=3 MPI_LOCALRANKID=1 MV2_COMM_WORLD_LOCAL_RANK=2 SLURM_LOCALID=5 NONE=1; do \
	    echo "== TGEMM_DEVICE=local-rank $$v"; \
	    env -u OMPI_COMM_WORLD_LOCAL_RANK -u MPI_LOCALRANKID -u MV2_COMM_WORLD_LOCAL_RANK -u SLURM_LOCALID \
	        TGEMM_DEVICE=local-rank $$v $(RUN_TEST) test_env -- $(BUILD)/tests/test_env local-rank || rc=1; \
	done; exit $$rc

# The BLAS ABI, one scenario per process (settings are read once). Every
# run starts from a clean TGEMM_* environment; see tests/test_blas.c.
BLAS_ENV := env -u TGEMM_OFFLOAD -u TGEMM_OFFLOAD_MIN_FLOPS -u TGEMM_OFFLOAD_CPU_GFLOPS -u TGEMM_OFFLOAD_LINK_GBS \
            -u TGEMM_OFFLOAD_LEARN -u TGEMM_CPU_BLAS -u TGEMM_TRACE -u TGEMM_DEVICE \
            -u TGEMM_KERNEL -u TGEMM_VERBOSE -u TGEMM_DEVICE_MEMORY_LIMIT -u TGEMM_HOST_COPY_THREADS \
            -u TGEMM_HOST_TRACE -u LD_PRELOAD
BLAS_TRACE := $(BUILD)/tests/test_blas.trace
test-blas: $(BUILD)/tests/test_blas
	$(BLAS_ENV) $(RUN_TEST) test_blas -- $(BUILD)/tests/test_blas checks
	rm -f $(BLAS_TRACE)
	$(BLAS_ENV) TGEMM_OFFLOAD=cpu TGEMM_CPU_BLAS=libopenblas.so.0 TGEMM_TRACE=$(BLAS_TRACE) \
	    $(RUN_TEST) test_blas -- $(BUILD)/tests/test_blas forward
	rm -f $(BUILD)/tests/test_blas.7.*.trace
	$(BLAS_ENV) TGEMM_OFFLOAD=cpu TGEMM_CPU_BLAS=libopenblas.so.0 OMPI_COMM_WORLD_RANK=7 \
	    TGEMM_TRACE=$(BUILD)/tests/test_blas.%r.%p.trace $(RUN_TEST) test_blas -- $(BUILD)/tests/test_blas forward
	rm -f $(BLAS_TRACE)
	$(BLAS_ENV) TGEMM_OFFLOAD=gpu TGEMM_CPU_BLAS=libopenblas.so.0 TGEMM_TRACE=$(BLAS_TRACE) CUDA_VISIBLE_DEVICES= \
	    $(RUN_TEST) test_blas -- $(BUILD)/tests/test_blas fallback
	rm -f $(BLAS_TRACE)
	$(BLAS_ENV) TGEMM_OFFLOAD_CPU_GFLOPS=1 TGEMM_OFFLOAD_LEARN=0 TGEMM_CPU_BLAS=libopenblas.so.0 \
	    TGEMM_TRACE=$(BLAS_TRACE) $(RUN_TEST) test_blas -- $(BUILD)/tests/test_blas auto
	rm -f $(BLAS_TRACE)
	$(BLAS_ENV) TGEMM_OFFLOAD_CPU_GFLOPS=1000000 TGEMM_OFFLOAD_LEARN=0 TGEMM_CPU_BLAS=libopenblas.so.0 \
	    TGEMM_TRACE=$(BLAS_TRACE) $(RUN_TEST) test_blas -- $(BUILD)/tests/test_blas auto-cpu
	rm -f $(BLAS_TRACE)
	$(BLAS_ENV) TGEMM_OFFLOAD_CPU_GFLOPS=0.01 TGEMM_CPU_BLAS=libopenblas.so.0 TGEMM_TRACE=$(BLAS_TRACE) CUDA_VISIBLE_DEVICES= \
	    $(RUN_TEST) test_blas -- $(BUILD)/tests/test_blas auto-unusable-gpu
	rm -f $(BLAS_TRACE)
	$(BLAS_ENV) TGEMM_OFFLOAD=cpu TGEMM_CPU_BLAS=/nonexistent/libnoblas.so.0 TGEMM_TRACE=$(BLAS_TRACE) \
	    $(RUN_TEST) test_blas -- $(BUILD)/tests/test_blas builtin
	$(BLAS_ENV) TGEMM_OFFLOAD=sometimes TGEMM_CPU_BLAS=libopenblas.so.0 $(RUN_TEST) test_blas -- $(BUILD)/tests/test_blas bad-setting
	rc=0; for v in TGEMM_OFFLOAD_CPU_GFLOPS=abc TGEMM_OFFLOAD_CPU_GFLOPS=0 TGEMM_OFFLOAD_LINK_GBS=-3 \
	         TGEMM_OFFLOAD_LINK_GBS=1e400 TGEMM_OFFLOAD_LEARN=2 TGEMM_OFFLOAD_LEARN=yes TGEMM_MATH=bogus; do \
	    echo "== $$v"; \
	    $(BLAS_ENV) $$v TGEMM_TEST_WARNING=$${v%%=*} TGEMM_CPU_BLAS=libopenblas.so.0 \
	        $(RUN_TEST) test_blas -- $(BUILD)/tests/test_blas bad-setting || rc=1; \
	done; exit $$rc
	rm -f $(BLAS_TRACE)
	$(BLAS_ENV) TGEMM_OFFLOAD=gpu TGEMM_CPU_BLAS=libopenblas.so.0 TGEMM_TRACE=$(BLAS_TRACE) \
	    $(RUN_TEST) test_blas -- $(BUILD)/tests/test_blas gpu

# A program linked only against OpenBLAS, run plain and under
# LD_PRELOAD=libtgemm.so (tests/blas/preload.sh says what is checked); the
# same source without error handlers, preloaded and linked with libtgemm,
# checks the default xerbla messages, and with cblas_xerbla alone the
# route reference CBLAS gives dimension errors then.
PRELOAD_CFLAGS := -std=c99 -O2 -g $(WARN) -Werror -D_GNU_SOURCE
PRELOAD_BINS := $(BUILD)/tests/preload_prog $(BUILD)/tests/preload_prog_nohandlers \
                $(BUILD)/tests/direct_prog_nohandlers $(BUILD)/tests/preload_prog_cblasonly \
                $(BUILD)/tests/direct_prog_cblasonly $(BUILD)/tests/has_gpu

$(BUILD)/tests/preload_prog: tests/blas/preload_prog.c tests/blas/bad_calls.h
	@mkdir -p $(@D)
	$(CC) $(PRELOAD_CFLAGS) -o $@ $< -lopenblas -ldl -lm -pthread

$(BUILD)/tests/preload_prog_nohandlers: tests/blas/preload_prog.c tests/blas/bad_calls.h
	@mkdir -p $(@D)
	$(CC) $(PRELOAD_CFLAGS) -DNO_HANDLERS -o $@ $< -lopenblas -ldl -lm -pthread

$(BUILD)/tests/direct_prog_nohandlers: tests/blas/preload_prog.c tests/blas/bad_calls.h $(BUILD)/lib/$(LIBNAME)
	@mkdir -p $(@D)
	$(CC) $(PRELOAD_CFLAGS) -DNO_HANDLERS -o $@ $< -L$(BUILD)/lib -ltgemm -Wl,-rpath,$(abspath $(BUILD)/lib) -ldl -lm -pthread

$(BUILD)/tests/preload_prog_cblasonly: tests/blas/preload_prog.c tests/blas/bad_calls.h
	@mkdir -p $(@D)
	$(CC) $(PRELOAD_CFLAGS) -DCBLAS_XERBLA_ONLY -o $@ $< -lopenblas -ldl -lm -pthread

$(BUILD)/tests/direct_prog_cblasonly: tests/blas/preload_prog.c tests/blas/bad_calls.h $(BUILD)/lib/$(LIBNAME)
	@mkdir -p $(@D)
	$(CC) $(PRELOAD_CFLAGS) -DCBLAS_XERBLA_ONLY -o $@ $< -L$(BUILD)/lib -ltgemm -Wl,-rpath,$(abspath $(BUILD)/lib) -ldl -lm -pthread

$(BUILD)/tests/has_gpu: tests/blas/has_gpu.c tests/gpu_probe.c tests/gpu_probe.h
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -o $@ $< tests/gpu_probe.c -L$(CUDA_LIBDIR) -lcudart -Wl,-rpath,$(CUDA_LIBDIR) -ldl -lpthread

test-preload: $(PRELOAD_BINS) $(BUILD)/lib/$(LIBNAME)
	$(RUN_TEST) preload -- sh tests/blas/preload.sh $(BUILD)/tests $(abspath $(BUILD)/lib/$(LIBNAME))

# A GPU setup that is there but broken fails the GPU cases rather than
# skip them; only no driver or no device skips (tests/check-gpu-probe.sh,
# with a stand-in libcuda.so.1 that reports an old driver, a failing
# cuInit, or no device).
$(BUILD)/tests/stub/libcuda.so.1: tests/stub_libcuda.c
	@mkdir -p $(@D)
	$(CC) -std=c99 -O2 $(WARN) -Werror -shared -fPIC -isystem $(CUDA_HOME)/include -o $@ $<

test-gpu-probe: $(BUILD)/tests/stub/libcuda.so.1 $(BUILD)/tests/test_gemm $(BUILD)/tests/test_api $(PRELOAD_BINS) \
                $(BUILD)/examples/demo
	$(RUN_TEST) check-gpu-probe -- sh tests/check-gpu-probe.sh $(BUILD)/tests $(BUILD)/examples/demo \
	    $(abspath $(BUILD)/lib/$(LIBNAME))

# ---- The CPU BLAS that tgemm finds itself (tests/blas/cpu_blas.sh,
# tests/blas/numpy_check.py): programs that bring no CPU BLAS tgemm can reach.
# aslinked_prog is preload_prog linked `-ltgemm -lopenblas` with --as-needed,
# which drops OpenBLAS; cpu_blas_prog is linked with libtgemm alone, and
# cpu_blas_prog_fake with a stand-in BLAS (tests/blas/fake_blas.c) alone.
.PHONY: test-cpu-blas test-numpy
CPU_BLAS_DIR := $(BUILD)/tests/fakeblas
CPU_BLAS_BINS := $(BUILD)/tests/aslinked_prog $(BUILD)/tests/cpu_blas_prog $(BUILD)/tests/cpu_blas_prog_fake \
                 $(CPU_BLAS_DIR)/libfakeblas.so $(CPU_BLAS_DIR)/libnosgemm.so $(CPU_BLAS_DIR)/libcallback.so \
                 $(BUILD)/tests/handlers_prog $(BUILD)/tests/has_gpu

$(BUILD)/tests/aslinked_prog: tests/blas/preload_prog.c tests/blas/bad_calls.h $(BUILD)/lib/$(LIBNAME)
	@mkdir -p $(@D)
	$(CC) $(PRELOAD_CFLAGS) -o $@ $< -Wl,--as-needed -L$(BUILD)/lib -ltgemm -lopenblas \
	    -Wl,-rpath,$(abspath $(BUILD)/lib) -ldl -lm -pthread

$(BUILD)/tests/cpu_blas_prog: tests/blas/cpu_blas_prog.c $(BUILD)/lib/$(LIBNAME)
	@mkdir -p $(@D)
	$(CC) $(PRELOAD_CFLAGS) -o $@ $< -L$(BUILD)/lib -ltgemm -Wl,-rpath,$(abspath $(BUILD)/lib)

$(BUILD)/tests/cpu_blas_prog_fake: tests/blas/cpu_blas_prog.c $(CPU_BLAS_DIR)/libfakeblas.so
	@mkdir -p $(@D)
	$(CC) $(PRELOAD_CFLAGS) -o $@ $< -L$(CPU_BLAS_DIR) -lfakeblas -Wl,-rpath,$(abspath $(CPU_BLAS_DIR))

$(CPU_BLAS_DIR)/libfakeblas.so: tests/blas/fake_blas.c
	@mkdir -p $(@D)
	$(CC) $(PRELOAD_CFLAGS) -fPIC -shared -o $@ $<

$(CPU_BLAS_DIR)/libcallback.so: tests/blas/fake_blas.c
	@mkdir -p $(@D)
	$(CC) $(PRELOAD_CFLAGS) -DCALL_BACK -fPIC -shared -o $@ $< -ldl

$(CPU_BLAS_DIR)/libnosgemm.so: tests/blas/fake_blas.c
	@mkdir -p $(@D)
	$(CC) $(PRELOAD_CFLAGS) -DNO_SGEMM -fPIC -shared -o $@ $<

# A BLAS whose handlers (exiting ones) lie in a library it needs, and a
# program without handlers linked with it (tests/blas/handlers_prog.c).
$(CPU_BLAS_DIR)/libfakecore.so: tests/blas/fake_blas.c
	@mkdir -p $(@D)
	$(CC) $(PRELOAD_CFLAGS) -DEXITING_HANDLERS -fPIC -shared -o $@ $<

$(CPU_BLAS_DIR)/libfakewrap.so: tests/blas/fake_blas.c $(CPU_BLAS_DIR)/libfakecore.so
	$(CC) $(PRELOAD_CFLAGS) -fPIC -shared -o $@ $< -Wl,--no-as-needed -L$(CPU_BLAS_DIR) -lfakecore \
	    -Wl,-rpath,$(abspath $(CPU_BLAS_DIR))

$(BUILD)/tests/handlers_prog: tests/blas/handlers_prog.c tests/blas/bad_calls.h $(CPU_BLAS_DIR)/libfakewrap.so
	$(CC) $(PRELOAD_CFLAGS) -o $@ $< -Wl,--no-as-needed -L$(CPU_BLAS_DIR) -lfakewrap \
	    -Wl,-rpath,$(abspath $(CPU_BLAS_DIR))

# First test_blas's forward scenario with no TGEMM_CPU_BLAS: the program
# links no BLAS, so tgemm must find the system's OpenBLAS for the same bits.
CPU_BLAS_TRACE := $(BUILD)/tests/test_blas_system.trace
test-cpu-blas: $(CPU_BLAS_BINS) $(BUILD)/tests/test_blas
	rm -f $(CPU_BLAS_TRACE)
	$(BLAS_ENV) TGEMM_OFFLOAD=cpu TGEMM_TRACE=$(CPU_BLAS_TRACE) $(RUN_TEST) test_blas -- $(BUILD)/tests/test_blas forward
	$(RUN_TEST) cpu-blas -- sh tests/blas/cpu_blas.sh $(abspath $(BUILD)/tests) $(abspath $(LIB)) $(BUILD)/tests/has_gpu

# The process's first BLAS calls where tgemm's one-time set-up could hang
# the program: a library whose constructor multiplies, loaded by one thread
# while another makes the first call; a fork() while the CPU BLAS is
# measured (first_calls_fake: with the stand-in BLAS, whose log says when);
# a fork() while another thread's error handler runs; a fork() after the
# first trace line (tests/blas/first_calls.sh).
.PHONY: test-first-calls
$(BUILD)/tests/first_calls: tests/blas/first_calls.c
	@mkdir -p $(@D)
	$(CC) $(PRELOAD_CFLAGS) -Wl,--export-dynamic-symbol=RowMajorStrg -o $@ $< -lopenblas -ldl -pthread

$(BUILD)/tests/first_calls_fake: tests/blas/first_calls.c $(CPU_BLAS_DIR)/libfakeblas.so
	@mkdir -p $(@D)
	$(CC) $(PRELOAD_CFLAGS) -o $@ $< -L$(CPU_BLAS_DIR) -lfakeblas -Wl,-rpath,$(abspath $(CPU_BLAS_DIR)) -ldl -pthread

$(BUILD)/tests/libfirst_calls_plugin.so: tests/blas/first_calls_plugin.c
	@mkdir -p $(@D)
	$(CC) $(PRELOAD_CFLAGS) -fPIC -shared -o $@ $<

TEST_PROGRAMS += $(BUILD)/tests/first_calls $(BUILD)/tests/first_calls_fake $(BUILD)/tests/libfirst_calls_plugin.so
test-first-calls: $(BUILD)/tests/first_calls $(BUILD)/tests/first_calls_fake $(BUILD)/tests/libfirst_calls_plugin.so \
                  $(BUILD)/lib/$(LIBNAME)
	$(RUN_TEST) first-calls -- sh tests/blas/first_calls.sh $(BUILD)/tests $(abspath $(BUILD)/lib/$(LIBNAME))
TEST_RUNS += test-first-calls

# numpy's float32 products under LD_PRELOAD: a python3 whose numpy calls the
# system's cblas_sgemm (Debian's /usr/bin/python3 with python3-numpy; the
# pyenv or venv python3 first on PATH may have none, or a pip numpy that
# bundles an OpenBLAS LD_PRELOAD cannot reach). Without such a numpy the
# test says why and fails in CI (CI set), else it is reported as not run.
NUMPY_PYTHON ?= /usr/bin/python3
test-numpy: $(BUILD)/lib/$(LIBNAME) $(BUILD)/tests/has_gpu
	$(BLAS_ENV) $(RUN_TEST) numpy -- sh tests/blas/numpy.sh "$(NUMPY_PYTHON)" $(abspath $(LIB)) $(BUILD)/tests/has_gpu \
	    $(BUILD)/tests/numpy

# Fortran programs built against the staged install of test-install.
test-fortran: test-install $(BUILD)/tests/has_gpu
	$(RUN_TEST) check-fortran -- sh tests/check-fortran.sh $(TEST_DESTDIR) $(TEST_PREFIX) $(FC) $(BUILD)/tests/has_gpu

test-long:
	@$(MAKE) --no-print-directory $(JOBS) $(BUILD)/tests/test_long
	$(RUN_TEST) test_long -- $(BUILD)/tests/test_long

# The public header compiles alone as strict C99 and as C++.
test-headers:
	@mkdir -p $(BUILD)/tests
	$(RUN_TEST) header_c99 -- $(CC) -std=c99 -pedantic -Wall -Wextra -Werror -Iinclude -c tests/header_c99.c \
	    -o $(BUILD)/tests/header_c99.o
	$(RUN_TEST) header_cxx -- $(CXX) -std=c++11 -pedantic -Wall -Wextra -Werror -Iinclude -c tests/header_cxx.cpp \
	    -o $(BUILD)/tests/header_cxx.o

# Only the intended symbols are exported.
test-symbols: $(BUILD)/lib/$(LIBNAME)
	$(RUN_TEST) check-symbols -- sh tests/check-symbols.sh $(LIB) $(SONAME) src/tgemm.map $(BUILD)

# Install into a scratch prefix through DESTDIR, check the layout, then build
# and run a consumer with nothing but pkg-config's flags.
TEST_PREFIX := /opt/tgemm-test
TEST_DESTDIR := $(abspath $(BUILD)/stage)
test-install: $(BUILD)/lib/$(LIBNAME)
	rm -rf $(TEST_DESTDIR)
	$(MAKE) --no-print-directory install PREFIX=$(TEST_PREFIX) DESTDIR=$(TEST_DESTDIR)
	$(RUN_TEST) check-install -- sh tests/check-install.sh $(TEST_DESTDIR) $(TEST_PREFIX) $(VERSION) $(VERSION_MAJOR)

# The analysis scripts that need no GPU, on fixed inputs (fit_plans.py's
# mirror of the tiled model against src/dispatch/factors.cpp too);
# bench_cpu_blas plain, on OpenBLAS alone (its CSV and its refusals); the
# tiled families' registers (ptxas's reports) against the blocks an SM the
# dispatcher plans them at, and the cluster kernels' against the blocks an
# SM holds in clusters (bench/residency.py); bench_plans's refusals, and
# with a GPU its timed runs in both L2 modes.
test-tools: $(BUILD)/bench/bench_cpu_blas $(PLAN_DUMP) $(TILED_OBJ) $(BUILD)/bench/bench_plans $(BUILD)/tests/has_gpu
	$(RUN_TEST) check-sass-banks -- sh tests/check-sass-banks.sh
	$(RUN_TEST) check-ncu-stalls -- sh tests/check-ncu-stalls.sh
	$(RUN_TEST) check-random-report -- sh tests/check-random-report.sh
	$(RUN_TEST) check-fit-plans -- sh tests/check-fit-plans.sh $(PLAN_DUMP)
	$(RUN_TEST) check-plan-changes -- sh tests/check-plan-changes.sh $(PLAN_DUMP)
	$(RUN_TEST) check-bench-blas -- sh tests/check-bench-blas.sh
	$(RUN_TEST) check-bench-cpu-blas -- sh tests/check-bench-cpu-blas.sh $(BUILD)/bench/bench_cpu_blas
	$(RUN_TEST) check-multi-report -- sh tests/check-multi-report.sh
	$(RUN_TEST) check-scalapack-report -- sh tests/check-scalapack-report.sh
	$(RUN_TEST) check-residency -- sh tests/check-residency.sh $(PLAN_DUMP) $(BUILD)/obj/kernels
	$(RUN_TEST) check-bench-plans -- sh tests/check-bench-plans.sh $(BUILD)/bench/bench_plans $(BUILD)/tests/has_gpu

# The shape of src/ (tests/check-layers.sh: every include points down the
# layers, no cycle, no file over 700 lines, no date or PERF.md in a comment)
# and the documents that list the kernel families against their registry
# (tests/check-families.sh). Plain files, no build.
.PHONY: test-layers
TEST_RUNS += test-layers
test-layers:
	rc=0; $(RUN_TEST) check-layers -- sh tests/check-layers.sh src || rc=1; \
	$(RUN_TEST) check-families -- sh tests/check-families.sh || rc=1; exit $$rc

# The reference builds without Graphviz and renders what the code prints
# (tests/check-docs.sh).
test-docs:
	$(RUN_TEST) check-docs -- sh tests/check-docs.sh "$(MAKE)"

# ---------------------------------------------------------------- reference CBLAS conformance

# The preloaded test programs define reference CBLAS's RowMajorStrg, which
# nothing they link against defines or uses: exported, so that a preloaded
# libtgemm finds it as it finds reference CBLAS's.
$(BUILD)/tests/preload_prog $(BUILD)/tests/preload_prog_nohandlers $(BUILD)/tests/preload_prog_cblasonly: \
    PRELOAD_CFLAGS += -Wl,--export-dynamic-symbol=RowMajorStrg

# The reference BLAS test programs (Debian's libblas-test: xblat3s for
# SGEMM, xscblat3 for cblas_sgemm in both layouts) with
# LD_PRELOAD=libtgemm.so over reference libblas3, on their stock inputs and
# larger ones (tests/blas/reference.sh says what is checked); part of
# `make test`. REFBLAS_DIR is the directory holding the testers, their
# inputs and reference libblas.so.3 when they are not installed as packages
# (for example unpacked from the .deb files); otherwise dpkg finds them.
# Outside CI, missing testers are reported and not run; with CI set, the
# target fails.
REFBLAS_DIR ?=
.PHONY: test-reference
test-reference: $(BUILD)/lib/$(LIBNAME) $(BUILD)/tests/has_gpu
	$(RUN_TEST) reference -- sh tests/blas/reference.sh $(abspath $(BUILD)/tests/reference) $(abspath $(BUILD)/lib/$(LIBNAME)) \
	    $(abspath $(BUILD)/tests/has_gpu) $(REFBLAS_DIR)

# ---------------------------------------------------------------- ScaLAPACK

# PSGEMM, ScaLAPACK's distributed SGEMM, with libtgemm preloaded as the
# node BLAS (tests/scalapack/scalapack.sh says what is checked): the PBLAS
# Level 3 tester of Debian's scalapack-mpi-test and examples/psgemm, on 4
# Open MPI processes of this machine; part of `make test`. examples/psgemm
# uses only BLACS's C interface and PBLAS, so it links against
# libscalapack-openmpi alone (no MPI header, no mpicc); SCALAPACK_LIBS
# names it elsewhere (bench/scalapack_gpu.sh: an unpacked prefix).
# make test builds it where the library is installed; where it is not, the
# target says so and is not run, except with CI set, where it fails.
# SCALAPACK_TEST_DIR is the directory of spb3tst when it is not installed
# as a package.
SCALAPACK_LIBS ?= -lscalapack-openmpi
SCALAPACK_TEST_DIR ?=
HAVE_SCALAPACK := $(filter /%,$(shell $(CC) -print-file-name=libscalapack-openmpi.so 2>/dev/null))
PSGEMM := $(BUILD)/examples/psgemm
BAD_SGEMM := $(BUILD)/tests/scalapack/libbad_sgemm.so
.PHONY: test-scalapack

$(PSGEMM): examples/psgemm.c
	@mkdir -p $(@D)
	$(CC) -std=c99 -O2 -g $(WARN) -Werror -o $@ $< $(SCALAPACK_LIBS) -lm

$(BAD_SGEMM): tests/scalapack/bad_sgemm.c
	@mkdir -p $(@D)
	$(CC) -std=c99 -O2 $(WARN) -Werror -fPIC -shared -o $@ $< -ldl

test-scalapack: $(BUILD)/lib/$(LIBNAME) $(BUILD)/tests/has_gpu $(BAD_SGEMM) $(if $(HAVE_SCALAPACK),$(PSGEMM))
	$(RUN_TEST) scalapack -- sh tests/scalapack/scalapack.sh $(abspath $(BUILD)/tests/scalapack) \
	    $(abspath $(BUILD)/lib/$(LIBNAME)) $(abspath $(BUILD)/tests/has_gpu) $(abspath $(PSGEMM)) \
	    $(abspath $(BAD_SGEMM)) $(SCALAPACK_TEST_DIR)
TEST_PROGRAMS += $(BAD_SGEMM) $(if $(HAVE_SCALAPACK),$(PSGEMM))
TEST_RUNS += test-scalapack

# ---------------------------------------------------------------- benchmark output check

# The benchmarks' check of every output against an FP64 reference
# (bench/gemm_check.hpp), fed correct and known-wrong outputs on the CPU:
# no GPU needed. AddressSanitizer catches a check that reads past C's
# columns or its reference.
.PHONY: test-bench-check
$(BUILD)/tests/test_bench_check: tests/test_bench_check.cpp tests/line_buffered.c bench/gemm_check.hpp bench/paired.hpp
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer $(WARN) -Werror -Ibench \
	    -o $@ $< tests/line_buffered.c -lcmocka -lopenblas -lpthread

test-bench-check: $(BUILD)/tests/test_bench_check
	$(RUN_TEST) test_bench_check -- $(BUILD)/tests/test_bench_check

# bench_multi's host side (bench/multi_check.hpp): its inputs, its sampled
# and full output checks, its device lists; on the CPU, no GPU.
.PHONY: test-bench-multi
$(BUILD)/tests/test_bench_multi: tests/test_bench_multi.cpp tests/line_buffered.c bench/multi_check.hpp \
                                 bench/gemm_check.hpp bench/splitmix.hpp
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer $(WARN) -Werror -Ibench \
	    -o $@ $< tests/line_buffered.c -lcmocka -lpthread

test-bench-multi: $(BUILD)/tests/test_bench_multi
	$(RUN_TEST) test_bench_multi -- $(BUILD)/tests/test_bench_multi
TEST_PROGRAMS += $(BUILD)/tests/test_bench_multi
TEST_RUNS += test-bench-multi

# The random-shape benchmark's problems (bench/random_shapes.cpp), on the CPU.
.PHONY: test-random-shapes
$(BUILD)/tests/test_random_shapes: tests/test_random_shapes.cpp bench/random_shapes.cpp bench/random_shapes.hpp \
                                   bench/splitmix.hpp
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer $(WARN) -Werror -Ibench \
	    -o $@ $< bench/random_shapes.cpp -lcmocka

test-random-shapes: $(BUILD)/tests/test_random_shapes
	$(RUN_TEST) test_random_shapes -- $(BUILD)/tests/test_random_shapes
TEST_PROGRAMS += $(BUILD)/tests/test_random_shapes
TEST_RUNS += test-random-shapes

# bench_gemm's FP64 reference on the device (bench/gemm_reference.hpp).
$(BUILD)/bench/gemm_reference.o: bench/gemm_reference.cu bench/gemm_reference.hpp bench/gemm_check.hpp bench/bench_error.hpp
	@mkdir -p $(@D)
	$(NVCC) -std=c++17 -O2 $(CUDA_ARCHS) -Xcompiler -Wall,-Wextra -c -o $@ $<

# The prerequisites of a rule are expanded where it stands: this one comes
# after every variable that TEST_PROGRAMS names.
test-programs: $(TEST_PROGRAMS)
	@:

# ---------------------------------------------------------------- docs

DOXYGEN ?= doxygen
docs:
	@mkdir -p docs/html
	( cat docs/Doxyfile; echo "PROJECT_NUMBER = $(VERSION)" ) | $(DOXYGEN) -
	@echo "docs: docs/html/index.html"

# ---------------------------------------------------------------- demo, bench

EX_CFLAGS := -std=c99 -O2 $(WARN) -Iinclude -isystem $(CUDA_HOME)/include -D_GNU_SOURCE
EX_LIBS := -L$(BUILD)/lib -ltgemm -Wl,-rpath,$(abspath $(BUILD)/lib) \
           -L$(CUDA_LIBDIR) -lcudart -Wl,-rpath,$(CUDA_LIBDIR) -ldl -lm

$(BUILD)/examples/demo: examples/demo.c $(BUILD)/lib/$(LIBNAME)
	@mkdir -p $(@D)
	$(CC) $(EX_CFLAGS) -o $@ $< $(EX_LIBS) -lpthread

demo:
	@$(MAKE) --no-print-directory $(JOBS) $(BUILD)/examples/demo
	$(BUILD)/examples/demo

BENCH_CXXFLAGS := -std=c++17 -O2 $(WARN) -Iinclude -isystem $(CUDA_HOME)/include
BENCH_LIBS := -L$(BUILD)/lib -ltgemm -Wl,-rpath,$(abspath $(BUILD)/lib) \
              -L$(CUDA_LIBDIR) -lcudart -Wl,-rpath,$(CUDA_LIBDIR) -ldl -lpthread

$(BUILD)/bench/l2flush.o: bench/l2flush.cu
	@mkdir -p $(@D)
	$(NVCC) -std=c++17 -O2 $(CUDA_ARCHS) -c -o $@ $<

# bench_gemm's parts (bench/bench.hpp says which file holds what).
BENCH_GEMM_SRC := bench/bench_gemm.cpp bench/bench_support.cpp bench/bench_check.cpp bench/bench_shapes.cpp \
                  bench/bench_device.cpp bench/bench_host.cpp
$(BUILD)/bench/bench_gemm: $(BENCH_GEMM_SRC) $(BUILD)/bench/l2flush.o $(BUILD)/bench/gemm_reference.o bench/bench.hpp \
                           bench/gemm_check.hpp bench/gemm_reference.hpp bench/bench_error.hpp $(BUILD)/lib/$(LIBNAME)
	@mkdir -p $(@D)
	$(CXX) $(BENCH_CXXFLAGS) -o $@ $(BENCH_GEMM_SRC) $(BUILD)/bench/l2flush.o $(BUILD)/bench/gemm_reference.o $(BENCH_LIBS)

# The random-shape benchmark (bench/bench_random.cpp says what it does),
# on the same parts as bench_gemm.
BENCH_RANDOM_SRC := bench/bench_random.cpp bench/random_shapes.cpp bench/bench_support.cpp bench/bench_check.cpp
$(BUILD)/bench/bench_random: $(BENCH_RANDOM_SRC) $(BUILD)/bench/l2flush.o $(BUILD)/bench/gemm_reference.o \
                             bench/bench.hpp bench/paired.hpp bench/random_shapes.hpp bench/splitmix.hpp bench/gemm_check.hpp \
                             bench/gemm_reference.hpp bench/bench_error.hpp $(BUILD)/lib/$(LIBNAME)
	@mkdir -p $(@D)
	$(CXX) $(BENCH_CXXFLAGS) -o $@ $(BENCH_RANDOM_SRC) $(BUILD)/bench/l2flush.o $(BUILD)/bench/gemm_reference.o \
	    $(BENCH_LIBS)

BENCH_OUT ?= $(BUILD)/bench
bench: $(BUILD)/bench/bench_gemm $(BUILD)/bench/bench_random
	$(BUILD)/bench/bench_gemm --suite --csv $(BENCH_OUT)/suite.csv
	$(BUILD)/bench/bench_gemm --squares --csv $(BENCH_OUT)/squares.csv
	$(BUILD)/bench/bench_gemm --host --csv $(BENCH_OUT)/host.csv
	python3 bench/plot.py $(BENCH_OUT)
	$(MAKE) --no-print-directory bench-blas BENCH_OUT=$(BENCH_OUT)

# The random-shape benchmark (issue 27) over BENCH_RANDOM_SEEDS seeds of
# BENCH_RANDOM_COUNT problems: fresh seeds each run, or SEED, SEED + 1, ...
# when SEED is one number (several numbers: those seeds). Per seed, the
# plan pass (TGEMM_VERBOSE=2 ... --plans, standard error in
# plans_SEED.log) and the timed run (random_SEED.csv); then
# bench/random_report.py over all of them: random_report.md,
# random_hist.png, random_scatter.png, all in BENCH_OUT. A failed run
# (a tgemm result outside its bound) still gets its report; make fails
# after it. BENCH_RANDOM_ARGS go to both passes: `--math-compare` times
# the fp32-tc math beside strict (issue 28), `--large` draws products of
# 2048 to 20000 in every dimension.
BENCH_RANDOM_SEEDS ?= 3
BENCH_RANDOM_COUNT ?= 100
BENCH_RANDOM_REPS ?= 9
BENCH_RANDOM_ARGS ?=
SEED ?=
bench-random: $(BUILD)/bench/bench_random
	@mkdir -p $(BENCH_OUT)
	@seeds="$(SEED)"; n=$(BENCH_RANDOM_SEEDS); \
	if [ -z "$$seeds" ]; then \
	    while [ $$n -gt 0 ]; do seeds="$$seeds $$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')"; n=$$((n - 1)); done; \
	elif [ $$(echo $$seeds | wc -w) -eq 1 ]; then \
	    first=$$seeds; seeds=; i=0; while [ $$i -lt $$n ]; do seeds="$$seeds $$((first + i))"; i=$$((i + 1)); done; \
	fi; \
	echo "bench-random: seeds" $$seeds; rc=0; csvs=; logs=; \
	for s in $$seeds; do \
	    echo "bench-random: seed $$s: plans -> $(BENCH_OUT)/plans_$$s.log"; \
	    TGEMM_VERBOSE=2 $(BUILD)/bench/bench_random --plans --seed $$s --count $(BENCH_RANDOM_COUNT) \
	        $(BENCH_RANDOM_ARGS) 2> $(BENCH_OUT)/plans_$$s.log || { rc=1; tail -n 3 $(BENCH_OUT)/plans_$$s.log; }; \
	    $(BUILD)/bench/bench_random --seed $$s --count $(BENCH_RANDOM_COUNT) --reps $(BENCH_RANDOM_REPS) \
	        $(BENCH_RANDOM_ARGS) --csv $(BENCH_OUT)/random_$$s.csv || rc=1; \
	    csvs="$$csvs $(BENCH_OUT)/random_$$s.csv"; logs="$$logs --plans $(BENCH_OUT)/plans_$$s.log"; \
	done; \
	rm -f $(BENCH_OUT)/random_report.md; \
	python3 bench/random_report.py $$logs --md $(BENCH_OUT)/random_report.md --out $(BENCH_OUT) $$csvs || rc=1; \
	if [ -f $(BENCH_OUT)/random_report.md ]; then echo "bench-random: report $(BENCH_OUT)/random_report.md, seeds" $$seeds; \
	else echo "bench-random: no report (no seed gave results), seeds" $$seeds; fi; exit $$rc

# Every tiled plan (family x split-K x form) timed on each shape of
# BENCH_PLANS_SHAPES (M N K triples, NN), and the plan the library picks
# (TGEMM_VERBOSE=2) against the fastest: how much the dispatcher's cost
# model loses. $(BENCH_OUT)/plans.csv keeps the table.
BENCH_PLANS_SHAPES ?= 256 256 256 384 384 384 512 512 512 640 640 640 768 768 768 1000 1000 1000 \
                      1024 1024 1024 1536 1536 512 2048 512 1024 256 256 8192
KERNEL_OBJ := $(filter $(BUILD)/obj/kernels/%,$(LIB_OBJ))
$(BUILD)/bench/bench_plans: bench/bench_plans.cu bench/gemm_check.hpp $(KERNEL_OBJ) $(BUILD)/bench/l2flush.o
	@mkdir -p $(@D)
	$(NVCC) -std=c++17 -O2 $(CUDA_ARCHS) -Iinclude -Isrc -o $@ $< $(KERNEL_OBJ) $(BUILD)/bench/l2flush.o

bench-plans: $(BUILD)/bench/bench_plans $(BUILD)/bench/bench_gemm
	@mkdir -p $(BENCH_OUT)
	$(BUILD)/bench/bench_plans $(BENCH_PLANS_SHAPES) > $(BENCH_OUT)/plans.csv
	set -- $(BENCH_PLANS_SHAPES); args=; while [ $$# -ge 3 ]; do args="$$args --shape $$1 $$2 $$3 N N"; shift 3; done; \
	    TGEMM_VERBOSE=2 $(BUILD)/bench/bench_gemm --reps 1 --warmup 0 $$args > $(BENCH_OUT)/plans_picked.log 2>&1
	python3 bench/plan_regret.py $(BENCH_OUT)/plans.csv $(BENCH_OUT)/plans_picked.log | tee $(BENCH_OUT)/plans_regret.txt

# Where the time of a call on host operands goes: 8192^3 NN from pageable
# and pinned memory (bench_gemm --host, 5 timed calls each after the
# validated one) with TGEMM_HOST_TRACE, summarised per kind of call; the
# CSV stays in $(BENCH_OUT)/host_trace.csv (bench/host_trace.py --timeline
# CALL lists one call). HOST_TRACE_SHAPE overrides the shape.
HOST_TRACE_SHAPE ?= 8192 8192 8192 N N
bench-host-trace: $(BUILD)/bench/bench_gemm
	@mkdir -p $(BENCH_OUT)
	rm -f $(BENCH_OUT)/host_trace.csv
	TGEMM_HOST_TRACE=$(BENCH_OUT)/host_trace.csv $(BUILD)/bench/bench_gemm --host --reps 5 \
	    --shape $(HOST_TRACE_SHAPE) --csv $(BENCH_OUT)/host_trace_bench.csv
	python3 bench/host_trace.py $(BENCH_OUT)/host_trace.csv | tee $(BENCH_OUT)/host_trace_summary.txt
	python3 bench/host_model.py --shape $(wordlist 1,3,$(HOST_TRACE_SHAPE)) | tee -a $(BENCH_OUT)/host_trace_summary.txt

# The BLAS ABI against the CPU BLAS: one program linked only against
# OpenBLAS, run plain, under LD_PRELOAD=libtgemm.so with TGEMM_OFFLOAD=auto,
# and with TGEMM_OFFLOAD=gpu, in BENCH_BLAS_ROUNDS interleaved rounds
# (bench/bench_blas.py): medians, where auto sent each shape, auto against
# the faster side, the forced GPU path's spread. BENCH_BLAS_MAX caps the
# sizes (default 8192); BENCH_BLAS_ARGS adds options of bench_blas.py
# (--direct: OpenBLAS timed directly beside every call, in every mode;
# --beside: OpenBLAS and tgemm's GPU path beside every `auto` call;
# --lead-in SECONDS: 2048^3 products before the shapes, default 1).
BENCH_BLAS_MAX ?= 8192
BENCH_BLAS_ARGS ?=
BENCH_BLAS_ROUNDS ?= 5
# Set in all three modes: OpenBLAS's idle threads sleep at once instead of
# spinning beside the GPU path's copy threads (README, "mixing small and
# large calls"); BENCH_BLAS_ENV= measures without it.
BENCH_BLAS_ENV ?= OPENBLAS_THREAD_TIMEOUT=4
$(BUILD)/bench/bench_cpu_blas: bench/bench_cpu_blas.c
	@mkdir -p $(@D)
	$(CC) -std=c99 -O2 $(WARN) -D_GNU_SOURCE -o $@ $< -lopenblas -ldl -lm

bench-blas: $(BUILD)/bench/bench_cpu_blas $(BUILD)/lib/$(LIBNAME)
	@mkdir -p $(BENCH_OUT)
	$(BLAS_ENV) python3 bench/bench_blas.py --bin $(BUILD)/bench/bench_cpu_blas --lib $(abspath $(LIB)) \
	    --out $(BENCH_OUT) --rounds $(BENCH_BLAS_ROUNDS) --max $(BENCH_BLAS_MAX) $(BENCH_BLAS_ENV:%=--env %) \
	    $(BENCH_BLAS_ARGS)

# Several GPUs (issue 30): tgemm on host operands spread over the GPUs of
# TGEMM_DEVICES against cuBLAS-XT on the same GPUs, and the links between
# them (bench/bench_multi.cpp says what it does). It links cuBLAS for
# cuBLAS-XT's API; the library does not. bench-multi runs
# bench/multi_gpu.sh into BENCH_OUT/multi (the GPUs': the links, one
# process per device set, TGEMM_DEVICES=auto, the report; within
# MULTI_BUDGET seconds, 300 by default).
$(BUILD)/bench/bench_multi: bench/bench_multi.cpp bench/multi_check.hpp $(BUILD)/bench/gemm_reference.o \
                            bench/gemm_check.hpp bench/gemm_reference.hpp bench/bench_error.hpp bench/splitmix.hpp \
                            $(BUILD)/lib/$(LIBNAME)
	@mkdir -p $(@D)
	$(CXX) $(BENCH_CXXFLAGS) -o $@ bench/bench_multi.cpp $(BUILD)/bench/gemm_reference.o $(BENCH_LIBS) -lcublas

bench-multi: $(BUILD)/bench/bench_multi
	OUT=$(BENCH_OUT)/multi BENCH_MULTI=$(BUILD)/bench/bench_multi bash bench/multi_gpu.sh

# Every benchmark program, built and not run (no GPU needed).
bench-programs: $(BUILD)/bench/bench_gemm $(BUILD)/bench/bench_random $(BUILD)/bench/bench_plans \
                $(BUILD)/bench/bench_cpu_blas $(BUILD)/bench/bench_multi

# ---------------------------------------------------------------- install

install: install-shared install-includes install-pc install-docs

install-shared: $(BUILD)/lib/$(LIBNAME)
	install -d $(DESTDIR)$(LIBDIR)
	install -m 755 $(LIB) $(DESTDIR)$(LIBDIR)/$(REALNAME)
	ln -sf $(REALNAME) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/$(LIBNAME)

install-includes:
	install -d $(DESTDIR)$(INCLUDEDIR)
	install -m 644 include/tgemm.h $(DESTDIR)$(INCLUDEDIR)/tgemm.h
	install -m 644 include/tgemm.f90 $(DESTDIR)$(INCLUDEDIR)/tgemm.f90

install-pc:
	install -d $(DESTDIR)$(PKGCONFIGDIR)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	    -e 's|@VERSION@|$(VERSION)|' pkgconfig/tgemm.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/tgemm.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/tgemm.pc

# The Markdown documents always; the HTML reference when Doxygen is there.
install-docs:
	install -d $(DESTDIR)$(DOCDIR)
	install -m 644 README.md docs/*.md $(DESTDIR)$(DOCDIR)/
	@if command -v doxygen >/dev/null 2>&1; then \
	    $(MAKE) --no-print-directory docs >/dev/null && \
	    install -d $(DESTDIR)$(DOCDIR)/html && cp -R docs/html/. $(DESTDIR)$(DOCDIR)/html/; \
	else echo "doxygen not installed: HTML reference not installed"; fi

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/$(REALNAME) $(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/$(LIBNAME)
	rm -f $(DESTDIR)$(INCLUDEDIR)/tgemm.h $(DESTDIR)$(INCLUDEDIR)/tgemm.f90 $(DESTDIR)$(PKGCONFIGDIR)/tgemm.pc
	rm -rf $(DESTDIR)$(DOCDIR)

# ---------------------------------------------------------------- tools

# Packages for building, testing and documenting (Debian 12 / Ubuntu
# 22.04+): the first word of each line of .ci/packages, the list that
# .ci/run installs on a fresh machine too. Only the missing ones are
# installed (apt-get through sudo unless root).
DEB_PACKAGES := $(shell sed -e 's/\#.*//' .ci/packages | awk 'NF {print $$1}')
deps:
	@missing=$$(for p in $(DEB_PACKAGES); do \
	    dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed$$' || echo $$p; \
	done); \
	if [ -z "$$missing" ]; then echo "deps: the $(words $(DEB_PACKAGES)) packages of .ci/packages are installed"; else \
	    if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	    echo "deps: installing" $$missing; \
	    $$SUDO apt-get update -qq && \
	    $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi
	@test -x "$(NVCC)" || { echo "CUDA toolkit not found: install CUDA 12 or newer, or set CUDA_HOME"; exit 1; }

resources: lib
	@cat $(BUILD)/obj/kernels/*.ptxas.log | grep -E 'Compiling entry|registers|spill'

# The library's SASS, and each tiled kernel's FFMA register-bank pressure
# (bench/sass_banks.py; needs cuobjdump, part of the CUDA toolkit on GPU hosts).
sass: lib
	$(CUDA_HOME)/bin/cuobjdump --dump-sass $(LIB) > $(BUILD)/tgemm.sass
	@echo "$(BUILD)/tgemm.sass"
	python3 bench/sass_banks.py $(BUILD)/tgemm.sass

# The list at the top of this file.
help:
	@sed -n '3,/^#$$/s/^#   //p' $(firstword $(MAKEFILE_LIST))

clean:
	rm -rf $(BUILD) docs/html
