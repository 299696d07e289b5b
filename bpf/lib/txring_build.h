/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Frames built by XDP from the transmit ring's descriptors, one job: turn
 * the frame an XDP program was handed (a test-run trigger) into the frame a
 * descriptor describes (include/contract/txring.h): resize it, write the
 * prebuilt headers, copy the payload pieces out of a domain's memory map.
 * Validation of the trigger and the ring is the caller's; this code refuses
 * any size or offset that would leave the descriptor, a page or the frame.
 *
 * bpf_xdp_store_bytes wants a source range the verifier can bound, hence
 * constant sizes: with c the largest power of two <= n, two copies of c
 * bytes, [0, c) and [n - c, n), cover a piece of n bytes (overlapping when
 * n < 2c, the overlap written twice with the same bytes).  Each source
 * offset is checked right before its use, behind a compiler barrier, as
 * older verifiers (6.1) need.
 */
#ifndef XR_LIB_TXRING_BUILD_H
#define XR_LIB_TXRING_BUILD_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "contract/abi.h"
#include "contract/txring.h"

#include "contract/inline.h"

struct xr_txring_page {
	__u8 b[XR_PAGE_SIZE];
};

#define XR_TXRING_COPY2(c)                                                     \
	if (n >= (c)) {                                                        \
		__u32 o1 = off;                                                \
		asm volatile("" : "+r"(o1));                                   \
		if (o1 > lim - (c))                                            \
			return -1;                                             \
		if (bpf_xdp_store_bytes(ctx, pkt_off, src + o1, (c)))          \
			return -1;                                             \
		if (n != (c)) {                                                \
			__u32 o2 = off + n - (c);                              \
			asm volatile("" : "+r"(o2));                           \
			if (o2 > lim - (c))                                    \
				return -1;                                     \
			if (bpf_xdp_store_bytes(ctx, pkt_off + n - (c),        \
						src + o2, (c)))                \
				return -1;                                     \
		}                                                              \
		return 0;                                                      \
	}

/* n bytes (off + n <= 4096) of a memory page into the frame at pkt_off. */
XR_INLINE int xr_txring_copy_page(struct xdp_md *ctx, __u32 pkt_off,
				  __u8 *src, __u32 off, __u32 n)
{
	const __u32 lim = XR_PAGE_SIZE;

	if (off >= XR_PAGE_SIZE || n > XR_PAGE_SIZE - off)
		return -1;
	XR_TXRING_COPY2(4096)
	XR_TXRING_COPY2(2048)
	XR_TXRING_COPY2(1024)
	XR_TXRING_COPY2(512)
	XR_TXRING_COPY2(256)
	XR_TXRING_COPY2(128)
	XR_TXRING_COPY2(64)
	XR_TXRING_COPY2(32)
	XR_TXRING_COPY2(16)
	XR_TXRING_COPY2(8)
	XR_TXRING_COPY2(4)
	XR_TXRING_COPY2(2)
	XR_TXRING_COPY2(1)
	return 0;
}

/* The descriptor's n header bytes to the start of the frame. */
XR_INLINE int xr_txring_copy_hdr(struct xdp_md *ctx, __u8 *src, __u32 n)
{
	const __u32 lim = XR_TXR_HDR_MAX, pkt_off = 0, off = 0;

	if (n > XR_TXR_HDR_MAX)
		return -1;
	XR_TXRING_COPY2(128)
	XR_TXRING_COPY2(64)
	XR_TXRING_COPY2(32)
	XR_TXRING_COPY2(16)
	XR_TXRING_COPY2(8)
	XR_TXRING_COPY2(4)
	XR_TXRING_COPY2(2)
	XR_TXRING_COPY2(1)
	return 0;
}
#undef XR_TXRING_COPY2

/* len bytes from byte position pos of mem into the frame at pkt_off
 * (len < XR_TXR_MAX_FRAME: at most 2 pages). */
XR_INLINE int xr_txring_copy_seg(struct xdp_md *ctx, void *mem, __u64 pos,
				 __u32 pkt_off, __u32 len)
{
	__u32 i;

#pragma clang loop unroll(disable)
	for (i = 0; i < 2; i++) {
		__u32 pg = (__u32)(pos >> XR_PAGE_SHIFT);
		__u32 in = (__u32)pos & (XR_PAGE_SIZE - 1);
		__u32 n = XR_PAGE_SIZE - in;
		struct xr_txring_page *page;

		if (!len)
			break;
		if (n > len)
			n = len;
		page = bpf_map_lookup_elem(mem, &pg);
		if (!page)
			return -1;
		if (xr_txring_copy_page(ctx, pkt_off, page->b, in, n))
			return -1;
		pos += n;
		pkt_off += n;
		len -= n;
	}
	return len ? -1 : 0;
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
		if (len && xr_txring_copy_seg(ctx, mem, pos, off, len))
			return -1;
		off += len;
	}
	return off == hl + plen ? 0 : -1;
}

#endif /* XR_LIB_TXRING_BUILD_H */
