// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Completion queues.  An ibv_cq wraps an xroce CQ (shared by any QPs, as
 * in ibverbs).  poll_cq turns xroce completions into ibv_wc: immediate
 * data back to network order (ibverbs carries it big-endian, xroce in host
 * order), receive completions to the application's wr_id (the library
 * knows the receive ring's index), bounce buffers copied out.  Completions
 * this layer makes itself (flushes of work posted to a QP in error) come
 * first.  Completions of QPs already destroyed are dropped, as NICs clean
 * them from the CQ.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xv.h"

#define XV_POLL_CHUNK 32

static void notified(struct xroce_cq *xcq, void *arg)
{
	struct xv_cq *cq = arg;

	(void)xcq;
	__atomic_store_n(&cq->armed, false, __ATOMIC_RELEASE);
	if (cq->chan)
		xv_channel_fire(cq->chan, cq);
}

XV_EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *c, int cqe,
				       void *cq_context,
				       struct ibv_comp_channel *channel,
				       int comp_vector)
{
	static uint32_t handles;
	struct xv_cq *cq;
	int rc, size = 16;

	if (!c)
		return xv_null(EINVAL, "ibv_create_cq: NULL context");
	if (cqe < 1 || cqe > XV_MAX_CQE)
		return xv_null(EINVAL, "ibv_create_cq: cqe %d (1..%d)", cqe, XV_MAX_CQE);
	if (comp_vector < 0 || comp_vector >= c->num_comp_vectors)
		return xv_null(EINVAL, "ibv_create_cq: completion vector %d (the "
			       "device has %d)", comp_vector, c->num_comp_vectors);
	if (channel && channel->context != c)
		return xv_null(EINVAL, "ibv_create_cq: channel of another context");
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return xv_null(ENOMEM, "ibv_create_cq: out of memory");
	rc = xroce_create_cq(xv_ctx(c)->xd, cqe, &cq->xcq);
	if (rc) {
		free(cq);
		return xv_lib_null(rc);
	}
	while (size < cqe)
		size <<= 1;
	cq->ctx = xv_ctx(c);
	cq->chan = (struct xv_channel *)channel;
	pthread_mutex_init(&cq->soft_lock, NULL);
	xroce_cq_set_notify(cq->xcq, notified, cq);
	cq->cq.context = c;
	cq->cq.channel = channel;
	cq->cq.cq_context = cq_context;
	cq->cq.handle = __atomic_add_fetch(&handles, 1, __ATOMIC_RELAXED);
	cq->cq.cqe = size;
	pthread_mutex_init(&cq->cq.mutex, NULL);
	pthread_cond_init(&cq->cq.cond, NULL);
	if (channel)
		__atomic_add_fetch(&channel->refcnt, 1, __ATOMIC_RELAXED);
	return &cq->cq;
}

XV_EXPORT int ibv_destroy_cq(struct ibv_cq *c)
{
	struct xv_cq *cq = c ? xv_cq(c) : NULL;
	int rc;

	if (!cq)
		return EINVAL;
	rc = xroce_destroy_cq(cq->xcq);
	if (rc)
		return xv_lib_err(rc);
	if (cq->chan) {
		xv_channel_forget(cq->chan, cq);
		__atomic_sub_fetch(&cq->chan->ch.refcnt, 1, __ATOMIC_RELAXED);
	}
	/* Every event handed out must be acknowledged first (as rdma-core). */
	pthread_mutex_lock(&c->mutex);
	while (c->comp_events_completed != cq->events)
		pthread_cond_wait(&c->cond, &c->mutex);
	pthread_mutex_unlock(&c->mutex);
	pthread_mutex_destroy(&cq->soft_lock);
	free(cq->soft);
	free(cq);
	return 0;
}

XV_EXPORT int ibv_resize_cq(struct ibv_cq *cq, int cqe)
{
	(void)cq;
	return xv_fail(EOPNOTSUPP, "ibv_resize_cq(%d): xroce CQs keep their size "
		       "(a full CQ holds completions back, nothing is lost)", cqe);
}

void xv_cq_soft(struct xv_cq *cq, const struct ibv_wc *wc)
{
	pthread_mutex_lock(&cq->soft_lock);
	if (cq->soft_tail - cq->soft_head == cq->soft_cap) {
		uint32_t cap = cq->soft_cap ? cq->soft_cap * 2 : 64, i;
		struct ibv_wc *n = malloc(cap * sizeof(*n));

		if (!n) {
			pthread_mutex_unlock(&cq->soft_lock);
			xv_log("a flush completion was lost: out of memory");
			return;
		}
		for (i = 0; i < cq->soft_tail - cq->soft_head; i++)
			n[i] = cq->soft[(cq->soft_head + i) % cq->soft_cap];
		free(cq->soft);
		cq->soft = n;
		cq->soft_tail -= cq->soft_head;
		cq->soft_head = 0;
		cq->soft_cap = cap;
	}
	cq->soft[cq->soft_tail++ % cq->soft_cap] = *wc;
	pthread_mutex_unlock(&cq->soft_lock);
	if (__atomic_exchange_n(&cq->armed, false, __ATOMIC_ACQ_REL) && cq->chan)
		xv_channel_fire(cq->chan, cq);
}

static enum ibv_wc_opcode wc_opcode(enum xroce_wc_opcode op)
{
	switch (op) {
	case XROCE_WC_RDMA_WRITE: return IBV_WC_RDMA_WRITE;
	case XROCE_WC_SEND: return IBV_WC_SEND;
	case XROCE_WC_RDMA_READ: return IBV_WC_RDMA_READ;
	case XROCE_WC_RECV_RDMA_WITH_IMM: return IBV_WC_RECV_RDMA_WITH_IMM;
	default: return IBV_WC_RECV;
	}
}

static enum ibv_wc_status wc_status(enum xroce_wc_status st)
{
	switch (st) {
	case XROCE_WC_SUCCESS: return IBV_WC_SUCCESS;
	case XROCE_WC_LOC_LEN_ERR: return IBV_WC_LOC_LEN_ERR;
	case XROCE_WC_LOC_PROT_ERR: return IBV_WC_LOC_PROT_ERR;
	case XROCE_WC_WR_FLUSH_ERR: return IBV_WC_WR_FLUSH_ERR;
	case XROCE_WC_REM_ACCESS_ERR: return IBV_WC_REM_ACCESS_ERR;
	case XROCE_WC_REM_INV_REQ_ERR: return IBV_WC_REM_INV_REQ_ERR;
	case XROCE_WC_RETRY_EXC_ERR: return IBV_WC_RETRY_EXC_ERR;
	case XROCE_WC_RNR_RETRY_EXC_ERR: return IBV_WC_RNR_RETRY_EXC_ERR;
	default: return IBV_WC_GENERAL_ERR;
	}
}

/* One library completion into *wc; 0 if it is to be dropped. */
static int translate(struct xv_cq *cq, const struct xroce_wc *x, struct ibv_wc *wc)
{
	struct xv_qp *qp = xv_qp_by_num(cq->ctx, x->qp_num);
	bool recv = x->opcode == XROCE_WC_RECV ||
		    x->opcode == XROCE_WC_RECV_RDMA_WITH_IMM;

	if (!qp)
		return 0; /* its QP was destroyed */
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = x->wr_id;
	wc->status = wc_status(x->status);
	wc->opcode = wc_opcode(x->opcode);
	wc->byte_len = x->byte_len;
	wc->qp_num = x->qp_num;
	wc->src_qp = qp->attr.dest_qp_num;
	if (x->wc_flags & XROCE_WC_WITH_IMM) {
		wc->wc_flags = IBV_WC_WITH_IMM;
		wc->imm_data = htobe32(x->imm_data);
	}
	if (recv && qp->srq) {
		return xv_srq_complete(qp, x->wr_id, wc);
	} else if (recv) {
		pthread_mutex_lock(&qp->lock);
		xv_rq_complete(qp, x->wr_id, wc);
		if (wc->status != IBV_WC_SUCCESS)
			qp->errored = true;
		if (qp->errored)
			xv_rq_flush_backlog(qp);
		else
			xv_rq_top_up(qp);
		pthread_mutex_unlock(&qp->lock);
	} else if (wc->status != IBV_WC_SUCCESS) {
		xv_qp_mark_error(qp);
	}
	return 1;
}

int xv_poll_cq(struct ibv_cq *c, int n, struct ibv_wc *wc)
{
	struct xv_cq *cq = xv_cq(c);
	struct xroce_wc x[XV_POLL_CHUNK];
	int k = 0;

	if (n < 0)
		return -1;
	if (cq->soft_tail != __atomic_load_n(&cq->soft_head, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&cq->soft_lock);
		while (k < n && cq->soft_head != cq->soft_tail)
			wc[k++] = cq->soft[cq->soft_head++ % cq->soft_cap];
		pthread_mutex_unlock(&cq->soft_lock);
	}
	while (k < n) {
		int want = n - k < XV_POLL_CHUNK ? n - k : XV_POLL_CHUNK;
		int m = xroce_poll_cq(cq->xcq, want, x), i;

		if (m < 0)
			return k ? k : -1;
		for (i = 0; i < m; i++)
			k += translate(cq, &x[i], &wc[k]);
		if (m < want)
			break;
	}
	return k;
}

int xv_req_notify_cq(struct ibv_cq *c, int solicited_only)
{
	struct xv_cq *cq = xv_cq(c);
	int rc;

	__atomic_store_n(&cq->armed, true, __ATOMIC_RELEASE);
	rc = xroce_req_notify_cq(cq->xcq, solicited_only);
	return rc ? xv_lib_err(rc) : 0;
}
