// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Completion queues: a power-of-two ring of work completions.  The engine
 * pushes (never overwriting: a full CQ makes the producer retry later),
 * the application takes.  A push wakes a thread sleeping in xroce_wait_cq
 * on a threaded device, and fires an armed notification once.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "cq.h"
#include "engine.h"
#include "device.h"
#include "progress.h"
#include "trace.h"


int xr_cq_create(struct xroce_device *dev, int cqe, struct xroce_cq **out)
{
	pthread_condattr_t ca;
	struct xroce_cq *cq;
	uint32_t size = 16;
	int rc;

	if (cqe < 1 || (uint32_t)cqe > XR_CQ_MAX)
		return xr_fail(&dev->log, -EINVAL, "xroce_create_cq: cqe must be 1..%u",
			       XR_CQ_MAX);
	while (size < (uint32_t)cqe)
		size <<= 1;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return xr_fail(&dev->log, -ENOMEM, "out of memory");
	cq->ring = calloc(size, sizeof(*cq->ring));
	/* Deadlines are CLOCK_MONOTONIC, as everywhere in the engine. */
	rc = pthread_condattr_init(&ca);
	if (!rc) {
		rc = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		if (!rc)
			rc = pthread_cond_init(&cq->cond, &ca);
		pthread_condattr_destroy(&ca);
	}
	if (!cq->ring || rc) {
		free(cq->ring);
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

void xr_cq_free(struct xroce_cq *cq)
{
	pthread_cond_destroy(&cq->cond);
	free(cq->tr_msg);
	free(cq->ring);
	free(cq);
}

int xr_cq_destroy(struct xroce_cq *cq)
{
	struct xroce_cq **pp;

	if (cq->users)
		return xr_fail(&cq->dev->log, -EBUSY,
			       "xroce_destroy_cq: %u queue pairs still use it",
			       cq->users);
	if (cq->waiters)
		return xr_fail(&cq->dev->log, -EBUSY,
			       "xroce_destroy_cq: a thread waits on it");
	for (pp = &cq->dev->cqs; *pp; pp = &(*pp)->next) {
		if (*pp == cq) {
			*pp = cq->next;
			xr_cq_free(cq);
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
	if (cq->waiters)
		pthread_cond_broadcast(&cq->cond);
	if (cq->armed && cq->notify) {
		cq->armed = 0;
		cq->notify(cq, cq->notify_arg);
	}
	return 0;
}

int xr_cq_push_msg(struct xroce_cq *cq, const struct xroce_wc *wc,
		   uint32_t msg_id)
{
	uint32_t at = cq->tail & (cq->size - 1);
	int rc = xr_cq_push(cq, wc);

	if (__builtin_expect(cq->dev->trace != NULL, 0) && !rc) {
		if (!cq->tr_msg)
			cq->tr_msg = calloc(cq->size, sizeof(*cq->tr_msg));
		if (cq->tr_msg)
			cq->tr_msg[at] = msg_id;
	}
	return rc;
}

/* A traced device: the application takes the completion of a message. */
static void trace_take(struct xroce_cq *cq, uint32_t at, const struct xroce_wc *wc)
{
	bool recv = wc->opcode == XROCE_WC_RECV_RDMA_WITH_IMM ||
		    wc->opcode == XROCE_WC_RECV_RDMA_WRITE ||
		    wc->opcode == XROCE_WC_RECV;

	if (cq->tr_msg)
		xr_trace_add(cq->dev, wc->qp_num, cq->tr_msg[at], 0,
			     recv ? XR_TR_RECV_CQE : XR_TR_SEND_CQE, 0);
}

int xr_cq_take(struct xroce_cq *cq, int n, struct xroce_wc *wc)
{
	int k = 0;

	while (k < n && cq->head != cq->tail) {
		uint32_t at = cq->head++ & (cq->size - 1);

		wc[k] = cq->ring[at];
		if (__builtin_expect(cq->dev->trace != NULL, 0))
			trace_take(cq, at, &wc[k]);
		k++;
	}
	return k;
}

int xr_cq_set_notify(struct xroce_cq *cq, xroce_cq_notify_fn fn, void *arg)
{
	cq->notify = fn;
	cq->notify_arg = arg;
	cq->armed = 0;
	return 0;
}

/* Every completion counts as solicited: xroce has no solicited-event bit,
 * and an extra notification only costs the waiter one empty poll. */
int xr_cq_req_notify(struct xroce_cq *cq, int solicited_only)
{
	(void)solicited_only;
	if (!cq->notify)
		return xr_fail(&cq->dev->log, -EINVAL, "xroce_req_notify_cq: no "
			       "notification function set");
	cq->armed = 1;
	/* The application will sleep until notified: the progress thread
	 * must not stand by for a poller (progress.c). */
	xr_progress_no_standby(cq->dev);
	return 0;
}
