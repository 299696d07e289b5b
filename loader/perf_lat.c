// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * xroce perf --mode lat: --iters round trips of one size, each a
 * WRITE_WITH_IMM(iteration) the server echoes back, timed from the post to
 * the echo's completion; reported: min / median / p99 / p99.9.  The
 * completions are busy-polled unless --wait.
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

/* rtt: o->iters sorted samples. */
static void report(const struct pf_opts *o, const struct pf_env *e,
		   uint64_t size, const uint64_t *rtt, bool first)
{
	uint64_t p50 = rtt[o->iters / 2], p99 = rtt[(uint64_t)o->iters * 99 / 100],
		 p999 = rtt[(uint64_t)o->iters * 999 / 1000];

	if (o->ep.json) {
		printf("{\"mode\":\"lat\",\"size\":%" PRIu64 ",\"iters\":%u,"
		       "\"rtt_min_us\":%.2f,\"rtt_p50_us\":%.2f,\"rtt_p99_us\":%.2f,"
		       "\"rtt_p999_us\":%.2f,\"rtt_max_us\":%.2f,\"tx_engine\":\"%s\","
		       "\"completions\":\"%s\"}\n",
		       size, o->iters, rtt[0] / 1e3, p50 / 1e3, p99 / 1e3, p999 / 1e3,
		       rtt[o->iters - 1] / 1e3, xr_engine_name(e->dev),
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
	uint64_t *rtt = calloc(o->iters, sizeof(*rtt));
	uint32_t it;
	int rc = 0;

	if (!rtt)
		return xr_err("perf", -ENOMEM, "latency samples");
	for (it = 0; it < o->iters && !rc; it++)
		rc = round_trip(o, e, w, size, it, &rtt[it]);
	if (!rc) {
		qsort(rtt, o->iters, sizeof(*rtt), cmp_u64);
		report(o, e, size, rtt, first);
		fflush(stdout);
	}
	free(rtt);
	return rc;
}
