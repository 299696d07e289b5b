# xroce build.  `make` builds everything; `make test` runs the whole suite
# (root needed for the BPF and netns parts); `make deps` installs the Debian
# packages the build and the tests need.
#
#   bpf/*.bpf.c        -> build/bpf/*.bpf.o + build/*.skel.h (bpftool)
#   user/*.c           -> build/libxroce.a, build/libxroce.so, xroce.pc
#   loader/*.c         -> build/xroce          (the command)
#   tests/unit/test_*.c-> build/tests/test_*   (cmocka, ASan + UBSan)
#   tests/bpf/*.c      -> build/tests/bpf_*    (bpf_prog_test_run tables)
#   tests/fabric/*.c   -> build/xrfabric       (fabric emulator control)
#   tests/fuzz/        -> build/fuzz/fuzz_*     (`make fuzz`, tests/fuzz/fuzz.mk)
#   tests/bench/       -> build/bench/txengine  (`make txengine`, tests/bench/bench.mk)

PREFIX ?= /usr/local
CC ?= gcc
CLANG ?= clang
BPFTOOL ?= bpftool
V ?= 0

MULTIARCH := $(shell $(CC) -dumpmachine)
BUILD := build
VERSION := 0.1.0

WARN := -Wall -Wextra -Werror -Wno-unused-parameter
CFLAGS ?= -O2 -g
# What code built against the library's internals (tests, tools) includes.
LIB_INTERNAL_CFLAGS := -Iinclude -Iuser -Ibpf -I$(BUILD)
XCFLAGS := $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE $(LIB_INTERNAL_CFLAGS) -fPIC
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LIBS := -lbpf -lelf -lz -lpthread -lm

BPF_CFLAGS := -O2 -g -target bpf -mcpu=v3 -Wall -Werror -Wno-unused-function \
	-Iinclude -Ibpf -I/usr/include/$(MULTIARCH)

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_HDRS := $(wildcard bpf/lib/*.h) $(wildcard include/xroce/*.h include/contract/*.h)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.bpf.o,$(BPF_SRCS))
SKELS := $(patsubst bpf/%.bpf.c,$(BUILD)/%.skel.h,$(BPF_SRCS))

LIB_SRCS := $(wildcard user/*.c)
LIB_HDRS := $(wildcard user/*.h) $(wildcard include/xroce/*.h include/contract/*.h)
LIB_OBJS := $(patsubst user/%.c,$(BUILD)/obj/%.o,$(LIB_SRCS))
LIB_SAN_OBJS := $(patsubst user/%.c,$(BUILD)/san/%.o,$(LIB_SRCS))

LOADER_SRCS := $(wildcard loader/*.c)
LOADER_OBJS := $(patsubst loader/%.c,$(BUILD)/loader/%.o,$(LOADER_SRCS))

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
BPFT_SRCS := $(wildcard tests/bpf/bpf_*.c)
BPFT_BINS := $(patsubst tests/bpf/%.c,$(BUILD)/tests/%,$(BPFT_SRCS))
ITEST_SRCS := $(wildcard tests/integration/itest_*.c)
ITEST_BINS := $(patsubst tests/integration/%.c,$(BUILD)/tests/%,$(ITEST_SRCS))
FABRIC_SRCS := $(wildcard tests/fabric/*.c)
EXAMPLE_SRCS := $(wildcard examples/*.c)
EXAMPLE_BINS := $(patsubst examples/%.c,$(BUILD)/xroce-%,$(EXAMPLE_SRCS))

ifeq ($(V),0)
Q := @
msg = @printf '  %-8s %s\n' $(1) $(2);
else
Q :=
msg =
endif

.PHONY: all clean install deps test check unit bpftest integration demo bench lint vmtest
all: $(BUILD)/libxroce.a $(BUILD)/libxroce.so $(BUILD)/xroce $(BUILD)/xroce.pc \
	$(UNIT_BINS) $(BPFT_BINS) $(ITEST_BINS) $(EXAMPLE_BINS) \
	$(if $(FABRIC_SRCS),$(BUILD)/xrfabric)

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*) > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/%.o: user/%.c $(LIB_HDRS) | $(SKELS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)
	$(Q)$(CC) $(XCFLAGS) -c $< -o $@

$(BUILD)/san/%.o: user/%.c $(LIB_HDRS) | $(SKELS)
	@mkdir -p $(dir $@)
	$(call msg,CC-SAN,$@)
	$(Q)$(CC) $(XCFLAGS) $(SAN) -c $< -o $@

$(BUILD)/libxroce.a: $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/libxroce-san.a: $(LIB_SAN_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/libxroce.so: $(LIB_OBJS)
	$(call msg,LD,$@)
	$(Q)$(CC) -shared -Wl,-soname,libxroce.so.0 -o $@ $^ $(LIBS)

$(BUILD)/xroce.pc: xroce.pc.in
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' $< > $@

$(BUILD)/loader/%.o: loader/%.c $(LIB_HDRS) $(wildcard loader/*.h) $(SKELS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)
	$(Q)$(CC) $(XCFLAGS) -Iloader -DXROCE_VERSION='"$(VERSION)"' -c $< -o $@

$(BUILD)/xroce: $(LOADER_OBJS) $(BUILD)/libxroce.a
	$(call msg,LD,$@)
	$(Q)$(CC) -o $@ $(LOADER_OBJS) $(BUILD)/libxroce.a $(LIBS)

$(BUILD)/xroce-%: examples/%.c $(BUILD)/libxroce.a $(LIB_HDRS)
	$(call msg,LD,$@)
	$(Q)$(CC) $(XCFLAGS) -o $@ $< $(BUILD)/libxroce.a $(LIBS)

$(BUILD)/xrfabric: $(FABRIC_SRCS) $(wildcard tests/fabric/*.h) $(SKELS)
	$(call msg,LD,$@)
	$(Q)$(CC) $(XCFLAGS) -Itests/fabric -o $@ $(FABRIC_SRCS) $(LIBS)

$(BUILD)/tests/test_%: tests/unit/test_%.c $(BUILD)/libxroce-san.a $(BPF_HDRS) $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,TEST,$@)
	$(Q)$(CC) $(XCFLAGS) $(SAN) -Itests/unit -o $@ $< $(BUILD)/libxroce-san.a -lcmocka $(LIBS)

# tests/bpf/world.c: the world all three runners set up.
$(BUILD)/tests/bpf_%: tests/bpf/bpf_%.c tests/bpf/world.c $(wildcard tests/bpf/*.h tests/bpf/fixtures/*.h) \
		$(SKELS) $(BUILD)/libxroce-san.a
	@mkdir -p $(dir $@)
	$(call msg,TEST,$@)
	$(Q)$(CC) $(XCFLAGS) $(SAN) -Itests/bpf -o $@ $< tests/bpf/world.c $(BUILD)/libxroce-san.a \
		-lcmocka $(LIBS)

$(BUILD)/tests/itest_%: tests/integration/itest_%.c $(BUILD)/libxroce-san.a $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,TEST,$@)
	$(Q)$(CC) $(XCFLAGS) $(SAN) -o $@ $< $(BUILD)/libxroce-san.a $(LIBS)

# ---- tests ------------------------------------------------------------
include tests/fuzz/fuzz.mk tests/bench/bench.mk

unit: $(UNIT_BINS)
	$(Q)set -e; for t in $(UNIT_BINS); do echo "== $$t"; $$t; done
	$(Q)set -e; for t in tests/lib/xrtest/test_*.py; do echo "== $$t"; python3 $$t; done

bpftest: $(BPFT_BINS)
	$(Q)set -e; for t in $(BPFT_BINS); do echo "== $$t"; $$t; done

integration: all
	$(Q)bash tests/run-all.sh integration

lint:
	$(Q)bash tests/lint.sh

# Everything the README's test command runs.
test: all
	$(Q)bash tests/run-all.sh

check: test

demo: all
	$(Q)bash tests/demo.sh

bench: all
	$(Q)bash tests/bench/run.sh

# The tests inside a VM on Debian's 6.1 kernel (vmtest/run.sh --help).
vmtest: all
	$(Q)bash vmtest/run.sh

deps:
	$(Q)bash tests/deps.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/xroce \
		$(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig \
		$(DESTDIR)$(PREFIX)/lib/xroce
	install -m 644 $(BUILD)/libxroce.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(BUILD)/libxroce.so $(DESTDIR)$(PREFIX)/lib/libxroce.so.0
	ln -sf libxroce.so.0 $(DESTDIR)$(PREFIX)/lib/libxroce.so
	install -m 644 include/xroce/xroce.h $(DESTDIR)$(PREFIX)/include/xroce/
	install -m 644 $(BUILD)/xroce.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/
	install -m 755 $(BUILD)/xroce $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(BPF_OBJS) $(DESTDIR)$(PREFIX)/lib/xroce/

clean:
	rm -rf $(BUILD)

.SECONDARY: $(BPF_OBJS) $(SKELS)
