// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Completion queues: a ring of work completions filled by the progress
 * engine and drained by xroce_poll_cq / xroce_wait_cq, which are also where
 * the library does its transmission and timer work.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "internal.h"

#define XR_CQ_MAX (1u << 22)

int xroce_create_cq(struct xroce_device *dev, int cqe, struct xroce_cq **out)
{
	struct xroce_cq *cq;
	uint32_t size = 16;

	if (!dev || !out)
		return -EINVAL;
	*out = NULL;
	if (cqe < 1 || (uint32_t)cqe > XR_CQ_MAX)
		return xr_fail(&dev->log, -EINVAL, "xroce_create_cq: cqe must be 1..%u",
			       XR_CQ_MAX);
	while (size < (uint32_t)cqe)
		size <<= 1;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return xr_fail(&dev->log, -ENOMEM, "out of memory");
	cq->ring = calloc(size, sizeof(*cq->ring));
	if (!cq->ring) {
		free(cq);
		return xr_fail(&dev->log, -ENOMEM, "out of memory");
	}
	cq->dev = dev;
	cq->size = size;
	cq->next = dev->cqs;
	dev->cqs = cq;
	*out = cq;
	return 0;
}

int xroce_destroy_cq(struct xroce_cq *cq)
{
	struct xroce_cq **pp;

	if (!cq)
		return -EINVAL;
	if (cq->users)
		return xr_fail(&cq->dev->log, -EBUSY,
			       "xroce_destroy_cq: %u queue pairs still use it",
			       cq->users);
	for (pp = &cq->dev->cqs; *pp; pp = &(*pp)->next) {
		if (*pp == cq) {
			*pp = cq->next;
			free(cq->ring);
			free(cq);
			return 0;
		}
	}
	return xr_fail(&cq->dev->log, -ENOENT, "xroce_destroy_cq: unknown CQ");
}

int xr_cq_push(struct xroce_cq *cq, const struct xroce_wc *wc)
{
	if (!xr_cq_room(cq))
		return -ENOSPC;
	cq->ring[cq->tail++ & (cq->size - 1)] = *wc;
	return 0;
}

static int cq_take(struct xroce_cq *cq, int n, struct xroce_wc *wc)
{
	int k = 0;

	while (k < n && cq->head != cq->tail)
		wc[k++] = cq->ring[cq->head++ & (cq->size - 1)];
	return k;
}

int xroce_poll_cq(struct xroce_cq *cq, int n, struct xroce_wc *wc)
{
	int k;

	if (!cq || n < 0 || (n && !wc))
		return -EINVAL;
	k = cq_take(cq, n, wc);
	if (k == n)
		return k;
	xr_progress(cq->dev);
	return k + cq_take(cq, n - k, wc + k);
}

int xroce_wait_cq(struct xroce_cq *cq, int n, struct xroce_wc *wc,
		  int timeout_ms)
{
	uint64_t deadline;
	int k;

	if (!cq || n < 1 || !wc)
		return -EINVAL;
	deadline = timeout_ms < 0 ? UINT64_MAX :
		   xr_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	for (;;) {
		uint64_t now, next;
		struct epoll_event ev[2];
		struct timespec ts;

		k = cq_take(cq, n, wc);
		if (k)
			return k;
		next = (uint64_t)xr_progress(cq->dev);
		k = cq_take(cq, n, wc);
		if (k)
			return k;
		now = xr_now_ns();
		if (now >= deadline)
			return 0;
		/* xr_progress returns 0 when it has transmit work or a timer
		 * due now: keep spinning.  Otherwise sleep until an event, the
		 * next timer or the caller's deadline. */
		if (next == 0)
			continue;
		next = next < deadline ? next : deadline;
		if (next <= now)
			continue;
		ts.tv_sec = (time_t)((next - now) / 1000000000ull);
		ts.tv_nsec = (long)((next - now) % 1000000000ull);
		if (epoll_pwait2(cq->dev->epfd, ev, 2, &ts, NULL) < 0 &&
		    errno != EINTR)
			return xr_fail(&cq->dev->log, -errno, "epoll_pwait2: %s",
				       strerror(errno));
		/* Asleep here, we were watching: wake-ups are due to events
		 * or to our own deadlines, not an absence. */
		cq->dev->seen_ns = xr_now_ns();
	}
}
