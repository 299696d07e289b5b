/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The sending side of a queue pair: work requests cut into packets (CSNs)
 * as windows allow, transmission on the paths the congestion controller
 * picks, the retransmission queue, probes.
 */
#ifndef XR_ENGINE_SENDER_H
#define XR_ENGINE_SENDER_H

#include <stdbool.h>

#include "qp.h"

/* CSN csn must be sent again (lost, or refused for now). */
void xr_qp_queue_retx(struct xroce_qp *qp, uint32_t csn);
/* The peer acknowledged csn; every CSN before csn (from its CLOSE). */
void xr_qp_pkt_acked(struct xroce_qp *qp, uint32_t csn);
void xr_qp_acked_below(struct xroce_qp *qp, uint32_t csn);
/* Transmit what windows and pacing allow; returns packets queued. */
int xr_qp_transmit(struct xroce_qp *qp);
int xr_qp_send_probe(struct xroce_qp *qp, int pi, uint64_t now);
/* The tail-loss probe of path pi (xr_cc_tail_probe_at): a copy of its
 * newest packet whose CSN is still unacknowledged, on the same path.  0,
 * or -ENOSPC (no transmit room: not retried before the path's next ACK). */
int xr_qp_send_tail_probe(struct xroce_qp *qp, int pi, uint64_t now);
/* True if the QP has something it could send right now. */
bool xr_qp_has_tx_work(const struct xroce_qp *qp);
/* When the QP can send next: 0 = now, a time (pacing), or UINT64_MAX
 * (nothing to send, or windows full: an acknowledgement will wake us). */
uint64_t xr_qp_tx_ready(struct xroce_qp *qp, uint64_t now);

#endif /* XR_ENGINE_SENDER_H */
