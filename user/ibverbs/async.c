// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Asynchronous events: a QP that failed on its own (peer silence, a
 * refused request, the peer's close) gives IBV_EVENT_QP_FATAL; a QP whose
 * connection exchange completed gives IBV_EVENT_COMM_EST; shared receive
 * queues (srq.c) give IBV_EVENT_SRQ_LIMIT_REACHED and, for a failed QP,
 * IBV_EVENT_QP_LAST_WQE_REACHED.  They come from
 * libxroce's event handler (inside the library), are queued here and
 * announced on the context's async_fd (an eventfd, poll-able like the
 * kernel's).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xv.h"

void xv_async_post(struct xv_context *ctx, const struct ibv_async_event *ev)
{
	uint64_t one = 1;

	pthread_mutex_lock(&ctx->ev_lock);
	if (ctx->ev_tail - ctx->ev_head == ctx->ev_cap) {
		uint32_t cap = ctx->ev_cap ? ctx->ev_cap * 2 : 16, i;
		struct ibv_async_event *n = malloc(cap * sizeof(*n));

		if (!n) {
			pthread_mutex_unlock(&ctx->ev_lock);
			return;
		}
		for (i = 0; i < ctx->ev_tail - ctx->ev_head; i++)
			n[i] = ctx->evq[(ctx->ev_head + i) % ctx->ev_cap];
		free(ctx->evq);
		ctx->evq = n;
		ctx->ev_tail -= ctx->ev_head;
		ctx->ev_head = 0;
		ctx->ev_cap = cap;
	}
	ctx->evq[ctx->ev_tail++ % ctx->ev_cap] = *ev;
	pthread_mutex_unlock(&ctx->ev_lock);
	if (write(ctx->vc.context.async_fd, &one, sizeof(one)) != sizeof(one))
		xv_log("async events: eventfd write: %s", strerror(errno));
}

void xv_async_handler(const struct xroce_event *xe, void *arg)
{
	struct xv_context *ctx = arg;
	struct ibv_async_event ev;
	struct xv_qp *qp = xv_qp_by_num(ctx, xe->qp_num);

	if (!qp)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.element.qp = &qp->qp;
	switch (xe->type) {
	case XROCE_EVENT_QP_FATAL:
		ev.event_type = IBV_EVENT_QP_FATAL;
		__atomic_store_n(&qp->errored, true, __ATOMIC_RELEASE);
		break;
	case XROCE_EVENT_QP_ESTABLISHED:
		ev.event_type = IBV_EVENT_COMM_EST;
		break;
	case XROCE_EVENT_RECV_NEEDED:
		/* Not an ibverbs event: an SRQ moves a receive there. */
		xv_srq_worker_poke(ctx, qp, xe->msn);
		return;
	default:
		return;
	}
	xv_async_post(ctx, &ev);
}

XV_EXPORT int ibv_get_async_event(struct ibv_context *c,
				  struct ibv_async_event *event)
{
	struct xv_context *ctx;

	if (!c || !event) {
		errno = EINVAL;
		return -1;
	}
	ctx = xv_ctx(c);
	for (;;) {
		bool got = false;
		uint64_t v;

		if (read(c->async_fd, &v, sizeof(v)) != sizeof(v))
			return -1;
		pthread_mutex_lock(&ctx->ev_lock);
		if (ctx->ev_head != ctx->ev_tail) {
			*event = ctx->evq[ctx->ev_head++ % ctx->ev_cap];
			got = true;
			if (event->event_type == IBV_EVENT_QP_FATAL ||
			    event->event_type == IBV_EVENT_COMM_EST ||
			    event->event_type == IBV_EVENT_QP_LAST_WQE_REACHED)
				xv_qp(event->element.qp)->events_delivered++;
			else if (event->event_type == IBV_EVENT_SRQ_LIMIT_REACHED)
				xv_srq(event->element.srq)->events_delivered++;
		}
		pthread_mutex_unlock(&ctx->ev_lock);
		if (got)
			return 0;
	}
}

/* One more event of an object acknowledged: its destroy may go on. */
static void acked(pthread_mutex_t *mutex, pthread_cond_t *cond, uint32_t *done)
{
	pthread_mutex_lock(mutex);
	(*done)++;
	pthread_cond_signal(cond);
	pthread_mutex_unlock(mutex);
}

XV_EXPORT void ibv_ack_async_event(struct ibv_async_event *event)
{
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	struct ibv_cq *cq;

	if (!event)
		return;
	switch (event->event_type) {
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		qp = event->element.qp;
		acked(&qp->mutex, &qp->cond, &qp->events_completed);
		break;
	case IBV_EVENT_SRQ_LIMIT_REACHED:
	case IBV_EVENT_SRQ_ERR:
		srq = event->element.srq;
		acked(&srq->mutex, &srq->cond, &srq->events_completed);
		break;
	case IBV_EVENT_CQ_ERR:
		cq = event->element.cq;
		acked(&cq->mutex, &cq->cond, &cq->async_events_completed);
		break;
	default:
		break;
	}
}

void xv_async_forget(struct xv_context *ctx, const void *obj)
{
	uint32_t i, keep;

	pthread_mutex_lock(&ctx->ev_lock);
	keep = ctx->ev_head;
	for (i = ctx->ev_head; i != ctx->ev_tail; i++) {
		struct ibv_async_event *e = &ctx->evq[i % ctx->ev_cap];

		if ((const void *)e->element.qp != obj)
			ctx->evq[keep++ % ctx->ev_cap] = *e;
	}
	ctx->ev_tail = keep;
	pthread_mutex_unlock(&ctx->ev_lock);
}
