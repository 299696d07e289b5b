// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A queue pair's state, in the library and in XDP's connection map: going
 * to RTS (receive windows, message slots, then the connection entry),
 * the error state (outstanding work completed with errors, receives
 * flushed), and the release of a finished work request's resources.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "asyncev.h"
#include "cq.h"
#include "device.h"
#include "domain.h"
#include "evq_wake.h"
#include "keys.h"
#include "mr.h"
#include "qp.h"
#include "rqretire.h"
#include "qp_state.h"
#include "stream.h"

void xr_qp_release_wr(struct xroce_qp *qp, struct xr_swr *w)
{
	if (w->nseg > 1)
		free(w->segs);
	w->segs = NULL;
	w->nseg = 0;
	if (w->kind == XR_WK_READ && w->read_len != UINT32_MAX) {
		struct xr_read_key k = { .conn = qp->conn_id, .read_id = w->read_id };

		bpf_map_delete_elem(qp->dev->maps.reads, &k);
		w->read_len = UINT32_MAX; /* window closed */
	}
}

int xr_qp_set_map_state(struct xroce_qp *qp, uint32_t state)
{
	struct xr_conn c;

	if (bpf_map_lookup_elem(qp->dev->maps.conns, &qp->conn_id, &c))
		return -errno;
	c.state = state;
	if (bpf_map_update_elem(qp->dev->maps.conns, &qp->conn_id, &c, BPF_EXIST))
		return -errno;
	return 0;
}

/* Receive windows starting at the peer's initial PSN (every path) and CSN. */
static int set_rx_state(struct xroce_qp *qp, uint32_t peer_init_psn,
			uint32_t peer_init_csn)
{
	struct xroce_device *dev = qp->dev;
	struct xr_rx_state *rx = calloc(1, sizeof(*rx));
	uint32_t i;
	int rc = 0;

	if (!rx)
		return xr_fail(&dev->log, -ENOMEM, "out of memory");
	rx->csn_next = peer_init_csn;
	for (i = 0; i < XR_MAX_PATHS; i++)
		rx->path[i].cack = peer_init_psn;
	if (bpf_map_update_elem(dev->maps.rx, &qp->conn_id, rx, BPF_ANY))
		rc = xr_fail(&dev->log, -errno, "cannot set receive state: %s",
			     strerror(errno));
	free(rx);
	return rc;
}

/* The slot of message i (ids start at 0) must not look like it already
 * holds message i: mark each with the id one window back. */
static int clear_msg_slots(struct xroce_qp *qp)
{
	struct xroce_device *dev = qp->dev;
	uint32_t i, n = XR_MSG_SLOTS, *keys = calloc(n, sizeof(*keys));
	uint64_t *vals = calloc(n, sizeof(*vals));
	LIBBPF_OPTS(bpf_map_batch_opts, bo);
	int rc = 0;

	if (!keys || !vals) {
		rc = xr_fail(&dev->log, -ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		keys[i] = qp->conn_id * XR_MSG_SLOTS + i;
		vals[i] = (uint64_t)(i - XR_MSG_SLOTS) << 32;
	}
	if (bpf_map_update_batch(dev->maps.msgs, keys, vals, &n, &bo))
		rc = xr_fail(&dev->log, -errno, "cannot clear message slots: %s",
			     strerror(errno));
out:
	free(keys);
	free(vals);
	return rc;
}

/* Publish the connected state: receive windows starting at the peer's
 * initial PSN/CSN, message slots cleared, then the connection entry with
 * the peer's identity and tokens, in state RTS. */
int xr_qp_program(struct xroce_qp *qp, uint32_t peer_init_psn,
		  uint32_t peer_init_csn, uint16_t peer_sport_lo,
		  uint16_t peer_sport_n)
{
	struct xroce_device *dev = qp->dev;
	struct xr_conn c;
	uint32_t i;
	int rc;

	rc = set_rx_state(qp, peer_init_psn, peer_init_csn);
	if (!rc)
		rc = clear_msg_slots(qp);
	if (rc)
		return rc;
	xr_rq_retire_reset(qp); /* the reset below ends its guard */
	xr_domain_conn_reset(dev, qp->conn_id);
	xr_evq_wake_conn(dev, qp->conn_id);
	memset(&c, 0, sizeof(c));
	c.domain = dev->domain_id;
	c.pd = qp->pd->id;
	c.state = XR_CONN_RTS;
	c.peer_conn = qp->peer_conn;
	c.rx_token = qp->rx_token;
	c.tx_token = qp->tx_token;
	for (i = 0; i < qp->npeer && i < XR_MAX_PLANES; i++)
		memcpy(c.peer_addr[i], qp->peer_addr[i], 16);
	c.npeer = (uint8_t)qp->npeer;
	c.family = qp->family == AF_INET6 ? 6 : 4;
	c.peer_sport_lo = peer_sport_lo;
	c.peer_sport_n = peer_sport_n;
	c.flags = qp->flags & XROCE_QP_NOTIFY_WRITES ? XR_CONN_F_NOTIFY_WRITE : 0;
	xr_keys_fill_conn(qp, &c);
	if (dev->trace)
		c.flags |= XR_CONN_F_TRACE;
	if (bpf_map_update_elem(dev->maps.conns, &qp->conn_id, &c, BPF_EXIST))
		return xr_fail(&dev->log, -errno, "cannot publish the connection: %s",
			       strerror(errno));
	return 0;
}

static enum xroce_wc_opcode wc_opcode(uint8_t op)
{
	switch (op) {
	case XR_OP_SEND:
	case XR_OP_SEND_IMM:
		return XROCE_WC_SEND;
	case XR_OP_READ_REQ:
		return XROCE_WC_RDMA_READ;
	default:
		return XROCE_WC_RDMA_WRITE;
	}
}

/* Complete the send queue's outstanding work requests with errors (the
 * first one not yet failed with `first`, the rest as flushed) and the
 * posted receives as flushed. */
void xr_qp_flush_sq(struct xroce_qp *qp, enum xroce_wc_status first)
{
	while (qp->sq_head != qp->sq_tail) {
		struct xr_swr *w = xr_swr_at(qp, qp->sq_head);
		struct xroce_wc wc = {
			.wr_id = w->wr_id,
			.status = w->failed ? (enum xroce_wc_status)w->status : first,
			.opcode = wc_opcode(w->opcode),
			.qp_num = qp->conn_id,
			.stream = w->stream,
		};

		if (!w->done && w->kind != XR_WK_INTERNAL) {
			if (xr_cq_push(qp->send_cq, &wc))
				break; /* CQ full: the rest stays for a later try */
			first = XROCE_WC_WR_FLUSH_ERR;
		}
		w->done = 1;
		xr_qp_release_wr(qp, w);
		qp->sq_head++;
	}
	if (qp->sq_seg - qp->sq_head > qp->sq_tail - qp->sq_head)
		qp->sq_seg = qp->sq_head;
	if (qp->sq_hi - qp->sq_head > qp->sq_tail - qp->sq_head)
		qp->sq_hi = qp->sq_head;
	xr_qp_flush_recv(qp);
}

void xr_qp_fail(struct xroce_qp *qp, enum xroce_wc_status status,
		const char *why)
{
	if (qp->state == XROCE_QPS_ERR)
		return;
	xr_log(&qp->dev->log, XROCE_LOG_WARN, "qp %u: %s; moving to error state",
	       qp->conn_id, why);
	qp->state = XROCE_QPS_ERR;
	xr_qp_set_map_state(qp, XR_CONN_ERROR);
	if (!qp->app_error)
		xr_event_post(qp->dev, XROCE_EVENT_QP_FATAL, qp, qp->conn_id);
	xr_qp_flush_sq(qp, status);
	/* As in ibverbs, the error state flushes posted receives too; messages
	 * that fully arrived are delivered first. */
	xr_qp_deliver(qp);
	xr_qp_flush_recv(qp);
	/* Nothing more will be sent. */
	qp->csn_una = qp->csn_next;
	qp->retx_head = qp->retx_tail;
}
