/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Connection set-up without blocking, for event-driven callers: extra
 * listening ports, requests taken one by one and answered (ACCEPT, or
 * REJECT with private data), connects started and polled.  The exchange
 * itself is connect.c's and ctrl.c's; this room only never waits.
 */
#ifndef XR_ENGINE_CM_H
#define XR_ENGINE_CM_H

#include "device.h"
#include "qp.h"

/* A connect under way (qp->cm). */
struct xr_cm_conn {
	struct xr_ctrl_msg msg;            /* the CONNECT, resent as it is */
	struct sockaddr_in6 to;
	uint64_t nonce;
	uint64_t deadline_ns, resend_ns;
	int result;                        /* -EINPROGRESS until answered */
	bool active;
};

/* Progress: read the listening sockets, hand stashed answers to their
 * connects, resend CONNECTs, time connects and held requests out. */
void xr_cm_service(struct xroce_device *dev);
/* Device close: the listening sockets. */
void xr_cm_close(struct xroce_device *dev);

#endif /* XR_ENGINE_CM_H */
