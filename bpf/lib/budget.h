/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Fair shares of an event ring, one job: decide whether a connection may
 * put another record (of any kind) into its domain's ring, and count the
 * records it put there.  A connection may have at most its domain's
 * evq_share records waiting (struct xr_domain; the library counts what it
 * consumed in xr_evb), and the ring keeps a reserve, so a peer that floods
 * one connection with ACKs or tiny messages fills its own share, not the
 * ring every other connection of the process needs.  The including
 * program defines the xr_domains and xr_evb maps before this.
 */
#ifndef XR_LIB_BUDGET_H
#define XR_LIB_BUDGET_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "contract/abi.h"
#include "contract/inline.h"

/* How many records one connection of domain may have waiting. */
XR_INLINE __u32 xr_evq_share(__u32 domain)
{
	struct xr_domain *d = bpf_map_lookup_elem(&xr_domains, &domain);

	return d && d->evq_share ? d->evq_share : XR_EVQ_MIN_SHARE;
}

/* Room in ring evq for a record of connection conn_id of domain: 0, or
 * the drop reason.  reserve: bytes of the ring that must stay free
 * (full_reason when they would not). */
XR_INLINE __u32 xr_evq_room(void *evq, __u32 domain, __u32 conn_id,
			    __u32 reserve, __u32 full_reason)
{
	struct xr_evb *b;

	if (bpf_ringbuf_query(evq, BPF_RB_AVAIL_DATA) > XR_EVQ_BYTES - reserve)
		return full_reason;
	b = bpf_map_lookup_elem(&xr_evb, &conn_id);
	if (!b)
		return 0; /* an id the table does not cover: the ring decides */
	/* Signed: a connection set up again may have its counters reset
	 * while records of its predecessor still wait. */
	if ((__s32)(b->produced - b->consumed) >= (__s32)xr_evq_share(domain))
		return XR_STAT_DROP_EVQ_SHARE;
	return 0;
}

/* Move held->end forward to pos, the producer position of ring evq after
 * a held record: never back (two holds on two CPUs may finish in either
 * order), except from a value past the ring's producer, which a ring
 * gone under the same domain id left.  A few tries; each failure means
 * another CPU just moved it. */
XR_INLINE void xr_evq_held_to(void *evq, struct xr_evq_held *held, __u64 pos)
{
	int i;

#pragma unroll
	for (i = 0; i < 4; i++) {
		__u64 old = held->end;

		if (old >= pos && old <= bpf_ringbuf_query(evq, BPF_RB_PROD_POS))
			return;
		if (__sync_val_compare_and_swap(&held->end, old, pos) == old)
			return;
	}
}

/* Records may wait before this one that were held (and so woke nobody):
 * held is the domain's record of them, NULL if it has none (it never held
 * one: a record is only held once its domain has an entry). */
XR_INLINE int xr_evq_after_held(void *evq, struct xr_evq_held *held, __u64 avail)
{
	__u64 cons, end;

	if (avail <= XR_EVQ_REC_BYTES || !held)
		return 0; /* this record is the only one unconsumed, or none held */
	if (__sync_fetch_and_add(&held->busy, 0))
		return 1;
	cons = bpf_ringbuf_query(evq, BPF_RB_CONS_POS);
	end = held->end;
	/* An end past the producer is another ring's (xr_evq_held_to). */
	return cons < end && end <= bpf_ringbuf_query(evq, BPF_RB_PROD_POS);
}

/* How a record is committed, given the owner's quiet flag q (read with a
 * full barrier after the reservation).
 *   - Nobody of the owner sleeps on the ring (q != 0): no wake-up; whoever
 *     calls in next finds the record.
 *   - hold (held: the domain's record of holds): the record asks nothing
 *     of anyone now (a plain WRITE's RECV on a connection that does not
 *     report WRITEs: the library only keeps its stream order with it).  No
 *     wake-up either while the ring is under an eighth full and the
 *     connection under half its share, so that neither fills before the
 *     owner's next look; the record's end is noted in held.  A bulk WRITE
 *     receiver woke once per message before, each wake-up an
 *     inter-processor interrupt on the sender's CPU.
 *   - Otherwise wake.  The kernel wakes only for a record the reader had
 *     caught up to, so one behind held records forces the wake-up; one
 *     behind records that were not held does not (the reader is awake, or
 *     their own commit woke it: forcing then cost an interrupt per ACK
 *     whenever a polling application kept a sleeping progress thread). */
XR_INLINE __u64 xr_evq_commit_flags(void *evq, const struct xr_evb *b,
				    __u32 q, __u32 domain,
				    struct xr_evq_held *held, int hold)
{
	__u64 avail;

	if (q)
		return BPF_RB_NO_WAKEUP;
	avail = bpf_ringbuf_query(evq, BPF_RB_AVAIL_DATA);
	if (hold && held && avail < XR_EVQ_BYTES / 8) {
		if ((__s32)(b->produced - b->consumed) <
		    (__s32)(xr_evq_share(domain) / 2)) {
			xr_evq_held_to(evq, held, bpf_ringbuf_query(evq, BPF_RB_PROD_POS));
			return BPF_RB_NO_WAKEUP;
		}
	}
	if (!held && avail > XR_EVQ_REC_BYTES)
		held = bpf_map_lookup_elem(&xr_evq_held, &domain);
	return xr_evq_after_held(evq, held, avail) ? BPF_RB_FORCE_WAKEUP : 0;
}

/* The domain's record of held records, created if it has none. */
XR_INLINE struct xr_evq_held *xr_evq_held_of(__u32 domain)
{
	struct xr_evq_held *held = bpf_map_lookup_elem(&xr_evq_held, &domain);
	struct xr_evq_held zero = {};

	if (held)
		return held;
	bpf_map_update_elem(&xr_evq_held, &domain, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&xr_evq_held, &domain);
}

/* Put record e of a connection of domain into ring evq and count it
 * against the connection; 0, or -1 if the ring had no room.  hold: the
 * record needs nobody woken (xr_evq_commit_flags).  The fetch-and-add on
 * quiet orders the reservation, which moved the producer position the
 * library checks before it sleeps, before the read of the flag it cleared
 * first (docs/PROTOCOL.md 15).  A hold counts itself in held->busy from
 * before its reservation until its end is noted, so that a record behind
 * it that looks meanwhile forces its wake-up. */
XR_INLINE int xr_evq_put_as(void *evq, struct xr_evt *e, __u32 domain, int hold)
{
	__u32 conn = e->conn;
	struct xr_evb *b = bpf_map_lookup_elem(&xr_evb, &conn);
	struct xr_evq_held *held = NULL;
	struct xr_evt *r;
	__u64 flags = 0;

	/* Only a sleeping owner's records are held: a polling one's wake
	 * nobody anyway (read again below, with the barrier). */
	hold = hold && b && !b->quiet;
	if (hold) {
		held = xr_evq_held_of(domain);
		if (held)
			__sync_fetch_and_add(&held->busy, 1);
	}
	r = bpf_ringbuf_reserve(evq, sizeof(*r), 0);
	if (r) {
		__builtin_memcpy(r, e, sizeof(*r));
		if (b) {
			flags = xr_evq_commit_flags(evq, b,
						    __sync_fetch_and_add(&b->quiet, 0),
						    domain, held, hold);
			__sync_fetch_and_add(&b->produced, 1);
		}
		bpf_ringbuf_submit(r, flags);
	}
	if (hold && held)
		__sync_fetch_and_add(&held->busy, -1);
	return r ? 0 : -1;
}

/* The same for a record every sleeper must see at once. */
XR_INLINE int xr_evq_put(void *evq, struct xr_evt *e, __u32 domain)
{
	return xr_evq_put_as(evq, e, domain, 0);
}

#endif /* XR_LIB_BUDGET_H */
