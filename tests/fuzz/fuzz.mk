# tests/fuzz/fuzz.mk: the libFuzzer harnesses of libxroce's input parsers
# (`make fuzz`; tests/fuzz/run.sh builds and runs them).  Included by the
# top Makefile, whose variables it uses.  Not in `all`: they need clang
# and take a while.
#
#   build/fuzz/fuzz_ctrl     control messages (fuzz_ctrl.c)
#   build/fuzz/fuzz_events   XDP event records: ACK/NAK/RECV/READ/PROBE
#   build/fuzz/fuzz_bind     BIND records and xroce_qp_bind (fuzz_bind.c)
#
# The library's sources are compiled once more, by clang with coverage for
# the fuzzer (libxroce-san.a is gcc's and has none), all but xsk.c, whose
# AF_XDP socket tests/fuzz/xsk_loop.c replaces; the operating system around
# the library is simulated through -Wl,--wrap (tests/fuzz/sim.h).  Objects
# mirror their source's path under build/fuzz/obj/, so the rule holds
# wherever LIB_SRCS puts the library's files.
#   make fuzz CLANG=clang-19      another compiler

FUZZ_DIR := $(BUILD)/fuzz
FUZZ_OBJ := $(FUZZ_DIR)/obj
FUZZ_BINS := $(FUZZ_DIR)/fuzz_ctrl $(FUZZ_DIR)/fuzz_events $(FUZZ_DIR)/fuzz_bind
FUZZ_SAN := address,undefined
FUZZ_CFLAGS := -g -O1 -std=gnu11 -D_GNU_SOURCE $(WARN) $(LIB_INTERNAL_CFLAGS) \
	-Itests/fuzz -fno-omit-frame-pointer -fno-sanitize-recover=all
# Functions of the library and of libbpf/libc the simulation replaces.
FUZZ_WRAPS := sendmsg xr_now_ns xr_random64 xr_nl_resolve ring_buffer__new \
	ring_buffer__consume ring_buffer__free recvfrom sendto poll
FUZZ_LIB_OBJS := $(patsubst %.c,$(FUZZ_OBJ)/%.o,$(filter-out %/xsk.c,$(LIB_SRCS)))
# The simulation and harness every fuzzer links: tests/fuzz/*.c but the
# fuzzers' own files (fuzz_*.c).
FUZZ_COMMON_OBJS := $(patsubst %.c,$(FUZZ_OBJ)/%.o,\
	$(filter-out tests/fuzz/fuzz_%.c,$(wildcard tests/fuzz/*.c)))
fuzz_comma := ,

.PHONY: fuzz
fuzz: $(FUZZ_BINS)

$(FUZZ_OBJ)/%.o: %.c $(LIB_HDRS) $(BPF_HDRS) $(wildcard tests/fuzz/*.h) | $(SKELS)
	@mkdir -p $(dir $@)
	$(call msg,CC-FUZZ,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,$(FUZZ_SAN) -c $< -o $@

$(FUZZ_BINS): $(FUZZ_DIR)/%: $(FUZZ_OBJ)/tests/fuzz/%.o $(FUZZ_COMMON_OBJS) $(FUZZ_LIB_OBJS)
	$(call msg,LD-FUZZ,$@)
	$(Q)$(CLANG) -fsanitize=fuzzer,$(FUZZ_SAN) -o $@ $^ \
		$(addprefix -Wl$(fuzz_comma)--wrap=,$(FUZZ_WRAPS)) $(LIBS)
