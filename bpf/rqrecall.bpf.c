// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Take back a posted receive that no packet has claimed: the library's half
 * of the claim in include/contract/abi.h (xr_rq).  XDP's first packet of a
 * SEND swaps the receive's state OPEN -> TAKEN; this program swaps it
 * OPEN -> RECALLED, so exactly one of the two succeeds.  User space cannot
 * compare-and-swap a hash map value itself (an update replaces the whole
 * entry), so the library test-runs this program (BPF_PROG_TYPE_SYSCALL,
 * user/io/rqrecall.c) with the xroce object's xr_rq map in place of the one
 * declared here.  Shared receive queues use it to move a receive from a
 * QP that does not need it to one whose SEND was refused.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "contract/abi.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Replaced by the attached program's map before loading (reuse_fd). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XR_DEFAULT_MAX_RQ);
	__type(key, struct xr_rq_key);
	__type(value, struct xr_rq_ent);
} xr_rq SEC(".maps");

/* The return value: the state the receive was in (XR_RQ_OPEN: recalled
 * now), or XR_RQ_GONE. */
SEC("syscall")
int xr_rq_recall(struct xr_rq_recall *a)
{
	struct xr_rq_key k = a->key;
	struct xr_rq_ent *r = bpf_map_lookup_elem(&xr_rq, &k);

	if (!r || r->msn != a->msn)
		return XR_RQ_GONE;
	return __sync_val_compare_and_swap(&r->state, XR_RQ_OPEN,
					   XR_RQ_RECALLED);
}
