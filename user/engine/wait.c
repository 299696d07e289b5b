// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Polling and waiting on a completion queue.  Both run a progress round
 * when the CQ has too little, since that is where the library transmits,
 * retransmits and turns XDP's records into completions.  Waiting sleeps on
 * the device's descriptors and the next timer; on a device with a progress
 * thread it sleeps on the CQ itself, which that thread fills.
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "cq.h"
#include "device.h"
#include "engine.h"
#include "progress.h"

int xr_cq_poll(struct xroce_cq *cq, int n, struct xroce_wc *wc)
{
	int k = xr_cq_take(cq, n, wc);

	if (k < n) {
		xr_progress(cq->dev);
		k += xr_cq_take(cq, n - k, wc + k);
	}
	xr_progress_note_poll(cq->dev);
	return k;
}

/* Sleep on the CQ until a completion is pushed or until deadline. */
static void sleep_on_cq(struct xroce_cq *cq, uint64_t deadline)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (deadline != UINT64_MAX) {
		ts.tv_sec = (time_t)(deadline / 1000000000ull);
		ts.tv_nsec = (long)(deadline % 1000000000ull);
	} else {
		ts.tv_sec += 3600;
	}
	cq->waiters++;
	pthread_cond_timedwait(&cq->cond, &cq->dev->lock, &ts);
	cq->waiters--;
}

int xr_cq_wait(struct xroce_cq *cq, int n, struct xroce_wc *wc, int timeout_ms)
{
	struct xroce_device *dev = cq->dev;
	uint64_t deadline, next, now;
	int k;

	deadline = timeout_ms < 0 ? UINT64_MAX :
		   xr_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	for (;;) {
		k = xr_cq_take(cq, n, wc);
		if (k)
			return k;
		next = xr_progress(dev);
		k = xr_cq_take(cq, n, wc);
		if (k)
			return k;
		now = xr_now_ns();
		if (now >= deadline)
			return 0;
		if (dev->threaded) {
			xr_progress_no_standby(dev); /* the thread fills the CQ */
			sleep_on_cq(cq, deadline);
			continue;
		}
		/* xr_progress returns 0 when it has transmit work or a timer
		 * due now: keep spinning.  Otherwise sleep until an event, the
		 * next timer or the caller's deadline. */
		if (next == 0)
			continue;
		xr_progress_sleep(dev, next < deadline ? next : deadline);
	}
}
