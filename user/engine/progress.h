/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The progress engine: what a NIC would do in the background, done in
 * rounds, either when the application calls in or by the device's own
 * progress thread (XROCE_DEVICE_PROGRESS_THREAD).
 */
#ifndef XR_ENGINE_PROGRESS_H
#define XR_ENGINE_PROGRESS_H

#include <stdint.h>

#include "device.h"

/* One round.  Returns 0 if there is more to do right now (transmission
 * or an expired timer), else the time of the next timer (UINT64_MAX if
 * none), so a caller may sleep until then. */
uint64_t xr_progress(struct xroce_device *dev);

/* The progress thread: sleeps on the event ring, the control socket and
 * the next timer, runs a round each time one fires. */
int xr_progress_thread_start(struct xroce_device *dev);
/* Called with dev->lock held; returns with it held, the thread gone. */
void xr_progress_thread_stop(struct xroce_device *dev);

/* The application polled a CQ: see stand_by(). */
void xr_progress_note_poll(struct xroce_device *dev);
/* A post ran a round (xr_progress): the application is at work, as a
 * poller is, so its posts keep the thread standing by too.  Without this a
 * sender posting a burst (ofi_rxm cuts a 1 MiB message into 64 sends, each
 * with its round) goes over a millisecond without a poll, and the thread
 * wakes for every record meanwhile, fighting it for the lock. */
static inline void xr_progress_note_post(struct xroce_device *dev)
{
	if (dev->threaded)
		__atomic_store_n(&dev->poll_ns, dev->seen_ns, __ATOMIC_RELAXED);
}

/* The application is about to sleep (a blocking wait, an armed CQ): the
 * thread must not stand by for it any more.  Called with dev->lock held. */
void xr_progress_no_standby(struct xroce_device *dev);

/* Sleep on the device's descriptors until an event or until_ns, without
 * the lock (retaken before returning). */
void xr_progress_sleep(struct xroce_device *dev, uint64_t until_ns);

#endif /* XR_ENGINE_PROGRESS_H */
