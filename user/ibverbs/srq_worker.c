// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The SRQ thread of a context, one job: when libxroce reports that a SEND
 * found no receive on a QP attached to a shared receive queue
 * (XROCE_EVENT_RECV_NEEDED), move one there (srq.c, xv_srq_feed).
 *
 * Why a thread: the report comes from libxroce's event handler, which runs
 * with the device locked and must not call the library, while moving a
 * receive calls it (xroce_recall_recv, xroce_post_recv) under the SRQ's and
 * the QPs' locks.  And the application may be asleep on a completion
 * channel waiting for exactly that message, so the work cannot wait for its
 * next verb either.  The handler only sets flags and writes an eventfd.
 * Lock order: ctx->srq_lock, an SRQ's lock, a QP's lock (then libxroce's).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include "xv.h"

static void *worker(void *arg)
{
	struct xv_context *ctx = arg;

	for (;;) {
		struct xv_srq *s;
		uint64_t v;

		if (read(ctx->srq_efd, &v, sizeof(v)) != sizeof(v) && errno != EINTR) {
			xv_log("SRQ thread: eventfd read: %s", strerror(errno));
			return NULL;
		}
		if (__atomic_load_n(&ctx->srq_stop, __ATOMIC_ACQUIRE))
			return NULL;
		pthread_mutex_lock(&ctx->srq_lock);
		for (s = ctx->srqs; s; s = s->next)
			if (__atomic_exchange_n(&s->need, false, __ATOMIC_ACQ_REL))
				xv_srq_feed(s);
		pthread_mutex_unlock(&ctx->srq_lock);
	}
}

int xv_srq_worker_add(struct xv_context *ctx, struct xv_srq *srq)
{
	int rc = 0;

	pthread_mutex_lock(&ctx->srq_lock);
	if (!ctx->srq_thread_on) {
		ctx->srq_efd = eventfd(0, EFD_CLOEXEC);
		if (ctx->srq_efd < 0) {
			rc = errno;
		} else {
			rc = pthread_create(&ctx->srq_thread, NULL, worker, ctx);
			if (rc) {
				close(ctx->srq_efd);
				ctx->srq_efd = -1;
			}
		}
		ctx->srq_thread_on = !rc;
	}
	if (!rc) {
		srq->next = ctx->srqs;
		ctx->srqs = srq;
	}
	pthread_mutex_unlock(&ctx->srq_lock);
	return rc;
}

void xv_srq_worker_remove(struct xv_context *ctx, struct xv_srq *srq)
{
	struct xv_srq **p;

	pthread_mutex_lock(&ctx->srq_lock);
	for (p = &ctx->srqs; *p && *p != srq; p = &(*p)->next)
		;
	if (*p)
		*p = srq->next;
	pthread_mutex_unlock(&ctx->srq_lock);
}

void xv_srq_worker_stop(struct xv_context *ctx)
{
	uint64_t one = 1;

	if (!ctx->srq_thread_on)
		return;
	__atomic_store_n(&ctx->srq_stop, true, __ATOMIC_RELEASE);
	if (write(ctx->srq_efd, &one, sizeof(one)) != sizeof(one))
		xv_log("SRQ thread: eventfd write: %s", strerror(errno));
	pthread_join(ctx->srq_thread, NULL);
	ctx->srq_thread_on = false;
}

void xv_srq_worker_poke(struct xv_context *ctx, struct xv_qp *qp, uint32_t msn)
{
	uint64_t one = 1;

	if (!qp->srq || ctx->srq_efd < 0)
		return;
	__atomic_store_n(&qp->need_msn, msn, __ATOMIC_RELEASE);
	__atomic_store_n(&qp->recv_need, true, __ATOMIC_RELEASE);
	__atomic_store_n(&qp->srq->need, true, __ATOMIC_RELEASE);
	if (write(ctx->srq_efd, &one, sizeof(one)) != sizeof(one))
		xv_log("SRQ thread: eventfd write: %s", strerror(errno));
}
