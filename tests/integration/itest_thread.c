// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * itest_thread: the device's progress thread and its lock.
 *
 *   itest_thread server IF PORT DONEFILE [--no-thread]
 *       accept two connections, then make no library call at all until
 *       DONEFILE exists; then check what the client WROTE and exit.  The
 *       second half of its buffer holds a pattern the client READs: with
 *       the progress thread (the default) the READs are answered although
 *       the application sleeps; with --no-thread nobody answers them.
 *   itest_thread client IF HOST PORT [--expect-read-failure]
 *       one device with a progress thread, two application threads, one QP
 *       each, working at once: a writer (WRITEs of the server's first
 *       half, in pieces) and a reader (READs of its second half, checked
 *       byte by byte); both sleep in xroce_wait_cq, which the progress
 *       thread feeds.  With --expect-read-failure the READs must fail with
 *       XROCE_WC_RETRY_EXC_ERR (the server runs --no-thread): the proof
 *       that it is the thread that answers them.
 *   itest_thread client IF HOST PORT --stall
 *       a client without a progress thread whose QPs have a 1 s timeout
 *       (keep-alive probes after 1 s of silence, failure after 2 s):
 *       connects, makes no library call for 2.5 s (a process stopped or
 *       starved, or a round held up), then polls for 300 ms and WRITEs
 *       the server's first half.  Its rounds came late, not the peer's
 *       answers: the QPs must probe and live, not fail at the first round.
 *   itest_thread client IF HOST PORT --peer-dies
 *       the same client, connected and idle, never posting: prints
 *       "connected", then (the server is killed) both QPs must fail by
 *       keep-alive within 6 s.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "xroce/xroce.h"

#define HALF (4u << 20)
#define PIECE (256u << 10)
#define NPIECES (HALF / PIECE)
#define TIMEOUT_MS 3000

struct info {
	uint64_t addr;
	uint32_t rkey;
};

struct side {
	struct xroce_device *dev;
	struct xroce_pd *pd;
	struct xroce_mr *mr;
	uint8_t *buf;
};

struct conn {
	struct side *s;
	struct xroce_cq *cq;
	struct xroce_qp *qp;
	struct info peer;
	int rc;
	bool expect_failure;
};

static uint8_t pat(uint64_t i, int which)
{
	return (uint8_t)(i * 131 + (i >> 12) * 7 + (unsigned int)which * 61 + 1);
}

static int fail(const char *what, int rc)
{
	fprintf(stderr, "itest_thread: %s: %s\n", what, strerror(rc < 0 ? -rc : rc));
	return 1;
}

static int open_side(struct side *s, const char *ifname, uint16_t port,
		     unsigned int flags)
{
	struct xroce_device_attr da = { .nplanes = 1, .mem_size = 2 * HALF + (1u << 20),
					.ctrl_port = port, .flags = flags };
	int rc;

	da.ifnames[0] = ifname;
	if ((rc = xroce_open_device(&da, &s->dev)))
		return fail("open", rc);
	if ((rc = xroce_alloc_pd(s->dev, &s->pd)))
		return fail("alloc_pd", rc);
	s->buf = xroce_mem_alloc(s->dev, 2 * HALF, 4096);
	if (!s->buf)
		return fail("mem_alloc", -ENOMEM);
	rc = xroce_reg_mr(s->pd, s->buf, 2 * HALF, XROCE_ACCESS_LOCAL_WRITE |
			  XROCE_ACCESS_REMOTE_WRITE | XROCE_ACCESS_REMOTE_READ, &s->mr);
	return rc ? fail("reg_mr", rc) : 0;
}

static int open_conn(struct side *s, struct conn *c, uint32_t timeout_ms)
{
	struct xroce_qp_init_attr qa = { .timeout_ms = timeout_ms };
	int rc;

	memset(c, 0, sizeof(*c));
	c->s = s;
	if ((rc = xroce_create_cq(s->dev, 256, &c->cq)))
		return fail("create_cq", rc);
	qa.send_cq = qa.recv_cq = c->cq;
	if ((rc = xroce_create_qp(s->pd, &qa, &c->qp)))
		return fail("create_qp", rc);
	return 0;
}

/* ---- server ------------------------------------------------------------ */
static int server(const char *ifname, uint16_t port, const char *donefile,
		  bool threaded)
{
	struct side s = { 0 };
	struct conn c[2];
	struct info mine;
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	uint64_t i;
	int k, rc, waited = 0;

	if (open_side(&s, ifname, port, threaded ? XROCE_DEVICE_PROGRESS_THREAD : 0))
		return 1;
	for (i = 0; i < 2 * HALF; i++)
		s.buf[i] = i < HALF ? 0 : pat(i - HALF, 1);
	mine.addr = (uint64_t)(uintptr_t)s.buf;
	mine.rkey = s.mr->rkey;
	for (k = 0; k < 2; k++) {
		if (open_conn(&s, &c[k], TIMEOUT_MS))
			return 1;
		xroce_set_private_data(c[k].qp, &mine, sizeof(mine));
		if ((rc = xroce_accept(c[k].qp, 30000)))
			return fail("accept", rc);
	}
	printf("server: connected, sleeping without library calls\n");
	fflush(stdout);
	/* No library call from here until the client is done. */
	while (access(donefile, F_OK) != 0) {
		nanosleep(&ts, NULL);
		if (++waited > 50 * 120)
			return fail("waiting for the client", -ETIMEDOUT);
	}
	for (i = 0; i < HALF; i++)
		if (s.buf[i] != pat(i, 0)) {
			fprintf(stderr, "itest_thread: server byte %llu is %#x, "
				"expected %#x\n", (unsigned long long)i, s.buf[i],
				pat(i, 0));
			return 1;
		}
	printf("server: %u bytes written by the client checked\n", HALF);
	return xroce_close_device(s.dev) ? 1 : 0;
}

/* ---- client ------------------------------------------------------------ */
static int wait_one(struct conn *c, uint64_t wr_id, enum xroce_wc_status want)
{
	struct xroce_wc wc;
	int n = xroce_wait_cq(c->cq, 1, &wc, 4 * TIMEOUT_MS);

	if (n != 1)
		return fail("no completion", n < 0 ? n : -ETIMEDOUT);
	if (wc.wr_id != wr_id || wc.status != want) {
		fprintf(stderr, "itest_thread: wr %llu: %s (expected wr %llu, %s)\n",
			(unsigned long long)wc.wr_id, xroce_wc_status_str(wc.status),
			(unsigned long long)wr_id, xroce_wc_status_str(want));
		return 1;
	}
	return 0;
}

static void *writer(void *arg)
{
	struct conn *c = arg;
	uint32_t k;
	int rc;

	for (k = 0; k < NPIECES && !c->rc; k++) {
		struct xroce_sge g = { (uint64_t)(uintptr_t)c->s->buf + k * PIECE,
				       PIECE, c->s->mr->lkey };
		struct xroce_send_wr wr = {
			.wr_id = k, .sg_list = &g, .num_sge = 1,
			.opcode = XROCE_WR_RDMA_WRITE,
			.send_flags = XROCE_SEND_SIGNALED,
			.rdma = { c->peer.addr + k * PIECE, c->peer.rkey },
		}, *bad;

		rc = xroce_post_send(c->qp, &wr, &bad);
		c->rc = rc ? fail("post WRITE", rc) : wait_one(c, k, XROCE_WC_SUCCESS);
	}
	return NULL;
}

static void *reader(void *arg)
{
	struct conn *c = arg;
	uint8_t *dst = c->s->buf + HALF;
	enum xroce_wc_status want = c->expect_failure ? XROCE_WC_RETRY_EXC_ERR :
				    XROCE_WC_SUCCESS;
	uint32_t k, i;
	int rc;

	for (k = 0; k < NPIECES && !c->rc; k++) {
		struct xroce_sge g = { (uint64_t)(uintptr_t)dst + k * PIECE, PIECE,
				       c->s->mr->lkey };
		struct xroce_send_wr wr = {
			.wr_id = 1000 + k, .sg_list = &g, .num_sge = 1,
			.opcode = XROCE_WR_RDMA_READ,
			.send_flags = XROCE_SEND_SIGNALED,
			.rdma = { c->peer.addr + HALF + k * PIECE, c->peer.rkey },
		}, *bad;

		rc = xroce_post_send(c->qp, &wr, &bad);
		c->rc = rc ? fail("post READ", rc) : wait_one(c, 1000 + k, want);
		if (c->expect_failure)
			return NULL; /* one failure is the verdict */
		for (i = 0; i < PIECE && !c->rc; i++)
			if (dst[k * PIECE + i] != pat((uint64_t)k * PIECE + i, 1)) {
				fprintf(stderr, "itest_thread: READ piece %u byte %u "
					"wrong\n", k, i);
				c->rc = 1;
			}
	}
	return NULL;
}

/* The stalled client (see the top): both QPs outlive a silence of their
 * own making, then one WRITEs the server's first half. */
static int stall_client(struct side *s, struct conn *c)
{
	struct timespec stall = { 2, 500 * 1000 * 1000 };
	struct xroce_wc wc;
	uint32_t k;
	int i, n;

	nanosleep(&stall, NULL);
	for (i = 0; i < 30; i++)
		for (k = 0; k < 2; k++) {
			n = xroce_wait_cq(c[k].cq, 1, &wc, 5);
			if (n != 0 || xroce_qp_state(c[k].qp) == XROCE_QPS_ERR)
				return fail("a QP failed after its own stall", n < 0 ? n :
					    -ECONNRESET);
		}
	writer(&c[0]); /* in this thread: the device has none */
	if (c[0].rc)
		return 1;
	printf("client: both QPs alive after a 2.5 s stall of its own (1 s "
	       "timeout), then %u bytes written\n", HALF);
	return xroce_close_device(s->dev) ? 1 : 0;
}

/* The peer killed while both QPs are idle (see the top). */
static int orphan_client(struct conn *c)
{
	struct timespec t0, t1;
	struct xroce_wc wc;
	double secs = 0;
	uint32_t k;

	printf("client: connected\n");
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (secs < 6) {
		for (k = 0; k < 2; k++)
			if (xroce_wait_cq(c[k].cq, 1, &wc, 10) < 0)
				return fail("wait_cq", -EIO);
		if (xroce_qp_state(c[0].qp) == XROCE_QPS_ERR &&
		    xroce_qp_state(c[1].qp) == XROCE_QPS_ERR)
			break;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		secs = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	}
	if (secs >= 6)
		return fail("idle QPs of a dead peer still up after 6 s", -ETIMEDOUT);
	printf("client: both idle QPs failed by keep-alive %.1f s after connecting\n",
	       secs);
	return 0;
}

enum client_mode { BOTH_AT_ONCE, EXPECT_READ_FAILURE, STALL, PEER_DIES };

static int client(const char *ifname, const char *host, uint16_t port,
		  enum client_mode mode)
{
	bool threadless = mode == STALL || mode == PEER_DIES;
	struct side s = { 0 };
	struct conn c[2];
	pthread_t t[2];
	uint64_t i;
	int k, rc;

	if (open_side(&s, ifname, 0, threadless ? 0 : XROCE_DEVICE_PROGRESS_THREAD))
		return 1;
	for (i = 0; i < HALF; i++)
		s.buf[i] = pat(i, 0);
	for (k = 0; k < 2; k++) {
		if (open_conn(&s, &c[k], threadless ? 1000 : TIMEOUT_MS))
			return 1;
		if ((rc = xroce_connect(c[k].qp, host, port, 30000)))
			return fail("connect", rc);
		if (xroce_get_private_data(c[k].qp, &c[k].peer, sizeof(c[k].peer)) !=
		    sizeof(c[k].peer))
			return fail("private data", -EPROTO);
	}
	if (mode == STALL)
		return stall_client(&s, c);
	if (mode == PEER_DIES)
		return orphan_client(c);
	c[1].expect_failure = mode == EXPECT_READ_FAILURE;
	if (pthread_create(&t[0], NULL, writer, &c[0]) ||
	    pthread_create(&t[1], NULL, reader, &c[1]))
		return fail("pthread_create", -EAGAIN);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	if (c[0].rc || c[1].rc)
		return 1;
	printf("client: %u bytes written and, %s\n", HALF, mode == EXPECT_READ_FAILURE ?
	       "as expected, READs refused for lack of an answer" :
	       "at the same time, read back and checked");
	return xroce_close_device(s.dev) ? 1 : 0;
}

/* The client's mode from its optional last argument; -1 if unknown. */
static int client_mode(const char *arg)
{
	if (!arg)
		return BOTH_AT_ONCE;
	if (!strcmp(arg, "--expect-read-failure"))
		return EXPECT_READ_FAILURE;
	if (!strcmp(arg, "--stall"))
		return STALL;
	if (!strcmp(arg, "--peer-dies"))
		return PEER_DIES;
	return -1;
}

int main(int argc, char **argv)
{
	int mode;

	if (argc >= 5 && !strcmp(argv[1], "server"))
		return server(argv[2], (uint16_t)atoi(argv[3]), argv[4],
			      !(argc > 5 && !strcmp(argv[5], "--no-thread")));
	if (argc >= 5 && !strcmp(argv[1], "client") &&
	    (mode = client_mode(argc > 5 ? argv[5] : NULL)) >= 0)
		return client(argv[2], argv[3], (uint16_t)atoi(argv[4]),
			      (enum client_mode)mode);
	fprintf(stderr, "usage: itest_thread server IF PORT DONEFILE [--no-thread]\n"
		"       itest_thread client IF HOST PORT [--expect-read-failure | "
		"--stall | --peer-dies]\n");
	return 2;
}
