// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Latency breakdowns (trace.h): the device's buffer of step records, fed by
 * the library's call sites and by the XDP program's ring.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <bpf/bpf.h>

#include "engine.h"
#include "qp.h"
#include "trace.h"

void xr_trace_add(struct xroce_device *dev, uint32_t conn, uint32_t msg,
		  uint32_t csn, uint32_t stage, uint64_t ns)
{
	struct xr_trace *t = dev->trace;
	struct xroce_trace_rec *r;

	if (t->head - t->tail >= XR_TRACE_BUF) {
		t->dropped++;
		return;
	}
	r = &t->buf[t->head++ % XR_TRACE_BUF];
	r->qp_num = conn;
	r->msg_id = msg;
	r->csn = csn;
	r->stage = (uint16_t)stage;
	r->cpu = 0;
	r->ns = ns ? ns : xr_now_ns();
}

void xr_trace_pkt(struct xroce_device *dev, uint32_t conn, uint32_t msg,
		  uint32_t csn)
{
	struct xr_trace *t = dev->trace;

	t->cur = (struct xr_trace_pkt){ conn, msg, csn, 0 };
	t->cur_on = true;
}

void xr_trace_emitted(struct xroce_device *dev, int plane,
		      struct xr_txr_desc *d)
{
	struct xr_trace *t = dev->trace;

	if (!t->cur_on)
		return;
	t->cur_on = false;
	if (d) {
		d->tr_on = 1;
		d->tr_conn = t->cur.conn;
		d->tr_msg = t->cur.msg;
		d->tr_csn = t->cur.csn;
	}
	xr_trace_add(dev, t->cur.conn, t->cur.msg, t->cur.csn, XR_TR_SEND, 0);
	if (t->nkick == XR_TRACE_KICKS)
		return;
	t->cur.plane = plane;
	t->kick[t->nkick++] = t->cur;
}

void xr_trace_kick(struct xroce_device *dev, int plane)
{
	struct xr_trace *t = dev->trace;
	uint64_t now = xr_now_ns();
	uint32_t i, keep = 0;

	for (i = 0; i < t->nkick; i++) {
		struct xr_trace_pkt *k = &t->kick[i];

		if (k->plane == plane)
			xr_trace_add(dev, k->conn, k->msg, k->csn, XR_TR_KICK, now);
		else
			t->kick[keep++] = *k;
	}
	t->nkick = keep;
}

void xr_trace_acked(struct xroce_device *dev, uint32_t conn, uint32_t msg,
		    uint32_t csn)
{
	xr_trace_add(dev, conn, msg, csn, XR_TR_ACK_XDP, dev->trace->evt_ns);
	xr_trace_add(dev, conn, msg, csn, XR_TR_ACK_DONE, 0);
}

/* Is conn one of this device's connections? */
static bool own_conn(const struct xroce_device *dev, uint32_t conn)
{
	return conn < dev->conn_tab_size && dev->conn_tab[conn];
}

void xr_trace_drain_xdp(struct xroce_device *dev)
{
	struct xr_trace *t = dev->trace;
	uint64_t end;

	if (!t->xdp)
		return;
	end = __atomic_load_n(&t->xdp[XR_TRACE_CTL].ns, __ATOMIC_ACQUIRE);
	if (end - t->xdp_pos > XR_TRACE_SLOTS) {
		t->missed += end - XR_TRACE_SLOTS - t->xdp_pos;
		t->xdp_pos = end - XR_TRACE_SLOTS;
	}
	for (; t->xdp_pos != end; t->xdp_pos++) {
		const struct xr_trace_rec *x = &t->xdp[t->xdp_pos % XR_TRACE_SLOTS];

		if (!x->ns)
			break; /* still being written: next time */
		if (!own_conn(dev, x->conn))
			continue; /* another process's */
		xr_trace_add(dev, x->conn, x->msg, x->csn, x->stage, x->ns);
		t->buf[(t->head - 1) % XR_TRACE_BUF].cpu = x->cpu;
	}
}

int xr_trace_conn_flag(struct xroce_device *dev, uint32_t conn_id, bool on)
{
	struct xr_conn c;

	if (bpf_map_lookup_elem(dev->maps.conns, &conn_id, &c))
		return -errno;
	if (!!(c.flags & XR_CONN_F_TRACE) == on)
		return 0;
	c.flags = on ? c.flags | XR_CONN_F_TRACE : c.flags & ~XR_CONN_F_TRACE;
	return bpf_map_update_elem(dev->maps.conns, &conn_id, &c, BPF_EXIST) ?
	       -errno : 0;
}

static int trace_open(struct xroce_device *dev)
{
	struct xr_trace *t = calloc(1, sizeof(*t));
	void *p;

	if (!t || !(t->buf = calloc(XR_TRACE_BUF, sizeof(*t->buf)))) {
		free(t);
		return xr_fail(&dev->log, -ENOMEM, "out of memory");
	}
	if (dev->maps.trace >= 0) {
		t->xdp_len = ((size_t)(XR_TRACE_SLOTS + 1) * sizeof(struct xr_trace_rec) +
			      4095) & ~(size_t)4095;
		p = mmap(NULL, t->xdp_len, PROT_READ, MAP_SHARED, dev->maps.trace, 0);
		if (p != MAP_FAILED) {
			t->xdp = p;
			t->xdp_pos = t->xdp[XR_TRACE_CTL].ns;
		}
	}
	if (!t->xdp)
		xr_log(&dev->log, XROCE_LOG_WARN, "the attached XDP program keeps no "
		       "trace (re-attach it): library steps only");
	dev->trace = t;
	return 0;
}

void xr_trace_close(struct xroce_device *dev)
{
	struct xr_trace *t = dev->trace;

	if (!t)
		return;
	if (t->xdp)
		munmap((void *)t->xdp, t->xdp_len);
	free(t->buf);
	free(t);
	dev->trace = NULL;
}

int xr_trace_enable(struct xroce_device *dev, int on)
{
	struct xroce_qp *qp;
	int rc = 0;

	if (on && !dev->trace)
		rc = trace_open(dev);
	if (rc)
		return rc;
	for (qp = dev->qps; qp; qp = qp->next)
		if (qp->state == XROCE_QPS_RTS)
			xr_trace_conn_flag(dev, qp->conn_id, on);
	if (!on)
		xr_trace_close(dev);
	return 0;
}

int xr_trace_take(struct xroce_device *dev, struct xroce_trace_rec *recs,
		  int max)
{
	struct xr_trace *t = dev->trace;
	int n = 0;

	if (!t)
		return 0;
	xr_trace_drain_xdp(dev);
	while (n < max && t->tail != t->head)
		recs[n++] = t->buf[t->tail++ % XR_TRACE_BUF];
	return n;
}
