/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Asynchronous events for the application's handler (ibv_get_async_event). */
#ifndef XR_ENGINE_ASYNCEV_H
#define XR_ENGINE_ASYNCEV_H

#include "device.h"

struct xroce_qp;

/* Hand an event to the device's handler, if it has one (device locked). */
void xr_event_post(struct xroce_device *dev, enum xroce_event_type type,
		   struct xroce_qp *qp, uint32_t qp_num);

#endif /* XR_ENGINE_ASYNCEV_H */
