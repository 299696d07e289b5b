/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Unit tests of congestion control, path state and path selection
 * (user/cc.c), driven by a fake clock.  A round sends what the windows
 * allow, the receiver (include/contract/rxwin.h, as XDP runs it) takes the packets
 * that survive, and every arriving packet is ACKed, the ACKs processed in
 * the order they arrive (paths may have different RTTs). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "cc.h"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunknown-pragmas"
#include "contract/rxwin.h"
#pragma GCC diagnostic pop

#define US 1000ull
#define MS 1000000ull
#define MAXEV 4096

struct ev {
	uint64_t t;
	uint32_t seq;
	int path;
	struct xr_ack_view v;
};

static struct {
	struct xr_cc cc;
	struct xr_txpath tp[XR_MAX_PATHS];
	struct xr_rx_path rx[XR_MAX_PATHS];
	struct xr_ack_result res;
	uint64_t now;
	uint32_t csn;
	int n;
	/* knobs */
	uint64_t rtt[XR_MAX_PATHS];
	uint32_t mark_mask, mark_every, loss_mask, loss_pct, hint;
	uint32_t cap;      /* a path delivers at most this many per round (0: any) */
	uint64_t spike_ns; /* extra delay of the first ACK of a round */
	uint64_t gap_late_ns; /* extra delay of the ACKs after a loss on a path
			       * in a round (the first reports it) */
	/* observations */
	uint32_t nmarked[XR_MAX_PATHS];
	uint32_t sent[XR_MAX_PATHS];  /* this round */
	uint64_t sent_total[XR_MAX_PATHS];
	uint64_t lost_total;
	uint32_t was_suspect;         /* paths ever seen SUSPECT/DOWN */
	uint32_t events[XR_MAX_PATHS]; /* all taken so far */
	struct ev evs[MAXEV];
} H;

static void h_init(int n, const struct xr_cc_cfg *cfg)
{
	int i;

	memset(&H, 0, sizeof(H));
	H.now = 1 * MS;
	H.n = n;
	assert_int_equal(xr_cc_init(&H.cc, (uint32_t)n, cfg, H.now), 0);
	for (i = 0; i < n; i++) {
		assert_int_equal(xr_txpath_init(&H.tp[i], 1000u * i, NULL), 0);
		H.rx[i].cack = 1000u * i;
		H.rtt[i] = 50 * US;
	}
	H.mark_every = 1;
	srand(1);
}

static void h_events(void)
{
	int i;

	for (i = 0; i < H.n; i++) {
		H.events[i] |= xr_cc_take_events(&H.cc, i);
		if (xr_cc_path_state(&H.cc, i) >= XR_CC_SUSPECT)
			H.was_suspect |= 1u << i;
	}
}

static void h_process(int path, struct xr_ack_view *v, uint64_t at)
{
	xr_txpath_on_ack(&H.tp[path], v, at, &H.res);
	xr_cc_on_ack(&H.cc, path, v, &H.res, &H.tp[path], at);
	H.lost_total += H.res.nlost;
	h_events();
}

static int cmp_ev(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* One round trip: send what the windows allow, ACK what arrives. */
static uint32_t h_round(void)
{
	uint32_t n = 0, nev = 0, k, psn;
	uint64_t start = H.now, dur = 0;
	bool gap[XR_MAX_PATHS] = { false };
	int i;

	memset(H.sent, 0, sizeof(H.sent));
	while (n < MAXEV) {
		bool lost, ce;

		i = xr_cc_pick_path(&H.cc, H.now);
		if (i < 0)
			break;
		assert_int_equal(xr_txpath_send(&H.tp[i], H.csn++, 1500, H.now, &psn), 0);
		xr_cc_on_send(&H.cc, i, H.now);
		H.sent[i]++;
		H.sent_total[i]++;
		n++;
		lost = (H.loss_mask >> i & 1) && (uint32_t)(rand() % 100) < H.loss_pct;
		lost |= H.cap && H.sent[i] > H.cap; /* a full queue overflows */
		ce = (H.mark_mask >> i & 1) && H.nmarked[i]++ % H.mark_every == 0;
		/* The receiver, in send order per path (a path is ordered). */
		xr_rxw_forward(&H.rx[i], xr_txpath_base(&H.tp[i]));
		if (lost) {
			gap[i] = true;
			continue;
		}
		xr_rxw_accept(&H.rx[i], psn);
		H.rx[i].rx_pkts++;
		H.rx[i].ce_pkts += ce;
		{
			struct ev *e = &H.evs[nev];

			memset(e, 0, sizeof(*e));
			e->t = start + H.rtt[i] + (nev == 0 ? H.spike_ns : 0) +
			       (gap[i] ? H.gap_late_ns : 0);
			e->seq = nev;
			e->path = i;
			e->v.cack = H.rx[i].cack;
			e->v.ack_psn = psn;
			e->v.ts_echo = (uint32_t)start;
			e->v.rate_hint = H.hint;
			memcpy(e->v.sack, H.rx[i].sack, sizeof(e->v.sack));
			e->v.ce_pkts = H.rx[i].ce_pkts;
			e->v.rx_pkts = H.rx[i].rx_pkts;
			e->v.flags = ce ? XR_AF_ECE : 0;
			e->v.rx_ns = e->t;
			nev++;
		}
		if (H.rtt[i] > dur)
			dur = H.rtt[i];
	}
	qsort(H.evs, nev, sizeof(H.evs[0]), cmp_ev);
	for (k = 0; k < nev; k++)
		h_process(H.evs[k].path, &H.evs[k].v, H.evs[k].t);
	H.now = start + (dur ? dur : 50 * US);
	if (nev && H.evs[nev - 1].t > H.now)
		H.now = H.evs[nev - 1].t;
	/* timers */
	for (i = 0; i < H.n; i++) {
		if (xr_txpath_on_timer(&H.tp[i], H.now, &H.res) > 0)
			xr_cc_on_timeout(&H.cc, i, &H.res, H.now);
	}
	xr_cc_on_timer(&H.cc, H.now);
	h_events();
	return n;
}

static void h_rounds(int r)
{
	while (r-- > 0)
		h_round();
}

/* ------------------------------------------------------------------ */

static void test_init(void **state)
{
	struct xr_cc_cfg cfg;
	int i;

	(void)state;
	assert_int_equal(xr_cc_init(&H.cc, 0, NULL, 0), -EINVAL);
	assert_int_equal(xr_cc_init(&H.cc, XR_MAX_PATHS + 1, NULL, 0), -EINVAL);
	xr_cc_cfg_default(&cfg);
	cfg.path_max_cwnd = 300; /* beyond the PSN window */
	assert_int_equal(xr_cc_init(&H.cc, 2, &cfg, 0), -EINVAL);

	h_init(4, NULL);
	assert_true(xr_cc_conn_window(&H.cc) == 32);
	assert_int_equal(xr_cc_pacing_rate(&H.cc), 0); /* no RTT yet */
	assert_int_equal(xr_cc_next_send_ns(&H.cc, H.now), H.now);
	for (i = 0; i < 4; i++) {
		assert_int_equal(xr_cc_path_state(&H.cc, i), XR_CC_GOOD);
		assert_true(xr_cc_path_usable(&H.cc, i));
		assert_int_equal(xr_cc_path_weight(&H.cc, i), 16);
	}
	assert_false(xr_cc_path_usable(&H.cc, 4));
	assert_false(xr_cc_path_usable(&H.cc, -1));
	/* Equal paths: round robin, until the connection window (32) is full. */
	for (i = 0; i < 32; i++) {
		assert_int_equal(xr_cc_pick_path(&H.cc, H.now), i % 4);
		xr_cc_on_send(&H.cc, i % 4, H.now);
	}
	assert_int_equal(xr_cc_pick_path(&H.cc, H.now), -EAGAIN);
	assert_int_equal(xr_cc_path_weight(&H.cc, 0), 8);
}

static void test_slow_start(void **state)
{
	(void)state;
	h_init(1, NULL);
	assert_int_equal(h_round(), 16);   /* path window */
	/* The path doubles (16 -> 32); the connection window (32) was only
	 * half used, so it grows to 33 only; the path is then raised to its
	 * share of the connection window (all of it: one path). */
	assert_true(H.cc.conn.cwnd == 33);
	assert_true(H.cc.path[0].ctl.cwnd == 33);
	assert_int_equal(h_round(), 33);
	assert_int_equal(h_round(), 66);
	assert_true(H.cc.conn.cwnd == 132);
	assert_int_equal(H.cc.conn.cuts_ecn + H.cc.conn.cuts_delay, 0);
	assert_int_equal(H.cc.srtt_ns, 50 * US);
	assert_int_equal(H.cc.path[0].srtt_ns, 50 * US);
	/* Capped by the PSN window. */
	h_rounds(5);
	assert_true(H.cc.path[0].ctl.cwnd == 256);
	assert_int_equal(h_round(), 256);
}

/* All packets marked: DCTCP with alpha = 1 halves, once per RTT. */
/* A path's own window (cc.c, path_ecn_factor): half, times the chance that
 * its w packets hold a mark; DCTCP's 1 - alpha/2 with cfg.ecn_dctcp. */
static double path_ecn_cut(double alpha, double w)
{
	if (H.cc.cfg.ecn_dctcp || w <= 1)
		return 1 - alpha / 2;
	return 1 - (1 - pow(1 - alpha, w)) / 2;
}

/* The connection's (cc.c, ecn_factor): the path's rule, but at least
 * ecn_beta per marked RTT; DCTCP's 1 - alpha/2 with cfg.ecn_dctcp. */
static double ecn_cut(double alpha, double w)
{
	double f = path_ecn_cut(alpha, w);

	if (H.cc.cfg.ecn_dctcp)
		return f;
	return f < 1 - H.cc.cfg.ecn_beta ? f : 1 - H.cc.cfg.ecn_beta;
}

static void marks(const struct xr_cc_cfg *cfg)
{
	double pw, cw, pa, ca;

	h_init(1, cfg);
	h_rounds(2);
	pw = H.cc.path[0].ctl.cwnd;
	cw = xr_cc_conn_window(&H.cc);
	/* alpha started at 1 and decays by 15/16 per unmarked window */
	pa = H.cc.path[0].ctl.alpha;
	ca = H.cc.conn.alpha;
	assert_true(pa > 0.8 && pa < 1);
	H.mark_mask = 1;
	h_round();
	assert_int_equal(H.cc.path[0].ctl.cuts_ecn, 1);
	assert_int_equal(H.cc.conn.cuts_ecn, 1);
	/* cut once, no increase for the rest of that RTT; the only path keeps
	 * at least the connection window (its share) */
	assert_true(H.cc.conn.cwnd == cw * ecn_cut(ca, cw));
	assert_true(H.cc.path[0].ctl.cwnd == pw * path_ecn_cut(pa, pw) ||
		    H.cc.path[0].ctl.cwnd == H.cc.conn.cwnd);
	assert_true(H.cc.path[0].ctl.cwnd >= H.cc.conn.cwnd);
	assert_int_equal(xr_cc_path_state(&H.cc, 0), XR_CC_CONGESTED);
	assert_true(H.cc.path[0].marks > 10);
	/* Next RTT: one more cut. */
	cw = H.cc.conn.cwnd;
	ca = H.cc.conn.alpha;
	h_round();
	assert_int_equal(H.cc.path[0].ctl.cuts_ecn, 2);
	assert_int_equal(H.cc.conn.cuts_ecn, 2);
	assert_true(H.cc.conn.cwnd == cw * ecn_cut(ca, cw) ||
		    H.cc.conn.cwnd == H.cc.cfg.conn_min_cwnd);
	assert_true(H.cc.path[0].ctl.cwnd >= 1);
	/* Marks stop: back to GOOD after 2 RTTs, and growing again. */
	H.mark_mask = 0;
	h_rounds(3);
	assert_int_equal(xr_cc_path_state(&H.cc, 0), XR_CC_GOOD);
	pw = H.cc.path[0].ctl.cwnd;
	h_rounds(3);
	assert_true(H.cc.path[0].ctl.cwnd > pw);
}

/* All packets marked: cut once per RTT, by a half while alpha is near 1
 * (the default rule, whose cut is at least 40%, or DCTCP's with
 * cfg.ecn_dctcp). */
static void test_marks(void **state)
{
	struct xr_cc_cfg cfg;

	(void)state;
	marks(NULL);
	xr_cc_cfg_default(&cfg);
	cfg.ecn_dctcp = 1;
	marks(&cfg);
}

/* One round with alpha 0.01 on the connection and its only path and one
 * packet in a thousand marked: the connection window before it (the
 * round must cut it once). */
static double light_mark_round(void)
{
	double cw;

	H.cc.conn.alpha = 0.01;
	H.cc.path[0].ctl.alpha = 0.01;
	cw = xr_cc_conn_window(&H.cc);
	H.mark_mask = 1;
	H.mark_every = 1000;
	H.nmarked[0] = 0;
	h_round();
	assert_int_equal(H.cc.conn.cuts_ecn, 1);
	return cw;
}

/* A marked RTT costs the connection at least ecn_beta (40%) of its window
 * however lightly it was marked, as it costs a classic (RFC 3168) flow: the
 * cut comes only in RTTs that carry a mark, as often as a classic flow of
 * this window sees one.  (The rule before scaled the cut by the chance of a
 * mark as well, and cut a window with one mark in a hundred packets by ~2%
 * where CUBIC cuts 30%.)  A window that surely holds a mark is halved, as
 * Reno halves.  DCTCP's rule, asked for, still cuts alpha/2. */
static void test_marks_classic(void **state)
{
	struct xr_cc_cfg cfg;
	double cw;

	(void)state;
	h_init(1, NULL);
	assert_true(H.cc.cfg.ecn_beta == 0.4);
	/* a lightly marked small window: 40% (the rule before: ~2%) */
	assert_true(fabs(ecn_cut(0.01, 4) - 0.6) < 1e-12);
	assert_true(path_ecn_cut(0.01, 4) > 0.97);
	/* a window that surely holds a mark: about a half */
	assert_true(ecn_cut(0.01, 400) < 0.51);
	/* through the controller, a small window lightly marked: one marked
	 * packet in a round of a few dozen costs 40%, where the rule before
	 * (classic_cut alone) cut by less than 20% */
	h_rounds(1);
	cw = light_mark_round();
	assert_true(cw >= 8 && cw <= 80);
	assert_true(path_ecn_cut(0.01, cw) > 0.8);
	assert_true(fabs(H.cc.conn.cwnd - cw * 0.6) < 1e-9);
	/* a large window lightly marked: the classic cut, nearly a half */
	h_init(1, NULL);
	h_rounds(8);
	cw = light_mark_round();
	assert_true(H.cc.conn.cwnd == cw * ecn_cut(0.01, cw));
	assert_true(H.cc.conn.cwnd < cw * 0.6);
	/* the same light marking under DCTCP's rule: a cut of alpha/2 */
	xr_cc_cfg_default(&cfg);
	cfg.ecn_dctcp = 1;
	h_init(1, &cfg);
	h_rounds(8);
	cw = light_mark_round();
	assert_true(H.cc.conn.cwnd > cw * 0.99);
	/* a beta outside (0, 0.5] is refused (above a half, "up to a half"
	 * would no longer hold) */
	xr_cc_cfg_default(&cfg);
	cfg.ecn_beta = 0.6;
	assert_int_equal(xr_cc_init(&H.cc, 1, &cfg, 0), -EINVAL);
	cfg.ecn_beta = 0;
	assert_int_equal(xr_cc_init(&H.cc, 1, &cfg, 0), -EINVAL);
}

/* alpha tracks the marked fraction: 1 in 10 marked -> alpha ~0.1 and, with
 * DCTCP's rule, cuts of ~5%. */
static void test_alpha(void **state)
{
	struct xr_cc_cfg cfg;
	double before, after;
	uint64_t cuts;

	(void)state;
	xr_cc_cfg_default(&cfg);
	cfg.ecn_dctcp = 1;
	h_init(1, &cfg);
	h_rounds(6);
	H.mark_mask = 1;
	H.mark_every = 10;
	h_rounds(300);
	assert_true(H.cc.path[0].ctl.alpha > 0.05 && H.cc.path[0].ctl.alpha < 0.2);
	assert_true(H.cc.conn.alpha > 0.05 && H.cc.conn.alpha < 0.2);
	cuts = H.cc.path[0].ctl.cuts_ecn;
	before = H.cc.path[0].ctl.cwnd;
	while (H.cc.path[0].ctl.cuts_ecn == cuts) {
		before = H.cc.path[0].ctl.cwnd;
		h_round();
	}
	after = H.cc.path[0].ctl.cwnd;
	assert_true(after < before && after > before * 0.85);
}

/* A mark on one path of four trims that path, the connection less, and
 * steers the next packets to the clean paths. */
static void test_mark_one_path(void **state)
{
	double pw, cw, pa;

	(void)state;
	h_init(4, NULL);
	h_rounds(4);
	pw = H.cc.path[2].ctl.cwnd;
	pa = H.cc.path[2].ctl.alpha;
	cw = xr_cc_conn_window(&H.cc);
	H.mark_mask = 1u << 2;
	h_round();
	assert_int_equal(H.cc.path[2].ctl.cuts_ecn, 1);
	/* by (1 - alpha/2), down to no less than its share of the connection */
	assert_true(H.cc.path[2].ctl.cwnd == pw * path_ecn_cut(pa, pw) ||
		    H.cc.path[2].ctl.cwnd == xr_cc_conn_window(&H.cc) / 4);
	assert_true(H.cc.path[2].ctl.cwnd < pw);
	assert_int_equal(xr_cc_path_state(&H.cc, 2), XR_CC_CONGESTED);
	assert_int_equal(H.cc.path[0].ctl.cuts_ecn, 0);
	assert_int_equal(xr_cc_path_state(&H.cc, 0), XR_CC_GOOD);
	/* The connection was cut by less than the path (its alpha starts at 1
	 * too, so this first cut is a half; then it learns the fraction). */
	assert_true(H.cc.conn.cwnd >= cw / 2);
	/* While clean paths have room the congested one gets nothing. */
	h_round();
	assert_int_equal(H.sent[2], 0);
	assert_true(H.sent[0] > 0 && H.sent[1] > 0 && H.sent[3] > 0);
	/* Long run with path 2 always marked: the connection's alpha is about
	 * the share of marked packets, far below path 2's, and path 2 carries
	 * a small share of the traffic. */
	h_rounds(200);
	assert_true(H.cc.path[2].ctl.alpha > 0.5);
	assert_true(H.cc.conn.alpha < 0.3);
	assert_true(H.sent_total[2] * 5 < H.sent_total[0]);
	/* Marks stop: path 2 returns to service and to its share. */
	H.mark_mask = 0;
	memset(H.sent_total, 0, sizeof(H.sent_total));
	h_rounds(300);
	assert_int_equal(xr_cc_path_state(&H.cc, 2), XR_CC_GOOD);
	assert_true(H.sent_total[2] * 2 > H.sent_total[0]);
}

/* Random loss without marks is not congestion: no cut, no suspicion; it
 * ends slow start (a loss might be the queue's edge) and growth goes on,
 * to the window a loss-free run reaches.  With loss_beta set, the same
 * losses cut. */
static void test_random_loss_no_reaction(void **state)
{
	struct xr_cc_cfg cfg;
	double lossless[2], w12;
	int np, i;

	(void)state;
	for (np = 1; np <= 4; np += 3) {
		h_init(np, NULL);
		h_rounds(400);
		lossless[np == 4] = xr_cc_conn_window(&H.cc);

		h_init(np, NULL);
		H.loss_mask = 0xffff;
		H.loss_pct = 10;
		h_rounds(12);
		assert_true(H.lost_total > 50);
		for (i = 0; i < np; i++) {
			assert_int_equal(H.cc.path[i].ctl.cuts_ecn +
					 H.cc.path[i].ctl.cuts_delay +
					 H.cc.path[i].ctl.cuts_loss, 0);
			assert_true(H.cc.path[i].loss_ewma < 0.25);
		}
		assert_int_equal(H.cc.conn.cuts_loss + H.cc.conn.cuts_ecn, 0);
		assert_int_equal(H.was_suspect, 0);
		assert_true(H.cc.conn.cwnd >= H.cc.conn.ssthresh); /* ended */
		w12 = xr_cc_conn_window(&H.cc);
		/* over a long run: no cut, and the window grows on to what a
		 * loss-free run reached (or at least triples) */
		h_rounds(400);
		assert_int_equal(H.was_suspect, 0);
		assert_int_equal(H.cc.conn.cuts_loss + H.cc.conn.cuts_ecn, 0);
		assert_true(xr_cc_conn_window(&H.cc) >= 0.9 * lossless[np == 4] ||
			    xr_cc_conn_window(&H.cc) >= 3 * w12);
		assert_int_equal(H.cc.compete, 0);
	}

	xr_cc_cfg_default(&cfg);
	cfg.loss_beta = 0.3;
	h_init(1, &cfg);
	H.loss_mask = 1;
	H.loss_pct = 10;
	h_rounds(12);
	assert_true(H.cc.path[0].ctl.cuts_loss > 0);
	assert_true(xr_cc_conn_window(&H.cc) < 0.5 * lossless[0]);
}

/* Losses only while the queue is high (a drop-tail queue overflows only
 * when full) are congestion: a halving per RTT.  The same loss rate at
 * every queue level is random loss: no cut.  Queue "high" and "low" are
 * RTTs above and below the connection's mid RTT; both stay under the
 * delay target here, so only losses can tell. */
static void loss_vs_queue(bool follow)
{
	int phase;

	h_init(1, NULL);
	for (phase = 0; phase < 40; phase++) {
		H.rtt[0] = 50 * US;
		H.loss_mask = follow ? 0 : 1;
		H.loss_pct = 5;
		h_rounds(10);
		H.rtt[0] = 400 * US;
		H.loss_mask = 1;
		h_rounds(10);
	}
	assert_true(H.lost_total > 200);
	assert_int_equal(H.was_suspect, 0);
	assert_int_equal(H.cc.compete, 0);
	if (follow) {
		assert_true(H.cc.lq.cong > 10);
		assert_true(H.cc.conn.cuts_loss > 5);
	} else {
		assert_int_equal(H.cc.lq.cong, 0);
		assert_int_equal(H.cc.conn.cuts_loss, 0);
	}
}

/* After a run with random loss only: print the verdict's bands, and
 * check that at least min_lost packets were lost and none of it was taken
 * for congestion (no compete mode, no loss cut). */
static void assert_loss_random(const char *what, uint64_t min_lost)
{
	printf("  %s: %llu lost, %.0f/%.0f low, %.0f/%.0f high, %llu taken as "
	       "congestion, %llu loss cuts\n", what,
	       (unsigned long long)H.lost_total, H.cc.lq.lost_lo, H.cc.lq.n_lo,
	       H.cc.lq.lost_hi, H.cc.lq.n_hi, (unsigned long long)H.cc.lq.cong,
	       (unsigned long long)H.cc.conn.cuts_loss);
	assert_true(H.lost_total > min_lost);
	assert_int_equal(H.cc.compete, 0);
	assert_int_equal(H.cc.lq.cong, 0);
	assert_int_equal(H.cc.conn.cuts_loss, 0);
}

/* Random loss where the queue is almost never low: a path whose RTT sits
 * at its mid nearly all the time and dips below it one round in 32 (a
 * queue that is a busy CPU, not a link: the real 1% loss sweep on veth).
 * The low band then holds a few hundred packets and a handful of losses,
 * and chance alone made its loss rate look a third of the high band's:
 * the old verdict took random loss for overflow (27 losses here; 40-54
 * window cuts in 4 s of the real sweep).  The verdict now takes the low
 * band's loss count at an upper bound of what it may be, so a handful of
 * losses there no longer convicts the queue. */
static void test_random_loss_rare_low_queue(void **state)
{
	int phase, i;

	(void)state;
	h_init(4, NULL);
	H.loss_mask = 0xf;
	H.loss_pct = 1;
	for (phase = 0; phase < 400; phase++) {
		for (i = 0; i < 4; i++)
			H.rtt[i] = 100 * US;
		h_rounds(31);
		for (i = 0; i < 4; i++)
			H.rtt[i] = 60 * US;
		h_rounds(1);
	}
	assert_loss_random("1% loss, low queue 1 round in 32", 1000);
}

/* On a busy host the ACK that reports a loss comes late more often than
 * the others (measured on the pair fabric at 1% random loss: 0.5% of the
 * packets lost whose own ACK saw a low queue, 1.3% of the rest).  Here the
 * queue is low half the time and high the other half, losses are random,
 * and the ACKs that report one (all that follow it in its round on its
 * path) are 60 us late, above the mid RTT.  Judged
 * by that ACK's RTT every loss would come with a high queue and the
 * verdict would call it overflow; judged by the lower of it and the
 * path's previous ACK (what the queue was as the packets went through),
 * the loss rates of the two bands stay alike. */
static void test_random_loss_late_reporting_ack(void **state)
{
	int phase, i;

	(void)state;
	h_init(4, NULL);
	H.loss_mask = 0xf;
	H.loss_pct = 1;
	H.gap_late_ns = 60 * US;
	for (phase = 0; phase < 200; phase++) {
		for (i = 0; i < 4; i++)
			H.rtt[i] = (phase & 1) ? 100 * US : 60 * US;
		h_rounds(8);
	}
	assert_loss_random("1% loss, reporting ACKs late", 500);
}

static void test_loss_follows_queue(void **state)
{
	(void)state;
	loss_vs_queue(true);
	loss_vs_queue(false);
}

/* A queue pinned full (too shallow for the delay signal: the RTT cannot
 * rise, and no low-queue RTTs to compare with): every path delivers at
 * most 20 packets a round and drops the rest.  A window that overruns it
 * loses a fraction no random loss reaches, on every path alike: that is
 * congestion, not failure; the window settles around what fits instead of
 * flooding the queue.  (One path of three losing that much is that path
 * failing: test_failure_vs_congestion.) */
static void test_pinned_queue(void **state)
{
	uint64_t sent = 0;
	int i;

	(void)state;
	h_init(3, NULL);
	H.cap = 20;
	h_rounds(100);
	for (i = 0; i < 3; i++)
		sent += H.sent_total[i];
	assert_true(H.cc.conn.cuts_loss >= 2);
	assert_int_equal(H.was_suspect, 0);
	assert_true(xr_cc_conn_window(&H.cc) < 2 * 3 * 20);
	assert_true(H.lost_total * 10 < sent); /* not flooding it */
}

/* The RTT of a queue of our own: 50 us plus 12 us per packet in flight
 * beyond a BDP of 10 packets. */
static void own_queue_round(void)
{
	uint32_t n = H.cc.conn.inflight ? H.cc.conn.inflight
					: (uint32_t)xr_cc_conn_window(&H.cc);

	H.rtt[0] = 50 * US + (n > 10 ? (n - 10) * 12 * US : 0);
	h_round();
}

/* A standing queue that our backing off does not drain (flows that fill
 * a drop-tail queue hold it): once the window is halved and the queue
 * still stands, compete mode: no delay cuts, additive increase.  A drain
 * probe every drain_every_ns holds the window low for 2 srtt: the window
 * comes back while the queue stands; when the RTT falls to the target
 * (and to half) during one, the queue was ours and compete mode ends.  A
 * queue of our own from the start never gets there. */
static void test_compete(void **state)
{
	uint64_t cuts, t;
	double w, w0;
	int i;

	(void)state;
	h_init(1, NULL);
	h_rounds(10);                   /* learns the 50 us base */
	H.rtt[0] = 3 * MS;              /* a queue of others' */
	for (i = 0; i < 200 && !H.cc.compete; i++)
		h_round();
	assert_int_equal(H.cc.compete, 1);
	assert_int_equal(H.cc.competes, 1);
	assert_true(H.cc.conn.cuts_delay >= 2);
	cuts = H.cc.conn.cuts_delay;
	w0 = H.cc.conn.cwnd;
	h_rounds(50);
	assert_int_equal(H.cc.conn.cuts_delay, cuts);
	assert_true(H.cc.conn.cwnd > w0 + 30);
	/* the drain probe: the window comes back, compete mode stays */
	t = H.now;
	while (!H.cc.drains && H.now - t < 2 * H.cc.cfg.drain_every_ns)
		h_round();
	assert_int_equal(H.cc.drains, 1);
	w = H.cc.drain_saved;
	h_rounds(4);
	assert_int_equal(H.cc.drains_alone, 0);
	assert_int_equal(H.cc.compete, 1);
	assert_true(H.cc.conn.cwnd >= w);
	/* the others leave, the queue is ours: the next probe drains it */
	t = H.now;
	while (H.cc.compete && H.now - t < 2 * H.cc.cfg.drain_every_ns)
		own_queue_round();
	assert_int_equal(H.cc.compete, 0);
	assert_int_equal(H.cc.drains_alone, 1);

	/* Our own queue: the RTT grows with what we send beyond a BDP of
	 * 10 packets; the delay rule holds it near the target. */
	h_init(1, NULL);
	h_rounds(5);
	for (i = 0; i < 400; i++)
		own_queue_round();
	assert_true(H.cc.conn.cuts_delay > 5);
	assert_int_equal(H.cc.competes, 0);
}

/* A timeout of packets sent while the connection saw congestion is a
 * congestion drop the gap rule could not see: not failure (a second in a
 * row is; test_blackhole_down, and without congestion
 * test_late_ack_restores). */
static void test_timeout_in_congestion(void **state)
{
	uint32_t psn;
	int i;

	(void)state;
	h_init(2, NULL);
	h_rounds(4);
	H.mark_mask = 1;
	h_round();
	H.mark_mask = 0;
	for (i = 0; i < 4; i++) {
		xr_txpath_send(&H.tp[1], 700 + i, 1500, H.now, &psn);
		xr_cc_on_send(&H.cc, 1, H.now);
	}
	H.now = xr_txpath_next_deadline(&H.tp[1]);
	assert_int_equal(xr_txpath_on_timer(&H.tp[1], H.now, &H.res), 4);
	xr_cc_on_timeout(&H.cc, 1, &H.res, H.now);
	assert_int_equal(xr_cc_path_state(&H.cc, 1), XR_CC_GOOD);
	assert_int_equal(H.cc.path[1].ctl.inflight, 0);
}

/* Paths of different lengths: ACKs of path B arrive after ACKs of later
 * packets on path A.  Not a loss, not a signal. */
static void test_reorder_across_paths(void **state)
{
	int i;

	(void)state;
	h_init(2, NULL);
	H.rtt[0] = 20 * US;
	H.rtt[1] = 300 * US;
	h_rounds(50);
	for (i = 0; i < 2; i++) {
		assert_int_equal(H.tp[i].st.sack_lost, 0);
		assert_int_equal(H.tp[i].st.timeouts, 0);
		assert_int_equal(H.cc.path[i].ctl.cuts_ecn + H.cc.path[i].ctl.cuts_delay, 0);
		assert_int_equal(xr_cc_path_state(&H.cc, i), XR_CC_GOOD);
		assert_true(H.sent_total[i] > 100);
	}
	assert_int_equal(H.cc.conn.cuts_ecn + H.cc.conn.cuts_delay, 0);
	assert_true(H.cc.conn.cwnd > 100);
	assert_int_equal(H.lost_total, 0);
}

/* The delay signal: a standing queue (every sample high) cuts once per
 * RTT; a single late ACK in a round does not. */
static void test_delay_signal(void **state)
{
	double pw;
	uint64_t c;

	(void)state;
	h_init(1, NULL);
	h_rounds(10);
	H.spike_ns = 3 * MS;
	h_rounds(5);
	assert_int_equal(H.cc.path[0].ctl.cuts_delay, 0);
	assert_int_equal(H.cc.conn.cuts_delay, 0);
	H.spike_ns = 0;

	pw = H.cc.path[0].ctl.cwnd;
	H.rtt[0] = 2 * MS; /* target = 50 us + 500 us */
	h_round();
	h_round();
	c = H.cc.path[0].ctl.cuts_delay;
	assert_true(c >= 1 && c <= 2);
	assert_true(H.cc.conn.cuts_delay >= 1);
	assert_true(H.cc.path[0].ctl.cwnd < pw * 0.7);
	assert_true(H.cc.path[0].ctl.cwnd >= 1);
	assert_int_equal(xr_cc_path_state(&H.cc, 0), XR_CC_CONGESTED);
	/* At most once per RTT: 5 more RTTs, at most 5 more cuts. */
	h_rounds(5);
	assert_true(H.cc.path[0].ctl.cuts_delay - c <= 5);
	/* An absolute target. */
	{
		struct xr_cc_cfg cfg;

		xr_cc_cfg_default(&cfg);
		cfg.delay_target_ns = 30 * US;
		h_init(1, &cfg);
		h_rounds(5);
		assert_true(H.cc.path[0].ctl.cuts_delay > 0);
	}
}

/* The receiver's hint caps the window (hint * srtt) and the pacing rate,
 * and a rising hint is jumped to. */
static void test_rate_hint(void **state)
{
	uint64_t rate;
	uint32_t n;

	(void)state;
	h_init(1, NULL);
	H.rtt[0] = 100 * US;
	H.hint = 1000; /* Mbit/s: 83333 packets/s of 1500 B: 8.3 per 100 us */
	h_round();
	h_round();
	/* window cap: 2 * hint * srtt */
	assert_true(xr_cc_conn_window(&H.cc) > 16.5 && xr_cc_conn_window(&H.cc) < 16.8);
	n = h_round();
	assert_int_equal(n, 16);
	rate = xr_cc_pacing_rate(&H.cc);
	assert_true(rate <= 125000000ull && rate > 124000000ull);

	/* A higher hint: jump there at once (no slow start to it). */
	H.hint = 5000; /* 41.7 packets per RTT, window cap 83.3 */
	h_round();
	assert_true(xr_cc_conn_window(&H.cc) > 83);
	assert_true(H.cc.path[0].ctl.cwnd > 83);
	n = h_round();
	assert_true(n >= 83 && n <= 84);

	/* Lower again: capped again. */
	H.hint = 1000;
	h_round();
	n = h_round();
	assert_true(n >= 16 && n <= 17);

	/* No hint: no cap, the window is the one the connection had. */
	H.hint = 0;
	h_round();
	assert_true(xr_cc_conn_window(&H.cc) > 80);
}

/* Pacing: bursts of at most 32, then one packet per 1/rate; never above
 * the hint. */
static void test_pacing(void **state)
{
	uint64_t t, t0, start;
	uint32_t n;
	double rate_ppns;

	(void)state;
	h_init(1, NULL);
	H.rtt[0] = 100 * US;
	H.hint = 1000;
	h_rounds(3);
	t = H.now + 10 * MS; /* bucket full */
	for (n = 0; xr_cc_next_send_ns(&H.cc, t) == t; n++)
		xr_cc_on_send(&H.cc, 0, t);
	assert_int_equal(n, 32);
	rate_ppns = 1000e6 / (8.0 * 1500) / 1e9;
	t0 = xr_cc_next_send_ns(&H.cc, t);
	assert_true(t0 > t);
	assert_true(t0 - t <= (uint64_t)(1 / rate_ppns) + 1);
	/* Sending 1000 packets as fast as pacing allows takes >= 1000 / rate. */
	start = t0;
	t = t0;
	for (n = 0; n < 1000; n++) {
		t = xr_cc_next_send_ns(&H.cc, t);
		xr_cc_on_send(&H.cc, 0, t);
	}
	assert_true((double)(t - start) >= 999 / rate_ppns * 0.999);
}

/* Ack requests (PROTOCOL.md 7.3): every other PSN, a retransmission and
 * the tail always; the even PSNs of a busy path not, unless a window or
 * the pacing rate would leave the path's next packet (which answers for
 * them) too far off. */
static void test_ack_wanted(void **state)
{
	int i;

	(void)state;
	h_init(2, NULL);
	/* No RTT yet: not paced, so no idea when the next packet goes. */
	assert_true(xr_cc_ack_wanted(&H.cc, 0, 2, false, false, H.now));
	H.rtt[0] = H.rtt[1] = 100 * US;
	H.hint = 1000;
	h_rounds(3);
	assert_true(xr_cc_conn_window(&H.cc) >= 16);
	assert_true(xr_cc_ack_wanted(&H.cc, 0, 3, false, false, H.now));
	assert_false(xr_cc_ack_wanted(&H.cc, 0, 2, false, false, H.now));
	assert_false(xr_cc_ack_wanted(&H.cc, 1, 4, false, false, H.now));
	assert_true(xr_cc_ack_wanted(&H.cc, 0, 2, true, false, H.now));
	assert_true(xr_cc_ack_wanted(&H.cc, 0, 2, false, true, H.now));
	assert_true(xr_cc_ack_wanted(&H.cc, 2, 2, false, false, H.now)); /* no path */
	assert_true(xr_cc_ack_wanted(&H.cc, -1, 2, false, false, H.now));
	/* A path window under 8 asks on every packet. */
	H.cc.path[1].ctl.cwnd = 7;
	assert_true(xr_cc_ack_wanted(&H.cc, 1, 4, false, false, H.now));
	assert_false(xr_cc_ack_wanted(&H.cc, 0, 4, false, false, H.now));
	/* So does a connection window under 4 per path; 4 to 8 no longer
	 * does (the nudge finds a silent path's tail). */
	H.cc.path[1].ctl.cwnd = 30;
	H.cc.conn.cwnd = 7;
	assert_true(xr_cc_conn_window(&H.cc) < 8);
	assert_true(xr_cc_ack_wanted(&H.cc, 0, 4, false, false, H.now));
	H.cc.conn.cwnd = 12;
	assert_true(xr_cc_conn_window(&H.cc) >= 8 &&
		    xr_cc_conn_window(&H.cc) < 16);
	assert_false(xr_cc_ack_wanted(&H.cc, 0, 4, false, false, H.now));
	/* A nudge asks: its answer is the point of it. */
	H.cc.path[0].ctl.inflight = 3;
	H.cc.path[0].heard_ns = H.now - 1 * MS;
	assert_true(xr_cc_ack_wanted(&H.cc, 0, 4, false, false, H.now));
	H.cc.path[0].heard_ns = H.now;
	assert_false(xr_cc_ack_wanted(&H.cc, 0, 4, false, false, H.now));
	/* A hint of 10 Mbit/s paces 1500-byte packets 1.2 ms apart: a path's
	 * next turn is beyond the RTO floor. */
	h_init(2, NULL);
	H.rtt[0] = H.rtt[1] = 100 * US;
	H.hint = 10;
	h_rounds(3);
	for (i = 0; i < 2; i++)
		assert_true(xr_cc_ack_wanted(&H.cc, i, 2, false, false, H.now));
}

/* Unmarked loss on one path is failure; marked loss on another is
 * congestion.  Each gets its own treatment. */
static void test_failure_vs_congestion(void **state)
{
	double w0;

	(void)state;
	h_init(3, NULL);
	h_rounds(4);
	w0 = H.cc.path[0].ctl.cwnd;
	H.loss_mask = 0x3; /* paths 0 and 1 lose half their packets */
	H.loss_pct = 50;
	H.mark_mask = 0x2; /* path 1's survivors are CE marked */
	h_rounds(20);
	/* path 0: failure */
	assert_true(H.was_suspect & 1);
	assert_true(H.events[0] & XR_CC_EV_SUSPECT);
	assert_true(H.events[0] & XR_CC_EV_REROUTE);
	assert_int_equal(H.cc.path[0].ctl.cuts_ecn + H.cc.path[0].ctl.cuts_loss, 0);
	assert_true(H.cc.path[0].ctl.cwnd >= w0);
	assert_false(xr_cc_path_usable(&H.cc, 0));
	/* path 1: congestion */
	assert_false(H.was_suspect & 2);
	assert_true(H.cc.path[1].ctl.cuts_ecn > 0);
	assert_true(xr_cc_path_usable(&H.cc, 1));
	/* path 2 untouched */
	assert_int_equal(xr_cc_path_state(&H.cc, 2), XR_CC_GOOD);
}

/* A blackholed path: timeout -> SUSPECT (its packets move), failed probes
 * -> new entropy each time -> DOWN after 3, probed with backoff; an
 * isolated tail loss does not make a path suspect. */
static void test_blackhole_down(void **state)
{
	struct xr_ack_result *r = &H.res;
	uint64_t due;
	int i;

	(void)state;
	h_init(2, NULL);
	h_rounds(4);
	H.loss_mask = 1;
	H.loss_pct = 100;
	for (i = 0; i < 40 && !(H.was_suspect & 1); i++)
		h_round();
	assert_true(H.was_suspect & 1);
	assert_int_equal(xr_cc_path_state(&H.cc, 0), XR_CC_SUSPECT);
	assert_true(H.events[0] & XR_CC_EV_SUSPECT);
	assert_int_equal(H.cc.path[0].timeouts, 1);
	assert_int_equal(H.cc.path[0].ctl.inflight, 0);
	assert_int_equal(H.cc.path[0].ctl.cuts_ecn + H.cc.path[0].ctl.cuts_loss, 0);
	/* Everything goes to path 1 now. */
	h_round();
	assert_int_equal(H.sent[0], 0);
	assert_true(H.sent[1] > 0);

	/* Probes fail: REROUTE each time, DOWN at the third failure (the
	 * timeout counted as the first). */
	H.events[0] = 0;
	due = xr_cc_probe_due(&H.cc, 0);
	assert_true(due <= H.now);
	xr_cc_probe_sent(&H.cc, 0, H.now);
	assert_true(xr_cc_probe_due(&H.cc, 0) == UINT64_MAX); /* one at a time */
	assert_int_equal(xr_cc_next_deadline(&H.cc), H.now + 1 * MS);
	H.now += 1 * MS;
	xr_cc_on_timer(&H.cc, H.now);
	h_events();
	assert_true(H.events[0] & XR_CC_EV_REROUTE);
	assert_int_equal(xr_cc_path_state(&H.cc, 0), XR_CC_SUSPECT);
	assert_int_equal(xr_cc_probe_due(&H.cc, 0), H.now + 200 * US);
	H.now += 200 * US;
	xr_cc_probe_sent(&H.cc, 0, H.now);
	H.now += 1 * MS;
	xr_cc_on_timer(&H.cc, H.now);
	h_events();
	assert_int_equal(xr_cc_path_state(&H.cc, 0), XR_CC_DOWN);
	assert_true(H.events[0] & XR_CC_EV_DOWN);
	assert_false(xr_cc_path_usable(&H.cc, 0));
	/* Probing continues, with a backoff. */
	assert_int_equal(xr_cc_probe_due(&H.cc, 0), H.now + 400 * US);
	H.now += 400 * US;
	xr_cc_probe_sent(&H.cc, 0, H.now);
	H.now += 1 * MS;
	xr_cc_on_timer(&H.cc, H.now);
	assert_int_equal(xr_cc_probe_due(&H.cc, 0), H.now + 800 * US);
	assert_int_equal(H.cc.path[0].probes_failed, 3);

	/* One isolated lost packet timing out: not a failure. */
	h_init(2, NULL);
	h_rounds(3);
	{
		uint32_t psn;

		xr_txpath_send(&H.tp[1], 999, 1500, H.now, &psn);
		xr_cc_on_send(&H.cc, 1, H.now);
		H.now = xr_txpath_next_deadline(&H.tp[1]);
		assert_int_equal(xr_txpath_on_timer(&H.tp[1], H.now, r), 1);
		xr_cc_on_timeout(&H.cc, 1, r, H.now);
		assert_int_equal(xr_cc_path_state(&H.cc, 1), XR_CC_GOOD);
		assert_int_equal(H.cc.path[1].ctl.inflight, 0);
		/* ... but a second one in a row is. */
		xr_txpath_send(&H.tp[1], 999, 1500, H.now, &psn);
		xr_cc_on_send(&H.cc, 1, H.now);
		H.now = xr_txpath_next_deadline(&H.tp[1]);
		assert_int_equal(xr_txpath_on_timer(&H.tp[1], H.now, r), 1);
		xr_cc_on_timeout(&H.cc, 1, r, H.now);
		assert_int_equal(xr_cc_path_state(&H.cc, 1), XR_CC_SUSPECT);
	}
}

/* Re-probing and return to service. */
static void test_probe_return(void **state)
{
	uint32_t seq, ev;
	double saved;

	(void)state;
	h_init(2, NULL);
	h_rounds(6);
	H.loss_mask = 1;
	H.loss_pct = 100;
	while (!(H.was_suspect & 1))
		h_round();
	H.loss_mask = 0;
	saved = H.cc.path[0].saved_cwnd;
	assert_true(saved > 16);
	xr_cc_take_events(&H.cc, 0);

	seq = xr_cc_probe_sent(&H.cc, 0, H.now);
	xr_cc_on_probe_reply(&H.cc, 0, seq + 1, 0, H.now + 50 * US); /* forged */
	assert_true(xr_cc_probe_due(&H.cc, 0) == UINT64_MAX);
	xr_cc_on_probe_reply(&H.cc, 0, seq, 0, H.now + 50 * US);
	assert_int_equal(xr_cc_path_state(&H.cc, 0), XR_CC_SUSPECT); /* 1 of 2 */
	assert_int_equal(xr_cc_probe_due(&H.cc, 0), H.now + 50 * US); /* next now */
	xr_cc_on_probe_reply(&H.cc, 0, seq, 0, H.now + 60 * US); /* duplicate */
	assert_int_equal(H.cc.path[0].probe_oks, 1);
	seq = xr_cc_probe_sent(&H.cc, 0, H.now + 50 * US);
	xr_cc_on_probe_reply(&H.cc, 0, seq, 0, H.now + 100 * US);
	assert_int_equal(xr_cc_path_state(&H.cc, 0), XR_CC_GOOD);
	ev = xr_cc_take_events(&H.cc, 0);
	assert_true(ev & XR_CC_EV_RESTORED);
	assert_true(H.cc.path[0].ctl.cwnd == 16);
	assert_true(H.cc.path[0].ctl.ssthresh == saved);
	assert_true(xr_cc_probe_due(&H.cc, 0) == UINT64_MAX);
	/* Traffic returns to it. */
	H.now += 100 * US;
	memset(H.sent_total, 0, sizeof(H.sent_total));
	h_rounds(20);
	assert_true(H.sent_total[0] * 3 > H.sent_total[1]);
	assert_int_equal(xr_cc_path_state(&H.cc, 0), XR_CC_GOOD);
}

/* A path suspected after a (spurious) timeout that then acknowledges data
 * comes back without probes. */
static void test_late_ack_restores(void **state)
{
	struct xr_ack_view v;
	uint32_t psn;
	int i;

	(void)state;
	h_init(2, NULL);
	h_rounds(3);
	for (i = 0; i < 4; i++) {
		xr_txpath_send(&H.tp[0], 500 + i, 1500, H.now, &psn);
		xr_cc_on_send(&H.cc, 0, H.now);
	}
	H.now = xr_txpath_next_deadline(&H.tp[0]);
	assert_int_equal(xr_txpath_on_timer(&H.tp[0], H.now, &H.res), 4);
	xr_cc_on_timeout(&H.cc, 0, &H.res, H.now);
	assert_int_equal(xr_cc_path_state(&H.cc, 0), XR_CC_SUSPECT);
	/* The delayed ACKs: two of them. */
	memset(&v, 0, sizeof(v));
	v.cack = psn - 1;
	v.ack_psn = psn - 2;
	v.ts_echo = 0;
	h_process(0, &v, H.now + 10 * US);
	assert_int_equal(H.res.nacked, 2);
	assert_int_equal(xr_cc_path_state(&H.cc, 0), XR_CC_SUSPECT);
	v.cack = psn + 1;
	v.ack_psn = psn;
	h_process(0, &v, H.now + 20 * US);
	assert_int_equal(xr_cc_path_state(&H.cc, 0), XR_CC_GOOD);
	assert_int_equal(H.cc.path[0].ctl.inflight, 0);
	assert_int_equal(H.cc.conn.inflight, 0);
}

/* Path selection: GOOD paths while they have room, then CONGESTED ones;
 * SUSPECT only when no path is in service; DOWN never; spread evenly
 * within each path's window. */
static void test_pick_path(void **state)
{
	uint32_t count[4] = { 0 };
	int i, k;

	(void)state;
	h_init(4, NULL);
	H.cc.conn.cwnd = 200;
	H.cc.path[0].state = XR_CC_CONGESTED;
	H.cc.path[1].state = XR_CC_SUSPECT;
	H.cc.path[2].ctl.cwnd = 30;
	H.cc.path[3].ctl.cwnd = 10;
	for (k = 0; k < 40; k++) {
		i = xr_cc_pick_path(&H.cc, H.now);
		assert_true(i == 2 || i == 3);
		count[i]++;
		xr_cc_on_send(&H.cc, i, H.now);
		/* fewest in flight first, within each path's window */
		if (k < 20)
			assert_true(H.cc.path[2].ctl.inflight -
					    H.cc.path[3].ctl.inflight <= 1);
	}
	assert_int_equal(count[2], 30);
	assert_int_equal(count[3], 10);
	/* Clean paths full: the congested one. */
	assert_int_equal(xr_cc_pick_path(&H.cc, H.now), 0);
	for (k = 0; k < 16; k++)
		xr_cc_on_send(&H.cc, 0, H.now);
	/* Everything in service full: wait, do not use the suspect path. */
	assert_int_equal(xr_cc_pick_path(&H.cc, H.now), -EAGAIN);
	assert_int_equal(xr_cc_path_weight(&H.cc, 1), 0);
	assert_false(xr_cc_path_usable(&H.cc, 1));

	/* Nothing in service: the suspect path carries data. */
	h_init(4, NULL);
	H.cc.path[0].state = XR_CC_DOWN;
	H.cc.path[1].state = XR_CC_SUSPECT;
	H.cc.path[2].state = XR_CC_DOWN;
	H.cc.path[3].state = XR_CC_DOWN;
	assert_true(xr_cc_path_usable(&H.cc, 1));
	assert_false(xr_cc_path_usable(&H.cc, 0));
	for (k = 0; k < 5; k++) {
		assert_int_equal(xr_cc_pick_path(&H.cc, H.now), 1);
		xr_cc_on_send(&H.cc, 1, H.now);
	}
	H.cc.path[1].state = XR_CC_DOWN;
	assert_int_equal(xr_cc_pick_path(&H.cc, H.now), -ENETUNREACH);
}

/* The nudge: a path whose flight has gone unanswered for two of its RTTs
 * gets the next packet although it has the most in flight (its ACK shows
 * what was lost); one packet, then fewest-in-flight again until another
 * two RTTs pass or an ACK restarts its clock. */
static void test_pick_path_nudge(void **state)
{
	struct xr_ack_result r;
	struct xr_ack_view v;
	int i, k;

	(void)state;
	h_init(4, NULL);
	H.cc.conn.cwnd = 200;
	for (i = 0; i < 4; i++) {
		H.cc.path[i].srtt_ns = 50 * US;
		H.cc.path[i].ctl.cwnd = 30;
	}
	/* Path 0 takes 5 packets, the others 1 each. */
	for (k = 0; k < 5; k++)
		xr_cc_on_send(&H.cc, 0, H.now);
	for (i = 1; i < 4; i++)
		xr_cc_on_send(&H.cc, i, H.now);
	/* Within two RTTs, fewest in flight first: never path 0. */
	H.now += 100 * US;
	i = xr_cc_pick_path(&H.cc, H.now);
	assert_true(i > 0);
	/* The others hear back (their packets leave flight and come again). */
	H.now += 1 * US;
	for (i = 1; i < 4; i++) {
		H.cc.path[i].ctl.inflight = 0;
		H.cc.path[i].heard_ns = H.now;
		xr_cc_on_send(&H.cc, i, H.now);
	}
	H.cc.conn.inflight = 8;
	/* Past two RTTs without a word: path 0 comes first, once. */
	assert_int_equal(xr_cc_pick_path(&H.cc, H.now), 0);
	xr_cc_on_send(&H.cc, 0, H.now);
	i = xr_cc_pick_path(&H.cc, H.now);
	assert_true(i > 0);
	/* Another two RTTs of silence on path 0 (the others heard back
	 * meanwhile): nudged again. */
	H.now += 60 * US;
	for (i = 1; i < 4; i++)
		H.cc.path[i].heard_ns = H.now;
	H.now += 45 * US;
	assert_int_equal(xr_cc_pick_path(&H.cc, H.now), 0);
	/* An ACK on path 0 is a word from it: fewest in flight again. */
	memset(&v, 0, sizeof(v));
	memset(&r, 0, sizeof(r));
	xr_cc_on_ack(&H.cc, 0, &v, &r, &H.tp[0], H.now);
	assert_true(xr_cc_pick_path(&H.cc, H.now) > 0);
	/* A path with nothing in flight is never "due": with equal (empty)
	 * flights the rotation decides, not an old silence. */
	H.now += 200 * US;
	for (i = 0; i < 4; i++)
		H.cc.path[i].ctl.inflight = 0;
	H.cc.path[1].heard_ns = H.now;
	H.cc.rr = 1;
	assert_int_equal(xr_cc_pick_path(&H.cc, H.now), 1);
	/* Nor one without an RTT sample. */
	for (i = 1; i < 4; i++)
		H.cc.path[i].ctl.inflight = 1;
	H.cc.path[0].ctl.inflight = 6;
	H.cc.path[0].srtt_ns = 0;
	assert_true(xr_cc_pick_path(&H.cc, H.now) > 0);
	/* A state class still comes first: a congested path is not nudged
	 * ahead of good ones with room. */
	H.cc.path[0].srtt_ns = 50 * US;
	H.cc.path[0].state = XR_CC_CONGESTED;
	assert_true(xr_cc_pick_path(&H.cc, H.now) > 0);
}

/* The tail-loss probe: owed to a path in service silent for 3 srtt with
 * packets out, once until its next ACK; never to a path with nothing out,
 * without an RTT sample, or out of service. */
static void test_tail_probe(void **state)
{
	struct xr_ack_result r;
	struct xr_ack_view v;
	uint32_t psn;
	uint64_t t0;

	(void)state;
	h_init(2, NULL);
	assert_int_equal(xr_cc_tail_probe_at(&H.cc, 0), UINT64_MAX);
	H.cc.path[0].srtt_ns = 40 * US;
	assert_int_equal(xr_cc_tail_probe_at(&H.cc, 0), UINT64_MAX); /* none out */
	t0 = H.now;
	assert_int_equal(xr_txpath_send(&H.tp[0], 0, 1500, H.now, &psn), 0);
	xr_cc_on_send(&H.cc, 0, H.now);
	assert_int_equal(xr_cc_tail_probe_at(&H.cc, 0), t0 + 120 * US);
	assert_int_equal(xr_cc_tail_probe_at(&H.cc, 1), UINT64_MAX);
	assert_int_equal(xr_cc_tail_probe_at(&H.cc, 7), UINT64_MAX);
	/* Sent (or tried): no second one until an ACK. */
	xr_cc_tail_probe_sent(&H.cc, 0);
	assert_int_equal(xr_cc_tail_probe_at(&H.cc, 0), UINT64_MAX);
	/* An ACK of something restarts the clock and owes a probe again once
	 * packets are out and silent. */
	assert_int_equal(xr_txpath_send(&H.tp[0], 1, 1500, H.now + 5 * US, &psn), 0);
	xr_cc_on_send(&H.cc, 0, H.now + 5 * US);
	memset(&v, 0, sizeof(v));
	v.cack = psn; /* the first arrived, the second is out */
	v.ack_psn = psn - 1;
	v.ts_echo = (uint32_t)t0;
	v.rx_ns = H.now + 50 * US;
	xr_txpath_on_ack(&H.tp[0], &v, v.rx_ns, &r);
	xr_cc_on_ack(&H.cc, 0, &v, &r, &H.tp[0], v.rx_ns);
	assert_int_equal(H.cc.path[0].ctl.inflight, 1);
	assert_int_equal(xr_cc_tail_probe_at(&H.cc, 0),
			 v.rx_ns + 3 * H.cc.path[0].srtt_ns);
	/* Out of service: none. */
	H.cc.path[0].state = XR_CC_DOWN;
	assert_int_equal(xr_cc_tail_probe_at(&H.cc, 0), UINT64_MAX);
}

/* The second path of a redundant copy: never the first one, in service
 * only, good before congested, then the least in flight; windows do not
 * matter (a full window still takes the copy). */
static void test_pick_other_path(void **state)
{
	int k;

	(void)state;
	h_init(4, NULL);
	H.cc.path[1].state = XR_CC_SUSPECT;
	H.cc.path[2].state = XR_CC_CONGESTED;
	for (k = 0; k < 3; k++)
		xr_cc_on_send(&H.cc, 3, H.now);
	/* 0 and 3 are good: 3 has more in flight, so 0 ... */
	assert_int_equal(xr_cc_pick_other_path(&H.cc, 1), 0);
	/* ... unless 0 is the first path: then 3, good beats congested, even
	 * with its window full. */
	H.cc.path[3].ctl.cwnd = 3;
	assert_int_equal(xr_cc_pick_other_path(&H.cc, 0), 3);
	/* Only the congested one left besides the first. */
	H.cc.path[3].state = XR_CC_DOWN;
	assert_int_equal(xr_cc_pick_other_path(&H.cc, 0), 2);
	/* A suspect path never carries a copy. */
	H.cc.path[2].state = XR_CC_DOWN;
	assert_int_equal(xr_cc_pick_other_path(&H.cc, 0), -ENETUNREACH);
	/* One path: no other. */
	h_init(1, NULL);
	assert_int_equal(xr_cc_pick_other_path(&H.cc, 0), -ENETUNREACH);
}

/* Receiver counters: marks counted from ce/rx deltas; nonsense resyncs
 * without a mark; stale ACKs do not carry the hint. */
static void test_counters_and_stale(void **state)
{
	struct xr_ack_view v;
	uint32_t psn;
	int i;

	(void)state;
	h_init(1, NULL);
	for (i = 0; i < 10; i++) {
		xr_txpath_send(&H.tp[0], i, 1500, H.now, &psn);
		xr_cc_on_send(&H.cc, 0, H.now);
	}
	memset(&v, 0, sizeof(v));
	v.cack = 5;
	v.ack_psn = 4;
	v.ts_echo = (uint32_t)H.now;
	v.rx_pkts = 5;
	v.ce_pkts = 9; /* more marks than packets: nonsense */
	v.rate_hint = 500;
	h_process(0, &v, H.now + 50 * US);
	assert_int_equal(H.cc.path[0].marks, 0);
	assert_int_equal(H.cc.hint_mbps, 500);
	/* A real mark via the counters (no ECE flag). */
	v.cack = 7;
	v.ack_psn = 6;
	v.rx_pkts = 7;
	v.ce_pkts = 10;
	h_process(0, &v, H.now + 60 * US);
	assert_int_equal(H.cc.path[0].marks, 1);
	assert_int_equal(H.cc.path[0].ce_total, 1);
	/* Stale ACK (cack behind): its hint is not taken, its older counters
	 * are ignored. */
	v.cack = 6;
	v.ack_psn = 5;
	v.rx_pkts = 6;
	v.ce_pkts = 9;
	v.rate_hint = 99999;
	h_process(0, &v, H.now + 70 * US);
	assert_true(H.res.stale);
	assert_int_equal(H.cc.hint_mbps, 500);
	assert_int_equal(H.cc.path[0].marks, 1);
	/* A bad ACK is ignored altogether. */
	v.cack = 50;
	v.rate_hint = 1;
	v.flags = XR_AF_ECE;
	h_process(0, &v, H.now + 80 * US);
	assert_true(H.res.bad);
	assert_int_equal(H.cc.hint_mbps, 500);
	assert_int_equal(H.cc.path[0].marks, 1);
	assert_int_equal(H.cc.path[0].ctl.inflight, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init),
		cmocka_unit_test(test_slow_start),
		cmocka_unit_test(test_marks),
		cmocka_unit_test(test_marks_classic),
		cmocka_unit_test(test_alpha),
		cmocka_unit_test(test_mark_one_path),
		cmocka_unit_test(test_random_loss_no_reaction),
		cmocka_unit_test(test_loss_follows_queue),
		cmocka_unit_test(test_random_loss_rare_low_queue),
		cmocka_unit_test(test_random_loss_late_reporting_ack),
		cmocka_unit_test(test_pinned_queue),
		cmocka_unit_test(test_compete),
		cmocka_unit_test(test_timeout_in_congestion),
		cmocka_unit_test(test_reorder_across_paths),
		cmocka_unit_test(test_delay_signal),
		cmocka_unit_test(test_rate_hint),
		cmocka_unit_test(test_pacing),
		cmocka_unit_test(test_ack_wanted),
		cmocka_unit_test(test_failure_vs_congestion),
		cmocka_unit_test(test_blackhole_down),
		cmocka_unit_test(test_probe_return),
		cmocka_unit_test(test_late_ack_restores),
		cmocka_unit_test(test_pick_path),
		cmocka_unit_test(test_pick_path_nudge),
		cmocka_unit_test(test_tail_probe),
		cmocka_unit_test(test_pick_other_path),
		cmocka_unit_test(test_counters_and_stale),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
