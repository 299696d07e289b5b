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

/* Room in ring evq for a record of connection conn_id of domain: 0, or
 * the drop reason.  reserve: bytes of the ring that must stay free
 * (full_reason when they would not). */
XR_INLINE __u32 xr_evq_room(void *evq, __u32 domain, __u32 conn_id,
			    __u32 reserve, __u32 full_reason)
{
	struct xr_domain *d;
	struct xr_evb *b;
	__u32 share;

	if (bpf_ringbuf_query(evq, BPF_RB_AVAIL_DATA) > XR_EVQ_BYTES - reserve)
		return full_reason;
	b = bpf_map_lookup_elem(&xr_evb, &conn_id);
	if (!b)
		return 0; /* an id the table does not cover: the ring decides */
	d = bpf_map_lookup_elem(&xr_domains, &domain);
	share = d && d->evq_share ? d->evq_share : XR_EVQ_MIN_SHARE;
	/* Signed: a connection set up again may have its counters reset
	 * while records of its predecessor still wait. */
	if ((__s32)(b->produced - b->consumed) >= (__s32)share)
		return XR_STAT_DROP_EVQ_SHARE;
	return 0;
}

/* How a record is committed, given the owner's quiet flag q (read with a
 * full barrier after the reservation) and avail, the bytes the reader has
 * not consumed, this record's included.
 *   - Nobody of the owner sleeps on the ring (q != 0): no wake-up; whoever
 *     calls in next finds the record.
 *   - hold: the record asks nothing of anyone now (a plain WRITE's RECV on
 *     a connection that does not report WRITEs: the library only keeps its
 *     stream order with it): no wake-up either while the ring is under an
 *     eighth full and the connection under half its share, so that neither
 *     fills before the owner's next look.  A bulk WRITE receiver woke once
 *     per message before, and every wake-up was an inter-processor
 *     interrupt on the sender's CPU (15.5 against 10.5 Gbit/s at MTU 9000
 *     without them).
 *   - Otherwise wake, and force it when records wait before this one: the
 *     kernel only wakes for a record the reader had caught up to, and a
 *     held record would leave the sleeper asleep until its timer. */
XR_INLINE __u64 xr_evq_commit_flags(void *evq, const struct xr_evb *b,
				    __u32 q, __u32 domain, int hold)
{
	__u64 avail = bpf_ringbuf_query(evq, BPF_RB_AVAIL_DATA);
	struct xr_domain *d;
	__u32 share;

	if (q)
		return BPF_RB_NO_WAKEUP;
	if (hold && avail < XR_EVQ_BYTES / 8) {
		d = bpf_map_lookup_elem(&xr_domains, &domain);
		share = d && d->evq_share ? d->evq_share : XR_EVQ_MIN_SHARE;
		if ((__s32)(b->produced - b->consumed) < (__s32)(share / 2))
			return BPF_RB_NO_WAKEUP;
	}
	return avail > XR_EVQ_REC_BYTES ? BPF_RB_FORCE_WAKEUP : 0;
}

/* Put record e of a connection of domain into ring evq and count it
 * against the connection; 0, or -1 if the ring had no room.  hold: the
 * record needs nobody woken (xr_evq_commit_flags).  The fetch-and-add
 * orders the reservation, which moved the producer position the library
 * checks before it sleeps, before the read of the flag it cleared first
 * (docs/PROTOCOL.md 15). */
XR_INLINE int xr_evq_put_as(void *evq, struct xr_evt *e, __u32 domain, int hold)
{
	__u32 conn = e->conn;
	struct xr_evb *b = bpf_map_lookup_elem(&xr_evb, &conn);
	struct xr_evt *r;
	__u64 flags = 0;

	r = bpf_ringbuf_reserve(evq, sizeof(*r), 0);
	if (!r)
		return -1;
	__builtin_memcpy(r, e, sizeof(*r));
	if (b) {
		flags = xr_evq_commit_flags(evq, b, __sync_fetch_and_add(&b->quiet, 0),
					    domain, hold);
		__sync_fetch_and_add(&b->produced, 1);
	}
	bpf_ringbuf_submit(r, flags);
	return 0;
}

/* The same for a record every sleeper must see at once. */
XR_INLINE int xr_evq_put(void *evq, struct xr_evt *e)
{
	return xr_evq_put_as(evq, e, 0, 0);
}

#endif /* XR_LIB_BUDGET_H */
