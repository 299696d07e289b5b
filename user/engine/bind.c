// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * xroce_qp_bind: a connection made from what the applications exchanged
 * out of band (QP number and address, as ibverbs programs do over TCP),
 * without blocking and in either order.  Protocol (wire.h, XR_CTRL_BIND):
 *
 *   each side, when bound, sends its half {conn id, token, initial PSN and
 *   CSN, addresses, entropy ports} to the peer's DATA port, where the
 *   peer's XDP program hands it to the domain owning the named QP along
 *   with the packet's source (bindbox.c keeps it).  The first half from
 *   (the address, the QP number) the application gave is programmed into
 *   XDP (the peer's data is accepted from then on) and answered with our
 *   half marked HAVE_YOURS; a side sends data once it holds the peer's half
 *   AND has seen HAVE_YOURS (RTS).  Halves without DONE are answered; our
 *   half is resent, backing off, until we are RTS.  A half that arrives
 *   before the application binds is kept (one per QP) and checked then.
 *
 * Trust comes from the packet's source address, not from the message: a
 * half is used only if the packet came from the address the application
 * gave and names the QP number it gave.  With a cluster key, halves are
 * signed with it (bindbox.c drops those that are not), and the
 * connection's key, which signs CLOSE, comes from both halves' nonces as
 * for xroce_connect (auth.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "asyncev.h"
#include "auth.h"
#include "bind.h"
#include "cm.h"
#include "ctrl.h"
#include "device.h"
#include "engine.h"
#include "keys.h"
#include "qp_state.h"

#define XR_BIND_RESEND_NS 5000000ull     /* first resend after 5 ms ... */
#define XR_BIND_RESEND_MAX_NS 500000000ull /* ... doubling up to 500 ms */

static const uint8_t v4mapped_prefix[12] = { [10] = 0xff, [11] = 0xff };

/* Source address of our halves: plane 0's of the QP's family (the peer
 * checks the packet's source against the address it was given). */
static void source_cmsg(const struct xroce_qp *qp, struct msghdr *mh,
			char *buf, size_t len)
{
	const struct xr_plane *pl = &qp->dev->plane[0];
	struct in6_pktinfo pi = { .ipi6_ifindex = 0 };
	struct cmsghdr *c;

	if (qp->family == AF_INET ? !pl->has4 : !pl->has6)
		return;
	if (qp->family == AF_INET)
		xr_v4mapped(pi.ipi6_addr.s6_addr, pl->addr4);
	else
		memcpy(&pi.ipi6_addr, pl->addr6, 16);
	memset(buf, 0, len);
	mh->msg_control = buf;
	mh->msg_controllen = len;
	c = CMSG_FIRSTHDR(mh);
	c->cmsg_level = IPPROTO_IPV6;
	c->cmsg_type = IPV6_PKTINFO;
	c->cmsg_len = CMSG_LEN(sizeof(pi));
	memcpy(CMSG_DATA(c), &pi, sizeof(pi));
}

/* Our half, to the peer's data port, out of the current source port: the
 * control socket first, then (rotate: a timed resend) a fresh one, so that
 * resends cross other equal-cost paths (cm.h; the peer's own resends do
 * the same for its direction). */
static void send_half(struct xroce_qp *qp, bool rotate)
{
	struct xroce_device *dev = qp->dev;
	struct xr_bind *b = qp->bind;
	union {
		char buf[CMSG_SPACE(sizeof(struct in6_pktinfo))];
		struct cmsghdr align;
	} cb;
	struct sockaddr_in6 to = { .sin6_family = AF_INET6,
				   .sin6_port = htons(dev->data_port) };
	struct xr_ctrl_msg m;
	struct iovec iov = { &m, sizeof(m) };
	struct msghdr mh = { .msg_name = &to, .msg_namelen = sizeof(to),
			     .msg_iov = &iov, .msg_iovlen = 1 };
	uint32_t flags = 0, rnr = htonl(b->rnr_timer_us);

	memset(&m, 0, sizeof(m));
	if (xr_ctrl_fill_self(qp, &m))
		return;
	if (b->have_peer)
		flags |= XR_BIND_F_HAVE_YOURS;
	if (b->have_peer && b->peer_has_ours)
		flags |= XR_BIND_F_DONE;
	m.op = XR_CTRL_BIND;
	m.dst_conn = htonl(b->qp_num);
	m.nonce = htobe64(b->nonce);
	m.flags = htonl(flags);
	m.priv_len = sizeof(rnr);
	memcpy(m.priv, &rnr, sizeof(rnr));
	memcpy(&to.sin6_addr, b->addr, 16);
	if (dev->auth.keyed)
		xr_auth_sign(dev->auth.key, &m);
	source_cmsg(qp, &mh, cb.buf, sizeof(cb.buf));
	/* A resend goes out of two fresh ports: each pair of ports rides a
	 * dead link with some odds, and the exchange must finish within the
	 * QP's timeout (ibverbs' default: about half a second). */
	for (int n = rotate ? 2 : 1; n > 0; n--) {
		if (rotate)
			xr_cm_rotate_source(dev, b->src);
		/* A lost or refused send is repaired by the resend timer. */
		if (sendmsg(xr_ctrl_fd(dev, b->src[0]), &mh, 0) < 0)
			xr_log(&dev->log, XROCE_LOG_DEBUG, "qp %u: bind message: %s",
			       qp->conn_id, strerror(errno));
	}
}

/* Both halves known and confirmed: data may flow. */
static void maybe_ready(struct xroce_qp *qp)
{
	struct xr_bind *b = qp->bind;

	if (qp->state != XROCE_QPS_CONNECTING || !b->have_peer || !b->peer_has_ours)
		return;
	qp->state = XROCE_QPS_RTS;
	/* CLOSE goes out of the port of our latest half, the one the peer
	 * heard last (take_half), and its socket stays open for the peer's. */
	qp->ctrl_lport = xr_cm_lport(qp->dev, b->src[0]);
	qp->last_progress_ns = xr_now_ns();
	qp->timer_due = 0;
	qp->complete_dirty = true;
	xr_event_post(qp->dev, XROCE_EVENT_QP_ESTABLISHED, qp, qp->conn_id);
}

/* With a cluster key, the connection's key: both nonces and both QP
 * numbers, in the order of the nonces (there is no client and server
 * here; both sides compute the same). */
static void conn_key(struct xroce_qp *qp, const struct xr_ctrl_msg *m)
{
	const struct xr_auth *a = &qp->dev->auth;
	uint64_t ours = qp->bind->nonce, theirs = be64toh(m->nonce);
	uint32_t peer = ntohl(m->src_conn);
	bool first;

	if (!a->keyed)
		return;
	first = ours < theirs || (ours == theirs && qp->conn_id < peer);
	if (first)
		xr_auth_conn_key(a, ours, theirs, qp->conn_id, peer, qp->conn_key);
	else
		xr_auth_conn_key(a, theirs, ours, peer, qp->conn_id, qp->conn_key);
	qp->keyed = true;
	/* Header MACs as for a connection made by xroce_connect: the side
	 * whose nonce comes first owns stream 0, as a connecting side does. */
	xr_keys_init(qp, first);
}

/* Program the peer's half into XDP (paths, windows, connection state). */
static int program(struct xroce_qp *qp, const struct xr_ctrl_msg *m,
		   const struct sockaddr_in6 *from)
{
	struct xr_bind *b = qp->bind;
	uint32_t i, rnr_us = 0;
	int rc;

	/* Keys first: establish programs XDP's entry with them. */
	conn_key(qp, m);
	rc = xr_ctrl_establish(qp, m, from);
	/* establish declares the QP RTS; here that waits for HAVE_YOURS. */
	if (qp->state == XROCE_QPS_RTS)
		qp->state = XROCE_QPS_CONNECTING;
	if (rc)
		return rc;
	/* A bound QP's private data slot carries the peer's RNR delay. */
	if (qp->peer_priv_len >= sizeof(rnr_us)) {
		memcpy(&rnr_us, qp->peer_priv, sizeof(rnr_us));
		rnr_us = ntohl(rnr_us);
	}
	qp->peer_priv_len = 0;
	if (rnr_us)
		qp->rnr_timer_ns = (uint64_t)rnr_us * 1000ull;
	/* Work queued while connecting was counted for a provisional packet
	 * size: count its packets again (none of them was sent). */
	for (i = qp->sq_head; i != qp->sq_tail; i++) {
		struct xr_swr *w = xr_swr_at(qp, i);

		w->npkts = w->len ? (w->len + qp->seg_max - 1) / qp->seg_max : 1;
	}
	b->have_peer = true;
	b->peer = *m;
	return 0;
}

/* From the address the application gave, naming the QP it gave, and
 * listing that address as its first plane's (so a half cannot point our
 * traffic elsewhere than where it came from). */
static bool half_from_peer(const struct xr_bind *b, const struct xr_ctrl_msg *m,
			   const struct sockaddr_in6 *from)
{
	return !memcmp(&from->sin6_addr, b->addr, 16) &&
	       ntohl(m->src_conn) == b->qp_num && !memcmp(m->addr[0], b->addr, 16);
}

/* A half from the bound peer: program it if it is the first, note its
 * flags, answer unless it says DONE. */
static void take_half(struct xroce_qp *qp, const struct xr_ctrl_msg *m,
		      const struct sockaddr_in6 *from, uint32_t flags)
{
	struct xr_bind *b = qp->bind;
	int rc;

	if (!half_from_peer(b, m, from)) {
		qp->dev->bind_bad++;
		xr_log(&qp->dev->log, XROCE_LOG_DEBUG, "qp %u: a bind half from an "
		       "unexpected peer (QP %u) ignored", qp->conn_id,
		       ntohl(m->src_conn));
		return;
	}
	if (!b->have_peer) {
		rc = program(qp, m, from);
		if (rc) {
			char why[96];

			snprintf(why, sizeof(why), "cannot take the peer's connection "
				 "half (%s)", strerror(-rc));
			xr_qp_fail(qp, XROCE_WC_RETRY_EXC_ERR, why);
			return;
		}
	} else if (m->nonce != b->peer.nonce || m->rx_token != b->peer.rx_token ||
		   m->init_csn != b->peer.init_csn) {
		qp->dev->bind_bad++; /* an older or other incarnation */
		return;
	} else {
		/* The peer resends from other ports: our CLOSE goes to the
		 * latest (program() noted the first). */
		qp->peer_ctrl = *from;
	}
	if (flags & XR_BIND_F_HAVE_YOURS)
		b->peer_has_ours = true;
	maybe_ready(qp);
	/* The peer resending means our answer was lost: answer again from
	 * another port (once RTS we send nothing but these answers, and the
	 * same pair of ports may ride a dead link every time). */
	if (!(flags & XR_BIND_F_DONE))
		send_half(qp, b->answers++ > 0);
}

/* The limits of a bind call, also on a later call for the same peer. */
static void set_limits(struct xroce_qp *qp, const struct xroce_qp_peer *peer)
{
	uint32_t i;

	if (peer->timeout_ms) {
		qp->timeout_ms = peer->timeout_ms;
		for (i = 0; qp->bind->have_peer && i < qp->npaths; i++) {
			struct xr_txpath_cfg *c = &qp->path[i].tp.cfg;

			xr_txpath_cfg_default(c);
			xr_txpath_cfg_for_timeout(c, qp->timeout_ms);
		}
	}
	if (peer->rnr_retry)
		qp->rnr_retry = peer->rnr_retry;
}

/* A first bind: the peer, our family, a provisional packet size. */
static int start_bind(struct xroce_qp *qp, const struct xroce_qp_peer *peer)
{
	struct xroce_device *dev = qp->dev;
	struct xr_bind *b = qp->bind;
	int i;

	if (peer->mtu && (!qp->mtu || peer->mtu < qp->mtu))
		qp->mtu = peer->mtu;
	qp->family = memcmp(peer->addr, v4mapped_prefix, 12) ? AF_INET6 : AF_INET;
	for (i = 0; i < dev->nplanes; i++)
		if (qp->family == AF_INET ? !dev->plane[i].has4 : !dev->plane[i].has6)
			return xr_fail(&dev->log, -EADDRNOTAVAIL, "xroce_qp_bind: %s has "
				       "no IPv%d address", dev->plane[i].ifname,
				       qp->family == AF_INET ? 4 : 6);
	b->bound = true;
	memcpy(b->addr, peer->addr, 16);
	b->qp_num = peer->qp_num;
	b->rnr_timer_us = peer->rnr_timer_us;
	b->nonce = xr_random64() | 1;
	/* Work may be posted before the exchange completes: a provisional
	 * packet size lets it be counted (program() counts it again). */
	if (!qp->seg_max)
		qp->seg_max = 1024;
	qp->state = XROCE_QPS_CONNECTING;
	qp->last_progress_ns = xr_now_ns();
	b->backoff_ns = XR_BIND_RESEND_NS;
	/* A half that came first is taken at the next progress round, not
	 * here: programming it may wait for the peer's MAC (ARP), and binding
	 * (ibverbs' modify to RTR) must not block.  Otherwise ours goes now. */
	if (b->have_in) {
		b->resend_ns = qp->last_progress_ns;
		return 0;
	}
	b->resend_ns = qp->last_progress_ns + b->backoff_ns;
	send_half(qp, false);
	return 0;
}

int xr_qp_bind(struct xroce_qp *qp, const struct xroce_qp_peer *peer)
{
	struct xroce_device *dev = qp->dev;
	struct xr_bind *b;

	if (!peer->qp_num)
		return xr_fail(&dev->log, -EINVAL, "xroce_qp_bind: QP number 0");
	if (peer->mtu && peer->mtu < 576)
		return xr_fail(&dev->log, -EINVAL, "xroce_qp_bind: mtu %u (at least "
			       "576)", peer->mtu);
	b = qp->bind;
	if (b && b->bound) {
		if (memcmp(b->addr, peer->addr, 16) != 0 || b->qp_num != peer->qp_num)
			return xr_fail(&dev->log, -EISCONN, "xroce_qp_bind: qp %u is "
				       "bound to another peer", qp->conn_id);
		set_limits(qp, peer);
		return 0;
	}
	if (qp->state != XROCE_QPS_INIT)
		return xr_fail(&dev->log, -EISCONN, "xroce_qp_bind: qp %u is not new",
			       qp->conn_id);
	if (!b) {
		b = calloc(1, sizeof(*b));
		if (!b)
			return xr_fail(&dev->log, -ENOMEM, "out of memory");
		qp->bind = b;
	}
	set_limits(qp, peer);
	return start_bind(qp, peer);
}

uint64_t xr_bind_run(struct xroce_qp *qp)
{
	struct xr_bind *b = qp->bind;
	uint64_t now = qp->dev->now_ns, dl;

	if (!b->bound)
		return UINT64_MAX; /* the inbox waits for the application */
	if (b->have_in) {
		struct xr_ctrl_msg m = b->in;
		struct sockaddr_in6 from = b->in_from;
		uint32_t flags = b->in_flags;

		b->have_in = false;
		b->in_flags = 0;
		if (qp->state == XROCE_QPS_CONNECTING || qp->state == XROCE_QPS_RTS)
			take_half(qp, &m, &from, flags);
	}
	if (qp->state != XROCE_QPS_CONNECTING)
		return UINT64_MAX;
	/* Posted work waits for the peer no longer than its timeout (the
	 * round's clock may be older than the last progress noted). */
	dl = qp->last_progress_ns + (uint64_t)qp->timeout_ms * 1000000ull;
	if (qp->sq_head != qp->sq_tail && now >= dl) {
		xr_qp_fail(qp, XROCE_WC_RETRY_EXC_ERR, "the peer did not answer the "
			   "connection exchange");
		return UINT64_MAX;
	}
	if (now >= b->resend_ns) {
		send_half(qp, true);
		b->backoff_ns = b->backoff_ns * 2 < XR_BIND_RESEND_MAX_NS ?
				b->backoff_ns * 2 : XR_BIND_RESEND_MAX_NS;
		b->resend_ns = now + b->backoff_ns;
	}
	if (qp->sq_head != qp->sq_tail && dl < b->resend_ns)
		return dl;
	return b->resend_ns;
}

int xr_qp_to_error(struct xroce_qp *qp)
{
	if (qp->state == XROCE_QPS_ERR || qp->state == XROCE_QPS_CLOSED)
		return 0;
	/* Asked for: no asynchronous event (as ibv_modify_qp to ERR). */
	qp->app_error = true;
	xr_qp_fail(qp, XROCE_WC_WR_FLUSH_ERR, "moved to the error state by the "
		   "application");
	return 0;
}
