/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The rows of tests/bpf/bpf_xdp_table.c, one job: the world every scenario
 * starts from (domains, memory regions, connection, addresses) and the
 * scenarios themselves, each a list of frames with what must come of them.
 * Included once, by bpf_xdp_table.c, which explains the columns.
 */
#ifndef XR_TEST_XDP_ROWS_H
#define XR_TEST_XDP_ROWS_H

#include <stdint.h>
#include "contract/abi.h"
#include "frames.h"

/* ---- the world every scenario starts from ------------------------------ */

#define CONN 42u              /* the connection under test */
#define CONN_INIT 43u         /* a connection still in XR_CONN_INIT */
#define CONN_NONE 4242u       /* no such connection */
#define PEER_CONN 0x00c0ffeeu /* the peer's id; also the sender-side conn */
#define RX_TOKEN 0x1122334455667788ull
#define TX_TOKEN 0x8877665544332211ull
#define DOM 7u
#define DOM2 9u
#define PD 3u
#define DOM_PAGES 24
#define DOM2_PAGES 4
#define SPORT_LO 49152        /* peer's entropy ports: 49152..49167 */
#define SPORT_N 16
#define SPORT_LO_B 50000      /* ours, as the sender-side conn sees them */
#define PORT XR_DEFAULT_UDP_PORT
#define DSCP (0x0a << 2)      /* AF11: must survive into replies */

enum { MR_A, MR_RO, MR_PD, MR_DOM2, MR_STALE, MR_TOP, MR_BIG, MR_NONE, MR_N };

struct mrdef {
	uint32_t key;
	int dom_idx; /* 0 = DOM, 1 = DOM2 */
	struct xr_mr mr;
};

#define RW (XR_ACCESS_LOCAL_WRITE | XR_ACCESS_REMOTE_WRITE)
static const struct mrdef mrs[MR_N] = {
	/* 16 KiB over pages 1..4 of DOM */
	[MR_A] = { 0x0a0a0001, 0, { DOM, PD, RW, 0x0a0a0001, 0x7f1200000000ull,
				    0x4000, 0x1000 } },
	/* read-only for the peer */
	[MR_RO] = { 0x0a0a0002, 0,
		    { DOM, PD, XR_ACCESS_LOCAL_WRITE | XR_ACCESS_REMOTE_READ,
		      0x0a0a0002, 0x7f1300000000ull, 0x1000, 0x5000 } },
	/* another protection domain of the same domain */
	[MR_PD] = { 0x0a0a0003, 0, { DOM, PD + 1, RW, 0x0a0a0003,
				     0x7f1400000000ull, 0x1000, 0x6000 } },
	/* another domain (process) */
	[MR_DOM2] = { 0x0a0a0004, 1, { DOM2, PD, RW, 0x0a0a0004,
				       0x7f1500000000ull, 0x1000, 0 } },
	/* a stale entry: its own rkey field says it belongs to another key */
	[MR_STALE] = { 0x0a0a0005, 0, { DOM, PD, RW, 0x0a0a0055,
					0x7f1600000000ull, 0x1000, 0x7000 } },
	/* the top 32 KiB of the address space, over pages 16..23 */
	[MR_TOP] = { 0x0a0a0006, 0, { DOM, PD, RW, 0x0a0a0006,
				      0xffffffffffff8000ull, 0x8000, 0x10000 } },
	/* registered past the end of the domain's memory (0x18000 bytes) */
	[MR_BIG] = { 0x0a0a0007, 0, { DOM, PD, RW, 0x0a0a0007,
				      0x7f1700000000ull, 0x10000, 0x10000 } },
	/* never registered */
	[MR_NONE] = { 0x0bad0001, -1, { 0 } },
};

/* Peer (the data sender) and local addresses, per plane.  [2] = a
 * stranger, [3] = (IPv6) the IPv4-mapped form of the IPv4 peer. */
static const struct fr_ep peer4[4] = {
	{ { 2, 0, 0, 0, 0, 2 }, { 10, 0, 0, 2 }, 0 },
	{ { 2, 0, 0, 0, 1, 2 }, { 10, 0, 1, 2 }, 0 },
	{ { 2, 0, 0, 0, 0, 3 }, { 10, 0, 0, 3 }, 0 },
	{ { 2, 0, 0, 0, 0, 2 }, { 10, 0, 0, 2 }, 0 },
};
static const struct fr_ep local4[2] = {
	{ { 2, 0, 0, 0, 0, 1 }, { 10, 0, 0, 1 }, 0 },
	{ { 2, 0, 0, 0, 1, 1 }, { 10, 0, 1, 1 }, 0 },
};
static const struct fr_ep peer6[4] = {
	{ { 2, 0, 0, 0, 0, 2 }, { 0xfd, 0, [15] = 2 }, 0 },
	{ { 2, 0, 0, 0, 1, 2 }, { 0xfd, 0, 0, 1, [15] = 2 }, 0 },
	{ { 2, 0, 0, 0, 0, 3 }, { 0xfd, 0, [15] = 3 }, 0 },
	{ { 2, 0, 0, 0, 0, 2 }, { [10] = 0xff, [11] = 0xff, 10, 0, 0, 2 }, 0 },
};
static const struct fr_ep local6[2] = {
	{ { 2, 0, 0, 0, 0, 1 }, { 0xfd, 0, [15] = 1 }, 0 },
	{ { 2, 0, 0, 0, 1, 1 }, { 0xfd, 0, 0, 1, [15] = 1 }, 0 },
};

/* ---- tables -------------------------------------------------------------- */

enum kind {
	K_DATA = 0,
	K_ACK,         /* an ACK from the peer (we are the data sender) */
	K_NAK,
	K_PROBE,
	K_PROBE_REPLY,
	K_TCP,         /* TCP SYN to the data port */
	K_ARP,
	K_FRAG,        /* the data frame as an IP fragment */
	K_LOOP,        /* the previous step's XDP_TX output, fed back in to
			* the sender's side of the connection (PEER_CONN) */
	K_BIND,        /* no frame: bind a UDP socket to DOM's control port
			* on address .ca, as xr_ctrl_open does (AF_INET6,
			* dual stack, IPv4 as ::ffff:a.b.c.d) */
	K_UNBIND,      /* no frame: close it */
	K_WAIT,        /* no frame: sleep 3 ms (XR_ALIVE_CACHE_NS is 1 ms) */
	K_DOM,         /* no frame: rewrite DOM's xr_domains entry with
			* ctrl_addr .ca and ctrl_port (0 if .port0), which
			* also clears its liveness cache (alive_until_ns) */
	K_FILL,        /* queue rep ACK events and leave them in the ring */
	K_CTRL,        /* a control message to the data port: BIND (.op:
			* another op) from the peer's control port, naming
			* connection .conn, from peer conn PEER_CONN */
};

enum trunc {
	TR_NONE = 0,
	TR_ETH,        /* the Ethernet header only */
	TR_IP,         /* cut in the IP header */
	TR_UDP_HALF,   /* cut in the UDP header */
	TR_UDP,        /* the UDP header and nothing after it */
	TR_X1,         /* one byte of xroce header */
	TR_HDR_M1,     /* xroce header minus its last byte */
	TR_PAYLOAD,    /* cut in the payload */
};

enum src { SRC_PEER = 0, SRC_STRANGER = 2, SRC_MAPPED = 3 };
/* Control addresses (K_BIND, K_DOM), of the frames' family unless said.
 * Every one of them is configured in the scenario's private netns. */
enum caddr {
	CA_ANY = 0,    /* the wildcard (ctrl_addr all zero) */
	CA_PLANE0,     /* our address on plane 0 */
	CA_PLANE1,     /* our address on plane 1 */
	CA_LO,         /* 127.0.0.1 / ::1 */
	CA_LO_X,       /* the other family's: ::1 for IPv4 frames,
			* ::ffff:127.0.0.1 for IPv6 frames */
};
enum csmode { CS_OK = 0, CS_FLIP, CS_ZERO };
enum evkind { EV_NONE = 0, EV_RECV, EV_ACK, EV_PROBE, EV_BIND };

struct ack_in {
	uint32_t cack, ack_psn, ts_echo, rate, ce, rx, csn_cum, nak_csn;
	uint64_t sack[4];
	uint8_t reason, flags;
};

/* The path's receive window after the step (relative PSN / CSN). */
struct want_win {
	int set;
	uint32_t cack, csn, rx, ce;
	uint64_t sack[4];
};

#define OPC(x) (0x100 | (x))  /* an explicit opcode, 0 included */
#define VT(x) (0x100 | (x))   /* an explicit ver_type byte */

struct step {
	const char *what;
	/* ---- input ---- */
	uint8_t kind, path, flags, plane, src, trunc, csum, ecn;
	uint16_t op, vt, sport, dport;
	uint32_t conn;          /* 0 = CONN */
	int bad_token;
	uint32_t psn, base, csn; /* relative to the scenario's start */
	uint8_t rk;             /* region: rkey and iova raddr is relative to */
	uint32_t roff;
	int abs;                /* raddr is absolute (below) */
	uint64_t raddr;
	uint32_t msg_id, msg_len, msg_off, imm;
	uint32_t plen;
	uint8_t seed;
	int corrupt;            /* 1 + payload byte flipped after the checksum */
	int junk;               /* padding bytes after the datagram */
	int udp_len_delta;      /* added to the UDP length field afterwards */
	struct ack_in a;        /* K_ACK / K_NAK / K_PROBE_REPLY (rate) */
	uint32_t seq;           /* K_PROBE / K_PROBE_REPLY */
	int rep;                /* run rep times, psn/csn/roff/msg_off/seed
				 * advancing; expectations are the total */
	uint8_t ca;             /* K_BIND / K_DOM: enum caddr */
	int port0;              /* K_DOM: ctrl_port 0 (no liveness check) */
	/* ---- expected ---- */
	int v;                  /* XDP verdict */
	uint8_t rt, rfl, rreason; /* reply type, ACK flags, NAK reason */
	struct want_win w;
	int place;
	int64_t st[XR_STAT_MAX];
	int ev;
	uint32_t recv_end;      /* EV_RECV: raddr_end - iova of rk */
};

#define F4 1
#define F6 2
#define ST_N 1 /* start PSN 1000, CSN 5000 */
#define ST_W 2 /* start PSN 0xfffffffe, CSN 0xfffffffc */

struct scen {
	const char *name;
	unsigned fams, starts;
	uint32_t conn_flags;
	int conn_v4;            /* the connection is IPv4 whatever the frames */
	const struct step *steps;
	size_t n;
	int ctrl;               /* DOM gets a control port (liveness check);
				 * the scenario runs in a private netns with
				 * our plane addresses configured */
};

/* Shorthands for rows. */
#define ST(...) .st = { __VA_ARGS__ }
#define S_DATA(n) [XR_STAT_RX_DATA] = (n)
#define S_BYTES(n) [XR_STAT_RX_BYTES] = (n)
#define S_TXA [XR_STAT_TX_ACK] = 1
#define S_TXN [XR_STAT_TX_NAK] = 1
#define S_DUP [XR_STAT_RX_DUP] = 1
#define S_DONE [XR_STAT_MSG_DONE] = 1
#define S_(x) [XR_STAT_##x] = 1
#define W(ck, cs, r, ...) \
	.w = { .set = 1, .cack = (ck), .csn = (cs), .rx = (r), __VA_ARGS__ }
#define ACK(fl) .v = XDP_TX, .rt = XR_T_ACK, .rfl = (fl)
#define NAK(r) .v = XDP_TX, .rt = XR_T_NAK, .rreason = (r)
#define DROP .v = XDP_DROP
#define PASS .v = XDP_PASS, ST(S_(PASS))
#define PKT(p, c, ro, n) .psn = (p), .csn = (c), .roff = (ro), .plen = (n)
#define MSG(id, len, off) .msg_id = (id), .msg_len = (len), .msg_off = (off)
#define BIGMSG(id, off) MSG(id, 0x100000, off) /* never completes here */
#define RECV(end) .ev = EV_RECV, .recv_end = (end)
#define X(n) (sizeof(n) / sizeof((n)[0]))

/* A one-packet message at the start of the window (hostile rows). */
#define H MSG(1, 64, 0), PKT(0, 0, 0x100, 64)

/* In order, completion, placement details. */
static const struct step t_inorder[] = {
	{ "first of 3 packets, no AR: consumed, placed", .op = OPC(XR_OP_WRITE_IMM),
	  MSG(100, 3000, 0), PKT(0, 0, 0x100, 1000),
	  DROP, W(1, 1, 1), .place = 1, ST(S_DATA(1), S_BYTES(1000)) },
	{ "second with AR: ACK", .op = OPC(XR_OP_WRITE_IMM), .flags = XR_DF_AR,
	  MSG(100, 3000, 1000), PKT(1, 1, 0x4e8, 1000),
	  ACK(0), W(2, 2, 2), .place = 1, ST(S_DATA(1), S_BYTES(1000), S_TXA) },
	{ "last completes WRITE_IMM: ACK + one RECV", .op = OPC(XR_OP_WRITE_IMM),
	  .flags = XR_DF_LAST, MSG(100, 3000, 2000), PKT(2, 2, 0x8d0, 1000),
	  ACK(0), W(3, 3, 3), .place = 1,
	  ST(S_DATA(1), S_BYTES(1000), S_DONE, S_TXA), RECV(0xcb8) },
	{ "plain WRITE completes: reported too (abi.h: XDP reports every "
	  "completed message)", .flags = XR_DF_LAST, MSG(101, 500, 0),
	  PKT(3, 3, 0x1000, 500), ACK(0), W(4, 4, 4), .place = 1,
	  ST(S_DATA(1), S_BYTES(500), S_DONE, S_TXA), RECV(0x11f4) },
	{ "1400 bytes across a 4 KiB page boundary", .op = OPC(XR_OP_WRITE_IMM),
	  .flags = XR_DF_LAST, MSG(102, 1400, 0), PKT(4, 4, 0x2d44, 1400),
	  ACK(0), W(5, 5, 5), .place = 1,
	  ST(S_DATA(1), S_BYTES(1400), S_DONE, S_TXA), RECV(0x32bc) },
	{ "zero-length WRITE_IMM at the region end completes",
	  .op = OPC(XR_OP_WRITE_IMM), .flags = XR_DF_LAST, MSG(103, 0, 0),
	  PKT(5, 5, 0x4000, 0), ACK(0), W(6, 6, 6),
	  ST(S_DATA(1), S_DONE, S_TXA), RECV(0x4000) },
	{ "its duplicate: DUP ACK, no second RECV", .op = OPC(XR_OP_WRITE_IMM),
	  .flags = XR_DF_LAST, MSG(103, 0, 0), PKT(5, 5, 0x4000, 0),
	  ACK(XR_AF_DUP), W(6, 6, 7), ST(S_DATA(1), S_DUP, S_TXA) },
	{ "odd length at an odd address", .flags = XR_DF_LAST,
	  MSG(104, 1397, 0), PKT(6, 6, 0x2001, 1397),
	  ACK(0), W(7, 7, 8), .place = 1,
	  ST(S_DATA(1), S_BYTES(1397), S_DONE, S_TXA), RECV(0x2576) },
	{ "one byte, the region's last", .flags = XR_DF_LAST, MSG(105, 1, 0),
	  PKT(7, 7, 0x3fff, 1), ACK(0), W(8, 8, 9), .place = 1,
	  ST(S_DATA(1), S_BYTES(1), S_DONE, S_TXA), RECV(0x4000) },
	{ "padding after the datagram is not placed", .junk = 6,
	  .op = OPC(XR_OP_WRITE_IMM), .flags = XR_DF_LAST, MSG(106, 64, 0),
	  PKT(8, 8, 0x2800, 64), ACK(0), W(9, 9, 10), .place = 1,
	  ST(S_DATA(1), S_BYTES(64), S_DONE, S_TXA), RECV(0x2840) },
	{ "3000 bytes across a page boundary", .flags = XR_DF_LAST,
	  MSG(107, 3000, 0), PKT(9, 9, 0x1800, 3000),
	  ACK(0), W(10, 10, 11), .place = 1,
	  ST(S_DATA(1), S_BYTES(3000), S_DONE, S_TXA), RECV(0x23b8) },
};

/* XR_CONN_F_NOTIFY_WRITE is the library's business (abi.h): XDP reports
 * every completed message the same with or without it. */
static const struct step t_notify[] = {
	{ "WRITE 1/2", MSG(200, 2000, 0), PKT(0, 0, 0x200, 1000),
	  DROP, W(1, 1, 1), .place = 1, ST(S_DATA(1), S_BYTES(1000)) },
	{ "WRITE 2/2 completes: RECV", .flags = XR_DF_LAST,
	  MSG(200, 2000, 1000), PKT(1, 1, 0x5e8, 1000),
	  ACK(0), W(2, 2, 2), .place = 1,
	  ST(S_DATA(1), S_BYTES(1000), S_DONE, S_TXA), RECV(0x9d0) },
	{ "WRITE_IMM still reported", .op = OPC(XR_OP_WRITE_IMM),
	  .flags = XR_DF_LAST, MSG(201, 10, 0), PKT(2, 2, 0x1000, 10),
	  ACK(0), W(3, 3, 3), .place = 1,
	  ST(S_DATA(1), S_BYTES(10), S_DONE, S_TXA), RECV(0x100a) },
};

/* A message whose packets arrive out of order completes on its last byte,
 * whichever packet that is; raddr_end is the message's end. */
static const struct step t_ooo_msg[] = {
	{ "highest offset first (gap): ACK, no RECV", .op = OPC(XR_OP_WRITE_IMM),
	  .flags = XR_DF_LAST, MSG(300, 3000, 2000), PKT(2, 2, 0x8d0, 1000),
	  ACK(0), W(0, 0, 1, .sack = { 0x2 }), .place = 1,
	  ST(S_DATA(1), S_BYTES(1000), S_TXA) },
	{ "first", .op = OPC(XR_OP_WRITE_IMM), MSG(300, 3000, 0),
	  PKT(0, 0, 0x100, 1000), ACK(0), W(1, 1, 2, .sack = { 0x1 }),
	  .place = 1, ST(S_DATA(1), S_BYTES(1000), S_TXA) },
	{ "middle completes it: one RECV", .op = OPC(XR_OP_WRITE_IMM),
	  MSG(300, 3000, 1000), PKT(1, 1, 0x4e8, 1000),
	  ACK(0), W(3, 3, 3), .place = 1,
	  ST(S_DATA(1), S_BYTES(1000), S_DONE, S_TXA), RECV(0xcb8) },
};

/* Out of order and SACK, the window's edges, the CSN window. */
static const struct step t_sack[] = {
	{ "in order, no AR", BIGMSG(500, 0), PKT(0, 0, 0x000, 64),
	  DROP, W(1, 1, 1), .place = 1, ST(S_DATA(1), S_BYTES(64)) },
	{ "gap: ACK without AR, SACK bit 0", BIGMSG(500, 128),
	  PKT(2, 2, 0x040, 64), ACK(0), W(1, 1, 2, .sack = { 0x1 }),
	  .place = 1, ST(S_DATA(1), S_BYTES(64), S_TXA) },
	{ "SACK bit 3", BIGMSG(500, 320), PKT(5, 5, 0x080, 64),
	  ACK(0), W(1, 1, 3, .sack = { 0x9 }), .place = 1,
	  ST(S_DATA(1), S_BYTES(64), S_TXA) },
	{ "SACK bit 69 (word 1)", BIGMSG(500, 71 * 64), PKT(71, 71, 0x0c0, 64),
	  ACK(0), W(1, 1, 4, .sack = { 0x9, 0x20 }), .place = 1,
	  ST(S_DATA(1), S_BYTES(64), S_TXA) },
	{ "SACK bit 255: the window's last PSN", BIGMSG(500, 257 * 64),
	  PKT(257, 257, 0x100, 64), ACK(0),
	  W(1, 1, 5, .sack = { 0x9, 0x20, 0, 1ull << 63 }), .place = 1,
	  ST(S_DATA(1), S_BYTES(64), S_TXA) },
	{ "PSN one beyond the window: dropped", BIGMSG(500, 258 * 64),
	  PKT(258, 258, 0x140, 64), DROP, ST(S_(DROP_WINDOW)) },
	{ "hole filled: cack jumps over 2", BIGMSG(500, 64),
	  PKT(1, 1, 0x180, 64), ACK(0),
	  W(3, 3, 6, .sack = { 0x2, 0x8, 0, 1ull << 61 }), .place = 1,
	  ST(S_DATA(1), S_BYTES(64), S_TXA) },
	{ "next", BIGMSG(500, 192), PKT(3, 3, 0x1c0, 64), ACK(0),
	  W(4, 4, 7, .sack = { 0x1, 0x4, 0, 1ull << 60 }), .place = 1,
	  ST(S_DATA(1), S_BYTES(64), S_TXA) },
	{ "next, cack over 5", BIGMSG(500, 256), PKT(4, 4, 0x200, 64), ACK(0),
	  W(6, 6, 8, .sack = { 0, 0x1, 0, 1ull << 58 }), .place = 1,
	  ST(S_DATA(1), S_BYTES(64), S_TXA) },
	{ "CSN one beyond the CSN window: dropped", BIGMSG(500, 384),
	  PKT(6, 6 + XR_CSN_WIN, 0x240, 64), DROP, ST(S_(DROP_WINDOW)) },
	{ "CSN at the window's last slot (ring index reused): placed",
	  BIGMSG(500, 384), PKT(6, 6 + XR_CSN_WIN - 1, 0x280, 64), ACK(0),
	  W(7, 6, 9, .sack = { 1ull << 63, 0, 0, 1ull << 57 }), .place = 1,
	  ST(S_DATA(1), S_BYTES(64), S_TXA) },
	{ "that CSN again on a new PSN: DUP, not placed", .seed = 99,
	  BIGMSG(500, 384), PKT(7, 6 + XR_CSN_WIN - 1, 0x280, 64),
	  ACK(XR_AF_DUP), W(8, 6, 10, .sack = { 1ull << 62, 0, 0, 1ull << 56 }),
	  ST(S_DATA(1), S_DUP, S_TXA) },
};

/* Duplicates: acknowledged with DUP, never placed again (the duplicate's
 * payload differs, and memory must still hold the first). */
static const struct step t_dup[] = {
	{ "original, AR", .flags = XR_DF_AR, .seed = 1, BIGMSG(600, 0),
	  PKT(0, 0, 0x200, 256), ACK(0), W(1, 1, 1), .place = 1,
	  ST(S_DATA(1), S_BYTES(256), S_TXA) },
	{ "duplicate with other bytes, AR", .flags = XR_DF_AR, .seed = 2,
	  BIGMSG(600, 0), PKT(0, 0, 0x200, 256), ACK(XR_AF_DUP), W(1, 1, 2),
	  ST(S_DATA(1), S_DUP, S_TXA) },
	{ "duplicate without AR is acknowledged too", .seed = 3, BIGMSG(600, 0),
	  PKT(0, 0, 0x200, 256), ACK(XR_AF_DUP), W(1, 1, 3),
	  ST(S_DATA(1), S_DUP, S_TXA) },
	{ "out of order original", .seed = 4, BIGMSG(600, 512),
	  PKT(2, 2, 0x400, 256), ACK(0), W(1, 1, 4, .sack = { 1 }), .place = 1,
	  ST(S_DATA(1), S_BYTES(256), S_TXA) },
	{ "its duplicate (PSN in the SACK bitmap)", .seed = 5, BIGMSG(600, 512),
	  PKT(2, 2, 0x400, 256), ACK(XR_AF_DUP), W(1, 1, 5, .sack = { 1 }),
	  ST(S_DATA(1), S_DUP, S_TXA) },
	{ "same CSN on a new PSN of the same path", .seed = 6, BIGMSG(600, 512),
	  PKT(3, 2, 0x400, 256), ACK(XR_AF_DUP), W(1, 1, 6, .sack = { 3 }),
	  ST(S_DATA(1), S_DUP, S_TXA) },
};

/* Retransmission on another path (plane 1, path 3): same CSN, new path and
 * PSN; placed once; both paths' windows advance. */
static const struct step t_retx[] = {
	{ "path 0 PSN 0", BIGMSG(700, 0), PKT(0, 0, 0x400, 500),
	  DROP, W(1, 1, 1), .place = 1, ST(S_DATA(1), S_BYTES(500)) },
	{ "path 0 PSN 2 (PSN 1 lost): SACK", BIGMSG(700, 1000),
	  PKT(2, 2, 0x400 + 1000, 500), ACK(0), W(1, 1, 2, .sack = { 1 }),
	  .place = 1, ST(S_DATA(1), S_BYTES(500), S_TXA) },
	{ "CSN 1 resent on path 3 / plane 1: placed", .path = 3, .plane = 1,
	  .flags = XR_DF_AR | XR_DF_RETX, BIGMSG(700, 500),
	  PKT(0, 1, 0x400 + 500, 500), ACK(0), W(1, 3, 1), .place = 1,
	  ST(S_DATA(1), S_BYTES(500), S_TXA) },
	{ "path 0 moves its base over the lost PSN", .base = 2, BIGMSG(700, 1500),
	  PKT(3, 3, 0x400 + 1500, 500), DROP, W(4, 4, 3), .place = 1,
	  ST(S_DATA(1), S_BYTES(500)) },
	{ "the lost original arrives late: DUP, not placed", .seed = 77,
	  .base = 2, BIGMSG(700, 500), PKT(1, 1, 0x400 + 500, 500),
	  ACK(XR_AF_DUP), W(4, 4, 4), ST(S_DATA(1), S_DUP, S_TXA) },
	{ "CSN 3 resent on path 3 though it arrived: DUP, path 3 advances",
	  .path = 3, .plane = 1, .flags = XR_DF_RETX, .seed = 78,
	  BIGMSG(700, 1500), PKT(1, 3, 0x400 + 1500, 500), ACK(XR_AF_DUP),
	  W(2, 4, 2), ST(S_DATA(1), S_DUP, S_TXA) },
};

/* psn_base: the sender's oldest PSN of interest closes holes. */
static const struct step t_base[] = {
	{ "PSN 3 (0..2 missing)", BIGMSG(800, 300), PKT(3, 3, 0x100 + 300, 100),
	  ACK(0), W(0, 0, 1, .sack = { 0x4 }), .place = 1,
	  ST(S_DATA(1), S_BYTES(100), S_TXA) },
	{ "PSN 4", BIGMSG(800, 400), PKT(4, 4, 0x100 + 400, 100),
	  ACK(0), W(0, 0, 2, .sack = { 0xc }), .place = 1,
	  ST(S_DATA(1), S_BYTES(100), S_TXA) },
	{ "PSN 5 with base 3: hole closed, cack 6", .flags = XR_DF_AR,
	  .base = 3, BIGMSG(800, 500), PKT(5, 5, 0x100 + 500, 100),
	  ACK(0), W(6, 0, 3), .place = 1, ST(S_DATA(1), S_BYTES(100), S_TXA) },
	{ "late original below cack, its CSN new: placed, ACK without DUP",
	  .base = 3, BIGMSG(800, 100), PKT(1, 1, 0x100 + 100, 100),
	  ACK(0), W(6, 0, 4), .place = 1, ST(S_DATA(1), S_BYTES(100), S_TXA) },
	{ "base far beyond the bitmap", .flags = XR_DF_AR, .base = 400,
	  BIGMSG(800, 600), PKT(400, 6, 0x100 + 600, 100),
	  ACK(0), W(401, 0, 5), .place = 1, ST(S_DATA(1), S_BYTES(100), S_TXA) },
	{ "base behind cack is ignored", .base = 10, BIGMSG(800, 700),
	  PKT(401, 7, 0x100 + 700, 100), DROP, W(402, 0, 6), .place = 1,
	  ST(S_DATA(1), S_BYTES(100)) },
	{ "base not arrived: cack moves to it and waits", .base = 403,
	  BIGMSG(800, 800), PKT(405, 8, 0x100 + 800, 100),
	  ACK(0), W(403, 0, 7, .sack = { 0x2 }), .place = 1,
	  ST(S_DATA(1), S_BYTES(100), S_TXA) },
	{ "CSN 0 resent on path 1", .path = 1, BIGMSG(800, 0),
	  PKT(0, 0, 0x100, 100), DROP, W(1, 2, 1), .place = 1,
	  ST(S_DATA(1), S_BYTES(100)) },
	{ "CSN 1 resent on path 1: the late original had it, DUP", .path = 1,
	  .seed = 90, BIGMSG(800, 100), PKT(1, 1, 0x100 + 100, 100),
	  ACK(XR_AF_DUP), W(2, 2, 2), ST(S_DATA(1), S_DUP, S_TXA) },
	{ "CSN 2 resent on path 1: csn_cum jumps to 9", .path = 1,
	  .flags = XR_DF_AR, BIGMSG(800, 200), PKT(2, 2, 0x100 + 200, 100),
	  ACK(0), W(3, 9, 3), .place = 1, ST(S_DATA(1), S_BYTES(100), S_TXA) },
};

/* ECN: a CE mark is echoed at once; replies carry no ECN. */
static const struct step t_ce[] = {
	{ "CE in order, no AR: ACK with ECE", .ecn = 3, BIGMSG(900, 0),
	  PKT(0, 0, 0x000, 64), ACK(XR_AF_ECE), W(1, 1, 1, .ce = 1),
	  .place = 1, ST(S_DATA(1), S_BYTES(64), S_TXA) },
	{ "ECT(0) in order: consumed", .ecn = 2, BIGMSG(900, 64),
	  PKT(1, 1, 0x040, 64), DROP, W(2, 2, 2, .ce = 1), .place = 1,
	  ST(S_DATA(1), S_BYTES(64)) },
	{ "ECT(1) with AR: ACK without ECE", .ecn = 1, .flags = XR_DF_AR,
	  BIGMSG(900, 128), PKT(2, 2, 0x080, 64), ACK(0), W(3, 3, 3, .ce = 1),
	  .place = 1, ST(S_DATA(1), S_BYTES(64), S_TXA) },
	{ "CE duplicate: ECE|DUP", .ecn = 3, .seed = 50, BIGMSG(900, 128),
	  PKT(2, 2, 0x080, 64), ACK(XR_AF_ECE | XR_AF_DUP),
	  W(3, 3, 4, .ce = 2), ST(S_DATA(1), S_DUP, S_TXA) },
};

/* ACKs and NAKs arriving at the data sender. */
static const struct ack_in ack1 = {
	.cack = 0x01020304, .ack_psn = 0x01020300, .ts_echo = 0xa1b2c3d4,
	.rate = 10000, .ce = 5, .rx = 77, .csn_cum = 0x0a0b0c0d,
	.sack = { 0x8000000000000001ull, 0x0102030405060708ull, 0,
		  0xfedcba9876543210ull },
	.flags = XR_AF_ECE | XR_AF_DUP,
};
/* Replies travel from the peer's data port to one of our entropy ports
 * (the data frame turned around), so that is where the sender's side looks
 * for them; whatever there is not an xroce reply for one of our
 * connections passes untouched (another application may use the port). */
static const struct step t_ack_rx[] = {
	{ "ACK: dropped, one ACK event in host order", .kind = K_ACK,
	  .path = 3, .a = ack1, DROP, ST(S_(RX_ACK)), .ev = EV_ACK },
	{ "NAK: one NAK event", .kind = K_NAK, .path = 1,
	  .a = { .cack = 7, .ack_psn = 6, .ts_echo = 1, .nak_csn = 0x5000,
		 .csn_cum = 0x4fff, .reason = XR_NAK_BOUNDS },
	  DROP, ST(S_(RX_NAK)), .ev = EV_ACK },
	{ "ACK with a wrong token", .kind = K_ACK, .a = ack1, .bad_token = 1,
	  DROP, ST(S_(DROP_TOKEN)) },
	{ "ACK with a bad checksum", .kind = K_ACK, .a = ack1, .csum = CS_FLIP,
	  DROP, ST(S_(DROP_CSUM)) },
	{ "ACK from a stranger", .kind = K_ACK, .a = ack1, .src = SRC_STRANGER,
	  DROP, ST(S_(DROP_PEER)) },
	{ "ACK header cut short", .kind = K_ACK, .a = ack1, .trunc = TR_HDR_M1,
	  DROP, ST(S_(DROP_TRUNC)) },
	{ "ACK's UDP length beyond the frame", .kind = K_ACK, .a = ack1,
	  .udp_len_delta = 1, DROP, ST(S_(DROP_TRUNC)) },
	{ "ACK to a connection not in RTS", .kind = K_ACK, .a = ack1,
	  .conn = CONN_INIT, DROP, ST(S_(DROP_CONN_STATE)) },
	{ "ACK to no connection of ours: passed", .kind = K_ACK, .a = ack1,
	  .conn = CONN_NONE, PASS },
	{ "not xroce, from the data port: passed", .kind = K_ACK, .a = ack1,
	  .vt = VT(0x00), PASS },
	{ "other version, from the data port: passed", .kind = K_ACK,
	  .a = ack1, .vt = VT(0x20 | XR_T_ACK), PASS },
	{ "data type from the data port to an entropy port: passed",
	  .kind = K_ACK, .a = ack1, .vt = VT(XR_VER_TYPE(XR_T_DATA)), PASS },
	{ "ACK sent to the data port: not accepted there", .kind = K_ACK,
	  .a = ack1, .sport = SPORT_LO, .dport = PORT, DROP,
	  ST(S_(DROP_VERSION)) },
	{ "ACK from the data port but a wrong token: dropped", .kind = K_NAK,
	  .a = ack1, .bad_token = 1, DROP, ST(S_(DROP_TOKEN)) },
};

/* The receiver's own replies, fed back to the sender's side: what the
 * program sends must be what the program accepts. */
static const struct step t_loop[] = {
	{ "data with AR: ACK", .flags = XR_DF_AR, MSG(1, 64, 0),
	  PKT(0, 0, 0x100, 64), ACK(0), W(1, 1, 1), .place = 1,
	  ST(S_DATA(1), S_BYTES(64), S_DONE, S_TXA), RECV(0x140) },
	{ "that ACK at the sender: one ACK event", .kind = K_LOOP,
	  DROP, ST(S_(RX_ACK)), .ev = EV_ACK },
	{ "probe on path 2: reply", .kind = K_PROBE, .path = 2,
	  .seq = 0x51, .v = XDP_TX, .rt = XR_T_PROBE_REPLY, ST(S_(PROBE)) },
	{ "that reply at the prober: one PROBE_REPLY event", .kind = K_LOOP,
	  DROP, ST(S_(RX_ACK)), .ev = EV_PROBE },
};

static const struct step t_probe[] = {
	{ "probe: answered in place", .kind = K_PROBE, .path = 5,
	  .seq = 0x11223344, .v = XDP_TX, .rt = XR_T_PROBE_REPLY,
	  ST(S_(PROBE)) },
	{ "probe reply: one event", .kind = K_PROBE_REPLY, .path = 5,
	  .seq = 0x01020304, .a = { .rate = 1234 }, DROP, ST(S_(RX_ACK)),
	  .ev = EV_PROBE },
	{ "probe with a wrong token", .kind = K_PROBE, .bad_token = 1,
	  DROP, ST(S_(DROP_TOKEN)) },
	{ "probe cut short", .kind = K_PROBE, .trunc = TR_HDR_M1,
	  DROP, ST(S_(DROP_TRUNC)) },
	{ "probe with a bad checksum", .kind = K_PROBE, .csum = CS_FLIP,
	  DROP, ST(S_(DROP_CSUM)) },
	{ "probe from a stranger", .kind = K_PROBE, .src = SRC_STRANGER,
	  DROP, ST(S_(DROP_PEER)) },
	{ "probe from outside the peer's ports", .kind = K_PROBE,
	  .sport = SPORT_LO + SPORT_N, DROP, ST(S_(DROP_PEER)) },
	{ "probe to an unknown connection", .kind = K_PROBE, .conn = CONN_NONE,
	  DROP, ST(S_(DROP_NO_CONN)) },
	{ "probe reply to no connection of ours: passed", .kind = K_PROBE_REPLY,
	  .conn = CONN_NONE, PASS },
	{ "probe reply with a wrong token", .kind = K_PROBE_REPLY,
	  .bad_token = 1, DROP, ST(S_(DROP_TOKEN)) },
	{ "probe reply cut short", .kind = K_PROBE_REPLY, .trunc = TR_HDR_M1,
	  DROP, ST(S_(DROP_TRUNC)) },
};

/* Liveness: with a control port set, a domain takes data only while a UDP
 * socket is bound to that port on the domain's ctrl_addr (all zero: the
 * wildcard, and then the lookup uses the packet's own destination
 * address); the answer is cached 1 ms (alive_until_ns), which a K_DOM row
 * clears.  Sockets are bound as xr_ctrl_open binds them, to addresses that
 * are configured in the scenario's netns (no IP_FREEBIND).  A dead domain's
 * data is dropped before it touches memory or the receive state (both
 * checked after every row). */
#define ALIVE(id, p, c, ro) MSG(id, 64, 0), PKT(p, c, ro, 64)
#define ALIVE_OK(cack, csn, end) ACK(0), W(cack, csn, cack), .place = 1, \
	ST(S_DATA(1), S_BYTES(64), S_DONE, S_TXA), RECV(end)
#define DEAD DROP, ST(S_(DROP_DEAD))
static const struct step t_alive[] = {
	{ "no socket on the control port: dropped", H, DEAD },
	{ "probe: dropped too", .kind = K_PROBE, DEAD },
	{ "bind the control port to the wildcard", .kind = K_BIND,
	  .ca = CA_ANY },
	{ "data to plane 0: accepted", ALIVE(1, 0, 0, 0x100),
	  ALIVE_OK(1, 1, 0x140) },
	{ "probe: answered", .kind = K_PROBE, .v = XDP_TX,
	  .rt = XR_T_PROBE_REPLY, ST(S_(PROBE)) },
	{ "domain rewritten: cache cleared", .kind = K_DOM, .ca = CA_ANY },
	{ "data to plane 1: the wildcard socket covers it, accepted",
	  .plane = 1, .path = 1, ALIVE(2, 0, 1, 0x200),
	  ALIVE_OK(1, 2, 0x240) },
	{ "close the socket", .kind = K_UNBIND },
	{ "wait out the 1 ms cache", .kind = K_WAIT },
	{ "dropped again", ALIVE(3, 1, 2, 0x300), DEAD },
	{ "bind to plane 0's address only", .kind = K_BIND, .ca = CA_PLANE0 },
	{ "domain says wildcard: data to plane 1 finds no socket, dropped",
	  .plane = 1, .path = 1, ALIVE(3, 1, 2, 0x300), DEAD },
	{ "domain says wildcard: data to plane 0 finds it, accepted",
	  ALIVE(3, 1, 2, 0x300), ALIVE_OK(2, 3, 0x340) },
	{ "domain: ctrl_addr = plane 0's address", .kind = K_DOM,
	  .ca = CA_PLANE0 },
	{ "data to plane 1: the owner is alive, accepted", .plane = 1,
	  .path = 1, ALIVE(4, 1, 3, 0x400), ALIVE_OK(2, 4, 0x440) },
	{ "close the socket", .kind = K_UNBIND },
	{ "wait out the 1 ms cache", .kind = K_WAIT },
	{ "plane 1: dropped", .plane = 1, .path = 1, ALIVE(5, 2, 4, 0x500),
	  DEAD },
	{ "plane 0: dropped", ALIVE(5, 2, 4, 0x500), DEAD },
	{ "bind to the loopback address", .kind = K_BIND, .ca = CA_LO },
	{ "domain still says plane 0: dropped", ALIVE(5, 2, 4, 0x500), DEAD },
	{ "probe: dropped", .kind = K_PROBE, DEAD },
	{ "domain: ctrl_addr = the loopback address", .kind = K_DOM,
	  .ca = CA_LO },
	{ "data to plane 0: accepted", ALIVE(5, 2, 4, 0x500),
	  ALIVE_OK(3, 5, 0x540) },
	{ "domain rewritten: cache cleared", .kind = K_DOM, .ca = CA_LO },
	{ "data to plane 1: accepted", .plane = 1, .path = 1,
	  ALIVE(6, 2, 5, 0x600), ALIVE_OK(3, 6, 0x640) },
	{ "domain: ctrl_addr = plane 1's address (not bound there)",
	  .kind = K_DOM, .ca = CA_PLANE1 },
	{ "dropped", ALIVE(7, 3, 6, 0x700), DEAD },
	{ "domain: ctrl_addr = the loopback address", .kind = K_DOM,
	  .ca = CA_LO },
	{ "close the socket", .kind = K_UNBIND },
	{ "wait out the 1 ms cache", .kind = K_WAIT },
	{ "the socket is gone: dropped", ALIVE(7, 3, 6, 0x700), DEAD },
	/* The control socket's family need not be the data's: an IPv4
	 * ctrl_addr is looked up as IPv4 for IPv6 data, and the reverse. */
	{ "bind to the other family's loopback address", .kind = K_BIND,
	  .ca = CA_LO_X },
	{ "domain: ctrl_addr = that address", .kind = K_DOM, .ca = CA_LO_X },
	{ "data: accepted", ALIVE(7, 3, 6, 0x700), ALIVE_OK(4, 7, 0x740) },
	{ "close the socket", .kind = K_UNBIND },
	{ "wait out the 1 ms cache", .kind = K_WAIT },
	{ "the socket is gone: dropped", ALIVE(8, 4, 7, 0x800), DEAD },
	{ "domain: control port 0 (no liveness check)", .kind = K_DOM,
	  .port0 = 1 },
	{ "no socket, no check: accepted", ALIVE(8, 4, 7, 0x800),
	  ALIVE_OK(5, 8, 0x840) },
	{ "probe: answered", .kind = K_PROBE, .v = XDP_TX,
	  .rt = XR_T_PROBE_REPLY, ST(S_(PROBE)) },
};
#undef ALIVE
#undef ALIVE_OK
#undef DEAD

/* Backpressure: while the event ring has less than XR_EVQ_RESERVE free,
 * data is refused unacknowledged (so it is resent later) rather than risk
 * losing a completion.  41000 ACK events of 96 bytes leave less than that
 * free in the 4 MiB ring. */
static const struct step t_evq[] = {
	{ "fill the ring with 41000 ACK events", .kind = K_FILL, .rep = 41000 },
	{ "data: refused, not acknowledged", .flags = XR_DF_AR, H, DROP,
	  ST(S_(DROP_EVQ_FULL)) },
	{ "ring drained: the same data accepted", .flags = XR_DF_AR, H, ACK(0),
	  W(1, 1, 1), .place = 1, ST(S_DATA(1), S_BYTES(64), S_DONE, S_TXA),
	  RECV(0x140) },
};

/* A peer's half of xroce_qp_bind (XR_CTRL_BIND) to the data port: for a
 * connection in INIT or RTS it becomes one record in the owning domain's
 * ring, carrying the packet's source address and port and the message
 * as received (the library, not XDP, judges the sender: a stranger's is
 * handed over too).  Anything else is dropped and counted; no memory and
 * no receive window changes. */
#define BIND .kind = K_CTRL, .sport = XR_DEFAULT_CTRL_PORT
static const struct step t_bind[] = {
	{ "BIND for a connection in RTS: one record", BIND, DROP,
	  ST(S_(RX_BIND)), .ev = EV_BIND },
	{ "BIND for a connection in INIT: one record", BIND, .conn = CONN_INIT,
	  DROP, ST(S_(RX_BIND)), .ev = EV_BIND },
	{ "BIND from a stranger: recorded with its source", BIND,
	  .src = SRC_STRANGER, DROP, ST(S_(RX_BIND)), .ev = EV_BIND },
	{ "BIND with padding after the datagram: one record", BIND, .junk = 9,
	  DROP, ST(S_(RX_BIND)), .ev = EV_BIND },
	{ "BIND for no connection", BIND, .conn = CONN_NONE, DROP,
	  ST(S_(DROP_NO_CONN)) },
	{ "BIND cut short", BIND, .trunc = TR_HDR_M1, DROP, ST(S_(DROP_BIND)) },
	{ "BIND whose UDP length is one short", BIND, .udp_len_delta = -1, DROP,
	  ST(S_(DROP_BIND)) },
	{ "BIND with a bad checksum", BIND, .csum = CS_FLIP, DROP,
	  ST(S_(DROP_CSUM)) },
	{ "CONNECT on the data port", BIND, .op = OPC(XR_CTRL_CONNECT), DROP,
	  ST(S_(DROP_VERSION)) },
	{ "CLOSE on the data port", BIND, .op = OPC(XR_CTRL_CLOSE), DROP,
	  ST(S_(DROP_VERSION)) },
};
#undef BIND

/* Not xroce: passed untouched.  A frame cut before its UDP destination
 * port cannot be told to be xroce's: the stack gets it (and drops it). */
static const struct step t_other[] = {
	{ "UDP to another port", .dport = 4791, MSG(1, 64, 0),
	  PKT(0, 0, 0x100, 64), PASS },
	{ "TCP SYN to the data port", .kind = K_TCP, PASS },
	{ "ARP", .kind = K_ARP, PASS },
	{ "IP fragment", .kind = K_FRAG, MSG(1, 64, 0), PKT(0, 0, 0x100, 64),
	  PASS },
	{ "Ethernet header only", .trunc = TR_ETH, MSG(1, 64, 0),
	  PKT(0, 0, 0x100, 64), PASS },
	{ "cut in the IP header", .trunc = TR_IP, MSG(1, 64, 0),
	  PKT(0, 0, 0x100, 64), PASS },
	{ "cut in the UDP header", .trunc = TR_UDP_HALF, MSG(1, 64, 0),
	  PKT(0, 0, 0x100, 64), PASS },
};

/* Hostile data.  Each is dropped before it touches any state, or NAKed
 * (key, bounds, access, length, opcode from an authenticated peer): then
 * only rx_pkts counts it, its PSN and CSN are recorded nowhere, and a
 * retransmission of a NAKed packet is NAKed again, not taken for a
 * duplicate.  Memory never changes (checked after every row). */
static const struct step t_hostile[] = {
	{ "UDP header, no xroce header", .trunc = TR_UDP, H, DROP,
	  ST(S_(DROP_TRUNC)) },
	{ "one byte of xroce header", .trunc = TR_X1, H, DROP,
	  ST(S_(DROP_TRUNC)) },
	{ "data header minus one byte", .trunc = TR_HDR_M1, H, DROP,
	  ST(S_(DROP_TRUNC)) },
	{ "cut in the payload", .trunc = TR_PAYLOAD, H, DROP,
	  ST(S_(DROP_TRUNC)) },
	{ "UDP length one beyond the frame", .udp_len_delta = 1, H, DROP,
	  ST(S_(DROP_TRUNC)) },
	{ "UDP length shorter than the data header", .udp_len_delta = -65, H,
	  DROP, ST(S_(DROP_TRUNC)) },
	{ "unknown connection", .conn = CONN_NONE, H, DROP,
	  ST(S_(DROP_NO_CONN)) },
	{ "connection not in RTS", .conn = CONN_INIT, H, DROP,
	  ST(S_(DROP_CONN_STATE)) },
	{ "wrong token", .bad_token = 1, H, DROP, ST(S_(DROP_TOKEN)) },
	{ "wrong source address", .src = SRC_STRANGER, H, DROP,
	  ST(S_(DROP_PEER)) },
	{ "source port below the peer's range", .sport = SPORT_LO - 1, H, DROP,
	  ST(S_(DROP_PEER)) },
	{ "source port above the peer's range", .sport = SPORT_LO + SPORT_N, H,
	  DROP, ST(S_(DROP_PEER)) },
	{ "bad UDP checksum", .csum = CS_FLIP, H, DROP, ST(S_(DROP_CSUM)) },
	{ "no UDP checksum", .csum = CS_ZERO, H, DROP, ST(S_(DROP_CSUM)) },
	{ "payload byte corrupted", .corrupt = 1 + 17, H, DROP,
	  ST(S_(DROP_CSUM)) },
	{ "bad version", .vt = VT(0x20 | XR_T_DATA), H, DROP,
	  ST(S_(DROP_VERSION)) },
	{ "unknown type 7", .vt = VT(XR_VER_TYPE(7)), H, DROP,
	  ST(S_(DROP_VERSION)) },
	{ "type 0", .vt = VT(XR_VER_TYPE(0)), H, DROP, ST(S_(DROP_VERSION)) },
	{ "control type on the data port", .vt = VT(XR_VER_TYPE(XR_T_CTRL)), H,
	  DROP, ST(S_(DROP_VERSION)) },
	{ "path index 16", .path = 16, H, DROP, ST(S_(DROP_LENGTH)) },
	{ "PSN beyond the window", MSG(1, 64, 0), PKT(257, 0, 0x100, 64), DROP,
	  ST(S_(DROP_WINDOW)) },
	{ "CSN beyond the window", MSG(1, 64, 0),
	  PKT(0, XR_CSN_WIN, 0x100, 64), DROP, ST(S_(DROP_WINDOW)) },
	/* NAKed from here on.  A NAKed packet is recorded nowhere: neither
	 * its PSN (the path's cack and SACK stay where they were) nor its CSN;
	 * only rx_pkts counts it.  So the NAK itself shows cack 0, and if the
	 * NAK is lost the sender sees a gap and resends. */
	{ "unknown rkey", .rk = MR_NONE, H, NAK(XR_NAK_BAD_KEY), W(0, 0, 1),
	  ST(S_TXN, S_(DROP_KEY)) },
	{ "  ... resent: NAKed again", .rk = MR_NONE, H, NAK(XR_NAK_BAD_KEY),
	  W(0, 0, 2), ST(S_TXN, S_(DROP_KEY)) },
	{ "rkey of another domain", .rk = MR_DOM2, MSG(1, 64, 0),
	  PKT(1, 1, 0x100, 64), NAK(XR_NAK_BAD_KEY), W(0, 0, 3),
	  ST(S_TXN, S_(DROP_KEY)) },
	{ "  ... resent on path 2: NAKed again", .rk = MR_DOM2, .path = 2,
	  MSG(1, 64, 0), PKT(0, 1, 0x100, 64), NAK(XR_NAK_BAD_KEY),
	  W(0, 0, 1), ST(S_TXN, S_(DROP_KEY)) },
	{ "rkey of another PD", .rk = MR_PD, MSG(1, 64, 0),
	  PKT(2, 2, 0x100, 64), NAK(XR_NAK_BAD_KEY), W(0, 0, 4),
	  ST(S_TXN, S_(DROP_KEY)) },
	{ "stale region entry (rkey field differs)", .rk = MR_STALE,
	  MSG(1, 64, 0), PKT(3, 3, 0x100, 64), NAK(XR_NAK_BAD_KEY),
	  W(0, 0, 5), ST(S_TXN, S_(DROP_KEY)) },
	{ "region without remote write", .rk = MR_RO, MSG(1, 64, 0),
	  PKT(4, 4, 0x100, 64), NAK(XR_NAK_ACCESS), W(0, 0, 6),
	  ST(S_TXN, S_(DROP_ACCESS)) },
	{ "  ... resent: NAKed again", .rk = MR_RO, MSG(1, 64, 0),
	  PKT(4, 4, 0x100, 64), NAK(XR_NAK_ACCESS), W(0, 0, 7),
	  ST(S_TXN, S_(DROP_ACCESS)) },
	{ "address one below the region", .abs = 1,
	  .raddr = 0x7f1200000000ull - 1, MSG(1, 64, 0), PKT(5, 5, 0, 64),
	  NAK(XR_NAK_BOUNDS), W(0, 0, 8), ST(S_TXN, S_(DROP_BOUNDS)) },
	{ "last byte one beyond the region", MSG(1, 64, 0),
	  PKT(6, 6, 0x4000 - 63, 64), NAK(XR_NAK_BOUNDS), W(0, 0, 9),
	  ST(S_TXN, S_(DROP_BOUNDS)) },
	{ "  ... resent on path 2: NAKed again", .path = 2, MSG(1, 64, 0),
	  PKT(1, 6, 0x4000 - 63, 64), NAK(XR_NAK_BOUNDS), W(0, 0, 2),
	  ST(S_TXN, S_(DROP_BOUNDS)) },
	{ "one byte at the region end", MSG(1, 1, 0), PKT(7, 7, 0x4000, 1),
	  NAK(XR_NAK_BOUNDS), W(0, 0, 10), ST(S_TXN, S_(DROP_BOUNDS)) },
	{ "address + length overflows 64 bits", .abs = 1,
	  .raddr = 0xffffffffffffffc0ull, MSG(1, 128, 0), PKT(8, 8, 0, 128),
	  NAK(XR_NAK_BOUNDS), W(0, 0, 11), ST(S_TXN, S_(DROP_BOUNDS)) },
	{ "overflow in the region at the top of the address space",
	  .rk = MR_TOP, .abs = 1, .raddr = 0xfffffffffffffff0ull,
	  MSG(1, 64, 0), PKT(9, 9, 0, 64), NAK(XR_NAK_BOUNDS), W(0, 0, 12),
	  ST(S_TXN, S_(DROP_BOUNDS)) },
	{ "inside a region registered past the domain's memory",
	  .rk = MR_BIG, MSG(1, 64, 0), PKT(10, 10, 0x9000, 64),
	  NAK(XR_NAK_BOUNDS), W(0, 0, 13), ST(S_TXN, S_(DROP_BOUNDS)) },
	{ "msg_off + len > msg_len", MSG(2, 100, 50), PKT(11, 11, 0x100, 64),
	  NAK(XR_NAK_BAD_LENGTH), W(0, 0, 14), ST(S_TXN, S_(DROP_LENGTH)) },
	{ "  ... resent: NAKed again", MSG(2, 100, 50), PKT(11, 11, 0x100, 64),
	  NAK(XR_NAK_BAD_LENGTH), W(0, 0, 15), ST(S_TXN, S_(DROP_LENGTH)) },
	{ "msg_off > msg_len", MSG(2, 100, 200), PKT(12, 12, 0x100, 64),
	  NAK(XR_NAK_BAD_LENGTH), W(0, 0, 16), ST(S_TXN, S_(DROP_LENGTH)) },
	{ "empty packet of a non-empty message", MSG(3, 10, 0),
	  PKT(13, 13, 0x100, 0), NAK(XR_NAK_BAD_LENGTH), W(0, 0, 17),
	  ST(S_TXN, S_(DROP_LENGTH)) },
	/* A SEND lands in the receive posted for its MSN (the rkey field):
	 * none is posted in this world, so "receiver not ready". */
	{ "SEND, no receive posted: RNR", .op = OPC(XR_OP_SEND), MSG(1, 64, 0),
	  PKT(14, 14, 0x100, 64), NAK(XR_NAK_RNR), W(0, 0, 18),
	  ST(S_TXN, S_(NAK_RNR)) },
	{ "  ... resent: NAKed again", .op = OPC(XR_OP_SEND), MSG(1, 64, 0),
	  PKT(14, 14, 0x100, 64), NAK(XR_NAK_RNR), W(0, 0, 19),
	  ST(S_TXN, S_(NAK_RNR)) },
	{ "opcode 0", .op = OPC(0), MSG(1, 64, 0), PKT(15, 15, 0x100, 64),
	  NAK(XR_NAK_BAD_OPCODE), W(0, 0, 20), ST(S_TXN, S_(DROP_OPCODE)) },
	{ "opcode 0x7f", .op = OPC(0x7f), MSG(1, 64, 0), PKT(16, 16, 0x100, 64),
	  NAK(XR_NAK_BAD_OPCODE), W(0, 0, 21), ST(S_TXN, S_(DROP_OPCODE)) },
	{ "READ_REQ carrying 64 bytes (a request is exactly 16)",
	  .op = OPC(XR_OP_READ_REQ), MSG(1, 64, 0), PKT(17, 17, 0x100, 64),
	  NAK(XR_NAK_BAD_LENGTH), W(0, 0, 22), ST(S_TXN, S_(DROP_LENGTH)) },
	/* Neither the NAKed PSNs nor the NAKed CSNs arrived: the valid
	 * packet's ACK reports PSNs 0..17 missing (SACK bit 17 is PSN 18
	 * itself) and csn_cum stuck at the first NAKed CSN.  The sender must
	 * treat a NAK as fatal to the connection (as RC QPs do) or re-send
	 * the CSN with valid content. */
	{ "valid data after NAKs: placed, a gap over the NAKed PSNs, csn_cum "
	  "stuck at the NAKed CSN", MSG(4, 64, 0), PKT(18, 18, 0x100, 64),
	  ACK(0), W(0, 0, 23, .sack = { 1ull << 17 }), .place = 1,
	  ST(S_DATA(1), S_BYTES(64), S_DONE, S_TXA), RECV(0x140) },
};

/* A NAKed packet is recorded nowhere, neither its PSN nor its CSN: the
 * next valid packet's ACK shows a gap at the NAKed PSN (never a cumulative
 * ACK over it), so if the NAK is lost the sender still learns of the loss,
 * resends, and is NAKed again.  psn_base forwarding and the counters are
 * all a NAKed packet applies. */
#define OOB(p) BIGMSG(1100, 64), PKT(p, 1, 0x4000 - 32, 64)
static const struct step t_nak_gap[] = {
	{ "in order with AR: ACK", .flags = XR_DF_AR, BIGMSG(1100, 0),
	  PKT(0, 0, 0x000, 64), ACK(0), W(1, 1, 1), .place = 1,
	  ST(S_DATA(1), S_BYTES(64), S_TXA) },
	{ "next PSN out of bounds: NAK, cack stays 1", OOB(1),
	  NAK(XR_NAK_BOUNDS), W(1, 1, 2), ST(S_TXN, S_(DROP_BOUNDS)) },
	{ "next PSN valid, no AR: ACK for the gap, SACK bit 0 is this PSN, "
	  "cack not over the NAKed one", BIGMSG(1100, 128),
	  PKT(2, 2, 0x080, 64), ACK(0), W(1, 1, 3, .sack = { 0x1 }),
	  .place = 1, ST(S_DATA(1), S_BYTES(64), S_TXA) },
	{ "the NAKed packet resent on a new PSN: NAKed again, its PSN not "
	  "marked", OOB(3), NAK(XR_NAK_BOUNDS), W(1, 1, 4, .sack = { 0x1 }),
	  ST(S_TXN, S_(DROP_BOUNDS)) },
	{ "resent CE-marked: NAK with ECE, counted in ce_pkts", .ecn = 3,
	  OOB(4), NAK(XR_NAK_BOUNDS), .rfl = XR_AF_ECE,
	  W(1, 1, 5, .sack = { 0x1 }, .ce = 1), ST(S_TXN, S_(DROP_BOUNDS)) },
	{ "resent with psn_base 3: the window moves to 3, PSN 3 not arrived",
	  .base = 3, OOB(5), NAK(XR_NAK_BOUNDS), W(3, 1, 6, .ce = 1),
	  ST(S_TXN, S_(DROP_BOUNDS)) },
	{ "CSN 1 resent with valid content on PSN 6: placed, csn_cum over 1 "
	  "and 2, the NAKed PSNs 3..5 still a gap", .flags = XR_DF_AR,
	  BIGMSG(1100, 64), PKT(6, 1, 0x040, 64), ACK(0),
	  W(3, 3, 7, .sack = { 0x4 }, .ce = 1), .place = 1,
	  ST(S_DATA(1), S_BYTES(64), S_TXA) },
};
#undef OOB

/* Accepted edges. */
static const struct step t_edges[] = {
	{ "highest source port of the range, plane 1, path 15", .path = 15,
	  .plane = 1, .sport = SPORT_LO + SPORT_N - 1, MSG(1, 64, 0),
	  PKT(0, 0, 0x100, 64), ACK(0), W(1, 1, 1), .place = 1,
	  ST(S_DATA(1), S_BYTES(64), S_DONE, S_TXA), RECV(0x140) },
	{ "write ending exactly at the region end", MSG(2, 64, 0),
	  PKT(0, 1, 0x4000 - 64, 64), ACK(0), W(1, 2, 1), .place = 1,
	  ST(S_DATA(1), S_BYTES(64), S_DONE, S_TXA), RECV(0x4000) },
	{ "last 64 bytes of the address space (raddr_end wraps to 0)",
	  .rk = MR_TOP, .abs = 1, .raddr = 0xffffffffffffffc0ull,
	  MSG(3, 64, 0), PKT(1, 2, 0, 64), ACK(0), W(2, 3, 2), .place = 1,
	  ST(S_DATA(1), S_BYTES(64), S_DONE, S_TXA), RECV(0x8000) },
	{ "first bytes of that region", .rk = MR_TOP, MSG(4, 64, 0),
	  PKT(2, 3, 0, 64), ACK(0), W(3, 4, 3), .place = 1,
	  ST(S_DATA(1), S_BYTES(64), S_DONE, S_TXA), RECV(0x40) },
};

/* An IPv6 packet from the IPv4-mapped form of an IPv4 peer's address is
 * not that peer (IPv4-mapped addresses never appear on the wire). */
static const struct step t_mapped[] = {
	{ "IPv6 from ::ffff:<IPv4 peer>", .src = SRC_MAPPED, H, DROP,
	  ST(S_(DROP_PEER)) },
};

/* csn_next moves at most two ring words per packet (by design, see
 * rxwin.h); the lag is caught up by later packets. */
static const struct step t_csn_lag[] = {
	{ "200 packets after a hole", .rep = 200, BIGMSG(1000, 16),
	  PKT(1, 1, 0x110, 16), ACK(0),
	  W(0, 0, 200, .sack = { ~0ull, ~0ull, ~0ull, 0xff }), .place = 1,
	  ST([XR_STAT_RX_DATA] = 200, S_BYTES(3200), [XR_STAT_TX_ACK] = 200) },
	{ "hole filled: cack 201, csn_cum lags at 120 (5000 % 64 = 8)",
	  BIGMSG(1000, 0), PKT(0, 0, 0x100, 16), DROP, W(201, 120, 201),
	  .place = 1, ST(S_DATA(1), S_BYTES(16)) },
	{ "next packet: csn_cum catches up", .flags = XR_DF_AR,
	  BIGMSG(1000, 201 * 16), PKT(201, 201, 0x100 + 201 * 16, 16), ACK(0),
	  W(202, 202, 202), .place = 1, ST(S_DATA(1), S_BYTES(16), S_TXA) },
};

/* Jumbo frames (MTU 9000): more than a page's linear room, so the test run
 * hands the xdp.frags program a multi-buffer frame, as veth and multi-buffer
 * drivers do.  Placement and the checksum read across the fragments; the
 * ACK built from the frame drops them. */
static const struct step t_jumbo[] = {
	{ "8192-byte WRITE_IMM over three pages: placed, ACK, RECV",
	  .op = OPC(XR_OP_WRITE_IMM), .flags = XR_DF_LAST, MSG(1, 8192, 0),
	  PKT(0, 0, 0x100, 8192), ACK(0), W(1, 1, 1), .place = 1,
	  ST(S_DATA(1), S_BYTES(8192), S_DONE, S_TXA), RECV(0x2100) },
	{ "its duplicate: DUP ACK, not placed again", .op = OPC(XR_OP_WRITE_IMM),
	  .flags = XR_DF_LAST, MSG(1, 8192, 0), PKT(0, 0, 0x100, 8192),
	  ACK(XR_AF_DUP), W(1, 1, 2), ST(S_DATA(1), S_DUP, S_TXA) },
	{ "a byte in the last fragment corrupted: dropped, not placed",
	  .corrupt = 1 + 8000, .flags = XR_DF_AR, MSG(2, 8192, 0),
	  PKT(1, 1, 0x2200, 8192), DROP, ST(S_(DROP_CSUM)) },
	{ "5000 bytes with an odd tail, AR: placed, ACK", .flags = XR_DF_AR,
	  MSG(3, 5001, 0), PKT(1, 1, 0x2200, 5001), ACK(0), W(2, 2, 3),
	  .place = 1, ST(S_DATA(1), S_BYTES(5001), S_DONE, S_TXA), RECV(0x3589) },
	{ "more than the largest payload (8193): dropped", .flags = XR_DF_AR,
	  MSG(4, 8193, 0), PKT(2, 2, 0x100, 8193), DROP, ST(S_(DROP_LENGTH)) },
};

static const struct scen scens[] = {
	{ "inorder", F4 | F6, ST_N | ST_W, 0, 0, t_inorder, X(t_inorder), 0 },
	{ "notify", F4 | F6, ST_N | ST_W, XR_CONN_F_NOTIFY_WRITE, 0, t_notify,
	  X(t_notify), 0 },
	{ "ooo_msg", F4 | F6, ST_N | ST_W, 0, 0, t_ooo_msg, X(t_ooo_msg), 0 },
	{ "sack", F4 | F6, ST_N | ST_W, 0, 0, t_sack, X(t_sack), 0 },
	{ "dup", F4 | F6, ST_N | ST_W, 0, 0, t_dup, X(t_dup), 0 },
	{ "retx", F4 | F6, ST_N | ST_W, 0, 0, t_retx, X(t_retx), 0 },
	{ "base", F4 | F6, ST_N | ST_W, 0, 0, t_base, X(t_base), 0 },
	{ "ce", F4 | F6, ST_N, 0, 0, t_ce, X(t_ce), 0 },
	{ "ack_rx", F4 | F6, ST_N, 0, 0, t_ack_rx, X(t_ack_rx), 0 },
	{ "loop", F4 | F6, ST_N, 0, 0, t_loop, X(t_loop), 0 },
	{ "probe", F4 | F6, ST_N, 0, 0, t_probe, X(t_probe), 0 },
	{ "alive", F4 | F6, ST_N, 0, 0, t_alive, X(t_alive), 1 },
	{ "evq", F4 | F6, ST_N, 0, 0, t_evq, X(t_evq), 0 },
	{ "other", F4 | F6, ST_N, 0, 0, t_other, X(t_other), 0 },
	{ "bind", F4 | F6, ST_N, 0, 0, t_bind, X(t_bind), 0 },
	{ "hostile", F4 | F6, ST_N | ST_W, 0, 0, t_hostile, X(t_hostile), 0 },
	{ "nak_gap", F4 | F6, ST_N | ST_W, 0, 0, t_nak_gap, X(t_nak_gap), 0 },
	{ "edges", F4 | F6, ST_N, 0, 0, t_edges, X(t_edges), 0 },
	{ "mapped", F6, ST_N, 0, 1, t_mapped, X(t_mapped), 0 },
	{ "csn_lag", F4 | F6, ST_N, 0, 0, t_csn_lag, X(t_csn_lag), 0 },
	{ "jumbo", F4 | F6, ST_N | ST_W, 0, 0, t_jumbo, X(t_jumbo), 0 },
};

#endif /* XR_TEST_XDP_ROWS_H */
