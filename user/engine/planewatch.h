/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Watching the planes while the device is open: xroce's XDP program
 * leaving an interface (or coming back), an interface's MTU going down.
 */
#ifndef XR_ENGINE_PLANEWATCH_H
#define XR_ENGINE_PLANEWATCH_H

#include "device.h"

/* Look at every plane once (the progress round calls it a few times a
 * second): fail every RTS connection when xroce is attached to no plane;
 * give an idle connection a lowered MTU before its next packet. */
void xr_planes_watch(struct xroce_device *dev);

#endif /* XR_ENGINE_PLANEWATCH_H */
