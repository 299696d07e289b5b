// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Send completions: work requests complete in order within a stream and
 * independently across streams, once every packet is acknowledged (and a
 * READ's answer has landed); a request the peer refused fails the QP.
 */
#include <string.h>

#include "complete.h"
#include "cq.h"
#include "qp_state.h"
#include "stream.h"

/* A work request's completion, if it needs one (signaled, or an error). */
static int complete_wr(struct xroce_qp *qp, struct xr_swr *w)
{
	struct xroce_wc wc;

	if (w->kind == XR_WK_INTERNAL || (!w->signaled && !w->failed))
		return 0;
	memset(&wc, 0, sizeof(wc));
	wc.wr_id = w->wr_id;
	wc.status = w->failed ? (enum xroce_wc_status)w->status : XROCE_WC_SUCCESS;
	wc.qp_num = qp->conn_id;
	wc.stream = w->stream;
	switch (w->opcode) {
	case XR_OP_SEND:
	case XR_OP_SEND_IMM:
		wc.opcode = XROCE_WC_SEND;
		wc.byte_len = w->len;
		break;
	case XR_OP_READ_REQ:
		wc.opcode = XROCE_WC_RDMA_READ;
		wc.byte_len = w->read_len == UINT32_MAX ? 0 : w->read_len;
		break;
	default:
		wc.opcode = XROCE_WC_RDMA_WRITE;
		wc.byte_len = w->len;
		break;
	}
	return xr_cq_push_msg(qp->send_cq, &wc, w->msg_id);
}

void xr_qp_complete(struct xroce_qp *qp)
{
	/* Streams that have an earlier work request still outstanding. */
	uint64_t blocked[XROCE_MAX_STREAMS / 64];
	uint32_t i;

	if (!qp->complete_dirty)
		return;
	qp->complete_dirty = false;
	xr_qp_deliver(qp);
	memset(blocked, 0, sizeof(blocked));
	for (i = qp->sq_head; i != qp->sq_hi; i++) {
		struct xr_swr *w = xr_swr_at(qp, i);
		uint64_t bit = 1ull << (w->stream % 64);
		uint64_t *b = &blocked[w->stream / 64];

		if (w->done)
			continue;
		if (w->failed) {
			uint32_t j;

			/* In order within its stream, then the connection fails
			 * (as an ibverbs RC QP would): this request alone
			 * carries the error; everything else outstanding, even
			 * an earlier request of another stream or a later one
			 * that failed too, completes as flushed. */
			if (*b & bit)
				continue;
			for (j = qp->sq_head; j != qp->sq_tail; j++)
				if (xr_swr_at(qp, j) != w)
					xr_swr_at(qp, j)->failed = 0;
			xr_qp_fail(qp, XROCE_WC_WR_FLUSH_ERR,
				   "the peer refused a work request");
			return;
		}
		if (!(*b & bit) && w->nacked >= w->npkts &&
		    (w->kind != XR_WK_READ || w->resp_done)) {
			if (complete_wr(qp, w)) {
				qp->complete_dirty = true; /* CQ full: retry later */
				*b |= bit;
				continue;
			}
			w->done = 1;
			xr_qp_release_wr(qp, w);
			if (w->kind != XR_WK_INTERNAL)
				qp->st.wr_completed++;
			continue;
		}
		*b |= bit;
	}
	while (qp->sq_head != qp->sq_seg && xr_swr_at(qp, qp->sq_head)->done)
		qp->sq_head++;
}
