// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The XDP program (bpf/xroce.bpf.c) on keyed connections, run on crafted
 * frames through bpf_prog_test_run_opts: header MACs, key epochs, fair
 * shares of the event ring, liveness by the owner's socket mark, and the
 * READ answer that says "cannot answer".  A fixture file of its own next
 * to bpf_xdp_table.c, whose world it mirrors in small.
 *
 * The world: one domain (DOM) with memory, an event ring and a region
 * (RKEY, REMOTE_WRITE); a keyed connection CONN (we listened: owner 1)
 * whose peer PEER sends to it from peer4; and, in the same program, the
 * peer's end of it (PEER, owner 0), so the answers XDP builds for CONN can
 * be fed back and checked as the peer's XDP would.  Keys come from the
 * library's own derivation (xr_auth_mac_key) from one connection key, so
 * the program and the library are held to the same wire.
 *
 * Every frame that must be refused is also checked to change nothing:
 * memory byte for byte, CONN's receive state, the event ring.
 *
 * Last, a figure: the cost of the MAC per packet, XDP's data path keyed
 * and unkeyed and the library's SipHash of one header (docs/PERFORMANCE.md).
 *
 *   sudo build/tests/bpf_keyed       (skips unless root)
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "contract/abi.h"
#include "contract/siphash.h"
#include "auth.h"
#include "xroce.skel.h"
#include "frames.h"

#define CONN 42u
#define PEER 77u
#define DOM 7u
#define PD 3u
#define PAGES 16
#define RKEY 0x0a0a0001u
#define READ_ID 0x77u
#define IOVA 0x7f1200000000ull
#define MR_OFF 0x4000ull
#define MR_LEN 0x8000ull
#define SPORT_LO 49152
#define PORT XR_DEFAULT_UDP_PORT
#define MAX_EV 64

static const struct fr_ep peer = { { 2, 0, 0, 0, 0, 2 }, { 10, 0, 0, 2 }, 0 };
static const struct fr_ep local = { { 2, 0, 0, 0, 0, 1 }, { 10, 0, 0, 1 }, 0 };
static const uint8_t conn_key[XR_KEY_LEN] = "0123456789abcdef-connection-key";
static const uint8_t other_key[XR_KEY_LEN] = "another connection's key, 32 b!";

struct world {
	struct xroce *skel;
	int prog, ncpu;
	int mem_fd, evq_fd;
	uint8_t *mem, shadow[PAGES * XR_PAGE_SIZE];
	struct ring_buffer *rb;
	struct xr_evt ev[MAX_EV];
	int nev;
	uint32_t psn, csn, msg;          /* next of the peer's stream */
	uint64_t s0[XR_STAT_MAX];
};

static struct world W;

/* ---- keys ---------------------------------------------------------------- */
/* owner 0 = the peer (it connected), 1 = us. */
static void key(const uint8_t *ck, uint32_t epoch, int owner, int kind,
		__u64 out[2])
{
	xr_auth_mac_key(ck, epoch, owner, kind, out);
}

static void fill_peer_slot(struct xr_key_peer *s, int owner, uint32_t epoch)
{
	memset(s, 0, sizeof(*s));
	key(conn_key, epoch, owner, 0, s->data);
	key(conn_key, epoch, owner, 1, s->reply);
	s->epoch = epoch;
}

static void fill_own_slot(struct xr_key_own *s, int owner, uint32_t epoch)
{
	memset(s, 0, sizeof(*s));
	key(conn_key, epoch, owner, 1, s->reply);
	s->epoch = epoch;
}

/* ---- the world ---------------------------------------------------------- */
static int on_event(void *ctx, void *data, size_t size)
{
	(void)ctx;
	if (W.nev < MAX_EV && size == sizeof(struct xr_evt))
		memcpy(&W.ev[W.nev], data, sizeof(struct xr_evt));
	W.nev++;
	return 0;
}

static void drain(void)
{
	W.nev = 0;
	ring_buffer__consume(W.rb);
}

static void addr_of(uint8_t out[16], const struct fr_ep *ep)
{
	memset(out, 0, 16);
	out[10] = out[11] = 0xff;
	memcpy(out + 12, ep->ip, 4);
}

static void set_domain(uint16_t ctrl_port, uint32_t mark, uint32_t share)
{
	struct xr_domain d = { .mem_bytes = PAGES * XR_PAGE_SIZE,
			       .ctrl_port = ctrl_port, .owner_mark = mark,
			       .evq_share = share };
	uint32_t dom = DOM;

	assert_int_equal(bpf_map_update_elem(bpf_map__fd(W.skel->maps.xr_domains),
					     &dom, &d, BPF_ANY), 0);
}

/* CONN (owner 1, its peer PEER at peer4) and PEER (owner 0, its peer CONN
 * at local), both keyed with epochs 0 and 1 installed. */
static void set_conn(uint32_t id, int owner)
{
	struct xr_conn c = { .domain = DOM, .pd = PD, .state = XR_CONN_RTS,
			     .peer_conn = id == CONN ? PEER : CONN,
			     .rx_token = 0x1111, .tx_token = 0x2222,
			     .npeer = 1, .family = 4,
			     .peer_sport_lo = id == CONN ? SPORT_LO : PORT,
			     .peer_sport_n = id == CONN ? 16 : 1,
			     .flags = XR_CONN_F_MAC };
	uint32_t e;

	addr_of(c.peer_addr[0], id == CONN ? &peer : &local);
	for (e = 0; e < 2; e++) {
		fill_peer_slot(&c.kpeer[e], !owner, e);
		fill_own_slot(&c.kown[e], owner, e);
	}
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(W.skel->maps.xr_conns),
					     &id, &c, BPF_ANY), 0);
}

static void get_conn(uint32_t id, struct xr_conn *c)
{
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(W.skel->maps.xr_conns),
					     &id, c), 0);
}

static void put_conn(uint32_t id, const struct xr_conn *c)
{
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(W.skel->maps.xr_conns),
					     &id, c, BPF_EXIST), 0);
}

static void reset_rx(uint32_t id, uint32_t psn, uint32_t csn)
{
	struct xr_rx_state rx;
	uint64_t zero = 0;
	uint32_t i, k;

	memset(&rx, 0, sizeof(rx));
	rx.csn_next = csn;
	for (i = 0; i < XR_MAX_PATHS; i++)
		rx.path[i].cack = psn;
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(W.skel->maps.xr_rx), &id,
					     &rx, BPF_ANY), 0);
	for (i = 0; i < XR_MSG_SLOTS; i++) {
		k = id * XR_MSG_SLOTS + i;
		assert_int_equal(bpf_map_update_elem(bpf_map__fd(W.skel->maps.xr_msgs),
						     &k, &zero, BPF_ANY), 0);
	}
}

static void reset_evb(void)
{
	struct xr_evb b = { 0 };
	uint32_t ids[2] = { CONN, PEER }, i;

	for (i = 0; i < 2; i++)
		assert_int_equal(bpf_map_update_elem(bpf_map__fd(W.skel->maps.xr_evb),
						     &ids[i], &b, BPF_ANY), 0);
}

static void world_reset(void)
{
	struct xr_mr mr = { DOM, PD, XR_ACCESS_LOCAL_WRITE | XR_ACCESS_REMOTE_WRITE,
			    RKEY, IOVA, MR_LEN, MR_OFF };
	struct xr_read_ent re = { .mem_off = MR_OFF, .len = 4096 };
	struct xr_read_key rk = { CONN, READ_ID };
	uint32_t rkey = RKEY;
	size_t i;

	set_domain(0, 0, 1u << 20);
	set_conn(CONN, 1);
	set_conn(PEER, 0);
	W.psn = 1000;
	W.csn = 5000;
	W.msg = 1;
	reset_rx(CONN, W.psn, W.csn);
	reset_rx(PEER, 0, 0);
	reset_evb();
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(W.skel->maps.xr_mrs), &rkey,
					     &mr, BPF_ANY), 0);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(W.skel->maps.xr_reads), &rk,
					     &re, BPF_ANY), 0);
	for (i = 0; i < sizeof(W.shadow); i++)
		W.shadow[i] = (uint8_t)(i * 13 + 7);
	memcpy(W.mem, W.shadow, sizeof(W.shadow));
	drain();
}

/* ---- frames ------------------------------------------------------------- */
struct dpkt {
	uint8_t flags, opcode;
	uint32_t psn, csn, msg_len, msg_off, rkey, imm;
	uint64_t raddr;
	uint32_t plen;
	uint32_t epoch;            /* key epoch to sign under */
	const uint8_t *ck;         /* connection key (default conn_key) */
	int unsigned_token;        /* carry a token, no MAC */
	uint32_t base_lag;         /* psn_base this far below psn */
};

static void data_hdr(const struct dpkt *p, struct xr_data_hdr *h)
{
	memset(h, 0, sizeof(*h));
	h->ver_type = XR_VER_TYPE(XR_T_DATA);
	h->flags = p->flags | (p->epoch & 1 ? XR_DF_EPOCH : 0);
	h->opcode = p->opcode ? p->opcode : XR_OP_WRITE;
	h->dst_conn = htonl(CONN);
	h->psn = htonl(p->psn);
	h->psn_base = htonl(p->psn - p->base_lag);
	h->csn = htonl(p->csn);
	h->ts = htonl(0x12345678);
	h->raddr = htobe64(p->raddr);
	h->rkey = htonl(p->rkey);
	h->msg_id = htonl(W.msg);
	h->msg_len = htonl(p->msg_len);
	h->msg_off = htonl(p->msg_off);
	h->imm = htonl(p->imm);
}

/* The MAC of header h (len bytes) under k as wire.h states it: an ACK
 * or NAK (80 bytes) without XR_AF_SACK leaves its sack words out. */
static __u64 mac_of(const __u64 *k, const void *h, uint32_t len)
{
	int gap = len == sizeof(struct xr_ack_hdr) &&
		  !(((const uint8_t *)h)[1] & XR_AF_SACK);

	return xr_mac_hdr_gap(k[0], k[1], h, len, 32, 64, gap);
}

static void sign(void *h, uint32_t len, const uint8_t *ck, uint32_t epoch,
		 int owner, int kind)
{
	__u64 k[2];

	xr_auth_mac_key(ck, epoch, owner, kind, k);
	xr_le64_store((uint8_t *)h + 8, mac_of(k, h, len));
}

/* A DATA frame of the peer's stream (a WRITE into the region by default):
 * header h (as sent), frame f; returns the frame's length. */
static size_t data_frame(const struct dpkt *p, struct xr_data_hdr *h, uint8_t *f)
{
	uint8_t body[sizeof(*h) + 2048];
	struct fr_ep s = peer, d = local;
	uint32_t i;

	data_hdr(p, h);
	if (p->unsigned_token)
		h->token = htobe64(0x1111);
	else
		sign(h, sizeof(*h), p->ck ? p->ck : conn_key, p->epoch, 0, 0);
	memcpy(body, h, sizeof(*h));
	for (i = 0; i < p->plen; i++)
		body[sizeof(*h) + i] = (uint8_t)(0xa0 + i * 3 + p->csn);
	s.port = SPORT_LO + 1;
	d.port = PORT;
	return fr_udp(f, 0, &s, &d, 0, body, sizeof(*h) + p->plen);
}

/* A WRITE of n bytes at offset off of the region, the peer's next packet. */
static struct dpkt write_pkt(uint32_t off, uint32_t n)
{
	struct dpkt p = { .flags = XR_DF_AR | XR_DF_LAST, .psn = W.psn,
			  .csn = W.csn, .msg_len = n, .rkey = RKEY,
			  .raddr = IOVA + off, .plen = n };
	return p;
}

static void shadow_place(const struct dpkt *p)
{
	uint32_t i;

	for (i = 0; i < p->plen; i++)
		W.shadow[MR_OFF + (p->raddr - IOVA) + i] = (uint8_t)(0xa0 + i * 3 + p->csn);
}

static uint32_t run(const uint8_t *in, size_t n, uint8_t *out, uint32_t *outn)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in,
		    .data_size_in = (uint32_t)n, .data_out = out,
		    .data_size_out = FR_MAX, .repeat = 1);

	assert_int_equal(bpf_prog_test_run_opts(W.prog, &o), 0);
	if (outn)
		*outn = o.data_size_out;
	return o.retval;
}

/* ---- what must (not) have changed --------------------------------------- */
static void stats(uint64_t *out)
{
	int fd = bpf_map__fd(W.skel->maps.xr_stats);
	uint64_t v[1024];
	uint32_t k;
	int c;

	assert_true(W.ncpu <= 1024);
	for (k = 0; k < XR_STAT_MAX; k++) {
		out[k] = 0;
		assert_int_equal(bpf_map_lookup_elem(fd, &k, v), 0);
		for (c = 0; c < W.ncpu; c++)
			out[k] += v[c];
	}
}

static void mark(void)
{
	stats(W.s0);
	drain();
}

/* Counter stat moved by exactly n since mark(); every drop counter not
 * named moved by nothing. */
static uint64_t moved(uint32_t stat)
{
	uint64_t s1[XR_STAT_MAX];

	stats(s1);
	return s1[stat] - W.s0[stat];
}

static void expect_only(const uint32_t *named, int n)
{
	uint64_t s1[XR_STAT_MAX];
	uint32_t k;
	int i, ok;

	stats(s1);
	for (k = 0; k < XR_STAT_MAX; k++) {
		for (ok = 0, i = 0; i < n; i++)
			ok |= named[i] == k;
		if (!ok && s1[k] != W.s0[k])
			fail_msg("counter %u moved by %llu", k,
				 (unsigned long long)(s1[k] - W.s0[k]));
	}
}

static void rx_get(uint32_t id, struct xr_rx_state *rx)
{
	memset(rx, 0, sizeof(*rx));
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(W.skel->maps.xr_rx), &id,
					     rx), 0);
}

/* Frame f (n bytes) is refused for reason `why`: dropped, counted under
 * that reason alone, and nothing else changed. */
static void refused(const uint8_t *f, size_t n, uint32_t why)
{
	struct xr_rx_state a, b;
	uint8_t out[FR_MAX];
	const uint32_t only[] = { why };

	rx_get(CONN, &a);
	mark();
	assert_int_equal(run(f, n, out, NULL), XDP_DROP);
	assert_int_equal(moved(why), 1);
	expect_only(only, 1);
	rx_get(CONN, &b);
	/* The lock word may differ; the state must not. */
	assert_memory_equal((uint8_t *)&a + sizeof(a.lock), (uint8_t *)&b + sizeof(b.lock),
			    sizeof(a) - sizeof(a.lock));
	assert_memory_equal(W.mem, W.shadow, sizeof(W.shadow));
	drain();
	assert_int_equal(W.nev, 0);
}

/* The peer's next packet p is accepted and answered with an ACK in out;
 * returns the ACK's length. */
static uint32_t accepted(struct dpkt *p, uint8_t *out)
{
	uint8_t in[FR_MAX];
	struct xr_data_hdr h;
	uint32_t outn;
	size_t n = data_frame(p, &h, in);

	mark();
	assert_int_equal(run(in, n, out, &outn), XDP_TX);
	assert_int_equal(moved(XR_STAT_RX_DATA), 1);
	assert_int_equal(moved(XR_STAT_DROP_MAC), 0);
	if (p->opcode == 0 || p->opcode == XR_OP_WRITE)
		shadow_place(p);
	assert_memory_equal(W.mem, W.shadow, sizeof(W.shadow));
	W.psn++;
	W.csn++;
	W.msg++;
	return outn;
}

/* ---- the ACK XDP built -------------------------------------------------- */
/* Check the ACK (or NAK) in f: signed under the reply key of the peer's
 * stream for epoch, its epoch flag says epoch's parity, and its KNEXT flag
 * is knext. */
static void check_ack(const uint8_t *f, uint32_t n, uint32_t epoch, int knext)
{
	struct fr_view v;
	struct xr_ack_hdr a;
	__u64 k[2];

	assert_int_equal(fr_decode(f, n, &v), 0);
	assert_true(v.body_len == sizeof(a));
	memcpy(&a, f + v.body, sizeof(a));
	assert_true(fr_udp_csum_ok(f, &v));
	key(conn_key, epoch, 0, 1, k);
	assert_true(mac_of(k, &a, sizeof(a)) == xr_le64_load(a.mac));
	/* The flag is there exactly when there are SACK bits. */
	assert_int_equal(!!(a.flags & XR_AF_SACK),
			 (a.sack[0] | a.sack[1] | a.sack[2] | a.sack[3]) != 0);
	assert_int_equal(!!(a.flags & XR_AF_EPOCH), epoch & 1);
	assert_int_equal(!!(a.flags & XR_AF_KNEXT), knext);
	assert_int_equal(ntohl(a.dst_conn), PEER);
}

/* ---- tests --------------------------------------------------------------- */
static void test_good_mac(void **state)
{
	uint8_t out[FR_MAX], back[FR_MAX];
	struct dpkt p;
	uint32_t n;

	(void)state;
	world_reset();
	p = write_pkt(0, 256);
	n = accepted(&p, out);
	check_ack(out, n, 0, 1);
	/* The ACK, fed to the peer's end, is checked there and recorded. */
	mark();
	assert_int_equal(run(out, n, back, NULL), XDP_DROP);
	assert_int_equal(moved(XR_STAT_RX_ACK), 1);
	drain();
	assert_int_equal(W.nev, 1);
	assert_int_equal(W.ev[0].type, XR_EVT_ACK);
	assert_int_equal(W.ev[0].conn, PEER);
	assert_int_equal(W.ev[0].ack.key_epoch, 0);
	assert_true(W.ev[0].flags & XR_AF_KNEXT);
}

static void test_wrong_key_and_truncated(void **state)
{
	uint8_t f[FR_MAX];
	struct xr_data_hdr h;
	struct dpkt p;
	size_t n;
	int i;

	(void)state;
	world_reset();
	p = write_pkt(0, 64);
	p.ck = other_key;
	refused(f, data_frame(&p, &h, f), XR_STAT_DROP_MAC);
	p.ck = NULL;
	p.epoch = 2; /* a key not installed */
	refused(f, data_frame(&p, &h, f), XR_STAT_DROP_MAC);
	p.epoch = 0;
	p.unsigned_token = 1; /* the unkeyed form: the token, no MAC */
	refused(f, data_frame(&p, &h, f), XR_STAT_DROP_MAC);
	p.unsigned_token = 0;
	/* A MAC cut short: only its first i bytes right, the rest zero. */
	for (i = 0; i < 8; i++) {
		n = data_frame(&p, &h, f);
		memset(f + FR_ETH + FR_IP4 + FR_UDP + 8 + i, 0, (size_t)(8 - i));
		if (!memcmp(f + FR_ETH + FR_IP4 + FR_UDP + 8, h.mac, 8))
			continue; /* its tail was zero already */
		fr_udp_fix(f, 0, FR_ETH + FR_IP4);
		refused(f, n, XR_STAT_DROP_MAC);
	}
	/* A frame whose xroce header is cut inside the MAC. */
	n = data_frame(&p, &h, f);
	n = FR_ETH + FR_IP4 + FR_UDP + 12;
	f[FR_ETH + 3] = (uint8_t)(n - FR_ETH);
	f[FR_ETH + 2] = 0;
	f[FR_ETH + FR_IP4 + 5] = 20;
	refused(f, n, XR_STAT_DROP_TRUNC);
}

/* One bit flipped in any byte the MAC covers (the checksum made right
 * again, so that only the MAC can tell): dropped, nothing changes. */
static void test_bit_flips(void **state)
{
	uint8_t f[FR_MAX], g[FR_MAX];
	struct xr_data_hdr h;
	struct dpkt p;
	size_t n, hdr = FR_ETH + FR_IP4 + FR_UDP, i;
	int b, flips = 0;

	(void)state;
	world_reset();
	p = write_pkt(128, 64);
	n = data_frame(&p, &h, f);
	for (i = 0; i < sizeof(h); i++) {
		if (i >= 8 && i < 16)
			continue;
		for (b = 0; b < 8; b++) {
			memcpy(g, f, n);
			g[hdr + i] ^= (uint8_t)(1u << b);
			fr_udp_fix(g, 0, FR_ETH + FR_IP4);
			/* A flip that makes the frame not ours (version) is
			 * dropped for that before the MAC is looked at. */
			if (i == 0 && b >= 4) {
				refused(g, n, XR_STAT_DROP_VERSION);
				continue;
			}
			/* The connection id and the type pick what is looked
			 * up: another id is no connection (or the peer's end,
			 * from the wrong address); another type another path. */
			if (i == 0 || (i >= 4 && i < 8)) {
				struct xr_rx_state a, c;

				rx_get(CONN, &a);
				mark();
				assert_int_equal(run(g, n, g + FR_MAX / 2, NULL), XDP_DROP);
				assert_int_equal(moved(XR_STAT_RX_DATA), 0);
				rx_get(CONN, &c);
				assert_memory_equal(W.mem, W.shadow, sizeof(W.shadow));
				assert_int_equal(a.csn_next, c.csn_next);
				continue;
			}
			refused(g, n, XR_STAT_DROP_MAC);
			flips++;
		}
	}
	assert_int_equal(flips, (int)(sizeof(h) - 8 - 4 - 1) * 8);
	/* The packet itself still passes. */
	{
		uint8_t out[FR_MAX];

		accepted(&p, out);
	}
}

/* A replay under the same key is a duplicate (acknowledged, placed once);
 * once the peer moved two epochs on, the same packet fails its MAC. */
static void test_replay(void **state)
{
	uint8_t f[FR_MAX], out[FR_MAX];
	struct xr_data_hdr h;
	struct xr_conn c;
	struct dpkt p, q;
	size_t n;

	(void)state;
	world_reset();
	p = write_pkt(0, 100);
	n = data_frame(&p, &h, f);
	accepted(&p, out);
	mark();
	assert_int_equal(run(f, n, out, NULL), XDP_TX);
	assert_int_equal(moved(XR_STAT_RX_DUP), 1);
	assert_int_equal(moved(XR_STAT_RX_BYTES), 0);
	/* The peer moves to epoch 1 (installed at set-up). */
	q = write_pkt(200, 50);
	q.epoch = 1;
	accepted(&q, out);
	/* ... and our library, told so, replaces epoch 0 with epoch 2. */
	get_conn(CONN, &c);
	fill_peer_slot(&c.kpeer[0], 0, 2);
	put_conn(CONN, &c);
	refused(f, n, XR_STAT_DROP_MAC);
}

/* Epochs: the first packet under the newer slot is reported once; answers
 * echo the epoch and say whether the next one is installed. */
static void test_epochs(void **state)
{
	uint8_t out[FR_MAX];
	struct xr_conn c;
	struct dpkt p;
	uint32_t n;

	(void)state;
	world_reset();
	p = write_pkt(0, 32);
	n = accepted(&p, out);
	check_ack(out, n, 0, 1);     /* epoch 1 installed: KNEXT */
	drain();
	p = write_pkt(64, 32);
	p.epoch = 1;
	mark();
	n = accepted(&p, out);
	assert_int_equal(moved(XR_STAT_KEY_EPOCH), 1);
	check_ack(out, n, 1, 0);     /* epoch 2 not yet: no KNEXT */
	drain();
	assert_true(W.nev >= 1);
	assert_int_equal(W.ev[0].type, XR_EVT_REKEY);
	assert_int_equal(W.ev[0].rekey.epoch, 1);
	p = write_pkt(128, 32);
	p.epoch = 1;
	mark();
	n = accepted(&p, out);
	assert_int_equal(moved(XR_STAT_KEY_EPOCH), 0); /* reported once */
	get_conn(CONN, &c);
	assert_int_equal(c.kpeer[1].noted, 1);
	fill_peer_slot(&c.kpeer[0], 0, 2);
	put_conn(CONN, &c);
	p = write_pkt(192, 32);
	p.epoch = 1;
	n = accepted(&p, out);
	check_ack(out, n, 1, 1);     /* now KNEXT */
	p = write_pkt(256, 32);
	p.epoch = 2;
	mark();
	n = accepted(&p, out);
	check_ack(out, n, 2, 0);
	assert_int_equal(moved(XR_STAT_KEY_EPOCH), 1);
}

/* Kinds and directions: a DATA turned into an ACK, an ACK signed with a
 * data key, a probe reply signed as a probe: each under the wrong key. */
static void test_kinds(void **state)
{
	uint8_t f[FR_MAX], out[FR_MAX];
	struct xr_data_hdr h;
	struct xr_ack_hdr a;
	struct xr_probe_hdr pr;
	struct fr_ep s = local, d = peer;
	struct dpkt p;
	size_t n;

	(void)state;
	world_reset();
	p = write_pkt(0, 16);
	n = accepted(&p, out);
	/* The genuine ACK, resigned under the DATA key of the same epoch and
	 * stream (what a peer could make of its own DATA key). */
	memcpy(&a, out + FR_ETH + FR_IP4 + FR_UDP, sizeof(a));
	sign(&a, sizeof(a), conn_key, 0, 0, 0);
	memcpy(out + FR_ETH + FR_IP4 + FR_UDP, &a, sizeof(a));
	fr_udp_fix(out, 0, FR_ETH + FR_IP4);
	mark();
	assert_int_equal(run(out, n, f, NULL), XDP_DROP);
	assert_int_equal(moved(XR_STAT_DROP_MAC), 1);
	/* ... and under the reply key of the other stream (reflection of an
	 * answer the peer's XDP built for our stream). */
	sign(&a, sizeof(a), conn_key, 0, 1, 1);
	memcpy(out + FR_ETH + FR_IP4 + FR_UDP, &a, sizeof(a));
	fr_udp_fix(out, 0, FR_ETH + FR_IP4);
	mark();
	assert_int_equal(run(out, n, f, NULL), XDP_DROP);
	assert_int_equal(moved(XR_STAT_DROP_MAC), 1);
	/* A DATA header with the type byte of an ACK, MAC recomputed under
	 * the DATA key, sent to the peer's end: not an answer to it. */
	data_hdr(&p, &h);
	h.ver_type = XR_VER_TYPE(XR_T_ACK);
	h.dst_conn = htonl(PEER);
	memset(&a, 0, sizeof(a));
	memcpy(&a, &h, sizeof(h));
	sign(&a, sizeof(a), conn_key, 0, 0, 0);
	s.port = PORT;
	d.port = SPORT_LO + 3;
	n = fr_udp(f, 0, &s, &d, 0, &a, sizeof(a));
	mark();
	assert_int_equal(run(f, n, out, NULL), XDP_DROP);
	assert_int_equal(moved(XR_STAT_DROP_MAC), 1);
	/* A probe to CONN signed right, then one signed with the reply key. */
	memset(&pr, 0, sizeof(pr));
	pr.ver_type = XR_VER_TYPE(XR_T_PROBE);
	pr.dst_conn = htonl(CONN);
	pr.seq = htonl(9);
	sign(&pr, sizeof(pr), conn_key, 0, 0, 0);
	s = peer;
	d = local;
	s.port = SPORT_LO + 2;
	d.port = PORT;
	n = fr_udp(f, 0, &s, &d, 0, &pr, sizeof(pr));
	mark();
	assert_int_equal(run(f, n, out, NULL), XDP_TX);
	assert_int_equal(moved(XR_STAT_PROBE), 1);
	memcpy(&pr, out + FR_ETH + FR_IP4 + FR_UDP, sizeof(pr));
	{
		__u64 k[2];

		key(conn_key, 0, 0, 1, k);
		assert_true(xr_mac_hdr(k[0], k[1], &pr, sizeof(pr)) ==
			    xr_le64_load(pr.mac));
		assert_true(pr.flags & XR_PF_KNEXT);
	}
	memset(&pr, 0, sizeof(pr));
	pr.ver_type = XR_VER_TYPE(XR_T_PROBE);
	pr.dst_conn = htonl(CONN);
	sign(&pr, sizeof(pr), conn_key, 0, 0, 1);
	n = fr_udp(f, 0, &s, &d, 0, &pr, sizeof(pr));
	mark();
	assert_int_equal(run(f, n, out, NULL), XDP_DROP);
	assert_int_equal(moved(XR_STAT_DROP_MAC), 1);
}

/* ACK (in, n bytes) with byte i of its header xored with x and the UDP
 * checksum fixed, fed to the sender's end: its verdict's counter moved. */
static void ack_fed(const uint8_t *in, size_t n, size_t i, uint8_t x,
		    uint32_t stat)
{
	uint8_t g[FR_MAX], back[FR_MAX];

	memcpy(g, in, n);
	g[FR_ETH + FR_IP4 + FR_UDP + i] ^= x;
	fr_udp_fix(g, 0, FR_ETH + FR_IP4);
	mark();
	assert_int_equal(run(g, n, back, NULL), XDP_DROP);
	assert_int_equal(moved(stat), 1);
}

/* An in-order ACK has no XR_AF_SACK and its MAC leaves the (zero) sack
 * words out: whatever they are made to hold is read as zero and the MAC
 * still holds; setting the flag, or a MAC over the whole header, fails.
 * An ACK with SACK bits carries the flag and its MAC covers them. */
static void test_ack_sack_gap(void **state)
{
	uint8_t out[FR_MAX], back[FR_MAX];
	const size_t sack = offsetof(struct xr_ack_hdr, sack);
	struct xr_ack_hdr a;
	struct dpkt p;
	uint32_t n;
	__u64 k[2];
	size_t i;

	(void)state;
	world_reset();
	p = write_pkt(0, 64);
	n = accepted(&p, out);
	check_ack(out, n, 0, 1);
	memcpy(&a, out + FR_ETH + FR_IP4 + FR_UDP, sizeof(a));
	assert_false(a.flags & XR_AF_SACK);
	for (i = sack; i < sack + sizeof(a.sack); i += 7) {
		ack_fed(out, n, i, 0x41, XR_STAT_RX_ACK);
		drain();
		assert_int_equal(W.nev, 1);
		assert_true(W.ev[0].ack.sack[0] == 0 && W.ev[0].ack.sack[1] == 0 &&
			    W.ev[0].ack.sack[2] == 0 && W.ev[0].ack.sack[3] == 0);
	}
	ack_fed(out, n, 1, XR_AF_SACK, XR_STAT_DROP_MAC);
	key(conn_key, 0, 0, 1, k);
	xr_le64_store(a.mac, xr_mac_hdr(k[0], k[1], &a, sizeof(a)));
	memcpy(back, out, n);
	memcpy(back + FR_ETH + FR_IP4 + FR_UDP, &a, sizeof(a));
	ack_fed(back, n, 0, 0, XR_STAT_DROP_MAC);
	/* A PSN skipped: the next packet's ACK has a SACK bit, the flag, and
	 * a MAC that covers every sack byte. */
	W.psn++;
	p = write_pkt(64, 64);
	p.base_lag = 1;
	n = accepted(&p, out);
	check_ack(out, n, 0, 1);
	memcpy(&a, out + FR_ETH + FR_IP4 + FR_UDP, sizeof(a));
	assert_true(a.flags & XR_AF_SACK);
	ack_fed(out, n, 0, 0, XR_STAT_RX_ACK);
	drain();
	assert_true(W.ev[0].ack.sack[0] == be64toh(a.sack[0]));
	for (i = sack; i < sack + sizeof(a.sack); i++)
		ack_fed(out, n, i, 0x10, XR_STAT_DROP_MAC);
}

/* Fair shares: ACKs on one connection stop at its share; data of another
 * connection of the same domain still gets in; what the library consumed
 * makes room again; data over its own share is refused unanswered. */
static void test_shares(void **state)
{
	uint8_t out[FR_MAX], back[FR_MAX], acks[4][FR_MAX];
	uint32_t alen[4], i;
	struct xr_evb b;
	struct dpkt p;
	int fd;

	(void)state;
	world_reset();
	set_domain(0, 0, 4);
	for (i = 0; i < 4; i++) {
		p = write_pkt(i * 16, 16);
		alen[i] = accepted(&p, acks[i]);
	}
	/* CONN has 4 RECV records waiting: its share.  Its next data is
	 * refused, unacknowledged, counted. */
	p = write_pkt(100, 16);
	{
		uint8_t f[FR_MAX];
		struct xr_data_hdr h;

		refused(f, data_frame(&p, &h, f), XR_STAT_DROP_EVQ_SHARE);
	}
	/* The peer's end (PEER) takes its own 4 ACK records, not a fifth. */
	for (i = 0; i < 4; i++) {
		mark();
		assert_int_equal(run(acks[i], alen[i], back, NULL), XDP_DROP);
		assert_int_equal(moved(XR_STAT_RX_ACK), 1);
	}
	mark();
	assert_int_equal(run(acks[0], alen[0], back, NULL), XDP_DROP);
	assert_int_equal(moved(XR_STAT_DROP_EVQ_SHARE), 1);
	assert_int_equal(moved(XR_STAT_RX_ACK), 0);
	/* The library consumed CONN's records: CONN's data gets in again,
	 * whatever PEER has waiting. */
	fd = bpf_map__fd(W.skel->maps.xr_evb);
	i = CONN;
	assert_int_equal(bpf_map_lookup_elem(fd, &i, &b), 0);
	assert_int_equal(b.produced, 4);
	b.consumed = b.produced;
	assert_int_equal(bpf_map_update_elem(fd, &i, &b, BPF_EXIST), 0);
	p = write_pkt(100, 16);
	accepted(&p, out);
}

/* READ answers that say "cannot answer": the read fails, nothing lands. */
static void test_read_err(void **state)
{
	uint8_t f[FR_MAX], out[FR_MAX];
	struct xr_data_hdr h;
	struct dpkt p;

	(void)state;
	world_reset();
	p = write_pkt(0, 0);
	p.opcode = XR_OP_READ_RESP;
	p.rkey = READ_ID;
	p.msg_len = 4096;
	p.msg_off = 1400;
	p.flags |= XR_DF_ERR;
	p.imm = XR_NAK_ACCESS;
	mark();
	accepted(&p, out);
	drain();
	assert_int_equal(W.nev, 1);
	assert_int_equal(W.ev[0].type, XR_EVT_RECV);
	assert_int_equal(W.ev[0].recv.opcode, XR_OP_READ_RESP);
	assert_int_equal(W.ev[0].recv.flags, XR_RECV_F_ERR);
	assert_int_equal(W.ev[0].recv.read_id, READ_ID);
	assert_int_equal(W.ev[0].recv.imm, XR_NAK_ACCESS);
	/* With payload: refused (NAK bad length), nothing placed. */
	p = write_pkt(0, 16);
	p.opcode = XR_OP_READ_RESP;
	p.rkey = READ_ID;
	p.msg_len = 4096;
	p.flags |= XR_DF_ERR;
	mark();
	assert_int_equal(run(f, data_frame(&p, &h, f), out, NULL), XDP_TX);
	assert_int_equal(moved(XR_STAT_DROP_LENGTH), 1);
	assert_memory_equal(W.mem, W.shadow, sizeof(W.shadow));
	/* For a read we never opened: refused (NAK bad key). */
	p.plen = 0;
	p.rkey = READ_ID + 1;
	mark();
	assert_int_equal(run(f, data_frame(&p, &h, f), out, NULL), XDP_TX);
	assert_int_equal(moved(XR_STAT_DROP_KEY), 1);
}

/* ---- liveness by the owner's mark, in a private network namespace -------- */
static int sock_on(uint16_t port, uint32_t so_mark)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_port = htons(port) };
	int fd = socket(AF_INET6, SOCK_DGRAM, 0), off = 0;

	assert_true(fd >= 0);
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
	if (so_mark)
		assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_MARK, &so_mark,
					    sizeof(so_mark)), 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

static void expect_alive(int alive)
{
	uint8_t f[FR_MAX], out[FR_MAX];
	struct xr_data_hdr h;
	struct dpkt p = write_pkt(0, 8);

	usleep(3000); /* past XDP's 1 ms cache of the last check */
	mark();
	if (alive) {
		accepted(&p, out);
		return;
	}
	assert_int_equal(run(f, data_frame(&p, &h, f), out, NULL), XDP_DROP);
	assert_int_equal(moved(XR_STAT_DROP_DEAD), 1);
}

static void test_owner_mark(void **state)
{
	const uint16_t port = 47931;
	const uint32_t owner = 0x5eed1234;
	int old, fd;

	(void)state;
	old = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	assert_true(old >= 0);
	assert_int_equal(unshare(CLONE_NEWNET), 0);
	assert_int_equal(system("ip link set lo up && ip link add xrk0 type veth peer name xrk1 && "
				"ip link set xrk0 up && ip addr add 10.0.0.1/24 dev xrk0"),
			 0);
	world_reset();
	set_domain(port, owner, 1u << 20);
	fd = sock_on(port, owner);
	expect_alive(1);                 /* the owner's socket, its mark */
	close(fd);
	expect_alive(0);                 /* gone */
	fd = sock_on(port, 0);
	expect_alive(0);                 /* a squatter on the port, no mark */
	close(fd);
	fd = sock_on(port, owner + 1);
	expect_alive(0);                 /* another mark */
	close(fd);
	fd = sock_on(port, owner);
	expect_alive(1);
	close(fd);
	set_domain(port, 0, 1u << 20);   /* no mark recorded: the port alone */
	fd = sock_on(port, 0);
	expect_alive(1);
	close(fd);
	assert_int_equal(setns(old, CLONE_NEWNET), 0);
	close(old);
}

/* ---- the cost of the MAC (a figure, printed; checks only that it ran) ---- */
/* ns per packet, kernel-timed, of n in-order WRITEs of plen bytes of the
 * peer's stream into CONN (each a new PSN and CSN, so none is a duplicate),
 * keyed or not: the receiver's whole data path, the MAC checked and the
 * ACK signed when keyed. */
static double cost_data(int keyed, int n, uint32_t plen)
{
	static uint8_t f[FR_MAX], out[FR_MAX];
	struct xr_data_hdr h;
	struct xr_conn c;
	uint64_t total = 0;
	int i;

	world_reset();
	if (!keyed) {
		get_conn(CONN, &c);
		c.flags &= ~XR_CONN_F_MAC;
		put_conn(CONN, &c);
	}
	for (i = 0; i < n; i++) {
		struct dpkt p = write_pkt((uint32_t)(i % 16) * plen, plen);
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_out = out,
			    .data_size_out = FR_MAX, .repeat = 1);

		p.unsigned_token = !keyed;
		o.data_in = f;
		o.data_size_in = (uint32_t)data_frame(&p, &h, f);
		assert_int_equal(bpf_prog_test_run_opts(W.prog, &o), 0);
		assert_int_equal(o.retval, XDP_TX);
		total += o.duration;
		W.psn++;
		W.csn++;
		W.msg++;
		if ((i & 511) == 511)
			drain();
	}
	drain();
	return (double)total / n;
}

/* ns per header MAC computed by the library (the sender signs every DATA
 * and PROBE it sends, and checks nothing: XDP checks the answers). */
static double cost_siphash(int n)
{
	struct xr_data_hdr h;
	struct timespec t0, t1;
	uint64_t acc = 0;
	int i;

	memset(&h, 0x5a, sizeof(h));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++) {
		h.psn = (uint32_t)i;
		acc ^= xr_mac_hdr(0x0123456789abcdefull, (uint64_t)i, &h, sizeof(h));
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true(acc != 0);
	return ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / n;
}

/* Mean XDP time (ns) of ACK frame f (len bytes) at the sender's end,
 * one test run at a time (the ring drained as it goes). */
static double cost_ack_frame(const uint8_t *f, size_t len, int n)
{
	static uint8_t out[FR_MAX];
	uint64_t total = 0;
	int i;

	drain();
	for (i = 0; i < n; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f,
			    .data_size_in = (uint32_t)len, .data_out = out,
			    .data_size_out = FR_MAX, .repeat = 1);

		assert_int_equal(bpf_prog_test_run_opts(W.prog, &o), 0);
		assert_int_equal(o.retval, XDP_DROP);
		total += o.duration;
		if ((i & 255) == 255)
			drain();
	}
	drain();
	return (double)total / n;
}

/* The sender's check of one ACK: unkeyed, keyed without SACK bits (the
 * MAC leaves the sack words out), keyed with them (all 80 bytes). */
static void cost_ack(int n, double best[3])
{
	uint8_t plain[FR_MAX], gap[FR_MAX], full[FR_MAX];
	const size_t hdr = FR_ETH + FR_IP4 + FR_UDP;
	struct xr_conn c;
	struct dpkt p;
	uint32_t ng, nf;
	double t[3];
	int k;

	world_reset();
	p = write_pkt(0, 64);
	ng = accepted(&p, gap);
	W.psn++; /* a hole: the next ACK has a SACK bit */
	p = write_pkt(64, 64);
	p.base_lag = 1;
	nf = accepted(&p, full);
	assert_false(gap[hdr + 1] & XR_AF_SACK);
	assert_true(full[hdr + 1] & XR_AF_SACK);
	/* Unkeyed: the same ACK with PEER's token, PEER without a key. */
	memcpy(plain, gap, ng);
	xr_le64_store(plain + hdr + 8, 0);
	{
		__be64 tok;

		get_conn(PEER, &c);
		tok = htobe64(c.rx_token);
		memcpy(plain + hdr + 8, &tok, 8);
	}
	fr_udp_fix(plain, 0, FR_ETH + FR_IP4);
	t[1] = cost_ack_frame(gap, ng, n);
	t[2] = cost_ack_frame(full, nf, n);
	get_conn(PEER, &c);
	c.flags &= ~XR_CONN_F_MAC;
	put_conn(PEER, &c);
	t[0] = cost_ack_frame(plain, ng, n);
	for (k = 0; k < 3; k++)
		best[k] = t[k] < best[k] ? t[k] : best[k];
}

static void test_cost(void **state)
{
	const int n = 4096, rounds = 3;
	double off[3], on[3], best_off = 1e9, best_on = 1e9;
	uint32_t sizes[3] = { 64, 1024, 2048 }, s;
	int r;

	(void)state;
	printf("  cost of header MACs (ns per packet, best of %d runs of %d):\n", rounds, n);
	for (s = 0; s < 3; s++) {
		best_off = best_on = 1e9;
		for (r = 0; r < rounds; r++) {
			off[r] = cost_data(0, n, sizes[s]);
			on[r] = cost_data(1, n, sizes[s]);
			best_off = off[r] < best_off ? off[r] : best_off;
			best_on = on[r] < best_on ? on[r] : best_on;
		}
		printf("    XDP data path + ACK, %4u B WRITE: unkeyed %6.0f  keyed %6.0f  (+%.0f)\n",
		       sizes[s], best_off, best_on, best_on - best_off);
	}
	{
		double best[3] = { 1e9, 1e9, 1e9 };

		for (r = 0; r < rounds; r++)
			cost_ack(n, best);
		printf("    XDP ACK check at the sender: unkeyed %6.0f  keyed, no SACK bits %6.0f"
		       "  keyed, SACK bits %6.0f\n", best[0], best[1], best[2]);
	}
	printf("    library, SipHash-2-4 of one 64 B header (this sanitizer build): %.1f ns\n",
	       cost_siphash(1 << 20));
}

/* ---- set-up --------------------------------------------------------------- */
static int suite_setup(void **state)
{
	LIBBPF_OPTS(bpf_map_create_opts, mo,
		    .map_flags = BPF_F_MMAPABLE | BPF_F_INNER_MAP);
	struct xr_cfg cfg = { .udp_port = PORT, .flags = XR_CFG_VERIFY_CSUM };
	uint32_t zero = 0, dom = DOM;

	(void)state;
	W.skel = xroce__open_and_load();
	if (!W.skel)
		return -1;
	W.prog = bpf_program__fd(W.skel->progs.xroce_xdp);
	W.ncpu = libbpf_num_possible_cpus();
	W.mem_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xrk_mem", 4, XR_PAGE_SIZE,
				  PAGES, &mo);
	W.evq_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "xrk_evq", 0, 0,
				  XR_EVQ_BYTES, NULL);
	if (W.mem_fd < 0 || W.evq_fd < 0)
		return -1;
	W.mem = mmap(NULL, PAGES * XR_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		     W.mem_fd, 0);
	W.rb = ring_buffer__new(W.evq_fd, on_event, NULL, NULL);
	if (W.mem == MAP_FAILED || !W.rb)
		return -1;
	if (bpf_map_update_elem(bpf_map__fd(W.skel->maps.xr_cfg), &zero, &cfg, BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(W.skel->maps.xr_mem), &dom, &W.mem_fd, BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(W.skel->maps.xr_evq), &dom, &W.evq_fd, BPF_ANY))
		return -1;
	return 0;
}

static int suite_teardown(void **state)
{
	(void)state;
	ring_buffer__free(W.rb);
	xroce__destroy(W.skel);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_mac),
		cmocka_unit_test(test_wrong_key_and_truncated),
		cmocka_unit_test(test_bit_flips),
		cmocka_unit_test(test_replay),
		cmocka_unit_test(test_epochs),
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_ack_sack_gap),
		cmocka_unit_test(test_shares),
		cmocka_unit_test(test_read_err),
		cmocka_unit_test(test_owner_mark),
		cmocka_unit_test(test_cost),
	};

	if (geteuid() != 0) {
		printf("bpf_keyed: not root, skipped\n");
		return 0;
	}
	return cmocka_run_group_tests(tests, suite_setup, suite_teardown);
}
