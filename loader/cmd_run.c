// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * xroce run -- CMD [ARGS...]: run an unmodified ibverbs program on xroce.
 * Puts the directory of xroce's libibverbs.so.1 (and its libmlx5/libefa
 * stand-ins) first on LD_LIBRARY_PATH and executes CMD, which then finds
 * xroce devices (one per interface carrying xroce, "xroce_<ifname>")
 * instead of kernel RDMA devices.
 *
 * The directory: $XROCE_VERBS_LIBDIR, else lib/ next to this executable
 * (the build tree: build/xroce, build/lib), else ../lib/xroce/verbs from it
 * (what `make install` puts there).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmds.h"

#define CMD "run"

static void usage(FILE *f)
{
	fprintf(f,
"usage: xroce run [options] -- CMD [ARGS...]\n"
"\n"
"Run an unmodified ibverbs program (ib_write_bw, ibv_rc_pingpong, ...) on\n"
"xroce: CMD loads xroce's libibverbs.so.1, whose devices are the\n"
"interfaces carrying xroce (`xroce attach IF`), named xroce_<IF>.\n"
"\n"
"  -D, --devices SPEC   devices and their planes instead of one per\n"
"                       interface: \"[name=]if1,if2;[name=]if3\"\n"
"                       (sets XROCE_IBV_DEVICES)\n"
"  -m, --mem-size SIZE  registrable memory per opened device, k/M/G\n"
"                       suffixes (XROCE_MEM_SIZE; default 128M)\n"
"  -P, --paths N        paths per connection (XROCE_PATHS; default 8)\n"
"  -k, --key FILE       cluster key: 32 bytes, raw or 64 hex digits\n"
"                       (XROCE_KEY_FILE); both ends need the same\n"
"  -v, --verbose        the library's messages (XROCE_LOG_LEVEL=info;\n"
"                       twice: debug)\n"
"  -L, --print-libdir   print the library directory and exit\n"
"  -h, --help           this help\n");
}

static int is_dir_with_lib(const char *dir)
{
	char p[PATH_MAX + 32];

	if (snprintf(p, sizeof(p), "%s/libibverbs.so.1", dir) >= (int)sizeof(p))
		return 0;
	return access(p, R_OK) == 0;
}

/* The directory holding xroce's libibverbs.so.1, or NULL. */
static const char *libdir(char *buf, size_t len)
{
	const char *env = getenv("XROCE_VERBS_LIBDIR");
	char exe[PATH_MAX], *slash;
	ssize_t n;

	if (env && *env)
		return is_dir_with_lib(env) ? env : NULL;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	if (snprintf(buf, len, "%s/lib", exe) < (int)len && is_dir_with_lib(buf))
		return buf;
	if (snprintf(buf, len, "%s/../lib/xroce/verbs", exe) < (int)len &&
	    is_dir_with_lib(buf))
		return buf;
	return NULL;
}

int cmd_run(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "devices", required_argument, NULL, 'D' },
		{ "mem-size", required_argument, NULL, 'm' },
		{ "paths", required_argument, NULL, 'P' },
		{ "key", required_argument, NULL, 'k' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "print-libdir", no_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char dirbuf[PATH_MAX + 32], *path;
	const char *dir, *old;
	int c, verbose = 0, print = 0;
	uint32_t paths;

	while ((c = getopt_long(argc, argv, "+:D:m:P:k:vLh", lopts, NULL)) != -1) {
		switch (c) {
		case 'D':
			setenv("XROCE_IBV_DEVICES", optarg, 1);
			break;
		case 'm':
			setenv("XROCE_MEM_SIZE", optarg, 1);
			break;
		case 'P':
			if (xr_parse_u32(optarg, 1, 16, &paths))
				return xr_usage_err(CMD, "--paths: 1..16");
			setenv("XROCE_PATHS", optarg, 1);
			break;
		case 'k':
			if (access(optarg, R_OK))
				return xr_usage_err(CMD, "--key: cannot read the file");
			setenv("XROCE_KEY_FILE", optarg, 1);
			break;
		case 'v':
			verbose++;
			break;
		case 'L':
			print = 1;
			break;
		case 'h':
			usage(stdout);
			return XR_EXIT_OK;
		default:
			return xr_opt_err(CMD, c, argv);
		}
	}
	dir = libdir(dirbuf, sizeof(dirbuf));
	if (!dir)
		return xr_err(CMD, 0, "xroce's libibverbs.so.1 not found (next to this "
			      "executable in lib/ or ../lib/xroce/verbs/, or in "
			      "$XROCE_VERBS_LIBDIR): run make");
	if (print) {
		printf("%s\n", dir);
		return XR_EXIT_OK;
	}
	if (optind >= argc)
		return xr_usage_err(CMD, "no command given");
	if (verbose)
		setenv("XROCE_LOG_LEVEL", verbose > 1 ? "debug" : "info", 1);
	old = getenv("LD_LIBRARY_PATH");
	if (old && *old) {
		size_t len = strlen(dir) + strlen(old) + 2;

		path = malloc(len);
		if (!path)
			return xr_err(CMD, -ENOMEM, "out of memory");
		snprintf(path, len, "%s:%s", dir, old);
	} else {
		path = strdup(dir);
		if (!path)
			return xr_err(CMD, -ENOMEM, "out of memory");
	}
	setenv("LD_LIBRARY_PATH", path, 1);
	free(path);
	execvp(argv[optind], argv + optind);
	xr_err(CMD, -errno, "cannot run %s", argv[optind]);
	return errno == ENOENT ? 127 : 126;
}
