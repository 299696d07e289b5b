/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The telemetry pages of every process using xroce here, read-only: each
 * domain's memory map starts with them (abi.h: struct xr_telem_hdr and the
 * per-connection slots), found through the xroce programs attached in this
 * network namespace (xr_domains -> xr_mem -> the inner map's id).  `xroce
 * stats` reads the connections, `xroce status` the planes' engines.
 */
#ifndef XR_LOADER_DOMVIEW_H
#define XR_LOADER_DOMVIEW_H

#include <stdint.h>

struct xr_domview {
	uint32_t domain;
	uint32_t pid;
	const uint8_t *mem;      /* XR_TELEM_BYTES, read-only */
};

/* Map the pages of up to max domains of the xroce programs on ifname (NULL:
 * on every interface).  -ENOENT when no xroce program is attached there.
 * Unmap each view's mem (XR_TELEM_BYTES) when done, or xr_domviews_close. */
int xr_domviews_open(const char *ifname, struct xr_domview *dv, int max, int *ndv);
void xr_domviews_close(struct xr_domview *dv, int ndv);

#endif /* XR_LOADER_DOMVIEW_H */
