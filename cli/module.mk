# aurorapack, the command-line tool.  CharLS (JPEG-LS) is a benchmark peer,
# linked where its headers are installed.
CLI_SRC := $(wildcard cli/*.c)
CLI_OBJ := $(CLI_SRC:%.c=$(OBJ)/%.o)
CLI_CHARLS := $(if $(wildcard /usr/include/charls/charls.h),-lcharls)

$(BIN)/aurorapack: $(CLI_OBJ) $(FRAME_LIB) $(FITS_LIB) $(GPU_LIB) $(SIM_LIB) $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_SAN) -o $@ $(CLI_OBJ) $(FRAME_LIB) $(FITS_LIB) $(GPU_LIB) $(SIM_LIB) \
	  $(CORE_LIB) $(GPU_LDLIBS) $(FITS_LDLIBS) $(CLI_CHARLS) $(LDLIBS_BASE)

all: $(BIN)/aurorapack
