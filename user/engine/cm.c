// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Connection set-up without blocking.  The messages and their checks are
 * the blocking calls' (connect.c, ctrl.c): a connect started here sends
 * the same CONNECT (signed with a cluster key) and resends it every
 * 100 ms; its COOKIE, ACCEPT or REJECT, read by whoever drains the control
 * sockets, waits in the device's stash until xr_cm_service hands it to
 * the QP whose nonce it carries, if it came from the address and port the
 * CONNECT went to.  A COOKIE makes the CONNECT carry it, resent at once.
 *
 * On the listening side requests reach the queue only as they reach it
 * for xroce_accept: from an address accept_from allows, believable, with
 * a valid cookie.  A request stays in the queue once taken, so a resent
 * CONNECT is not reported twice; it leaves when answered (the answer is
 * remembered for resends, as the blocking accept's is) or after 30 s
 * unanswered.  Listening ports are sockets of their own: what answers a
 * request leaves by the socket it came to (ctrl.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "auth.h"
#include "bind.h"
#include "cm.h"
#include "ctrl.h"
#include "engine.h"
#include "keys.h"

#define XR_CM_RESEND_NS (100 * 1000000ull)
#define XR_CM_HOLD_NS (30 * 1000000000ull)

/* A UDP socket bound to sa, in the device's socket table (closed: an
 * unlistened port, which takes answers but no CONNECT) and in the progress
 * thread's epoll set; returns its port or a negative errno. */
static int add_socket(struct xroce_device *dev, struct sockaddr_in6 *sa, bool closed,
		      const char *what)
{
	struct epoll_event ev = { .events = EPOLLIN };
	socklen_t len = sizeof(*sa);
	struct xr_listen *l;
	int fd, off = 0, rc;

	if (dev->nlisten == XR_LISTEN_MAX)
		return xr_fail(&dev->log, -ENOSPC, "%s: at most %d ports", what,
			       XR_LISTEN_MAX);
	fd = socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return xr_fail(&dev->log, -errno, "%s: socket: %s", what,
			       strerror(errno));
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
	if (bind(fd, (struct sockaddr *)sa, sizeof(*sa)) ||
	    getsockname(fd, (struct sockaddr *)sa, &len)) {
		rc = -errno;
		close(fd);
		return xr_fail(&dev->log, rc, "%s: port %u: %s", what,
			       ntohs(sa->sin6_port), strerror(-rc));
	}
	/* A sleeping progress thread wakes for messages on it too. */
	ev.data.u32 = 3;
	if (epoll_ctl(dev->epfd, EPOLL_CTL_ADD, fd, &ev)) {
		rc = -errno;
		close(fd);
		return xr_fail(&dev->log, rc, "%s: epoll_ctl: %s", what,
			       strerror(-rc));
	}
	l = &dev->listen[dev->nlisten++];
	l->fd = fd;
	l->port = ntohs(sa->sin6_port);
	l->closed = closed;
	return l->port;
}

static void close_listener(struct xroce_device *dev, uint32_t i)
{
	epoll_ctl(dev->epfd, EPOLL_CTL_DEL, dev->listen[i].fd, NULL);
	close(dev->listen[i].fd);
	dev->listen[i] = dev->listen[--dev->nlisten];
}

/* Whether a connection, a connect under way or a taken request still
 * speaks through port. */
static bool port_in_use(const struct xroce_device *dev, uint16_t port)
{
	const struct xroce_qp *qp;
	uint32_t i;

	for (qp = dev->qps; qp; qp = qp->next)
		if (qp->ctrl_lport == port ||
		    (qp->cm && qp->cm->active &&
		     (qp->cm->src[0] == port || qp->cm->src[1] == port)) ||
		    (qp->bind && qp->state == XROCE_QPS_CONNECTING &&
		     (qp->bind->src[0] == port || qp->bind->src[1] == port)))
			return true;
	if (dev->want_nonce && (dev->want_src[0] == port || dev->want_src[1] == port))
		return true;
	for (i = 0; i < dev->npending; i++)
		if (dev->pending[i].port == port)
			return true;
	return false;
}

/* Close the unlistened sockets nothing speaks through any more. */
static void gc_listeners(struct xroce_device *dev)
{
	uint32_t i;

	for (i = 0; i < dev->nlisten; i++)
		if (dev->listen[i].closed && !port_in_use(dev, dev->listen[i].port))
			close_listener(dev, i--);
}

void xr_cm_rotate_source(struct xroce_device *dev, uint16_t src[2])
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6 };
	int port;

	memcpy(&sa.sin6_addr, dev->ctrl_addr, 16);
	gc_listeners(dev);
	port = add_socket(dev, &sa, true, "connect source port");
	if (port <= 0)
		return; /* logged; the resend keeps its port */
	src[1] = src[0];
	src[0] = (uint16_t)port;
}

void xr_cm_use_source(uint16_t src[2], uint16_t port)
{
	if (port == src[0])
		return;
	src[1] = src[0];
	src[0] = port;
}

uint16_t xr_cm_lport(const struct xroce_device *dev, uint16_t port)
{
	return port == dev->ctrl_port ? 0 : port;
}

int xr_listen(struct xroce_device *dev, const char *addr, uint16_t port)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6, .sin6_port = htons(port) };
	int family;

	if (addr && xr_ctrl_parse_host(addr, port, &family, &sa))
		return xr_fail(&dev->log, -EINVAL, "xroce_listen: %s is not a "
			       "numeric address", addr);
	gc_listeners(dev);
	return add_socket(dev, &sa, false, "xroce_listen");
}

int xr_unlisten(struct xroce_device *dev, uint16_t port)
{
	uint32_t i, j;

	for (i = 0; i < dev->nlisten; i++) {
		if (dev->listen[i].port != port || dev->listen[i].closed)
			continue;
		/* Requests nobody took are forgotten; taken ones may still be
		 * answered, and accepted connections keep their socket. */
		dev->listen[i].closed = true;
		for (j = 0; j < dev->npending; j++)
			if (dev->pending[j].port == port && !dev->pending[j].id)
				xr_ctrl_req_remove(dev, j--);
		gc_listeners(dev);
		return 0;
	}
	return xr_fail(&dev->log, -ENOENT, "xroce_unlisten: not listening on "
		       "port %u", port);
}

void xr_cm_close(struct xroce_device *dev)
{
	while (dev->nlisten)
		close_listener(dev, 0);
}

static int find_taken(const struct xroce_device *dev, uint64_t id)
{
	uint32_t i;

	for (i = 0; id && i < dev->npending; i++)
		if (dev->pending[i].id == id)
			return (int)i;
	return -1;
}

int xr_conn_req_get(struct xroce_device *dev, struct xroce_conn_req *req)
{
	uint32_t i;

	xr_ctrl_drain(dev, 0, NULL);
	for (i = 0; i < dev->npending; i++) {
		struct xr_ctrl_req *p = &dev->pending[i];
		const struct xr_ctrl_msg *m = (const void *)p->msg;

		if (p->id)
			continue;
		p->id = ++dev->req_id;
		p->taken_ns = xr_now_ns();
		memset(req, 0, sizeof(*req));
		req->id = p->id;
		req->port = p->port;
		req->family = m->family == 6 ? AF_INET6 : AF_INET;
		memcpy(req->peer_addr, &p->from.sin6_addr, 16);
		req->peer_port = ntohs(p->from.sin6_port);
		req->private_data_len = m->priv_len <= XROCE_PRIVATE_DATA_MAX ?
					m->priv_len : 0;
		memcpy(req->private_data, m->priv, req->private_data_len);
		return 0;
	}
	return -EAGAIN;
}

int xr_conn_req_accept(struct xroce_qp *qp, const struct xroce_conn_req *req)
{
	struct xroce_device *dev = qp->dev;
	struct xr_ctrl_req r;
	int i = find_taken(dev, req->id), rc;

	if (qp->state != XROCE_QPS_INIT || qp->cm)
		return xr_fail(&dev->log, -EISCONN, "xroce_accept_conn_req: qp %u "
			       "is not new", qp->conn_id);
	if (i < 0)
		return xr_fail(&dev->log, -ENOENT, "xroce_accept_conn_req: no "
			       "request %llu (answered, or held over 30 s)",
			       (unsigned long long)req->id);
	r = dev->pending[i];
	xr_ctrl_req_remove(dev, (uint32_t)i);
	rc = xr_ctrl_answer_request(qp, &r);
	gc_listeners(dev);
	return rc;
}

int xr_conn_req_reject(struct xroce_device *dev, const struct xroce_conn_req *req,
		       const void *data, size_t len)
{
	const struct xr_ctrl_msg *m;
	struct xr_ctrl_recent *rc;
	struct xr_ctrl_msg a;
	struct xr_ctrl_req r;
	int i = find_taken(dev, req->id);

	if (len > XROCE_PRIVATE_DATA_MAX)
		return xr_fail(&dev->log, -EINVAL, "xroce_reject_conn_req: private "
			       "data is at most %d bytes", XROCE_PRIVATE_DATA_MAX);
	if (i < 0)
		return xr_fail(&dev->log, -ENOENT, "xroce_reject_conn_req: no "
			       "request %llu", (unsigned long long)req->id);
	r = dev->pending[i];
	xr_ctrl_req_remove(dev, (uint32_t)i);
	m = (const void *)r.msg;
	memset(&a, 0, sizeof(a));
	a.ver_type = XR_VER_TYPE(XR_T_CTRL);
	a.op = XR_CTRL_REJECT;
	a.status = htons(ECONNREFUSED);
	a.nonce = m->nonce;
	a.priv_len = (uint8_t)len;
	if (len)
		memcpy(a.priv, data, len);
	if (dev->auth.keyed)
		xr_auth_sign(dev->auth.key, &a);
	/* Remembered like an ACCEPT: a resent CONNECT gets it again. */
	rc = &dev->recent[dev->recent_pos++ % XR_CTRL_RECENT];
	rc->valid = true;
	rc->nonce = be64toh(m->nonce);
	rc->from = r.from;
	rc->port = r.port;
	rc->conn = 0;
	memcpy(rc->reply, &a, sizeof(a));
	xr_ctrl_send_from(dev, r.port, &a, &r.from);
	gc_listeners(dev);
	return 0;
}

/* The CONNECT (again), signed when there is a cluster key, out of the
 * connect's current source port. */
static int send_connect(struct xroce_device *dev, struct xr_cm_conn *cm)
{
	if (dev->auth.keyed)
		xr_auth_sign(dev->auth.key, &cm->msg);
	return xr_ctrl_send_from(dev, cm->src[0], &cm->msg, &cm->to);
}

int xr_qp_connect_start(struct xroce_qp *qp, const char *host, uint16_t port,
			int timeout_ms)
{
	struct xroce_device *dev = qp->dev;
	struct xr_cm_conn *cm;
	int rc;

	if (qp->state != XROCE_QPS_INIT || qp->cm)
		return xr_fail(&dev->log, -EISCONN, "xroce_connect_start: qp %u is "
			       "not new", qp->conn_id);
	if (!port)
		return xr_fail(&dev->log, -EINVAL, "xroce_connect_start: port 0");
	cm = calloc(1, sizeof(*cm));
	if (!cm)
		return xr_fail(&dev->log, -ENOMEM, "out of memory");
	if (xr_ctrl_parse_host(host, port, &qp->family, &cm->to)) {
		free(cm);
		return xr_fail(&dev->log, -EINVAL, "xroce_connect_start: %s is not "
			       "a numeric IPv4 or IPv6 address", host);
	}
	rc = xr_ctrl_fill_self(qp, &cm->msg);
	if (rc) {
		free(cm);
		return rc;
	}
	cm->nonce = xr_random64() | 1;
	cm->msg.op = XR_CTRL_CONNECT;
	cm->msg.nonce = htobe64(cm->nonce);
	cm->deadline_ns = timeout_ms < 0 ? UINT64_MAX :
			  xr_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	cm->resend_ns = xr_now_ns() + XR_CM_RESEND_NS;
	cm->result = -EINPROGRESS;
	cm->active = true;
	qp->cm = cm;
	dev->nconnecting++;
	rc = send_connect(dev, cm);
	if (rc && rc != -EAGAIN && rc != -ENOBUFS)
		xr_log(&dev->log, XROCE_LOG_WARN, "xroce_connect_start: %s port %u: "
		       "%s (resending)", host, port, strerror(-rc));
	return 0;
}

/* The peer's ACCEPT or REJECT for qp's connect, come to local port. */
static void on_answer(struct xroce_qp *qp, const struct xr_ctrl_msg *m,
		      const struct sockaddr_in6 *from, uint16_t port)
{
	struct xr_cm_conn *cm = qp->cm;
	int err;

	cm->active = false;
	if (m->op == XR_CTRL_REJECT) {
		err = ntohs(m->status) ? ntohs(m->status) : ECONNREFUSED;
		if (m->priv_len <= XROCE_PRIVATE_DATA_MAX) {
			qp->peer_priv_len = m->priv_len;
			memcpy(qp->peer_priv, m->priv, m->priv_len);
		}
		qp->state = XROCE_QPS_ERR;
		cm->result = -err;
		xr_log(&qp->dev->log, XROCE_LOG_INFO, "qp %u: connection refused: %s",
		       qp->conn_id, strerror(err));
		return;
	}
	if (ntohl(m->dst_conn) != qp->conn_id || be64toh(m->token) != qp->rx_token) {
		cm->result = xr_fail(&qp->dev->log, -EPROTO, "qp %u: the answer does "
				     "not match our request", qp->conn_id);
		qp->state = XROCE_QPS_ERR;
		return;
	}
	if (qp->dev->auth.keyed) {
		xr_auth_conn_key(&qp->dev->auth, cm->nonce, be64toh(m->nonce2),
				 qp->conn_id, ntohl(m->src_conn), qp->conn_key);
		qp->keyed = true;
		xr_keys_init(qp, true);
	}
	/* The answer came from where the CONNECT went (hand_out_answers):
	 * CLOSE goes there too, out of the port the answer came to (a path
	 * that worked). */
	qp->ctrl_lport = xr_cm_lport(qp->dev, port);
	cm->result = xr_ctrl_establish(qp, m, from);
	if (cm->result)
		qp->state = XROCE_QPS_ERR;
}

static bool same_peer(const struct sockaddr_in6 *a, const struct sockaddr_in6 *b)
{
	return !memcmp(&a->sin6_addr, &b->sin6_addr, 16) && a->sin6_port == b->sin6_port;
}

/* Each stashed answer to the connect whose nonce it carries, if it came
 * from where that CONNECT went; the rest were late or forged. */
static void hand_out_answers(struct xroce_device *dev)
{
	uint32_t i;

	for (i = 0; i < dev->nstash; i++) {
		const struct xr_ctrl_msg *m = (const void *)dev->stash[i].msg;
		const struct sockaddr_in6 *from = &dev->stash[i].from;
		uint64_t nonce = be64toh(m->nonce);
		struct xroce_qp *qp;

		for (qp = dev->qps; qp; qp = qp->next)
			if (qp->cm && qp->cm->active && qp->cm->nonce == nonce)
				break;
		if (!qp)
			continue;
		if (!same_peer(from, &qp->cm->to)) {
			dev->ctrl_spoofed++;
		} else if (m->op == XR_CTRL_COOKIE) {
			/* Proof that we receive where we claim: resend now, out
			 * of the port the cookie was made for. */
			memcpy(qp->cm->msg.cookie, m->cookie, sizeof(m->cookie));
			xr_cm_use_source(qp->cm->src, dev->stash[i].port);
			send_connect(dev, qp->cm);
			qp->cm->resend_ns = xr_now_ns() + XR_CM_RESEND_NS;
		} else {
			on_answer(qp, m, from, dev->stash[i].port);
		}
	}
	dev->nstash = 0;
}

/* Resend CONNECTs, time connects out; counts those still under way. */
static void drive_connects(struct xroce_device *dev, uint64_t now)
{
	struct xroce_qp *qp;
	uint32_t n = 0;

	for (qp = dev->qps; qp; qp = qp->next) {
		struct xr_cm_conn *cm = qp->cm;

		if (!cm || !cm->active)
			continue;
		if (now >= cm->deadline_ns) {
			cm->active = false;
			cm->result = xr_fail(&dev->log, -ETIMEDOUT, "qp %u: no answer "
					     "to the connection request", qp->conn_id);
			continue;
		}
		n++;
		if (now >= cm->resend_ns) {
			xr_cm_rotate_source(dev, cm->src);
			send_connect(dev, cm);
			cm->resend_ns = now + XR_CM_RESEND_NS;
		}
	}
	dev->nconnecting = n;
}

void xr_cm_service(struct xroce_device *dev)
{
	uint64_t now = xr_now_ns();
	uint32_t i;

	hand_out_answers(dev);
	drive_connects(dev, now);
	for (i = 0; i < dev->npending; i++) {
		if (dev->pending[i].id && now - dev->pending[i].taken_ns > XR_CM_HOLD_NS) {
			xr_log(&dev->log, XROCE_LOG_WARN, "connection request %llu "
			       "unanswered for 30 s: forgotten",
			       (unsigned long long)dev->pending[i].id);
			xr_ctrl_req_remove(dev, i--);
		}
	}
	gc_listeners(dev);
}

int xr_qp_connect_poll(struct xroce_qp *qp)
{
	struct xroce_device *dev = qp->dev;

	if (!qp->cm)
		return xr_fail(&dev->log, -EINVAL, "xroce_connect_poll: qp %u has "
			       "no connect under way", qp->conn_id);
	if (qp->cm->active) {
		xr_ctrl_drain(dev, 0, NULL);
		xr_cm_service(dev);
	}
	return qp->cm->active ? -EINPROGRESS : qp->cm->result;
}
