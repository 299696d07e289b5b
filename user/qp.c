// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Queue pairs: creation (claiming a connection id in the XDP program's
 * maps), the connection's BPF state once connected, error handling, and
 * destruction.  Transmission and loss recovery are in sender.c, set-up in
 * ctrl.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "internal.h"

#define XR_DEFAULT_SQ 256
#define XR_MAX_SQ (1u << 16)
#define XR_DEFAULT_TIMEOUT_MS 2000
#define XR_DEFAULT_INFLIGHT 128
#define XR_DEFAULT_RNR_RETRY 7
#define XR_DEFAULT_RNR_TIMER_US 100

static uint32_t pow2_at_least(uint32_t v)
{
	uint32_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

/* Claim a free connection id: an INIT entry in xr_conns (XDP drops
 * everything for it until it is connected). */
static int claim_conn_id(struct xroce_qp *qp)
{
	struct xroce_device *dev = qp->dev;
	struct xr_conn c;
	int tries;

	memset(&c, 0, sizeof(c));
	c.domain = dev->domain_id;
	c.pd = qp->pd->id;
	c.state = XR_CONN_INIT;
	for (tries = 0; tries < 256; tries++) {
		uint32_t id = (uint32_t)(xr_random64() % (dev->conn_tab_size - 1)) + 1;

		if (dev->conn_tab[id])
			continue;
		if (!bpf_map_update_elem(dev->maps.conns, &id, &c, BPF_NOEXIST)) {
			qp->conn_id = id;
			dev->conn_tab[id] = qp;
			return 0;
		}
		if (errno != EEXIST)
			return xr_fail(&dev->log, -errno,
				       "cannot claim a connection id: %s (xr_conns "
				       "full? %u connections max)", strerror(errno),
				       dev->conn_tab_size);
	}
	return xr_fail(&dev->log, -EBUSY, "no free connection id");
}

int xroce_create_qp(struct xroce_pd *pd, const struct xroce_qp_init_attr *attr,
		    struct xroce_qp **out)
{
	struct xroce_device *dev;
	struct xroce_qp *qp;
	uint32_t sq;
	int rc;

	if (!pd || !attr || !out)
		return -EINVAL;
	dev = pd->dev;
	*out = NULL;
	if (!attr->send_cq || !attr->recv_cq)
		return xr_fail(&dev->log, -EINVAL, "xroce_create_qp: send_cq and "
			       "recv_cq are required");
	if (attr->send_cq->dev != dev || attr->recv_cq->dev != dev)
		return xr_fail(&dev->log, -EINVAL, "xroce_create_qp: CQ of another device");
	if (attr->npaths > XROCE_MAX_PATHS)
		return xr_fail(&dev->log, -EINVAL, "xroce_create_qp: npaths must be "
			       "1..%d", XROCE_MAX_PATHS);
	sq = attr->max_send_wr ? attr->max_send_wr : XR_DEFAULT_SQ;
	if (sq > XR_MAX_SQ)
		return xr_fail(&dev->log, -EINVAL, "xroce_create_qp: max_send_wr "
			       "must be at most %u", XR_MAX_SQ);
	if (attr->flags & ~(unsigned int)(XROCE_QP_NOTIFY_WRITES | XROCE_QP_NO_REDUNDANT))
		return xr_fail(&dev->log, -EINVAL, "xroce_create_qp: unknown flags");
	if (attr->max_inflight && (attr->max_inflight < 2 ||
				   attr->max_inflight > XR_CSN_SEND_WIN))
		return xr_fail(&dev->log, -EINVAL, "xroce_create_qp: max_inflight "
			       "must be 2..%u", XR_CSN_SEND_WIN);
	/* Both ends of a connection use the data port their xroce program
	 * serves, which set-up checks; there is nothing else to choose. */
	if (attr->data_port && attr->data_port != dev->data_port)
		return xr_fail(&dev->log, -EINVAL, "xroce_create_qp: data_port %u: "
			       "connections use the device's data port %u",
			       attr->data_port, dev->data_port);
	if (attr->mtu && (attr->mtu < 576 || attr->mtu > 9216))
		return xr_fail(&dev->log, -EINVAL, "xroce_create_qp: mtu must be "
			       "576..9216");

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return xr_fail(&dev->log, -ENOMEM, "out of memory");
	qp->dev = dev;
	qp->pd = pd;
	qp->send_cq = attr->send_cq;
	qp->recv_cq = attr->recv_cq;
	qp->state = XROCE_QPS_INIT;
	qp->flags = attr->flags;
	qp->timeout_ms = attr->timeout_ms ? attr->timeout_ms : XR_DEFAULT_TIMEOUT_MS;
	qp->npaths = attr->npaths ? attr->npaths : XROCE_DEFAULT_PATHS;
	qp->max_inflight = attr->max_inflight ? attr->max_inflight : XR_DEFAULT_INFLIGHT;
	qp->mtu = attr->mtu;
	if (!qp->mtu) {
		int i;

		for (i = 0; i < dev->nplanes; i++)
			if (!qp->mtu || (uint32_t)dev->plane[i].mtu < qp->mtu)
				qp->mtu = (uint32_t)dev->plane[i].mtu;
	}
	qp->data_port = dev->data_port;
	qp->sq_size = pow2_at_least(sq);
	qp->sq = calloc(qp->sq_size, sizeof(*qp->sq));
	/* At most 256 PSNs per path in flight, and half the receiver's CSN
	 * window in all (XR_CSN_SEND_WIN). */
	qp->pk_win = pow2_at_least(qp->npaths * XR_TXPATH_WIN);
	if (qp->pk_win > XR_CSN_SEND_WIN)
		qp->pk_win = XR_CSN_SEND_WIN;
	qp->pk = calloc(qp->pk_win, sizeof(*qp->pk));
	qp->retx = calloc(qp->pk_win, sizeof(*qp->retx));
	qp->rnr = calloc(qp->pk_win, sizeof(*qp->rnr));
	qp->rnr_due = calloc(qp->pk_win, sizeof(*qp->rnr_due));
	qp->path = calloc(qp->npaths, sizeof(*qp->path));
	qp->rnr_retry = attr->rnr_retry ? attr->rnr_retry : XR_DEFAULT_RNR_RETRY;
	qp->rnr_timer_ns = (attr->rnr_timer_us ? attr->rnr_timer_us :
			    XR_DEFAULT_RNR_TIMER_US) * 1000ull;
	if (!qp->sq || !qp->pk || !qp->retx || !qp->path || !qp->rnr || !qp->rnr_due) {
		rc = xr_fail(&dev->log, -ENOMEM, "out of memory");
		goto fail;
	}
	qp->init_psn = (uint32_t)xr_random64();
	qp->init_csn = (uint32_t)xr_random64();
	qp->rx_token = xr_random64();
	rc = claim_conn_id(qp);
	if (rc)
		goto fail;
	qp->send_cq->users++;
	qp->recv_cq->users++;
	xr_telem_attach(qp);
	qp->next = dev->qps;
	dev->qps = qp;
	*out = qp;
	return 0;
fail:
	free(qp->sq);
	free(qp->pk);
	free(qp->retx);
	free(qp->rnr);
	free(qp->rnr_due);
	free(qp->path);
	free(qp);
	return rc;
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

/* Publish the connected state: receive windows starting at the peer's
 * initial PSN/CSN, message slots cleared, then the connection entry with
 * the peer's identity and tokens, in state RTS. */
int xr_qp_program(struct xroce_qp *qp, uint32_t peer_init_psn,
		  uint32_t peer_init_csn, uint16_t peer_sport_lo,
		  uint16_t peer_sport_n)
{
	struct xroce_device *dev = qp->dev;
	struct xr_rx_state *rx;
	struct xr_conn c;
	uint32_t i, *keys;
	uint64_t *vals;
	uint32_t n = XR_MSG_SLOTS;
	int rc;

	rx = calloc(1, sizeof(*rx));
	keys = calloc(n, sizeof(*keys));
	vals = calloc(n, sizeof(*vals));
	if (!rx || !keys || !vals) {
		rc = -ENOMEM;
		goto out;
	}
	rx->csn_next = peer_init_csn;
	for (i = 0; i < XR_MAX_PATHS; i++)
		rx->path[i].cack = peer_init_psn;
	if (bpf_map_update_elem(dev->maps.rx, &qp->conn_id, rx, BPF_ANY)) {
		rc = xr_fail(&dev->log, -errno, "cannot set receive state: %s",
			     strerror(errno));
		goto out;
	}
	for (i = 0; i < n; i++) {
		keys[i] = qp->conn_id * XR_MSG_SLOTS + i;
		/* The slot of message i (ids start at 0) must not look like it
		 * already holds message i: mark it with the id one window back. */
		vals[i] = (uint64_t)(i - XR_MSG_SLOTS) << 32;
	}
	{
		LIBBPF_OPTS(bpf_map_batch_opts, bo);

		if (bpf_map_update_batch(dev->maps.msgs, keys, vals, &n, &bo)) {
			rc = xr_fail(&dev->log, -errno, "cannot clear message slots: %s",
				     strerror(errno));
			goto out;
		}
	}
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
	if (bpf_map_update_elem(dev->maps.conns, &qp->conn_id, &c, BPF_EXIST)) {
		rc = xr_fail(&dev->log, -errno, "cannot publish the connection: %s",
			     strerror(errno));
		goto out;
	}
	rc = 0;
out:
	free(rx);
	free(keys);
	free(vals);
	return rc;
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
static void flush_sq(struct xroce_qp *qp, enum xroce_wc_status first)
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
	flush_sq(qp, status);
	/* As in ibverbs, the error state flushes posted receives too; messages
	 * that fully arrived are delivered first. */
	xr_qp_deliver(qp);
	xr_qp_flush_recv(qp);
	/* Nothing more will be sent. */
	qp->csn_una = qp->csn_next;
	qp->retx_head = qp->retx_tail;
}

int xroce_destroy_qp(struct xroce_qp *qp)
{
	struct xroce_device *dev;
	struct xroce_qp **pp;

	if (!qp)
		return -EINVAL;
	dev = qp->dev;
	for (pp = &dev->qps; *pp && *pp != qp; pp = &(*pp)->next)
		;
	if (!*pp)
		return xr_fail(&dev->log, -ENOENT, "xroce_destroy_qp: unknown QP");
	*pp = qp->next;
	if (qp->csn_una != qp->csn_next) {
		uint32_t c;

		xr_log(&dev->log, XROCE_LOG_DEBUG, "qp %u: destroyed with CSNs %u..%u "
		       "outstanding, %u queued for resend, %u waiting on RNR",
		       qp->conn_id, qp->csn_una, qp->csn_next,
		       qp->retx_tail - qp->retx_head, qp->rnr_tail - qp->rnr_head);
		for (c = qp->csn_una; c != qp->csn_next && c - qp->csn_una < 16; c++) {
			struct xr_pk *pk = xr_pk_at(qp, c);

			xr_log(&dev->log, XROCE_LOG_DEBUG, "  csn %u: state %u queued %u "
			       "rnr %u sent %u times, wr %u off %u", c, pk->state,
			       pk->queued, pk->rnr, pk->ntx, pk->wr, pk->off);
		}
	}
	/* Tell the peer, also from the error state (its side may still be up). */
	if (qp->state == XROCE_QPS_RTS ||
	    (qp->state == XROCE_QPS_ERR && qp->peer_conn && !qp->peer_closed))
		xr_ctrl_send_close(qp);
	bpf_map_delete_elem(dev->maps.conns, &qp->conn_id);
	if (qp->conn_id < dev->conn_tab_size)
		dev->conn_tab[qp->conn_id] = NULL;
	qp->state = XROCE_QPS_CLOSED;
	flush_sq(qp, XROCE_WC_WR_FLUSH_ERR);
	/* What the flush could not complete (CQ full) is released anyway:
	 * READ windows closed, scatter lists freed. */
	for (; qp->sq_head != qp->sq_tail; qp->sq_head++)
		xr_qp_release_wr(qp, xr_swr_at(qp, qp->sq_head));
	qp->send_cq->users--;
	qp->recv_cq->users--;
	xr_telem_detach(qp);
	if (qp->inline_off)
		xr_heap_free(&dev->heap, qp->inline_off);
	xr_qp_free_streams(qp);
	free(qp->sq);
	free(qp->pk);
	free(qp->retx);
	free(qp->rnr);
	free(qp->rnr_due);
	free(qp->path);
	free(qp);
	return 0;
}

uint32_t xroce_qp_num(const struct xroce_qp *qp)
{
	return qp ? qp->conn_id : 0;
}

enum xroce_qp_state xroce_qp_state(const struct xroce_qp *qp)
{
	return qp ? qp->state : XROCE_QPS_ERR;
}

int xroce_qp_stats(const struct xroce_qp *qp, struct xroce_qp_stats *st)
{
	if (!qp || !st)
		return -EINVAL;
	*st = qp->st;
	st->npaths = qp->npaths;
	st->rate_hint_mbps = qp->rate_hint;
	st->mem_bytes = sizeof(*qp) + (uint64_t)qp->sq_size * sizeof(*qp->sq) +
			(uint64_t)qp->pk_win * (sizeof(*qp->pk) + sizeof(*qp->retx) +
						sizeof(*qp->rnr) + sizeof(*qp->rnr_due)) +
			(uint64_t)qp->npaths * sizeof(*qp->path);
	st->mem_bytes += (uint64_t)qp->nstreams * (sizeof(struct xr_stream) +
						   sizeof(*qp->stream_ids));
	return 0;
}

int xroce_path_stats(const struct xroce_qp *qp, struct xroce_path_stats *ps,
		     int max_paths)
{
	uint32_t i;

	if (!qp || !ps || max_paths < 0)
		return -EINVAL;
	for (i = 0; i < qp->npaths && (int)i < max_paths; i++) {
		const struct xr_qpath *p = &qp->path[i];
		const struct xr_txpath_stats *ts = &p->tp.st;

		memset(&ps[i], 0, sizeof(ps[i]));
		ps[i].path = i;
		ps[i].plane = (uint32_t)p->plane;
		ps[i].sport = p->sport;
		ps[i].state = (enum xroce_path_state)xr_cc_path_state(&qp->cc, (int)i);
		ps[i].tx_pkts = ts->tx_pkts;
		ps[i].tx_bytes = ts->tx_bytes;
		ps[i].retx_pkts = p->retx_pkts;
		ps[i].lost_pkts = ts->sack_lost + ts->timeout_lost;
		ps[i].acked_pkts = ts->acked_pkts;
		ps[i].ecn_marked = qp->cc.path[i].ce_total;
		ps[i].timeouts = ts->timeouts;
		ps[i].rtt_min_ns = (uint32_t)xr_rtt_min(&p->tp.rtt);
		ps[i].rtt_srtt_ns = (uint32_t)xr_rtt_srtt(&p->tp.rtt);
		ps[i].rtt_p99_ns = (uint32_t)xr_rtt_p99(&p->tp.rtt);
		ps[i].cwnd = (uint32_t)qp->cc.path[i].ctl.cwnd;
		ps[i].inflight = xr_txpath_inflight(&p->tp);
	}
	return (int)i;
}
