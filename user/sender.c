// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The sending side of a queue pair.
 *
 * Work requests are cut into packets lazily, when windows allow: each
 * packet gets the connection's next CSN (its identity for good) and, at
 * every transmission, a path chosen by the congestion controller and that
 * path's next PSN.  ACK records from XDP feed each path's loss detector
 * (txpath.c) and the congestion controller (cc.c); CSNs they declare lost
 * go to the retransmission queue and are resent on whatever path is picked
 * next.  A work request completes when all its packets are acknowledged,
 * in posting order.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "internal.h"
#include "nlroute.h"

#define XR_TX_BUDGET 64         /* packets per QP per progress round */
#define XR_ECN_ECT0 2

static inline struct xr_swr *swr(struct xroce_qp *qp, uint32_t idx)
{
	return &qp->sq[idx & (qp->sq_size - 1)];
}

static inline struct xr_pk *pkt(struct xroce_qp *qp, uint32_t csn)
{
	return &qp->pk[csn & (qp->pk_win - 1)];
}

static inline bool csn_in_flight(const struct xroce_qp *qp, uint32_t csn)
{
	return csn - qp->csn_una < qp->csn_next - qp->csn_una;
}

static uint16_t pick_sport(const struct xroce_qp *qp, uint32_t self)
{
	for (;;) {
		uint16_t s = (uint16_t)(XR_SPORT_LO + xr_random64() % XR_SPORT_N);
		uint32_t i;

		for (i = 0; i < qp->npaths; i++)
			if (i != self && qp->path[i].sport == s)
				break;
		if (i == qp->npaths)
			return s;
	}
}

int xr_qp_init_paths(struct xroce_qp *qp)
{
	struct xroce_device *dev = qp->dev;
	struct xr_nexthop nh[XR_MAX_PLANES];
	uint32_t nplanes = (uint32_t)dev->nplanes < qp->npeer ?
			   (uint32_t)dev->nplanes : qp->npeer;
	uint32_t mtu = qp->mtu, i, hdr;
	uint64_t now = xr_now_ns();
	struct xr_cc_cfg ccfg;
	char msg[160];
	int rc;

	for (i = 0; i < nplanes; i++) {
		const uint8_t *peer = qp->peer_addr[i];

		rc = xr_nl_resolve(dev->plane[i].ifindex, qp->family,
				   qp->family == AF_INET ? peer + 12 : peer, 1000,
				   &nh[i], msg, sizeof(msg));
		if (rc)
			return xr_fail(&dev->log, rc, "%s: cannot reach the peer: %s",
				       dev->plane[i].ifname, msg);
		if (!mtu || (uint32_t)nh[i].mtu < mtu)
			mtu = (uint32_t)nh[i].mtu;
	}
	qp->mtu = mtu;
	hdr = (qp->family == AF_INET6 ? 40 : 20) + 8 + sizeof(struct xr_data_hdr);
	if (mtu <= hdr + 64)
		return xr_fail(&dev->log, -EINVAL, "MTU %u too small", mtu);
	qp->seg_max = mtu - hdr;
	/* A transmit frame is one 4 KiB UMEM chunk. */
	if (qp->seg_max > XR_PAGE_SIZE - 14 - hdr)
		qp->seg_max = XR_PAGE_SIZE - 14 - hdr;
	xr_cc_cfg_default(&ccfg);
	ccfg.pkt_bytes = qp->seg_max;
	ccfg.conn_max_cwnd = qp->max_inflight;
	if (ccfg.conn_init_cwnd > ccfg.conn_max_cwnd)
		ccfg.conn_init_cwnd = ccfg.conn_max_cwnd;
	rc = xr_cc_init(&qp->cc, qp->npaths, &ccfg, now);
	if (rc)
		return xr_fail(&dev->log, rc, "congestion control init failed");
	for (i = 0; i < qp->npaths; i++) {
		struct xr_qpath *p = &qp->path[i];
		uint32_t pl = i % nplanes;
		uint8_t src[16];

		p->plane = (int)pl;
		p->sport = 0;
		p->sport = pick_sport(qp, i);
		if (qp->family == AF_INET)
			memcpy(src, dev->plane[pl].addr4, 4);
		else
			memcpy(src, dev->plane[pl].addr6, 16);
		xr_tmpl_init(&p->tmpl, dev->plane[pl].mac, nh[pl].dst_mac,
			     qp->family == AF_INET6, src,
			     qp->family == AF_INET ? qp->peer_addr[pl] + 12 :
						     qp->peer_addr[pl],
			     p->sport, qp->data_port, XR_ECN_ECT0);
		rc = xr_txpath_init(&p->tp, qp->init_psn, NULL);
		if (rc)
			return xr_fail(&dev->log, rc, "path init failed");
	}
	qp->csn_una = qp->csn_next = qp->init_csn;
	return 0;
}

/* ---- posting ---------------------------------------------------------- */
int xroce_post_send(struct xroce_qp *qp, struct xroce_send_wr *wr,
		    struct xroce_send_wr **bad_wr)
{
	struct xroce_device *dev;
	int rc = 0;

	if (bad_wr)
		*bad_wr = wr;
	if (!qp || !wr)
		return -EINVAL;
	dev = qp->dev;
	if (qp->state != XROCE_QPS_RTS)
		return xr_fail(&dev->log, -EINVAL, "xroce_post_send: qp %u is %s",
			       qp->conn_id, qp->state == XROCE_QPS_ERR ?
			       "in the error state" : "not connected");
	if (qp->sq_head == qp->sq_tail && qp->csn_una == qp->csn_next)
		qp->last_progress_ns = xr_now_ns(); /* idle until now */
	for (; wr; wr = wr->next) {
		struct xr_swr *w;
		uint64_t addr = 0;
		uint32_t len = 0;

		if (bad_wr)
			*bad_wr = wr;
		if (wr->opcode != XROCE_WR_RDMA_WRITE &&
		    wr->opcode != XROCE_WR_RDMA_WRITE_WITH_IMM) {
			rc = xr_fail(&dev->log, -EINVAL, "xroce_post_send: unsupported "
				     "opcode %d", wr->opcode);
			break;
		}
		if (wr->num_sge < 0 || wr->num_sge > XROCE_MAX_SGE ||
		    (wr->num_sge && !wr->sg_list)) {
			rc = xr_fail(&dev->log, -EINVAL, "xroce_post_send: num_sge "
				     "must be 0..%d with an sg_list", XROCE_MAX_SGE);
			break;
		}
		if (wr->send_flags & ~(unsigned int)XROCE_SEND_SIGNALED) {
			rc = xr_fail(&dev->log, -EINVAL, "xroce_post_send: unknown "
				     "send_flags %#x", wr->send_flags);
			break;
		}
		if (wr->num_sge) {
			addr = wr->sg_list[0].addr;
			len = wr->sg_list[0].length;
			if (!xr_mr_find(qp->pd, wr->sg_list[0].lkey, addr, len)) {
				rc = xr_fail(&dev->log, -EINVAL, "xroce_post_send: "
					     "[%#llx, +%u) is not inside a region of "
					     "this PD with lkey %#x",
					     (unsigned long long)addr, len,
					     wr->sg_list[0].lkey);
				break;
			}
		}
		if (qp->sq_tail - qp->sq_head >= qp->sq_size) {
			rc = xr_fail(&dev->log, -ENOMEM, "xroce_post_send: send "
				     "queue full (%u)", qp->sq_size);
			break;
		}
		w = swr(qp, qp->sq_tail);
		memset(w, 0, sizeof(*w));
		w->wr_id = wr->wr_id;
		w->loff = addr ? (uint64_t)((uint8_t *)(uintptr_t)addr - dev->mem) : 0;
		w->len = len;
		w->raddr = wr->rdma.remote_addr;
		w->rkey = wr->rdma.rkey;
		w->imm = wr->imm_data;
		w->opcode = wr->opcode == XROCE_WR_RDMA_WRITE ? XR_OP_WRITE :
							       XR_OP_WRITE_IMM;
		w->signaled = !!(wr->send_flags & XROCE_SEND_SIGNALED);
		w->msg_id = qp->next_msg_id++;
		w->npkts = len ? (len + qp->seg_max - 1) / qp->seg_max : 1;
		qp->sq_tail++;
	}
	if (rc == 0 && bad_wr)
		*bad_wr = NULL;
	xr_progress(dev);
	return rc;
}

/* ---- packet sources ---------------------------------------------------- */
/* The next CSN to (re)send, without taking it; false if none. */
static bool peek_csn(struct xroce_qp *qp, uint32_t *csn, bool *retx)
{
	while (qp->retx_head != qp->retx_tail) {
		uint32_t c = qp->retx[qp->retx_head & (qp->pk_win - 1)];
		struct xr_pk *pk = pkt(qp, c);

		if (csn_in_flight(qp, c) && pk->state == XR_PK_INFLIGHT) {
			*csn = c;
			*retx = true;
			return true;
		}
		pk->queued = 0; /* acknowledged meanwhile: nothing to resend */
		qp->retx_head++;
	}
	if (qp->csn_next - qp->csn_una >= qp->pk_win || qp->sq_seg == qp->sq_tail)
		return false;
	/* Receivers track XR_MSG_SLOTS messages per connection. */
	if (qp->sq_seg - qp->sq_head >= XR_MSG_SLOTS)
		return false;
	*csn = qp->csn_next;
	*retx = false;
	return true;
}

/* Take the CSN peek_csn returned. */
static struct xr_pk *take_csn(struct xroce_qp *qp, uint32_t csn, bool retx)
{
	struct xr_pk *pk = pkt(qp, csn);
	struct xr_swr *w;

	if (retx) {
		qp->retx_head++;
		pk->queued = 0;
		return pk;
	}
	w = swr(qp, qp->sq_seg);
	pk->wr = qp->sq_seg;
	pk->off = w->seg_off;
	pk->len = w->len - w->seg_off < qp->seg_max ? w->len - w->seg_off : qp->seg_max;
	pk->state = XR_PK_INFLIGHT;
	pk->queued = 0;
	pk->ntx = 0;
	w->seg_off += pk->len;
	if (++w->nsent == w->npkts)
		qp->sq_seg++;
	qp->csn_next++;
	return pk;
}

static void queue_retx(struct xroce_qp *qp, uint32_t csn)
{
	struct xr_pk *pk;

	if (!csn_in_flight(qp, csn))
		return;
	pk = pkt(qp, csn);
	if (pk->state != XR_PK_INFLIGHT || pk->queued)
		return;
	pk->queued = 1;
	qp->retx[qp->retx_tail++ & (qp->pk_win - 1)] = csn;
}

static void pkt_acked(struct xroce_qp *qp, uint32_t csn)
{
	struct xr_pk *pk;

	if (!csn_in_flight(qp, csn))
		return;
	pk = pkt(qp, csn);
	if (pk->state != XR_PK_INFLIGHT)
		return;
	pk->state = XR_PK_ACKED;
	swr(qp, pk->wr)->nacked++;
	qp->st.acked_bytes += pk->len;
	while (qp->csn_una != qp->csn_next &&
	       pkt(qp, qp->csn_una)->state == XR_PK_ACKED) {
		pkt(qp, qp->csn_una)->state = XR_PK_FREE;
		qp->csn_una++;
	}
}

void xr_qp_acked_below(struct xroce_qp *qp, uint32_t csn)
{
	uint32_t c, end;

	/* A point behind what is already acknowledged says nothing new (and
	 * must not be read as "everything", which unsigned distance would). */
	if (xr_seq_diff(csn, qp->csn_una) <= 0)
		return;
	end = xr_seq_diff(csn, qp->csn_next) < 0 ? csn : qp->csn_next;
	for (c = qp->csn_una; c != end; c++)
		pkt_acked(qp, c);
}

/* ---- transmission ------------------------------------------------------ */
static void frame_put(struct xr_plane *pl, uint64_t addr)
{
	pl->free_frames[pl->nfree++] = (uint32_t)((addr - pl->frame_base) /
						 XR_PAGE_SIZE);
}

static int send_packet(struct xroce_qp *qp, int pi, uint32_t csn,
		       struct xr_pk *pk, uint64_t now)
{
	struct xroce_device *dev = qp->dev;
	struct xr_qpath *p = &qp->path[pi];
	struct xr_plane *pl = &dev->plane[p->plane];
	struct xr_swr *w = swr(qp, pk->wr);
	struct xr_data_hdr h;
	uint64_t addr;
	uint32_t psn;
	size_t len;
	int rc;

	rc = xr_plane_frame_get(pl, &addr);
	if (rc)
		return rc;
	rc = xr_txpath_send(&p->tp, csn, pk->len, now, &psn);
	if (rc) {
		frame_put(pl, addr);
		return rc;
	}
	memset(&h, 0, sizeof(h));
	h.ver_type = XR_VER_TYPE(XR_T_DATA);
	/* Ask for an ACK on every other PSN of the path and whenever the
	 * path has little in flight (helps the last packets of a burst). */
	if ((psn & 1) || xr_txpath_inflight(&p->tp) <= 2 ||
	    pk->off + pk->len == w->len)
		h.flags |= XR_DF_AR;
	if (pk->off + pk->len == w->len)
		h.flags |= XR_DF_LAST;
	if (pk->ntx)
		h.flags |= XR_DF_RETX;
	h.opcode = w->opcode;
	h.path = (uint8_t)pi;
	h.dst_conn = htonl(qp->peer_conn);
	h.token = htobe64(qp->tx_token);
	h.psn = htonl(psn);
	h.psn_base = htonl(xr_txpath_base(&p->tp));
	h.csn = htonl(csn);
	h.ts = htonl((uint32_t)now);
	h.raddr = htobe64(w->raddr + pk->off);
	h.rkey = htonl(w->rkey);
	h.msg_id = htonl(w->msg_id);
	h.msg_len = htonl(w->len);
	h.msg_off = htonl(pk->off);
	h.imm = htonl(w->imm);
	len = xr_build_frame(dev->mem + addr, &p->tmpl, &h, sizeof(h),
			     dev->mem + w->loff + pk->off, pk->len);
	rc = xr_xsk_tx_push(pl->xsk, addr, (uint32_t)len);
	if (rc) {
		/* Cannot happen: the caller checked for a free slot.  The PSN is
		 * then lost like a dropped packet and recovered the same way. */
		frame_put(pl, addr);
		return rc;
	}
	pl->need_kick = true;
	xr_cc_on_send(&qp->cc, pi, now);
	if (pk->ntx) {
		p->retx_pkts++;
		qp->st.retx_pkts++;
		qp->st.retx_bytes += pk->len;
	}
	pk->ntx++;
	qp->st.tx_pkts++;
	qp->st.tx_bytes += pk->len;
	return 0;
}

bool xr_qp_has_tx_work(const struct xroce_qp *qp)
{
	if (qp->state != XROCE_QPS_RTS)
		return false;
	if (qp->retx_head != qp->retx_tail)
		return true;
	return qp->sq_seg != qp->sq_tail &&
	       qp->csn_next - qp->csn_una < qp->pk_win &&
	       qp->sq_seg - qp->sq_head < XR_MSG_SLOTS;
}

int xr_qp_transmit(struct xroce_qp *qp)
{
	uint64_t now = qp->dev->now_ns;
	int n = 0;

	if (qp->state != XROCE_QPS_RTS)
		return 0;
	while (n < XR_TX_BUDGET) {
		struct xr_plane *pl;
		struct xr_pk *pk;
		uint32_t csn;
		bool retx;
		int pi;

		if (!peek_csn(qp, &csn, &retx))
			break;
		if (xr_cc_next_send_ns(&qp->cc, now) > now)
			break;
		pi = xr_cc_pick_path(&qp->cc, now);
		if (pi < 0)
			break;
		pl = &qp->dev->plane[qp->path[pi].plane];
		if (!xr_xsk_tx_free_slots(pl->xsk)) {
			xr_plane_reap(pl);
			if (!xr_xsk_tx_free_slots(pl->xsk))
				break;
		}
		pk = take_csn(qp, csn, retx);
		if (send_packet(qp, pi, csn, pk, now)) {
			/* No frame or slot after all: resend it later. */
			queue_retx(qp, csn);
			break;
		}
		n++;
	}
	return n;
}

/* ---- acknowledgements ------------------------------------------------ */
static void apply_result(struct xroce_qp *qp, int pi,
			 const struct xr_ack_result *res, bool timeout)
{
	uint32_t i;

	for (i = 0; i < res->nacked; i++)
		pkt_acked(qp, res->acked[i].csn);
	for (i = 0; i < res->nlost; i++) {
		queue_retx(qp, res->lost[i].csn);
		if (timeout) {
			qp->path[pi].timeout_retx++;
			qp->st.timeout_retx++;
		} else {
			qp->path[pi].fast_retx++;
			qp->st.fast_retx++;
		}
	}
	if (res->nacked)
		qp->last_progress_ns = qp->dev->now_ns;
}

static void handle_cc_events(struct xroce_qp *qp)
{
	struct xr_ack_result *res = &qp->dev->res;
	uint32_t i;

	for (i = 0; i < qp->npaths; i++) {
		uint32_t ev = xr_cc_take_events(&qp->cc, (int)i);
		struct xr_qpath *p = &qp->path[i];

		if (!ev)
			continue;
		if (ev & XR_CC_EV_SUSPECT) {
			xr_txpath_abandon_all(&p->tp, res);
			xr_cc_on_abandon(&qp->cc, (int)i, res);
			apply_result(qp, (int)i, res, true);
			xr_log(&qp->dev->log, XROCE_LOG_INFO,
			       "qp %u path %u suspect: moved %u packets elsewhere",
			       qp->conn_id, i, res->nlost);
		}
		if (ev & XR_CC_EV_REROUTE) {
			p->sport = pick_sport(qp, i);
			xr_tmpl_set_sport(&p->tmpl, p->sport);
		}
		if (ev & XR_CC_EV_DOWN)
			xr_log(&qp->dev->log, XROCE_LOG_INFO, "qp %u path %u down",
			       qp->conn_id, i);
		if (ev & XR_CC_EV_RESTORED)
			xr_log(&qp->dev->log, XROCE_LOG_INFO,
			       "qp %u path %u back in service", qp->conn_id, i);
	}
}

static enum xroce_wc_status nak_status(uint8_t reason)
{
	switch (reason) {
	case XR_NAK_BAD_KEY:
	case XR_NAK_BOUNDS:
	case XR_NAK_ACCESS:
		return XROCE_WC_REM_ACCESS_ERR;
	default:
		return XROCE_WC_REM_INV_REQ_ERR;
	}
}

static void handle_nak(struct xroce_qp *qp, const struct xr_evt *e)
{
	uint32_t csn = e->ack.nak_csn;
	struct xr_swr *w;
	struct xr_pk *pk;

	if (!csn_in_flight(qp, csn))
		return;
	pk = pkt(qp, csn);
	if (pk->state != XR_PK_INFLIGHT)
		return;
	w = swr(qp, pk->wr);
	if (w->failed)
		return;
	w->failed = 1;
	w->status = (uint8_t)nak_status(e->ack.reason);
	xr_log(&qp->dev->log, XROCE_LOG_WARN,
	       "qp %u: the peer rejected work request %llu (NAK reason %u)",
	       qp->conn_id, (unsigned long long)w->wr_id, e->ack.reason);
}

void xr_qp_on_ack(struct xroce_qp *qp, const struct xr_evt *e)
{
	struct xr_ack_result *res = &qp->dev->res;
	uint64_t now = qp->dev->now_ns;
	struct xr_ack_view v;
	int pi = e->path;

	if (qp->state != XROCE_QPS_RTS)
		return;
	if (e->path >= qp->npaths) {
		qp->dev->evt_bad++;
		return;
	}
	if (e->type == XR_EVT_NAK)
		handle_nak(qp, e);
	xr_ack_view_from_evt(&v, e);
	xr_txpath_on_ack(&qp->path[pi].tp, &v, now, res);
	xr_cc_on_ack(&qp->cc, pi, &v, res, &qp->path[pi].tp, now);
	apply_result(qp, pi, res, false);
	if (v.rate_hint)
		qp->rate_hint = v.rate_hint;
	handle_cc_events(qp);
}

void xr_qp_on_probe_reply(struct xroce_qp *qp, const struct xr_evt *e)
{
	if (qp->state != XROCE_QPS_RTS || e->path >= qp->npaths)
		return;
	xr_cc_on_probe_reply(&qp->cc, e->path, e->probe.seq, e->probe.rate_hint,
			     qp->dev->now_ns);
	handle_cc_events(qp);
}

static void send_probe(struct xroce_qp *qp, int pi, uint64_t now)
{
	struct xr_qpath *p = &qp->path[pi];
	struct xr_plane *pl = &qp->dev->plane[p->plane];
	struct xr_probe_hdr h;
	uint64_t addr;
	size_t len;

	if (xr_plane_frame_get(pl, &addr))
		return;
	memset(&h, 0, sizeof(h));
	h.ver_type = XR_VER_TYPE(XR_T_PROBE);
	h.path = (uint8_t)pi;
	h.dst_conn = htonl(qp->peer_conn);
	h.token = htobe64(qp->tx_token);
	h.seq = htonl(xr_cc_probe_sent(&qp->cc, pi, now));
	h.ts = htonl((uint32_t)now);
	len = xr_build_frame(qp->dev->mem + addr, &p->tmpl, &h, sizeof(h), NULL, 0);
	if (xr_xsk_tx_push(pl->xsk, addr, (uint32_t)len)) {
		frame_put(pl, addr);
		return;
	}
	pl->need_kick = true;
}

uint64_t xr_qp_timers(struct xroce_qp *qp)
{
	struct xr_ack_result *res = &qp->dev->res;
	uint64_t now = qp->dev->now_ns, next = UINT64_MAX, dl;
	uint32_t i;

	if (qp->state != XROCE_QPS_RTS)
		return UINT64_MAX;
	for (i = 0; i < qp->npaths; i++) {
		struct xr_txpath *tp = &qp->path[i].tp;

		dl = xr_txpath_next_deadline(tp);
		if (dl <= now && xr_txpath_on_timer(tp, now, res) > 0) {
			xr_cc_on_timeout(&qp->cc, (int)i, res, now);
			apply_result(qp, (int)i, res, true);
		}
		dl = xr_txpath_next_deadline(tp);
		if (dl < next)
			next = dl;
	}
	dl = xr_cc_next_deadline(&qp->cc);
	if (dl <= now) {
		xr_cc_on_timer(&qp->cc, now);
		dl = xr_cc_next_deadline(&qp->cc);
	}
	if (dl < next)
		next = dl;
	handle_cc_events(qp);
	for (i = 0; i < qp->npaths; i++) {
		dl = xr_cc_probe_due(&qp->cc, (int)i);
		if (dl <= now) {
			send_probe(qp, (int)i, now);
			dl = xr_cc_probe_due(&qp->cc, (int)i);
		}
		if (dl < next)
			next = dl;
	}
	/* The peer is gone if nothing has been acknowledged for timeout_ms
	 * while work was outstanding. */
	if (qp->csn_una != qp->csn_next || qp->sq_head != qp->sq_tail) {
		dl = qp->last_progress_ns + (uint64_t)qp->timeout_ms * 1000000ull;
		if (now >= dl) {
			char why[96];

			snprintf(why, sizeof(why), "no acknowledgement from the peer "
				 "for %u ms", qp->timeout_ms);
			xr_qp_fail(qp, XROCE_WC_RETRY_EXC_ERR, why);
			return UINT64_MAX;
		}
		if (dl < next)
			next = dl;
	}
	return next;
}

/* ---- completions ------------------------------------------------------ */
void xr_qp_on_recv(struct xroce_qp *qp, const struct xr_evt *e)
{
	uint32_t msg = e->recv.msg_id, slot = msg % XR_MSG_SLOTS;
	struct xroce_wc *wc;

	if (msg - qp->rx_next_msg >= XR_MSG_SLOTS || qp->rx_have[slot]) {
		qp->dev->evt_bad++;
		xr_log(&qp->dev->log, XROCE_LOG_DEBUG, "qp %u: completion of message "
		       "%u ignored (expecting %u%s)", qp->conn_id, msg,
		       qp->rx_next_msg, qp->rx_have[slot] ? ", slot busy" : "");
		return;
	}
	wc = &qp->rx_pend[slot];
	memset(wc, 0, sizeof(*wc));
	wc->status = XROCE_WC_SUCCESS;
	wc->byte_len = e->recv.msg_len;
	wc->qp_num = qp->conn_id;
	wc->remote_addr_end = e->recv.raddr_end;
	if (e->recv.opcode == XR_OP_WRITE_IMM) {
		wc->opcode = XROCE_WC_RECV_RDMA_WITH_IMM;
		wc->imm_data = e->recv.imm;
		wc->wc_flags = XROCE_WC_WITH_IMM;
	} else {
		wc->opcode = XROCE_WC_RECV_RDMA_WRITE;
	}
	qp->rx_show[slot] = e->recv.opcode == XR_OP_WRITE_IMM ||
			    (qp->flags & XROCE_QP_NOTIFY_WRITES);
	qp->rx_have[slot] = 1;
}

void xr_qp_complete(struct xroce_qp *qp)
{
	/* Receive side, in message order. */
	for (;;) {
		uint32_t slot = qp->rx_next_msg % XR_MSG_SLOTS;

		if (!qp->rx_have[slot])
			break;
		if (qp->rx_show[slot] && xr_cq_push(qp->recv_cq, &qp->rx_pend[slot]))
			break;
		qp->rx_have[slot] = 0;
		qp->rx_next_msg++;
	}
	/* Send side, in posting order. */
	while (qp->sq_head != qp->sq_seg) {
		struct xr_swr *w = swr(qp, qp->sq_head);
		struct xroce_wc wc;

		if (w->failed) {
			xr_qp_fail(qp, (enum xroce_wc_status)w->status,
				   "the peer rejected a work request");
			return;
		}
		if (w->nacked < w->npkts)
			break;
		if (w->signaled) {
			memset(&wc, 0, sizeof(wc));
			wc.wr_id = w->wr_id;
			wc.status = XROCE_WC_SUCCESS;
			wc.opcode = XROCE_WC_RDMA_WRITE;
			wc.byte_len = w->len;
			wc.qp_num = qp->conn_id;
			if (xr_cq_push(qp->send_cq, &wc))
				break;
		}
		qp->sq_head++;
		qp->st.wr_completed++;
	}
}
