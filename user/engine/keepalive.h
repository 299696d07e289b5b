/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Keep-alive: an idle connection's peer is probed, and a connection whose
 * peer answers nothing for long fails, so a peer that vanished, or a
 * requester that connected and never spoke, does not hold a slot forever.
 */
#ifndef XR_ENGINE_KEEPALIVE_H
#define XR_ENGINE_KEEPALIVE_H

#include "qp.h"

/* Run the keep-alive of an RTS QP; returns its next deadline. */
uint64_t xr_qp_keepalive(struct xroce_qp *qp, uint64_t now);

#endif /* XR_ENGINE_KEEPALIVE_H */
