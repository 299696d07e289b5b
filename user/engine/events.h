/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The device's event ring: records from XDP, dispatched to their QPs. */
#ifndef XR_ENGINE_EVENTS_H
#define XR_ENGINE_EVENTS_H

#include "device.h"

/* Create the ring-buffer consumer (dev->rb) over dev->evq_fd. */
int xr_events_attach(struct xroce_device *dev);
/* Handle every record waiting in the ring (sets dev->now_ns first). */
void xr_events_drain(struct xroce_device *dev);

#endif /* XR_ENGINE_EVENTS_H */
