/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Wake-ups of the event ring: XDP wakes the device only while one of its
 * threads sleeps on the ring (evq_wake.c).  Called with dev->lock held.
 */
#ifndef XR_ENGINE_EVQ_WAKE_H
#define XR_ENGINE_EVQ_WAKE_H

#include <stdbool.h>
#include <stdint.h>

#include "device.h"

/* Map the ring's positions (dev->evq_fd); -1 if it cannot, and then every
 * record keeps waking, as a ring without this does. */
int xr_evq_wake_map(struct xroce_device *dev);
void xr_evq_wake_unmap(struct xroce_device *dev);
/* A connection set up under conn_id: quiet as the device is now. */
void xr_evq_wake_conn(struct xroce_device *dev, uint32_t conn_id);
/* A connection given up: its entry back to "wake", as nobody set it, for
 * whoever claims the id next. */
void xr_evq_wake_release(struct xroce_device *dev, uint32_t conn_id);
/* A thread is about to sleep on the ring: true if it may; false if
 * records already wait (then it must not, and must not call _end). */
bool xr_evq_wake_sleep_begin(struct xroce_device *dev);
void xr_evq_wake_sleep_end(struct xroce_device *dev);
/* The application took the device's descriptor: wake on every record
 * from now on. */
void xr_evq_wake_always(struct xroce_device *dev);

#endif /* XR_ENGINE_EVQ_WAKE_H */
