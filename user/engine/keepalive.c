// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Keep-alive of idle connections.  Anything from the peer (an event of
 * this QP, or data its XDP program saw arrive) counts as hearing from it.
 * After `idle` without a word the peer is probed (its XDP program answers
 * probes without waking its process, as long as the process lives); after
 * twice that the connection fails with a retry error.  While work is
 * outstanding the peer-silence timeout of the send queue applies instead.
 */
#include <stdio.h>
#include <bpf/bpf.h>

#include "device.h"
#include "keepalive.h"
#include "qp_state.h"
#include "sender.h"

#define XR_KA_MIN_IDLE_NS 1000000000ull

static uint64_t idle_ns(const struct xroce_qp *qp)
{
	uint64_t t = (uint64_t)qp->timeout_ms * 1000000ull;

	return t > XR_KA_MIN_IDLE_NS ? t : XR_KA_MIN_IDLE_NS;
}

static bool busy(const struct xroce_qp *qp)
{
	return qp->csn_una != qp->csn_next || qp->sq_head != qp->sq_tail ||
	       qp->rdq_head != qp->rdq_tail;
}

/* The last time data from the peer reached XDP (read only when needed). */
static uint64_t last_rx(const struct xroce_qp *qp)
{
	struct xr_rx_state rx;

	if (bpf_map_lookup_elem(qp->dev->maps.rx, &qp->conn_id, &rx))
		return 0;
	return rx.last_rx_ns;
}

uint64_t xr_qp_keepalive(struct xroce_qp *qp, uint64_t now)
{
	uint64_t idle = idle_ns(qp), rx;
	char why[96];

	if (busy(qp) || qp->last_progress_ns > qp->last_heard_ns)
		qp->last_heard_ns = busy(qp) ? now : qp->last_progress_ns;
	/* Noted during this round (a connection just made by
	 * xroce_qp_bind's exchange, whose clock is newer than the round's
	 * `now`): not in the future, or the difference below wraps. */
	if (qp->last_heard_ns > now)
		qp->last_heard_ns = now;
	if (now - qp->last_heard_ns < idle)
		return qp->last_heard_ns + idle;
	/* (XDP's clock may be ahead of this round's `now`.) */
	rx = last_rx(qp);
	if (rx > qp->last_heard_ns)
		qp->last_heard_ns = rx < now ? rx : now;
	if (now - qp->last_heard_ns < idle)
		return qp->last_heard_ns + idle;
	if (now - qp->last_heard_ns >= 2 * idle) {
		snprintf(why, sizeof(why), "the peer answered no keep-alive probe "
			 "for %llu ms", (unsigned long long)(idle / 1000000ull));
		xr_qp_fail(qp, XROCE_WC_RETRY_EXC_ERR, why);
		return UINT64_MAX;
	}
	if (now >= qp->ka_next_ns) {
		xr_qp_send_probe(qp, (int)(qp->ka_probes++ % qp->npaths), now);
		qp->ka_next_ns = now + idle / 4;
	}
	return qp->ka_next_ns < qp->last_heard_ns + 2 * idle ?
	       qp->ka_next_ns : qp->last_heard_ns + 2 * idle;
}
