/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What comes back to a sender (ACK, NAK and probe-reply records from XDP)
 * and what happens when nothing comes back (timers): loss detection,
 * congestion control, path state.
 */
#ifndef XR_ENGINE_ACKS_H
#define XR_ENGINE_ACKS_H

#include "qp.h"

void xr_qp_on_ack(struct xroce_qp *qp, const struct xr_evt *e);
void xr_qp_on_probe_reply(struct xroce_qp *qp, const struct xr_evt *e);
/* Run expired timers; returns the next deadline (UINT64_MAX if none). */
uint64_t xr_qp_timers(struct xroce_qp *qp);

#endif /* XR_ENGINE_ACKS_H */
