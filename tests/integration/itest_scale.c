// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * itest_scale: many connections in one context between two hosts, all
 * moving data at once.
 *
 *   itest_scale server IF N      accept N connections (control port 4799)
 *   itest_scale client IF HOST N open N connections, then on every one
 *                                WRITE_WITH_IMM 4 KiB into its own slot of
 *                                the server's buffer, all posted before
 *                                any is waited for
 *
 * The server expects exactly one receive completion per connection with
 * the right immediate value and checks every slot's bytes.  Both sides
 * print what a connection costs them: library memory (heap growth per
 * connection, from mallinfo2) and the XDP program's fixed per-connection
 * state (map value sizes), and how long set-up and the transfer took.
 * Library memory is what each QP reports holding (xroce_qp_stats
 * mem_bytes), since this binary runs under AddressSanitizer, whose
 * allocator hides heap statistics.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xroce/xroce.h"
#include "contract/abi.h"

#define PORT 4799
#define SLOT 4096
#define MAX_N 8000

struct info {
	uint64_t addr;
	uint32_t rkey;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static size_t qp_bytes(struct xroce_qp **qp, uint32_t n)
{
	struct xroce_qp_stats st;
	size_t sum = 0;
	uint32_t i;

	for (i = 0; i < n; i++)
		if (!xroce_qp_stats(qp[i], &st))
			sum += st.mem_bytes;
	return sum;
}

static uint8_t pat(uint32_t conn, uint32_t j)
{
	return (uint8_t)(conn * 7 + j * 13 + 5);
}

struct env {
	struct xroce_device *dev;
	struct xroce_pd *pd;
	struct xroce_cq *cq;
	struct xroce_mr *mr;
	uint8_t *buf;
	struct xroce_qp **qp;
	uint32_t n;
};

static int setup(struct env *e, const char *ifname, uint16_t port, uint32_t n)
{
	struct xroce_device_attr da = { .nplanes = 1, .ctrl_port = port };
	int rc;

	da.ifnames[0] = ifname;
	da.mem_size = (size_t)n * SLOT + (8u << 20);
	e->n = n;
	e->qp = calloc(n, sizeof(struct xroce_qp *));
	if (!e->qp)
		return -ENOMEM;
	if ((rc = xroce_open_device(&da, &e->dev)) ||
	    (rc = xroce_alloc_pd(e->dev, &e->pd)) ||
	    (rc = xroce_create_cq(e->dev, (int)(2 * n + 16), &e->cq)))
		return rc;
	e->buf = xroce_mem_alloc(e->dev, (size_t)n * SLOT, 4096);
	if (!e->buf)
		return -ENOMEM;
	return xroce_reg_mr(e->pd, e->buf, (size_t)n * SLOT,
			    XROCE_ACCESS_LOCAL_WRITE | XROCE_ACCESS_REMOTE_WRITE, &e->mr);
}

static int make_qp(struct env *e, uint32_t i)
{
	struct xroce_qp_init_attr qa = { 0 };

	qa.send_cq = e->cq;
	qa.recv_cq = e->cq;
	qa.max_send_wr = 4;
	qa.npaths = 2;          /* the state that grows with connections */
	qa.timeout_ms = 20000;
	return xroce_create_qp(e->pd, &qa, &e->qp[i]);
}

static void report(const char *role, uint32_t n, size_t qpmem,
		   double t_setup, double t_data)
{
	size_t xdp = sizeof(struct xr_conn) + 2 * sizeof(uint32_t) +
		     sizeof(struct xr_rx_state) + XR_MSG_SLOTS * sizeof(uint64_t);

	printf("%s: %u connections, set-up %.2f s (%.0f us each), data %.3f s; "
	       "library %zu bytes per connection (2 paths), XDP %zu bytes per "
	       "connection\n", role, n, t_setup, t_setup / n * 1e6, t_data,
	       qpmem / n, xdp);
}

static int server(const char *ifname, uint32_t n)
{
	struct env e = { 0 };
	struct info in;
	uint32_t i, got = 0, *seen = NULL;
	double t0, t1, t2;
	int rc = 1;

	if (setup(&e, ifname, PORT, n)) {
		fprintf(stderr, "itest_scale: server set-up failed\n");
		goto out;
	}
	memset(e.buf, 0xee, (size_t)n * SLOT);
	in.addr = (uint64_t)(uintptr_t)e.buf;
	in.rkey = e.mr->rkey;
	seen = calloc(n, sizeof(*seen));
	t0 = now_s();
	for (i = 0; i < n; i++) {
		struct xroce_recv_wr r = { .wr_id = i }, *bad;

		if (make_qp(&e, i) || xroce_post_recv(e.qp[i], &r, &bad))
			goto out;
		xroce_set_private_data(e.qp[i], &in, sizeof(in));
		if (xroce_accept(e.qp[i], 30000)) {
			fprintf(stderr, "itest_scale: accept %u failed\n", i);
			goto out;
		}
	}
	t1 = now_s();
	while (got < n) {
		struct xroce_wc wc[64];
		int k, m = xroce_wait_cq(e.cq, 64, wc, 20000);

		if (m <= 0) {
			fprintf(stderr, "itest_scale: server got %u of %u completions\n",
				got, n);
			goto out;
		}
		for (k = 0; k < m; k++) {
			uint32_t c = wc[k].imm_data;

			if (wc[k].status != XROCE_WC_SUCCESS ||
			    wc[k].opcode != XROCE_WC_RECV_RDMA_WITH_IMM || c >= n ||
			    seen[c] || wc[k].byte_len != SLOT || wc[k].wr_id != c) {
				fprintf(stderr, "itest_scale: bad completion (status %s, "
					"imm %u, wr_id %llu)\n",
					xroce_wc_status_str(wc[k].status), c,
					(unsigned long long)wc[k].wr_id);
				goto out;
			}
			seen[c] = 1;
			got++;
		}
	}
	t2 = now_s();
	for (i = 0; i < n; i++) {
		uint32_t j;

		for (j = 0; j < SLOT; j++)
			if (e.buf[(size_t)i * SLOT + j] != pat(i, j)) {
				fprintf(stderr, "itest_scale: connection %u byte %u wrong\n",
					i, j);
				goto out;
			}
	}
	report("server", n, qp_bytes(e.qp, n), t1 - t0, t2 - t1);
	/* Let the client close first. */
	{
		struct xroce_wc wc;
		int k;

		for (k = 0; k < 200 && xroce_qp_state(e.qp[0]) == XROCE_QPS_RTS; k++)
			xroce_wait_cq(e.cq, 1, &wc, 10);
	}
	rc = 0;
out:
	free(seen);
	if (e.dev)
		xroce_close_device(e.dev);
	free(e.qp);
	return rc;
}

static int client(const char *ifname, const char *host, uint32_t n)
{
	struct env e = { 0 };
	uint32_t i, done = 0;
	double t0, t1, t2;
	int rc = 1;

	if (setup(&e, ifname, 0, n)) {
		fprintf(stderr, "itest_scale: client set-up failed\n");
		goto out;
	}
	t0 = now_s();
	for (i = 0; i < n; i++) {
		if (make_qp(&e, i) || xroce_connect(e.qp[i], host, PORT, 30000)) {
			fprintf(stderr, "itest_scale: connection %u failed\n", i);
			goto out;
		}
	}
	t1 = now_s();
	for (i = 0; i < n; i++) {
		struct info in;
		uint8_t *src = e.buf + (size_t)i * SLOT;
		struct xroce_sge g = { (uintptr_t)src, SLOT, e.mr->lkey };
		struct xroce_send_wr wr = { 0 }, *bad;
		uint32_t j;

		if (xroce_get_private_data(e.qp[i], &in, sizeof(in)) != sizeof(in))
			goto out;
		for (j = 0; j < SLOT; j++)
			src[j] = pat(i, j);
		wr.wr_id = i;
		wr.sg_list = &g;
		wr.num_sge = 1;
		wr.opcode = XROCE_WR_RDMA_WRITE_WITH_IMM;
		wr.send_flags = XROCE_SEND_SIGNALED;
		wr.imm_data = i;
		wr.rdma.remote_addr = in.addr + (uint64_t)i * SLOT;
		wr.rdma.rkey = in.rkey;
		if (xroce_post_send(e.qp[i], &wr, &bad)) {
			fprintf(stderr, "itest_scale: post on connection %u failed\n", i);
			goto out;
		}
	}
	while (done < n) {
		struct xroce_wc wc[64];
		int k, m = xroce_wait_cq(e.cq, 64, wc, 20000);

		if (m <= 0) {
			fprintf(stderr, "itest_scale: client got %u of %u completions\n",
				done, n);
			goto out;
		}
		for (k = 0; k < m; k++, done++)
			if (wc[k].status != XROCE_WC_SUCCESS) {
				fprintf(stderr, "itest_scale: a WRITE failed: %s\n",
					xroce_wc_status_str(wc[k].status));
				goto out;
			}
	}
	t2 = now_s();
	report("client", n, qp_bytes(e.qp, n), t1 - t0, t2 - t1);
	rc = 0;
out:
	if (e.dev)
		xroce_close_device(e.dev);
	free(e.qp);
	return rc;
}

int main(int argc, char **argv)
{
	uint32_t n;

	if (argc >= 4 && !strcmp(argv[1], "server")) {
		n = (uint32_t)strtoul(argv[3], NULL, 10);
		if (n && n <= MAX_N)
			return server(argv[2], n);
	}
	if (argc >= 5 && !strcmp(argv[1], "client")) {
		n = (uint32_t)strtoul(argv[4], NULL, 10);
		if (n && n <= MAX_N)
			return client(argv[2], argv[3], n);
	}
	fprintf(stderr, "usage: itest_scale server IF N | itest_scale client IF HOST N "
		"(N <= %d)\n", MAX_N);
	return 2;
}
