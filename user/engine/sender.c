// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The sending side of a queue pair: packets and transmission.
 *
 * Work requests are cut into packets lazily, when windows allow: each
 * packet gets the connection's next CSN (its identity for good) and, at
 * every transmission, a path chosen by the congestion controller and that
 * path's next PSN.  CSNs declared lost (acks.c) wait in the retransmission
 * queue and are resent on whatever path is picked next.  Peers' READs are
 * answered here too: each becomes an internal work request whose packets
 * (READ_RESP) are sent and recovered like any others.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "device.h"
#include "emit.h"
#include "keys.h"
#include "mr.h"
#include "plane.h"
#include "qp_state.h"
#include "sender.h"
#include "stream.h"
#include "trace.h"
#include "xdptx.h"
#include "xsk.h"

#define XR_TX_BUDGET 64         /* packets per QP per progress round */

/* Transmit slots a packet of this QP may take: one descriptor or ring
 * slot, or (AF_XDP, jumbo) a header and payload pieces. */
static uint32_t slots_per_pkt(const struct xroce_qp *qp, const struct xr_plane *pl)
{
	if (pl->txr || qp->seg_max + 14 + 40 + 8 + sizeof(struct xr_data_hdr) <=
			       XR_PAGE_SIZE)
		return 1;
	return XR_XSK_MAX_SEGS;
}

/* ---- packet sources ---------------------------------------------------- */
/* A peer's READ becomes an internal work request once there is room. */
static void queue_read_answers(struct xroce_qp *qp)
{
	while (qp->rdq_head != qp->rdq_tail &&
	       qp->sq_tail - qp->sq_head < qp->sq_size) {
		struct xr_rdreq *q = &qp->rdq[qp->rdq_head++ % XR_RDQ];
		struct xr_stream *st = xr_stream_get(qp, q->stream);
		struct xr_swr *w = xr_swr_at(qp, qp->sq_tail);

		if (!st)
			break;
		xr_qp_release_wr(qp, w);
		memset(w, 0, sizeof(*w));
		w->kind = XR_WK_INTERNAL;
		w->opcode = XR_OP_READ_RESP;
		w->src_rkey = q->rkey;
		w->raddr = q->laddr;
		w->peer_read_id = q->read_id;
		w->len = q->len;
		w->nseg = q->len ? 1 : 0;
		w->seg1.loff = q->pos;
		w->seg1.len = q->len;
		w->stream = q->stream;
		w->ssn = st->tx_ssn++;
		w->msg_id = qp->next_msg_id++;
		w->npkts = w->len ? (w->len + qp->seg_max - 1) / qp->seg_max : 1;
		/* Checked again now: the region may have gone (or been
		 * replaced) since XDP let the READ in. */
		if (!xr_mr_readable(qp->pd, q->rkey, q->raddr, q->len, q->pos)) {
			w->fenced = 1;
			w->npkts = 1;
		}
		qp->sq_tail++;
	}
}

/* How far past sq_seg requests are considered for the next new packet. */
#define XR_SEG_LOOKAHEAD 64

/* The request to cut the next new packet from: among the first unfinished
 * request of each stream within the look-ahead, the one whose stream comes
 * next after the stream served last.  So streams take turns packet by
 * packet, and a large message on one stream does not hold back another
 * stream's (completions are per stream too).  Returns false if none. */
static bool next_new_wr(struct xroce_qp *qp, uint32_t *out)
{
	uint64_t seen[XROCE_MAX_STREAMS / 64];
	uint32_t i, end, best = 0, best_d = UINT32_MAX;

	end = qp->sq_tail - qp->sq_seg > XR_SEG_LOOKAHEAD ?
	      qp->sq_seg + XR_SEG_LOOKAHEAD : qp->sq_tail;
	/* Receivers track XR_MSG_SLOTS messages per connection. */
	if (end - qp->sq_head > XR_MSG_SLOTS)
		end = qp->sq_head + XR_MSG_SLOTS;
	memset(seen, 0, sizeof(seen));
	for (i = qp->sq_seg; i != end && i - qp->sq_seg < end - qp->sq_seg; i++) {
		struct xr_swr *w = xr_swr_at(qp, i);
		uint64_t bit = 1ull << (w->stream % 64);
		uint32_t d;

		if (w->nsent >= w->npkts || (seen[w->stream / 64] & bit))
			continue;
		seen[w->stream / 64] |= bit;
		d = (uint32_t)(w->stream - qp->seg_rr - 1) % XROCE_MAX_STREAMS;
		if (d < best_d) {
			best_d = d;
			best = i;
		}
	}
	if (best_d == UINT32_MAX)
		return false;
	*out = best;
	return true;
}

/* The next CSN to (re)send, without taking it; false if none. */
static bool peek_csn(struct xroce_qp *qp, uint32_t *csn, bool *retx)
{
	while (qp->retx_head != qp->retx_tail) {
		uint32_t c = qp->retx[qp->retx_head & (qp->pk_win - 1)];
		struct xr_pk *pk = xr_pk_at(qp, c);

		if (xr_csn_in_flight(qp, c) && pk->state == XR_PK_INFLIGHT && !pk->rnr) {
			*csn = c;
			*retx = true;
			return true;
		}
		pk->queued = 0; /* acknowledged (or parked) meanwhile */
		qp->retx_head++;
	}
	if (qp->csn_next - qp->csn_una >= qp->pk_win || qp->sq_seg == qp->sq_tail)
		return false;
	if (!next_new_wr(qp, &qp->seg_next))
		return false;
	*csn = qp->csn_next;
	*retx = false;
	return true;
}

/* Take the CSN peek_csn returned. */
static struct xr_pk *take_csn(struct xroce_qp *qp, uint32_t csn, bool retx)
{
	struct xr_pk *pk = xr_pk_at(qp, csn);
	struct xr_swr *w;

	if (retx) {
		qp->retx_head++;
		pk->queued = 0;
		return pk;
	}
	w = xr_swr_at(qp, qp->seg_next);
	pk->wr = qp->seg_next;
	pk->off = w->seg_off;
	pk->len = w->len - w->seg_off < qp->seg_max ? w->len - w->seg_off : qp->seg_max;
	if (w->fenced)
		pk->len = 0; /* "cannot answer" carries nothing */
	pk->state = XR_PK_INFLIGHT;
	pk->queued = 0;
	pk->rnr = 0;
	pk->ntx = 0;
	w->seg_off += pk->len;
	w->nsent++;
	qp->seg_rr = w->stream;
	if (qp->seg_next - qp->sq_seg >= qp->sq_hi - qp->sq_seg)
		qp->sq_hi = qp->seg_next + 1;
	while (qp->sq_seg != qp->sq_hi &&
	       xr_swr_at(qp, qp->sq_seg)->nsent >= xr_swr_at(qp, qp->sq_seg)->npkts)
		qp->sq_seg++;
	qp->csn_next++;
	return pk;
}

void xr_qp_queue_retx(struct xroce_qp *qp, uint32_t csn)
{
	struct xr_pk *pk;

	if (!xr_csn_in_flight(qp, csn))
		return;
	pk = xr_pk_at(qp, csn);
	if (pk->state != XR_PK_INFLIGHT || pk->queued || pk->rnr)
		return;
	pk->queued = 1;
	qp->retx[qp->retx_tail++ & (qp->pk_win - 1)] = csn;
}

void xr_qp_pkt_acked(struct xroce_qp *qp, uint32_t csn)
{
	struct xr_pk *pk;

	if (!xr_csn_in_flight(qp, csn))
		return;
	pk = xr_pk_at(qp, csn);
	if (pk->state != XR_PK_INFLIGHT)
		return;
	pk->state = XR_PK_ACKED;
	xr_swr_at(qp, pk->wr)->nacked++;
	if (__builtin_expect(qp->dev->trace != NULL, 0))
		xr_trace_acked(qp->dev, qp->conn_id, xr_swr_at(qp, pk->wr)->msg_id, csn);
	qp->st.acked_bytes += pk->len;
	qp->complete_dirty = true;
	while (qp->csn_una != qp->csn_next &&
	       xr_pk_at(qp, qp->csn_una)->state == XR_PK_ACKED) {
		xr_pk_at(qp, qp->csn_una)->state = XR_PK_FREE;
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
		xr_qp_pkt_acked(qp, c);
}

/* ---- transmission ------------------------------------------------------ */
static int gather(struct xroce_qp *qp, const struct xr_swr *w, uint32_t off,
		  uint32_t len, struct xr_iov *iov, int max)
{
	const struct xr_seg *segs = w->nseg > 1 ? w->segs : &w->seg1;
	uint32_t i, n = 0;

	for (i = 0; i < w->nseg && len; i++) {
		uint32_t take;

		if (off >= segs[i].len) {
			off -= segs[i].len;
			continue;
		}
		if ((int)n == max)
			return -1;
		take = segs[i].len - off < len ? segs[i].len - off : len;
		iov[n].base = qp->dev->mem + segs[i].loff + off;
		iov[n].len = take;
		n++;
		len -= take;
		off = 0;
	}
	return len ? -1 : (int)n;
}

/* Are fewer than n packets of the queued work still to be cut (this one
 * taken)?  The work after a large message is often a small one (a SEND
 * that announces it), so the message's own tail is not enough to know. */
static bool few_packets_left(const struct xroce_qp *qp, uint32_t n)
{
	uint32_t i, k = 0, left = 0;

	for (i = qp->sq_seg; i != qp->sq_tail; i++) {
		const struct xr_swr *w = &qp->sq[i & (qp->sq_size - 1)];

		left += w->npkts - w->nsent;
		/* Many requests in turn (streams) mean work enough too. */
		if (left >= n || ++k >= XR_SEG_LOOKAHEAD)
			return false;
	}
	return true;
}

static int send_packet(struct xroce_qp *qp, int pi, uint32_t csn,
		       struct xr_pk *pk, uint64_t now, bool dup)
{
	struct xroce_device *dev = qp->dev;
	struct xr_qpath *p = &qp->path[pi];
	struct xr_plane *pl = &dev->plane[p->plane];
	struct xr_swr *w = xr_swr_at(qp, pk->wr);
	struct xr_iov iov[XROCE_MAX_SGE];
	struct xr_read_req rr;
	struct xr_data_hdr h;
	uint32_t psn;
	int rc, niov;

	if (w->opcode == XR_OP_READ_REQ) {
		rr.laddr = htobe64((uint64_t)(uintptr_t)(dev->mem + w->read_loff));
		rr.len = htonl(w->read_len);
		rr.read_id = htonl(w->read_id);
		iov[0].base = &rr;
		iov[0].len = sizeof(rr);
		niov = 1;
	} else if (w->fenced) {
		niov = 0; /* also when resending a CSN that carried data */
	} else {
		niov = gather(qp, w, pk->off, pk->len, iov, XROCE_MAX_SGE);
		if (niov < 0)
			return -EINVAL; /* cannot happen: segments cover w->len */
	}
	/* Room on the engine first: the PSN below is spent once taken. */
	if (!pl->txr && !pl->nfree) {
		xr_plane_reap(pl);
		if (!pl->nfree)
			return -ENOSPC;
	}
	rc = xr_txpath_send(&p->tp, csn, pk->len, now, &psn);
	if (rc)
		return rc;
	memset(&h, 0, sizeof(h));
	h.ver_type = XR_VER_TYPE(XR_T_DATA);
	/* PROTOCOL.md 7.3.  A packet that asks for nothing is acknowledged
	 * by the next on its path; the tail of the last queued work has none
	 * (its last npaths packets are sprayed over every path).  A sender
	 * held up between two packets (descheduled, or in a system call) has
	 * its timers held meanwhile (progress.c, XR_ABSENT_NS). */
	if (xr_cc_ack_wanted(&qp->cc, pi, psn, pk->ntx > 0,
			     few_packets_left(qp, qp->npaths), now))
		h.flags |= XR_DF_AR;
	if (pk->off + pk->len == w->len)
		h.flags |= XR_DF_LAST;
	if (dup)
		h.flags |= XR_DF_DUP;
	else if (pk->ntx)
		h.flags |= XR_DF_RETX;
	h.opcode = w->opcode;
	h.path = (uint8_t)pi;
	h.dst_conn = htonl(qp->peer_conn);
	h.token = htobe64(qp->tx_token);
	h.psn = htonl(psn);
	h.psn_base = htonl(xr_txpath_base(&p->tp));
	h.csn = htonl(csn);
	h.ts = htonl((uint32_t)now);
	h.raddr = htobe64(w->raddr ? w->raddr + pk->off : 0);
	h.rkey = htonl(w->rkey);
	h.msg_id = htonl(w->msg_id);
	h.msg_len = htonl(w->len);
	h.msg_off = htonl(pk->off);
	h.imm = htonl(w->imm);
	if (w->fenced) {
		h.flags |= XR_DF_ERR;
		h.imm = htonl(XR_NAK_ACCESS);
	}
	h.stream = htons(w->stream);
	h.ssn = htons(w->ssn);
	xr_keys_sign_data(qp, &h);
	if (__builtin_expect(dev->trace != NULL, 0) && !dup && !pk->ntx)
		xr_trace_pkt(dev, qp->conn_id, w->msg_id, csn);
	rc = xr_emit(dev, pl, &p->tmpl, &h, sizeof(h), iov, niov);
	if (rc) {
		/* Cannot happen: the caller checked for room.  The PSN is then
		 * lost like a dropped packet and recovered the same way. */
		return rc;
	}
	qp->timer_due = 0; /* a new PSN in flight: deadlines move */
	xr_cc_on_send(&qp->cc, pi, now);
	if (dup) {
		qp->st.dup_pkts++;
	} else if (pk->ntx) {
		p->retx_pkts++;
		qp->st.retx_pkts++;
		qp->st.retx_bytes += pk->len;
	}
	if (pk->ntx < UINT8_MAX)
		pk->ntx++;
	qp->st.tx_pkts++;
	qp->st.tx_bytes += pk->len;
	return 0;
}

bool xr_qp_has_tx_work(const struct xroce_qp *qp)
{
	/* A keyed stream at the end of its key epoch waits for the peer
	 * (keys.c probes it). */
	if (qp->state != XROCE_QPS_RTS || xr_keys_blocked(qp))
		return false;
	if (qp->retx_head != qp->retx_tail)
		return true;
	/* A peer's READ waiting to become an answer (xr_qp_transmit queues
	 * it): without this, a responder with nothing else to send would
	 * never answer. */
	if (qp->rdq_head != qp->rdq_tail && qp->sq_tail - qp->sq_head < qp->sq_size)
		return true;
	return qp->sq_seg != qp->sq_tail &&
	       qp->csn_next - qp->csn_una < qp->pk_win &&
	       qp->sq_seg - qp->sq_head < XR_MSG_SLOTS;
}

uint64_t xr_qp_tx_ready(struct xroce_qp *qp, uint64_t now)
{
	uint64_t t;
	int pi;

	if (!xr_qp_has_tx_work(qp))
		return UINT64_MAX;
	t = xr_cc_next_send_ns(&qp->cc, now);
	if (t > now)
		return t;               /* pacing: sleep until then */
	pi = xr_cc_pick_path(&qp->cc, now);
	if (pi < 0)
		return UINT64_MAX;      /* windows full: the next ACK wakes us */
	return 0;
}

/* Redundant copies of small messages (XROCE_QP_NO_REDUNDANT turns them
 * off): a one-packet message whose connection has at most
 * XR_REDUNDANT_INFLIGHT packets in flight is latency-bound, and its loss
 * would wait for the tail-loss probe (3 srtt, docs/PROTOCOL.md 10.4a) at
 * best.  Sending it on a second path as well makes a single loss free, for
 * twice the packets of such messages only.  Messages of two packets or
 * more are not copied: measured on the pair fabric, copying the three
 * packets of a 4 KiB round trip cost more (a 7 us higher median, p99
 * 120-160 against 80-94 us, loss-free and at 1% loss) than the probe's
 * repair of their losses.  The receiver places a CSN once (the copy is
 * acknowledged as a duplicate).  Opcodes whose refusal has side effects at
 * the sender (SEND and its RNR retries) are not copied. */
#define XR_REDUNDANT_INFLIGHT 16u

static bool redundant_ok(const struct xroce_qp *qp, const struct xr_pk *pk)
{
	const struct xr_swr *w = &qp->sq[pk->wr & (qp->sq_size - 1)];

	if ((qp->flags & XROCE_QP_NO_REDUNDANT) || qp->npaths < 2 ||
	    pk->off || pk->len != w->len ||   /* one packet: all of it */
	    qp->csn_next - qp->csn_una > XR_REDUNDANT_INFLIGHT)
		return false;
	return w->opcode == XR_OP_WRITE || w->opcode == XR_OP_WRITE_IMM ||
	       w->opcode == XR_OP_READ_REQ || w->opcode == XR_OP_READ_RESP;
}

/* The copy, on another path with room (none: no copy). */
static void send_copy(struct xroce_qp *qp, int first, uint32_t csn,
		      struct xr_pk *pk, uint64_t now)
{
	struct xr_plane *pl;
	int pi = xr_cc_pick_other_path(&qp->cc, first);

	if (pi < 0)
		return;
	pl = &qp->dev->plane[qp->path[pi].plane];
	if (xr_plane_tx_room(pl) < slots_per_pkt(qp, pl))
		return;
	send_packet(qp, pi, csn, pk, now, true);
}

int xr_qp_transmit(struct xroce_qp *qp)
{
	uint64_t now = qp->dev->now_ns;
	int n = 0;

	if (qp->state != XROCE_QPS_RTS)
		return 0;
	queue_read_answers(qp);
	while (n < XR_TX_BUDGET) {
		struct xr_plane *pl;
		struct xr_pk *pk;
		uint32_t csn;
		bool retx;
		int pi;

		if (xr_keys_blocked(qp) || !peek_csn(qp, &csn, &retx))
			break;
		if (xr_cc_next_send_ns(&qp->cc, now) > now)
			break;
		pi = xr_cc_pick_path(&qp->cc, now);
		if (pi < 0)
			break;
		pl = &qp->dev->plane[qp->path[pi].plane];
		if (xr_plane_tx_room(pl) < slots_per_pkt(qp, pl)) {
			/* AF_XDP: completions free slots; test run: sending
			 * the queued descriptors empties the ring. */
			if (pl->txr) {
				if (qp->dev->trace)
					xr_trace_kick(qp->dev, qp->path[pi].plane);
				xr_plane_kick(pl);
			} else {
				xr_plane_reap(pl);
			}
			if (xr_plane_tx_room(pl) < slots_per_pkt(qp, pl))
				break;
		}
		pk = take_csn(qp, csn, retx);
		if (send_packet(qp, pi, csn, pk, now, false)) {
			/* No frame or slot after all: resend it later. */
			xr_qp_queue_retx(qp, csn);
			break;
		}
		n++;
		if (!retx && redundant_ok(qp, pk))
			send_copy(qp, pi, csn, pk, now);
	}
	return n;
}

int xr_qp_send_tail_probe(struct xroce_qp *qp, int pi, uint64_t now)
{
	const struct xr_txpath *tp = &qp->path[pi].tp;
	struct xr_plane *pl = &qp->dev->plane[qp->path[pi].plane];
	uint32_t psn;

	xr_cc_tail_probe_sent(&qp->cc, pi);
	if (xr_keys_blocked(qp) || xr_plane_tx_room(pl) < slots_per_pkt(qp, pl))
		return -ENOSPC;
	/* Its ACK covers every PSN of the path before it: those lost show
	 * as a gap; if it was the newest one that was lost, the copy brings
	 * its content, and the gap rule's retransmission of it is skipped
	 * (acknowledged first, acks.c). */
	for (psn = tp->next_psn; psn != tp->base_psn;) {
		uint32_t csn = xr_txpath_csn_of(tp, --psn);

		if (xr_csn_in_flight(qp, csn) &&
		    xr_pk_at(qp, csn)->state == XR_PK_INFLIGHT)
			return send_packet(qp, pi, csn, xr_pk_at(qp, csn), now, true);
	}
	return 0;
}

int xr_qp_send_probe(struct xroce_qp *qp, int pi, uint64_t now)
{
	struct xr_qpath *p = &qp->path[pi];
	struct xr_plane *pl = &qp->dev->plane[p->plane];
	struct xr_probe_hdr h;

	if (!xr_plane_tx_room(pl))
		return -ENOSPC;
	memset(&h, 0, sizeof(h));
	h.ver_type = XR_VER_TYPE(XR_T_PROBE);
	h.path = (uint8_t)pi;
	h.dst_conn = htonl(qp->peer_conn);
	h.token = htobe64(qp->tx_token);
	h.seq = htonl(xr_cc_probe_sent(&qp->cc, pi, now));
	h.ts = htonl((uint32_t)now);
	xr_keys_sign_probe(qp, &h);
	if (xr_emit(qp->dev, pl, &p->tmpl, &h, sizeof(h), NULL, 0))
		return -ENOSPC;
	qp->timer_due = 0;
	return 0;
}
