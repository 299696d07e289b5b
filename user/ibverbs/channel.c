// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Completion channels.  The channel's fd is an eventfd in semaphore mode:
 * readable (poll, epoll) while events are pending, one read per event; a
 * blocking fd makes ibv_get_cq_event sleep, O_NONBLOCK makes it return -1
 * with EAGAIN, as with a kernel channel.  An armed CQ fires from inside
 * libxroce (its progress thread, or a progress round of any call) through
 * its notify function, which queues the CQ here and writes the eventfd.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include "xv.h"

XV_EXPORT struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *c)
{
	struct xv_channel *ch;

	if (!c)
		return xv_null(EINVAL, "ibv_create_comp_channel: NULL context");
	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return xv_null(ENOMEM, "ibv_create_comp_channel: out of memory");
	ch->ch.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (ch->ch.fd < 0) {
		int e = errno;

		free(ch);
		return xv_null(e, "ibv_create_comp_channel: eventfd: %s", strerror(e));
	}
	pthread_mutex_init(&ch->lock, NULL);
	ch->ch.context = c;
	return &ch->ch;
}

XV_EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *c)
{
	struct xv_channel *ch = (struct xv_channel *)c;

	if (!ch)
		return EINVAL;
	if (__atomic_load_n(&c->refcnt, __ATOMIC_RELAXED))
		return xv_fail(EBUSY, "ibv_destroy_comp_channel: %d CQs still use it",
			       c->refcnt);
	close(c->fd);
	pthread_mutex_destroy(&ch->lock);
	free(ch->q);
	free(ch);
	return 0;
}

void xv_channel_fire(struct xv_channel *ch, struct xv_cq *cq)
{
	uint64_t one = 1;

	pthread_mutex_lock(&ch->lock);
	if (ch->tail - ch->head == ch->cap) {
		uint32_t cap = ch->cap ? ch->cap * 2 : 16, i;
		struct xv_cq **n = malloc(cap * sizeof(struct xv_cq *));

		if (!n) {
			pthread_mutex_unlock(&ch->lock);
			return;
		}
		for (i = 0; i < ch->tail - ch->head; i++)
			n[i] = ch->q[(ch->head + i) % ch->cap];
		free(ch->q);
		ch->q = n;
		ch->tail -= ch->head;
		ch->head = 0;
		ch->cap = cap;
	}
	ch->q[ch->tail++ % ch->cap] = cq;
	pthread_mutex_unlock(&ch->lock);
	if (write(ch->ch.fd, &one, sizeof(one)) != sizeof(one))
		xv_log("completion channel: eventfd write: %s", strerror(errno));
}

void xv_channel_forget(struct xv_channel *ch, struct xv_cq *cq)
{
	uint32_t i, keep = ch->head;

	pthread_mutex_lock(&ch->lock);
	for (i = ch->head; i != ch->tail; i++) {
		struct xv_cq *x = ch->q[i % ch->cap];

		if (x != cq)
			ch->q[keep++ % ch->cap] = x;
	}
	/* The eventfd keeps counting the forgotten events: a read that finds
	 * no event reads again (ibv_get_cq_event). */
	ch->tail = keep;
	pthread_mutex_unlock(&ch->lock);
}

XV_EXPORT int ibv_get_cq_event(struct ibv_comp_channel *c, struct ibv_cq **cq,
			       void **cq_context)
{
	struct xv_channel *ch = (struct xv_channel *)c;

	if (!ch || !cq || !cq_context) {
		errno = EINVAL;
		return -1;
	}
	for (;;) {
		struct xv_cq *x = NULL;
		uint64_t v;

		if (read(c->fd, &v, sizeof(v)) != sizeof(v))
			return -1; /* errno: EAGAIN on a non-blocking channel */
		pthread_mutex_lock(&ch->lock);
		if (ch->head != ch->tail)
			x = ch->q[ch->head++ % ch->cap];
		pthread_mutex_unlock(&ch->lock);
		if (!x)
			continue; /* an event of a destroyed CQ */
		x->events++;
		*cq = &x->cq;
		*cq_context = x->cq.cq_context;
		return 0;
	}
}

XV_EXPORT void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	if (!cq)
		return;
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_signal(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}
