// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * xroce perf --mode bw: keep --depth WRITEs of one size in flight on every
 * connection for --duration seconds, then report goodput, packet rate,
 * retransmissions and CPU per GB (one line, or one JSON object), and with
 * --interval-ms the goodput of every interval on the way.
 */
#include <inttypes.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "perf.h"

/* One size's run. */
struct bw_run {
	const struct pf_opts *o;
	struct pf_env *e;
	const struct pf_welcome *w;
	uint64_t size;
	uint64_t slot_bytes;     /* spacing of the WRITEs in the buffers */
	uint32_t outstanding[PF_MAX_CONNS];
	uint64_t done_bytes;     /* completed WRITEs */
	uint64_t pkts0, retx0;   /* the QPs' counters at the start */
	double t0, c0, last_print;
	double ivl_t;            /* --interval-ms: the interval's start */
	uint64_t ivl_acked;      /* and the bytes acknowledged by then */
};

/* Sums over the connections' counters. */
struct bw_totals {
	uint64_t tx_pkts, retx_pkts, acked_bytes;
};

static struct bw_totals totals(const struct pf_env *e)
{
	struct bw_totals t = { 0, 0, 0 };
	struct xroce_qp_stats st;
	uint32_t i;

	for (i = 0; i < e->nqp; i++) {
		xroce_qp_stats(e->qp[i], &st);
		t.tx_pkts += st.tx_pkts;
		t.retx_pkts += st.retx_pkts;
		t.acked_bytes += st.acked_bytes;
	}
	return t;
}

/* Goodput per interval from packet-level acknowledgements (finer than
 * message completions): timelines of failover or incast. */
static void print_interval(struct bw_run *r, double t)
{
	uint64_t acked = totals(r->e).acked_bytes, bytes = acked - r->ivl_acked;
	double gbps = (double)bytes * 8 / (t - r->ivl_t) / 1e9;
	struct timespec wall;

	clock_gettime(CLOCK_REALTIME, &wall);
	if (r->o->ep.json)
		printf("{\"mode\":\"interval\",\"t_ms\":%.3f,\"wall_ns\":%lld,"
		       "\"bytes\":%" PRIu64 ",\"gbps\":%.4f}\n", (t - r->t0) * 1000,
		       (long long)wall.tv_sec * 1000000000LL + wall.tv_nsec, bytes,
		       gbps);
	else
		printf("  t %9.3f ms  %10" PRIu64 " B  %8.4f Gbit/s\n",
		       (t - r->t0) * 1000, bytes, gbps);
	r->ivl_acked = acked;
	r->ivl_t = t;
}

/* Top every connection up to --depth WRITEs in flight. */
static int fill(struct bw_run *r)
{
	uint64_t span = PF_BUF / 2 - r->size + 1;
	uint32_t i;

	for (i = 0; i < r->e->nqp; i++)
		while (r->outstanding[i] < r->o->depth) {
			uint32_t s = r->outstanding[i] % r->o->depth;
			uint64_t off = (s * r->slot_bytes) % span;
			int rc = xr_post_write(r->e->qp[i], r->e->mr->lkey, i,
					       r->e->buf + off, (uint32_t)r->size,
					       r->w[i].addr + off, r->w[i].rkey,
					       false, 0);

			if (rc)
				return xr_err("perf", rc, "post");
			r->outstanding[i]++;
		}
	return 0;
}

static bool any_outstanding(const struct bw_run *r)
{
	bool any = false;
	uint32_t i;

	for (i = 0; i < r->e->nqp; i++)
		any |= r->outstanding[i] != 0;
	return any;
}

/* Everything that can be is posted: wait for completions (the library
 * sleeps while pacing or windows hold it, leaving the CPU to the network
 * stack), at most 1 ms. */
static int reap(struct bw_run *r)
{
	struct xroce_wc wc[64];
	int n = xroce_wait_cq(r->e->cq, 64, wc, 1), k;

	for (k = 0; k < n; k++) {
		if (wc[k].status != XROCE_WC_SUCCESS)
			return xr_err("perf", 0, "a WRITE failed: %s",
				      xroce_wc_status_str(wc[k].status));
		if (wc[k].opcode != XROCE_WC_RDMA_WRITE)
			continue;
		r->outstanding[wc[k].wr_id]--;
		r->done_bytes += wc[k].byte_len;
	}
	return 0;
}

/* Post and reap for the duration, then until nothing is outstanding. */
static int run(struct bw_run *r)
{
	bool progress = !r->o->ep.json && isatty(2);
	int rc;

	for (;;) {
		double t = xr_mono_s();

		if (r->o->interval_ms && (t - r->ivl_t) * 1000 >= r->o->interval_ms)
			print_interval(r, t);
		if (t - r->t0 < r->o->secs) {
			rc = fill(r);
			if (rc)
				return rc;
		} else if (!any_outstanding(r)) {
			return 0;
		}
		rc = reap(r);
		if (rc)
			return rc;
		if (progress && t - r->last_print > 1.0) {
			fprintf(stderr, "\r  %6.1f s  %8.3f Gbit/s", t - r->t0,
				(double)r->done_bytes * 8 / (t - r->t0) / 1e9);
			r->last_print = t;
		}
	}
}

static void report(const struct bw_run *r, double secs, double cpu, bool first)
{
	const struct pf_opts *o = r->o;
	struct bw_totals now = totals(r->e);
	uint64_t pkts = now.tx_pkts - r->pkts0, retx = now.retx_pkts - r->retx0;
	double gbps = (double)r->done_bytes * 8 / secs / 1e9,
	       mpps = (double)pkts / secs / 1e6,
	       cpu_gb = r->done_bytes ? cpu / ((double)r->done_bytes / 1e9) : 0.0;

	if (o->ep.json) {
		printf("{\"mode\":\"bw\",\"size\":%" PRIu64 ",\"conns\":%u,\"paths\":%u,"
		       "\"depth\":%u,\"seconds\":%.3f,\"bytes\":%" PRIu64 ",\"gbps\":%.4f,"
		       "\"mpps\":%.4f,\"pkts\":%" PRIu64 ",\"retx_pkts\":%" PRIu64 ","
		       "\"cpu_s\":%.3f,\"cpu_s_per_gb\":%.3f,\"tx_engine\":\"%s\"}\n",
		       r->size, r->e->nqp, o->ep.npaths ? o->ep.npaths : XROCE_DEFAULT_PATHS,
		       o->depth, secs, r->done_bytes, gbps, mpps, pkts, retx, cpu,
		       cpu_gb, xr_engine_name(r->e->dev));
		return;
	}
	if (first)
		printf("%10s %6s %10s %10s %12s %10s %12s\n", "size", "conns",
		       "Gbit/s", "Mpps", "packets", "retx", "CPU s/GB");
	printf("%10" PRIu64 " %6u %10.3f %10.4f %12" PRIu64 " %10" PRIu64 " %12.3f\n",
	       r->size, r->e->nqp, gbps, mpps, pkts, retx, cpu_gb);
}

/* -v: the first connection's paths, on stderr. */
static void report_paths(const struct pf_env *e)
{
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

int pf_run_bw(const struct pf_opts *o, struct pf_env *e,
	      const struct pf_welcome *w, uint64_t size, bool first)
{
	struct bw_run r = { .o = o, .e = e, .w = w, .size = size };
	struct bw_totals start = totals(e);
	double t1, c1;
	int rc;

	r.slot_bytes = (PF_BUF / 2) / o->depth & ~63ull;
	if (!r.slot_bytes || r.slot_bytes < size)
		r.slot_bytes = size;
	r.pkts0 = start.tx_pkts;
	r.retx0 = start.retx_pkts;
	r.ivl_acked = start.acked_bytes;
	r.t0 = xr_mono_s();
	r.c0 = pf_cpu();
	r.last_print = r.ivl_t = r.t0;
	rc = run(&r);
	if (rc)
		return rc;
	t1 = xr_mono_s();
	c1 = pf_cpu();
	if (!o->ep.json && isatty(2))
		fprintf(stderr, "\r%40s\r", "");
	report(&r, t1 - r.t0, c1 - r.c0, first);
	if (o->ep.verbose)
		report_paths(e);
	fflush(stdout);
	return 0;
}
