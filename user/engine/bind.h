/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * xroce_qp_bind's exchange (bind.c explains the protocol).  The event ring
 * only drops a peer's half into the QP's inbox (bindbox.c, below the
 * control plane); progress rounds run bind.c, which takes it.
 */
#ifndef XR_ENGINE_BIND_H
#define XR_ENGINE_BIND_H

#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>

#include "contract/wire.h"
#include "qp.h"

struct xr_bind {
	bool bound;                  /* the application called xroce_qp_bind */
	uint8_t addr[16];            /* ... with this peer address */
	uint32_t qp_num;             /* ... and QP number */
	uint32_t rnr_timer_us;       /* asked of the peer */
	uint64_t nonce;              /* ours */
	bool have_peer;              /* the peer's half is programmed */
	bool peer_has_ours;          /* it said HAVE_YOURS */
	struct xr_ctrl_msg peer;     /* that half */
	/* The latest half received and not taken yet (before the bind: kept
	 * until then), its source, and the flags of every half since. */
	bool have_in;
	struct xr_ctrl_msg in;
	struct sockaddr_in6 in_from;
	uint32_t in_flags;
	uint64_t resend_ns;          /* next resend of our half */
	uint64_t backoff_ns;
	/* Source ports of our halves, current first (0: the control
	 * socket): each timed resend goes out of a new one (cm.h). */
	uint16_t src[2];
	uint32_t answers;            /* halves of the peer's we answered */
};

/* bindbox.c: a BIND record from the event ring for qp (checked, kept). */
void xr_bind_inbox(struct xroce_qp *qp, const void *rec, size_t len);
/* bind.c: take what the inbox holds, resend our half when due; returns
 * the next deadline (UINT64_MAX if none).  Run by every progress round
 * for QPs with a bind. */
uint64_t xr_bind_run(struct xroce_qp *qp);

#endif /* XR_ENGINE_BIND_H */
