// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * xroce: the command-line tool.  `xroce [-v] <command> [args]`; each
 * command lives in its own loader/cmd_*.c and is listed in the table
 * below (see loader/cmds.h for how to add one).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cmds.h"

/* Overridable from the build; keep in step with VERSION in the Makefile. */
#ifndef XROCE_VERSION
#define XROCE_VERSION "0.1.0"
#endif

static const struct xr_cmd cmds[] = {
	{ "attach", cmd_attach, "attach xroce's XDP program to an interface, or configure it" },
	{ "detach", cmd_detach, "detach xroce's XDP program from an interface" },
	{ "status", cmd_status, "show where xroce is attached, its config, counters, connections" },
	{ "send", cmd_send, "send N bytes or a file to `xroce recv` and report goodput" },
	{ "recv", cmd_recv, "receive one transfer from `xroce send` and verify it" },
	{ "stats", cmd_stats, "live per-path telemetry of running connections (any process)" },
	{ "perf", cmd_perf, "WRITE bandwidth and latency (like ib_write_bw / ib_write_lat)" },
	{ "run", cmd_run, "run an unmodified ibverbs program on xroce (xroce run -- CMD)" },
};

#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: xroce [-v] <command> [args]\n"
		   "       xroce help [command] | xroce <command> --help | xroce --version\n\n"
		   "commands:\n");
	for (i = 0; i < NCMDS; i++)
		fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(f, "\noptions:\n"
		   "  -v, --verbose  show libbpf's log (verifier output, netlink errors)\n");
}

static const struct xr_cmd *find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < NCMDS; i++)
		if (!strcmp(cmds[i].name, name))
			return &cmds[i];
	return NULL;
}

static int run_cmd(const struct xr_cmd *c, int argc, char **argv)
{
	optind = 0; /* 0 also resets getopt's internal state in glibc */
	return c->fn(argc, argv);
}

/* `xroce help [command]` */
static int help(int argc, char **argv)
{
	const struct xr_cmd *c;
	char *hargv[3];

	if (argc < 2) {
		usage(stdout);
		return XR_EXIT_OK;
	}
	c = find_cmd(argv[1]);
	if (!c) {
		fprintf(stderr, "xroce: unknown command '%s' (try 'xroce help')\n",
			argv[1]);
		return XR_EXIT_USAGE;
	}
	hargv[0] = argv[1];
	hargv[1] = "--help";
	hargv[2] = NULL;
	return run_cmd(c, 2, hargv);
}

int main(int argc, char **argv)
{
	const struct xr_cmd *c;
	int verbose = 0, i;

	/* Global options come before the command; the command parses the
	 * rest, so options of different commands never collide. */
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose")) {
			verbose = 1;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return XR_EXIT_OK;
		} else if (!strcmp(argv[i], "--version")) {
			printf("xroce %s\n", XROCE_VERSION);
			return XR_EXIT_OK;
		} else {
			fprintf(stderr, "xroce: unknown option '%s' (try 'xroce help')\n",
				argv[i]);
			return XR_EXIT_USAGE;
		}
	}
	if (i >= argc) {
		fprintf(stderr, "xroce: no command given (try 'xroce help')\n");
		return XR_EXIT_USAGE;
	}
	xr_cli_log_init(verbose);
	if (!strcmp(argv[i], "help"))
		return help(argc - i, argv + i);
	c = find_cmd(argv[i]);
	if (!c) {
		fprintf(stderr, "xroce: unknown command '%s' (try 'xroce help')\n",
			argv[i]);
		return XR_EXIT_USAGE;
	}
	return run_cmd(c, argc - i, argv + i);
}
