/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A connection's paths: next hops, payload size, CC, entropies, windows. */
#ifndef XR_ENGINE_PATHS_H
#define XR_ENGINE_PATHS_H

#include "qp.h"

/* Once the peer's addresses are in qp: everything a path needs to send. */
int xr_qp_init_paths(struct xroce_qp *qp);
/* Packet size for IP MTU mtu (qp->mtu, qp->seg_max), on the planes the
 * peer has; -EINVAL if too small. */
int xr_qp_set_mtu(struct xroce_qp *qp, uint32_t mtu);
/* A random entropy (UDP source port) no other path of qp uses. */
uint16_t xr_qp_pick_sport(const struct xroce_qp *qp, uint32_t self);

#endif /* XR_ENGINE_PATHS_H */
