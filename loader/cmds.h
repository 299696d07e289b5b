/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The subcommands of `xroce`.  To add one: write loader/cmd_NAME.c with
 * `int cmd_NAME(int argc, char **argv)`, declare it here and add one line
 * to the table in loader/main.c.
 *
 * A command gets argv[0] = its own name and parses the rest with
 * getopt_long (optind is reset by main).  It handles --help itself, prints
 * errors as one line through xr_err()/xr_usage_err() (loader/cli.h), and
 * returns the process exit status: 0 success, 1 failure, 2 bad usage.
 */
#ifndef XR_LOADER_CMDS_H
#define XR_LOADER_CMDS_H

struct xr_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;     /* one line for `xroce help` */
};

int cmd_attach(int argc, char **argv);
int cmd_detach(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_send(int argc, char **argv);
int cmd_recv(int argc, char **argv);
int cmd_perf(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_run(int argc, char **argv);

#endif /* XR_LOADER_CMDS_H */
