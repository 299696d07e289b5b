/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Frames built by XDP from the transmit ring's descriptors, one job: turn
 * the frame an XDP program was handed (a test-run trigger) into the frame a
 * descriptor describes (include/contract/txring.h): resize it, write the
 * prebuilt headers, copy the payload pieces out of a domain's memory map.
 * Validation of the trigger and the ring is the caller's; this code refuses
 * any size or offset that would leave the descriptor, a page or the frame.
 *
 * The copies themselves (pages.h) keep every size and offset within what
 * the verifier can bound.
 */
#ifndef XR_LIB_TXRING_BUILD_H
#define XR_LIB_TXRING_BUILD_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "contract/abi.h"
#include "contract/txring.h"
#include "contract/inline.h"
#include "lib/pages.h"

/* The descriptor's n header bytes to the start of the frame. */
XR_INLINE int xr_txring_copy_hdr(struct xdp_md *ctx, __u8 *src, __u32 n)
{
	if (n > XR_TXR_HDR_MAX)
		return -1;
	return xr_frame_store_short(ctx, 0, src, 0, n, XR_TXR_HDR_MAX);
}

/* Make the frame the one d describes; 0 or -1 (refused). */
XR_INLINE int xr_txring_build(struct xdp_md *ctx, struct xr_txr_desc *d,
			      void *mem)
{
	__u32 hl, plen, nseg, off, i;
	int delta;

	/* The ring is shared with userspace: each field is read once. */
	hl = *(volatile __u16 *)&d->hdr_len;
	nseg = *(volatile __u16 *)&d->nseg;
	plen = *(volatile __u32 *)&d->plen;
	if (hl < 14 || hl > XR_TXR_HDR_MAX || nseg > XR_TXR_SEGS ||
	    plen > XR_TXR_MAX_FRAME - hl)
		return -1;
	delta = (int)(hl + plen) - (int)bpf_xdp_get_buff_len(ctx);
	if (delta && bpf_xdp_adjust_tail(ctx, delta))
		return -1;
	if (xr_txring_copy_hdr(ctx, d->hdr, hl))
		return -1;
	off = hl;
#pragma clang loop unroll(disable)
	for (i = 0; i < XR_TXR_SEGS; i++) {
		__u64 pos;
		__u32 len;

		if (i >= nseg)
			break;
		pos = *(volatile __u64 *)&d->seg[i].off;
		len = *(volatile __u32 *)&d->seg[i].len;
		if (len > XR_TXR_MAX_FRAME || off + len > hl + plen)
			return -1;
		/* at most 2 pages: len <= XR_TXR_MAX_FRAME */
		if (len && xr_pages_copy(ctx, mem, pos, off, len, 2, 1))
			return -1;
		off += len;
	}
	return off == hl + plen ? 0 : -1;
}

#endif /* XR_LIB_TXRING_BUILD_H */
