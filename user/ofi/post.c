// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What every data call shares.  A call becomes one xroce work request
 * (stream 0: libfabric's one ordered channel per endpoint) whose wr_id is
 * an operation of the domain.  Memory: entries in xroce regions are used
 * in place; small payloads go inline (copied by libxroce at post time);
 * anything else is gathered into, or later scattered out of, a bounce
 * buffer.  Queues are counted here so a full queue is -FI_EAGAIN, never a
 * libxroce error.
 */
#include <errno.h>
#include <string.h>

#include "ofi.h"

static size_t iov_total(const struct iovec *iov, size_t count)
{
	size_t i, t = 0;

	for (i = 0; i < count; i++)
		t += iov[i].iov_len;
	return t;
}

/* Every entry has an xroce region that covers it: SGEs in place. */
static bool direct_sges(const struct iovec *iov, void **desc, size_t count,
			struct xroce_sge *sge)
{
	size_t i;

	for (i = 0; i < count; i++) {
		struct xroce_mr *m = desc ? xrf_desc_xmr(desc[i], iov[i].iov_base,
							 iov[i].iov_len) : NULL;

		if (!m)
			return false;
		sge[i].addr = (uintptr_t)iov[i].iov_base;
		sge[i].length = (uint32_t)iov[i].iov_len;
		sge[i].lkey = m->lkey;
	}
	return true;
}

static int bounce(struct xrf_ep *ep, struct xrf_op *op, size_t total,
		  struct xroce_sge *sge)
{
	int rc;

	pthread_mutex_lock(&ep->dom->lock);
	rc = xrf_bounce_get(ep->dom, total, &op->bounce);
	pthread_mutex_unlock(&ep->dom->lock);
	if (rc)
		return rc;
	sge->addr = (uintptr_t)op->bounce->addr;
	sge->length = (uint32_t)total;
	sge->lkey = op->bounce->lkey;
	return 0;
}

static void gather(uint8_t *dst, const struct iovec *iov, size_t count)
{
	size_t i;

	for (i = 0; i < count; i++) {
		memcpy(dst, iov[i].iov_base, iov[i].iov_len);
		dst += iov[i].iov_len;
	}
}

/* Where the payload of a send-side request comes from or (READ) goes. */
static int tx_memory(struct xrf_ep *ep, const struct xrf_tx *tx, struct xrf_op *op,
		     size_t total, struct xroce_send_wr *wr, struct xroce_sge *sge)
{
	bool inject = tx->flags & FI_INJECT;
	size_t i;
	int rc;

	wr->sg_list = sge;
	if (tx->opcode == XROCE_WR_RDMA_READ) {
		wr->num_sge = 1;
		if (tx->count == 1 && direct_sges(tx->iov, tx->desc, 1, sge))
			return 0;
		rc = bounce(ep, op, total, sge);
		if (tx->count)
			memcpy(op->iov, tx->iov, tx->count * sizeof(*tx->iov));
		op->iov_count = tx->count;
		return rc;
	}
	if (!inject && direct_sges(tx->iov, tx->desc, tx->count, sge)) {
		wr->num_sge = (int)tx->count;
		return 0;
	}
	if (total <= XROCE_MAX_INLINE) {
		for (i = 0; i < tx->count; i++) {
			sge[i].addr = (uintptr_t)tx->iov[i].iov_base;
			sge[i].length = (uint32_t)tx->iov[i].iov_len;
			sge[i].lkey = 0;
		}
		wr->num_sge = (int)tx->count;
		wr->send_flags |= XROCE_SEND_INLINE;
		return 0;
	}
	rc = bounce(ep, op, total, sge);
	if (rc)
		return rc;
	gather(op->bounce->addr, tx->iov, tx->count);
	wr->num_sge = 1;
	return 0;
}

static enum xroce_wr_opcode with_imm(enum xroce_wr_opcode op)
{
	return op == XROCE_WR_SEND ? XROCE_WR_SEND_WITH_IMM :
	       op == XROCE_WR_RDMA_WRITE ? XROCE_WR_RDMA_WRITE_WITH_IMM : op;
}

static int tx_check(const struct xrf_ep *ep, const struct xrf_tx *tx, size_t total)
{
	if ((!tx->iov && tx->count) || tx->count > XROCE_MAX_SGE ||
	    (tx->opcode == XROCE_WR_RDMA_READ && tx->count > XRF_IOV_LIMIT))
		return -FI_EINVAL;
	if (total > XROCE_MAX_MSG_SIZE)
		return -FI_EMSGSIZE;
	if ((tx->flags & FI_INJECT) && total > XRF_INJECT_SIZE)
		return -FI_EINVAL;
	if (tx->rkey > UINT32_MAX)
		return -FI_EINVAL;
	if ((tx->flags & FI_REMOTE_CQ_DATA) && tx->data > UINT32_MAX)
		return -FI_EINVAL; /* cq_data_size is 4 */
	if (tx->flags & (FI_FENCE | FI_MULTI_RECV | FI_PEEK | FI_CLAIM))
		return -FI_EBADFLAGS;
	return 0;
}

static void tx_op(const struct xrf_ep *ep, const struct xrf_tx *tx,
		  struct xrf_op *op, size_t total)
{
	op->context = tx->context;
	op->flags = tx->cflags;
	op->len = total;
	op->buf = tx->count ? tx->iov[0].iov_base : NULL;
	/* fi_inject: no completion at all, not even an error (no context
	 * to give it); FI_INJECT through sendmsg keeps its errors. */
	op->report = !(tx->flags & FI_INJECT) &&
		     ((tx->flags & FI_COMPLETION) || !ep->tx_selective);
	op->report_err = tx->context != NULL || !(tx->flags & FI_INJECT);
}

/* Under ep->lock: room in a queue that holds size requests, *posted of
 * them outstanding (a sweep of cq may complete some), and an operation for
 * the new one. */
static int take_slot(struct xrf_ep *ep, const uint32_t *posted, uint32_t size,
		     struct xrf_cq *cq, struct xrf_op **op)
{
	if (__atomic_load_n(posted, __ATOMIC_RELAXED) >= size)
		xrf_cq_sweep(cq);
	if (__atomic_load_n(posted, __ATOMIC_RELAXED) >= size)
		return -FI_EAGAIN;
	*op = xrf_op_get(ep->dom);
	return *op ? 0 : -FI_ENOMEM;
}

/* Under ep->lock: hands the request to libxroce (one of swr, rwr),
 * counted in *posted while libxroce has it. */
static int post_counted(struct xrf_ep *ep, struct xrf_op *op, uint32_t *posted,
			struct xroce_send_wr *swr, struct xroce_recv_wr *rwr)
{
	struct xroce_send_wr *bad_s;
	struct xroce_recv_wr *bad_r;
	int rc;

	op->ep = ep;
	__atomic_add_fetch(posted, 1, __ATOMIC_RELAXED);
	rc = swr ? xroce_post_send(ep->qp, swr, &bad_s) :
		   xroce_post_recv(ep->qp, rwr, &bad_r);
	if (rc) {
		__atomic_sub_fetch(posted, 1, __ATOMIC_RELAXED);
		op->ep = NULL;
	}
	return rc;
}

/* Drops ep->lock; a request that failed gives its operation back, and a
 * queue libxroce found full is -FI_EAGAIN to the application. */
static ssize_t post_done(struct xrf_ep *ep, struct xrf_op *op, int rc)
{
	pthread_mutex_unlock(&ep->lock);
	if (!rc)
		return 0;
	xrf_op_put(ep->dom, op);
	return rc == -ENOMEM ? -FI_EAGAIN : rc;
}

ssize_t xrf_post_tx(struct xrf_ep *ep, const struct xrf_tx *tx)
{
	struct xroce_send_wr wr = { .opcode = tx->opcode };
	struct xroce_sge sge[XROCE_MAX_SGE];
	size_t total = tx->iov ? iov_total(tx->iov, tx->count) : 0;
	enum xrf_ep_state st;
	struct xrf_op *op;
	int rc = tx_check(ep, tx, total);

	if (rc)
		return rc;
	pthread_mutex_lock(&ep->lock);
	st = __atomic_load_n(&ep->state, __ATOMIC_ACQUIRE);
	if (st != XRF_EP_CONNECTED) {
		pthread_mutex_unlock(&ep->lock);
		return st == XRF_EP_SHUTDOWN ? -FI_ECONNRESET : -FI_ENOTCONN;
	}
	rc = take_slot(ep, &ep->tx_posted, ep->tx_size,
		       ep->tx_cq ? ep->tx_cq : ep->rx_cq, &op);
	if (rc) {
		pthread_mutex_unlock(&ep->lock);
		return rc;
	}
	tx_op(ep, tx, op, total);
	wr.wr_id = (uintptr_t)op;
	wr.send_flags = XROCE_SEND_SIGNALED;
	wr.rdma.remote_addr = tx->raddr;
	wr.rdma.rkey = (uint32_t)tx->rkey;
	if (tx->flags & FI_REMOTE_CQ_DATA) {
		wr.opcode = with_imm(tx->opcode);
		wr.imm_data = (uint32_t)tx->data;
	}
	rc = tx_memory(ep, tx, op, total, &wr, sge);
	if (!rc)
		rc = post_counted(ep, op, &ep->tx_posted, &wr, NULL);
	return post_done(ep, op, rc);
}

ssize_t xrf_post_rx(struct xrf_ep *ep, const struct iovec *iov, void **desc,
		    size_t count, void *context, uint64_t flags)
{
	struct xroce_recv_wr wr = { .num_sge = count ? 1 : 0 };
	struct xroce_sge sge;
	struct xrf_op *op;
	size_t total;
	int rc = 0;

	if ((!iov && count) || count > XRF_IOV_LIMIT)
		return -FI_EINVAL;
	total = count ? iov_total(iov, count) : 0;
	if (total > XROCE_MAX_MSG_SIZE)
		return -FI_EINVAL;
	if (flags & ~(uint64_t)(FI_COMPLETION | FI_MORE))
		return -FI_EBADFLAGS;
	pthread_mutex_lock(&ep->lock);
	if (!ep->qp || __atomic_load_n(&ep->state, __ATOMIC_ACQUIRE) == XRF_EP_SHUTDOWN) {
		pthread_mutex_unlock(&ep->lock);
		return -FI_EOPBADSTATE;
	}
	rc = take_slot(ep, &ep->rx_posted, ep->rx_size,
		       ep->rx_cq ? ep->rx_cq : ep->tx_cq, &op);
	if (rc) {
		pthread_mutex_unlock(&ep->lock);
		return rc;
	}
	op->context = context;
	op->flags = FI_RECV | FI_MSG;
	op->buf = count ? iov[0].iov_base : NULL;
	op->len = total;
	op->report = (flags & FI_COMPLETION) || !ep->rx_selective;
	op->report_err = 1;
	if (count == 1 && direct_sges(iov, desc, 1, &sge)) {
		op->iov_count = 0;
	} else if (count) {
		rc = bounce(ep, op, total, &sge);
		memcpy(op->iov, iov, count * sizeof(*iov));
		op->iov_count = count;
	}
	wr.wr_id = (uintptr_t)op;
	wr.sg_list = &sge;
	if (!rc)
		rc = post_counted(ep, op, &ep->rx_posted, NULL, &wr);
	return post_done(ep, op, rc);
}

/* Under the domain lock: an endpoint being closed clears op->ep there. */
void xrf_ep_done(struct xrf_domain *dom, struct xrf_op *op)
{
	pthread_mutex_lock(&dom->lock);
	if (op->ep) {
		if (op->flags & FI_RECV)
			__atomic_sub_fetch(&op->ep->rx_posted, 1, __ATOMIC_RELAXED);
		else
			__atomic_sub_fetch(&op->ep->tx_posted, 1, __ATOMIC_RELAXED);
		op->ep = NULL;
	}
	pthread_mutex_unlock(&dom->lock);
}
