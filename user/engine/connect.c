// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The blocking halves of connection set-up: xroce_connect sends CONNECT
 * (resent until answered) and waits for ACCEPT or REJECT; xroce_accept
 * waits for a CONNECT and answers it.  While they wait, the device's other
 * connections keep going (progress rounds between waits), and the device
 * lock is free for other threads.
 */
#include <errno.h>
#include <string.h>
#include <arpa/inet.h>

#include "auth.h"
#include "cm.h"
#include "ctrl.h"
#include "engine.h"
#include "keys.h"
#include "progress.h"

#define XR_CTRL_RESEND_MS 100
#define XR_WAIT_STEP_NS 1000000ull

static uint64_t deadline_of(int timeout_ms)
{
	return timeout_ms < 0 ? UINT64_MAX :
	       xr_now_ns() + (uint64_t)timeout_ms * 1000000ull;
}

/* Wait for a control message until until_ns, keeping the device's other
 * connections going meanwhile: a server blocked in xroce_accept must still
 * retransmit and acknowledge on the QPs it already has.  A progress thread
 * may read the socket first (it queues requests and keeps answers for us),
 * so with one the wait is cut into short steps.  It also returns when an
 * answer or (for_request) a connection request is waiting. */
/* A request the blocking accept may take is queued. */
static bool have_request(const struct xroce_device *dev)
{
	uint32_t i;

	for (i = 0; i < dev->npending; i++)
		if (!dev->pending[i].id && dev->pending[i].port == dev->ctrl_port)
			return true;
	return false;
}

static int ctrl_wait(struct xroce_device *dev, uint64_t until_ns, bool for_request)
{
	for (;;) {
		uint64_t now, step;
		int rc;

		if (dev->qps && !dev->threaded)
			xr_progress(dev);
		now = xr_now_ns();
		if (now >= until_ns || dev->have_answer || (for_request && have_request(dev)))
			return 0;
		step = dev->qps || dev->threaded ? XR_WAIT_STEP_NS : until_ns - now;
		rc = xr_ctrl_wait(dev, now + (step < until_ns - now ? step :
					      until_ns - now));
		if (rc != 0)
			return rc;
	}
}

int xr_ctrl_parse_host(const char *host, uint16_t port, int *family,
		       struct sockaddr_in6 *sa)
{
	struct in_addr a4;

	memset(sa, 0, sizeof(*sa));
	sa->sin6_family = AF_INET6;
	sa->sin6_port = htons(port);
	if (inet_pton(AF_INET, host, &a4) == 1) {
		*family = AF_INET;
		xr_v4mapped(sa->sin6_addr.s6_addr, &a4);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &sa->sin6_addr) == 1) {
		*family = AF_INET6;
		return 0;
	}
	return -EINVAL;
}

/* m, signed, out of the connect's current source port (cm.h). */
static int send_signed(struct xroce_device *dev, struct xr_ctrl_msg *m,
		       const struct sockaddr_in6 *to)
{
	if (dev->auth.keyed)
		xr_auth_sign(dev->auth.key, m);
	return xr_ctrl_send_from(dev, dev->want_src[0], m, to);
}

/* The listener asked for proof that we receive at our address: the same
 * CONNECT again, with its cookie, out of the port the cookie was made for. */
static void take_cookie(struct xroce_device *dev, struct xr_ctrl_msg *m)
{
	memcpy(m->cookie, dev->cookie, sizeof(m->cookie));
	xr_cm_use_source(dev->want_src, dev->cookie_port);
	dev->have_cookie = false;
}

/* Send m to `to` until the answer to nonce arrives (1, in *ans, its local
 * port in dev->answer_port) or the deadline passes (0); a COOKIE on the
 * way makes m carry it.  Each timed resend goes out of a new source port
 * (xr_cm_rotate_source). */
static int await_answer(struct xroce_device *dev, struct xr_ctrl_msg *m,
			const struct sockaddr_in6 *to, uint64_t nonce,
			uint64_t deadline, struct xr_ctrl_msg *ans)
{
	bool timed_out = false;
	int rc;

	dev->want_nonce = nonce;
	dev->want_to = *to;
	dev->want_src[0] = dev->want_src[1] = 0;
	dev->have_answer = dev->have_cookie = false;
	for (rc = 0; !rc && xr_now_ns() < deadline;) {
		uint64_t resend = xr_now_ns() + XR_CTRL_RESEND_MS * 1000000ull;

		if (timed_out)
			xr_cm_rotate_source(dev, dev->want_src);
		timed_out = true;
		rc = send_signed(dev, m, to);
		if (rc && rc != -EAGAIN && rc != -ENOBUFS)
			break;
		rc = 0;
		while (!rc && xr_now_ns() < (resend < deadline ? resend : deadline)) {
			ctrl_wait(dev, resend < deadline ? resend : deadline, false);
			if (!dev->have_answer && !dev->have_cookie)
				rc = xr_ctrl_drain(dev, nonce, ans);
			if (dev->have_answer) {
				memcpy(ans, dev->answer, sizeof(*ans));
				rc = 1;
			} else if (dev->have_cookie) {
				take_cookie(dev, m);
				timed_out = false;
				break; /* resend at once */
			}
		}
	}
	dev->want_nonce = 0;
	dev->have_answer = dev->have_cookie = false;
	return rc;
}

int xr_qp_connect(struct xroce_qp *qp, const char *host, uint16_t port,
		  int timeout_ms)
{
	struct xroce_device *dev = qp->dev;
	struct xr_ctrl_msg m, ans;
	struct sockaddr_in6 to;
	uint64_t nonce, unauth;
	int rc, err;

	if (qp->state != XROCE_QPS_INIT)
		return xr_fail(&dev->log, -EISCONN, "xroce_connect: qp %u is not "
			       "new", qp->conn_id);
	if (xr_ctrl_parse_host(host, port, &qp->family, &to))
		return xr_fail(&dev->log, -EINVAL, "xroce_connect: %s is not a "
			       "numeric IPv4 or IPv6 address", host);
	if (!port)
		return xr_fail(&dev->log, -EINVAL, "xroce_connect: port 0");
	memset(&m, 0, sizeof(m));
	memset(&ans, 0, sizeof(ans));
	rc = xr_ctrl_fill_self(qp, &m);
	if (rc)
		return rc;
	nonce = xr_random64() | 1;
	m.op = XR_CTRL_CONNECT;
	m.nonce = htobe64(nonce);
	unauth = dev->ctrl_unauth;
	rc = await_answer(dev, &m, &to, nonce, deadline_of(timeout_ms), &ans);
	if (rc < 0)
		return xr_fail(&dev->log, rc, "xroce_connect: cannot reach %s port "
			       "%u: %s", host, port, strerror(-rc));
	if (!rc && dev->ctrl_unauth != unauth)
		return xr_fail(&dev->log, -ETIMEDOUT, "xroce_connect: %s port %u "
			       "answered without a valid signature (does it hold "
			       "the same cluster key?)", host, port);
	if (!rc)
		return xr_fail(&dev->log, -ETIMEDOUT, "xroce_connect: no answer "
			       "from %s port %u", host, port);
	if (ans.op == XR_CTRL_REJECT) {
		err = ntohs(ans.status) ? ntohs(ans.status) : ECONNREFUSED;
		return xr_fail(&dev->log, -err, "xroce_connect: %s refused the "
			       "connection: %s", host, strerror(err));
	}
	if (ntohl(ans.dst_conn) != qp->conn_id || be64toh(ans.token) != qp->rx_token)
		return xr_fail(&dev->log, -EPROTO, "xroce_connect: the answer does "
			       "not match our request");
	if (dev->auth.keyed) {
		xr_auth_conn_key(&dev->auth, nonce, be64toh(ans.nonce2), qp->conn_id,
				 ntohl(ans.src_conn), qp->conn_key);
		qp->keyed = true;
		xr_keys_init(qp, true);
	}
	/* CLOSE goes out of the port the answer came to (cm.h). */
	qp->ctrl_lport = xr_cm_lport(dev, dev->answer_port);
	return xr_ctrl_establish(qp, &ans, &to);
}

static void reject(struct xroce_device *dev, const struct xr_ctrl_req *q, int err)
{
	const struct xr_ctrl_msg *req = (const struct xr_ctrl_msg *)q->msg;
	struct xr_ctrl_msg r;

	memset(&r, 0, sizeof(r));
	r.ver_type = XR_VER_TYPE(XR_T_CTRL);
	r.op = XR_CTRL_REJECT;
	r.status = htons((uint16_t)err);
	r.nonce = req->nonce;
	if (dev->auth.keyed)
		xr_auth_sign(dev->auth.key, &r);
	xr_ctrl_send_from(dev, q->port, &r, &q->from);
}

/* Take the oldest queued request for the device's own port into *req
 * (not one xroce_get_conn_req handed out); false if there is none. */
static bool pop_request(struct xroce_device *dev, struct xr_ctrl_req *req)
{
	uint32_t i;

	for (i = 0; i < dev->npending; i++) {
		if (dev->pending[i].id || dev->pending[i].port != dev->ctrl_port)
			continue;
		*req = dev->pending[i];
		xr_ctrl_req_remove(dev, i);
		return true;
	}
	return false;
}

void xr_ctrl_req_remove(struct xroce_device *dev, uint32_t i)
{
	memmove(&dev->pending[i], &dev->pending[i + 1],
		(dev->npending - i - 1) * sizeof(dev->pending[0]));
	dev->npending--;
}

/* Connect qp as the request asks and answer it (remembered, so that a
 * resent CONNECT gets the same ACCEPT) out of the socket the request came
 * to, which carries the connection's control messages from then on. */
int xr_ctrl_answer_request(struct xroce_qp *qp, const struct xr_ctrl_req *req)
{
	struct xroce_device *dev = qp->dev;
	const struct xr_ctrl_msg *m = (const struct xr_ctrl_msg *)req->msg;
	uint64_t snonce = xr_random64();
	struct xr_ctrl_recent *r;
	struct xr_ctrl_msg a;
	int rc;

	qp->family = m->family == 6 ? AF_INET6 : AF_INET;
	qp->ctrl_lport = req->port;
	memset(&a, 0, sizeof(a));
	rc = xr_ctrl_fill_self(qp, &a);
	if (dev->auth.keyed) {
		xr_auth_conn_key(&dev->auth, be64toh(m->nonce), snonce,
				 ntohl(m->src_conn), qp->conn_id, qp->conn_key);
		qp->keyed = true;
		xr_keys_init(qp, false);
	}
	if (!rc)
		rc = xr_ctrl_establish(qp, m, &req->from);
	if (rc) {
		reject(dev, req, -rc);
		return rc;
	}
	a.op = XR_CTRL_ACCEPT;
	a.nonce = m->nonce;
	a.nonce2 = htobe64(snonce);
	a.dst_conn = m->src_conn;
	a.token = m->rx_token;
	a.mtu = htonl(qp->mtu);
	if (dev->auth.keyed)
		xr_auth_sign(dev->auth.key, &a);
	r = &dev->recent[dev->recent_pos++ % XR_CTRL_RECENT];
	r->valid = true;
	r->nonce = be64toh(m->nonce);
	r->from = req->from;
	r->port = req->port;
	r->conn = qp->conn_id;
	memcpy(r->reply, &a, sizeof(a));
	xr_ctrl_send_from(dev, req->port, &a, &req->from);
	return 0;
}

int xr_qp_accept(struct xroce_qp *qp, int timeout_ms)
{
	struct xroce_device *dev = qp->dev;
	uint64_t deadline = deadline_of(timeout_ms);
	struct xr_ctrl_req req;

	if (qp->state != XROCE_QPS_INIT)
		return xr_fail(&dev->log, -EISCONN, "xroce_accept: qp %u is not new",
			       qp->conn_id);
	for (;;) {
		xr_ctrl_drain(dev, 0, NULL);
		/* A request that cannot be served is refused and forgotten;
		 * the listener waits on for the next (no datagram stops it). */
		if (pop_request(dev, &req) && !xr_ctrl_answer_request(qp, &req))
			return 0;
		if (timeout_ms == 0)
			return -ETIMEDOUT; /* a poll, not a failure */
		if (xr_now_ns() >= deadline)
			return xr_fail(&dev->log, -ETIMEDOUT,
				       "xroce_accept: no connection request");
		ctrl_wait(dev, deadline, true);
	}
}

int xr_qp_set_private_data(struct xroce_qp *qp, const void *data, size_t len)
{
	if (len > XROCE_PRIVATE_DATA_MAX)
		return xr_fail(&qp->dev->log, -EINVAL, "private data is at most %d "
			       "bytes", XROCE_PRIVATE_DATA_MAX);
	if (qp->state != XROCE_QPS_INIT)
		return xr_fail(&qp->dev->log, -EISCONN, "private data must be set "
			       "before connecting");
	memcpy(qp->priv, data, len);
	qp->priv_len = (uint8_t)len;
	return 0;
}

int xr_qp_get_private_data(const struct xroce_qp *qp, void *buf, size_t len)
{
	if (qp->state == XROCE_QPS_INIT)
		return -ENOTCONN;
	memcpy(buf, qp->peer_priv, len < qp->peer_priv_len ? len : qp->peer_priv_len);
	return qp->peer_priv_len;
}
