/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libxroce: an RDMA-style transport for lossy, multipath Ethernet on any
 * Linux NIC.  The API follows ibverbs closely so that porting is mechanical:
 *
 *   ibverbs                      xroce
 *   ibv_open_device              xroce_open_device (by interface name)
 *   ibv_alloc_pd                 xroce_alloc_pd
 *   ibv_reg_mr                   xroce_reg_mr (any memory; xroce_mem_alloc's is free)
 *   ibv_create_cq                xroce_create_cq
 *   ibv_create_qp + modify_qp    xroce_create_qp + xroce_connect/xroce_accept,
 *                                or xroce_qp_bind (QPN + GID exchanged out of band)
 *   ibv_post_send                xroce_post_send
 *   ibv_poll_cq                  xroce_poll_cq (+ xroce_wait_cq to block)
 *
 * Differences a porter must know:
 *  - Registered memory lives in a BPF map that the XDP program writes
 *    received data into and that is also the AF_XDP UMEM the library
 *    transmits from.  xroce_mem_alloc() hands out such memory; any other
 *    buffer given to xroce_reg_mr() has its pages moved into the map at
 *    the same addresses, contents kept (docs/VERBS.md: cost and limits).
 *  - There is no hardware doing the sender's work in the background: the
 *    library makes progress (transmission, retransmission, timers) inside
 *    xroce_poll_cq(), xroce_wait_cq(), xroce_post_send() and
 *    xroce_progress(), or in a thread of the device's own when it is opened
 *    with XROCE_DEVICE_PROGRESS_THREAD.  Without that thread a sender must
 *    keep calling one of them, and a READ responder answers only while its
 *    application calls.  Receiving WRITEs and SENDs needs no calls: the XDP
 *    program places data and acknowledges it.
 *  - Connection setup is built in (like rdma_cm): xroce_accept() on one
 *    side, xroce_connect() on the other; or, as ibverbs programs do, the
 *    applications exchange QP numbers and addresses themselves and both
 *    call xroce_qp_bind().
 *  - imm_data is in host byte order.
 *
 * Every function that can fail returns 0 (or a count) on success and a
 * negative errno on failure, and logs a one-line reason through the
 * device's log function (stderr by default).  No call aborts the process.
 * The library is thread safe: each call takes its device's lock (blocking
 * calls release it while they sleep).
 */
#ifndef XROCE_XROCE_H
#define XROCE_XROCE_H

#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XROCE_MAX_PLANES 4
#define XROCE_MAX_PATHS 16
#define XROCE_DEFAULT_PATHS 8
#define XROCE_MAX_SGE 16        /* scatter-gather entries of a send */
#define XROCE_MAX_RECV_SGE 1    /* ... of a receive */
#define XROCE_MAX_INLINE 256    /* bytes of an inline send */
#define XROCE_MAX_STREAMS 1024  /* streams per queue pair: ids 0..1023 */
#define XROCE_MAX_RECV_PER_STREAM 256 /* receives posted per stream */
#define XROCE_MAX_MSG_SIZE 0xffffffffu

struct xroce_device;
struct xroce_pd;
struct xroce_cq;
struct xroce_qp;

/* ---- logging -------------------------------------------------------- */
enum xroce_log_level { XROCE_LOG_ERROR = 0, XROCE_LOG_WARN = 1,
		       XROCE_LOG_INFO = 2, XROCE_LOG_DEBUG = 3 };
typedef void (*xroce_log_fn)(void *arg, enum xroce_log_level level,
			     const char *fmt, va_list ap);

/* ---- device --------------------------------------------------------- */
/* How a device puts packets on the wire, per plane. */
enum xroce_tx_engine {
	/* The faster one the plane allows: AF_XDP where the driver takes it in
	 * zero-copy mode; otherwise frames built by XDP (XROCE_TX_TEST_RUN) if
	 * the program is attached natively and the MTU fits; otherwise
	 * copy-mode AF_XDP.  The environment variable XROCE_TX_ENGINE (auto,
	 * af_xdp, test_run) overrides it. */
	XROCE_TX_DEFAULT = 0,
	/* An AF_XDP socket per plane (zero copy where the driver has it). */
	XROCE_TX_AF_XDP = 1,
	/* Frames built by the xroce XDP program from descriptors and sent with
	 * XDP_TX, out of BPF_PROG_TEST_RUN with live frames (Linux 5.18).
	 * Faster than copy-mode AF_XDP (veth, drivers without zero copy);
	 * needs the program attached in native mode; frames up to 3392 bytes
	 * (no jumbo frames).  tests/bench/txengine.sh compares the engines. */
	XROCE_TX_TEST_RUN = 2,
};

struct xroce_device_attr {
	/* Interfaces ("planes") this device transmits and receives on; each
	 * must have the xroce XDP program attached (`xroce attach IF`). */
	const char *ifnames[XROCE_MAX_PLANES];
	int nplanes;
	/* Bytes of registrable memory (rounded up to 4 KiB); default 64 MiB. */
	size_t mem_size;
	/* UDP port of the control socket; 0 = any free port.  A listening
	 * side (xroce_accept) sets a known port. */
	uint16_t ctrl_port;
	/* Local address to bind the control socket to; NULL = any. */
	const char *ctrl_addr;
	/* Log sink; NULL = stderr, messages at or below log_level. */
	xroce_log_fn log_fn;
	void *log_arg;
	enum xroce_log_level log_level;
	enum xroce_tx_engine tx_engine;
	unsigned int flags;        /* enum xroce_device_flags */
	/* Cluster key: a file of 32 bytes (raw or 64 hex digits) shared by
	 * the hosts allowed to connect; NULL = the file named by the
	 * environment variable XROCE_KEY_FILE, if any.  With a key, connection
	 * set-up authenticates both ends and derives per-connection keys, and
	 * a peer without the key cannot connect (docs/SECURITY.md). */
	const char *key_file;
	/* Who may connect to this device (xroce_accept): a comma-separated
	 * list of addresses or prefixes, "10.0.0.0/24,fd00::/64"; NULL or ""
	 * = anyone (as a TCP server).  CONNECTs from elsewhere are dropped. */
	const char *accept_from;
};

enum xroce_device_flags {
	/* Run a progress thread: it sleeps on the event ring, the control
	 * socket and the next timer, so transmission, retransmission, READ
	 * answers and completions go on while the application makes no call
	 * (for a process that waits elsewhere: on a socket, a pipe, a
	 * completion notification).  It costs no CPU while nothing happens;
	 * xroce_wait_cq then sleeps until that thread delivers. */
	XROCE_DEVICE_PROGRESS_THREAD = 1,
};

int xroce_open_device(const struct xroce_device_attr *attr,
		      struct xroce_device **out);
/* Closes everything still open on the device (QPs first, with their
 * outstanding work requests completed as XROCE_WC_WR_FLUSH_ERR). */
int xroce_close_device(struct xroce_device *dev);
/* Drive transmission, retransmission, timers and event delivery once. */
int xroce_progress(struct xroce_device *dev);
/* A file descriptor that becomes readable when events arrive, for callers
 * that multiplex many devices with poll/epoll (then call xroce_progress).
 * Taking it has a cost: the device then has every event record wake
 * readers of the ring, where otherwise only a device asleep in the
 * library (xroce_wait_cq, the progress thread) is woken, and one that
 * polls takes its records without an interrupt each. */
int xroce_device_fd(struct xroce_device *dev);
/* The transmit engine plane uses (XROCE_TX_AF_XDP or XROCE_TX_TEST_RUN). */
enum xroce_tx_engine xroce_device_tx_engine(const struct xroce_device *dev,
					    int plane);
uint16_t xroce_device_ctrl_port(const struct xroce_device *dev);

/* ---- memory --------------------------------------------------------- */
/* Allocate registrable memory from the device (page aligned at least to
 * 'align', a power of two; 0 means 64 bytes).  Registering it costs
 * nothing; other memory can be registered too (xroce_reg_mr). */
void *xroce_mem_alloc(struct xroce_device *dev, size_t len, size_t align);
int xroce_mem_free(struct xroce_device *dev, void *addr);

enum xroce_access_flags {
	XROCE_ACCESS_LOCAL_WRITE = 1,
	XROCE_ACCESS_REMOTE_WRITE = 2,
	XROCE_ACCESS_REMOTE_READ = 4,
	/* Not an access right but a registration flag (xroce_reg_mr): when
	 * the last region over these pages is deregistered, give the pages
	 * back to the process at once, even where XROCE_MR_CACHE_MB would
	 * keep them (xroce_dereg_mr).  For a process that forks afterwards
	 * (ibv_fork_init sets it). */
	XROCE_REG_NO_CACHE = 0x100,
};

struct xroce_mr {
	struct xroce_pd *pd;
	void *addr;
	size_t length;
	uint32_t lkey;
	uint32_t rkey;
	int access;
};

int xroce_alloc_pd(struct xroce_device *dev, struct xroce_pd **out);
int xroce_dealloc_pd(struct xroce_pd *pd);
/* Register [addr, addr + length).  Memory from xroce_mem_alloc is used in
 * place.  Any other memory of the process (malloc, posix_memalign, mmap,
 * static data) has its pages, whole 4 KiB pages around the range, moved
 * into the device's memory map at the same virtual addresses with their
 * contents (docs/VERBS.md: cost, limits, fork, free before dereg).
 * -EFAULT: part of the range is not mapped; -EOPNOTSUPP: huge pages or a
 * shared file/shm mapping; -ENOMEM: the device's memory is full. */
int xroce_reg_mr(struct xroce_pd *pd, void *addr, size_t length, int access,
		 struct xroce_mr **out);
/* Outstanding work that uses memory no other region covers any more fails
 * (the QP moves to the error state, XROCE_WC_LOC_PROT_ERR): nothing is
 * written to the pages after this, and memory that xroce_reg_mr moved goes
 * back to the process (same addresses, same contents).  With the
 * environment variable XROCE_MR_CACHE_MB=N, up to N MiB of such memory
 * instead stays in device memory, unused, so that registering the same
 * buffer again costs no copy (MPI over libfabric registers a buffer per
 * large message); it goes back when its room is needed, oldest first, and
 * at xroce_close_device.  Not kept: memory that work was still using,
 * memory of a region with XROCE_ACCESS_REMOTE_WRITE, XROCE_REG_NO_CACHE
 * registrations.  Only for processes whose allocator does not hand freed
 * pages back piecewise while they are kept: madvise(MADV_DONTNEED) on
 * them, as glibc does when it trims a heap, leaves them unbacked (SIGBUS
 * on the next touch); docs/VERBS.md. */
int xroce_dereg_mr(struct xroce_mr *mr);

/* ---- completion queue ---------------------------------------------- */
enum xroce_wc_status {
	XROCE_WC_SUCCESS = 0,
	XROCE_WC_LOC_LEN_ERR,
	XROCE_WC_LOC_PROT_ERR,
	XROCE_WC_WR_FLUSH_ERR,
	XROCE_WC_REM_ACCESS_ERR,
	XROCE_WC_REM_INV_REQ_ERR,
	XROCE_WC_RETRY_EXC_ERR,
	XROCE_WC_RNR_RETRY_EXC_ERR,
	XROCE_WC_GENERAL_ERR,
};

enum xroce_wc_opcode {
	XROCE_WC_RDMA_WRITE = 1,
	/* Receiver side: a WRITE_WITH_IMM landed (imm_data valid); it consumed
	 * the stream's next posted receive (wr_id is that receive's). */
	XROCE_WC_RECV_RDMA_WITH_IMM = 2,
	/* Receiver side, xroce extension: a plain WRITE landed completely.
	 * Only on QPs created with XROCE_QP_NOTIFY_WRITES; wr_id 0. */
	XROCE_WC_RECV_RDMA_WRITE = 3,
	XROCE_WC_SEND = 4,
	XROCE_WC_RDMA_READ = 5,
	/* Receiver side: a SEND filled a posted receive. */
	XROCE_WC_RECV = 6,
};

enum xroce_wc_flags { XROCE_WC_WITH_IMM = 1 };

struct xroce_wc {
	uint64_t wr_id;
	enum xroce_wc_status status;
	enum xroce_wc_opcode opcode;
	uint32_t byte_len;
	uint32_t imm_data;
	uint32_t qp_num;
	unsigned int wc_flags;
	/* Receiver side of WRITE_WITH_IMM (and notified WRITEs): the
	 * sender's raddr + length, i.e. one past the message's last byte in
	 * our memory, so a receiver finds a WRITE's data without a SEND.
	 * 0 for SEND / SEND_WITH_IMM (the data is in the receive buffer). */
	uint64_t remote_addr_end;
	uint16_t stream;           /* stream of the work request / message */
};

int xroce_create_cq(struct xroce_device *dev, int cqe, struct xroce_cq **out);
int xroce_destroy_cq(struct xroce_cq *cq);
/* Completion notification (as ibverbs' completion channels): fn runs once
 * for the first completion queued after each xroce_req_notify_cq.  It runs
 * inside the library with the device locked (often in the progress
 * thread): it must not call the library; typically it writes an eventfd.
 * solicited_only is accepted and treated as 0 (every completion counts). */
typedef void (*xroce_cq_notify_fn)(struct xroce_cq *cq, void *arg);
int xroce_cq_set_notify(struct xroce_cq *cq, xroce_cq_notify_fn fn, void *arg);
int xroce_req_notify_cq(struct xroce_cq *cq, int solicited_only);
/* Non-blocking: returns the number of completions written (0..n). */
int xroce_poll_cq(struct xroce_cq *cq, int n, struct xroce_wc *wc);
/* Blocking: like xroce_poll_cq but waits until at least one completion
 * arrives or timeout_ms passes (-1 = forever); 0 on timeout. */
int xroce_wait_cq(struct xroce_cq *cq, int n, struct xroce_wc *wc,
		  int timeout_ms);

/* ---- queue pair (connection) ---------------------------------------- */
enum xroce_qp_flags {
	XROCE_QP_NOTIFY_WRITES = 1, /* see XROCE_WC_RECV_RDMA_WRITE */
	/* Small messages (up to 4 KiB of WRITE, WRITE_WITH_IMM or READ) on a
	 * connection with little in flight are sent on two paths at once, so a
	 * single loss costs no retransmission time (latency-bound traffic: at
	 * 1% loss its tail stays that of a loss-free fabric).  This flag turns
	 * that off; bandwidth-bound traffic is never duplicated. */
	XROCE_QP_NO_REDUNDANT = 2,
};

struct xroce_qp_init_attr {
	struct xroce_cq *send_cq;
	struct xroce_cq *recv_cq;
	uint32_t max_send_wr;   /* 0 = 256 */
	uint32_t npaths;        /* 0 = XROCE_DEFAULT_PATHS */
	uint32_t mtu;           /* IP MTU; 0 = the interface MTU */
	/* Peer silence after which outstanding work completes with
	 * XROCE_WC_RETRY_EXC_ERR; 0 = 2000 ms. */
	uint32_t timeout_ms;
	unsigned int flags;     /* enum xroce_qp_flags */
	/* Data-plane UDP port: 0, or the device's own (the port its xroce
	 * program serves, `xroce attach --port`); both ends of a connection
	 * use it, and set-up checks that they agree.  Other values: -EINVAL. */
	uint16_t data_port;
	/* Packets in flight on the connection at most (the ceiling of its
	 * congestion window); 0 = 128, which keeps a connection's bursts
	 * inside a 256-entry receive ring (veth).  Raise it on long paths. */
	uint32_t max_inflight;
	/* Receiver not ready: a SEND finding no posted receive is refused
	 * and retried after rnr_timer_us (doubling), at most rnr_retry times,
	 * then fails with XROCE_WC_RNR_RETRY_EXC_ERR.  0 = 7 tries, 100 us. */
	uint32_t rnr_retry;
	uint32_t rnr_timer_us;
};

enum xroce_qp_state {
	XROCE_QPS_INIT = 0,
	XROCE_QPS_RTS = 1,
	XROCE_QPS_ERR = 2,
	XROCE_QPS_CLOSED = 3,
	/* xroce_qp_bind was called and the exchange with the peer is under
	 * way: receives may already land, posts are queued and go out at RTS. */
	XROCE_QPS_CONNECTING = 4,
};

int xroce_create_qp(struct xroce_pd *pd, const struct xroce_qp_init_attr *attr,
		    struct xroce_qp **out);
/* Flushes outstanding work (XROCE_WC_WR_FLUSH_ERR), tells the peer, frees. */
int xroce_destroy_qp(struct xroce_qp *qp);
uint32_t xroce_qp_num(const struct xroce_qp *qp);
enum xroce_qp_state xroce_qp_state(const struct xroce_qp *qp);

/* Client side: connect qp to the device listening on host:port (host is a
 * numeric IPv4 or IPv6 address).  Blocks up to timeout_ms. */
int xroce_connect(struct xroce_qp *qp, const char *host, uint16_t port,
		  int timeout_ms);
/* Server side: bind qp to the next connection request that reaches this
 * device's control port.  Blocks up to timeout_ms (-1 = forever); with 0
 * it only checks, returning -ETIMEDOUT quietly if no request is waiting. */
int xroce_accept(struct xroce_qp *qp, int timeout_ms);

/* Private data (like rdma_cm's): up to XROCE_PRIVATE_DATA_MAX bytes the
 * application sends with its CONNECT or ACCEPT, typically the address,
 * rkey and size of a buffer the peer may write.  Set it before
 * xroce_connect / xroce_accept; read the peer's after.  get returns the
 * length the peer sent (copying at most len bytes), or a negative errno. */
#define XROCE_PRIVATE_DATA_MAX 60
int xroce_set_private_data(struct xroce_qp *qp, const void *data, size_t len);
int xroce_get_private_data(const struct xroce_qp *qp, void *buf, size_t len);

/* ---- connection set-up without blocking ------------------------------
 * For event-driven callers (libfabric's connection management, rdma_cm):
 * requests are seen before a QP is chosen for them, each is accepted or
 * rejected on its own, and a connect is started and polled.  None of these
 * calls blocks; the exchange (resends, answers) goes on in progress rounds
 * (the progress thread, or xroce_connect_poll / xroce_get_conn_req). */

/* Listen for connection requests on one more UDP port of the device (its
 * control port always listens): addr a numeric address or NULL (any),
 * port 0 picks a free port.  Requests to it pass the same checks as those
 * to the control port (accept_from, cookie, cluster key), and connections
 * accepted from it keep it as their control port.  Returns the port, or a
 * negative errno (-EADDRINUSE, -ENOSPC past 16 ports). */
int xroce_listen(struct xroce_device *dev, const char *addr, uint16_t port);
/* Stop listening on port: requests not yet taken are forgotten, taken
 * ones may still be answered, connections accepted from it go on. */
int xroce_unlisten(struct xroce_device *dev, uint16_t port);

struct xroce_conn_req {
	uint64_t id;               /* names it to accept / reject */
	uint16_t port;             /* the local port it arrived on */
	int family;                /* AF_INET or AF_INET6: the peer's addresses */
	uint8_t peer_addr[16];     /* control address, IPv4 as ::ffff:a.b.c.d */
	uint16_t peer_port;        /* control port of the peer's device */
	uint8_t private_data_len;
	uint8_t private_data[XROCE_PRIVATE_DATA_MAX];
};

/* Take the oldest request not yet taken (from any port): 0 and *req, or
 * -EAGAIN if none is waiting.  An untaken request can also go to the
 * blocking xroce_accept (if it came to the control port).  A taken request
 * must be answered within 30 s, else it is forgotten (and the peer's
 * connect times out). */
int xroce_get_conn_req(struct xroce_device *dev, struct xroce_conn_req *req);
/* Answer req with qp (new, of the same device): qp is connected (RTS) on
 * return and the peer gets qp's private data with its ACCEPT. */
int xroce_accept_conn_req(struct xroce_qp *qp, const struct xroce_conn_req *req);
/* Refuse req: the peer's connect fails with -ECONNREFUSED, and it reads
 * data (up to XROCE_PRIVATE_DATA_MAX bytes) with xroce_get_private_data. */
int xroce_reject_conn_req(struct xroce_device *dev,
			  const struct xroce_conn_req *req, const void *data,
			  size_t len);

/* Start connecting qp to host:port (as xroce_connect) and return at once;
 * the CONNECT is resent until answered or timeout_ms passes. */
int xroce_connect_start(struct xroce_qp *qp, const char *host, uint16_t port,
			int timeout_ms);
/* 0 once connected (RTS, the peer's private data readable), -EINPROGRESS
 * while under way, else the failure: -ECONNREFUSED (rejected: the peer's
 * private data readable, the QP in the error state), -ETIMEDOUT, ... */
int xroce_connect_poll(struct xroce_qp *qp);

/* ---- work requests -------------------------------------------------- */
enum xroce_wr_opcode {
	XROCE_WR_RDMA_WRITE = 1,
	XROCE_WR_RDMA_WRITE_WITH_IMM = 2,
	XROCE_WR_SEND = 3,
	XROCE_WR_SEND_WITH_IMM = 4,
	/* Read remote memory into sg_list[0] (one entry, LOCAL_WRITE).  The
	 * responder's library answers it during its progress calls. */
	XROCE_WR_RDMA_READ = 5,
};

enum xroce_send_flags {
	XROCE_SEND_SIGNALED = 1, /* completion on success (errors always) */
	/* Copy the payload at post time (at most XROCE_MAX_INLINE bytes); the
	 * buffer may be reused at once and needs no memory region. */
	XROCE_SEND_INLINE = 2,
};

struct xroce_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

struct xroce_send_wr {
	uint64_t wr_id;
	struct xroce_send_wr *next;
	struct xroce_sge *sg_list;
	int num_sge;
	enum xroce_wr_opcode opcode;
	unsigned int send_flags;
	uint32_t imm_data;
	struct {
		uint64_t remote_addr;
		uint32_t rkey;
	} rdma;
	/* Ordered stream (0..XROCE_MAX_STREAMS-1).  Completions are in order
	 * within a stream and independent across streams: a loss on one
	 * stream does not hold back another's. */
	uint16_t stream;
};

/* Queue work; on error *bad_wr points at the first request not queued. */
int xroce_post_send(struct xroce_qp *qp, struct xroce_send_wr *wr,
		    struct xroce_send_wr **bad_wr);

/* A receive buffer for the stream's next SEND (or WRITE_WITH_IMM, which
 * consumes one without writing into it).  SENDs land straight in their
 * receive as they arrive, in any order: the n-th SEND of a stream fills
 * the n-th receive posted on that stream. */
struct xroce_recv_wr {
	uint64_t wr_id;
	struct xroce_recv_wr *next;
	struct xroce_sge *sg_list;
	int num_sge;               /* 0..XROCE_MAX_RECV_SGE */
	uint16_t stream;
};

int xroce_post_recv(struct xroce_qp *qp, struct xroce_recv_wr *wr,
		    struct xroce_recv_wr **bad_wr);

/* Take back the receive posted last on a stream, if no packet of a SEND
 * has reached it yet (checked atomically against the XDP program's claim,
 * so a receive is never both filled and handed back).  0 with *wr_id its
 * work request id: it will not complete, and the SEND it was for is
 * refused "receiver not ready" until a receive is posted again.
 * -EBUSY: a packet has reached it, or a completed message waits to be
 * delivered and may consume it; -ENOENT: none posted; another negative
 * errno (logged once): the kernel refused the recall program (it needs
 * CAP_BPF and BPF_PROG_TYPE_SYSCALL, Linux 5.14).  Shared receive queues
 * use it (with XROCE_EVENT_RECV_NEEDED) to move receives to the QP that
 * needs one. */
int xroce_recall_recv(struct xroce_qp *qp, uint16_t stream, uint64_t *wr_id);

/* ---- discovery, limits ---------------------------------------------- */
/* Interfaces of the calling network namespace that carry xroce's XDP
 * program, in ifindex order: up to max names copied, the total returned
 * (or a negative errno).  Needs CAP_BPF/CAP_SYS_ADMIN to see programs. */
int xroce_list_interfaces(char (*names)[16], int max);

struct xroce_plane_attr {
	char ifname[16];
	int ifindex;
	uint8_t mac[6];
	uint32_t mtu;              /* IP MTU of the interface, now */
	int link_up;               /* carrier and administratively up */
	uint32_t speed_mbps;       /* 0 if the driver does not say (veth) */
	int has_ipv4, has_ipv6;    /* the addresses connections use */
	uint8_t ipv4[4];
	uint8_t ipv6[16];          /* first global (not link-local) address */
};

/* Plane plane (0..nplanes-1) of an open device, its link state read now. */
int xroce_query_plane(const struct xroce_device *dev, int plane,
		      struct xroce_plane_attr *out);

/* What a device really supports (what ibv_query_device reports). */
struct xroce_device_caps {
	uint32_t nplanes;
	uint32_t max_qp;           /* connections the XDP program holds, minus
				    * those in use by anyone */
	uint32_t max_qp_total;     /* connections the XDP program holds */
	uint32_t max_send_wr;      /* per QP */
	uint32_t max_recv_per_stream; /* receives posted at once per stream */
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline;
	uint32_t max_cqe;
	uint32_t max_mr;           /* regions the XDP program holds (all users) */
	uint64_t mem_bytes;        /* registrable memory of this device */
	uint64_t mem_free;         /* ... not yet registered or allocated */
	uint32_t max_msg_size;
	uint32_t max_msgs_in_flight; /* per connection (also READs) */
	uint32_t max_paths;
	uint32_t max_streams;
	uint16_t data_port;
	uint16_t rsvd;
	uint64_t flags;            /* enum xroce_cap_flags */
};

enum xroce_cap_flags {
	/* xroce_reg_mr accepts any memory of the process (not only
	 * xroce_mem_alloc's): see docs/VERBS.md. */
	XROCE_CAP_ANY_MEMORY = 1,
	XROCE_CAP_QP_BIND = 2,     /* xroce_qp_bind */
	XROCE_CAP_CQ_NOTIFY = 4,   /* xroce_cq_set_notify */
};

int xroce_query_device(const struct xroce_device *dev,
		       struct xroce_device_caps *out);
int xroce_device_nplanes(const struct xroce_device *dev);

/* ---- connections from out-of-band information (ibverbs style) ------- */
/* What the application learnt about the peer's QP out of band (the way
 * ibverbs programs exchange QPN and GID over TCP), and limits for this
 * side of the connection.  Zero fields keep the QP's current value. */
struct xroce_qp_peer {
	uint8_t addr[16];          /* peer's address: IPv6, or IPv4 as
				    * ::ffff:a.b.c.d (a RoCEv2 GID) */
	uint32_t qp_num;           /* peer's xroce_qp_num() */
	uint32_t timeout_ms;       /* peer silence before RETRY_EXC_ERR */
	/* Receiver not ready: how many times our SENDs are retried
	 * (UINT32_MAX: forever), and how long the PEER waits before it
	 * retries a SEND we refused (IB's min_rnr_timer, the responder's
	 * choice; sent to the peer in the exchange). */
	uint32_t rnr_retry;
	uint32_t rnr_timer_us;
	uint32_t mtu;              /* IP MTU ceiling of this side */
};

/* Connect qp to the peer's QP without blocking: both sides call it, in
 * any order and at any time, with what they learnt of each other.  The QP
 * turns XROCE_QPS_CONNECTING: receives may be posted and land, sends are
 * queued; it becomes XROCE_QPS_RTS once the two sides have exchanged their
 * halves (through the peer's data port and XDP program, retransmitted
 * until confirmed; progress drives it).  A half that arrives before our
 * own call is kept (one per QP) and used only if it comes from peer->addr
 * and names peer->qp_num.  Calling it again on a bound QP with the same
 * address and qp_num only updates the nonzero limits; another peer gives
 * -EISCONN.  Work posted while connecting fails with RETRY_EXC_ERR if the
 * peer does not answer within the timeout. */
int xroce_qp_bind(struct xroce_qp *qp, const struct xroce_qp_peer *peer);

/* Move a QP to the error state as ibverbs' modify to IBV_QPS_ERR does:
 * outstanding work and posted receives complete as XROCE_WC_WR_FLUSH_ERR
 * (no XROCE_EVENT_QP_FATAL); the peer is told when the QP is destroyed. */
int xroce_qp_to_error(struct xroce_qp *qp);

/* ---- asynchronous events ---------------------------------------------- */
enum xroce_event_type {
	/* The QP moved to the error state on its own (peer silence, a
	 * refused request, the peer's CLOSE): IBV_EVENT_QP_FATAL. */
	XROCE_EVENT_QP_FATAL = 1,
	/* The QP reached XROCE_QPS_RTS through xroce_qp_bind:
	 * IBV_EVENT_COMM_EST. */
	XROCE_EVENT_QP_ESTABLISHED = 2,
	/* A SEND arrived for receive msn of stream and found none posted: its
	 * sender was told "receiver not ready" and will retry.  Given again
	 * at each retry (when its first packet arrives), none when the
	 * receive has been posted since.  Also given when a WRITE_WITH_IMM
	 * waits for a receive to complete. */
	XROCE_EVENT_RECV_NEEDED = 3,
};

struct xroce_event {
	enum xroce_event_type type;
	struct xroce_qp *qp;
	uint32_t qp_num;
	uint16_t stream;           /* XROCE_EVENT_RECV_NEEDED */
	uint32_t msn;              /* XROCE_EVENT_RECV_NEEDED */
};

/* Device-wide asynchronous events (ibverbs' ibv_get_async_event).  The
 * handler runs inside the library with the device locked, often in the
 * progress thread: like a CQ notify function, it must not call the library
 * (it records the event: a queue, an eventfd). */
typedef void (*xroce_event_fn)(const struct xroce_event *ev, void *arg);
int xroce_set_event_handler(struct xroce_device *dev, xroce_event_fn fn,
			    void *arg);

/* ---- statistics ----------------------------------------------------- */
enum xroce_path_state {
	XROCE_PATH_GOOD = 0,
	XROCE_PATH_CONGESTED = 1,
	XROCE_PATH_SUSPECT = 2,
	XROCE_PATH_DOWN = 3,
};

struct xroce_path_stats {
	uint32_t path;
	uint32_t plane;
	uint16_t sport;            /* current entropy (UDP source port) */
	enum xroce_path_state state;
	uint64_t tx_pkts, tx_bytes;
	uint64_t retx_pkts;        /* retransmissions sent on this path */
	uint64_t lost_pkts;        /* packets declared lost on this path */
	uint64_t acked_pkts;
	uint64_t ecn_marked;       /* acknowledged packets that carried CE */
	uint64_t timeouts;
	uint32_t rtt_min_ns, rtt_srtt_ns, rtt_p99_ns;
	uint32_t cwnd;             /* packets */
	uint32_t inflight;
};

struct xroce_qp_stats {
	uint64_t tx_pkts, tx_bytes;     /* all transmissions */
	uint64_t retx_pkts, retx_bytes; /* of which retransmissions */
	uint64_t acked_bytes;           /* payload acknowledged */
	uint64_t fast_retx;             /* retransmissions triggered by SACK */
	uint64_t timeout_retx;          /* ... by the retransmission timer */
	uint64_t wr_completed;
	uint32_t npaths;
	uint32_t rate_hint_mbps;        /* latest receiver hint, 0 = none */
	uint64_t mem_bytes;             /* host memory this QP holds */
	uint64_t dup_pkts;              /* redundant copies and tail-loss probes sent
					 * (not retransmissions) */
	uint64_t fenced_answers;        /* answers to the peer's READs stopped by the
					 * deregistration of their region before
					 * all their ACKs came: the rest is sent
					 * and resent as "cannot answer" */
	uint64_t recv_needed;           /* XROCE_EVENT_RECV_NEEDED given */
	uint64_t recv_recalled;         /* receives taken back (xroce_recall_recv) */
};

int xroce_qp_stats(const struct xroce_qp *qp, struct xroce_qp_stats *st);
int xroce_path_stats(const struct xroce_qp *qp, struct xroce_path_stats *ps,
		     int max_paths);

/* ---- latency breakdowns --------------------------------------------- */
/* Steps of a message's way from post to completion, timestamped on both
 * ends when tracing is on (`xroce perf --mode lat --breakdown` merges the
 * two ends' records by message).  XDP stamps RX_XDP, PLACED, ACK_TX and
 * XDP_BUILD; the library the rest. */
enum xroce_trace_stage {
	XROCE_TR_POST = 1,        /* sender: xroce_post_send took it */
	XROCE_TR_SEND = 2,        /* sender: its packet went to the engine */
	XROCE_TR_KICK = 3,        /* sender: the system call sending it began */
	XROCE_TR_XDP_BUILD = 4,   /* sender: XDP built the frame (test-run engine) */
	XROCE_TR_RX_XDP = 5,      /* receiver: XDP admitted it (parsed,
	                           * authenticated, checksum verified) */
	XROCE_TR_PLACED = 6,      /* receiver: XDP placed its payload */
	XROCE_TR_ACK_TX = 7,      /* receiver: XDP sent its ACK (XDP_TX) */
	XROCE_TR_ACK_XDP = 8,     /* sender: XDP turned the ACK into a record */
	XROCE_TR_ACK_DONE = 9,    /* sender: the library took that record */
	XROCE_TR_SEND_CQE = 10,   /* sender: the application took the completion */
	XROCE_TR_RECV_DONE = 11,  /* receiver: the library took the RECV record */
	XROCE_TR_RECV_CQE = 12,   /* receiver: the application took the completion */
};

struct xroce_trace_rec {
	uint32_t qp_num;           /* the local QP (xroce_qp_num) */
	uint32_t msg_id;           /* the sender's message number: the same on
	                            * both ends */
	uint32_t csn;              /* the packet (0 where the step is per message) */
	uint16_t stage;            /* enum xroce_trace_stage */
	uint16_t cpu;              /* where XDP ran (0 for library steps) */
	uint64_t ns;               /* CLOCK_MONOTONIC */
};

/* Start (on != 0) or stop tracing every QP of the device, present and
 * future.  Off by default; while off, the library tests one pointer per
 * step and XDP one flag per packet.  Records past the device's buffer
 * (1M) are dropped until taken. */
int xroce_trace_enable(struct xroce_device *dev, int on);
/* Move up to max records, oldest first, into recs; returns how many. */
int xroce_trace_take(struct xroce_device *dev, struct xroce_trace_rec *recs,
		     int max);

const char *xroce_wc_status_str(enum xroce_wc_status status);

#ifdef __cplusplus
}
#endif

#endif /* XROCE_XROCE_H */
