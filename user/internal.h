/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libxroce internals: the objects behind the public handles and the calls
 * the library's files make to one another.  Not installed.
 *
 *   device.c    open/close, planes (AF_XDP sockets), the control socket
 *   domain.c    the device's BPF domain: memory map, event ring, GC
 *   heap.c      allocator of registrable memory inside the memory map
 *   mr.c        protection domains and memory regions
 *   cq.c        completion queues
 *   qp.c        queue pairs: create/destroy, connection state in BPF maps
 *   ctrl.c      connection set-up: CONNECT / ACCEPT / CLOSE
 *   pktbuild.c  Ethernet/IP/UDP/xroce frame construction
 *   sender.c    work requests -> packets, ACK handling, retransmission
 *   progress.c  the event loop: ring buffer, timers, transmission
 */
#ifndef XR_USER_INTERNAL_H
#define XR_USER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "xroce/xroce.h"
#include "contract/abi.h"
#include "bpfmaps.h"
#include "cc.h"
#include "heap.h"
#include "pktbuild.h"
#include "txpath.h"
#include "xsk.h"
#include "txrun.h"
#include "nlroute.h"

struct ring_buffer;

/* ---- logging (log.c) ------------------------------------------------- */
struct xr_logger {
	xroce_log_fn fn;
	void *arg;
	enum xroce_log_level level;
};

void xr_log(const struct xr_logger *lg, enum xroce_log_level lvl,
	    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Log an error and return err (a negative errno). */
int xr_fail(const struct xr_logger *lg, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- time and randomness --------------------------------------------- */
uint64_t xr_now_ns(void);             /* CLOCK_MONOTONIC, as bpf_ktime */
uint64_t xr_random64(void);           /* getrandom(), never fails */

/* ---- device ---------------------------------------------------------- */
#define XR_TX_FRAMES 2048              /* transmit frames per plane */
#define XR_SPORT_LO 49152              /* entropy: UDP source ports */
#define XR_SPORT_N 16384
#define XR_CTRL_PENDING 64             /* queued connection requests */
#define XR_CTRL_RECENT 64              /* answered requests remembered */

struct xr_plane {
	int ifindex;
	char ifname[IF_NAMESIZE];
	uint8_t mac[6];
	int mtu;
	bool has4, has6;
	uint8_t addr4[4];                  /* first address of each family */
	uint8_t addr6[16];
	struct xr_xsk *xsk;                /* AF_XDP engine, or ... */
	struct xr_txrun *txr;              /* ... the test-run engine */
	uint64_t bounce[XR_TXR_RING];      /* txr: frames to free after a flush */
	uint32_t nbounce;
	uint64_t frame_base;               /* UMEM offset of frame 0 */
	uint32_t free_frames[XR_TX_FRAMES];
	uint32_t nfree;
	bool need_kick;
	/* Last next-hop resolution (connections to one peer share it). */
	uint8_t nh_peer[16];
	uint64_t nh_time_ns;
	struct xr_nexthop nh;
};

/* A connection request waiting for xroce_accept(). */
struct xr_ctrl_req {
	struct sockaddr_in6 from;
	uint8_t msg[sizeof(struct xr_ctrl_msg)];
};

/* An answered request, so a retransmitted CONNECT gets the same ACCEPT. */
struct xr_ctrl_recent {
	uint64_t nonce;
	struct sockaddr_in6 from;
	uint8_t reply[sizeof(struct xr_ctrl_msg)];
	bool valid;
};

struct xroce_device {
	struct xr_logger log;
	struct xr_maps maps;
	uint32_t domain_id;
	int mem_fd, evq_fd;
	uint8_t *mem;                      /* the memory map, mmapped */
	size_t mem_len;
	struct xr_heap heap;               /* application memory */
	struct ring_buffer *rb;
	int nplanes;
	struct xr_plane plane[XROCE_MAX_PLANES];
	uint16_t data_port;
	int ctrl_fd;
	uint16_t ctrl_port;
	uint8_t ctrl_addr[16];             /* bound address, :: = any */
	int epfd;
	/* QPs by local connection id (ids are below maps.max_conns). */
	struct xroce_qp **conn_tab;
	uint32_t conn_tab_size;
	struct xroce_qp *qps;              /* list of all QPs */
	struct xroce_cq *cqs;
	struct xroce_pd *pds;
	struct xr_ctrl_req pending[XR_CTRL_PENDING];
	uint32_t npending;
	struct xr_ctrl_recent recent[XR_CTRL_RECENT];
	uint32_t recent_pos;
	/* A blocking xroce_connect waits for the answer to this nonce;
	 * whoever reads the control socket (it, or a progress round) stores
	 * the answer here. */
	uint64_t want_nonce;
	bool have_answer;
	uint8_t answer[sizeof(struct xr_ctrl_msg)];
	uint64_t now_ns;                   /* clock of the current progress run */
	/* The library "watches" the network while it runs a progress round
	 * or sleeps in xroce_wait_cq.  seen_ns is the last instant it did;
	 * after an absence (the application computing for longer than
	 * XR_ABSENT_NS) retransmission timers may not expire before
	 * timer_hold_ns: see xr_progress. */
	uint64_t seen_ns;
	uint64_t timer_hold_ns;
	uint64_t ctrl_next_ns;             /* next look at the control socket */
	uint64_t telem_next_ns;            /* next telemetry update */
	/* Scratch for ACK processing (large, so not on the stack). */
	struct xr_ack_result res;
	/* counters */
	uint64_t evt_unknown_conn, evt_bad, ctrl_bad, ctrl_dropped;
};

/* ---- memory regions (mr.c) -------------------------------------------- */
struct xroce_pd {
	struct xroce_device *dev;
	uint32_t id;
	struct xroce_pd *next;
	struct xr_mr_int *mrs;             /* MRs of this PD */
};

struct xr_mr_int {
	struct xroce_mr pub;               /* first: handle == &pub */
	uint64_t mem_off;
	struct xr_mr_int *next;
};

/* Local MR containing [addr, addr + len) with lkey, or NULL. */
struct xr_mr_int *xr_mr_find(struct xroce_pd *pd, uint32_t lkey,
			     uint64_t addr, uint64_t len);

/* ---- completion queues (cq.c) ----------------------------------------- */
struct xroce_cq {
	struct xroce_device *dev;
	struct xroce_wc *ring;
	uint32_t size;                     /* power of two */
	uint32_t head, tail;               /* consumer, producer */
	struct xroce_cq *next;
	uint32_t users;                    /* QPs using it */
};

static inline uint32_t xr_cq_room(const struct xroce_cq *cq)
{
	return cq->size - (cq->tail - cq->head);
}

/* Queue a completion; -ENOSPC if the CQ is full (the caller retries). */
int xr_cq_push(struct xroce_cq *cq, const struct xroce_wc *wc);

/* ---- queue pairs ------------------------------------------------------ */
/* Where a work request's bytes come from: ranges of the memory map. */
struct xr_seg {
	uint64_t loff;
	uint32_t len;
	uint32_t rsvd;
};

/* Kinds of send-queue entries. */
enum {
	XR_WK_APP = 0,      /* the application's; completes when acknowledged */
	XR_WK_READ = 1,     /* application READ: also waits for the answer */
	XR_WK_INTERNAL = 2, /* our answer to a peer's READ: no completion */
};

/* A work request on the send queue. */
struct xr_swr {
	uint64_t wr_id;
	uint64_t raddr;
	struct xr_seg seg1;                /* the only segment, or ... */
	struct xr_seg *segs;               /* ... nseg > 1 segments (malloc) */
	uint32_t nseg;
	uint32_t len;
	uint32_t rkey;                     /* WRITE/READ: rkey; SEND: MSN;
					    * READ_RESP: the requester's read id */
	uint32_t imm;
	uint32_t msg_id;
	uint32_t npkts;                    /* packets of the message */
	uint32_t nsent;                    /* packets given a CSN so far */
	uint32_t nacked;                   /* packets acknowledged */
	uint32_t seg_off;                  /* bytes given a CSN so far */
	uint32_t read_id;                  /* READ: our id for its answer */
	uint64_t read_loff;                /* READ: where the answer lands */
	uint64_t rnr_until;                /* receiver-not-ready wait ends */
	uint32_t read_len;
	uint16_t stream, ssn;
	uint8_t opcode;                    /* XR_OP_* */
	uint8_t status;                    /* enum xroce_wc_status */
	uint8_t failed;
	uint8_t signaled;                  /* completion wanted on success */
	uint8_t kind;                      /* XR_WK_* */
	uint8_t resp_done;                 /* READ: the answer has landed */
	uint8_t done;                      /* completed (CQE written or not due) */
	uint8_t rnr_count;                 /* receiver-not-ready retries used */
};

/* A packet (CSN) of the connection, in flight or waiting to be resent. */
enum { XR_PK_FREE = 0, XR_PK_INFLIGHT = 1, XR_PK_ACKED = 2 };

struct xr_pk {
	uint32_t wr;                       /* index of its xr_swr (unwrapped) */
	uint32_t off;                      /* offset in the message */
	uint32_t len;
	uint8_t state;
	uint8_t queued;                    /* in the retransmission queue */
	uint8_t rnr;                       /* waiting out a receiver-not-ready */
	uint8_t ntx;                       /* transmissions (saturating) */
};

struct xr_qpath {
	struct xr_txpath tp;
	struct xr_tmpl tmpl;               /* Ethernet/IP/UDP of this path */
	int plane;
	uint16_t sport;
	uint64_t retx_pkts, fast_retx, timeout_retx;
};

/* A posted receive. */
struct xr_rwr {
	uint64_t wr_id;
	uint64_t mem_off;
	uint32_t len;
	uint32_t rsvd;
};

/* A message of a stream that completed here, waiting for its turn. */
struct xr_rpend {
	uint32_t msg_len;
	uint32_t imm;
	uint32_t msn;
	uint8_t opcode;
	uint8_t have;
	uint16_t rsvd;
	uint64_t raddr_end;
};

/* One ordered stream of a connection (allocated on first use). */
struct xr_stream {
	uint16_t tx_ssn;                   /* next message number we send */
	uint16_t rx_ssn;                   /* next one to deliver here */
	uint32_t tx_msn;                   /* receive-consuming messages sent */
	uint32_t rq_post;                  /* receives posted */
	uint32_t rq_done;                  /* receives consumed */
	struct xr_rwr rq[XROCE_MAX_RECV_PER_STREAM];
	struct xr_rpend pend[XR_MSG_SLOTS];
};

/* A peer's READ waiting for room on our send queue. */
struct xr_rdreq {
	uint64_t pos, laddr;
	uint32_t len, read_id;
	uint16_t stream;
	uint16_t rsvd;
};
#define XR_RDQ 256

struct xroce_qp {
	struct xroce_device *dev;
	struct xroce_pd *pd;
	struct xroce_cq *send_cq, *recv_cq;
	struct xroce_qp *next;
	enum xroce_qp_state state;
	uint32_t conn_id, peer_conn;
	uint64_t rx_token, tx_token;
	unsigned int flags;
	uint32_t timeout_ms;
	uint32_t max_inflight;             /* packets */
	uint32_t mtu;                      /* IP MTU in use */
	uint32_t seg_max;                  /* payload bytes per packet */
	int family;
	uint16_t data_port;
	struct sockaddr_in6 peer_ctrl;     /* peer's control socket */
	uint32_t npeer;
	uint8_t peer_addr[XR_MAX_PLANES][16];
	uint32_t init_psn, init_csn;       /* ours */
	uint32_t peer_init_csn;
	uint8_t priv[XR_CTRL_PRIV_MAX];    /* private data we send */
	uint8_t priv_len;
	uint8_t peer_priv[XR_CTRL_PRIV_MAX]; /* ... and the peer sent */
	uint8_t peer_priv_len;
	/* send queue: [sq_head, sq_tail) posted; every request before sq_seg
	 * is fully cut into packets, and none from sq_hi on has started.
	 * Between them requests of different streams are cut in turns. */
	struct xr_swr *sq;
	uint32_t sq_size;                  /* power of two */
	uint32_t sq_head, sq_seg, sq_hi, sq_tail;
	uint16_t seg_rr;                   /* stream served last */
	uint32_t seg_next;                 /* request peek_csn chose */
	uint32_t next_msg_id;
	/* packets: [csn_una, csn_next) in flight or resolved */
	struct xr_pk *pk;
	uint32_t pk_win;                   /* power of two, <= XR_CSN_SEND_WIN */
	uint32_t csn_una, csn_next;
	uint32_t *retx;                    /* CSNs to resend, ring of pk_win */
	uint32_t retx_head, retx_tail;
	/* paths */
	uint32_t npaths;
	struct xr_cc cc;
	struct xr_qpath *path;             /* npaths entries */
	uint64_t last_progress_ns;
	/* streams, receives, READs */
	struct xr_stream *streams[XROCE_MAX_STREAMS];
	uint16_t *stream_ids;              /* the streams in use, in order of use */
	uint32_t nstreams;
	uint64_t timer_due;                /* when xr_qp_timers must run (0: now) */
	uint32_t rnr_retry;
	uint64_t rnr_timer_ns;
	uint32_t *rnr;                     /* CSNs waiting out an RNR, ring */
	uint64_t *rnr_due;
	uint32_t rnr_head, rnr_tail;
	struct xr_rdreq rdq[XR_RDQ];       /* peers' READs not yet queued */
	uint32_t rdq_head, rdq_tail;
	uint64_t inline_off;               /* inline area in the memory map */
	bool complete_dirty;               /* something may have completed */
	bool peer_closed;                  /* the peer's CLOSE arrived */
	/* statistics */
	struct xr_telem *telem;            /* our slot, NULL if none was free */
	struct xroce_qp_stats st;
	uint32_t rate_hint;
};

static inline uint32_t xr_qp_inflight_csns(const struct xroce_qp *qp)
{
	return qp->csn_next - qp->csn_una;
}

static inline struct xr_swr *xr_swr_at(struct xroce_qp *qp, uint32_t idx)
{
	return &qp->sq[idx & (qp->sq_size - 1)];
}

static inline struct xr_pk *xr_pk_at(struct xroce_qp *qp, uint32_t csn)
{
	return &qp->pk[csn & (qp->pk_win - 1)];
}

static inline bool xr_csn_in_flight(const struct xroce_qp *qp, uint32_t csn)
{
	return csn - qp->csn_una < qp->csn_next - qp->csn_una;
}

/* qp.c: BPF map state of a connection. */
int xr_qp_program(struct xroce_qp *qp, uint32_t peer_init_psn,
		  uint32_t peer_init_csn, uint16_t peer_sport_lo,
		  uint16_t peer_sport_n);
int xr_qp_set_map_state(struct xroce_qp *qp, uint32_t state);
/* Move the QP to the error state: fail outstanding work with status (the
 * first request) and XROCE_WC_WR_FLUSH_ERR (the rest). */
void xr_qp_fail(struct xroce_qp *qp, enum xroce_wc_status status,
		const char *why);

/* ctrl.c */
int xr_ctrl_open(struct xroce_device *dev, const char *addr, uint16_t port);
void xr_ctrl_close(struct xroce_device *dev);
/* Read and handle pending control messages without blocking. */
void xr_ctrl_service(struct xroce_device *dev);
void xr_ctrl_send_close(struct xroce_qp *qp);
/* One datagram received on the control socket (len bytes from `from`, whose
 * address length was flen): checked and handled.  Returns 1 if it is the
 * answer (ACCEPT / REJECT) to the connect waiting for want_nonce (then
 * copied to *answer), else 0.  ctrl_drain's path; tests feed it directly. */
int xr_ctrl_handle_msg(struct xroce_device *dev, const void *buf, size_t len,
		       const struct sockaddr_in6 *from, socklen_t flen,
		       uint64_t want_nonce, struct xr_ctrl_msg *answer);

/* sender.c: packets and transmission */
void xr_qp_queue_retx(struct xroce_qp *qp, uint32_t csn);
void xr_qp_pkt_acked(struct xroce_qp *qp, uint32_t csn);
int xr_qp_send_probe(struct xroce_qp *qp, int pi, uint64_t now);
/* acks.c: acknowledgements, timers, completions */
void xr_qp_release_wr(struct xroce_qp *qp, struct xr_swr *w);
/* sender.c / acks.c */
void xr_qp_on_ack(struct xroce_qp *qp, const struct xr_evt *e);
void xr_qp_on_probe_reply(struct xroce_qp *qp, const struct xr_evt *e);
void xr_qp_on_recv(struct xroce_qp *qp, const struct xr_evt *e);
void xr_qp_on_read_req(struct xroce_qp *qp, const struct xr_evt *e);

/* recv.c: receives, streams, delivery of receive completions */
struct xr_stream *xr_stream_get(struct xroce_qp *qp, uint16_t id);
void xr_qp_deliver(struct xroce_qp *qp);
void xr_qp_free_streams(struct xroce_qp *qp);
void xr_qp_flush_recv(struct xroce_qp *qp);
/* Transmit what windows and pacing allow; returns packets queued. */
int xr_qp_transmit(struct xroce_qp *qp);
/* Run expired timers; returns the next deadline (UINT64_MAX if none). */
uint64_t xr_qp_timers(struct xroce_qp *qp);
/* Complete finished work requests into the CQs. */
void xr_qp_complete(struct xroce_qp *qp);
/* True if the QP has something it could send right now. */
bool xr_qp_has_tx_work(const struct xroce_qp *qp);
/* When the QP can send next: 0 = now, a time (pacing), or UINT64_MAX
 * (nothing to send, or windows full: an acknowledgement will wake us). */
uint64_t xr_qp_tx_ready(struct xroce_qp *qp, uint64_t now);
/* The peer received every CSN before csn (from its CLOSE). */
void xr_qp_acked_below(struct xroce_qp *qp, uint32_t csn);
int xr_qp_init_paths(struct xroce_qp *qp);

/* device.c */
int xr_plane_frame_get(struct xr_plane *pl, uint64_t *addr);
void xr_plane_frame_put(struct xr_plane *pl, uint64_t addr);
void xr_plane_reap(struct xr_plane *pl);
/* Transmit slots free on the plane's engine (descriptors or ring slots). */
uint32_t xr_plane_tx_room(const struct xr_plane *pl);
/* Send what was queued: AF_XDP kick (-EAGAIN: busy, call again), or the
 * test run of the queued descriptors. */
int xr_plane_kick(struct xr_plane *pl);

/* domain.c */
int xr_domain_create(struct xroce_device *dev, size_t mem_len);
void xr_domain_destroy(struct xroce_device *dev);
int xr_domain_gc(const struct xr_logger *lg, const struct xr_maps *m);

/* telem.c: telemetry in the first pages of the memory map */
void xr_telem_init(struct xroce_device *dev);
void xr_telem_attach(struct xroce_qp *qp);   /* take a slot (if any free) */
void xr_telem_detach(struct xroce_qp *qp);
void xr_telem_publish(struct xroce_qp *qp);

/* progress.c: one round of work.  Returns 0 if there is more to do right
 * now (transmission or an expired timer), else the time of the next timer
 * (UINT64_MAX if none), so a caller may sleep until then. */
uint64_t xr_progress(struct xroce_device *dev);
int xr_progress_attach(struct xroce_device *dev); /* creates dev->rb */
void xr_progress_events(struct xroce_device *dev); /* drain the event ring */

#endif /* XR_USER_INTERNAL_H */
