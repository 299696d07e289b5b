// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Queue pairs: creation (claiming a connection id in the XDP program's
 * maps), destruction (telling the peer) and statistics.  State changes are
 * in qp_state.c, transmission in sender.c, set-up in ctrl.c / connect.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "cq.h"
#include "ctrl.h"
#include "device.h"
#include "domain.h"
#include "engine.h"
#include "evq_wake.h"
#include "mr.h"
#include "qp.h"
#include "rqretire.h"
#include "qp_state.h"
#include "stream.h"
#include "telem.h"

#define XR_DEFAULT_SQ 256
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

static uint32_t count_qps(const struct xroce_device *dev)
{
	const struct xroce_qp *q;
	uint32_t n = 0;

	for (q = dev->qps; q; q = q->next)
		n++;
	return n;
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

static int check_attr(struct xroce_device *dev,
		      const struct xroce_qp_init_attr *attr)
{
	if (!attr->send_cq || !attr->recv_cq)
		return xr_fail(&dev->log, -EINVAL, "xroce_create_qp: send_cq and "
			       "recv_cq are required");
	if (attr->send_cq->dev != dev || attr->recv_cq->dev != dev)
		return xr_fail(&dev->log, -EINVAL, "xroce_create_qp: CQ of another device");
	if (attr->npaths > XROCE_MAX_PATHS)
		return xr_fail(&dev->log, -EINVAL, "xroce_create_qp: npaths must be "
			       "1..%d", XROCE_MAX_PATHS);
	if (attr->max_send_wr > XR_MAX_SQ)
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
	return 0;
}

/* The settings of attr, with defaults for what it leaves at 0. */
static void apply_attr(struct xroce_qp *qp, const struct xroce_qp_init_attr *attr)
{
	struct xroce_device *dev = qp->dev;
	int i;

	qp->send_cq = attr->send_cq;
	qp->recv_cq = attr->recv_cq;
	qp->state = XROCE_QPS_INIT;
	qp->flags = attr->flags;
	qp->timeout_ms = attr->timeout_ms ? attr->timeout_ms : XR_DEFAULT_TIMEOUT_MS;
	qp->npaths = attr->npaths ? attr->npaths : XROCE_DEFAULT_PATHS;
	qp->max_inflight = attr->max_inflight ? attr->max_inflight : XR_DEFAULT_INFLIGHT;
	qp->mtu = attr->mtu;
	for (i = 0; !attr->mtu && i < dev->nplanes; i++)
		if (!qp->mtu || (uint32_t)dev->plane[i].mtu < qp->mtu)
			qp->mtu = (uint32_t)dev->plane[i].mtu;
	qp->data_port = dev->data_port;
	qp->rnr_retry = attr->rnr_retry ? attr->rnr_retry : XR_DEFAULT_RNR_RETRY;
	qp->rnr_timer_ns = (attr->rnr_timer_us ? attr->rnr_timer_us :
			    XR_DEFAULT_RNR_TIMER_US) * 1000ull;
	qp->init_psn = (uint32_t)xr_random64();
	qp->init_csn = (uint32_t)xr_random64();
	qp->rx_token = xr_random64();
}

static void free_queues(struct xroce_qp *qp)
{
	free(qp->sq);
	free(qp->pk);
	free(qp->retx);
	free(qp->rnr);
	free(qp->rnr_due);
	free(qp->path);
	free(qp->cm);
}

/* The send queue, the packet window and its rings, the paths. */
static int alloc_queues(struct xroce_qp *qp, uint32_t max_send_wr)
{
	qp->sq_size = pow2_at_least(max_send_wr ? max_send_wr : XR_DEFAULT_SQ);
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
	if (!qp->sq || !qp->pk || !qp->retx || !qp->path || !qp->rnr || !qp->rnr_due)
		return xr_fail(&qp->dev->log, -ENOMEM, "out of memory");
	return 0;
}

int xr_qp_create(struct xroce_pd *pd, const struct xroce_qp_init_attr *attr,
		 struct xroce_qp **out)
{
	struct xroce_device *dev = pd->dev;
	struct xroce_qp *qp;
	int rc;

	rc = check_attr(dev, attr);
	if (rc)
		return rc;
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return xr_fail(&dev->log, -ENOMEM, "out of memory");
	qp->dev = dev;
	qp->pd = pd;
	apply_attr(qp, attr);
	rc = alloc_queues(qp, attr->max_send_wr);
	if (!rc)
		rc = claim_conn_id(qp);
	if (rc) {
		free_queues(qp);
		free(qp);
		return rc;
	}
	qp->send_cq->users++;
	qp->recv_cq->users++;
	xr_telem_attach(qp);
	qp->next = dev->qps;
	dev->qps = qp;
	xr_domain_set_share(dev, count_qps(dev));
	*out = qp;
	return 0;
}

/* What was still in flight when the QP went, for whoever debugs it. */
static void log_outstanding(struct xroce_qp *qp)
{
	struct xroce_device *dev = qp->dev;
	uint32_t c;

	if (qp->csn_una == qp->csn_next)
		return;
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

int xr_qp_destroy(struct xroce_qp *qp)
{
	struct xroce_device *dev = qp->dev;
	struct xroce_qp **pp;
	bool tell;

	for (pp = &dev->qps; *pp && *pp != qp; pp = &(*pp)->next)
		;
	if (!*pp)
		return xr_fail(&dev->log, -ENOENT, "xroce_destroy_qp: unknown QP");
	*pp = qp->next;
	log_outstanding(qp);
	/* Tell the peer, also from the error state (its side may still be up). */
	tell = (qp->state == XROCE_QPS_RTS || qp->state == XROCE_QPS_ERR ||
		qp->state == XROCE_QPS_CONNECTING) &&
	       qp->peer_conn && !qp->peer_closed;
	/* From here on no event reaches it (xr_events); the CLOSE_ACK still
	 * finds it through the table while the lock is free for others. */
	qp->state = XROCE_QPS_CLOSED;
	if (tell)
		xr_ctrl_send_close(qp);
	/* Completed receives' entries go while the id is still ours: once
	 * the connection entry is gone, another process may take the id and
	 * post receives under the same keys. */
	xr_rq_retire_flush(qp);
	bpf_map_delete_elem(dev->maps.conns, &qp->conn_id);
	xr_evq_wake_release(dev, qp->conn_id);
	if (qp->conn_id < dev->conn_tab_size)
		dev->conn_tab[qp->conn_id] = NULL;
	xr_qp_flush_sq(qp, XROCE_WC_WR_FLUSH_ERR);
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
	free_queues(qp);
	free(qp->bind);
	free(qp);
	xr_domain_set_share(dev, count_qps(dev));
	return 0;
}

uint32_t xr_qp_num(const struct xroce_qp *qp)
{
	return qp->conn_id;
}

enum xroce_qp_state xr_qp_state(const struct xroce_qp *qp)
{
	return qp->state;
}

int xr_qp_stats(const struct xroce_qp *qp, struct xroce_qp_stats *st)
{
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

int xr_qp_path_stats(const struct xroce_qp *qp, struct xroce_path_stats *ps,
		     int max_paths)
{
	uint32_t i;

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

struct xroce_device *xr_qp_device(const struct xroce_qp *qp)
{
	return qp->dev;
}
