/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The contract between the XDP program (bpf/xroce.bpf.c) and libxroce:
 * names and value layouts of the BPF maps, and the records the XDP program
 * hands to the library through each domain's ring buffer.  Not public API:
 * applications use include/xroce/xroce.h.
 *
 * Vocabulary
 *   domain  one process's device context.  It owns one memory map (an
 *           mmapable BPF array of 4 KiB pages that is also its AF_XDP UMEM)
 *           and one event ring buffer, reached from XDP through the
 *           hash-of-maps xr_mem and xr_evq keyed by the domain id.
 *   conn    a connection (queue pair), keyed by its local id.  Local ids are
 *           below the xr_conns map size so per-connection arrays (xr_rx,
 *           xr_msgs) can be indexed by them.
 *
 * Compiles for BPF and userspace: only <linux/types.h> types.
 */
#ifndef XR_CONTRACT_ABI_H
#define XR_CONTRACT_ABI_H

#include <linux/types.h>
#include <linux/bpf.h> /* struct bpf_spin_lock */
#include "wire.h"

/* Map names (BPF object names are limited to 15 characters). */
#define XR_MAP_CFG "xr_cfg"
#define XR_MAP_DOMAINS "xr_domains"
#define XR_MAP_MEM "xr_mem"
#define XR_MAP_EVQ "xr_evq"
#define XR_MAP_MRS "xr_mrs"
#define XR_MAP_CONNS "xr_conns"
#define XR_MAP_RX "xr_rx"
#define XR_MAP_MSGS "xr_msgs"
#define XR_MAP_STATS "xr_stats"
#define XR_MAP_ACT "xr_act"
#define XR_MAP_RQ "xr_rq"
#define XR_MAP_READS "xr_reads"
#define XR_MAP_TRACE "xr_trace"
#define XR_MAP_IFS "xr_ifs"
#define XR_MAP_EVB "xr_evb"

#define XR_PAGE_SHIFT 12
#define XR_PAGE_SIZE (1u << XR_PAGE_SHIFT)

/* Fixed limits baked into map layouts. */
#define XR_MAX_PATHS 16        /* paths per connection */
#define XR_MAX_PLANES 4        /* interfaces (planes) per connection */
#define XR_CSN_WIN 8192        /* connection-level receive window, packets */
/* Largest payload one DATA packet may carry (jumbo frames: MTU 9000 carries
 * 8192-byte payloads); XDP drops longer ones (drop_length). */
#define XR_MAX_PKT_PAYLOAD 8192
/* A sender keeps every CSN it sends below its oldest unacknowledged CSN +
 * XR_CSN_SEND_WIN: half the receive window, because the receiver moves its
 * window base lazily (see xr_csn_accept in include/contract/rxwin.h). */
#define XR_CSN_SEND_WIN (XR_CSN_WIN / 2)
#define XR_MSG_SLOTS 256       /* messages in flight per connection */
#define XR_DEFAULT_MAX_CONNS 8192
#define XR_DEFAULT_MAX_DOMAINS 64
#define XR_DEFAULT_MAX_MRS 16384
#define XR_EVQ_BYTES (4u << 20) /* every domain's event ring: 4 MiB */
/* Data is refused (not acknowledged, so retransmitted later) while an event
 * ring has less than this much room, so a completion is never lost to a
 * full ring: backpressure instead of loss. */
#define XR_EVQ_RESERVE (256u << 10)
/* Bytes one record takes in a ring (the record and the ring's 8-byte
 * header). */
#define XR_EVQ_REC_BYTES (sizeof(struct xr_evt) + 8)
/* Fair shares: a connection may have at most its domain's evq_share
 * records waiting in the ring (struct xr_domain, xr_evb), whatever their
 * kind; the library sets the share to the ring's room outside the reserve
 * divided among its connections, but never below this. */
#define XR_EVQ_MIN_SHARE 512u

/* ---- xr_cfg: ARRAY[1] ------------------------------------------------- */
#define XR_CFG_VERIFY_CSUM 0x1 /* drop data whose UDP checksum is wrong */

struct xr_cfg {
	__u16 udp_port;          /* data-plane UDP port, host order */
	__u16 flags;             /* XR_CFG_* */
	/* Inbound capacity this host shares among the connections sending to
	 * it, Mbit/s: every ACK, NAK and probe reply carries capacity / active
	 * senders as the sender's rate hint.  0 = no hints. */
	__u32 rate_capacity_mbps;
	/* A connection is an active sender if data arrived for it in the
	 * current or the previous window of this length; 0 = 50 ms (shorter
	 * windows miss senders a busy host schedules late). */
	__u32 active_window_us;
	__u32 rsvd;
};

/* ---- xr_ifs: HASH ifindex -> __u32 XR_IF_* ----------------------------- */
/* Per interface, set by `xroce attach`.  XR_IF_CSUM_PARTIAL: frames may
 * reach XDP partially checksummed, as the kernel keeps them when they come
 * from this host or its hypervisor (CHECKSUM_PARTIAL, a virtio-net header
 * with NEEDS_CSUM): their UDP checksum field holds only the folded sum of
 * the pseudo header.  Generic-mode XDP sees such frames; a datagram whose
 * full checksum fails but whose field is exactly that sum is taken there
 * (and counted, XR_STAT_RX_CSUM_PARTIAL).  Elsewhere that pattern is just
 * a wrong checksum.  The price: a corrupted frame whose field happens to
 * equal its pseudo header's sum (one in 65536) passes on such interfaces. */
#define XR_IF_CSUM_PARTIAL 0x1
#define XR_MAX_IFS 256

/* ---- xr_act: ARRAY[1], active senders for the rate hint ---------------- */
/* Time is cut into windows of active_window_us; a connection counts once
 * in cnt[w % 2] the first time data arrives for it in window w. */
struct xr_act {
	__u64 epoch;             /* current window number */
	__u32 cnt[2];
};
#define XR_ACTIVE_WINDOW_NS 50000000ULL

/* ---- xr_domains: HASH domain id -> struct xr_domain -------------------- */
struct xr_domain {
	__u64 mem_bytes;         /* size of the domain's memory map */
	__u32 owner_pid;         /* for garbage collection of dead domains */
	/* The domain's control socket (UDP, host order).  XDP accepts data
	 * for the domain only while a UDP socket is bound to this port: when
	 * the owning process dies, its socket closes and its peers stop being
	 * acknowledged, so they fail their work instead of writing into a
	 * dead process's memory.  0 = no liveness check (test harnesses). */
	__u16 ctrl_port;
	__u16 rsvd;
	__u64 alive_until_ns;    /* XDP's cache of the last successful check */
	/* Address the control socket is bound to (IPv4 as ::ffff:a.b.c.d);
	 * all zero = the wildcard, then the lookup uses the packet's own
	 * destination address. */
	__u8 ctrl_addr[16];
	/* The owner's own control socket carries this random SO_MARK (0 =
	 * none): XDP and the garbage collection take a socket bound to
	 * ctrl_port for the owner only if it has this mark, so a process
	 * that binds a dead owner's port does not keep its domain alive. */
	__u32 owner_mark;
	/* Records of one connection that may wait in the event ring (fair
	 * shares, xr_evb); 0 = XR_EVQ_MIN_SHARE. */
	__u32 evq_share;
};

/* ---- xr_mrs: HASH rkey -> struct xr_mr -------------------------------- */
#define XR_ACCESS_LOCAL_WRITE 0x1
#define XR_ACCESS_REMOTE_WRITE 0x2
#define XR_ACCESS_REMOTE_READ 0x4

struct xr_mr {
	__u32 domain;
	__u32 pd;
	__u32 access;            /* XR_ACCESS_* */
	__u32 rkey;              /* repeated: a stale entry never matches */
	__u64 iova;              /* address the owner sees the region at */
	__u64 len;
	__u64 mem_off;           /* byte offset of the region in the memory map */
};

/* ---- xr_conns: HASH local conn id -> struct xr_conn ------------------- */
enum xr_conn_state {
	XR_CONN_INIT = 0,        /* claimed, not yet connected: drops all */
	XR_CONN_RTS = 1,         /* connected: data and ACKs accepted */
	XR_CONN_ERROR = 2,       /* failed: everything dropped */
	XR_CONN_CLOSED = 3,      /* the peer closed: everything dropped */
};

/* Library-side flag (XDP reports every completed message): deliver plain
 * WRITE completions to the receiver's CQ. */
#define XR_CONN_F_NOTIFY_WRITE 0x1
/* Keyed connection: packets carry a MAC (wire.h, "Keyed connections")
 * under the keys below instead of the token. */
#define XR_CONN_F_MAC 0x2

/* XDP stamps this connection's packets into xr_trace (a library asked for
 * a latency breakdown: xroce_trace_enable); without it, tracing costs the
 * data path one test of a flag it has loaded anyway. */
#define XR_CONN_F_TRACE 0x4

/* A keyed connection's keys for one key epoch of the peer's packet
 * stream, as SipHash key words (include/contract/siphash.h). */
struct xr_key_peer {
	__u64 data[2];           /* checks the peer's DATA and PROBEs */
	__u64 reply[2];          /* signs our ACKs, NAKs, PROBE_REPLYs to it */
	__u32 epoch;             /* which epoch (its parity = the slot) */
	__u32 noted;             /* XDP told the library the peer uses it */
};

/* ... and for one epoch of our own stream. */
struct xr_key_own {
	__u64 reply[2];          /* checks the peer's ACKs, NAKs, PROBE_REPLYs */
	__u32 epoch;
	__u32 rsvd;
};

struct xr_conn {
	__u32 domain;
	__u32 pd;
	__u32 state;             /* enum xr_conn_state */
	__u32 peer_conn;         /* the peer's id for this connection */
	__u64 rx_token;          /* token required in every packet to us */
	__u64 tx_token;          /* token we put in packets to the peer */
	__u8 peer_addr[XR_MAX_PLANES][16]; /* IPv4 as ::ffff:a.b.c.d */
	__u8 npeer;              /* valid entries of peer_addr */
	__u8 family;             /* 4 or 6 */
	__u16 peer_sport_lo;     /* host order: peer's entropy port range */
	__u16 peer_sport_n;
	__u16 rsvd0;
	__u32 flags;             /* XR_CONN_F_* */
	__u32 rsvd1;
	/* XR_CONN_F_MAC: two epochs of keys each way, slot = epoch parity */
	struct xr_key_peer kpeer[2];
	struct xr_key_own kown[2];
};

/* ---- xr_rx: ARRAY[max_conns], receive state of each connection -------- */
struct xr_rx_path {
	__u32 cack;              /* next PSN expected; all earlier arrived or
	                          * were skipped (psn_base) */
	__u32 rx_pkts;           /* packets received (incl. duplicates and
	                          * NAKed ones) */
	__u64 sack[XR_SACK_WORDS]; /* host order; bit i = PSN cack + 1 + i */
	__u32 ce_pkts;           /* of which CE marked */
	__u32 dup_pkts;          /* of which duplicates (by CSN) */
	__u64 rx_bytes;          /* payload bytes of new CSNs from this path */
};

struct xr_rx_state {
	struct bpf_spin_lock lock;
	__u32 csn_next;          /* all CSNs before this arrived */
	__u64 csn_ring[XR_CSN_WIN / 64]; /* bit (csn % XR_CSN_WIN): arrived */
	__u64 last_rx_ns;        /* when data last arrived: the library reads it
	                          * when a peer-silence deadline passes */
	__u64 act_epoch;         /* last activity window it was counted in */
	struct xr_rx_path path[XR_MAX_PATHS];
};

/* ---- xr_rq: HASH posted receives, for SEND placement ------------------ */
/* The library posts the n-th receive of a stream under slot n % XR_RQ_SLOTS
 * with msn = n; a SEND carrying MSN n lands in it, or is NAKed "receiver
 * not ready" if nothing (or an older receive) is there.
 *
 * state: the first packet of the SEND to arrive (any offset) claims the
 * receive (OPEN -> TAKEN, compare-and-swap); the library may take back a
 * receive no packet has claimed (OPEN -> RECALLED, by the syscall program
 * bpf/rqrecall.bpf.c, the same compare-and-swap), after which the SEND is
 * NAKed "receiver not ready" until a receive is posted again.  One of the
 * two wins, so a receive is never both written and handed elsewhere
 * (shared receive queues move receives between QPs this way).
 *
 * XDP claims before it reads the entry, and then checks that the entry is
 * the one it looked for (conn, stream, msn): a hash entry deleted or
 * replaced by the library may be reused for another key at once, and a
 * packet that looked it up before that must not write into the receive
 * it holds now.  The library leaves a recalled entry in place (RECALLED)
 * until that receive number is posted again or the stream is freed. */
#define XR_RQ_SLOTS 256
#define XR_DEFAULT_MAX_RQ 65536
#define XR_RQ_OPEN 0
#define XR_RQ_TAKEN 1
#define XR_RQ_RECALLED 2

struct xr_rq_key {
	__u32 conn;
	__u16 stream;
	__u16 slot;
};

struct xr_rq_ent {
	__u32 msn;
	__u32 len;               /* buffer length */
	__u64 mem_off;           /* buffer's position in the domain's memory */
	__u32 conn;              /* its key's, checked after the claim */
	__u16 stream;
	__u16 rsvd;
	__u32 state;             /* XR_RQ_*: posted as OPEN */
	__u32 rsvd1;
};

/* The argument (context) of a test run of bpf/rqrecall.bpf.c: take back
 * receive msn posted under key, if no packet claimed it.  The run's return
 * value: XR_RQ_OPEN (recalled now), XR_RQ_TAKEN (a SEND has it),
 * XR_RQ_RECALLED (already), or XR_RQ_GONE (no such receive). */
#define XR_RQ_GONE 3
struct xr_rq_recall {
	struct xr_rq_key key;
	__u32 msn;
	__u32 rsvd;
};

/* ---- xr_reads: HASH open READ windows, for READ_RESP placement -------- */
#define XR_DEFAULT_MAX_READS 65536

struct xr_read_key {
	__u32 conn;
	__u32 read_id;
};

struct xr_read_ent {
	__u64 mem_off;           /* where the answer goes */
	__u32 len;               /* exactly this many bytes */
	__u32 rsvd;
};

/* ---- xr_evb: ARRAY[max_conns], mmapable: fair shares of event rings --- */
/* Records XDP wrote into the owning domain's ring for each connection,
 * and records of it the library consumed (written by the library through
 * its mapping).  XDP writes no record for a connection with evq_share
 * records waiting (data is refused, answers dropped), so one connection
 * cannot fill the ring the device's other connections need. */
struct xr_evb {
	__u32 produced;
	__u32 consumed;
	/* Written by the library: nonzero while no thread of the owner sleeps
	 * on the ring (it polls, or is busy), so a record needs no wake-up.
	 * XDP then commits with BPF_RB_NO_WAKEUP: a wake-up costs an
	 * inter-processor interrupt per record (irq_work), most of a small
	 * message's round trip on a virtual machine.  0, the value of an
	 * entry nobody set, wakes as before.  The library sets it to 0 before
	 * it sleeps and then checks the ring once more; XDP reads it with a
	 * full barrier after reserving the record, so one of the two sees
	 * the other (docs/PROTOCOL.md 15). */
	__u32 quiet;
	__u32 rsvd;
	/* Written by the library: the receives of stream rq_stream numbered
	 * below rq_done (serial arithmetic) are complete, while rq_on is 1.
	 * XDP refuses a SEND into one of them ("receiver not ready", as a
	 * receive that is not there), so the library need not delete a
	 * completed receive's xr_rq entry before it hands the buffer back:
	 * it retires them in batches (docs/PROTOCOL.md 11).  The library
	 * writes rq_stream and rq_done before it sets rq_on; 0 (an entry
	 * nobody set) checks nothing. */
	__u32 rq_done;
	__u16 rq_stream;
	__u16 rq_on;
};

/* ---- xr_msgs: ARRAY[max_conns * XR_MSG_SLOTS] of __u64 ---------------- */
/* Slot of message m of connection c is c * XR_MSG_SLOTS + m % XR_MSG_SLOTS.
 * Value: msg_id << 32 | payload bytes placed so far. */
#define XR_MSG_SLOT_ID(v) ((__u32)((v) >> 32))
#define XR_MSG_SLOT_BYTES(v) ((__u32)(v))

/* ---- xr_stats: PERCPU_ARRAY[XR_STAT_MAX] of __u64 --------------------- */
enum xr_stat {
	XR_STAT_RX_DATA = 0,     /* data packets accepted, not NAKed (incl.
	                          * duplicates) */
	XR_STAT_RX_BYTES,        /* payload bytes placed */
	XR_STAT_RX_DUP,          /* duplicates acknowledged, not placed */
	XR_STAT_RX_ACK,          /* ACKs and probe replies handed to the library */
	XR_STAT_RX_NAK,          /* NAKs handed to the library */
	XR_STAT_TX_ACK,          /* ACKs sent with XDP_TX */
	XR_STAT_TX_NAK,          /* NAKs sent with XDP_TX */
	XR_STAT_MSG_DONE,        /* messages whose last byte landed, and READ
	                          * requests handed to the library */
	XR_STAT_PROBE,           /* probes answered */
	XR_STAT_PASS,            /* not xroce: passed to the stack */
	/* drops, each for one reason */
	XR_STAT_DROP_TRUNC,      /* shorter than its headers claim */
	XR_STAT_DROP_VERSION,    /* unknown version or type */
	XR_STAT_DROP_NO_CONN,    /* unknown connection id */
	XR_STAT_DROP_CONN_STATE, /* connection not in RTS */
	XR_STAT_DROP_TOKEN,      /* wrong token */
	XR_STAT_DROP_PEER,       /* wrong source address or port */
	XR_STAT_DROP_CSUM,       /* bad UDP checksum */
	XR_STAT_DROP_KEY,        /* bad rkey (NAKed) */
	XR_STAT_DROP_BOUNDS,     /* outside the region or memory (NAKed) */
	XR_STAT_DROP_ACCESS,     /* region lacks the right (NAKed) */
	XR_STAT_DROP_LENGTH,     /* inconsistent offsets/lengths (NAKed); also
	                          * payload > 8192 or path >= 16 (dropped) */
	XR_STAT_DROP_OPCODE,     /* unsupported opcode (NAKed) */
	XR_STAT_DROP_WINDOW,     /* PSN or CSN beyond the receive window */
	XR_STAT_DROP_EVQ_FULL,   /* event ring nearly full: backpressure */
	XR_STAT_DROP_NO_MEM,     /* domain memory missing or page lookup failed */
	XR_STAT_DROP_ACK_LOST,   /* ACK could not be queued to the library */
	XR_STAT_DROP_FRAG,       /* unused: IP fragments and options are passed
	                          * (XR_STAT_PASS) */
	XR_STAT_TX_ACK_FAIL,     /* could not turn a frame into an ACK */
	XR_STAT_EVT_LOST,        /* a RECV or READ_REQ event did not fit */
	XR_STAT_DROP_DEAD,       /* the owning process is gone */
	XR_STAT_NAK_RNR,         /* SEND refused: no receive posted (NAKed) */
	XR_STAT_TX_BUILT,        /* frames built from transmit descriptors
	                          * (test-run engine, txring.h) */
	XR_STAT_DROP_TXR,        /* transmit triggers refused: no such ring,
	                          * wrong secret, bad descriptor */
	XR_STAT_RX_BIND,         /* BIND halves handed to the library */
	XR_STAT_DROP_BIND,       /* BIND messages refused: length, op */
	XR_STAT_RX_CSUM_PARTIAL, /* partially checksummed, taken (xr_ifs) */
	XR_STAT_DROP_MAC,        /* keyed connection: MAC wrong (forged, bit
	                          * flipped, replayed under an old key) */
	XR_STAT_DROP_EVQ_SHARE,  /* the connection has its share of records
	                          * waiting in the event ring (fair shares) */
	XR_STAT_KEY_EPOCH,       /* a peer's first packet under a new key epoch
	                          * (the library installs the one after it) */
	XR_STAT_MAX,
};

/* ---- xr_trace: mmapable ARRAY[XR_TRACE_SLOTS + 1] of xr_trace_rec ----- */
/* Timestamps of the steps XDP takes for traced connections (and for
 * descriptors the library tagged), for latency breakdowns.  A ring that
 * wraps: the slot XR_TRACE_CTL's ns field is the count of records ever
 * written (XDP adds atomically); record i lives at slot i % XR_TRACE_SLOTS.
 * Every reader keeps its own position and skips what it missed. */
#define XR_TRACE_SLOTS 65536u
#define XR_TRACE_CTL XR_TRACE_SLOTS

/* Steps of a message's way, in order (the same numbers as enum
 * xroce_trace_stage in xroce.h).  XDP writes the starred ones; the library
 * the others. */
enum xr_trace_stage {
	XR_TR_POST = 1,          /* the application posted it */
	XR_TR_SEND = 2,          /* its packet went to the transmit engine */
	XR_TR_KICK = 3,          /* the system call that sends it began */
	XR_TR_XDP_BUILD = 4,     /* * XDP built its frame (test-run engine) */
	XR_TR_RX_XDP = 5,        /* * the receiver's XDP took it */
	XR_TR_PLACED = 6,        /* * its payload is in the receiver's memory */
	XR_TR_ACK_TX = 7,        /* * its ACK left with XDP_TX */
	XR_TR_ACK_XDP = 8,       /* the sender's XDP turned the ACK into a record */
	XR_TR_ACK_DONE = 9,      /* the sender's library took that record */
	XR_TR_SEND_CQE = 10,     /* the send completion reached the application */
	XR_TR_RECV_DONE = 11,    /* the receiver's library took the RECV record */
	XR_TR_RECV_CQE = 12,     /* the receive completion reached the application */
	XR_TR_NSTAGES = 13,
};

struct xr_trace_rec {
	__u32 conn;              /* local connection id of the writer's side */
	__u32 msg;               /* the sender's message id */
	__u32 csn;
	__u16 stage;             /* enum xr_trace_stage */
	__u16 cpu;
	__u64 ns;                /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
};

/* ---- telemetry: the first pages of every domain's memory map ---------- */
/* The library publishes each connection's per-path figures here so that
 * another process (`xroce stats`) can read them: it finds the domain's
 * memory map through xr_mem (the outer map's value is the inner map's id)
 * and maps these pages read-only.  Each slot is written under a sequence
 * count: odd while being written; readers retry until they see the same
 * even count before and after copying. */
#define XR_TELEM_MAGIC 0x4c545258u /* "XRTL" */
#define XR_TELEM_VERSION 3
#define XR_TELEM_SLOTS 256

struct xr_telem_path {
	__u16 sport;             /* current entropy */
	__u8 state;              /* enum xroce_path_state */
	__u8 plane;
	__u32 cwnd;              /* packets */
	__u32 inflight;
	__u32 rtt_min_ns, rtt_srtt_ns, rtt_p99_ns;
	__u64 tx_pkts, tx_bytes;
	__u64 retx_pkts;         /* retransmissions sent on this path */
	__u64 lost_pkts;         /* declared lost on this path */
	__u64 acked_pkts;
	__u64 ce_pkts;           /* receiver: CE-marked packets from this path */
	__u64 rx_pkts;           /* receiver: packets from this path */
	__u64 timeouts;
};

struct xr_telem {
	__u32 seq;               /* odd while being written */
	__u32 conn;              /* local connection id; 0 = free slot */
	__u32 peer_conn;
	__u32 npaths;
	__u64 updated_ns;        /* CLOCK_MONOTONIC of the last update */
	__u8 peer_addr[16];
	__u32 state;             /* enum xroce_qp_state */
	__u32 rate_hint_mbps;
	__u64 tx_bytes, acked_bytes, retx_pkts, wr_completed;
	/* The connection's controller (user/algo/cc.h): its window in
	 * thousandths of a packet (it may be under one, paced), the pacing
	 * rate, its cuts by cause, and 1 in compete mode. */
	__u32 cwnd_milli;
	__u32 pace_mbps;         /* 0 = unpaced */
	__u64 cuts_ecn, cuts_delay, cuts_loss;
	__u32 compete;
	__u32 rsvd;
	struct xr_telem_path path[XR_MAX_PATHS];
};

/* How the process transmits on each plane (xroce status shows it). */
enum xr_telem_engine {
	XR_TELEM_ENG_NONE = 0,   /* no such plane, or not said */
	XR_TELEM_ENG_AF_XDP_COPY,
	XR_TELEM_ENG_AF_XDP_ZC,  /* AF_XDP in zero-copy mode */
	XR_TELEM_ENG_TEST_RUN,   /* frames built by XDP in a BPF test run */
};

struct xr_telem_hdr {
	__u32 magic;
	__u32 version;
	__u32 pid;
	__u32 nslots;
	__u32 slot_size;         /* sizeof(struct xr_telem) */
	/* Control messages the device dropped, by reason, and cookies sent
	 * (saturating 32-bit copies of the library's counters). */
	__u32 ctrl_malformed;    /* malformed, or claims that do not agree */
	__u32 ctrl_unauth;       /* without the signature a key requires */
	__u32 ctrl_spoofed;      /* from an address other than the peer's */
	__u32 ctrl_no_room;      /* request queue (or one source's share) full */
	__u32 ctrl_refused;      /* CONNECT from outside accept_from */
	__u32 ctrl_cookies;      /* cookies sent to first CONNECTs */
	__u32 plane_ifindex[XR_MAX_PLANES]; /* 0 = no such plane */
	__u8 plane_engine[XR_MAX_PLANES];   /* enum xr_telem_engine */
	/* 64 bytes: no room left */
};

#define XR_TELEM_BYTES \
	((sizeof(struct xr_telem_hdr) + XR_TELEM_SLOTS * sizeof(struct xr_telem) + \
	  XR_PAGE_SIZE - 1) & ~(unsigned long)(XR_PAGE_SIZE - 1))

/* ---- events: records in each domain's ring buffer (xr_evq) ------------- */
enum xr_evt_type {
	XR_EVT_ACK = 1,          /* an ACK for one of our paths */
	XR_EVT_NAK = 2,          /* a NAK: one packet was rejected */
	XR_EVT_RECV = 3,         /* a message's last byte landed here */
	XR_EVT_PROBE_REPLY = 4,
	XR_EVT_READ_REQ = 5,     /* a peer asks to read (validated) */
	XR_EVT_BIND = 6,         /* a peer's BIND half: struct xr_evt_bind */
	XR_EVT_REKEY = 7,        /* keyed: the peer's stream moved to a new key
	                          * epoch; install the next one */
	XR_EVT_RNR = 8,          /* a SEND's first packet found no receive
	                          * posted: NAKed "receiver not ready"
	                          * (struct xr_evt_rnr); once per retry of the
	                          * sender, not per packet */
};

/* struct xr_evt_recv.flags */
#define XR_RECV_F_ERR 0x1        /* READ_RESP with XR_DF_ERR: the responder
                                  * could not answer (imm: NAK reason) */

struct xr_evt_ack {
	__u32 cack;
	__u32 ack_psn;
	__u32 ts_echo;
	__u32 rate_hint;
	__u64 sack[XR_SACK_WORDS]; /* host order */
	__u32 ce_pkts;
	__u32 rx_pkts;
	__u32 csn_cum;
	__u32 nak_csn;
	__u8 reason;
	__u8 rsvd[3];
	__u32 key_epoch;         /* keyed: the epoch whose key checked it */
};

struct xr_evt_recv {
	__u32 msg_id;
	__u32 msg_len;
	__u32 imm;
	__u16 stream;
	__u8 opcode;
	__u8 flags;              /* XR_RECV_F_* */
	__u64 raddr_end;         /* the message's end: raddr - msg_off + msg_len */
	union {                  /* the data header's field, as it came */
		__u32 rkey;      /* WRITE, WRITE_IMM */
		__u32 msn;       /* SEND, SEND_IMM */
		__u32 read_id;   /* READ_RESP */
	};
	__u16 ssn;
	__u16 rsvd1;
};

struct xr_evt_read {
	__u64 raddr;             /* what to read, at this host */
	__u64 pos;               /* its position in our memory map (validated) */
	__u64 laddr;             /* requester's address for the answer */
	__u32 len;
	__u32 read_id;
	__u32 rkey;
	__u16 stream;
	__u16 ssn;
};

struct xr_evt_probe {
	__u32 seq;
	__u32 ts;
	__u32 rate_hint;
	__u32 key_epoch;         /* keyed: the epoch whose key checked it */
};

struct xr_evt_rekey {
	__u32 epoch;             /* the peer's stream now uses this epoch */
	__u32 rsvd;
};

struct xr_evt_rnr {
	__u32 msn;               /* the receive the SEND needs */
	__u16 stream;
	__u16 rsvd;
};

struct xr_evt {
	__u16 type;              /* enum xr_evt_type */
	__u8 path;
	__u8 flags;              /* XR_AF_* for ACK/NAK; XR_PF_* for
	                          * PROBE_REPLY */
	__u32 conn;              /* local connection id */
	__u64 rx_ns;             /* receiver clock when XDP saw the packet */
	union {
		struct xr_evt_ack ack;
		struct xr_evt_recv recv;
		struct xr_evt_probe probe;
		struct xr_evt_read read;
		struct xr_evt_rekey rekey;
		struct xr_evt_rnr rnr;
	};
};

/* A BIND message (wire.h) that reached our data port for connection
 * conn (in state INIT or RTS), with the packet's source: that, not the
 * message, says who sent it.  Its own record type: larger than xr_evt,
 * whose type and conn fields it shares. */
struct xr_evt_bind {
	__u16 type;              /* XR_EVT_BIND */
	__u8 rsvd0[2];
	__u32 conn;
	__u64 rx_ns;
	__u8 src_addr[16];       /* IPv4 as ::ffff:a.b.c.d */
	__u16 src_port;          /* host order */
	__u8 rsvd1[6];
	__u8 msg[256];           /* struct xr_ctrl_msg, as received */
};

_Static_assert(sizeof(struct xr_evt_bind) == 296, "evt bind size");
_Static_assert(sizeof(struct xr_evt_ack) == 72, "evt ack size");
_Static_assert(sizeof(struct xr_evt_recv) == 32, "evt recv size");
_Static_assert(__builtin_offsetof(struct xr_evt_recv, rkey) == 24, "evt recv rkey");
_Static_assert(__builtin_offsetof(struct xr_evt_recv, read_id) == 24, "evt recv read_id");
_Static_assert(sizeof(struct xr_evt) == 88, "evt size");
_Static_assert(sizeof(struct xr_conn) == 240, "conn size");
_Static_assert(sizeof(struct xr_key_peer) == 40, "peer key slot size");
_Static_assert(sizeof(struct xr_evb) == 24, "evb size");
_Static_assert(sizeof(struct xr_mr) == 40, "mr size");
_Static_assert(sizeof(struct xr_telem_path) == 88, "telem path size");
_Static_assert(sizeof(struct xr_telem_hdr) == 64, "telem header size");
_Static_assert(sizeof(struct xr_trace_rec) == 24, "trace record size");

#endif /* XR_CONTRACT_ABI_H */
