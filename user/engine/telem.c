// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Telemetry for other processes: each QP's per-path figures, written into
 * a slot in the first pages of the device's memory map (layout in abi.h)
 * at most once per XR_TELEM_PERIOD_NS, under a sequence count so that a
 * reader never sees a half-written slot.  `xroce stats` reads them.
 */
#include <string.h>
#include <unistd.h>

#include "telem.h"
#include "xsk.h"

void xr_telem_init(struct xroce_device *dev)
{
	struct xr_telem_hdr *h = (struct xr_telem_hdr *)dev->mem;

	memset(dev->mem, 0, XR_TELEM_BYTES);
	h->version = XR_TELEM_VERSION;
	h->pid = (uint32_t)getpid();
	h->nslots = XR_TELEM_SLOTS;
	h->slot_size = sizeof(struct xr_telem);
	__atomic_store_n(&h->magic, XR_TELEM_MAGIC, __ATOMIC_RELEASE);
}

void xr_telem_planes(struct xroce_device *dev)
{
	struct xr_telem_hdr *h = (struct xr_telem_hdr *)dev->mem;
	int i;

	for (i = 0; i < dev->nplanes && i < XR_MAX_PLANES; i++) {
		const struct xr_plane *pl = &dev->plane[i];

		h->plane_ifindex[i] = (uint32_t)pl->ifindex;
		h->plane_engine[i] = pl->txr ? XR_TELEM_ENG_TEST_RUN :
				     pl->xsk && xr_xsk_zerocopy(pl->xsk) ?
				     XR_TELEM_ENG_AF_XDP_ZC : XR_TELEM_ENG_AF_XDP_COPY;
	}
}

static struct xr_telem *slots(struct xroce_device *dev)
{
	return (struct xr_telem *)(dev->mem + sizeof(struct xr_telem_hdr));
}

void xr_telem_attach(struct xroce_qp *qp)
{
	struct xr_telem *t = slots(qp->dev);
	uint32_t i;

	for (i = 0; i < XR_TELEM_SLOTS; i++) {
		if (t[i].conn)
			continue;
		memset(&t[i], 0, sizeof(t[i]));
		__atomic_store_n(&t[i].conn, qp->conn_id, __ATOMIC_RELEASE);
		qp->telem = &t[i];
		return;
	}
	qp->telem = NULL; /* more QPs than slots: not published */
}

void xr_telem_detach(struct xroce_qp *qp)
{
	if (!qp->telem)
		return;
	__atomic_store_n(&qp->telem->conn, 0, __ATOMIC_RELEASE);
	qp->telem = NULL;
}

void xr_telem_publish(struct xroce_qp *qp)
{
	struct xr_telem *t = qp->telem;
	uint32_t i;

	if (!t)
		return;
	__atomic_store_n(&t->seq, t->seq + 1, __ATOMIC_RELEASE); /* odd */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	t->peer_conn = qp->peer_conn;
	t->npaths = qp->npaths;
	t->updated_ns = qp->dev->now_ns;
	memcpy(t->peer_addr, qp->peer_addr[0], 16);
	t->state = qp->state;
	t->rate_hint_mbps = qp->rate_hint;
	t->tx_bytes = qp->st.tx_bytes;
	t->acked_bytes = qp->st.acked_bytes;
	t->retx_pkts = qp->st.retx_pkts;
	t->wr_completed = qp->st.wr_completed;
	t->cwnd_milli = (uint32_t)(xr_cc_conn_window(&qp->cc) * 1000);
	t->pace_mbps = (uint32_t)(xr_cc_pacing_rate(&qp->cc) / 125000);
	t->cuts_ecn = qp->cc.conn.cuts_ecn;
	t->cuts_delay = qp->cc.conn.cuts_delay;
	t->cuts_loss = qp->cc.conn.cuts_loss;
	t->compete = qp->cc.compete;
	for (i = 0; i < qp->npaths && i < XR_MAX_PATHS; i++) {
		const struct xr_qpath *p = &qp->path[i];
		const struct xr_txpath_stats *ts = &p->tp.st;
		struct xr_telem_path *tp = &t->path[i];

		tp->sport = p->sport;
		tp->state = (uint8_t)xr_cc_path_state(&qp->cc, (int)i);
		tp->plane = (uint8_t)p->plane;
		tp->cwnd = (uint32_t)qp->cc.path[i].ctl.cwnd;
		tp->inflight = xr_txpath_inflight(&p->tp);
		tp->rtt_min_ns = (uint32_t)xr_rtt_min(&p->tp.rtt);
		tp->rtt_srtt_ns = (uint32_t)xr_rtt_srtt(&p->tp.rtt);
		tp->rtt_p99_ns = (uint32_t)xr_rtt_p99(&p->tp.rtt);
		tp->tx_pkts = ts->tx_pkts;
		tp->tx_bytes = ts->tx_bytes;
		tp->retx_pkts = p->retx_pkts;
		tp->lost_pkts = ts->sack_lost + ts->timeout_lost;
		tp->acked_pkts = ts->acked_pkts;
		tp->ce_pkts = qp->cc.path[i].ce_total;
		tp->rx_pkts = qp->cc.path[i].rx_total;
		tp->timeouts = ts->timeouts;
	}
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&t->seq, t->seq + 1, __ATOMIC_RELEASE); /* even */
}

static uint32_t sat32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

void xr_telem_publish_dev(struct xroce_device *dev)
{
	struct xr_telem_hdr *h = (struct xr_telem_hdr *)dev->mem;

	h->ctrl_malformed = sat32(dev->ctrl_bad);
	h->ctrl_unauth = sat32(dev->ctrl_unauth);
	h->ctrl_spoofed = sat32(dev->ctrl_spoofed);
	h->ctrl_no_room = sat32(dev->ctrl_dropped);
	h->ctrl_refused = sat32(dev->ctrl_refused);
	h->ctrl_cookies = sat32(dev->ctrl_cookies);
}
