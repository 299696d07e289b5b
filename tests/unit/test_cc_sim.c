/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A small discrete-event simulation driven by the library's own state
 * machines: senders run user/txpath.c + user/cc.c (+ user/rtt.c), the
 * receiver runs include/contract/rxwin.h exactly as the XDP program does (per-path
 * PSN window, per-connection CSN placement).  Between them: per-path
 * propagation delays and one bottleneck link of fixed capacity whose FIFO
 * marks CE above K packets and drops above 256 (a veth ring), optionally
 * random loss after it and blackholed paths before it.
 *
 * Scenarios: 2 and 4 connections (4 paths each) joining one after another,
 * with and without the receiver's fair-share rate hint; a 1-path and a
 * 4-path connection; one connection under 1% and 10% random loss; a path
 * blackholed mid-transfer.  Printed: convergence time after the last join
 * (windowed Jain index staying >= 0.95), mean Jain index, utilisation,
 * drops; asserted: fairness, convergence and goodput targets.
 *
 * Beside TCP (docs/PROTOCOL.md 13.1): the bottleneck reconfigured to
 * 1 Gbit/s, one 4-path connection and 1, 2 or 4 TCP CUBIC flows (a model
 * below: ACK-clocked, RACK loss detection, one decrease per RTT), either
 * started 100 ms before the other, through a drop-tail queue of 200 packets
 * (2.4 ms, kept full by CUBIC), one of 30 (under the delay allowance: only
 * losses tell), and a queue marking above 20 packets shared with classic
 * ECN CUBIC; alone behind drop-tail with random loss upstream.  Asserted:
 * the connection's goodput between 0.7x and 1.5x its fair share, no TCP
 * flow under half of its share, the link used; random loss upstream of a
 * full bottleneck costs nothing.  SIM_TRACE=1 prints the controller every
 * 20 ms of these runs.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cc.h"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunknown-pragmas"
#include "contract/rxwin.h"
#pragma GCC diagnostic pop

#define US 1000ull
#define MS 1000000ull

#define MAXC 8                /* connections */
#define MAXP 4                /* paths per connection */
#define PKT_BYTES 1500
#define LINK_MBPS 10000       /* bottleneck: 10 Gbit/s, 1.2 us per packet */
#define QCAP 256              /* bottleneck buffer (a veth ring) */
#define ECN_K 20              /* CE mark at this queue length */
#define QMAX 1024             /* largest buffer a scenario may configure */
#define MAXT 4                /* TCP flows beside the connections */
#define CSN_SPAN 4096         /* sender keeps CSNs within the receiver's window */
#define BIN_NS (50 * US)      /* goodput bins */
#define JAIN_HINT 4           /* Jain index over 4 bins = 200 us (~5 RTTs) */
#define JAIN_NOHINT 20        /* ... over 1 ms without hints (DCTCP sawtooth) */
#define MAXBINS 4096
#define ACTIVE_NS (200 * US)  /* receiver: a sender is active if heard this recently */
/* Capacity the receiver divides among its senders: configured a little
 * below the line rate (xr_cfg.rate_capacity_mbps) so that a queue built by
 * a transient drains. */
#define HINT_CAPACITY_MBPS (LINK_MBPS * 95 / 100)
#define BASE_RTT_US 30.0      /* 10 + 2 + 15 us of propagation, + ~1-6 us */
/* Host noise: each packet leaves its sender 0-5 us late (a path stays
 * ordered).  Without any, the simulation is perfectly periodic and flows
 * phase-lock with the queue (Floyd & Jacobson's traffic phase effects): a
 * flow whose packets happen to meet the queue below the marking threshold
 * keeps a larger share.  Real hosts jitter far more than this. */
#define JITTER_NS 5000

enum { EV_WAKE, EV_QIN, EV_DEPART, EV_RX, EV_ACK, EV_PROBE_REPLY,
       EV_TCP_SEND, EV_TCP_TIMER, EV_TCP_RX, EV_TCP_ACK, EV_TRACE };

struct sim_pkt {
	uint32_t psn, base, csn, ts;
	uint8_t ar, ce;
	uint8_t tcp;  /* a TCP segment: psn = its transmission, csn = its data */
	uint8_t ect;  /* ECN-capable: the queue may mark it */
};

struct sim_ev {
	uint64_t t, seq;
	int type, conn, path;
	struct sim_pkt pkt;
	struct xr_ack_view ack;
	uint32_t probe_seq;
};

struct sim_conn {
	int npaths;
	uint64_t start_ns;
	/* sender */
	struct xr_cc cc;
	struct xr_txpath tp[MAXP];
	uint32_t next_csn, snd_una;
	uint32_t done[CSN_SPAN * 2];  /* csn + 1 once acknowledged */
	uint32_t rq[16384], rq_head, rq_tail; /* CSNs to retransmit */
	uint64_t wake_at;
	uint64_t retx;
	/* receiver */
	struct xr_rx_state rx;
	uint64_t last_rx_ns;
	uint64_t placed;
	uint64_t meas;                /* placed since S.meas_from */
	uint32_t bins[MAXBINS];
	/* path properties */
	uint64_t d_fwd[MAXP], d_ack[MAXP];
	int blackhole[MAXP];
	uint64_t last_qin[MAXP];
};

/* A loss-based competitor: TCP CUBIC (RFC 9438: beta 0.7, C 0.4, the
 * Reno-friendly estimate), one segment per packet, ACK-clocked without
 * pacing (Linux CUBIC paces only under fq).  Loss is detected as RACK does
 * on a path without reordering: a transmission still unacknowledged when
 * a later one is acknowledged is lost; a tail loss by a probe timer after
 * max(2 srtt, 1 ms) of silence.  One decrease per round trip (the
 * transmissions outstanding at a decrease must be acknowledged before the
 * next); with ecn set, a CE echo is a loss (RFC 3168). */
#define TCP_LOG 8192          /* transmissions remembered (ring) */
#define TCP_DATA 16384        /* data sequence numbers remembered (ring) */
#define TCP_BETA 0.7
#define TCP_C 0.4
#define TCP_INIT_CWND 10

enum { TX_FREE, TX_INFLIGHT, TX_ACKED, TX_LOST };

struct sim_tcp {
	uint64_t start_ns;
	bool ecn;
	double cwnd, ssthresh, wmax, west, origin, k_s;
	uint64_t epoch_ns;            /* 0 = no congestion-avoidance epoch */
	uint64_t srtt, min_rtt;
	uint32_t snd_nxt, snd_una;    /* data */
	uint32_t dacked[TCP_DATA];    /* seq + 1 once acknowledged */
	struct {
		uint32_t seq;
		uint32_t st;
		uint64_t tx_ns;
	} log[TCP_LOG];
	uint32_t lhead, ltail;        /* transmissions, [lhead, ltail) kept */
	uint32_t inflight;
	uint32_t rq[TCP_DATA], rq_head, rq_tail; /* data to retransmit */
	uint32_t cut_log;             /* no decrease before this one is acked */
	bool cut_once;
	uint64_t last_ack_ns, timer_at, last_qin;
	uint64_t retx, cuts;
	/* receiver */
	uint32_t rcvd[TCP_DATA];      /* seq + 1 once received */
	uint64_t meas;                /* new data received since S.meas_from */
	uint64_t d_fwd, d_ack;
};

static struct sim {
	int nconn, ntcp;
	bool hint;
	uint32_t loss_ppm;   /* random loss after the queue */
	uint32_t loss_in_ppm; /* random loss before it (a lossy link upstream) */
	uint64_t now, seq, end_ns;
	uint64_t meas_from;  /* goodput counted from here (meas fields) */
	uint32_t link_mbps, qcap, ecn_k; /* ecn_k 0: no marking (drop-tail) */
	struct sim_ev *heap;
	size_t nheap, cap;
	struct sim_pkt q[QMAX];
	int qconn[QMAX], qpath[QMAX];
	uint32_t qhead, qlen;
	bool busy;
	uint64_t drops, marks, delivered, lost_rand;
	struct sim_conn c[MAXC];
	struct sim_tcp t[MAXT];
} S;

/* ---- event heap ------------------------------------------------------ */
static bool ev_less(const struct sim_ev *a, const struct sim_ev *b)
{
	return a->t != b->t ? a->t < b->t : a->seq < b->seq;
}

static void push(struct sim_ev *e)
{
	size_t i;

	if (S.nheap == S.cap) {
		S.cap = S.cap ? 2 * S.cap : 4096;
		S.heap = realloc(S.heap, S.cap * sizeof(*S.heap));
		assert_non_null(S.heap);
	}
	e->seq = S.seq++;
	i = S.nheap++;
	while (i && ev_less(e, &S.heap[(i - 1) / 2])) {
		S.heap[i] = S.heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	S.heap[i] = *e;
}

static void pop(struct sim_ev *out)
{
	struct sim_ev last;
	size_t i = 0, c;

	*out = S.heap[0];
	last = S.heap[--S.nheap];
	for (;;) {
		c = 2 * i + 1;
		if (c >= S.nheap)
			break;
		if (c + 1 < S.nheap && ev_less(&S.heap[c + 1], &S.heap[c]))
			c++;
		if (!ev_less(&S.heap[c], &last))
			break;
		S.heap[i] = S.heap[c];
		i = c;
	}
	if (S.nheap)
		S.heap[i] = last;
}

static void at(uint64_t t, int type, int conn, int path, struct sim_ev *e)
{
	struct sim_ev z;

	if (!e) {
		memset(&z, 0, sizeof(z));
		e = &z;
	}
	e->t = t;
	e->type = type;
	e->conn = conn;
	e->path = path;
	push(e);
}

static uint32_t rnd(void)
{
	/* xorshift: deterministic, independent of libc */
	static uint32_t x = 2463534242u;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return x;
}

/* ---- sender ----------------------------------------------------------- */
static void wake_at(struct sim_conn *c, int ci, uint64_t t)
{
	if (t < S.now)
		t = S.now;
	if (t < c->wake_at) {
		c->wake_at = t;
		at(t, EV_WAKE, ci, 0, NULL);
	}
}

static void mark_done(struct sim_conn *c, uint32_t csn)
{
	c->done[csn % (CSN_SPAN * 2)] = csn + 1;
	while (c->done[c->snd_una % (CSN_SPAN * 2)] == c->snd_una + 1)
		c->snd_una++;
}

static void requeue(struct sim_conn *c, const struct xr_ack_result *r)
{
	uint32_t i;

	for (i = 0; i < r->nlost; i++) {
		c->rq[c->rq_tail++ % 16384] = r->lost[i].csn;
		assert_true(c->rq_tail - c->rq_head < 16384);
	}
}

static void take_acked(struct sim_conn *c, const struct xr_ack_result *r)
{
	uint32_t i;

	for (i = 0; i < r->nacked; i++)
		mark_done(c, r->acked[i].csn);
}

static struct xr_ack_result R; /* big, shared: the simulation is serial */


static void handle_events(struct sim_conn *c, int ci, int p)
{
	uint32_t ev = xr_cc_take_events(&c->cc, p);

	if (ev & XR_CC_EV_SUSPECT) {
		xr_txpath_abandon_all(&c->tp[p], &R);
		xr_cc_on_abandon(&c->cc, p, &R);
		requeue(c, &R);
	}
}

/* Next CSN to send: a retransmission not yet acknowledged, or new data. */
static bool next_csn(struct sim_conn *c, uint32_t *csn, bool *retx)
{
	while (c->rq_head != c->rq_tail) {
		uint32_t x = c->rq[c->rq_head++ % 16384];

		if (c->done[x % (CSN_SPAN * 2)] != x + 1) {
			*csn = x;
			*retx = true;
			c->retx++;
			return true;
		}
	}
	if (c->next_csn - c->snd_una >= CSN_SPAN)
		return false;
	*csn = c->next_csn++;
	*retx = false;
	return true;
}

static void sender_run(int ci)
{
	struct sim_conn *c = &S.c[ci];
	uint64_t t, next = UINT64_MAX;
	int p;

	if (S.now < c->start_ns) {
		wake_at(c, ci, c->start_ns);
		return;
	}
	/* timers (ACKs already drained: they are events before this one) */
	for (p = 0; p < c->npaths; p++) {
		if (xr_txpath_on_timer(&c->tp[p], S.now, &R) > 0) {
			xr_cc_on_timeout(&c->cc, p, &R, S.now);
			requeue(c, &R);
		}
	}
	assert_true(xr_cc_pacing_rate(&c->cc) == xr_cc_pacing_rate_fresh(&c->cc));
	xr_cc_on_timer(&c->cc, S.now);
	for (p = 0; p < c->npaths; p++) {
		handle_events(c, ci, p);
		if (xr_cc_probe_due(&c->cc, p) <= S.now) {
			struct sim_ev e;

			memset(&e, 0, sizeof(e));
			e.probe_seq = xr_cc_probe_sent(&c->cc, p, S.now);
			if (!c->blackhole[p])
				at(S.now + c->d_fwd[p] + c->d_ack[p], EV_PROBE_REPLY,
				   ci, p, &e);
		}
	}
	/* send while pacing and windows allow */
	for (;;) {
		bool retx;

		struct sim_ev e;
		uint32_t csn, psn;

		/* The cached pacing rate is the one the state gives. */
		assert_true(xr_cc_pacing_rate(&c->cc) ==
			    xr_cc_pacing_rate_fresh(&c->cc));
		t = xr_cc_next_send_ns(&c->cc, S.now);
		if (t > S.now) {
			next = t;
			break;
		}
		p = xr_cc_pick_path(&c->cc, S.now);
		if (p < 0)
			break; /* an ACK or a timer will wake us */
		if (!next_csn(c, &csn, &retx))
			break;
		assert_int_equal(xr_txpath_send(&c->tp[p], csn, PKT_BYTES, S.now, &psn), 0);
		memset(&e, 0, sizeof(e));
		/* the library's ack requests (docs/PROTOCOL.md 7.3), asked
		 * before the packet is charged to the pacer, as the library
		 * does; a simulated sender always has more to send (no tail) */
		e.pkt.ar = xr_cc_ack_wanted(&c->cc, p, psn, retx, false, S.now);
		xr_cc_on_send(&c->cc, p, S.now);
		e.pkt.psn = psn;
		e.pkt.base = xr_txpath_base(&c->tp[p]);
		e.pkt.csn = csn;
		e.pkt.ts = (uint32_t)S.now;
		e.pkt.ect = 1;
		if (!c->blackhole[p]) {
			uint64_t ta = S.now + c->d_fwd[p] + rnd() % JITTER_NS;

			if (ta < c->last_qin[p])
				ta = c->last_qin[p]; /* a path stays ordered */
			c->last_qin[p] = ta;
			at(ta, EV_QIN, ci, p, &e);
		}
	}
	for (p = 0; p < c->npaths; p++) {
		t = xr_txpath_next_deadline(&c->tp[p]);
		if (t < next)
			next = t;
		t = xr_cc_probe_due(&c->cc, p);
		if (t < next)
			next = t;
	}
	t = xr_cc_next_deadline(&c->cc);
	if (t < next)
		next = t;
	if (next != UINT64_MAX)
		wake_at(c, ci, next);
}

static void on_ack(struct sim_ev *e)
{
	struct sim_conn *c = &S.c[e->conn];

	xr_txpath_on_ack(&c->tp[e->path], &e->ack, S.now, &R);
	xr_cc_on_ack(&c->cc, e->path, &e->ack, &R, &c->tp[e->path], S.now);
	assert_true(xr_cc_pacing_rate(&c->cc) == xr_cc_pacing_rate_fresh(&c->cc));
	take_acked(c, &R);
	requeue(c, &R);
	handle_events(c, e->conn, e->path);
	sender_run(e->conn);
}

/* ---- bottleneck ----------------------------------------------------- */
static uint64_t service_ns(void)
{
	return (uint64_t)PKT_BYTES * 8 * 1000 / S.link_mbps;
}

static void on_qin(struct sim_ev *e)
{
	uint32_t slot;

	if (S.loss_in_ppm && rnd() % 1000000 < S.loss_in_ppm) {
		S.lost_rand++;
		return;
	}
	if (S.qlen >= S.qcap) {
		S.drops++;
		return;
	}
	slot = (S.qhead + S.qlen++) % QMAX;
	S.q[slot] = e->pkt;
	if (S.ecn_k && S.qlen > S.ecn_k && e->pkt.ect) {
		S.q[slot].ce = 1;
		S.marks++;
	}
	S.qconn[slot] = e->conn;
	S.qpath[slot] = e->path;
	if (!S.busy) {
		S.busy = true;
		at(S.now + service_ns(), EV_DEPART, 0, 0, NULL);
	}
}

static void on_depart(void)
{
	uint32_t slot = S.qhead;
	struct sim_ev e;

	S.qhead = (S.qhead + 1) % QMAX;
	S.qlen--;
	if (S.qlen)
		at(S.now + service_ns(), EV_DEPART, 0, 0, NULL);
	else
		S.busy = false;
	if (S.loss_ppm && rnd() % 1000000 < S.loss_ppm) {
		S.lost_rand++;
		return;
	}
	memset(&e, 0, sizeof(e));
	e.pkt = S.q[slot];
	at(S.now + 2 * US, e.pkt.tcp ? EV_TCP_RX : EV_RX, S.qconn[slot],
	   S.qpath[slot], &e);
}

/* ---- receiver -------------------------------------------------------- */
static uint32_t rate_hint(void)
{
	int i, active = 0;

	if (!S.hint)
		return 0;
	for (i = 0; i < S.nconn; i++)
		if (S.c[i].last_rx_ns && S.now - S.c[i].last_rx_ns < ACTIVE_NS)
			active++;
	return HINT_CAPACITY_MBPS / (active ? active : 1);
}

static void on_rx(struct sim_ev *e)
{
	struct sim_conn *c = &S.c[e->conn];
	struct xr_rx_path *rp = &c->rx.path[e->path];
	int pv, cv;
	struct sim_ev a;

	c->last_rx_ns = S.now;
	xr_rxw_forward(rp, e->pkt.base);
	pv = xr_rxw_accept(rp, e->pkt.psn);
	assert_int_not_equal(pv, XR_RXW_OOW);
	rp->rx_pkts++;
	rp->ce_pkts += e->pkt.ce;
	cv = pv == XR_RXW_NEW ? xr_csn_accept(&c->rx, e->pkt.csn) : XR_RXW_OLD;
	assert_int_not_equal(cv, XR_RXW_OOW);
	if (cv == XR_RXW_NEW) {
		uint64_t b = S.now / BIN_NS;

		c->placed++;
		c->meas += S.now >= S.meas_from;
		S.delivered++;
		if (b < MAXBINS)
			c->bins[b]++;
	}
	/* ACK: requested, CE, duplicate, or out of order */
	if (!e->pkt.ar && !e->pkt.ce && pv == XR_RXW_NEW && !rp->sack[0] &&
	    !rp->sack[1] && !rp->sack[2] && !rp->sack[3])
		return;
	memset(&a, 0, sizeof(a));
	a.ack.cack = rp->cack;
	a.ack.ack_psn = e->pkt.psn;
	a.ack.ts_echo = e->pkt.ts;
	a.ack.rate_hint = rate_hint();
	memcpy(a.ack.sack, rp->sack, sizeof(a.ack.sack));
	a.ack.ce_pkts = rp->ce_pkts;
	a.ack.rx_pkts = rp->rx_pkts;
	a.ack.flags = (e->pkt.ce ? XR_AF_ECE : 0) | (pv == XR_RXW_OLD ? XR_AF_DUP : 0);
	a.ack.rx_ns = S.now + c->d_ack[e->path];
	at(S.now + c->d_ack[e->path], EV_ACK, e->conn, e->path, &a);
}

/* ---- TCP CUBIC beside the connections ---------------------------------- */
static void tcp_arm(struct sim_tcp *t, int ti)
{
	uint64_t rto = 2 * t->srtt > MS ? 2 * t->srtt : MS;

	if (!t->inflight)
		return;
	t->timer_at = t->last_ack_ns + rto;
	if (t->timer_at <= S.now)
		t->timer_at = S.now + rto;
	at(t->timer_at, EV_TCP_TIMER, ti, 0, NULL);
}

static void tcp_send(int ti)
{
	struct sim_tcp *t = &S.t[ti];

	while (t->inflight < (uint32_t)t->cwnd && t->ltail - t->lhead < TCP_LOG) {
		uint32_t seq, i;
		struct sim_ev e;
		uint64_t ta;

		if (t->rq_head != t->rq_tail) {
			seq = t->rq[t->rq_head++ % TCP_DATA];
			if (t->dacked[seq % TCP_DATA] == seq + 1)
				continue;
			t->retx++;
		} else {
			if (t->snd_nxt - t->snd_una >= TCP_DATA / 2)
				break;
			seq = t->snd_nxt++;
		}
		i = t->ltail++;
		t->log[i % TCP_LOG].seq = seq;
		t->log[i % TCP_LOG].st = TX_INFLIGHT;
		t->log[i % TCP_LOG].tx_ns = S.now;
		t->inflight++;
		memset(&e, 0, sizeof(e));
		e.pkt.tcp = 1;
		e.pkt.ect = t->ecn;
		e.pkt.psn = i;
		e.pkt.csn = seq;
		ta = S.now + t->d_fwd + rnd() % JITTER_NS;
		if (ta < t->last_qin)
			ta = t->last_qin; /* one path: stays ordered */
		t->last_qin = ta;
		at(ta, EV_QIN, ti, 0, &e);
	}
	if (t->timer_at <= S.now || !t->timer_at)
		tcp_arm(t, ti);
}

/* A loss or a CE echo seen on the ACK of transmission i: one decrease per
 * round trip (none until a transmission sent after the last is acked). */
static void tcp_congestion(struct sim_tcp *t, uint32_t i)
{
	if (t->cut_once && xr_seq_diff(i, t->cut_log) < 0)
		return;
	/* fast convergence */
	t->wmax = t->cwnd < t->wmax ? t->cwnd * (1 + TCP_BETA) / 2 : t->cwnd;
	t->cwnd *= TCP_BETA;
	if (t->cwnd < 2)
		t->cwnd = 2;
	t->ssthresh = t->cwnd;
	t->epoch_ns = 0;
	t->cut_log = t->ltail;
	t->cut_once = true;
	t->cuts++;
}

static void tcp_grow(struct sim_tcp *t)
{
	double ts, wc, target;

	if (t->cwnd < t->ssthresh) {
		t->cwnd += 1;
		return;
	}
	if (!t->epoch_ns) {
		t->epoch_ns = S.now;
		if (t->cwnd < t->wmax) {
			t->k_s = cbrt((t->wmax - t->cwnd) / TCP_C);
			t->origin = t->wmax;
		} else {
			t->k_s = 0;
			t->origin = t->cwnd;
		}
		t->west = t->cwnd;
	}
	ts = (double)(S.now - t->epoch_ns + t->min_rtt) / 1e9;
	wc = TCP_C * (ts - t->k_s) * (ts - t->k_s) * (ts - t->k_s) + t->origin;
	t->west += 3 * (1 - TCP_BETA) / (1 + TCP_BETA) / t->cwnd;
	target = wc > t->west ? wc : t->west;
	if (target > 1.5 * t->cwnd)
		target = 1.5 * t->cwnd;
	if (target > t->cwnd)
		t->cwnd += (target - t->cwnd) / t->cwnd;
}

static void tcp_on_ack(struct sim_ev *e)
{
	struct sim_tcp *t = &S.t[e->conn];
	uint32_t i = e->pkt.psn, j, seq = e->pkt.csn;
	bool lost = false;

	t->last_ack_ns = S.now;
	if (t->log[i % TCP_LOG].st == TX_INFLIGHT &&
	    xr_seq_diff(i, t->lhead) >= 0 && xr_seq_diff(i, t->ltail) < 0) {
		uint64_t rtt = S.now - t->log[i % TCP_LOG].tx_ns;

		t->log[i % TCP_LOG].st = TX_ACKED;
		t->inflight--;
		t->srtt = t->srtt ? t->srtt - t->srtt / 8 + rtt / 8 : rtt;
		if (!t->min_rtt || rtt < t->min_rtt)
			t->min_rtt = rtt;
		/* every earlier transmission still out was lost (one FIFO) */
		for (j = t->lhead; j != i; j++) {
			if (t->log[j % TCP_LOG].st != TX_INFLIGHT)
				continue;
			t->log[j % TCP_LOG].st = TX_LOST;
			t->inflight--;
			t->rq[t->rq_tail++ % TCP_DATA] = t->log[j % TCP_LOG].seq;
			lost = true;
		}
		while (t->lhead != t->ltail && t->log[t->lhead % TCP_LOG].st != TX_INFLIGHT)
			t->lhead++;
	}
	t->dacked[seq % TCP_DATA] = seq + 1;
	while (t->dacked[t->snd_una % TCP_DATA] == t->snd_una + 1)
		t->snd_una++;
	if (lost || (t->ecn && e->pkt.ce))
		tcp_congestion(t, i);
	else if (!t->cut_once || xr_seq_diff(i, t->cut_log) >= 0)
		tcp_grow(t); /* not while recovering from a decrease */
	tcp_send(e->conn);
}

static void tcp_on_timer(struct sim_ev *e)
{
	struct sim_tcp *t = &S.t[e->conn];
	uint32_t j;

	if (e->t != t->timer_at)
		return; /* superseded */
	t->timer_at = 0;
	if (!t->inflight)
		return;
	if (S.now < t->last_ack_ns + (2 * t->srtt > MS ? 2 * t->srtt : MS)) {
		tcp_arm(t, e->conn);
		return;
	}
	for (j = t->lhead; j != t->ltail; j++) {
		if (t->log[j % TCP_LOG].st != TX_INFLIGHT)
			continue;
		t->log[j % TCP_LOG].st = TX_LOST;
		t->rq[t->rq_tail++ % TCP_DATA] = t->log[j % TCP_LOG].seq;
	}
	t->inflight = 0;
	t->lhead = t->ltail;
	t->cut_once = false; /* the probe's loss is a new episode */
	tcp_congestion(t, t->ltail);
	t->last_ack_ns = S.now;
	tcp_send(e->conn);
}

static void tcp_on_rx(struct sim_ev *e)
{
	struct sim_tcp *t = &S.t[e->conn];
	uint32_t seq = e->pkt.csn;
	struct sim_ev a;

	if (t->rcvd[seq % TCP_DATA] != seq + 1) {
		t->rcvd[seq % TCP_DATA] = seq + 1;
		t->meas += S.now >= S.meas_from;
	}
	memset(&a, 0, sizeof(a));
	a.pkt = e->pkt; /* the ACK names the transmission and its data */
	at(S.now + t->d_ack, EV_TCP_ACK, e->conn, 0, &a);
}

/* n TCP flows (ECN-capable if ecn), flow i starting at start[i]. */
static void tcp_init(int n, const uint64_t *start, bool ecn)
{
	int i;

	S.ntcp = n;
	for (i = 0; i < n; i++) {
		struct sim_tcp *t = &S.t[i];

		memset(t, 0, sizeof(*t));
		t->start_ns = start[i];
		t->ecn = ecn;
		t->cwnd = TCP_INIT_CWND;
		t->ssthresh = 1e9;
		t->d_fwd = 11 * US + (uint64_t)i * 400;
		t->d_ack = 16 * US;
		at(start[i], EV_TCP_SEND, i, 0, NULL);
	}
}

/* ---- set-up and run -------------------------------------------------- */
static void sim_init(int nconn, const int *npaths, const uint64_t *start,
		     bool hint, uint32_t loss_ppm)
{
	int i, p;

	free(S.heap);
	memset(&S, 0, sizeof(S));
	S.link_mbps = LINK_MBPS;
	S.qcap = QCAP;
	S.ecn_k = ECN_K;
	S.nconn = nconn;
	S.hint = hint;
	S.loss_ppm = loss_ppm;
	for (i = 0; i < nconn; i++) {
		struct sim_conn *c = &S.c[i];
		uint32_t init_psn = 0xfffff000u + 1000u * (uint32_t)i; /* wraps */

		c->npaths = npaths[i];
		c->start_ns = start[i];
		c->wake_at = UINT64_MAX;
		assert_int_equal(xr_cc_init(&c->cc, (uint32_t)c->npaths, NULL, 0), 0);
		for (p = 0; p < c->npaths; p++) {
			assert_int_equal(xr_txpath_init(&c->tp[p], init_psn, NULL), 0);
			c->rx.path[p].cack = init_psn;
			/* paths differ a little: spraying reorders across them */
			c->d_fwd[p] = 10 * US + (uint64_t)p * 1500 + (uint64_t)i * 300;
			c->d_ack[p] = 15 * US + (uint64_t)p * 700;
		}
		at(c->start_ns, EV_WAKE, i, 0, NULL);
		c->wake_at = c->start_ns;
	}
}

/* SIM_TRACE=1: the first connection's controller and the TCP windows every
 * 20 ms of a run beside TCP (debugging aid). */
static void trace(void)
{
	const struct xr_cc *x = &S.c[0].cc;
	int i;

	printf("    t %5.0f ms q %3u | xroce w %6.1f compete %u qwin %u srtt %6.0f "
	       "min %6.0f mid %6.0f lq hi %5.0f/%6.0f lo %5.0f/%6.0f cong %llu "
	       "cuts e%llu d%llu l%llu pace %.0f Mb/s | tcp",
	       S.now / 1e6, S.qlen, x->conn.cwnd, x->compete, x->q_windows,
	       x->srtt_ns / 1e3, (double)xr_rtt_min(&S.c[0].tp[0].rtt) / 1e3,
	       x->lq.mid_ns / 1e3, x->lq.lost_hi, x->lq.n_hi, x->lq.lost_lo,
	       x->lq.n_lo, (unsigned long long)x->lq.cong,
	       (unsigned long long)x->conn.cuts_ecn,
	       (unsigned long long)x->conn.cuts_delay,
	       (unsigned long long)x->conn.cuts_loss,
	       xr_cc_pacing_rate(x) * 8 / 1e6);
	for (i = 0; i < S.ntcp; i++)
		printf(" %.0f", S.t[i].cwnd);
	printf("\n");
	at(S.now + 20 * MS, EV_TRACE, 0, 0, NULL);
}

/* Run until end_ns.  If blackhole_at: from then on path bh_path of
 * connection bh_conn loses everything, both ways; returns when all data the
 * connection had sent by then was acknowledged (0 = never). */
static uint64_t sim_run(uint64_t end_ns, uint64_t blackhole_at, int bh_conn,
			int bh_path)
{
	struct sim_ev e;
	bool bh_done = false;
	uint32_t csn_at_bh = 0;
	uint64_t recovered = 0;

	S.end_ns = end_ns;
	while (S.nheap) {
		pop(&e);
		if (e.t > end_ns)
			break;
		S.now = e.t;
		if (!bh_done && blackhole_at && S.now >= blackhole_at) {
			S.c[bh_conn].blackhole[bh_path] = 1;
			csn_at_bh = S.c[bh_conn].next_csn;
			bh_done = true;
		}
		switch (e.type) {
		case EV_WAKE:
			if (e.t != S.c[e.conn].wake_at)
				break; /* superseded */
			S.c[e.conn].wake_at = UINT64_MAX;
			sender_run(e.conn);
			break;
		case EV_QIN:
			on_qin(&e);
			break;
		case EV_DEPART:
			on_depart();
			break;
		case EV_RX:
			on_rx(&e);
			break;
		case EV_ACK:
			if (!S.c[e.conn].blackhole[e.path])
				on_ack(&e);
			break;
		case EV_TCP_SEND:
			S.t[e.conn].last_ack_ns = S.now;
			tcp_send(e.conn);
			break;
		case EV_TCP_TIMER:
			tcp_on_timer(&e);
			break;
		case EV_TCP_RX:
			tcp_on_rx(&e);
			break;
		case EV_TCP_ACK:
			tcp_on_ack(&e);
			break;
		case EV_TRACE:
			trace();
			break;
		case EV_PROBE_REPLY:
			xr_cc_on_probe_reply(&S.c[e.conn].cc, e.path, e.probe_seq,
					     rate_hint(), S.now);
			handle_events(&S.c[e.conn], e.conn, e.path);
			sender_run(e.conn);
			break;
		}
		if (bh_done && !recovered &&
		    xr_seq_diff(S.c[bh_conn].snd_una, csn_at_bh) >= 0)
			recovered = S.now;
	}
	free(S.heap);
	S.heap = NULL;
	S.nheap = S.cap = 0;
	return recovered;
}

/* Jain index of the connections' goodput over the nb bins ending at bin b
 * (all connections active). */
static double jain_at(uint64_t b, uint64_t nb)
{
	double sum = 0, sq = 0;
	int i;
	uint64_t k;

	for (i = 0; i < S.nconn; i++) {
		double x = 0;

		for (k = b + 1 - nb; k <= b; k++)
			x += S.c[i].bins[k];
		sum += x;
		sq += x * x;
	}
	return sq > 0 ? sum * sum / (S.nconn * sq) : 0;
}

struct verdict {
	double conv_us;   /* from the last join to the start of the first 5 ms
			   * in which every window has Jain >= 0.95 */
	double jain_mean; /* over the second half */
	double jain_min;  /* over every window after settling */
	double util;      /* goodput / capacity, second half */
};

#define SETTLE_BINS (5 * MS / BIN_NS)

static struct verdict evaluate(uint64_t last_join, uint64_t end, uint64_t nb)
{
	uint64_t b0 = last_join / BIN_NS + nb - 1, b1 = end / BIN_NS - 1;
	uint64_t b, k, settle = UINT64_MAX, half = (b0 + b1) / 2, pk = 0;
	double jsum = 0, j;
	struct verdict v;
	int i, n = 0;

	for (b = b0; b <= b1 && settle == UINT64_MAX; b++) {
		for (k = b; k <= b1 && k < b + SETTLE_BINS; k++)
			if (jain_at(k, nb) < 0.95)
				break;
		if (k > b1 || k == b + SETTLE_BINS)
			settle = b;
	}
	v.jain_min = 1;
	for (b = settle; b <= b1; b++) {
		j = jain_at(b, nb);
		if (j < v.jain_min)
			v.jain_min = j;
	}
	for (b = half; b <= b1; b++) {
		jsum += jain_at(b, nb);
		n++;
		for (i = 0; i < S.nconn; i++)
			pk += S.c[i].bins[b];
	}
	/* when the first window of the settled run began */
	v.conv_us = settle == UINT64_MAX ? 1e9 :
		    ((double)(settle + 1 - nb) * BIN_NS - (double)last_join) / 1e3;
	if (v.conv_us < 0)
		v.conv_us = 0;
	if (settle == UINT64_MAX)
		v.jain_min = 0;
	v.jain_mean = jsum / n;
	v.util = (double)pk / ((double)(b1 - half + 1) * BIN_NS / service_ns());
	return v;
}

static void report(const char *name, const struct verdict *v)
{
	uint64_t retx = 0;
	int i;

	for (i = 0; i < S.nconn; i++)
		retx += S.c[i].retx;
	printf("  %-30s settled %6.0f us after the last join (%5.1f base RTTs); "
	       "Jain mean %.3f min %.3f; utilisation %.3f; drops %llu, marks %llu, "
	       "retx %llu\n",
	       name, v->conv_us, v->conv_us / BASE_RTT_US, v->jain_mean,
	       v->jain_min, v->util,
	       (unsigned long long)S.drops, (unsigned long long)S.marks,
	       (unsigned long long)retx);
	if (getenv("SIM_DEBUG"))
		for (i = 0; i < S.nconn; i++) {
			uint64_t b, n = 0;
			int p;

			for (b = S.end_ns / BIN_NS / 2; b < S.end_ns / BIN_NS; b++)
				n += S.c[i].bins[b];
			{
				uint64_t ce = 0, rx = 0;

				for (p = 0; p < S.c[i].npaths; p++) {
					ce += S.c[i].rx.path[p].ce_pkts;
					rx += S.c[i].rx.path[p].rx_pkts;
				}
				printf("    conn %d: true CE fraction %.3f\n", i,
				       (double)ce / (double)rx);
			}
			printf("    conn %d: %llu pkts in 2nd half, conn cwnd %.1f "
			       "alpha %.3f srtt %llu cuts %llu; paths:", i,
			       (unsigned long long)n, S.c[i].cc.conn.cwnd,
			       S.c[i].cc.conn.alpha,
			       (unsigned long long)S.c[i].cc.srtt_ns,
			       (unsigned long long)S.c[i].cc.conn.cuts_ecn);
			for (p = 0; p < S.c[i].npaths; p++)
				printf(" [%.1f a%.2f in%u st%u]",
				       S.c[i].cc.path[p].ctl.cwnd,
				       S.c[i].cc.path[p].ctl.alpha,
				       S.c[i].cc.path[p].ctl.inflight,
				       S.c[i].cc.path[p].state);
			printf("\n");
		}
}

/* Every CSN below snd_una was placed exactly once at the receiver. */
static void check_delivery(void)
{
	int i;

	for (i = 0; i < S.nconn; i++) {
		assert_true(S.c[i].rx.csn_next - S.c[i].snd_una < 0x80000000u);
		assert_true(S.c[i].placed >= S.c[i].snd_una);
		assert_true(S.c[i].placed <= S.c[i].next_csn);
	}
}

static void run_fair(int nconn, bool hint, const char *name,
		     double max_conv_us)
{
	int np[MAXC];
	uint64_t st[MAXC], end = (uint64_t)(20 + 10 * nconn) * MS;
	struct verdict v;
	int i;

	for (i = 0; i < nconn; i++) {
		np[i] = 4;
		st[i] = (uint64_t)i * 5 * MS;
	}
	sim_init(nconn, np, st, hint, 0);
	(void)sim_run(end, 0, 0, 0);
	v = evaluate(st[nconn - 1], end, hint ? JAIN_HINT : JAIN_NOHINT);
	report(name, &v);
	check_delivery();
	assert_true(v.jain_mean >= 0.95);
	assert_true(v.jain_min >= 0.9);
	assert_true(v.conv_us <= max_conv_us);
	assert_true(v.util >= 0.9);
}

static void test_two_no_hint(void **state)
{
	(void)state;
	run_fair(2, false, "2 conns x 4 paths, no hint", 10000);
}

static void test_two_hint(void **state)
{
	(void)state;
	run_fair(2, true, "2 conns x 4 paths, rate hint", 500);
	assert_int_equal(S.drops, 0);
}

static void test_four_no_hint(void **state)
{
	(void)state;
	run_fair(4, false, "4 conns x 4 paths, no hint", 15000);
}

static void test_four_hint(void **state)
{
	(void)state;
	run_fair(4, true, "4 conns x 4 paths, rate hint", 500);
	assert_int_equal(S.drops, 0);
}

/* The connection window makes 4 paths no more aggressive than 1. */
static void test_one_vs_four_paths(void **state)
{
	int np[2] = { 1, 4 };
	uint64_t st[2] = { 0, 5 * MS };
	struct verdict v;

	(void)state;
	sim_init(2, np, st, false, 0);
	(void)sim_run(40 * MS, 0, 0, 0);
	v = evaluate(st[1], 40 * MS, JAIN_NOHINT);
	report("1-path vs 4-path conn, no hint", &v);
	check_delivery();
	assert_true(v.jain_mean >= 0.95);
}

/* Goodput of one connection under random loss, relative to no loss. */
static double goodput(uint32_t loss_ppm)
{
	int np[1] = { 4 };
	uint64_t st[1] = { 0 };

	sim_init(1, np, st, false, loss_ppm);
	(void)sim_run(30 * MS, 0, 0, 0);
	check_delivery();
	/* placed packets from 10 ms on (after start-up) */
	{
		uint64_t b, n = 0;

		for (b = 10 * MS / BIN_NS; b < 30 * MS / BIN_NS; b++)
			n += S.c[0].bins[b];
		return (double)n;
	}
}

static void test_random_loss_goodput(void **state)
{
	double g0, g1, g10;

	(void)state;
	g0 = goodput(0);
	g1 = goodput(10000);
	g10 = goodput(100000);
	printf("  random loss, 1 conn x 4 paths: goodput kept %.3f at 1%%, "
	       "%.3f at 10%% (ceiling 0.99 / 0.90)\n", g1 / g0, g10 / g0);
	assert_true(g1 / g0 >= 0.97);
	assert_true(g10 / g0 >= 0.85);
}

/* One of 4 paths blackholed mid-transfer: its packets are retransmitted
 * on the others, the path is taken out of service, and every byte sent
 * before the failure is acknowledged within the 10 ms target. */
static void test_blackhole(void **state)
{
	int np[1] = { 4 };
	uint64_t st[1] = { 0 }, bh = 10 * MS, rec, b, n = 0, cap;

	(void)state;
	sim_init(1, np, st, false, 0);
	rec = sim_run(30 * MS, bh, 0, 2);
	check_delivery();
	for (b = 20 * MS / BIN_NS; b < 30 * MS / BIN_NS; b++)
		n += S.c[0].bins[b];
	cap = 10 * MS / service_ns();
	printf("  path 2 of 4 blackholed at 10 ms: all data sent before it "
	       "acknowledged %llu us later; path 2 %s after %llu timeout(s); "
	       "retransmissions %llu; goodput 10 ms later %.3f of capacity\n",
	       (unsigned long long)((rec - bh) / US),
	       xr_cc_path_state(&S.c[0].cc, 2) == XR_CC_DOWN ? "DOWN" : "not down",
	       (unsigned long long)S.c[0].tp[2].st.timeouts,
	       (unsigned long long)S.c[0].retx, (double)n / (double)cap);
	assert_true(rec > bh);
	assert_true(rec - bh <= 10 * MS);
	assert_int_equal(xr_cc_path_state(&S.c[0].cc, 2), XR_CC_DOWN);
	assert_true((double)n / (double)cap >= 0.95);
	/* nothing stuck: everything but the last few RTTs acknowledged */
	assert_true(S.c[0].next_csn - S.c[0].snd_una < 2000);
}

/* ---- beside TCP -------------------------------------------------------- */
struct coex {
	double ratio;   /* the connection's goodput over its fair share of all */
	double tcp_min; /* the same for the TCP flow that got least */
	double util;    /* all goodput over the link's capacity */
	double goodput; /* the connection's, over the link's capacity */
};

struct coex_cfg {
	int ntcp;
	bool tcp_first;   /* else the connection starts first */
	bool tcp_ecn;     /* classic ECN TCP (a CE mark is a loss) */
	uint32_t link_mbps, qcap, ecn_k; /* ecn_k 0: drop-tail */
	uint32_t loss_ppm;  /* before the queue, every flow */
	uint64_t lead_ns; /* the later start, after the first */
	uint64_t end_ns;
	uint64_t meas_ns; /* goodput counted over the last meas_ns (0: half) */
	bool delay_only;  /* the controller before issue 19: no compete mode,
			   * no congestion loss, DCTCP's mark response */
};

static struct coex run_coexist(const char *name, const struct coex_cfg *k)
{
	int np[1] = { 4 }, i;
	uint64_t st[1], ts[MAXT], tot, x, tmin = UINT64_MAX, to = 0, su = 0;
	struct coex r;

	st[0] = k->tcp_first ? k->lead_ns : 0;
	for (i = 0; i < k->ntcp; i++)
		ts[i] = (k->tcp_first ? 0 : k->lead_ns) + (uint64_t)i * MS;
	sim_init(1, np, st, false, 0);
	if (k->delay_only) {
		struct xr_cc_cfg cfg;

		xr_cc_cfg_default(&cfg);
		cfg.compete_windows = 0;
		cfg.cong_loss_beta = 0;
		cfg.ecn_dctcp = 1;
		assert_int_equal(xr_cc_init(&S.c[0].cc, (uint32_t)np[0], &cfg, 0), 0);
	}
	S.loss_in_ppm = k->loss_ppm;
	S.link_mbps = k->link_mbps;
	S.qcap = k->qcap;
	S.ecn_k = k->ecn_k;
	S.meas_from = k->meas_ns ? k->end_ns - k->meas_ns : k->end_ns / 2;
	tcp_init(k->ntcp, ts, k->tcp_ecn);
	if (getenv("SIM_TRACE"))
		at(0, EV_TRACE, 0, 0, NULL);
	(void)sim_run(k->end_ns, 0, 0, 0);
	check_delivery();
	x = S.c[0].meas;
	tot = x;
	for (i = 0; i < k->ntcp; i++) {
		tot += S.t[i].meas;
		if (S.t[i].meas < tmin)
			tmin = S.t[i].meas;
	}
	r.goodput = (double)x / ((double)(k->end_ns - S.meas_from) / service_ns());
	r.ratio = tot ? (double)x * (k->ntcp + 1) / (double)tot : 0;
	r.tcp_min = tot && k->ntcp ? (double)tmin * (k->ntcp + 1) / (double)tot : 0;
	r.util = (double)tot / ((double)(k->end_ns - S.meas_from) / service_ns());
	for (i = 0; i < MAXP; i++) {
		to += S.c[0].tp[i].st.timeouts;
		su += S.c[0].cc.path[i].suspects;
	}
	printf("  %-44s xroce/fair %.2f, least TCP/fair %.2f, utilisation %.3f; "
	       "drops %llu, marks %llu; xroce: cwnd %.0f, retx %llu, cuts %llu "
	       "loss/%llu delay/%llu ECN, compete %llu (drain probes %llu, "
	       "%llu alone), timeouts %llu, suspects %llu; TCP cuts",
	       name, r.ratio, r.tcp_min, r.util, (unsigned long long)S.drops,
	       (unsigned long long)S.marks, xr_cc_conn_window(&S.c[0].cc),
	       (unsigned long long)S.c[0].retx,
	       (unsigned long long)S.c[0].cc.conn.cuts_loss,
	       (unsigned long long)S.c[0].cc.conn.cuts_delay,
	       (unsigned long long)S.c[0].cc.conn.cuts_ecn,
	       (unsigned long long)S.c[0].cc.competes,
	       (unsigned long long)S.c[0].cc.drains,
	       (unsigned long long)S.c[0].cc.drains_alone,
	       (unsigned long long)to, (unsigned long long)su);
	for (i = 0; i < k->ntcp; i++)
		printf(" %llu", (unsigned long long)S.t[i].cuts);
	printf("\n");
	return r;
}

static void coexist_set(const char *what, const struct coex_cfg *base,
			double lo, double hi, double tcp_floor)
{
	static const int ns[] = { 1, 2, 4 };
	char name[96];
	unsigned int i, o, bad = 0;

	/* every configuration runs and prints before the verdict */
	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		for (o = 0; o < 2; o++) {
			struct coex_cfg k = *base;
			struct coex r;

			k.ntcp = ns[i];
			k.tcp_first = o;
			snprintf(name, sizeof(name), "%s, %d TCP, %s first", what,
				 k.ntcp, o ? "TCP" : "xroce");
			r = run_coexist(name, &k);
			bad += r.ratio < lo || r.ratio > hi || r.tcp_min < tcp_floor ||
			       r.util < 0.9;
		}
	}
	assert_int_equal(bad, 0);
}

/* A drop-tail queue of 2.4 ms (200 packets at 1 Gbit/s) that CUBIC keeps
 * full: the connection gets its share, and leaves the flows theirs. */
static void test_coexist_droptail(void **state)
{
	struct coex_cfg k = { .link_mbps = 1000, .qcap = 200, .lead_ns = 100 * MS,
			      .end_ns = 6000 * MS, .meas_ns = 4000 * MS };

	(void)state;
	coexist_set("drop-tail 200 pkts", &k, 0.7, 1.5, 0.5);
}

/* The same queue, side by side: the controller with its rules against
 * loss-based flows, and with them off (delay and marks only, as before
 * issue 19), which gives the share away. */
static void test_coexist_baseline(void **state)
{
	struct coex_cfg k = { .ntcp = 1, .link_mbps = 1000, .qcap = 200,
			      .lead_ns = 100 * MS, .end_ns = 6000 * MS,
			      .meas_ns = 4000 * MS };
	struct coex now, before;

	(void)state;
	now = run_coexist("drop-tail 200 pkts, 1 TCP, this controller", &k);
	k.delay_only = true;
	before = run_coexist("drop-tail 200 pkts, 1 TCP, delay and marks only", &k);
	assert_true(now.ratio >= 0.7);
	assert_true(now.ratio > before.ratio + 0.2);
}

/* A queue marking above 20 packets, shared with classic ECN CUBIC. */
static void test_coexist_ecn(void **state)
{
	struct coex_cfg k = { .link_mbps = 1000, .qcap = 200, .ecn_k = 20,
			      .tcp_ecn = true, .lead_ns = 100 * MS, .end_ns = 1000 * MS };

	(void)state;
	coexist_set("ECN above 20 pkts, ECN CUBIC", &k, 0.7, 1.5, 0.5);
}

/* Alone at a drop-tail bottleneck, random loss upstream costs nothing:
 * the queue stays full of retransmissions and originals. */
static void test_bottleneck_random_loss(void **state)
{
	static const uint32_t ppm[] = { 0, 10000, 100000 };
	struct coex_cfg k = { .link_mbps = 1000, .qcap = 200, .end_ns = 1000 * MS };
	double g[3];
	unsigned int i;

	(void)state;
	for (i = 0; i < 3; i++) {
		char name[64];

		k.loss_ppm = ppm[i];
		snprintf(name, sizeof(name), "alone, drop-tail, %u%% loss before it",
			 ppm[i] / 10000);
		g[i] = run_coexist(name, &k).goodput;
	}
	assert_true(g[0] >= 0.9);
	assert_true(g[1] >= 0.97 * g[0]);
	assert_true(g[2] >= 0.95 * g[0]);
}

/* 1% random loss upstream of a drop-tail queue shared with CUBIC: TCP
 * is held back by the loss, the connection is not (and takes the rest). */
static void test_coexist_random_loss(void **state)
{
	struct coex_cfg k = { .ntcp = 1, .link_mbps = 1000, .qcap = 200,
			      .loss_ppm = 10000, .lead_ns = 100 * MS,
			      .end_ns = 2000 * MS };
	struct coex r;

	(void)state;
	r = run_coexist("drop-tail, 1% loss before it, 1 TCP", &k);
	assert_true(r.ratio >= 0.7);
	assert_true(r.util >= 0.9);
}

/* A drop-tail queue too shallow for the delay signal (30 packets, 360 us
 * at 1 Gbit/s, under the 500 us allowance): only losses tell. */
static void test_coexist_shallow(void **state)
{
	struct coex_cfg k = { .link_mbps = 1000, .qcap = 30, .lead_ns = 100 * MS,
			      .end_ns = 2000 * MS };

	(void)state;
	coexist_set("drop-tail 30 pkts", &k, 0.7, 1.5, 0.5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_no_hint),
		cmocka_unit_test(test_two_hint),
		cmocka_unit_test(test_four_no_hint),
		cmocka_unit_test(test_four_hint),
		cmocka_unit_test(test_one_vs_four_paths),
		cmocka_unit_test(test_random_loss_goodput),
		cmocka_unit_test(test_blackhole),
		cmocka_unit_test(test_coexist_droptail),
		cmocka_unit_test(test_coexist_baseline),
		cmocka_unit_test(test_coexist_ecn),
		cmocka_unit_test(test_bottleneck_random_loss),
		cmocka_unit_test(test_coexist_random_loss),
		cmocka_unit_test(test_coexist_shallow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
