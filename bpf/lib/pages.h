/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Frames and memory pages, one job: copy bytes between a frame and a
 * domain's memory map (an array of 4 KiB pages), either way: payload into
 * memory (placement, place.h) or memory into a frame (frames built from
 * the transmit ring, txring_build.h).  A range of the map is cut into one
 * piece per page; this code only refuses to leave a page, and the array
 * lookup refuses to leave the map.  Checking that a range is the caller's
 * to touch is the caller's job.
 *
 * The helpers want lengths the verifier can bound, hence constant sizes:
 *  - frame to page (bpf_xdp_load_bytes): a piece is copied in power-of-two
 *    steps.  Every step derives its offsets from the piece's start and
 *    length (not from a running offset), which keeps the verifier's state
 *    identical whether or not a step ran, so verification stays linear.
 *  - page to frame (bpf_xdp_store_bytes): with c the largest power of two
 *    <= n, two copies of c bytes, [0, c) and [n - c, n), cover a piece of n
 *    bytes (overlapping when n < 2c, the overlap written twice with the
 *    same bytes).  Each source offset is checked right before its use,
 *    behind a compiler barrier, as older verifiers (6.1) need.
 * Both helpers also reach the fragments of multi-buffer (xdp.frags) frames.
 */
#ifndef XR_LIB_PAGES_H
#define XR_LIB_PAGES_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "contract/abi.h"
#include "contract/inline.h"

struct xr_page {
	__u8 b[XR_PAGE_SIZE];
};

#define XR_LOAD_STEP(c)                                                      \
	if (n & (c)) {                                                       \
		__u32 done = n & ~((c) * 2 - 1); /* bytes of larger steps */ \
		__u32 o = in + done;                                         \
		if (o > XR_PAGE_SIZE - (c))                                  \
			return -1;                                           \
		if (bpf_xdp_load_bytes(ctx, pkt_off + done, page->b + o, (c)))\
			return -1;                                           \
	}

/* Copy n bytes (in + n <= 4096) of the frame at pkt_off into page at in. */
XR_INLINE int xr_page_load(struct xdp_md *ctx, __u32 pkt_off,
			   struct xr_page *page, __u32 in, __u32 n)
{
	if (in >= XR_PAGE_SIZE || n > XR_PAGE_SIZE - in)
		return -1;
	XR_LOAD_STEP(4096)
	XR_LOAD_STEP(2048)
	XR_LOAD_STEP(1024)
	XR_LOAD_STEP(512)
	XR_LOAD_STEP(256)
	XR_LOAD_STEP(128)
	XR_LOAD_STEP(64)
	XR_LOAD_STEP(32)
	XR_LOAD_STEP(16)
	XR_LOAD_STEP(8)
	XR_LOAD_STEP(4)
	XR_LOAD_STEP(2)
	XR_LOAD_STEP(1)
	return 0;
}
#undef XR_LOAD_STEP

#define XR_STORE2(c)                                                           \
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

/* Copy n < 256 bytes at src + off (off + n <= lim) into the frame at
 * pkt_off: the tail of a page's piece, or a transmit descriptor's
 * headers. */
XR_INLINE int xr_frame_store_short(struct xdp_md *ctx, __u32 pkt_off,
				   __u8 *src, __u32 off, __u32 n,
				   const __u32 lim)
{
	XR_STORE2(128)
	XR_STORE2(64)
	XR_STORE2(32)
	XR_STORE2(16)
	XR_STORE2(8)
	XR_STORE2(4)
	XR_STORE2(2)
	XR_STORE2(1)
	return 0;
}

/* Copy n bytes (in + n <= 4096) of page, from in, into the frame at
 * pkt_off. */
XR_INLINE int xr_page_store(struct xdp_md *ctx, __u32 pkt_off,
			    struct xr_page *page, __u32 in, __u32 n)
{
	const __u32 lim = XR_PAGE_SIZE, off = in;
	__u8 *src = page->b;

	if (in >= XR_PAGE_SIZE || n > XR_PAGE_SIZE - in)
		return -1;
	XR_STORE2(4096)
	XR_STORE2(2048)
	XR_STORE2(1024)
	XR_STORE2(512)
	XR_STORE2(256)
	return xr_frame_store_short(ctx, pkt_off, src, off, n, lim);
}
#undef XR_STORE2

/* Copy [pos, pos + len) of mem, at most max_pages pages, from the frame at
 * pkt_off (to_frame 0) or to it (to_frame 1); 0, or -1 when a page is
 * missing, a piece's copy fails or the range needs more pages.  The
 * direction is a constant at every call, so only one copy is compiled in
 * (a function pointer instead would be inlined too late for the compiler
 * to keep the bounds older verifiers need). */
XR_INLINE int xr_pages_copy(struct xdp_md *ctx, void *mem, __u64 pos,
			    __u32 pkt_off, __u32 len, __u32 max_pages,
			    int to_frame)
{
	__u32 i;

#pragma clang loop unroll(disable)
	for (i = 0; i < max_pages; i++) {
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
		if (to_frame ? xr_page_store(ctx, pkt_off, page, in, n) :
			       xr_page_load(ctx, pkt_off, page, in, n))
			return -1;
		pos += n;
		pkt_off += n;
		len -= n;
	}
	return len ? -1 : 0;
}

#endif /* XR_LIB_PAGES_H */
