// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * allreduce: a ring all-reduce (sum of float32 vectors) over N ranks, on
 * xroce or, for comparison, on TCP sockets.  An example of the public API
 * and a benchmark: prints bus bandwidth per buffer size.
 *
 *   xroce-allreduce --rank R --peers IP0,IP1,...,IPn-1 --iface IF
 *                   [--transport xroce|tcp] [--sizes 1M,16M] [--iters N]
 *
 * Every rank runs one process; rank r sends to rank r+1 and receives from
 * rank r-1.  The classic bandwidth-optimal ring: the vector is cut into N
 * chunks; N-1 reduce-scatter steps (send a chunk, add the chunk received
 * into your own), then N-1 all-gather steps (pass the reduced chunks on).
 * Bus bandwidth = size * 2 (N-1) / N / time, as NCCL reports it.
 *
 * On xroce each step is one SEND into a receive the next rank posted for
 * that step: the data lands in place as its packets arrive, in any order,
 * over all paths; if the next rank has not posted yet, the SEND is refused
 * ("receiver not ready") and retried, which is all the flow control the
 * ring needs.  The result is checked against the expected sums.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "xroce/xroce.h"

#define MAX_RANKS 16
#define MAX_SIZES 8
#define PORT 4798            /* xroce control port / TCP port */

struct opts {
	int rank, nranks;
	char peers[MAX_RANKS][64];
	const char *iface;
	int tcp;
	size_t sizes[MAX_SIZES];
	int nsizes;
	int iters;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Rank r's contribution: element i is r + i % 7, so the sum is known. */
static void fill(float *v, size_t n, int rank)
{
	size_t i;

	for (i = 0; i < n; i++)
		v[i] = (float)(rank + (int)(i % 7));
}

static int check(const float *v, size_t n, int nranks)
{
	size_t i;

	for (i = 0; i < n; i++) {
		float want = (float)(nranks * (nranks - 1) / 2 + nranks * (int)(i % 7));

		if (fabsf(v[i] - want) > 1e-3f) {
			fprintf(stderr, "allreduce: element %zu is %g, expected %g\n",
				i, v[i], want);
			return -1;
		}
	}
	return 0;
}

/* Chunk c of an n-element vector cut into N nearly equal chunks. */
static void chunk(size_t n, int nranks, int c, size_t *off, size_t *len)
{
	size_t base = n / (size_t)nranks, rem = n % (size_t)nranks;

	*off = (size_t)c * base + ((size_t)c < rem ? (size_t)c : rem);
	*len = base + ((size_t)c < rem ? 1 : 0);
}

/* ---- transport: xroce ------------------------------------------------- */
struct xr {
	struct xroce_device *dev;
	struct xroce_pd *pd;
	struct xroce_cq *cq;
	struct xroce_qp *right, *left;
	struct xroce_mr *mr;
	uint8_t *mem;           /* vector | staging for received chunks */
	size_t max_bytes;
};

static int xr_open(struct xr *x, const struct opts *o, size_t max_bytes)
{
	struct xroce_device_attr da = { .nplanes = 1, .ctrl_port = PORT };
	struct xroce_qp_init_attr qa = { 0 };
	int rc;

	da.ifnames[0] = o->iface;
	if (getenv("XROCE_DEBUG"))
		da.log_level = XROCE_LOG_DEBUG;
	/* vector + a staging chunk per step (2 (N-1)) + slack */
	da.mem_size = max_bytes * 4 + (8u << 20);
	x->max_bytes = max_bytes;
	if ((rc = xroce_open_device(&da, &x->dev)) ||
	    (rc = xroce_alloc_pd(x->dev, &x->pd)) ||
	    (rc = xroce_create_cq(x->dev, 4096, &x->cq)))
		return rc;
	x->mem = xroce_mem_alloc(x->dev, max_bytes * 3, 4096);
	if (!x->mem)
		return -ENOMEM;
	rc = xroce_reg_mr(x->pd, x->mem, max_bytes * 3, XROCE_ACCESS_LOCAL_WRITE, &x->mr);
	if (rc)
		return rc;
	qa.send_cq = x->cq;
	qa.recv_cq = x->cq;
	qa.max_send_wr = 64;
	qa.rnr_retry = 30;          /* a slow neighbour is not an error */
	qa.rnr_timer_us = 50;
	qa.timeout_ms = 10000;
	if ((rc = xroce_create_qp(x->pd, &qa, &x->right)) ||
	    (rc = xroce_create_qp(x->pd, &qa, &x->left)))
		return rc;
	/* Rank 0 connects first, the others accept first: no deadlock in
	 * the ring whatever its size. */
	if (o->rank == 0) {
		rc = xroce_connect(x->right, o->peers[(o->rank + 1) % o->nranks], PORT, 30000);
		if (!rc)
			rc = xroce_accept(x->left, 30000);
	} else {
		rc = xroce_accept(x->left, 30000);
		if (!rc)
			rc = xroce_connect(x->right, o->peers[(o->rank + 1) % o->nranks],
					   PORT, 30000);
	}
	return rc;
}

/* One all-reduce of n floats in place at x->mem. */
static int xr_allreduce(struct xr *x, const struct opts *o, size_t n)
{
	int N = o->nranks, r = o->rank, steps = 2 * (N - 1), s, rc;
	float *v = (float *)x->mem;
	uint8_t *stage = x->mem + x->max_bytes;
	size_t cmax = (n + (size_t)N - 1) / (size_t)N * sizeof(float);

	bool sent[2 * MAX_RANKS] = { false }, got[2 * MAX_RANKS] = { false };

	/* All receives of this round first: step s lands at stage + s * cmax. */
	for (s = 0; s < steps; s++) {
		struct xroce_sge g = { (uintptr_t)(stage + (size_t)s * cmax),
				       (uint32_t)cmax, x->mr->lkey };
		struct xroce_recv_wr wr = { .wr_id = (uint64_t)s, .sg_list = &g,
					    .num_sge = 1 }, *bad;

		rc = xroce_post_recv(x->left, &wr, &bad);
		if (rc)
			return rc;
	}
	for (s = 0; s < steps; s++) {
		/* Reduce-scatter sends chunk r - s; all-gather sends the chunk
		 * just completed, r + 1 - (s - (N - 1)). */
		int send_c = s < N - 1 ? ((r - s) % N + N) % N :
					 ((r + 1 - (s - (N - 1))) % N + N) % N;
		int recv_c = ((send_c - 1) % N + N) % N;
		size_t off, len;
		struct xroce_sge g;
		struct xroce_send_wr wr = { 0 }, *bad;

		chunk(n, N, send_c, &off, &len);
		g.addr = (uintptr_t)(v + off);
		g.length = (uint32_t)(len * sizeof(float));
		g.lkey = x->mr->lkey;
		wr.wr_id = (uint64_t)s;
		wr.sg_list = &g;
		wr.num_sge = 1;
		wr.opcode = XROCE_WR_SEND;
		wr.send_flags = XROCE_SEND_SIGNALED;
		rc = xroce_post_send(x->right, &wr, &bad);
		if (rc)
			return rc;
		while (!sent[s] || !got[s]) {
			struct xroce_wc wc[4];
			int k, m = xroce_wait_cq(x->cq, 4, wc, 10000);

			if (m <= 0)
				return m ? m : -ETIMEDOUT;
			for (k = 0; k < m; k++) {
				if (wc[k].status != XROCE_WC_SUCCESS) {
					fprintf(stderr, "allreduce: step %d: %s\n", s,
						xroce_wc_status_str(wc[k].status));
					return -EIO;
				}
				/* wr_id is the step, for sends and receives */
				if (wc[k].wr_id >= (uint64_t)steps)
					continue;
				if (wc[k].opcode == XROCE_WC_SEND)
					sent[wc[k].wr_id] = true;
				else if (wc[k].opcode == XROCE_WC_RECV)
					got[wc[k].wr_id] = true;
			}
		}
		chunk(n, N, recv_c, &off, &len);
		if (s < N - 1) {
			const float *in = (const float *)(stage + (size_t)s * cmax);
			size_t i;

			for (i = 0; i < len; i++)
				v[off + i] += in[i];
		} else {
			memcpy(v + off, stage + (size_t)s * cmax, len * sizeof(float));
		}
	}
	return 0;
}

static void xr_close(struct xr *x)
{
	if (x->dev)
		xroce_close_device(x->dev);
}

/* ---- transport: TCP ---------------------------------------------------- */
struct tcp {
	int right, left;
	float *v, *stage;
};

static int tcp_open(struct tcp *t, const struct opts *o, size_t max_bytes)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(PORT) };
	int lfd, one = 1, i;

	t->v = malloc(max_bytes);
	t->stage = malloc(max_bytes);
	if (!t->v || !t->stage)
		return -ENOMEM;
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, 4))
		return -errno;
	inet_pton(AF_INET, o->peers[(o->rank + 1) % o->nranks], &a.sin_addr);
	t->right = socket(AF_INET, SOCK_STREAM, 0);
	for (i = 0; i < 300; i++) {
		if (!connect(t->right, (struct sockaddr *)&a, sizeof(a)))
			break;
		close(t->right);
		t->right = socket(AF_INET, SOCK_STREAM, 0);
		usleep(100000);
	}
	if (i == 300)
		return -ECONNREFUSED;
	t->left = accept(lfd, NULL, NULL);
	close(lfd);
	if (t->left < 0)
		return -errno;
	setsockopt(t->right, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(t->left, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return 0;
}

static int io_all(int fd, void *buf, size_t len, bool wr)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t k = wr ? send(fd, p, len, 0) : recv(fd, p, len, 0);

		if (k <= 0)
			return k ? -errno : -ECONNRESET;
		p += k;
		len -= (size_t)k;
	}
	return 0;
}

static int tcp_allreduce(struct tcp *t, const struct opts *o, size_t n)
{
	int N = o->nranks, r = o->rank, s;

	for (s = 0; s < 2 * (N - 1); s++) {
		int send_c = s < N - 1 ? ((r - s) % N + N) % N :
					 ((r + 1 - (s - (N - 1))) % N + N) % N;
		int recv_c = ((send_c - 1) % N + N) % N;
		size_t soff, slen, roff, rlen, i;

		chunk(n, N, send_c, &soff, &slen);
		chunk(n, N, recv_c, &roff, &rlen);
		/* Send and receive together: a chunk may not fit in the socket
		 * buffers, so interleave in pieces to avoid a ring deadlock. */
		{
			uint8_t *sp = (uint8_t *)(t->v + soff), *rp = (uint8_t *)t->stage;
			size_t sl = slen * sizeof(float), rl = rlen * sizeof(float);

			while (sl || rl) {
				size_t piece = 256 << 10;

				if (sl) {
					size_t k = sl < piece ? sl : piece;

					if (io_all(t->right, sp, k, true))
						return -EIO;
					sp += k;
					sl -= k;
				}
				if (rl) {
					size_t k = rl < piece ? rl : piece;

					if (io_all(t->left, rp, k, false))
						return -EIO;
					rp += k;
					rl -= k;
				}
			}
		}
		if (s < N - 1)
			for (i = 0; i < rlen; i++)
				t->v[roff + i] += t->stage[i];
		else
			memcpy(t->v + roff, t->stage, rlen * sizeof(float));
	}
	return 0;
}

/* ---- main ----------------------------------------------------------------- */
static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "rank", required_argument, NULL, 'r' },
		{ "peers", required_argument, NULL, 'p' },
		{ "iface", required_argument, NULL, 'i' },
		{ "transport", required_argument, NULL, 't' },
		{ "sizes", required_argument, NULL, 's' },
		{ "iters", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	char *tok, *save = NULL;
	int c;

	memset(o, 0, sizeof(*o));
	o->rank = -1;
	o->iters = 10;
	o->sizes[0] = 1u << 20;
	o->nsizes = 1;
	while ((c = getopt_long(argc, argv, "r:p:i:t:s:n:", lo, NULL)) != -1) {
		switch (c) {
		case 'r': o->rank = atoi(optarg); break;
		case 'p':
			for (tok = strtok_r(optarg, ",", &save); tok && o->nranks < MAX_RANKS;
			     tok = strtok_r(NULL, ",", &save))
				snprintf(o->peers[o->nranks++], sizeof(o->peers[0]), "%s", tok);
			break;
		case 'i': o->iface = optarg; break;
		case 't': o->tcp = !strcmp(optarg, "tcp"); break;
		case 's':
			o->nsizes = 0;
			for (tok = strtok_r(optarg, ",", &save); tok && o->nsizes < MAX_SIZES;
			     tok = strtok_r(NULL, ",", &save)) {
				char *end;
				double v = strtod(tok, &end);

				if (*end == 'k' || *end == 'K')
					v *= 1024;
				else if (*end == 'm' || *end == 'M')
					v *= 1024 * 1024;
				o->sizes[o->nsizes++] = (size_t)v & ~(size_t)3;
			}
			break;
		case 'n': o->iters = atoi(optarg); break;
		default: return -1;
		}
	}
	if (o->rank < 0 || o->rank >= o->nranks || o->nranks < 2 || !o->nsizes ||
	    o->iters < 1 || (!o->tcp && !o->iface))
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct xr x = { 0 };
	struct tcp t = { 0 };
	size_t max = 0;
	int k, it, rc;

	if (parse(argc, argv, &o)) {
		fprintf(stderr, "usage: xroce-allreduce --rank R --peers IP0,...,IPn-1 "
			"[--iface IF] [--transport xroce|tcp] [--sizes 1M,16M] "
			"[--iters N]\n");
		return 2;
	}
	for (k = 0; k < o.nsizes; k++)
		if (o.sizes[k] > max)
			max = o.sizes[k];
	rc = o.tcp ? tcp_open(&t, &o, max) : xr_open(&x, &o, max);
	if (rc) {
		fprintf(stderr, "allreduce: rank %d: set-up failed: %s\n", o.rank,
			strerror(-rc));
		xr_close(&x);
		return 1;
	}
	for (k = 0; k < o.nsizes; k++) {
		size_t n = o.sizes[k] / sizeof(float);
		float *v = o.tcp ? t.v : (float *)x.mem;
		double t0 = 0, best = 1e9;

		for (it = -1; it < o.iters; it++) { /* iteration -1 warms up */
			fill(v, n, o.rank);
			t0 = now_s();
			rc = o.tcp ? tcp_allreduce(&t, &o, n) : xr_allreduce(&x, &o, n);
			if (rc || check(v, n, o.nranks)) {
				fprintf(stderr, "allreduce: rank %d failed at %zu bytes "
					"(iteration %d): %s\n", o.rank, o.sizes[k], it,
					rc ? strerror(-rc) : "wrong sums");
				xr_close(&x);
				return 1;
			}
			/* Each rank's best of iters; rank 0 reports its own. */
			if (it >= 0 && now_s() - t0 < best)
				best = now_s() - t0;
		}
		if (o.rank == 0)
			printf("{\"transport\":\"%s\",\"ranks\":%d,\"bytes\":%zu,"
			       "\"time_us\":%.1f,\"algbw_gbps\":%.3f,\"busbw_gbps\":%.3f}\n",
			       o.tcp ? "tcp" : "xroce", o.nranks, o.sizes[k], best * 1e6,
			       o.sizes[k] * 8 / best / 1e9,
			       o.sizes[k] * 8 / best / 1e9 * 2 * (o.nranks - 1) / o.nranks);
		fflush(stdout);
	}
	if (o.tcp) {
		close(t.right);
		close(t.left);
		free(t.v);
		free(t.stage);
	} else {
		/* Let the neighbours finish before closing. */
		usleep(200000);
		xr_close(&x);
	}
	return 0;
}
