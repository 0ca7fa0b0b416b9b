# The FITS layer: where the 16-bit 2-D images of a FITS file are (cfitsio).
FITS_SRC := $(wildcard fits/*.c)
FITS_OBJ := $(FITS_SRC:%.c=$(OBJ)/%.o)
FITS_LIB := $(BUILD)/lib/libaurfits.a

$(FITS_LIB): $(FITS_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

all: $(FITS_LIB)
