/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Telemetry for other processes (`xroce stats`): per-QP, per-path figures
 * in the first pages of the device's memory map (layout in abi.h).
 */
#ifndef XR_ENGINE_TELEM_H
#define XR_ENGINE_TELEM_H

#include "device.h"
#include "qp.h"

void xr_telem_init(struct xroce_device *dev);
/* Each plane's interface and transmit engine, once the planes started. */
void xr_telem_planes(struct xroce_device *dev);
void xr_telem_attach(struct xroce_qp *qp);   /* take a slot (if any free) */
void xr_telem_detach(struct xroce_qp *qp);
void xr_telem_publish(struct xroce_qp *qp);
/* The device's own counters (control messages dropped, by reason). */
void xr_telem_publish_dev(struct xroce_device *dev);

#endif /* XR_ENGINE_TELEM_H */
