// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fuzz_bind: libFuzzer harness for xroce_qp_bind's exchange: the BIND
 * records XDP hands the library (struct xr_evt_bind: a peer's half of a
 * connection, from anyone who knows a QP number) and the calls around them.
 *
 * Each input binds one QP of a detached device (sometimes never) to a
 * simulated peer (10.99.0.2, QP H_PEER_CONN) and runs a program of
 * operations:
 *
 *   HALF      a half as that peer (or a stranger, or another QP number)
 *             would send it: nonce, flags (HAVE_YOURS, DONE), token,
 *             numbers and addresses from the input, a few bytes bent
 *   RAW       any bytes as a BIND record, of any length
 *   BIND      xroce_qp_bind with the peer (or another one: -EISCONN), and
 *             limits; again later (limits only)
 *   POST      a WRITE (queued while connecting)
 *   TIME, PROGRESS
 *
 * Checked after every operation: the QP reaches RTS only after a half from
 * the bound address naming the bound QP number, carrying HAVE_YOURS, was
 * handed over; once programmed, XDP's connection entry names that peer;
 * every datagram the library sent is a BIND to the bound address's data
 * port naming the bound QP (nothing before the bind, nothing to a
 * stranger); the QP invariants.  At the end the QP is destroyed and no map
 * entry is left behind.
 */
#include <string.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>

#include "bind.h"
#include "harness.h"
#include "xsk_loop.h"

#define MAX_OPS 400
#define NONCE_A 0xb1d0b1d0aaaa0001ull
#define NONCE_B 0xb1d0b1d0bbbb0002ull

enum { OP_HALF, OP_HALF2, OP_RAW, OP_BIND, OP_POST, OP_TIME, OP_PROGRESS, OP_N };

static struct {
	bool bound;               /* xroce_qp_bind succeeded */
	uint8_t addr[16];         /* with this peer */
	uint32_t qp_num;
	/* (source address, QP number) of every half with HAVE_YOURS handed
	 * over: the bound peer must be one of them before RTS */
	struct { uint8_t addr[16]; uint32_t qp_num; } hy[16];
	uint32_t nhy;
	uint32_t nsent;           /* datagrams already checked */
} B;

static void peer_addr16(uint8_t out[16], int stranger)
{
	struct sockaddr_in6 sa;

	h_peer_addr(&sa, stranger ? 7 : 0);
	memcpy(out, &sa.sin6_addr, 16);
}

/* A record that, judged right, could confirm a peer: naming our QP, with
 * HAVE_YOURS; remember who it came from and which QP it names. */
static void note_record(const struct xroce_qp *qp, const void *rec, size_t len)
{
	const struct xr_evt_bind *e = rec;
	struct xr_ctrl_msg m;

	if (len < sizeof(*e))
		return;
	memcpy(&m, e->msg, sizeof(m));
	if (!(ntohl(m.flags) & XR_BIND_F_HAVE_YOURS) ||
	    ntohl(m.dst_conn) != qp->conn_id || m.op != XR_CTRL_BIND ||
	    XR_HDR_TYPE(m.ver_type) != XR_T_CTRL || B.nhy == 16)
		return;
	memcpy(B.hy[B.nhy].addr, e->src_addr, 16);
	B.hy[B.nhy++].qp_num = ntohl(m.src_conn);
}

static bool bound_peer_confirmed(void)
{
	uint32_t i;

	for (i = 0; i < B.nhy; i++)
		if (!memcmp(B.hy[i].addr, B.addr, 16) && B.hy[i].qp_num == B.qp_num)
			return true;
	return B.nhy == 16; /* too many to tell */
}

/* A half as a peer would send it, bent by the input. */
static void push_half(struct xroce_qp *qp, struct rd *r)
{
	struct xr_evt_bind e;
	struct xr_ctrl_msg m;
	uint8_t sel = rd_u8(r), fl = rd_u8(r), nb, i;
	bool stranger = (sel & 7) == 1, other_qp = (sel & 7) == 2;
	uint32_t flags = 0;

	h_connect_msg(&m, sel & 0x08 ? NONCE_B : NONCE_A, 0x77770000u + (sel >> 6),
		      0x55550000u, 1 + (sel >> 4 & 1));
	m.op = XR_CTRL_BIND;
	m.dst_conn = htonl((sel & 7) == 3 ? rd_u32(r) : qp->conn_id);
	if (other_qp)
		m.src_conn = htonl(H_PEER_CONN + 1);
	if (fl & 1)
		flags |= XR_BIND_F_HAVE_YOURS;
	if (fl & 2)
		flags |= XR_BIND_F_DONE;
	if (fl & 4)
		flags = rd_u32(r);
	m.flags = htonl(flags);
	if (fl & 8)
		m.rx_token = htobe64(rd_u64(r));
	m.priv_len = 4;
	memset(m.priv, 0, 4);
	m.priv[2] = rd_u8(r);
	/* A few bytes anywhere. */
	nb = (fl >> 4) % 4;
	for (i = 0; i < nb; i++)
		((uint8_t *)&m)[rd_u8(r) % sizeof(m)] = rd_u8(r);
	memset(&e, 0, sizeof(e));
	e.type = XR_EVT_BIND;
	e.conn = qp->conn_id;
	e.rx_ns = sim.now;
	peer_addr16(e.src_addr, stranger);
	e.src_port = H_PEER_PORT;
	memcpy(e.msg, &m, sizeof(m));
	note_record(qp, &e, sizeof(e));
	if (!sim_evt_push(&e, sizeof(e))) {
		xr_events_drain(H.dev);
		sim_evt_push(&e, sizeof(e));
	}
}

static void push_raw(struct xroce_qp *qp, struct rd *r)
{
	uint8_t buf[sizeof(struct xr_evt_bind) + 16];
	size_t len = rd_u8(r) % sizeof(buf);
	struct xr_evt_bind *e = (void *)buf;

	rd_bytes(r, buf, len);
	if (len >= 8) {
		e->type = XR_EVT_BIND;
		e->conn = qp->conn_id;
	}
	note_record(qp, buf, len);
	if (!sim_evt_push(buf, len)) {
		xr_events_drain(H.dev);
		sim_evt_push(buf, len);
	}
}

static void do_bind(struct xroce_qp *qp, struct rd *r)
{
	struct xroce_qp_peer p;
	uint8_t sel = rd_u8(r);
	int rc;

	memset(&p, 0, sizeof(p));
	peer_addr16(p.addr, (sel & 3) == 1);
	p.qp_num = (sel & 3) == 2 ? H_PEER_CONN + 1 : H_PEER_CONN;
	if ((sel & 3) == 3)
		p.qp_num = 0;
	p.timeout_ms = sel & 4 ? 50 + rd_u8(r) : 0;
	p.rnr_retry = sel & 8 ? rd_u8(r) % 9 : 0;
	p.rnr_timer_us = sel & 16 ? rd_u16(r) : 0;
	p.mtu = sel & 32 ? 400 + rd_u16(r) % 9000 : 0;
	rc = xroce_qp_bind(qp, &p);
	if (!B.bound) {
		if (!rc) {
			B.bound = true;
			memcpy(B.addr, p.addr, 16);
			B.qp_num = p.qp_num;
		}
		return;
	}
	/* Bound already: the same peer only updates limits; another is
	 * refused. */
	if (!memcmp(p.addr, B.addr, 16) && p.qp_num == B.qp_num)
		SIM_CHECK(rc == 0 || p.qp_num == 0 || (p.mtu && p.mtu < 576),
			  "rebind to the same peer: %d", rc);
	else
		SIM_CHECK(rc != 0, "rebind to another peer accepted");
}

/* Every datagram sent since the last look: a BIND to the bound peer. */
static void check_sent(struct xroce_qp *qp)
{
	uint32_t i;

	for (i = B.nsent; i < sim.nsent; i++) {
		const struct sim_dgram *d = &sim.sent[i];
		const struct xr_ctrl_msg *m = (const void *)d->buf;

		SIM_CHECK(B.bound, "a datagram sent before the bind");
		SIM_CHECK(d->len == sizeof(*m) && m->op == XR_CTRL_BIND,
			  "sent %zu bytes, op %u", d->len, m->op);
		SIM_CHECK(!memcmp(&d->addr.sin6_addr, B.addr, 16) &&
			  ntohs(d->addr.sin6_port) == H.dev->data_port,
			  "a BIND sent somewhere else than the peer's data port");
		SIM_CHECK(ntohl(m->dst_conn) == B.qp_num &&
			  ntohl(m->src_conn) == qp->conn_id, "BIND names %u -> %u",
			  ntohl(m->src_conn), ntohl(m->dst_conn));
	}
	B.nsent = sim.nsent;
}

static void check(struct xroce_qp *qp)
{
	struct xr_conn c;

	h_poll_check();
	h_check_qp(qp);
	check_sent(qp);
	if (qp->state == XROCE_QPS_RTS)
		SIM_CHECK(B.bound && bound_peer_confirmed(), "RTS without the "
			  "bound peer's HAVE_YOURS");
	if (qp->bind && qp->bind->have_peer && qp->state != XROCE_QPS_ERR &&
	    !bpf_map_lookup_elem(H.dev->maps.conns, &qp->conn_id, &c)) {
		SIM_CHECK(c.state == XR_CONN_RTS && c.peer_conn == B.qp_num &&
			  !memcmp(c.peer_addr[0], B.addr, 16),
			  "XDP programmed for another peer (conn %u)", c.peer_conn);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	struct rd r = { data, size };
	struct xroce_qp_init_attr qa;
	struct xroce_qp *qp;
	uint32_t i;
	int rc;

	if (!ready) {
		h_init();
		ready = true;
	}
	sim_reset(7000000000ull, 0xb1d00000u + rd_u8(&r));
	h_dev_reset();
	memset(&B, 0, sizeof(B));
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = H.scq;
	qa.recv_cq = H.rcq;
	qa.npaths = 1 + rd_u8(&r) % 4;
	rc = xroce_create_qp(H.pd, &qa, &qp);
	SIM_CHECK(rc == 0, "create_qp: %d", rc);
	h_ledger_reset(qp, false);
	h_txlog_reset(qp);
	for (i = 0; i < MAX_OPS && rd_more(&r); i++) {
		switch (rd_u8(&r) % OP_N) {
		case OP_HALF:
		case OP_HALF2:
			push_half(qp, &r);
			break;
		case OP_RAW:
			push_raw(qp, &r);
			break;
		case OP_BIND:
			do_bind(qp, &r);
			break;
		case OP_POST:
			if (qp->state == XROCE_QPS_CONNECTING || qp->state == XROCE_QPS_RTS)
				h_post(HW_WRITE, 1 + rd_u16(&r) % 20000, 0, true, 0, 1,
				       false);
			break;
		case OP_TIME:
			sim.now += 1000ull << (rd_u8(&r) % 30);
			break;
		case OP_PROGRESS:
			xr_progress(H.dev);
			break;
		}
		check(qp);
	}
	xr_events_drain(H.dev);
	xr_progress(H.dev);
	check(qp);
	h_ledger_qp_gone();
	rc = xroce_destroy_qp(qp);
	SIM_CHECK(rc == 0, "destroy_qp: %d", rc);
	h_ledger_final();
	h_check_frames();
	SIM_CHECK(h_maps_wipe() == 0, "map entries left behind by a destroyed QP");
	sim_evt_clear();
	return 0;
}
