# xroce build.  `make` builds everything; `make test` runs the whole suite
# (root needed for the BPF and netns parts); `make deps` installs the Debian
# packages the build and the tests need.
#
#   bpf/*.bpf.c        -> build/bpf/*.bpf.o + build/*.skel.h (bpftool)
#   user/<layer>/*.c   -> build/libxroce.a, build/libxroce.so, xroce.pc
#   loader/*.c         -> build/xroce          (the command)
#   tests/unit/test_*.c-> build/tests/test_*   (cmocka, ASan + UBSan)
#   tests/bpf/*.c      -> build/tests/bpf_*    (bpf_prog_test_run tables)
#   tests/fabric/*.c   -> build/xrfabric       (fabric emulator control)

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
BASE_CFLAGS := $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -Iinclude -fPIC

# The library's layers, bottom up.  A layer sees only its own folder and
# the folders of the layers it is built on, so an include that reaches
# upwards does not compile (tests/lint/layers.sh checks the rest).
#   util    shared with the xroce command: finding maps, counter names
#   algo    pure algorithms, clock injected: cc, txpath, rtt, heap, csum
#   io      AF_XDP, XDP-built frames, netlink routes, frame templates
#   engine  the transport: devices, QPs, progress, control plane
#   api     the public xroce_* calls (include/xroce/xroce.h)
LAYERS := util algo io engine api
LAYER_INC_util := -Iuser/util
LAYER_INC_algo := -Iuser/algo
LAYER_INC_io := -Iuser/io -Iuser/algo
LAYER_INC_engine := -Iuser/engine -Iuser/io -Iuser/algo -Iuser/util
LAYER_INC_api := -Iuser/engine
# The libfabric provider (build/lib/libxroce-fi.so) is a layer above the
# public API: it sees include/ (only xroce/xroce.h) and its own folder,
# and links libxroce.so, which exports nothing else.
LAYER_INC_ofi := -Iuser/ofi
# Tests and fuzzers see every layer.
LIB_INTERNAL_CFLAGS := -Iinclude $(foreach l,$(LAYERS),-Iuser/$(l)) -Ibpf -I$(BUILD)
XCFLAGS := $(BASE_CFLAGS) $(LIB_INTERNAL_CFLAGS)
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LIBS := -lbpf -lelf -lz -lpthread -lm

BPF_CFLAGS := -O2 -g -target bpf -mcpu=v3 -Wall -Werror -Wno-unused-function \
	-Iinclude -Ibpf -I/usr/include/$(MULTIARCH)

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_HDRS := $(wildcard bpf/lib/*.h) $(wildcard include/xroce/*.h include/contract/*.h)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.bpf.o,$(BPF_SRCS))
SKELS := $(patsubst bpf/%.bpf.c,$(BUILD)/%.skel.h,$(BPF_SRCS))

LIB_SRCS := $(foreach l,$(LAYERS),$(wildcard user/$(l)/*.c))
LIB_HDRS := $(wildcard user/*/*.h) $(wildcard include/xroce/*.h include/contract/*.h)
LIB_OBJS := $(patsubst user/%.c,$(BUILD)/obj/%.o,$(LIB_SRCS))
LIB_SAN_OBJS := $(patsubst user/%.c,$(BUILD)/san/%.o,$(LIB_SRCS))
LIB_MAP := user/libxroce.map

OFI_SRCS := $(wildcard user/ofi/*.c)
OFI_OBJS := $(patsubst user/%.c,$(BUILD)/obj/%.o,$(OFI_SRCS))
OFI_HDRS := $(wildcard user/ofi/*.h) include/xroce/xroce.h include/xroce/fi_xroce.h
OFI_MAP := user/ofi/libxroce-fi.map
# Where libfabric looks for DL providers when FI_PROVIDER_PATH is unset.
FI_PROVIDER_DIR ?= $(shell pkg-config --variable=libdir libfabric 2>/dev/null || echo $(PREFIX)/lib)/libfabric

LOADER_SRCS := $(wildcard loader/*.c)
LOADER_OBJS := $(patsubst loader/%.c,$(BUILD)/loader/%.o,$(LOADER_SRCS))

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
BPFT_SRCS := $(wildcard tests/bpf/bpf_*.c)
BPFT_BINS := $(patsubst tests/bpf/%.c,$(BUILD)/tests/%,$(BPFT_SRCS))
ITEST_SRCS := $(wildcard tests/integration/itest_*.c)
ITEST_BINS := $(patsubst tests/integration/%.c,$(BUILD)/tests/%,$(ITEST_SRCS))
FABRIC_SRCS := $(wildcard tests/fabric/*.c)
OFIT_SRCS := $(wildcard tests/ofi/ofi_*.c)
OFIT_BINS := $(patsubst tests/ofi/%.c,$(BUILD)/tests/%,$(OFIT_SRCS))
MPICC ?= mpicc
HAVE_MPICC := $(shell command -v $(MPICC) 2>/dev/null)
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
	$(BUILD)/lib/libxroce-fi.so $(if $(HAVE_MPICC),$(BUILD)/tests/xrmpi) \
	$(UNIT_BINS) $(BPFT_BINS) $(ITEST_BINS) $(EXAMPLE_BINS) $(OFIT_BINS) \
	$(if $(FABRIC_SRCS),$(BUILD)/xrfabric)

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*) > $@.tmp && mv $@.tmp $@

# $(call layer_of,build/obj/engine/qp.o) = engine
layer_of = $(word 3,$(subst /, ,$(1)))

$(BUILD)/obj/%.o: user/%.c $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)
	$(Q)$(CC) $(BASE_CFLAGS) $(LAYER_INC_$(call layer_of,$@)) -c $< -o $@

$(BUILD)/san/%.o: user/%.c $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC-SAN,$@)
	$(Q)$(CC) $(BASE_CFLAGS) $(LAYER_INC_$(call layer_of,$@)) $(SAN) -c $< -o $@

$(BUILD)/libxroce.a: $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/libxroce-san.a: $(LIB_SAN_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

# Only the public API is exported (the version script); the command and the
# tests link the archive, which keeps the internal symbols they use.
$(BUILD)/libxroce.so: $(LIB_OBJS) $(LIB_MAP)
	$(call msg,LD,$@)
	$(Q)$(CC) -shared -Wl,-soname,libxroce.so.0 -Wl,--version-script=$(LIB_MAP) \
		-o $@ $(LIB_OBJS) $(LIBS)

$(BUILD)/obj/ofi/%.o: user/ofi/%.c $(OFI_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)
	$(Q)$(CC) $(BASE_CFLAGS) $(LAYER_INC_ofi) -c $< -o $@

# The provider links libxroce.so by its soname (shared, not the archive:
# it can then only use what libxroce exports, one libxroce serves a
# process that also uses xroce directly, and a newer libxroce reaches it
# without a rebuild).  RUNPATH: next to it in build/lib, then PREFIX/lib.
$(BUILD)/lib/libxroce.so.0: $(BUILD)/libxroce.so
	@mkdir -p $(dir $@)
	$(Q)ln -sf ../libxroce.so $@

$(BUILD)/lib/libxroce-fi.so: $(OFI_OBJS) $(OFI_MAP) $(BUILD)/lib/libxroce.so.0
	$(call msg,LD,$@)
	$(Q)$(CC) -shared -Wl,--version-script=$(OFI_MAP) -Wl,-z,defs \
		-Wl,--enable-new-dtags -Wl,-rpath,'$$ORIGIN:$(PREFIX)/lib' \
		-o $@ $(OFI_OBJS) -L$(BUILD)/lib -l:libxroce.so.0 -lfabric -lpthread

$(BUILD)/xroce.pc: xroce.pc.in
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' $< > $@

$(BUILD)/loader/%.o: loader/%.c $(LIB_HDRS) $(wildcard loader/*.h) $(SKELS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)
	$(Q)$(CC) $(BASE_CFLAGS) -Iuser/util -I$(BUILD) -Iloader -DXROCE_VERSION='"$(VERSION)"' -c $< -o $@

$(BUILD)/xroce: $(LOADER_OBJS) $(BUILD)/libxroce.a
	$(call msg,LD,$@)
	$(Q)$(CC) -o $@ $(LOADER_OBJS) $(BUILD)/libxroce.a $(LIBS)

$(BUILD)/xroce-%: examples/%.c $(BUILD)/libxroce.a $(LIB_HDRS)
	$(call msg,LD,$@)
	$(Q)$(CC) $(BASE_CFLAGS) -o $@ $< $(BUILD)/libxroce.a $(LIBS)

$(BUILD)/xrfabric: $(FABRIC_SRCS) $(wildcard tests/fabric/*.h) $(SKELS)
	$(call msg,LD,$@)
	$(Q)$(CC) $(BASE_CFLAGS) -Ibpf -I$(BUILD) -Itests/fabric -o $@ $(FABRIC_SRCS) $(LIBS)

$(BUILD)/tests/test_%: tests/unit/test_%.c $(BUILD)/libxroce-san.a $(BPF_HDRS) $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,TEST,$@)
	$(Q)$(CC) $(XCFLAGS) $(SAN) -Itests/unit -o $@ $< $(BUILD)/libxroce-san.a -lcmocka $(LIBS)

$(BUILD)/tests/bpf_%: tests/bpf/bpf_%.c $(wildcard tests/bpf/*.h) $(SKELS) $(BUILD)/libxroce-san.a
	@mkdir -p $(dir $@)
	$(call msg,TEST,$@)
	$(Q)$(CC) $(XCFLAGS) $(SAN) -Itests/bpf -o $@ $< $(BUILD)/libxroce-san.a -lcmocka $(LIBS)

$(BUILD)/tests/itest_%: tests/integration/itest_%.c $(BUILD)/libxroce-san.a $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,TEST,$@)
	$(Q)$(CC) $(BASE_CFLAGS) $(SAN) -o $@ $< $(BUILD)/libxroce-san.a $(LIBS)

# libfabric applications testing the provider (they load it like any
# other: FI_PROVIDER_PATH).
$(BUILD)/tests/ofi_%: tests/ofi/ofi_%.c tests/ofi/ofi_common.h include/xroce/fi_xroce.h
	@mkdir -p $(dir $@)
	$(call msg,TEST,$@)
	$(Q)$(CC) $(BASE_CFLAGS) -Itests/ofi -o $@ $< -lfabric

# The MPI job of tests/mpi (Open MPI's mpicc, when installed).
$(BUILD)/tests/xrmpi: tests/mpi/xrmpi.c
	@mkdir -p $(dir $@)
	$(call msg,MPICC,$@)
	$(Q)$(MPICC) -O2 -g $(WARN) -std=gnu11 -o $@ $<

# ---- tests ------------------------------------------------------------
unit: $(UNIT_BINS)
	$(Q)set -e; for t in $(UNIT_BINS); do echo "== $$t"; $$t; done

bpftest: $(BPFT_BINS)
	$(Q)set -e; for t in $(BPFT_BINS); do echo "== $$t"; $$t; done

integration: all
	$(Q)bash tests/run-all.sh integration

lint:
	$(Q)bash tests/lint/static.sh && bash tests/lint/layers.sh

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
	install -m 644 include/xroce/xroce.h include/xroce/fi_xroce.h \
		$(DESTDIR)$(PREFIX)/include/xroce/
	install -m 644 $(BUILD)/xroce.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/
	install -m 755 $(BUILD)/xroce $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(BPF_OBJS) $(DESTDIR)$(PREFIX)/lib/xroce/
	install -d $(DESTDIR)$(FI_PROVIDER_DIR)
	install -m 755 $(BUILD)/lib/libxroce-fi.so $(DESTDIR)$(FI_PROVIDER_DIR)/

clean:
	rm -rf $(BUILD)

.SECONDARY: $(BPF_OBJS) $(SKELS)
