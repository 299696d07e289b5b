/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Planes: interfaces, their transmit engines and transmit frames. */
#ifndef XR_ENGINE_PLANE_H
#define XR_ENGINE_PLANE_H

#include "device.h"

/* Plane i of dev on interface ifname: link, addresses, the maps of the
 * xroce program attached there (into *maps). */
int xr_plane_open(struct xroce_device *dev, int i, const char *ifname,
		  struct xr_maps *maps);
/* Its transmit engine and frame pool (the domain's memory must exist). */
int xr_plane_start(struct xroce_device *dev, int i, enum xroce_tx_engine eng);
void xr_plane_stop(struct xr_plane *pl);

int xr_plane_frame_get(struct xr_plane *pl, uint64_t *addr);
void xr_plane_frame_put(struct xr_plane *pl, uint64_t addr);
/* Recycle the frames the AF_XDP engine has sent. */
void xr_plane_reap(struct xr_plane *pl);
/* Transmit slots free on the plane's engine (descriptors or ring slots). */
uint32_t xr_plane_tx_room(const struct xr_plane *pl);
/* Send what was queued: AF_XDP kick (-EAGAIN: busy, call again), or the
 * test run of the queued descriptors. */
int xr_plane_kick(struct xr_plane *pl);

#endif /* XR_ENGINE_PLANE_H */
