/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Counters, one job: bump the per-CPU counter of an event (enum xr_stat in
 * abi.h), and of the verdicts that give up on a frame: every drop and pass
 * is counted under its reason.  The including program defines the xr_stats
 * map before this.
 */
#ifndef XR_LIB_STATS_H
#define XR_LIB_STATS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "contract/abi.h"
#include "contract/inline.h"

XR_INLINE void xr_count_n(__u32 idx, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&xr_stats, &idx);

	if (v)
		*v += n; /* per-CPU: no atomics needed */
}

XR_INLINE void xr_count(__u32 idx)
{
	xr_count_n(idx, 1);
}

/* Drop with a reason. */
XR_INLINE int xr_drop(__u32 reason)
{
	xr_count(reason);
	return XDP_DROP;
}

/* Not ours after all: to the kernel stack, untouched. */
XR_INLINE int xr_pass(void)
{
	xr_count(XR_STAT_PASS);
	return XDP_PASS;
}

#endif /* XR_LIB_STATS_H */
