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
#   user/ibverbs/*.c   -> build/lib/libibverbs.so.1 (+ libmlx5/libefa stand-ins):
#                         unmodified ibverbs programs on xroce (`xroce run`)
#   tests/fuzz/        -> build/fuzz/fuzz_*     (`make fuzz`, tests/fuzz/fuzz.mk)
#   tests/bench/       -> build/bench/txengine  (`make txengine`, tests/bench/bench.mk)

# Where `make install` puts things (DESTDIR stages them).
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
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
#   io      AF_XDP, XDP-built frames, the receive-recall program (its
#           skeleton from build/), netlink routes, frame templates
#   engine  the transport: devices, QPs, progress, control plane
#   api     the public xroce_* calls (include/xroce/xroce.h)
LAYERS := util algo io engine api
LAYER_INC_util := -Iuser/util
LAYER_INC_algo := -Iuser/algo
LAYER_INC_io := -Iuser/io -Iuser/algo -I$(BUILD)
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
LIBS := -lbpf -lelf -lz -lsodium -lpthread -lm

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
# Where the libfabric provider goes: LIBDIR/libfabric.  That is where
# Debian's libfabric looks for DL providers when LIBDIR is its own
# (PREFIX=/usr LIBDIR=/usr/lib/$(MULTIARCH)); elsewhere name the directory
# in FI_PROVIDER_PATH.
FI_PROVIDER_DIR ?= $(LIBDIR)/libfabric

LOADER_SRCS := $(wildcard loader/*.c)
LOADER_OBJS := $(patsubst loader/%.c,$(BUILD)/loader/%.o,$(LOADER_SRCS))

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
BPFT_SRCS := $(wildcard tests/bpf/bpf_*.c)
BPFT_BINS := $(patsubst tests/bpf/%.c,$(BUILD)/tests/%,$(BPFT_SRCS))
ITEST_SRCS := $(filter-out tests/integration/itest_ibv_%,$(wildcard tests/integration/itest_*.c))
ITEST_BINS := $(patsubst tests/integration/%.c,$(BUILD)/tests/%,$(ITEST_SRCS))
# ibverbs programs of our own: <infiniband/verbs.h> and our libibverbs.so.1
IBV_TEST_SRCS := $(wildcard tests/integration/itest_ibv_*.c)
IBV_TEST_BINS := $(patsubst tests/integration/%.c,$(BUILD)/tests/%,$(IBV_TEST_SRCS))
FABRIC_SRCS := $(wildcard tests/fabric/*.c)
# libibverbs on xroce: a compatibility layer above the public API (it sees
# include/xroce/xroce.h only), with libxroce's objects linked in, so the
# library is one file on LD_LIBRARY_PATH and libxroce's symbols stay local
# (its version script exports ibverbs' names only).  Debian's
# libibverbs-dev gives <infiniband/verbs.h>: structure layouts and inline
# verbs are the ones applications were compiled with.
IBV_SRCS := $(wildcard user/ibverbs/*.c)
IBV_OBJS := $(patsubst user/ibverbs/%.c,$(BUILD)/ibv/%.o,$(IBV_SRCS))
IBV_LIBDIR := $(BUILD)/lib
IBV_LIBS := $(IBV_LIBDIR)/libibverbs.so.1 $(IBV_LIBDIR)/libmlx5.so.1 \
	$(IBV_LIBDIR)/libefa.so.1
IBV_CFLAGS := $(BASE_CFLAGS) -fvisibility=hidden

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

.PHONY: all clean install uninstall deps test check unit bpftest integration demo bench lint vmtest
all: $(BUILD)/libxroce.a $(BUILD)/libxroce.so $(BUILD)/xroce $(BUILD)/xroce.pc \
	$(BUILD)/lib/libxroce-fi.so $(if $(HAVE_MPICC),$(BUILD)/tests/xrmpi) \
	$(UNIT_BINS) $(BPFT_BINS) $(ITEST_BINS) $(EXAMPLE_BINS) $(OFIT_BINS) \
	$(if $(FABRIC_SRCS),$(BUILD)/xrfabric) $(IBV_LIBS) $(IBV_TEST_BINS)

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

# The io layer embeds the receive-recall program's skeleton.
$(BUILD)/obj/io/rqrecall.o $(BUILD)/san/io/rqrecall.o: $(BUILD)/rqrecall.skel.h

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

$(BUILD)/ibv/%.o: user/ibverbs/%.c user/ibverbs/xv.h include/xroce/xroce.h
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)
	$(Q)$(CC) $(IBV_CFLAGS) -c $< -o $@

$(IBV_LIBDIR)/libibverbs.so.1: $(IBV_OBJS) $(LIB_OBJS) user/ibverbs/libibverbs.map
	@mkdir -p $(dir $@)
	$(call msg,LD,$@)
	$(Q)$(CC) -shared -Wl,-soname,libibverbs.so.1 -Wl,-z,defs -Wl,-z,now \
		-Wl,--version-script=user/ibverbs/libibverbs.map -o $@ \
		$(IBV_OBJS) $(LIB_OBJS) $(LIBS)

$(IBV_LIBDIR)/lib%.so.1: user/ibverbs/standin/%.c user/ibverbs/standin/%.map
	@mkdir -p $(dir $@)
	$(call msg,LD,$@)
	$(Q)$(CC) $(IBV_CFLAGS) -shared -Wl,-soname,lib$*.so.1 -Wl,-z,defs \
		-Wl,--version-script=user/ibverbs/standin/$*.map -o $@ $<

$(BUILD)/obj/ofi/%.o: user/ofi/%.c $(OFI_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)
	$(Q)$(CC) $(BASE_CFLAGS) $(LAYER_INC_ofi) -c $< -o $@

# The provider links libxroce.so by its soname (shared, not the archive:
# it can then only use what libxroce exports, one libxroce serves a
# process that also uses xroce directly, and a newer libxroce reaches it
# without a rebuild).  RUNPATH: next to it (build/lib), then the directory above it
# (installed in LIBDIR/libfabric, libxroce.so.0 is in LIBDIR).
$(BUILD)/lib/libxroce.so.0: $(BUILD)/libxroce.so
	@mkdir -p $(dir $@)
	$(Q)ln -sf ../libxroce.so $@

$(BUILD)/lib/libxroce-fi.so: $(OFI_OBJS) $(OFI_MAP) $(BUILD)/lib/libxroce.so.0
	$(call msg,LD,$@)
	$(Q)$(CC) -shared -Wl,--version-script=$(OFI_MAP) -Wl,-z,defs \
		-Wl,--enable-new-dtags -Wl,-rpath,'$$ORIGIN:$$ORIGIN/..' \
		-o $@ $(OFI_OBJS) -L$(BUILD)/lib -l:libxroce.so.0 -lfabric -lpthread

# xroce.pc for the layout of PREFIX, LIBDIR and INCLUDEDIR as they are now
# (paths under PREFIX are written relative to ${prefix}).
pc_rel = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))
pc_subst = sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(call pc_rel,$(LIBDIR))|' \
	-e 's|@INCLUDEDIR@|$(call pc_rel,$(INCLUDEDIR))|' -e 's|@VERSION@|$(VERSION)|'

$(BUILD)/xroce.pc: xroce.pc.in
	$(Q)$(pc_subst) $< > $@

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
	$(Q)$(CC) $(BASE_CFLAGS) $(SAN) -o $@ $< $(BUILD)/libxroce-san.a $(LIBS)

$(BUILD)/tests/itest_ibv_%: tests/integration/itest_ibv_%.c $(IBV_LIBDIR)/libibverbs.so.1
	@mkdir -p $(dir $@)
	$(call msg,TEST,$@)
	$(Q)$(CC) $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -o $@ $< \
		-L$(IBV_LIBDIR) -l:libibverbs.so.1 -Wl,-rpath,'$$ORIGIN/../lib' -lpthread

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
include tests/fuzz/fuzz.mk tests/bench/bench.mk

unit: $(UNIT_BINS)
	$(Q)set -e; for t in $(UNIT_BINS); do echo "== $$t"; $$t; done
	$(Q)set -e; for t in tests/lib/xrtest/test_*.py; do echo "== $$t"; python3 $$t; done

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

# ---- install ----------------------------------------------------------
# What a user of the library and the command needs, nothing of the tests:
# the library (shared and static), its one public header, xroce.pc for the
# PREFIX given now (not the one of the build), the command, the XDP object
# (for ip link or xdp-loader), man pages and bash completion, and the
# libibverbs.so.1 that `xroce run` puts first (with its provider stand-ins),
# the libfabric provider with its header of extensions.
# tests/integration/test_install.sh checks the list.
INSTALL ?= install
MAN_PAGES := docs/man/xroce.8 docs/man/libxroce.3
BASH_COMPLETION := loader/xroce-completion.bash

install: $(BUILD)/libxroce.a $(BUILD)/libxroce.so $(BUILD)/xroce $(BUILD)/bpf/xroce.bpf.o \
		$(IBV_LIBS) $(BUILD)/lib/libxroce-fi.so
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(FI_PROVIDER_DIR) \
		$(DESTDIR)$(LIBDIR)/xroce $(DESTDIR)$(INCLUDEDIR)/xroce \
		$(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(BASHCOMPDIR)
	$(INSTALL) -m 755 $(BUILD)/libxroce.so $(DESTDIR)$(LIBDIR)/libxroce.so.0
	ln -sf libxroce.so.0 $(DESTDIR)$(LIBDIR)/libxroce.so
	$(INSTALL) -m 644 $(BUILD)/libxroce.a $(DESTDIR)$(LIBDIR)/
	$(INSTALL) -m 644 include/xroce/xroce.h include/xroce/fi_xroce.h \
		$(DESTDIR)$(INCLUDEDIR)/xroce/
	$(INSTALL) -m 755 $(BUILD)/lib/libxroce-fi.so $(DESTDIR)$(FI_PROVIDER_DIR)/
	$(pc_subst) xroce.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/xroce.pc
	$(INSTALL) -m 755 $(BUILD)/xroce $(DESTDIR)$(BINDIR)/
	$(INSTALL) -m 644 $(BUILD)/bpf/xroce.bpf.o $(DESTDIR)$(LIBDIR)/xroce/
	$(INSTALL) -m 644 docs/man/libxroce.3 $(DESTDIR)$(MANDIR)/man3/
	$(INSTALL) -m 644 docs/man/xroce.8 $(DESTDIR)$(MANDIR)/man8/
	$(INSTALL) -m 644 $(BASH_COMPLETION) $(DESTDIR)$(BASHCOMPDIR)/xroce
	# not on the system's library path: `xroce run` puts it first for CMD
	$(INSTALL) -d $(DESTDIR)$(LIBDIR)/xroce/verbs
	$(INSTALL) -m 755 $(IBV_LIBS) $(DESTDIR)$(LIBDIR)/xroce/verbs/

# Removes what install put there, and the directories only xroce uses.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/xroce $(DESTDIR)$(LIBDIR)/libxroce.so \
		$(DESTDIR)$(LIBDIR)/libxroce.so.0 $(DESTDIR)$(LIBDIR)/libxroce.a \
		$(DESTDIR)$(LIBDIR)/pkgconfig/xroce.pc \
		$(DESTDIR)$(LIBDIR)/xroce/xroce.bpf.o \
		$(DESTDIR)$(INCLUDEDIR)/xroce/xroce.h \
		$(DESTDIR)$(INCLUDEDIR)/xroce/fi_xroce.h \
		$(DESTDIR)$(FI_PROVIDER_DIR)/libxroce-fi.so \
		$(DESTDIR)$(MANDIR)/man3/libxroce.3 $(DESTDIR)$(MANDIR)/man8/xroce.8 \
		$(DESTDIR)$(BASHCOMPDIR)/xroce \
		$(addprefix $(DESTDIR)$(LIBDIR)/xroce/verbs/,$(notdir $(IBV_LIBS)))
	for d in $(DESTDIR)$(LIBDIR)/xroce/verbs $(DESTDIR)$(LIBDIR)/xroce $(DESTDIR)$(INCLUDEDIR)/xroce \
		$(DESTDIR)$(FI_PROVIDER_DIR); do \
		[ ! -d $$d ] || rmdir --ignore-fail-on-non-empty $$d; done

clean:
	rm -rf $(BUILD)

.SECONDARY: $(BPF_OBJS) $(SKELS)
