// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The progress engine: what a NIC would do in the background, done when the
 * application calls in.  One round drains the event ring (ACK records and
 * message completions from XDP), recycles transmit frames, runs the
 * timers, transmits what the windows allow and delivers completions.
 */
#include <errno.h>
#include <bpf/libbpf.h>

#include "internal.h"

#define XR_CTRL_POLL_NS 2000000ull /* control socket check while busy */
#define XR_TELEM_PERIOD_NS 10000000ull /* telemetry update (p99s cost) */
/* An application that computes between calls (filling its next buffer,
 * say) leaves the network unwatched.  A retransmission deadline that passed
 * meanwhile proves nothing: on a busy host the ACKs may not have been
 * processed yet either (the softirq that would deliver them is queued
 * behind the application on the same CPU), and expiring then resends whole
 * windows that arrived.  So after an absence longer than XR_ABSENT_NS the
 * timers wait XR_ABSENT_GRACE_NS more, watched, before they may fire; the
 * default RTO floor (1 ms) is what both are sized after. */
#define XR_ABSENT_NS 1000000ull
#define XR_ABSENT_GRACE_NS 1000000ull

static int on_event(void *ctx, void *data, size_t len)
{
	struct xroce_device *dev = ctx;
	const struct xr_evt *e = data;
	struct xroce_qp *qp;

	if (len < sizeof(*e)) {
		dev->evt_bad++;
		return 0;
	}
	qp = e->conn < dev->conn_tab_size ? dev->conn_tab[e->conn] : NULL;
	if (!qp) {
		dev->evt_unknown_conn++;
		return 0;
	}
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

int xr_progress_attach(struct xroce_device *dev)
{
	dev->rb = ring_buffer__new(dev->evq_fd, on_event, dev, NULL);
	return dev->rb ? 0 : -errno;
}

void xr_progress_events(struct xroce_device *dev)
{
	dev->now_ns = xr_now_ns();
	ring_buffer__consume(dev->rb);
}

uint64_t xr_progress(struct xroce_device *dev)
{
	static const uint64_t none = UINT64_MAX;
	uint64_t next = none;
	struct xroce_qp *qp;
	bool busy = false;
	int i;

	dev->now_ns = xr_now_ns();
	if (dev->seen_ns && dev->now_ns - dev->seen_ns > XR_ABSENT_NS)
		dev->timer_hold_ns = dev->now_ns + XR_ABSENT_GRACE_NS;
	ring_buffer__consume(dev->rb);
	for (i = 0; i < dev->nplanes; i++)
		xr_plane_reap(&dev->plane[i]);
	if (dev->now_ns >= dev->ctrl_next_ns) {
		xr_ctrl_service(dev);
		dev->ctrl_next_ns = dev->now_ns + XR_CTRL_POLL_NS;
	}
	if (dev->now_ns >= dev->telem_next_ns) {
		for (qp = dev->qps; qp; qp = qp->next)
			xr_telem_publish(qp);
		dev->telem_next_ns = dev->now_ns + XR_TELEM_PERIOD_NS;
	}
	/* Each QP costs a few comparisons unless it has something to do:
	 * timers run when due (timer_due is reset to 0 whenever sending or an
	 * acknowledgement changes them), completion when something changed. */
	for (qp = dev->qps; qp; qp = qp->next) {
		if (dev->now_ns >= qp->timer_due)
			qp->timer_due = xr_qp_timers(qp);
		if (xr_qp_has_tx_work(qp)) {
			xr_qp_transmit(qp);
			/* What went out has a retransmission deadline the
			 * timers have not seen yet (transmit reset timer_due):
			 * the wake-up returned below must include it, or a
			 * lost packet on an otherwise idle QP waits for some
			 * unrelated event. */
			if (!qp->timer_due)
				qp->timer_due = xr_qp_timers(qp);
		}
		if (qp->timer_due < next)
			next = qp->timer_due;
		xr_qp_complete(qp);
		/* Busy only if the QP could send right now; a paced QP sleeps
		 * until its pacing time, a window-limited one until an ACK
		 * arrives on the event ring (which wakes the epoll wait). */
		{
			uint64_t r = xr_qp_tx_ready(qp, dev->now_ns);

			if (r == 0)
				busy = true;
			else if (r < next)
				next = r;
		}
	}
	for (i = 0; i < dev->nplanes; i++) {
		struct xr_plane *pl = &dev->plane[i];

		if (!pl->need_kick)
			continue;
		pl->need_kick = false;
		if (xr_plane_kick(pl) == -EAGAIN)
			busy = true;
	}
	dev->seen_ns = xr_now_ns();
	if (busy || next <= dev->now_ns)
		return 0;
	/* Wake up for the control socket too (connection requests). */
	if (dev->ctrl_next_ns < next)
		next = dev->ctrl_next_ns;
	return next;
}

int xroce_progress(struct xroce_device *dev)
{
	if (!dev)
		return -EINVAL;
	xr_progress(dev);
	return 0;
}
