/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Counters, one job: bump the per-CPU counter of an event (enum xr_stat in
 * abi.h).  The including program defines the xr_stats map before this.
 */
#ifndef XR_LIB_STATS_H
#define XR_LIB_STATS_H

#include <bpf/bpf_helpers.h>
#include "contract/abi.h"

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

#endif /* XR_LIB_STATS_H */
