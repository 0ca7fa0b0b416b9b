# Tests.  Every tests/unit/test_*.c is one Criterion program linked with every
# library of the project; every tests/fuzz/fuzz_*.c one libFuzzer target.
# scripts/run-tests.sh drives them (make test).
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
TEST_HELPERS_SRC := $(filter-out tests/unit/test_%.c,$(wildcard tests/unit/*.c))
TEST_HELPERS_OBJ := $(TEST_HELPERS_SRC:%.c=$(OBJ)/%.o)
# Highest layer first for the static linker.
TEST_LIBS = $(FRAME_LIB) $(FITS_LIB) $(GPU_LIB) $(SIM_LIB) $(CORE_LIB)
TEST_LDLIBS = $(GPU_LDLIBS) -lcfitsio $(FITS_LDLIBS) -lcriterion $(LDLIBS_BASE)

$(BUILD)/tests/%: $(OBJ)/tests/unit/%.o $(TEST_HELPERS_OBJ) $(TEST_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_SAN) -o $@ $< $(TEST_HELPERS_OBJ) $(TEST_LIBS) $(TEST_LDLIBS)

.PHONY: unit-tests
unit-tests: $(UNIT_BIN)

test:
	@scripts/run-tests.sh

# The generator of the golden streams (tests/golden/generate.sh): the core,
# the test frames and the simulator's library (frames of curved orders).
$(BUILD)/bin/make_golden: $(OBJ)/tests/golden/make_golden.o $(OBJ)/tests/unit/core_frames.o \
                          $(OBJ)/tests/unit/core_fitshdr.o $(SIM_LIB) $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_SAN) -o $@ $^ $(LDLIBS_BASE)
$(OBJ)/tests/golden/make_golden.o: HOST_CFLAGS += -Itests/unit

# Benchmarks (numbers, not pass/fail): `make bench` runs scripts/bench-cpu.sh.
BENCH_CORE := $(BUILD)/tests/bench/bench_core
$(BENCH_CORE): $(OBJ)/tests/bench/bench_core.o $(TEST_HELPERS_OBJ) $(TEST_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_SAN) -o $@ $< $(TEST_HELPERS_OBJ) $(TEST_LIBS) $(TEST_LDLIBS) -lcharls

# The size benchmark's pixel helper (scripts/bench-size.sh): FITS -> PGM,
# the non-pixel bytes, JPEG-LS sizes.  Core test helpers and CharLS only.
BENCH_PIXELS := $(BUILD)/tests/bench/bench_pixels
$(BENCH_PIXELS): $(OBJ)/tests/bench/bench_pixels.o $(OBJ)/tests/unit/core_fitshdr.o $(OBJ)/tests/unit/core_frames.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_SAN) -o $@ $^ -lcharls $(LDLIBS_BASE)
$(OBJ)/tests/bench/bench_pixels.o: HOST_CFLAGS += -Itests/unit

# The noise floor of a simulated frame (scripts/bench-size.sh): the
# simulator's library alone.
NOISE_FLOOR := $(BUILD)/tests/bench/noise_floor
$(NOISE_FLOOR): $(OBJ)/tests/bench/noise_floor.o $(SIM_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_SAN) -o $@ $^ $(LDLIBS_BASE)
$(OBJ)/tests/bench/noise_floor.o: HOST_CFLAGS += -Isim

# The size benchmark's helpers alone (make test runs bench-size.sh on tiny frames).
bench-tools: $(BENCH_PIXELS) $(NOISE_FLOOR)

bench: all $(BENCH_CORE) $(BENCH_PIXELS) $(NOISE_FLOOR)
	@BUILD=$(BUILD) scripts/bench-cpu.sh
