/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Latency breakdowns, one job: stamp a step of a traced message into the
 * xr_trace ring (include/contract/abi.h) with the time and the CPU.  Only
 * connections that carry XR_CONN_F_TRACE (and descriptors the library
 * tagged) are stamped, so a program nobody traces pays a flag test per
 * packet.  The including program defines the xr_trace map before this.
 */
#ifndef XR_LIB_TRACE_H
#define XR_LIB_TRACE_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "contract/abi.h"
#include "contract/inline.h"

/* Global, so it is verified once rather than at each of its call sites. */
__noinline int xr_trace_put(__u32 conn, __u32 msg, __u32 csn, __u32 stage)
{
	__u32 k = XR_TRACE_CTL, slot;
	struct xr_trace_rec *ctl, *r;
	__u64 n;

	ctl = bpf_map_lookup_elem(&xr_trace, &k);
	if (!ctl)
		return 0;
	n = __sync_fetch_and_add(&ctl->ns, 1);
	slot = (__u32)n % XR_TRACE_SLOTS;
	r = bpf_map_lookup_elem(&xr_trace, &slot);
	if (!r)
		return 0;
	r->conn = conn;
	r->msg = msg;
	r->csn = csn;
	r->stage = (__u16)stage;
	r->cpu = (__u16)bpf_get_smp_processor_id();
	r->ns = bpf_ktime_get_ns();
	return 0;
}

#endif /* XR_LIB_TRACE_H */
