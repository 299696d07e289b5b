/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libibverbs on xroce: the objects behind the ibverbs handles.  This layer
 * sits above the native API: it includes <xroce/xroce.h> and system
 * headers only (Debian's <infiniband/verbs.h>, so every structure layout
 * and inline verb is the one applications were compiled with).
 *
 *   device.c   device list (one per xroce interface, or XROCE_IBV_DEVICES
 *              groups of planes), open/close: struct xv_context
 *   query.c    device, port, GID and P_Key queries
 *   mr.c       protection domains, memory regions, fork helpers
 *   cq.c       completion queues, poll_cq, req_notify_cq
 *   channel.c  completion channels (an eventfd)
 *   async.c    asynchronous events (an eventfd)
 *   qp.c       queue pairs: create, destroy, query
 *   modify.c   the QP state machine (ibv_modify_qp) -> xroce_qp_bind
 *   post.c     post_send, post_recv (receive ring and backlog)
 *   srq.c      shared receive queues: receives lent to the attached QPs
 *   srq_worker.c  the thread that moves an SRQ's receives to the QP whose
 *              SEND found none (libxroce's XROCE_EVENT_RECV_NEEDED)
 *   misc.c     strings, rate conversions, sysfs and kernel-ABI helpers,
 *              and the verbs xroce does not have (EOPNOTSUPP)
 *
 * Conventions (ibverbs'): calls returning int give 0 or a positive errno
 * (some -1 with errno, as rdma-core does); calls returning a pointer set
 * errno and return NULL.  Every failure logs one line (XROCE_LOG_LEVEL).
 */
#ifndef XV_H
#define XV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#include "xroce/xroce.h"

#define XV_GID_TBL_LEN 16            /* GID entries a port reports */
#define XV_MAX_WR 16384              /* send and receive work requests per QP */
#define XV_MAX_SGE 16                /* scatter-gather entries per request */
#define XV_MAX_CQE (1 << 22)
#define XV_DEFAULT_MEM (128u << 20)  /* registrable memory per context */
/* Software timers: no sooner than this.  A responder is a process that
 * may be descheduled on a busy host (ib_read_bw at 1% loss with the load
 * at 8 per core failed at perftest's 470 ms). */
#define XV_MIN_TIMEOUT_MS 1000

#define XV_EXPORT __attribute__((visibility("default")))

/* ---- log.c ---------------------------------------------------------------- */
void xv_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Log and return err (a positive errno); errno is set too. */
int xv_fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Log, set errno and return NULL. */
void *xv_null(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* libxroce failed with rc (a negative errno) and logged why already: set
 * errno and return the positive errno / NULL, without a second line. */
int xv_lib_err(int rc);
void *xv_lib_null(int rc);
enum xroce_log_level xv_log_level(void);
void xv_xroce_log(void *arg, enum xroce_log_level level, const char *fmt,
		  va_list ap);

/* ---- device.c ------------------------------------------------------------- */
struct xv_device {
	struct ibv_device dev;       /* first: the handle */
	char planes[XROCE_MAX_PLANES][16];
	int nplanes;
	int index;
	uint64_t guid;               /* host order, from plane 0's MAC */
};

struct xv_gid {
	union ibv_gid gid;
	int plane;
};

struct xv_qp;

struct xv_context {
	struct verbs_context vc;     /* vc.context is the handle */
	struct xv_device *vdev;
	struct xroce_device *xd;
	struct xroce_device_caps caps;
	pthread_mutex_t lock;        /* this layer's lists and tables */
	struct xv_gid gids[XV_GID_TBL_LEN];
	int ngids;
	/* QPs by number (xroce connection ids are small), for completions */
	struct xv_qp **qp_tab;
	uint32_t qp_tab_size;
	/* asynchronous events (async.c) */
	pthread_mutex_t ev_lock;
	struct ibv_async_event *evq;
	uint32_t ev_head, ev_tail, ev_cap;
	/* shared receive queues and the thread that moves their receives to
	 * a QP whose SEND found none (srq_worker.c) */
	pthread_mutex_t srq_lock;    /* the list; taken before an SRQ's lock */
	struct xv_srq *srqs;
	pthread_t srq_thread;
	bool srq_thread_on;
	bool srq_stop;
	int srq_efd;                 /* wakes the thread; -1 until it runs */
};

static inline struct xv_context *xv_ctx(struct ibv_context *c)
{
	return (struct xv_context *)((char *)c - offsetof(struct xv_context, vc.context));
}

struct xv_device *xv_device_of(struct ibv_device *d);

/* ---- query.c -------------------------------------------------------------- */
void xv_gids_load(struct xv_context *ctx);
int xv_query_port(struct ibv_context *c, uint8_t port, struct ibv_port_attr *attr,
		  size_t len);
int xv_query_device_ex(struct ibv_context *c,
		       const struct ibv_query_device_ex_input *in,
		       struct ibv_device_attr_ex *attr, size_t len);
/* Index of gid in the context's table, -1 if none. */
int xv_gid_index(struct xv_context *ctx, const union ibv_gid *gid);

/* ---- mr.c ----------------------------------------------------------------- */
struct xv_mr;
struct xv_pd {
	struct ibv_pd pd;            /* first */
	struct xroce_pd *xpd;
	struct xv_mr *mrs;           /* for checking scatter-gather entries */
	pthread_mutex_t lock;
};

struct xv_mr {
	struct ibv_mr mr;            /* first */
	struct xroce_mr *xmr;
	unsigned int access;
	struct xv_mr *next;
};

static inline struct xv_pd *xv_pd(struct ibv_pd *p)
{
	return (struct xv_pd *)p;
}

/* 0 if [addr, +len) is inside a region of pd with lkey (and, if write,
 * LOCAL_WRITE), else an ibv_wc_status saying why not. */
int xv_check_sge(struct xv_pd *pd, uint32_t lkey, uint64_t addr, uint32_t len,
		 bool write);

/* ---- cq.c ----------------------------------------------------------------- */
struct xv_channel;
struct xv_cq {
	struct ibv_cq cq;            /* first */
	struct xroce_cq *xcq;
	struct xv_context *ctx;
	struct xv_channel *chan;
	bool armed;
	/* completions made by this layer (flushes of work posted to a QP
	 * in error), returned before the library's */
	pthread_mutex_t soft_lock;
	struct ibv_wc *soft;
	uint32_t soft_head, soft_tail, soft_cap;
	uint32_t events;             /* completion events handed out */
};

static inline struct xv_cq *xv_cq(struct ibv_cq *c)
{
	return (struct xv_cq *)c;
}

int xv_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);
int xv_req_notify_cq(struct ibv_cq *cq, int solicited_only);
/* Queue a completion made here (a flush); wakes an armed channel. */
void xv_cq_soft(struct xv_cq *cq, const struct ibv_wc *wc);

/* ---- channel.c ------------------------------------------------------------ */
struct xv_channel {
	struct ibv_comp_channel ch;  /* first */
	pthread_mutex_t lock;
	struct xv_cq **q;            /* CQs whose event is pending, in order */
	uint32_t head, tail, cap;
};

/* cq fired (called in the library with its lock held, or by this layer). */
void xv_channel_fire(struct xv_channel *ch, struct xv_cq *cq);
/* Forget pending events of cq (it is being destroyed). */
void xv_channel_forget(struct xv_channel *ch, struct xv_cq *cq);

/* ---- async.c -------------------------------------------------------------- */
void xv_async_handler(const struct xroce_event *ev, void *arg);
void xv_async_post(struct xv_context *ctx, const struct ibv_async_event *ev);
/* Forget queued events of a QP or SRQ (it is being destroyed). */
void xv_async_forget(struct xv_context *ctx, const void *obj);

/* ---- qp.c, modify.c, post.c ----------------------------------------------- */
/* A receive as the application posted it. */
struct xv_rwr {
	uint64_t wr_id;
	int num_sge;
	struct ibv_sge sge[XV_MAX_SGE];
	/* more than one entry: the message lands in a bounce buffer of device
	 * memory, copied out at completion */
	void *bounce;
	struct xroce_mr *bounce_mr;
	uint32_t len;
};

struct xv_srq;
struct xv_qp {
	struct ibv_qp qp;            /* first */
	struct xv_context *ctx;
	struct xroce_qp *xqp;
	pthread_mutex_t lock;        /* the receive ring */
	struct ibv_qp_cap cap;
	bool sig_all;
	/* attributes as the application set them (ibv_query_qp) */
	struct ibv_qp_attr attr;
	bool errored;                /* moved to ERR (by us or the library) */
	uint32_t events_delivered;   /* async events handed out (async.c) */
	/* receive ring: [rq_done, rq_tail) posted by the application, of
	 * which [rq_done, rq_sent) handed to the library (at most
	 * XROCE_MAX_RECV_PER_STREAM at once: the rest waits here) */
	struct xv_rwr *rq;
	uint32_t rq_size;            /* power of two */
	uint32_t rq_done, rq_sent, rq_tail;
	/* attached to a shared receive queue: the ring holds the receives
	 * it lent this QP (srq.c), and its lock is taken before qp->lock */
	struct xv_srq *srq;
	bool last_wqe;               /* IBV_EVENT_QP_LAST_WQE_REACHED posted */
	bool recv_need;              /* a SEND found no receive (atomic) ... */
	uint32_t need_msn;           /* ... this one (atomic) */
	uint32_t feed_mark;          /* srq->feed_gen when last tried as a donor */
};

static inline struct xv_qp *xv_qp(struct ibv_qp *q)
{
	return (struct xv_qp *)q;
}

int xv_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		 struct ibv_send_wr **bad);
int xv_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		 struct ibv_recv_wr **bad);
/* Fill r from an application's receive request, checked against pd: 0, a
 * positive errno (logged), or -1 if its memory is outside pd's regions. */
int xv_rwr_fill(struct xv_context *ctx, struct xv_pd *pd, struct xv_rwr *r,
		const struct ibv_recv_wr *wr);
/* Release what xv_rwr_fill took (a bounce buffer). */
void xv_rwr_release(struct xv_context *ctx, struct xv_rwr *r);
/* Hand waiting receives to the library (qp->lock held). */
void xv_rq_top_up(struct xv_qp *qp);
/* A receive completion from the library: the application's wr_id, the
 * data copied out of a bounce buffer (qp->lock held). */
void xv_rq_complete(struct xv_qp *qp, uint64_t xr_id, struct ibv_wc *wc);
/* The QP is in error: receives not handed to the library are flushed
 * (qp->lock held). */
void xv_rq_flush_backlog(struct xv_qp *qp);
struct xv_qp *xv_qp_by_num(struct xv_context *ctx, uint32_t num);
/* The library moved the QP to the error state (or we did). */
void xv_qp_mark_error(struct xv_qp *qp);

struct ibv_qp *xv_create_qp_ex(struct ibv_context *c,
			       struct ibv_qp_init_attr_ex *attr);

/* ---- srq.c ---------------------------------------------------------------- */
/* A shared receive queue.  Receives wait in its pool and are lent to the
 * attached QPs, each QP holding at most its share (the receives posted and
 * not yet completed, divided among the QPs), so that the QP whose message
 * arrives finds one in place for XDP.  A receive a QP could not use (the QP
 * failed or was destroyed) goes back to the pool, never to a flush. */
struct xv_srq {
	struct ibv_srq srq;          /* first */
	struct xv_context *ctx;
	pthread_mutex_t lock;        /* taken before an attached QP's lock */
	struct xv_rwr *pool;         /* receives not lent: a ring */
	uint32_t size;               /* power of two, >= max_wr */
	uint32_t head, tail;
	uint32_t max_wr, max_sge;
	uint32_t posted;             /* posted, not yet completed: pool + lent */
	uint32_t limit;              /* IBV_SRQ_LIMIT armed, 0 if not */
	struct xv_qp **qps;          /* attached QPs */
	uint32_t nqp, qcap;
	uint32_t rr;                 /* where the next lending round starts */
	uint32_t events_delivered;   /* async events handed out */
	struct xv_srq *next;         /* the context's list (srq_lock) */
	bool need;                   /* an attached QP has recv_need (atomic) */
	uint32_t feed_gen;           /* which search for a donor runs (lock) */
};

#define XV_MAX_SRQ_WR XV_MAX_WR
/* QPs an SRQ tries, in turn, to take a receive back from for one that
 * needs it. */
#define XV_SRQ_TRIES 64

static inline struct xv_srq *xv_srq(struct ibv_srq *s)
{
	return (struct xv_srq *)s;
}

int xv_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad);
/* Attach a new QP (its ring is empty) and lend it its share. */
int xv_srq_attach(struct xv_srq *srq, struct xv_qp *qp);
/* The QP is being destroyed (the library no longer places into its
 * receives): every receive it holds goes back to the pool. */
void xv_srq_detach(struct xv_srq *srq, struct xv_qp *qp);
/* A receive completion of a QP on an SRQ (instead of xv_rq_complete): 0
 * if it is to be dropped (a flush: the receive went back to the pool). */
int xv_srq_complete(struct xv_qp *qp, uint64_t xr_id, struct ibv_wc *wc);
/* The QP failed: receives the library does not hold go back now, the
 * others as the library flushes them (qp->srq->lock not held). */
void xv_srq_qp_error(struct xv_qp *qp);
/* The QP is about to be destroyed: nothing more is lent to it or taken
 * from it through the library (its receives come back at detach). */
void xv_srq_qp_leaving(struct xv_qp *qp);
/* Serve the attached QPs whose SEND found no receive: one receive each,
 * from the pool or taken back from the QP that holds the most. */
void xv_srq_feed(struct xv_srq *srq);

/* ---- srq_worker.c --------------------------------------------------------- */
/* Run the context's SRQ thread (first SRQ) and list srq: 0 or an errno. */
int xv_srq_worker_add(struct xv_context *ctx, struct xv_srq *srq);
void xv_srq_worker_remove(struct xv_context *ctx, struct xv_srq *srq);
/* Stop the thread (the context is closing). */
void xv_srq_worker_stop(struct xv_context *ctx);
/* From libxroce's event handler (device locked: atomics and a write):
 * qp's SEND found no receive msn. */
void xv_srq_worker_poke(struct xv_context *ctx, struct xv_qp *qp, uint32_t msn);

#endif /* XV_H */
