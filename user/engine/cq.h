/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Completion queues: a ring of work completions the engine fills and the
 * application drains, with an optional one-shot notification (armed by
 * xroce_req_notify_cq) for completion channels.
 */
#ifndef XR_ENGINE_CQ_H
#define XR_ENGINE_CQ_H

#include <pthread.h>
#include <stdint.h>

#include "xroce/xroce.h"

#define XR_CQ_MAX (1u << 22)           /* completions per CQ */

struct xroce_cq {
	struct xroce_device *dev;
	struct xroce_wc *ring;
	uint32_t size;                     /* power of two */
	uint32_t head, tail;               /* consumer, producer */
	struct xroce_cq *next;
	uint32_t users;                    /* QPs using it */
	/* Threaded devices: xroce_wait_cq sleeps on cond (with dev->lock). */
	pthread_cond_t cond;
	uint32_t waiters;
	xroce_cq_notify_fn notify;
	void *notify_arg;
	int armed;
	/* Tracing: the message each entry completes (trace.h), beside the
	 * ring; allocated by the first traced push. */
	uint32_t *tr_msg;
};

static inline uint32_t xr_cq_room(const struct xroce_cq *cq)
{
	return cq->size - (cq->tail - cq->head);
}

void xr_cq_free(struct xroce_cq *cq);
/* Queue a completion; -ENOSPC if the CQ is full (the caller retries). */
int xr_cq_push(struct xroce_cq *cq, const struct xroce_wc *wc);
/* The same, for message msg_id (a traced device records when the
 * application takes it). */
int xr_cq_push_msg(struct xroce_cq *cq, const struct xroce_wc *wc,
		   uint32_t msg_id);
/* Take up to n completions. */
int xr_cq_take(struct xroce_cq *cq, int n, struct xroce_wc *wc);

#endif /* XR_ENGINE_CQ_H */
