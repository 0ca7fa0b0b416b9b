# The frame layer: whole files <-> .aurp streams (CLI and daemon call this).
FRAME_SRC := $(wildcard frame/*.c)
FRAME_OBJ := $(FRAME_SRC:%.c=$(OBJ)/%.o)
FRAME_LIB := $(BUILD)/lib/libaurframe.a

$(FRAME_LIB): $(FRAME_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

all: $(FRAME_LIB)
