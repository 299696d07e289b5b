/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The control plane: each device's UDP control socket and the messages on
 * it (CONNECT / ACCEPT / REJECT / CLOSE / CLOSE_ACK).  Handling a message
 * never blocks; the blocking calls that wait for one are in connect.c.
 */
#ifndef XR_ENGINE_CTRL_H
#define XR_ENGINE_CTRL_H

#include <string.h>
#include <sys/socket.h>

#include "device.h"
#include "qp.h"

/* IPv4 address a4 as ::ffff:a.b.c.d. */
static inline void xr_v4mapped(uint8_t out[16], const void *a4)
{
	memset(out, 0, 10);
	out[10] = 0xff;
	out[11] = 0xff;
	memcpy(out + 12, a4, 4);
}

int xr_ctrl_open(struct xroce_device *dev, const char *addr, uint16_t port);
void xr_ctrl_close(struct xroce_device *dev);
int xr_ctrl_send(struct xroce_device *dev, const struct xr_ctrl_msg *m,
		 const struct sockaddr_in6 *to);
/* The socket of local port `port`: a listening one (cm.c), else (0, or a
 * port no longer listened on) the device's control socket. */
int xr_ctrl_fd(const struct xroce_device *dev, uint16_t port);
/* Send m out of local port `port`'s socket; 0 or -errno. */
int xr_ctrl_send_from(struct xroce_device *dev, uint16_t port,
		      const struct xr_ctrl_msg *m, const struct sockaddr_in6 *to);
/* The fields CONNECT and ACCEPT carry about their sender. */
int xr_ctrl_fill_self(struct xroce_qp *qp, struct xr_ctrl_msg *m);
/* Why the peer's half of a CONNECT / ACCEPT cannot be believed (its claims
 * disagree with each other, with us, or with its source), or NULL. */
const char *xr_ctrl_check_peer(const struct xroce_device *dev,
			       const struct xr_ctrl_msg *m,
			       const struct sockaddr_in6 *from);
/* Take the peer's half of a CONNECT / ACCEPT and go to RTS. */
int xr_ctrl_establish(struct xroce_qp *qp, const struct xr_ctrl_msg *m,
		      const struct sockaddr_in6 *from);
/* Read and handle every queued message; returns 1 (with *answer filled)
 * if one answered the connect waiting for want_nonce. */
int xr_ctrl_drain(struct xroce_device *dev, uint64_t want_nonce,
		  struct xr_ctrl_msg *answer);
void xr_ctrl_service(struct xroce_device *dev);
/* Wait (without the device lock) until the socket is readable or until_ns;
 * poll's result. */
int xr_ctrl_wait(struct xroce_device *dev, uint64_t until_ns);
/* connect.c: connect qp as the queued request asks and answer it with an
 * ACCEPT (remembered for resent CONNECTs); remove queued request i. */
int xr_ctrl_answer_request(struct xroce_qp *qp, const struct xr_ctrl_req *req);
/* connect.c: a numeric IPv4 / IPv6 host and port as a dual-stack address. */
int xr_ctrl_parse_host(const char *host, uint16_t port, int *family,
		       struct sockaddr_in6 *sa);
void xr_ctrl_req_remove(struct xroce_device *dev, uint32_t i);
/* Tell the peer a connection is gone (resent until CLOSE_ACK, briefly). */
void xr_ctrl_send_close(struct xroce_qp *qp);
/* One datagram received on the control socket (len bytes from `from`, whose
 * address length was flen): checked and handled.  Returns 1 if it is the
 * answer (ACCEPT / REJECT) to the connect waiting for want_nonce (then
 * copied to *answer), else 0.  xr_ctrl_drain's path; tests feed it. */
int xr_ctrl_handle_msg(struct xroce_device *dev, const void *buf, size_t len,
		       const struct sockaddr_in6 *from, socklen_t flen,
		       uint64_t want_nonce, struct xr_ctrl_msg *answer);

#endif /* XR_ENGINE_CTRL_H */
