/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Direct placement, one job: copy len bytes of the frame, starting at
 * pkt_off, to byte position pos of a domain's memory map (an array of 4 KiB
 * pages).  The caller has already checked that [pos, pos + len) lies inside
 * a registered region of that domain; this code only refuses to leave a
 * page, and the array lookup refuses to leave the map.
 *
 * bpf_xdp_load_bytes needs a length the verifier can bound against the page,
 * so each page's piece is copied in power-of-two steps.  Every step derives
 * its offsets from the piece's start and length (not from a running offset),
 * which keeps the verifier's state identical whether or not a step ran, so
 * verification stays linear.  bpf_xdp_load_bytes also reads multi-buffer
 * (xdp.frags) frames.
 */
#ifndef XR_LIB_PLACE_H
#define XR_LIB_PLACE_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "contract/abi.h"

#include "contract/inline.h"

/* The largest payload (XR_MAX_PKT_PAYLOAD, abi.h) spans at most 3 pages. */
#define XR_PLACE_MAX_PAGES 3
_Static_assert(XR_MAX_PKT_PAYLOAD <= 2 * XR_PAGE_SIZE, "placement spans 3 pages");

struct xr_page {
	__u8 b[XR_PAGE_SIZE];
};

#define XR_PLACE_STEP(c)                                                     \
	if (n & (c)) {                                                       \
		__u32 done = n & ~((c) * 2 - 1); /* bytes of larger steps */ \
		__u32 o = in + done;                                         \
		if (o > XR_PAGE_SIZE - (c))                                  \
			return -1;                                           \
		if (bpf_xdp_load_bytes(ctx, pkt_off + done, page->b + o, (c))) \
			return -1;                                           \
	}

/* Copy n bytes (in + n <= 4096) of the frame at pkt_off into page at in. */
XR_INLINE int xr_place_piece(struct xdp_md *ctx, __u32 pkt_off,
			     struct xr_page *page, __u32 in, __u32 n)
{
	if (in >= XR_PAGE_SIZE || n > XR_PAGE_SIZE - in)
		return -1;
	XR_PLACE_STEP(4096)
	XR_PLACE_STEP(2048)
	XR_PLACE_STEP(1024)
	XR_PLACE_STEP(512)
	XR_PLACE_STEP(256)
	XR_PLACE_STEP(128)
	XR_PLACE_STEP(64)
	XR_PLACE_STEP(32)
	XR_PLACE_STEP(16)
	XR_PLACE_STEP(8)
	XR_PLACE_STEP(4)
	XR_PLACE_STEP(2)
	XR_PLACE_STEP(1)
	return 0;
}
#undef XR_PLACE_STEP

/* Copy len bytes of the frame at pkt_off to position pos of mem. */
XR_INLINE int xr_place(struct xdp_md *ctx, void *mem, __u64 pos, __u32 pkt_off,
		       __u32 len)
{
	__u32 i;

	if (len > XR_MAX_PKT_PAYLOAD)
		return -1;
#pragma clang loop unroll(disable)
	for (i = 0; i < XR_PLACE_MAX_PAGES; i++) {
		__u32 pg = (__u32)(pos >> XR_PAGE_SHIFT);
		__u32 in = (__u32)pos & (XR_PAGE_SIZE - 1);
		__u32 n = XR_PAGE_SIZE - in;
		struct xr_page *page;

		if (!len)
			break;
		if (n > len)
			n = len;
		page = bpf_map_lookup_elem(mem, &pg);
		if (!page)
			return -1;
		if (xr_place_piece(ctx, pkt_off, page, in, n))
			return -1;
		pos += n;
		pkt_off += n;
		len -= n;
	}
	return len ? -1 : 0;
}

#endif /* XR_LIB_PLACE_H */
