# aurorapack: top-level build.  Each folder adds its own rules in module.mk;
# this file holds the shared flags and the targets an operator types.
#
#   make              build everything into $(BUILD) (default: build/)
#   make test         install Debian packages if missing, then run every test
#   make demo         the daemon on a simulated spectrometer (README)
#   make test-gpu     GPU tests (device machine only)
#   make bench        CPU benchmarks: codec vs CharLS, size vs ideal, peak memory
#   make SAN=1        AddressSanitizer + UBSan build (use with BUILD=build/asan)

BUILD ?= build
SAN ?=
CC ?= cc
NVCC ?= $(shell command -v nvcc 2>/dev/null || { test -x /usr/local/cuda/bin/nvcc && echo /usr/local/cuda/bin/nvcc; })
PREFIX ?= /usr/local

# The prediction arithmetic is part of the stream format: no contraction of
# multiply-add, no fast-math, IEEE double everywhere (docs/FORMAT.md).
FP_FLAGS := -ffp-contract=off -fno-fast-math
WARN := -Wall -Wextra -Werror -Wno-error=unused-parameter
OPT ?= -O2
CFLAGS_BASE := -std=c11 $(OPT) -g $(FP_FLAGS) $(WARN) -MMD -MP
ifneq ($(SAN),)
CFLAGS_BASE += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS_SAN := -fsanitize=address,undefined
endif
# Host code above the core may use POSIX.
CFLAGS_POSIX := $(CFLAGS_BASE) -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
LDLIBS_BASE := -lm -lpthread $(LDFLAGS_SAN)

BIN := $(BUILD)/bin
OBJ := $(BUILD)/obj

.PHONY: all test test-gpu demo deps install clean fuzz bench bench-tools
all:

# Host code outside core/: POSIX C11, headers of every layer visible.
HOST_CFLAGS = $(CFLAGS_POSIX) -Icore -Ithird_party/xxhash -Isim -Ifits -Iframe -Igpu -Icli -Idaemon
$(OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -c $< -o $@

include core/module.mk
-include sim/module.mk
-include fits/module.mk
-include frame/module.mk
-include gpu/module.mk
-include cli/module.mk
-include daemon/module.mk
-include lib/module.mk
-include tests/module.mk

deps:
	@scripts/install-deps.sh

clean:
	rm -rf build

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
