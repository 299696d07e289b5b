// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * xroce perf --mode lat --breakdown: where a round trip's time goes.  Both
 * ends trace (xroce_trace_enable: the library's steps and those the XDP
 * programs stamp); after the round trips the client asks the server for its
 * records, which arrive as one WRITE_WITH_IMM(PF_IMM_TRACE) into the echo
 * area, and merges them with its own by message: a message's sender-side
 * steps come from its sender's records, its receiver-side steps from the
 * other end's.  Both ends run on one host here, so their CLOCK_MONOTONIC
 * stamps compare directly (on two hosts, the wire stages would carry the
 * clocks' offset).  Printed: each stage's median, p99 and mean over the
 * messages of both directions, the turnaround of the echoing end, and the
 * round trip.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "perf.h"

#define BD_NST (XROCE_TR_RECV_CQE + 1)

/* One message's first stamp of each step (0: none). */
struct bd_msg {
	uint64_t t[BD_NST];
};

/* The messages one end sent, by message number. */
struct bd_dir {
	uint32_t base, n;          /* message numbers base .. base + n - 1 */
	struct bd_msg *m;
};

static const struct bd_ivl {
	int from, to;
	const char *what;
} IVLS[] = {
	{ XROCE_TR_POST, XROCE_TR_SEND, "sender library: post to transmit engine" },
	{ XROCE_TR_SEND, XROCE_TR_KICK, "queued until the sending system call" },
	{ XROCE_TR_KICK, XROCE_TR_XDP_BUILD, "system call to XDP frame build" },
	{ XROCE_TR_XDP_BUILD, XROCE_TR_RX_XDP, "wire: veth, fabric, receiver XDP parse/auth/csum" },
	{ XROCE_TR_KICK, XROCE_TR_RX_XDP, "system call, wire, receiver XDP parse/auth/csum" },
	{ XROCE_TR_RX_XDP, XROCE_TR_PLACED, "receiver XDP: windows, access, placement" },
	{ XROCE_TR_PLACED, XROCE_TR_RECV_DONE, "receiver: RECV record to library (wake-up, drain)" },
	{ XROCE_TR_RECV_DONE, XROCE_TR_RECV_CQE, "receiver library: record to application" },
	{ XROCE_TR_PLACED, XROCE_TR_ACK_TX, "receiver XDP: ACK built and sent" },
	{ XROCE_TR_ACK_TX, XROCE_TR_ACK_XDP, "ACK wire, sender XDP record" },
	{ XROCE_TR_ACK_XDP, XROCE_TR_ACK_DONE, "sender: ACK record to library" },
	{ XROCE_TR_ACK_DONE, XROCE_TR_SEND_CQE, "sender library: ACK to application" },
	{ XROCE_TR_POST, XROCE_TR_RECV_CQE, "one way: post to receive completion" },
	{ XROCE_TR_POST, XROCE_TR_SEND_CQE, "post to send completion" },
};
#define BD_NIVL (sizeof(IVLS) / sizeof(IVLS[0]))

/* A growable array of records. */
struct bd_recs {
	struct xroce_trace_rec *r;
	size_t n, cap;
};

static int recs_take(struct xroce_device *dev, struct bd_recs *a)
{
	for (;;) {
		int k;

		if (a->cap - a->n < 65536) {
			size_t nc = a->cap ? a->cap * 2 : 1 << 18;
			struct xroce_trace_rec *p = realloc(a->r, nc * sizeof(*p));

			if (!p)
				return -ENOMEM;
			a->r = p;
			a->cap = nc;
		}
		k = xroce_trace_take(dev, a->r + a->n, 65536);
		if (k < 0)
			return k;
		a->n += (size_t)k;
		if (k < 65536)
			return 0;
	}
}

/* The range of message numbers whose POST is in recs (sender side). */
static int dir_init(struct bd_dir *d, const struct xroce_trace_rec *r, size_t n)
{
	uint32_t lo = UINT32_MAX, hi = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (r[i].stage == XROCE_TR_POST) {
			lo = r[i].msg_id < lo ? r[i].msg_id : lo;
			hi = r[i].msg_id > hi ? r[i].msg_id : hi;
		}
	if (lo > hi || hi - lo > 50000000)
		return -ENOENT;
	d->base = lo;
	d->n = hi - lo + 1;
	d->m = calloc(d->n, sizeof(*d->m));
	return d->m ? 0 : -ENOMEM;
}

/* Sender-side steps from the sender's records, receiver-side steps from
 * the other end's. */
static bool sender_step(int st)
{
	return st <= XROCE_TR_XDP_BUILD || (st >= XROCE_TR_ACK_XDP && st <= XROCE_TR_SEND_CQE);
}

static void dir_fill(struct bd_dir *d, const struct xroce_trace_rec *r, size_t n,
		     bool sender)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint32_t k = r[i].msg_id - d->base;
		uint64_t *t;

		if (k >= d->n || r[i].stage >= BD_NST || !r[i].stage ||
		    sender_step(r[i].stage) != sender)
			continue;
		t = &d->m[k].t[r[i].stage];
		if (!*t || r[i].ns < *t)
			*t = r[i].ns;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct bd_stat {
	size_t n;
	double p50, p99, mean;     /* microseconds */
};

/* Sort v (n samples, ns) and summarise. */
static struct bd_stat stat_of(uint64_t *v, size_t n)
{
	struct bd_stat s = { n, 0, 0, 0 };
	double sum = 0;
	size_t i;

	if (!n)
		return s;
	qsort(v, n, sizeof(*v), cmp_u64);
	for (i = 0; i < n; i++)
		sum += (double)v[i];
	i = n / 2;
	s.p50 = (double)v[i] / 1e3;
	i = n * 99 / 100;
	s.p99 = (double)v[i] / 1e3;
	s.mean = sum / (double)n / 1e3;
	return s;
}

/* One interval over the messages of both directions. */
static struct bd_stat ivl_stat(const struct bd_dir *d, int nd, const struct bd_ivl *iv,
			       uint64_t *v)
{
	size_t n = 0;
	int j;
	uint32_t i;

	for (j = 0; j < nd; j++)
		for (i = 0; i < d[j].n; i++) {
			const uint64_t *t = d[j].m[i].t;

			if (t[iv->from] && t[iv->to] && t[iv->to] >= t[iv->from])
				v[n++] = t[iv->to] - t[iv->from];
		}
	return stat_of(v, n);
}

/* The echoing end's turnaround (receive completion to the echo's post)
 * and the round trip, pairing the k-th message of each direction. */
static void pair_stats(const struct bd_dir *a, const struct bd_dir *b, uint64_t *v,
		       struct bd_stat *turn, struct bd_stat *rtt)
{
	uint32_t i, n = a->n < b->n ? a->n : b->n;
	size_t k = 0;

	for (i = 0; i < n; i++)
		if (a->m[i].t[XROCE_TR_RECV_CQE] && b->m[i].t[XROCE_TR_POST] &&
		    b->m[i].t[XROCE_TR_POST] >= a->m[i].t[XROCE_TR_RECV_CQE])
			v[k++] = b->m[i].t[XROCE_TR_POST] - a->m[i].t[XROCE_TR_RECV_CQE];
	*turn = stat_of(v, k);
	k = 0;
	for (i = 0; i < n; i++)
		if (a->m[i].t[XROCE_TR_POST] && b->m[i].t[XROCE_TR_RECV_CQE] &&
		    b->m[i].t[XROCE_TR_RECV_CQE] >= a->m[i].t[XROCE_TR_POST])
			v[k++] = b->m[i].t[XROCE_TR_RECV_CQE] - a->m[i].t[XROCE_TR_POST];
	*rtt = stat_of(v, k);
}

static void print_row(const struct pf_opts *o, bool *first, const char *from,
		      const char *to, const char *what, struct bd_stat s)
{
	if (o->ep.json) {
		printf("%s{\"from\":\"%s\",\"to\":\"%s\",\"what\":\"%s\",\"n\":%zu,"
		       "\"p50_us\":%.2f,\"p99_us\":%.2f,\"mean_us\":%.2f}",
		       *first ? "" : ",", from, to, what, s.n, s.p50, s.p99, s.mean);
		*first = false;
		return;
	}
	printf("  %-10s -> %-10s %8.2f %8.2f %8.2f %7zu  %s\n", from, to, s.p50,
	       s.p99, s.mean, s.n, what);
}

static const char *const STAGE[BD_NST] = {
	"", "post", "send", "kick", "xdp_build", "rx_xdp", "placed", "ack_tx",
	"ack_xdp", "ack_done", "send_cqe", "recv_done", "recv_cqe",
};

static void report(const struct pf_opts *o, uint64_t size, const struct bd_dir *d,
		   uint64_t *v)
{
	struct bd_stat turn, rtt;
	bool first = true;
	size_t i;

	pair_stats(&d[0], &d[1], v, &turn, &rtt);
	if (o->ep.json)
		printf("{\"mode\":\"breakdown\",\"size\":%" PRIu64 ",\"stages\":[", size);
	else
		printf("breakdown of %" PRIu64 "-byte messages, both directions (us):\n"
		       "  %-10s    %-10s %8s %8s %8s %7s\n", size, "from", "to",
		       "median", "p99", "mean", "n");
	for (i = 0; i < BD_NIVL; i++) {
		struct bd_stat s = ivl_stat(d, 2, &IVLS[i], v);

		if (s.n) /* (no XDP_BUILD stamps on the AF_XDP engine) */
			print_row(o, &first, STAGE[IVLS[i].from], STAGE[IVLS[i].to],
				  IVLS[i].what, s);
	}
	print_row(o, &first, "recv_cqe", "post", "echoing end: completion to the echo's post",
		  turn);
	print_row(o, &first, "post", "recv_cqe", "round trip", rtt);
	if (o->ep.json)
		printf("]}\n");
}

/* Ask the server for its records: 0, or an exit status. */
static int fetch_server(const struct pf_opts *o, struct pf_env *e,
			const struct pf_welcome *w, size_t *n)
{
	struct xroce_wc wc[8];
	double t0 = xr_mono_s();
	int k, i;

	if (xr_post_write(e->qp[0], e->mr->lkey, 0, NULL, 0, w[0].addr, w[0].rkey, true, PF_IMM_TRACE))
		return xr_err("perf", -EIO, "cannot ask the server for its trace");
	while (xr_mono_s() - t0 < 10.0) {
		k = xroce_wait_cq(e->cq, 8, wc, 100);
		for (i = 0; i < k; i++) {
			if (wc[i].status != XROCE_WC_SUCCESS)
				return xr_err("perf", 0, "trace transfer: %s",
					      xroce_wc_status_str(wc[i].status));
			if (wc[i].opcode != XROCE_WC_RECV_RDMA_WITH_IMM)
				continue;
			xr_post_empty_recvs(e->qp[0], 1);
			if (wc[i].imm_data == PF_IMM_TRACE) {
				*n = wc[i].byte_len / sizeof(struct xroce_trace_rec);
				return 0;
			}
		}
	}
	(void)o;
	return xr_err("perf", -ETIMEDOUT, "the server sent no trace (is it "
		      "`xroce perf server` of this version?)");
}

int pf_breakdown(const struct pf_opts *o, struct pf_env *e,
		 const struct pf_welcome *w, uint64_t size)
{
	const struct xroce_trace_rec *srv =
		(const void *)(e->buf + PF_BUF / 2 + PF_TRACE_OFF);
	struct bd_recs own = { NULL, 0, 0 };
	struct bd_dir d[2] = { { 0, 0, NULL }, { 0, 0, NULL } };
	uint64_t *v = NULL;
	size_t nsrv = 0;
	int rc;

	rc = recs_take(e->dev, &own);
	if (!rc)
		rc = fetch_server(o, e, w, &nsrv);
	if (!rc && (dir_init(&d[0], own.r, own.n) || dir_init(&d[1], srv, nsrv)))
		rc = xr_err("perf", -ENOENT, "breakdown: no traced messages");
	if (!rc) {
		dir_fill(&d[0], own.r, own.n, true);
		dir_fill(&d[0], srv, nsrv, false);
		dir_fill(&d[1], srv, nsrv, true);
		dir_fill(&d[1], own.r, own.n, false);
		v = malloc((size_t)(d[0].n + d[1].n + 1) * sizeof(*v));
		if (!v)
			rc = xr_err("perf", -ENOMEM, "breakdown");
	}
	if (!rc)
		report(o, size, d, v);
	fflush(stdout);
	free(v);
	free(d[0].m);
	free(d[1].m);
	free(own.r);
	return rc;
}
