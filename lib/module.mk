# libaurorapack: the codec core, the FITS layout and the frame layer as one
# library for programs and the Python package (docs/LIBRARY.md).
#
#   make lib            $(BUILD)/lib/libaurorapack.so.1.0.0 (+ .so.1, .so) and .a
#   make lib cli        the library and aurorapack: needs only cfitsio, not
#                       libuv, libyaml or libsystemd (the daemon's)
#   make install-lib    headers, both libraries and aurorapack.pc under $(PREFIX)
#   make install-cli    the aurorapack program under $(PREFIX)/bin
# `make install` installs the library too.
LIBAURP_MAJOR := 1
LIBAURP_VERSION := 1.0.0
LIBAURP_SRC := $(wildcard core/*.c) $(wildcard fits/*.c) $(wildcard frame/*.c) lib/aurorapack.c
# Position-independent objects of their own (the archives of the other
# folders are not), used for both the shared and the static library.
LIBAURP_OBJ := $(LIBAURP_SRC:%.c=$(OBJ)/pic/%.o)
LIBAURP_SO := $(BUILD)/lib/libaurorapack.so.$(LIBAURP_VERSION)
LIBAURP_A := $(BUILD)/lib/libaurorapack.a
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include

$(OBJ)/pic/core/%.o: core/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CORE_CFLAGS) -fPIC -c $< -o $@
$(OBJ)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -Ilib -fPIC -c $< -o $@

$(LIBAURP_SO): $(LIBAURP_OBJ) lib/aurorapack.map
	@mkdir -p $(dir $@)
	$(CC) -shared $(LDFLAGS_SAN) -Wl,-soname,libaurorapack.so.$(LIBAURP_MAJOR) \
	  -Wl,--version-script=lib/aurorapack.map -Wl,-z,defs -o $@ $(LIBAURP_OBJ) $(FITS_LDLIBS) $(LDLIBS_BASE)
	ln -sf libaurorapack.so.$(LIBAURP_VERSION) $(BUILD)/lib/libaurorapack.so.$(LIBAURP_MAJOR)
	ln -sf libaurorapack.so.$(LIBAURP_MAJOR) $(BUILD)/lib/libaurorapack.so

$(LIBAURP_A): $(LIBAURP_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

.PHONY: lib cli install-lib install-cli
lib: $(LIBAURP_SO) $(LIBAURP_A)
cli: $(BIN)/aurorapack
all: lib

install: install-lib
install-lib: lib
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR)/aurorapack
	install -m 0644 lib/aurorapack.h core/aurp.h $(DESTDIR)$(INCLUDEDIR)/aurorapack/
	install -m 0755 $(LIBAURP_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf libaurorapack.so.$(LIBAURP_VERSION) $(DESTDIR)$(LIBDIR)/libaurorapack.so.$(LIBAURP_MAJOR)
	ln -sf libaurorapack.so.$(LIBAURP_MAJOR) $(DESTDIR)$(LIBDIR)/libaurorapack.so
	install -m 0644 $(LIBAURP_A) $(DESTDIR)$(LIBDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(LIBAURP_VERSION)|' \
	  -e 's|^libdir=.*|libdir=$(LIBDIR)|' -e 's|^includedir=.*|includedir=$(INCLUDEDIR)|' \
	  lib/aurorapack.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/aurorapack.pc
	-[ -z "$(DESTDIR)" ] && [ "$$(id -u)" -eq 0 ] && ldconfig 2>/dev/null; true

install-cli: $(BIN)/aurorapack
	install -D -m 0755 $(BIN)/aurorapack $(DESTDIR)$(PREFIX)/bin/aurorapack
