/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The options `xroce send` and `xroce recv` share (interfaces, port,
 * paths, memory, timeout, output), their help text, and sizes with k/M/G
 * suffixes.
 */
#ifndef XR_LOADER_XFER_OPTS_H
#define XR_LOADER_XFER_OPTS_H

#include <getopt.h>
#include <stdint.h>

#include "endpoint.h"

#include "xroce/xroce.h"

#define XF_DEFAULT_PORT 4794

struct xf_common {
	struct xr_ep_opts ep;    /* -i -p -P --key --from -j -v */
	uint64_t mem;            /* 0: what the buffers need */
	uint32_t timeout_ms;     /* 0: the library's default */
};

#define XF_COMMON_OPTS \
	XR_EP_LONG_OPTS, \
	{ "mem", required_argument, NULL, 'M' }, \
	{ "timeout", required_argument, NULL, 't' }, \
	{ "help", no_argument, NULL, 'h' }
#define XF_COMMON_SHORT "i:p:P:t:jvh"

/* The common options' lines of --help. */
extern const char xf_common_help[];

/* Apply option c (one of XF_COMMON_OPTS but --help) with value arg:
 * XR_CONTINUE, an exit status for a bad value, or XR_NOT_MINE. */
int xf_parse_common(const char *cmd, int c, const char *arg,
		    struct xf_common *o);

/* "1.5M" -> 1572864: a number with an optional k, M or G suffix (powers
 * of 1024), at most 1e15; -EINVAL otherwise. */
int xf_parse_size(const char *s, uint64_t *out);

#endif /* XR_LOADER_XFER_OPTS_H */
