/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * xroce wire format: the one definition shared by the XDP programs (bpf/)
 * and the C library (user/).  docs/PROTOCOL.md explains every field; this
 * header is the source of truth for sizes and offsets, pinned down by the
 * static asserts at the bottom.
 *
 * Every multi-byte field is big-endian (network order) on the wire.
 * The header is carried in UDP (IPv4 or IPv6) on a configurable port.
 *
 * This header must compile both for the BPF target (clang -target bpf, with
 * <linux/types.h>) and for userspace C, so it uses only __u8.. __u64 types
 * and no libc.
 */
#ifndef XR_CONTRACT_WIRE_H
#define XR_CONTRACT_WIRE_H

#include <linux/types.h>

#define XR_VERSION 1
/* Default UDP port of the data plane (not RoCEv2's 4791). */
#define XR_DEFAULT_UDP_PORT 4793
/* Control port the xroce tool listens on (the library has no default:
 * xroce_device_attr.ctrl_port 0 means an ephemeral port). */
#define XR_DEFAULT_CTRL_PORT 4794

/* Packet types: the low nibble of ver_type; the high nibble is XR_VERSION. */
enum xr_type {
	XR_T_DATA = 1,        /* payload with its own placement */
	XR_T_ACK = 2,         /* per-path cumulative PSN + 256-bit SACK */
	XR_T_NAK = 3,         /* ACK that also rejects one packet (reason) */
	XR_T_CTRL = 4,        /* connection management, on the control socket;
	                       * BIND also to the data port (through XDP) */
	XR_T_PROBE = 5,       /* path probe, answered by the peer's XDP */
	XR_T_PROBE_REPLY = 6, /* answer to a probe */
};

#define XR_VER_TYPE(t) ((__u8)((XR_VERSION << 4) | ((t) & 0xf)))
#define XR_HDR_VERSION(vt) ((__u8)(vt) >> 4)
#define XR_HDR_TYPE(vt) ((__u8)(vt) & 0xf)

/* Opcodes of data packets. */
enum xr_opcode {
	XR_OP_WRITE = 1,     /* RDMA WRITE: placement by (raddr, rkey) */
	XR_OP_WRITE_IMM = 2, /* WRITE + 32-bit immediate delivered at the end */
	XR_OP_SEND = 3,      /* two-sided: placement by (stream, msn) */
	XR_OP_SEND_IMM = 4,
	XR_OP_READ_REQ = 5,  /* READ request: raddr/rkey at the responder */
	XR_OP_READ_RESP = 6, /* READ response: placed at the requester */
	XR_OP_MAX = 6,
};

/* Flags of data packets. */
#define XR_DF_AR 0x01    /* ack requested: the receiver answers this packet */
#define XR_DF_RETX 0x02  /* this is a retransmission (informational) */
#define XR_DF_LAST 0x04  /* highest-offset packet of its message */
#define XR_DF_DUP 0x08   /* a redundant copy, on a second path, of a small
                          * message's packet (informational) */
#define XR_DF_EPOCH 0x10 /* keyed connections: the MAC is under the key of
                          * the sender's odd key epoch (else its even one) */
#define XR_DF_ERR 0x20   /* READ_RESP only: the responder cannot answer
                          * (the region went away); no payload, imm holds
                          * the NAK reason; the requester fails the READ */

/* Flags of ACK / NAK packets. */
#define XR_AF_ECE 0x01   /* the packet that triggered this ACK was CE marked */
#define XR_AF_DUP 0x02   /* ... was a duplicate (its CSN already arrived) */
#define XR_AF_OOW 0x04   /* reserved, never sent: out-of-window packets
                          * are dropped without an answer */
#define XR_AF_EPOCH 0x08 /* keyed: the key epoch parity of the packet this
                          * answers, and of the key the MAC is under */
#define XR_AF_KNEXT 0x10 /* keyed: the receiver holds the keys of the epoch
                          * after that one: the sender may move on */
#define XR_AF_SACK 0x20  /* the sack words carry bits.  Without it they are
                          * zero, the sender reads them as zero whatever
                          * they hold, and (keyed) the MAC leaves them out:
                          * an in-order path's ACKs cost 8 fewer SipHash
                          * rounds to sign and to check */

/* Flags of PROBE / PROBE_REPLY packets (keyed connections; zero without). */
#define XR_PF_EPOCH 0x01 /* as XR_DF_EPOCH / XR_AF_EPOCH */
#define XR_PF_KNEXT 0x02 /* reply: as XR_AF_KNEXT */

/* NAK reason codes (struct xr_ack.reason). */
enum xr_nak_reason {
	XR_NAK_NONE = 0,
	XR_NAK_BAD_KEY = 1,      /* rkey unknown or from another domain / PD;
	                          * READ_RESP: no open read window */
	XR_NAK_BOUNDS = 2,       /* address + length outside the region or
	                          * the domain's memory */
	XR_NAK_ACCESS = 3,       /* region lacks the access right needed */
	XR_NAK_RNR = 4,          /* receiver not ready: no receive posted */
	XR_NAK_BAD_OPCODE = 5,   /* opcode unknown or not allowed */
	XR_NAK_BAD_LENGTH = 6,   /* offsets/lengths inconsistent with message;
	                          * SEND longer than its receive; READ_RESP
	                          * length not the read's; bad READ_REQ */
	XR_NAK_MAX = 6,
};

/* Size of the per-path SACK bitmap, in bits.  A path may have at most this
 * many packets beyond its cumulative PSN in flight. */
#define XR_SACK_BITS 256
#define XR_SACK_WORDS (XR_SACK_BITS / 64)

/*
 * Data packet header (64 bytes), follows the UDP header; the payload follows
 * it and runs to the end of the UDP datagram.
 *
 *  0      ver_type   version << 4 | XR_T_DATA
 *  1      flags      XR_DF_*
 *  2      opcode     XR_OP_*
 *  3      path       sender's path index (0..XR_MAX_PATHS-1)
 *  4..7   dst_conn   receiver's connection id
 *  8..15  token      secret the receiver chose for this connection; on a
 *     or mac         keyed connection the MAC of the header instead
 *                    (SipHash-2-4, see "Keyed connections" below)
 *  16..19 psn        per-path packet sequence number
 *  20..23 psn_base   sender's oldest PSN still of interest on this path;
 *                    every PSN before it was acknowledged or abandoned, so the
 *                    receiver may advance its cumulative PSN to it
 *  24..27 csn        connection sequence number: the identity of this packet's
 *                    content, kept when it is retransmitted on another path
 *  28..31 ts         sender clock (ns, low 32 bits), echoed in the ACK
 *  32..39 raddr      WRITE/READ: remote virtual address of this payload
 *  40..43 rkey       WRITE, READ_REQ: key of the target memory region
 *      or msn        SEND: which posted receive the message fills
 *      or read_id    READ_RESP: which read it answers
 *  44..47 msg_id     message sequence number on the connection
 *  48..51 msg_len    total length of the message in bytes
 *  52..55 msg_off    offset of this payload within the message
 *  56..59 imm        immediate data (WRITE_IMM / SEND_IMM)
 *  60..61 stream     ordered stream the message belongs to
 *  62..63 ssn        stream sequence number: the message's place in its
 *                    stream (16 bits, wraps); receive completions of a
 *                    stream are delivered in this order
 *
 * Per opcode:
 *  WRITE, WRITE_IMM  raddr/rkey: where the payload goes.
 *  SEND, SEND_IMM    raddr 0; msn (in rkey's place): the index of
 *                    the stream's posted receive the message consumes (the
 *                    n-th SEND/SEND_IMM of a stream fills its n-th posted
 *                    receive): placement needs no round trip.
 *  READ_REQ          raddr/rkey: what to read at the responder; payload =
 *                    struct xr_read_req (where the answer goes at the
 *                    requester, how much, and the read's id).
 *  READ_RESP         raddr: requester's address of this payload; read_id
 *                    (in rkey's place): the requester places it only inside
 *                    the window that read opened.
 */
struct xr_data_hdr {
	__u8 ver_type;
	__u8 flags;
	__u8 opcode;
	__u8 path;
	__be32 dst_conn;
	union {
		__be64 token;
		__u8 mac[8];
	};
	__be32 psn;
	__be32 psn_base;
	__be32 csn;
	__be32 ts;
	__be64 raddr;
	/* One field whose meaning the opcode picks (see above): naming the
	 * member says which meaning the code relies on. */
	union {
		__be32 rkey;
		__be32 msn;
		__be32 read_id;
	};
	__be32 msg_id;
	__be32 msg_len;
	__be32 msg_off;
	__be32 imm;
	__be16 stream;
	__be16 ssn;
} __attribute__((packed, aligned(4)));

/* Payload of a READ_REQ. */
struct xr_read_req {
	__be64 laddr;            /* requester's address the answer goes to */
	__be32 len;              /* bytes to read */
	__be32 read_id;          /* requester's id of this read */
} __attribute__((packed, aligned(4)));

/*
 * ACK / NAK header (80 bytes), sent by the receiver's XDP program for one
 * path.  It is the data frame rewritten in place and sent back with XDP_TX.
 *
 *  0      ver_type   version << 4 | XR_T_ACK or XR_T_NAK
 *  1      flags      XR_AF_*
 *  2      reason     XR_NAK_* (0 in an ACK)
 *  3      path       path index the acknowledged packet came on
 *  4..7   dst_conn   the data sender's connection id
 *  8..15  token      secret the data sender chose for this connection,
 *     or mac         or (keyed) the MAC of this header
 *  16..19 cack       next PSN expected on this path: all earlier ones arrived
 *                    or were skipped (psn_base)
 *  20..23 ack_psn    PSN of the packet that triggered this ACK
 *  24..27 ts_echo    ts of the packet that triggered this ACK
 *  28..31 rate_hint  receiver's fair-share rate for this sender, Mbit/s
 *                    (0 = no hint)
 *  32..63 sack[4]    bit i (word i/64, bit i%64 of a big-endian u64) set =
 *                    PSN cack + 1 + i arrived; all zero and ignored
 *                    unless flags has XR_AF_SACK
 *  64..67 ce_pkts    packets received CE-marked on this path (cumulative)
 *  68..71 rx_pkts    packets received on this path (cumulative; both count
 *                    duplicates and refused packets)
 *  72..75 csn_cum    the receiver's csn_next, which advances lazily and may
 *                    lag the next CSN expected; informational
 *  76..79 nak_csn    NAK: csn of the rejected packet; ACK: zero
 */
struct xr_ack_hdr {
	__u8 ver_type;
	__u8 flags;
	__u8 reason;
	__u8 path;
	__be32 dst_conn;
	union {
		__be64 token;
		__u8 mac[8];
	};
	__be32 cack;
	__be32 ack_psn;
	__be32 ts_echo;
	__be32 rate_hint;
	__be64 sack[XR_SACK_WORDS];
	__be32 ce_pkts;
	__be32 rx_pkts;
	__be32 csn_cum;
	__be32 nak_csn;
} __attribute__((packed, aligned(4)));

/*
 * Path probe and its reply (32 bytes), on the data port.  The receiver's
 * XDP program answers a probe by rewriting it into a reply (XDP_TX), so a
 * path can be tested without waking any process.
 *
 *  0      ver_type   version << 4 | XR_T_PROBE or XR_T_PROBE_REPLY
 *  1      flags      XR_PF_* (zero without a key)
 *  2      rsvd
 *  3      path
 *  4..7   dst_conn
 *  8..15  token, or (keyed) mac
 *  16..19 seq        probe sequence number, echoed
 *  20..23 ts         sender clock, echoed
 *  24..27 rate_hint  in a reply: the receiver's current rate hint
 *  28..31 rsvd
 */
struct xr_probe_hdr {
	__u8 ver_type;
	__u8 flags;
	__u8 rsvd0;
	__u8 path;
	__be32 dst_conn;
	union {
		__be64 token;
		__u8 mac[8];
	};
	__be32 seq;
	__be32 ts;
	__be32 rate_hint;
	__be32 rsvd1;
} __attribute__((packed, aligned(4)));

/*
 * Keyed connections.  With a cluster key, every DATA, ACK, NAK, PROBE and
 * PROBE_REPLY header carries in bytes 8..15, in place of the token, the
 * SipHash-2-4 MAC (include/contract/siphash.h, xr_mac_hdr) of the whole
 * header with those 8 bytes left out: the type byte, flags, connection,
 * PSNs, CSN, opcode, addresses, keys, offsets, lengths, SACK and counters
 * are all covered; the payload is not.  One exception: an ACK or NAK
 * without XR_AF_SACK leaves its sack words (bytes 32..63) out too
 * (xr_mac_hdr_gap), since the flag, which is covered, says they are read
 * as zero.  The MAC is written as 8
 * little-endian bytes.  Its key is one of four 16-byte keys per key epoch
 * of a connection, derived from the connection key (both ends' nonces and
 * ids, keyed BLAKE2b) with libsodium's crypto_kdf (context "xroceMAC",
 * subkey id = epoch << 2 | owner << 1 | kind):
 *   owner  whose packet stream: 0 the connecting side's, 1 the listener's
 *   kind   0: the owner's DATA and PROBEs; 1: the peer's ACKs, NAKs and
 *          PROBE_REPLYs to them
 * so a packet reflected to its sender, or a DATA presented as an ACK,
 * is checked under another key.  Each side moves its own stream to the
 * next epoch (the flag XR_DF_EPOCH / XR_PF_EPOCH gives its parity; answers
 * echo it in XR_AF_EPOCH / XR_PF_EPOCH) well before its packets could
 * repeat a PSN or CSN, and only after an answer said XR_AF_KNEXT (the
 * receiver holds the next epoch's keys).  docs/PROTOCOL.md has the rules.
 */
#define XR_ACK_SACK_LO 32        /* the ACK's sack words, left out of */
#define XR_ACK_SACK_HI 64        /* its MAC without XR_AF_SACK */
#define XR_MAC_CTX "xroceMAC"    /* crypto_kdf context, 8 bytes */
#define XR_MAC_KEY_LEN 16

/*
 * Control messages (connection management), exchanged between the devices'
 * control sockets (plain UDP), never seen by XDP.  Fixed 256 bytes.
 *
 *  0      ver_type   version << 4 | XR_T_CTRL
 *  1      op         XR_CTRL_*
 *  2..3   status     0, or a positive errno explaining a REJECT
 *  4..7   dst_conn   receiver's connection id (0 in CONNECT and COOKIE)
 *  8..15  token      receiver's token (0 in CONNECT and COOKIE)
 *  16..23 nonce      the requester's random nonce, echoed in every answer
 *                    (COOKIE, ACCEPT, REJECT); makes a retransmitted
 *                    CONNECT idempotent
 *  24..27 src_conn   sender's connection id
 *  28..31 mtu        largest IP packet the sender accepts
 *  32..39 rx_token   token the sender wants in every packet sent to it
 *  40..43 init_psn   first PSN the sender will use on every path
 *  44..47 init_csn   first CSN the sender will use; in CLOSE: the next CSN
 *                    the closing side expected from the other (everything
 *                    before it arrived, acknowledged or not)
 *  48..49 data_port  UDP port of the sender's data plane
 *  50..51 sport_lo   first UDP source port (entropy) the sender may use
 *  52..53 sport_n    number of source ports from sport_lo it may use
 *  54     nplanes    number of addresses below that are valid (1..4)
 *  55     family     4 or 6
 *  56..59 npaths     paths the sender opens (informational, not used)
 *  60..63 flags      XR_CF_*
 *  64..127 addr[4]   sender's data-plane addresses, 16 bytes each (IPv4 as
 *                    ::ffff:a.b.c.d); the message must come from one of them
 *  128    priv_len   bytes of private data that follow (0..XR_CTRL_PRIV_MAX)
 *  129..131 rsvd
 *  132..191 priv     application data carried with CONNECT / ACCEPT (like
 *                    rdma_cm's private data: buffer addresses and keys)
 *  192..207 cookie   COOKIE: the listener's stateless cookie for this
 *                    (address, port, nonce); CONNECT: the cookie it got
 *                    (zero the first time)
 *  208..215 nonce2   ACCEPT: the listener's own random nonce (with a
 *                    cluster key, both nonces go into the connection key)
 *  216..223 rsvd2
 *  224..255 mac      with a cluster key (XR_CF_AUTH): HMAC-SHA-512/256 of
 *                    bytes 0..223; CONNECT, COOKIE, ACCEPT and REJECT under
 *                    the cluster key, CLOSE and CLOSE_ACK under the
 *                    connection key.  Zero without a key.
 */
enum xr_ctrl_op {
	XR_CTRL_CONNECT = 1,
	XR_CTRL_ACCEPT = 2,
	XR_CTRL_REJECT = 3,
	XR_CTRL_CLOSE = 4,
	XR_CTRL_CLOSE_ACK = 5,
	XR_CTRL_COOKIE = 6,      /* prove you receive at your address: resend
	                          * the CONNECT with this cookie */
	XR_CTRL_BIND = 7,        /* a half of a connection made from
	                          * out-of-band information, see below */
};

/* Flags of control messages (BIND's own, XR_BIND_F_*, are below). */
#define XR_CF_AUTH 0x1           /* mac is valid (the sender has a key) */
/*
 * BIND: one side's half of a connection made from out-of-band information
 * (xroce_qp_bind: the applications exchanged QP numbers and addresses
 * themselves, as ibverbs programs do).  Sent from the binder's control
 * socket to the PEER'S DATA PORT: the peer's XDP program hands it, with the
 * packet's source address and port, to the domain owning connection
 * dst_conn (struct xr_evt_bind), since the binder does not know the peer's
 * control port.  Fields as in CONNECT, and:
 *   dst_conn  the peer's QP number (as the application gave it)
 *   token     0
 *   nonce     the binder's random number for this QP: a half with another
 *             nonce for a connected QP is stale
 *   flags     XR_BIND_F_*
 *   priv_len  4, priv[0..3] = be32 receiver-not-ready delay, us, that the
 *             binder asks its peer to wait before resending a refused SEND
 *             (0 = the peer's own)
 * Each side sends its half when it binds, and resends it (backing off)
 * until it has the peer's half with XR_BIND_F_HAVE_YOURS; a half without
 * XR_BIND_F_DONE is answered with the receiver's own.  A side programs its
 * XDP connection state before it sends HAVE_YOURS, and sends data only
 * once it has received HAVE_YOURS: data never arrives unannounced.
 */
#define XR_BIND_F_HAVE_YOURS 0x100/* the sender has the peer's half, and its
				  * XDP program accepts the peer's data */
#define XR_BIND_F_DONE 0x200     /* ... and knows the peer has its half too:
				  * no answer wanted */

#define XR_CTRL_MAX_PLANES 4
#define XR_CTRL_PRIV_MAX 60
#define XR_CTRL_COOKIE_LEN 16
#define XR_CTRL_MAC_LEN 32

struct xr_ctrl_msg {
	__u8 ver_type;
	__u8 op;
	__be16 status;
	__be32 dst_conn;
	__be64 token;
	__be64 nonce;
	__be32 src_conn;
	__be32 mtu;
	__be64 rx_token;
	__be32 init_psn;
	__be32 init_csn;
	__be16 data_port;
	__be16 sport_lo;
	__be16 sport_n;
	__u8 nplanes;
	__u8 family;
	__be32 npaths;
	__be32 flags;
	__u8 addr[XR_CTRL_MAX_PLANES][16];
	__u8 priv_len;
	__u8 rsvd[3];
	__u8 priv[XR_CTRL_PRIV_MAX];
	__u8 cookie[XR_CTRL_COOKIE_LEN];
	__be64 nonce2;
	__be64 rsvd2;
	__u8 mac[XR_CTRL_MAC_LEN];
} __attribute__((packed, aligned(4)));

/* Layout checks.  C11 _Static_assert works for both clang -target bpf and
 * gcc; offsetof comes from the compiler builtin so no libc is needed. */
#define XR_OFF(t, f) __builtin_offsetof(t, f)
_Static_assert(sizeof(struct xr_data_hdr) == 64, "data header size");
_Static_assert(XR_OFF(struct xr_data_hdr, dst_conn) == 4, "dst_conn");
_Static_assert(XR_OFF(struct xr_data_hdr, token) == 8, "token");
_Static_assert(XR_OFF(struct xr_data_hdr, mac) == 8, "mac");
_Static_assert(XR_OFF(struct xr_data_hdr, psn) == 16, "psn");
_Static_assert(XR_OFF(struct xr_data_hdr, psn_base) == 20, "psn_base");
_Static_assert(XR_OFF(struct xr_data_hdr, csn) == 24, "csn");
_Static_assert(XR_OFF(struct xr_data_hdr, ts) == 28, "ts");
_Static_assert(XR_OFF(struct xr_data_hdr, raddr) == 32, "raddr");
_Static_assert(XR_OFF(struct xr_data_hdr, rkey) == 40, "rkey");
_Static_assert(XR_OFF(struct xr_data_hdr, msn) == 40, "msn");
_Static_assert(XR_OFF(struct xr_data_hdr, read_id) == 40, "read_id");
_Static_assert(XR_OFF(struct xr_data_hdr, msg_id) == 44, "msg_id");
_Static_assert(XR_OFF(struct xr_data_hdr, msg_len) == 48, "msg_len");
_Static_assert(XR_OFF(struct xr_data_hdr, msg_off) == 52, "msg_off");
_Static_assert(XR_OFF(struct xr_data_hdr, imm) == 56, "imm");
_Static_assert(XR_OFF(struct xr_data_hdr, stream) == 60, "stream");
_Static_assert(XR_OFF(struct xr_data_hdr, ssn) == 62, "ssn");
_Static_assert(sizeof(struct xr_read_req) == 16, "read request size");

_Static_assert(sizeof(struct xr_ack_hdr) == 80, "ack header size");
_Static_assert(XR_OFF(struct xr_ack_hdr, dst_conn) == 4, "ack dst_conn");
_Static_assert(XR_OFF(struct xr_ack_hdr, token) == 8, "ack token");
_Static_assert(XR_OFF(struct xr_ack_hdr, mac) == 8, "ack mac");
_Static_assert(XR_OFF(struct xr_ack_hdr, cack) == 16, "cack");
_Static_assert(XR_OFF(struct xr_ack_hdr, ack_psn) == 20, "ack_psn");
_Static_assert(XR_OFF(struct xr_ack_hdr, ts_echo) == 24, "ts_echo");
_Static_assert(XR_OFF(struct xr_ack_hdr, rate_hint) == 28, "rate_hint");
_Static_assert(XR_OFF(struct xr_ack_hdr, sack) == 32, "sack");
_Static_assert(XR_OFF(struct xr_ack_hdr, sack) == XR_ACK_SACK_LO &&
	       XR_OFF(struct xr_ack_hdr, ce_pkts) == XR_ACK_SACK_HI, "sack gap");
_Static_assert(XR_OFF(struct xr_ack_hdr, ce_pkts) == 64, "ce_pkts");
_Static_assert(XR_OFF(struct xr_ack_hdr, rx_pkts) == 68, "rx_pkts");
_Static_assert(XR_OFF(struct xr_ack_hdr, csn_cum) == 72, "csn_cum");
_Static_assert(XR_OFF(struct xr_ack_hdr, nak_csn) == 76, "nak_csn");

_Static_assert(sizeof(struct xr_probe_hdr) == 32, "probe header size");
_Static_assert(XR_OFF(struct xr_probe_hdr, mac) == 8, "probe mac");
_Static_assert(XR_OFF(struct xr_probe_hdr, seq) == 16, "probe seq");
_Static_assert(XR_OFF(struct xr_probe_hdr, ts) == 20, "probe ts");
_Static_assert(XR_OFF(struct xr_probe_hdr, rate_hint) == 24, "probe hint");

_Static_assert(sizeof(struct xr_ctrl_msg) == 256, "control message size");
_Static_assert(XR_OFF(struct xr_ctrl_msg, nonce) == 16, "ctrl nonce");
_Static_assert(XR_OFF(struct xr_ctrl_msg, src_conn) == 24, "ctrl src_conn");
_Static_assert(XR_OFF(struct xr_ctrl_msg, rx_token) == 32, "ctrl rx_token");
_Static_assert(XR_OFF(struct xr_ctrl_msg, init_psn) == 40, "ctrl init_psn");
_Static_assert(XR_OFF(struct xr_ctrl_msg, data_port) == 48, "ctrl data_port");
_Static_assert(XR_OFF(struct xr_ctrl_msg, nplanes) == 54, "ctrl nplanes");
_Static_assert(XR_OFF(struct xr_ctrl_msg, npaths) == 56, "ctrl npaths");
_Static_assert(XR_OFF(struct xr_ctrl_msg, addr) == 64, "ctrl addr");
_Static_assert(XR_OFF(struct xr_ctrl_msg, priv_len) == 128, "ctrl priv_len");
_Static_assert(XR_OFF(struct xr_ctrl_msg, priv) == 132, "ctrl priv");
_Static_assert(XR_OFF(struct xr_ctrl_msg, cookie) == 192, "ctrl cookie");
_Static_assert(XR_OFF(struct xr_ctrl_msg, nonce2) == 208, "ctrl nonce2");
_Static_assert(XR_OFF(struct xr_ctrl_msg, mac) == 224, "ctrl mac");

/* Serial-number arithmetic for 32-bit PSNs / CSNs (RFC 1982 style):
 * a - b as a signed distance, correct across wrap-around. */
static inline __s32 xr_seq_diff(__u32 a, __u32 b)
{
	return (__s32)(a - b);
}

#endif /* XR_CONTRACT_WIRE_H */
