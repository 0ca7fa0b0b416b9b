# aurorapack, the command-line tool.  CharLS (JPEG-LS), a peer of `bench`,
# is opened at run time (cli/bench_charls.c), not linked.
CLI_SRC := $(wildcard cli/*.c)
CLI_OBJ := $(CLI_SRC:%.c=$(OBJ)/%.o)

$(BIN)/aurorapack: $(CLI_OBJ) $(FRAME_LIB) $(FITS_LIB) $(GPU_LIB) $(SIM_LIB) $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_SAN) -o $@ $(CLI_OBJ) $(FRAME_LIB) $(FITS_LIB) $(GPU_LIB) $(SIM_LIB) \
	  $(CORE_LIB) $(GPU_LDLIBS) $(FITS_LDLIBS) -ldl $(LDLIBS_BASE)

all: $(BIN)/aurorapack
