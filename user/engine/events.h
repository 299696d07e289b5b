/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The device's event ring: records from XDP, dispatched to their QPs. */
#ifndef XR_ENGINE_EVENTS_H
#define XR_ENGINE_EVENTS_H

#include "device.h"

/* Create the ring-buffer consumer (dev->rb) over dev->evq_fd. */
int xr_events_attach(struct xroce_device *dev);
/* Handle every record waiting in the ring (sets dev->now_ns first). */
void xr_events_drain(struct xroce_device *dev);
/* About to sleep on the ring: ask XDP for a wake-up (records come without
 * one otherwise: bpf/lib/evq.h).  False if records are waiting already:
 * then do not sleep (the request is withdrawn). */
bool xr_events_arm(struct xroce_device *dev);
/* Awake again: records need no wake-up. */
void xr_events_disarm(struct xroce_device *dev);
/* An application polls the device's descriptor: from now on, every round
 * asks XDP for a wake-up after the next record. */
void xr_events_watch(struct xroce_device *dev);
void xr_events_detach(struct xroce_device *dev);

#endif /* XR_ENGINE_EVENTS_H */
