// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * itest_wr: exactly one completion per work request, on both sides.
 *
 *   itest_wr server IF          accept one connection on control port 4795
 *   itest_wr client IF HOST     connect, post N WRITE_WITH_IMMs of mixed
 *                               sizes (0 B .. 20 KB) into distinct ranges
 *                               of the server's buffer (each consumes one
 *                               of the server's posted receives)
 *
 * The client expects N send completions, successful, in posting order,
 * each wr_id once, and no stray ones.  The server expects N receive
 * completions in order with imm_data = index and byte_len = size, then
 * checks every byte of its buffer (written ranges hold the pattern,
 * the gaps between them are untouched).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xroce/xroce.h"

#define PORT 4795
#define N 400
#define BUF (4u << 20)
#define RQ 128 /* receives posted ahead */

static const uint32_t sizes[] = { 0, 1, 100, 4096, 20000, 1408, 1409 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

struct info {
	uint64_t addr;
	uint32_t rkey;
};

static uint8_t pat(uint32_t i, uint32_t j)
{
	return (uint8_t)(i * 131 + j * 7 + 1);
}

/* Offset of message i in the buffer: sizes plus a 64-byte gap each. */
static uint64_t offset_of(uint32_t i)
{
	uint64_t off = 0;
	uint32_t k;

	for (k = 0; k < i; k++)
		off += sizes[k % NSIZES] + 64;
	return off;
}

static int fail(const char *what, int rc)
{
	fprintf(stderr, "itest_wr: %s: %s\n", what, strerror(rc < 0 ? -rc : rc));
	return 1;
}

struct env {
	struct xroce_device *dev;
	struct xroce_pd *pd;
	struct xroce_cq *scq, *rcq;
	struct xroce_qp *qp;
	struct xroce_mr *mr;
	uint8_t *buf;
};

static int setup(struct env *e, const char *ifname, uint16_t port)
{
	struct xroce_device_attr da = { .nplanes = 1, .mem_size = BUF + (1u << 20),
					.ctrl_port = port };
	struct xroce_qp_init_attr qa = { 0 };
	int rc;

	da.ifnames[0] = ifname;
	if ((rc = xroce_open_device(&da, &e->dev)))
		return fail("open", rc);
	if ((rc = xroce_alloc_pd(e->dev, &e->pd)) ||
	    (rc = xroce_create_cq(e->dev, 2 * N, &e->scq)) ||
	    (rc = xroce_create_cq(e->dev, 2 * N, &e->rcq)))
		return fail("setup", rc);
	e->buf = xroce_mem_alloc(e->dev, BUF, 4096);
	if (!e->buf)
		return fail("alloc", -ENOMEM);
	if ((rc = xroce_reg_mr(e->pd, e->buf, BUF, XROCE_ACCESS_LOCAL_WRITE |
			       XROCE_ACCESS_REMOTE_WRITE, &e->mr)))
		return fail("reg_mr", rc);
	qa.send_cq = e->scq;
	qa.recv_cq = e->rcq;
	qa.max_send_wr = N;
	if ((rc = xroce_create_qp(e->pd, &qa, &e->qp)))
		return fail("create_qp", rc);
	return 0;
}

/* WRITE_WITH_IMM consumes a posted receive (as in ibverbs). */
static int post_recvs(struct env *e, uint32_t first, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		struct xroce_recv_wr r = { .wr_id = 5000 + first + i }, *bad;
		int rc = xroce_post_recv(e->qp, &r, &bad);

		if (rc)
			return fail("post_recv", rc);
	}
	return 0;
}

static void teardown(struct env *e)
{
	if (e->dev)
		xroce_close_device(e->dev);
}

static int server(const char *ifname)
{
	struct env e = { 0 };
	struct info in;
	uint32_t i, got = 0;
	uint64_t off;
	int rc = 1;

	if (setup(&e, ifname, PORT))
		goto out;
	memset(e.buf, 0xee, BUF);
	if (post_recvs(&e, 0, RQ))
		goto out;
	in.addr = (uint64_t)(uintptr_t)e.buf;
	in.rkey = e.mr->rkey;
	xroce_set_private_data(e.qp, &in, sizeof(in));
	if ((rc = xroce_accept(e.qp, 20000))) {
		rc = fail("accept", rc);
		goto out;
	}
	while (got < N) {
		struct xroce_wc wc;
		int n = xroce_wait_cq(e.rcq, 1, &wc, 10000);

		if (n <= 0) {
			fprintf(stderr, "itest_wr: server got %u of %d completions\n", got, N);
			goto out;
		}
		if (wc.status != XROCE_WC_SUCCESS ||
		    wc.opcode != XROCE_WC_RECV_RDMA_WITH_IMM ||
		    !(wc.wc_flags & XROCE_WC_WITH_IMM) || wc.imm_data != got ||
		    wc.byte_len != sizes[got % NSIZES] || wc.wr_id != 5000 + got) {
			fprintf(stderr, "itest_wr: completion %u: status %d opcode %d "
				"imm %u len %u\n", got, wc.status, wc.opcode,
				wc.imm_data, wc.byte_len);
			goto out;
		}
		got++;
		/* Keep RQ receives posted ahead of what is expected. */
		if (got + RQ <= N && post_recvs(&e, got + RQ - 1, 1))
			goto out;
	}
	/* No stray completion afterwards. */
	{
		struct xroce_wc wc;

		if (xroce_wait_cq(e.rcq, 1, &wc, 200) != 0) {
			fprintf(stderr, "itest_wr: an extra receive completion\n");
			goto out;
		}
	}
	for (i = 0, off = 0; i < N; i++) {
		uint32_t j, s = sizes[i % NSIZES];

		for (j = 0; j < s; j++)
			if (e.buf[off + j] != pat(i, j)) {
				fprintf(stderr, "itest_wr: message %u byte %u wrong\n", i, j);
				goto out;
			}
		for (j = 0; j < 64; j++)
			if (e.buf[off + s + j] != 0xee) {
				fprintf(stderr, "itest_wr: gap after message %u written\n", i);
				goto out;
			}
		off += s + 64;
	}
	printf("server: %u receive completions in order, every byte checked\n", got);
	/* Let the client close first. */
	for (i = 0; i < 300 && xroce_qp_state(e.qp) == XROCE_QPS_RTS; i++) {
		struct xroce_wc wc;

		xroce_wait_cq(e.rcq, 1, &wc, 10);
	}
	rc = 0;
out:
	teardown(&e);
	return rc;
}

static int client(const char *ifname, const char *host)
{
	struct env e = { 0 };
	struct info in;
	uint32_t i, done = 0;
	uint8_t *src;
	int rc = 1;

	if (setup(&e, ifname, 0))
		goto out;
	if ((rc = xroce_connect(e.qp, host, PORT, 10000))) {
		rc = fail("connect", rc);
		goto out;
	}
	rc = 1;
	if (xroce_get_private_data(e.qp, &in, sizeof(in)) != sizeof(in)) {
		fprintf(stderr, "itest_wr: no private data\n");
		goto out;
	}
	src = e.buf;
	for (i = 0; i < N; i++) {
		uint32_t s = sizes[i % NSIZES], j;
		uint64_t off = offset_of(i);
		struct xroce_sge sge = { (uint64_t)(uintptr_t)(src + off), s, e.mr->lkey };
		struct xroce_send_wr wr = { 0 }, *bad;

		for (j = 0; j < s; j++)
			src[off + j] = pat(i, j);
		wr.wr_id = 1000 + i;
		wr.sg_list = s ? &sge : NULL;
		wr.num_sge = s ? 1 : 0;
		wr.opcode = XROCE_WR_RDMA_WRITE_WITH_IMM;
		wr.send_flags = XROCE_SEND_SIGNALED;
		wr.imm_data = i;
		wr.rdma.remote_addr = in.addr + off;
		wr.rdma.rkey = in.rkey;
		rc = xroce_post_send(e.qp, &wr, &bad);
		if (rc) {
			rc = fail("post_send", rc);
			goto out;
		}
		rc = 1;
	}
	while (done < N) {
		struct xroce_wc wc[32];
		int n = xroce_wait_cq(e.scq, 32, wc, 10000), k;

		if (n <= 0) {
			fprintf(stderr, "itest_wr: client got %u of %d completions\n", done, N);
			goto out;
		}
		for (k = 0; k < n; k++, done++)
			if (wc[k].status != XROCE_WC_SUCCESS || wc[k].wr_id != 1000 + done ||
			    wc[k].opcode != XROCE_WC_RDMA_WRITE ||
			    wc[k].byte_len != sizes[done % NSIZES]) {
				fprintf(stderr, "itest_wr: completion %u: wr_id %llu "
					"status %s\n", done,
					(unsigned long long)wc[k].wr_id,
					xroce_wc_status_str(wc[k].status));
				goto out;
			}
	}
	{
		struct xroce_wc wc;

		if (xroce_wait_cq(e.scq, 1, &wc, 200) != 0) {
			fprintf(stderr, "itest_wr: an extra send completion\n");
			goto out;
		}
	}
	{
		struct xroce_qp_stats st;

		xroce_qp_stats(e.qp, &st);
		printf("client: %u send completions in order (%llu packets, %llu "
		       "retransmitted)\n", done, (unsigned long long)st.tx_pkts,
		       (unsigned long long)st.retx_pkts);
	}
	rc = 0;
out:
	teardown(&e);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "server"))
		return server(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "client"))
		return client(argv[2], argv[3]);
	fprintf(stderr, "usage: itest_wr server IF | itest_wr client IF HOST\n");
	return 2;
}
