// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Queue pairs: creation, destruction, queries.  A QP is an xroce QP (its
 * number is the xroce connection id, which the peer names in the
 * connection exchange) created in RESET; modify.c drives its states.
 * Reliable connected only: xroce connections are reliable and have one
 * peer, so UD, UC, XRC and raw packet QPs are EOPNOTSUPP.  A QP on a
 * shared receive queue attaches to it here (srq.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xv.h"

static uint32_t pow2_at_least(uint32_t v)
{
	uint32_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

struct xv_qp *xv_qp_by_num(struct xv_context *ctx, uint32_t num)
{
	struct xv_qp *qp;

	if (num >= ctx->qp_tab_size)
		return NULL;
	pthread_mutex_lock(&ctx->lock);
	qp = ctx->qp_tab[num];
	pthread_mutex_unlock(&ctx->lock);
	return qp;
}

void xv_qp_mark_error(struct xv_qp *qp)
{
	if (qp->srq) {
		xv_srq_qp_error(qp);
		return;
	}
	pthread_mutex_lock(&qp->lock);
	qp->errored = true;
	xv_rq_flush_backlog(qp);
	pthread_mutex_unlock(&qp->lock);
}

static uint32_t env_paths(void)
{
	const char *s = getenv("XROCE_PATHS");
	long v = s ? strtol(s, NULL, 10) : 0;

	return v > 0 && v <= XROCE_MAX_PATHS ? (uint32_t)v : 0;
}

struct ibv_qp *xv_create_qp_ex(struct ibv_context *c,
			       struct ibv_qp_init_attr_ex *a)
{
	struct xv_context *ctx = xv_ctx(c);
	struct xroce_qp_init_attr xa;
	struct ibv_qp_cap *cap = &a->cap;
	struct xv_qp *qp;
	struct xv_pd *pd;
	uint32_t num;
	int rc;

	if (a->comp_mask & ~(uint32_t)(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS))
		return xv_null(EOPNOTSUPP, "ibv_create_qp_ex: comp_mask %#x: xroce "
			       "has no XRC, RSS, TSO or the ibv_wr_* send API",
			       a->comp_mask);
	if ((a->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && a->create_flags)
		return xv_null(EOPNOTSUPP, "ibv_create_qp_ex: create flags %#x",
			       a->create_flags);
	if (!(a->comp_mask & IBV_QP_INIT_ATTR_PD) || !a->pd)
		return xv_null(EINVAL, "ibv_create_qp: no PD");
	if (a->qp_type != IBV_QPT_RC)
		return xv_null(EOPNOTSUPP, "ibv_create_qp: QP type %d: xroce has "
			       "reliable connected QPs only (IBV_QPT_RC)", a->qp_type);
	if (a->srq && (a->srq->context != c || a->srq->pd != a->pd))
		return xv_null(EINVAL, "ibv_create_qp: the SRQ must be of the QP's "
			       "context and PD (its receives are checked against "
			       "the QP's regions)");
	if (!a->send_cq || !a->recv_cq || a->send_cq->context != c ||
	    a->recv_cq->context != c || a->pd->context != c)
		return xv_null(EINVAL, "ibv_create_qp: send_cq, recv_cq and pd of "
			       "this context are required");
	if (cap->max_send_wr > XV_MAX_WR || cap->max_recv_wr > XV_MAX_WR ||
	    cap->max_send_sge > XV_MAX_SGE || cap->max_recv_sge > XV_MAX_SGE ||
	    cap->max_inline_data > XROCE_MAX_INLINE)
		return xv_null(EINVAL, "ibv_create_qp: cap (wr %u/%u, sge %u/%u, "
			       "inline %u) beyond the device's (wr %d, sge %d, inline "
			       "%d)", cap->max_send_wr, cap->max_recv_wr,
			       cap->max_send_sge, cap->max_recv_sge,
			       cap->max_inline_data, XV_MAX_WR, XV_MAX_SGE,
			       XROCE_MAX_INLINE);
	pd = xv_pd(a->pd);
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return xv_null(ENOMEM, "ibv_create_qp: out of memory");
	if (a->srq) {
		/* Room for a share; the library holds no more than this. */
		qp->rq_size = pow2_at_least(xv_srq(a->srq)->max_wr);
		if (qp->rq_size > XROCE_MAX_RECV_PER_STREAM)
			qp->rq_size = XROCE_MAX_RECV_PER_STREAM;
		cap->max_recv_wr = 0;    /* as rdma-core: the SRQ's count */
		cap->max_recv_sge = 0;
	} else {
		qp->rq_size = pow2_at_least(cap->max_recv_wr ? cap->max_recv_wr : 1);
	}
	qp->rq = calloc(qp->rq_size, sizeof(*qp->rq));
	if (!qp->rq) {
		free(qp);
		return xv_null(ENOMEM, "ibv_create_qp: out of memory");
	}
	memset(&xa, 0, sizeof(xa));
	xa.send_cq = xv_cq(a->send_cq)->xcq;
	xa.recv_cq = xv_cq(a->recv_cq)->xcq;
	/* Room for every request the application may have outstanding. */
	xa.max_send_wr = pow2_at_least(cap->max_send_wr ? cap->max_send_wr : 1);
	if (xa.max_send_wr < 16)
		xa.max_send_wr = 16;
	xa.npaths = env_paths();
	rc = xroce_create_qp(pd->xpd, &xa, &qp->xqp);
	if (rc) {
		free(qp->rq);
		free(qp);
		return xv_lib_null(rc);
	}
	num = xroce_qp_num(qp->xqp);
	qp->ctx = ctx;
	qp->cap = *cap;
	qp->cap.max_inline_data = XROCE_MAX_INLINE;
	*cap = qp->cap;
	qp->sig_all = a->sq_sig_all != 0;
	pthread_mutex_init(&qp->lock, NULL);
	qp->attr.qp_state = IBV_QPS_RESET;
	qp->attr.path_mtu = IBV_MTU_1024;
	qp->attr.cap = qp->cap;
	qp->qp.context = c;
	qp->qp.qp_context = a->qp_context;
	qp->qp.pd = a->pd;
	qp->qp.send_cq = a->send_cq;
	qp->qp.recv_cq = a->recv_cq;
	qp->qp.handle = num;
	qp->qp.qp_num = num;
	qp->qp.state = IBV_QPS_RESET;
	qp->qp.qp_type = IBV_QPT_RC;
	qp->qp.srq = a->srq;
	pthread_mutex_init(&qp->qp.mutex, NULL);
	pthread_cond_init(&qp->qp.cond, NULL);
	if (a->srq && xv_srq_attach(xv_srq(a->srq), qp)) {
		xroce_destroy_qp(qp->xqp);
		pthread_mutex_destroy(&qp->lock);
		free(qp->rq);
		free(qp);
		return xv_null(ENOMEM, "ibv_create_qp: out of memory");
	}
	pthread_mutex_lock(&ctx->lock);
	if (num < ctx->qp_tab_size)
		ctx->qp_tab[num] = qp;
	pthread_mutex_unlock(&ctx->lock);
	return &qp->qp;
}

XV_EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd,
				       struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex a;
	struct ibv_qp *qp;

	if (!pd || !attr)
		return xv_null(EINVAL, "ibv_create_qp: NULL argument");
	memset(&a, 0, sizeof(a));
	memcpy(&a, attr, sizeof(*attr));
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	a.pd = pd;
	qp = xv_create_qp_ex(pd->context, &a);
	if (qp)
		attr->cap = a.cap;
	return qp;
}

XV_EXPORT int ibv_destroy_qp(struct ibv_qp *q)
{
	struct xv_qp *qp = q ? xv_qp(q) : NULL;
	struct xv_context *ctx;
	uint32_t i;

	if (!qp)
		return EINVAL;
	ctx = qp->ctx;
	/* Out of the table first: completions still in CQs are dropped. */
	pthread_mutex_lock(&ctx->lock);
	if (q->qp_num < ctx->qp_tab_size && ctx->qp_tab[q->qp_num] == qp)
		ctx->qp_tab[q->qp_num] = NULL;
	pthread_mutex_unlock(&ctx->lock);
	/* An SRQ (its thread, a post) must not lend to or take back from a QP
	 * the library is about to free. */
	if (qp->srq)
		xv_srq_qp_leaving(qp);
	/* The library logs why if it fails; the QP is gone for the
	 * application either way (as rdma-core's after a failed destroy). */
	xroce_destroy_qp(qp->xqp);
	if (qp->srq)
		xv_srq_detach(qp->srq, qp);
	xv_async_forget(ctx, q);
	pthread_mutex_lock(&q->mutex);
	while (q->events_completed != qp->events_delivered)
		pthread_cond_wait(&q->cond, &q->mutex);
	pthread_mutex_unlock(&q->mutex);
	for (i = qp->rq_done; i != qp->rq_tail; i++) {
		struct xv_rwr *r = &qp->rq[i & (qp->rq_size - 1)];

		if (r->bounce_mr)
			xroce_dereg_mr(r->bounce_mr);
		if (r->bounce)
			xroce_mem_free(ctx->xd, r->bounce);
	}
	pthread_mutex_destroy(&qp->lock);
	free(qp->rq);
	free(qp);
	return 0;
}

XV_EXPORT int ibv_query_qp(struct ibv_qp *q, struct ibv_qp_attr *attr,
			   int mask, struct ibv_qp_init_attr *init)
{
	struct xv_qp *qp = q ? xv_qp(q) : NULL;

	if (!qp || !attr || !init)
		return EINVAL;
	(void)mask; /* everything is known: all of it is returned */
	if (xroce_qp_state(qp->xqp) == XROCE_QPS_ERR && q->state != IBV_QPS_RESET) {
		q->state = IBV_QPS_ERR;
		qp->attr.qp_state = IBV_QPS_ERR;
	}
	*attr = qp->attr;
	attr->cur_qp_state = qp->attr.qp_state;
	attr->cap = qp->cap;
	memset(init, 0, sizeof(*init));
	init->qp_context = q->qp_context;
	init->send_cq = q->send_cq;
	init->recv_cq = q->recv_cq;
	init->srq = q->srq;
	init->cap = qp->cap;
	init->qp_type = q->qp_type;
	init->sq_sig_all = qp->sig_all;
	return 0;
}

XV_EXPORT struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	/* QPs are never created with the ibv_wr_* send API (EOPNOTSUPP). */
	(void)qp;
	return NULL;
}
