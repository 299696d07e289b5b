// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One xroce work completion as a libfabric CQ entry.  wr_id names the
 * operation (struct xrf_op): its context, its completion flags, whether an
 * entry is due (FI_SELECTIVE_COMPLETION, inject) and where data that
 * landed in a bounce buffer belongs.  Errors keep the context (ofi_rxm
 * finds its buffers through it) and map libxroce's statuses to the
 * libfabric errors their ibverbs twins map to.
 */
#include <string.h>

#include "ofi.h"

#include <rdma/fi_tagged.h>

static int wc_err(enum xroce_wc_status st)
{
	switch (st) {
	case XROCE_WC_LOC_LEN_ERR:
		return FI_ETRUNC;
	case XROCE_WC_LOC_PROT_ERR:
	case XROCE_WC_REM_ACCESS_ERR:
		return FI_EACCES;
	case XROCE_WC_WR_FLUSH_ERR:
		return FI_ECANCELED;
	case XROCE_WC_REM_INV_REQ_ERR:
		return FI_EREMOTEIO;
	case XROCE_WC_RETRY_EXC_ERR:
		return FI_ETIMEDOUT;
	case XROCE_WC_RNR_RETRY_EXC_ERR:
		return FI_ENORX;
	default:
		return FI_EIO;
	}
}

const char *xrf_wc_strerror(int prov_errno)
{
	return xroce_wc_status_str((enum xroce_wc_status)prov_errno);
}

/* Data that landed in op's bounce buffer, to where it belongs. */
static void copy_out(struct xrf_op *op, size_t len)
{
	const uint8_t *src = op->bounce->addr;
	size_t i;

	for (i = 0; i < op->iov_count && len; i++) {
		size_t k = op->iov[i].iov_len < len ? op->iov[i].iov_len : len;

		memcpy(op->iov[i].iov_base, src, k);
		src += k;
		len -= k;
	}
}

static void fill(const struct xrf_cq *cq, const struct xrf_op *op,
		 const struct xroce_wc *wc, void *out)
{
	struct fi_cq_tagged_entry e = { .op_context = op->context, .flags = op->flags };

	if (wc->opcode == XROCE_WC_RECV_RDMA_WITH_IMM) {
		/* FI_RX_CQ_DATA: a WRITE's immediate consumed this receive */
		e.flags = FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA;
		e.data = wc->imm_data;
	} else if (wc->opcode == XROCE_WC_RECV) {
		e.len = wc->byte_len;
		e.buf = op->buf;
		if (wc->wc_flags & XROCE_WC_WITH_IMM) {
			e.flags |= FI_REMOTE_CQ_DATA;
			e.data = wc->imm_data;
		}
	}
	memcpy(out, &e, cq->entry_size);
}

static void release(struct xrf_cq *cq, struct xrf_op *op)
{
	xrf_ep_done(cq->dom, op);
	xrf_op_put(cq->dom, op);
}

bool xrf_cqe_silent(struct xrf_cq *cq, const struct xroce_wc *wc)
{
	struct xrf_op *op = (struct xrf_op *)(uintptr_t)wc->wr_id;

	if (op && (wc->status == XROCE_WC_SUCCESS ? op->report : op->report_err))
		return false;
	if (op && wc->status == XROCE_WC_SUCCESS && op->bounce && op->iov_count)
		copy_out(op, wc->opcode == XROCE_WC_RECV ? wc->byte_len : op->len);
	if (op)
		release(cq, op);
	return true;
}

int xrf_cqe_convert(struct xrf_cq *cq, const struct xroce_wc *wc, void *out)
{
	struct xrf_op *op = (struct xrf_op *)(uintptr_t)wc->wr_id;

	if (!op)
		return 0;
	if (wc->status == XROCE_WC_SUCCESS) {
		if (op->bounce && op->iov_count)
			copy_out(op, wc->opcode == XROCE_WC_RECV ? wc->byte_len : op->len);
		if (!op->report) {
			release(cq, op);
			return 0;
		}
		fill(cq, op, wc, out);
		release(cq, op);
		return 1;
	}
	if (!op->report_err) {
		release(cq, op);
		return 0;
	}
	memset(&cq->err, 0, sizeof(cq->err));
	cq->err.op_context = op->context;
	cq->err.flags = op->flags;
	cq->err.buf = op->iov_count ? op->buf : NULL;
	cq->err.err = wc_err(wc->status);
	cq->err.prov_errno = (int)wc->status;
	release(cq, op);
	return -FI_EAVAIL;
}
