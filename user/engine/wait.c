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
#include <sched.h>
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
	xr_progress_note_poll(cq->dev, k > 0);
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

/* Sleeping costs a wake-up: a 64-byte ping-pong through a router took 55
 * us at the median with both ends sleeping, 41 with both busy-polling.  So
 * a wait that the recent ones say will be short first spins (progress
 * rounds, as a busy poll does) for twice their typical length, and sleeps
 * only then.  Where twice that is over XR_SPIN_MAX_NS it does not spin at
 * all.  Between rounds the spin yields the CPU: the softirq work that
 * brings the completion may be waiting for it (without the yield, 4 KiB
 * round trips came out 8-13 us slower than sleeping; with it, 13-15 us
 * faster: docs/PERFORMANCE.md).  Typical: an EWMA (gain 1/8) of how long
 * the waits that found a completion took. */
#define XR_SPIN_MAX_NS 100000ull

static uint64_t spin_budget(const struct xroce_cq *cq)
{
	uint64_t b = 2 * cq->wait_ewma_ns;

	return b <= XR_SPIN_MAX_NS ? b : 0;
}

static int waited(struct xroce_cq *cq, uint64_t t0, int k)
{
	uint64_t t = xr_now_ns() - t0;

	cq->wait_ewma_ns = cq->wait_ewma_ns ?
			   cq->wait_ewma_ns - cq->wait_ewma_ns / 8 + t / 8 : t;
	return k;
}

int xr_cq_wait(struct xroce_cq *cq, int n, struct xroce_wc *wc, int timeout_ms)
{
	struct xroce_device *dev = cq->dev;
	uint64_t deadline, next, now, t0 = xr_now_ns(), spin_end;
	int k;

	deadline = timeout_ms < 0 ? UINT64_MAX :
		   t0 + (uint64_t)timeout_ms * 1000000ull;
	spin_end = t0 + spin_budget(cq);
	for (;;) {
		k = xr_cq_take(cq, n, wc);
		if (k)
			return waited(cq, t0, k);
		next = xr_progress(dev);
		k = xr_cq_take(cq, n, wc);
		if (k)
			return waited(cq, t0, k);
		now = xr_now_ns();
		if (now >= deadline)
			return 0;
		if (now < spin_end && !dev->threaded) {
			/* Let softirq work on this CPU run (what the
			 * completion waits for); with none, this returns at
			 * once. */
			pthread_mutex_unlock(&dev->lock);
			sched_yield();
			pthread_mutex_lock(&dev->lock);
			continue;
		}
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
