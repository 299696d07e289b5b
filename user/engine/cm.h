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
	uint16_t src[2];                   /* source ports, current first (below) */
	int result;                        /* -EINPROGRESS until answered */
	bool active;
};

/*
 * A CONNECT that goes unanswered is resent from another source port.
 * Switches that spread flows over equal-cost paths hash the UDP ports, so
 * a fixed pair of ports rides one link, and if that link is dead (and no
 * routing protocol moved the route) every resend is lost there: an MPI
 * job waited forever for connections across a failed spine link.  Each
 * timed resend after the first goes out of a fresh socket of the device
 * (an unlistened port: it takes answers, never CONNECTs), and the answer
 * comes back to that port, so both directions cross a new path.  src[0] is
 * the current source port, src[1] the one before, whose answer may still
 * be on its way; 0 is the control socket.  A COOKIE is bound to the port
 * it was sent to, so the CONNECT carrying it goes out of that port again.
 * The connection then speaks through the port its answer came to.
 * Sockets no connect or QP uses are closed (gc).  Rotating needs a free
 * slot among XR_LISTEN_MAX; without one the resend keeps its port.
 */
void xr_cm_rotate_source(struct xroce_device *dev, uint16_t src[2]);
/* Make port, where an answer or COOKIE came, the current source. */
void xr_cm_use_source(uint16_t src[2], uint16_t port);
/* A QP's ctrl_lport for local port (0: the control socket). */
uint16_t xr_cm_lport(const struct xroce_device *dev, uint16_t port);

/* Progress: read the listening sockets, hand stashed answers to their
 * connects, resend CONNECTs, time connects and held requests out. */
void xr_cm_service(struct xroce_device *dev);
/* Device close: the listening sockets. */
void xr_cm_close(struct xroce_device *dev);

#endif /* XR_ENGINE_CM_H */
