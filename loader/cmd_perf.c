// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * xroce perf: the command's options; the roles are in perf_server.c and
 * perf_client.c (loader/perf.h says what the command does).
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmds.h"
#include "perf.h"

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
"      --max-inflight N packets in flight per connection at most, 2..4096\n"
"                      (the QP's max_inflight; default: the library's, 128)\n"
"      --once          server: exit after its clients are gone\n"
"      --interval-ms N bw: also print goodput every N ms (acknowledged bytes)\n"
"      --warmup-ms N   lat: round trips for N ms before each size's timed ones,\n"
"                      not counted (default 1000; 0 = none; a breakdown\n"
"                      has none)\n"
"      --wait          lat: sleep on the CQ for each echo (both ends) instead\n"
"                      of busy-polling\n"
"      --breakdown     lat: trace both ends and print where the time of a\n"
"                      round trip goes, stage by stage (median, p99, mean)\n"
"      --no-redundant  no redundant copies of small messages (XROCE_QP_NO_REDUNDANT)\n"
"      --key FILE      cluster key (32 bytes, raw or hex): only holders connect\n"
"      --from LIST     server: accept connections only from these addresses\n"
"                      or prefixes (comma separated, e.g. 10.0.0.0/24)\n"
"      --tx-engine E   af_xdp or test_run (frames built by XDP, sent from a\n"
"                      BPF test run; default: $XROCE_TX_ENGINE, else auto:\n"
"                      af_xdp in zero-copy mode, else test_run if possible)\n"
"  -j, --json          one JSON object per size\n"
"  -v, --verbose       library debug messages\n"
"  -h, --help          this help\n", PF_MAX_CONNS);
}

/* Options that shape the connections: XR_CONTINUE, an exit status, or
 * XR_NOT_MINE. */
static int parse_conn_opt(int c, const char *arg, struct pf_opts *o)
{

	switch (c) {
	case 'c':
		if (xr_parse_u32(arg, 1, PF_MAX_CONNS, &o->conns))
			return xr_usage_err("perf", "conns must be 1..%d", PF_MAX_CONNS);
		return XR_CONTINUE;
	case 'U':
		if (xr_parse_u32(arg, 576, 9216, &o->mtu))
			return xr_usage_err("perf", "mtu must be 576..9216");
		return XR_CONTINUE;
	case 'M':
		if (xr_parse_u32(arg, 2, 4096, &o->max_inflight))
			return xr_usage_err("perf", "max-inflight must be 2..4096");
		return XR_CONTINUE;
	case 'R':
		o->no_redundant = 1;
		return XR_CONTINUE;
	case 'E':
		if (!strcmp(arg, "af_xdp"))
			o->engine = XROCE_TX_AF_XDP;
		else if (!strcmp(arg, "test_run"))
			o->engine = XROCE_TX_TEST_RUN;
		else
			return xr_usage_err("perf", "tx engine must be af_xdp or test_run");
		return XR_CONTINUE;
	}
	return XR_NOT_MINE;
}

/* Options that shape the measurement: XR_CONTINUE, an exit status, or
 * XR_NOT_MINE.  *sizes_set: -s was given. */
static int parse_run_opt(int c, const char *arg, struct pf_opts *o,
			 bool *sizes_set)
{
	switch (c) {
	case 'm':
		if (!strcmp(arg, "bw"))
			o->mode = PF_BW;
		else if (!strcmp(arg, "lat"))
			o->mode = PF_LAT;
		else
			return xr_usage_err("perf", "mode is bw or lat");
		return XR_CONTINUE;
	case 's':
		if (parse_sizes(arg, o))
			return xr_usage_err("perf", "bad size list '%s' (each at "
					    "most %u)", arg, PF_BUF / 2);
		*sizes_set = true;
		return XR_CONTINUE;
	case 'd':
		o->secs = atof(arg);
		if (o->secs <= 0 || o->secs > 3600)
			return xr_usage_err("perf", "bad duration '%s'", arg);
		return XR_CONTINUE;
	case 'q':
		if (xr_parse_u32(arg, 1, 1024, &o->depth))
			return xr_usage_err("perf", "depth must be 1..1024");
		return XR_CONTINUE;
	case 'n':
		if (xr_parse_u32(arg, 1, 10000000, &o->iters))
			return xr_usage_err("perf", "bad iteration count");
		return XR_CONTINUE;
	case 'I':
		if (xr_parse_u32(arg, 1, 60000, &o->interval_ms))
			return xr_usage_err("perf", "bad interval '%s'", arg);
		return XR_CONTINUE;
	case 'X':
		if (xr_parse_u32(arg, 0, 60000, &o->warmup_ms))
			return xr_usage_err("perf", "bad warm-up '%s'", arg);
		return XR_CONTINUE;
	}
	return XR_NOT_MINE;
}

/* Options that only switch something on: XR_CONTINUE or XR_NOT_MINE. */
static int parse_flag_opt(int c, struct pf_opts *o)
{
	switch (c) {
	case 'O':
		o->once = 1;
		return XR_CONTINUE;
	case 'W':
		o->wait = 1;
		return XR_CONTINUE;
	case 'B':
		o->breakdown = 1;
		return XR_CONTINUE;
	}
	return XR_NOT_MINE;
}

/* Parse the options into *o: XR_CONTINUE with optind at the role, or an
 * exit status. */
static int parse(int argc, char **argv, struct pf_opts *o)
{
	static const struct option opts[] = {
		XR_EP_LONG_OPTS,
		{ "mode", required_argument, NULL, 'm' },
		{ "size", required_argument, NULL, 's' },
		{ "duration", required_argument, NULL, 'd' },
		{ "depth", required_argument, NULL, 'q' },
		{ "iters", required_argument, NULL, 'n' },
		{ "conns", required_argument, NULL, 'c' },
		{ "mtu", required_argument, NULL, 'U' },
		{ "max-inflight", required_argument, NULL, 'M' },
		{ "once", no_argument, NULL, 'O' },
		{ "interval-ms", required_argument, NULL, 'I' },
		{ "warmup-ms", required_argument, NULL, 'X' },
		{ "tx-engine", required_argument, NULL, 'E' },
		{ "no-redundant", no_argument, NULL, 'R' },
		{ "wait", no_argument, NULL, 'W' },
		{ "breakdown", no_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool sizes_set = false;
	int c, rc;

	while ((c = getopt_long(argc, argv, ":i:p:m:s:d:q:n:c:P:jvh", opts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return XR_EXIT_OK;
		}
		rc = xr_ep_parse_opt("perf", c, optarg, &o->ep);
		if (rc == XR_NOT_MINE)
			rc = parse_conn_opt(c, optarg, o);
		if (rc == XR_NOT_MINE)
			rc = parse_run_opt(c, optarg, o, &sizes_set);
		if (rc == XR_NOT_MINE)
			rc = parse_flag_opt(c, o);
		if (rc == XR_NOT_MINE)
			return xr_opt_err("perf", c, argv);
		if (rc != XR_CONTINUE)
			return rc;
	}
	if (!sizes_set) {
		o->sizes[0] = o->mode == PF_BW ? 65536 : 8;
		o->nsizes = 1;
	}
	return XR_CONTINUE;
}

int cmd_perf(int argc, char **argv)
{
	struct pf_opts o = { .ep.port = 4796, .conns = 1, .depth = 32, .iters = 10000,
			     .secs = 5, .mode = PF_BW, .warmup_ms = 1000 };
	const char *role;
	int rc, k;

	rc = parse(argc, argv, &o);
	if (rc != XR_CONTINUE)
		return rc;
	if (optind >= argc)
		return xr_usage_err("perf", "server or client?");
	role = argv[optind++];
	if (!o.ep.nplanes)
		return xr_usage_err("perf", "which interface? (-i IF)");
	if (o.mode == PF_LAT && o.conns != 1)
		return xr_usage_err("perf", "latency mode uses one connection");
	for (k = 0; o.breakdown && k < o.nsizes; k++)
		if (o.mode != PF_LAT || o.sizes[k] > PF_TRACE_OFF)
			return xr_usage_err("perf", "--breakdown: latency mode, sizes "
					    "up to 1 MiB");
	if (!strcmp(role, "server")) {
		if (optind != argc)
			return xr_usage_err("perf", "unexpected '%s'", argv[optind]);
		return pf_server(&o);
	}
	if (!strcmp(role, "client")) {
		if (optind + 1 != argc)
			return xr_usage_err("perf", "client needs one HOST");
		return pf_client(&o, argv[optind]);
	}
	return xr_usage_err("perf", "unknown role '%s' (server or client)", role);
}
