/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Unit tests of the per-path send window and loss detection
 * (user/txpath.c), driven by a fake clock.  The randomised tests generate
 * ACKs with the receiver's own window code (include/contract/rxwin.h). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "txpath.h"
/* The receiver's window code, as the XDP program runs it; its clang loop
 * pragmas mean nothing to gcc. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunknown-pragmas"
#include "contract/rxwin.h"
#pragma GCC diagnostic pop

#define US 1000ull
#define MS 1000000ull

static struct xr_ack_result res; /* big: keep it off the stack */

static void view(struct xr_ack_view *v, uint32_t cack, uint32_t ack_psn,
		 uint32_t ts)
{
	memset(v, 0, sizeof(*v));
	v->cack = cack;
	v->ack_psn = ack_psn;
	v->ts_echo = ts;
}

static void sack(struct xr_ack_view *v, uint32_t psn)
{
	uint32_t bit = psn - v->cack - 1;

	assert_true(bit < XR_SACK_BITS);
	v->sack[bit / 64] |= 1ull << (bit % 64);
}

/* Send n packets with CSNs csn0.. at now; check the PSNs are consecutive. */
static void send_n(struct xr_txpath *p, uint32_t n, uint32_t csn0, uint64_t now)
{
	uint32_t i, psn, want = p->next_psn;

	for (i = 0; i < n; i++) {
		assert_int_equal(xr_txpath_send(p, csn0 + i, 1000 + i, now, &psn), 0);
		assert_int_equal(psn, want + i);
	}
}

/* Every packet sent is acknowledged (first time), lost, or in flight. */
static void check_invariants(const struct xr_txpath *p)
{
	const struct xr_txpath_stats *s = &p->st;
	uint32_t x;

	assert_true(xr_txpath_inflight(p) <= XR_TXPATH_WIN);
	assert_int_equal(s->tx_pkts, s->acked_pkts - s->late_acked + s->sack_lost +
				     s->timeout_lost + s->abandoned +
				     xr_txpath_inflight(p));
	for (x = p->base_psn; x != p->next_psn; x++) {
		const struct xr_txslot *sl = &p->ring[x % XR_TXPATH_WIN];

		assert_int_equal(sl->psn, x);
		assert_int_equal(sl->state, XR_TXS_INFLIGHT);
	}
}

static void test_init_room(void **state)
{
	struct xr_txpath p;
	struct xr_txpath_cfg cfg;
	uint32_t psn;

	(void)state;
	assert_int_equal(xr_txpath_init(&p, 77, NULL), 0);
	assert_int_equal(xr_txpath_room(&p), 256);
	assert_int_equal(xr_txpath_inflight(&p), 0);
	assert_int_equal(xr_txpath_base(&p), 77);
	assert_true(xr_txpath_next_deadline(&p) == UINT64_MAX);
	assert_int_equal(xr_txpath_rto(&p), 10 * MS); /* rto_init */
	send_n(&p, 256, 0, 1000);
	assert_int_equal(xr_txpath_room(&p), 0);
	assert_int_equal(xr_txpath_send(&p, 999, 1, 1000, &psn), -ENOSPC);
	assert_int_equal(xr_txpath_base(&p), 77);
	check_invariants(&p);

	xr_txpath_cfg_default(&cfg);
	cfg.rto_max_ns = cfg.rto_min_ns - 1;
	assert_int_equal(xr_txpath_init(&p, 0, &cfg), -EINVAL);
	cfg.rto_min_ns = 0;
	assert_int_equal(xr_txpath_init(&p, 0, &cfg), -EINVAL);
}

static void test_in_order(void **state)
{
	struct xr_txpath p;
	struct xr_ack_view v;
	uint64_t t0 = 5 * MS;
	uint32_t i;

	(void)state;
	xr_txpath_init(&p, 1000, NULL);
	send_n(&p, 10, 100, t0);
	assert_int_equal(xr_txpath_next_deadline(&p), t0 + 10 * MS);

	view(&v, 1005, 1004, (uint32_t)t0);
	assert_int_equal(xr_txpath_on_ack(&p, &v, t0 + 50 * US, &res), 5);
	assert_int_equal(res.nacked, 5);
	assert_int_equal(res.acked_inflight, 5);
	assert_int_equal(res.nlost, 0);
	for (i = 0; i < 5; i++) {
		assert_int_equal(res.acked[i].csn, 100 + i);
		assert_int_equal(res.acked[i].psn, 1000 + i);
		assert_int_equal(res.acked[i].bytes, 1000 + i);
		assert_int_equal(res.acked[i].flags, 0);
	}
	assert_int_equal(res.acked_bytes, 5 * 1000 + 10);
	assert_int_equal(res.rtt_ns, 50 * US);
	assert_false(res.ece || res.stale || res.bad);
	assert_int_equal(xr_txpath_base(&p), 1005);
	assert_int_equal(xr_txpath_inflight(&p), 5);
	/* First sample: srtt 50 us, rttvar 25 us -> 150 us, floored at 1 ms. */
	assert_int_equal(xr_txpath_rto(&p), 1 * MS);

	view(&v, 1010, 1009, (uint32_t)t0);
	v.flags = XR_AF_ECE;
	assert_int_equal(xr_txpath_on_ack(&p, &v, t0 + 60 * US, &res), 5);
	assert_true(res.ece);
	assert_int_equal(res.acked[4].csn, 109);
	assert_int_equal(xr_txpath_inflight(&p), 0);
	assert_true(xr_txpath_next_deadline(&p) == UINT64_MAX);
	assert_int_equal(p.st.ece_acks, 1);
	assert_int_equal(p.st.acks, 2);
	check_invariants(&p);
}

static void test_single_loss(void **state)
{
	struct xr_txpath p;
	struct xr_ack_view v;
	uint32_t x;

	(void)state;
	xr_txpath_init(&p, 0, NULL);
	send_n(&p, 10, 500, 1 * MS);
	/* PSN 3 lost: the receiver has 0-2 and 4-9. */
	view(&v, 3, 9, (uint32_t)(1 * MS));
	for (x = 4; x <= 9; x++)
		sack(&v, x);
	assert_int_equal(xr_txpath_on_ack(&p, &v, 2 * MS, &res), 10);
	assert_int_equal(res.nacked, 9);
	assert_int_equal(res.nlost, 1);
	assert_int_equal(res.lost[0].csn, 503);
	assert_int_equal(res.lost[0].psn, 3);
	assert_int_equal(res.lost_bytes, 1003);
	assert_int_equal(xr_txpath_base(&p), 10);
	assert_int_equal(p.st.sack_lost, 1);
	/* The receiver forwards to psn_base 10; the same info again changes
	 * nothing. */
	assert_int_equal(xr_txpath_on_ack(&p, &v, 2 * MS, &res), 0);
	assert_int_equal(p.st.sack_lost, 1);
	check_invariants(&p);
}

static void test_several_losses(void **state)
{
	static const uint32_t acked1[] = { 0, 1, 3, 5, 6, 9 };
	static const uint32_t lost1[] = { 2, 4, 7, 8 };
	struct xr_txpath p;
	struct xr_ack_view v;
	uint32_t i, x;

	(void)state;
	xr_txpath_init(&p, 0, NULL);
	send_n(&p, 20, 0, 1 * MS);
	view(&v, 2, 9, (uint32_t)(1 * MS));
	sack(&v, 3);
	sack(&v, 5);
	sack(&v, 6);
	sack(&v, 9);
	assert_int_equal(xr_txpath_on_ack(&p, &v, 2 * MS, &res), 10);
	assert_int_equal(res.nacked, 6);
	assert_int_equal(res.nlost, 4);
	for (i = 0; i < 6; i++)
		assert_int_equal(res.acked[i].csn, acked1[i]);
	for (i = 0; i < 4; i++)
		assert_int_equal(res.lost[i].csn, lost1[i]);
	assert_int_equal(xr_txpath_base(&p), 10);
	assert_int_equal(xr_txpath_inflight(&p), 10);

	/* The receiver's cack is still stuck at 2 (it has not yet seen
	 * psn_base 10): bits up to 15 arrive, 12 missing. */
	for (x = 10; x <= 15; x++)
		if (x != 12)
			sack(&v, x);
	v.ack_psn = 15;
	assert_int_equal(xr_txpath_on_ack(&p, &v, 2 * MS, &res), 6);
	assert_int_equal(res.nacked, 5);
	assert_int_equal(res.nlost, 1);
	assert_int_equal(res.lost[0].psn, 12);
	assert_int_equal(xr_txpath_base(&p), 16);
	assert_int_equal(p.st.sack_lost, 5);
	check_invariants(&p);
}

/* The last packets of a burst are lost: no later ACK can reveal them, the
 * timer must. */
static void test_tail_loss_timer(void **state)
{
	struct xr_txpath p;
	struct xr_ack_view v;
	uint64_t t0 = 1 * MS, dl;

	(void)state;
	xr_txpath_init(&p, 0, NULL);
	send_n(&p, 5, 40, t0);
	view(&v, 3, 2, (uint32_t)t0);
	assert_int_equal(xr_txpath_on_ack(&p, &v, t0 + 100 * US, &res), 3);
	dl = xr_txpath_next_deadline(&p);
	assert_int_equal(dl, t0 + 1 * MS);
	assert_int_equal(xr_txpath_on_timer(&p, dl - 1, &res), 0);
	assert_int_equal(res.nlost, 0);
	assert_int_equal(xr_txpath_on_timer(&p, dl, &res), 2);
	assert_int_equal(res.nlost, 2);
	assert_int_equal(res.lost[0].csn, 43);
	assert_int_equal(res.lost[1].csn, 44);
	assert_int_equal(res.consec_timeouts, 1);
	assert_int_equal(xr_txpath_inflight(&p), 0);
	assert_int_equal(xr_txpath_base(&p), 5);
	assert_int_equal(p.st.timeouts, 1);
	assert_int_equal(p.st.timeout_lost, 2);
	assert_int_equal(xr_txpath_rto(&p), 2 * MS);
	assert_true(xr_txpath_next_deadline(&p) == UINT64_MAX);
	/* Nothing in flight: the timer does nothing. */
	assert_int_equal(xr_txpath_on_timer(&p, dl + 100 * MS, &res), 0);
	check_invariants(&p);
}

static void test_rto_backoff_reset(void **state)
{
	struct xr_txpath_cfg cfg;
	struct xr_txpath p;
	struct xr_ack_view v;
	uint64_t now = 10 * MS, want[] = { 2, 4, 5, 5, 5 };
	uint32_t psn, i;

	(void)state;
	xr_txpath_cfg_default(&cfg);
	cfg.rto_max_ns = 5 * MS;
	xr_txpath_init(&p, 0, &cfg);
	send_n(&p, 1, 0, now);
	view(&v, 1, 0, (uint32_t)now);
	xr_txpath_on_ack(&p, &v, now + 100 * US, &res);
	assert_int_equal(xr_txpath_rto(&p), 1 * MS);

	for (i = 0; i < 5; i++) {
		xr_txpath_send(&p, 10 + i, 100, now, &psn);
		now = xr_txpath_next_deadline(&p);
		assert_int_equal(xr_txpath_on_timer(&p, now, &res), 1);
		assert_int_equal(res.consec_timeouts, i + 1);
		assert_int_equal(xr_txpath_rto(&p), want[i] * MS);
	}
	assert_int_equal(p.consec_timeouts, 5);

	/* An ACK acknowledging nothing new does not reset the backoff. */
	xr_txpath_send(&p, 20, 100, now, &psn);
	view(&v, psn, 0, (uint32_t)now); /* cack == the unacked PSN */
	assert_int_equal(xr_txpath_on_ack(&p, &v, now + 10 * US, &res), 0);
	assert_int_equal(xr_txpath_rto(&p), 5 * MS);
	/* Acknowledging it does. */
	view(&v, psn + 1, psn, (uint32_t)now);
	assert_int_equal(xr_txpath_on_ack(&p, &v, now + 100 * US, &res), 1);
	assert_int_equal(xr_txpath_rto(&p), 1 * MS);
	assert_int_equal(p.consec_timeouts, 0);
	check_invariants(&p);
}

/* A short peer timeout caps the backoff so that it spans several tries. */
static void test_rto_cap_from_timeout(void **state)
{
	struct xr_txpath_cfg cfg;
	struct xr_txpath p;
	uint64_t t0 = 5 * MS, now;
	uint32_t psn, tries = 0;

	(void)state;
	xr_txpath_cfg_default(&cfg);
	xr_txpath_cfg_for_timeout(&cfg, 2000);   /* the default timeout */
	assert_int_equal(cfg.rto_max_ns, 200 * MS);
	assert_int_equal(cfg.rto_init_ns, 10 * MS);
	xr_txpath_cfg_for_timeout(&cfg, 1);      /* never below the floor */
	assert_int_equal(cfg.rto_max_ns, cfg.rto_min_ns);
	assert_int_equal(cfg.rto_init_ns, cfg.rto_min_ns);

	xr_txpath_cfg_default(&cfg);
	xr_txpath_cfg_for_timeout(&cfg, 50);
	assert_int_equal(cfg.rto_max_ns, 50 * MS / XR_TXPATH_TRIES_PER_TIMEOUT);
	assert_int_equal(cfg.rto_init_ns, cfg.rto_max_ns);
	assert_int_equal(xr_txpath_init(&p, 0, &cfg), 0);
	/* A packet and every retransmission of it lost: count the tries the
	 * timer makes before the 50 ms of silence are over, even with the
	 * learnt floor at its highest. */
	p.floor_ns = XR_TXPATH_FLOOR_MAX_NS;
	xr_txpath_send(&p, 1, 100, t0, &psn);
	for (;;) {
		now = xr_txpath_next_deadline(&p);
		if (now >= t0 + 50 * MS)
			break;
		assert_int_equal(xr_txpath_on_timer(&p, now, &res), 1);
		tries++;
		xr_txpath_send(&p, 1, 100, now, &psn);
	}
	assert_true(tries >= 7);
	check_invariants(&p);
}

/* RTO = srtt + 4 rttvar between the floor and the ceiling. */
static void test_rto_from_rtt(void **state)
{
	struct xr_txpath_cfg cfg;
	struct xr_txpath p;
	struct xr_ack_view v;
	uint64_t now = 1 * MS;
	uint32_t psn;

	(void)state;
	xr_txpath_cfg_default(&cfg);
	cfg.rto_min_ns = 10 * US;
	xr_txpath_init(&p, 0, &cfg);
	xr_txpath_send(&p, 0, 100, now, &psn);
	view(&v, 1, 0, (uint32_t)now);
	xr_txpath_on_ack(&p, &v, now + 200 * US, &res);
	/* srtt 200 us, rttvar 100 us */
	assert_int_equal(xr_txpath_rto(&p), 600 * US);
	xr_txpath_send(&p, 1, 100, now, &psn);
	view(&v, 2, 1, (uint32_t)now);
	xr_txpath_on_ack(&p, &v, now + 400 * US, &res);
	/* rttvar = 100 - 25 + 50 = 125, srtt = 200 - 25 + 50 = 225 */
	assert_int_equal(xr_txpath_rto(&p), 225 * US + 4 * 125 * US);
	cfg.rto_max_ns = 300 * US;
	xr_txpath_init(&p, 0, &cfg);
	xr_txpath_send(&p, 0, 100, now, &psn);
	view(&v, 1, 0, (uint32_t)now);
	xr_txpath_on_ack(&p, &v, now + 200 * US, &res);
	assert_int_equal(xr_txpath_rto(&p), 300 * US);
}

/* Lost ACKs: a later one carries everything (cumulative + SACK). */
static void test_lost_acks(void **state)
{
	struct xr_txpath p;
	struct xr_ack_view v;
	uint32_t i;

	(void)state;
	xr_txpath_init(&p, 0, NULL);
	send_n(&p, 8, 0, 1 * MS);
	/* ACKs for 0..6 never arrive; the one for 7 does. */
	view(&v, 8, 7, (uint32_t)(1 * MS));
	assert_int_equal(xr_txpath_on_ack(&p, &v, 2 * MS, &res), 8);
	assert_int_equal(res.nacked, 8);
	assert_int_equal(res.nlost, 0);
	for (i = 0; i < 8; i++)
		assert_int_equal(res.acked[i].csn, i);
	/* With a hole: ACKs for 0..5 lost, 3 lost, the ACK for 7 arrives. */
	send_n(&p, 8, 100, 3 * MS);
	view(&v, 11, 15, (uint32_t)(3 * MS));
	for (i = 12; i < 16; i++)
		sack(&v, i);
	assert_int_equal(xr_txpath_on_ack(&p, &v, 4 * MS, &res), 8);
	assert_int_equal(res.nacked, 7);
	assert_int_equal(res.nlost, 1);
	assert_int_equal(res.lost[0].csn, 103);
	check_invariants(&p);
}

/* Duplicate, stale and garbage ACKs leave the window untouched. */
static void test_bad_acks(void **state)
{
	static struct xr_txpath p, snap;
	struct xr_ack_view v;
	uint32_t i;

	(void)state;
	xr_txpath_init(&p, 1000, NULL);
	send_n(&p, 20, 0, 1 * MS);
	view(&v, 1010, 1009, (uint32_t)(1 * MS));
	assert_int_equal(xr_txpath_on_ack(&p, &v, 2 * MS, &res), 10);

	/* Duplicate: nothing new. */
	assert_int_equal(xr_txpath_on_ack(&p, &v, 2 * MS, &res), 0);
	assert_int_equal(res.nacked + res.nlost, 0);
	assert_int_equal(xr_txpath_base(&p), 1010);

	/* Stale: cack behind one already seen. */
	view(&v, 1005, 1004, (uint32_t)(1 * MS));
	assert_int_equal(xr_txpath_on_ack(&p, &v, 2 * MS, &res), 0);
	assert_true(res.stale);
	assert_int_equal(p.st.stale_acks, 1);
	assert_int_equal(xr_txpath_base(&p), 1010);

	/* Garbage must not change anything but the bad-ACK counter. */
	memcpy(&snap, &p, sizeof(p));
	view(&v, 1021, 1009, 0); /* cack beyond next_psn (1020) */
	assert_int_equal(xr_txpath_on_ack(&p, &v, 3 * MS, &res), -EINVAL);
	assert_true(res.bad);
	view(&v, 1015, 1009, 0);
	sack(&v, 1020); /* SACK for a PSN never sent */
	assert_int_equal(xr_txpath_on_ack(&p, &v, 3 * MS, &res), -EINVAL);
	view(&v, 1010, 1009, 0);
	v.sack[3] = 1ull << 63; /* PSN 1266 */
	assert_int_equal(xr_txpath_on_ack(&p, &v, 3 * MS, &res), -EINVAL);
	view(&v, 1000 + 0x80000000u, 0, 0); /* half the sequence space away */
	assert_int_equal(xr_txpath_on_ack(&p, &v, 3 * MS, &res), -EINVAL);
	assert_int_equal(p.st.bad_acks, 4);
	snap.st.bad_acks = 4;
	assert_memory_equal(&p, &snap, sizeof(p));

	/* Far-behind cack: stale, harmless. */
	view(&v, 1000 - 5000, 0, 0);
	assert_int_equal(xr_txpath_on_ack(&p, &v, 3 * MS, &res), 0);
	assert_true(res.stale);
	/* An ACK for a PSN we never sent gives no RTT sample. */
	view(&v, 1010, 5, 12345);
	xr_txpath_on_ack(&p, &v, 3 * MS, &res);
	assert_int_equal(res.rtt_ns, 0);

	/* The highest legal SACK bit (PSN 1019) is fine. */
	view(&v, 1010, 1019, (uint32_t)(1 * MS));
	sack(&v, 1019);
	assert_int_equal(xr_txpath_on_ack(&p, &v, 3 * MS, &res), 10);
	assert_int_equal(res.nacked, 1);
	assert_int_equal(res.nlost, 9);
	for (i = 0; i < 9; i++)
		assert_int_equal(res.lost[i].psn, 1010 + i);
	check_invariants(&p);
}

/* Random bytes as ACKs, interleaved with real ones: the invariants hold
 * and the real traffic still completes. */
static void test_fuzz_acks(void **state)
{
	static struct xr_txpath p;
	struct xr_rx_path rx;
	struct xr_ack_view v;
	uint64_t now = 1 * MS;
	uint32_t csn = 0, acked = 0, psn, i, n;
	int round;

	(void)state;
	srand(1234);
	xr_txpath_init(&p, 0xfffff000u, NULL);
	memset(&rx, 0, sizeof(rx));
	rx.cack = 0xfffff000u;
	for (round = 0; round < 4000; round++) {
		now += 10 * US;
		n = 1 + (uint32_t)rand() % 8;
		for (i = 0; i < n && xr_txpath_room(&p); i++) {
			xr_txpath_send(&p, csn++, 100, now, &psn);
			xr_rxw_forward(&rx, xr_txpath_base(&p));
			if (rand() % 10)
				xr_rxw_accept(&rx, psn);
		}
		/* a real ACK */
		view(&v, rx.cack, psn, (uint32_t)now);
		memcpy(v.sack, rx.sack, sizeof(v.sack));
		assert_true(xr_txpath_on_ack(&p, &v, now + 5 * US, &res) >= 0);
		acked += res.nacked;
		check_invariants(&p);
		/* garbage: random fields, cack near the window or anywhere */
		for (i = 0; i < 3; i++) {
			uint8_t junk[sizeof(v)];
			uint32_t w;

			for (w = 0; w < sizeof(junk); w++)
				junk[w] = (uint8_t)rand();
			memcpy(&v, junk, sizeof(v));
			if (i == 0)
				v.cack = p.base_psn + (uint32_t)(rand() % 600) - 300;
			if (i == 1) {
				v.cack = p.base_psn + (uint32_t)(rand() % 20);
				memset(v.sack, 0, sizeof(v.sack));
				v.sack[0] = (uint64_t)rand();
			}
			v.rx_ns = 0;
			xr_txpath_on_ack(&p, &v, now + 6 * US, &res);
			check_invariants(&p);
		}
		/* the timer, now and then */
		if (round % 50 == 0)
			xr_txpath_on_timer(&p, now + 20 * MS, &res);
		check_invariants(&p);
	}
	assert_true(p.st.bad_acks > 1000);
	assert_true(acked > 1000);
	assert_true(xr_seq_diff(p.next_psn, 0xfffff000u) > 0); /* wrapped */
}

/* PSNs across the 32-bit wrap. */
static void test_wrap(void **state)
{
	struct xr_txpath p;
	struct xr_ack_view v;

	(void)state;
	xr_txpath_init(&p, 0xfffffff0u, NULL);
	send_n(&p, 32, 0, 1 * MS); /* PSNs 0xfffffff0 .. 0x0000000f */
	assert_int_equal(xr_txpath_inflight(&p), 32);
	/* cack 6 (all up to 5 arrived), 6 lost, 7 arrived. */
	view(&v, 6, 7, (uint32_t)(1 * MS));
	sack(&v, 7);
	assert_int_equal(xr_txpath_on_ack(&p, &v, 2 * MS, &res), 24);
	assert_int_equal(res.nacked, 23);
	assert_int_equal(res.nlost, 1);
	assert_int_equal(res.lost[0].psn, 6);
	assert_int_equal(res.lost[0].csn, 22);
	assert_int_equal(res.acked[15].psn, 0xffffffffu);
	assert_int_equal(res.acked[16].psn, 0);
	assert_int_equal(xr_txpath_base(&p), 8);
	assert_int_equal(xr_txpath_room(&p), 256 - 8);
	/* A SACK bit past next (0x10) across the wrap is refused. */
	view(&v, 8, 7, 0);
	sack(&v, 0x10);
	assert_int_equal(xr_txpath_on_ack(&p, &v, 2 * MS, &res), -EINVAL);
	check_invariants(&p);
}

/* A long lossy run across the wrap with a receiver model: every CSN is
 * acknowledged exactly once, losses are retransmitted, ACKs get lost. */
static void test_wrap_lossy_run(void **state)
{
	static struct xr_txpath p;
	static uint8_t done[20000];
	uint32_t queue[4096], qh = 0, qt = 0, csn = 0, psn, i, j, delivered = 0;
	struct xr_rx_path rx;
	struct xr_ack_view v;
	uint64_t now = 1 * MS;
	int round;

	(void)state;
	srand(99);
	xr_txpath_init(&p, 0xffffff00u, NULL);
	memset(&rx, 0, sizeof(rx));
	rx.cack = 0xffffff00u;
	memset(done, 0, sizeof(done));
	for (round = 0; round < 100000 && delivered < 15000; round++) {
		now += 20 * US;
		for (i = 0; i < 16 && xr_txpath_room(&p); i++) {
			uint32_t c = qh != qt ? queue[qh++ % 4096] : csn++;

			if (c >= 15000 && qh == qt)
				break;
			if (c < 15000 && done[c])
				continue; /* acknowledged meanwhile */
			xr_txpath_send(&p, c, 100, now, &psn);
			xr_rxw_forward(&rx, xr_txpath_base(&p));
			if (rand() % 100 < 10) /* 10% data loss */
				continue;
			xr_rxw_accept(&rx, psn);
			if (rand() % 100 < 20) /* 20% ACK loss */
				continue;
			view(&v, rx.cack, psn, (uint32_t)now);
			memcpy(v.sack, rx.sack, sizeof(v.sack));
			assert_true(xr_txpath_on_ack(&p, &v, now + 10 * US, &res) >= 0);
			for (j = 0; j < res.nacked; j++) {
				uint32_t a = res.acked[j].csn;

				if (a < 15000 && !done[a]) {
					done[a] = 1;
					delivered++;
				}
			}
			for (j = 0; j < res.nlost; j++)
				queue[qt++ % 4096] = res.lost[j].csn;
			check_invariants(&p);
		}
		if (xr_txpath_on_timer(&p, now, &res) > 0) {
			for (j = 0; j < res.nlost; j++)
				queue[qt++ % 4096] = res.lost[j].csn;
		}
		assert_true(qt - qh < 4096);
	}
	assert_int_equal(delivered, 15000);
	assert_true(p.st.sack_lost > 500);
	assert_true(xr_seq_diff(p.next_psn, 0) > 0); /* crossed the wrap */
	check_invariants(&p);
}

static void test_abandon_and_late(void **state)
{
	struct xr_txpath p;
	struct xr_ack_view v;
	uint32_t i, backoff;

	(void)state;
	xr_txpath_init(&p, 0, NULL);
	send_n(&p, 10, 200, 1 * MS);
	view(&v, 3, 2, (uint32_t)(1 * MS));
	xr_txpath_on_ack(&p, &v, 2 * MS, &res);
	backoff = p.backoff;
	assert_int_equal(xr_txpath_abandon_all(&p, &res), 7);
	assert_int_equal(res.nlost, 7);
	for (i = 0; i < 7; i++)
		assert_int_equal(res.lost[i].csn, 203 + i);
	assert_int_equal(xr_txpath_inflight(&p), 0);
	assert_int_equal(xr_txpath_room(&p), 256);
	assert_int_equal(xr_txpath_base(&p), 10);
	assert_int_equal(p.backoff, backoff);
	assert_int_equal(p.st.abandoned, 7);
	assert_int_equal(p.st.timeouts, 0);

	/* 3..5 had arrived after all: a late ACK says so. */
	view(&v, 6, 5, (uint32_t)(1 * MS));
	assert_int_equal(xr_txpath_on_ack(&p, &v, 3 * MS, &res), 3);
	assert_int_equal(res.nacked, 3);
	assert_int_equal(res.acked_inflight, 0);
	for (i = 0; i < 3; i++) {
		assert_int_equal(res.acked[i].csn, 203 + i);
		assert_int_equal(res.acked[i].flags, XR_TXI_LATE);
	}
	/* Reported once only. */
	assert_int_equal(xr_txpath_on_ack(&p, &v, 3 * MS, &res), 0);
	/* 8 arrived too (SACK), 6 and 7 did not. */
	view(&v, 6, 8, (uint32_t)(1 * MS));
	sack(&v, 8);
	assert_int_equal(xr_txpath_on_ack(&p, &v, 3 * MS, &res), 1);
	assert_int_equal(res.acked[0].csn, 208);
	assert_int_equal(p.st.late_acked, 4);
	check_invariants(&p);

	/* Once the receiver moved past the range (psn_base 10), it closes. */
	send_n(&p, 1, 300, 4 * MS);
	view(&v, 11, 10, (uint32_t)(4 * MS));
	assert_int_equal(xr_txpath_on_ack(&p, &v, 5 * MS, &res), 1);
	assert_int_equal(p.st.late_acked, 4); /* 6, 7, 9 were skipped, not acked */
	assert_int_equal(p.late_lo, p.late_hi);
	check_invariants(&p);
}

/* Timed-out packets confirmed by a late ACK (the timer was early). */
static void test_late_after_timeout(void **state)
{
	struct xr_txpath p;
	struct xr_ack_view v;
	uint64_t dl;

	(void)state;
	xr_txpath_init(&p, 0, NULL);
	send_n(&p, 4, 0, 1 * MS);
	dl = xr_txpath_next_deadline(&p);
	assert_int_equal(xr_txpath_on_timer(&p, dl, &res), 4);
	send_n(&p, 2, 4, dl); /* retransmissions on this path: PSNs 4, 5 */
	/* The slow ACK, sent by the receiver before PSN 4 reached it. */
	view(&v, 4, 3, (uint32_t)(1 * MS));
	assert_int_equal(xr_txpath_on_ack(&p, &v, dl + 100 * US, &res), 4);
	assert_int_equal(res.nacked, 4);
	assert_int_equal(res.acked_inflight, 0);
	assert_int_equal(res.acked[3].flags, XR_TXI_LATE);
	assert_int_equal(p.st.late_acked, 4);
	assert_int_equal(p.backoff, 0); /* progress resets the backoff */
	view(&v, 6, 5, (uint32_t)dl);
	assert_int_equal(xr_txpath_on_ack(&p, &v, dl + 200 * US, &res), 2);
	assert_int_equal(res.acked_inflight, 2);
	assert_int_equal(p.late_lo, p.late_hi);
	check_invariants(&p);
}

/* A spurious timeout teaches the RTO floor: the late ACK came 2 ms after
 * the transmission, so the next RTO is at least 2.5 ms; a second without
 * new evidence halves the excess, and the floor returns to rto_min.  An ACK
 * 10 ms late raises it to the 4 ms cap only. */
static void test_floor_learnt(void **state)
{
	struct xr_txpath p;
	struct xr_ack_view v;
	uint64_t dl, t;
	uint32_t psn = 1, k;

	(void)state;
	xr_txpath_init(&p, 0, NULL);
	/* An RTT of 50 us: the RTO is the 1 ms floor. */
	send_n(&p, 1, 0, 1 * MS);
	view(&v, 1, 0, (uint32_t)(1 * MS));
	assert_int_equal(xr_txpath_on_ack(&p, &v, 1 * MS + 50 * US, &res), 1);
	assert_int_equal(xr_txpath_rto(&p), 1 * MS);
	/* PSN 1 at 2 ms; the timer expires it at 3 ms; its ACK at 4 ms. */
	send_n(&p, 1, 1, 2 * MS);
	dl = xr_txpath_next_deadline(&p);
	assert_int_equal(dl, 3 * MS);
	assert_int_equal(xr_txpath_on_timer(&p, dl, &res), 1);
	view(&v, 2, 1, (uint32_t)(2 * MS));
	assert_int_equal(xr_txpath_on_ack(&p, &v, 4 * MS, &res), 1);
	assert_int_equal(res.acked[0].flags, XR_TXI_LATE);
	assert_int_equal(p.st.floor_raised, 1);
	assert_int_equal(p.floor_ns, 2500 * US); /* 5/4 of 2 ms */
	assert_true(xr_txpath_rto(&p) >= 2500 * US);
	/* Prompt ACKs for a second: the floor holds, then halves its excess
	 * each second, and is back at rto_min after some seconds. */
	for (t = 4 * MS, k = 0; k < 40; k++) {
		t += 500 * MS;
		send_n(&p, 1, 10 + k, t);
		view(&v, psn + 2, psn + 1, (uint32_t)t);
		assert_int_equal(xr_txpath_on_ack(&p, &v, t + 50 * US, &res), 1);
		psn++;
		/* (The late ACK was an RTT sample of 2 ms too: srtt and
		 * rttvar come down over the next samples.) */
		if (k == 0)
			assert_int_equal(p.floor_ns, 2500 * US);
		if (k == 2) /* 1.5 s after the evidence: 1 + 1.5/2 ms */
			assert_int_equal(p.floor_ns, 1750 * US);
		assert_true(xr_txpath_rto(&p) >= p.floor_ns);
	}
	assert_int_equal(xr_txpath_rto(&p), 1 * MS);
	assert_int_equal(p.st.floor_raised, 1);
	/* A 10 ms stall: the floor stops at its cap. */
	send_n(&p, 1, 100, t + MS);
	dl = xr_txpath_next_deadline(&p);
	assert_int_equal(xr_txpath_on_timer(&p, dl, &res), 1);
	view(&v, psn + 2, psn + 1, (uint32_t)(t + MS));
	assert_int_equal(xr_txpath_on_ack(&p, &v, t + 11 * MS, &res), 1);
	assert_int_equal(p.floor_ns, XR_TXPATH_FLOOR_MAX_NS);
	check_invariants(&p);
}

/* Lost ACKs are not delay: PSN 1's ACK is lost, the timer expires PSNs 1
 * and 2 (sent just before it fired), and PSN 2's own ACK, 150 us after PSN
 * 2 left, shows both arrived.  The floor learns from PSN 2's round trip, a
 * normal one: it stays at rto_min. */
static void test_floor_not_from_lost_acks(void **state)
{
	struct xr_txpath p;
	struct xr_ack_view v;
	uint64_t dl;

	(void)state;
	xr_txpath_init(&p, 0, NULL);
	send_n(&p, 1, 0, 1 * MS);
	view(&v, 1, 0, (uint32_t)(1 * MS));
	assert_int_equal(xr_txpath_on_ack(&p, &v, 1 * MS + 50 * US, &res), 1);
	send_n(&p, 1, 1, 2 * MS);
	send_n(&p, 1, 2, 2 * MS + 900 * US);
	dl = xr_txpath_next_deadline(&p);
	assert_int_equal(xr_txpath_on_timer(&p, dl, &res), 2);
	view(&v, 3, 2, (uint32_t)(2 * MS + 900 * US));
	assert_int_equal(xr_txpath_on_ack(&p, &v, 3 * MS + 50 * US, &res), 2);
	assert_int_equal(p.st.late_acked, 2);
	assert_int_equal(p.st.floor_raised, 0);
	assert_int_equal(p.floor_ns, 1 * MS);
	assert_int_equal(xr_txpath_rto(&p), 1 * MS);
	check_invariants(&p);
}

/* An ACK triggered by a duplicate proves nothing with its cack, nor one
 * whose cack runs ahead of its trigger (a psn_base moved it).  Such an ACK
 * also closes the range: ACKs of a path come back in order, so no older,
 * trustworthy one can follow it. */
static void test_late_distrust(void **state)
{
	struct xr_txpath p;
	struct xr_ack_view v;
	uint64_t dl;
	int round;

	(void)state;
	for (round = 0; round < 2; round++) {
		xr_txpath_init(&p, 0, NULL);
		send_n(&p, 4, 0, 1 * MS);
		dl = xr_txpath_next_deadline(&p);
		assert_int_equal(xr_txpath_on_timer(&p, dl, &res), 4);
		if (round == 0) {
			view(&v, 4, 3, (uint32_t)(1 * MS));
			v.flags = XR_AF_DUP;
		} else {
			view(&v, 4, 1, (uint32_t)(1 * MS));
		}
		assert_int_equal(xr_txpath_on_ack(&p, &v, dl + 50 * US, &res), 0);
		assert_int_equal(p.st.late_acked, 0);
		assert_int_equal(p.late_lo, p.late_hi);
		check_invariants(&p);
	}
}

/* After a timeout the next packet's psn_base lets the receiver skip the
 * expired PSNs: its cumulative ack then proves nothing about them. */
static void test_late_not_from_forward(void **state)
{
	struct xr_txpath p;
	struct xr_ack_view v;
	struct xr_rx_path rx;
	uint64_t dl;
	uint32_t psn;

	(void)state;
	xr_txpath_init(&p, 50, NULL);
	memset(&rx, 0, sizeof(rx));
	rx.cack = 50;
	send_n(&p, 4, 0, 1 * MS); /* PSNs 50..53, all lost */
	dl = xr_txpath_next_deadline(&p);
	assert_int_equal(xr_txpath_on_timer(&p, dl, &res), 4);
	xr_txpath_send(&p, 4, 100, dl, &psn);
	xr_rxw_forward(&rx, xr_txpath_base(&p));
	assert_int_equal(xr_rxw_accept(&rx, psn), XR_RXW_NEW);
	view(&v, rx.cack, psn, (uint32_t)dl);
	assert_int_equal(rx.cack, 55);
	assert_int_equal(xr_txpath_on_ack(&p, &v, dl + 50 * US, &res), 1);
	assert_int_equal(res.nacked, 1);
	assert_int_equal(res.acked[0].csn, 4);
	assert_int_equal(p.st.late_acked, 0);
	assert_int_equal(p.late_lo, p.late_hi);
	check_invariants(&p);
}

/* RTT from ts_echo across the wrap of the low 32 bits of the clock, the
 * arrival stamp of the ACK (rx_ns), and refused samples. */
static void test_rtt_ts_wrap(void **state)
{
	struct xr_txpath p;
	struct xr_ack_view v;
	uint64_t t0 = (5ull << 32) - 10 * US; /* low 32 bits wrap 10 us later */
	uint32_t psn;

	(void)state;
	xr_txpath_init(&p, 0, NULL);
	xr_txpath_send(&p, 0, 100, t0, &psn);
	view(&v, 1, psn, (uint32_t)t0);
	xr_txpath_on_ack(&p, &v, t0 + 50 * US, &res);
	assert_int_equal(res.rtt_ns, 50 * US);
	assert_int_equal(xr_rtt_srtt(&p.rtt), 50 * US);

	/* rx_ns (when XDP saw the ACK) is used, not the processing time. */
	xr_txpath_send(&p, 1, 100, t0 + 60 * US, &psn);
	view(&v, 2, psn, (uint32_t)(t0 + 60 * US));
	v.rx_ns = t0 + 90 * US;
	xr_txpath_on_ack(&p, &v, t0 + 3 * MS, &res);
	assert_int_equal(res.rtt_ns, 30 * US);

	/* Stamped by the library a little after xr_txpath_send: accepted. */
	xr_txpath_send(&p, 2, 100, t0 + 100 * US, &psn);
	view(&v, 3, psn, (uint32_t)(t0 + 105 * US));
	xr_txpath_on_ack(&p, &v, t0 + 140 * US, &res);
	assert_int_equal(res.rtt_ns, 35 * US);

	/* An echo older than our record of the transmission: refused. */
	xr_txpath_send(&p, 3, 100, t0 + 200 * US, &psn);
	view(&v, 4, psn, (uint32_t)(t0 + 100 * US));
	xr_txpath_on_ack(&p, &v, t0 + 250 * US, &res);
	assert_int_equal(res.rtt_ns, 0);
	assert_int_equal(res.nacked, 1);
	assert_int_equal(p.st.bad_ts, 1);

	/* The triggering PSN not acknowledged by the ACK itself: refused. */
	xr_txpath_send(&p, 4, 100, t0 + 300 * US, &psn);
	view(&v, 4, psn, (uint32_t)(t0 + 300 * US));
	xr_txpath_on_ack(&p, &v, t0 + 350 * US, &res);
	assert_int_equal(res.rtt_ns, 0);
	assert_int_equal(p.st.bad_ts, 2);
	assert_int_equal(xr_rtt_count(&p.rtt), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_room),
		cmocka_unit_test(test_in_order),
		cmocka_unit_test(test_single_loss),
		cmocka_unit_test(test_several_losses),
		cmocka_unit_test(test_tail_loss_timer),
		cmocka_unit_test(test_rto_backoff_reset),
		cmocka_unit_test(test_rto_cap_from_timeout),
		cmocka_unit_test(test_rto_from_rtt),
		cmocka_unit_test(test_lost_acks),
		cmocka_unit_test(test_bad_acks),
		cmocka_unit_test(test_fuzz_acks),
		cmocka_unit_test(test_wrap),
		cmocka_unit_test(test_wrap_lossy_run),
		cmocka_unit_test(test_abandon_and_late),
		cmocka_unit_test(test_late_after_timeout),
		cmocka_unit_test(test_floor_learnt),
		cmocka_unit_test(test_floor_not_from_lost_acks),
		cmocka_unit_test(test_late_not_from_forward),
		cmocka_unit_test(test_late_distrust),
		cmocka_unit_test(test_rtt_ts_wrap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
