/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The fabric emulator's maps, one job: the layout shared by bpf/fabric.bpf.c
 * (the switch ports) and tests/fabric/xrfabric.c (the CLI that configures
 * them).  Not part of xroce: only the test bed uses it.
 *
 * A port is one (ifindex, direction) of a switch namespace: the XDP program
 * impairs frames arriving on the interface (ingress), the TC program frames
 * leaving it (egress), so a routed port can carry different impairments in
 * each direction.  Userspace writes the config (fab_ports); the programs own
 * the run-time state (fab_state) and the per-CPU counters (fab_stats).
 * Probabilities are parts per million (FAB_PPM = always).
 */
#ifndef XR_LIB_FABRIC_MAPS_H
#define XR_LIB_FABRIC_MAPS_H

#include <linux/types.h>
#include <linux/bpf.h> /* struct bpf_spin_lock */

#define FAB_MAP_PORTS "fab_ports"
#define FAB_MAP_STATE "fab_state"
#define FAB_MAP_STATS "fab_stats"
#define FAB_MAP_CPUS "fab_cpus" /* cpumap: the reordering slow lane */
#define FAB_MAX_PORTS 1024
#define FAB_PPM 1000000u

enum fab_dir {
	FAB_DIR_INGRESS = 0, /* fabric_xdp: frames received on ifindex */
	FAB_DIR_EGRESS = 1,  /* fabric_tc: packets sent out of ifindex */
};

enum fab_blackhole {
	FAB_BH_OFF = 0,
	FAB_BH_ALL = 1,   /* every UDP and TCP packet */
	FAB_BH_SPORT = 2, /* UDP packets with source port bh_port (one xroce path) */
	FAB_BH_DPORT = 3, /* UDP packets with destination port bh_port */
};

struct fab_key {
	__u32 ifindex;
	__u32 dir; /* enum fab_dir */
};

/* Written by userspace only.  Zero everywhere = a plain forwarding port. */
struct fab_port {
	__u32 out_ifindex;      /* ingress only: != 0 = wire mode, redirect here */
	__u32 loss_ppm;         /* independent random loss */
	__u32 ge_on;            /* Gilbert-Elliott burst loss enabled */
	__u32 ge_gb_ppm;        /* P(good -> bad) per packet */
	__u32 ge_bg_ppm;        /* P(bad -> good) per packet */
	__u32 ge_loss_good_ppm; /* loss probability in the good state */
	__u32 ge_loss_bad_ppm;  /* loss probability in the bad state */
	__u32 bh_mode;          /* enum fab_blackhole */
	__u32 bh_port;          /* UDP port for FAB_BH_SPORT / FAB_BH_DPORT */
	__u32 ecn_rate_mbps;    /* virtual queue drain rate; 0 = no queue */
	__u32 ecn_thresh_bytes; /* CE-mark ECT packets while the queue is above */
	__u32 ecn_sport;        /* != 0: CE-mark every ECT packet of this UDP sport */
	__u32 corrupt_ppm;      /* flip bits of one UDP payload byte */
	__u32 reorder_ppm;      /* wire mode: send down the slow lane (cpumap) */
};

/* Owned by the programs; one per port, shared by all CPUs. */
struct fab_state {
	struct bpf_spin_lock lock; /* guards vq_bits/vq_last_ns */
	__u32 ge_bad;              /* Gilbert-Elliott state: 1 = bad */
	__u64 vq_bits;             /* virtual queue backlog, in bits */
	__u64 vq_last_ns;          /* when the queue was last drained */
};

/* Per-CPU counters: userspace sums them. */
struct fab_stats {
	__u64 rx;         /* every frame seen by the port */
	__u64 fwd;        /* passed on (redirected, passed or slow lane) */
	__u64 drop_loss;  /* random loss */
	__u64 drop_ge;    /* Gilbert-Elliott loss */
	__u64 blackholed; /* blackhole */
	__u64 ce_marked;  /* ECT -> CE */
	__u64 corrupted;  /* payload byte flipped */
	__u64 reordered;  /* sent through the slow lane */
};

#define FAB_NR_COUNTERS (sizeof(struct fab_stats) / sizeof(__u64))

#endif /* XR_LIB_FABRIC_MAPS_H */
