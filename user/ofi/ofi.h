/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The libfabric provider "xroce" (build/lib/libxroce-fi.so): FI_EP_MSG
 * endpoints with connection management, FI_MSG and FI_RMA over libxroce's
 * public API (include/xroce/xroce.h) and nothing below it.  ofi_rxm layers
 * FI_EP_RDM and FI_TAGGED on top.
 *
 *   libfabric object    xroce object
 *   fabric              -
 *   domain              a PD on the process's device for one interface
 *                       (devices are shared: devreg)
 *   passive endpoint    a listening port of that device (xroce_listen)
 *   endpoint            a QP, connected with xroce_connect_start /
 *                       xroce_accept_conn_req, private data = CM data
 *   completion queue    an xroce CQ, FI_WAIT_FD through its notification
 *   event queue         connection events, from the CM progress (cm)
 *   memory region       xroce_reg_mr; memory the library cannot register
 *                       is used through bounce buffers (local access only)
 *
 * The room, bottom up (each file's header says what it offers):
 *   prov      the provider entry point, parameters, logging
 *   nosys     the calls not offered (-FI_ENOSYS)
 *   addr      socket addresses of interfaces, endpoints and peers
 *   devreg    one xroce device per interface and process, shared
 *   check     fi_getinfo hints against what the provider can do
 *   getinfo   fi_getinfo: one fi_info per xroce interface
 *   fabric    the fabric object, fi_trywait
 *   bounce    bounce buffers in device memory
 *   mr        memory registration
 *   eq        event queues
 *   cq        completion queues
 *   cqe       xroce completions as libfabric entries
 *   domain    domains and their pools of operations
 *   post      what every data call shares: operations, scatter-gather lists
 *   msg       fi_send / fi_recv and friends
 *   rma       fi_read / fi_write and friends
 *   ep_msg    active endpoints: bind, enable, close, options
 *   pep       passive endpoints
 *   cm        connection management: fi_connect, fi_accept, fi_reject,
 *             fi_shutdown and the progress that turns them into events
 */
#ifndef XRF_OFI_H
#define XRF_OFI_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

#include "xroce/xroce.h"

#define XRF_NAME "xroce"
#define XRF_PROV_VERSION FI_VERSION(0, 1)
#define XRF_FI_VERSION FI_VERSION(1, 17)

#define XRF_IOV_LIMIT 4              /* receive / local READ entries */
#define XRF_TX_SIZE_MAX 16384        /* send work requests per endpoint */
#define XRF_RX_SIZE_MAX XROCE_MAX_RECV_PER_STREAM
#define XRF_INJECT_SIZE 4096
#define XRF_CQ_BATCH 64              /* completions read from xroce at once */
#define XRF_MAGIC_MR 0x78726d72u     /* "xrmr": a descriptor is ours */

extern struct fi_provider xrf_prov;

/* ---- prov.c ---------------------------------------------------------- */
struct xrf_params {
	char *iface;                  /* FI_XROCE_IFACE: interfaces to offer */
	size_t mem_size;              /* FI_XROCE_MEM_SIZE: device memory */
	size_t bounce_max;            /* FI_XROCE_BOUNCE_MAX */
	int timeout_ms;               /* FI_XROCE_TIMEOUT_MS: peer silence */
	int cm_timeout_ms;            /* FI_XROCE_CM_TIMEOUT_MS: connect */
	int npaths;                   /* FI_XROCE_PATHS */
	int progress_thread;          /* FI_XROCE_PROGRESS_THREAD */
};
extern struct xrf_params xrf_params;
void xrf_params_init(void);
/* libxroce's log lines, through libfabric's log (arg: struct xrf_dev). */
void xrf_xroce_log(void *arg, enum xroce_log_level level, const char *fmt,
		   va_list ap);
/* Calls an object does not support. */
int xrf_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags);
int xrf_no_control(struct fid *fid, int command, void *arg);
int xrf_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		    void **ops, void *context);
int xrf_no_ops_set(struct fid *fid, const char *name, uint64_t flags,
		   void *ops, void *context);
int xrf_no_tostr(const struct fid *fid, char *buf, size_t len);
extern struct fi_ops_tagged xrf_no_tagged;
extern struct fi_ops_atomic xrf_no_atomic;
extern struct fi_ops_collective xrf_no_collective;

/* ---- addr.c ---------------------------------------------------------- */
union xrf_sa {
	struct sockaddr sa;
	struct sockaddr_in in;
	struct sockaddr_in6 in6;
};
/* Length of a FI_SOCKADDR_IN / _IN6 address, 0 if it is neither. */
size_t xrf_sa_len(const void *addr, size_t len);
uint16_t xrf_sa_port(const union xrf_sa *a);
void xrf_sa_set_port(union xrf_sa *a, uint16_t port);
/* Numeric host string of a (for libxroce's calls). */
int xrf_sa_host(const union xrf_sa *a, char *buf, size_t len);
/* An IPv4 / IPv6 address from libxroce's 16-byte form (v4 mapped). */
void xrf_sa_from16(union xrf_sa *a, const uint8_t addr[16], uint16_t port,
		   int family);
/* Copy a to (addr, *addrlen) as fi_getname does (-FI_ETOOSMALL if short). */
int xrf_sa_out(const union xrf_sa *a, void *addr, size_t *addrlen);

/* ---- devreg.c -------------------------------------------------------- */
struct xrf_dev {
	struct xrf_dev *next;
	int refs;
	char ifname[IF_NAMESIZE];
	struct xroce_device *dev;
	int err;                      /* opening it failed: -FI_E* */
	bool any_memory;              /* xroce_reg_mr takes any memory */
	int quiet;                    /* probing: library lines at debug level */
};
/* The process's device for ifname, opened on first use (a failure is
 * remembered: an interface without xroce's program is asked once).
 * Devices stay open until the provider is unloaded. */
int xrf_dev_get(const char *ifname, struct xrf_dev **out);
void xrf_dev_put(struct xrf_dev *xd);
void xrf_dev_cleanup(void);

/* ---- check.c, getinfo.c ------------------------------------------------ */
/* 0 if hints can be met by prov (one of ours), else -FI_ENODATA. */
int xrf_check_hints(uint32_t version, const struct fi_info *prov,
		    const struct fi_info *hints);
/* prov narrowed to what hints ask (modes, sizes, mr_mode, ...). */
void xrf_alter_info(uint32_t version, struct fi_info *prov,
		    const struct fi_info *hints);
int xrf_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints, struct fi_info **info);
/* The interface an fi_info's domain names ("xroce_IF"), into ifname. */
int xrf_domain_ifname(const struct fi_info *info, char ifname[IF_NAMESIZE]);

/* ---- fabric.c -------------------------------------------------------- */
struct xrf_fabric {
	struct fid_fabric fabric_fid;
	pthread_mutex_t lock;
	int refs;                     /* domains, peps, eqs */
};
int xrf_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
	       void *context);

/* ---- bounce.c -------------------------------------------------------- */
struct xrf_bounce {
	struct xrf_bounce *next;
	uint8_t *addr;
	uint32_t lkey;
	uint8_t cls;
};
struct xrf_arena;
struct xrf_bpool {
	struct xrf_arena *arenas;
	uint8_t *cur, *end;
	uint32_t cur_lkey;
	size_t total;
	struct xrf_bounce *free[32];
};
struct xrf_domain;
/* A buffer of at least len bytes in device memory; -FI_EAGAIN when the
 * pool is at its limit (retry after completions), -FI_EMSGSIZE if len can
 * never fit.  Called with the domain lock held. */
int xrf_bounce_get(struct xrf_domain *dom, size_t len, struct xrf_bounce **out);
void xrf_bounce_put(struct xrf_domain *dom, struct xrf_bounce *b);
void xrf_bounce_fini(struct xrf_domain *dom);

/* ---- mr.c ------------------------------------------------------------ */
struct xrf_mr {
	struct fid_mr mr_fid;
	uint32_t magic;
	struct xrf_domain *dom;
	struct xroce_mr *xmr;         /* NULL: host memory, used via bounce */
	const uint8_t *addr;
	size_t len;
	uint64_t access;
};
extern struct fi_ops_mr xrf_mr_ops;
/* desc as one of our regions covering [buf, +len) that libxroce can use
 * in place; NULL if the data must go through a bounce buffer. */
struct xroce_mr *xrf_desc_xmr(void *desc, const void *buf, size_t len);

/* ---- eq.c ------------------------------------------------------------ */
struct xrf_eq_entry;
struct xrf_eq {
	struct fid_eq eq_fid;
	struct xrf_fabric *fab;
	pthread_mutex_t lock;
	struct xrf_eq_entry *head, *tail;
	uint8_t err_data[XROCE_PRIVATE_DATA_MAX];
	enum fi_wait_obj wait_obj;
	int efd;                      /* eventfd for FI_WAIT_FD, else -1 */
	int refs;                     /* pep / ep bindings */
	uint64_t flags;
};
int xrf_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		struct fid_eq **eq, void *context);
/* Queue a connection event (data: private data) or an error. */
int xrf_eq_push_cm(struct xrf_eq *eq, uint32_t event, fid_t fid,
		   struct fi_info *info, const void *data, size_t len);
int xrf_eq_push_err(struct xrf_eq *eq, fid_t fid, int err, int prov_errno,
		    const void *data, size_t len);
/* Drop queued events of fid (it is being closed). */
void xrf_eq_forget(struct xrf_eq *eq, fid_t fid);
int xrf_eq_trywait(struct xrf_eq *eq);

/* ---- cq.c, cqe.c ----------------------------------------------------- */
struct xrf_cq {
	struct fid_cq cq_fid;
	struct xrf_domain *dom;
	struct xroce_cq *xcq;
	enum fi_cq_format format;
	size_t entry_size;
	pthread_mutex_t lock;
	/* Completions due to the application, read from the xroce CQ and not
	 * delivered yet: [head, tail) of a ring of cap entries (grows).  The
	 * others (inject, FI_SELECTIVE_COMPLETION) are released as they are
	 * read, so an application that never reads a CQ it does not need
	 * entries from still gets its queues back. */
	struct xroce_wc *ring;
	size_t head, tail, cap;
	struct fi_cq_err_entry err;   /* the error fi_cq_readerr returns */
	bool err_ready;
	enum fi_wait_obj wait_obj;
	int efd;
	volatile int signaled;
	int refs;                     /* endpoints bound */
};
int xrf_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		struct fid_cq **cq, void *context);
int xrf_cq_trywait(struct xrf_cq *cq);
/* Read the xroce CQ into the ring (a post finding its queue full: the
 * room it waits for may be held by completions nobody will read). */
void xrf_cq_sweep(struct xrf_cq *cq);
struct xrf_op;
/* What one xroce completion becomes: 1 (entry written at *out), 0 (no
 * entry due: released), -FI_EAVAIL (an error: cq->err filled). */
int xrf_cqe_convert(struct xrf_cq *cq, const struct xroce_wc *wc, void *out);
/* No entry is due for wc: its operation is released now (true). */
bool xrf_cqe_silent(struct xrf_cq *cq, const struct xroce_wc *wc);
const char *xrf_wc_strerror(int prov_errno);

/* ---- domain.c, post.c ------------------------------------------------ */
struct xrf_op {
	struct xrf_op *next;          /* on the free list */
	void *context;
	uint64_t flags;               /* completion flags */
	struct xrf_bounce *bounce;
	struct iovec iov[XRF_IOV_LIMIT]; /* where bounced data is copied out */
	size_t iov_count;
	void *buf;
	size_t len;
	uint8_t report;               /* an entry on success */
	uint8_t report_err;           /* an entry on failure */
	struct xrf_ep *ep;            /* NULL once the endpoint is closed */
};
struct xrf_op_chunk;
struct xrf_domain {
	struct fid_domain domain_fid;
	struct xrf_fabric *fab;
	struct xrf_dev *xd;
	struct xroce_pd *pd;
	struct fi_info *info;
	pthread_mutex_t lock;         /* ops, bounce buffers */
	struct xrf_op *free_ops;
	struct xrf_op_chunk *chunks;
	struct xrf_bpool bp;
	int refs;                     /* endpoints, CQs, regions */
	uint32_t mr_seq;              /* keys of host-memory regions */
	bool host_remote_warned;
};
int xrf_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **dom, void *context);
struct xrf_op *xrf_op_get(struct xrf_domain *dom);
/* Operations naming ep stop naming it (called with the domain lock). */
void xrf_domain_forget_ep(struct xrf_domain *dom, struct xrf_ep *ep);
/* Release op and its bounce buffer (domain lock taken). */
void xrf_op_put(struct xrf_domain *dom, struct xrf_op *op);

/* ---- ep_msg.c, post.c, msg.c, rma.c ---------------------------------- */
enum xrf_ep_state {
	XRF_EP_IDLE = 0,
	XRF_EP_CONNECTING,
	XRF_EP_CONNECTED,
	XRF_EP_SHUTDOWN,              /* peer gone or fi_shutdown called */
};
/* A connection request reported with FI_CONNREQ (info->handle).  Held by
 * its passive endpoint and by an endpoint made from the fi_info; freed
 * when both are closed, so a handle the application still has stays
 * valid while either lives. */
struct xrf_connreq {
	struct fid fid;               /* FI_CLASS_CONNREQ */
	struct xrf_dev *xd;
	struct xroce_conn_req req;
	int refs;
	bool answered;                /* accepted or rejected */
	struct xrf_connreq *next;     /* on its passive endpoint's list */
};
struct xrf_ep {
	struct fid_ep ep_fid;
	struct xrf_domain *dom;
	struct fi_info *info;
	struct xrf_cq *tx_cq, *rx_cq;
	bool tx_selective, rx_selective;
	uint64_t tx_op_flags, rx_op_flags;
	struct xrf_eq *eq;
	struct xroce_qp *qp;
	enum xrf_ep_state state;
	bool shutdown_reported;
	struct xrf_connreq *connreq;  /* the request fi_accept answers */
	union xrf_sa peer;
	pthread_mutex_t lock;         /* post calls, state */
	uint32_t tx_posted, rx_posted;/* outstanding, for -FI_EAGAIN */
	uint32_t tx_size, rx_size;
	struct xrf_ep *cm_next;       /* on the CM list */
	bool on_cm;
};
int xrf_endpoint(struct fid_domain *domain, struct fi_info *info,
		 struct fid_ep **ep, void *context);
int xrf_ep_enable(struct xrf_ep *ep);
extern struct fi_ops_msg xrf_msg_ops;
extern struct fi_ops_rma xrf_rma_ops;
extern struct fi_ops_cm xrf_ep_cm_ops;
/* One send-side work request: op filled, data gathered (bounced if it
 * must be), posted; -FI_EAGAIN when queues or bounce buffers are full. */
struct xrf_tx {
	const struct iovec *iov;
	void **desc;
	size_t count;
	enum xroce_wr_opcode opcode;
	uint64_t raddr, rkey;
	uint64_t data;
	uint64_t flags;               /* FI_INJECT, FI_COMPLETION, ... */
	void *context;
	uint64_t cflags;              /* completion flags */
};
ssize_t xrf_post_tx(struct xrf_ep *ep, const struct xrf_tx *tx);
ssize_t xrf_post_rx(struct xrf_ep *ep, const struct iovec *iov, void **desc,
		    size_t count, void *context, uint64_t flags);
/* op's completion was consumed: its endpoint's queue has room again. */
void xrf_ep_done(struct xrf_domain *dom, struct xrf_op *op);

/* ---- pep.c ----------------------------------------------------------- */
struct xrf_pep {
	struct fid_pep pep_fid;
	struct xrf_fabric *fab;
	struct fi_info *info;
	struct xrf_eq *eq;
	struct xrf_dev *xd;
	union xrf_sa addr;
	bool listening;
	struct xrf_pep *cm_next;
	struct xrf_connreq *reqs;     /* requests reported (cm.c's lock) */
};
int xrf_passive_ep(struct fid_fabric *fabric, struct fi_info *info,
		   struct fid_pep **pep, void *context);

/* ---- cm.c ------------------------------------------------------------ */
int xrf_cm_reject(struct fid_pep *pep, fid_t handle, const void *param,
		  size_t paramlen);
/* The passive endpoint's requests, released (unanswered ones rejected). */
void xrf_cm_pep_release_reqs(struct xrf_pep *pep);
/* Turn connection progress into events: requests to listening endpoints,
 * connects answered, peers gone.  Called by EQ reads and a thread. */
void xrf_cm_progress(void);
void xrf_cm_add_pep(struct xrf_pep *pep);
void xrf_cm_del_pep(struct xrf_pep *pep);
void xrf_cm_add_ep(struct xrf_ep *ep);
void xrf_cm_del_ep(struct xrf_ep *ep);
/* The CM thread runs while event queues exist. */
int xrf_cm_thread_get(void);
void xrf_cm_thread_put(void);
void xrf_connreq_hold(struct xrf_connreq *cr);
/* Drop a hold; reject first if unanswered and reject is set. */
void xrf_connreq_release(struct xrf_connreq *cr, bool reject);

#endif /* XRF_OFI_H */
