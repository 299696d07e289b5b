/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Asynchronous events for the application's handler (ibv_get_async_event). */
#ifndef XR_ENGINE_ASYNCEV_H
#define XR_ENGINE_ASYNCEV_H

#include "device.h"

struct xroce_qp;

/* Hand an event to the device's handler, if it has one (device locked). */
void xr_event_post(struct xroce_device *dev, enum xroce_event_type type,
		   struct xroce_qp *qp, uint32_t qp_num);
/* XROCE_EVENT_RECV_NEEDED: a SEND found no receive msn on stream. */
void xr_event_recv_needed(struct xroce_device *dev, struct xroce_qp *qp,
			  uint32_t qp_num, uint16_t stream, uint32_t msn);

#endif /* XR_ENGINE_ASYNCEV_H */
