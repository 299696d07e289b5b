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

#include "anymem.h"
#include "device.h"
#include "engine.h"
#include "mr.h"
#include "progress.h"
#include "qp.h"
#include "qp_state.h"
#include "stream.h"
#include "trace.h"

/* Inline payloads live in a per-QP area of the memory map (allocated on
 * first use): slot i belongs to send-queue entry i. */
static int inline_area(struct xroce_qp *qp)
{
	uint64_t off;
	int rc;

	if (qp->inline_off)
		return 0;
	rc = xr_anymem_heap_alloc(qp->dev, (uint64_t)qp->sq_size * XROCE_MAX_INLINE,
				  64, &off);
	if (rc)
		return rc;
	qp->inline_off = off;
	return 0;
}

/* Every entry inside a region of the PD with its lkey (and LOCAL_WRITE for
 * a READ's landing place); their memory-map offsets into loff[]. */
static int check_sgl(struct xroce_qp *qp, const struct xroce_send_wr *wr,
		     bool local_write, uint64_t *total, uint64_t *loff)
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
		loff[i] = xr_mr_off(mr, g->addr);
		*total += g->length;
	}
	if (*total > XROCE_MAX_MSG_SIZE)
		return xr_fail(&dev->log, -EMSGSIZE, "xroce_post_send: message of "
			       "%llu bytes (max %u)", (unsigned long long)*total,
			       XROCE_MAX_MSG_SIZE);
	return 0;
}

/* Opcode, flags, entry count, stream: everything but the memory. */
static int check_wr(struct xroce_qp *qp, const struct xroce_send_wr *wr)
{
	struct xroce_device *dev = qp->dev;
	bool is_inline = wr->send_flags & XROCE_SEND_INLINE;

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
	if (wr->opcode == XROCE_WR_RDMA_READ && (wr->num_sge != 1 || is_inline))
		return xr_fail(&dev->log, -EINVAL, "xroce_post_send: a READ takes "
			       "exactly one sge and no INLINE");
	return 0;
}

/* Inline: the payload copied into send-queue slot idx's inline area. */
static int copy_inline(struct xroce_qp *qp, const struct xroce_send_wr *wr,
		       uint32_t idx, struct xr_swr *w)
{
	struct xroce_device *dev = qp->dev;
	uint64_t total = 0, loff;
	uint32_t off = 0;
	int i, rc;

	for (i = 0; i < wr->num_sge; i++)
		total += wr->sg_list[i].length;
	if (total > XROCE_MAX_INLINE)
		return xr_fail(&dev->log, -EINVAL, "xroce_post_send: inline payload "
			       "of %llu bytes (max %d)", (unsigned long long)total,
			       XROCE_MAX_INLINE);
	rc = inline_area(qp);
	if (rc)
		return xr_fail(&dev->log, rc, "xroce_post_send: no device memory "
			       "for inline payloads");
	loff = qp->inline_off + (uint64_t)(idx & (qp->sq_size - 1)) * XROCE_MAX_INLINE;
	for (i = 0; i < wr->num_sge; i++) {
		memcpy(dev->mem + loff + off, (void *)(uintptr_t)wr->sg_list[i].addr,
		       wr->sg_list[i].length);
		off += wr->sg_list[i].length;
	}
	w->len = (uint32_t)total;
	w->nseg = total ? 1 : 0;
	w->seg1.loff = loff;
	w->seg1.len = (uint32_t)total;
	return 0;
}

/* The entries as segments of the memory map (empty ones dropped; a single
 * segment is kept in seg1, more in a malloc'd list). */
static int set_segments(struct xroce_qp *qp, const struct xroce_send_wr *wr,
			const uint64_t *loff, struct xr_swr *w)
{
	int i;

	w->nseg = 0;
	if (wr->num_sge > 1) {
		w->segs = calloc((size_t)wr->num_sge, sizeof(*w->segs));
		if (!w->segs)
			return xr_fail(&qp->dev->log, -ENOMEM, "out of memory");
	}
	for (i = 0; i < wr->num_sge; i++) {
		struct xr_seg *s = w->segs ? &w->segs[w->nseg] : &w->seg1;

		if (!wr->sg_list[i].length)
			continue;
		s->loff = loff[i];
		s->len = wr->sg_list[i].length;
		w->nseg++;
	}
	/* At most one entry left: that is the one-entry form (w->segs is only
	 * read, and freed, when nseg > 1). */
	if (w->segs && w->nseg <= 1) {
		if (w->nseg)
			w->seg1 = w->segs[0];
		free(w->segs);
		w->segs = NULL;
	}
	return 0;
}

/* Opcode-specific fields; a READ opens its answer's window in XDP. */
static int set_opcode(struct xroce_qp *qp, const struct xroce_send_wr *wr,
		      uint32_t idx, struct xr_stream *st, struct xr_swr *w)
{
	struct xroce_device *dev = qp->dev;
	struct xr_read_key k = { .conn = qp->conn_id, .read_id = idx };
	struct xr_read_ent v;

	switch (wr->opcode) {
	case XROCE_WR_RDMA_WRITE:
		w->opcode = XR_OP_WRITE;
		return 0;
	case XROCE_WR_RDMA_WRITE_WITH_IMM:
		w->opcode = XR_OP_WRITE_IMM;
		st->tx_msn++; /* consumes a receive, at delivery */
		return 0;
	case XROCE_WR_SEND:
	case XROCE_WR_SEND_WITH_IMM:
		w->opcode = wr->opcode == XROCE_WR_SEND ? XR_OP_SEND : XR_OP_SEND_IMM;
		w->msn = st->tx_msn++; /* fills the stream's next receive */
		w->raddr = 0;
		return 0;
	default: /* XROCE_WR_RDMA_READ */
		/* The request itself is one packet carrying struct xr_read_req;
		 * the answer may only land in the window opened here. */
		v.mem_off = w->seg1.loff;
		v.len = w->len;
		v.rsvd = 0;
		w->opcode = XR_OP_READ_REQ;
		w->read_id = idx;
		w->read_loff = w->seg1.loff;
		w->read_len = w->len;
		w->len = sizeof(struct xr_read_req);
		w->nseg = 0;
		if (bpf_map_update_elem(dev->maps.reads, &k, &v, BPF_ANY))
			return xr_fail(&dev->log, -errno, "xroce_post_send: cannot "
				       "open the READ window: %s", strerror(errno));
		return 0;
	}
}

static int post_one(struct xroce_qp *qp, const struct xroce_send_wr *wr)
{
	bool is_inline = wr->send_flags & XROCE_SEND_INLINE;
	uint64_t total = 0, loff[XROCE_MAX_SGE];
	uint32_t idx = qp->sq_tail;
	struct xr_stream *st;
	struct xr_swr *w;
	int rc;

	rc = check_wr(qp, wr);
	if (!rc && !is_inline)
		rc = check_sgl(qp, wr, wr->opcode == XROCE_WR_RDMA_READ, &total, loff);
	if (rc)
		return rc;
	if (qp->sq_tail - qp->sq_head >= qp->sq_size)
		return xr_fail(&qp->dev->log, -ENOMEM, "xroce_post_send: send queue "
			       "full (%u)", qp->sq_size);
	st = xr_stream_get(qp, wr->stream);
	if (!st)
		return xr_fail(&qp->dev->log, -ENOMEM, "out of memory");
	w = xr_swr_at(qp, idx);
	xr_qp_release_wr(qp, w);
	memset(w, 0, sizeof(*w));
	w->wr_id = wr->wr_id;
	w->raddr = wr->rdma.remote_addr;
	w->rkey = wr->rdma.rkey;
	w->imm = wr->imm_data;
	w->signaled = !!(wr->send_flags & XROCE_SEND_SIGNALED);
	w->stream = wr->stream;
	w->kind = wr->opcode == XROCE_WR_RDMA_READ ? XR_WK_READ : XR_WK_APP;
	w->len = (uint32_t)total;
	rc = is_inline ? copy_inline(qp, wr, idx, w) : set_segments(qp, wr, loff, w);
	if (!rc)
		rc = set_opcode(qp, wr, idx, st, w);
	if (rc)
		return rc;
	w->ssn = st->tx_ssn++;
	w->msg_id = qp->next_msg_id++;
	w->npkts = w->len ? (w->len + qp->seg_max - 1) / qp->seg_max : 1;
	qp->sq_tail++;
	xr_tr(qp->dev, qp->conn_id, w->msg_id, 0, XR_TR_POST);
	return 0;
}

int xr_qp_post_send(struct xroce_qp *qp, struct xroce_send_wr *wr,
		    struct xroce_send_wr **bad_wr)
{
	int rc = 0;

	/* A QP being bound (xroce_qp_bind) queues work until it is ready. */
	if (qp->state != XROCE_QPS_RTS && qp->state != XROCE_QPS_CONNECTING)
		return xr_fail(&qp->dev->log, -EINVAL, "xroce_post_send: qp %u is %s",
			       qp->conn_id, qp->state == XROCE_QPS_ERR ?
			       "in the error state" : "not connected");
	if (qp->sq_head == qp->sq_tail && qp->csn_una == qp->csn_next)
		qp->last_progress_ns = xr_now_ns(); /* idle until now */
	qp->timer_due = 0; /* new work: the peer-silence deadline applies */
	for (; wr; wr = wr->next) {
		*bad_wr = wr;
		rc = post_one(qp, wr);
		if (rc)
			break;
	}
	if (!rc)
		*bad_wr = NULL;
	xr_progress(qp->dev);
	xr_progress_note_post(qp->dev);
	return rc;
}
