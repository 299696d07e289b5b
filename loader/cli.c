// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "cli.h"
#include "xroce/xroce.h"

/* The command is a short-lived process: the log settings and the last
 * kernel message are process-wide by nature (libbpf's print callback has
 * no context argument). */
static int log_verbose;
static char kmsg[256];

#define KMSG_PREFIX "Kernel error message: "

static int libbpf_log(enum libbpf_print_level level, const char *fmt,
		      va_list ap)
{
	char line[512];
	const char *p;
	size_t n;

	if (log_verbose)
		return vfprintf(stderr, fmt, ap);
	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(line, sizeof(line), fmt, ap);
	p = strstr(line, KMSG_PREFIX);
	if (!p)
		return 0;
	p += strlen(KMSG_PREFIX);
	snprintf(kmsg, sizeof(kmsg), "%s", p);
	n = strlen(kmsg);
	while (n && (kmsg[n - 1] == '\n' || kmsg[n - 1] == ' '))
		kmsg[--n] = '\0';
	return 0;
}

void xr_cli_log_init(int verbose)
{
	log_verbose = verbose;
	libbpf_set_print(libbpf_log);
}

void xr_cli_kmsg_clear(void)
{
	kmsg[0] = '\0';
}

const char *xr_cli_kmsg(void)
{
	return kmsg[0] ? kmsg : NULL;
}

int xr_err(const char *cmd, int err, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "xroce %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (err)
		fprintf(stderr, ": %s", strerror(-err));
	if (err && kmsg[0])
		fprintf(stderr, " (kernel: %s)", kmsg);
	if (err == -EPERM || err == -EACCES)
		fprintf(stderr, " (xroce needs root, or CAP_BPF and CAP_NET_ADMIN)");
	fputc('\n', stderr);
	return XR_EXIT_FAIL;
}

int xr_usage_err(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "xroce %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (try 'xroce %s --help')\n", cmd);
	return XR_EXIT_USAGE;
}

void xr_note(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "xroce %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int xr_opt_err(const char *cmd, int c, char **argv)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "?";

	if (c == ':')
		return xr_usage_err(cmd, "option '%s' needs a value", arg);
	if (optopt && optopt != '?')
		return xr_usage_err(cmd, "unknown option '-%c'", optopt);
	return xr_usage_err(cmd, "unknown option '%s'", arg);
}

int xr_parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = (uint32_t)v;
	return 0;
}

int xr_ifindex(const char *name)
{
	unsigned int idx;

	if (!name || !*name || strlen(name) >= IF_NAMESIZE)
		return -ENODEV;
	idx = if_nametoindex(name);
	if (!idx)
		return errno == ENODEV || errno == ENXIO || !errno ? -ENODEV :
								     -errno;
	return (int)idx;
}

const char *xr_engine_name(const struct xroce_device *dev)
{
	return xroce_device_tx_engine(dev, 0) == XROCE_TX_TEST_RUN ? "test_run"
								    : "af_xdp";
}
