# The spectrometer simulator: SIM_LIB (frames in memory, no I/O) and the
# aurorasim program (sim/tool/: FITS files through cfitsio).
SIM_SRC := $(wildcard sim/*.c)
SIM_OBJ := $(SIM_SRC:%.c=$(OBJ)/%.o)
SIM_LIB := $(BUILD)/lib/libaursim.a
AURORASIM_SRC := $(wildcard sim/tool/*.c)
AURORASIM_OBJ := $(AURORASIM_SRC:%.c=$(OBJ)/%.o)

$(SIM_LIB): $(SIM_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

$(BIN)/aurorasim: $(AURORASIM_OBJ) $(SIM_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_SAN) -o $@ $(AURORASIM_OBJ) $(SIM_LIB) -lcfitsio $(LDLIBS_BASE)

all: $(SIM_LIB) $(BIN)/aurorasim
