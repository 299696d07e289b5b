// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The device's event ring: ACK, NAK and probe-reply records for our paths,
 * messages whose last byte landed, and peers' READ requests, written by
 * the XDP program and handed here to the connection they name.
 */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "acks.h"
#include "events.h"
#include "qp.h"
#include "stream.h"
#include "trace.h"

static int on_event(void *ctx, void *data, size_t len)
{
	struct xroce_device *dev = ctx;
	const struct xr_evt *e = data;
	struct xroce_qp *qp;

	if (len < sizeof(*e)) {
		if (len < sizeof(uint16_t) || e->type != XR_EVT_WAKE)
			dev->evt_bad++;
		return 0;
	}
	qp = e->conn < dev->conn_tab_size ? dev->conn_tab[e->conn] : NULL;
	/* A QP being destroyed stays in the table until its CLOSE is
	 * answered (so the answer finds it), but takes no more events. */
	if (!qp || qp->state == XROCE_QPS_CLOSED) {
		dev->evt_unknown_conn++;
		return 0;
	}
	qp->last_heard_ns = dev->now_ns;
	if (dev->trace)
		dev->trace->evt_ns = e->rx_ns;
	switch (e->type) {
	case XR_EVT_ACK:
	case XR_EVT_NAK:
		xr_qp_on_ack(qp, e);
		break;
	case XR_EVT_RECV:
		xr_qp_on_recv(qp, e);
		break;
	case XR_EVT_PROBE_REPLY:
		xr_qp_on_probe_reply(qp, e);
		break;
	case XR_EVT_READ_REQ:
		xr_qp_on_read_req(qp, e);
		break;
	default:
		dev->evt_bad++;
		break;
	}
	return 0;
}

int xr_events_attach(struct xroce_device *dev)
{
	long pg = sysconf(_SC_PAGESIZE);
	void *c, *p;

	dev->rb = ring_buffer__new(dev->evq_fd, on_event, dev, NULL);
	if (!dev->rb)
		return -errno;
	c = mmap(NULL, (size_t)pg, PROT_READ, MAP_SHARED, dev->evq_fd, 0);
	if (c == MAP_FAILED)
		return -errno;
	dev->evq_cons = c;
	p = mmap(NULL, (size_t)pg, PROT_READ, MAP_SHARED, dev->evq_fd, pg);
	if (p == MAP_FAILED)
		return -errno;
	dev->evq_prod = p;
	return 0;
}

void xr_events_detach(struct xroce_device *dev)
{
	long pg = sysconf(_SC_PAGESIZE);

	if (dev->rb)
		ring_buffer__free(dev->rb);
	dev->rb = NULL;
	if (dev->evq_cons)
		munmap((void *)dev->evq_cons, (size_t)pg);
	if (dev->evq_prod)
		munmap((void *)dev->evq_prod, (size_t)pg);
	dev->evq_cons = dev->evq_prod = NULL;
}

/* Someone other than a sleeping thread of ours waits on the ring: an
 * application polling xroce_device_fd. */
static bool fd_watched(const struct xroce_device *dev)
{
	return __atomic_load_n(&dev->evq_fd_out, __ATOMIC_RELAXED);
}

/* Ask XDP for a wake-up after its next record (want 1), or not. */
static void want_wake(struct xroce_device *dev, uint32_t want)
{
	if (dev->evq_wake)
		__atomic_store_n(&dev->evq_wake->want, want, __ATOMIC_SEQ_CST);
}

void xr_events_watch(struct xroce_device *dev)
{
	__atomic_store_n(&dev->evq_fd_out, true, __ATOMIC_RELAXED);
	want_wake(dev, 1);
}

bool xr_events_arm(struct xroce_device *dev)
{
	want_wake(dev, 1);
	/* (seq_cst store, then load: XDP's order is the reverse) */
	if (__atomic_load_n(dev->evq_prod, __ATOMIC_SEQ_CST) !=
	    __atomic_load_n(dev->evq_cons, __ATOMIC_SEQ_CST)) {
		if (!dev->evq_sleepers && !fd_watched(dev))
			want_wake(dev, 0);
		return false;
	}
	dev->evq_sleepers++;
	return true;
}

void xr_events_disarm(struct xroce_device *dev)
{
	/* Another thread still asleep on the ring keeps its request (a
	 * wake-up XDP took meant it, or the one that woke). */
	want_wake(dev, --dev->evq_sleepers || fd_watched(dev));
}

void xr_events_drain(struct xroce_device *dev)
{
	dev->now_ns = xr_now_ns();
	/* A watched descriptor: ask again for the wake-up the last one took
	 * (records already there keep the descriptor readable). */
	if (fd_watched(dev))
		want_wake(dev, 1);
	ring_buffer__consume(dev->rb);
}
