# The GPU backend.  With nvcc: the CUDA encoder (gpu/*.cu + gpu/*.c except
# nocuda.c), linked statically against cudart so the binaries run on machines
# without the toolkit (and report "no GPU" where there is no driver).
# Without nvcc: gpu/nocuda.c, which reports that the build has no CUDA.
GPU_CU := $(wildcard gpu/*.cu)
GPU_LIB := $(BUILD)/lib/libaurgpu.a
ifneq ($(NVCC)$(GPU_CU),)
ifneq ($(NVCC),)
ifneq ($(GPU_CU),)
GPU_HAVE_CUDA := 1
endif
endif
endif

ifeq ($(GPU_HAVE_CUDA),1)
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
# sm_90 code plus PTX so that other cards (compute capability >= 7.5) JIT it.
# --fmad=false: the prediction arithmetic is part of the format.
NVCC_FLAGS ?= -O3 -std=c++17 --fmad=false -gencode arch=compute_90,code=sm_90 \
  -gencode arch=compute_90,code=compute_90 -Xcompiler -Wall,-Wextra,-ffp-contract=off -Icore -Igpu
GPU_C_SRC := $(filter-out gpu/nocuda.c,$(wildcard gpu/*.c))
GPU_OBJ := $(GPU_CU:%.cu=$(OBJ)/%.o) $(GPU_C_SRC:%.c=$(OBJ)/%.o)
# cudart needs the C++ runtime: linked statically too, since loading
# libstdc++.so cost every process about 1.4 ms of start (2 % of unpacking a
# TREx frame, about 70 ms on the 2-core machine).
GPU_LDLIBS := -L$(CUDA_HOME)/lib64 -L$(CUDA_HOME)/targets/x86_64-linux/lib -lcudart_static -ldl -lrt \
  -Wl,-Bstatic -lstdc++ -Wl,-Bdynamic
# -MMD -MP: a change to a header (lsmix_arith.h, rans_entry.cuh) rebuilds its kernels
$(OBJ)/gpu/%.o: gpu/%.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCC_FLAGS) -MMD -MP -c $< -o $@
else
GPU_OBJ := $(OBJ)/gpu/nocuda.o
GPU_LDLIBS :=
endif

$(GPU_LIB): $(GPU_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

all: $(GPU_LIB)

# GPU programs: plain C (no Criterion, no cfitsio: the device machine has
# neither).  The probe prints the device count or why there is none.
GPU_PROBE := $(BIN)/aurp-gpu-probe
GPU_TEST_SRC := tests/gpu/test_gpu_encode.c
GPU_BENCH_SRC := tests/gpu/bench_gpu.c
GPU_TEST_HELPERS := $(OBJ)/tests/gpu/gpu_frames.o
GPU_TEST := $(BUILD)/tests/gpu/test_gpu_encode
GPU_BENCH := $(BUILD)/tests/gpu/aurp-gpu-bench
GPU_PROG_LIBS = $(GPU_LIB) $(CORE_LIB)
GPU_PROG_LDLIBS = $(GPU_LDLIBS) $(LDLIBS_BASE)

$(GPU_PROBE): $(OBJ)/gpu/probe/aurp-gpu-probe.o $(GPU_PROG_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_SAN) -o $@ $< $(GPU_PROG_LIBS) $(GPU_PROG_LDLIBS)

$(GPU_TEST): $(OBJ)/tests/gpu/test_gpu_encode.o $(GPU_TEST_HELPERS) $(GPU_PROG_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_SAN) -o $@ $< $(GPU_TEST_HELPERS) $(GPU_PROG_LIBS) $(GPU_PROG_LDLIBS)

$(GPU_BENCH): $(OBJ)/tests/gpu/bench_gpu.o $(GPU_TEST_HELPERS) $(GPU_PROG_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_SAN) -o $@ $< $(GPU_TEST_HELPERS) $(GPU_PROG_LIBS) $(GPU_PROG_LDLIBS)

all: $(GPU_PROBE)

# The CUDA test programs (nvcc objects).
GPU_DP_TEST := $(BUILD)/tests/gpu/test_gpu_dp
GPU_ARITH_TEST := $(BUILD)/tests/gpu/test_gpu_arith
GPU_CG_TEST := $(BUILD)/tests/gpu/test_gpu_cas_cg
ifeq ($(GPU_HAVE_CUDA),1)
$(OBJ)/tests/gpu/%.o: tests/gpu/%.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCC_FLAGS) -MMD -MP -c $< -o $@
# The device DP against the C core's (it calls the kernels' launcher).
$(GPU_DP_TEST): $(OBJ)/tests/gpu/test_gpu_dp.o $(GPU_PROG_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_SAN) -o $@ $< $(GPU_PROG_LIBS) $(GPU_PROG_LDLIBS)
# The device's integer arithmetic against the C core's (nvcc: its own kernel).
$(GPU_ARITH_TEST): $(OBJ)/tests/gpu/test_gpu_arith.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_SAN) -o $@ $< $(GPU_PROG_LDLIBS)
# The device's fit of the cascade's weights against the C core's.
$(GPU_CG_TEST): $(OBJ)/tests/gpu/test_gpu_cas_cg.o $(GPU_PROG_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_SAN) -o $@ $< $(GPU_PROG_LIBS) $(GPU_PROG_LDLIBS)
else
GPU_DP_TEST :=
GPU_ARITH_TEST :=
GPU_CG_TEST :=
endif

# CI (no GPU): compile every CUDA file, link the GPU programs.
.PHONY: gpu-check test-gpu
gpu-check: $(GPU_LIB) $(GPU_PROBE) $(GPU_TEST) $(GPU_BENCH) $(GPU_DP_TEST) $(GPU_ARITH_TEST) $(GPU_CG_TEST)

# On the device machine: the GPU tests on the real frames.
AURP_SHARED_DATA ?= tests/data/real
test-gpu: gpu-check
	$(if $(GPU_DP_TEST),$(GPU_DP_TEST))
	$(if $(GPU_ARITH_TEST),$(GPU_ARITH_TEST))
	$(if $(GPU_CG_TEST),$(GPU_CG_TEST))
	$(GPU_TEST) $(wildcard $(AURP_SHARED_DATA)/*.fits)
