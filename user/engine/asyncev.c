// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Asynchronous events, one job: hand "a QP failed on its own", "a bound
 * QP is ready" and "a SEND found no receive" to the application's handler.  The handler runs here, with
 * the device locked, so it only records the event (xroce.h).
 */
#include "asyncev.h"
#include "engine.h"

int xr_set_event_handler(struct xroce_device *dev, xroce_event_fn fn, void *arg)
{
	dev->event_fn = fn;
	dev->event_arg = arg;
	return 0;
}

void xr_event_post(struct xroce_device *dev, enum xroce_event_type type,
		   struct xroce_qp *qp, uint32_t qp_num)
{
	struct xroce_event ev = { .type = type, .qp = qp, .qp_num = qp_num };

	if (dev->event_fn)
		dev->event_fn(&ev, dev->event_arg);
}

void xr_event_recv_needed(struct xroce_device *dev, struct xroce_qp *qp,
			  uint32_t qp_num, uint16_t stream, uint32_t msn)
{
	struct xroce_event ev = { .type = XROCE_EVENT_RECV_NEEDED, .qp = qp,
				  .qp_num = qp_num, .stream = stream, .msn = msn };

	if (dev->event_fn)
		dev->event_fn(&ev, dev->event_arg);
}
