# The FITS layer: where the 16-bit 2-D images of a FITS file are (cfitsio).
FITS_SRC := $(wildcard fits/*.c)
FITS_OBJ := $(FITS_SRC:%.c=$(OBJ)/%.o)
FITS_LIB := $(BUILD)/lib/libaurfits.a

$(FITS_LIB): $(FITS_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

all: $(FITS_LIB)

# cfitsio is opened on first use, not linked (fits/cfitsio_api.h says why):
# by the SONAME of the library the linker would take.
CFITSIO_SONAME := $(shell objdump -p "$$($(CC) -print-file-name=libcfitsio.so)" 2>/dev/null | sed -n 's/^ *SONAME *//p')
$(OBJ)/fits/cfitsio_api.o $(OBJ)/pic/fits/cfitsio_api.o: HOST_CFLAGS += -DAURP_CFITSIO_SONAME='"$(or $(CFITSIO_SONAME),libcfitsio.so)"'
FITS_LDLIBS := -ldl
