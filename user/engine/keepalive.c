// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Keep-alive of idle connections.  Anything from the peer (an event of
 * this QP, or data its XDP program saw arrive) counts as hearing from it.
 * After `idle` without a word the peer is probed (its XDP program answers
 * probes without waking its process, as long as the process lives); after
 * twice that, and only once XR_KA_FAIL_PROBES probes went out unanswered,
 * the last of them XR_KA_REPLY_NS ago at least (or XR_KA_MAX_TRIES rounds
 * could not send one), the connection fails with a retry error.  Time
 * alone never convicts the peer: our own rounds can be late (a round that
 * waited for a neighbour's ARP answer, a stopped or starved process), and
 * a peer we did not ask is not silent.  While work is outstanding the
 * peer-silence timeout of the send queue applies instead.
 */
#include <stdio.h>
#include <bpf/bpf.h>

#include "device.h"
#include "keepalive.h"
#include "qp_state.h"
#include "sender.h"

#define XR_KA_MIN_IDLE_NS 1000000000ull
#define XR_KA_FAIL_PROBES 3
#define XR_KA_REPLY_NS 100000000ull /* an answer's time, on a loaded host */
/* Probes that could not go out (no transmit room) for this many tries in
 * a row fail the QP too: an idle QP must not stay up on a path that can
 * send nothing at all. */
#define XR_KA_MAX_TRIES 12

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
	uint64_t idle = idle_ns(qp), rx, dl;
	bool overdue; /* 2 x idle without a word: probes decide now */
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
	if (qp->ka_since_ns != qp->last_heard_ns) { /* heard since: count anew */
		qp->ka_since_ns = qp->last_heard_ns;
		qp->ka_sent = qp->ka_tries = 0;
	}
	overdue = now - qp->last_heard_ns >= 2 * idle;
	if (overdue && qp->ka_tries >= XR_KA_MAX_TRIES &&
	    qp->ka_sent < XR_KA_FAIL_PROBES) {
		snprintf(why, sizeof(why), "no keep-alive probe could be sent in "
			 "%llu ms (%u tries)",
			 (unsigned long long)((now - qp->last_heard_ns) / 1000000ull),
			 qp->ka_tries);
		xr_qp_fail(qp, XROCE_WC_RETRY_EXC_ERR, why);
		return UINT64_MAX;
	}
	if (overdue && qp->ka_sent >= XR_KA_FAIL_PROBES &&
	    now - qp->ka_last_sent_ns >= XR_KA_REPLY_NS) {
		snprintf(why, sizeof(why), "the peer answered none of %u keep-alive "
			 "probes in %llu ms", qp->ka_sent,
			 (unsigned long long)((now - qp->last_heard_ns) / 1000000ull));
		xr_qp_fail(qp, XROCE_WC_RETRY_EXC_ERR, why);
		return UINT64_MAX;
	}
	if (now >= qp->ka_next_ns) {
		qp->ka_tries++;
		if (!xr_qp_send_probe(qp, (int)(qp->ka_probes++ % qp->npaths), now)) {
			qp->ka_sent++;
			qp->ka_last_sent_ns = now;
		}
		qp->ka_next_ns = now + idle / 4;
		/* Late already (rounds were held up): the probes still owed
		 * go at the pace an answer needs, not a quarter idle apart. */
		if (overdue)
			qp->ka_next_ns = now + XR_KA_REPLY_NS;
	}
	/* Overdue: the next probe, or the last one's answer. */
	dl = !overdue ? qp->last_heard_ns + 2 * idle :
	     qp->ka_sent >= XR_KA_FAIL_PROBES ? qp->ka_last_sent_ns + XR_KA_REPLY_NS :
						qp->ka_next_ns;
	return qp->ka_next_ns < dl ? qp->ka_next_ns : dl;
}
