// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The inbox of xroce_qp_bind's exchange, one job: a BIND record the XDP
 * program handed over (struct xr_evt_bind) is checked for form and kept on
 * the QP it names, with the packet's source, until the next progress round
 * takes it (bind.c), or until the application binds the QP.  With a
 * cluster key only halves signed with it are kept.
 */
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "auth.h"
#include "bind.h"
#include "device.h"

void xr_bind_inbox(struct xroce_qp *qp, const void *rec, size_t len)
{
	struct xroce_device *dev = qp->dev;
	const struct xr_evt_bind *e = rec;
	struct xr_ctrl_msg m;
	struct xr_bind *b;

	if (len < sizeof(*e)) {
		dev->evt_bad++;
		return;
	}
	memcpy(&m, e->msg, sizeof(m));
	if (XR_HDR_VERSION(m.ver_type) != XR_VERSION ||
	    XR_HDR_TYPE(m.ver_type) != XR_T_CTRL || m.op != XR_CTRL_BIND ||
	    ntohl(m.dst_conn) != qp->conn_id || !m.src_conn ||
	    (qp->state != XROCE_QPS_INIT && qp->state != XROCE_QPS_CONNECTING &&
	     qp->state != XROCE_QPS_RTS) ||
	    (qp->state != XROCE_QPS_INIT && !qp->bind)) {
		dev->bind_bad++; /* malformed, or a QP connected otherwise */
		return;
	}
	/* With a cluster key, a half must carry its signature (wire.h), as
	 * CONNECT does: one without cannot even displace a kept half. */
	if (dev->auth.keyed && !xr_auth_check(dev->auth.key, &m)) {
		dev->ctrl_unauth++;
		return;
	}
	b = qp->bind;
	if (!b) {
		b = calloc(1, sizeof(*b));
		if (!b)
			return; /* the peer resends */
		qp->bind = b;
	}
	/* Flags add up over halves of one sender (a later resend may lack a
	 * flag an earlier one had); another sender starts afresh. */
	if (!b->have_in || memcmp(&b->in_from.sin6_addr, e->src_addr, 16) != 0 ||
	    b->in.src_conn != m.src_conn || b->in.nonce != m.nonce)
		b->in_flags = 0;
	b->in = m;
	memset(&b->in_from, 0, sizeof(b->in_from));
	b->in_from.sin6_family = AF_INET6;
	b->in_from.sin6_port = htons(e->src_port);
	memcpy(&b->in_from.sin6_addr, e->src_addr, 16);
	b->in_flags |= ntohl(m.flags);
	b->have_in = true;
}
