// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Shared receive queues.
 *
 * xroce places a SEND the moment its packets arrive, in any order, into
 * the receive that the QP published for the message's number (MSN): XDP
 * cannot pick one from a common pool per message.  So an SRQ here is a pool
 * whose receives are lent to the attached QPs ahead of time, each QP
 * holding at most its share: the receives posted and not yet completed,
 * divided by the number of QPs (at least one each while any is posted).
 * A QP whose receive completes takes the next from the pool; receives
 * posted to the SRQ go round the QPs that hold less than their share.
 *
 * A QP whose SEND finds no receive anyway (its sender is told "receiver
 * not ready" and retries) is reported by libxroce, and the SRQ thread
 * (srq_worker.c) moves one there: from the pool if it holds any, or taken
 * back from another QP that is not waiting for one itself (one holding
 * receives the library does not have yet first, then the one holding the
 * most; up to XV_SRQ_TRIES of them), if no packet has reached that receive
 * yet (xroce_recall_recv: atomic against XDP's claim).
 *
 * What this means for applications:
 *   - every QP has receives in place while the SRQ holds at least one per
 *     QP, as on a NIC;
 *   - receives lent to a QP that gets no traffic move to a busy QP that
 *     needs them, after one "receiver not ready" wait of its sender (the
 *     responder's min_rnr_timer), or a few if the first QPs tried had
 *     their receives reached by packets already;
 *   - a QP that fails or is destroyed gives back every receive it held
 *     and did not complete: SRQ receives are never flushed, and a failed
 *     QP reports IBV_EVENT_QP_LAST_WQE_REACHED once it holds none;
 *   - IBV_SRQ_LIMIT arms IBV_EVENT_SRQ_LIMIT_REACHED, given once when a
 *     receive completes and fewer than the limit are left posted; the SRQ
 *     does not resize.
 * Lock order: srq->lock, then an attached QP's lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xv.h"

static uint32_t pool_len(const struct xv_srq *s)
{
	return s->tail - s->head;
}

/* The most receives one QP may hold now. */
static uint32_t share_of(const struct xv_srq *s, const struct xv_qp *qp)
{
	uint32_t share = s->nqp ? (s->posted + s->nqp - 1) / s->nqp : 0;

	if (share > qp->rq_size)
		share = qp->rq_size;
	return share;
}

/* Lend qp receives from the pool up to its share (both locks held). */
static void lend(struct xv_srq *s, struct xv_qp *qp)
{
	uint32_t share = share_of(s, qp);

	if (qp->errored)
		return;
	while (pool_len(s) && qp->rq_tail - qp->rq_done < share) {
		qp->rq[qp->rq_tail++ & (qp->rq_size - 1)] =
			s->pool[s->head++ & (s->size - 1)];
	}
	xv_rq_top_up(qp);
}

/* Share the pool among the attached QPs, starting one further each time so
 * that no QP is always served first (srq->lock held). */
static void lend_round(struct xv_srq *s)
{
	uint32_t i, n = s->nqp;

	for (i = 0; i < n && pool_len(s); i++) {
		struct xv_qp *qp = s->qps[(s->rr + i) % n];

		pthread_mutex_lock(&qp->lock);
		lend(s, qp);
		pthread_mutex_unlock(&qp->lock);
	}
	if (n)
		s->rr = (s->rr + 1) % n;
}

/* A lent receive comes back unused (both locks held). */
static void give_back(struct xv_srq *s, const struct xv_rwr *r)
{
	s->pool[s->tail++ & (s->size - 1)] = *r;
}

/* Receives a failed QP held that the library never had go back; once it
 * holds none, the application hears IBV_EVENT_QP_LAST_WQE_REACHED
 * (both locks held). */
static void drain_failed(struct xv_srq *s, struct xv_qp *qp)
{
	struct ibv_async_event ev;

	while (qp->rq_sent != qp->rq_tail)
		give_back(s, &qp->rq[--qp->rq_tail & (qp->rq_size - 1)]);
	if (qp->rq_done != qp->rq_tail || qp->last_wqe)
		return;
	qp->last_wqe = true;
	memset(&ev, 0, sizeof(ev));
	ev.event_type = IBV_EVENT_QP_LAST_WQE_REACHED;
	ev.element.qp = &qp->qp;
	xv_async_post(s->ctx, &ev);
}

/* Fewer receives than the armed limit: tell the application, once. */
static void check_limit(struct xv_srq *s)
{
	struct ibv_async_event ev;

	if (!s->limit || s->posted >= s->limit)
		return;
	s->limit = 0;
	memset(&ev, 0, sizeof(ev));
	ev.event_type = IBV_EVENT_SRQ_LIMIT_REACHED;
	ev.element.srq = &s->srq;
	xv_async_post(s->ctx, &ev);
}

/* Lend x one receive beyond its share: it needs one now (both locks
 * held). */
static bool lend_one(struct xv_srq *s, struct xv_qp *x)
{
	if (!pool_len(s) || x->rq_tail - x->rq_done >= x->rq_size)
		return false;
	x->rq[x->rq_tail++ & (x->rq_size - 1)] = s->pool[s->head++ & (s->size - 1)];
	xv_rq_top_up(x);
	return true;
}

/* Take back the newest receive qp holds, into the pool: one the library
 * does not have yet, or one it gives back because no packet reached it
 * (both locks held). */
static bool take_back(struct xv_srq *s, struct xv_qp *qp)
{
	uint64_t id;

	if (qp->errored || qp->rq_tail == qp->rq_done)
		return false;
	if (qp->rq_tail == qp->rq_sent) {
		if (xroce_recall_recv(qp->xqp, 0, &id))
			return false;
		if ((uint32_t)id != qp->rq_sent - 1) {
			/* Cannot happen: the library holds [rq_done, rq_sent). */
			xv_log("QP %u: receive %u taken back, expected %u",
			       qp->qp.qp_num, (uint32_t)id, qp->rq_sent - 1);
		}
		qp->rq_sent--;
	}
	give_back(s, &qp->rq[--qp->rq_tail & (qp->rq_size - 1)]);
	return true;
}

/* Which QP to take a receive back from for x, or NULL: one that does not
 * wait for a receive itself, preferring one holding receives the library
 * does not have yet (no recall needed), then the one holding the most;
 * not one tried in this round (feed_mark) (srq->lock held). */
static struct xv_qp *donor(const struct xv_srq *s, const struct xv_qp *x)
{
	struct xv_qp *best = NULL;
	uint64_t best_score = 0;
	uint32_t i;

	for (i = 0; i < s->nqp; i++) {
		struct xv_qp *q = s->qps[i];
		uint32_t held = q->rq_tail - q->rq_done;
		uint64_t score;

		if (q == x || q->feed_mark == s->feed_gen || !held ||
		    __atomic_load_n(&q->recv_need, __ATOMIC_ACQUIRE))
			continue;
		score = (q->rq_tail != q->rq_sent ? 1ull << 32 : 0) | held;
		if (score > best_score) {
			best = q;
			best_score = score;
		}
	}
	return best;
}

/* Give x one receive, for its receive number msn: from the pool, or taken
 * back from another QP (the next if a packet reached that one first, up
 * to XV_SRQ_TRIES of them).  srq->lock held. */
static void feed_one(struct xv_srq *s, struct xv_qp *x, uint32_t msn)
{
	uint32_t round;

	pthread_mutex_lock(&x->lock);
	/* Failed, the receive posted since, receives waiting to be handed
	 * to the library, or no room: nothing to move. */
	if (x->errored || (int32_t)(x->rq_sent - msn) > 0 ||
	    x->rq_sent != x->rq_tail || x->rq_tail - x->rq_done >= x->rq_size ||
	    lend_one(s, x)) {
		pthread_mutex_unlock(&x->lock);
		return;
	}
	pthread_mutex_unlock(&x->lock);
	s->feed_gen++;
	for (round = 0; round < XV_SRQ_TRIES; round++) {
		struct xv_qp *d = donor(s, x);
		bool got;

		if (!d)
			return;
		d->feed_mark = s->feed_gen;
		pthread_mutex_lock(&d->lock);
		got = take_back(s, d);
		pthread_mutex_unlock(&d->lock);
		if (got) {
			pthread_mutex_lock(&x->lock);
			if (!x->errored)
				lend_one(s, x);
			pthread_mutex_unlock(&x->lock);
			return;
		}
	}
}

void xv_srq_feed(struct xv_srq *s)
{
	uint32_t i;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->nqp; i++) {
		struct xv_qp *x = s->qps[i];

		if (__atomic_exchange_n(&x->recv_need, false, __ATOMIC_ACQ_REL))
			feed_one(s, x, __atomic_load_n(&x->need_msn, __ATOMIC_ACQUIRE));
	}
	pthread_mutex_unlock(&s->lock);
}

XV_EXPORT struct ibv_srq *ibv_create_srq(struct ibv_pd *pd,
					 struct ibv_srq_init_attr *attr)
{
	static uint32_t handles;
	struct xv_srq *s;
	uint32_t size = 1;
	int rc;

	if (!pd || !attr)
		return xv_null(EINVAL, "ibv_create_srq: NULL argument");
	if (!attr->attr.max_wr || attr->attr.max_wr > XV_MAX_SRQ_WR ||
	    attr->attr.max_sge > XV_MAX_SGE)
		return xv_null(EINVAL, "ibv_create_srq: max_wr %u (1..%d), max_sge "
			       "%u (at most %d)", attr->attr.max_wr, XV_MAX_SRQ_WR,
			       attr->attr.max_sge, XV_MAX_SGE);
	if (attr->attr.srq_limit > attr->attr.max_wr)
		return xv_null(EINVAL, "ibv_create_srq: srq_limit %u above max_wr %u",
			       attr->attr.srq_limit, attr->attr.max_wr);
	while (size < attr->attr.max_wr)
		size <<= 1;
	s = calloc(1, sizeof(*s));
	if (s)
		s->pool = calloc(size, sizeof(*s->pool));
	if (!s || !s->pool) {
		free(s);
		return xv_null(ENOMEM, "ibv_create_srq: out of memory");
	}
	s->ctx = xv_ctx(pd->context);
	s->size = size;
	s->max_wr = size;
	s->max_sge = attr->attr.max_sge ? attr->attr.max_sge : 1;
	pthread_mutex_init(&s->lock, NULL);
	s->srq.context = pd->context;
	s->srq.srq_context = attr->srq_context;
	s->srq.pd = pd;
	s->srq.handle = __atomic_add_fetch(&handles, 1, __ATOMIC_RELAXED);
	pthread_mutex_init(&s->srq.mutex, NULL);
	pthread_cond_init(&s->srq.cond, NULL);
	rc = xv_srq_worker_add(s->ctx, s);
	if (rc) {
		pthread_cond_destroy(&s->srq.cond);
		pthread_mutex_destroy(&s->srq.mutex);
		pthread_mutex_destroy(&s->lock);
		free(s->pool);
		free(s);
		return xv_null(rc, "ibv_create_srq: cannot start the SRQ thread: %s",
			       strerror(rc));
	}
	attr->attr.max_wr = s->max_wr;
	attr->attr.max_sge = s->max_sge;
	return &s->srq;
}

XV_EXPORT int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
			     int mask)
{
	struct xv_srq *s = srq ? xv_srq(srq) : NULL;

	if (!s || !attr)
		return xv_fail(EINVAL, "ibv_modify_srq: NULL argument");
	if (mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT))
		return xv_fail(EINVAL, "ibv_modify_srq: attribute mask %#x", mask);
	if (mask & IBV_SRQ_MAX_WR)
		return xv_fail(EINVAL, "ibv_modify_srq: xroce SRQs keep their size "
			       "(IBV_DEVICE_SRQ_RESIZE is not set)");
	if (!(mask & IBV_SRQ_LIMIT))
		return 0;
	if (attr->srq_limit > s->max_wr)
		return xv_fail(EINVAL, "ibv_modify_srq: srq_limit %u above max_wr %u",
			       attr->srq_limit, s->max_wr);
	/* Checked as receives complete, as rxe does, not now. */
	pthread_mutex_lock(&s->lock);
	s->limit = attr->srq_limit;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

XV_EXPORT int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct xv_srq *s = srq ? xv_srq(srq) : NULL;

	if (!s || !attr)
		return xv_fail(EINVAL, "ibv_query_srq: NULL argument");
	pthread_mutex_lock(&s->lock);
	attr->max_wr = s->max_wr;
	attr->max_sge = s->max_sge;
	attr->srq_limit = s->limit;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

XV_EXPORT int ibv_destroy_srq(struct ibv_srq *srq)
{
	struct xv_srq *s = srq ? xv_srq(srq) : NULL;

	if (!s)
		return EINVAL;
	pthread_mutex_lock(&s->lock);
	if (s->nqp) {
		uint32_t n = s->nqp;

		pthread_mutex_unlock(&s->lock);
		return xv_fail(EBUSY, "ibv_destroy_srq: %u QPs still use it", n);
	}
	pthread_mutex_unlock(&s->lock);
	xv_srq_worker_remove(s->ctx, s);
	/* Every event handed out must be acknowledged first (as rdma-core). */
	pthread_mutex_lock(&srq->mutex);
	while (srq->events_completed != s->events_delivered)
		pthread_cond_wait(&srq->cond, &srq->mutex);
	pthread_mutex_unlock(&srq->mutex);
	xv_async_forget(s->ctx, srq);
	while (s->head != s->tail)
		xv_rwr_release(s->ctx, &s->pool[s->head++ & (s->size - 1)]);
	pthread_mutex_destroy(&s->lock);
	free(s->qps);
	free(s->pool);
	free(s);
	return 0;
}

int xv_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad)
{
	struct xv_srq *s = xv_srq(srq);
	int rc = 0;

	pthread_mutex_lock(&s->lock);
	for (; wr; wr = wr->next) {
		if (wr->num_sge < 0 || wr->num_sge > (int)s->max_sge ||
		    (wr->num_sge && !wr->sg_list)) {
			rc = xv_fail(EINVAL, "ibv_post_srq_recv: num_sge %d (the SRQ "
				     "has %u)", wr->num_sge, s->max_sge);
			break;
		}
		if (s->posted >= s->max_wr) {
			rc = xv_fail(ENOMEM, "ibv_post_srq_recv: the SRQ is full (%u)",
				     s->max_wr);
			break;
		}
		rc = xv_rwr_fill(s->ctx, xv_pd(srq->pd),
				 &s->pool[s->tail & (s->size - 1)], wr);
		if (rc < 0)
			rc = xv_fail(EINVAL, "ibv_post_srq_recv: work request %llu "
				     "names memory outside the SRQ's PD's regions",
				     (unsigned long long)wr->wr_id);
		if (rc)
			break;
		s->tail++;
		s->posted++;
	}
	lend_round(s);
	pthread_mutex_unlock(&s->lock);
	if (bad)
		*bad = rc ? wr : NULL;
	return rc;
}

int xv_srq_attach(struct xv_srq *s, struct xv_qp *qp)
{
	pthread_mutex_lock(&s->lock);
	if (s->nqp == s->qcap) {
		uint32_t cap = s->qcap ? s->qcap * 2 : 8;
		struct xv_qp **n = realloc(s->qps, cap * sizeof(struct xv_qp *));

		if (!n) {
			pthread_mutex_unlock(&s->lock);
			return ENOMEM;
		}
		s->qps = n;
		s->qcap = cap;
	}
	s->qps[s->nqp++] = qp;
	qp->srq = s;
	lend_round(s);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

void xv_srq_detach(struct xv_srq *s, struct xv_qp *qp)
{
	uint32_t i;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->nqp && s->qps[i] != qp; i++)
		;
	if (i < s->nqp)
		s->qps[i] = s->qps[--s->nqp];
	pthread_mutex_lock(&qp->lock);
	while (qp->rq_done != qp->rq_tail)
		give_back(s, &qp->rq[qp->rq_done++ & (qp->rq_size - 1)]);
	qp->rq_sent = qp->rq_done;
	pthread_mutex_unlock(&qp->lock);
	if (s->nqp)
		s->rr %= s->nqp;
	lend_round(s);
	pthread_mutex_unlock(&s->lock);
}

int xv_srq_complete(struct xv_qp *qp, uint64_t xr_id, struct ibv_wc *wc)
{
	struct xv_srq *s = qp->srq;
	int keep = 1;

	pthread_mutex_lock(&s->lock);
	pthread_mutex_lock(&qp->lock);
	if (wc->status == IBV_WC_WR_FLUSH_ERR) {
		/* The QP failed: the receive was not used, the pool has it. */
		uint32_t idx = (uint32_t)xr_id;

		if (idx == qp->rq_done) {
			give_back(s, &qp->rq[idx & (qp->rq_size - 1)]);
			qp->rq_done++;
		} else {
			xv_log("QP %u: receive %u flushed, expected %u", qp->qp.qp_num,
			       idx, qp->rq_done);
		}
		qp->errored = true;
		keep = 0;
	} else {
		xv_rq_complete(qp, xr_id, wc);
		s->posted--;
		if (wc->status != IBV_WC_SUCCESS)
			qp->errored = true;
		check_limit(s);
	}
	if (qp->errored)
		drain_failed(s, qp);
	else
		lend(s, qp);
	pthread_mutex_unlock(&qp->lock);
	if (!keep)
		lend_round(s);
	pthread_mutex_unlock(&s->lock);
	return keep;
}

void xv_srq_qp_error(struct xv_qp *qp)
{
	struct xv_srq *s = qp->srq;

	pthread_mutex_lock(&s->lock);
	pthread_mutex_lock(&qp->lock);
	qp->errored = true;
	drain_failed(s, qp);
	pthread_mutex_unlock(&qp->lock);
	lend_round(s);
	pthread_mutex_unlock(&s->lock);
}

void xv_srq_qp_leaving(struct xv_qp *qp)
{
	struct xv_srq *s = qp->srq;

	/* errored: lend, take_back and feed_one pass it by. */
	pthread_mutex_lock(&s->lock);
	pthread_mutex_lock(&qp->lock);
	qp->errored = true;
	pthread_mutex_unlock(&qp->lock);
	pthread_mutex_unlock(&s->lock);
}
