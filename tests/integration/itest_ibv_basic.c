// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * itest_ibv_basic: an ibverbs program of our own, written against
 * <infiniband/verbs.h> and linked with xroce's libibverbs.so.1, for what
 * perftest does not check (tests/integration/test_ibverbs.sh runs it):
 *
 *   A  memory from malloc with data already in it, registered: the peer
 *      READs it (its owner is blocked on a socket meanwhile: the progress
 *      thread answers) and gets exactly that data
 *   B  a completion channel: the fd is not readable before the peer's
 *      WRITE_WITH_IMM, becomes readable (poll) after it, and the
 *      completion carries the immediate in network order, the length,
 *      the QP number; the data is in place
 *   C  SEND from a three-entry scatter list into a two-entry receive,
 *      unsignaled sends (only the signaled one completes), an inline send
 *      of stack memory
 *   D  dereg of the region a 16 MiB READ is landing in: ibv_dereg_mr
 *      returns 0, the READ completes with an error, and the buffer does not
 *      change after dereg returned (two QPs on one CQ: the other QP is fine)
 *   E  error statuses: IBV_WC_REM_ACCESS_ERR (bad rkey), then
 *      IBV_WC_WR_FLUSH_ERR (work posted to the QP in error),
 *      IBV_WC_RNR_RETRY_EXC_ERR (SEND with no receive posted),
 *      IBV_WC_RETRY_EXC_ERR (a QP bound to a QP that does not exist)
 *   F  misuse: the errno of each bad call (local, no peer), also of a
 *      shared receive queue's calls
 *   G  a shared receive queue under two QPs: six receives posted, a SEND
 *      on one QP lands in one of them (its qp_num, its wr_id, the data);
 *      that QP is destroyed and the receives it held come back, so five
 *      SENDs on the other QP (one RNR retry allowed) all land; the armed
 *      limit gives IBV_EVENT_SRQ_LIMIT_REACHED
 *   H  a shared receive queue whose receives sit with the wrong QP: eight
 *      receives posted under two QPs (four lent to each), then eight SENDs
 *      on one of them (rnr_retry 7, as perftest): the four beyond its
 *      share are refused "receiver not ready" until the SRQ takes the
 *      other QP's untouched receives back and moves them; all eight land,
 *      in order, with their data
 *   K  deregistered memory: a malloc'd 1 MiB buffer registered
 *      REMOTE_READ, then deregistered, is the process's own memory again
 *      (/proc/self/maps) or, with XROCE_MR_CACHE_MB set, still the device
 *      map's pages (libxroce's idle extents), its contents unchanged and
 *      writable either way; registered again it keeps what was written;
 *      one registered REMOTE_WRITE is given back at once in both modes,
 *      and a kept one is given back by ibv_close_device; a kept mmap'd
 *      range whose middle the application replaced and whose end it made
 *      read-only after deregistration is given back around the new
 *      mapping, which stays untouched, with the new protection
 *
 * Usage: itest_ibv_basic server PORT | client HOST PORT
 * (device: $ITEST_IBV_DEVICE or the first; GID index $ITEST_IBV_GID or 0)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#define BIG (16u << 20)      /* phase D */
#define BUF (1u << 20)
#define NQP 5
#define IMM 0x01020304u
#define GOFF 65536           /* phase G's receives in the server's buffer */
#define GN 6                 /* phase G's receives */
#define HOFF (GOFF + GN * 4096) /* phase H's receives */
#define HN 8                 /* phase H's receives, all for one QP */

static const char *role = "?";

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: FAIL: ", role);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

#define CHECK(c, ...) do { if (!(c)) die(__VA_ARGS__); } while (0)

/* ---- the out-of-band channel (TCP), as perftest has -------------------------- */
static int sock;

static void xfer(void *buf, size_t len, int out)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = out ? write(sock, (char *)buf + off, len - off) :
				  read(sock, (char *)buf + off, len - off);

		CHECK(n > 0, "socket %s: %s", out ? "write" : "read",
		      n ? strerror(errno) : "peer closed");
		off += (size_t)n;
	}
}

static void sync_with_peer(uint32_t step)
{
	uint32_t got;

	xfer(&step, sizeof(step), 1);
	xfer(&got, sizeof(got), 0);
	CHECK(got == step, "out of step: %u vs %u", got, step);
}

static void tcp_open(int server, const char *host, const char *port)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM,
				  .ai_flags = server ? AI_PASSIVE : 0 };
	struct addrinfo *res;
	int one = 1, i;

	CHECK(!getaddrinfo(host, port, &hints, &res), "getaddrinfo %s", port);
	sock = socket(res->ai_family, res->ai_socktype, 0);
	CHECK(sock >= 0, "socket");
	if (server) {
		int l = sock;

		setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		CHECK(!bind(l, res->ai_addr, res->ai_addrlen), "bind: %s", strerror(errno));
		CHECK(!listen(l, 1), "listen");
		sock = accept(l, NULL, NULL);
		CHECK(sock >= 0, "accept");
		close(l);
	} else {
		for (i = 0; i < 200; i++) {
			if (!connect(sock, res->ai_addr, res->ai_addrlen))
				break;
			usleep(50000);
		}
		CHECK(i < 200, "connect: %s", strerror(errno));
	}
	freeaddrinfo(res);
}

/* ---- verbs helpers ------------------------------------------------------------ */
struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq, *rcq;      /* shared send CQ; receive CQ with channel */
	struct ibv_qp *qp[NQP];
	union ibv_gid gid;
	int gidx;
};

/* What one side tells the other. */
struct info {
	uint32_t qpn[NQP];
	uint8_t gid[16];
	uint64_t a_addr, d_addr;
	uint32_t a_rkey, d_rkey, dead_qpn;
	uint32_t g_qpn[2];            /* phase G: the server's are on an SRQ */
	uint32_t h_qpn[2];            /* phase H: the same, another SRQ */
};

static uint8_t pattern(uint32_t seed, uint64_t off)
{
	return (uint8_t)((off * 131u + seed * 7u + (off >> 11)) & 0xff);
}

static void fill(uint8_t *p, size_t len, uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pattern(seed, i);
}

static size_t first_diff(const uint8_t *p, size_t len, uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pattern(seed, i))
			return i;
	return len;
}

static struct ibv_qp *make_qp(struct side *s, int sq_sig_all)
{
	struct ibv_qp_init_attr a = {
		.send_cq = s->cq, .recv_cq = s->rcq, .qp_type = IBV_QPT_RC,
		.sq_sig_all = sq_sig_all,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 4,
			 .max_recv_sge = 2, .max_inline_data = 128 },
	};
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				  .qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
						     IBV_ACCESS_REMOTE_READ |
						     IBV_ACCESS_LOCAL_WRITE };
	struct ibv_qp *qp = ibv_create_qp(s->pd, &a);

	CHECK(qp, "ibv_create_qp: %s", strerror(errno));
	CHECK(a.cap.max_inline_data >= 128, "inline %u", a.cap.max_inline_data);
	CHECK(!ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			     IBV_QP_ACCESS_FLAGS), "modify to INIT");
	return qp;
}

/* An RC QP in INIT that takes its receives from srq, into rcq. */
static struct ibv_qp *make_qp_on(struct side *s, struct ibv_cq *rcq,
				 struct ibv_srq *srq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = s->cq, .recv_cq = rcq, .srq = srq, .qp_type = IBV_QPT_RC,
		.sq_sig_all = 1, .cap = { .max_send_wr = 4, .max_send_sge = 1 },
	};
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				  .qp_access_flags = IBV_ACCESS_LOCAL_WRITE };
	struct ibv_qp *qp = ibv_create_qp(s->pd, &a);

	CHECK(qp, "ibv_create_qp on an SRQ: %s", strerror(errno));
	CHECK(!ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			     IBV_QP_ACCESS_FLAGS), "modify to INIT");
	return qp;
}

/* RTR + RTS toward (gid, qpn), as perftest and ibv_rc_pingpong do. */
static void connect_qp(struct side *s, struct ibv_qp *qp, const uint8_t *gid,
		       uint32_t qpn, uint8_t rnr_retry, uint8_t retry_cnt)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = qpn;
	a.rq_psn = 1;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 1; /* 10 us */
	a.ah_attr.is_global = 1;
	memcpy(a.ah_attr.grh.dgid.raw, gid, 16);
	a.ah_attr.grh.sgid_index = (uint8_t)s->gidx;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			     IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER),
	      "modify to RTR: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 1;
	a.timeout = 14;
	a.retry_cnt = retry_cnt;
	a.rnr_retry = rnr_retry;
	a.max_rd_atomic = 16;
	CHECK(!ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_MAX_QP_RD_ATOMIC), "modify to RTS: %s",
	      strerror(errno));
}

/* One completion from cq within ms, or die. */
static struct ibv_wc poll_one(struct ibv_cq *cq, int ms, const char *what)
{
	struct timespec t0, t;
	struct ibv_wc wc;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		n = ibv_poll_cq(cq, 1, &wc);
		CHECK(n >= 0, "%s: ibv_poll_cq %d", what, n);
		if (n)
			return wc;
		clock_gettime(CLOCK_MONOTONIC, &t);
		CHECK((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms,
		      "%s: no completion within %d ms", what, ms);
		usleep(200);
	}
}

static void post(struct ibv_qp *qp, struct ibv_send_wr *wr, const char *what)
{
	struct ibv_send_wr *bad = NULL;
	int rc = ibv_post_send(qp, wr, &bad);

	CHECK(!rc, "%s: ibv_post_send: %s", what, strerror(rc));
}

static void expect(struct ibv_wc wc, enum ibv_wc_status st, uint64_t id,
		   const char *what)
{
	CHECK(wc.status == st && wc.wr_id == id, "%s: status %s (%d) wr_id %llu, "
	      "want %s wr_id %llu", what, ibv_wc_status_str(wc.status), wc.status,
	      (unsigned long long)wc.wr_id, ibv_wc_status_str(st),
	      (unsigned long long)id);
}

static void open_side(struct side *s)
{
	const char *want = getenv("ITEST_IBV_DEVICE"), *g = getenv("ITEST_IBV_GID");
	struct ibv_device **list;
	int n, i;

	list = ibv_get_device_list(&n);
	CHECK(list && n > 0, "no device (%s)", strerror(errno));
	for (i = 0; i < n && want && strcmp(ibv_get_device_name(list[i]), want) != 0; i++)
		;
	CHECK(i < n, "no device %s", want);
	s->ctx = ibv_open_device(list[i]);
	CHECK(s->ctx, "ibv_open_device: %s", strerror(errno));
	ibv_free_device_list(list);
	s->gidx = g ? atoi(g) : 0;
	CHECK(!ibv_query_gid(s->ctx, 1, s->gidx, &s->gid), "query_gid");
	s->pd = ibv_alloc_pd(s->ctx);
	s->ch = ibv_create_comp_channel(s->ctx);
	s->cq = ibv_create_cq(s->ctx, 256, NULL, NULL, 0);
	s->rcq = ibv_create_cq(s->ctx, 256, (void *)s, s->ch, 0);
	CHECK(s->pd && s->ch && s->cq && s->rcq, "pd/channel/cq: %s", strerror(errno));
}

/* ---- phases ---------------------------------------------------------------- */
static int fd_readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1;
}

/* G, server side: g[0] and g[1] take their receives from srq. */
static void phase_g_server(struct side *s, struct ibv_srq *srq, struct ibv_qp **g,
			   struct ibv_cq *gcq, uint8_t *a, struct ibv_mr *ma)
{
	struct ibv_sge sg;
	struct ibv_recv_wr rw = { .sg_list = &sg, .num_sge = 1 }, *bad;
	struct ibv_async_event ev;
	struct ibv_wc wc;
	int used[GN] = { 0 }, i, k, limit = 0;

	for (i = 0; i < GN; i++) {
		sg = (struct ibv_sge){ (uintptr_t)(a + GOFF + i * 4096), 4096, ma->lkey };
		rw.wr_id = 100 + i;
		CHECK(!ibv_post_srq_recv(srq, &rw, &bad), "G post_srq_recv %d", i);
	}
	CHECK(!ibv_modify_srq(srq, &(struct ibv_srq_attr){ .srq_limit = 2 },
			      IBV_SRQ_LIMIT), "G arm the limit");
	sync_with_peer(8);
	for (k = 0; k < 1 + 5; k++) {
		if (k == 1) {
			/* g[1] holds receives it will never use: back to the SRQ. */
			CHECK(!ibv_destroy_qp(g[1]), "G destroy a QP holding receives");
			sync_with_peer(9);
		}
		wc = poll_one(gcq, 20000, "G recv");
		i = (int)wc.wr_id - 100;
		CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
		      i >= 0 && i < GN && !used[i] && wc.byte_len == 4096 &&
		      wc.qp_num == g[k ? 0 : 1]->qp_num, "G recv %d: %s wr_id %llu "
		      "len %u qp %u", k, ibv_wc_status_str(wc.status),
		      (unsigned long long)wc.wr_id, wc.byte_len, wc.qp_num);
		used[i] = 1;
		CHECK(first_diff(a + GOFF + i * 4096, 4096, 200 + k) == 4096,
		      "G recv %d: data of message %d wrong", k, k);
	}
	/* Async events of the QPs came first (COMM_EST); the limit's is there. */
	while (!limit && fd_readable(s->ctx->async_fd, 5000)) {
		CHECK(!ibv_get_async_event(s->ctx, &ev), "get_async_event");
		limit = ev.event_type == IBV_EVENT_SRQ_LIMIT_REACHED &&
			ev.element.srq == srq;
		ibv_ack_async_event(&ev);
	}
	CHECK(limit, "G: no IBV_EVENT_SRQ_LIMIT_REACHED");
	sync_with_peer(10);
	printf("server G: 6 SENDs on 2 QPs landed in an SRQ's receives, 5 of them "
	       "after the other QP was destroyed; the SRQ limit event came\n");
}

/* G, client side: one SEND on h[1], then five on h[0]. */
static void phase_g_client(struct side *s, struct ibv_qp **h, uint8_t *b,
			   struct ibv_mr *mb)
{
	struct ibv_sge sg;
	struct ibv_send_wr w = { .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED };
	struct ibv_wc wc;
	int k;

	sync_with_peer(8);
	for (k = 0; k < 6; k++) {
		if (k == 1)
			sync_with_peer(9);
		fill(b + k * 4096, 4096, 200 + k);
		sg = (struct ibv_sge){ (uintptr_t)(b + k * 4096), 4096, mb->lkey };
		w.wr_id = 60 + k;
		post(h[k ? 0 : 1], &w, "G SEND");
		if (!k) {
			wc = poll_one(s->cq, 20000, "G first SEND");
			expect(wc, IBV_WC_SUCCESS, 60, "G first SEND");
		}
	}
	for (k = 1; k < 6; k++) {
		wc = poll_one(s->cq, 20000, "G SEND");
		expect(wc, IBV_WC_SUCCESS, 60 + k, "G SEND");
	}
	sync_with_peer(10);
	printf("client G: SENDs to a peer's QPs on a shared receive queue\n");
}

/* H, server side: hq[0] and hq[1] share hsrq's HN receives; every SEND
 * arrives on hq[0]. */
static void phase_h_server(struct ibv_srq *hsrq, struct ibv_qp **hq,
			   struct ibv_cq *hcq, uint8_t *a, struct ibv_mr *ma)
{
	struct ibv_sge sg;
	struct ibv_recv_wr rw = { .sg_list = &sg, .num_sge = 1 }, *bad;
	struct ibv_wc wc;
	int k;

	for (k = 0; k < HN; k++) {
		sg = (struct ibv_sge){ (uintptr_t)(a + HOFF + k * 4096), 4096, ma->lkey };
		rw.wr_id = 300 + k;
		CHECK(!ibv_post_srq_recv(hsrq, &rw, &bad), "H post_srq_recv %d", k);
	}
	sync_with_peer(11);
	for (k = 0; k < HN; k++) {
		wc = poll_one(hcq, 20000, "H recv");
		CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
		      wc.byte_len == 4096 && wc.qp_num == hq[0]->qp_num,
		      "H recv %d: %s wr_id %llu len %u qp %u", k,
		      ibv_wc_status_str(wc.status), (unsigned long long)wc.wr_id,
		      wc.byte_len, wc.qp_num);
		/* SRQ receives are taken in any order; the data names its SEND. */
		CHECK(wc.wr_id >= 300 && wc.wr_id < 300 + HN, "H recv %d: wr_id %llu",
		      k, (unsigned long long)wc.wr_id);
		CHECK(first_diff(a + HOFF + (wc.wr_id - 300) * 4096, 4096, 400 + k) == 4096,
		      "H recv %d: data is not SEND %d's", k, k);
	}
	sync_with_peer(12);
	CHECK(!ibv_destroy_qp(hq[0]) && !ibv_destroy_qp(hq[1]), "H destroy QPs");
	CHECK(!ibv_destroy_srq(hsrq), "H destroy_srq: %s", strerror(errno));
	CHECK(!ibv_destroy_cq(hcq), "H destroy CQ");
	printf("server H: %d SENDs on one of two QPs landed in an SRQ that had lent "
	       "half its receives to the other\n", HN);
}

/* H, client side: HN SENDs on hc[0], retried while "receiver not ready". */
static void phase_h_client(struct side *s, struct ibv_qp **hc, uint8_t *b,
			   struct ibv_mr *mb)
{
	struct ibv_sge sg;
	struct ibv_send_wr w = { .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED };
	struct ibv_wc wc;
	int k;

	sync_with_peer(11);
	for (k = 0; k < HN; k++) {
		fill(b + k * 4096, 4096, 400 + k);
		sg = (struct ibv_sge){ (uintptr_t)(b + k * 4096), 4096, mb->lkey };
		w.wr_id = 500 + k;
		post(hc[0], &w, "H SEND");
	}
	for (k = 0; k < HN; k++) {
		wc = poll_one(s->cq, 20000, "H SEND");
		expect(wc, IBV_WC_SUCCESS, 500 + k, "H SEND");
	}
	sync_with_peer(12);
	printf("client H: %d SENDs to one QP of a peer's SRQ completed\n", HN);
}

static void server(const char *port)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_qp *g[2], *hq[2];
	struct ibv_srq *srq, *hsrq;
	struct ibv_cq *gcq, *hcq;
	struct side s = { 0 };
	struct info me = { 0 }, peer;
	struct ibv_mr *ma, *md;
	struct ibv_qp *dead;
	uint8_t *a, *d, r1[300], r2[300];
	struct ibv_sge rs[2];
	struct ibv_recv_wr rw = { .sg_list = rs }, *bad;
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	struct ibv_wc wc;
	int i;

	role = "server";
	open_side(&s);
	/* A: malloc memory with its data in it before registration. */
	a = malloc(BUF);
	d = malloc(BIG);
	CHECK(a && d, "malloc");
	fill(a, BUF, 11);
	memset(d, 0xa5, BIG);
	ma = ibv_reg_mr(s.pd, a, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ);
	md = ibv_reg_mr(s.pd, d, BIG, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	CHECK(ma && md, "reg_mr: %s", strerror(errno));
	CHECK(first_diff(a, BUF, 11) == BUF, "registration changed the buffer");
	for (i = 0; i < NQP; i++) {
		s.qp[i] = make_qp(&s, 1);
		me.qpn[i] = s.qp[i]->qp_num;
	}
	gcq = ibv_create_cq(s.ctx, 64, NULL, NULL, 0);
	CHECK(gcq, "create_cq: %s", strerror(errno));
	srq = ibv_create_srq(s.pd, &sa);
	CHECK(srq, "create_srq: %s", strerror(errno));
	for (i = 0; i < 2; i++) {
		g[i] = make_qp_on(&s, gcq, srq);
		me.g_qpn[i] = g[i]->qp_num;
	}
	hcq = ibv_create_cq(s.ctx, 64, NULL, NULL, 0);
	hsrq = ibv_create_srq(s.pd, &sa);
	CHECK(hcq && hsrq, "phase H CQ, SRQ: %s", strerror(errno));
	for (i = 0; i < 2; i++) {
		hq[i] = make_qp_on(&s, hcq, hsrq);
		me.h_qpn[i] = hq[i]->qp_num;
	}
	dead = make_qp(&s, 1);
	me.dead_qpn = dead->qp_num;
	CHECK(!ibv_destroy_qp(dead), "destroy");
	memcpy(me.gid, s.gid.raw, 16);
	me.a_addr = (uintptr_t)a;
	me.a_rkey = ma->rkey;
	me.d_addr = (uintptr_t)d;
	me.d_rkey = md->rkey;
	tcp_open(1, NULL, port);
	xfer(&me, sizeof(me), 1);
	xfer(&peer, sizeof(peer), 0);
	/* RTR then RTS before the client has even seen our numbers (as
	 * ibv_rc_pingpong's server): binding must not block. */
	for (i = 0; i < NQP; i++)
		connect_qp(&s, s.qp[i], peer.gid, peer.qpn[i], 1, 7);
	for (i = 0; i < 2; i++) {
		connect_qp(&s, g[i], peer.gid, peer.g_qpn[i], 1, 7);
		connect_qp(&s, hq[i], peer.gid, peer.h_qpn[i], 1, 7);
	}
	sync_with_peer(1);
	/* A: the client READs a while we wait on the socket. */
	sync_with_peer(2);
	/* B: a receive for the WRITE_WITH_IMM, the CQ armed, the channel
	 * quiet until the WRITE arrives. */
	rw.num_sge = 0;
	rw.wr_id = 77;
	CHECK(!ibv_post_recv(s.qp[0], &rw, &bad), "post_recv");
	CHECK(!ibv_req_notify_cq(s.rcq, 0), "req_notify");
	CHECK(!fd_readable(s.ch->fd, 200), "channel readable before any completion");
	sync_with_peer(3);
	CHECK(fd_readable(s.ch->fd, 20000), "channel never became readable");
	CHECK(!ibv_get_cq_event(s.ch, &ev_cq, &ev_ctx), "get_cq_event");
	CHECK(ev_cq == s.rcq && ev_ctx == &s, "event of the wrong CQ");
	ibv_ack_cq_events(ev_cq, 1);
	wc = poll_one(s.rcq, 5000, "B recv");
	expect(wc, IBV_WC_SUCCESS, 77, "B recv");
	CHECK(wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM && (wc.wc_flags & IBV_WC_WITH_IMM) &&
	      wc.imm_data == htonl(IMM) && wc.byte_len == 65536 &&
	      wc.qp_num == s.qp[0]->qp_num, "B: opcode %d flags %#x imm %#x len %u "
	      "qp %u", wc.opcode, wc.wc_flags, wc.imm_data, wc.byte_len, wc.qp_num);
	CHECK(first_diff(a, 65536, 22) == 65536, "B: written data wrong");
	printf("server B: completion channel woke on the WRITE_WITH_IMM, imm "
	       "%#x in network order\n", ntohl(wc.imm_data));
	/* C: a two-entry receive for a three-entry SEND, then one for the
	 * inline send. */
	memset(r1, 0, sizeof(r1));
	memset(r2, 0, sizeof(r2));
	rs[0] = (struct ibv_sge){ (uintptr_t)(a + 1000), 100, ma->lkey };
	rs[1] = (struct ibv_sge){ (uintptr_t)(a + 5000), 200, ma->lkey };
	rw.num_sge = 2;
	rw.wr_id = 78;
	CHECK(!ibv_post_recv(s.qp[3], &rw, &bad), "post_recv 2 sge");
	rs[0] = (struct ibv_sge){ (uintptr_t)(a + 9000), 128, ma->lkey };
	rw.num_sge = 1;
	rw.wr_id = 79;
	CHECK(!ibv_post_recv(s.qp[3], &rw, &bad), "post_recv inline");
	sync_with_peer(4);
	wc = poll_one(s.rcq, 10000, "C recv");
	expect(wc, IBV_WC_SUCCESS, 78, "C recv");
	CHECK(wc.opcode == IBV_WC_RECV && wc.byte_len == 250, "C: len %u", wc.byte_len);
	for (i = 0; i < 100; i++)
		CHECK(a[1000 + i] == (uint8_t)i, "C: first entry byte %d", i);
	for (i = 0; i < 150; i++)
		CHECK(a[5000 + i] == (uint8_t)(100 + i), "C: second entry byte %d", i);
	wc = poll_one(s.rcq, 10000, "C inline recv");
	expect(wc, IBV_WC_SUCCESS, 79, "C inline recv");
	CHECK(wc.byte_len == 100 && a[9000] == 0xee && a[9099] == 0xee, "C: inline data");
	printf("server C: SEND of 3 entries landed across a 2-entry receive\n");
	/* D: the client's 16 MiB READ of d, deregistered on its side. */
	sync_with_peer(5);
	/* E: nothing posted on qp[2]: the client's SEND there is refused. */
	sync_with_peer(6);
	sync_with_peer(7);
	phase_g_server(&s, srq, g, gcq, a, ma);
	CHECK(!ibv_destroy_qp(g[0]), "destroy G QP");
	CHECK(!ibv_destroy_srq(srq), "destroy_srq: %s", strerror(errno));
	CHECK(!ibv_destroy_cq(gcq), "destroy G CQ");
	phase_h_server(hsrq, hq, hcq, a, ma);
	printf("server: all phases passed\n");
	ibv_dereg_mr(ma);
	ibv_dereg_mr(md);
	for (i = 0; i < NQP; i++)
		ibv_destroy_qp(s.qp[i]);
	ibv_destroy_cq(s.cq);
	ibv_destroy_cq(s.rcq);
	ibv_destroy_comp_channel(s.ch);
	ibv_dealloc_pd(s.pd);
	ibv_close_device(s.ctx);
	free(a);
	free(d);
}

static void phase_d(struct side *s, const struct info *peer)
{
	struct ibv_mr *mc;
	struct ibv_sge sg;
	struct ibv_send_wr w = { .wr_id = 40, .sg_list = &sg, .num_sge = 1,
				 .opcode = IBV_WR_RDMA_READ,
				 .send_flags = IBV_SEND_SIGNALED };
	struct ibv_wc wc;
	uint8_t *c = malloc(BIG), *snap = malloc(BIG);

	CHECK(c && snap, "malloc");
	memset(c, 0x5a, BIG);
	mc = ibv_reg_mr(s->pd, c, BIG, IBV_ACCESS_LOCAL_WRITE);
	CHECK(mc, "reg C: %s", strerror(errno));
	sg = (struct ibv_sge){ (uintptr_t)c, BIG, mc->lkey };
	w.wr.rdma.remote_addr = peer->d_addr;
	w.wr.rdma.rkey = peer->d_rkey;
	post(s->qp[1], &w, "D READ");
	CHECK(!ibv_dereg_mr(mc), "dereg with a READ in flight: %s", strerror(errno));
	memcpy(snap, c, BIG);
	wc = poll_one(s->cq, 20000, "D READ");
	CHECK(wc.wr_id == 40 && wc.status != IBV_WC_SUCCESS, "D: the READ into "
	      "deregistered memory completed with %s", ibv_wc_status_str(wc.status));
	usleep(500000);
	CHECK(!memcmp(snap, c, BIG), "D: memory changed after ibv_dereg_mr returned");
	printf("client D: dereg during a 16 MiB READ: READ completed with \"%s\", "
	       "memory untouched after dereg\n", ibv_wc_status_str(wc.status));
	free(c);
	free(snap);
}

static void phase_e(struct side *s, const struct info *peer, uint8_t *b,
		    struct ibv_mr *mb)
{
	struct ibv_sge sg = { (uintptr_t)b, 4096, mb->lkey };
	struct ibv_send_wr w = { .sg_list = &sg, .num_sge = 1,
				 .send_flags = IBV_SEND_SIGNALED };
	struct ibv_wc wc;

	/* A WRITE with a wrong rkey, then one more: refused, then flushed. */
	w.opcode = IBV_WR_RDMA_WRITE;
	w.wr_id = 50;
	w.wr.rdma.remote_addr = peer->a_addr;
	w.wr.rdma.rkey = peer->a_rkey ^ 0x100;
	post(s->qp[0], &w, "E bad rkey");
	wc = poll_one(s->cq, 20000, "E bad rkey");
	expect(wc, IBV_WC_REM_ACCESS_ERR, 50, "E bad rkey");
	w.wr_id = 51;
	w.wr.rdma.rkey = peer->a_rkey;
	post(s->qp[0], &w, "E after error");
	wc = poll_one(s->cq, 5000, "E flush");
	expect(wc, IBV_WC_WR_FLUSH_ERR, 51, "E flush");
	/* A SEND where no receive is posted, one RNR retry allowed. */
	w.opcode = IBV_WR_SEND;
	w.wr_id = 52;
	post(s->qp[2], &w, "E rnr");
	wc = poll_one(s->cq, 20000, "E rnr");
	expect(wc, IBV_WC_RNR_RETRY_EXC_ERR, 52, "E rnr");
	/* A QP bound to a QP that no longer exists: nobody answers. */
	w.opcode = IBV_WR_RDMA_WRITE;
	w.wr_id = 53;
	post(s->qp[4], &w, "E retry");
	wc = poll_one(s->cq, 30000, "E retry");
	expect(wc, IBV_WC_RETRY_EXC_ERR, 53, "E retry");
	printf("client E: REM_ACCESS_ERR, WR_FLUSH_ERR, RNR_RETRY_EXC_ERR, "
	       "RETRY_EXC_ERR as expected\n");
}

/* F: each misuse, and the errno ibverbs programs get for it. */
/* A shared receive queue without a peer: what it reports, and the calls
 * that must fail. */
static void srq_misuse(struct side *s)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 6, .max_sge = 2 } };
	struct ibv_qp_init_attr qa = { .send_cq = s->cq, .recv_cq = s->cq,
				       .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 1, .max_send_sge = 1 } };
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_srq_attr a;
	static char rbuf[4096];
	struct ibv_sge sg = { .addr = (uintptr_t)rbuf, .length = sizeof(rbuf) };
	struct ibv_recv_wr rw = { .wr_id = 7, .sg_list = &sg, .num_sge = 1 }, *brw;
	struct ibv_mr *mr;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	int i, rc;

	srq = ibv_create_srq(s->pd, &sa);
	CHECK(srq, "create_srq: %s", strerror(errno));
	CHECK(sa.attr.max_wr >= 6 && sa.attr.max_sge == 2, "F create_srq gave %u/%u",
	      sa.attr.max_wr, sa.attr.max_sge);
	mr = ibv_reg_mr(s->pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr, "reg_mr: %s", strerror(errno));
	sg.lkey = mr->lkey;
	qa.srq = srq;
	qp = ibv_create_qp(s->pd, &qa);
	CHECK(qp, "create_qp on an SRQ: %s", strerror(errno));
	CHECK(!ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_PKEY_INDEX |
			     IBV_QP_ACCESS_FLAGS), "modify to INIT");
	rc = ibv_post_recv(qp, &rw, &brw);
	CHECK(rc == EINVAL && brw == &rw, "F post_recv on a QP with an SRQ: %d", rc);
	sg.lkey ^= 0x55;
	rc = ibv_post_srq_recv(srq, &rw, &brw);
	CHECK(rc == EINVAL && brw == &rw, "F post_srq_recv, bad lkey: %d", rc);
	sg.lkey ^= 0x55;
	for (i = 0; i < (int)sa.attr.max_wr; i++)
		CHECK(!ibv_post_srq_recv(srq, &rw, &brw), "post_srq_recv %d", i);
	rc = ibv_post_srq_recv(srq, &rw, &brw);
	CHECK(rc == ENOMEM && brw == &rw, "F post_srq_recv to a full SRQ: %d", rc);
	CHECK(!ibv_modify_srq(srq, &(struct ibv_srq_attr){ .srq_limit = 0 },
			      IBV_SRQ_LIMIT), "modify_srq limit 0");
	CHECK(ibv_modify_srq(srq, &(struct ibv_srq_attr){ .max_wr = 64 },
			     IBV_SRQ_MAX_WR) == EINVAL, "F modify_srq resize");
	CHECK(ibv_modify_srq(srq, &(struct ibv_srq_attr){ .srq_limit = 1000 },
			     IBV_SRQ_LIMIT) == EINVAL, "F modify_srq limit 1000");
	CHECK(!ibv_modify_srq(srq, &(struct ibv_srq_attr){ .srq_limit = 3 },
			      IBV_SRQ_LIMIT), "modify_srq limit 3");
	CHECK(!ibv_query_srq(srq, &a) && a.srq_limit == 3 && a.max_sge == 2,
	      "query_srq");
	CHECK(ibv_destroy_srq(srq) == EBUSY, "F destroy_srq with a QP on it");
	CHECK(!ibv_destroy_qp(qp), "destroy the SRQ's QP");
	CHECK(!ibv_destroy_srq(srq), "destroy_srq: %s", strerror(errno));
	CHECK(!ibv_dereg_mr(mr), "dereg");
}

/* The /proc/self/maps line of the mapping holding p, in line ("" if p is
 * not mapped). */
static void mapping_of(const void *p, char *line, size_t n)
{
	FILE *f = fopen("/proc/self/maps", "re");
	uintptr_t a = (uintptr_t)p;

	CHECK(f, "/proc/self/maps: %s", strerror(errno));
	while (fgets(line, (int)n, f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo <= a && a < hi) {
			fclose(f);
			return;
		}
	}
	fclose(f);
	line[0] = 0;
}

/* Is the page at p a mapping of a BPF map (device memory)? */
static bool in_device_memory(const void *p)
{
	char line[512];

	mapping_of(p, line, sizeof(line));
	return strstr(line, "bpf-map") != NULL;
}

#define KLEN (1u << 20)

#define KPG 4096u

/* K, in keep mode: 64 pages from mmap, registered and deregistered (kept
 * idle), then pages 16..31 replaced by a new mapping and 48..63 made
 * read-only.  Checked after ibv_close_device by phase_k_split_closed. */
static uint8_t *phase_k_split(struct side *s)
{
	uint8_t *p = mmap(NULL, 64 * KPG, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_mr *mr;

	CHECK(p != MAP_FAILED, "K: mmap: %s", strerror(errno));
	memset(p, 7, 64 * KPG);
	mr = ibv_reg_mr(s->pd, p, 64 * KPG, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_READ);
	CHECK(mr, "K: reg_mr of the mmap'd range: %s", strerror(errno));
	CHECK(!ibv_dereg_mr(mr), "K: dereg of the mmap'd range");
	CHECK(in_device_memory(p), "K: the mmap'd range was not kept idle");
	CHECK(mmap(p + 16 * KPG, 16 * KPG, PROT_READ | PROT_WRITE, MAP_PRIVATE |
		   MAP_ANONYMOUS | MAP_FIXED, -1, 0) == p + 16 * KPG,
	      "K: mmap over the middle: %s", strerror(errno));
	memset(p + 16 * KPG, 9, 16 * KPG);
	CHECK(!mprotect(p + 48 * KPG, 16 * KPG, PROT_READ), "K: mprotect: %s",
	      strerror(errno));
	return p;
}

static void phase_k_split_closed(uint8_t *p)
{
	char line[512], perms[8] = "";
	uint32_t i;

	for (i = 0; i < 64 * KPG; i++)
		CHECK(p[i] == (i / KPG >= 16 && i / KPG < 32 ? 9 : 7),
		      "K: byte %u of the split range is wrong after close", i);
	CHECK(!in_device_memory(p) && !in_device_memory(p + 40 * KPG) &&
	      !in_device_memory(p + 50 * KPG), "K: split range still device memory");
	mapping_of(p + 50 * KPG, line, sizeof(line));
	CHECK(sscanf(line, "%*x-%*x %7s", perms) == 1 && perms[1] == '-',
	      "K: the read-only end came back writable (or unmapped): %s", line);
	munmap(p, 64 * KPG);
}

/* K, before ibv_close_device: returns the buffer kept idle. */
static uint8_t *phase_k(struct side *s)
{
	uint8_t *k = aligned_alloc(4096, KLEN), *w = aligned_alloc(4096, KLEN);
	const char *env = getenv("XROCE_MR_CACHE_MB");
	bool keep = env && atoi(env) > 0;
	struct ibv_mr *mr;
	uint32_t i;

	CHECK(k && w, "K: out of memory");
	for (i = 0; i < KLEN; i++)
		k[i] = (uint8_t)(i * 7 + 3);
	mr = ibv_reg_mr(s->pd, k, KLEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	CHECK(mr && in_device_memory(k), "K: reg_mr: %s", strerror(errno));
	CHECK(!ibv_dereg_mr(mr), "K: dereg");
	CHECK(in_device_memory(k) == keep && in_device_memory(k + KLEN - 1) == keep,
	      keep ? "K: deregistered REMOTE_READ memory was not kept idle" :
	      "K: deregistered memory still device memory (XROCE_MR_CACHE_MB unset)");
	for (i = 0; i < KLEN; i++)
		CHECK(k[i] == (uint8_t)(i * 7 + 3), "K: byte %u changed by dereg", i);
	memset(k, 0x5a, KLEN);
	mr = ibv_reg_mr(s->pd, k, KLEN, IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr, "K: reg_mr again: %s", strerror(errno));
	for (i = 0; i < KLEN; i++)
		CHECK(k[i] == 0x5a, "K: byte %u lost on registering again", i);
	CHECK(!ibv_dereg_mr(mr), "K: dereg again");
	mr = ibv_reg_mr(s->pd, w, KLEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	CHECK(mr && in_device_memory(w), "K: reg_mr REMOTE_WRITE: %s", strerror(errno));
	memset(w, 0x33, KLEN);
	CHECK(!ibv_dereg_mr(mr), "K: dereg REMOTE_WRITE");
	CHECK(!in_device_memory(w), "K: REMOTE_WRITE memory still device memory "
	      "after dereg");
	for (i = 0; i < KLEN; i++)
		CHECK(w[i] == 0x33, "K: byte %u of the given-back buffer changed", i);
	free(w);
	printf("client K: deregistered REMOTE_READ memory %s, registered again "
	       "with its contents; REMOTE_WRITE memory given back at dereg\n",
	       keep ? "kept idle (XROCE_MR_CACHE_MB)" : "given back at once");
	return k;
}

/* K, after ibv_close_device: the idle buffer is the process's again. */
static void phase_k_closed(uint8_t *k)
{
	uint32_t i;

	CHECK(!in_device_memory(k), "K: idle memory not given back by ibv_close_device");
	for (i = 0; i < KLEN; i++)
		CHECK(k[i] == 0x5a, "K: byte %u changed by ibv_close_device", i);
	free(k);
	printf("client K: no device memory left over the buffer after "
	       "ibv_close_device, contents kept\n");
}

static void phase_f(struct side *s)
{
	struct ibv_qp_init_attr qa = { .send_cq = s->cq, .recv_cq = s->cq,
				       .qp_type = IBV_QPT_UD,
				       .cap = { .max_send_wr = 1, .max_recv_wr = 1,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_RTR };
	struct ibv_port_attr pa;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	struct ibv_send_wr w = { .opcode = IBV_WR_SEND }, *bw;
	struct ibv_recv_wr rw = { 0 }, *brw;
	union ibv_gid gid;
	static char sbuf[8192];
	void *hole;
	int rc;

#define ERRNO_IS(expr, e, what) do {                                           \
	errno = 0;                                                             \
	CHECK(!(expr) && errno == (e), "F %s: errno %d (%s), want %d (%s)",    \
	      what, errno, strerror(errno), e, strerror(e));                   \
} while (0)
	hole = mmap(NULL, 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(hole, 8192);
	ERRNO_IS(ibv_reg_mr(s->pd, hole, 4096, IBV_ACCESS_LOCAL_WRITE), EFAULT,
		 "reg_mr of unmapped memory");
	ERRNO_IS(ibv_reg_mr(s->pd, sbuf, sizeof(sbuf), IBV_ACCESS_REMOTE_WRITE), EINVAL,
		 "reg_mr REMOTE_WRITE without LOCAL_WRITE");
	ERRNO_IS(ibv_reg_mr(s->pd, sbuf, sizeof(sbuf), IBV_ACCESS_LOCAL_WRITE |
			    IBV_ACCESS_REMOTE_ATOMIC), EOPNOTSUPP, "reg_mr atomics");
	ERRNO_IS(ibv_reg_mr(s->pd, sbuf, 0, IBV_ACCESS_LOCAL_WRITE), EINVAL,
		 "reg_mr of length 0");
	ERRNO_IS(ibv_create_cq(s->ctx, 0, NULL, NULL, 0), EINVAL, "create_cq cqe 0");
	ERRNO_IS(ibv_create_cq(s->ctx, 1 << 30, NULL, NULL, 0), EINVAL,
		 "create_cq too large");
	ERRNO_IS(ibv_create_qp(s->pd, &qa), EOPNOTSUPP, "create_qp UD");
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_sge = 1000;
	ERRNO_IS(ibv_create_qp(s->pd, &qa), EINVAL, "create_qp max_send_sge 1000");
	ERRNO_IS(ibv_create_srq(s->pd, &(struct ibv_srq_init_attr){
			.attr = { .max_wr = 0, .max_sge = 1 } }), EINVAL, "create_srq max_wr 0");
	ERRNO_IS(ibv_create_srq(s->pd, &(struct ibv_srq_init_attr){
			.attr = { .max_wr = 4, .max_sge = 1000 } }), EINVAL,
		 "create_srq max_sge 1000");
	ERRNO_IS(ibv_create_srq(s->pd, &(struct ibv_srq_init_attr){
			.attr = { .max_wr = 4, .srq_limit = 5 } }), EINVAL,
		 "create_srq limit above max_wr");
	ERRNO_IS(ibv_alloc_mw(s->pd, IBV_MW_TYPE_1), EOPNOTSUPP, "alloc_mw");
	ERRNO_IS(ibv_create_cq_ex(s->ctx, &(struct ibv_cq_init_attr_ex){ .cqe = 4 }),
		 EOPNOTSUPP, "create_cq_ex");
	qa.cap.max_send_sge = 1;
	qp = ibv_create_qp(s->pd, &qa);
	CHECK(qp, "create_qp: %s", strerror(errno));
	rc = ibv_post_send(qp, &w, &bw);
	CHECK(rc == EINVAL && bw == &w, "F post_send in RESET: %d", rc);
	rc = ibv_post_recv(qp, &rw, &brw);
	CHECK(rc == EINVAL && brw == &rw, "F post_recv in RESET: %d", rc);
	rc = ibv_modify_qp(qp, &at, IBV_QP_STATE);
	CHECK(rc == EINVAL, "F modify RESET -> RTR: %d", rc);
	at.qp_state = IBV_QPS_INIT;
	at.port_num = 1;
	rc = ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_PORT);
	CHECK(rc == EINVAL, "F modify to INIT without PKEY/ACCESS: %d", rc);
	at.port_num = 2;
	rc = ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_PKEY_INDEX |
			   IBV_QP_ACCESS_FLAGS);
	CHECK(rc == EINVAL, "F modify to INIT on port 2: %d", rc);
	at.port_num = 1;
	CHECK(!ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_PKEY_INDEX |
			     IBV_QP_ACCESS_FLAGS), "modify to INIT");
	memset(&at, 0, sizeof(at));
	at.qp_state = IBV_QPS_RTR;
	at.dest_qp_num = 1;
	rc = ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			   IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	CHECK(rc == EINVAL, "F modify to RTR without a GID: %d", rc);
	CHECK(ibv_query_port(s->ctx, 2, &pa) == EINVAL, "F query_port 2");
	CHECK(ibv_query_gid(s->ctx, 1, 999, &gid) == -1, "F query_gid 999");
	mr = ibv_reg_mr(s->pd, sbuf, sizeof(sbuf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr, "reg_mr static: %s", strerror(errno));
	CHECK(ibv_dealloc_pd(s->pd) == EBUSY, "F dealloc_pd with regions");
	CHECK(ibv_destroy_cq(s->cq) == EBUSY, "F destroy_cq in use");
	CHECK(ibv_destroy_comp_channel(s->ch) == EBUSY, "F destroy channel in use");
	CHECK(!ibv_dereg_mr(mr), "dereg static");
	CHECK(!ibv_destroy_qp(qp), "destroy");
	srq_misuse(s);
	cq = ibv_create_cq(s->ctx, 4, NULL, NULL, 5);
	CHECK(!cq && errno == EINVAL, "F create_cq on completion vector 5");
	printf("client F: every misuse gave the expected errno\n");
#undef ERRNO_IS
}

static void phase_c(struct side *s, uint8_t *b, struct ibv_mr *mb)
{
	struct ibv_sge sg[3], isg;
	struct ibv_send_wr w[2];
	uint8_t inl[100];
	struct ibv_wc wc;
	int i;

	for (i = 0; i < 250; i++)
		b[200000 + (i < 60 ? i : i < 180 ? 1000 + i : 3000 + i)] = (uint8_t)i;
	sg[0] = (struct ibv_sge){ (uintptr_t)(b + 200000), 60, mb->lkey };
	sg[1] = (struct ibv_sge){ (uintptr_t)(b + 201060), 120, mb->lkey };
	sg[2] = (struct ibv_sge){ (uintptr_t)(b + 203180), 70, mb->lkey };
	memset(w, 0, sizeof(w));
	/* Unsignaled on a QP without sq_sig_all: no completion of its own. */
	w[0] = (struct ibv_send_wr){ .wr_id = 30, .sg_list = sg, .num_sge = 3,
				     .opcode = IBV_WR_SEND, .next = &w[1] };
	/* Inline, from the stack, no region (lkey 0). */
	memset(inl, 0xee, sizeof(inl));
	isg = (struct ibv_sge){ (uintptr_t)inl, sizeof(inl), 0 };
	w[1] = (struct ibv_send_wr){ .wr_id = 31, .opcode = IBV_WR_SEND,
				     .sg_list = &isg, .num_sge = 1,
				     .send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED };
	post(s->qp[3], w, "C sends");
	memset(inl, 0, sizeof(inl)); /* inline: reusable at once */
	wc = poll_one(s->cq, 10000, "C send");
	expect(wc, IBV_WC_SUCCESS, 31, "C send (the unsignaled one must not complete)");
	CHECK(wc.opcode == IBV_WC_SEND, "C opcode %d", wc.opcode);
	CHECK(ibv_poll_cq(s->cq, 1, &wc) == 0, "C: an extra completion");
	printf("client C: scatter list, unsignaled and inline sends\n");
}

static void client(const char *host, const char *port)
{
	struct ibv_qp *h[2], *hc[2];
	struct side s = { 0 };
	struct info me = { 0 }, peer;
	struct ibv_mr *mb;
	struct ibv_sge sg;
	struct ibv_send_wr w = { .sg_list = &sg, .num_sge = 1,
				 .send_flags = IBV_SEND_SIGNALED };
	struct ibv_wc wc;
	uint8_t *b, *kept, *split;
	int i;

	role = "client";
	open_side(&s);
	b = malloc(BUF);
	CHECK(b, "malloc");
	memset(b, 0, BUF);
	mb = ibv_reg_mr(s.pd, b, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ);
	CHECK(mb, "reg_mr: %s", strerror(errno));
	for (i = 0; i < NQP; i++)
		s.qp[i] = make_qp(&s, i != 3); /* qp[3] signals per request */
	for (i = 0; i < NQP; i++)
		me.qpn[i] = s.qp[i]->qp_num;
	for (i = 0; i < 2; i++) {
		h[i] = make_qp(&s, 1);
		me.g_qpn[i] = h[i]->qp_num;
		hc[i] = make_qp(&s, 1);
		me.h_qpn[i] = hc[i]->qp_num;
	}
	memcpy(me.gid, s.gid.raw, 16);
	tcp_open(0, host, port);
	xfer(&peer, sizeof(peer), 0);
	xfer(&me, sizeof(me), 1);
	for (i = 0; i < NQP; i++)
		connect_qp(&s, s.qp[i], peer.gid, i == 4 ? peer.dead_qpn : peer.qpn[i],
			   1, i == 4 ? 1 : 7);
	for (i = 0; i < 2; i++) {
		connect_qp(&s, h[i], peer.gid, peer.g_qpn[i], 1, 7);
		/* rnr_retry 7: retried for as long as it takes, as perftest */
		connect_qp(&s, hc[i], peer.gid, peer.h_qpn[i], 7, 7);
	}
	sync_with_peer(1);
	/* A */
	sg = (struct ibv_sge){ (uintptr_t)b, BUF, mb->lkey };
	w.wr_id = 10;
	w.opcode = IBV_WR_RDMA_READ;
	w.wr.rdma.remote_addr = peer.a_addr;
	w.wr.rdma.rkey = peer.a_rkey;
	post(s.qp[0], &w, "A READ");
	wc = poll_one(s.cq, 30000, "A READ");
	expect(wc, IBV_WC_SUCCESS, 10, "A READ");
	CHECK(wc.opcode == IBV_WC_RDMA_READ && wc.byte_len == BUF, "A: opcode %d len %u",
	      wc.opcode, wc.byte_len);
	CHECK(first_diff(b, BUF, 11) == BUF, "A: byte %zu of the peer's malloc "
	      "memory differs", first_diff(b, BUF, 11));
	printf("client A: READ of the peer's malloc memory returned the data it "
	       "held before registration\n");
	sync_with_peer(2);
	/* B */
	sync_with_peer(3);
	fill(b, 65536, 22);
	sg.length = 65536;
	w.wr_id = 20;
	w.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	w.imm_data = htonl(IMM);
	post(s.qp[0], &w, "B WRITE_WITH_IMM");
	wc = poll_one(s.cq, 20000, "B");
	expect(wc, IBV_WC_SUCCESS, 20, "B");
	CHECK(wc.opcode == IBV_WC_RDMA_WRITE, "B opcode %d", wc.opcode);
	/* C */
	sync_with_peer(4);
	phase_c(&s, b, mb);
	/* D: on qp[1]; qp[0] and qp[1] share the CQ */
	sync_with_peer(5);
	phase_d(&s, &peer);
	/* E */
	sync_with_peer(6);
	phase_e(&s, &peer, b, mb);
	sync_with_peer(7);
	phase_g_client(&s, h, b, mb);
	phase_h_client(&s, hc, b, mb);
	for (i = 0; i < 2; i++)
		CHECK(!ibv_destroy_qp(hc[i]), "destroy_qp");
	for (i = 0; i < NQP; i++)
		CHECK(!ibv_destroy_qp(s.qp[i]), "destroy_qp");
	for (i = 0; i < 2; i++)
		CHECK(!ibv_destroy_qp(h[i]), "destroy_qp");
	phase_f(&s);
	kept = phase_k(&s);
	split = getenv("XROCE_MR_CACHE_MB") && atoi(getenv("XROCE_MR_CACHE_MB")) > 0 ?
		phase_k_split(&s) : NULL;
	ibv_dereg_mr(mb);
	ibv_destroy_cq(s.cq);
	ibv_destroy_cq(s.rcq);
	ibv_destroy_comp_channel(s.ch);
	ibv_dealloc_pd(s.pd);
	ibv_close_device(s.ctx);
	phase_k_closed(kept);
	if (split)
		phase_k_split_closed(split);
	free(b);
	printf("client: all phases passed\n");
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "server"))
		server(argv[2]);
	else if (argc == 4 && !strcmp(argv[1], "client"))
		client(argv[2], argv[3]);
	else
		die("usage: itest_ibv_basic server PORT | client HOST PORT");
	return 0;
}
