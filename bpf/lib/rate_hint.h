/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Rate hints, one job: count the connections actively sending to this
 * receiver and tell each its fair share of the configured inbound capacity
 * (docs/PROTOCOL.md 13.2), carried in every ACK, NAK and probe reply.  Time
 * is cut into windows; a connection counts once per window it sends in.
 * The including program defines the xr_act map before this.
 */
#ifndef XR_LIB_RATE_HINT_H
#define XR_LIB_RATE_HINT_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "contract/abi.h"
#include "contract/inline.h"

XR_INLINE __u64 xr_act_window(const struct xr_cfg *cfg)
{
	return cfg->active_window_us ? (__u64)cfg->active_window_us * 1000 :
				       XR_ACTIVE_WINDOW_NS;
}

/* Count a connection as an active sender of window epoch (called once per
 * connection and window).  The first packet of a new window resets that
 * window's counter; a window more than one old is forgotten too. */
XR_INLINE void xr_act_count(__u64 epoch)
{
	__u32 zero = 0;
	struct xr_act *a = bpf_map_lookup_elem(&xr_act, &zero);
	__u64 old;

	if (!a)
		return;
	old = a->epoch;
	if (old != epoch && __sync_val_compare_and_swap(&a->epoch, old, epoch) == old) {
		a->cnt[epoch & 1] = 0;
		if (epoch != old + 1)
			a->cnt[(epoch + 1) & 1] = 0;
	}
	__sync_fetch_and_add(&a->cnt[epoch & 1], 1);
}

/* The receiver's fair share for each active sender, Mbit/s (0 = none). */
XR_INLINE __u32 xr_rate_hint(const struct xr_cfg *cfg, __u64 now)
{
	__u32 zero = 0, n, prev;
	struct xr_act *a;
	__u64 epoch;

	if (!cfg->rate_capacity_mbps)
		return 0;
	a = bpf_map_lookup_elem(&xr_act, &zero);
	if (!a)
		return 0;
	epoch = now / xr_act_window(cfg);
	if (a->epoch != epoch && a->epoch + 1 != epoch)
		return cfg->rate_capacity_mbps; /* nobody active lately */
	n = a->cnt[a->epoch & 1];
	prev = a->epoch == epoch ? a->cnt[(epoch + 1) & 1] : 0;
	if (prev > n)
		n = prev; /* the current window may not have heard everyone yet */
	return cfg->rate_capacity_mbps / (n ? n : 1);
}

#endif /* XR_LIB_RATE_HINT_H */
