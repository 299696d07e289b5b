/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Send window and loss detection of one path: see txpath.h. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "txpath.h"

#define MS 1000000ull

void xr_txpath_cfg_default(struct xr_txpath_cfg *cfg)
{
	cfg->rto_min_ns = 1 * MS;
	cfg->rto_max_ns = 200 * MS;
	cfg->rto_init_ns = 10 * MS;
	cfg->rtt_min_win_ns = 0;
}

void xr_txpath_cfg_for_timeout(struct xr_txpath_cfg *cfg, uint32_t timeout_ms)
{
	uint64_t cap = (uint64_t)timeout_ms * MS / XR_TXPATH_TRIES_PER_TIMEOUT;

	if (cap < cfg->rto_min_ns)
		cap = cfg->rto_min_ns;
	if (cfg->rto_max_ns > cap)
		cfg->rto_max_ns = cap;
	if (cfg->rto_init_ns > cfg->rto_max_ns)
		cfg->rto_init_ns = cfg->rto_max_ns;
}

int xr_txpath_init(struct xr_txpath *p, uint32_t init_psn,
		   const struct xr_txpath_cfg *cfg)
{
	struct xr_txpath_cfg def;

	if (!cfg) {
		xr_txpath_cfg_default(&def);
		cfg = &def;
	}
	if (!cfg->rto_min_ns || cfg->rto_max_ns < cfg->rto_min_ns)
		return -EINVAL;
	memset(p, 0, sizeof(*p));
	p->cfg = *cfg;
	p->next_psn = p->base_psn = p->hi_cack = init_psn;
	p->floor_ns = cfg->rto_min_ns;
	p->late_lo = p->late_hi = init_psn;
	xr_rtt_init(&p->rtt, cfg->rtt_min_win_ns);
	return 0;
}

static struct xr_txslot *slot(struct xr_txpath *p, uint32_t psn)
{
	return &p->ring[psn % XR_TXPATH_WIN];
}

static void res_clear(struct xr_ack_result *res)
{
	/* Only the header: the lists are valid up to their counts. */
	memset(res, 0, offsetof(struct xr_ack_result, acked));
}

static void push(struct xr_txitem *list, uint32_t *n, const struct xr_txslot *s,
		 uint32_t flags)
{
	struct xr_txitem *it = &list[*n % XR_TXPATH_WIN];

	it->csn = s->csn;
	it->psn = s->psn;
	it->bytes = s->bytes;
	it->flags = flags;
	it->tx_ns = s->tx_ns;
	(*n)++;
}

static void push_acked(struct xr_txpath *p, struct xr_ack_result *res,
		       struct xr_txslot *s, uint32_t flags)
{
	s->state = XR_TXS_ACKED;
	push(res->acked, &res->nacked, s, flags);
	res->acked_bytes += s->bytes;
	if (!(flags & XR_TXI_LATE))
		res->acked_inflight++;
	p->st.acked_pkts++;
	p->st.acked_bytes += s->bytes;
}

static void push_lost(struct xr_ack_result *res, struct xr_txslot *s,
		      uint32_t state)
{
	s->state = state;
	push(res->lost, &res->nlost, s, 0);
	res->lost_bytes += s->bytes;
}

uint64_t xr_txpath_rto(const struct xr_txpath *p)
{
	const struct xr_txpath_cfg *c = &p->cfg;
	uint64_t rto;
	uint32_t i;

	if (xr_rtt_count(&p->rtt))
		rto = xr_rtt_srtt(&p->rtt) + 4 * xr_rtt_var(&p->rtt);
	else
		rto = c->rto_init_ns;
	if (rto < c->rto_min_ns)
		rto = c->rto_min_ns;
	if (rto < p->floor_ns)
		rto = p->floor_ns;
	for (i = 0; i < p->backoff && rto < c->rto_max_ns; i++)
		rto *= 2;
	if (rto > c->rto_max_ns)
		rto = c->rto_max_ns;
	return rto;
}

int xr_txpath_send(struct xr_txpath *p, uint32_t csn, uint32_t bytes,
		   uint64_t now_ns, uint32_t *psn)
{
	struct xr_txslot *s;

	if (!xr_txpath_room(p))
		return -ENOSPC;
	s = slot(p, p->next_psn);
	s->psn = p->next_psn;
	s->csn = csn;
	s->bytes = bytes;
	s->tx_ns = now_ns;
	s->state = XR_TXS_INFLIGHT;
	*psn = p->next_psn++;
	p->st.tx_pkts++;
	p->st.tx_bytes += bytes;
	return 0;
}

/* Index of the highest set bit of the SACK bitmap, or -1. */
static int sack_top(const uint64_t *sack)
{
	int w;

	for (w = XR_SACK_WORDS - 1; w >= 0; w--)
		if (sack[w])
			return w * 64 + 63 - __builtin_clzll(sack[w]);
	return -1;
}

/* Does the ACK say psn arrived? */
static bool arrived(const struct xr_ack_view *a, uint32_t psn)
{
	int32_t d = xr_seq_diff(psn, a->cack);
	uint32_t bit;

	if (d < 0)
		return true;
	if (d == 0 || d > XR_SACK_BITS)
		return false;
	bit = (uint32_t)d - 1;
	return (a->sack[bit / 64] >> (bit % 64)) & 1;
}

/* A late ACK triggered by s, an expired PSN, d after its transmission:
 * the timer was early by at least d - RTO; raise the floor (txpath.h). */
static void learn_floor(struct xr_txpath *p, const struct xr_txslot *s,
			uint64_t t_ack)
{
	uint64_t d, want;

	if (t_ack <= s->tx_ns)
		return;
	d = t_ack - s->tx_ns;
	want = d + d / 4;
	if (want > XR_TXPATH_FLOOR_MAX_NS)
		want = XR_TXPATH_FLOOR_MAX_NS;
	if (want > p->cfg.rto_max_ns)
		want = p->cfg.rto_max_ns;
	if (want > p->floor_ns) {
		p->floor_ns = want;
		p->st.floor_raised++;
	}
	p->floor_at_ns = t_ack;
}

/* Without new evidence the floor halves its excess over rto_min per
 * XR_TXPATH_FLOOR_DECAY_NS. */
static void decay_floor(struct xr_txpath *p, uint64_t now)
{
	uint64_t min = p->cfg.rto_min_ns;

	if (p->floor_ns <= min || now < p->floor_at_ns + XR_TXPATH_FLOOR_DECAY_NS)
		return;
	p->floor_ns = min + (p->floor_ns - min) / 2;
	if (p->floor_ns - min < 1000)
		p->floor_ns = min;
	p->floor_at_ns = now;
}

/* PSNs the timer or abandon_all gave up on may show up in a later ACK:
 * report them (XR_TXI_LATE) so their retransmission can be cancelled.
 * end = one past the highest PSN this ACK reports arrived.
 *
 * A SACK bit always proves arrival.  The cumulative ack does only if the
 * receiver cannot have moved it over these PSNs because of a psn_base we
 * sent after giving up on them (xr_rxw_forward): true when the ACK was
 * triggered by a packet sent before that (ack_psn < late_hi), because the
 * path is ordered, so the receiver had seen no later packet yet.  The
 * trigger must have been new (not XR_AF_DUP) and consistent with that
 * (cack <= ack_psn + 1): a duplicate of an old PSN can arrive any time. */
static void late_scan(struct xr_txpath *p, const struct xr_ack_view *a,
		      uint32_t end, uint64_t t_ack, struct xr_ack_result *res)
{
	uint32_t lo = p->late_lo, hi = p->late_hi, x;
	bool cum_ok;

	if (lo == hi)
		return;
	/* The ring no longer remembers anything older than next - WIN. */
	if (xr_seq_diff(p->next_psn, lo) > XR_TXPATH_WIN)
		lo = p->next_psn - XR_TXPATH_WIN;
	if (xr_seq_diff(hi, lo) <= 0) {
		p->late_lo = p->late_hi;
		return;
	}
	cum_ok = !(a->flags & XR_AF_DUP) &&
		 xr_seq_diff(a->ack_psn, hi) < 0 &&
		 xr_seq_diff(a->cack, a->ack_psn) <= 1 &&
		 xr_seq_diff(p->next_psn, a->ack_psn) <= XR_TXPATH_WIN;
	/* Evidence of delay only if the ACK's own trigger is a PSN the timer
	 * expired: that packet and its ACK were under way when it fired.  A
	 * late ACK triggered by a later packet may just follow lost ACKs. */
	{
		const struct xr_txslot *t = slot(p, a->ack_psn);

		if (xr_seq_diff(a->ack_psn, lo) >= 0 && xr_seq_diff(a->ack_psn, hi) < 0 &&
		    t->psn == a->ack_psn && t->state == XR_TXS_EXPIRED &&
		    !(a->flags & XR_AF_DUP))
			learn_floor(p, t, t_ack);
	}
	for (x = lo; x != hi && xr_seq_diff(x, end) < 0; x++) {
		struct xr_txslot *s = slot(p, x);
		int32_t d = xr_seq_diff(x, a->cack);

		if (s->psn != x || s->state != XR_TXS_EXPIRED)
			continue;
		if (d < 0 ? cum_ok : arrived(a, x)) {
			push_acked(p, res, s, XR_TXI_LATE);
			p->st.late_acked++;
		}
	}
	/* Below cack nothing more can be learnt: the receiver has them, or
	 * skipped them for good; and ACKs of a path come back in order, so no
	 * older ACK (with a cack still trustworthy) can follow this one. */
	if (xr_seq_diff(a->cack, lo) > 0)
		lo = xr_seq_diff(a->cack, hi) >= 0 ? hi : a->cack;
	p->late_lo = lo;
}

static void take_rtt_sample(struct xr_txpath *p, const struct xr_ack_view *a,
			    uint64_t t_ack, struct xr_ack_result *res)
{
	int32_t age = xr_seq_diff(p->next_psn, a->ack_psn);
	const struct xr_txslot *s = slot(p, a->ack_psn);
	uint32_t rtt32;

	/* Only for a PSN we sent, still remember, and know has arrived. */
	if (age <= 0 || age > XR_TXPATH_WIN || s->psn != a->ack_psn ||
	    s->state == XR_TXS_FREE || s->state == XR_TXS_INFLIGHT ||
	    t_ack < s->tx_ns)
		goto refuse;
	rtt32 = (uint32_t)t_ack - a->ts_echo;
	/* The echoed stamp cannot predate our record of the transmission. */
	if (rtt32 > t_ack - s->tx_ns)
		goto refuse;
	res->rtt_ns = rtt32 ? rtt32 : 1;
	xr_rtt_sample(&p->rtt, res->rtt_ns, t_ack);
	return;
refuse:
	p->st.bad_ts++;
}

int xr_txpath_on_ack(struct xr_txpath *p, const struct xr_ack_view *a,
		     uint64_t now_ns, struct xr_ack_result *res)
{
	uint64_t t_ack = a->rx_ns ? a->rx_ns : now_ns;
	int top = sack_top(a->sack);
	uint32_t end, x;

	res_clear(res);

	/* Validate: nothing at or beyond next_psn can have arrived. */
	if (xr_seq_diff(a->cack, p->next_psn) > 0 ||
	    (top >= 0 && xr_seq_diff(a->cack + 1 + (uint32_t)top, p->next_psn) >= 0)) {
		p->st.bad_acks++;
		res->bad = true;
		return -EINVAL;
	}
	p->st.acks++;
	p->last_ack_ns = t_ack;
	if (a->flags & XR_AF_ECE) {
		res->ece = true;
		p->st.ece_acks++;
	}
	if (xr_seq_diff(a->cack, p->hi_cack) < 0) {
		res->stale = true;
		p->st.stale_acks++;
	} else {
		p->hi_cack = a->cack;
	}

	/* One past the highest PSN reported arrived. */
	end = top >= 0 ? a->cack + 2 + (uint32_t)top : a->cack;

	decay_floor(p, t_ack);
	late_scan(p, a, end, t_ack, res);

	/* Resolve the in-flight prefix up to end: arrived -> acked, the gaps
	 * below a PSN that arrived -> lost (the path is ordered). */
	if (xr_seq_diff(end, p->base_psn) > 0) {
		for (x = p->base_psn; x != end; x++) {
			struct xr_txslot *s = slot(p, x);

			if (s->psn != x || s->state != XR_TXS_INFLIGHT)
				continue; /* cannot happen: [base, next) in flight */
			if (arrived(a, x)) {
				push_acked(p, res, s, 0);
			} else {
				push_lost(res, s, XR_TXS_LOST);
				p->st.sack_lost++;
			}
		}
		p->base_psn = end;
	}
	if (res->nacked) {
		/* Forward progress: the path works, the RTO is trusted again. */
		p->backoff = 0;
		p->consec_timeouts = 0;
	}
	take_rtt_sample(p, a, t_ack, res);
	return (int)(res->nacked + res->nlost);
}

/* Declare every in-flight PSN lost, as EXPIRED (a late ACK may still
 * confirm it, see late_scan). */
static void expire_all(struct xr_txpath *p, struct xr_ack_result *res)
{
	uint32_t x;

	if (p->base_psn == p->next_psn)
		return;
	/* A new range replaces the old one: packets sent since the old one
	 * carried a psn_base that let the receiver skip it (see late_scan). */
	p->late_lo = p->base_psn;
	p->late_hi = p->next_psn;
	for (x = p->base_psn; x != p->next_psn; x++)
		push_lost(res, slot(p, x), XR_TXS_EXPIRED);
	p->base_psn = p->next_psn;
}

uint64_t xr_txpath_next_deadline(const struct xr_txpath *p)
{
	if (!xr_txpath_inflight(p))
		return UINT64_MAX;
	return p->ring[p->base_psn % XR_TXPATH_WIN].tx_ns + xr_txpath_rto(p);
}

int xr_txpath_on_timer(struct xr_txpath *p, uint64_t now_ns,
		       struct xr_ack_result *res)
{
	res_clear(res);
	res->consec_timeouts = p->consec_timeouts;
	if (now_ns < xr_txpath_next_deadline(p))
		return 0;
	expire_all(p, res);
	p->st.timeouts++;
	p->st.timeout_lost += res->nlost;
	p->consec_timeouts++;
	if (p->backoff < 32)
		p->backoff++;
	res->consec_timeouts = p->consec_timeouts;
	return (int)res->nlost;
}

int xr_txpath_abandon_all(struct xr_txpath *p, struct xr_ack_result *res)
{
	res_clear(res);
	res->consec_timeouts = p->consec_timeouts;
	expire_all(p, res);
	p->st.abandoned += res->nlost;
	return (int)res->nlost;
}
