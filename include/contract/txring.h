/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The contract between libxroce and the transmit path of the XDP program:
 * frames built by XDP from descriptors and sent by XDP_TX out of a
 * BPF_PROG_TEST_RUN with BPF_F_TEST_XDP_LIVE_FRAMES, instead of AF_XDP (the
 * "test-run" transmit engine).  Not public API.
 *
 * Each plane of a device that uses the engine owns a ring: an mmapable
 * array of XR_TXR_RING descriptors plus one control slot, reached by XDP
 * through the hash-of-maps xr_txq under (domain id, plane).  The library
 * writes descriptors in place and publishes them by advancing head; then it
 * test-runs the XDP program that is attached to the plane's interface
 * (attached natively, the kernel's XDP dispatcher already holds it: a test
 * run of any other program would wait for an RCU grace period on each
 * call) with repeat = the number of new descriptors and, as the input
 * frame, a trigger: EtherType XR_TXR_ETHERTYPE, the ring's key and its
 * 64-bit secret.  Each repetition takes the descriptor at tail, writes its
 * prebuilt headers (Ethernet .. xroce header, lengths and checksums already
 * covering the payload, which the library summed where it lies) over the
 * trigger, copies the payload pieces out of the domain's memory map and
 * returns XDP_TX.  The run is synchronous: when it returns, every
 * descriptor has been used and the memory it named has been read.
 *
 * A frame from the network with that EtherType is not a transmit request
 * unless it names an existing ring and carries its secret, which never
 * leaves the host (the trigger's bytes are overwritten by the headers
 * before a frame goes out); otherwise it is dropped and counted.
 *
 * Why: on veth (copy-mode AF_XDP) every AF_XDP frame becomes an skb, which
 * the receiving veth copies again into an XDP frame; frames built by XDP
 * skip both (tests/bench/txengine.sh measures the engines side by side).
 *
 * Compiles for BPF and userspace: <linux/types.h> types only.
 */
#ifndef XR_CONTRACT_TXRING_H
#define XR_CONTRACT_TXRING_H

#include <linux/types.h>

#define XR_MAP_TXQ "xr_txq"
#define XR_TXR_ETHERTYPE 0x88b5    /* IEEE 802 local experimental */
#define XR_TXR_MAGIC 0x78725458u   /* "xrTX" */
#define XR_TXR_RING 1024u          /* descriptors, power of two */
#define XR_TXR_CTL XR_TXR_RING     /* index of the control slot */
#define XR_TXR_HDR_MAX 160u        /* prebuilt header bytes, at most */
#define XR_TXR_SEGS 4u             /* payload pieces a descriptor names */
/* Largest frame: a test-run frame lives in one page with XDP's headroom
 * (256) and the skb_shared_info tail (320) reserved. */
#define XR_TXR_MAX_FRAME 3392u
#define XR_TXR_TRIGGER_LEN 64u     /* bytes of the trigger frame */

struct xr_txq_key {
	__u32 domain;
	__u32 plane;
};

struct xr_txr_seg {
	__u64 off;                 /* byte offset in the domain's memory */
	__u32 len;
	__u32 rsvd;
};

/* One frame to send. */
struct xr_txr_desc {
	__u16 hdr_len;             /* bytes of hdr[] used, 14..XR_TXR_HDR_MAX */
	__u16 nseg;                /* payload pieces, 0..XR_TXR_SEGS */
	__u32 plen;                /* payload bytes: the pieces' sum */
	struct xr_txr_seg seg[XR_TXR_SEGS];
	__u8 hdr[XR_TXR_HDR_MAX];
	/* Latency breakdowns (abi.h, xr_trace): with tr_on set, XDP records
	 * when it built this frame, for connection tr_conn's message tr_msg. */
	__u32 tr_on;
	__u32 tr_conn;
	__u32 tr_msg;
	__u32 tr_csn;
	__u8 pad[8];
};

/* The ring's last slot, XR_TXR_CTL.  Indices run freely; descriptor
 * slot = index % XR_TXR_RING. */
struct xr_txr_ctl {
	__u64 head;                /* next descriptor the library fills */
	__u64 tail;                /* next descriptor XDP takes */
	__u64 secret;              /* what a trigger must carry */
	__u64 sent;                /* frames handed to XDP_TX */
	__u64 empty;               /* repetitions that found the ring empty */
	__u64 bad;                 /* descriptors refused (sizes, offsets) */
	__u8 pad[208];
};

/* The input frame of a test run (network order where it matters). */
struct xr_txr_trigger {
	__u8 dst[6], src[6];
	__be16 ethertype;          /* XR_TXR_ETHERTYPE */
	__u32 magic;               /* XR_TXR_MAGIC */
	__u32 domain;
	__u32 plane;
	__u64 secret;
} __attribute__((packed));

_Static_assert(sizeof(struct xr_txr_desc) == 256, "descriptor size");
_Static_assert(sizeof(struct xr_txr_ctl) == sizeof(struct xr_txr_desc),
	       "the control slot is a ring slot");
_Static_assert(sizeof(struct xr_txr_trigger) <= XR_TXR_TRIGGER_LEN, "trigger");
_Static_assert(__builtin_offsetof(struct xr_txr_trigger, secret) == 26, "trigger");

#endif /* XR_CONTRACT_TXRING_H */
