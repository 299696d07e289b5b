// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Retiring completed receives from xr_rq.
 *
 * Once a receive's completion goes to the application, its buffer is the
 * application's again, and no SEND may land in it.  Deleting its xr_rq
 * entry says so to XDP, but a map deletion is a system call: about 2 us on
 * these virtual machines, a tenth of a 64-byte round trip per end.  So on
 * one stream per connection (the first whose receive completes; stream 0
 * for verbs, libfabric and xroce perf) the library says it through the
 * connection's mapped xr_evb entry instead: rq_done, the number of the
 * stream's completed receives, is stored before the completion is handed
 * over, and XDP refuses a SEND into any receive numbered below it as if
 * the entry were gone (include/contract/abi.h, xr_evb).  The entries
 * themselves are deleted XR_RQ_RETIRE at a time, in one system call.
 *
 * A waiting entry has the key (stream, msn % XR_RQ_SLOTS) that receive
 * msn + XR_RQ_SLOTS is published under; that receive's publication
 * replaces the entry, so it leaves the batch (xr_rq_retire_posting) or
 * the batch would delete the new receive.  A QP that goes quiet keeps up
 * to XR_RQ_RETIRE - 1 such entries until its next batch, its teardown or
 * a publication that finds xr_rq full (stream.c flushes every batch of
 * the device then, and tries again).  Without a mapped xr_evb (the
 * descriptor could not be mapped) and on other streams, entries are
 * deleted at once, as before.
 */
#include <bpf/bpf.h>

#include "device.h"
#include "qp.h"
#include "rqretire.h"

static struct xr_rq_key rq_key(const struct xroce_qp *qp, uint16_t stream,
			       uint32_t msn)
{
	struct xr_rq_key k = { .conn = qp->conn_id, .stream = stream,
			       .slot = (uint16_t)(msn % XR_RQ_SLOTS) };

	return k;
}

void xr_rq_unpublish(struct xroce_qp *qp, uint16_t stream, uint32_t msn)
{
	struct xr_rq_key k = rq_key(qp, stream, msn);

	bpf_map_delete_elem(qp->dev->maps.rq, &k);
}

/* The connection's guard entry, if stream is (or now becomes) the one it
 * guards; NULL: delete at once. */
static struct xr_evb *guard_of(struct xroce_qp *qp, uint16_t stream)
{
	struct xroce_device *dev = qp->dev;

	if (!dev->evb || !qp->conn_id || qp->conn_id >= dev->evb_n)
		return NULL;
	if (qp->rq_guarded)
		return qp->rq_guard_stream == stream ? &dev->evb[qp->conn_id] : NULL;
	qp->rq_guarded = true;
	qp->rq_guard_stream = stream;
	return &dev->evb[qp->conn_id];
}

void xr_rq_retire_flush(struct xroce_qp *qp)
{
	struct xr_rq_key keys[XR_RQ_RETIRE];
	uint32_t i, n = qp->rq_nretire, count = n;

	if (!n)
		return;
	for (i = 0; i < n; i++)
		keys[i] = rq_key(qp, qp->rq_guard_stream, qp->rq_retire[i]);
	qp->rq_nretire = 0;
	if (!bpf_map_delete_batch(qp->dev->maps.rq, keys, &count, NULL) && count == n)
		return;
	/* The batch stops at its first failure (an entry gone already), and
	 * one that failed before its loop (no memory, a kernel without batch
	 * operations) leaves count as it was: every key again, one by one
	 * (those already deleted answer ENOENT). */
	for (i = 0; i < n; i++)
		bpf_map_delete_elem(qp->dev->maps.rq, &keys[i]);
}

void xr_rq_retire_flush_all(struct xroce_device *dev)
{
	struct xroce_qp *qp;

	for (qp = dev->qps; qp; qp = qp->next)
		xr_rq_retire_flush(qp);
}

void xr_rq_retire_reset(struct xroce_qp *qp)
{
	xr_rq_retire_flush(qp);
	qp->rq_guarded = false;
}

void xr_rq_retire(struct xroce_qp *qp, uint16_t stream, uint32_t msn)
{
	bool first = !qp->rq_guarded;
	struct xr_evb *b = guard_of(qp, stream);

	if (!b) {
		xr_rq_unpublish(qp, stream, msn);
		return;
	}
	/* Before the completion is handed over (XDP reads it per SEND). */
	__atomic_store_n(&b->rq_done, msn + 1, __ATOMIC_RELEASE);
	if (first) {
		__atomic_store_n(&b->rq_stream, stream, __ATOMIC_RELAXED);
		__atomic_store_n(&b->rq_on, 1, __ATOMIC_RELEASE);
	}
	qp->rq_retire[qp->rq_nretire++] = msn;
	if (qp->rq_nretire == XR_RQ_RETIRE)
		xr_rq_retire_flush(qp);
}

void xr_rq_retire_posting(struct xroce_qp *qp, uint16_t stream, uint32_t msn)
{
	uint32_t i;

	if (!qp->rq_guarded || qp->rq_guard_stream != stream)
		return;
	for (i = 0; i < qp->rq_nretire; i++) {
		if (qp->rq_retire[i] % XR_RQ_SLOTS != msn % XR_RQ_SLOTS)
			continue;
		qp->rq_retire[i] = qp->rq_retire[--qp->rq_nretire];
		return; /* one entry per slot can wait */
	}
}
