// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>

#include "statnames.h"
#include "xrcfg.h"

int xr_cfg_read(int cfg_fd, struct xr_cfg *c)
{
	__u32 zero = 0;

	memset(c, 0, sizeof(*c));
	return bpf_map_lookup_elem(cfg_fd, &zero, c) ? -errno : 0;
}

int xr_cfg_write(int cfg_fd, const struct xr_cfg *c)
{
	__u32 zero = 0;

	return bpf_map_update_elem(cfg_fd, &zero, c, BPF_ANY) ? -errno : 0;
}

void xr_cfg_flags_str(unsigned int flags, char *buf, size_t len)
{
	size_t off = 0;
	unsigned int bit, unknown = 0;

	buf[0] = '\0';
	for (bit = 0; bit < 32; bit++) {
		const char *n;

		if (!(flags & (1u << bit)))
			continue;
		n = xr_cfg_flag_name(bit);
		if (!n) {
			unknown |= 1u << bit;
			continue;
		}
		off += (size_t)snprintf(buf + off, off < len ? len - off : 0,
					"%s%s", off ? "," : "", n);
	}
	if (unknown)
		off += (size_t)snprintf(buf + off, off < len ? len - off : 0,
					"%s0x%x", off ? "," : "", unknown);
	if (!off)
		snprintf(buf, len, "none");
}

void xr_cfg_str(const struct xr_cfg *c, char *buf, size_t len)
{
	char flags[128];

	xr_cfg_flags_str(c->flags, flags, sizeof(flags));
	if (!c->udp_port)
		snprintf(buf, len, "data port unset (passes all traffic; "
			 "'xroce attach IF' configures it), flags %s", flags);
	else if (c->rate_capacity_mbps)
		snprintf(buf, len, "data port %u/udp, flags %s, rate hints: %u Mbit/s "
			 "shared (active window %u us)", c->udp_port, flags,
			 c->rate_capacity_mbps,
			 c->active_window_us ? c->active_window_us : 50000);
	else
		snprintf(buf, len, "data port %u/udp, flags %s",
			 c->udp_port, flags);
}
