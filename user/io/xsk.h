/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A minimal AF_XDP socket for transmitting from a caller-provided UMEM (in
 * libxroce: the domain's mmapped BPF array map).  No libxdp, no XDP
 * program, no XSKMAP entry: the socket only transmits.
 *
 * Frames are XR_XSK_FRAME_SIZE bytes (aligned chunk mode, no headroom); a
 * frame address is the byte offset of its data in the UMEM.  A descriptor
 * must stay inside one frame; a packet made of several descriptors
 * (multi-buffer, XDP_USE_SG) may take each piece from a different frame,
 * which is how a header frame is sent with its payload in place.
 *
 * Flow: xr_xsk_tx_push*() writes descriptors (no syscall), xr_xsk_tx_kick()
 * publishes them and wakes the kernel when it asks for it, and
 * xr_xsk_reap() returns the addresses of descriptors the kernel has
 * finished with, so their frames can be reused.  Pushes never take more
 * slots than the completion ring can hold, so the kernel never stalls on a
 * full completion ring.
 *
 * Zero copy: the UMEM then also feeds the receive queue the socket is bound
 * to (the NIC receives every packet of that queue into UMEM frames taken
 * from the fill ring, XDP_PASS traffic included).  The caller must give it
 * frames with xr_xsk_fill() right after creation; in copy mode the fill
 * ring is unused.  At most one socket can be bound to one (interface,
 * queue) with its own UMEM: other processes need other queues.
 *
 * Not thread safe: one thread per socket.
 */
#ifndef XR_USER_XSK_H
#define XR_USER_XSK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XR_XSK_FRAME_SIZE 4096u
/* Most descriptors one packet may use (the copy-mode kernel limit is
 * MAX_SKB_FRAGS, 17 by default). */
#define XR_XSK_MAX_SEGS 16

enum xr_xsk_mode {
	XR_XSK_MODE_AUTO = 0,     /* zero copy if the driver can, else copy */
	XR_XSK_MODE_COPY = 1,     /* copy mode only */
	XR_XSK_MODE_ZEROCOPY = 2, /* zero copy or fail */
};

struct xr_xsk_opts {
	uint32_t tx_size;    /* TX ring entries, power of 2; 0 = 2048 */
	uint32_t comp_size;  /* completion ring entries; 0 = tx_size */
	uint32_t fill_size;  /* fill ring entries; 0 = 64 (see zero copy) */
	uint32_t rx_size;    /* RX ring entries; 0 = no RX ring */
	enum xr_xsk_mode mode;
	bool no_sg;          /* do not ask for multi-buffer (XDP_USE_SG) */
	/* Copy mode: descriptors the kernel sends per sendto (kernel >= 6.17,
	 * XDP_MAX_TX_SKB_BUDGET; 32..tx_size); 0 = the kernel's 32.  Not
	 * available on older kernels: then ignored. */
	uint32_t tx_budget;
	/* Copy mode: socket send buffer in bytes (SO_SNDBUFFORCE, falling back
	 * to SO_SNDBUF); it bounds the bytes in flight as skbs; 0 = default. */
	int sndbuf;
};

struct xr_xsk_seg {
	uint64_t addr;       /* UMEM offset */
	uint32_t len;
};

struct xr_xsk_stats {
	uint64_t tx_pkts;       /* packets pushed */
	uint64_t tx_descs;      /* descriptors pushed (>= tx_pkts) */
	uint64_t tx_bytes;      /* bytes pushed */
	uint64_t completed;     /* descriptors reaped */
	uint64_t kicks;         /* sendto calls */
	uint64_t eagain;        /* ... answered EAGAIN (budget or backpressure) */
	uint64_t ebusy;         /* ... answered EBUSY: the driver dropped a frame
				 * (it is completed, but was not sent) */
	uint64_t enobufs;       /* ... answered ENOBUFS */
	uint64_t ring_full;     /* pushes refused for lack of slots */
	/* Read from the kernel (XDP_STATISTICS) by xr_xsk_get_stats: */
	uint64_t tx_invalid;    /* descriptors the kernel rejected */
	uint64_t tx_ring_empty; /* kernel found the TX ring empty */
};

struct xr_xsk;

/* Create a socket on (ifindex, queue) over umem (page aligned, umem_len a
 * non-zero multiple of XR_XSK_FRAME_SIZE).  opts may be NULL.  Returns 0 or
 * a negative errno (-ENODEV bad ifindex, -EINVAL bad area or queue,
 * -EBUSY queue taken (after waiting up to 250 ms, as a queue stays taken
 * for ~20 ms after its previous socket closed), -EPERM without
 * CAP_NET_RAW, ...). */
int xr_xsk_create(struct xr_xsk **out, int ifindex, int queue, void *umem,
		  size_t umem_len, const struct xr_xsk_opts *opts);
void xr_xsk_destroy(struct xr_xsk *xsk);

int xr_xsk_fd(const struct xr_xsk *xsk);
bool xr_xsk_zerocopy(const struct xr_xsk *xsk); /* else copy mode */
bool xr_xsk_sg(const struct xr_xsk *xsk);       /* multi-buffer TX usable */
/* Whether the kernel honoured opts->tx_budget. */
bool xr_xsk_tx_budget_set(const struct xr_xsk *xsk);

/* Descriptors that can be pushed now. */
uint32_t xr_xsk_tx_free_slots(struct xr_xsk *xsk);
/* Descriptors pushed whose completion has not been reaped yet. */
uint32_t xr_xsk_outstanding(const struct xr_xsk *xsk);
/* Descriptors published or pushed that the kernel has not taken yet. */
uint32_t xr_xsk_tx_queued(struct xr_xsk *xsk);

/* Queue a one-descriptor packet: len bytes at UMEM offset addr, within one
 * frame.  0, -ENOSPC (no slot: kick and reap first) or -EINVAL. */
int xr_xsk_tx_push(struct xr_xsk *xsk, uint64_t addr, uint32_t len);
/* Queue a packet of nsegs descriptors (2..XR_XSK_MAX_SEGS need
 * multi-buffer, else -EOPNOTSUPP); all or nothing. */
int xr_xsk_tx_push_sg(struct xr_xsk *xsk, const struct xr_xsk_seg *segs,
		      int nsegs);
/* Queue a header frame followed by a payload left where it is in the UMEM;
 * the payload is split at frame boundaries (so 2 or 3 descriptors for a
 * payload up to one frame).  Needs multi-buffer. */
int xr_xsk_tx_push_hdr_payload(struct xr_xsk *xsk, uint64_t hdr_addr,
			       uint32_t hdr_len, uint64_t pay_addr,
			       uint32_t pay_len);

/* Hand pushed descriptors to the kernel.  Calls sendto only when the ring
 * says the kernel needs a wakeup (always, in copy mode, where the send
 * happens inside the call), repeating while the kernel makes progress.
 * Returns 0 when the kernel took everything, -EAGAIN when some descriptors
 * are still queued (backpressure: reap completions, call again later),
 * -ENXIO when the kernel sends nothing from this queue (the queue id has
 * an RX queue but no TX queue, which bind does not catch), or another
 * negative errno (-ENETDOWN: interface down or gone). */
int xr_xsk_tx_kick(struct xr_xsk *xsk);

/* Take up to max completed descriptor addresses (their frames are free
 * again).  Returns how many. */
int xr_xsk_reap(struct xr_xsk *xsk, uint64_t *addrs, int max);

/* Give frames to the fill ring (zero copy receive buffers).  Returns how
 * many were posted. */
int xr_xsk_fill(struct xr_xsk *xsk, const uint64_t *addrs, int n);

/* Counters; also reads the kernel's (XDP_STATISTICS). */
int xr_xsk_get_stats(const struct xr_xsk *xsk, struct xr_xsk_stats *out);

#endif /* XR_USER_XSK_H */
