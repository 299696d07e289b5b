/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Inputs of tests/bpf/bpf_xdp_fuzz.c, one job: make frames.  A frame starts
 * as a valid one of some kind -- data (WRITE / WRITE_IMM) from a simulated
 * sender that keeps per-path PSNs, CSNs and multi-packet messages, sent in
 * order, reordered, duplicated, with gaps and psn_base moves; ACK, NAK,
 * probe, probe reply, control-looking junk, other UDP, TCP, ARP, IP options,
 * fragments, IPv6 extension headers, VLAN tags, random bytes -- and is then
 * mutated: bit flips, interesting bytes at header offsets, truncation at
 * and around every header boundary, extension, and field-aware changes of
 * lengths, offsets, keys, addresses, ports, PSNs, CSNs, paths, connection
 * ids, tokens, versions and types, aimed at the edges the program checks
 * (region bounds, window edges, 2^64 and 2^32 wrap).  Checksums are then
 * mostly fixed up, so that a mutation reaches the checks behind them.
 * Everything comes from one seeded generator: a seed reproduces a run.
 */
#ifndef XR_TEST_FUZZ_GEN_H
#define XR_TEST_FUZZ_GEN_H

#include <stdint.h>
#include <string.h>
#include "contract/wire.h"
#include "frames.h"
#include "fuzz_world.h"
#include "fuzz_model.h"

/* Largest frame bpf_prog_test_run takes for a non-frags XDP program (4096
 * minus headroom and skb_shared_info), less room for a reply to grow. */
#define G_MAX_FRAME 3500

/* ---- random numbers (splitmix64) ---------------------------------------- */

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t rbelow(struct rng *r, uint32_t n)
{
	return n ? (uint32_t)(rnd(r) % n) : 0;
}

static int chance(struct rng *r, unsigned pct)
{
	return rbelow(r, 100) < pct;
}

static void rfill(struct rng *r, uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)rnd(r);
}

/* ---- inputs -------------------------------------------------------------- */

enum g_kind {
	G_DATA, G_ACK, G_PROBE, G_PROBE_REPLY, G_CTRL, G_OTHER, G_RANDOM,
	G_NKIND
};

static const char *const g_kind_name[G_NKIND] = {
	"data", "ack/nak", "probe", "probe reply", "control junk",
	"not xroce", "random",
};

struct input {
	uint8_t f[FR_MAX];
	size_t n;
	int kind;                /* enum g_kind of the seed */
	int v6;
	size_t l4, x, xlen;      /* UDP header, xroce header (0: none) */
	int ci;                  /* connection (fz_conns index), -1 none */
	int mutations;
};

/* ---- the simulated senders ----------------------------------------------- */

struct g_conn {
	uint32_t psn[XR_MAX_PATHS]; /* next PSN per path */
	uint32_t csn;               /* next new CSN */
	uint32_t next_msg;
	/* the message being sent: opcode, what its rkey field carries
	 * (WRITE: rkey; SEND: MSN; READ_RESP: read id), its address */
	int active;
	uint32_t msg_id, msg_len, sent, key;
	uint16_t stream, ssn;
	const struct fz_mr *mr;
	uint64_t raddr;
	uint8_t opcode;
	/* the connection's posted receives and READ windows */
	const struct fz_rq *rq[FZ_NRQ];
	const struct fz_read *rd[FZ_NREAD];
	int nrq, nrd;
	/* writable regions: usable bytes inside the domain's memory */
	const struct fz_mr *w[FZ_NMR];
	uint64_t wlen[FZ_NMR];
	int nw;
	/* every region of the connection's domain and PD, whatever its
	 * access rights or entry */
	const struct fz_mr *same[FZ_NMR];
	int nsame;
};

#define G_POOL 8
#define G_HIST 64

struct gen {
	struct rng r;
	struct g_conn gc[FZ_NCONN];
	struct input pool[G_POOL]; /* held back: sent later (reordering) */
	int npool;
	struct input hist[G_HIST]; /* recent inputs, replayed */
	unsigned nhist;
};

static void g_init(struct gen *g, uint64_t seed)
{
	size_t i, k;

	memset(g, 0, sizeof(*g));
	g->r.s = seed;
	for (i = 0; i < FZ_NCONN; i++) {
		struct g_conn *gc = &g->gc[i];
		const struct xr_conn *c = &fz_conns[i].c;
		int d = fz_dom_idx(c->domain), p;

		for (p = 0; p < XR_MAX_PATHS; p++)
			gc->psn[p] = fz_init_psn(fz_conns[i].id);
		gc->csn = fz_init_csn(fz_conns[i].id);
		gc->next_msg = (uint32_t)rnd(&g->r);
		for (k = 0; k < FZ_NRQ; k++)
			if (fz_rqs[k].conn == fz_conns[i].id)
				gc->rq[gc->nrq++] = &fz_rqs[k];
		for (k = 0; k < FZ_NREAD; k++)
			if (fz_reads[k].conn == fz_conns[i].id)
				gc->rd[gc->nrd++] = &fz_reads[k];
		for (k = 0; k < FZ_NMR; k++) {
			const struct xr_mr *m = &fz_mrs[k].mr;
			uint64_t mem = d >= 0 ? (uint64_t)fz_doms[d].pages *
						XR_PAGE_SIZE : 0, use;

			if (m->domain == c->domain && m->pd == c->pd)
				gc->same[gc->nsame++] = &fz_mrs[k];
			if (m->domain != c->domain || m->pd != c->pd ||
			    !(m->access & XR_ACCESS_REMOTE_WRITE) ||
			    m->rkey != fz_mrs[k].key)
				continue;
			use = m->mem_off >= mem ? 0 :
			      mem - m->mem_off < m->len ? mem - m->mem_off : m->len;
			gc->w[gc->nw] = &fz_mrs[k];
			gc->wlen[gc->nw++] = use;
		}
	}
}

static int g_is_mapped(const uint8_t a[16])
{
	static const uint8_t pre[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(a, pre, 12);
}

/* Endpoints for a frame from connection ci's peer (plane chosen at random)
 * to us; *v6 says the family. */
static void g_eps(struct gen *g, int ci, struct fr_ep *src, struct fr_ep *dst,
		  int *v6)
{
	const struct xr_conn *c = &fz_conns[ci].c;
	int np = c->npeer > XR_MAX_PLANES ? XR_MAX_PLANES : c->npeer;
	const uint8_t *a = c->peer_addr[np ? rbelow(&g->r, (uint32_t)np) : 0];

	memset(src, 0, sizeof(*src));
	memset(dst, 0, sizeof(*dst));
	rfill(&g->r, src->mac, 6);
	src->mac[0] &= 0xfe;
	memcpy(dst->mac, "\x02\x00\x00\x00\x00\x01", 6);
	*v6 = !g_is_mapped(a);
	if (!*v6 && chance(&g->r, 3))
		*v6 = 1; /* the IPv4-mapped form on the wire: never a peer */
	if (*v6) {
		memcpy(src->ip, a, 16);
		memcpy(dst->ip, fz_local6, 16);
	} else {
		memcpy(src->ip, a + 12, 4);
		memcpy(dst->ip, fz_local4, 4);
	}
	if (chance(&g->r, 3))
		src->ip[*v6 ? 15 : 3] ^= 0x40; /* a stranger */
}

static uint8_t g_tclass(struct gen *g)
{
	static const uint8_t ecn[] = { 0, 0, 0, 0, 0, 0, 0, 1, 2, 2, 3, 3 };

	return (uint8_t)((rbelow(&g->r, 64) << 2) |
			 ecn[rbelow(&g->r, sizeof(ecn))]);
}

static void g_finish(struct input *in, int v6, size_t blen)
{
	in->v6 = v6;
	in->l4 = FR_ETH + (v6 ? FR_IP6 : FR_IP4);
	in->x = in->l4 + FR_UDP;
	in->xlen = blen;
}

/* A region a READ of connection gc may read (mostly one it may). */
static const struct fz_mr *g_read_mr(struct gen *g, const struct g_conn *gc)
{
	const struct fz_mr *r[FZ_NMR];
	int n = 0, i;

	for (i = 0; i < gc->nsame; i++)
		if (gc->same[i]->mr.access & XR_ACCESS_REMOTE_READ)
			r[n++] = gc->same[i];
	if (n && chance(&g->r, 85))
		return r[rbelow(&g->r, (uint32_t)n)];
	if (gc->nsame && chance(&g->r, 80))
		return gc->same[rbelow(&g->r, (uint32_t)gc->nsame)];
	return &fz_mrs[rbelow(&g->r, FZ_NMR)];
}

/* Start the next message of a sender: a WRITE (most), a SEND into one of
 * its posted receives, or a READ_RESP into one of its READ windows. */
static void g_new_msg(struct gen *g, struct g_conn *gc)
{
	uint32_t u, cap;
	uint64_t use;
	int k;

	gc->active = 1;
	gc->sent = 0;
	gc->msg_id = chance(&g->r, 92) ? gc->next_msg++
				       : gc->next_msg - rbelow(&g->r, 600);
	gc->stream = (uint16_t)rbelow(&g->r, 4);
	gc->ssn = (uint16_t)rnd(&g->r);
	u = rbelow(&g->r, 100);
	gc->msg_len = u < 6 ? 0 : u < 45 ? 1 + rbelow(&g->r, 256) :
		      u < 85 ? 257 + rbelow(&g->r, 3000) :
			       3257 + rbelow(&g->r, 20000);
	u = rbelow(&g->r, 100);
	if (gc->nrq && u < 25) {
		const struct fz_rq *r = gc->rq[rbelow(&g->r, (uint32_t)gc->nrq)];

		gc->opcode = chance(&g->r, 50) ? XR_OP_SEND_IMM : XR_OP_SEND;
		gc->key = chance(&g->r, 90) ? r->msn
					    : r->msn + XR_RQ_SLOTS; /* stale */
		gc->stream = r->stream;
		cap = r->len < 0x8000 ? r->len : 0x8000;
		if (gc->msg_len > cap && chance(&g->r, 95))
			gc->msg_len = cap;
		gc->raddr = 0;
		return;
	}
	if (gc->nrd && u < 40) {
		const struct fz_read *r = gc->rd[rbelow(&g->r, (uint32_t)gc->nrd)];

		gc->opcode = XR_OP_READ_RESP;
		gc->key = r->id;
		gc->msg_len = chance(&g->r, 95) ? r->len : gc->msg_len;
		gc->raddr = rnd(&g->r);
		return;
	}
	k = gc->nw ? (int)rbelow(&g->r, (uint32_t)gc->nw) : -1;
	use = k >= 0 ? gc->wlen[k] : 0x1000;
	if (gc->msg_len > use)
		gc->msg_len = (uint32_t)use;
	gc->mr = k >= 0 ? gc->w[k] : &fz_mrs[0];
	if (gc->nsame && chance(&g->r, 3)) /* maybe not writable */
		gc->mr = gc->same[rbelow(&g->r, (uint32_t)gc->nsame)];
	gc->key = gc->mr->key;
	gc->raddr = gc->mr->mr.iova +
		    rbelow(&g->r, (uint32_t)(use - gc->msg_len + 1));
	gc->opcode = chance(&g->r, 35) ? XR_OP_WRITE_IMM : XR_OP_WRITE;
}

/* The next data packet of connection ci's sender. */
static void g_data(struct gen *g, const struct model *m, int ci,
		   struct input *in)
{
	struct g_conn *gc = &g->gc[ci];
	const struct fz_conn *fc = &fz_conns[ci];
	const struct m_rx *rx = fc->id < XR_DEFAULT_MAX_CONNS ? &m->rx[ci] : NULL;
	uint8_t body[FR_MAX], path, opcode, rreq[sizeof(struct xr_read_req)];
	struct fr_ep src, dst;
	uint32_t cack, psn, base, csn, piece, maxp, u, key, msg_id, msg_len;
	uint32_t msg_off;
	uint64_t raddr;
	int v6;
	size_t blen;

	/* the message */
	if (!gc->active || (gc->sent >= gc->msg_len && gc->msg_len) ||
	    (!gc->msg_len && gc->sent))
		g_new_msg(g, gc);
	maxp = chance(&g->r, 85) ? 1400 : 3300;
	piece = gc->msg_len - gc->sent;
	if (piece > maxp)
		piece = 1 + rbelow(&g->r, maxp);
	opcode = gc->opcode;
	key = gc->key;
	msg_id = gc->msg_id;
	msg_len = gc->msg_len;
	msg_off = gc->sent;
	raddr = gc->raddr + gc->sent;
	if (chance(&g->r, 7)) {
		/* a READ request, one packet, between the message's packets */
		const struct fz_mr *mr = g_read_mr(g, gc);
		uint32_t rl = 1 + rbelow(&g->r, (uint32_t)mr->mr.len);

		opcode = XR_OP_READ_REQ;
		key = mr->key;
		msg_id = gc->next_msg++;
		msg_len = sizeof(struct xr_read_req);
		msg_off = 0;
		piece = sizeof(struct xr_read_req);
		raddr = mr->mr.iova + rbelow(&g->r, (uint32_t)(mr->mr.len - rl + 1));
		fr_put64(rreq, rnd(&g->r));
		fr_put32(rreq + 8, chance(&g->r, 90) ? rl : (uint32_t)rnd(&g->r));
		fr_put32(rreq + 12, (uint32_t)rnd(&g->r));
	} else {
		gc->sent += piece;
		if (!gc->msg_len)
			gc->sent = 1; /* a zero-length message is one packet */
	}

	/* path, PSN, psn_base */
	u = rbelow(&g->r, 100);
	path = (uint8_t)(u < 70 ? rbelow(&g->r, 4) : u < 97 ? rbelow(&g->r, 16)
							    : rnd(&g->r));
	cack = rx ? rx->path[path & 15].cack : gc->psn[path & 15];
	if (m_diff(gc->psn[path & 15], cack) < 0)
		gc->psn[path & 15] = cack; /* the sender learnt from ACKs */
	u = rbelow(&g->r, 100);
	if (u < 80) {
		psn = gc->psn[path & 15]++;
	} else if (u < 88) {
		psn = cack + rbelow(&g->r, gc->psn[path & 15] - cack + 1);
	} else if (u < 95) {
		psn = gc->psn[path & 15] + 1 + rbelow(&g->r, 3); /* loss */
		gc->psn[path & 15] = psn + 1;
	} else {
		psn = cack - 1 - rbelow(&g->r, 20);
	}
	u = rbelow(&g->r, 100);
	base = u < 70 ? cack - rbelow(&g->r, 3) : u < 88 ? psn :
	       cack + rbelow(&g->r, 300) - 20;
	if (m_diff(gc->psn[path & 15], cack) > 240)
		base = gc->psn[path & 15] - rbelow(&g->r, 16); /* abandon */

	/* CSN */
	u = rbelow(&g->r, 100);
	if (rx && m_diff(gc->csn, rx->csn_next) > 3000)
		u = 80;
	if (u < 75)
		csn = gc->csn++;
	else if (u < 88)
		csn = rx ? rx->csn_next : gc->csn; /* fill the hole */
	else if (u < 95)
		csn = gc->csn - 1 - rbelow(&g->r, 40);
	else
		csn = (rx ? rx->csn_next : gc->csn) + rbelow(&g->r, 9000) - 500;

	memset(body, 0, sizeof(struct xr_data_hdr));
	body[0] = XR_VER_TYPE(XR_T_DATA);
	body[1] = (uint8_t)((chance(&g->r, 25) ? XR_DF_AR : 0) |
			    (chance(&g->r, 5) ? XR_DF_RETX : 0) |
			    (msg_off + piece >= msg_len ? XR_DF_LAST : 0));
	body[2] = opcode;
	body[3] = path;
	fr_put32(body + 4, fc->id);
	fr_put64(body + 8, fc->c.rx_token);
	fr_put32(body + 16, psn);
	fr_put32(body + 20, base);
	fr_put32(body + 24, csn);
	fr_put32(body + 28, (uint32_t)rnd(&g->r));
	fr_put64(body + 32, raddr);
	fr_put32(body + 40, key);
	fr_put32(body + 44, msg_id);
	fr_put32(body + 48, msg_len);
	fr_put32(body + 52, msg_off);
	fr_put32(body + 56, (uint32_t)rnd(&g->r));
	fr_put16(body + 60, gc->stream);
	fr_put16(body + 62, gc->ssn);
	blen = sizeof(struct xr_data_hdr);
	if (opcode == XR_OP_READ_REQ)
		memcpy(body + blen, rreq, sizeof(rreq));
	else
		rfill(&g->r, body + blen, piece);

	g_eps(g, ci, &src, &dst, &v6);
	src.port = (uint16_t)(fc->c.peer_sport_lo +
			      rbelow(&g->r, fc->c.peer_sport_n));
	if (chance(&g->r, 2))
		src.port = (uint16_t)rnd(&g->r);
	dst.port = FZ_PORT;
	in->n = fr_udp(in->f, v6, &src, &dst, g_tclass(g), body, blen + piece);
	in->kind = G_DATA;
	in->ci = ci;
	g_finish(in, v6, blen);
}

/* An ACK / NAK (or, with probe set, a probe or probe reply) for connection
 * ci, or for an id no connection has. */
static void g_small(struct gen *g, int ci, int kind, struct input *in)
{
	const struct fz_conn *fc = &fz_conns[ci];
	uint8_t body[256];
	struct fr_ep src, dst;
	size_t blen, i;
	uint32_t id = chance(&g->r, 5) ? (uint32_t)rnd(&g->r) : fc->id;
	int v6;

	g_eps(g, ci, &src, &dst, &v6);
	memset(body, 0, sizeof(body));
	if (kind == G_ACK) {
		blen = sizeof(struct xr_ack_hdr);
		body[0] = XR_VER_TYPE(chance(&g->r, 70) ? XR_T_ACK : XR_T_NAK);
		body[1] = (uint8_t)rbelow(&g->r, 8);
		body[2] = (uint8_t)rbelow(&g->r, 8);
		body[3] = (uint8_t)rbelow(&g->r, 20);
		for (i = 16; i < blen; i++)
			body[i] = (uint8_t)rnd(&g->r);
	} else {
		blen = sizeof(struct xr_probe_hdr);
		body[0] = XR_VER_TYPE(kind == G_PROBE ? XR_T_PROBE
						      : XR_T_PROBE_REPLY);
		body[3] = (uint8_t)rbelow(&g->r, 20);
		for (i = 16; i < 28; i++)
			body[i] = (uint8_t)rnd(&g->r);
	}
	fr_put32(body + 4, id);
	fr_put64(body + 8, fc->c.rx_token);
	if (kind == G_PROBE) {
		src.port = (uint16_t)(fc->c.peer_sport_lo +
				      rbelow(&g->r, fc->c.peer_sport_n));
		dst.port = FZ_PORT;
	} else {
		/* replies: from the peer's data port to an entropy port */
		src.port = FZ_PORT;
		dst.port = (uint16_t)(50000 + rbelow(&g->r, 64));
	}
	in->n = fr_udp(in->f, v6, &src, &dst, g_tclass(g), body, blen);
	in->kind = kind;
	in->ci = ci;
	g_finish(in, v6, blen);
}

/* A control message on the data port's path (XDP takes only BIND). */
static void g_ctrl(struct gen *g, struct input *in)
{
	int ci = (int)rbelow(&g->r, FZ_NCONN), v6;
	uint8_t body[sizeof(struct xr_ctrl_msg)];
	struct fr_ep src, dst;
	uint32_t u = rbelow(&g->r, 3);

	g_eps(g, ci, &src, &dst, &v6);
	rfill(&g->r, body, sizeof(body));
	body[0] = XR_VER_TYPE(XR_T_CTRL);
	body[1] = (uint8_t)(1 + rbelow(&g->r, XR_CTRL_BIND)); /* every op, BIND last */
	fr_put32(body + 4, fz_conns[ci].id);
	fr_put64(body + 8, fz_conns[ci].c.rx_token);
	src.port = u == 1 ? FZ_PORT : XR_DEFAULT_CTRL_PORT;
	dst.port = u == 0 ? FZ_PORT : XR_DEFAULT_CTRL_PORT;
	in->n = fr_udp(in->f, v6, &src, &dst, 0, body, sizeof(body));
	in->kind = G_CTRL;
	in->ci = ci;
	g_finish(in, v6, sizeof(body));
}

/* Traffic that is not xroce's (or not parseable as such). */
static void g_other(struct gen *g, const struct model *m, struct input *in)
{
	int ci = (int)rbelow(&g->r, FZ_NCONN), v6;
	struct fr_ep src, dst;
	uint8_t tmp[FR_MAX];

	g_eps(g, ci, &src, &dst, &v6);
	src.port = (uint16_t)rnd(&g->r);
	dst.port = (uint16_t)rnd(&g->r);
	if (dst.port == FZ_PORT || src.port == FZ_PORT) {
		dst.port ^= 1;
		src.port ^= 1;
	}
	in->kind = G_OTHER;
	in->ci = -1;
	switch (rbelow(&g->r, 8)) {
	case 0: { /* UDP between other ports */
		size_t blen = rbelow(&g->r, 600);

		rfill(&g->r, tmp, blen);
		in->n = fr_udp(in->f, v6, &src, &dst, g_tclass(g), tmp, blen);
		g_finish(in, v6, 0);
		in->x = 0;
		return;
	}
	case 1:
		dst.port = FZ_PORT;
		in->n = fr_tcp_syn(in->f, v6, &src, &dst);
		g_finish(in, v6, 0);
		in->x = 0;
		return;
	case 2:
		in->n = fr_arp(in->f, &src, &dst);
		in->l4 = in->x = 0;
		return;
	default:
		break;
	}
	/* a data frame made unparseable */
	g_data(g, m, ci, in);
	in->kind = G_OTHER;
	switch (rbelow(&g->r, 5)) {
	case 0: /* IPv4 options / IPv6 hop-by-hop header */
		if (!in->v6)
			in->f[FR_ETH] = (uint8_t)(0x46 + rbelow(&g->r, 10));
		else
			in->f[FR_ETH + 6] = 0;
		break;
	case 1: /* a fragment */
		if (!in->v6)
			fr_put16(in->f + FR_ETH + 6,
				 (uint16_t)(0x2000 | rbelow(&g->r, 0x2000)));
		else
			in->f[FR_ETH + 6] = 44;
		break;
	case 2: /* a VLAN tag in front */
		memcpy(tmp, in->f, in->n);
		fr_put16(in->f + 12, 0x8100);
		fr_put16(in->f + 14, (uint16_t)rbelow(&g->r, 4096));
		memcpy(in->f + 16, tmp + 12, in->n - 12);
		in->n += 4;
		break;
	case 3: /* ICMP / another protocol */
		in->f[FR_ETH + (in->v6 ? 6 : 9)] = (uint8_t)(1 + rbelow(&g->r, 16));
		break;
	default: /* IP version nibble wrong */
		in->f[FR_ETH] = (uint8_t)((in->f[FR_ETH] & 0x0f) |
					  (rbelow(&g->r, 16) << 4));
		break;
	}
}

static void g_random(struct gen *g, struct input *in)
{
	in->kind = G_RANDOM;
	in->ci = -1;
	in->n = FR_ETH + rbelow(&g->r, G_MAX_FRAME - FR_ETH);
	rfill(&g->r, in->f, in->n);
	in->l4 = in->x = 0;
	if (chance(&g->r, 50)) {
		/* a valid Ethernet / IP / UDP start towards the data port */
		int v6 = chance(&g->r, 50);
		size_t l4 = FR_ETH + (v6 ? FR_IP6 : FR_IP4);

		if (in->n < l4 + FR_UDP + 1)
			in->n = l4 + FR_UDP + 1 + rbelow(&g->r, 200);
		fr_put16(in->f + 12, v6 ? FR_ETH_IP6 : FR_ETH_IP4);
		if (v6) {
			in->f[FR_ETH] = 0x60;
			in->f[FR_ETH + 6] = 17;
		} else {
			in->f[FR_ETH] = 0x45;
			fr_put16(in->f + FR_ETH + 6, 0x4000);
			in->f[FR_ETH + 9] = 17;
		}
		fr_put16(in->f + l4 + 2, FZ_PORT);
		fr_put16(in->f + l4 + 4, (uint16_t)(in->n - l4));
		if (chance(&g->r, 50))
			in->f[l4 + FR_UDP] = (uint8_t)(0x10 | rbelow(&g->r, 16));
		fr_udp_fix(in->f, v6, l4);
		in->v6 = v6;
		in->l4 = l4;
		in->x = l4 + FR_UDP;
		in->xlen = 64;
	}
}

/* ---- mutations ----------------------------------------------------------- */

static const struct fz_mr *g_any_mr(struct gen *g)
{
	return &fz_mrs[rbelow(&g->r, FZ_NMR)];
}

static uint32_t g_pick32(struct gen *g, const uint32_t *v, size_t n)
{
	return v[rbelow(&g->r, (uint32_t)n)];
}

#define PICK(g, ...) \
	g_pick32(g, (const uint32_t[]){ __VA_ARGS__ }, \
		 sizeof((const uint32_t[]){ __VA_ARGS__ }) / sizeof(uint32_t))

/* A field of a data header set to a value at an edge the program checks. */
static void g_mut_data_field(struct gen *g, const struct model *m,
			     struct input *in)
{
	uint8_t *x = in->f + in->x;
	uint32_t id = fr_get32(x + 4), plen, ml, mo, cack, cn;
	int ci = m_conn_idx(id);
	const struct m_rx *rx = ci >= 0 && id < XR_DEFAULT_MAX_CONNS ?
					&m->rx[ci] : NULL;
	const struct fz_mr *mr = fz_mr_find(fr_get32(x + 40));
	const struct fz_conn *oc;
	uint64_t iova, len, mem;

	if (in->x + sizeof(struct xr_data_hdr) > in->n)
		return;
	plen = (uint32_t)(in->n - in->x - sizeof(struct xr_data_hdr));
	ml = fr_get32(x + 48);
	mo = fr_get32(x + 52);
	cack = rx ? rx->path[x[3] & 15].cack : fr_get32(x + 16);
	cn = rx ? rx->csn_next : fr_get32(x + 24);
	switch (rbelow(&g->r, 15)) {
	case 0:
		fr_put32(x + 16, cack + PICK(g, 0, 1, -1u, 255, 256, 257, -256u,
					     0x80000000u, (uint32_t)rnd(&g->r)));
		break;
	case 1:
		fr_put32(x + 20, cack + PICK(g, 0, 1, 2, 255, 256, 257, 300, -1u,
					     0x80000000u, 0x7fffffffu));
		break;
	case 2:
		fr_put32(x + 24, cn + PICK(g, 0, 1, -1u, 4095, 4096, 8191, 8192,
					   -8192u, 0x80000000u,
					   (uint32_t)rnd(&g->r)));
		break;
	case 3:
	case 4: /* raddr at the edges of a region or of its domain's memory */
		if (!mr || chance(&g->r, 30))
			mr = g_any_mr(g);
		iova = mr->mr.iova;
		len = mr->mr.len;
		mem = fz_dom_idx(mr->mr.domain) >= 0 ?
		      (uint64_t)fz_doms[fz_dom_idx(mr->mr.domain)].pages *
		      XR_PAGE_SIZE - mr->mr.mem_off : 0;
		switch (rbelow(&g->r, 11)) {
		case 0: iova -= 1; break;
		case 1: break;
		case 2: iova += len - plen; break;
		case 3: iova += len - plen + 1; break;
		case 4: iova += len; break;
		case 5: iova += mem - plen; break;
		case 6: iova += mem - plen + 1; break;
		case 7: iova = 0 - (uint64_t)plen; break;
		case 8: iova = ~0ull - rbelow(&g->r, 4); break;
		case 9: iova = rnd(&g->r); break;
		default: iova += rbelow(&g->r, (uint32_t)len + 1); break;
		}
		fr_put64(x + 32, iova);
		if (chance(&g->r, 60))
			fr_put32(x + 40, mr->key);
		break;
	case 5:
		if (ci >= 0 && g->gc[ci].nsame && chance(&g->r, 50)) {
			fr_put32(x + 40, g->gc[ci].same[rbelow(
					     &g->r, (uint32_t)g->gc[ci].nsame)]->key);
			break;
		}
		if (chance(&g->r, 30)) { /* an MSN or a read id */
			fr_put32(x + 40, chance(&g->r, 50) ?
					 fz_rqs[rbelow(&g->r, FZ_NRQ)].msn :
					 fz_reads[rbelow(&g->r, FZ_NREAD)].id);
			break;
		}
		fr_put32(x + 40, chance(&g->r, 60) ? g_any_mr(g)->key :
				 PICK(g, FZ_RKEY_NONE, FZ_RKEY_STALE_INNER, 0,
				      0xffffffffu, (uint32_t)rnd(&g->r)));
		break;
	case 6:
		fr_put32(x + 48, PICK(g, 0, plen, plen - 1, plen + 1, mo + plen,
				      mo + plen - 1, 0xffffffffu,
				      (uint32_t)rnd(&g->r)));
		break;
	case 7:
		fr_put32(x + 52, PICK(g, 0, ml, ml - plen, ml - plen + 1, ml + 1,
				      0xffffffffu, (uint32_t)rnd(&g->r)));
		break;
	case 8:
		fr_put32(x + 44, fr_get32(x + 44) +
				 PICK(g, 256, 1, -256u, (uint32_t)rnd(&g->r)));
		break;
	case 9:
		x[2] = (uint8_t)PICK(g, 0, 1, 2, 3, 4, 5, 6, 7, 0xff);
		break;
	case 10:
		x[3] = (uint8_t)PICK(g, 0, 1, 15, 16, 17, 255,
				     (uint32_t)rnd(&g->r));
		break;
	case 11:
		x[1] = (uint8_t)rnd(&g->r);
		break;
	case 12: /* another connection's id, often with its token */
		oc = &fz_conns[rbelow(&g->r, FZ_NCONN)];
		fr_put32(x + 4, chance(&g->r, 85) ? oc->id :
				PICK(g, 8191, 8192, 9000, (uint32_t)rnd(&g->r)));
		if (chance(&g->r, 60))
			fr_put64(x + 8, oc->c.rx_token);
		break;
	case 13:
		fr_put64(x + 8, fr_get64(x + 8) ^ (1ull << rbelow(&g->r, 64)));
		break;
	default: /* stream, ssn; or a READ_REQ's length field */
		if (x[2] == XR_OP_READ_REQ && in->x + 80 <= in->n &&
		    chance(&g->r, 60)) {
			fr_put32(x + 64 + 8, PICK(g, 0, 1, 0x1000, 0x2000, 0x2001,
						  0xffffffffu,
						  (uint32_t)rnd(&g->r)));
			break;
		}
		fr_put16(x + 62, (uint16_t)rnd(&g->r));
		fr_put16(x + 60, (uint16_t)PICK(g, 0, 1, 2, 0xffff,
						(uint32_t)rnd(&g->r)));
		break;
	}
}

/* Addresses and ports. */
static void g_mut_l3l4(struct gen *g, struct input *in)
{
	uint8_t *sa = in->f + FR_ETH + (in->v6 ? 8 : 12);
	const struct fz_conn *oc = &fz_conns[rbelow(&g->r, FZ_NCONN)];
	const uint8_t *pa = oc->c.peer_addr[rbelow(&g->r, XR_MAX_PLANES)];
	uint8_t *u = in->f + in->l4;

	if (!in->l4 || in->l4 + FR_UDP > in->n)
		return;
	switch (rbelow(&g->r, 8)) {
	case 0: /* another connection's peer */
		if (in->v6)
			memcpy(sa, pa, 16);
		else
			memcpy(sa, pa + 12, 4);
		break;
	case 1: /* IPv4-mapped form of an IPv4 peer in an IPv6 frame */
		if (in->v6) {
			memcpy(sa, fz_conns[0].c.peer_addr[0], 16);
			break;
		}
		/* fall through */
	case 2:
		sa[rbelow(&g->r, in->v6 ? 16 : 4)] ^=
			(uint8_t)(1u << rbelow(&g->r, 8));
		break;
	case 3: /* the source port at the edges of the entropy range */
		fr_put16(u, (uint16_t)(oc->c.peer_sport_lo +
				       PICK(g, -1u, 0, oc->c.peer_sport_n - 1,
					    oc->c.peer_sport_n)));
		break;
	case 4:
		fr_put16(u, (uint16_t)PICK(g, FZ_PORT, (uint32_t)rnd(&g->r)));
		break;
	case 5:
		fr_put16(u + 2, (uint16_t)PICK(g, FZ_PORT, FZ_PORT + 1,
					       XR_DEFAULT_CTRL_PORT,
					       (uint32_t)rnd(&g->r)));
		break;
	case 6: /* ECN */
		if (in->v6)
			in->f[FR_ETH + 1] ^= (uint8_t)(rbelow(&g->r, 4) << 4);
		else
			in->f[FR_ETH + 1] ^= (uint8_t)rbelow(&g->r, 4);
		break;
	default: /* the UDP length */
		fr_put16(u + 4, (uint16_t)PICK(g, 0, 7, 8, 9,
					       (uint32_t)(FR_UDP + in->xlen - 1),
					       (uint32_t)(FR_UDP + in->xlen),
					       (uint32_t)(in->n - in->l4 - 1),
					       (uint32_t)(in->n - in->l4 + 1),
					       0xffff, (uint32_t)rnd(&g->r)));
		break;
	}
}

/* Cut the frame at or next to a header boundary, or anywhere. */
static void g_truncate(struct gen *g, struct input *in)
{
	size_t b[8], nb = 0, cut;

	b[nb++] = FR_ETH;
	if (in->l4) {
		b[nb++] = in->l4;
		b[nb++] = in->l4 + FR_UDP;
	}
	if (in->x) {
		b[nb++] = in->x + 1;
		b[nb++] = in->x + in->xlen;
		b[nb++] = in->x + in->xlen + (in->n - in->x - in->xlen) / 2;
	}
	if (chance(&g->r, 70))
		cut = b[rbelow(&g->r, (uint32_t)nb)] + rbelow(&g->r, 3) - 1;
	else
		cut = FR_ETH + rbelow(&g->r, (uint32_t)in->n);
	if (cut < FR_ETH)
		cut = FR_ETH;
	if (cut < in->n)
		in->n = cut;
}

/* Append bytes, and maybe claim them in the UDP / IP lengths. */
static void g_extend(struct gen *g, struct input *in)
{
	size_t k = 1 + rbelow(&g->r, chance(&g->r, 80) ? 64 : 1500);

	if (in->n + k > G_MAX_FRAME)
		k = G_MAX_FRAME - in->n;
	if (chance(&g->r, 50))
		rfill(&g->r, in->f + in->n, k);
	else
		memset(in->f + in->n, (int)rbelow(&g->r, 2) * 0xff, k);
	in->n += k;
	if (in->l4 && in->l4 + FR_UDP <= in->n && chance(&g->r, 50)) {
		uint8_t *u = in->f + in->l4;

		fr_put16(u + 4, (uint16_t)(fr_get16(u + 4) + k));
	}
}

/* Make IP / UDP lengths and checksums right again (mostly), so that a
 * mutation behind them is what the program judges. */
static void g_fixup(struct gen *g, struct input *in)
{
	uint8_t *u = in->f + in->l4;
	uint32_t ulen;

	if (!in->l4 || in->l4 + FR_UDP > in->n)
		return;
	if (chance(&g->r, 20))
		fr_put16(u + 4, (uint16_t)(in->n - in->l4));
	ulen = fr_get16(u + 4);
	if (!in->v6 && in->n >= FR_ETH + FR_IP4) {
		uint8_t *ip = in->f + FR_ETH;

		fr_put16(ip + 2, (uint16_t)(FR_IP4 + ulen));
		fr_put16(ip + 10, 0);
		fr_put16(ip + 10, (uint16_t)~fr_sum(ip, FR_IP4, 0));
	} else if (in->v6 && in->n >= FR_ETH + FR_IP6) {
		fr_put16(in->f + FR_ETH + 4, (uint16_t)ulen);
	}
	if (ulen >= FR_UDP && in->l4 + ulen <= in->n && chance(&g->r, 90))
		fr_udp_fix(in->f, in->v6, in->l4);
	if (chance(&g->r, 2))
		fr_put16(u + 6, 0);
}

static void g_mutate(struct gen *g, const struct model *m, struct input *in)
{
	int k = 1 + (int)rbelow(&g->r, 4), i;
	static const uint8_t hot[] = { 0, 1, 0x7f, 0x80, 0xfe, 0xff, 0x10, 0x11,
				       0x12, 0x13, 0x14, 0x15, 0x16 };

	in->mutations = k;
	for (i = 0; i < k; i++) {
		size_t hdr_end = in->x ? in->x + in->xlen : in->n;
		uint32_t u = rbelow(&g->r, 100);

		if (hdr_end > in->n)
			hdr_end = in->n;
		if (u < 12) {           /* a bit anywhere, mostly in headers */
			size_t o = chance(&g->r, 75) ? rbelow(&g->r, (uint32_t)hdr_end)
						     : rbelow(&g->r, (uint32_t)in->n);
			in->f[o] ^= (uint8_t)(1u << rbelow(&g->r, 8));
		} else if (u < 22) {    /* an interesting byte in a header */
			size_t o = rbelow(&g->r, (uint32_t)hdr_end);

			in->f[o] = chance(&g->r, 70) ? hot[rbelow(&g->r, sizeof(hot))]
						     : (uint8_t)rnd(&g->r);
		} else if (u < 62) {    /* a field of the xroce header */
			if (in->kind == G_DATA && in->x)
				g_mut_data_field(g, m, in);
			else if (in->x && in->x + 16 <= in->n)
				rfill(&g->r, in->f + in->x + 16,
				      rbelow(&g->r, (uint32_t)(in->n - in->x - 16) + 1));
		} else if (u < 78) {
			g_mut_l3l4(g, in);
		} else if (u < 86) {
			g_truncate(g, in);
		} else if (u < 92) {
			g_extend(g, in);
		} else if (u < 96) {    /* the version / type byte */
			if (in->x && in->x < in->n)
				in->f[in->x] = hot[rbelow(&g->r, sizeof(hot))] |
					       (chance(&g->r, 20) ? 0x20 : 0);
		} else {                /* the payload */
			if (in->x && in->x + in->xlen < in->n)
				rfill(&g->r, in->f + in->x + in->xlen,
				      in->n - in->x - in->xlen);
		}
	}
	if (chance(&g->r, 88))
		g_fixup(g, in);
}

/* ---- the next input ------------------------------------------------------ */

/* Connections the data senders use: mostly live, writable ones. */
static int g_pick_conn(struct gen *g)
{
	static const uint32_t live[] = { 1, 2, 3, 4, 9, 12, 0, 8191 };
	const uint32_t id = chance(&g->r, 85) ?
				    live[rbelow(&g->r, sizeof(live) / 4)] :
				    fz_conns[rbelow(&g->r, FZ_NCONN)].id;

	return m_conn_idx(id);
}

static void g_next(struct gen *g, const struct model *m, struct input *in)
{
	uint32_t u = rbelow(&g->r, 100);

	in->mutations = 0;
	if (u < 4 && g->nhist) {
		*in = g->hist[rbelow(&g->r, g->nhist < G_HIST ? g->nhist : G_HIST)];
		in->mutations = 0;
		if (chance(&g->r, 50))
			g_mutate(g, m, in);
		goto out;
	}
	if (u < 56) {
		int ci = g_pick_conn(g);

		g_data(g, m, ci, in);
		/* reordering: hold this one back and send an older one */
		if (chance(&g->r, 25)) {
			if (g->npool < G_POOL) {
				g->pool[g->npool++] = *in;
				g_data(g, m, ci, in);
			} else {
				int k = (int)rbelow(&g->r, G_POOL);
				struct input t = g->pool[k];

				g->pool[k] = *in;
				*in = t;
			}
		}
	} else if (u < 70) {
		g_small(g, (int)rbelow(&g->r, FZ_NCONN), G_ACK, in);
	} else if (u < 78) {
		g_small(g, (int)rbelow(&g->r, FZ_NCONN), G_PROBE, in);
	} else if (u < 83) {
		g_small(g, (int)rbelow(&g->r, FZ_NCONN), G_PROBE_REPLY, in);
	} else if (u < 86) {
		g_ctrl(g, in);
	} else if (u < 94) {
		g_other(g, m, in);
	} else {
		g_random(g, in);
		goto out;
	}
	if (!chance(&g->r, 40))
		g_mutate(g, m, in);
out:
	if (in->n > G_MAX_FRAME)
		in->n = G_MAX_FRAME;
	if (in->n < FR_ETH)
		in->n = FR_ETH;
	g->hist[g->nhist++ % G_HIST] = *in;
}

#endif /* XR_TEST_FUZZ_GEN_H */
