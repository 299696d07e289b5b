// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * xroce perf: bandwidth and latency of RDMA WRITEs, in the spirit of
 * perftest's ib_write_bw / ib_write_lat.
 *
 *   xroce perf server -i IF [--port P]
 *   xroce perf client -i IF HOST [--mode bw|lat] [-s SIZES] [-d SECS] ...
 *
 * bw   the client keeps --depth WRITEs of each size in flight for the
 *      duration on every connection; reported: goodput, packet rate,
 *      retransmissions, CPU seconds per GB (this process).
 * lat  ping-pong: the client writes SIZE bytes with WRITE_WITH_IMM, the
 *      server writes the same back on its completion; reported: round trip
 *      min / median / p99 / p99.9 (and one way = half).
 * The client tells the server what to do through the connection's private
 * data; the server serves any number of clients until killed (or --once).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cli.h"
#include "cmds.h"
#include "xroce/xroce.h"

#define PF_MAGIC 0x58525046u /* "XRPF" */
#define PF_BUF (64u << 20)
#define PF_MAX_CONNS 64
#define PF_MAX_SIZES 16
#define PF_IMM_DONE 0xffffffffu

enum { PF_BW = 1, PF_LAT = 2 };

struct pf_hello {
	uint32_t magic, mode;
	uint64_t addr;       /* client's buffer (lat: the server echoes here) */
	uint32_t rkey, flags; /* PF_HELLO_* */
};

/* lat: the client sleeps on its CQ between round trips (xroce_wait_cq), and
 * asks the server to do the same, instead of both ends busy-polling. */
#define PF_HELLO_WAIT 1u

struct pf_welcome {
	uint32_t magic, rsvd;
	uint64_t addr;
	uint32_t rkey, rsvd2;
	uint64_t len;
};

struct pf_opts {
	const char *ifnames[XROCE_MAX_PLANES];
	int nplanes;
	uint16_t port;
	uint32_t npaths, conns, depth, iters, mtu;
	uint64_t sizes[PF_MAX_SIZES];
	int nsizes;
	double secs;
	uint32_t interval_ms;  /* bw: goodput per interval, 0 = off */
	int mode, json, verbose, once, no_redundant, wait;
	enum xroce_tx_engine engine;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static int parse_sizes(const char *s, struct pf_opts *o)
{
	char *dup = strdup(s), *tok, *save = NULL;
	int rc = 0;

	if (!dup)
		return -ENOMEM;
	o->nsizes = 0;
	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		double v = strtod(tok, &end);

		if (end == tok || v < 0) {
			rc = -EINVAL;
			break;
		}
		if (*end == 'k' || *end == 'K')
			v *= 1024, end++;
		else if (*end == 'm' || *end == 'M')
			v *= 1024 * 1024, end++;
		if (*end || v > PF_BUF * 0.5 || o->nsizes == PF_MAX_SIZES) {
			rc = -EINVAL;
			break;
		}
		o->sizes[o->nsizes++] = (uint64_t)v;
	}
	free(dup);
	return o->nsizes ? rc : -EINVAL;
}

struct pf_env {
	struct xroce_device *dev;
	struct xroce_pd *pd;
	struct xroce_cq *cq;
	struct xroce_mr *mr;
	uint8_t *buf;
	struct xroce_qp *qp[PF_MAX_CONNS];
	uint32_t nqp;
};

static int pf_open(const struct pf_opts *o, uint16_t port, struct pf_env *e)
{
	struct xroce_device_attr da;
	int i, rc;

	memset(&da, 0, sizeof(da));
	for (i = 0; i < o->nplanes; i++)
		da.ifnames[i] = o->ifnames[i];
	da.nplanes = o->nplanes;
	da.mem_size = PF_BUF + (4u << 20);
	da.ctrl_port = port;
	da.log_level = o->verbose ? XROCE_LOG_DEBUG : XROCE_LOG_WARN;
	da.tx_engine = o->engine;
	if ((rc = xroce_open_device(&da, &e->dev)))
		return xr_err("perf", rc, "cannot open the device");
	if ((rc = xroce_alloc_pd(e->dev, &e->pd)) ||
	    (rc = xroce_create_cq(e->dev, 65536, &e->cq)))
		return xr_err("perf", rc, "set-up");
	e->buf = xroce_mem_alloc(e->dev, PF_BUF, 4096);
	if (!e->buf)
		return xr_err("perf", -ENOMEM, "buffer");
	rc = xroce_reg_mr(e->pd, e->buf, PF_BUF, XROCE_ACCESS_LOCAL_WRITE |
			  XROCE_ACCESS_REMOTE_WRITE, &e->mr);
	if (rc)
		return xr_err("perf", rc, "register");
	return 0;
}

/* WRITE_WITH_IMM (echo, done) consumes a posted receive: keep some. */
#define PF_RECVS 64

static int pf_post_recvs(struct xroce_qp *qp, int n)
{
	struct xroce_recv_wr r, *bad;
	int i;

	memset(&r, 0, sizeof(r));
	for (i = 0; i < n; i++)
		if (xroce_post_recv(qp, &r, &bad))
			return -1;
	return 0;
}

static int pf_qp(const struct pf_opts *o, struct pf_env *e, struct xroce_qp **qp)
{
	struct xroce_qp_init_attr qa;
	int rc;

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = e->cq;
	qa.recv_cq = e->cq;
	qa.max_send_wr = 4096;
	qa.npaths = o->npaths;
	qa.mtu = o->mtu;
	if (o->no_redundant)
		qa.flags |= XROCE_QP_NO_REDUNDANT;
	rc = xroce_create_qp(e->pd, &qa, qp);
	if (rc)
		return xr_err("perf", rc, "create_qp");
	return pf_post_recvs(*qp, PF_RECVS) ? xr_err("perf", -ENOMEM, "post_recv") : 0;
}

static int post(struct pf_env *e, struct xroce_qp *qp, uint64_t wr_id, void *l,
		uint32_t len, uint64_t raddr, uint32_t rkey, bool imm, uint32_t immv)
{
	struct xroce_sge sge = { (uint64_t)(uintptr_t)l, len, e->mr->lkey };
	struct xroce_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = len ? &sge : NULL;
	wr.num_sge = len ? 1 : 0;
	wr.opcode = imm ? XROCE_WR_RDMA_WRITE_WITH_IMM : XROCE_WR_RDMA_WRITE;
	wr.send_flags = XROCE_SEND_SIGNALED;
	wr.imm_data = immv;
	wr.rdma.remote_addr = raddr;
	wr.rdma.rkey = rkey;
	return xroce_post_send(qp, &wr, &bad);
}

/* ---- server ------------------------------------------------------------ */
struct pf_sconn {
	struct xroce_qp *qp;
	struct pf_hello hello;
	bool active;
};

static int server(const struct pf_opts *o)
{
	struct pf_sconn sc[PF_MAX_CONNS];
	struct xroce_qp *nq = NULL;
	struct pf_env e = { 0 };
	struct pf_welcome w = { PF_MAGIC, 0, 0, 0, 0, PF_BUF };
	int rc, i;

	memset(sc, 0, sizeof(sc));
	if (pf_open(o, o->port, &e))
		goto out;
	w.addr = (uint64_t)(uintptr_t)e.buf;
	w.rkey = e.mr->rkey;
	if (!o->json)
		printf("xroce perf server: listening on %s port %u\n", o->ifnames[0], o->port);
	fflush(stdout);
	for (;;) {
		struct xroce_wc wc[64];
		int n, k, slot = -1;

		/* A fresh QP always waits for the next client (kept across
		 * rounds until a request takes it). */
		for (i = 0; i < PF_MAX_CONNS; i++)
			if (!sc[i].qp) {
				slot = i;
				break;
			}
		if (slot >= 0) {
			if (!nq) {
				if (pf_qp(o, &e, &nq))
					goto out;
				xroce_set_private_data(nq, &w, sizeof(w));
			}
			rc = xroce_accept(nq, 0);
			if (!rc) {
				sc[slot].qp = nq;
				sc[slot].active = true;
				xroce_get_private_data(nq, &sc[slot].hello, sizeof(sc[slot].hello));
				nq = NULL;
				continue;
			}
		}
		/* Busy-poll while a latency client that busy-polls is
		 * connected (as perftest does: a wakeup per message would be
		 * measured too); otherwise sleep until completions, a
		 * connection request or 10 ms. */
		{
			bool spin = false;

			for (i = 0; i < PF_MAX_CONNS; i++)
				spin |= sc[i].qp && sc[i].hello.mode == PF_LAT &&
					!(sc[i].hello.flags & PF_HELLO_WAIT);
			n = spin ? xroce_poll_cq(e.cq, 64, wc) : xroce_wait_cq(e.cq, 64, wc, 10);
		}
		for (k = 0; k < n; k++) {
			struct pf_sconn *c = NULL;

			for (i = 0; i < PF_MAX_CONNS; i++)
				if (sc[i].qp && xroce_qp_num(sc[i].qp) == wc[k].qp_num)
					c = &sc[i];
			if (!c || wc[k].opcode != XROCE_WC_RECV_RDMA_WITH_IMM)
				continue;
			pf_post_recvs(c->qp, 1);
			if (wc[k].imm_data == PF_IMM_DONE) {
				/* The client is done: echo DONE, it closes. */
				post(&e, c->qp, 0, NULL, 0, c->hello.addr, c->hello.rkey,
				     true, PF_IMM_DONE);
				continue;
			}
			if (c->hello.mode == PF_LAT)
				post(&e, c->qp, 0, e.buf + PF_BUF / 2, wc[k].byte_len,
				     c->hello.addr, c->hello.rkey, true, wc[k].imm_data);
		}
		/* Reap connections the clients closed. */
		for (i = 0; i < PF_MAX_CONNS; i++) {
			if (sc[i].qp && xroce_qp_state(sc[i].qp) != XROCE_QPS_RTS) {
				xroce_destroy_qp(sc[i].qp);
				sc[i].qp = NULL;
				if (o->once) {
					bool any = false;
					int j;

					for (j = 0; j < PF_MAX_CONNS; j++)
						any |= sc[j].qp != NULL;
					if (!any)
						goto done;
				}
			}
		}
	}
done:
	xroce_close_device(e.dev);
	return XR_EXIT_OK;
out:
	if (e.dev)
		xroce_close_device(e.dev);
	return XR_EXIT_FAIL;
}

/* ---- client ------------------------------------------------------------ */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int run_bw(const struct pf_opts *o, struct pf_env *e,
		  const struct pf_welcome *w, uint64_t size, bool first)
{
	uint64_t done_bytes = 0, pkts0 = 0, retx0 = 0, pkts = 0, retx = 0;
	uint32_t outstanding[PF_MAX_CONNS] = { 0 }, i;
	double t0, t1, c0, c1, last_print, ivl_t;
	uint64_t ivl_acked;
	struct xroce_qp_stats st;
	uint64_t slot_bytes = (PF_BUF / 2) / o->depth & ~63ull;

	if (!slot_bytes || slot_bytes < size)
		slot_bytes = size;
	for (i = 0; i < e->nqp; i++) {
		xroce_qp_stats(e->qp[i], &st);
		pkts0 += st.tx_pkts;
		retx0 += st.retx_pkts;
	}
	t0 = now_s();
	c0 = cpu_s();
	last_print = t0;
	{
		uint64_t acked0 = 0;

		for (i = 0; i < e->nqp; i++) {
			xroce_qp_stats(e->qp[i], &st);
			acked0 += st.acked_bytes;
		}
		ivl_acked = acked0;
		ivl_t = t0;
	}
	for (;;) {
		struct xroce_wc wc[64];
		double t = now_s();
		int n, k;

		/* Goodput per interval from packet-level acknowledgements (finer
		 * than message completions): timelines of failover or incast. */
		if (o->interval_ms && (t - ivl_t) * 1000 >= o->interval_ms) {
			uint64_t acked = 0;

			for (i = 0; i < e->nqp; i++) {
				xroce_qp_stats(e->qp[i], &st);
				acked += st.acked_bytes;
			}
			struct timespec wall;

			clock_gettime(CLOCK_REALTIME, &wall);
			if (o->json)
				printf("{\"mode\":\"interval\",\"t_ms\":%.3f,\"wall_ns\":%lld,"
				       "\"bytes\":%" PRIu64 ",\"gbps\":%.4f}\n",
				       (t - t0) * 1000,
				       (long long)wall.tv_sec * 1000000000LL + wall.tv_nsec,
				       acked - ivl_acked,
				       (double)(acked - ivl_acked) * 8 / (t - ivl_t) / 1e9);
			else
				printf("  t %9.3f ms  %10" PRIu64 " B  %8.4f Gbit/s\n",
				       (t - t0) * 1000, acked - ivl_acked,
				       (double)(acked - ivl_acked) * 8 / (t - ivl_t) / 1e9);
			ivl_acked = acked;
			ivl_t = t;
		}

		if (t - t0 < o->secs) {
			for (i = 0; i < e->nqp; i++)
				while (outstanding[i] < o->depth) {
					uint32_t s = outstanding[i] % o->depth;
					uint64_t off = (s * slot_bytes) % (PF_BUF / 2 - size + 1);
					int rc = post(e, e->qp[i], i, e->buf + off, (uint32_t)size,
						      w[i].addr + off, w[i].rkey, false, 0);

					if (rc)
						return xr_err("perf", rc, "post");
					outstanding[i]++;
				}
		} else {
			bool any = false;

			for (i = 0; i < e->nqp; i++)
				any |= outstanding[i] != 0;
			if (!any)
				break;
		}
		/* Everything that can be is posted: wait for completions (the
		 * library sleeps while pacing or windows hold it, leaving the
		 * CPU to the network stack), at most 1 ms. */
		n = xroce_wait_cq(e->cq, 64, wc, 1);
		for (k = 0; k < n; k++) {
			if (wc[k].status != XROCE_WC_SUCCESS)
				return xr_err("perf", 0, "a WRITE failed: %s",
					      xroce_wc_status_str(wc[k].status));
			if (wc[k].opcode != XROCE_WC_RDMA_WRITE)
				continue;
			outstanding[wc[k].wr_id]--;
			done_bytes += wc[k].byte_len;
		}
		if (!o->json && isatty(2) && t - last_print > 1.0) {
			fprintf(stderr, "\r  %6.1f s  %8.3f Gbit/s", t - t0,
				(double)done_bytes * 8 / (t - t0) / 1e9);
			last_print = t;
		}
	}
	t1 = now_s();
	c1 = cpu_s();
	if (!o->json && isatty(2))
		fprintf(stderr, "\r%40s\r", "");
	for (i = 0; i < e->nqp; i++) {
		xroce_qp_stats(e->qp[i], &st);
		pkts += st.tx_pkts;
		retx += st.retx_pkts;
	}
	pkts -= pkts0;
	retx -= retx0;
	if (o->json) {
		printf("{\"mode\":\"bw\",\"size\":%" PRIu64 ",\"conns\":%u,\"paths\":%u,"
		       "\"depth\":%u,\"seconds\":%.3f,\"bytes\":%" PRIu64 ",\"gbps\":%.4f,"
		       "\"mpps\":%.4f,\"pkts\":%" PRIu64 ",\"retx_pkts\":%" PRIu64 ","
		       "\"cpu_s\":%.3f,\"cpu_s_per_gb\":%.3f,\"tx_engine\":\"%s\"}\n",
		       size, e->nqp,
		       o->npaths ? o->npaths : XROCE_DEFAULT_PATHS, o->depth, t1 - t0,
		       done_bytes, (double)done_bytes * 8 / (t1 - t0) / 1e9,
		       (double)pkts / (t1 - t0) / 1e6, pkts, retx, c1 - c0,
		       done_bytes ? (c1 - c0) / ((double)done_bytes / 1e9) : 0.0,
		       xr_engine_name(e->dev));
	} else {
		if (first)
			printf("%10s %6s %10s %10s %12s %10s %12s\n", "size", "conns",
			       "Gbit/s", "Mpps", "packets", "retx", "CPU s/GB");
		printf("%10" PRIu64 " %6u %10.3f %10.4f %12" PRIu64 " %10" PRIu64 " %12.3f\n",
		       size, e->nqp, (double)done_bytes * 8 / (t1 - t0) / 1e9,
		       (double)pkts / (t1 - t0) / 1e6, pkts, retx,
		       done_bytes ? (c1 - c0) / ((double)done_bytes / 1e9) : 0.0);
	}
	if (o->verbose) {
		struct xroce_path_stats ps[XROCE_MAX_PATHS];
		int np = xroce_path_stats(e->qp[0], ps, XROCE_MAX_PATHS), j;

		for (j = 0; j < np; j++)
			fprintf(stderr, "  path %d sport %u state %d tx %" PRIu64 " retx %"
				PRIu64 " lost %" PRIu64 " timeouts %" PRIu64 " rtt min/srtt/p99 "
				"%u/%u/%u us cwnd %u\n", j, ps[j].sport, ps[j].state,
				ps[j].tx_pkts, ps[j].retx_pkts, ps[j].lost_pkts,
				ps[j].timeouts, ps[j].rtt_min_ns / 1000,
				ps[j].rtt_srtt_ns / 1000, ps[j].rtt_p99_ns / 1000, ps[j].cwnd);
	}
	fflush(stdout);
	return 0;
}

static int run_lat(const struct pf_opts *o, struct pf_env *e,
		   const struct pf_welcome *w, uint64_t size, bool first)
{
	uint64_t *rtt = calloc(o->iters, sizeof(*rtt));
	uint32_t it;
	int rc = 0;

	if (!rtt)
		return xr_err("perf", -ENOMEM, "latency samples");
	for (it = 0; it < o->iters; it++) {
		double t0 = now_s();
		bool got = false;

		rc = post(e, e->qp[0], 1, e->buf, (uint32_t)size, w[0].addr, w[0].rkey,
			  true, it);
		if (rc) {
			rc = xr_err("perf", rc, "post");
			goto out;
		}
		while (!got) {
			struct xroce_wc wc[4];
			int n = o->wait ? xroce_wait_cq(e->cq, 4, wc, 100) :
					  xroce_poll_cq(e->cq, 4, wc), k;

			if (n < 0) {
				rc = xr_err("perf", n, "poll");
				goto out;
			}
			for (k = 0; k < n; k++) {
				if (wc[k].status != XROCE_WC_SUCCESS) {
					rc = xr_err("perf", 0, "failed: %s",
						    xroce_wc_status_str(wc[k].status));
					goto out;
				}
				if (wc[k].opcode == XROCE_WC_RECV_RDMA_WITH_IMM) {
					pf_post_recvs(e->qp[0], 1);
					if (wc[k].imm_data == it)
						got = true;
				}
			}
			if (now_s() - t0 > 5.0) {
				rc = xr_err("perf", -ETIMEDOUT, "no echo for iteration %u", it);
				goto out;
			}
		}
		rtt[it] = (uint64_t)((now_s() - t0) * 1e9);
	}
	qsort(rtt, o->iters, sizeof(*rtt), cmp_u64);
	{
		uint64_t p50 = rtt[o->iters / 2], p99 = rtt[(uint64_t)o->iters * 99 / 100],
			 p999 = rtt[(uint64_t)o->iters * 999 / 1000];

		if (o->json)
			printf("{\"mode\":\"lat\",\"size\":%" PRIu64 ",\"iters\":%u,"
			       "\"rtt_min_us\":%.2f,\"rtt_p50_us\":%.2f,\"rtt_p99_us\":%.2f,"
			       "\"rtt_p999_us\":%.2f,\"rtt_max_us\":%.2f,\"tx_engine\":\"%s\","
			       "\"completions\":\"%s\"}\n",
			       size, o->iters, rtt[0] / 1e3, p50 / 1e3, p99 / 1e3, p999 / 1e3,
			       rtt[o->iters - 1] / 1e3, xr_engine_name(e->dev),
			       o->wait ? "wait" : "busy-poll");
		else {
			if (first)
				printf("%10s %8s %12s %12s %12s %12s   (round trip, us)\n",
				       "size", "iters", "min", "median", "p99", "p99.9");
			printf("%10" PRIu64 " %8u %12.2f %12.2f %12.2f %12.2f\n", size,
			       o->iters, rtt[0] / 1e3, p50 / 1e3, p99 / 1e3, p999 / 1e3);
		}
	}
	fflush(stdout);
out:
	free(rtt);
	return rc;
}

static int client(const struct pf_opts *o, const char *host)
{
	struct pf_welcome w[PF_MAX_CONNS] = { 0 };
	struct pf_env e = { 0 };
	struct pf_hello h;
	uint32_t i;
	int rc = XR_EXIT_FAIL, k;

	if (pf_open(o, 0, &e))
		goto out;
	h.magic = PF_MAGIC;
	h.mode = (uint32_t)o->mode;
	h.addr = (uint64_t)(uintptr_t)(e.buf + PF_BUF / 2);
	h.rkey = e.mr->rkey;
	h.flags = o->wait ? PF_HELLO_WAIT : 0;
	for (i = 0; i < o->conns; i++) {
		if (pf_qp(o, &e, &e.qp[i]))
			goto out;
		e.nqp++;
		xroce_set_private_data(e.qp[i], &h, sizeof(h));
		rc = xroce_connect(e.qp[i], host, o->port, 5000);
		if (rc) {
			rc = xr_err("perf", rc, "connect to %s port %u", host, o->port);
			goto out;
		}
		if (xroce_get_private_data(e.qp[i], &w[i], sizeof(w[i])) != sizeof(w[i]) ||
		    w[i].magic != PF_MAGIC) {
			rc = xr_err("perf", -EPROTO, "the peer is not `xroce perf server`");
			goto out;
		}
	}
	for (k = 0; k < o->nsizes; k++) {
		rc = o->mode == PF_BW ? run_bw(o, &e, w, o->sizes[k], k == 0) :
					run_lat(o, &e, w, o->sizes[k], k == 0);
		if (rc) {
			rc = XR_EXIT_FAIL;
			goto out;
		}
	}
	/* Tell the servers we are done and wait for their echo, so closing
	 * never races their last acknowledgements. */
	for (i = 0; i < e.nqp; i++)
		post(&e, e.qp[i], 0, NULL, 0, w[i].addr, w[i].rkey, true, PF_IMM_DONE);
	{
		uint32_t echoes = 0;
		double t0 = now_s();

		while (echoes < e.nqp && now_s() - t0 < 2.0) {
			struct xroce_wc wc[16];
			int n = xroce_wait_cq(e.cq, 16, wc, 100), j;

			for (j = 0; j < n; j++)
				if (wc[j].opcode == XROCE_WC_RECV_RDMA_WITH_IMM &&
				    wc[j].imm_data == PF_IMM_DONE)
					echoes++;
		}
	}
	rc = XR_EXIT_OK;
out:
	if (e.dev)
		xroce_close_device(e.dev);
	return rc;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: xroce perf server -i IF [--port P] [--once]\n"
"       xroce perf client -i IF HOST [options]\n"
"\n"
"RDMA WRITE bandwidth (like ib_write_bw) and latency (like ib_write_lat).\n"
"\n"
"  -i, --iface IF      interface carrying xroce (repeat for planes)\n"
"  -p, --port N        server's control port (default 4796)\n"
"  -m, --mode bw|lat   bandwidth (default) or ping-pong latency\n"
"  -s, --size LIST     message sizes, comma separated, k/M suffixes\n"
"                      (default 65536 for bw, 8 for lat)\n"
"  -d, --duration S    seconds per size in bw mode (default 5)\n"
"  -q, --depth N       WRITEs in flight per connection in bw mode (default 32)\n"
"  -n, --iters N       round trips per size in lat mode (default 10000)\n"
"  -c, --conns N       connections (bw mode; default 1, max %d)\n"
"  -P, --paths N       paths per connection (default 8)\n"
"      --mtu N         IP MTU to use (default: the interface's)\n"
"      --once          server: exit after its clients are gone\n"
"      --interval-ms N bw: also print goodput every N ms (acknowledged bytes)\n"
"      --wait          lat: sleep on the CQ for each echo (both ends) instead\n"
"                      of busy-polling\n"
"      --no-redundant  no redundant copies of small messages (XROCE_QP_NO_REDUNDANT)\n"
"      --tx-engine E   af_xdp or test_run (frames built by XDP, sent from a\n"
"                      BPF test run; default: $XROCE_TX_ENGINE, else auto:\n"
"                      af_xdp in zero-copy mode, else test_run if possible)\n"
"  -j, --json          one JSON object per size\n"
"  -v, --verbose       library debug messages\n"
"  -h, --help          this help\n", PF_MAX_CONNS);
}

int cmd_perf(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "iface", required_argument, NULL, 'i' },
		{ "port", required_argument, NULL, 'p' },
		{ "mode", required_argument, NULL, 'm' },
		{ "size", required_argument, NULL, 's' },
		{ "duration", required_argument, NULL, 'd' },
		{ "depth", required_argument, NULL, 'q' },
		{ "iters", required_argument, NULL, 'n' },
		{ "conns", required_argument, NULL, 'c' },
		{ "paths", required_argument, NULL, 'P' },
		{ "mtu", required_argument, NULL, 'U' },
		{ "once", no_argument, NULL, 'O' },
		{ "interval-ms", required_argument, NULL, 'I' },
		{ "tx-engine", required_argument, NULL, 'E' },
		{ "no-redundant", no_argument, NULL, 'R' },
		{ "wait", no_argument, NULL, 'W' },
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct pf_opts o = { .port = 4796, .conns = 1, .depth = 32, .iters = 10000,
			     .secs = 5, .mode = PF_BW };
	const char *role;
	bool sizes_set = false;
	uint32_t v;
	int c;

	while ((c = getopt_long(argc, argv, ":i:p:m:s:d:q:n:c:P:jvh", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (o.nplanes == XROCE_MAX_PLANES)
				return xr_usage_err("perf", "at most %d interfaces",
						    XROCE_MAX_PLANES);
			o.ifnames[o.nplanes++] = optarg;
			break;
		case 'p':
			if (xr_parse_u32(optarg, 1, 65535, &v))
				return xr_usage_err("perf", "bad port '%s'", optarg);
			o.port = (uint16_t)v;
			break;
		case 'm':
			if (!strcmp(optarg, "bw"))
				o.mode = PF_BW;
			else if (!strcmp(optarg, "lat"))
				o.mode = PF_LAT;
			else
				return xr_usage_err("perf", "mode is bw or lat");
			break;
		case 's':
			if (parse_sizes(optarg, &o))
				return xr_usage_err("perf", "bad size list '%s' (each at "
						    "most %u)", optarg, PF_BUF / 2);
			sizes_set = true;
			break;
		case 'd':
			o.secs = atof(optarg);
			if (o.secs <= 0 || o.secs > 3600)
				return xr_usage_err("perf", "bad duration '%s'", optarg);
			break;
		case 'q':
			if (xr_parse_u32(optarg, 1, 1024, &o.depth))
				return xr_usage_err("perf", "depth must be 1..1024");
			break;
		case 'n':
			if (xr_parse_u32(optarg, 1, 10000000, &o.iters))
				return xr_usage_err("perf", "bad iteration count");
			break;
		case 'c':
			if (xr_parse_u32(optarg, 1, PF_MAX_CONNS, &o.conns))
				return xr_usage_err("perf", "conns must be 1..%d", PF_MAX_CONNS);
			break;
		case 'P':
			if (xr_parse_u32(optarg, 1, XROCE_MAX_PATHS, &o.npaths))
				return xr_usage_err("perf", "paths must be 1..%d", XROCE_MAX_PATHS);
			break;
		case 'U':
			if (xr_parse_u32(optarg, 576, 9216, &o.mtu))
				return xr_usage_err("perf", "mtu must be 576..9216");
			break;
		case 'O':
			o.once = 1;
			break;
		case 'I':
			if (xr_parse_u32(optarg, 1, 60000, &o.interval_ms))
				return xr_usage_err("perf", "bad interval '%s'", optarg);
			break;
		case 'R':
			o.no_redundant = 1;
			break;
		case 'W':
			o.wait = 1;
			break;
		case 'E':
			if (!strcmp(optarg, "af_xdp"))
				o.engine = XROCE_TX_AF_XDP;
			else if (!strcmp(optarg, "test_run"))
				o.engine = XROCE_TX_TEST_RUN;
			else
				return xr_usage_err("perf", "tx engine must be af_xdp or test_run");
			break;
		case 'j':
			o.json = 1;
			break;
		case 'v':
			o.verbose = 1;
			break;
		case 'h':
			usage(stdout);
			return XR_EXIT_OK;
		default:
			return xr_opt_err("perf", c, argv);
		}
	}
	if (optind >= argc)
		return xr_usage_err("perf", "server or client?");
	role = argv[optind++];
	if (!o.nplanes)
		return xr_usage_err("perf", "which interface? (-i IF)");
	if (!sizes_set) {
		o.sizes[0] = o.mode == PF_BW ? 65536 : 8;
		o.nsizes = 1;
	}
	if (o.mode == PF_LAT && o.conns != 1)
		return xr_usage_err("perf", "latency mode uses one connection");
	if (!strcmp(role, "server")) {
		if (optind != argc)
			return xr_usage_err("perf", "unexpected '%s'", argv[optind]);
		return server(&o);
	}
	if (!strcmp(role, "client")) {
		if (optind + 1 != argc)
			return xr_usage_err("perf", "client needs one HOST");
		return client(&o, argv[optind]);
	}
	return xr_usage_err("perf", "unknown role '%s' (server or client)", role);
}
