/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The test-run transmit engine of one plane, one job: a ring of transmit
 * descriptors shared with the XDP program attached to the plane's
 * interface, and the BPF_PROG_TEST_RUN (BPF_F_TEST_XDP_LIVE_FRAMES) that
 * turns them into frames sent with XDP_TX.  The contract with XDP is
 * include/contract/txring.h.  No policy: the caller fills descriptors and
 * decides when to flush.
 */
#ifndef XR_IO_XDPTX_H
#define XR_IO_XDPTX_H

#include <stddef.h>
#include <stdint.h>

#include "contract/txring.h"

struct xr_xdptx {
	int prog_fd;                /* the XDP program attached to the plane */
	int ring_fd;
	int txq_fd;                 /* xr_txq (not owned) */
	int ifindex;
	struct xr_txq_key key;
	struct xr_txr_desc *ring;   /* mmapped: XR_TXR_RING descriptors ... */
	struct xr_txr_ctl *ctl;     /* ... and the control slot */
	size_t map_len;
	uint8_t trigger[XR_TXR_TRIGGER_LEN];
	uint64_t runs, run_errors, lost; /* test runs; failed; frames not sent */
};

/* Create the ring of (domain, plane), install it in xr_txq and check that
 * prog_id is attached to ifindex in native mode (a test run of a program
 * the kernel's XDP dispatcher does not already hold waits for an RCU grace
 * period every time).  On failure a negative errno and a reason in why. */
int xr_xdptx_open(struct xr_xdptx **out, int txq_fd, uint32_t domain,
		  uint32_t plane, int ifindex, uint32_t prog_id, uint64_t secret,
		  char *why, size_t whylen);
void xr_xdptx_close(struct xr_xdptx *t);

/* Free descriptors. */
static inline uint32_t xr_xdptx_room(const struct xr_xdptx *t)
{
	return XR_TXR_RING - (uint32_t)(t->ctl->head - t->ctl->tail);
}

/* The next descriptor to fill (room must be > 0), then publish it. */
static inline struct xr_txr_desc *xr_xdptx_slot(struct xr_xdptx *t)
{
	return &t->ring[t->ctl->head & (XR_TXR_RING - 1)];
}

static inline void xr_xdptx_commit(struct xr_xdptx *t)
{
	t->ctl->head++;
}

static inline uint32_t xr_xdptx_pending(const struct xr_xdptx *t)
{
	return (uint32_t)(t->ctl->head - t->ctl->tail);
}

/* Send every published descriptor; returns how many frames XDP built, or
 * a negative errno (then the descriptors are dropped: lost packets, which
 * loss recovery repairs). */
int xr_xdptx_flush(struct xr_xdptx *t);

#endif /* XR_IO_XDPTX_H */
