/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A queue pair (one connection) as the engine keeps it: its send queue of
 * work requests, the packets (CSNs) in flight, its paths with their send
 * windows and congestion control, its streams and posted receives, and the
 * peers' READs waiting to be answered.
 */
#ifndef XR_ENGINE_QP_H
#define XR_ENGINE_QP_H

#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>

#include "xroce/xroce.h"
#include "contract/abi.h"
#include "cc.h"
#include "pktbuild.h"
#include "txpath.h"

#define XR_MAX_SQ (1u << 16)           /* send work requests per QP */

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
	/* The data header's key field, whose meaning the opcode gives. */
	union {
		uint32_t rkey;             /* WRITE, READ: the peer's region */
		uint32_t msn;              /* SEND: the receive it fills */
		uint32_t peer_read_id;     /* READ_RESP: the requester's read */
	};
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
	uint8_t fenced;                    /* READ_RESP: its region went away;
					    * it sends "cannot answer" instead */
	uint32_t src_rkey;                 /* READ_RESP: the region it reads */
	uint32_t rnr_count;                /* receiver-not-ready retries used
	                                    * (saturating) */
};

/* The wait before a retry after "receiver not ready" doubles from the
 * responder's rnr_timer up to this power of two, then stays: a request
 * allowed to retry forever (ibverbs' rnr_retry 7) retries every
 * 64 x rnr_timer at the slowest, not after seconds. */
#define XR_RNR_MAX_SHIFT 6

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
	uint32_t msg_id;                   /* the sender's number (tracing) */
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
	uint32_t rq_hi;                    /* 1 + the highest posted: entries
	                                    * up to it may be in xr_rq (those
	                                    * of receives taken back too) */
	uint32_t need_noted;               /* 1 + the receive a waiting
	                                    * WRITE_WITH_IMM was reported for */
	struct xr_rwr rq[XROCE_MAX_RECV_PER_STREAM];
	struct xr_rpend pend[XR_MSG_SLOTS];
};

/* A peer's READ waiting for room on our send queue. */
struct xr_rdreq {
	uint64_t pos, laddr;
	uint64_t raddr;                    /* what it reads, at this host ... */
	uint32_t rkey;                     /* ... in this region */
	uint32_t len, read_id;
	uint16_t stream;
	uint16_t rsvd;
};

/* Header-MAC keys of a keyed connection (keys.c, wire.h "Keyed
 * connections"). */
struct xr_qkeys {
	bool on;
	bool client;                       /* we connected: owner 0 */
	bool next_ready;                   /* the peer holds our epoch + 1 */
	uint32_t epoch;                    /* our stream's key epoch */
	__u64 data[2];                     /* its key for our DATA and PROBEs */
	uint64_t sent;                     /* transmissions under it */
	uint64_t horizon;                  /* transmissions an epoch may last */
	uint32_t peer_epoch[2];            /* the peer's epochs we installed,
					    * by slot */
	uint64_t probe_ns;                 /* next probe while we wait */
	uint64_t epochs, waits;            /* epochs moved, waits for the peer */
};
#define XR_RDQ 256
#define XR_RQ_RETIRE 32              /* retirements per batch (rqretire.c) */

struct xr_cm_conn;

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
	uint32_t mtu_want;                 /* a lower one to take once idle */
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
	/* rqretire.c: completed receives of the guarded stream whose xr_rq
	 * entries wait for one batch deletion */
	uint32_t rq_retire[XR_RQ_RETIRE];
	uint32_t rq_nretire;
	uint16_t rq_guard_stream;
	bool rq_guarded;                   /* xr_evb.rq_* in use */
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
	bool close_acked;                  /* the peer answered our CLOSE */
	/* bind.c: connection made from out-of-band information */
	struct xr_bind *bind;              /* NULL unless bound or sent a half */
	bool app_error;                    /* xroce_qp_to_error: no event */
	struct xr_cm_conn *cm;             /* a connect without blocking (cm.c) */
	uint16_t ctrl_lport;               /* local control port (0: the device's) */
	bool keyed;                        /* conn_key signs CLOSE / CLOSE_ACK */
	struct xr_qkeys mk;                /* ... and gives the header MACs */
	uint64_t last_heard_ns;            /* anything from the peer (keep-alive) */
	uint64_t ka_next_ns;               /* next keep-alive probe */
	uint32_t ka_probes;                /* ever tried (rotates the paths) */
	/* Probes that went out since last_heard_ns was ka_since_ns, and
	 * when the latest did: the peer is judged silent only on those. */
	uint64_t ka_since_ns, ka_last_sent_ns;
	uint32_t ka_sent, ka_tries;        /* ... and rounds that tried to */
	uint8_t conn_key[32];              /* from the cluster key, both nonces */
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

#endif /* XR_ENGINE_QP_H */
