// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The device's event ring: ACK, NAK and probe-reply records for our paths,
 * messages whose last byte landed, SENDs that found no receive, peers' READ
 * requests, key epochs and peers' halves of a bind, written by the XDP program and handed here to
 * the connection they name.
 * Each record consumed is counted for its connection in the program's
 * xr_evb map (mapped by domain.c), against which XDP measures every
 * connection's share of the ring.
 */
#include <errno.h>
#include <bpf/libbpf.h>

#include "acks.h"
#include "bind.h"
#include "events.h"
#include "keys.h"
#include "qp.h"
#include "stream.h"
#include "trace.h"

static int on_event(void *ctx, void *data, size_t len)
{
	struct xroce_device *dev = ctx;
	const struct xr_evt *e = data;
	struct xroce_qp *qp;

	if (len < sizeof(*e)) {
		dev->evt_bad++;
		return 0;
	}
	if (dev->evb && e->conn < dev->evb_n)
		__atomic_fetch_add(&dev->evb[e->conn].consumed, 1, __ATOMIC_RELAXED);
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
	case XR_EVT_BIND:
		xr_bind_inbox(qp, data, len);
		break;
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
	case XR_EVT_REKEY:
		xr_keys_on_rekey(qp, e->rekey.epoch);
		break;
	case XR_EVT_RNR:
		xr_qp_on_rnr(qp, e);
		break;
	default:
		dev->evt_bad++;
		break;
	}
	return 0;
}

int xr_events_attach(struct xroce_device *dev)
{
	dev->rb = ring_buffer__new(dev->evq_fd, on_event, dev, NULL);
	return dev->rb ? 0 : -errno;
}

void xr_events_detach(struct xroce_device *dev)
{
	if (dev->rb)
		ring_buffer__free(dev->rb);
	dev->rb = NULL;
}

void xr_events_drain(struct xroce_device *dev)
{
	dev->now_ns = xr_now_ns();
	ring_buffer__consume(dev->rb);
}
