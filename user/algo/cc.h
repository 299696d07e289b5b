/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Congestion control, path state and path selection of one connection: a
 * pure state machine (no I/O, no allocation, the clock passed in).  The
 * algorithm and its constants are described in docs/PROTOCOL.md 13.
 *
 * Windows are in packets (doubles, so that additive increase can add
 * fractions): every data packet is about one MTU, the per-path bound of 256
 * PSNs and the 256-entry veth ring are counted in packets too, and the
 * receiver's rate hint is converted with cfg.pkt_bytes.
 *
 * How the library drives it (per connection, one struct xr_txpath per path):
 *
 *   send loop:   while (xr_cc_next_send_ns(cc, now) <= now &&
 *                       (i = xr_cc_pick_path(cc, now)) >= 0) {
 *                        xr_txpath_send(&tp[i], csn, bytes, now, &psn);
 *                        xr_cc_on_send(cc, i, now);  ... transmit ...
 *                }
 *   ACK event:   xr_txpath_on_ack(&tp[i], &view, now, &res);
 *                xr_cc_on_ack(cc, i, &view, &res, &tp[i], now);
 *                retransmit res.lost[] CSNs (any path), drop queued
 *                retransmissions of res.acked[] CSNs flagged XR_TXI_LATE.
 *   timers:      first drain pending ACK events (so a descheduled process
 *                does not mistake queued ACKs for silence), then
 *                xr_txpath_on_timer(&tp[i], now, &res);
 *                xr_cc_on_timeout(cc, i, &res, now);  retransmit res.lost[].
 *                xr_cc_on_timer(cc, now) for probe timeouts.
 *                Next wake-up: min of xr_txpath_next_deadline(),
 *                xr_cc_next_deadline() and, when there is data to send,
 *                xr_cc_next_send_ns().
 *   events:      xr_cc_take_events(cc, i) after any of the above:
 *                XR_CC_EV_SUSPECT  -> xr_txpath_abandon_all(&tp[i], &res),
 *                                     xr_cc_on_abandon(cc, i, &res),
 *                                     retransmit res.lost[] elsewhere;
 *                XR_CC_EV_REROUTE  -> give the path a new UDP source port;
 *                XR_CC_EV_DOWN / XR_CC_EV_RESTORED -> telemetry, logs.
 *   probes:      if (now >= xr_cc_probe_due(cc, i)) send a probe with
 *                seq = xr_cc_probe_sent(cc, i, now); on its reply call
 *                xr_cc_on_probe_reply(cc, i, seq, rate_hint, now).
 */
#ifndef XR_USER_CC_H
#define XR_USER_CC_H

#include <stdbool.h>
#include <stdint.h>

#include "txpath.h"

/* Same values as enum xroce_path_state. */
enum xr_cc_state {
	XR_CC_GOOD = 0,
	XR_CC_CONGESTED = 1, /* marks or queueing delay within the last 2 RTTs */
	XR_CC_SUSPECT = 2,   /* failing: timeouts or loss without marks */
	XR_CC_DOWN = 3,      /* repeated timeouts / failed probes */
};

/* Events for the library (xr_cc_take_events). */
#define XR_CC_EV_SUSPECT 0x1  /* path left service: move its packets */
#define XR_CC_EV_REROUTE 0x2  /* pick a new entropy (UDP source port) */
#define XR_CC_EV_DOWN 0x4     /* path declared down */
#define XR_CC_EV_RESTORED 0x8 /* path back in service */

struct xr_cc_cfg {
	uint32_t pkt_bytes;         /* bytes per packet for rate conversions */
	uint32_t burst_pkts;        /* pacing bucket depth */
	double conn_init_cwnd;
	double conn_min_cwnd;
	double conn_max_cwnd;       /* 0 = npaths * path_max_cwnd */
	double path_init_cwnd;
	double path_min_cwnd;
	double path_max_cwnd;       /* at most XR_TXPATH_WIN */
	double ai_pkts;             /* additive increase per RTT */
	double dctcp_g;             /* EWMA gain of the marked fraction */
	uint32_t ecn_dctcp;         /* 1: cut alpha / 2 per marked RTT (DCTCP);
				     * 0: at least ecn_beta per marked RTT, as a classic
				     * (RFC 3168) flow cuts (docs/PROTOCOL.md
				     * 13.1) */
	double ecn_beta;            /* least cut per marked RTT (ecn_dctcp 0),
				     * 0 < ecn_beta <= 0.5 */
	uint32_t compete_windows;   /* standing-queue windows -> compete mode;
				     * 0 = never */
	double delay_beta;          /* delay cut: 1 - beta * (rtt - target) / rtt */
	double loss_beta;           /* cut per RTT with any loss; 0 = never */
	double cong_loss_beta;      /* cut per RTT with a congestion loss (one
				     * that comes with a full queue); 0 = none */
	double pace_gain;           /* pacing rate = gain * window / srtt */
	double pace_gain_ss;        /* ... in slow start */
	double suspect_loss;        /* unmarked loss EWMA making a path suspect */
	double loss_ewma_g;         /* EWMA gain of the loss fraction, per packet */
	uint64_t delay_allow_ns;    /* target = min RTT + allowance ... */
	uint64_t delay_target_ns;   /* ... unless this absolute target is set */
	uint32_t suspect_min_lost;  /* a timeout losing this many -> suspect */
	uint32_t down_timeouts;     /* consecutive timeouts/failed probes -> down */
	uint32_t probe_ok;          /* consecutive probe successes to return */
	uint32_t rsvd;
	uint64_t probe_interval_ns; /* between probes of a suspect path */
	uint64_t probe_interval_max_ns; /* backoff cap for a down path */
	uint64_t probe_timeout_ns;  /* a probe unanswered this long failed */
	uint64_t compete_min_ns;    /* compete mode: the standing queue lasted
				     * at least this long too */
	uint64_t drain_every_ns;    /* in compete mode: drain probe period */
};

void xr_cc_cfg_default(struct xr_cc_cfg *cfg);

/* One window controller: ECN (DCTCP) + delay + additive increase.  A path
 * has one, the connection has one. */
struct xr_cc_ctl {
	double cwnd;
	double ssthresh;
	double alpha;              /* EWMA of the marked fraction */
	uint32_t inflight;
	uint32_t win_rx, win_ce;   /* receiver counters' deltas this window */
	uint32_t win_acks, win_ece;
	uint32_t peak_inflight;    /* most in flight this window ... */
	uint32_t prev_peak;        /* ... and the last: "is cwnd the limit?" */
	uint32_t rsvd;
	uint64_t win_end_ns;       /* end of the observation window (~1 RTT) */
	uint64_t win_min_rtt_ns;   /* smallest sample this window */
	uint64_t last_cut_ns;      /* last decrease (at most one per RTT) */
	uint64_t cuts_ecn, cuts_delay, cuts_loss;
};

struct xr_cc_path {
	struct xr_cc_ctl ctl;
	uint32_t state;            /* enum xr_cc_state */
	uint32_t events;           /* XR_CC_EV_* not yet taken */
	uint32_t suspect_timeout;  /* suspect because of a timeout (not loss) */
	uint32_t last_rx, last_ce; /* receiver's cumulative counters, last seen */
	uint32_t probe_seq;
	uint32_t probe_oks;        /* consecutive successes */
	uint32_t probe_fails;      /* consecutive failures */
	uint64_t probe_sent_ns;    /* outstanding probe, 0 = none */
	uint64_t probe_next_ns;    /* when the next probe is due */
	uint64_t last_signal_ns;   /* last mark, delay or congestion-loss signal */
	uint64_t heard_ns;         /* last ACK, or the send that started its
				    * flight, or its last nudge (xr_cc_on_send) */
	uint32_t tail_probed;      /* a tail-loss probe went since its last ACK */
	uint32_t rsvd2;
	uint64_t srtt_ns, rttvar_ns, min_rtt_ns; /* copied from the txpath */
	uint64_t lq_rtt_ns;        /* RTT sample of the path's previous ACK */
	uint64_t lq_rtt_at_ns;     /* ... and when it came */
	double loss_ewma;          /* fraction of resolved packets lost */
	double lost_frac;          /* the same, congestion drops included */
	uint32_t loss_n;           /* packets behind loss_ewma since reset */
	uint32_t rsvd;
	double saved_cwnd;         /* before it left service */
	/* telemetry */
	uint64_t rx_total, ce_total; /* sums of counter deltas */
	uint64_t marks, timeouts, suspects, downs, probes, probes_failed;
};

/* Is a loss congestion?  Packets are counted by the RTT their ACK saw:
 * above the connection's mid RTT (queue high) or below it. */
struct xr_cc_lossq {
	uint64_t mid_ns;           /* slow EWMA of the windows' min RTT */
	double n_hi, lost_hi;      /* packets resolved / lost, queue high */
	double n_lo, lost_lo;      /* ... queue low; all four decay */
	double frac;               /* EWMA of the fraction lost, per packet */
	uint64_t cong;             /* losses taken as congestion (telemetry) */
};

struct xr_cc {
	struct xr_cc_cfg cfg;
	uint32_t npaths;
	uint32_t rr;               /* rotation for ties in path selection */
	uint32_t hint_mbps;        /* latest receiver rate hint, 0 = none */
	uint32_t compete;          /* 1: flows that do not yield to delay hold
				    * the queue: the delay signal is off */
	uint64_t last_cong_ns;     /* last congestion signal on any path */
	uint64_t srtt_ns;          /* connection RTT: EWMA over all paths */
	double pace_tokens;
	uint64_t pace_last_ns;
	/* The pacing rate (packets per ns) as of the last call that could
	 * change what it depends on (windows, RTT, hint, path states: every
	 * mutator but xr_cc_on_send and xr_cc_pick_path), for cfg.pkt_bytes
	 * = pace_pkt: the sender asks for it three times per packet, and
	 * computing it walks every path. */
	double pace_r;
	uint32_t pace_pkt;
	struct xr_cc_ctl conn;
	struct xr_cc_lossq lq;
	/* standing queue and compete mode (cc.c, "COMPETE") */
	uint32_t q_windows;        /* consecutive windows above the target */
	uint64_t q_since_ns;       /* first of the q_windows */
	uint64_t q_peak_ns;        /* their highest min RTT */
	double q_cwnd;             /* connection window at the first */
	uint64_t drain_at_ns;      /* next drain probe */
	uint64_t drain_start_ns;   /* drain probe under way since (0 = none) */
	uint64_t drain_end_ns;
	uint64_t drain_min_ns;     /* its smallest RTT sample */
	uint64_t drain_pre_ns;     /* the window min RTT before it */
	double drain_saved;        /* the window before it */
	uint64_t competes, drains, drains_alone; /* telemetry */
	struct xr_cc_path path[XR_MAX_PATHS];
};

/* cfg NULL = defaults.  -EINVAL for npaths outside 1..XR_MAX_PATHS or an
 * inconsistent cfg. */
int xr_cc_init(struct xr_cc *cc, uint32_t npaths, const struct xr_cc_cfg *cfg,
	       uint64_t now_ns);

/* ---- inputs ---------------------------------------------------------- */
/* One packet (new or retransmitted) went out on path. */
void xr_cc_on_send(struct xr_cc *cc, int path, uint64_t now_ns);

/* An ACK was processed by xr_txpath_on_ack(tp, ack, now, res). */
void xr_cc_on_ack(struct xr_cc *cc, int path, const struct xr_ack_view *ack,
		  const struct xr_ack_result *res, const struct xr_txpath *tp,
		  uint64_t now_ns);

/* xr_txpath_on_timer declared res->nlost packets of path lost. */
void xr_cc_on_timeout(struct xr_cc *cc, int path,
		      const struct xr_ack_result *res, uint64_t now_ns);

/* xr_txpath_abandon_all handed back res->nlost packets of path. */
void xr_cc_on_abandon(struct xr_cc *cc, int path,
		      const struct xr_ack_result *res);

/* Probes of suspect / down paths. */
uint64_t xr_cc_probe_due(const struct xr_cc *cc, int path); /* UINT64_MAX: none */
uint32_t xr_cc_probe_sent(struct xr_cc *cc, int path, uint64_t now_ns);
void xr_cc_on_probe_reply(struct xr_cc *cc, int path, uint32_t seq,
			  uint32_t rate_hint, uint64_t now_ns);

/* Tail-loss probes (PROTOCOL.md 10.4a): a path in service that has had
 * packets out and heard nothing of them for 3 srtt (its nudge did not come:
 * nothing left to send, or no window) is owed one probe, a copy of its
 * newest packet still unacknowledged, until its next ACK.  _at: when
 * (UINT64_MAX: none owed); _sent: the probe went (or could not go: one
 * try per silence, the retransmission timer still stands behind it). */
uint64_t xr_cc_tail_probe_at(const struct xr_cc *cc, int path);
void xr_cc_tail_probe_sent(struct xr_cc *cc, int path);

/* Probe timeouts and state expiry; call at xr_cc_next_deadline(). */
void xr_cc_on_timer(struct xr_cc *cc, uint64_t now_ns);
uint64_t xr_cc_next_deadline(const struct xr_cc *cc);

/* ---- outputs --------------------------------------------------------- */
/* Path for the next packet (best state first, then fewest in flight,
 * within each path's window), by the windows only (ask xr_cc_next_send_ns
 * for pacing): >= 0, -EAGAIN if every usable path or the connection window
 * is full, -ENETUNREACH if no path is usable.  A path whose flight has gone
 * unanswered for two of its RTTs comes first in its class: its next packet
 * is the one whose ACK shows what was lost (the nudge, PROTOCOL.md 13.4). */
int xr_cc_pick_path(struct xr_cc *cc, uint64_t now_ns);
/* A second path for a redundant copy of a packet sent on path `not`: the
 * in-service path (good before congested) with the least in flight,
 * windows aside (the copies are bounded by their caller: a few packets of
 * latency-bound traffic).  -ENETUNREACH if there is none. */
int xr_cc_pick_other_path(const struct xr_cc *cc, int not);

/* Earliest time >= now_ns at which pacing allows the next packet. */
uint64_t xr_cc_next_send_ns(const struct xr_cc *cc, uint64_t now_ns);

/* Does a packet about to go on `path` ask for an ACK (docs/PROTOCOL.md
 * 7.3)?  psn: its PSN on the path; retx: a retransmission; tail: it is
 * among the last npaths packets of all the work the sender has queued.
 * Every other PSN of a path asks (an ACK answers
 * for everything its path delivered); the others ask only where the next
 * packet on their path, which would answer for them, may come after the
 * path's retransmission timer. */
bool xr_cc_ack_wanted(const struct xr_cc *cc, int path, uint32_t psn,
		      bool retx, bool tail, uint64_t now_ns);

/* Pacing rate in bytes per second (0 = not paced yet: no RTT, no hint). */
uint64_t xr_cc_pacing_rate(const struct xr_cc *cc);
/* The same computed afresh from the state, not from the cached rate
 * (for tests: the two must always agree). */
uint64_t xr_cc_pacing_rate_fresh(const struct xr_cc *cc);

/* The connection window in force: min(cwnd, rate hint * srtt). */
double xr_cc_conn_window(const struct xr_cc *cc);

bool xr_cc_path_usable(const struct xr_cc *cc, int path);

/* Free window of a usable path in packets (0 if unusable or full). */
uint32_t xr_cc_path_weight(const struct xr_cc *cc, int path);

static inline enum xr_cc_state xr_cc_path_state(const struct xr_cc *cc, int path)
{
	return (enum xr_cc_state)cc->path[path].state;
}

/* Take (and clear) the path's pending XR_CC_EV_* events. */
uint32_t xr_cc_take_events(struct xr_cc *cc, int path);

#endif /* XR_USER_CC_H */
