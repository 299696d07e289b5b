// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ibv_post_send and ibv_post_recv.
 *
 * Sends map one to one onto xroce work requests on stream 0 (ibverbs' one
 * ordered queue): WRITE, WRITE_WITH_IMM, SEND, SEND_WITH_IMM, READ, inline,
 * signaled or not (sq_sig_all), up to 16 scatter-gather entries.  The
 * immediate is big-endian in ibverbs, host order in xroce.  A request
 * naming memory outside its PD's regions completes with
 * IBV_WC_LOC_PROT_ERR and moves the QP to the error state, as on a NIC;
 * work posted to a QP in error completes as IBV_WC_WR_FLUSH_ERR.
 *
 * Receives go to a ring here, and from it to the library, which holds at
 * most XROCE_MAX_RECV_PER_STREAM of them at once (a SEND finding none is
 * refused and retried: receiver not ready); the ring is topped up as
 * receives complete.  A receive of several entries lands in a bounce
 * buffer of device memory and is copied out when it completes.  A QP on a
 * shared receive queue gets its receives lent by the SRQ (srq.c) into
 * the same ring.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xv.h"

static void flush_wc(struct xv_cq *cq, uint64_t wr_id, uint32_t qp_num,
		     enum ibv_wc_opcode op, enum ibv_wc_status st)
{
	struct ibv_wc wc;

	memset(&wc, 0, sizeof(wc));
	wc.wr_id = wr_id;
	wc.status = st;
	wc.opcode = op;
	wc.qp_num = qp_num;
	xv_cq_soft(cq, &wc);
}

static enum ibv_wc_opcode send_wc_opcode(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_RDMA_READ: return IBV_WC_RDMA_READ;
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM: return IBV_WC_SEND;
	default: return IBV_WC_RDMA_WRITE;
	}
}

/* Check and convert one request; a positive errno for the caller, or -1
 * with *st set when it must complete with an error instead. */
static int convert(struct xv_qp *qp, const struct ibv_send_wr *wr,
		   struct xroce_send_wr *x, struct xroce_sge *sg, int *st)
{
	struct xv_pd *pd = xv_pd(qp->qp.pd);
	uint64_t total = 0;
	int i;

	memset(x, 0, sizeof(*x));
	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE: x->opcode = XROCE_WR_RDMA_WRITE; break;
	case IBV_WR_RDMA_WRITE_WITH_IMM: x->opcode = XROCE_WR_RDMA_WRITE_WITH_IMM; break;
	case IBV_WR_SEND: x->opcode = XROCE_WR_SEND; break;
	case IBV_WR_SEND_WITH_IMM: x->opcode = XROCE_WR_SEND_WITH_IMM; break;
	case IBV_WR_RDMA_READ: x->opcode = XROCE_WR_RDMA_READ; break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_LOCAL_INV:
	case IBV_WR_BIND_MW:
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_TSO:
	case IBV_WR_DRIVER1:
		return xv_fail(EOPNOTSUPP, "ibv_post_send: opcode %d: xroce has no "
			       "atomics, memory windows, invalidation or TSO",
			       wr->opcode);
	default:
		return xv_fail(EINVAL, "ibv_post_send: unknown opcode %d", wr->opcode);
	}
	if (wr->num_sge < 0 || wr->num_sge > (int)qp->cap.max_send_sge ||
	    (wr->num_sge && !wr->sg_list))
		return xv_fail(EINVAL, "ibv_post_send: num_sge %d (the QP has %u)",
			       wr->num_sge, qp->cap.max_send_sge);
	if (wr->send_flags & ~(unsigned int)(IBV_SEND_FENCE | IBV_SEND_SIGNALED |
					     IBV_SEND_SOLICITED | IBV_SEND_INLINE))
		return xv_fail(EINVAL, "ibv_post_send: send_flags %#x", wr->send_flags);
	if (wr->opcode == IBV_WR_RDMA_READ) {
		if (wr->num_sge != 1)
			return xv_fail(EINVAL, "ibv_post_send: a READ takes one "
				       "scatter entry (max_sge_rd is 1), not %d",
				       wr->num_sge);
		if (wr->send_flags & IBV_SEND_INLINE)
			return xv_fail(EINVAL, "ibv_post_send: an inline READ");
	}
	for (i = 0; i < wr->num_sge; i++)
		total += wr->sg_list[i].length;
	if (wr->send_flags & IBV_SEND_INLINE) {
		if (total > qp->cap.max_inline_data)
			return xv_fail(EINVAL, "ibv_post_send: %llu inline bytes (the "
				       "QP has %u)", (unsigned long long)total,
				       qp->cap.max_inline_data);
		x->send_flags |= XROCE_SEND_INLINE;
	} else {
		for (i = 0; i < wr->num_sge; i++) {
			const struct ibv_sge *g = &wr->sg_list[i];

			if (g->length && xv_check_sge(pd, g->lkey, g->addr, g->length,
						      wr->opcode == IBV_WR_RDMA_READ)) {
				*st = IBV_WC_LOC_PROT_ERR;
				xv_log("ibv_post_send: work request %llu: [%#llx, +%u) is "
				       "not in a region of the QP's PD with lkey %#x",
				       (unsigned long long)wr->wr_id,
				       (unsigned long long)g->addr, g->length, g->lkey);
				return -1;
			}
		}
	}
	if (total > XROCE_MAX_MSG_SIZE) {
		*st = IBV_WC_LOC_LEN_ERR;
		return -1;
	}
	for (i = 0; i < wr->num_sge; i++) {
		sg[i].addr = wr->sg_list[i].addr;
		sg[i].length = wr->sg_list[i].length;
		sg[i].lkey = wr->sg_list[i].lkey;
	}
	x->wr_id = wr->wr_id;
	x->sg_list = sg;
	x->num_sge = wr->num_sge;
	if ((wr->send_flags & IBV_SEND_SIGNALED) || qp->sig_all)
		x->send_flags |= XROCE_SEND_SIGNALED;
	if (wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM ||
	    wr->opcode == IBV_WR_SEND_WITH_IMM)
		x->imm_data = be32toh(wr->imm_data);
	x->rdma.remote_addr = wr->wr.rdma.remote_addr;
	x->rdma.rkey = wr->wr.rdma.rkey;
	return 0;
}

int xv_post_send(struct ibv_qp *q, struct ibv_send_wr *wr,
		 struct ibv_send_wr **bad)
{
	struct xv_qp *qp = xv_qp(q);
	struct xv_cq *scq = xv_cq(q->send_cq);
	int rc = 0;

	if (q->state != IBV_QPS_RTS && q->state != IBV_QPS_ERR) {
		if (bad)
			*bad = wr;
		return xv_fail(EINVAL, "ibv_post_send: QP %u is not ready to send "
			       "(state %d)", q->qp_num, q->state);
	}
	for (; wr; wr = wr->next) {
		struct xroce_sge sg[XV_MAX_SGE];
		struct xroce_send_wr x;
		int st = IBV_WC_SUCCESS;

		if (__atomic_load_n(&qp->errored, __ATOMIC_ACQUIRE)) {
			flush_wc(scq, wr->wr_id, q->qp_num, send_wc_opcode(wr->opcode),
				 IBV_WC_WR_FLUSH_ERR);
			continue;
		}
		rc = convert(qp, wr, &x, sg, &st);
		if (rc > 0)
			break;
		if (rc < 0) {
			/* Completes with an error; the QP fails, as a NIC's. */
			rc = 0;
			xroce_qp_to_error(qp->xqp);
			xv_qp_mark_error(qp);
			flush_wc(scq, wr->wr_id, q->qp_num, send_wc_opcode(wr->opcode),
				 (enum ibv_wc_status)st);
			continue;
		}
		rc = -xroce_post_send(qp->xqp, &x, NULL);
		if (rc == ENOMEM) {
			xv_log("ibv_post_send: QP %u: send queue full", q->qp_num);
			break;
		}
		if (rc && xroce_qp_state(qp->xqp) == XROCE_QPS_ERR) {
			/* Failed meanwhile (peer silence, a refusal). */
			rc = 0;
			xv_qp_mark_error(qp);
			flush_wc(scq, wr->wr_id, q->qp_num, send_wc_opcode(wr->opcode),
				 IBV_WC_WR_FLUSH_ERR);
			continue;
		}
		if (rc)
			break;
	}
	if (bad)
		*bad = rc ? wr : NULL;
	return rc;
}

/* ---- receives ------------------------------------------------------------- */

void xv_rwr_release(struct xv_context *ctx, struct xv_rwr *r)
{
	if (r->bounce_mr)
		xroce_dereg_mr(r->bounce_mr);
	if (r->bounce)
		xroce_mem_free(ctx->xd, r->bounce);
	r->bounce_mr = NULL;
	r->bounce = NULL;
}

void xv_rq_top_up(struct xv_qp *qp)
{
	while (qp->rq_sent != qp->rq_tail &&
	       qp->rq_sent - qp->rq_done < XROCE_MAX_RECV_PER_STREAM) {
		struct xv_rwr *r = &qp->rq[qp->rq_sent & (qp->rq_size - 1)];
		struct xroce_sge sge;
		struct xroce_recv_wr x = { .wr_id = qp->rq_sent, .sg_list = &sge };
		int rc;

		if (r->bounce) {
			sge.addr = (uint64_t)(uintptr_t)r->bounce;
			sge.length = r->len;
			sge.lkey = r->bounce_mr->lkey;
			x.num_sge = 1;
		} else if (r->num_sge) {
			sge.addr = r->sge[0].addr;
			sge.length = r->sge[0].length;
			sge.lkey = r->sge[0].lkey;
			x.num_sge = 1;
		}
		rc = xroce_post_recv(qp->xqp, &x, NULL);
		if (rc) {
			/* Checked at post time, so the QP failed meanwhile. */
			qp->errored = true;
			return;
		}
		qp->rq_sent++;
	}
}

void xv_rq_complete(struct xv_qp *qp, uint64_t xr_id, struct ibv_wc *wc)
{
	uint32_t idx = (uint32_t)xr_id;
	struct xv_rwr *r = &qp->rq[idx & (qp->rq_size - 1)];

	if (idx != qp->rq_done) {
		/* The library completes a stream's receives in order. */
		xv_log("QP %u: receive %u completed, expected %u", qp->qp.qp_num,
		       idx, qp->rq_done);
	}
	wc->wr_id = r->wr_id;
	if (r->bounce && wc->status == IBV_WC_SUCCESS &&
	    wc->opcode == IBV_WC_RECV) {
		uint32_t left = wc->byte_len, off = 0;
		int i;

		for (i = 0; i < r->num_sge && left; i++) {
			uint32_t n = r->sge[i].length < left ? r->sge[i].length : left;

			memcpy((void *)(uintptr_t)r->sge[i].addr,
			       (char *)r->bounce + off, n);
			off += n;
			left -= n;
		}
	}
	xv_rwr_release(qp->ctx, r);
	qp->rq_done = idx + 1;
}

void xv_rq_flush_backlog(struct xv_qp *qp)
{
	struct xv_cq *rcq = xv_cq(qp->qp.recv_cq);

	/* After the library's own flushes of what it holds. */
	if (qp->rq_sent != qp->rq_done)
		return;
	while (qp->rq_sent != qp->rq_tail) {
		struct xv_rwr *r = &qp->rq[qp->rq_sent & (qp->rq_size - 1)];

		flush_wc(rcq, r->wr_id, qp->qp.qp_num, IBV_WC_RECV,
			 IBV_WC_WR_FLUSH_ERR);
		xv_rwr_release(qp->ctx, r);
		qp->rq_sent++;
	}
	qp->rq_done = qp->rq_sent;
}

int xv_rwr_fill(struct xv_context *ctx, struct xv_pd *pd, struct xv_rwr *r,
		const struct ibv_recv_wr *wr)
{
	uint64_t total = 0;
	int i, rc;

	for (i = 0; i < wr->num_sge; i++) {
		const struct ibv_sge *g = &wr->sg_list[i];

		if (g->length && xv_check_sge(pd, g->lkey, g->addr, g->length, true))
			return -1;
		total += g->length;
	}
	if (total > UINT32_MAX)
		return -1;
	memset(r, 0, sizeof(*r));
	r->wr_id = wr->wr_id;
	r->num_sge = wr->num_sge;
	memcpy(r->sge, wr->sg_list, (size_t)wr->num_sge * sizeof(r->sge[0]));
	r->len = (uint32_t)total;
	if (wr->num_sge <= 1 || !total)
		return 0;
	r->bounce = xroce_mem_alloc(ctx->xd, total, 64);
	if (!r->bounce)
		return xv_fail(ENOMEM, "ibv_post_recv: no device memory for a "
			       "%llu-byte bounce buffer", (unsigned long long)total);
	rc = xroce_reg_mr(pd->xpd, r->bounce, total, XROCE_ACCESS_LOCAL_WRITE,
			  &r->bounce_mr);
	if (rc) {
		xv_rwr_release(ctx, r);
		return xv_lib_err(rc);
	}
	return 0;
}

/* One receive into the ring: a positive errno, or -1 if it must complete
 * with a local protection error. */
static int ring_add(struct xv_qp *qp, const struct ibv_recv_wr *wr)
{
	int rc;

	if (wr->num_sge < 0 || wr->num_sge > (int)qp->cap.max_recv_sge ||
	    (wr->num_sge && !wr->sg_list))
		return xv_fail(EINVAL, "ibv_post_recv: num_sge %d (the QP has %u)",
			       wr->num_sge, qp->cap.max_recv_sge);
	if (qp->rq_tail - qp->rq_done >= qp->rq_size)
		return xv_fail(ENOMEM, "ibv_post_recv: QP %u: receive queue full "
			       "(%u)", qp->qp.qp_num, qp->rq_size);
	rc = xv_rwr_fill(qp->ctx, xv_pd(qp->qp.pd),
			 &qp->rq[qp->rq_tail & (qp->rq_size - 1)], wr);
	if (rc)
		return rc;
	qp->rq_tail++;
	return 0;
}

int xv_post_recv(struct ibv_qp *q, struct ibv_recv_wr *wr,
		 struct ibv_recv_wr **bad)
{
	struct xv_qp *qp = xv_qp(q);
	struct xv_cq *rcq = xv_cq(q->recv_cq);
	int rc = 0;

	if (q->state == IBV_QPS_RESET || qp->srq) {
		if (bad)
			*bad = wr;
		return xv_fail(EINVAL, "ibv_post_recv: QP %u %s", q->qp_num,
			       qp->srq ? "takes its receives from its shared "
			       "receive queue (ibv_post_srq_recv)" : "is in RESET");
	}
	pthread_mutex_lock(&qp->lock);
	for (; wr; wr = wr->next) {
		if (qp->errored || xroce_qp_state(qp->xqp) == XROCE_QPS_ERR) {
			qp->errored = true;
			flush_wc(rcq, wr->wr_id, q->qp_num, IBV_WC_RECV,
				 IBV_WC_WR_FLUSH_ERR);
			continue;
		}
		rc = ring_add(qp, wr);
		if (rc > 0)
			break;
		if (rc < 0) {
			rc = 0;
			xv_log("ibv_post_recv: work request %llu names memory outside "
			       "the QP's regions", (unsigned long long)wr->wr_id);
			pthread_mutex_unlock(&qp->lock);
			xroce_qp_to_error(qp->xqp);
			pthread_mutex_lock(&qp->lock);
			qp->errored = true;
			flush_wc(rcq, wr->wr_id, q->qp_num, IBV_WC_RECV,
				 IBV_WC_LOC_PROT_ERR);
			continue;
		}
	}
	if (qp->errored)
		xv_rq_flush_backlog(qp);
	else
		xv_rq_top_up(qp);
	pthread_mutex_unlock(&qp->lock);
	if (bad)
		*bad = rc ? wr : NULL;
	return rc;
}
