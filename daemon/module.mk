# aurorad, the station daemon: libuv loop, workers, transmission queue,
# systemd integration.  Also `make demo` and `make install`.
DAEMON_SRC := $(filter-out daemon/aurorad.c,$(wildcard daemon/*.c))
DAEMON_OBJ := $(DAEMON_SRC:%.c=$(OBJ)/%.o)
DAEMON_LIB := $(BUILD)/lib/libaurorad.a
DAEMON_LDLIBS := -luv -lyaml -lsystemd $(FITS_LDLIBS)
AURORAD := $(BIN)/aurorad

$(DAEMON_LIB): $(DAEMON_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

$(AURORAD): $(OBJ)/daemon/aurorad.o $(DAEMON_LIB) $(FRAME_LIB) $(FITS_LIB) $(GPU_LIB) $(SIM_LIB) $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_SAN) -o $@ $^ $(GPU_LDLIBS) $(DAEMON_LDLIBS) $(LDLIBS_BASE)

all: $(AURORAD)

# The daemon's unit tests (tests/unit/test_daemon_*.c) also link the daemon's
# own library; tests/module.mk links every unit test with TEST_HELPERS_OBJ.
DAEMON_UNIT_BIN := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test_daemon_*.c))
$(DAEMON_UNIT_BIN): $(DAEMON_LIB)
$(DAEMON_UNIT_BIN): TEST_HELPERS_OBJ += $(DAEMON_LIB)
$(DAEMON_UNIT_BIN): TEST_LDLIBS += $(DAEMON_LDLIBS)

# ---- install: aurorad, aurorapack, unit, configuration, sysusers/tmpfiles, guide
DESTDIR ?=
SYSTEMD_UNITDIR ?= /etc/systemd/system
.PHONY: install install-daemon
install: install-daemon
install-daemon: $(AURORAD) $(BIN)/aurorapack docs/OPERATIONS.md
	install -D -m 0755 $(AURORAD) $(DESTDIR)$(PREFIX)/bin/aurorad
	install -D -m 0755 $(BIN)/aurorapack $(DESTDIR)$(PREFIX)/bin/aurorapack
	install -D -m 0644 systemd/aurorad.service $(DESTDIR)$(SYSTEMD_UNITDIR)/aurorad.service
	sed -i -e 's|/usr/local/bin/aurorad|$(PREFIX)/bin/aurorad|g' \
	  -e 's|file:///usr/local/share/doc/aurorapack/|file://$(PREFIX)/share/doc/aurorapack/|g' \
	  $(DESTDIR)$(SYSTEMD_UNITDIR)/aurorad.service
	install -D -m 0644 docs/OPERATIONS.md $(DESTDIR)$(PREFIX)/share/doc/aurorapack/OPERATIONS.md
	install -D -m 0644 systemd/aurorad.sysusers $(DESTDIR)/usr/lib/sysusers.d/aurorad.conf
	install -D -m 0644 systemd/aurorad.tmpfiles $(DESTDIR)/usr/lib/tmpfiles.d/aurorad.conf
	install -D -m 0755 scripts/aurora-send $(DESTDIR)$(PREFIX)/bin/aurora-send
	install -D -m 0644 systemd/aurora-send.service $(DESTDIR)$(SYSTEMD_UNITDIR)/aurora-send.service
	install -D -m 0644 systemd/aurora-send.timer $(DESTDIR)$(SYSTEMD_UNITDIR)/aurora-send.timer
	sed -i -e 's|/usr/local/bin/aurora-send|$(PREFIX)/bin/aurora-send|g' \
	  $(DESTDIR)$(SYSTEMD_UNITDIR)/aurora-send.service
	@if [ -e $(DESTDIR)/etc/aurorad/aurorad.yaml ]; then \
	  echo "keeping the existing $(DESTDIR)/etc/aurorad/aurorad.yaml"; \
	else install -D -m 0644 config/aurorad.yaml $(DESTDIR)/etc/aurorad/aurorad.yaml; fi
	@echo "installed; then: systemd-sysusers; systemd-tmpfiles --create; systemctl daemon-reload; systemctl enable --now aurorad"

# ---- demo: the daemon on a simulated spectrometer ----------------------
DEMO_INTERVAL ?= 15
demo:
	@scripts/install-deps.sh
	$(MAKE) -j2 BUILD=$(BUILD) all
	BUILD=$(BUILD) DEMO_INTERVAL=$(DEMO_INTERVAL) scripts/demo.sh
