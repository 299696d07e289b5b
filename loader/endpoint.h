/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the commands that move data (send, recv, perf) share about their
 * end of a connection: the options that name it (interfaces, control
 * port, paths, cluster key, who may connect, output), the device
 * attributes those make, and the few work requests every one of them
 * posts (empty receives for immediates, signalled WRITEs).
 */
#ifndef XR_LOADER_ENDPOINT_H
#define XR_LOADER_ENDPOINT_H

#include <stdbool.h>
#include <stdint.h>

#include <xroce/xroce.h>

struct xr_ep_opts {
	const char *ifnames[XROCE_MAX_PLANES]; /* -i, one per plane */
	int nplanes;
	uint16_t port;           /* -p: control port */
	uint32_t npaths;         /* -P; 0: the library's default */
	const char *key_file;    /* --key; NULL: $XROCE_KEY_FILE, if any */
	const char *accept_from; /* --from; NULL: anyone may connect */
	int json;                /* -j */
	int verbose;             /* -v */
};

/* The long options of xr_ep_opts, for a command's option table. */
#define XR_EP_LONG_OPTS \
	{ "iface", required_argument, NULL, 'i' }, \
	{ "port", required_argument, NULL, 'p' }, \
	{ "paths", required_argument, NULL, 'P' }, \
	{ "key", required_argument, NULL, 'K' }, \
	{ "from", required_argument, NULL, 'F' }, \
	{ "json", no_argument, NULL, 'j' }, \
	{ "verbose", no_argument, NULL, 'v' }

/* Option c (one of i p P K F j v) with argument arg into *o for command
 * cmd: XR_CONTINUE, XR_EXIT_USAGE after a message, or XR_NOT_MINE. */
int xr_ep_parse_opt(const char *cmd, int c, const char *arg, struct xr_ep_opts *o);

/* *da cleared and filled from o: planes, key, who may connect, log level.
 * The caller sets the rest (memory, control port, engine). */
void xr_ep_device_attr(const struct xr_ep_opts *o, struct xroce_device_attr *da);

/* Monotonic time in seconds. */
double xr_mono_s(void);

/* n zero-length receives on qp (each takes one WRITE_WITH_IMM); 0 or the
 * first negative errno. */
int xr_post_empty_recvs(struct xroce_qp *qp, int n);

/* A signalled WRITE (WRITE_WITH_IMM carrying imm when with_imm) of len
 * bytes at laddr, in the region of lkey, to raddr/rkey; 0 or a negative
 * errno. */
int xr_post_write(struct xroce_qp *qp, uint32_t lkey, uint64_t wr_id, void *laddr,
		  uint32_t len, uint64_t raddr, uint32_t rkey, bool with_imm,
		  uint32_t imm);

#endif /* XR_LOADER_ENDPOINT_H */
