// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * itest_cm: connection set-up without blocking (xroce_listen,
 * xroce_get_conn_req, xroce_accept_conn_req, xroce_reject_conn_req,
 * xroce_connect_start, xroce_connect_poll), between two processes.
 *
 *   itest_cm server IF CTRLPORT LISTENPORT     (device with a progress thread)
 *   itest_cm client IF HOST LISTENPORT         (device without one)
 *
 * Phases, in order (the server knows them):
 *   E  (without a cluster key) before the client starts, a plain UDP
 *      socket (tests/lib/xrtest/cm_cookie.py) sends garbage, then a
 *      CONNECT without a cookie, which must get only a COOKIE, then the
 *      same with it: the server takes that request ("E") and rejects it
 *      with "noE".  The listener lives on for the phases below.
 *   A  the client's connect carries private data "A"; the server rejects
 *      it with "no"; the client's poll says -ECONNREFUSED and it reads "no".
 *   B  the client starts two connects at once (private data "B1", "B2");
 *      the server takes both and accepts them in the reverse order, with
 *      "ok2" then "ok1"; both reach RTS and each side SENDs on each (data
 *      checked), so the two QPs really are the two connections.
 *   C  the client connects once more; the server takes the request and
 *      does not answer while the client resends for 600 ms: no duplicate
 *      request appears; then it accepts.
 *   D  a connect to a port nobody listens on times out (-ETIMEDOUT) in its
 *      timeout, and xroce_unlisten'ed ports stop taking requests.
 * Then the bad arguments: each call returns -EINVAL / -ENOENT / -EISCONN.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>

#include "xroce/xroce.h"

#define WAIT_MS 20000

struct side {
	struct xroce_device *dev;
	struct xroce_pd *pd;
	struct xroce_cq *cq;
	struct xroce_mr *mr;
	uint8_t *buf;
};

static int fail(const char *what, int rc)
{
	fprintf(stderr, "itest_cm: %s: %s\n", what, strerror(rc < 0 ? -rc : rc));
	return 1;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void nap(void)
{
	struct timespec ts = { 0, 1000000 };

	nanosleep(&ts, NULL);
}

static int open_side(struct side *s, const char *ifname, uint16_t port,
		     unsigned int flags)
{
	struct xroce_device_attr da = { .nplanes = 1, .mem_size = 4u << 20,
					.ctrl_port = port, .flags = flags };
	int rc;

	da.ifnames[0] = ifname;
	if ((rc = xroce_open_device(&da, &s->dev)) ||
	    (rc = xroce_alloc_pd(s->dev, &s->pd)) ||
	    (rc = xroce_create_cq(s->dev, 256, &s->cq)))
		return fail("open", rc);
	s->buf = xroce_mem_alloc(s->dev, 1u << 20, 4096);
	if (!s->buf)
		return fail("mem_alloc", -ENOMEM);
	rc = xroce_reg_mr(s->pd, s->buf, 1u << 20, XROCE_ACCESS_LOCAL_WRITE, &s->mr);
	return rc ? fail("reg_mr", rc) : 0;
}

/* Receivers not ready are retried for about 2 s (the interval doubles up
 * to 64 ms), not the default 13 ms: at 20% loss a peer may still wait out
 * the retransmission timer of its last SEND's lost ACK (the timer backs
 * off) before it posts the receive for our next one, and this test is
 * about connection set-up. */
static int new_qp(struct side *s, struct xroce_qp **qp)
{
	struct xroce_qp_init_attr qa = { .send_cq = s->cq, .recv_cq = s->cq,
					 .timeout_ms = 3000, .rnr_retry = 40,
					 .rnr_timer_us = 1000 };
	int rc = xroce_create_qp(s->pd, &qa, qp);

	return rc ? fail("create_qp", rc) : 0;
}

/* The peer's private data is want. */
static int check_priv(struct xroce_qp *qp, const char *want)
{
	char got[XROCE_PRIVATE_DATA_MAX + 1] = { 0 };
	int n = xroce_get_private_data(qp, got, XROCE_PRIVATE_DATA_MAX);

	if (n != (int)strlen(want) || memcmp(got, want, (size_t)n) != 0) {
		fprintf(stderr, "itest_cm: private data %d \"%s\", expected \"%s\"\n",
			n, n > 0 ? got : "", want);
		return 1;
	}
	return 0;
}

/* SEND msg on qp (from slot k of the buffer) and receive the peer's into
 * slot k + 8; both must be what the peer's side of this test sends. */
static int exchange(struct side *s, struct xroce_qp *qp, int k, const char *msg,
		    const char *want)
{
	uint8_t *out = s->buf + k * 256, *in = s->buf + (k + 8) * 256;
	struct xroce_sge so = { (uintptr_t)out, (uint32_t)strlen(msg) + 1, s->mr->lkey };
	struct xroce_sge si = { (uintptr_t)in, 256, s->mr->lkey };
	struct xroce_recv_wr rw = { .wr_id = 2, .sg_list = &si, .num_sge = 1 }, *rb;
	struct xroce_send_wr sw = { .wr_id = 1, .sg_list = &so, .num_sge = 1,
				    .opcode = XROCE_WR_SEND,
				    .send_flags = XROCE_SEND_SIGNALED }, *sb;
	int rc, got = 0;

	memset(in, 0, 256);
	memcpy(out, msg, strlen(msg) + 1);
	if ((rc = xroce_post_recv(qp, &rw, &rb)) || (rc = xroce_post_send(qp, &sw, &sb)))
		return fail("post", rc);
	while (got < 2) {
		struct xroce_wc wc;
		int n = xroce_wait_cq(s->cq, 1, &wc, WAIT_MS);

		if (n == 1 && wc.status != XROCE_WC_SUCCESS) {
			fprintf(stderr, "itest_cm: exchange: wr %llu completed with %s\n",
				(unsigned long long)wc.wr_id,
				xroce_wc_status_str(wc.status));
			return 1;
		}
		if (n != 1)
			return fail("exchange completion", -ETIMEDOUT);
		got++;
	}
	if (strcmp((char *)in, want) != 0) {
		fprintf(stderr, "itest_cm: received \"%s\", expected \"%s\"\n",
			(char *)in, want);
		return 1;
	}
	return 0;
}

/* ---- server ------------------------------------------------------------ */
static int take_raw(struct side *s, struct xroce_conn_req *r)
{
	uint64_t t0 = now_ms();
	int rc;

	while ((rc = xroce_get_conn_req(s->dev, r)) == -EAGAIN && now_ms() - t0 < WAIT_MS)
		nap();
	return rc ? fail("get_conn_req", rc) : 0;
}

static bool is_req(const struct xroce_conn_req *r, const char *want)
{
	return r->private_data_len == strlen(want) &&
	       memcmp(r->private_data, want, r->private_data_len) == 0;
}

static int check_req(const struct xroce_conn_req *r, const char *want, uint16_t port)
{
	if (r->port != port || !is_req(r, want) || r->family != AF_INET) {
		fprintf(stderr, "itest_cm: request on port %u with %u bytes of private "
			"data, expected port %u and \"%s\"\n", r->port,
			r->private_data_len, port, want);
		return 1;
	}
	return 0;
}

static int take(struct side *s, struct xroce_conn_req *r, const char *want,
		uint16_t port)
{
	return take_raw(s, r) || check_req(r, want, port);
}

/* B1 and B2, in either order: under loss B1's CONNECT (or its resend with
 * the cookie) may be lost and B2's arrive first. */
static int take_pair(struct side *s, struct xroce_conn_req *r1,
		     struct xroce_conn_req *r2, uint16_t port)
{
	struct xroce_conn_req x;

	if (take_raw(s, &x))
		return 1;
	if (is_req(&x, "B2")) {
		*r2 = x;
		return check_req(r2, "B2", port) || take(s, r1, "B1", port);
	}
	*r1 = x;
	return check_req(r1, "B1", port) || take(s, r2, "B2", port);
}

static int accept_with(struct side *s, const struct xroce_conn_req *r,
		       const char *priv, struct xroce_qp **qp)
{
	int rc;

	if (new_qp(s, qp))
		return 1;
	xroce_set_private_data(*qp, priv, strlen(priv));
	rc = xroce_accept_conn_req(*qp, r);
	if (rc)
		return fail("accept_conn_req", rc);
	if (xroce_qp_state(*qp) != XROCE_QPS_RTS)
		return fail("accepted QP not RTS", -EPROTO);
	/* Answered: the id is gone. */
	rc = xroce_accept_conn_req(*qp, r);
	if (rc != -EISCONN)
		return fail("accepting twice", rc ? rc : -EPROTO);
	return 0;
}

static int server(const char *ifname, uint16_t ctrl, uint16_t lport)
{
	struct xroce_conn_req r, r2, rd;
	struct xroce_qp *q1, *q2, *q3;
	struct side s = { 0 };
	uint64_t t0;
	int rc;

	if (open_side(&s, ifname, ctrl, XROCE_DEVICE_PROGRESS_THREAD))
		return 1;
	rc = xroce_listen(s.dev, NULL, lport);
	if (rc != lport)
		return fail("listen", rc < 0 ? rc : -EPROTO);
	printf("server: listening on %u\n", lport);
	fflush(stdout);
	/* E: a request only after the cookie round-trip (cm_cookie.py) */
	if (!getenv("XROCE_KEY_FILE")) {
		if (take(&s, &r, "E", lport))
			return 1;
		if ((rc = xroce_reject_conn_req(s.dev, &r, "noE", 3)))
			return fail("reject E", rc);
		printf("server: E the raw request came after its cookie, refused\n");
	}
	/* A */
	if (take(&s, &r, "A", lport))
		return 1;
	if ((rc = xroce_reject_conn_req(s.dev, &r, "no", 2)))
		return fail("reject", rc);
	/* B: both requests, answered in the reverse order */
	if (take_pair(&s, &r, &r2, lport))
		return 1;
	if (accept_with(&s, &r2, "ok2", &q2) || accept_with(&s, &r, "ok1", &q1))
		return 1;
	if (exchange(&s, q1, 0, "srv1", "cli1") || exchange(&s, q2, 1, "srv2", "cli2"))
		return 1;
	printf("server: B accepted in reverse order, data checked\n");
	/* C: held unanswered while the client resends */
	if (take(&s, &r, "C", lport))
		return 1;
	for (t0 = now_ms(); now_ms() - t0 < 600;) {
		rc = xroce_get_conn_req(s.dev, &rd);
		if (rc != -EAGAIN)
			return fail("a resent CONNECT came back as a new request",
				    rc ? rc : -EPROTO);
		nap();
	}
	if (accept_with(&s, &r, "okC", &q3) || exchange(&s, q3, 2, "srv3", "cli3"))
		return 1;
	printf("server: C held 600 ms without a duplicate, then accepted\n");
	/* D: stop listening; the client's next connect must time out */
	if ((rc = xroce_unlisten(s.dev, lport)) || xroce_unlisten(s.dev, lport) != -ENOENT)
		return fail("unlisten", rc ? rc : -EPROTO);
	t0 = now_ms();
	while (now_ms() - t0 < 1500) {
		if (xroce_get_conn_req(s.dev, &rd) != -EAGAIN)
			return fail("a request after unlisten", -EPROTO);
		nap();
	}
	/* bad arguments */
	memset(&rd, 0, sizeof(rd));
	rd.id = 12345;
	if (xroce_listen(NULL, NULL, 0) != -EINVAL ||
	    xroce_listen(s.dev, "not-an-address", 0) != -EINVAL ||
	    xroce_get_conn_req(s.dev, NULL) != -EINVAL ||
	    xroce_reject_conn_req(s.dev, &rd, "x", 1) != -ENOENT ||
	    xroce_reject_conn_req(s.dev, &rd, "x", XROCE_PRIVATE_DATA_MAX + 1) != -EINVAL ||
	    xroce_accept_conn_req(q1, &rd) != -EISCONN)
		return fail("bad arguments accepted", -EPROTO);
	printf("server: all phases passed\n");
	return xroce_close_device(s.dev) ? 1 : 0;
}

/* ---- client ------------------------------------------------------------ */
static int wait_connect(struct xroce_qp *qp, int want)
{
	uint64_t t0 = now_ms();
	int rc;

	while ((rc = xroce_connect_poll(qp)) == -EINPROGRESS && now_ms() - t0 < WAIT_MS)
		nap();
	if (rc != want) {
		fprintf(stderr, "itest_cm: connect_poll gave %d (%s), expected %d\n",
			rc, strerror(-rc), want);
		return 1;
	}
	return 0;
}

static int start(struct side *s, struct xroce_qp **qp, const char *host,
		 uint16_t port, const char *priv, int timeout_ms)
{
	int rc;

	if (new_qp(s, qp))
		return 1;
	xroce_set_private_data(*qp, priv, strlen(priv));
	rc = xroce_connect_start(*qp, host, port, timeout_ms);
	return rc ? fail("connect_start", rc) : 0;
}

static int client(const char *ifname, const char *host, uint16_t lport)
{
	struct xroce_qp *qa, *q1, *q2, *q3, *qd;
	struct side s = { 0 };
	uint64_t t0;

	if (open_side(&s, ifname, 0, 0))
		return 1;
	/* A */
	if (start(&s, &qa, host, lport, "A", WAIT_MS) ||
	    wait_connect(qa, -ECONNREFUSED) || check_priv(qa, "no"))
		return 1;
	if (xroce_qp_state(qa) != XROCE_QPS_ERR || xroce_destroy_qp(qa))
		return fail("rejected QP", -EPROTO);
	printf("client: A refused with the server's private data\n");
	/* B */
	if (start(&s, &q1, host, lport, "B1", WAIT_MS) ||
	    start(&s, &q2, host, lport, "B2", WAIT_MS) ||
	    wait_connect(q2, 0) || wait_connect(q1, 0) ||
	    check_priv(q1, "ok1") || check_priv(q2, "ok2"))
		return 1;
	if (xroce_connect_start(q1, host, lport, 100) != -EISCONN)
		return fail("connect_start on a connected QP", -EPROTO);
	if (exchange(&s, q1, 0, "cli1", "srv1") || exchange(&s, q2, 1, "cli2", "srv2"))
		return 1;
	printf("client: B two connects at once, data checked\n");
	/* C */
	if (start(&s, &q3, host, lport, "C", WAIT_MS) || wait_connect(q3, 0) ||
	    check_priv(q3, "okC") || exchange(&s, q3, 2, "cli3", "srv3"))
		return 1;
	printf("client: C connected after the server held it\n");
	/* D: the server stops listening after C; a connect now times out */
	sleep(1);
	t0 = now_ms();
	if (start(&s, &qd, host, lport, "D", 400) || wait_connect(qd, -ETIMEDOUT))
		return 1;
	if (now_ms() - t0 > 2000)
		return fail("the timed-out connect took over 2 s", -ETIMEDOUT);
	if (xroce_connect_poll(q1) != 0 || xroce_connect_start(qd, "1.2.3.4", 1, 10) != -EISCONN)
		return fail("poll after the end", -EPROTO);
	printf("client: D timed out after %llu ms\n", (unsigned long long)(now_ms() - t0));
	printf("client: all phases passed\n");
	return xroce_close_device(s.dev) ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "server"))
		return server(argv[2], (uint16_t)atoi(argv[3]), (uint16_t)atoi(argv[4]));
	if (argc == 5 && !strcmp(argv[1], "client"))
		return client(argv[2], argv[3], (uint16_t)atoi(argv[4]));
	fprintf(stderr, "usage: itest_cm server IF CTRLPORT LISTENPORT | "
		"client IF HOST LISTENPORT\n");
	return 2;
}
