/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Direct placement, one job: copy len bytes of the frame, starting at
 * pkt_off, to byte position pos of a domain's memory map.  The caller has
 * already checked that [pos, pos + len) lies inside a registered region of
 * that domain; the copy itself (pages.h) only refuses to leave a page or
 * the map.
 */
#ifndef XR_LIB_PLACE_H
#define XR_LIB_PLACE_H

#include <linux/bpf.h>
#include "contract/abi.h"
#include "contract/inline.h"
#include "lib/pages.h"

/* The largest payload (XR_MAX_PKT_PAYLOAD, abi.h) spans at most 3 pages. */
#define XR_PLACE_MAX_PAGES 3
_Static_assert(XR_MAX_PKT_PAYLOAD <= 2 * XR_PAGE_SIZE,
	       "placement spans 3 pages");

/* Copy len bytes of the frame at pkt_off to position pos of mem. */
XR_INLINE int xr_place(struct xdp_md *ctx, void *mem, __u64 pos, __u32 pkt_off,
		       __u32 len)
{
	if (len > XR_MAX_PKT_PAYLOAD)
		return -1;
	return xr_pages_copy(ctx, mem, pos, pkt_off, len, XR_PLACE_MAX_PAGES, 0);
}

#endif /* XR_LIB_PLACE_H */
