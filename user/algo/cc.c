/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Congestion control of one connection: per-path and per-connection windows,
 * path state (good / congested / suspect / down), probing, pacing and path
 * selection.  Pure: no I/O, no allocation, the clock passed in.
 *
 * The rules are docs/PROTOCOL.md 13.1 (windows, marks, delay, congestion
 * loss against random loss, compete mode, pacing) and 13.3 (path states,
 * probes, selection); why they are so, and what was tried instead, 13.4.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "cc.h"

#define US 1000ull
#define MS 1000000ull
#define NO_RTT UINT64_MAX
#define DEFAULT_WIN_NS (100 * US) /* observation window before any RTT */
#define MAX_COUNTER_STEP 65536    /* larger receiver-counter jumps: resync */
#define OWN_CONGESTION_MARGIN 0.05 /* path alpha > 2 x the other paths' + this: the
				    * path's own route is congested */
/* Congestion loss (docs/PROTOCOL.md 13.1): the mid RTT follows the windows'
 * minimum over ~64 observation windows, slower than a loss-based flow's
 * sawtooth rises (so an overflow at its top is above it, the RTTs after its
 * fall below); the counts halve past LOSSQ_SPAN packets, and a verdict
 * needs LOSSQ_MIN_LO packets seen with the queue low. */
#define LOSSQ_MID_SHIFT 6
#define LOSSQ_SPAN 16384.0
#define LOSSQ_MIN_LO 256.0
/* A loss fraction no random loss we are built for reaches (the target is
 * 10%): then the queue is pinned full and losses are congestion whatever
 * the RTT says.  EWMA gain per packet 1/64: at 10% random loss its
 * standard deviation is ~0.027, so 0.25 (5.7 of them) is not reached by
 * chance, while an overflow gets there within a few dozen packets. */
#define LOSSQ_FRAC_G (1.0 / 64)
#define LOSSQ_FRAC_CONG 0.25
#define DRAIN_WINDOWS 2             /* a drain probe lasts 2 srtt */

void xr_cc_cfg_default(struct xr_cc_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->pkt_bytes = 1500;
	c->burst_pkts = 32;
	c->conn_init_cwnd = 32;
	c->conn_min_cwnd = 2;
	c->conn_max_cwnd = 0;
	c->path_init_cwnd = 16;
	c->path_min_cwnd = 1;
	c->path_max_cwnd = XR_TXPATH_WIN;
	c->ai_pkts = 1;
	c->dctcp_g = 1.0 / 16;
	c->ecn_dctcp = 0;
	c->ecn_beta = 0.4;
	c->compete_windows = 8;
	c->delay_beta = 0.5;
	c->loss_beta = 0;
	c->cong_loss_beta = 0.5;
	c->pace_gain = 1.25;
	c->pace_gain_ss = 2.0;
	c->suspect_loss = 0.35;
	c->loss_ewma_g = 1.0 / 32;
	c->delay_allow_ns = 500 * US;
	c->delay_target_ns = 0;
	c->suspect_min_lost = 2;
	c->down_timeouts = 3;
	c->probe_ok = 2;
	c->probe_interval_ns = 200 * US;
	c->probe_interval_max_ns = 50 * MS;
	c->probe_timeout_ns = 1 * MS;
	c->compete_min_ns = 10 * MS;
	c->drain_every_ns = 1000 * MS;
}

static bool cfg_valid(const struct xr_cc_cfg *c)
{
	return c->pkt_bytes && c->burst_pkts && c->conn_min_cwnd >= 1 &&
	       c->conn_init_cwnd >= c->conn_min_cwnd &&
	       c->path_min_cwnd >= 1 && c->path_init_cwnd >= c->path_min_cwnd &&
	       c->path_max_cwnd >= c->path_init_cwnd &&
	       c->path_max_cwnd <= XR_TXPATH_WIN && c->ai_pkts > 0 &&
	       c->dctcp_g > 0 && c->dctcp_g <= 1 && c->ecn_beta > 0 &&
	       c->ecn_beta <= 0.5 && c->delay_beta >= 0 &&
	       c->delay_beta <= 1 && c->loss_beta >= 0 && c->loss_beta < 1 &&
	       c->cong_loss_beta >= 0 && c->cong_loss_beta < 1 &&
	       (!c->compete_windows || c->drain_every_ns) &&
	       c->pace_gain > 0 && c->pace_gain_ss > 0 && c->suspect_loss > 0 &&
	       c->loss_ewma_g > 0 && c->loss_ewma_g <= 1 && c->down_timeouts &&
	       c->probe_ok && c->probe_interval_ns &&
	       c->probe_interval_max_ns >= c->probe_interval_ns &&
	       c->probe_timeout_ns;
}

static void ctl_init(struct xr_cc_ctl *k, double cwnd)
{
	memset(k, 0, sizeof(*k));
	k->cwnd = cwnd;
	k->ssthresh = DBL_MAX;
	k->alpha = 1.0;
	k->win_min_rtt_ns = NO_RTT;
}

static double pace_rate_now(const struct xr_cc *cc);

/* After a change of what the pacing rate depends on. */
static void pace_refresh(struct xr_cc *cc)
{
	cc->pace_r = pace_rate_now(cc);
	cc->pace_pkt = cc->cfg.pkt_bytes;
}

int xr_cc_init(struct xr_cc *cc, uint32_t npaths, const struct xr_cc_cfg *cfg,
	       uint64_t now_ns)
{
	struct xr_cc_cfg def;
	uint32_t i;

	if (!cfg) {
		xr_cc_cfg_default(&def);
		cfg = &def;
	}
	if (npaths < 1 || npaths > XR_MAX_PATHS || !cfg_valid(cfg))
		return -EINVAL;
	memset(cc, 0, sizeof(*cc));
	cc->cfg = *cfg;
	if (cc->cfg.conn_max_cwnd <= 0)
		cc->cfg.conn_max_cwnd = npaths * cc->cfg.path_max_cwnd;
	if (cc->cfg.conn_max_cwnd < cc->cfg.conn_init_cwnd)
		return -EINVAL;
	cc->npaths = npaths;
	ctl_init(&cc->conn, cfg->conn_init_cwnd);
	for (i = 0; i < npaths; i++) {
		ctl_init(&cc->path[i].ctl, cfg->path_init_cwnd);
		cc->path[i].state = XR_CC_GOOD;
		cc->path[i].probe_next_ns = UINT64_MAX;
	}
	cc->pace_tokens = cfg->burst_pkts;
	cc->pace_last_ns = now_ns;
	pace_refresh(cc);
	return 0;
}

static bool valid_path(const struct xr_cc *cc, int path)
{
	return path >= 0 && (uint32_t)path < cc->npaths;
}

static uint64_t win_len(uint64_t srtt)
{
	return srtt ? srtt : DEFAULT_WIN_NS;
}

static bool in_service(const struct xr_cc_path *p)
{
	return p->state == XR_CC_GOOD || p->state == XR_CC_CONGESTED;
}

static bool any_in_service(const struct xr_cc *cc)
{
	uint32_t i;

	for (i = 0; i < cc->npaths; i++)
		if (in_service(&cc->path[i]))
			return true;
	return false;
}

bool xr_cc_path_usable(const struct xr_cc *cc, int path)
{
	const struct xr_cc_path *p;

	if (!valid_path(cc, path))
		return false;
	p = &cc->path[path];
	if (in_service(p))
		return true;
	return p->state == XR_CC_SUSPECT && !any_in_service(cc);
}

uint32_t xr_cc_path_weight(const struct xr_cc *cc, int path)
{
	const struct xr_cc_ctl *k;

	if (!xr_cc_path_usable(cc, path))
		return 0;
	k = &cc->path[path].ctl;
	return k->cwnd > k->inflight ? (uint32_t)(k->cwnd - k->inflight) : 0;
}

/* Packets per ns of a rate in Mbit/s. */
static double mbps_to_ppns(const struct xr_cc *cc, uint32_t mbps)
{
	return mbps * 1e6 / (8.0 * cc->cfg.pkt_bytes) / 1e9;
}

/* The connection window the hint allows: HINT_WINDOW_GAIN * hint * srtt.
 * Pacing holds the rate to the hint; the window only bounds what is in
 * flight, and exactly hint * srtt would throttle below the hint (ACKs come
 * every other packet of a path, so packets stay counted in flight longer
 * than one RTT: 76-88% of the hint in the simulation). */
#define HINT_WINDOW_GAIN 2.0

static double hint_window(const struct xr_cc *cc)
{
	double w;

	if (!cc->hint_mbps || !cc->srtt_ns)
		return DBL_MAX;
	w = HINT_WINDOW_GAIN * mbps_to_ppns(cc, cc->hint_mbps) *
	    (double)cc->srtt_ns;
	return w < cc->cfg.conn_min_cwnd ? cc->cfg.conn_min_cwnd : w;
}

double xr_cc_conn_window(const struct xr_cc *cc)
{
	double hw = hint_window(cc);

	return cc->conn.cwnd < hw ? cc->conn.cwnd : hw;
}

/* The alphas of the paths in service: their sum in *sum, their count. */
static uint32_t svc_alphas(const struct xr_cc *cc, double *sum)
{
	uint32_t i, n = 0;

	*sum = 0;
	for (i = 0; i < cc->npaths; i++)
		if (in_service(&cc->path[i])) {
			*sum += cc->path[i].ctl.alpha;
			n++;
		}
	return n;
}

/* Is path p marked far more than the other paths in service?  sum and n:
 * the alphas of every path in service (svc_alphas), p's own among them if
 * it is in service. */
static bool own_congestion_of(const struct xr_cc_path *p, double sum, uint32_t n)
{
	/* Against the other paths in service, not the connection: the
	 * connection's marked fraction includes this path's own packets, so
	 * with half the paths marked on every packet it is a half, and a
	 * marked path (alpha 1) never stood out from it; then the connection
	 * window, cut on every RTT, bound before the path windows did and
	 * kept half the traffic on the marked paths. */
	if (in_service(p)) {
		sum -= p->ctl.alpha;
		n--;
	}
	/* alpha > 2 * mean + margin, without a division per path */
	return n && p->ctl.alpha * n > 2 * sum + OWN_CONGESTION_MARGIN * n;
}

static bool own_congestion(const struct xr_cc *cc, const struct xr_cc_path *p)
{
	double sum;
	uint32_t n = svc_alphas(cc, &sum);

	return own_congestion_of(p, sum, n);
}

/* An in-service path's share of the connection window (n_svc paths in
 * service), within the path window's bounds. */
static double share_of(const struct xr_cc *cc, uint32_t n_svc, double conn_window)
{
	double f = conn_window / n_svc;

	if (f > cc->cfg.path_max_cwnd)
		f = cc->cfg.path_max_cwnd;
	return f < cc->cfg.path_min_cwnd ? cc->cfg.path_min_cwnd : f;
}

/* Floor of an in-service path's window.  A path marked about as much as
 * its connection sees congestion the connection shares (a bottleneck every
 * path crosses, like the receiver's last hop; always so with one path): its
 * floor is its share of the connection window, so path windows never bind,
 * together, below the connection window, and a connection competes as one
 * DCTCP flow whatever its number of paths (not as two controllers cutting
 * one flow at different moments).  A path marked much more than the
 * other paths in service has a congested route of its own: it may go down
 * to the minimum, and its state steers new packets around it.  n_svc >= 1
 * paths are in service, asum their alphas, share is share_of's. */
static double floor_of(const struct xr_cc *cc, const struct xr_cc_path *p,
		       uint32_t n_svc, double asum, double share)
{
	return own_congestion_of(p, asum, n_svc) ? cc->cfg.path_min_cwnd : share;
}

static double path_floor(const struct xr_cc *cc, const struct xr_cc_path *p)
{
	double asum;
	uint32_t n = svc_alphas(cc, &asum);

	if (!n)
		return cc->cfg.path_min_cwnd;
	return floor_of(cc, p, n, asum, share_of(cc, n, xr_cc_conn_window(cc)));
}

static void raise_to_floor(struct xr_cc *cc)
{
	double asum, share;
	uint32_t i, n = svc_alphas(cc, &asum);

	if (!n)
		return; /* no path in service: nothing to raise */
	/* Once per ACK: the alphas and the share once, not once per path. */
	share = share_of(cc, n, xr_cc_conn_window(cc));
	for (i = 0; i < cc->npaths; i++) {
		struct xr_cc_path *p = &cc->path[i];
		double f = floor_of(cc, p, n, asum, share);

		if (in_service(p) && p->ctl.cwnd < f)
			p->ctl.cwnd = f;
	}
}

/* Decrease a window to base * factor, at most once per rtt. */
static bool ctl_cut(struct xr_cc_ctl *k, double base, double factor,
		    double min, uint64_t rtt, uint64_t now, uint64_t *counter)
{
	if (k->cuts_ecn + k->cuts_delay + k->cuts_loss &&
	    now - k->last_cut_ns < win_len(rtt))
		return false;
	k->cwnd = base * factor;
	if (k->cwnd < min)
		k->cwnd = min;
	k->ssthresh = k->cwnd;
	k->last_cut_ns = now;
	(*counter)++;
	return true;
}

/* Additive increase (or slow start), only while the window is what limits
 * sending: in slow start if at least half of it was in use during this
 * window, in congestion avoidance if all of it was (as Linux's
 * tcp_is_cwnd_limited), over this observation window and the last.  Never
 * within an RTT of a decrease. */
static void ctl_grow(struct xr_cc_ctl *k, uint32_t acked, uint64_t rtt,
		     uint64_t now, double ai, double max)
{
	double w = k->cwnd;
	uint32_t used = k->peak_inflight > k->prev_peak ? k->peak_inflight
							: k->prev_peak;

	if (!acked)
		return;
	if (k->cuts_ecn + k->cuts_delay + k->cuts_loss &&
	    now - k->last_cut_ns < win_len(rtt))
		return;
	if (w < k->ssthresh) {
		if (2.0 * used < w)
			return;
		w += acked;
		if (w > k->ssthresh)
			w = k->ssthresh;
	} else {
		if (used + 1 < w)
			return;
		w += ai * acked / w;
	}
	k->cwnd = w > max ? max : w;
}

/* Close the observation window if it is over: update alpha from the marked
 * fraction and hand back the window's smallest RTT sample. */
static bool ctl_window_end(struct xr_cc_ctl *k, double g, uint64_t srtt,
			   uint64_t now, uint64_t *min_rtt)
{
	double f;

	if (!k->win_end_ns) {
		k->win_end_ns = now + win_len(srtt);
		return false;
	}
	if (now < k->win_end_ns)
		return false;
	if (k->win_rx || k->win_acks) {
		if (k->win_rx)
			f = (double)k->win_ce / k->win_rx;
		else
			f = (double)k->win_ece / k->win_acks;
		k->alpha = (1 - g) * k->alpha + g * f;
	}
	*min_rtt = k->win_min_rtt_ns;
	k->win_rx = k->win_ce = k->win_acks = k->win_ece = 0;
	k->prev_peak = k->peak_inflight;
	k->peak_inflight = k->inflight;
	k->win_min_rtt_ns = NO_RTT;
	k->win_end_ns = now + win_len(srtt);
	return true;
}

static uint64_t delay_target(const struct xr_cc *cc, uint64_t min_rtt)
{
	if (cc->cfg.delay_target_ns)
		return cc->cfg.delay_target_ns;
	return min_rtt ? min_rtt + cc->cfg.delay_allow_ns : 0;
}

/* Cut factor for a window whose smallest RTT was rtt; 1 = no signal. */
static double delay_factor(const struct xr_cc *cc, uint64_t rtt,
			   uint64_t target)
{
	double f;

	if (!target || rtt == NO_RTT || rtt <= target)
		return 1;
	f = 1 - cc->cfg.delay_beta * (double)(rtt - target) / (double)rtt;
	return f < 0.5 ? 0.5 : f;
}

/* Cut factor of a window of w packets for a marked RTT, as a classic
 * (RFC 3168) flow cuts.  DCTCP's 1 - alpha/2 (ecn_dctcp) loses little to
 * its own kind but takes several times its share from classic ECN flows in
 * the same queue.  Half the window times the chance that its w packets,
 * marked with probability alpha, hold a mark is what such a flow loses on
 * average over all RTTs; but a cut is made only in an RTT that carried a
 * mark, which comes as often for us as for that flow, so a cut of that size
 * alone counts the chance twice: a lightly marked window lost a few percent
 * where CUBIC loses 30% (issue 19: 1.4-2.5 times the fair share beside ECN
 * CUBIC).  So a marked RTT costs at least ecn_beta, and up to a half when
 * the window holds a mark nearly surely.  0.4 lies between CUBIC's 0.3
 * (which grows by ~0.5 packet per RTT in its TCP-friendly region, where
 * short RTTs keep it) and Reno's 0.5 (which grows by 1, as we do); the
 * simulator (test_cc_sim, coexist_ecn) and tests/bench/coexist.sh placed it
 * inside 0.7-1.5 of the fair share more often than either
 * (docs/PERFORMANCE.md). */
static double classic_cut(double alpha, double w)
{
	return w <= 1 ? 1 - alpha / 2 : 1 - (1 - pow(1 - alpha, w)) / 2;
}

static double ecn_factor(const struct xr_cc *cc, double alpha, double w)
{
	double f = classic_cut(alpha, w);

	if (cc->cfg.ecn_dctcp)
		return 1 - alpha / 2;
	return f < 1 - cc->cfg.ecn_beta ? f : 1 - cc->cfg.ecn_beta;
}

/* Cut factor of a path's own window for a marked RTT: the classic cut
 * alone (DCTCP's with ecn_dctcp).  The path windows only spread the
 * connection window over the paths (each has its share as a floor unless
 * it is marked far more than the other paths): a path always marked is
 * halved every RTT, which drives its share down until its alpha stands out
 * and steering takes it off (test_multipath, ecn), while a lightly marked
 * one keeps nearly its share. */
static double path_ecn_factor(const struct xr_cc *cc, double alpha, double w)
{
	return cc->cfg.ecn_dctcp ? 1 - alpha / 2 : classic_cut(alpha, w);
}

static uint64_t conn_min_rtt(const struct xr_cc *cc)
{
	uint64_t m = 0;
	uint32_t i;

	for (i = 0; i < cc->npaths; i++) {
		uint64_t v = cc->path[i].min_rtt_ns;

		if (v && (!m || v < m))
			m = v;
	}
	return m;
}

/* Packets newly counted by the receiver on this path, and of those CE
 * marked, from its cumulative counters.  Stale ACKs carry older counters:
 * ignored.  Nonsense (more marks than packets, huge jumps): resynchronise
 * without using it. */
static void counter_deltas(struct xr_cc_path *p, const struct xr_ack_view *a,
			   uint32_t *drx, uint32_t *dce)
{
	int32_t rx = xr_seq_diff(a->rx_pkts, p->last_rx);
	int32_t ce = xr_seq_diff(a->ce_pkts, p->last_ce);

	*drx = *dce = 0;
	if (rx < -MAX_COUNTER_STEP)
		goto resync;
	if (rx <= 0)
		return;
	if (ce < 0 || ce > rx || rx > MAX_COUNTER_STEP)
		goto resync;
	*drx = (uint32_t)rx;
	*dce = (uint32_t)ce;
resync:
	p->last_rx = a->rx_pkts;
	p->last_ce = a->ce_pkts;
}

static void enter_suspect(struct xr_cc_path *p, bool by_timeout,
			  uint32_t fails, uint64_t now)
{
	if (!in_service(p))
		return;
	p->saved_cwnd = p->ctl.cwnd;
	p->state = XR_CC_SUSPECT;
	p->suspect_timeout = by_timeout;
	p->events |= XR_CC_EV_SUSPECT | XR_CC_EV_REROUTE;
	p->probe_oks = 0;
	p->probe_fails = fails;
	p->probe_sent_ns = 0;
	p->probe_next_ns = now;
	p->suspects++;
}

static void go_down(struct xr_cc_path *p)
{
	if (p->state == XR_CC_DOWN)
		return;
	p->state = XR_CC_DOWN;
	p->events |= XR_CC_EV_DOWN;
	p->downs++;
}

static void restore(struct xr_cc *cc, struct xr_cc_path *p)
{
	double init = cc->cfg.path_init_cwnd;

	p->state = XR_CC_GOOD;
	p->events |= XR_CC_EV_RESTORED;
	p->ctl.cwnd = init;
	p->ctl.ssthresh = p->saved_cwnd > init ? p->saved_cwnd : init;
	p->loss_ewma = 0;
	p->loss_n = 0;
	p->probe_oks = p->probe_fails = 0;
	p->probe_sent_ns = 0;
	p->probe_next_ns = UINT64_MAX;
	p->suspect_timeout = 0;
}

static void probe_success(struct xr_cc *cc, struct xr_cc_path *p, uint64_t now)
{
	p->probe_fails = 0;
	if (++p->probe_oks >= cc->cfg.probe_ok)
		restore(cc, p);
	else
		p->probe_next_ns = now; /* confirm at once */
}

/* Loss against the queue.  A drop-tail queue drops only when it is full,
 * so overflow losses come with the highest RTTs; random loss (a bad link,
 * a lossy fabric) does not care how full the queue is.  Each ACK's packets
 * (resolved in flight + lost) are counted by the lower of its RTT sample
 * and the path's previous one (if at most 4 of its srtt old): at or above
 * the mid RTT, or below it.  The previous one too, because the ACK that
 * reports a loss is itself late more often than the others on a busy host
 * (docs/PERFORMANCE.md, "Silent paths, fewer ACKs"), while a queue that
 * overflows was already high for the ACK before
 * (test_random_loss_late_reporting_ack).  Losses are congestion only while
 * the loss rate with the queue high clearly exceeds the rate with it low:
 * lost_hi > 2 E + 4, E = n_hi * L / (n_lo + 1), L = lost_lo + 1 +
 * 2 sqrt(lost_lo + 1) (the high band's losses at the low band's rate, with
 * the low band's few losses taken at an upper bound: where the low band is
 * a few percent of the packets, a handful of losses there by chance made
 * random loss look like overflow, test_random_loss_rare_low_queue).
 * Random loss keeps the two rates equal at any rate; an overflow at a full
 * queue makes the low rate ~0.  A queue that never drains (no low samples)
 * gives no verdict: losses are then congestion only in compete mode (where
 * loss-based flows fill the queue) or when the queue is pinned (below). */
enum { LOSSQ_UNKNOWN, LOSSQ_RANDOM, LOSSQ_QUEUE };

static int lossq_verdict(const struct xr_cc_lossq *q)
{
	double e;

	if (q->n_lo < LOSSQ_MIN_LO || q->n_hi < LOSSQ_MIN_LO)
		return LOSSQ_UNKNOWN;
	e = q->n_hi * (q->lost_lo + 1 + 2 * sqrt(q->lost_lo + 1)) / (q->n_lo + 1);
	return q->lost_hi > 2 * e + 4 ? LOSSQ_QUEUE : LOSSQ_RANDOM;
}

/* The connection loses a fraction no random loss reaches, and every path
 * in service loses alike: the shared queue is pinned full.  (A path that
 * fails loses far more than its siblings: that is for path state.) */
static bool lossq_pinned(const struct xr_cc *cc)
{
	uint32_t i;

	if (cc->lq.frac < LOSSQ_FRAC_CONG)
		return false;
	for (i = 0; i < cc->npaths; i++)
		if (in_service(&cc->path[i]) &&
		    cc->path[i].lost_frac < LOSSQ_FRAC_CONG / 2)
			return false;
	return true;
}

/* b^n for the small counts of one ACK (nearly always 1 or 2 packets)
 * without pow(), which costs more than the rest of the update. */
static double pow_n(double b, uint32_t n)
{
	double r = 1;

	if (n > 16)
		return pow(b, n);
	while (n--)
		r *= b;
	return r;
}

/* Count an ACK's packets; true if its losses are congestion. */
static bool lossq_update(struct xr_cc *cc, struct xr_cc_path *p,
			 const struct xr_ack_result *r, uint64_t now)
{
	struct xr_cc_lossq *q = &cc->lq;
	uint32_t n = r->acked_inflight + r->nlost;
	uint64_t rtt = r->rtt_ns;
	double keep;
	bool hi;
	int v;

	if (!n)
		return false;
	if (p->lq_rtt_ns && p->lq_rtt_ns < rtt &&
	    now - p->lq_rtt_at_ns <= 4 * p->srtt_ns)
		rtt = p->lq_rtt_ns;
	if (r->rtt_ns) {
		p->lq_rtt_ns = r->rtt_ns;
		p->lq_rtt_at_ns = now;
	}
	keep = pow_n(1 - LOSSQ_FRAC_G, n);
	q->frac = q->frac * keep + (1 - keep) * ((double)r->nlost / n);
	keep = pow_n(1 - cc->cfg.loss_ewma_g, n);
	p->lost_frac = p->lost_frac * keep + (1 - keep) * ((double)r->nlost / n);
	if (r->nlost && cc->cfg.cong_loss_beta > 0 && lossq_pinned(cc))
		return true;
	if (!rtt || !q->mid_ns)
		return false;
	hi = rtt >= q->mid_ns;
	if (hi) {
		q->n_hi += n;
		q->lost_hi += r->nlost;
	} else {
		q->n_lo += n;
		q->lost_lo += r->nlost;
	}
	if (q->n_hi + q->n_lo > LOSSQ_SPAN) {
		q->n_hi /= 2;
		q->lost_hi /= 2;
		q->n_lo /= 2;
		q->lost_lo /= 2;
	}
	if (!r->nlost || !hi || cc->cfg.cong_loss_beta <= 0)
		return false;
	/* Without a verdict yet, a connection that competes with loss-based
	 * flows takes their losses as they do. */
	v = lossq_verdict(q);
	return v == LOSSQ_QUEUE || (v == LOSSQ_UNKNOWN && cc->compete);
}

/* A congestion signal on the path within the last 2 srtt. */
static bool near_signal(const struct xr_cc_path *p, uint64_t now)
{
	return p->last_signal_ns && now - p->last_signal_ns < 2 * win_len(p->srtt_ns);
}

/* Every other path in service loses at least half as much as p: the loss
 * is shared (a full queue on the way of all of them), not p failing. */
static bool losing_alike(const struct xr_cc *cc, const struct xr_cc_path *p)
{
	uint32_t i, n = 0;

	for (i = 0; i < cc->npaths; i++) {
		const struct xr_cc_path *o = &cc->path[i];

		if (o == p || !in_service(o))
			continue;
		if (o->lost_frac < p->lost_frac / 2)
			return false;
		n++;
	}
	return n > 0;
}

/* Unmarked losses: failure evidence for the path, never a window cut. */
static void loss_update(struct xr_cc *cc, struct xr_cc_path *p,
			const struct xr_ack_result *r, uint64_t now)
{
	uint32_t n = r->acked_inflight + r->nlost;
	double keep;

	if (!n)
		return;
	if (near_signal(p, now))
		return; /* drops next to congestion signals: congestion */
	keep = pow_n(1 - cc->cfg.loss_ewma_g, n);
	p->loss_ewma = p->loss_ewma * keep + (1 - keep) * ((double)r->nlost / n);
	p->loss_n += n;
	if (p->loss_n >= 32 && p->loss_ewma >= cc->cfg.suspect_loss &&
	    !losing_alike(cc, p))
		enter_suspect(p, false, 0, now);
}

static void state_expire(struct xr_cc_path *p, uint64_t now)
{
	if (p->state == XR_CC_CONGESTED &&
	    now - p->last_signal_ns >= 2 * win_len(p->srtt_ns))
		p->state = XR_CC_GOOD;
}

static void congested(struct xr_cc *cc, struct xr_cc_path *p, uint64_t now)
{
	cc->last_cong_ns = now;
	p->last_signal_ns = now;
	if (p->state == XR_CC_GOOD)
		p->state = XR_CC_CONGESTED;
}

/* A new or higher hint: jump to it instead of probing for it. */
static void hint_jump(struct xr_cc *cc)
{
	double hw = hint_window(cc);
	struct xr_cc_ctl *c = &cc->conn;

	if (hw == DBL_MAX)
		return;
	if (hw > cc->cfg.conn_max_cwnd)
		hw = cc->cfg.conn_max_cwnd;
	if (c->cwnd < c->ssthresh) {
		c->cwnd = hw;
		c->ssthresh = hw;
	} else if (c->cwnd < hw) {
		c->cwnd = hw;
	}
	raise_to_floor(cc);
}

/* COMPETE (docs/PROTOCOL.md 13.1).  The delay signal assumes that backing
 * off drains the queue.  Loss-based flows (TCP CUBIC, Reno) fill a drop-
 * tail queue whatever we do: then the queue outlasts our cuts, and yielding
 * to delay only hands them our share.  Once it has (see below), the
 * connection stops reading delay as congestion and competes as they do:
 * additive increase, a halving per RTT with congestion losses (marks cut
 * as always).
 * It goes back to the delay signal only when a drain probe shows the queue
 * was its own: every drain_every_ns it holds its window at what would be
 * in flight without a queue (cwnd * min RTT / srtt) for DRAIN_WINDOWS
 * srtt; if the RTT falls to the target and to half of what it was, nobody
 * else holds the queue (they left); else the window is given back.  (A
 * loss-based flow's sawtooth dips by a third at most; and when we joined a
 * queue already full our min RTT is its bottom, which such a dip meets.) */
static void compete_window_end(struct xr_cc *cc, uint64_t wmin, uint64_t target,
			       uint64_t now)
{
	struct xr_cc_ctl *c = &cc->conn;
	uint64_t srtt = win_len(cc->srtt_ns);

	if (wmin == NO_RTT || !target)
		return;
	if (cc->drain_start_ns) {
		if (now < cc->drain_end_ns)
			return;
		cc->drain_start_ns = 0;
		cc->drain_at_ns = now + cc->cfg.drain_every_ns;
		if (cc->drain_min_ns <= target &&
		    cc->drain_min_ns <= cc->drain_pre_ns / 2) {
			/* alone: back to delay; regrow quickly up to where it was */
			cc->compete = 0;
			cc->drains_alone++;
			c->ssthresh = cc->drain_saved;
			cc->q_windows = 0;
		} else {
			c->cwnd = cc->drain_saved;
		}
		return;
	}
	if (wmin > target) {
		if (!cc->q_windows++) {
			cc->q_since_ns = now;
			cc->q_cwnd = c->cwnd;
			cc->q_peak_ns = 0;
		}
		if (wmin > cc->q_peak_ns)
			cc->q_peak_ns = wmin;
	} else {
		cc->q_windows = 0;
	}
	if (!cc->compete) {
		/* The queue did not answer our backing off: we halved our
		 * window (or reached the minimum) since it rose above the
		 * target, and it is still within 10% of its highest since.
		 * Alone, it would have fallen with our window (after a slow-
		 * start overshoot it does, within a few RTTs; at the delay
		 * rule's equilibrium we do not halve).  The windows follow
		 * srtt, which lags a queue that just grew: the streak must
		 * also last compete_windows of the RTT now seen. */
		if (cc->cfg.compete_windows &&
		    cc->q_windows >= cc->cfg.compete_windows &&
		    now - cc->q_since_ns >= cc->cfg.compete_min_ns &&
		    now - cc->q_since_ns >= cc->cfg.compete_windows * wmin &&
		    (c->cwnd <= cc->q_cwnd / 2 || c->cwnd <= cc->cfg.conn_min_cwnd) &&
		    wmin >= cc->q_peak_ns - cc->q_peak_ns / 10) {
			cc->compete = 1;
			cc->competes++;
			cc->drain_at_ns = now + cc->cfg.drain_every_ns;
		}
		return;
	}
	if (now >= cc->drain_at_ns && cc->srtt_ns) {
		double w = c->cwnd * (double)conn_min_rtt(cc) / (double)cc->srtt_ns;

		cc->drain_saved = c->cwnd;
		c->cwnd = w < cc->cfg.conn_min_cwnd ? cc->cfg.conn_min_cwnd : w;
		cc->drain_start_ns = now;
		cc->drain_end_ns = now + DRAIN_WINDOWS * srtt;
		cc->drain_min_ns = NO_RTT;
		cc->drain_pre_ns = wmin;
		cc->drains++;
	}
}

/* A sample of a packet sent after the drain probe began. */
static void drain_sample(struct xr_cc *cc, uint64_t rtt, uint64_t now)
{
	if (cc->drain_start_ns && now - rtt >= cc->drain_start_ns &&
	    rtt < cc->drain_min_ns)
		cc->drain_min_ns = rtt;
}

static void lossq_mid(struct xr_cc *cc, uint64_t wmin)
{
	struct xr_cc_lossq *q = &cc->lq;

	if (wmin == NO_RTT)
		return;
	if (!q->mid_ns)
		q->mid_ns = wmin;
	else if (wmin > q->mid_ns)
		q->mid_ns += (wmin - q->mid_ns) >> LOSSQ_MID_SHIFT;
	else
		q->mid_ns -= (q->mid_ns - wmin) >> LOSSQ_MID_SHIFT;
}

static void dec_inflight(struct xr_cc *cc, struct xr_cc_path *p, uint32_t n)
{
	uint32_t d = n < p->ctl.inflight ? n : p->ctl.inflight;

	p->ctl.inflight -= d;
	cc->conn.inflight -= d < cc->conn.inflight ? d : cc->conn.inflight;
}

/* RTT of an ACK: the path's estimates, the connection's srtt, both
 * observation windows' minimum, a drain probe's sample. */
static void ack_rtt(struct xr_cc *cc, struct xr_cc_path *p,
		    const struct xr_ack_result *r, const struct xr_txpath *tp,
		    uint64_t now)
{
	struct xr_cc_ctl *c = &cc->conn, *k = &p->ctl;

	p->srtt_ns = xr_rtt_srtt(&tp->rtt);
	p->rttvar_ns = xr_rtt_var(&tp->rtt);
	p->min_rtt_ns = xr_rtt_min(&tp->rtt);
	if (!r->rtt_ns)
		return;
	cc->srtt_ns = cc->srtt_ns ? cc->srtt_ns - cc->srtt_ns / 8 + r->rtt_ns / 8
				  : r->rtt_ns;
	if (r->rtt_ns < k->win_min_rtt_ns)
		k->win_min_rtt_ns = r->rtt_ns;
	if (r->rtt_ns < c->win_min_rtt_ns)
		c->win_min_rtt_ns = r->rtt_ns;
	drain_sample(cc, r->rtt_ns, now);
}

/* ECN of an ACK: the receiver's counter deltas into both observation
 * windows and the path's totals; whether it carries a mark. */
static bool ack_ecn(struct xr_cc *cc, struct xr_cc_path *p,
		    const struct xr_ack_view *a, const struct xr_ack_result *r)
{
	struct xr_cc_ctl *c = &cc->conn, *k = &p->ctl;
	uint32_t drx, dce;

	counter_deltas(p, a, &drx, &dce);
	k->win_rx += drx;
	k->win_ce += dce;
	k->win_acks++;
	k->win_ece += r->ece;
	c->win_rx += drx;
	c->win_ce += dce;
	c->win_acks++;
	c->win_ece += r->ece;
	p->rx_total += drx;
	p->ce_total += dce;
	return dce > 0 || r->ece;
}

/* Decreases of an ACK (docs/PROTOCOL.md 13.1): a mark, a congestion loss,
 * the end of slow start on any loss, loss_beta.  The connection first, so
 * the path's floor is its share of the new connection window. */
static void ack_decrease(struct xr_cc *cc, struct xr_cc_path *p, bool marked,
			 bool closs, const struct xr_ack_result *r, uint64_t now)
{
	const struct xr_cc_cfg *cfg = &cc->cfg;
	struct xr_cc_ctl *c = &cc->conn, *k = &p->ctl;
	uint32_t i;
	double f;

	if (marked) {
		p->marks++;
		congested(cc, p, now);
		/* A path marked far more than the other paths has a congested
		 * route of its own: its window and state steer traffic off
		 * it, and the connection is not cut.  (Cutting it by the share
		 * of its packets so marked, as DCTCP would, kept the window
		 * so small that every path had room for its one packet: half
		 * the paths marked kept half the traffic, and the cuts went
		 * on.)  A bottleneck every path crosses costs the connection
		 * what it costs a classic flow. */
		if (!own_congestion(cc, p)) {
			f = ecn_factor(cc, c->alpha, xr_cc_conn_window(cc));
			ctl_cut(c, xr_cc_conn_window(cc), f, cfg->conn_min_cwnd,
				cc->srtt_ns, now, &c->cuts_ecn);
		}
		ctl_cut(k, k->cwnd, path_ecn_factor(cc, k->alpha, k->cwnd),
			path_floor(cc, p), p->srtt_ns, now, &k->cuts_ecn);
	}
	if (closs) {
		cc->lq.cong += r->nlost;
		congested(cc, p, now);
		ctl_cut(c, xr_cc_conn_window(cc), 1 - cfg->cong_loss_beta,
			cfg->conn_min_cwnd, cc->srtt_ns, now, &c->cuts_loss);
		ctl_cut(k, k->cwnd, 1 - cfg->cong_loss_beta, path_floor(cc, p),
			p->srtt_ns, now, &k->cuts_loss);
	}
	if (!r->nlost)
		return;
	/* Any loss ends slow start (without a cut): doubling on into a queue
	 * that overflows costs a window of drops before the verdict on
	 * losses has evidence; random loss only slows the ramp to additive
	 * increase.  The overshoot's losses, on every path, are congestion
	 * for path state too. */
	if (c->cwnd < c->ssthresh) {
		c->ssthresh = c->cwnd;
		for (i = 0; i < cc->npaths; i++)
			cc->path[i].last_signal_ns = now;
		cc->last_cong_ns = now;
	}
	if (k->cwnd < k->ssthresh)
		k->ssthresh = k->cwnd;
	if (cfg->loss_beta > 0) {
		ctl_cut(c, xr_cc_conn_window(cc), 1 - cfg->loss_beta,
			cfg->conn_min_cwnd, cc->srtt_ns, now, &c->cuts_loss);
		ctl_cut(k, k->cwnd, 1 - cfg->loss_beta, path_floor(cc, p),
			p->srtt_ns, now, &k->cuts_loss);
	}
}

/* Ends of observation windows: alpha, the delay signal (not in compete
 * mode), the standing-queue test and the mid RTT. */
static void ack_windows(struct xr_cc *cc, struct xr_cc_path *p, uint64_t now)
{
	const struct xr_cc_cfg *cfg = &cc->cfg;
	struct xr_cc_ctl *c = &cc->conn, *k = &p->ctl;
	uint64_t wmin, target;
	double f;

	if (ctl_window_end(c, cfg->dctcp_g, cc->srtt_ns, now, &wmin)) {
		target = delay_target(cc, conn_min_rtt(cc));
		f = cc->compete ? 1 : delay_factor(cc, wmin, target);
		if (f < 1)
			ctl_cut(c, xr_cc_conn_window(cc), f, cfg->conn_min_cwnd,
				cc->srtt_ns, now, &c->cuts_delay);
		compete_window_end(cc, wmin, target, now);
		lossq_mid(cc, wmin);
	}
	if (ctl_window_end(k, cfg->dctcp_g, p->srtt_ns, now, &wmin)) {
		f = cc->compete ? 1 :
		    delay_factor(cc, wmin, delay_target(cc, p->min_rtt_ns));
		if (f < 1) {
			congested(cc, p, now);
			ctl_cut(k, k->cwnd, f, path_floor(cc, p), p->srtt_ns,
				now, &k->cuts_delay);
		}
	}
}

static void on_ack(struct xr_cc *cc, int path, const struct xr_ack_view *a,
		   const struct xr_ack_result *r, const struct xr_txpath *tp,
		   uint64_t now)
{
	const struct xr_cc_cfg *cfg = &cc->cfg;
	struct xr_cc_ctl *c = &cc->conn, *k;
	struct xr_cc_path *p;
	uint32_t hint_before;
	bool marked, closs;

	if (!valid_path(cc, path) || r->bad)
		return;
	p = &cc->path[path];
	k = &p->ctl;
	p->heard_ns = now;
	p->tail_probed = 0;
	dec_inflight(cc, p, r->acked_inflight + r->nlost);

	ack_rtt(cc, p, r, tp, now);
	closs = lossq_update(cc, p, r, now);
	marked = ack_ecn(cc, p, a, r);

	/* Rate hint: the latest, from ACKs that are not stale. */
	hint_before = cc->hint_mbps;
	if (!r->stale)
		cc->hint_mbps = a->rate_hint;

	ack_decrease(cc, p, marked, closs, r, now);
	ack_windows(cc, p, now);

	/* Increase, on ACKs without marks. */
	if (!marked && !closs)
		ctl_grow(k, r->acked_inflight, p->srtt_ns, now, cfg->ai_pkts,
			 cfg->path_max_cwnd);
	if (!marked && !closs && !cc->drain_start_ns && c->cwnd <= hint_window(cc))
		ctl_grow(c, r->acked_inflight, cc->srtt_ns, now, cfg->ai_pkts,
			 cfg->conn_max_cwnd);
	/* A new or higher hint, or slow start reaching the hint: jump to it. */
	if (cc->hint_mbps > hint_before ||
	    (cc->hint_mbps && c->cwnd < c->ssthresh && c->cwnd > hint_window(cc)))
		hint_jump(cc);

	raise_to_floor(cc);
	loss_update(cc, p, r, now);
	state_expire(p, now);

	/* A path suspected after a timeout that acknowledges data is alive. */
	if (!in_service(p) && p->suspect_timeout && r->nacked)
		probe_success(cc, p, now);
}

void xr_cc_on_ack(struct xr_cc *cc, int path, const struct xr_ack_view *a,
		  const struct xr_ack_result *r, const struct xr_txpath *tp,
		  uint64_t now)
{
	on_ack(cc, path, a, r, tp, now);
	pace_refresh(cc);
}

static void on_timeout(struct xr_cc *cc, int path,
		       const struct xr_ack_result *r, uint64_t now)
{
	struct xr_cc_path *p;

	if (!valid_path(cc, path) || !r->nlost)
		return;
	p = &cc->path[path];
	dec_inflight(cc, p, r->nlost);
	p->timeouts++;
	/* A first timeout of packets sent about when the connection saw
	 * congestion (a signal on any path since an srtt before the oldest
	 * of them), or while competing for a full queue, or while losses
	 * go with the queue, is a congestion drop the gap rule could not see
	 * (the packets after it were dropped too, or not yet sent): not
	 * failure.  A second in a row is. */
	if (r->consec_timeouts < 2 &&
	    (cc->compete || lossq_verdict(&cc->lq) == LOSSQ_QUEUE ||
	     (cc->last_cong_ns &&
	      cc->last_cong_ns + win_len(cc->srtt_ns) >= r->lost[0].tx_ns)))
		return;
	if (r->nlost >= cc->cfg.suspect_min_lost || r->consec_timeouts >= 2)
		enter_suspect(p, true, r->consec_timeouts, now);
	if (r->consec_timeouts >= cc->cfg.down_timeouts)
		go_down(p);
}

void xr_cc_on_timeout(struct xr_cc *cc, int path,
		      const struct xr_ack_result *r, uint64_t now)
{
	on_timeout(cc, path, r, now);
	pace_refresh(cc);
}

void xr_cc_on_abandon(struct xr_cc *cc, int path,
		      const struct xr_ack_result *r)
{
	if (valid_path(cc, path))
		dec_inflight(cc, &cc->path[path], r->nlost);
	pace_refresh(cc);
}

static uint64_t probe_timeout(const struct xr_cc *cc, const struct xr_cc_path *p)
{
	uint64_t t = 2 * p->srtt_ns;

	return t > cc->cfg.probe_timeout_ns ? t : cc->cfg.probe_timeout_ns;
}

uint64_t xr_cc_probe_due(const struct xr_cc *cc, int path)
{
	const struct xr_cc_path *p;

	if (!valid_path(cc, path))
		return UINT64_MAX;
	p = &cc->path[path];
	if (in_service(p) || p->probe_sent_ns)
		return UINT64_MAX;
	return p->probe_next_ns;
}

uint32_t xr_cc_probe_sent(struct xr_cc *cc, int path, uint64_t now)
{
	struct xr_cc_path *p;

	if (!valid_path(cc, path))
		return 0;
	p = &cc->path[path];
	p->probe_seq++;
	p->probe_sent_ns = now ? now : 1; /* 0 means "none outstanding" */
	p->probes++;
	return p->probe_seq;
}

static void on_probe_reply(struct xr_cc *cc, int path, uint32_t seq,
			   uint32_t rate_hint, uint64_t now)
{
	struct xr_cc_path *p;

	if (!valid_path(cc, path))
		return;
	p = &cc->path[path];
	if (!p->probe_sent_ns || seq != p->probe_seq)
		return; /* late, duplicate or forged */
	p->probe_sent_ns = 0;
	if (rate_hint)
		cc->hint_mbps = rate_hint;
	if (!in_service(p))
		probe_success(cc, p, now);
}

void xr_cc_on_probe_reply(struct xr_cc *cc, int path, uint32_t seq,
			  uint32_t rate_hint, uint64_t now)
{
	on_probe_reply(cc, path, seq, rate_hint, now);
	pace_refresh(cc);
}

void xr_cc_on_timer(struct xr_cc *cc, uint64_t now)
{
	const struct xr_cc_cfg *cfg = &cc->cfg;
	uint32_t i, sh;

	for (i = 0; i < cc->npaths; i++) {
		struct xr_cc_path *p = &cc->path[i];
		uint64_t iv;

		state_expire(p, now);
		if (!p->probe_sent_ns || now - p->probe_sent_ns < probe_timeout(cc, p))
			continue;
		/* The probe failed: another try on another route. */
		p->probe_sent_ns = 0;
		p->probe_oks = 0;
		p->probe_fails++;
		p->probes_failed++;
		p->events |= XR_CC_EV_REROUTE;
		if (p->probe_fails >= cfg->down_timeouts)
			go_down(p);
		iv = cfg->probe_interval_ns;
		if (p->state == XR_CC_DOWN) {
			sh = p->probe_fails - cfg->down_timeouts + 1;
			while (sh-- && iv < cfg->probe_interval_max_ns)
				iv *= 2;
			if (iv > cfg->probe_interval_max_ns)
				iv = cfg->probe_interval_max_ns;
		}
		p->probe_next_ns = now + iv;
	}
	pace_refresh(cc);
}

uint64_t xr_cc_next_deadline(const struct xr_cc *cc)
{
	uint64_t t = UINT64_MAX, d;
	uint32_t i;

	for (i = 0; i < cc->npaths; i++) {
		const struct xr_cc_path *p = &cc->path[i];

		if (p->probe_sent_ns)
			d = p->probe_sent_ns + probe_timeout(cc, p);
		else if (!in_service(p))
			d = p->probe_next_ns;
		else if (p->state == XR_CC_CONGESTED)
			d = p->last_signal_ns + 2 * win_len(p->srtt_ns);
		else
			d = UINT64_MAX;
		if (d < t)
			t = d;
	}
	return t;
}

/* Has path p had packets out, and no word of them, for two of its RTTs?
 * Fewest-in-flight-first never picks such a path while the others have
 * fewer out, and with a few packets per path, all of a path's flight (or
 * their ACKs) is lost often enough (at 10% loss each way, ~6 packets'
 * worth: a few dozen times a second): nothing later on the path then
 * shows the gap, and only the retransmission timer, tens of RTTs later,
 * would find it.  The next packet on the path (it asks for an ACK,
 * xr_cc_ack_wanted) finds it in one RTT, for nothing, since it had to go
 * somewhere anyway (new data or a retransmission). */
static bool nudge_due(const struct xr_cc_path *p, uint64_t now)
{
	return p->ctl.inflight && p->srtt_ns && now > p->heard_ns &&
	       now - p->heard_ns > 2 * p->srtt_ns;
}

uint64_t xr_cc_tail_probe_at(const struct xr_cc *cc, int path)
{
	const struct xr_cc_path *p;

	if (!valid_path(cc, path))
		return UINT64_MAX;
	p = &cc->path[path];
	if (!p->ctl.inflight || !p->srtt_ns || p->tail_probed || !in_service(p))
		return UINT64_MAX;
	return p->heard_ns + 3 * p->srtt_ns;
}

void xr_cc_tail_probe_sent(struct xr_cc *cc, int path)
{
	if (valid_path(cc, path))
		cc->path[path].tail_probed = 1;
}

int xr_cc_pick_path(struct xr_cc *cc, uint64_t now)
{
	bool svc = any_in_service(cc), any = false, best_due = false;
	int best = -1, best_cls = 4;
	uint32_t k, best_in = 0;

	for (k = 0; k < cc->npaths; k++) {
		uint32_t i = (cc->rr + k) % cc->npaths;
		const struct xr_cc_path *p = &cc->path[i];
		bool due;
		int cls;

		if (p->state == XR_CC_GOOD)
			cls = 0;
		else if (p->state == XR_CC_CONGESTED)
			cls = 1;
		else if (p->state == XR_CC_SUSPECT && !svc)
			cls = 2;
		else
			continue;
		any = true;
		if (p->ctl.inflight + 1 > p->ctl.cwnd)
			continue; /* window full */
		due = nudge_due(p, now);
		if (cls < best_cls ||
		    (cls == best_cls && (due > best_due ||
					 (due == best_due && p->ctl.inflight < best_in)))) {
			best = (int)i;
			best_cls = cls;
			best_due = due;
			best_in = p->ctl.inflight;
		}
	}
	if (!any)
		return -ENETUNREACH;
	if (best < 0 || cc->conn.inflight + 1 > xr_cc_conn_window(cc))
		return -EAGAIN;
	cc->rr = ((uint32_t)best + 1) % cc->npaths;
	return best;
}

int xr_cc_pick_other_path(const struct xr_cc *cc, int not)
{
	int best = -1;
	uint32_t i, best_cls = 2, best_in = 0;

	for (i = 0; i < cc->npaths; i++) {
		const struct xr_cc_path *p = &cc->path[i];
		uint32_t cls;

		if ((int)i == not || !in_service(p))
			continue;
		cls = p->state == XR_CC_GOOD ? 0 : 1;
		if (best < 0 || cls < best_cls ||
		    (cls == best_cls && p->ctl.inflight < best_in)) {
			best = (int)i;
			best_cls = cls;
			best_in = p->ctl.inflight;
		}
	}
	return best < 0 ? -ENETUNREACH : best;
}

/* Pacing rate in packets per ns (0 = unpaced), from the state. */
static double pace_rate_now(const struct xr_cc *cc)
{
	double w = xr_cc_conn_window(cc), sum = 0, gain, r = 0, h;
	uint32_t i;

	for (i = 0; i < cc->npaths; i++)
		if (xr_cc_path_usable(cc, (int)i))
			sum += cc->path[i].ctl.cwnd;
	if (sum < w)
		w = sum;
	gain = cc->conn.cwnd < cc->conn.ssthresh ? cc->cfg.pace_gain_ss
						 : cc->cfg.pace_gain;
	if (cc->srtt_ns)
		r = gain * w / (double)cc->srtt_ns;
	if (cc->hint_mbps) {
		h = mbps_to_ppns(cc, cc->hint_mbps);
		if (r <= 0 || h < r)
			r = h;
	}
	return r;
}

/* The cached rate, unless the packet size changed under it (the library
 * sets cfg.pkt_bytes when a plane's MTU changes). */
static double pace_rate(const struct xr_cc *cc)
{
	return cc->pace_pkt == cc->cfg.pkt_bytes ? cc->pace_r : pace_rate_now(cc);
}

uint64_t xr_cc_pacing_rate(const struct xr_cc *cc)
{
	return (uint64_t)(pace_rate(cc) * 1e9 * cc->cfg.pkt_bytes);
}

uint64_t xr_cc_pacing_rate_fresh(const struct xr_cc *cc)
{
	return (uint64_t)(pace_rate_now(cc) * 1e9 * cc->cfg.pkt_bytes);
}

static double tokens_at(const struct xr_cc *cc, double rate, uint64_t now)
{
	double t = cc->pace_tokens;

	if (rate <= 0)
		return cc->cfg.burst_pkts;
	if (now > cc->pace_last_ns)
		t += (double)(now - cc->pace_last_ns) * rate;
	return t > cc->cfg.burst_pkts ? cc->cfg.burst_pkts : t;
}

uint64_t xr_cc_next_send_ns(const struct xr_cc *cc, uint64_t now)
{
	double rate = pace_rate(cc), t = tokens_at(cc, rate, now);

	if (t >= 1)
		return now;
	return now + (uint64_t)ceil((1 - t) / rate);
}

/* A path whose next packet may come later than this after one that asked
 * for nothing risks its retransmission timer (1 ms floor) firing for a
 * packet that arrived. */
#define XR_CC_AR_REVISIT_NS 250000.0
#define XR_CC_AR_MIN_WIN 8.0

/* Did `t` (0: never) happen less than `len` before now? */
static bool recent(uint64_t t, uint64_t now, uint64_t len)
{
	return t && now - t < len;
}

bool xr_cc_ack_wanted(const struct xr_cc *cc, int path, uint32_t psn,
		      bool retx, bool tail, uint64_t now)
{
	uint64_t quiet;
	uint32_t i;
	double r;

	/* Every other PSN, as TCP's delayed ACK; a retransmission at once;
	 * a nudge (its answer is the point of it). */
	if ((psn & 1) || retx || tail || !valid_path(cc, path) ||
	    nudge_due(&cc->path[path], now))
		return true;
	/* Congestion or loss, recent or beside a competitor, reorders and
	 * shrinks the paths: one that turns congested is picked only when
	 * the good ones are full, and a loss may take the packet that asked.
	 * A path's last packet would then wait long for the next one. */
	quiet = 4 * win_len(cc->srtt_ns);
	if (cc->compete || recent(cc->last_cong_ns, now, quiet) ||
	    recent(cc->conn.last_cut_ns, now, quiet))
		return true;
	for (i = 0; i < cc->npaths; i++)
		if (cc->path[i].state != XR_CC_GOOD ||
		    recent(cc->path[i].ctl.last_cut_ns, now, quiet))
			return true;
	/* Full windows wait for an ACK.  At most one packet per path is left
	 * unasked for, so two in flight on the path, or more than npaths on
	 * the connection, include one that asked; but a loss may take that
	 * one, and small windows are where losses cost timeouts (a drop-tail
	 * queue of a few packets).  So a path window under XR_CC_AR_MIN_WIN
	 * packets, or a connection window under half that per path, asks on
	 * every packet.  (The whole of it per path made every packet ask at
	 * 10% loss, where ~50 packets go over 8 paths; a path's silent tail
	 * is found by the nudge, xr_cc_pick_path, as long as data follows.) */
	if (cc->path[path].ctl.cwnd < XR_CC_AR_MIN_WIN ||
	    xr_cc_conn_window(cc) < XR_CC_AR_MIN_WIN * cc->npaths / 2)
		return true;
	/* Pacing serves the paths in turn (each pacing token is one
	 * packet): a path's next turn comes about npaths packets later,
	 * which must stay well within an RTO. */
	r = pace_rate(cc); /* packets per ns */
	return r <= 0 || (double)cc->npaths / r > XR_CC_AR_REVISIT_NS;
}

void xr_cc_on_send(struct xr_cc *cc, int path, uint64_t now)
{
	struct xr_cc_ctl *k;
	double t;

	if (!valid_path(cc, path))
		return;
	t = tokens_at(cc, pace_rate(cc), now) - 1;
	cc->pace_tokens = t < -(double)cc->cfg.burst_pkts ? -(double)cc->cfg.burst_pkts : t;
	if (now > cc->pace_last_ns)
		cc->pace_last_ns = now;
	/* A flight starts, or a nudge went out: the path's clock restarts. */
	if (!cc->path[path].ctl.inflight || nudge_due(&cc->path[path], now))
		cc->path[path].heard_ns = now;
	k = &cc->path[path].ctl;
	if (++k->inflight > k->peak_inflight)
		k->prev_peak = k->peak_inflight;
	k->peak_inflight = k->inflight;
	k = &cc->conn;
	if (++k->inflight > k->peak_inflight)
		k->prev_peak = k->peak_inflight;
	k->peak_inflight = k->inflight;
}

uint32_t xr_cc_take_events(struct xr_cc *cc, int path)
{
	uint32_t ev;

	if (!valid_path(cc, path))
		return 0;
	ev = cc->path[path].events;
	cc->path[path].events = 0;
	return ev;
}
