// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_events: libFuzzer harness for what XDP hands the library through
 * the event ring (struct xr_evt in abi.h: ACK / NAK / RECV / READ_REQ /
 * PROBE_REPLY records), whose fields come from the peer: cumulative PSNs,
 * SACK bitmaps, echoed timestamps, rate hints, path indexes, refused CSNs
 * and reasons, message ids, streams and sequence numbers, READ ids.
 *
 * Each input is one connection's life.  A header picks its shape (paths,
 * PSN/CSN start, MTU, in-flight limit, receiver-not-ready budget, peer
 * timeout), the connection is accepted from a simulated peer through the
 * control path, work is posted through the public API (WRITE,
 * WRITE_WITH_IMM, SEND, SEND_WITH_IMM, READ; receives), and the rest of the
 * input is a program of operations:
 *
 *   ACK, NAK      built from what is in flight on a path (the cumulative
 *                 PSN, SACK bits, the triggering PSN and its timestamp), each
 *                 field bent or replaced by input bytes
 *   RAW           any bytes as a record, of any length
 *   RECV, READ_REQ, PROBE_REPLY   the other records, near what the library
 *                 expects (next stream sequence numbers, our READ ids, the
 *                 current probe) or anywhere
 *   TIME          the virtual clock moves (1 us .. seconds): timers,
 *                 retransmission, probes, the peer-silence limit
 *   PROGRESS, POST, RECV_POST, NIC (transmit engine stalled / resumed)
 *
 * Records are queued and reach the library's own dispatch (progress.c)
 * when it next consumes its ring.  Nothing leaves the process (sim.h).
 *
 * After every operation: queue pair invariants (CSN window, queues,
 * per-path PSN windows <= 256, congestion windows within their bounds and
 * in-flight counts that agree with the paths), every completion checked
 * (known wr_id, once, in order per stream, right opcode/length/stream; a
 * success only if every packet of the request was claimed acknowledged by
 * some record, a READ's answer was reported, and no refusal hit it).  At
 * the end the QP is destroyed: every signaled request and every receive
 * completed exactly once, no transmit frame lost, no map entry left.
 */
#include <string.h>

#include "harness.h"
#include "xsk_loop.h"

#define MAX_OPS 4000

enum {
	OP_ACK, OP_ACK2, OP_NAK, OP_RAW, OP_RECV, OP_READ_REQ, OP_PROBE,
	OP_TIME, OP_TIME2, OP_PROGRESS, OP_POST, OP_POST_RECV, OP_NIC,
	OP_ACK_ALL, OP_N
};

/* Receiver-side counters a peer reports, per path (they only grow). */
static uint32_t rx_cnt[XR_MAX_PATHS], ce_cnt[XR_MAX_PATHS];

static void push(const struct xr_evt *e, size_t len)
{
	/* A full queue is a full ring: the library catches up first. */
	if (!sim_evt_push(e, len)) {
		xr_events_drain(H.dev);
		sim_evt_push(e, len);
	}
}

static uint32_t pick_rate(struct rd *r)
{
	uint8_t s = rd_u8(r);

	switch (s % 8) {
	case 0: return 100;
	case 1: return 10000;
	case 2: return 100000;
	case 3: return rd_u32(r);
	case 4: return 1;
	default: return 0;
	}
}

static void build_ack(struct xr_evt *e, struct rd *r, uint16_t type)
{
	struct xroce_qp *qp = L.qp;
	uint8_t sel = rd_u8(r), m = rd_u8(r), m2 = rd_u8(r);
	int p = sel % (int)qp->npaths;
	const struct xr_txpath *tp = &qp->path[p].tp;
	uint32_t base = tp->base_psn, next = tp->next_psn, infl = next - base;
	uint32_t cack, span, top;
	const struct h_tx *t;
	int w;

	memset(e, 0, sizeof(*e));
	e->type = type;
	e->path = (uint8_t)p;
	e->conn = qp->conn_id;
	if (sel & 0x80) /* beyond the paths, or any index */
		e->path = (uint8_t)(qp->npaths + (rd_u8(r) % 8));
	switch (m & 3) {
	case 0: cack = base + rd_u8(r) % (infl + 1); break;
	case 1: cack = next; break;
	case 2: cack = tp->hi_cack - rd_u8(r) % 8; break; /* stale */
	default: cack = rd_u32(r); break;
	}
	e->ack.cack = cack;
	span = xr_seq_diff(next, cack + 1) > 0 ? next - cack - 1 : 0;
	if (span > XR_SACK_BITS)
		span = XR_SACK_BITS;
	switch ((m >> 2) & 3) {
	case 0:
		break;
	case 1: /* random bits among the PSNs sent after cack */
		for (w = 0; w < XR_SACK_WORDS; w++) {
			uint64_t v = rd_u64(r);
			int lo = w * 64;

			if ((int)span <= lo)
				v = 0;
			else if ((int)span < lo + 64)
				v &= (1ull << (span - (uint32_t)lo)) - 1;
			e->ack.sack[w] = v;
		}
		break;
	case 2: /* one bit: the last one that arrived */
		if (span) {
			uint32_t b = rd_u8(r) % span;

			e->ack.sack[b / 64] = 1ull << (b % 64);
		}
		break;
	default:
		for (w = 0; w < XR_SACK_WORDS; w++)
			e->ack.sack[w] = rd_u64(r);
		break;
	}
	for (top = 0, w = XR_SACK_WORDS - 1; w >= 0; w--)
		if (e->ack.sack[w]) {
			top = (uint32_t)(w * 64 + 64 - __builtin_clzll(e->ack.sack[w]));
			break;
		}
	switch ((m >> 4) & 3) {
	case 0: e->ack.ack_psn = cack - 1; break;
	case 1: e->ack.ack_psn = cack + top; break;
	case 2: e->ack.ack_psn = base + rd_u8(r) % (infl + 1); break;
	default: e->ack.ack_psn = rd_u32(r); break;
	}
	t = h_tx_at(e->path, e->ack.ack_psn);
	e->ack.ts_echo = t ? t->ts : (uint32_t)sim.now;
	if (m & 0x40)
		e->ack.ts_echo += (uint32_t)(int8_t)rd_u8(r) * 997u;
	if (m & 0x80)
		e->rx_ns = rd_u64(r);
	else
		e->rx_ns = (m2 & 1) ? 0 : sim.now - (uint64_t)rd_u8(r) * 1000;
	e->flags = (uint8_t)((m2 >> 1) & 7);
	e->ack.rate_hint = pick_rate(r);
	if (m2 & 0x10) {
		e->ack.rx_pkts = rd_u32(r);
		e->ack.ce_pkts = rd_u32(r);
	} else if (e->path < XR_MAX_PATHS) {
		rx_cnt[e->path] += 1 + rd_u8(r) % 4;
		if (e->flags & XR_AF_ECE)
			ce_cnt[e->path]++;
		e->ack.rx_pkts = rx_cnt[e->path];
		e->ack.ce_pkts = ce_cnt[e->path];
	}
	e->ack.csn_cum = qp->csn_una + rd_u8(r) % 8;
	if (type == XR_EVT_NAK) {
		uint8_t k = rd_u8(r);

		e->ack.reason = (k & 1) ? XR_NAK_RNR : (uint8_t)((k >> 1) % 8);
		if (k & 0x20)
			e->ack.nak_csn = rd_u32(r);
		else if (k & 0x40)
			e->ack.nak_csn = qp->csn_una + rd_u8(r) % (qp->csn_next - qp->csn_una + 1);
		else
			e->ack.nak_csn = t ? t->csn : qp->csn_una;
	}
}

/* Everything sent on every path arrived, freshly stamped. */
static void ack_all(void)
{
	struct xroce_qp *qp = L.qp;
	struct xr_evt e;
	uint32_t i;

	for (i = 0; i < qp->npaths; i++) {
		const struct xr_txpath *tp = &qp->path[i].tp;
		const struct h_tx *t;

		if (tp->next_psn == tp->base_psn)
			continue;
		memset(&e, 0, sizeof(e));
		e.type = XR_EVT_ACK;
		e.path = (uint8_t)i;
		e.conn = qp->conn_id;
		e.ack.cack = tp->next_psn;
		e.ack.ack_psn = tp->next_psn - 1;
		t = h_tx_at((int)i, e.ack.ack_psn);
		e.ack.ts_echo = t ? t->ts : (uint32_t)sim.now;
		e.rx_ns = sim.now;
		rx_cnt[i] += tp->next_psn - tp->base_psn;
		e.ack.rx_pkts = rx_cnt[i];
		e.ack.ce_pkts = ce_cnt[i];
		e.ack.csn_cum = qp->csn_next;
		push(&e, sizeof(e));
	}
}

/* What a stuck connection looks like, printed before the check fails. */
static void dump_stuck(struct xroce_qp *qp)
{
	uint32_t i, c;

	fprintf(stderr, "stuck QP: now %llu, sq [%u %u %u %u), csn [%u, %u), retx [%u, %u), rnr [%u, %u), timer_due %llu, has_tx_work %d\n",
		(unsigned long long)sim.now, qp->sq_head, qp->sq_seg, qp->sq_hi, qp->sq_tail,
		qp->csn_una, qp->csn_next, qp->retx_head, qp->retx_tail,
		qp->rnr_head, qp->rnr_tail, (unsigned long long)qp->timer_due,
		xr_qp_has_tx_work(qp));
	for (c = qp->csn_una; c != qp->csn_next && c - qp->csn_una < 16; c++) {
		const struct xr_pk *pk = xr_pk_at(qp, c);
		const struct xr_swr *w = xr_swr_at(qp, pk->wr);

		fprintf(stderr, "  csn %u: wr %u state %u queued %u rnr %u ntx %u off %u len %u; wr op %u kind %u npkts %u nsent %u nacked %u rnr_until %llu rnr_count %u done %u\n",
			c, pk->wr, pk->state, pk->queued, pk->rnr, pk->ntx, pk->off, pk->len,
			w->opcode, w->kind, w->npkts, w->nsent, w->nacked,
			(unsigned long long)w->rnr_until, w->rnr_count, w->done);
	}
	{
		const struct xroce_qp *q;
		int inlist = 0;

		for (q = qp->dev->qps; q; q = q->next)
			inlist += q == qp;
		fprintf(stderr, "  dev: evt_unknown_conn %llu evt_bad %llu; qp state %d conn %u; in list %d, conn_tab %p (qp %p)\n",
			(unsigned long long)qp->dev->evt_unknown_conn,
			(unsigned long long)qp->dev->evt_bad, qp->state, qp->conn_id, inlist,
			qp->conn_id < qp->dev->conn_tab_size ? (void *)qp->dev->conn_tab[qp->conn_id] : NULL, (void *)qp);
	}
	for (i = 0; i < qp->npaths; i++) {
		const struct xr_txpath *tp = &qp->path[i].tp;
		const struct xr_cc_path *cp = &qp->cc.path[i];

		fprintf(stderr, "  path %u: psn [%u, %u) hi_cack %u late [%u, %u) state %u cwnd %.1f probe_sent %llu next %llu acks %llu bad %llu stale %llu; base slot psn %u tx_ns %llu rto %llu deadline %llu\n",
			i, tp->base_psn, tp->next_psn, tp->hi_cack, tp->late_lo, tp->late_hi,
			cp->state, cp->ctl.cwnd, (unsigned long long)cp->probe_sent_ns,
			(unsigned long long)cp->probe_next_ns, (unsigned long long)tp->st.acks,
			(unsigned long long)tp->st.bad_acks, (unsigned long long)tp->st.stale_acks,
			tp->ring[tp->base_psn % XR_TXPATH_WIN].psn,
			(unsigned long long)tp->ring[tp->base_psn % XR_TXPATH_WIN].tx_ns,
			(unsigned long long)xr_txpath_rto(tp),
			(unsigned long long)xr_txpath_next_deadline(tp));
	}
}

/* The wake-up time xr_progress returned must not be later than anything
 * that is due: a retransmission deadline of a path with packets in flight
 * (an application sleeping until then would otherwise leave a lost packet
 * unrepaired), or, after the application was away, the end of the grace
 * the timers then get (dev->timer_hold_ns). */
static void check_wakeup(const struct xroce_qp *qp, uint64_t next)
{
	uint32_t i;

	if (next == 0 || qp->state != XROCE_QPS_RTS)
		return;
	for (i = 0; i < qp->npaths; i++) {
		uint64_t dl = xr_txpath_next_deadline(&qp->path[i].tp);

		if (dl != UINT64_MAX && dl < qp->dev->timer_hold_ns)
			dl = qp->dev->timer_hold_ns;

		SIM_CHECK(dl == UINT64_MAX || next <= (dl > sim.now ? dl : sim.now),
			  "xr_progress asks to be called at %llu, path %u's deadline is %llu (now %llu)",
			  (unsigned long long)next, i, (unsigned long long)dl,
			  (unsigned long long)sim.now);
	}
}

/* A peer that does everything right: every packet acknowledged 50 us
 * after it left (fresh timestamps, no rate hint), every probe answered,
 * every READ of ours answered once its request went out.  A connection
 * still up must then finish all its work in bounded (virtual) time,
 * whatever the input did to it before: nothing may stay stuck. */
static void cooperate(struct xroce_qp *qp)
{
	uint64_t start = sim.now;
	int it;

	for (it = 0; it < 20000 && qp->state == XROCE_QPS_RTS; it++) {
		uint64_t next, send;
		uint32_t i;

		if (qp->sq_head == qp->sq_tail && qp->rdq_head == qp->rdq_tail)
			return;
		if (sim.now - start >= 300000000000ull)
			dump_stuck(qp);
		SIM_CHECK(sim.now - start < 300000000000ull, "work stuck for 300 s of "
			  "a perfect peer: send queue [%u, %u), CSNs [%u, %u), %u to "
			  "resend", qp->sq_head, qp->sq_tail, qp->csn_una, qp->csn_next,
			  qp->retx_tail - qp->retx_head);
		sim.now += 50000;
		ack_all();
		for (i = 0; i < qp->npaths; i++) {
			const struct xr_cc_path *cp = &qp->cc.path[i];
			struct xr_evt e;

			if (!cp->probe_sent_ns)
				continue;
			memset(&e, 0, sizeof(e));
			e.type = XR_EVT_PROBE_REPLY;
			e.conn = qp->conn_id;
			e.path = (uint8_t)i;
			e.probe.seq = cp->probe_seq;
			e.rx_ns = sim.now;
			push(&e, sizeof(e));
		}
		for (i = 0; i < L.nwr; i++) {
			struct h_wr *w = &L.wr[i];
			struct xr_evt e;

			if (w->kind != HW_READ || w->resp_seen || w->ncomp || !w->sent)
				continue;
			memset(&e, 0, sizeof(e));
			e.type = XR_EVT_RECV;
			e.conn = qp->conn_id;
			e.recv.opcode = XR_OP_READ_RESP;
			e.recv.rkey = w->read_id;
			e.recv.msg_len = w->len;
			e.recv.stream = w->stream;
			push(&e, sizeof(e));
		}
		next = xr_progress(H.dev);
		check_wakeup(qp, next);
		h_poll_check();
		h_check_qp(qp);
		/* Nothing to do before the next timer or the pacing allows the
		 * next packet: go there. */
		send = xr_qp_has_tx_work(qp) ? xr_cc_next_send_ns(&qp->cc, sim.now)
					     : UINT64_MAX;
		if (next == 0 || send < next)
			next = send;
		if (next != UINT64_MAX && next > sim.now + 50000)
			sim.now = next - 50000;
	}
	if (qp->state == XROCE_QPS_RTS)
		SIM_CHECK(qp->sq_head == qp->sq_tail, "work stuck with a perfect "
			  "peer: send queue [%u, %u), CSNs [%u, %u)", qp->sq_head,
			  qp->sq_tail, qp->csn_una, qp->csn_next);
}

static void build_recv(struct xr_evt *e, struct rd *r)
{
	static const uint8_t ops[8] = { XR_OP_WRITE, XR_OP_WRITE_IMM, XR_OP_SEND,
					XR_OP_SEND_IMM, XR_OP_READ_RESP,
					XR_OP_READ_RESP, XR_OP_SEND, 0 };
	struct xroce_qp *qp = L.qp;
	uint8_t m = rd_u8(r);
	uint16_t s = (uint16_t)(m & 0x80 ? rd_u16(r) : (m & 3));
	const struct xr_stream *st = s < XROCE_MAX_STREAMS ? qp->streams[s] : NULL;

	memset(e, 0, sizeof(*e));
	e->type = XR_EVT_RECV;
	e->conn = qp->conn_id;
	e->recv.stream = s;
	e->recv.opcode = ops[(m >> 2) & 7];
	if (!e->recv.opcode)
		e->recv.opcode = rd_u8(r);
	e->recv.ssn = (uint16_t)((st ? st->rx_ssn : 0) +
				 (m & 0x40 ? rd_u16(r) : rd_u8(r) % 4));
	e->recv.msg_len = m & 0x20 ? rd_u32(r) : rd_u16(r);
	e->recv.imm = rd_u32(r);
	e->recv.raddr_end = rd_u64(r);
	if (e->recv.opcode == XR_OP_READ_RESP) {
		uint8_t k = rd_u8(r);
		uint32_t i, n = 0;

		e->recv.rkey = rd_u32(r);
		for (i = 0; i < L.nwr; i++) /* the k-th of our READs */
			if (L.wr[i].kind == HW_READ && n++ == k % 8) {
				e->recv.rkey = L.wr[i].read_id;
				break;
			}
	} else {
		e->recv.rkey = (st ? st->rq_done : 0) + rd_u8(r) % 4;
	}
}

/* What XDP hands over for a peer's READ: it checked the key, the bounds and
 * the right, so pos and len lie in a REMOTE_READ region; the rest is the
 * peer's. */
static void build_read_req(struct xr_evt *e, struct rd *r)
{
	struct xroce_qp *qp = L.qp;
	uint8_t m = rd_u8(r);
	uint32_t len = m & 1 ? H_RREAD_BYTES : rd_u16(r) % (H_RREAD_BYTES + 1);
	uint32_t off = rd_u32(r) % (H_RREAD_BYTES - len + 1);

	memset(e, 0, sizeof(*e));
	e->type = XR_EVT_READ_REQ;
	e->conn = qp->conn_id;
	e->read.raddr = (uint64_t)(uintptr_t)(H.rread_buf + off);
	e->read.pos = (uint64_t)(H.rread_buf - H.dev->mem) + off;
	e->read.len = len;
	e->read.laddr = rd_u64(r);
	e->read.read_id = rd_u32(r);
	e->read.rkey = H.rread->rkey;
	e->read.stream = (uint16_t)(m & 2 ? rd_u16(r) : rd_u8(r) % H_STREAMS);
	e->read.ssn = rd_u16(r);
}

static void build_probe(struct xr_evt *e, struct rd *r)
{
	struct xroce_qp *qp = L.qp;
	uint8_t m = rd_u8(r);
	int p = m % (int)qp->npaths;

	memset(e, 0, sizeof(*e));
	e->type = XR_EVT_PROBE_REPLY;
	e->conn = qp->conn_id;
	e->path = (uint8_t)(m & 0x80 ? rd_u8(r) : p);
	e->probe.seq = m & 0x40 ? rd_u32(r) : qp->cc.path[p].probe_seq - (m >> 4 & 1);
	e->probe.ts = (uint32_t)sim.now;
	e->probe.rate_hint = pick_rate(r);
	e->rx_ns = sim.now;
}

static void raw_event(struct rd *r)
{
	uint8_t buf[sizeof(struct xr_evt) + 16];
	uint8_t m = rd_u8(r);
	size_t len = m & 1 ? sizeof(struct xr_evt) : rd_u8(r) % sizeof(buf);
	struct xr_evt *e = (struct xr_evt *)buf;

	rd_bytes(r, buf, len);
	if (len >= sizeof(struct xr_evt) && (m & 2))
		e->conn = L.qp->conn_id;
	if (len >= sizeof(struct xr_evt) && (m & 4))
		e->type = (uint16_t)(1 + (m >> 3) % 5);
	if (len >= sizeof(struct xr_evt) && e->type == XR_EVT_READ_REQ) {
		/* Whatever else a peer sends, the READ's source is what XDP
		 * validated (key, bounds, right): inside a REMOTE_READ region.
		 * A record that breaks this comes from a broken XDP program,
		 * not from the network. */
		e->read.len %= H_RREAD_BYTES + 1;
		e->read.pos = (uint64_t)(H.rread_buf - H.dev->mem) +
			      e->read.pos % (H_RREAD_BYTES - e->read.len + 1);
	}
	push((struct xr_evt *)buf, len);
}

static void advance(struct rd *r, uint64_t *next_deadline)
{
	uint8_t m = rd_u8(r), v = rd_u8(r);
	uint64_t d;

	switch (m % 8) {
	case 0: d = v * 1000ull; break;                /* up to 255 us */
	case 1: d = v * 100000ull; break;              /* up to 25 ms */
	case 2: d = (v % 16) * 1000000ull; break;
	case 3: d = (v % 64) * 10000000ull; break;     /* up to 630 ms */
	case 4: d = (1 + v % 4) * 1000000000ull; break;/* whole seconds */
	case 5: /* to the next timer the library asked for */
		d = *next_deadline > sim.now && *next_deadline != UINT64_MAX ?
		    *next_deadline - sim.now : 1000;
		break;
	default: d = 1000ull + v * 10ull; break;
	}
	sim.now += d;
	*next_deadline = xr_progress(H.dev);
	check_wakeup(L.qp, *next_deadline);
}

static void post_from(struct rd *r)
{
	uint8_t m = rd_u8(r);
	int kind = m % HW_NKIND;
	uint32_t seg = L.seg_max, len;

	switch ((m >> 3) & 7) {
	case 0: len = 0; break;
	case 1: len = 1 + rd_u8(r); break;
	case 2: len = seg; break;
	case 3: len = seg + 1; break;
	case 4: len = 5 * seg + 7; break;
	case 5: len = 1 + rd_u16(r); break;
	default: len = rd_u16(r) % (4 * seg + 1); break;
	}
	if (len > 64 * seg) /* the ledger tracks up to 512 packets a request */
		len = 64 * seg;
	{
		uint8_t k = rd_u8(r);

		/* 1 piece mostly; several, or inline, now and then */
		h_post(kind, len, (uint16_t)((m >> 6) % H_STREAMS), k % 8 != 0,
		       rd_u32(r), k & 0x30 ? 1 : 1 + (k >> 3) % XROCE_MAX_SGE,
		       (k & 0xc0) == 0xc0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	struct xroce_qp_init_attr qa;
	struct rd r = { data, size };
	struct xroce_qp *qp;
	uint64_t next_dl = UINT64_MAX;
	uint8_t h0, h1, h2, h3;
	uint32_t psn, csn, i;
	int n, rc;

	if (!ready) {
		h_init();
		sim.pre_evt = h_pre_event;
		ready = true;
	}
	h0 = rd_u8(&r);
	h1 = rd_u8(&r);
	h2 = rd_u8(&r);
	h3 = rd_u8(&r);
	/* Clock: sometimes just before a 2^32 ns boundary, where the 32-bit
	 * timestamps in packets wrap. */
	sim_reset(h1 & 0x40 ? (5ull << 32) - 300000000ull : 7000000000ull,
		  0x5eed0000u + h0);
	h_dev_reset();
	memset(rx_cnt, 0, sizeof(rx_cnt));
	memset(ce_cnt, 0, sizeof(ce_cnt));
	for (i = 0; i < (uint32_t)H.dev->nplanes; i++)
		xsk_loop_stall(H.dev->plane[i].xsk, false);

	memset(&qa, 0, sizeof(qa));
	/* Now and then 16-entry CQs: they overflow, at destroy above all. */
	qa.send_cq = h3 & 0x80 ? H.scq_small : H.scq;
	qa.recv_cq = h3 & 0x40 ? H.rcq_small : H.rcq;
	qa.max_send_wr = h1 & 0x20 ? 16 : 256;
	qa.npaths = 1 + h0 % XR_MAX_PATHS;
	qa.mtu = h1 & 0x08 ? 576 : 0;
	qa.timeout_ms = h3 & 1 ? 50 : 2000;
	qa.flags = h1 & 0x01 ? XROCE_QP_NOTIFY_WRITES : 0;
	qa.max_inflight = (const uint32_t[]){ 0, 2, 16, XR_CSN_SEND_WIN }[(h1 >> 4) & 3];
	qa.rnr_retry = h2 % 8;
	qa.rnr_timer_us = (h2 >> 3) * 20;
	rc = xroce_create_qp(H.pd, &qa, &qp);
	SIM_CHECK(rc == 0, "create_qp: %d", rc);
	/* Our initial numbers, sometimes just before they wrap. */
	switch ((h1 >> 1) & 3) {
	case 0: psn = 0xffffff00u + (h2 & 0x3f); csn = 0xfffffff0u; break;
	case 1: psn = 0; csn = 0; break;
	default: psn = (uint32_t)sim_rand(); csn = (uint32_t)sim_rand(); break;
	}
	qp->init_psn = psn;
	qp->init_csn = csn;
	h_ledger_reset(qp, true);
	rc = h_accept_from_peer(qp, 0x1000 + h0, 0x77770000u, 0x55550000u);
	SIM_CHECK(rc == 0 && qp->state == XROCE_QPS_RTS, "accept: %d", rc);
	h_txlog_reset(qp);
	L.seg_max = qp->seg_max;

	/* Receives first (a WRITE_WITH_IMM or SEND may find one), then work. */
	n = rd_u8(&r) % 12;
	for (i = 0; i < (uint32_t)n; i++)
		h_post_recv((uint16_t)(i % H_STREAMS));
	n = 1 + rd_u8(&r) % 12;
	for (i = 0; i < (uint32_t)n; i++)
		post_from(&r);
	h_poll_check();
	h_check_qp(qp);

	for (i = 0; i < MAX_OPS && rd_more(&r); i++) {
		struct xr_evt e;
		uint8_t op = rd_u8(&r) % OP_N;

		switch (op) {
		case OP_ACK:
		case OP_ACK2:
			build_ack(&e, &r, XR_EVT_ACK);
			push(&e, sizeof(e));
			break;
		case OP_NAK:
			build_ack(&e, &r, XR_EVT_NAK);
			push(&e, sizeof(e));
			break;
		case OP_RAW:
			raw_event(&r);
			break;
		case OP_RECV:
			build_recv(&e, &r);
			push(&e, sizeof(e));
			break;
		case OP_READ_REQ:
			build_read_req(&e, &r);
			push(&e, sizeof(e));
			break;
		case OP_PROBE:
			build_probe(&e, &r);
			push(&e, sizeof(e));
			break;
		case OP_TIME:
		case OP_TIME2:
			advance(&r, &next_dl);
			break;
		case OP_PROGRESS:
			next_dl = xr_progress(H.dev);
			check_wakeup(qp, next_dl);
			break;
		case OP_POST:
			post_from(&r);
			break;
		case OP_POST_RECV:
			h_post_recv((uint16_t)(rd_u8(&r) % H_STREAMS));
			break;
		case OP_NIC: {
			uint8_t m = rd_u8(&r);

			xsk_loop_stall(H.dev->plane[m % H.dev->nplanes].xsk, m & 0x10);
			break;
		}
		case OP_ACK_ALL:
			ack_all();
			break;
		}
		h_poll_check();
		h_check_qp(qp);
	}
	/* What is still queued reaches the library; then a perfect peer
	 * until the work is done (or the connection has failed); then the QP
	 * goes. */
	xr_events_drain(H.dev);
	xr_qp_complete(qp);
	h_poll_check();
	h_check_qp(qp);
	for (i = 0; i < (uint32_t)H.dev->nplanes; i++)
		xsk_loop_stall(H.dev->plane[i].xsk, false);
	cooperate(qp);
	if (getenv("XR_FUZZ_VERBOSE"))
		fprintf(stderr, "paths %u: %llu frames (%llu data, %llu resent, %llu "
			"probes), %llu records; work requests %u: %llu ok, %llu "
			"failed, %llu flushed; receives %u: %llu ok; state %d\n",
			qp->npaths, (unsigned long long)TX.frames,
			(unsigned long long)TX.data_frames,
			(unsigned long long)TX.retx_frames,
			(unsigned long long)TX.probes,
			(unsigned long long)sim.evts_delivered, L.nwr,
			(unsigned long long)L.ok, (unsigned long long)L.errors,
			(unsigned long long)L.flushed, L.nrwr,
			(unsigned long long)L.rok, qp->state);
	h_ledger_qp_gone();
	rc = xroce_destroy_qp(qp);
	SIM_CHECK(rc == 0, "destroy_qp: %d", rc);
	h_ledger_final();
	h_check_frames();
	SIM_CHECK(h_maps_wipe() == 0, "map entries left behind by a destroyed QP");
	SIM_CHECK(H.dev->qps == NULL, "QP list not empty");
	sim_evt_clear();
	return 0;
}
