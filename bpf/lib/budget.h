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

/* Put record e into ring evq and count it against its connection; 0, or
 * -1 if the ring had no room.  No wake-up while the owner says it is not
 * asleep on the ring (xr_evb.quiet): the fetch-and-add orders the
 * reservation, which moved the producer position the library checks
 * before it sleeps, before the read of the flag it cleared first. */
XR_INLINE int xr_evq_put(void *evq, struct xr_evt *e)
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
		if (__sync_fetch_and_add(&b->quiet, 0))
			flags = BPF_RB_NO_WAKEUP;
		__sync_fetch_and_add(&b->produced, 1);
	}
	bpf_ringbuf_submit(r, flags);
	return 0;
}

#endif /* XR_LIB_BUDGET_H */
