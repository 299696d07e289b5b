/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Reference model of the XDP program xroce_xdp, one job: given the state
 * before a frame and the frame, say exactly what must come of it -- the
 * verdict, every counter's change, the reply frame byte for byte, the ring
 * buffer event, the bytes placed into a domain's memory, and the receive
 * windows and message slots afterwards.  bpf_xdp_fuzz.c compares all of it
 * with what the real program did.
 *
 * Written from the documented behaviour (include/contract/wire.h, abi.h, the
 * comments of bpf/xroce.bpf.c and include/contract/rxwin.h) in the plainest C there
 * is: windows are arrays of flags moved one PSN at a time, no bit tricks,
 * nothing shared with the BPF code but the headers' types and constants,
 * so that a bug in the program's bit arithmetic is not repeated here.
 * Checksums come from tests/bpf/frames.h (an independent RFC 1071 sum).
 */
#ifndef XR_TEST_FUZZ_MODEL_H
#define XR_TEST_FUZZ_MODEL_H

#include <linux/bpf.h>
#include <stdint.h>
#include <string.h>
#include "contract/abi.h"
#include "frames.h"
#include "fuzz_world.h"

/* Largest payload one packet may carry (bpf/lib/place.h). */
#define M_MAX_PKT_PAYLOAD 8192
/* A ring buffer record: the 88-byte event and an 8-byte header. */
#define M_EV_REC 96
/* A liveness check is trusted 1 ms (xr_domain.alive_until_ns). */

/* ---- model state --------------------------------------------------------- */

struct m_path {
	uint32_t cack;           /* next PSN expected */
	uint8_t seen[XR_SACK_BITS]; /* seen[i]: PSN cack + 1 + i arrived */
	uint32_t rx, ce, dup;
	uint64_t bytes;
};

struct m_rx {
	uint32_t csn_next;
	uint8_t ring[XR_CSN_WIN]; /* ring[csn % XR_CSN_WIN]: arrived */
	struct m_path path[XR_MAX_PATHS];
};

struct model {
	struct m_rx rx[FZ_NCONN];        /* by index into fz_conns */
	uint64_t msgs[FZ_NCONN][XR_MSG_SLOTS];
	uint64_t ring_used[D_N];         /* bytes queued, not yet consumed */
	uint32_t rq_state[FZ_NRQ];       /* XR_RQ_* of fz_rqs[i] */
	int verify_csum;
	uint32_t capacity;               /* cfg rate_capacity_mbps */
};

static int m_conn_idx(uint32_t id)
{
	size_t i;

	for (i = 0; i < FZ_NCONN; i++)
		if (fz_conns[i].id == id)
			return (int)i;
	return -1;
}

static void m_init(struct model *m)
{
	size_t i;
	int p;

	memset(m, 0, sizeof(*m));
	m->verify_csum = 1;
	for (i = 0; i < FZ_NRQ; i++)
		m->rq_state[i] = fz_rqs[i].state;
	for (i = 0; i < FZ_NCONN; i++) {
		m->rx[i].csn_next = fz_init_csn(fz_conns[i].id);
		for (p = 0; p < XR_MAX_PATHS; p++)
			m->rx[i].path[p].cack = fz_init_psn(fz_conns[i].id);
	}
}

/* ---- receive windows, one PSN / CSN at a time ---------------------------- */

static int32_t m_diff(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b);
}

/* Move the window one PSN on: PSN cack is done. */
static void m_step(struct m_path *p)
{
	memmove(p->seen, p->seen + 1, XR_SACK_BITS - 1);
	p->seen[XR_SACK_BITS - 1] = 0;
	p->cack++;
}

/* PSN cack arrived: move over it and every arrived PSN after it. */
static void m_advance(struct m_path *p)
{
	int next;

	do {
		next = p->seen[0]; /* PSN cack + 1 arrived too? */
		m_step(p);
	} while (next);
}

/* psn_base: every PSN before base is done; then advance if base arrived. */
static void m_forward(struct m_path *p, uint32_t base)
{
	int32_t d = m_diff(base, p->cack);
	int head;

	if (d <= 0)
		return;
	if (d > XR_SACK_BITS) {
		memset(p->seen, 0, sizeof(p->seen));
		p->cack = base;
		return;
	}
	head = p->seen[d - 1]; /* PSN base arrived? */
	while (p->cack != base)
		m_step(p);
	if (head)
		m_advance(p);
}

enum { M_NEW = 0, M_OLD = 1, M_OOW = 2 };

static int m_psn_accept(struct m_path *p, uint32_t psn)
{
	int32_t d = m_diff(psn, p->cack);

	if (d < 0)
		return M_OLD;
	if (d > XR_SACK_BITS)
		return M_OOW;
	if (d == 0) {
		m_advance(p);
		return M_NEW;
	}
	if (p->seen[d - 1])
		return M_OLD;
	p->seen[d - 1] = 1;
	return M_NEW;
}

/* The CSN window.  csn_next moves over arrived CSNs, but by design over
 * at most the rest of its 64-CSN ring word and the next word per packet
 * (include/contract/rxwin.h); later packets catch up. */
static int m_csn_accept(struct m_rx *r, uint32_t csn)
{
	int32_t d = m_diff(csn, r->csn_next);
	uint32_t limit;

	if (d < 0)
		return M_OLD;
	if (d >= XR_CSN_WIN)
		return M_OOW;
	if (r->ring[csn % XR_CSN_WIN])
		return M_OLD;
	r->ring[csn % XR_CSN_WIN] = 1;
	limit = (r->csn_next & ~63u) + 128;
	while (r->csn_next != limit && r->ring[r->csn_next % XR_CSN_WIN]) {
		r->ring[r->csn_next % XR_CSN_WIN] = 0;
		r->csn_next++;
	}
	return M_NEW;
}

/* The SACK bitmap words as the program keeps them (host order). */
static void m_sack_words(const struct m_path *p, uint64_t w[XR_SACK_WORDS])
{
	int i;

	memset(w, 0, sizeof(uint64_t) * XR_SACK_WORDS);
	for (i = 0; i < XR_SACK_BITS; i++)
		if (p->seen[i])
			w[i / 64] |= 1ull << (i % 64);
}

/* ---- what a frame must do ------------------------------------------------ */

struct pred {
	uint32_t verdict;
	int64_t st[XR_STAT_MAX];
	/* XDP_TX: the whole reply frame */
	uint8_t out[FR_MAX];
	size_t outn;
	int reply_rate_off;      /* offset of rate_hint in out (checked apart) */
	/* ring buffer event (at most one), and the domain it goes to */
	int nev, ev_dom;
	struct xr_evt ev;
	/* or a BIND record (its own size) to domain ev_dom */
	int nbind;
	struct xr_evt_bind bev;
	/* placement */
	int place, pdom;
	uint64_t pos;
	uint32_t plen;
	size_t poff;             /* payload offset in the frame */
	/* who may change: the connection the frame authenticates for, whose
	 * receive state and message slot may move (table index, -1 none),
	 * whether the program got as far as its receive state, and the
	 * domain whose liveness cache may be refreshed */
	int cidx, reached_rx, msg_slot, alive_dom;
	/* the frame authenticated for a connection (data path) */
	int auth;
	/* the window of memory this frame may write, if any (invariant (i)
	 * checked without the model: authentication and placement checks
	 * only; the caller adds "unless its CSN had arrived", from the
	 * program's own receive state) */
	int may_write, wdom;
	uint64_t wpos;
	uint32_t wlen, wcsn;
	const char *path;        /* how the model classified it */
	/* data that reached its receive window: opcode, NAK reason, and
	 * whether it was new (placed / handed over) */
	int opcode, nak, fresh;
};

/* Where the headers are, as xr_parse finds them. */
struct m_view {
	int v6;
	size_t l4;               /* UDP header */
	uint8_t ecn;
};

/* xr_parse (bpf/lib/parse.h) takes a frame with the IPv6 ethertype as
 * IPv6 whatever its version nibble (reported as a leniency; the fuzzer
 * counts such frames).  Set to 1 once the program checks the version. */
#define M_IP6_CHECKS_VERSION 1

static int m_parse(const uint8_t *f, size_t n, struct m_view *v)
{
	uint16_t proto;

	memset(v, 0, sizeof(*v));
	if (n < FR_ETH)
		return -1;
	proto = fr_get16(f + 12);
	if (proto == FR_ETH_IP4) {
		const uint8_t *ip = f + FR_ETH;

		if (n < FR_ETH + FR_IP4)
			return -1;
		if (ip[0] != 0x45)          /* version 4, no options */
			return -1;
		if (fr_get16(ip + 6) & 0x3fff) /* MF or an offset */
			return -1;
		if (ip[9] != 17)
			return -1;
		v->ecn = ip[1] & 3;
		v->l4 = FR_ETH + FR_IP4;
	} else if (proto == FR_ETH_IP6) {
		const uint8_t *ip = f + FR_ETH;

		if (n < FR_ETH + FR_IP6)
			return -1;
		if (M_IP6_CHECKS_VERSION && (ip[0] >> 4) != 6)
			return -1;
		if (ip[6] != 17)            /* any other next header */
			return -1;
		v->v6 = 1;
		v->ecn = (ip[1] >> 4) & 3;
		v->l4 = FR_ETH + FR_IP6;
	} else {
		return -1;
	}
	if (n < v->l4 + FR_UDP)
		return -1;
	return 0;
}

static void m_count(struct pred *p, int stat)
{
	p->st[stat]++;
}

static void m_verdict_drop(struct pred *p, int stat, const char *why)
{
	p->verdict = XDP_DROP;
	m_count(p, stat);
	p->path = why;
}

/* The frame's source address as a connection stores peers. */
static void m_src16(const uint8_t *f, const struct m_view *v, uint8_t a[16])
{
	memset(a, 0, 16);
	if (v->v6) {
		memcpy(a, fr_saddr(f, 1), 16);
	} else {
		a[10] = a[11] = 0xff;
		memcpy(a + 12, fr_saddr(f, 0), 4);
	}
}

/* Connection lookup and authentication: 0, or the drop counter. */
static int m_auth(const uint8_t *f, const struct m_view *v, uint32_t id,
		  uint64_t token, int reply, const struct fz_conn **out)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	const struct fz_conn *c = fz_conn_find(id);
	uint8_t a[16];
	uint16_t sport = fr_get16(f + v->l4);
	int i;

	*out = c;
	if (!c)
		return XR_STAT_DROP_NO_CONN;
	if (c->c.state != XR_CONN_RTS)
		return XR_STAT_DROP_CONN_STATE;
	if (token != c->c.rx_token)
		return XR_STAT_DROP_TOKEN;
	if (!reply && (uint16_t)(sport - c->c.peer_sport_lo) >= c->c.peer_sport_n)
		return XR_STAT_DROP_PEER;
	m_src16(f, v, a);
	if (v->v6 && !memcmp(a, mapped, 12))
		return XR_STAT_DROP_PEER;
	for (i = 0; i < XR_MAX_PLANES && i < c->c.npeer; i++)
		if (!memcmp(a, c->c.peer_addr[i], 16))
			return 0;
	return XR_STAT_DROP_PEER;
}

/* Is the UDP checksum of the udp_len-byte datagram right (and not 0)? */
static int m_csum_ok(const uint8_t *f, const struct m_view *v, uint32_t udp_len)
{
	const uint8_t *u = f + v->l4;

	if (fr_get16(u + 6) == 0)
		return 0;
	return fr_sum(u, udp_len,
		      fr_pseudo(v->v6, fr_saddr(f, v->v6), fr_daddr(f, v->v6),
				17, udp_len)) == 0xffff;
}

/* UDP length if the datagram fits in the frame and holds min_body bytes
 * of xroce header, else 0. */
static uint32_t m_udp_len(const uint8_t *f, size_t n, const struct m_view *v,
			  uint32_t min_body)
{
	uint32_t len = fr_get16(f + v->l4 + 4);

	if (len < FR_UDP + min_body || v->l4 + len > n)
		return 0;
	return len;
}

static int m_dom_alive(int d)
{
	if (d < 0 || !fz_doms[d].registered)
		return 0;
	return fz_doms[d].ctrl != CTRL_DEAD;
}

/* Placement checks.  Each returns a NAK reason or 0 and sets *pos, the
 * byte position in the connection's domain's memory. */

/* A segment's offsets fit its message. */
static uint8_t m_check_seg(uint32_t plen, uint32_t msg_len, uint32_t msg_off)
{
	if (msg_off > msg_len || plen > msg_len - msg_off ||
	    (plen == 0 && msg_len != 0))
		return XR_NAK_BAD_LENGTH;
	return 0;
}

/* [pos, pos + len) lies inside the connection's domain's memory. */
static uint8_t m_check_pos(const struct fz_conn *c, uint64_t pos, uint64_t len)
{
	int d = fz_dom_idx(c->c.domain);
	uint64_t mem;

	if (d < 0 || !fz_doms[d].registered)
		return XR_NAK_BOUNDS;
	mem = (uint64_t)fz_doms[d].pages * XR_PAGE_SIZE;
	if ((unsigned __int128)pos + len > mem)
		return XR_NAK_BOUNDS;
	return 0;
}

/* [raddr, raddr + len) inside a region of the connection's domain and PD
 * with the access right needed. */
static uint8_t m_check_mr(const struct fz_conn *c, uint32_t rkey,
			  uint64_t raddr, uint64_t len, uint32_t access,
			  uint64_t *pos)
{
	const struct fz_mr *m = fz_mr_find(rkey);
	uint64_t off;

	if (!m || m->mr.rkey != rkey || m->mr.domain != c->c.domain ||
	    m->mr.pd != c->c.pd)
		return XR_NAK_BAD_KEY;
	if (!(m->mr.access & access))
		return XR_NAK_ACCESS;
	if (raddr < m->mr.iova)
		return XR_NAK_BOUNDS;
	off = raddr - m->mr.iova;
	if ((unsigned __int128)off + len > m->mr.len)
		return XR_NAK_BOUNDS;
	/* positions beyond 2^48 are refused before any sum could wrap */
	if (m->mr.mem_off > (1ull << 48) || off > (1ull << 48))
		return XR_NAK_BOUNDS;
	*pos = m->mr.mem_off + off;
	return m_check_pos(c, *pos, len);
}

/* SEND: the receive posted for (stream, MSN), unless the library took it
 * back.  XDP claims whatever entry holds the slot before it reads it
 * (claim: the packet is not a duplicate, which XDP never judges), then
 * checks that the entry is the one it wanted. */
static uint8_t m_check_send(struct model *m, const struct fz_conn *c,
			    uint16_t stream, uint32_t msn, uint32_t msg_len,
			    uint32_t msg_off, uint32_t plen, uint64_t *pos,
			    int claim)
{
	const struct fz_rq *r = fz_rq_find(c->id, stream, msn);
	uint32_t *state;

	if (!r)
		return XR_NAK_RNR;
	state = &m->rq_state[r - fz_rqs];
	if (claim && *state == XR_RQ_OPEN)
		*state = XR_RQ_TAKEN;
	if (*state == XR_RQ_RECALLED || r->msn != msn)
		return XR_NAK_RNR;
	if (msg_len > r->len)
		return XR_NAK_BAD_LENGTH;
	if (r->mem_off > (1ull << 48))
		return XR_NAK_BOUNDS;
	*pos = r->mem_off + msg_off;
	return m_check_pos(c, *pos, plen);
}

/* READ_RESP: the window its read opened, filled exactly. */
static uint8_t m_check_read_resp(const struct fz_conn *c, uint32_t id,
				 uint32_t msg_len, uint32_t msg_off,
				 uint32_t plen, uint64_t *pos)
{
	const struct fz_read *r = fz_read_find(c->id, id);

	if (!r)
		return XR_NAK_BAD_KEY;
	if (msg_len != r->len)
		return XR_NAK_BAD_LENGTH;
	if (r->mem_off > (1ull << 48))
		return XR_NAK_BOUNDS;
	*pos = r->mem_off + msg_off;
	return m_check_pos(c, *pos, plen);
}

/* READ_RESP with XR_DF_ERR (the responder cannot answer): no payload, for
 * a read we have open. */
static uint8_t m_check_read_err(const struct fz_conn *c, uint32_t id,
				uint32_t msg_len, uint32_t msg_off,
				uint32_t plen, uint64_t *pos)
{
	if (plen || msg_off > msg_len)
		return XR_NAK_BAD_LENGTH;
	return m_check_read_resp(c, id, msg_len, msg_off, 0, pos);
}

static int m_nak_stat(uint8_t reason)
{
	switch (reason) {
	case XR_NAK_BAD_KEY:
		return XR_STAT_DROP_KEY;
	case XR_NAK_BOUNDS:
		return XR_STAT_DROP_BOUNDS;
	case XR_NAK_ACCESS:
		return XR_STAT_DROP_ACCESS;
	case XR_NAK_BAD_OPCODE:
		return XR_STAT_DROP_OPCODE;
	case XR_NAK_RNR:
		return XR_STAT_NAK_RNR;
	default:
		return XR_STAT_DROP_LENGTH;
	}
}

/* Can one more event (of rec bytes in the ring) go into domain d's ring? */
static int m_ring_put_n(struct model *m, int d, uint64_t rec)
{
	if (m->ring_used[d] + rec > XR_EVQ_BYTES - 1)
		return 0;
	m->ring_used[d] += rec;
	return 1;
}

static int m_ring_put(struct model *m, int d)
{
	return m_ring_put_n(m, d, M_EV_REC);
}

/* Can one more answer (ACK, NAK, probe reply) go into domain d's ring?
 * Answers keep half the reserve free (bpf/lib/budget.h). */
static int m_ring_put_answer(struct model *m, int d)
{
	if (m->ring_used[d] > XR_EVQ_BYTES - XR_EVQ_RESERVE / 2)
		return 0;
	return m_ring_put(m, d);
}

/* The input turned around into a reply carrying body_len bytes: MACs,
 * addresses and ports swapped, lengths, TTL 64, ECN cleared, IPv4 id 0 and
 * DF, the IPv4 header checksum.  The caller writes the body and then calls
 * m_reply_finish for the UDP checksum. */
static uint8_t *m_reply(struct pred *p, const uint8_t *in, size_t n,
			const struct m_view *v, size_t body_len)
{
	uint8_t *o = p->out, t[16];
	size_t len = v->l4 + FR_UDP + body_len;

	memset(o, 0, len);
	memcpy(o, in, n < len ? n : len);
	memcpy(t, o, 6);
	memcpy(o, o + 6, 6);
	memcpy(o + 6, t, 6);
	if (!v->v6) {
		uint8_t *ip = o + FR_ETH;

		memcpy(t, ip + 12, 4);
		memcpy(ip + 12, ip + 16, 4);
		memcpy(ip + 16, t, 4);
		fr_put16(ip + 2, (uint16_t)(FR_IP4 + FR_UDP + body_len));
		ip[8] = 64;
		ip[1] &= ~3;
		fr_put16(ip + 4, 0);
		fr_put16(ip + 6, 0x4000);
		fr_put16(ip + 10, 0);
		fr_put16(ip + 10, (uint16_t)~fr_sum(ip, FR_IP4, 0));
	} else {
		uint8_t *ip = o + FR_ETH;

		memcpy(t, ip + 8, 16);
		memcpy(ip + 8, ip + 24, 16);
		memcpy(ip + 24, t, 16);
		fr_put16(ip + 4, (uint16_t)(FR_UDP + body_len));
		ip[7] = 64;
		ip[1] &= ~0x30;
	}
	memcpy(t, o + v->l4, 2);
	memcpy(o + v->l4, o + v->l4 + 2, 2);
	memcpy(o + v->l4 + 2, t, 2);
	fr_put16(o + v->l4 + 4, (uint16_t)(FR_UDP + body_len));
	p->outn = len;
	return o + v->l4 + FR_UDP;
}

static void m_reply_finish(struct pred *p, const struct m_view *v)
{
	fr_udp_fix(p->out, v->v6, v->l4);
	p->verdict = XDP_TX;
}

/* Data to our data port. */
static void m_data(struct model *m, const uint8_t *f, size_t n,
		   const struct m_view *v, struct pred *p)
{
	const uint8_t *x = f + v->l4 + FR_UDP;
	const struct fz_conn *c;
	uint32_t udp_len, plen, conn_id, psn, base, csn, msg_id, msg_len;
	uint32_t msg_off, rkey, imm;
	uint16_t stream, ssn;
	const uint8_t *pl;
	uint64_t raddr, token, pos = 0;
	uint8_t path, flags, opcode, nak = 0, aflags;
	int why, d, ci, pv, cv = M_OLD, ce, done = 0, gap, edge, i, dup;
	int32_t gd;
	struct m_rx *r;
	struct m_path *mp;
	uint64_t sack[XR_SACK_WORDS];
	uint8_t *a;

	if (n < v->l4 + FR_UDP + sizeof(struct xr_data_hdr))
		return m_verdict_drop(p, XR_STAT_DROP_TRUNC, "data: short");
	udp_len = m_udp_len(f, n, v, sizeof(struct xr_data_hdr));
	if (!udp_len)
		return m_verdict_drop(p, XR_STAT_DROP_TRUNC, "data: udp len");
	plen = udp_len - FR_UDP - (uint32_t)sizeof(struct xr_data_hdr);
	if (plen > M_MAX_PKT_PAYLOAD)
		return m_verdict_drop(p, XR_STAT_DROP_LENGTH, "data: too long");
	conn_id = fr_get32(x + 4);
	token = fr_get64(x + 8);
	why = m_auth(f, v, conn_id, token, 0, &c);
	if (why)
		return m_verdict_drop(p, why, "data: not authenticated");
	if (m->verify_csum && !m_csum_ok(f, v, udp_len))
		return m_verdict_drop(p, XR_STAT_DROP_CSUM, "data: checksum");
	path = x[3];
	if (path >= XR_MAX_PATHS)
		return m_verdict_drop(p, XR_STAT_DROP_LENGTH, "data: path");
	flags = x[1];
	opcode = x[2];
	psn = fr_get32(x + 16);
	base = fr_get32(x + 20);
	csn = fr_get32(x + 24);
	raddr = fr_get64(x + 32);
	rkey = fr_get32(x + 40);
	msg_id = fr_get32(x + 44);
	msg_len = fr_get32(x + 48);
	msg_off = fr_get32(x + 52);
	imm = fr_get32(x + 56);
	stream = fr_get16(x + 60);
	ssn = fr_get16(x + 62);
	pl = x + sizeof(struct xr_data_hdr);
	p->auth = 1;
	if (conn_id >= XR_DEFAULT_MAX_CONNS)
		return m_verdict_drop(p, XR_STAT_DROP_NO_CONN,
				      "data: id beyond xr_rx");
	ci = m_conn_idx(conn_id);
	p->cidx = ci;
	r = &m->rx[ci];
	/* A duplicate -- its CSN already arrived -- is acknowledged as such,
	 * never judged again (what a SEND filled may be gone by now). */
	dup = m_diff(csn, r->csn_next) < 0 ||
	      (m_diff(csn, r->csn_next) < XR_CSN_WIN && r->ring[csn % XR_CSN_WIN]);
	/* The placement checks (judged here even for a duplicate, for the
	 * invariant (i): what this frame could ever be allowed to write). */
	if (opcode == XR_OP_READ_REQ) {
		/* one packet: struct xr_read_req, validated for reading */
		if (plen != sizeof(struct xr_read_req) ||
		    msg_len != sizeof(struct xr_read_req) || msg_off)
			nak = XR_NAK_BAD_LENGTH;
		else
			nak = m_check_mr(c, rkey, raddr, fr_get32(pl + 8),
					 XR_ACCESS_REMOTE_READ, &pos);
	} else if (opcode == XR_OP_READ_RESP && (flags & XR_DF_ERR)) {
		nak = m_check_read_err(c, rkey, msg_len, msg_off, plen, &pos);
	} else {
		nak = m_check_seg(plen, msg_len, msg_off);
		if (nak)
			;
		else if (opcode == XR_OP_WRITE || opcode == XR_OP_WRITE_IMM)
			nak = m_check_mr(c, rkey, raddr, plen,
					 XR_ACCESS_REMOTE_WRITE, &pos);
		else if (opcode == XR_OP_SEND || opcode == XR_OP_SEND_IMM)
			nak = m_check_send(m, c, stream, rkey, msg_len, msg_off,
					   plen, &pos, !dup);
		else if (opcode == XR_OP_READ_RESP)
			nak = m_check_read_resp(c, rkey, msg_len, msg_off, plen,
						&pos);
		else
			nak = XR_NAK_BAD_OPCODE;
	}
	d = fz_dom_idx(c->c.domain);
	if (!nak && opcode != XR_OP_READ_REQ) {
		p->may_write = 1;
		p->wdom = d;
		p->wpos = pos;
		p->wlen = plen;
		p->wcsn = csn;
	}
	if (dup)
		nak = 0;
	if (d >= 0 && fz_doms[d].ctrl == CTRL_LIVE)
		p->alive_dom = d;
	if (!m_dom_alive(d))
		return m_verdict_drop(p, XR_STAT_DROP_DEAD, "data: dead domain");
	if (!fz_doms[d].has_evq)
		return m_verdict_drop(p, XR_STAT_DROP_NO_MEM, "data: no ring");
	if (!nak) {
		if (m->ring_used[d] > XR_EVQ_BYTES - XR_EVQ_RESERVE)
			return m_verdict_drop(p, XR_STAT_DROP_EVQ_FULL,
					      "data: ring nearly full");
		if (!fz_doms[d].has_mem)
			return m_verdict_drop(p, XR_STAT_DROP_NO_MEM,
					      "data: no memory map");
	}
	mp = &r->path[path];
	ce = v->ecn == 3;

	if (!nak && m_diff(csn, r->csn_next) >= XR_CSN_WIN)
		return m_verdict_drop(p, XR_STAT_DROP_WINDOW, "data: CSN window");
	p->reached_rx = 1;
	p->opcode = opcode;
	p->nak = nak;
	m_forward(mp, base);
	if (nak)
		pv = m_diff(psn, mp->cack) > XR_SACK_BITS ? M_OOW : M_NEW;
	else
		pv = m_psn_accept(mp, psn);
	if (pv == M_OOW)
		return m_verdict_drop(p, XR_STAT_DROP_WINDOW, "data: PSN window");
	mp->rx++;
	if (ce)
		mp->ce++;
	if (!nak) {
		cv = m_csn_accept(r, csn);
		if (cv == M_NEW)
			mp->bytes += plen;
		else
			mp->dup++;
		p->fresh = cv == M_NEW;
	}
	m_count(p, nak ? m_nak_stat(nak) : XR_STAT_RX_DATA);
	if (cv == M_NEW && opcode == XR_OP_READ_REQ) {
		/* handed to the library, acknowledged at once */
		if (m_ring_put(m, d)) {
			struct xr_evt *e = &p->ev;

			p->nev = 1;
			p->ev_dom = d;
			e->type = XR_EVT_READ_REQ;
			e->path = path;
			e->conn = conn_id;
			e->read.raddr = raddr;
			e->read.pos = pos;
			e->read.laddr = fr_get64(pl);
			e->read.len = fr_get32(pl + 8);
			e->read.read_id = fr_get32(pl + 12);
			e->read.rkey = rkey;
			e->read.stream = stream;
			e->read.ssn = ssn;
		} else {
			m_count(p, XR_STAT_EVT_LOST);
		}
		m_count(p, XR_STAT_MSG_DONE);
		flags |= XR_DF_AR;
	} else if (cv == M_NEW && opcode == XR_OP_READ_RESP &&
		   (flags & XR_DF_ERR)) {
		/* the read failed: told to the library, nothing placed */
		if (m_ring_put(m, d)) {
			struct xr_evt *e = &p->ev;

			p->nev = 1;
			p->ev_dom = d;
			e->type = XR_EVT_RECV;
			e->path = path;
			e->conn = conn_id;
			e->recv.msg_id = msg_id;
			e->recv.msg_len = msg_len;
			e->recv.imm = imm;
			e->recv.stream = stream;
			e->recv.opcode = opcode;
			e->recv.flags = XR_RECV_F_ERR;
			e->recv.raddr_end = raddr + (uint32_t)(msg_len - msg_off);
			e->recv.rkey = rkey;
			e->recv.ssn = ssn;
		} else {
			m_count(p, XR_STAT_EVT_LOST);
		}
		flags |= XR_DF_AR;
	} else if (cv == M_NEW) {
		uint32_t slot = msg_id % XR_MSG_SLOTS;
		uint64_t old = m->msgs[ci][slot], nw;

		p->place = 1;
		p->pdom = d;
		p->pos = pos;
		p->plen = plen;
		p->poff = v->l4 + FR_UDP + sizeof(struct xr_data_hdr);
		p->st[XR_STAT_RX_BYTES] += plen;
		if (XR_MSG_SLOT_ID(old) == msg_id)
			nw = old + plen;
		else
			nw = (uint64_t)msg_id << 32 | plen;
		m->msgs[ci][slot] = nw;
		p->msg_slot = (int)slot;
		done = XR_MSG_SLOT_BYTES(nw) == msg_len;
	} else if (!nak) {
		m_count(p, XR_STAT_RX_DUP);
	}
	if (done) {
		m_count(p, XR_STAT_MSG_DONE);
		if (m_ring_put(m, d)) {
			struct xr_evt *e = &p->ev;

			p->nev = 1;
			p->ev_dom = d;
			e->type = XR_EVT_RECV;
			e->path = path;
			e->conn = conn_id;
			e->recv.msg_id = msg_id;
			e->recv.msg_len = msg_len;
			e->recv.imm = imm;
			e->recv.stream = stream;
			e->recv.opcode = opcode;
			e->recv.raddr_end = raddr + (uint32_t)(msg_len - msg_off);
			e->recv.rkey = rkey;
			e->recv.ssn = ssn;
		} else {
			m_count(p, XR_STAT_EVT_LOST);
		}
	}
	/* A SEND's first packet found no receive: the library is told which
	 * (within the ring's reserve, like data). */
	if (nak == XR_NAK_RNR && !msg_off &&
	    m->ring_used[d] <= XR_EVQ_BYTES - XR_EVQ_RESERVE) {
		if (m_ring_put(m, d)) {
			struct xr_evt *e = &p->ev;

			p->nev = 1;
			p->ev_dom = d;
			e->type = XR_EVT_RNR;
			e->path = path;
			e->conn = conn_id;
			e->rnr.msn = rkey;
			e->rnr.stream = stream;
		} else {
			m_count(p, XR_STAT_EVT_LOST);
		}
	}
	m_sack_words(mp, sack);
	gap = (sack[0] | sack[1] | sack[2] | sack[3]) != 0;
	/* Answered for the gap's sake: only a packet just past a hole. */
	gd = m_diff(psn, mp->cack);
	edge = gd == 1 ||
	       (gd > 1 && (gd - 2 >= XR_SACK_BITS || !mp->seen[gd - 2]));
	if (!((flags & XR_DF_AR) || pv == M_OLD || cv == M_OLD || edge || ce ||
	      nak || done)) {
		p->verdict = XDP_DROP;
		p->path = "data: consumed";
		return;
	}
	aflags = (ce ? XR_AF_ECE : 0) | (!nak && cv == M_OLD ? XR_AF_DUP : 0) |
		 (gap ? XR_AF_SACK : 0);
	a = m_reply(p, f, n, v, sizeof(struct xr_ack_hdr));
	a[0] = XR_VER_TYPE(nak ? XR_T_NAK : XR_T_ACK);
	a[1] = aflags;
	a[2] = nak;
	a[3] = path;
	fr_put32(a + 4, c->c.peer_conn);
	fr_put64(a + 8, c->c.tx_token);
	fr_put32(a + 16, mp->cack);
	fr_put32(a + 20, psn);
	memcpy(a + 24, x + 28, 4);      /* ts, echoed as it came */
	fr_put32(a + 28, 0);            /* rate_hint: checked apart */
	for (i = 0; i < XR_SACK_WORDS; i++)
		fr_put64(a + 32 + 8 * i, sack[i]);
	fr_put32(a + 64, mp->ce);
	fr_put32(a + 68, mp->rx);
	fr_put32(a + 72, r->csn_next);
	fr_put32(a + 76, nak ? csn : 0);
	p->reply_rate_off = (int)(a + 28 - p->out);
	m_reply_finish(p, v);
	m_count(p, nak ? XR_STAT_TX_NAK : XR_STAT_TX_ACK);
	p->path = nak ? "data: NAK" : "data: ACK";
}

/* ACK / NAK from a peer's data port. */
static void m_ack(struct model *m, const uint8_t *f, size_t n,
		  const struct m_view *v, struct pred *p)
{
	const uint8_t *x = f + v->l4 + FR_UDP;
	const struct fz_conn *c;
	struct xr_evt *e = &p->ev;
	uint32_t udp_len, conn_id;
	int why, d, i;

	if (n < v->l4 + FR_UDP + sizeof(struct xr_ack_hdr))
		return m_verdict_drop(p, XR_STAT_DROP_TRUNC, "ack: short");
	udp_len = m_udp_len(f, n, v, sizeof(struct xr_ack_hdr));
	if (!udp_len)
		return m_verdict_drop(p, XR_STAT_DROP_TRUNC, "ack: udp len");
	conn_id = fr_get32(x + 4);
	why = m_auth(f, v, conn_id, fr_get64(x + 8), 1, &c);
	if (why == XR_STAT_DROP_NO_CONN) {
		p->verdict = XDP_PASS;
		m_count(p, XR_STAT_PASS);
		p->path = "ack: no such connection, passed";
		return;
	}
	if (why)
		return m_verdict_drop(p, why, "ack: not authenticated");
	if (m->verify_csum && !m_csum_ok(f, v, udp_len))
		return m_verdict_drop(p, XR_STAT_DROP_CSUM, "ack: checksum");
	d = fz_dom_idx(c->c.domain);
	if (d < 0 || !fz_doms[d].has_evq)
		return m_verdict_drop(p, XR_STAT_DROP_NO_MEM, "ack: no ring");
	if (!m_ring_put_answer(m, d))
		return m_verdict_drop(p, XR_STAT_DROP_ACK_LOST, "ack: ring full");
	p->nev = 1;
	p->ev_dom = d;
	e->type = (x[0] & 0xf) == XR_T_NAK ? XR_EVT_NAK : XR_EVT_ACK;
	e->path = x[3];
	e->flags = x[1];
	e->conn = conn_id;
	e->ack.cack = fr_get32(x + 16);
	e->ack.ack_psn = fr_get32(x + 20);
	e->ack.ts_echo = fr_get32(x + 24);
	e->ack.rate_hint = fr_get32(x + 28);
	for (i = 0; i < XR_SACK_WORDS; i++) /* zero without the flag */
		e->ack.sack[i] = x[1] & XR_AF_SACK ? fr_get64(x + 32 + 8 * i) : 0;
	e->ack.ce_pkts = fr_get32(x + 64);
	e->ack.rx_pkts = fr_get32(x + 68);
	e->ack.csn_cum = fr_get32(x + 72);
	e->ack.nak_csn = fr_get32(x + 76);
	e->ack.reason = x[2];
	m_count(p, e->type == XR_EVT_NAK ? XR_STAT_RX_NAK : XR_STAT_RX_ACK);
	p->verdict = XDP_DROP;
	p->path = "ack: event";
}

/* A probe to our data port, or a probe reply from a peer's data port. */
static void m_probe(struct model *m, const uint8_t *f, size_t n,
		    const struct m_view *v, int reply, struct pred *p)
{
	const uint8_t *x = f + v->l4 + FR_UDP;
	const struct fz_conn *c;
	uint32_t udp_len, conn_id;
	uint8_t *o;
	int why, d;

	if (n < v->l4 + FR_UDP + sizeof(struct xr_probe_hdr))
		return m_verdict_drop(p, XR_STAT_DROP_TRUNC, "probe: short");
	udp_len = m_udp_len(f, n, v, sizeof(struct xr_probe_hdr));
	if (!udp_len)
		return m_verdict_drop(p, XR_STAT_DROP_TRUNC, "probe: udp len");
	conn_id = fr_get32(x + 4);
	why = m_auth(f, v, conn_id, fr_get64(x + 8), reply, &c);
	if (reply && why == XR_STAT_DROP_NO_CONN) {
		p->verdict = XDP_PASS;
		m_count(p, XR_STAT_PASS);
		p->path = "probe reply: no such connection, passed";
		return;
	}
	if (why)
		return m_verdict_drop(p, why, "probe: not authenticated");
	if (m->verify_csum && !m_csum_ok(f, v, udp_len))
		return m_verdict_drop(p, XR_STAT_DROP_CSUM, "probe: checksum");
	d = fz_dom_idx(c->c.domain);
	if (reply) {
		struct xr_evt *e = &p->ev;

		if (d < 0 || !fz_doms[d].has_evq)
			return m_verdict_drop(p, XR_STAT_DROP_NO_MEM,
					      "probe reply: no ring");
		if (!m_ring_put_answer(m, d))
			return m_verdict_drop(p, XR_STAT_DROP_ACK_LOST,
					      "probe reply: ring full");
		p->nev = 1;
		p->ev_dom = d;
		e->type = XR_EVT_PROBE_REPLY;
		e->path = x[3];
		e->flags = x[1];
		e->conn = conn_id;
		e->probe.seq = fr_get32(x + 16);
		e->probe.ts = fr_get32(x + 20);
		e->probe.rate_hint = fr_get32(x + 24);
		m_count(p, XR_STAT_RX_ACK);
		p->verdict = XDP_DROP;
		p->path = "probe reply: event";
		return;
	}
	if (d >= 0 && fz_doms[d].ctrl == CTRL_LIVE)
		p->alive_dom = d;
	if (!m_dom_alive(d))
		return m_verdict_drop(p, XR_STAT_DROP_DEAD, "probe: dead domain");
	o = m_reply(p, f, n, v, sizeof(struct xr_probe_hdr));
	o[0] = XR_VER_TYPE(XR_T_PROBE_REPLY);
	o[1] = 0;
	o[2] = 0;
	o[3] = x[3];
	fr_put32(o + 4, c->c.peer_conn);
	fr_put64(o + 8, c->c.tx_token);
	memcpy(o + 16, x + 16, 8);      /* seq, ts */
	fr_put32(o + 24, 0);            /* rate_hint: checked apart */
	fr_put32(o + 28, 0);
	p->reply_rate_off = (int)(o + 24 - p->out);
	m_reply_finish(p, v);
	m_count(p, XR_STAT_PROBE);
	p->path = "probe: reply";
}

/* A control message to our data port: only a whole BIND for a connection
 * in INIT or RTS of a live domain, from a source that is not an
 * IPv4-mapped IPv6 address, goes on, as a record for its ring. */
static void m_bind(struct model *m, const uint8_t *f, size_t n,
		   const struct m_view *v, struct pred *p)
{
	const uint8_t *x = f + v->l4 + FR_UDP;
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	const struct fz_conn *c;
	uint32_t udp_len, conn_id;
	int d;

	if (n < v->l4 + FR_UDP + 2 || x[1] != XR_CTRL_BIND)
		return m_verdict_drop(p, XR_STAT_DROP_VERSION,
				      "to the data port: control message");
	udp_len = m_udp_len(f, n, v, sizeof(struct xr_ctrl_msg));
	if (udp_len != FR_UDP + sizeof(struct xr_ctrl_msg) ||
	    n < v->l4 + FR_UDP + sizeof(struct xr_ctrl_msg))
		return m_verdict_drop(p, XR_STAT_DROP_BIND, "bind: length");
	conn_id = fr_get32(x + 4);
	c = fz_conn_find(conn_id);
	if (!c)
		return m_verdict_drop(p, XR_STAT_DROP_NO_CONN, "bind: no connection");
	if (c->c.state != XR_CONN_INIT && c->c.state != XR_CONN_RTS)
		return m_verdict_drop(p, XR_STAT_DROP_CONN_STATE, "bind: state");
	m_src16(f, v, p->bev.src_addr);
	if (v->v6 && !memcmp(p->bev.src_addr, mapped, 12))
		return m_verdict_drop(p, XR_STAT_DROP_PEER, "bind: mapped source");
	if (m->verify_csum && !m_csum_ok(f, v, udp_len))
		return m_verdict_drop(p, XR_STAT_DROP_CSUM, "bind: checksum");
	d = fz_dom_idx(c->c.domain);
	if (d >= 0 && fz_doms[d].ctrl == CTRL_LIVE)
		p->alive_dom = d;
	if (!m_dom_alive(d))
		return m_verdict_drop(p, XR_STAT_DROP_DEAD, "bind: dead domain");
	if (d < 0 || !fz_doms[d].has_evq)
		return m_verdict_drop(p, XR_STAT_DROP_NO_MEM, "bind: no ring");
	if (!m_ring_put_n(m, d, (8 + sizeof(struct xr_evt_bind) + 7) & ~7ul))
		return m_verdict_drop(p, XR_STAT_DROP_EVQ_FULL, "bind: ring full");
	p->verdict = XDP_DROP;
	p->nbind = 1;
	p->ev_dom = d;
	p->bev.type = XR_EVT_BIND;
	p->bev.conn = conn_id;
	p->bev.src_port = fr_get16(f + v->l4);
	memcpy(p->bev.msg, x, sizeof(p->bev.msg));
	m_count(p, XR_STAT_RX_BIND);
	p->path = "bind: event";
}

/* The whole program: predict the outcome of frame f and move the model's
 * state to what it must be afterwards. */
static void m_predict(struct model *m, const uint8_t *f, size_t n,
		      struct pred *p)
{
	struct m_view v;
	const uint8_t *u;
	uint8_t vt;

	memset(p, 0, sizeof(*p));
	p->cidx = -1;
	p->msg_slot = -1;
	p->alive_dom = -1;
	p->ev_dom = -1;
	p->pdom = -1;
	p->wdom = -1;
	p->reply_rate_off = -1;
	p->verdict = XDP_PASS;
	p->path = "not xroce: passed";
	if (m_parse(f, n, &v)) {
		m_count(p, XR_STAT_PASS);
		return;
	}
	u = f + v.l4;
	if (fr_get16(u + 2) == FZ_PORT) {
		if (n < v.l4 + FR_UDP + 1)
			return m_verdict_drop(p, XR_STAT_DROP_TRUNC,
					      "to the data port: empty");
		vt = u[FR_UDP];
		if ((vt >> 4) != XR_VERSION)
			return m_verdict_drop(p, XR_STAT_DROP_VERSION,
					      "to the data port: version");
		switch (vt & 0xf) {
		case XR_T_DATA:
			return m_data(m, f, n, &v, p);
		case XR_T_PROBE:
			return m_probe(m, f, n, &v, 0, p);
		case XR_T_CTRL:
			return m_bind(m, f, n, &v, p);
		default:
			return m_verdict_drop(p, XR_STAT_DROP_VERSION,
					      "to the data port: type");
		}
	}
	if (fr_get16(u) == FZ_PORT && n >= v.l4 + FR_UDP + 1 &&
	    (u[FR_UDP] >> 4) == XR_VERSION) {
		switch (u[FR_UDP] & 0xf) {
		case XR_T_ACK:
		case XR_T_NAK:
			return m_ack(m, f, n, &v, p);
		case XR_T_PROBE_REPLY:
			return m_probe(m, f, n, &v, 1, p);
		default:
			break;
		}
	}
	m_count(p, XR_STAT_PASS);
}

#endif /* XR_TEST_FUZZ_MODEL_H */
