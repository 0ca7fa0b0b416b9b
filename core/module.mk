# The codec core: pure C11, no I/O, no library beyond libc and C11 threads.
CORE_SRC := $(wildcard core/*.c)
CORE_OBJ := $(CORE_SRC:%.c=$(OBJ)/%.o)
CORE_LIB := $(BUILD)/lib/libaurcore.a
CORE_CFLAGS := $(CFLAGS_BASE) -Icore -Ithird_party/xxhash

$(OBJ)/core/%.o: core/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CORE_CFLAGS) -c $< -o $@

$(CORE_LIB): $(CORE_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

all: $(CORE_LIB)

# The core's benchmark next to CharLS (tests/bench/bench_core.c): make bench
BENCH_CORE := $(BUILD)/bin/bench_core
$(BENCH_CORE): $(OBJ)/tests/bench/bench_core.o $(OBJ)/tests/unit/core_frames.o \
               $(OBJ)/tests/unit/core_fitshdr.o $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_SAN) -o $@ $^ -lcharls $(LDLIBS_BASE)
$(OBJ)/tests/bench/bench_core.o: HOST_CFLAGS += -Itests/unit
bench: $(BENCH_CORE)
