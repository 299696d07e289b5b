/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The device: one process's handle on one or more interfaces ("planes")
 * that carry the xroce XDP program, and everything hanging off it.
 *
 * Locking: every engine function runs with dev->lock held (the api layer
 * takes it); functions that sleep (waiting for a completion, a connection
 * or a CLOSE_ACK) drop it while they sleep.  Callbacks the application
 * registered (CQ notification) run with it held and must not call back
 * into the library.
 */
#ifndef XR_ENGINE_DEVICE_H
#define XR_ENGINE_DEVICE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <net/if.h>
#include <netinet/in.h>

#include "xroce/xroce.h"
#include "contract/abi.h"
#include "contract/txring.h"
#include "bpfmaps.h"
#include "heap.h"
#include "txpath.h"
#include "nlroute.h"
#include "acl.h"
#include "auth.h"
#include "log.h"

struct ring_buffer;
struct xr_xsk;
struct xr_xdptx;
struct xr_rqrecall;

#define XR_TX_FRAMES 2048              /* transmit frames per plane */
#define XR_SPORT_LO 49152              /* entropy: UDP source ports */
#define XR_SPORT_N 16384
#define XR_CTRL_PENDING 64             /* queued connection requests */
#define XR_CTRL_RECENT 64              /* answered requests remembered */
#define XR_CTRL_STASH 32               /* answers kept for connects in flight */
#define XR_LISTEN_MAX 32               /* extra ports: listening, connect sources (cm.c) */
#define XR_CTRL_PER_SOURCE 4           /* queued requests of one address */

struct xr_plane {
	int ifindex;
	char ifname[IF_NAMESIZE];
	uint8_t mac[6];
	int mtu;
	bool has4, has6;
	uint8_t addr4[4];                  /* first address of each family */
	uint8_t addr6[16];
	struct xr_xsk *xsk;                /* AF_XDP engine, or ... */
	struct xr_xdptx *txr;              /* ... frames built by XDP */
	int pkt_fd;                        /* txr: packet socket for kicks of
	                                    * a few frames (plane.c,
	                                    * kick_small); -1: none */
	uint8_t *mem;                      /* the device's memory map */
	uint64_t bounce[XR_TXR_RING];      /* txr: frames to free after a flush */
	uint32_t nbounce;
	uint64_t frame_base;               /* UMEM offset of frame 0 */
	uint32_t free_frames[XR_TX_FRAMES];
	uint32_t nfree;
	bool need_kick;
	/* planewatch.c: the XDP program attached when last looked (xroce's,
	 * or a dispatcher holding it); lost: xroce is no longer there. */
	uint32_t watch_attached;
	bool lost;
	/* Last next-hop resolution (connections to one peer share it). */
	uint8_t nh_peer[16];
	uint64_t nh_time_ns;
	struct xr_nexthop nh;
};

/* A connection request waiting for xroce_accept(), or taken by
 * xroce_get_conn_req (cm.c) and waiting for its answer: kept in the queue
 * meanwhile, so that a resent CONNECT is not queued twice. */
struct xr_ctrl_req {
	struct sockaddr_in6 from;
	uint8_t msg[sizeof(struct xr_ctrl_msg)];
	uint64_t id;                       /* 0 until taken */
	uint64_t taken_ns;
	uint16_t port;                     /* local port it arrived on */
};

/* An answer (ACCEPT / REJECT) read for a connect without blocking. */
struct xr_ctrl_stashed {
	uint8_t msg[sizeof(struct xr_ctrl_msg)];
	struct sockaddr_in6 from;
	uint16_t port;                     /* the local port it came to */
};

/* An extra listening control socket (xroce_listen).  Once unlistened it
 * takes no more requests but stays open while a connection accepted on it
 * lives: that connection's control messages use it. */
struct xr_listen {
	int fd;
	uint16_t port;
	bool closed;
};

/* An answered request, so a retransmitted CONNECT gets the same ACCEPT. */
struct xr_ctrl_recent {
	uint64_t nonce;
	struct sockaddr_in6 from;
	uint16_t port;                     /* the local port that answered */
	uint32_t conn;                     /* our QP's connection id (0: a REJECT) */
	uint8_t reply[sizeof(struct xr_ctrl_msg)];
	bool valid;
};

struct xroce_device {
	pthread_mutex_t lock;
	struct xr_logger log;
	struct xr_auth auth;
	struct xr_acl acl;                 /* who may connect (none: anyone) */
	struct xr_maps maps;
	/* taking back posted receives (io/rqrecall.h): loaded on first use;
	 * rqr_err caches why it could not be */
	struct xr_rqrecall *rqr;
	int rqr_err;
	uint32_t domain_id;
	int mem_fd, evq_fd;
	uint8_t *mem;                      /* the memory map, mmapped */
	size_t mem_len;
	struct xr_heap heap;               /* application memory */
	struct ring_buffer *rb;
	struct xr_evb *evb;                /* fair shares (xr_evb), mapped */
	size_t evb_len;
	uint32_t evb_n;
	/* Wake-ups of the ring (evq_wake.c): its positions, mapped; threads
	 * asleep on it; what the connections' xr_evb.quiet say; whether the
	 * application took the descriptor (then every record wakes). */
	const unsigned long *evq_cons, *evq_prod;
	uint32_t evq_sleepers;
	bool evq_quiet, fd_exported;
	int nplanes;
	struct xr_plane plane[XROCE_MAX_PLANES];
	uint16_t data_port;
	int ctrl_fd;
	uint32_t ctrl_mark;                /* its SO_MARK: the owner's proof */
	uint16_t ctrl_port;
	uint8_t ctrl_addr[16];             /* bound address, :: = any */
	int epfd;                          /* event ring + control socket */
	/* The progress thread (XROCE_DEVICE_PROGRESS_THREAD), woken through
	 * wake_fd (in epfd) to stop. */
	bool threaded, stopping;
	pthread_t thread;
	int wake_fd;
	uint64_t sleep_until;              /* the thread sleeps until then; 0: awake */
	/* An application busy-polling a CQ (progress.c): its polls in a row,
	 * the last one's time; the thread stands by on
	 * `standby` meanwhile, under `standby_lock`, not `lock` (the thread
	 * reads these two without `lock`, hence atomically). */
	uint32_t busy_polls;
	uint64_t poll_ns;
	pthread_mutex_t standby_lock;
	pthread_cond_t standby;
	/* QPs by local connection id (ids are below maps.max_conns). */
	struct xroce_qp **conn_tab;
	uint32_t conn_tab_size;
	struct xroce_qp *qps;              /* list of all QPs */
	uint32_t qp_rr;                    /* which QP a progress round starts at */
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
	struct sockaddr_in6 want_to;       /* where that connect went */
	uint16_t want_src[2];              /* its source ports (cm.h), current first */
	uint16_t answer_port, cookie_port; /* the local ports they came to */
	bool have_answer, have_cookie;
	uint8_t answer[sizeof(struct xr_ctrl_msg)];
	/* Connects without blocking (cm.c): how many are under way, the
	 * answers read for them and not yet handled, the listening sockets
	 * and the last request id handed out. */
	uint32_t nconnecting;
	uint32_t nstash;
	struct xr_ctrl_stashed stash[XR_CTRL_STASH];
	struct xr_listen listen[XR_LISTEN_MAX];
	uint32_t nlisten;
	uint64_t req_id;
	uint16_t rx_port;                  /* local port of the message handled */
	uint8_t cookie[XR_CTRL_COOKIE_LEN]; /* the listener asks for it back */
	uint64_t now_ns;                   /* clock of the current progress run */
	/* The library "watches" the network while it runs a progress round
	 * or sleeps in xroce_wait_cq.  seen_ns is the last instant it did;
	 * after an absence (the application computing for longer than
	 * XR_ABSENT_NS) retransmission timers may not expire before
	 * timer_hold_ns: see xr_progress. */
	uint64_t seen_ns;
	uint64_t timer_hold_ns;
	uint64_t ctrl_next_ns;             /* next look at the control socket */
	uint64_t watch_next_ns;            /* next xr_planes_watch */
	uint64_t telem_next_ns;            /* next telemetry update */
	struct xr_trace *trace;            /* latency breakdowns; NULL: off */
	/* Scratch for ACK processing (large, so not on the stack). */
	struct xr_ack_result res;
	/* counters */
	uint64_t evt_unknown_conn, evt_bad;
	/* control messages dropped: malformed or not believable, without the
	 * right signature, from the wrong address, no room; cookies sent */
	uint64_t ctrl_bad, ctrl_unauth, ctrl_spoofed, ctrl_dropped, ctrl_cookies;
	uint64_t ctrl_refused;              /* CONNECTs from outside accept_from */
	uint64_t bind_bad;                 /* BIND halves refused (bind.c) */
	/* asyncev.c: the application's event handler */
	xroce_event_fn event_fn;
	void *event_arg;
	/* anymem.c: application memory moved into the memory map; extents
	 * no region uses stay (idle) up to extent_idle_max bytes */
	struct xr_extent *extents;
	uint64_t extent_idle_max, extent_seq;
};

#endif /* XR_ENGINE_DEVICE_H */
