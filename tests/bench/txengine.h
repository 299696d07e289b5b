/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Transmit-engine benchmark: the layouts shared by txengine.bpf.c (the
 * programs) and txengine.c (the driver).  Benchmark code, not part of
 * libxroce.
 *
 * The BPF transmit engine under test ("build"): userspace writes
 * descriptors into txe_ring, an mmapped BPF array used as a ring, and
 * publishes them by advancing txe_ctl.head; one BPF_PROG_TEST_RUN with
 * BPF_F_TEST_XDP_LIVE_FRAMES and repeat = number of descriptors then runs
 * txe_build once per descriptor: it takes the descriptor at txe_ctl.tail,
 * writes Ethernet/IPv4/UDP from a template and the xroce header from the
 * descriptor, copies the payload out of the memory map txe_mem (4 KiB
 * pages, mmapped by userspace, also the AF_XDP UMEM), computes both
 * checksums and transmits the frame with XDP_TX (or bpf_redirect).
 *
 * Compiles for BPF and userspace: <linux/types.h> types only.
 */
#ifndef XR_BENCH_TXENGINE_H
#define XR_BENCH_TXENGINE_H

#include <linux/types.h>
#include "contract/wire.h"

/* Eth + IPv4 + UDP, then the 64-byte xroce data header. */
#define TXE_L3_OFF 14
#define TXE_L4_OFF 34
#define TXE_TMPL_LEN 42
#define TXE_HDRS_LEN (TXE_TMPL_LEN + 64)
/* Largest payload a descriptor may carry: the frame must fit a veth peer's
 * MTU (1500) + Ethernet header. */
#define TXE_MAX_PAYLOAD (1514 - TXE_HDRS_LEN)

#define TXE_PAGE_SHIFT 12
#define TXE_PAGE_SIZE (1u << TXE_PAGE_SHIFT)
/* Memory map: TX frames for the AF_XDP variants, then the application
 * area the payloads come from. */
#define TXE_TX_FRAMES 2048u
#define TXE_APP_PAGES 64u
#define TXE_MEM_PAGES (TXE_TX_FRAMES + TXE_APP_PAGES)

#define TXE_RING_SIZE 4096u /* descriptors, power of two */
#define TXE_MAX_TMPL 16     /* templates (paths) */

/* One frame to build.  80 bytes: userspace writes it in place in the
 * mmapped ring, so posting a packet costs no syscall. */
struct txe_desc {
	__u64 mem_off;            /* payload: byte offset in txe_mem */
	__u32 len;                /* payload bytes, <= TXE_MAX_PAYLOAD */
	__u16 tmpl;               /* template (path) index */
	__u16 rsvd;
	struct xr_data_hdr hdr;   /* xroce header, network order, ready */
};
_Static_assert(sizeof(struct txe_desc) == 80, "descriptor size");

/* Ring indices and the engine's counters (txe_ctl[0], mmapped).  Indices
 * run freely; slot = index % TXE_RING_SIZE.  The test run is synchronous,
 * so the thread that calls it sees tail == head when it returns. */
struct txe_ctl {
	__u64 head;     /* next slot userspace fills (producer) */
	__u64 tail;     /* next slot BPF takes (consumer) */
	__u64 empty;    /* program runs that found the ring empty */
	__u64 bad;      /* descriptors refused (length, offset, template) */
};

/* Ethernet + IPv4 + UDP of one path: addresses, ports, TTL, DF, ECN.
 * Lengths and checksums are filled in per frame. */
struct txe_tmpl {
	__u8 hdr[TXE_TMPL_LEN];
	__u8 pad[6];
};

/* txe_cfg[0]: how txe_fixed and txe_build send. */
#define TXE_ACT_TX 0        /* XDP_TX */
#define TXE_ACT_REDIRECT 1  /* bpf_redirect(ifindex) */
struct txe_cfg {
	__u32 action;
	__u32 ifindex;
};

/* txe_rxcfg[0]: what the receiver (txe_rx, on the veth peer) does. */
struct txe_rxcfg {
	__u32 pass;          /* 1: XDP_PASS (capture), 0: XDP_DROP */
	__u32 sample_mask;   /* verify checksums when (count & mask) == 0 */
};

/* Receiver counters (per-CPU, summed by userspace). */
struct txe_rxst {
	__u64 pkts;
	__u64 bytes;
	__u64 checked;   /* frames whose checksums were verified */
	__u64 bad_ip;    /* ... with a wrong IPv4 header checksum */
	__u64 bad_udp;   /* ... with a wrong UDP checksum */
	__u64 other;     /* sampled frames that were not xroce/IPv4/UDP */
};

#endif /* XR_BENCH_TXENGINE_H */
