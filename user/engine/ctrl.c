// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Connection set-up over each device's control socket (plain UDP, never
 * seen by XDP):
 *
 *   client                                  server (xroce_accept waiting)
 *   CONNECT {nonce, conn, token, PSN/CSN,  ->
 *            data port, entropy ports, addresses per plane}
 *                                           program its connection (RTS)
 *                                       <-  ACCEPT {same fields, its own}
 *   program its connection (RTS)
 *
 * A lost CONNECT or ACCEPT is repaired by the client resending CONNECT with
 * the same nonce; the server remembers recent answers and resends the same
 * ACCEPT.  CLOSE (with the receiver's token) tells the peer a connection is
 * gone, so its outstanding work is flushed at once instead of timing out.
 *
 * Besides its control socket a device may listen on more ports (cm.c's
 * xroce_listen).  Every socket is read here and each message is handled
 * the same way; what answers a request goes out of the socket it came to,
 * and so do a connection's later CLOSE and CLOSE_ACK: the peer sees one
 * address and port for the connection, the one it connected to, and
 * takes answers only from there.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include <bpf/bpf.h>

#include "auth.h"
#include "complete.h"
#include "ctrl.h"
#include "events.h"
#include "paths.h"
#include "qp_state.h"
#include "sender.h"
#include "stream.h"

#define XR_CLOSE_TRIES 3
#define XR_CLOSE_WAIT_MS 20

_Static_assert(XROCE_PRIVATE_DATA_MAX == XR_CTRL_PRIV_MAX, "private data size");

/* The control socket is the process's proof of life to XDP and to other
 * processes' clean-up (struct xr_domain): it carries a random SO_MARK that
 * a process without CAP_NET_ADMIN cannot give its own socket, so one that
 * later binds this port is not taken for us.  Without the capability the
 * port alone vouches (and a squatter on it could keep a dead domain). */
static void owner_mark(struct xroce_device *dev)
{
	uint32_t mark;

	do
		mark = (uint32_t)xr_random64();
	while (!mark);
	if (setsockopt(dev->ctrl_fd, SOL_SOCKET, SO_MARK, &mark, sizeof(mark))) {
		xr_log(&dev->log, XROCE_LOG_WARN, "control socket: SO_MARK refused "
		       "(%s): liveness falls back to the port alone", strerror(errno));
		mark = 0;
	}
	dev->ctrl_mark = mark;
}

int xr_ctrl_open(struct xroce_device *dev, const char *addr, uint16_t port)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6, .sin6_port = htons(port) };
	socklen_t len = sizeof(sa);
	int off = 0;

	if (addr) {
		struct in_addr a4;

		if (inet_pton(AF_INET, addr, &a4) == 1)
			xr_v4mapped(sa.sin6_addr.s6_addr, &a4);
		else if (inet_pton(AF_INET6, addr, &sa.sin6_addr) != 1)
			return xr_fail(&dev->log, -EINVAL, "bad control address %s", addr);
	}
	dev->ctrl_fd = socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (dev->ctrl_fd < 0)
		return xr_fail(&dev->log, -errno, "control socket: %s", strerror(errno));
	setsockopt(dev->ctrl_fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
	owner_mark(dev);
	if (bind(dev->ctrl_fd, (struct sockaddr *)&sa, sizeof(sa)))
		return xr_fail(&dev->log, -errno, "cannot bind the control socket to "
			       "port %u: %s", port, strerror(errno));
	if (getsockname(dev->ctrl_fd, (struct sockaddr *)&sa, &len))
		return xr_fail(&dev->log, -errno, "getsockname: %s", strerror(errno));
	dev->ctrl_port = ntohs(sa.sin6_port);
	dev->rx_port = dev->ctrl_port;
	memcpy(dev->ctrl_addr, &sa.sin6_addr, 16);
	return 0;
}

void xr_ctrl_close(struct xroce_device *dev)
{
	if (dev->ctrl_fd >= 0)
		close(dev->ctrl_fd);
	dev->ctrl_fd = -1;
}

int xr_ctrl_fd(const struct xroce_device *dev, uint16_t port)
{
	uint32_t i;

	for (i = 0; port && port != dev->ctrl_port && i < dev->nlisten; i++)
		if (dev->listen[i].port == port)
			return dev->listen[i].fd;
	return dev->ctrl_fd;
}

int xr_ctrl_send_from(struct xroce_device *dev, uint16_t port,
		      const struct xr_ctrl_msg *m, const struct sockaddr_in6 *to)
{
	if (sendto(xr_ctrl_fd(dev, port), m, sizeof(*m), 0,
		   (const struct sockaddr *)to, sizeof(*to)) < 0)
		return -errno;
	return 0;
}

int xr_ctrl_send(struct xroce_device *dev, const struct xr_ctrl_msg *m,
		 const struct sockaddr_in6 *to)
{
	return xr_ctrl_send_from(dev, dev->ctrl_port, m, to);
}

/* Our address on plane i for the QP's family; false if there is none. */
static bool plane_addr(const struct xroce_device *dev, int i, int family,
		       uint8_t out[16])
{
	const struct xr_plane *pl = &dev->plane[i];

	if (family == AF_INET && pl->has4) {
		xr_v4mapped(out, pl->addr4);
		return true;
	}
	if (family == AF_INET6 && pl->has6) {
		memcpy(out, pl->addr6, 16);
		return true;
	}
	return false;
}

/* Fill the fields both CONNECT and ACCEPT carry about the sender. */
int xr_ctrl_fill_self(struct xroce_qp *qp, struct xr_ctrl_msg *m)
{
	struct xroce_device *dev = qp->dev;
	int i;

	m->ver_type = XR_VER_TYPE(XR_T_CTRL);
	m->src_conn = htonl(qp->conn_id);
	m->mtu = htonl(qp->mtu);
	m->rx_token = htobe64(qp->rx_token);
	m->init_psn = htonl(qp->init_psn);
	m->init_csn = htonl(qp->init_csn);
	m->data_port = htons(dev->data_port);
	m->sport_lo = htons(XR_SPORT_LO);
	m->sport_n = htons(XR_SPORT_N);
	m->family = qp->family == AF_INET6 ? 6 : 4;
	m->npaths = htonl(qp->npaths);
	m->nplanes = (uint8_t)dev->nplanes;
	m->priv_len = qp->priv_len;
	memcpy(m->priv, qp->priv, qp->priv_len);
	for (i = 0; i < dev->nplanes; i++)
		if (!plane_addr(dev, i, qp->family, m->addr[i]))
			return xr_fail(&dev->log, -EADDRNOTAVAIL,
				       "%s has no IPv%d address", dev->plane[i].ifname,
				       qp->family == AF_INET6 ? 6 : 4);
	return 0;
}

/* Take the peer's half of a CONNECT / ACCEPT and go to RTS. */
int xr_ctrl_establish(struct xroce_qp *qp, const struct xr_ctrl_msg *m,
		      const struct sockaddr_in6 *from)
{
	struct xroce_device *dev = qp->dev;
	uint32_t peer_mtu = ntohl(m->mtu), i;
	const char *why = xr_ctrl_check_peer(dev, m, from);
	int rc;

	if (!why && m->family != (qp->family == AF_INET6 ? 6 : 4))
		why = "address family differs from ours";
	if (why)
		return xr_fail(&dev->log, -EPROTO, "peer's connection message "
			       "refused: %s", why);
	qp->peer_priv_len = m->priv_len;
	memcpy(qp->peer_priv, m->priv, m->priv_len);
	qp->peer_conn = ntohl(m->src_conn);
	qp->tx_token = be64toh(m->rx_token);
	qp->npeer = m->nplanes;
	for (i = 0; i < qp->npeer; i++)
		memcpy(qp->peer_addr[i], m->addr[i], 16);
	qp->peer_ctrl = *from;
	if (peer_mtu >= 576 && (!qp->mtu || peer_mtu < qp->mtu))
		qp->mtu = peer_mtu;
	rc = xr_qp_init_paths(qp);
	if (rc)
		return rc;
	qp->peer_init_csn = ntohl(m->init_csn);
	rc = xr_qp_program(qp, ntohl(m->init_psn), ntohl(m->init_csn),
			   ntohs(m->sport_lo), ntohs(m->sport_n));
	if (rc)
		return rc;
	qp->state = XROCE_QPS_RTS;
	qp->last_progress_ns = qp->last_heard_ns = xr_now_ns();
	/* A round while connecting left "no timers" (xr_qp_timers of a QP
	 * not in RTS): without this an idle connection never ran its
	 * keep-alive until work was posted. */
	qp->timer_due = 0;
	return 0;
}

static bool same_host(const struct sockaddr_in6 *a, const struct sockaddr_in6 *b)
{
	return !memcmp(&a->sin6_addr, &b->sin6_addr, 16);
}

static bool same_peer(const struct sockaddr_in6 *a, const struct sockaddr_in6 *b)
{
	return same_host(a, b) && a->sin6_port == b->sin6_port;
}

static struct xr_ctrl_recent *recent_find(struct xroce_device *dev, uint64_t nonce,
					  const struct sockaddr_in6 *from)
{
	uint32_t i;

	for (i = 0; i < XR_CTRL_RECENT; i++) {
		struct xr_ctrl_recent *r = &dev->recent[i];

		/* A requester resends from other source ports (cm.h): the
		 * nonce and its address name the request. */
		if (r->valid && r->nonce == nonce && same_host(&r->from, from))
			return r;
	}
	return NULL;
}

const char *xr_ctrl_check_peer(const struct xroce_device *dev,
			       const struct xr_ctrl_msg *m,
			       const struct sockaddr_in6 *from)
{
	bool v4 = IN6_IS_ADDR_V4MAPPED(&from->sin6_addr);
	uint32_t i;

	if (m->nplanes < 1 || m->nplanes > XR_CTRL_MAX_PLANES)
		return "number of planes out of range";
	if (m->family != (v4 ? 4 : 6))
		return "address family differs from the message's source";
	if (ntohs(m->data_port) != dev->data_port)
		return "data port differs from ours";
	if (m->priv_len > XR_CTRL_PRIV_MAX)
		return "private data too long";
	if (!m->src_conn || ntohl(m->src_conn) >= 1u << 24)
		return "bad connection id";
	if (ntohl(m->mtu) && ntohl(m->mtu) < 576)
		return "MTU below 576";
	/* The peer's data plane must include the address the message came
	 * from: a CONNECT cannot point our packets at a third party. */
	for (i = 0; i < m->nplanes; i++)
		if (!memcmp(m->addr[i], &from->sin6_addr, 16))
			return NULL;
	return "source address is none of the addresses it claims";
}

/* Sign a (with key, if any) and send it out of local port's socket. */
static void answer(struct xroce_device *dev, uint16_t port, struct xr_ctrl_msg *a,
		   const uint8_t *key, const struct sockaddr_in6 *to)
{
	if (key)
		xr_auth_sign(key, a);
	xr_ctrl_send_from(dev, port, a, to);
}

static const uint8_t *cluster_key(const struct xroce_device *dev)
{
	return dev->auth.keyed ? dev->auth.key : NULL;
}

/* The listener's answer to a CONNECT without a valid cookie: the cookie,
 * computed from the request alone, so the listener keeps no state until
 * the requester shows it receives at the address it claims. */
static void send_cookie(struct xroce_device *dev, const struct xr_ctrl_msg *m,
			const struct sockaddr_in6 *from)
{
	struct xr_ctrl_msg c;

	memset(&c, 0, sizeof(c));
	c.ver_type = XR_VER_TYPE(XR_T_CTRL);
	c.op = XR_CTRL_COOKIE;
	c.nonce = m->nonce;
	xr_auth_cookie(&dev->auth, from, be64toh(m->nonce),
		       xr_auth_cookie_slot(xr_now_ns()), c.cookie);
	dev->ctrl_cookies++;
	answer(dev, dev->rx_port, &c, cluster_key(dev), from);
}

/* Requests from one source already queued. */
static uint32_t pending_from(const struct xroce_device *dev,
			     const struct sockaddr_in6 *from)
{
	uint32_t i, n = 0;

	for (i = 0; i < dev->npending; i++)
		n += !memcmp(&dev->pending[i].from.sin6_addr, &from->sin6_addr, 16);
	return n;
}

/* Whether port is a listening port that was unlistened (kept open only
 * for the connections accepted on it). */
static bool listen_closed(const struct xroce_device *dev, uint16_t port)
{
	uint32_t i;

	for (i = 0; i < dev->nlisten; i++)
		if (dev->listen[i].port == port)
			return dev->listen[i].closed;
	return false;
}

static void on_connect(struct xroce_device *dev, const struct xr_ctrl_msg *m,
		       const struct sockaddr_in6 *from)
{
	uint64_t nonce = be64toh(m->nonce);
	struct xr_ctrl_recent *r;
	const char *why;
	uint32_t i;

	if (!xr_acl_allows(&dev->acl, &from->sin6_addr) ||
	    listen_closed(dev, dev->rx_port)) {
		dev->ctrl_refused++;
		return;
	}
	why = xr_ctrl_check_peer(dev, m, from);
	if (why) {
		dev->ctrl_bad++;
		xr_log(&dev->log, XROCE_LOG_DEBUG, "CONNECT dropped: %s", why);
		return;
	}
	r = recent_find(dev, nonce, from);
	if (r) {
		/* Our ACCEPT was lost: the same answer again, to the port this
		 * resend came from, the latest path the requester tried; our
		 * CLOSE will go there too. */
		struct xroce_qp *qp = r->conn < dev->conn_tab_size ?
				      dev->conn_tab[r->conn] : NULL;

		if (r->conn && qp && qp->peer_conn == ntohl(m->src_conn) &&
		    same_host(&qp->peer_ctrl, from))
			qp->peer_ctrl = *from;
		xr_ctrl_send_from(dev, r->port, (const struct xr_ctrl_msg *)r->reply,
				  from);
		return;
	}
	if (!xr_auth_cookie_ok(&dev->auth, from, nonce, m->cookie, xr_now_ns())) {
		send_cookie(dev, m, from);
		return;
	}
	for (i = 0; i < dev->npending; i++) {
		const struct xr_ctrl_msg *p = (void *)dev->pending[i].msg;

		if (p->nonce == m->nonce && same_host(&dev->pending[i].from, from))
			return; /* already queued (or taken, cm.c) */
	}
	/* One host cannot fill the queue for everyone. */
	if (dev->npending == XR_CTRL_PENDING ||
	    pending_from(dev, from) >= XR_CTRL_PER_SOURCE) {
		dev->ctrl_dropped++;
		return;
	}
	memset(&dev->pending[dev->npending], 0, sizeof(dev->pending[0]));
	dev->pending[dev->npending].from = *from;
	dev->pending[dev->npending].port = dev->rx_port;
	memcpy(dev->pending[dev->npending].msg, m, sizeof(*m));
	dev->npending++;
}

/* An answer that is not the blocking connect's: perhaps for a connect
 * without blocking.  Kept for cm.c, which matches it with its QP by nonce
 * and checks its source as on_answer does. */
static void stash_answer(struct xroce_device *dev, const struct xr_ctrl_msg *m,
			 const struct sockaddr_in6 *from)
{
	if (!dev->nconnecting)
		return; /* a late answer to an earlier attempt */
	if (dev->nstash == XR_CTRL_STASH) {
		dev->ctrl_dropped++;
		return;
	}
	memcpy(dev->stash[dev->nstash].msg, m, sizeof(*m));
	dev->stash[dev->nstash].port = dev->rx_port;
	dev->stash[dev->nstash++].from = *from;
}

/* ACCEPT, REJECT or COOKIE: only from where the waiting connect went. */
static int on_answer(struct xroce_device *dev, const struct xr_ctrl_msg *m,
		     const struct sockaddr_in6 *from, uint64_t want_nonce,
		     struct xr_ctrl_msg *ans)
{
	uint64_t nonce = be64toh(m->nonce);

	if (!dev->want_nonce || nonce != dev->want_nonce) {
		stash_answer(dev, m, from);
		return 0;
	}
	if (!same_peer(from, &dev->want_to)) {
		dev->ctrl_spoofed++;
		return 0;
	}
	if (m->op == XR_CTRL_COOKIE) {
		memcpy(dev->cookie, m->cookie, sizeof(dev->cookie));
		dev->cookie_port = dev->rx_port;
		dev->have_cookie = true;
		return 0;
	}
	dev->answer_port = dev->rx_port;
	if (want_nonce == nonce) {
		*ans = *m;
		return 1;
	}
	/* The answer a blocked connect waits for, read by a progress round
	 * (another thread's, perhaps): keep it for the connect. */
	memcpy(dev->answer, m, sizeof(*m));
	dev->have_answer = true;
	return 0;
}

/* A CLOSE or CLOSE_ACK for one of our QPs, from its peer's address, with
 * the token we chose (and, with keys, its connection key).  Any port of
 * the peer's: a connect that was resent from other source ports speaks
 * through the one its answer reached (cm.h), which may not be the one we
 * heard last. */
static struct xroce_qp *close_qp(struct xroce_device *dev,
				 const struct xr_ctrl_msg *m,
				 const struct sockaddr_in6 *from)
{
	uint32_t id = ntohl(m->dst_conn);
	struct xroce_qp *qp = id < dev->conn_tab_size ? dev->conn_tab[id] : NULL;

	if (!qp || be64toh(m->token) != qp->rx_token) {
		dev->ctrl_bad++;
		return NULL;
	}
	if (!same_host(from, &qp->peer_ctrl)) {
		dev->ctrl_spoofed++;
		return NULL;
	}
	if (qp->keyed && !xr_auth_check(qp->conn_key, m)) {
		dev->ctrl_unauth++;
		return NULL;
	}
	return qp;
}

static void on_close(struct xroce_device *dev, const struct xr_ctrl_msg *m,
		     const struct sockaddr_in6 *from)
{
	struct xroce_qp *qp = close_qp(dev, m, from);
	struct xr_ctrl_msg ack;

	if (!qp)
		return;
	if (qp->state == XROCE_QPS_RTS || qp->state == XROCE_QPS_CONNECTING) {
		/* ACKs the peer sent before closing are already in our event
		 * ring (same wire, sent earlier): let them complete what they
		 * acknowledge before the rest is flushed. */
		xr_events_drain(dev);
		/* Everything below the peer's receive point arrived, even if
		 * its ACK did not: complete it rather than flush it. */
		xr_qp_acked_below(qp, ntohl(m->init_csn));
		xr_qp_complete(qp);
		qp->peer_closed = true;
		/* A QP bound as ibverbs programs do (xroce_qp_bind) behaves as
		 * an RC QP whose peer is gone: work in flight and later work
		 * fail unanswered, after the peer timeout, not at once, and
		 * the QP stays ready (its receives posted).  A peer program
		 * that is done may close while this side still finishes its
		 * own loop with sends the peer never needed (ibv_srq_pingpong
		 * posts a few past its count): on a NIC those fail only after
		 * the transport timeout, by when the program has finished. */
		if (qp->sq_head != qp->sq_tail) {
			if (!qp->bind)
				xr_qp_fail(qp, XROCE_WC_WR_FLUSH_ERR,
					   "the peer closed the connection");
		} else if (!qp->bind) {
			qp->state = XROCE_QPS_ERR;
			/* Nothing more can arrive: posted receives are done. */
			xr_qp_flush_recv(qp);
		}
		xr_qp_set_map_state(qp, XR_CONN_CLOSED);
	}
	memset(&ack, 0, sizeof(ack));
	ack.ver_type = XR_VER_TYPE(XR_T_CTRL);
	ack.op = XR_CTRL_CLOSE_ACK;
	ack.dst_conn = htonl(qp->peer_conn);
	ack.token = htobe64(qp->tx_token);
	answer(dev, qp->ctrl_lport, &ack, qp->keyed ? qp->conn_key : NULL, from);
}

/* The answer to a CLOSE we sent: the QP being destroyed may go. */
static void on_close_ack(struct xroce_device *dev, const struct xr_ctrl_msg *m,
			 const struct sockaddr_in6 *from)
{
	struct xroce_qp *qp = close_qp(dev, m, from);

	if (qp)
		qp->close_acked = true;
}

/* Handle one control message.  If want_nonce is set (a connect is waiting)
 * and this is its answer, copy it to *answer and return 1.  Whatever is
 * malformed, unauthenticated or from the wrong place is dropped and
 * counted; nothing here fails a call. */
static int ctrl_handle(struct xroce_device *dev, const struct xr_ctrl_msg *m,
		       const struct sockaddr_in6 *from, uint64_t want_nonce,
		       struct xr_ctrl_msg *ans)
{
	if (XR_HDR_VERSION(m->ver_type) != XR_VERSION ||
	    XR_HDR_TYPE(m->ver_type) != XR_T_CTRL) {
		dev->ctrl_bad++;
		return 0;
	}
	/* With a cluster key, set-up messages must carry its signature. */
	if (m->op <= XR_CTRL_REJECT || m->op == XR_CTRL_COOKIE) {
		if (dev->auth.keyed && !xr_auth_check(dev->auth.key, m)) {
			dev->ctrl_unauth++;
			return 0;
		}
	}
	switch (m->op) {
	case XR_CTRL_CONNECT:
		on_connect(dev, m, from);
		return 0;
	case XR_CTRL_ACCEPT:
	case XR_CTRL_REJECT:
	case XR_CTRL_COOKIE:
		return on_answer(dev, m, from, want_nonce, ans);
	case XR_CTRL_CLOSE:
		on_close(dev, m, from);
		return 0;
	case XR_CTRL_CLOSE_ACK:
		on_close_ack(dev, m, from);
		return 0;
	default:
		dev->ctrl_bad++;
		return 0;
	}
}

int xr_ctrl_handle_msg(struct xroce_device *dev, const void *buf, size_t len,
		       const struct sockaddr_in6 *from, socklen_t flen,
		       uint64_t want_nonce, struct xr_ctrl_msg *answer)
{
	struct xr_ctrl_msg m;

	if (len != sizeof(m) || flen != sizeof(*from)) {
		dev->ctrl_bad++;
		return 0;
	}
	memcpy(&m, buf, sizeof(m));
	return ctrl_handle(dev, &m, from, want_nonce, answer);
}

/* Read every message queued on one socket (local port `port`); returns 1
 * if one answered want_nonce. */
static int drain_socket(struct xroce_device *dev, int fd, uint16_t port,
			uint64_t want_nonce, struct xr_ctrl_msg *answer)
{
	int rc = 0;

	dev->rx_port = port;
	while (!rc) {
		struct xr_ctrl_msg m;
		struct sockaddr_in6 from = { 0 };
		socklen_t flen = sizeof(from);
		ssize_t n = recvfrom(fd, &m, sizeof(m), 0, (struct sockaddr *)&from,
				     &flen);

		if (n < 0)
			break; /* EAGAIN: nothing more */
		rc = xr_ctrl_handle_msg(dev, &m, (size_t)n, &from, flen, want_nonce,
					answer);
	}
	dev->rx_port = dev->ctrl_port;
	return rc;
}

/* Read every queued control message, of the control socket and of the
 * listening ones; returns 1 if one answered want_nonce. */
int xr_ctrl_drain(struct xroce_device *dev, uint64_t want_nonce,
		  struct xr_ctrl_msg *answer)
{
	uint32_t i;

	if (drain_socket(dev, dev->ctrl_fd, dev->ctrl_port, want_nonce, answer))
		return 1;
	for (i = 0; i < dev->nlisten; i++)
		if (drain_socket(dev, dev->listen[i].fd, dev->listen[i].port,
				 want_nonce, answer))
			return 1;
	return 0;
}

void xr_ctrl_service(struct xroce_device *dev)
{
	xr_ctrl_drain(dev, 0, NULL);
}

int xr_ctrl_wait(struct xroce_device *dev, uint64_t until_ns)
{
	struct pollfd p[1 + XR_LISTEN_MAX];
	uint64_t now = xr_now_ns();
	uint32_t i, n = 0;
	int ms, rc;

	if (now >= until_ns)
		return 0;
	p[n].fd = dev->ctrl_fd;
	p[n++].events = POLLIN;
	for (i = 0; i < dev->nlisten; i++) {
		p[n].fd = dev->listen[i].fd;
		p[n++].events = POLLIN;
	}
	ms = (int)((until_ns - now + 999999) / 1000000);
	pthread_mutex_unlock(&dev->lock);
	rc = poll(p, n, ms);
	pthread_mutex_lock(&dev->lock);
	return rc;
}

/* The first CSN not yet received.  XDP moves csn_next lazily (a few words
 * per packet), so walk the ring past it to the real contiguous point. */
static uint32_t rx_contiguous(const struct xr_rx_state *rx)
{
	uint32_t c = rx->csn_next, n;

	for (n = 0; n < XR_CSN_WIN; n++, c++)
		if (!((rx->csn_ring[(c % XR_CSN_WIN) / 64] >> (c % 64)) & 1))
			break;
	return c;
}

/* How far the peer's data arrived here (carried in our CLOSE). */
static uint32_t rx_point(const struct xroce_qp *qp)
{
	struct xr_rx_state *rx = calloc(1, sizeof(*rx));
	uint32_t c = qp->peer_init_csn;

	if (rx && !bpf_map_lookup_elem(qp->dev->maps.rx, &qp->conn_id, rx))
		c = rx_contiguous(rx);
	free(rx);
	return c;
}

void xr_ctrl_send_close(struct xroce_qp *qp)
{
	struct xroce_device *dev = qp->dev;
	struct xr_ctrl_msg m;
	int i;

	memset(&m, 0, sizeof(m));
	m.ver_type = XR_VER_TYPE(XR_T_CTRL);
	m.op = XR_CTRL_CLOSE;
	m.dst_conn = htonl(qp->peer_conn);
	m.token = htobe64(qp->tx_token);
	m.src_conn = htonl(qp->conn_id);
	/* Tell the peer how far its data arrived, so work of its that we
	 * received completes even if our ACK for it was lost. */
	m.init_csn = htonl(rx_point(qp));
	qp->close_acked = false;
	/* Resend a few times until the peer's CLOSE_ACK (control messages
	 * cross the same lossy fabric); if all are lost, the peer's own
	 * timeout still ends its side.  The answer may be read by another
	 * thread's progress round: it marks the QP either way. */
	for (i = 0; i < XR_CLOSE_TRIES && !qp->close_acked; i++) {
		uint64_t until = xr_now_ns() + XR_CLOSE_WAIT_MS * 1000000ull;

		answer(dev, qp->ctrl_lport, &m, qp->keyed ? qp->conn_key : NULL,
		       &qp->peer_ctrl);
		while (!qp->close_acked && xr_now_ns() < until) {
			uint64_t step = xr_now_ns() + 1000000ull;

			xr_ctrl_wait(dev, dev->threaded && step < until ? step : until);
			xr_ctrl_drain(dev, 0, NULL);
		}
	}
}
