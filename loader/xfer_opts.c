// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>

#include "cli.h"
#include "xfer_opts.h"

const char xf_common_help[] =
"  -i, --iface IF      interface carrying xroce (repeat for planes)\n"
"  -p, --port N        control port (default 4794)\n"
"  -P, --paths N       paths of the connection (default 8)\n"
"      --mem BYTES     device memory (default: what the buffers need)\n"
"  -t, --timeout MS    peer silence before failing (default 2000)\n"
"      --key FILE      cluster key (32 bytes, raw or hex): only holders connect\n"
"      --from LIST     recv: accept the sender only from these addresses or\n"
"                      prefixes (comma separated, e.g. 10.0.0.0/24)\n"
"  -j, --json          one JSON object with the results\n"
"  -v, --verbose       library debug messages\n"
"  -h, --help          this help\n"
"Sizes take k, M, G suffixes (powers of 1024).\n";

int xf_parse_size(const char *s, uint64_t *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': v *= 1024; end++; break;
	case 'm': case 'M': v *= 1024 * 1024; end++; break;
	case 'g': case 'G': v *= 1024.0 * 1024 * 1024; end++; break;
	default: break;
	}
	if (*end || v > 1e15)
		return -EINVAL;
	*out = (uint64_t)v;
	return 0;
}

int xf_parse_common(const char *cmd, int c, const char *arg,
		    struct xf_common *o)
{
	uint32_t v;
	uint64_t s;

	switch (c) {
	case 'M':
		if (xf_parse_size(arg, &s))
			return xr_usage_err(cmd, "bad size '%s'", arg);
		o->mem = s;
		return XR_CONTINUE;
	case 't':
		if (xr_parse_u32(arg, 1, 3600000, &v))
			return xr_usage_err(cmd, "bad timeout '%s'", arg);
		o->timeout_ms = v;
		return XR_CONTINUE;
	}
	return xr_ep_parse_opt(cmd, c, arg, &o->ep);
}
