// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * xroce perf --mode lat: --iters round trips of one size, each a
 * WRITE_WITH_IMM(iteration) the server echoes back, timed from the post to
 * the echo's completion; reported: min / median / p99 / p99.9, and the
 * retransmissions and copies (redundant ones, tail-loss probes) they took.
 * The completions are busy-polled unless --wait.
 *
 * Before the timed ones, round trips for --warmup-ms (1000 ms) are not
 * counted.  The start of a run of two busy-polling processes on two CPUs
 * often finds both on one CPU, sharing it in 4 ms scheduler slices until
 * the load balancer moves one: a loss-free 16 KiB run of 3000 timed round
 * trips on the pair fabric gave p99 3.5-4.1 ms with no warm-up (2 of 2)
 * and with 400 ms (1 of 2; sockperf, whose figures the benches set beside
 * ours, leaves out its first 400 ms, but its ends sleep in recv), 118-186
 * us with 1000 ms (3 of 3) and 2000 ms (2 of 2).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "perf.h"

/* Give up on an echo after this long. */
#define LAT_ECHO_TIMEOUT_S 5.0

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Completions until the echo of iteration `it`: 0, or an exit status. */
static int wait_echo(const struct pf_opts *o, struct pf_env *e, uint32_t it,
		     double t0)
{
	struct xroce_wc wc[4];
	bool got = false;
	int n, k;

	while (!got) {
		n = o->wait ? xroce_wait_cq(e->cq, 4, wc, 100) :
			      xroce_poll_cq(e->cq, 4, wc);
		if (n < 0)
			return xr_err("perf", n, "poll");
		for (k = 0; k < n; k++) {
			if (wc[k].status != XROCE_WC_SUCCESS)
				return xr_err("perf", 0, "failed: %s",
					      xroce_wc_status_str(wc[k].status));
			if (wc[k].opcode == XROCE_WC_RECV_RDMA_WITH_IMM) {
				xr_post_empty_recvs(e->qp[0], 1);
				if (wc[k].imm_data == it)
					got = true;
			}
		}
		if (xr_mono_s() - t0 > LAT_ECHO_TIMEOUT_S)
			return xr_err("perf", -ETIMEDOUT, "no echo for iteration %u", it);
	}
	return 0;
}

/* One round trip of size bytes; *ns its duration. */
static int round_trip(const struct pf_opts *o, struct pf_env *e,
		      const struct pf_welcome *w, uint64_t size, uint32_t it,
		      uint64_t *ns)
{
	double t0 = xr_mono_s();
	int rc;

	rc = xr_post_write(e->qp[0], e->mr->lkey, 1, e->buf, (uint32_t)size, w[0].addr, w[0].rkey,
		     true, it);
	if (rc)
		return xr_err("perf", rc, "post");
	rc = wait_echo(o, e, it, t0);
	if (rc)
		return rc;
	*ns = (uint64_t)((xr_mono_s() - t0) * 1e9);
	return 0;
}

/* rtt: o->iters sorted samples; retx, dup: what the timed ones took. */
static void report(const struct pf_opts *o, const struct pf_env *e,
		   uint64_t size, const uint64_t *rtt, uint64_t retx, uint64_t dup,
		   bool first)
{
	uint64_t p50 = rtt[o->iters / 2], p99 = rtt[(uint64_t)o->iters * 99 / 100],
		 p999 = rtt[(uint64_t)o->iters * 999 / 1000];

	if (o->ep.json) {
		printf("{\"mode\":\"lat\",\"size\":%" PRIu64 ",\"iters\":%u,"
		       "\"warmup_ms\":%u,"
		       "\"rtt_min_us\":%.2f,\"rtt_p50_us\":%.2f,\"rtt_p99_us\":%.2f,"
		       "\"rtt_p999_us\":%.2f,\"rtt_max_us\":%.2f,\"retx_pkts\":%" PRIu64
		       ",\"dup_pkts\":%" PRIu64 ",\"tx_engine\":\"%s\","
		       "\"completions\":\"%s\"}\n",
		       size, o->iters, o->breakdown ? 0 : o->warmup_ms, rtt[0] / 1e3,
		       p50 / 1e3, p99 / 1e3, p999 / 1e3, rtt[o->iters - 1] / 1e3,
		       retx, dup, xr_engine_name(e->dev),
		       o->wait ? "wait" : "busy-poll");
		return;
	}
	if (first)
		printf("%10s %8s %12s %12s %12s %12s   (round trip, us)\n",
		       "size", "iters", "min", "median", "p99", "p99.9");
	printf("%10" PRIu64 " %8u %12.2f %12.2f %12.2f %12.2f\n", size,
	       o->iters, rtt[0] / 1e3, p50 / 1e3, p99 / 1e3, p999 / 1e3);
}

int pf_run_lat(const struct pf_opts *o, struct pf_env *e,
	       const struct pf_welcome *w, uint64_t size, bool first)
{
	uint64_t *rtt = calloc(o->iters, sizeof(*rtt)), untimed;
	double end = xr_mono_s() + (o->breakdown ? 0 : o->warmup_ms / 1e3);
	struct xroce_qp_stats s0 = { 0 }, s1 = { 0 };
	uint32_t it, seq = 0;
	int rc = 0;

	if (!rtt)
		return xr_err("perf", -ENOMEM, "latency samples");
	/* The echo is matched by its immediate: one sequence over both. */
	while (!rc && xr_mono_s() < end)
		rc = round_trip(o, e, w, size, seq++, &untimed);
	if (!rc)
		rc = xroce_qp_stats(e->qp[0], &s0);
	for (it = 0; it < o->iters && !rc; it++)
		rc = round_trip(o, e, w, size, seq++, &rtt[it]);
	if (!rc)
		rc = xroce_qp_stats(e->qp[0], &s1);
	if (rc < 0)
		rc = xr_err("perf", rc, "statistics");
	if (!rc) {
		qsort(rtt, o->iters, sizeof(*rtt), cmp_u64);
		report(o, e, size, rtt, s1.retx_pkts - s0.retx_pkts,
		       s1.dup_pkts - s0.dup_pkts, first);
		fflush(stdout);
	}
	free(rtt);
	return rc;
}
