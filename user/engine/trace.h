/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Latency breakdowns: timestamps of the steps of every message of a traced
 * device (enum xroce_trace_stage), the library's own and those the XDP
 * program writes into its xr_trace ring (include/contract/abi.h), merged
 * into one buffer the application takes with xroce_trace_take.  Off unless
 * asked for (xroce_trace_enable): each step then costs one pointer test.
 */
#ifndef XR_ENGINE_TRACE_H
#define XR_ENGINE_TRACE_H

#include <stdint.h>

#include "device.h"
#include "contract/txring.h"

#define XR_TRACE_BUF (1u << 20) /* records kept until taken */
#define XR_TRACE_KICKS 4096     /* packets waiting for their system call */

/* A traced packet on its way to the engine. */
struct xr_trace_pkt {
	uint32_t conn, msg, csn;
	int plane;
};

struct xr_trace {
	struct xroce_trace_rec *buf;       /* ring of XR_TRACE_BUF */
	uint64_t head, tail;               /* written, taken */
	uint64_t dropped;                  /* buffer full */
	uint64_t missed;                   /* XDP records overwritten unread */
	const struct xr_trace_rec *xdp;    /* XDP's ring, mmapped read-only */
	size_t xdp_len;
	uint64_t xdp_pos;                  /* next XDP record to read */
	/* The packet send_packet is emitting (cur_on), and the packets handed
	 * to an engine whose system call has not begun yet. */
	struct xr_trace_pkt cur;
	bool cur_on;
	struct xr_trace_pkt kick[XR_TRACE_KICKS];
	uint32_t nkick;
	uint64_t evt_ns;                   /* rx_ns of the record being handled */
};

/* Record a step (ns 0: now). */
void xr_trace_add(struct xroce_device *dev, uint32_t conn, uint32_t msg,
		  uint32_t csn, uint32_t stage, uint64_t ns);

/* The call sites' form: nothing but a test when tracing is off. */
static inline void xr_tr(struct xroce_device *dev, uint32_t conn,
			 uint32_t msg, uint32_t csn, uint32_t stage)
{
	if (__builtin_expect(dev->trace != NULL, 0))
		xr_trace_add(dev, conn, msg, csn, stage, 0);
}

/* The emit that follows is message msg's packet csn (first transmission). */
void xr_trace_pkt(struct xroce_device *dev, uint32_t conn, uint32_t msg,
		  uint32_t csn);
/* That packet went onto plane's engine (d: its descriptor, test-run engine). */
void xr_trace_emitted(struct xroce_device *dev, int plane,
		      struct xr_txr_desc *d);
/* The system call sending plane's queued packets begins. */
void xr_trace_kick(struct xroce_device *dev, int plane);
/* csn of message msg was acknowledged by the record being handled. */
void xr_trace_acked(struct xroce_device *dev, uint32_t conn, uint32_t msg,
		    uint32_t csn);

/* Copy the XDP program's new records of our connections into the buffer. */
void xr_trace_drain_xdp(struct xroce_device *dev);
/* XR_CONN_F_TRACE for the QP's connection entry, as the device says. */
int xr_trace_conn_flag(struct xroce_device *dev, uint32_t conn_id, bool on);
int xr_trace_enable(struct xroce_device *dev, int on);
int xr_trace_take(struct xroce_device *dev, struct xroce_trace_rec *recs,
		  int max);
void xr_trace_close(struct xroce_device *dev);

#endif /* XR_ENGINE_TRACE_H */
