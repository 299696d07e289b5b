# tests/bench/bench.mk: the transmit-engine benchmark (`make txengine`;
# tests/bench/txengine.sh builds and runs it).  Included by the top
# Makefile, whose variables it uses.  Not part of the product, so not in
# `all`.
#
#   build/bench/txengine.bpf.o   its BPF programs
#   build/bench/txengine         the driver: no sanitizers, it measures
#                                (linked with libxroce.a for the library's
#                                AF_XDP socket, frame builder and checksums)

TXENGINE := $(BUILD)/bench/txengine

.PHONY: txengine
txengine: $(TXENGINE) $(TXENGINE).bpf.o

$(TXENGINE).bpf.o: tests/bench/txengine.bpf.c tests/bench/txengine.h $(BPF_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -Itests/bench -c $< -o $@

$(TXENGINE): tests/bench/txengine.c tests/bench/txengine.h $(BUILD)/libxroce.a $(LIB_HDRS)
	@mkdir -p $(dir $@)
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE $(LIB_INTERNAL_CFLAGS) \
		-Itests/bench -o $@ $< $(BUILD)/libxroce.a $(LIBS)
