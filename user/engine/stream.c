// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The receiving side of a queue pair: posted receives, streams, and the
 * delivery of receive completions.
 *
 * A receive posted on stream s is the stream's n-th (its MSN is n); it is
 * published to XDP in xr_rq so that a SEND carrying MSN n lands in it the
 * moment it arrives, in any order.  XDP reports every message whose last
 * byte landed; completions are delivered per stream in the order the
 * sender sent them (the stream sequence number, SSN), so a message of one
 * stream never waits for another stream's loss, and a WRITE_WITH_IMM's
 * completion means every earlier message of its stream has landed.
 *
 * The last receive posted on a stream can be taken back while no packet
 * has claimed it (xr_qp_recall_recv), and a message that finds no receive
 * is reported (XROCE_EVENT_RECV_NEEDED): shared receive queues move
 * receives between QPs with the two.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "cq.h"
#include "device.h"
#include "engine.h"
#include "asyncev.h"
#include "mr.h"
#include "qp.h"
#include "rqrecall.h"
#include "rqretire.h"
#include "stream.h"
#include "trace.h"

struct xr_stream *xr_stream_get(struct xroce_qp *qp, uint16_t id)
{
	uint16_t *ids;

	if (id >= XROCE_MAX_STREAMS)
		return NULL;
	if (qp->streams[id])
		return qp->streams[id];
	/* Keep a list of the streams in use, so per-stream work costs what
	 * is used, not XROCE_MAX_STREAMS. */
	ids = realloc(qp->stream_ids, (qp->nstreams + 1) * sizeof(*ids));
	if (!ids)
		return NULL;
	qp->stream_ids = ids;
	qp->streams[id] = calloc(1, sizeof(struct xr_stream));
	if (qp->streams[id])
		qp->stream_ids[qp->nstreams++] = id;
	return qp->streams[id];
}

void xr_qp_free_streams(struct xroce_qp *qp)
{
	uint32_t i;

	xr_rq_retire_flush(qp);
	for (i = 0; i < qp->nstreams; i++) {
		uint16_t id = qp->stream_ids[i];
		struct xr_stream *st = qp->streams[id];

		/* Receives the flush could not complete (CQ full) must not stay
		 * published: XDP would place a SEND of a later connection that
		 * gets this id into memory the application has back.  Nor may
		 * the entries of receives taken back (up to rq_hi) stay. */
		while (st && st->rq_done != st->rq_hi)
			xr_rq_unpublish(qp, id, st->rq_done++);
		free(st);
		qp->streams[id] = NULL;
	}
	free(qp->stream_ids);
	qp->stream_ids = NULL;
	qp->nstreams = 0;
}

/* Publish receive v under key k.  A full xr_rq first takes back the
 * entries waiting in the device's retirement batches (rqretire.c). */
static int publish_rq(struct xroce_device *dev, const struct xr_rq_key *k,
		      const struct xr_rq_ent *v)
{
	if (!bpf_map_update_elem(dev->maps.rq, k, v, BPF_ANY))
		return 0;
	if (errno != E2BIG)
		return -errno;
	xr_rq_retire_flush_all(dev);
	return bpf_map_update_elem(dev->maps.rq, k, v, BPF_ANY) ? -errno : 0;
}

int xr_qp_post_recv(struct xroce_qp *qp, struct xroce_recv_wr *wr,
		    struct xroce_recv_wr **bad_wr)
{
	struct xroce_device *dev = qp->dev;
	int rc = 0;

	if (qp->state == XROCE_QPS_ERR || qp->state == XROCE_QPS_CLOSED)
		return xr_fail(&dev->log, -EINVAL, "xroce_post_recv: qp %u is %s",
			       qp->conn_id, qp->state == XROCE_QPS_ERR ?
			       "in the error state" : "closed");
	for (; wr; wr = wr->next) {
		struct xr_rq_key k;
		struct xr_rq_ent v;
		struct xr_stream *st;
		struct xr_mr_int *mr;
		struct xr_rwr *r;
		uint64_t addr = 0, off = 0;
		uint32_t len = 0;

		if (bad_wr)
			*bad_wr = wr;
		if (wr->num_sge < 0 || wr->num_sge > XROCE_MAX_RECV_SGE ||
		    (wr->num_sge && !wr->sg_list)) {
			rc = xr_fail(&dev->log, -EINVAL, "xroce_post_recv: num_sge "
				     "must be 0..%d with an sg_list",
				     XROCE_MAX_RECV_SGE);
			break;
		}
		if (wr->stream >= XROCE_MAX_STREAMS) {
			rc = xr_fail(&dev->log, -EINVAL, "xroce_post_recv: stream %u "
				     "(max %d)", wr->stream, XROCE_MAX_STREAMS - 1);
			break;
		}
		if (wr->num_sge) {
			addr = wr->sg_list[0].addr;
			len = wr->sg_list[0].length;
			mr = xr_mr_find(qp->pd, wr->sg_list[0].lkey, addr, len);
			if (!mr || !(mr->pub.access & XROCE_ACCESS_LOCAL_WRITE)) {
				rc = xr_fail(&dev->log, -EINVAL, "xroce_post_recv: "
					     "[%#llx, +%u) is not inside a LOCAL_WRITE "
					     "region of this PD with lkey %#x",
					     (unsigned long long)addr, len,
					     wr->sg_list[0].lkey);
				break;
			}
			off = xr_mr_off(mr, addr);
		}
		st = xr_stream_get(qp, wr->stream);
		if (!st) {
			rc = xr_fail(&dev->log, -ENOMEM, "out of memory");
			break;
		}
		if (st->rq_post - st->rq_done >= XROCE_MAX_RECV_PER_STREAM) {
			rc = xr_fail(&dev->log, -ENOMEM, "xroce_post_recv: stream %u "
				     "already has %d receives posted", wr->stream,
				     XROCE_MAX_RECV_PER_STREAM);
			break;
		}
		r = &st->rq[st->rq_post % XROCE_MAX_RECV_PER_STREAM];
		r->wr_id = wr->wr_id;
		r->mem_off = off;
		r->len = len;
		memset(&v, 0, sizeof(v)); /* state: XR_RQ_OPEN */
		k.conn = qp->conn_id;
		k.stream = wr->stream;
		k.slot = (uint16_t)(st->rq_post % XR_RQ_SLOTS);
		v.msn = st->rq_post;
		v.len = len;
		v.mem_off = r->mem_off;
		v.conn = qp->conn_id;
		v.stream = wr->stream;
		rc = publish_rq(dev, &k, &v);
		if (rc) {
			rc = xr_fail(&dev->log, rc, "xroce_post_recv: cannot "
				     "publish the receive: %s (xr_rq full?)",
				     strerror(-rc));
			break;
		}
		/* It replaced any entry a retirement waited to delete. */
		xr_rq_retire_posting(qp, wr->stream, st->rq_post);
		st->rq_post++;
		if ((int32_t)(st->rq_post - st->rq_hi) > 0)
			st->rq_hi = st->rq_post;
		qp->complete_dirty = true; /* a WRITE_WITH_IMM may be waiting */
	}
	if (!rc && bad_wr)
		*bad_wr = NULL;
	/* A WRITE_WITH_IMM or SEND that waited for this receive completes
	 * now: no application call may follow to deliver it (it may sleep on
	 * a completion notification), and the progress thread only wakes for
	 * the network. */
	if (dev->threaded)
		xr_qp_deliver(qp);
	return rc;
}

/* The recall program, loaded on first use: NULL (logged once) if it
 * cannot be. */
static struct xr_rqrecall *recall_prog(struct xroce_device *dev)
{
	char why[160];

	if (!dev->rqr && !dev->rqr_err) {
		dev->rqr_err = xr_rqrecall_open(&dev->rqr, dev->maps.rq, why,
						sizeof(why));
		if (dev->rqr_err)
			xr_log(&dev->log, XROCE_LOG_WARN, "receives cannot be taken "
			       "back: %s", why);
	}
	return dev->rqr;
}

int xr_qp_recall_recv(struct xroce_qp *qp, uint16_t stream, uint64_t *wr_id)
{
	struct xroce_device *dev = qp->dev;
	struct xr_stream *st = stream < XROCE_MAX_STREAMS ? qp->streams[stream] : NULL;
	struct xr_rqrecall *rqr;
	struct xr_rq_key k;
	uint32_t msn;
	int rc;

	if (!st || st->rq_post == st->rq_done)
		return -ENOENT;
	/* A message that completed and waits for its turn may be the one
	 * that consumes it (a WRITE_WITH_IMM claims no receive in XDP). */
	if (st->pend[st->rx_ssn % XR_MSG_SLOTS].have)
		return -EBUSY;
	rqr = recall_prog(dev);
	if (!rqr)
		return dev->rqr_err; /* why was logged once, at the first try */
	msn = st->rq_post - 1;
	k.conn = qp->conn_id;
	k.stream = stream;
	k.slot = (uint16_t)(msn % XR_RQ_SLOTS);
	rc = xr_rqrecall_run(rqr, &k, msn);
	if (rc < 0)
		return xr_fail(&dev->log, rc, "xroce_recall_recv: test run: %s",
			       strerror(-rc));
	if (rc != XR_RQ_OPEN)
		return -EBUSY; /* TAKEN: a packet has it */
	/* The entry stays, RECALLED, until msn is posted again or the stream
	 * is freed: deleted now, it could be reused at once for another
	 * receive while a packet still holds it (abi.h, xr_rq). */
	st->rq_post = msn;
	*wr_id = st->rq[msn % XROCE_MAX_RECV_PER_STREAM].wr_id;
	qp->st.recv_recalled++;
	return 0;
}

/* A SEND for receive msn found none (XDP refused it "receiver not ready"):
 * tell the application, unless that receive has been posted since. */
static void recv_needed(struct xroce_qp *qp, uint16_t stream, uint32_t msn)
{
	struct xr_stream *st = stream < XROCE_MAX_STREAMS ? qp->streams[stream] : NULL;
	uint32_t posted = st ? st->rq_post : 0;

	/* Posted since, or further ahead than a stream's receives can be (a
	 * peer must not pull receives from other QPs with made-up MSNs). */
	if ((int32_t)(msn - posted) < 0 || msn - posted >= XROCE_MAX_RECV_PER_STREAM)
		return;
	qp->st.recv_needed++;
	xr_event_recv_needed(qp->dev, qp, qp->conn_id, stream, msn);
}

void xr_qp_on_rnr(struct xroce_qp *qp, const struct xr_evt *e)
{
	recv_needed(qp, e->rnr.stream, e->rnr.msn);
}

/* Message ssn of a stream has arrived: its slot in the stream's order,
 * or NULL (counted) if the peer's numbering is off. */
static struct xr_rpend *pend_slot(struct xroce_qp *qp, uint16_t stream, uint16_t ssn)
{
	struct xr_stream *st = xr_stream_get(qp, stream);
	struct xr_rpend *p;

	if (!st || (uint16_t)(ssn - st->rx_ssn) >= XR_MSG_SLOTS) {
		qp->dev->evt_bad++;
		xr_log(&qp->dev->log, XROCE_LOG_DEBUG, "qp %u: message %u of stream "
		       "%u ignored (expecting %u)", qp->conn_id, ssn, stream,
		       st ? st->rx_ssn : 0);
		return NULL;
	}
	p = &st->pend[ssn % XR_MSG_SLOTS];
	if (p->have) {
		qp->dev->evt_bad++;
		return NULL;
	}
	return p;
}

/* A message of this connection completed here (event from XDP). */
void xr_qp_on_recv(struct xroce_qp *qp, const struct xr_evt *e)
{
	const struct xr_evt_recv *r = &e->recv;
	struct xr_rpend *p;

	if (r->opcode == XR_OP_READ_RESP) {
		/* The answer to one of our READs: its id is its send-queue
		 * index, so no search is needed. */
		struct xr_swr *w = &qp->sq[r->read_id & (qp->sq_size - 1)];

		if (w->kind == XR_WK_READ && w->read_id == r->read_id &&
		    r->read_id - qp->sq_head < qp->sq_tail - qp->sq_head) {
			if (r->flags & XR_RECV_F_ERR) {
				/* The responder could not answer (its region
				 * went away): the READ fails, its buffer holds
				 * nothing of anyone else's. */
				w->failed = 1;
				w->status = XROCE_WC_REM_ACCESS_ERR;
			} else {
				w->resp_done = 1;
			}
			qp->complete_dirty = true;
		} else {
			qp->dev->evt_bad++;
			return;
		}
		/* The answer also took its place in the responder's stream:
		 * messages it sent after it wait for it (and not forever). */
	}
	p = pend_slot(qp, r->stream, r->ssn);
	if (!p)
		return;
	xr_tr(qp->dev, qp->conn_id, r->msg_id, 0, XR_TR_RECV_DONE);
	p->msg_len = r->msg_len;
	p->msg_id = r->msg_id;
	p->imm = r->imm;
	p->msn = r->msn;
	p->opcode = r->opcode;
	p->raddr_end = r->raddr_end;
	p->have = 1;
	qp->complete_dirty = true;
}

/* Deliver what is in order on stream id; false if it must wait. */
static void deliver_stream(struct xroce_qp *qp, uint16_t id, struct xr_stream *st)
{
	for (;;) {
		struct xr_rpend *p = &st->pend[st->rx_ssn % XR_MSG_SLOTS];
		struct xroce_wc wc;

		if (!p->have)
			return;
		memset(&wc, 0, sizeof(wc));
		wc.status = XROCE_WC_SUCCESS;
		wc.qp_num = qp->conn_id;
		wc.stream = id;
		wc.byte_len = p->msg_len;
		if (p->opcode == XR_OP_WRITE || p->opcode == XR_OP_WRITE_IMM)
			wc.remote_addr_end = p->raddr_end;
		switch (p->opcode) {
		case XR_OP_WRITE:
			if (qp->flags & XROCE_QP_NOTIFY_WRITES) {
				wc.opcode = XROCE_WC_RECV_RDMA_WRITE;
				if (xr_cq_push(qp->recv_cq, &wc))
					return;
			}
			break;
		case XR_OP_WRITE_IMM:
		case XR_OP_SEND:
		case XR_OP_SEND_IMM: {
			struct xr_rwr *r;

			if (st->rq_done == st->rq_post) {
				/* WRITE_WITH_IMM waits for a receive: said once */
				if (st->need_noted != st->rq_post + 1) {
					st->need_noted = st->rq_post + 1;
					recv_needed(qp, id, st->rq_post);
				}
				return;
			}
			if ((p->opcode == XR_OP_SEND || p->opcode == XR_OP_SEND_IMM) &&
			    p->msn != st->rq_done)
				xr_log(&qp->dev->log, XROCE_LOG_WARN, "qp %u stream %u: "
				       "SEND for receive %u delivered as %u", qp->conn_id,
				       id, p->msn, st->rq_done);
			if (!xr_cq_room(qp->recv_cq))
				return;
			r = &st->rq[st->rq_done % XROCE_MAX_RECV_PER_STREAM];
			wc.wr_id = r->wr_id;
			if (p->opcode == XR_OP_WRITE_IMM) {
				wc.opcode = XROCE_WC_RECV_RDMA_WITH_IMM;
				wc.imm_data = p->imm;
				wc.wc_flags = XROCE_WC_WITH_IMM;
			} else {
				wc.opcode = XROCE_WC_RECV;
				if (p->opcode == XR_OP_SEND_IMM) {
					wc.imm_data = p->imm;
					wc.wc_flags = XROCE_WC_WITH_IMM;
				}
			}
			xr_rq_retire(qp, id, st->rq_done);
			xr_cq_push_msg(qp->recv_cq, &wc, p->msg_id);
			st->rq_done++;
			break;
		}
		case XR_OP_READ_REQ:
		case XR_OP_READ_RESP:
			/* A peer's READ, an answer to ours: no receive
			 * completion, but their place in the stream. */
			break;
		default:
			qp->dev->evt_bad++;
			break;
		}
		p->have = 0;
		st->rx_ssn++;
	}
}

void xr_qp_deliver(struct xroce_qp *qp)
{
	uint32_t i;

	for (i = 0; i < qp->nstreams; i++)
		deliver_stream(qp, qp->stream_ids[i], qp->streams[qp->stream_ids[i]]);
}

/* Posted receives complete as flushed (QP destroyed or failed). */
void xr_qp_flush_recv(struct xroce_qp *qp)
{
	uint32_t k;

	for (k = 0; k < qp->nstreams; k++) {
		uint16_t i = qp->stream_ids[k];
		struct xr_stream *st = qp->streams[i];

		while (st->rq_done != st->rq_post) {
			struct xr_rwr *r = &st->rq[st->rq_done % XROCE_MAX_RECV_PER_STREAM];
			struct xroce_wc wc = {
				.wr_id = r->wr_id,
				.status = XROCE_WC_WR_FLUSH_ERR,
				.opcode = XROCE_WC_RECV,
				.qp_num = qp->conn_id,
				.stream = i,
			};

			if (xr_cq_push(qp->recv_cq, &wc))
				break;
			xr_rq_unpublish(qp, i, st->rq_done);
			st->rq_done++;
		}
	}
}

/* A peer asks to read our memory (XDP validated key, bounds and rights). */
void xr_qp_on_read_req(struct xroce_qp *qp, const struct xr_evt *e)
{
	struct xr_rdreq *q;

	if (qp->rdq_tail - qp->rdq_head >= XR_RDQ) {
		/* Cannot happen while peers keep to XR_MSG_SLOTS messages in
		 * flight; counted rather than overwriting. */
		qp->dev->evt_bad++;
		return;
	}
	/* Work appears on an idle QP: its peer-silence deadline starts now,
	 * not at the last acknowledgement of long ago. */
	if (qp->sq_head == qp->sq_tail && qp->csn_una == qp->csn_next &&
	    qp->rdq_head == qp->rdq_tail)
		qp->last_progress_ns = qp->dev->now_ns;
	q = &qp->rdq[qp->rdq_tail++ % XR_RDQ];
	q->pos = e->read.pos;
	q->raddr = e->read.raddr;
	q->rkey = e->read.rkey;
	q->laddr = e->read.laddr;
	q->len = e->read.len;
	q->read_id = e->read.read_id;
	q->stream = e->read.stream;
	/* The READ holds a place in the requester's stream: what it sent
	 * after it on that stream is delivered after it (no completion of
	 * its own here). */
	{
		struct xr_rpend *p = pend_slot(qp, e->read.stream, e->read.ssn);

		if (p) {
			memset(p, 0, sizeof(*p));
			p->opcode = XR_OP_READ_REQ;
			p->have = 1;
			qp->complete_dirty = true;
		}
	}
}
