// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>

#include "bpfmaps.h"
#include "ifflags.h"
#include "contract/abi.h"

int xr_ifflags_update(uint32_t prog_id, int ifindex, uint32_t mode)
{
	uint32_t key = (uint32_t)ifindex, flags = 0;
	struct xr_maps m;
	int rc;

	rc = xr_maps_open_prog(prog_id, &m);
	if (rc)
		return rc;
	if (m.ifs < 0) {
		xr_maps_close(&m);
		return -ENOENT;
	}
	if (mode == XDP_FLAGS_SKB_MODE)
		flags |= XR_IF_CSUM_PARTIAL;
	if (flags)
		rc = bpf_map_update_elem(m.ifs, &key, &flags, BPF_ANY) ? -errno : 0;
	else if (bpf_map_delete_elem(m.ifs, &key) && errno != ENOENT)
		rc = -errno;
	xr_maps_close(&m);
	return rc;
}

int xr_ifflags_get(uint32_t prog_id, int ifindex, uint32_t *flags)
{
	uint32_t key = (uint32_t)ifindex;
	struct xr_maps m;
	int rc;

	*flags = 0;
	rc = xr_maps_open_prog(prog_id, &m);
	if (rc)
		return rc;
	if (m.ifs >= 0 && bpf_map_lookup_elem(m.ifs, &key, flags) && errno != ENOENT)
		rc = -errno;
	xr_maps_close(&m);
	return rc;
}
