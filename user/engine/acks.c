// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What comes back to a sender: ACK and NAK records from XDP feed each
 * path's loss detector (txpath.c) and the congestion controller (cc.c);
 * CSNs declared lost go to the retransmission queue (sender.c).  NAKs
 * fail their work request, except "receiver not ready", which parks the
 * packet and retries it after a doubling delay.  Timers: retransmission
 * timeouts, probes of failing paths, and the peer-silence limit.  Work
 * requests complete in order within a stream, independently across
 * streams.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "acks.h"
#include "device.h"
#include "keepalive.h"
#include "keys.h"
#include "paths.h"
#include "qp_state.h"
#include "sender.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunknown-pragmas"
#include "contract/rxwin.h"
#pragma GCC diagnostic pop

/* skip_csn: a CSN the path delivered but the peer refused (NAK): resolved
 * for the path, not acknowledged for the connection. */
static void apply_result_skip(struct xroce_qp *qp, int pi,
			      const struct xr_ack_result *res, bool timeout,
			      bool skip, uint32_t skip_csn)
{
	uint32_t i;

	for (i = 0; i < res->nacked; i++)
		if (!skip || res->acked[i].csn != skip_csn)
			xr_qp_pkt_acked(qp, res->acked[i].csn);
	for (i = 0; i < res->nlost; i++) {
		xr_qp_queue_retx(qp, res->lost[i].csn);
		if (timeout) {
			qp->path[pi].timeout_retx++;
			qp->st.timeout_retx++;
		} else {
			qp->path[pi].fast_retx++;
			qp->st.fast_retx++;
		}
	}
	/* Never back: a packet parked by "receiver not ready" holds the
	 * clock at its due time (handle_rnr), later than now. */
	if (res->nacked && qp->dev->now_ns > qp->last_progress_ns)
		qp->last_progress_ns = qp->dev->now_ns;
}

static void apply_result(struct xroce_qp *qp, int pi,
			 const struct xr_ack_result *res, bool timeout)
{
	apply_result_skip(qp, pi, res, timeout, false, 0);
}

/* The receiver records a refused packet nowhere, so its NAK shows a gap at
 * that PSN; but the path did deliver it.  Show the path's loss detector
 * what the path did, by applying the receiver's own window rule to the
 * refused PSN: it arrived (so a refusal never looks like loss or makes a
 * healthy path suspect). */
static void nak_view(struct xr_ack_view *v)
{
	struct xr_rx_path p;

	memset(&p, 0, sizeof(p));
	p.cack = v->cack;
	memcpy(p.sack, v->sack, sizeof(p.sack));
	if (xr_rxw_accept(&p, v->ack_psn) != XR_RXW_NEW)
		return;
	v->cack = p.cack;
	memcpy(v->sack, p.sack, sizeof(v->sack));
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
			/* A new entropy, distinct from the other paths'. */
			p->sport = xr_qp_pick_sport(qp, i);
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

/* The end of the wait a refused packet of the same work request is in
 * already, or 0.  A request's packets are refused together (every packet
 * in flight when the receiver was not ready): that is one round, one retry,
 * not one retry per packet. */
static uint64_t rnr_round_due(struct xroce_qp *qp, const struct xr_pk *pk)
{
	uint32_t i;

	for (i = qp->rnr_head; i != qp->rnr_tail; i++) {
		uint32_t k = i & (qp->pk_win - 1), c = qp->rnr[k];
		const struct xr_pk *o;

		if (!xr_csn_in_flight(qp, c))
			continue;
		o = xr_pk_at(qp, c);
		if (o->rnr && o->wr == pk->wr)
			return qp->rnr_due[k];
	}
	return 0;
}

/* Receiver not ready: park the packet, resend it later, up to rnr_retry
 * rounds per work request. */
static void handle_rnr(struct xroce_qp *qp, uint32_t csn, struct xr_pk *pk,
		       struct xr_swr *w)
{
	uint64_t due;

	if (pk->rnr)
		return; /* already parked (another copy was refused too) */
	due = rnr_round_due(qp, pk);
	if (!due) {
		if (w->rnr_count >= qp->rnr_retry) {
			w->failed = 1;
			w->status = XROCE_WC_RNR_RETRY_EXC_ERR;
			qp->complete_dirty = true;
			xr_log(&qp->dev->log, XROCE_LOG_WARN, "qp %u: receiver not "
			       "ready %u times for work request %llu", qp->conn_id,
			       w->rnr_count + 1, (unsigned long long)w->wr_id);
			return;
		}
		if (w->rnr_count < UINT32_MAX)
			w->rnr_count++;
		due = qp->dev->now_ns + (qp->rnr_timer_ns <<
			(w->rnr_count - 1 < XR_RNR_MAX_SHIFT ? w->rnr_count - 1 :
			 XR_RNR_MAX_SHIFT));
	}
	if (qp->rnr_tail - qp->rnr_head >= qp->pk_win) {
		/* Cannot happen: at most one entry per packet in flight. */
		xr_qp_queue_retx(qp, csn);
		return;
	}
	pk->rnr = 1;
	qp->rnr[qp->rnr_tail & (qp->pk_win - 1)] = csn;
	qp->rnr_due[qp->rnr_tail & (qp->pk_win - 1)] = due;
	qp->rnr_tail++;
	/* Waiting on the receiver is progress of a kind: not a dead peer. */
	if (due > qp->last_progress_ns)
		qp->last_progress_ns = due;
}

static void handle_nak(struct xroce_qp *qp, const struct xr_evt *e)
{
	uint32_t csn = e->ack.nak_csn;
	struct xr_swr *w;
	struct xr_pk *pk;

	if (!xr_csn_in_flight(qp, csn))
		return;
	pk = xr_pk_at(qp, csn);
	if (pk->state != XR_PK_INFLIGHT)
		return;
	w = xr_swr_at(qp, pk->wr);
	if (w->failed)
		return;
	if (e->ack.reason == XR_NAK_RNR) {
		handle_rnr(qp, csn, pk, w);
		return;
	}
	w->failed = 1;
	w->status = (uint8_t)nak_status(e->ack.reason);
	qp->complete_dirty = true;
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
	qp->timer_due = 0; /* acknowledgements move deadlines */
	if (e->type == XR_EVT_NAK)
		handle_nak(qp, e);
	xr_ack_view_from_evt(&v, e);
	if (e->type == XR_EVT_NAK)
		nak_view(&v);
	xr_txpath_on_ack(&qp->path[pi].tp, &v, now, res);
	xr_cc_on_ack(&qp->cc, pi, &v, res, &qp->path[pi].tp, now);
	apply_result_skip(qp, pi, res, false, e->type == XR_EVT_NAK, e->ack.nak_csn);
	xr_keys_on_answer(qp, e->flags, e->ack.key_epoch, XR_AF_KNEXT);
	if (v.rate_hint)
		qp->rate_hint = v.rate_hint;
	handle_cc_events(qp);
}

void xr_qp_on_probe_reply(struct xroce_qp *qp, const struct xr_evt *e)
{
	if (qp->state != XROCE_QPS_RTS || e->path >= qp->npaths)
		return;
	qp->timer_due = 0;
	xr_keys_on_answer(qp, e->flags, e->probe.key_epoch, XR_PF_KNEXT);
	xr_cc_on_probe_reply(&qp->cc, e->path, e->probe.seq, e->probe.rate_hint,
			     qp->dev->now_ns);
	handle_cc_events(qp);
}

/* Every packet we sent is acknowledged, so what is outstanding waits for
 * the peer's READ answers: does the peer still send us data?  Its XDP
 * program stamps the connection's receive state on every DATA packet.
 * Read from the map only when a deadline has passed. */
static bool peer_sending(const struct xroce_qp *qp, uint64_t now)
{
	struct xr_rx_state rx;

	if (qp->csn_una != qp->csn_next || qp->sq_head == qp->sq_tail)
		return false;
	if (bpf_map_lookup_elem(qp->dev->maps.rx, &qp->conn_id, &rx))
		return false;
	/* (now is when this progress round began: data may be younger.) */
	return rx.last_rx_ns + (uint64_t)qp->timeout_ms * 1000000ull > now;
}

/* Packets parked by "receiver not ready" whose wait is over, wherever
 * they are in the ring: waits of different requests (and streams) differ,
 * and one request's long backoff must not hold back another's retry.  The
 * ring is compacted as it goes, keeping its order.  Returns the earliest
 * wait still running (UINT64_MAX if none). */
static uint64_t rnr_retries(struct xroce_qp *qp, uint64_t now)
{
	uint32_t k, keep = qp->rnr_head, m = qp->pk_win - 1;
	uint64_t next = UINT64_MAX;

	for (k = qp->rnr_head; k != qp->rnr_tail; k++) {
		uint32_t csn = qp->rnr[k & m];
		uint64_t due = qp->rnr_due[k & m];

		if (due > now) {
			if (due < next)
				next = due;
			qp->rnr[keep & m] = csn;
			qp->rnr_due[keep & m] = due;
			keep++;
			continue;
		}
		if (xr_csn_in_flight(qp, csn)) {
			xr_pk_at(qp, csn)->rnr = 0;
			xr_qp_queue_retx(qp, csn);
		}
	}
	qp->rnr_tail = keep;
	return next;
}

/* Path pi's probes that are due: the probe of a path out of service
 * (PROBE, answered by XDP) and the tail-loss probe of a silent one (a
 * copy of its newest packet).  Returns when the next one is due. */
static uint64_t path_probes(struct xroce_qp *qp, int pi, uint64_t now)
{
	uint64_t a, b;

	if (xr_cc_probe_due(&qp->cc, pi) <= now)
		xr_qp_send_probe(qp, pi, now);
	if (xr_cc_tail_probe_at(&qp->cc, pi) <= now)
		xr_qp_send_tail_probe(qp, pi, now);
	a = xr_cc_probe_due(&qp->cc, pi);
	b = xr_cc_tail_probe_at(&qp->cc, pi);
	return a < b ? a : b;
}

uint64_t xr_qp_timers(struct xroce_qp *qp)
{
	struct xr_ack_result *res = &qp->dev->res;
	uint64_t now = qp->dev->now_ns, next = UINT64_MAX, dl;
	uint32_t i;
	int kpath;

	if (qp->state != XROCE_QPS_RTS)
		return UINT64_MAX;
	for (i = 0; i < qp->npaths; i++) {
		struct xr_txpath *tp = &qp->path[i].tp;

		dl = xr_txpath_next_deadline(tp);
		if (dl < qp->dev->timer_hold_ns)
			dl = qp->dev->timer_hold_ns; /* see xr_progress */
		if (dl <= now && xr_txpath_on_timer(tp, now, res) > 0) {
			xr_cc_on_timeout(&qp->cc, (int)i, res, now);
			apply_result(qp, (int)i, res, true);
		}
		dl = xr_txpath_next_deadline(tp);
		if (dl < qp->dev->timer_hold_ns)
			dl = qp->dev->timer_hold_ns;
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
		dl = path_probes(qp, (int)i, now);
		if (dl < next)
			next = dl;
	}
	dl = rnr_retries(qp, now);
	if (dl < next)
		next = dl;
	kpath = xr_keys_probe(qp, now, &dl);
	if (kpath >= 0)
		xr_qp_send_probe(qp, kpath, now);
	if (dl < next)
		next = dl;
	dl = xr_qp_keepalive(qp, now);
	if (qp->state != XROCE_QPS_RTS)
		return UINT64_MAX;
	if (dl < next)
		next = dl;
	/* The peer is gone if nothing has been acknowledged for timeout_ms
	 * while work was outstanding. */
	if (qp->csn_una != qp->csn_next || qp->sq_head != qp->sq_tail) {
		dl = qp->last_progress_ns + (uint64_t)qp->timeout_ms * 1000000ull;
		if (now >= dl && peer_sending(qp, now)) {
			/* All we wait for are answers to our READs, and they are
			 * arriving: a large READ may take longer than timeout_ms. */
			qp->last_progress_ns = now;
			dl = now + (uint64_t)qp->timeout_ms * 1000000ull;
		}
		if (now >= dl) {
			char why[160];
			uint32_t c, n = 0, parked = 0, queued = 0;

			for (c = qp->csn_una; c != qp->csn_next; c++, n++) {
				const struct xr_pk *pk = xr_pk_at(qp, c);

				parked += pk->rnr;
				queued += pk->queued;
			}
			snprintf(why, sizeof(why), "no acknowledgement from the peer "
				 "for %u ms (%u packets unacknowledged: %u waiting "
				 "out receiver-not-ready, %u queued to resend)",
				 qp->timeout_ms, n, parked, queued);
			xr_qp_fail(qp, XROCE_WC_RETRY_EXC_ERR, why);
			return UINT64_MAX;
		}
		if (dl < next)
			next = dl;
	}
	return next;
}
