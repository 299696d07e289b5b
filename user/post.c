// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * xroce_post_send: check a work request completely (opcode, flags, stream,
 * every scatter-gather entry against the PD's regions, sizes), then queue
 * it.  Nothing is sent here beyond a progress round; packets are cut from
 * the request later, as windows allow (sender.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "internal.h"

/* Inline payloads live in a per-QP area of the memory map (allocated on
 * first use): slot i belongs to send-queue entry i. */
static int inline_area(struct xroce_qp *qp)
{
	uint64_t off;
	int rc;

	if (qp->inline_off)
		return 0;
	rc = xr_heap_alloc(&qp->dev->heap, (uint64_t)qp->sq_size * XROCE_MAX_INLINE,
			   64, &off);
	if (rc)
		return rc;
	qp->inline_off = off;
	return 0;
}

static int check_sgl(struct xroce_qp *qp, const struct xroce_send_wr *wr,
		     bool local_write, uint64_t *total)
{
	struct xroce_device *dev = qp->dev;
	int i;

	*total = 0;
	for (i = 0; i < wr->num_sge; i++) {
		const struct xroce_sge *g = &wr->sg_list[i];
		struct xr_mr_int *mr = xr_mr_find(qp->pd, g->lkey, g->addr, g->length);

		if (!mr)
			return xr_fail(&dev->log, -EINVAL, "xroce_post_send: sge %d "
				       "[%#llx, +%u) is not inside a region of this PD "
				       "with lkey %#x", i, (unsigned long long)g->addr,
				       g->length, g->lkey);
		if (local_write && !(mr->pub.access & XROCE_ACCESS_LOCAL_WRITE))
			return xr_fail(&dev->log, -EACCES, "xroce_post_send: a READ "
				       "needs a LOCAL_WRITE region to land in");
		*total += g->length;
	}
	if (*total > XROCE_MAX_MSG_SIZE)
		return xr_fail(&dev->log, -EMSGSIZE, "xroce_post_send: message of "
			       "%llu bytes (max %u)", (unsigned long long)*total,
			       XROCE_MAX_MSG_SIZE);
	return 0;
}

static int post_one(struct xroce_qp *qp, const struct xroce_send_wr *wr)
{
	struct xroce_device *dev = qp->dev;
	bool is_inline = wr->send_flags & XROCE_SEND_INLINE;
	bool is_read = wr->opcode == XROCE_WR_RDMA_READ;
	struct xr_stream *st;
	struct xr_swr *w;
	uint64_t total;
	uint32_t idx;
	int rc, i;

	if (wr->opcode < XROCE_WR_RDMA_WRITE || wr->opcode > XROCE_WR_RDMA_READ)
		return xr_fail(&dev->log, -EINVAL, "xroce_post_send: unknown opcode "
			       "%d", wr->opcode);
	if (wr->send_flags & ~(unsigned int)(XROCE_SEND_SIGNALED | XROCE_SEND_INLINE))
		return xr_fail(&dev->log, -EINVAL, "xroce_post_send: unknown "
			       "send_flags %#x", wr->send_flags);
	if (wr->num_sge < 0 || wr->num_sge > XROCE_MAX_SGE ||
	    (wr->num_sge && !wr->sg_list))
		return xr_fail(&dev->log, -EINVAL, "xroce_post_send: num_sge must be "
			       "0..%d with an sg_list", XROCE_MAX_SGE);
	if (wr->stream >= XROCE_MAX_STREAMS)
		return xr_fail(&dev->log, -EINVAL, "xroce_post_send: stream %u (max "
			       "%d)", wr->stream, XROCE_MAX_STREAMS - 1);
	if (is_read && (wr->num_sge != 1 || is_inline))
		return xr_fail(&dev->log, -EINVAL, "xroce_post_send: a READ takes "
			       "exactly one sge and no INLINE");
	if (is_inline) {
		for (total = 0, i = 0; i < wr->num_sge; i++)
			total += wr->sg_list[i].length;
		if (total > XROCE_MAX_INLINE)
			return xr_fail(&dev->log, -EINVAL, "xroce_post_send: inline "
				       "payload of %llu bytes (max %d)",
				       (unsigned long long)total, XROCE_MAX_INLINE);
		rc = inline_area(qp);
		if (rc)
			return xr_fail(&dev->log, rc, "xroce_post_send: no device "
				       "memory for inline payloads");
	} else {
		rc = check_sgl(qp, wr, is_read, &total);
		if (rc)
			return rc;
	}
	if (qp->sq_tail - qp->sq_head >= qp->sq_size)
		return xr_fail(&dev->log, -ENOMEM, "xroce_post_send: send queue full "
			       "(%u)", qp->sq_size);
	st = xr_stream_get(qp, wr->stream);
	if (!st)
		return xr_fail(&dev->log, -ENOMEM, "out of memory");

	idx = qp->sq_tail;
	w = xr_swr_at(qp, idx);
	xr_qp_release_wr(qp, w);
	memset(w, 0, sizeof(*w));
	w->wr_id = wr->wr_id;
	w->raddr = wr->rdma.remote_addr;
	w->rkey = wr->rdma.rkey;
	w->imm = wr->imm_data;
	w->signaled = !!(wr->send_flags & XROCE_SEND_SIGNALED);
	w->stream = wr->stream;
	w->kind = is_read ? XR_WK_READ : XR_WK_APP;
	w->len = (uint32_t)total;
	if (is_inline) {
		uint8_t *dst = dev->mem + qp->inline_off +
			       (uint64_t)(idx & (qp->sq_size - 1)) * XROCE_MAX_INLINE;
		uint32_t off = 0;

		for (i = 0; i < wr->num_sge; i++) {
			memcpy(dst + off, (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			off += wr->sg_list[i].length;
		}
		w->nseg = total ? 1 : 0;
		w->seg1.loff = (uint64_t)(dst - dev->mem);
		w->seg1.len = (uint32_t)total;
	} else if (wr->num_sge <= 1) {
		w->nseg = wr->num_sge && wr->sg_list[0].length ? 1 : 0;
		if (w->nseg) {
			w->seg1.loff = (uint64_t)((uint8_t *)(uintptr_t)wr->sg_list[0].addr -
						  dev->mem);
			w->seg1.len = wr->sg_list[0].length;
		}
	} else {
		w->segs = calloc((size_t)wr->num_sge, sizeof(*w->segs));
		if (!w->segs)
			return xr_fail(&dev->log, -ENOMEM, "out of memory");
		for (i = 0; i < wr->num_sge; i++) {
			if (!wr->sg_list[i].length)
				continue;
			w->segs[w->nseg].loff = (uint64_t)((uint8_t *)(uintptr_t)
						wr->sg_list[i].addr - dev->mem);
			w->segs[w->nseg].len = wr->sg_list[i].length;
			w->nseg++;
		}
		/* Empty entries dropped, at most one left: that is the one-entry
		 * form (w->segs is only read, and freed, when nseg > 1). */
		if (w->nseg <= 1) {
			if (w->nseg)
				w->seg1 = w->segs[0];
			free(w->segs);
			w->segs = NULL;
		}
	}

	switch (wr->opcode) {
	case XROCE_WR_RDMA_WRITE:
		w->opcode = XR_OP_WRITE;
		break;
	case XROCE_WR_RDMA_WRITE_WITH_IMM:
		w->opcode = XR_OP_WRITE_IMM;
		st->tx_msn++; /* consumes a receive, at delivery */
		break;
	case XROCE_WR_SEND:
	case XROCE_WR_SEND_WITH_IMM:
		w->opcode = wr->opcode == XROCE_WR_SEND ? XR_OP_SEND : XR_OP_SEND_IMM;
		w->rkey = st->tx_msn++; /* fills the stream's next receive */
		w->raddr = 0;
		break;
	case XROCE_WR_RDMA_READ: {
		struct xr_read_key k = { .conn = qp->conn_id, .read_id = idx };
		struct xr_read_ent v = { .mem_off = w->seg1.loff, .len = w->len };

		/* The request itself is one packet carrying struct xr_read_req;
		 * the answer may only land in the window opened here. */
		w->opcode = XR_OP_READ_REQ;
		w->read_id = idx;
		w->read_loff = w->seg1.loff;
		w->read_len = w->len;
		w->len = sizeof(struct xr_read_req);
		w->nseg = 0;
		if (bpf_map_update_elem(dev->maps.reads, &k, &v, BPF_ANY))
			return xr_fail(&dev->log, -errno, "xroce_post_send: cannot "
				       "open the READ window: %s", strerror(errno));
		break;
	}
	}
	w->ssn = st->tx_ssn++;
	w->msg_id = qp->next_msg_id++;
	w->npkts = w->len ? (w->len + qp->seg_max - 1) / qp->seg_max : 1;
	qp->sq_tail++;
	return 0;
}

int xroce_post_send(struct xroce_qp *qp, struct xroce_send_wr *wr,
		    struct xroce_send_wr **bad_wr)
{
	struct xroce_device *dev;
	int rc = 0;

	if (bad_wr)
		*bad_wr = wr;
	if (!qp || !wr)
		return -EINVAL;
	dev = qp->dev;
	if (qp->state != XROCE_QPS_RTS)
		return xr_fail(&dev->log, -EINVAL, "xroce_post_send: qp %u is %s",
			       qp->conn_id, qp->state == XROCE_QPS_ERR ?
			       "in the error state" : "not connected");
	if (qp->sq_head == qp->sq_tail && qp->csn_una == qp->csn_next)
		qp->last_progress_ns = xr_now_ns(); /* idle until now */
	qp->timer_due = 0; /* new work: the peer-silence deadline applies */
	for (; wr; wr = wr->next) {
		if (bad_wr)
			*bad_wr = wr;
		rc = post_one(qp, wr);
		if (rc)
			break;
	}
	if (!rc && bad_wr)
		*bad_wr = NULL;
	xr_progress(dev);
	return rc;
}
