/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Plumbing every `xroce` subcommand shares: one-line error messages with
 * the exit status to return, getopt error reporting, number parsing, and
 * libbpf's log (quiet unless -v, but the kernel's netlink error message is
 * kept so errors can quote it).
 */
#ifndef XR_LOADER_CLI_H
#define XR_LOADER_CLI_H

#include <stdint.h>

#define XR_EXIT_OK 0
#define XR_EXIT_FAIL 1
#define XR_EXIT_USAGE 2
/* Returned by a command's option parser when the command should go on
 * (any other value is the exit status to return at once). */
#define XR_CONTINUE (-1)
/* Returned by a helper that parses some of a command's options when the
 * option given is not one of them. */
#define XR_NOT_MINE (-2)

/* Route libbpf's messages: all of them to stderr if verbose, otherwise
 * none, except that the last "Kernel error message" is remembered. */
void xr_cli_log_init(int verbose);
/* Forget the remembered kernel message (call before an operation whose
 * error should quote it). */
void xr_cli_kmsg_clear(void);
/* The kernel's last netlink error message, or NULL. */
const char *xr_cli_kmsg(void);

/* "xroce CMD: <message>: <strerror(-err)> [(kernel: ...)]" on stderr, plus
 * a hint for EPERM.  err is a negative errno, or 0 for no strerror part.
 * Returns XR_EXIT_FAIL. */
int xr_err(const char *cmd, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* "xroce CMD: <message> (try 'xroce CMD --help')"; returns XR_EXIT_USAGE. */
int xr_usage_err(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The transmit engine of a device's first plane, for reports:
 * "af_xdp" or "test_run". */
struct xroce_device;
const char *xr_engine_name(const struct xroce_device *dev);
/* A note on stderr: "xroce CMD: <message>". */
void xr_note(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Report what getopt_long (run with a leading ':' in optstring) returned
 * for a bad option c; returns XR_EXIT_USAGE. */
int xr_opt_err(const char *cmd, int c, char **argv);

/* Decimal unsigned integer in [min, max]; -EINVAL or -ERANGE otherwise. */
int xr_parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out);

/* Index of interface `name` in this network namespace, or -ENODEV
 * (also for names too long to be interface names). */
int xr_ifindex(const char *name);

#endif /* XR_LOADER_CLI_H */
