// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_ctrl: libFuzzer harness for the control messages (struct
 * xr_ctrl_msg in wire.h: CONNECT / ACCEPT / REJECT / CLOSE / CLOSE_ACK),
 * which anyone on the network can send to a device's control socket.
 *
 * Each input starts from a device with one connection in RTS (accepted
 * from a simulated peer, with a WRITE, a SEND and a READ outstanding) and
 * one QP waiting in xroce_accept, then runs a program of operations:
 *
 *   RAW       any bytes, any length, from any source address, straight
 *             into the handling (xr_test_ctrl_input) or queued on the
 *             control socket for whichever path reads it next
 *   TEMPLATE  a valid message (a new CONNECT, a retransmitted one, ACCEPT,
 *             REJECT, CLOSE with the right or a wrong token, CLOSE_ACK)
 *             with a few bytes overwritten
 *   ACCEPT    xroce_accept(qp, 0): takes the oldest queued CONNECT
 *   ANSWER    the handling while a connect waits for a nonce
 *   PROGRESS  time passes, a progress round (reads the socket)
 *   DESTROY   a connection closes (its CLOSE / CLOSE_ACK exchange reads
 *             the socket too: CLOSE messages crossing ours)
 *   ACKS      the connection's outstanding work is acknowledged (ACK
 *             records queued in the event ring, which a CLOSE drains)
 *   MAPS      the device's BPF maps vanish (every map call fails) / return
 *   ROUTE     next-hop resolution fails / the route's MTU changes
 *
 * The control socket, the clock and the routes are simulated (sim.h):
 * nothing leaves the process.  Checked after every operation: at most
 * XR_CTRL_PENDING queued requests, QP invariants, every completion of the
 * connection's work (known, once, in order, well-formed; no false
 * success: a success only if every packet of the request was acknowledged
 * by an authenticated peer record, an ACK record or an authentic CLOSE,
 * never by a CLOSE with a wrong token or from another address), every
 * datagram the device sent (256 bytes, a control message, addressed only to a
 * source a message came from: no reflection to third parties).  At the
 * end every request completed exactly once, no frame and no map entry is
 * left behind.
 */
#include <errno.h>
#include <string.h>
#include <arpa/inet.h>

#include "harness.h"
#include "xsk_loop.h"

#define MAX_OPS 2000
#define MAX_LIVE 8
#define MAX_FROM 512
#define NONCE_A 0xa11ce0000001ull

enum { OP_RAW, OP_TEMPLATE, OP_TEMPLATE2, OP_ACCEPT, OP_ANSWER, OP_PROGRESS,
       OP_DESTROY, OP_ACKS, OP_MAPS, OP_ROUTE, OP_N };

static struct xroce_qp *live[MAX_LIVE]; /* connected QPs; live[0] has work */
static int nlive;
static struct xroce_qp *waiting;       /* in xroce_accept */
static struct sockaddr_in6 froms[MAX_FROM];
static int nfrom;
static bool maps_dirty;                 /* the maps were away for a while */

static void remember_from(const struct sockaddr_in6 *a)
{
	int i;

	for (i = 0; i < nfrom; i++)
		if (!memcmp(&froms[i].sin6_addr, &a->sin6_addr, 16) &&
		    froms[i].sin6_port == a->sin6_port)
			return;
	SIM_CHECK(nfrom < MAX_FROM, "too many sources");
	froms[nfrom++] = *a;
}

/* Every datagram the device sent since the last look. */
static void check_sent(void)
{
	uint32_t i;
	int k;

	for (i = 0; i < sim.nsent; i++) {
		const struct sim_dgram *d = &sim.sent[i];
		const struct xr_ctrl_msg *m = (const void *)d->buf;

		SIM_CHECK(d->len == sizeof(struct xr_ctrl_msg), "sent %zu bytes", d->len);
		SIM_CHECK(m->ver_type == XR_VER_TYPE(XR_T_CTRL) &&
			  m->op >= XR_CTRL_CONNECT && m->op <= XR_CTRL_COOKIE,
			  "sent a malformed control message (op %u)", m->op);
		for (k = 0; k < nfrom; k++)
			if (!memcmp(&froms[k].sin6_addr, &d->addr.sin6_addr, 16) &&
			    froms[k].sin6_port == d->addr.sin6_port)
				break;
		SIM_CHECK(k < nfrom, "op %u sent to an address no message came from",
			  m->op);
	}
	sim.nsent = 0;
}

static void pick_from(struct rd *r, struct sockaddr_in6 *a)
{
	uint8_t m = rd_u8(r);

	if (m & 0x80) { /* anything at all */
		rd_bytes(r, a, sizeof(*a));
		return;
	}
	h_peer_addr(a, m % 4);
	if (m & 0x40)
		a->sin6_port = htons(rd_u16(r));
}

/* Deliver: straight in, or through the socket (read by whichever path
 * reads it next: progress, accept, a closing QP waiting for CLOSE_ACK). */
static void deliver(struct rd *r, const void *buf, size_t len,
		    const struct sockaddr_in6 *from)
{
	uint8_t m = rd_u8(r);

	remember_from(from);
	if (m & 1) {
		/* An address of another length (not from an IPv6 socket): the
		 * socket path must refuse it. */
		socklen_t alen = m & 2 ? (socklen_t)(m >> 2) % sizeof(*from)
				       : sizeof(*from);

		sim_ctrl_push(buf, len, from, alen);
	} else {
		h_pre_ctrl(buf, len, from, sizeof(*from));
		xr_test_ctrl_input(H.dev, buf, len, from);
	}
}

static struct xroce_qp *pick_live(struct rd *r)
{
	return nlive ? live[rd_u8(r) % nlive] : NULL;
}

static void template_msg(struct rd *r, struct xr_ctrl_msg *m,
			 struct sockaddr_in6 *from)
{
	uint8_t t = rd_u8(r), np = rd_u8(r);
	struct xroce_qp *qp;
	int i;

	h_peer_addr(from, t >> 6);
	switch (t % 7) {
	case 0: /* a new CONNECT, with the cookie it needs unless np says not */
		h_connect_msg(m, rd_u64(r), rd_u32(r), rd_u32(r), 1 + np % 4);
		if (!(np & 0x80))
			h_cookie(m, from);
		break;
	case 1: /* the first connection's CONNECT again (its ACCEPT "lost") */
		h_peer_addr(from, 0);
		h_connect_msg(m, NONCE_A, 0x77770000u, 0x55550000u, H_PLANES);
		h_cookie(m, from);
		break;
	case 2:
	case 3: /* ACCEPT / REJECT for some nonce */
		h_connect_msg(m, rd_u64(r), rd_u32(r), rd_u32(r), 1 + np % 4);
		m->op = t % 7 == 2 ? XR_CTRL_ACCEPT : XR_CTRL_REJECT;
		m->status = htons(rd_u16(r));
		break;
	case 4: /* CLOSE of a live connection, right token */
	case 5: /* ... wrong token */
		memset(m, 0, sizeof(*m));
		m->ver_type = XR_VER_TYPE(XR_T_CTRL);
		m->op = XR_CTRL_CLOSE;
		qp = pick_live(r);
		if (qp) {
			uint32_t c;

			switch (np % 4) {
			case 0: c = qp->csn_una; break;
			case 1: c = qp->csn_next; break;
			case 2: c = qp->csn_una + rd_u8(r) % (qp->csn_next - qp->csn_una + 1); break;
			default: c = rd_u32(r); break;
			}
			m->dst_conn = htonl(qp->conn_id);
			m->token = htobe64(qp->rx_token ^ (t % 7 == 5 ? rd_u64(r) | 1 : 0));
			m->src_conn = htonl(qp->peer_conn);
			m->init_csn = htonl(c);
			*from = qp->peer_ctrl;
		} else {
			m->dst_conn = htonl(rd_u32(r));
			m->token = htobe64(rd_u64(r));
		}
		break;
	default: /* CLOSE_ACK */
		memset(m, 0, sizeof(*m));
		m->ver_type = XR_VER_TYPE(XR_T_CTRL);
		m->op = XR_CTRL_CLOSE_ACK;
		m->dst_conn = htonl(rd_u32(r));
		break;
	}
	for (i = 0; i < (np >> 4) % 4; i++) /* a few bytes bent */
		((uint8_t *)m)[rd_u8(r) % sizeof(*m)] = rd_u8(r);
}

static void new_waiting(void)
{
	struct xroce_qp_init_attr qa;
	int rc;

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = H.scq;
	qa.recv_cq = H.rcq;
	qa.npaths = 4;
	qa.max_send_wr = 16;
	rc = xroce_create_qp(H.pd, &qa, &waiting);
	if (rc)
		waiting = NULL; /* maps gone: no new QP until they return */
}

static void destroy(struct xroce_qp *qp)
{
	int i;

	for (i = 0; i < nlive; i++)
		if (live[i] == qp) {
			live[i] = live[--nlive];
			break;
		}
	if (qp == L.qp)
		h_ledger_qp_gone();
	SIM_CHECK(xroce_destroy_qp(qp) == 0, "destroy");
}

static void op_accept(void)
{
	int rc;

	if (!waiting) {
		new_waiting();
		return;
	}
	rc = xroce_accept(waiting, 0);
	if (rc == 0) {
		SIM_CHECK(waiting->state == XROCE_QPS_RTS, "accepted QP state %d",
			  waiting->state);
		remember_from(&waiting->peer_ctrl);
		if (nlive < MAX_LIVE) {
			live[nlive++] = waiting;
		} else {
			destroy(waiting);
		}
		waiting = NULL;
		new_waiting();
	} else {
		SIM_CHECK(waiting->state == XROCE_QPS_INIT, "QP state %d after a "
			  "failed accept (%d)", waiting->state, rc);
	}
}

static void op_answer(struct rd *r)
{
	struct xr_ctrl_msg m, ans;
	struct sockaddr_in6 from, to;
	uint64_t want = rd_u64(r) | 1;
	uint8_t how = rd_u8(r);
	bool is_answer;
	int rc;

	template_msg(r, &m, &from);
	if (how & 1)
		m.nonce = htobe64(want);
	/* The connect went to the sender, or (a spoofed answer) elsewhere. */
	to = from;
	if (how & 2)
		h_peer_addr(&to, (how >> 2) % 4 + 1);
	remember_from(&from);
	memset(&ans, 0, sizeof(ans));
	h_pre_ctrl(&m, sizeof(m), &from, sizeof(from));
	rc = xr_test_ctrl_answer(H.dev, &m, sizeof(m), &from, want, &to, &ans);
	is_answer = be64toh(m.nonce) == want && m.ver_type == XR_VER_TYPE(XR_T_CTRL) &&
		    (m.op == XR_CTRL_ACCEPT || m.op == XR_CTRL_REJECT) &&
		    !memcmp(&from, &to, sizeof(from));
	if (rc == 1)
		SIM_CHECK(is_answer && !memcmp(&ans, &m, sizeof(m)), "a message "
			  "taken as the answer (op %u) that is not", m.op);
	else
		SIM_CHECK(rc == 0 && !is_answer, "the answer was not recognised "
			  "(rc %d)", rc);
}

/* ACK records acknowledging all the first connection has sent. */
static void op_acks(void)
{
	struct xroce_qp *qp = L.qp;
	uint32_t i;

	if (!qp || qp->state != XROCE_QPS_RTS)
		return;
	for (i = 0; i < qp->npaths; i++) {
		const struct xr_txpath *tp = &qp->path[i].tp;
		struct xr_evt e;

		if (tp->next_psn == tp->base_psn)
			continue;
		memset(&e, 0, sizeof(e));
		e.type = XR_EVT_ACK;
		e.path = (uint8_t)i;
		e.conn = qp->conn_id;
		e.ack.cack = tp->next_psn;
		e.ack.ack_psn = tp->next_psn - 1;
		e.ack.ts_echo = (uint32_t)sim.now;
		sim_evt_push(&e, sizeof(e));
	}
}

static void check_all(void)
{
	int i;

	SIM_CHECK(H.dev->npending <= XR_CTRL_PENDING, "%u pending requests",
		  H.dev->npending);
	for (i = 0; i < nlive; i++)
		h_check_qp(live[i]);
	if (waiting)
		h_check_qp(waiting);
	h_poll_check();
	check_sent();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	static bool trace;
	struct xroce_qp_init_attr qa;
	struct rd r = { data, size };
	struct xroce_qp *qp;
	uint32_t i;
	int rc;

	if (!ready) {
		h_init();
		sim.pre_evt = h_pre_event;
		sim.pre_ctrl = h_pre_ctrl;
		trace = getenv("XR_FUZZ_TRACE") != NULL;
		ready = true;
	}
	sim_reset(9000000000ull, 0xc7110000u + size);
	h_dev_reset();
	nlive = 0;
	nfrom = 0;
	maps_dirty = false;

	/* The connection with work outstanding. */
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = H.scq;
	qa.recv_cq = H.rcq;
	qa.npaths = 4;
	SIM_CHECK(!xroce_create_qp(H.pd, &qa, &qp), "create");
	h_ledger_reset(qp, false);
	h_txlog_reset(NULL);
	rc = h_accept_from_peer(qp, NONCE_A, 0x77770000u, 0x55550000u);
	SIM_CHECK(rc == 0, "accept: %d", rc);
	/* No false success: its work completes as success only for packets
	 * an ACK record or an authentic CLOSE acknowledged (h_pre_ctrl). */
	h_txlog_reset(qp);
	L.check_claims = true;
	remember_from(&qp->peer_ctrl);
	live[nlive++] = qp;
	L.seg_max = qp->seg_max;
	SIM_CHECK(!h_post(HW_WRITE, 5000, 0, true, 0, 3, false), "post");
	SIM_CHECK(!h_post(HW_SEND, 100, 1, true, 64, 1, true), "post");
	SIM_CHECK(!h_post(HW_READ, 3000, 2, true, 8192, 1, false), "post");
	waiting = NULL;
	new_waiting();
	check_all();

	for (i = 0; i < MAX_OPS && rd_more(&r); i++) {
		uint8_t op = rd_u8(&r) % OP_N;

		if (trace)
			fprintf(stderr, "op %u (%zu bytes left)\n", op, r.n);

		switch (op) {
		case OP_RAW: {
			uint8_t buf[SIM_DGRAM_MAX];
			struct sockaddr_in6 from;
			uint8_t m = rd_u8(&r);
			size_t len = m & 1 ? sizeof(struct xr_ctrl_msg)
					   : rd_u16(&r) % (SIM_DGRAM_MAX + 1);

			pick_from(&r, &from);
			rd_bytes(&r, buf, len);
			deliver(&r, buf, len, &from);
			break;
		}
		case OP_TEMPLATE:
		case OP_TEMPLATE2: {
			struct xr_ctrl_msg m;
			struct sockaddr_in6 from;

			template_msg(&r, &m, &from);
			deliver(&r, &m, sizeof(m), &from);
			break;
		}
		case OP_ACCEPT:
			op_accept();
			break;
		case OP_ANSWER:
			op_answer(&r);
			break;
		case OP_PROGRESS:
			sim.now += (uint64_t)rd_u8(&r) * 1000000ull;
			xr_progress(H.dev);
			break;
		case OP_DESTROY: {
			struct xroce_qp *q = pick_live(&r);

			if (q)
				destroy(q);
			break;
		}
		case OP_ACKS:
			op_acks();
			break;
		case OP_MAPS:
			/* While they are away nothing can be deleted from them:
			 * entries may stay behind, legitimately. */
			maps_dirty = true;
			h_maps_detach(!H.maps_detached);
			break;
		case OP_ROUTE: {
			uint8_t m = rd_u8(&r);

			sim.route_err = m & 1 ? -EHOSTUNREACH : 0;
			sim.route_mtu = (const int[]){ 1500, 576, 9000, 100 }[(m >> 1) & 3];
			break;
		}
		}
		check_all();
	}

	/* Everything goes, with its maps back. */
	h_maps_detach(false);
	sim.route_err = 0;
	while (nlive)
		destroy(live[0]);
	if (waiting)
		destroy(waiting);
	waiting = NULL;
	check_all();
	h_ledger_final();
	h_check_frames();
	rc = (int)h_maps_wipe();
	SIM_CHECK(maps_dirty || rc == 0, "%d map entries left behind", rc);
	SIM_CHECK(H.dev->qps == NULL, "QP list not empty");
	sim_evt_clear();
	return 0;
}
