// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * xroce stats [IF] [-i SECS] [-n COUNT] [--json]: live per-path telemetry
 * of every running xroce connection in this network namespace, of any
 * process.  Each process's library publishes its connections in the first
 * pages of its domain memory map (abi.h: struct xr_telem); this command
 * finds every domain of every xroce program here (xr_domains -> xr_mem ->
 * the inner map's id), maps those pages read-only, and prints, per path:
 * state, entropy (UDP source port), RTT min / smoothed / p99, ECN-marked
 * fraction, throughput since the last refresh, losses, retransmissions,
 * timeouts and window.  Refreshes like top until interrupted, or COUNT
 * times; --json prints one object per refresh.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "cli.h"
#include "cmds.h"
#include "domview.h"
#include "contract/abi.h"

#define CMD "stats"
#define MAX_DOMAINS 256

/* Previous sample of one path, for throughput. */
struct prev {
	uint32_t domain, conn, path;
	uint64_t tx_bytes, ns;
};

static volatile sig_atomic_t stop;

static void on_sig(int sig)
{
	(void)sig;
	stop = 1;
}

static const char *state_name(unsigned int s)
{
	static const char *n[] = { "good", "congested", "suspect", "down" };

	return s < 4 ? n[s] : "?";
}

/* Consistent copy of a slot; false if it is free or kept changing. */
static bool read_slot(const struct xr_telem *s, struct xr_telem *out)
{
	int tries;

	for (tries = 0; tries < 100; tries++) {
		uint32_t a = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);

		if (a & 1)
			continue;
		memcpy(out, s, sizeof(*out));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) == a)
			return out->conn != 0;
	}
	return false;
}

static const struct prev *find_prev(const struct prev *pv, size_t npv,
				    uint32_t d, uint32_t c, uint32_t p)
{
	size_t i;

	for (i = 0; i < npv; i++)
		if (pv[i].domain == d && pv[i].conn == c && pv[i].path == p)
			return &pv[i];
	return NULL;
}

static void addr_str(const uint8_t a[16], char *buf, size_t len)
{
	static const uint8_t v4pre[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (!memcmp(a, v4pre, 12))
		inet_ntop(AF_INET, a + 12, buf, (socklen_t)len);
	else
		inet_ntop(AF_INET6, a, buf, (socklen_t)len);
}

/* One refresh: the samples of the last one (for throughput) and those
 * taken now. */
struct round {
	const struct prev *last;
	size_t nlast;
	struct prev *cur;
	size_t ncur, cap;
	bool json;
	bool first;              /* no connection printed yet */
};

/* Keep this sample for the next refresh; false if out of memory. */
static bool remember(struct round *r, const struct prev *p)
{
	if (r->ncur == r->cap) {
		size_t ncap = r->cap ? 2 * r->cap : 64;
		struct prev *x = realloc(r->cur, ncap * sizeof(*x));

		if (!x)
			return false;
		r->cur = x;
		r->cap = ncap;
	}
	r->cur[r->ncur++] = *p;
	return true;
}

static void path_json(unsigned int p, const struct xr_telem_path *tp,
		      double ecn, double gbps)
{
	printf("%s{\"path\":%u,\"plane\":%u,\"sport\":%u,"
	       "\"state\":\"%s\",\"rtt_min_ns\":%u,\"rtt_srtt_ns\":%u,"
	       "\"rtt_p99_ns\":%u,\"ecn_marked_pct\":%.3f,"
	       "\"gbps\":%.4f,\"tx_pkts\":%llu,\"tx_bytes\":%llu,"
	       "\"lost_pkts\":%llu,\"retx_pkts\":%llu,"
	       "\"acked_pkts\":%llu,\"timeouts\":%llu,"
	       "\"cwnd\":%u,\"inflight\":%u}",
	       p ? "," : "", p, tp->plane, tp->sport,
	       state_name(tp->state), tp->rtt_min_ns,
	       tp->rtt_srtt_ns, tp->rtt_p99_ns, ecn, gbps,
	       (unsigned long long)tp->tx_pkts,
	       (unsigned long long)tp->tx_bytes,
	       (unsigned long long)tp->lost_pkts,
	       (unsigned long long)tp->retx_pkts,
	       (unsigned long long)tp->acked_pkts,
	       (unsigned long long)tp->timeouts,
	       tp->cwnd, tp->inflight);
}

static void path_text(const struct xr_domview *dv, const struct xr_telem *t,
		      unsigned int p, double ecn, double gbps)
{
	const struct xr_telem_path *tp = &t->path[p];

	printf("%-6u %-8u %-8u %2u %-5u %-9s %8.1f %8.1f %8.1f "
	       "%6.2f %9.3f %8llu %8llu %6llu %5u\n", dv->pid,
	       t->conn, t->peer_conn, p, tp->sport,
	       state_name(tp->state), tp->rtt_min_ns / 1e3,
	       tp->rtt_srtt_ns / 1e3, tp->rtt_p99_ns / 1e3, ecn,
	       gbps, (unsigned long long)tp->lost_pkts,
	       (unsigned long long)tp->retx_pkts,
	       (unsigned long long)tp->timeouts, tp->cwnd);
}

/* The paths of connection t: throughput since the last refresh, ECN-marked
 * fraction, and the counters. */
static void print_paths(struct round *r, const struct xr_domview *dv,
			const struct xr_telem *t)
{
	uint32_t p;

	for (p = 0; p < t->npaths && p < XR_MAX_PATHS; p++) {
		const struct xr_telem_path *tp = &t->path[p];
		const struct prev *o = find_prev(r->last, r->nlast,
						 dv->domain, t->conn, p);
		struct prev now = { dv->domain, t->conn, p, tp->tx_bytes, t->updated_ns };
		double gbps = 0, ecn;

		if (o && t->updated_ns > o->ns && tp->tx_bytes >= o->tx_bytes)
			gbps = (double)(tp->tx_bytes - o->tx_bytes) * 8 /
			       (double)(t->updated_ns - o->ns);
		ecn = tp->rx_pkts ? 100.0 * (double)tp->ce_pkts / (double)tp->rx_pkts
				  : 0.0;
		if (!remember(r, &now))
			break;
		if (r->json)
			path_json(p, tp, ecn, gbps);
		else
			path_text(dv, t, p, ecn, gbps);
	}
}

/* Every connection domain dv publishes. */
static void print_domain(struct round *r, const struct xr_domview *dv)
{
	const struct xr_telem *slots = (const void *)(dv->mem +
						      sizeof(struct xr_telem_hdr));
	char peer[INET6_ADDRSTRLEN];
	struct xr_telem t;
	uint32_t s;

	for (s = 0; s < XR_TELEM_SLOTS; s++) {
		if (!read_slot(&slots[s], &t))
			continue;
		addr_str(t.peer_addr, peer, sizeof(peer));
		if (r->json)
			printf("%s{\"pid\":%u,\"domain\":%u,\"conn\":%u,\"peer_conn\":%u,"
			       "\"peer\":\"%s\",\"state\":%u,\"rate_hint_mbps\":%u,"
			       "\"tx_bytes\":%llu,\"acked_bytes\":%llu,"
			       "\"retx_pkts\":%llu,\"cwnd\":%.3f,\"pace_mbps\":%u,"
			       "\"cuts_ecn\":%llu,\"cuts_delay\":%llu,"
			       "\"cuts_loss\":%llu,\"compete\":%u,\"paths\":[",
			       r->first ? "" : ",",
			       dv->pid, dv->domain, t.conn, t.peer_conn, peer,
			       t.state, t.rate_hint_mbps, (unsigned long long)t.tx_bytes,
			       (unsigned long long)t.acked_bytes,
			       (unsigned long long)t.retx_pkts, t.cwnd_milli / 1e3,
			       t.pace_mbps, (unsigned long long)t.cuts_ecn,
			       (unsigned long long)t.cuts_delay,
			       (unsigned long long)t.cuts_loss, t.compete);
		r->first = false;
		print_paths(r, dv, &t);
		if (r->json)
			printf("]}");
	}
}

/* Control messages a domain dropped, by reason (text: only if any). */
static void print_ctrl(const struct xr_domview *dv, bool json, bool first)
{
	const struct xr_telem_hdr *h = (const void *)dv->mem;

	if (json) {
		printf("%s{\"pid\":%u,\"domain\":%u,\"ctrl_dropped\":{\"malformed\":%u,"
		       "\"unauthenticated\":%u,\"spoofed\":%u,\"no_room\":%u,"
		       "\"refused\":%u},\"ctrl_cookies\":%u}", first ? "" : ",",
		       dv->pid, dv->domain, h->ctrl_malformed, h->ctrl_unauth,
		       h->ctrl_spoofed, h->ctrl_no_room, h->ctrl_refused,
		       h->ctrl_cookies);
		return;
	}
	if (h->ctrl_malformed || h->ctrl_unauth || h->ctrl_spoofed ||
	    h->ctrl_no_room || h->ctrl_refused)
		printf("pid %u: control messages dropped: %u malformed, %u "
		       "unauthenticated, %u from the wrong address, %u for lack of "
		       "room, %u refused by --from\n", dv->pid, h->ctrl_malformed,
		       h->ctrl_unauth, h->ctrl_spoofed, h->ctrl_no_room,
		       h->ctrl_refused);
}

/* One refresh of every domain; *pvp and *npvp: the samples of the last
 * refresh in, of this one out. */
static void print_round(struct xr_domview *dv, int ndv, struct prev **pvp,
			size_t *npvp, bool json, uint64_t now)
{
	struct round r = { .last = *pvp, .nlast = *npvp, .json = json,
			   .first = true };
	int d;

	if (json)
		printf("{\"time_ns\":%llu,\"connections\":[", (unsigned long long)now);
	else
		printf("%-6s %-8s %-8s %2s %-5s %-9s %8s %8s %8s %6s %9s %8s %8s %6s %5s\n",
		       "pid", "conn", "peer", "p", "sport", "state", "rtt_min",
		       "srtt", "p99(us)", "ecn%", "Gbit/s", "lost", "retx", "tmo",
		       "cwnd");
	for (d = 0; d < ndv; d++)
		print_domain(&r, &dv[d]);
	if (json)
		printf("],\"domains\":[");
	else if (r.first)
		printf("(no running connections)\n");
	for (d = 0; d < ndv; d++)
		print_ctrl(&dv[d], json, d == 0);
	if (json)
		printf("]}\n");
	fflush(stdout);
	free(*pvp);
	*pvp = r.cur;
	*npvp = r.ncur;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: xroce stats [IF] [-i SECS] [-n COUNT] [--json]\n"
"\n"
"Live per-path telemetry of every xroce connection in this network\n"
"namespace, whichever process runs it: state, entropy (UDP source port),\n"
"RTT min / smoothed / p99, ECN-marked fraction, throughput, losses,\n"
"retransmissions, timeouts, congestion window.\n"
"\n"
"  -i, --interval SECS  refresh period (default 1)\n"
"  -n, --count N        stop after N refreshes (default: until Ctrl-C)\n"
"  -j, --json           one JSON object per refresh\n"
"  -h, --help           this help\n");
}

struct stats_opts {
	const char *ifname;      /* NULL: every interface */
	double interval;         /* seconds */
	uint32_t count;          /* refreshes, 0: until interrupted */
	bool json;
};

/* [IF] [-i SECS] [-n COUNT] [--json]: XR_CONTINUE, or an exit status. */
static int parse(int argc, char **argv, struct stats_opts *o)
{
	static const struct option opts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, ":i:n:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			o->interval = atof(optarg);
			if (o->interval < 0.01 || o->interval > 3600)
				return xr_usage_err(CMD, "bad interval '%s'", optarg);
			break;
		case 'n':
			if (xr_parse_u32(optarg, 1, 1000000, &o->count))
				return xr_usage_err(CMD, "bad count '%s'", optarg);
			break;
		case 'j':
			o->json = true;
			break;
		case 'h':
			usage(stdout);
			return XR_EXIT_OK;
		default:
			return xr_opt_err(CMD, c, argv);
		}
	}
	if (optind < argc)
		o->ifname = argv[optind++];
	if (optind != argc)
		return xr_usage_err(CMD, "unexpected '%s'", argv[optind]);
	return XR_CONTINUE;
}

int cmd_stats(int argc, char **argv)
{
	struct stats_opts o = { .interval = 1.0 };
	struct xr_domview dv[MAX_DOMAINS];
	struct prev *pv = NULL;
	size_t npv = 0;
	uint32_t round;
	int ndv = 0, rc;

	rc = parse(argc, argv, &o);
	if (rc != XR_CONTINUE)
		return rc;
	if (o.ifname && xr_ifindex(o.ifname) < 0)
		return xr_err(CMD, -ENODEV, "%s", o.ifname);
	signal(SIGINT, on_sig);
	signal(SIGTERM, on_sig);
	rc = XR_EXIT_OK;
	for (round = 0; !stop && (!o.count || round < o.count); round++) {
		struct timespec ts;
		int err;

		/* Domains come and go with processes: look again every round. */
		xr_domviews_close(dv, ndv);
		err = xr_domviews_open(o.ifname, dv, MAX_DOMAINS, &ndv);
		if (err) {
			rc = err == -ENOENT ?
				xr_err(CMD, err, "xroce is not attached to %s",
				       o.ifname ? o.ifname : "any interface here") :
				xr_err(CMD, err, "cannot list interfaces");
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if (!o.json && !o.count && isatty(1))
			printf("\033[H\033[J"); /* like top: redraw in place */
		print_round(dv, ndv, &pv, &npv, o.json,
			    (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
		if (o.count && round + 1 == o.count)
			break;
		usleep((useconds_t)(o.interval * 1e6));
	}
	xr_domviews_close(dv, ndv);
	free(pv);
	return rc;
}
