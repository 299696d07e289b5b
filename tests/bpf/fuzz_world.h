/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The world tests/bpf/bpf_xdp_fuzz.c fuzzes, one job: the domains, memory
 * regions and connections it installs in the XDP program's maps, as plain
 * tables (the reference model in fuzz_model.h reads the same tables), and
 * the code that installs them (with tests/bpf/world.h, which the other
 * runners share).  Included once, by bpf_xdp_fuzz.c.
 *
 * The tables are built to reach every branch of the data path:
 *   domains  A (alive, no liveness check), B (alive: a socket is bound to
 *            its control port at its ctrl_addr), C (dead: control port with
 *            no socket), D (registered, event ring but no memory map) and X
 *            (referenced by a connection and a region, never registered);
 *   regions  writable ones of several PDs and both live domains, one
 *            without remote write, one also remotely readable, one at the top of the address space, one
 *            reaching past its domain's memory, one wholly outside it, one
 *            with a mem_off near 2^64, a stale entry, an empty one, rkeys 0
 *            and 0xffffffff, regions of dead / memoryless / unknown domains;
 *   conns    RTS ones over IPv4 and IPv6 with several peers and entropy
 *            port ranges (one wrapping past 65535), two connections between
 *            the same hosts with different tokens, INIT and ERROR ones, ids
 *            0, 8191 (the last xr_rx slot) and 9000 (none), one with more
 *            peers claimed than XR_MAX_PLANES, one with an IPv4-mapped peer;
 *   receives posted receives (SEND) and open READ windows (READ_RESP),
 *            with their own edges.
 */
#ifndef XR_TEST_FUZZ_WORLD_H
#define XR_TEST_FUZZ_WORLD_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "contract/abi.h"
#include "world.h"

#define FZ_PORT XR_DEFAULT_UDP_PORT

/* ---- domains ----------------------------------------------------------- */

enum fz_ctrl { CTRL_NONE = 0, CTRL_LIVE, CTRL_DEAD };

struct fz_dom {
	uint32_t id;
	uint32_t pages;          /* mem_bytes = pages * 4 KiB */
	int has_mem, has_evq;    /* xr_mem / xr_evq entries */
	int registered;          /* xr_domains entry */
	int ctrl;                /* enum fz_ctrl */
};

enum { D_A, D_B, D_C, D_D, D_X, D_N };
static const struct fz_dom fz_doms[D_N] = {
	[D_A] = { 21, 32, 1, 1, 1, CTRL_NONE },
	[D_B] = { 22, 16, 1, 1, 1, CTRL_LIVE },
	[D_C] = { 23, 4, 1, 1, 1, CTRL_DEAD },
	[D_D] = { 24, 8, 0, 1, 1, CTRL_NONE },
	[D_X] = { 25, 4, 0, 0, 0, CTRL_NONE },
};

static int fz_dom_idx(uint32_t id)
{
	int i;

	for (i = 0; i < D_N; i++)
		if (fz_doms[i].id == id)
			return i;
	return -1;
}

/* ---- memory regions ---------------------------------------------------- */

#define RW (XR_ACCESS_LOCAL_WRITE | XR_ACCESS_REMOTE_WRITE)
#define RO (XR_ACCESS_LOCAL_WRITE | XR_ACCESS_REMOTE_READ)

struct fz_mr {
	uint32_t key;
	struct xr_mr mr;         /* domain, pd, access, rkey, iova, len, mem_off */
};

static const struct fz_mr fz_mrs[] = {
	{ 0x1001, { 21, 1, RW, 0x1001, 0x7f0000001000ull, 0x6000, 0x1000 } },
	{ 0x1002, { 21, 1, RO, 0x1002, 0x7f0000010000ull, 0x2000, 0x8000 } },
	{ 0x1003, { 21, 2, RW, 0x1003, 0x7f0000020000ull, 0x3000, 0xa000 } },
	/* the top 16 KiB of the address space */
	{ 0x1004, { 21, 1, RW, 0x1004, 0xffffffffffffc000ull, 0x4000, 0x10000 } },
	/* half of it past the end of A's memory (0x20000) */
	{ 0x1005, { 21, 1, RW, 0x1005, 0x7f0000030000ull, 0x8000, 0x1c000 } },
	/* an odd iova, aliasing the memory of 0x1001 */
	{ 0x1006, { 21, 1, RW, 0x1006, 0x13ull, 0x1000, 0x3800 } },
	/* stale: its own rkey field names another key */
	{ 0x1007, { 21, 1, RW, 0x1077, 0x7f0000050000ull, 0x1000, 0x12000 } },
	/* empty */
	{ 0x1008, { 21, 1, RW, 0x1008, 0x5000ull, 0, 0x14000 } },
	/* remote write without local write */
	{ 0x1009, { 21, 1, XR_ACCESS_REMOTE_WRITE, 0x1009, 0x7f0000040000ull,
		    0x1000, 0x15000 } },
	/* wholly outside A's memory */
	{ 0x100a, { 21, 1, RW, 0x100a, 0x7f0000060000ull, 0x1000, 0x21000 } },
	/* mem_off near 2^64 */
	{ 0x100b, { 21, 1, RW, 0x100b, 0x7f0000070000ull, 0x20000,
		    0xffffffffffff0000ull } },
	/* rkey 0 at iova 0 */
	{ 0x0000, { 21, 1, RW, 0x0000, 0x0ull, 0x1000, 0x16000 } },
	/* readable and writable by the peer */
	{ 0x100c, { 21, 1, RW | XR_ACCESS_REMOTE_READ, 0x100c,
		    0x7f0000080000ull, 0x2000, 0x17000 } },
	{ 0x2001, { 22, 1, RW, 0x2001, 0x5500000000ull, 0x8000, 0x0 } },
	{ 0x2002, { 22, 3, RW, 0x2002, 0x5600000000ull, 0x4000, 0x8000 } },
	{ 0x2003, { 22, 1, RO, 0x2003, 0x5700000000ull, 0x2000, 0xc000 } },
	/* rkey 0xffffffff at the very top */
	{ 0xffffffff, { 22, 1, RW, 0xffffffff, 0xfffffffffffff000ull, 0x1000,
			0xf000 } },
	{ 0x3001, { 23, 1, RW, 0x3001, 0x100000ull, 0x4000, 0x0 } },
	{ 0x4001, { 24, 1, RW, 0x4001, 0x200000ull, 0x1000, 0x0 } },
	{ 0x5001, { 25, 1, RW, 0x5001, 0x300000ull, 0x1000, 0x0 } },
};
#define FZ_NMR (sizeof(fz_mrs) / sizeof(fz_mrs[0]))

/* An rkey that names no region (and the stale entry's inner rkey). */
#define FZ_RKEY_NONE 0x0bad0001u
#define FZ_RKEY_STALE_INNER 0x1077u

static const struct fz_mr *fz_mr_find(uint32_t key)
{
	size_t i;

	for (i = 0; i < FZ_NMR; i++)
		if (fz_mrs[i].key == key)
			return &fz_mrs[i];
	return NULL;
}

/* ---- posted receives (xr_rq) and open READ windows (xr_reads) --------- */

/* Receives the library posted: a SEND with MSN msn on (conn, stream) lands
 * at mem_off of its connection's domain.  Edges: a buffer reaching past
 * the memory, one "as long as it likes", a slot holding another MSN (a
 * stale entry), a mem_off above 2^48, MSN 2^32-1, stream 0xffff, a dead
 * domain's, one the library took back (RECALLED) and one a SEND claimed
 * (TAKEN) before the run.  Every other one starts OPEN and is claimed by
 * the first packet (not a duplicate) that finds it in its slot, whatever
 * MSN it carries. */
struct fz_rq {
	uint32_t conn;
	uint16_t stream;
	uint32_t msn;            /* slot = msn % XR_RQ_SLOTS */
	uint32_t len;
	uint64_t mem_off;
	uint32_t state;          /* XR_RQ_*, as posted */
};

static const struct fz_rq fz_rqs[] = {
	{ 1, 0, 100, 0x400, 0x18000, XR_RQ_OPEN },
	{ 1, 0, 101, 0x400, 0x18400, XR_RQ_OPEN },
	{ 1, 0, 102, 0x400, 0x18800, XR_RQ_OPEN },
	{ 1, 0, 103, 0x40, 0x18c00, XR_RQ_OPEN },
	{ 1, 1, 300, 0x2000, 0x1f000, XR_RQ_OPEN },         /* half past the memory */
	{ 1, 1, 301, 0xffffffffu, 0x19000, XR_RQ_OPEN },    /* any length */
	{ 1, 2, 263, 0x100, 0x19800, XR_RQ_OPEN },          /* slot 7: MSN 7 is stale */
	{ 1, 2, 8, 0x100, 1ull << 49, XR_RQ_OPEN },         /* beyond 2^48 */
	{ 2, 0, 0, 0x200, 0x1a000, XR_RQ_OPEN },
	{ 2, 0, 1, 0x200, 0x1a200, XR_RQ_OPEN },
	{ 3, 0, 0xffffffffu, 0x1000, 0xd000, XR_RQ_OPEN },  /* slot 255 */
	{ 8191, 0xffff, 5, 0x800, 0xe000, XR_RQ_OPEN },
	{ 7, 0, 1, 0x100, 0x0, XR_RQ_OPEN },                /* dead domain */
	{ 2, 0, 2, 0x200, 0x1a400, XR_RQ_RECALLED }, /* taken back */
	{ 2, 0, 3, 0x200, 0x1a600, XR_RQ_TAKEN },    /* claimed already */
};
#define FZ_NRQ (sizeof(fz_rqs) / sizeof(fz_rqs[0]))

/* READ windows the library opened: a READ_RESP with read id id for conn
 * lands at mem_off, exactly len bytes in all. */
struct fz_read {
	uint32_t conn, id, len;
	uint64_t mem_off;
};

static const struct fz_read fz_reads[] = {
	{ 1, 0x77, 0x1000, 0x1b000 },
	{ 1, 0, 1, 0x1c800 },
	{ 1, 0xffffffffu, 0x20, 0x1fff0 },      /* 16 bytes past the memory */
	{ 3, 5, 0x3000, 0x9000 },
	{ 9, 0x77, 0x100, 0x1d000 },            /* conn 1's id, other conn */
	{ 2, 1, 16, 1ull << 50 },               /* beyond 2^48 */
};
#define FZ_NREAD (sizeof(fz_reads) / sizeof(fz_reads[0]))

static const struct fz_rq *fz_rq_find(uint32_t conn, uint16_t stream,
				      uint32_t msn)
{
	size_t i;

	for (i = 0; i < FZ_NRQ; i++)
		if (fz_rqs[i].conn == conn && fz_rqs[i].stream == stream &&
		    fz_rqs[i].msn % XR_RQ_SLOTS == msn % XR_RQ_SLOTS)
			return &fz_rqs[i];
	return NULL;
}

/* Its entry in xr_rq, in state (XR_RQ_*). */
static void fz_rq_kv(const struct fz_rq *r, uint32_t state,
		     struct xr_rq_key *k, struct xr_rq_ent *v)
{
	memset(k, 0, sizeof(*k));
	memset(v, 0, sizeof(*v));
	k->conn = r->conn;
	k->stream = r->stream;
	k->slot = (uint16_t)(r->msn % XR_RQ_SLOTS);
	v->msn = r->msn;
	v->len = r->len;
	v->mem_off = r->mem_off;
	v->conn = r->conn;
	v->stream = r->stream;
	v->state = state;
}

static void fz_read_kv(const struct fz_read *r, struct xr_read_key *k,
		       struct xr_read_ent *v)
{
	memset(k, 0, sizeof(*k));
	memset(v, 0, sizeof(*v));
	k->conn = r->conn;
	k->read_id = r->id;
	v->mem_off = r->mem_off;
	v->len = r->len;
}

static const struct fz_read *fz_read_find(uint32_t conn, uint32_t id)
{
	size_t i;

	for (i = 0; i < FZ_NREAD; i++)
		if (fz_reads[i].conn == conn && fz_reads[i].id == id)
			return &fz_reads[i];
	return NULL;
}

/* ---- connections ------------------------------------------------------- */

#define V4(a, b, c, d) { [10] = 0xff, [11] = 0xff, a, b, c, d }
#define V6(x, y) { 0xfd, x, 0, y, [15] = 2 } /* fdXX:00YY::2 */

struct fz_conn {
	uint32_t id;
	struct xr_conn c;
	int v6;                  /* the family of the frames we build for it */
};

#define TOK(n) (0x1111000000000000ull | (n))
#define TTOK(n) (0x2222000000000000ull | (n))
#define CONN_(id_, dom_, pd_, st_, v6_, np_, lo_, n_, ...)                  \
	{ id_, { .domain = dom_, .pd = pd_, .state = st_,                     \
		 .peer_conn = 0x100 + id_, .rx_token = TOK(id_),              \
		 .tx_token = TTOK(id_), .peer_addr = { __VA_ARGS__ },         \
		 .npeer = np_, .family = v6_ ? 6 : 4, .peer_sport_lo = lo_,   \
		 .peer_sport_n = n_ }, v6_ }

static const struct fz_conn fz_conns[] = {
	CONN_(1, 21, 1, XR_CONN_RTS, 0, 2, 40000, 16, V4(10, 1, 0, 2),
	      V4(10, 1, 1, 2)),
	CONN_(2, 21, 2, XR_CONN_RTS, 1, 3, 41000, 4, V6(1, 0), V6(1, 1),
	      V6(1, 2)),
	CONN_(3, 22, 1, XR_CONN_RTS, 0, 1, 42000, 1, V4(10, 2, 0, 2)),
	/* entropy ports 65530..65535 and (wrapping) nothing below */
	CONN_(4, 22, 3, XR_CONN_RTS, 1, 1, 65530, 6, V6(2, 0)),
	CONN_(5, 21, 1, XR_CONN_INIT, 0, 1, 40000, 16, V4(10, 1, 0, 2)),
	CONN_(6, 21, 1, XR_CONN_ERROR, 0, 1, 40000, 16, V4(10, 1, 0, 2)),
	CONN_(7, 23, 1, XR_CONN_RTS, 0, 1, 43000, 8, V4(10, 3, 0, 2)),
	CONN_(8, 24, 1, XR_CONN_RTS, 1, 1, 44000, 8, V6(4, 0)),
	/* the same hosts and ports as connection 1, another token */
	CONN_(9, 21, 1, XR_CONN_RTS, 0, 2, 40000, 16, V4(10, 1, 0, 2),
	      V4(10, 1, 1, 2)),
	CONN_(10, 25, 1, XR_CONN_RTS, 0, 1, 45000, 8, V4(10, 5, 0, 2)),
	/* claims 7 peers: only XR_MAX_PLANES entries exist */
	CONN_(11, 21, 1, XR_CONN_RTS, 1, 7, 46000, 8, V6(6, 0), V6(6, 1),
	      V6(6, 2), V6(6, 3)),
	/* an IPv6 connection whose peer is written IPv4-mapped: IPv4 frames
	 * from 10.7.0.2 match it, IPv6 ones from ::ffff:10.7.0.2 never */
	CONN_(12, 21, 1, XR_CONN_RTS, 1, 1, 47000, 8, V4(10, 7, 0, 2)),
	CONN_(0, 21, 1, XR_CONN_RTS, 0, 1, 48000, 4, V4(10, 8, 0, 2)),
	CONN_(8191, 22, 1, XR_CONN_RTS, 1, 1, 50000, 16, V6(9, 0)),
	/* in xr_conns but beyond xr_rx: dropped as unknown */
	CONN_(9000, 21, 1, XR_CONN_RTS, 0, 1, 40000, 16, V4(10, 1, 0, 2)),
};
#define FZ_NCONN (sizeof(fz_conns) / sizeof(fz_conns[0]))

static const struct fz_conn *fz_conn_find(uint32_t id)
{
	size_t i;

	for (i = 0; i < FZ_NCONN; i++)
		if (fz_conns[i].id == id)
			return &fz_conns[i];
	return NULL;
}

/* Connection ids whose receive state and message slots are checked after
 * every input: 0..12 (one batch) and 8191. */
#define FZ_RX_LO_N 13
#define FZ_RX_HI 8191u

/* Our own addresses (frame destinations; XDP does not look at them). */
static const uint8_t fz_local4[4] = { 10, 9, 0, 1 };
static const uint8_t fz_local6[16] = { 0xfd, 0x09, [15] = 1 };

/* ---- the installed world ------------------------------------------------ */

/* The program and its maps (tests/bpf/world.h: loaded by xw_load), and
 * what fz_world_up installs in them. */
struct fz_world {
	struct xw p;
	struct xw_dom dom[D_N];
	uint16_t ctrl_port[D_N];
	uint8_t ctrl_addr[D_N][16];
	int ctrl_sock;
	int old_ns;
};

static uint8_t fz_mem_pattern(size_t i, unsigned dom)
{
	return (uint8_t)(i * 131 + (i >> 9) * 7 + dom * 29 + 0x3c);
}

static int fz_dom_record(const struct fz_world *w, int i, struct xr_domain *d)
{
	memset(d, 0, sizeof(*d));
	d->mem_bytes = (uint64_t)fz_doms[i].pages * XR_PAGE_SIZE;
	d->owner_pid = (uint32_t)getpid();
	d->ctrl_port = w->ctrl_port[i];
	memcpy(d->ctrl_addr, w->ctrl_addr[i], 16);
	d->evq_share = 1u << 30; /* the model knows no shares: bpf_keyed.c */
	return 0;
}

/* Initial receive state of a connection: every path at init_psn, the CSN
 * window at init_csn (some connections start just below 2^32). */
static uint32_t fz_init_psn(uint32_t id)
{
	return id % 3 == 0 ? 0xffffff00u + id : 1000u * id;
}

static uint32_t fz_init_csn(uint32_t id)
{
	return id % 2 == 0 ? 0xfffffff0u - id : 7000u + id;
}

static int fz_world_up(struct fz_world *w, int (*on_event)(void *, void *,
							    size_t),
		       void *const ev_ctx[D_N])
{
	static const uint8_t lo4m[16] = V4(127, 0, 0, 1);
	size_t i;
	int d;

	w->ctrl_sock = -1;
	/* A private netns: liveness lookups (bpf_sk_lookup_udp from
	 * bpf_prog_test_run) see only our sockets; it dies with us.  Where
	 * one cannot be made, the fuzzer runs in the current one. */
	if (xw_netns_enter(&w->old_ns) && w->old_ns >= 0)
		return -EIO;
	if (xw_set_cfg(&w->p, XR_CFG_VERIFY_CSUM, 0))
		return -errno;

	for (d = 0; d < D_N; d++) {
		const struct fz_dom *fd = &fz_doms[d];
		struct xr_domain rec;

		w->dom[d].id = fd->id;
		w->dom[d].mem_fd = w->dom[d].evq_fd = -1;
		if (fd->ctrl == CTRL_LIVE) {
			w->ctrl_port[d] = xw_free_port();
			memcpy(w->ctrl_addr[d], lo4m, 16);
			w->ctrl_sock = xw_ctrl_socket(lo4m, w->ctrl_port[d]);
			if (!w->ctrl_port[d] || w->ctrl_sock < 0)
				return -EADDRNOTAVAIL;
		} else if (fd->ctrl == CTRL_DEAD) {
			w->ctrl_port[d] = xw_free_port();
			if (!w->ctrl_port[d])
				return -EADDRNOTAVAIL;
		}
		if (fd->has_mem && xw_dom_mem(&w->p, &w->dom[d], fd->id, fd->pages,
					      fz_mem_pattern))
			return -errno;
		if (fd->has_evq && xw_dom_evq(&w->p, &w->dom[d], fd->id, on_event,
					      ev_ctx[d]))
			return -errno;
		if (fd->registered) {
			fz_dom_record(w, d, &rec);
			if (xw_dom_register(&w->p, fd->id, &rec))
				return -errno;
		}
	}
	for (i = 0; i < FZ_NMR; i++)
		if (xw_mr_add(&w->p, fz_mrs[i].key, &fz_mrs[i].mr))
			return -errno;
	for (i = 0; i < FZ_NRQ; i++) {
		struct xr_rq_key k;
		struct xr_rq_ent v;

		fz_rq_kv(&fz_rqs[i], fz_rqs[i].state, &k, &v);
		if (bpf_map_update_elem(w->p.rq, &k, &v, BPF_ANY))
			return -errno;
	}
	for (i = 0; i < FZ_NREAD; i++) {
		struct xr_read_key k;
		struct xr_read_ent v;

		fz_read_kv(&fz_reads[i], &k, &v);
		if (bpf_map_update_elem(w->p.reads, &k, &v, BPF_ANY))
			return -errno;
	}
	for (i = 0; i < FZ_NCONN; i++) {
		const struct fz_conn *c = &fz_conns[i];

		if (xw_conn_add(&w->p, c->id, &c->c))
			return -errno;
		if (c->id >= XR_DEFAULT_MAX_CONNS)
			continue;
		if (xw_rx_reset(&w->p, c->id, fz_init_psn(c->id), fz_init_csn(c->id)))
			return -errno;
	}
	return 0;
}

static void fz_world_down(struct fz_world *w)
{
	int d;

	for (d = 0; d < D_N; d++)
		xw_dom_free(&w->p, &w->dom[d], 0);
	if (w->ctrl_sock >= 0)
		close(w->ctrl_sock);
	xw_netns_leave(&w->old_ns);
}

#endif /* XR_TEST_FUZZ_WORLD_H */
