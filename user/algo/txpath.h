/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Send window and loss detection of one path: a pure state machine, no I/O,
 * no allocation, the clock passed in as now_ns (CLOCK_MONOTONIC ns, the
 * clock bpf_ktime_get_ns uses too).
 *
 * PSNs.  Every transmission gets the path's next PSN; the packet's content
 * identity is its CSN.  PSNs in [base_psn, next_psn) are in flight; every
 * PSN before base_psn is resolved: acknowledged, or declared lost (and then
 * the caller retransmits its CSN, on this path or another).  Each data packet
 * carries psn_base = xr_txpath_base(p) so the receiver can move its window
 * over the PSNs we gave up on.  At most XR_TXPATH_WIN PSNs are in flight.
 *
 * Loss detection.  A path is ordered, so a PSN still in flight below the
 * highest PSN an ACK reports as arrived is lost: declared at once (no
 * reordering allowance, no duplicate-ACK threshold).  Hence the resolved
 * PSNs always form a prefix and everything in [base_psn, next_psn) is in
 * flight.  Tail losses and lost ACKs are caught by the retransmission
 * timer: when the oldest in-flight PSN is older than the RTO, every PSN in
 * flight is declared lost (the path may be dead; the congestion controller
 * decides whether it is).
 *
 * RTO = srtt + 4 rttvar (RFC 6298), clamped to [rto_min, rto_max], doubled
 * per consecutive timeout (capped at rto_max), back to 1x on any ACK that
 * acknowledges something.  rto_min defaults to 1 ms, well above a veth
 * RTT, because a spurious timeout costs a burst of duplicate retransmissions
 * and a wrong "path silent" verdict while a smaller floor only finds tail
 * losses sooner; the measurements behind the choice are in
 * docs/PERFORMANCE.md ("The machine").  It is a config field.
 *
 * Spurious timeouts teach the floor.  An ACK triggered by a PSN the timer
 * had expired proves the timer early (that packet and its ACK were under way
 * when it fired), and says by how much: the ACK came d after the packet.
 * The path's floor then rises to 5/4 d (at most XR_TXPATH_FLOOR_MAX_NS), and
 * falls back towards rto_min by half every XR_TXPATH_FLOOR_DECAY_NS without
 * new evidence.  A late acknowledgement carried by the ACK of a later packet
 * teaches nothing: the expired packet's own ACK may simply have been lost.
 * A host that stalls its processes for milliseconds (a busy VM) so costs
 * one duplicate window per stall and path, not one per RTO.
 *
 * ACKs are attacker-reachable input (with a valid token).  Anything that
 * would acknowledge a PSN never sent (cack or a SACK bit at or beyond
 * next_psn) makes the whole ACK ignored and counted in bad_acks; ACKs that
 * are stale (cack behind one seen before), duplicated or reordered are
 * harmless by construction (they only ever resolve in-flight PSNs, and the
 * receiver's state only moves forward), and counted in stale_acks.
 *
 * Late acknowledgements.  PSNs declared lost by the timer or by
 * xr_txpath_abandon_all may still arrive (the timer was early, or the ACKs
 * were lost).  A later ACK that shows them arrived reports their CSNs in the
 * result with XR_TXI_LATE so the caller can cancel the retransmission it has
 * not yet sent; they are not counted in flight again.
 *
 * RTT.  The receiver echoes the 32-bit ts of the packet that triggered the
 * ACK; the sample is (u32)t_ack - ts_echo (correct across the 32-bit wrap,
 * every ~4.3 s), where t_ack is the ACK's arrival time (struct xr_evt.rx_ns,
 * stamped by XDP, so the library's own scheduling delay is not counted).
 * Every transmission has its own PSN, so there is no retransmission
 * ambiguity.  The sample is accepted only if ack_psn is a PSN we still
 * remember and ts_echo is not earlier than our own record of sending it.
 * Put (uint32_t)now_ns of xr_txpath_send (or a later stamp) in the ts field.
 */
#ifndef XR_USER_TXPATH_H
#define XR_USER_TXPATH_H

#include <stdbool.h>
#include <stdint.h>

#include "contract/abi.h"
#include "rtt.h"

#define XR_TXPATH_WIN XR_SACK_BITS /* PSNs in flight per path, at most */
#define XR_TXPATH_FLOOR_MAX_NS 4000000ull    /* learnt RTO floor: 4 ms max */
#define XR_TXPATH_FLOOR_DECAY_NS 1000000000ull /* halves its excess per 1 s */

struct xr_txpath_cfg {
	uint64_t rto_min_ns;     /* floor of the RTO; default 1 ms */
	uint64_t rto_max_ns;     /* ceiling, also of the backoff; default 200 ms */
	uint64_t rto_init_ns;    /* RTO before the first RTT sample; default 10 ms */
	uint64_t rtt_min_win_ns; /* window of the min RTT; 0 = 10 s */
};

void xr_txpath_cfg_default(struct xr_txpath_cfg *cfg);

/* The connection gives up when nothing is acknowledged for its peer
 * timeout; that must span several retransmissions, or at a few per cent
 * of loss (each try lost with the packet or with its ACK) a short timeout
 * would fail healthy connections.  Caps rto_max (and rto_init) at
 * timeout / XR_TXPATH_TRIES_PER_TIMEOUT, never below rto_min: a 50 ms
 * timeout retries at least ~7 times, as an ibverbs retry_cnt of 7 would;
 * the 2 s default keeps the 200 ms ceiling. */
#define XR_TXPATH_TRIES_PER_TIMEOUT 8u
void xr_txpath_cfg_for_timeout(struct xr_txpath_cfg *cfg, uint32_t timeout_ms);

/* One PSN slot of the ring (index psn % XR_TXPATH_WIN). */
enum xr_txslot_state {
	XR_TXS_FREE = 0,     /* never used */
	XR_TXS_INFLIGHT = 1,
	XR_TXS_ACKED = 2,
	XR_TXS_LOST = 3,     /* declared lost by SACK */
	XR_TXS_EXPIRED = 4,  /* declared lost by the timer or abandoned: a
			      * late ACK may still show it arrived */
};

struct xr_txslot {
	uint32_t psn;
	uint32_t csn;
	uint64_t tx_ns;
	uint32_t bytes;
	uint32_t state; /* enum xr_txslot_state */
};

struct xr_txpath_stats {
	uint64_t tx_pkts, tx_bytes;
	uint64_t acked_pkts, acked_bytes; /* incl. late ones */
	uint64_t sack_lost;     /* declared lost because of a SACK gap */
	uint64_t timeout_lost;  /* declared lost by the timer */
	uint64_t abandoned;     /* handed back by xr_txpath_abandon_all */
	uint64_t late_acked;    /* declared lost, then shown to have arrived */
	uint64_t floor_raised;  /* times a late ACK raised the RTO floor */
	uint64_t timeouts;      /* timer expiries */
	uint64_t acks;          /* ACKs accepted */
	uint64_t ece_acks;      /* of which with ECN echo */
	uint64_t stale_acks;    /* of which with cack behind a previous one */
	uint64_t bad_acks;      /* ACKs ignored: they acknowledged unsent PSNs */
	uint64_t bad_ts;        /* ACKs whose RTT sample was refused */
};

struct xr_txpath {
	uint32_t next_psn;     /* PSN of the next transmission */
	uint32_t base_psn;     /* oldest PSN in flight (== next_psn if none) */
	uint32_t hi_cack;      /* highest cumulative ack seen */
	uint32_t late_lo;      /* [late_lo, late_hi): EXPIRED PSNs a late ACK */
	uint32_t late_hi;      /* may still confirm (empty if equal) */
	uint32_t backoff;      /* RTO doubling exponent */
	uint32_t consec_timeouts; /* timeouts since the last acknowledgement */
	uint32_t rsvd;
	uint64_t last_ack_ns;  /* last accepted ACK (0 = none yet) */
	uint64_t floor_ns;     /* learnt RTO floor (>= rto_min), see above */
	uint64_t floor_at_ns;  /* when it was last raised or halved */
	struct xr_txpath_cfg cfg;
	struct xr_txpath_stats st;
	struct xr_rtt rtt;
	struct xr_txslot ring[XR_TXPATH_WIN];
};

/* An ACK as the library receives it (struct xr_evt + struct xr_evt_ack). */
struct xr_ack_view {
	uint32_t cack;      /* next PSN expected; all before it arrived */
	uint32_t ack_psn;   /* PSN that triggered the ACK */
	uint32_t ts_echo;   /* its ts */
	uint32_t rate_hint; /* Mbit/s, 0 = none */
	uint64_t sack[XR_SACK_WORDS]; /* host order; bit i = PSN cack+1+i */
	uint32_t ce_pkts;   /* receiver: CE-marked packets on this path */
	uint32_t rx_pkts;   /* receiver: packets on this path */
	uint32_t flags;     /* XR_AF_* */
	uint64_t rx_ns;     /* when the ACK arrived (our clock); 0 = unknown */
};

static inline void xr_ack_view_from_evt(struct xr_ack_view *v,
					const struct xr_evt *e)
{
	int i;

	v->cack = e->ack.cack;
	v->ack_psn = e->ack.ack_psn;
	v->ts_echo = e->ack.ts_echo;
	v->rate_hint = e->ack.rate_hint;
	for (i = 0; i < XR_SACK_WORDS; i++)
		v->sack[i] = e->ack.sack[i];
	v->ce_pkts = e->ack.ce_pkts;
	v->rx_pkts = e->ack.rx_pkts;
	v->flags = e->flags;
	v->rx_ns = e->rx_ns;
}

/* One packet in a result. */
#define XR_TXI_LATE 0x1 /* acked after it had been declared lost */

struct xr_txitem {
	uint32_t csn;
	uint32_t psn;
	uint32_t bytes;
	uint32_t flags; /* XR_TXI_* */
	uint64_t tx_ns;
};

/* What one ACK, timer run or abandon did.  Up to XR_TXPATH_WIN entries per
 * list, so the caller provides it (about 12 KiB). */
struct xr_ack_result {
	uint32_t nacked;        /* entries in acked[] */
	uint32_t nlost;         /* entries in lost[]: retransmit these CSNs */
	uint32_t acked_inflight;/* acked entries that were in flight (not LATE) */
	uint32_t acked_bytes;
	uint32_t lost_bytes;
	uint32_t consec_timeouts; /* timer/abandon: the path's count after it */
	uint64_t rtt_ns;        /* RTT sample of this ACK, 0 = none */
	bool ece;               /* the ACK carried ECN echo */
	bool stale;             /* cack went backwards (still processed) */
	bool bad;               /* ignored: acknowledged unsent PSNs */
	struct xr_txitem acked[XR_TXPATH_WIN];
	struct xr_txitem lost[XR_TXPATH_WIN];
};

/* cfg NULL = defaults.  -EINVAL if the cfg is inconsistent. */
int xr_txpath_init(struct xr_txpath *p, uint32_t init_psn,
		   const struct xr_txpath_cfg *cfg);

/* The CSN that PSN psn carried (psn in [base, next): in flight). */
static inline uint32_t xr_txpath_csn_of(const struct xr_txpath *p, uint32_t psn)
{
	return p->ring[psn % XR_TXPATH_WIN].csn;
}

static inline uint32_t xr_txpath_inflight(const struct xr_txpath *p)
{
	return p->next_psn - p->base_psn;
}

/* PSNs that may still be sent before the 256-PSN bound (not the CC window). */
static inline uint32_t xr_txpath_room(const struct xr_txpath *p)
{
	return XR_TXPATH_WIN - xr_txpath_inflight(p);
}

/* Value for the psn_base field of the next data packet. */
static inline uint32_t xr_txpath_base(const struct xr_txpath *p)
{
	return p->base_psn;
}

/* Record a transmission of csn (bytes on the wire or payload, the caller's
 * choice: it is only reported back).  *psn receives the PSN to put in the
 * packet.  -ENOSPC if the path has no room. */
int xr_txpath_send(struct xr_txpath *p, uint32_t csn, uint32_t bytes,
		   uint64_t now_ns, uint32_t *psn);

/* Process an ACK for this path.  Returns the number of PSNs it resolved
 * (acked or lost, late ones included), or -EINVAL if it was ignored as bad.
 * res is always filled in. */
int xr_txpath_on_ack(struct xr_txpath *p, const struct xr_ack_view *ack,
		     uint64_t now_ns, struct xr_ack_result *res);

/* Retransmission timer.  Returns the number of PSNs declared lost (0 if the
 * timer had not expired). */
int xr_txpath_on_timer(struct xr_txpath *p, uint64_t now_ns,
		       struct xr_ack_result *res);

/* When xr_txpath_on_timer must run next; UINT64_MAX if nothing is in flight. */
uint64_t xr_txpath_next_deadline(const struct xr_txpath *p);

/* The current RTO including backoff. */
uint64_t xr_txpath_rto(const struct xr_txpath *p);

/* The path failed: declare every in-flight PSN lost (listed in res->lost)
 * so the caller retransmits them elsewhere.  No backoff.  Returns the count. */
int xr_txpath_abandon_all(struct xr_txpath *p, struct xr_ack_result *res);

#endif /* XR_USER_TXPATH_H */
