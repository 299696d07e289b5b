/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Event records, one job: hand a record to a domain's event ring.  Without
 * a wake-up: a ring buffer's wake-up is an irq_work, a self-IPI on every
 * record the consumer had caught up with, and a library that polls (or is
 * running a progress round, as it is while its own transmission's ACKs
 * come back inside its system call) needs none.  A library about to sleep
 * on the ring sets its `want` in xr_wake (include/contract/abi.h);
 * the first record after that takes the flag and is followed by a small
 * XR_EVT_WAKE record with a forced wake-up.  The order (record, then the
 * flag) pairs with the library's (flag, then a look at the ring), so a
 * record is never left without a wake-up while the library sleeps.  The
 * including program defines xr_wake before this.
 */
#ifndef XR_LIB_EVQ_H
#define XR_LIB_EVQ_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "contract/abi.h"
#include "contract/inline.h"

/* Wake the domain's library if it asked to be woken. */
XR_INLINE void xr_evq_wake(void *evq, __u32 domain)
{
	__u64 nudge = XR_EVT_WAKE;
	struct xr_wake *w;
	__u32 zero = 0;
	void *inner;

	inner = bpf_map_lookup_elem(&xr_wake, &domain);
	if (!inner)
		return;
	w = bpf_map_lookup_elem(inner, &zero);
	if (!w || !w->want)
		return;
	if (__sync_lock_test_and_set(&w->want, 0))
		bpf_ringbuf_output(evq, &nudge, sizeof(nudge), BPF_RB_FORCE_WAKEUP);
}

/* Record rec (size bytes) for domain's library: 0, or the ring's error. */
XR_INLINE long xr_evq_put(void *evq, __u32 domain, void *rec, __u32 size)
{
	long rc = bpf_ringbuf_output(evq, rec, size, BPF_RB_NO_WAKEUP);

	if (!rc)
		xr_evq_wake(evq, domain);
	return rc;
}

#endif /* XR_LIB_EVQ_H */
