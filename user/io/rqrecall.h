/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Taking back a posted receive, one job: the BPF_PROG_TYPE_SYSCALL program
 * of bpf/rqrecall.bpf.c, loaded against the attached object's xr_rq map and
 * test-run to swap a receive's state OPEN -> RECALLED atomically against
 * XDP's claim by the first packet of a SEND (include/contract/abi.h).  No
 * policy: the caller decides which receive.
 */
#ifndef XR_IO_RQRECALL_H
#define XR_IO_RQRECALL_H

#include <stddef.h>
#include <stdint.h>

#include "contract/abi.h"

struct rqrecall;

struct xr_rqrecall {
	struct rqrecall *skel;
	int prog_fd;
};

/* Load the program against map rq_fd (xr_rq).  On failure a negative
 * errno and a reason in why. */
int xr_rqrecall_open(struct xr_rqrecall **out, int rq_fd, char *why,
		     size_t whylen);
void xr_rqrecall_close(struct xr_rqrecall *r);

/* Take back receive msn posted under k unless a packet claimed it: the
 * state it had (XR_RQ_OPEN: it is recalled now, XDP will refuse SENDs
 * for it), XR_RQ_GONE, or a negative errno. */
int xr_rqrecall_run(struct xr_rqrecall *r, const struct xr_rq_key *k,
		    uint32_t msn);

#endif /* XR_IO_RQRECALL_H */
