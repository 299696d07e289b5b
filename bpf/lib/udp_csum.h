/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Full Internet checksums in XDP, one job: compute and verify IPv4 header and
 * UDP checksums over a linear frame with bpf_csum_diff.  bpf_csum_diff takes
 * sizes that are multiples of 4 and at most 512 bytes, so long spans are
 * summed in 256-byte steps, the remainder in power-of-two steps, and the
 * last 0..3 bytes by hand.  (Incremental fix-ups live in csum.h.)
 */
#ifndef XR_LIB_UDP_CSUM_H
#define XR_LIB_UDP_CSUM_H

#include <linux/types.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <linux/in.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "lib/parse.h"

/* Longest UDP datagram whose checksum the program verifies. */
#define XR_CSUM_MAX_SPAN 9216

XR_INLINE __u16 xr_csum_fold(__u64 sum)
{
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)sum;
}

/* bpf_csum_diff returns a negative errno on bad sizes; our sizes are
 * constants that are multiples of 4, so a failure means a verifier or
 * kernel surprise: treat the sum as 0, which makes verification fail. */
XR_INLINE __u32 xr_csum_add(void *p, __u32 size, __u32 seed)
{
	__s64 r = bpf_csum_diff(0, 0, p, size, seed);

	return r < 0 ? 0 : (__u32)r;
}

struct xr_pseudo4 {
	__be32 saddr;
	__be32 daddr;
	__u8 zero;
	__u8 proto;
	__be16 len;
};

struct xr_pseudo6 {
	struct in6_addr saddr;
	struct in6_addr daddr;
	__be32 len;
	__u8 zero[3];
	__u8 proto;
};

/* Sum of the UDP pseudo header for the addresses currently in the frame. */
XR_INLINE __u32 xr_udp_pseudo_sum(const struct xr_hdrs *h, void *end,
				   __u16 udp_len)
{
	if (!h->v6) {
		struct iphdr *ip4 = xr_ip4(h, end);

		if (!ip4)
			return 0;
		struct xr_pseudo4 ph = {
			.saddr = ip4->saddr,
			.daddr = ip4->daddr,
			.proto = IPPROTO_UDP,
			.len = bpf_htons(udp_len),
		};
		return xr_csum_add(&ph, sizeof(ph), 0);
	} else {
		struct ipv6hdr *ip6 = xr_ip6(h, end);

		if (!ip6)
			return 0;
		struct xr_pseudo6 ph = {
			.saddr = ip6->saddr,
			.daddr = ip6->daddr,
			.len = bpf_htonl(udp_len),
			.proto = IPPROTO_UDP,
		};
		return xr_csum_add(&ph, sizeof(ph), 0);
	}
}

/* One power-of-two step of the remainder.  Its offset is derived from the
 * original length, not from a running offset, so the verifier's state is
 * the same whether or not the step ran and it prunes instead of exploring
 * every combination of steps. */
#define XR_CSUM_STEP(c)                                                  \
	if (rem & (c)) {                                                 \
		__u8 *q = p + ((base + (rem & ~((c) * 2 - 1))) & 0x3fff);  \
		if ((void *)(q + (c)) > end)                             \
			return 0;                                        \
		sum = xr_csum_add(q, (c), sum);                          \
	}

/* Sum of len bytes of the frame starting at p (len <= XR_CSUM_MAX_SPAN).
 * Returns 0 if the span leaves the frame (caller's length checks make that
 * impossible; this keeps the verifier and a hostile length honest). */
XR_INLINE __u32 xr_csum_span(__u8 *p, void *end, __u32 len, __u32 sum)
{
	__u32 base, rem, i;

	if (len > XR_CSUM_MAX_SPAN)
		return 0;
#pragma clang loop unroll(disable)
	for (i = 0; i < XR_CSUM_MAX_SPAN / 256; i++) {
		__u8 *q;

		if (len - i * 256 < 256)
			break;
		q = p + ((i * 256) & 0x3fff);
		if ((void *)(q + 256) > end)
			return 0;
		sum = xr_csum_add(q, 256, sum);
	}
	base = len & ~0xffu;
	rem = len & 0xff;
	XR_CSUM_STEP(128)
	XR_CSUM_STEP(64)
	XR_CSUM_STEP(32)
	XR_CSUM_STEP(16)
	XR_CSUM_STEP(8)
	XR_CSUM_STEP(4)
	if (rem & 3) {
		/* The first trailing byte is the high byte of a 16-bit word (its
		 * offset is a multiple of 4).  Pad to a 32-bit word with zeros and
		 * add it in network order, as bpf_csum_diff would. */
		__u8 *q = p + ((base + (rem & ~3u)) & 0x3fff);
		__u8 b[4] = {};

		if ((void *)(q + 1) > end)
			return 0;
		b[0] = q[0];
		if ((rem & 3) > 1) {
			if ((void *)(q + 2) > end)
				return 0;
			b[1] = q[1];
		}
		if ((rem & 3) > 2) {
			if ((void *)(q + 3) > end)
				return 0;
			b[2] = q[2];
		}
		sum = xr_csum_add(b, 4, sum);
	}
	return sum;
}
#undef XR_CSUM_STEP

/* True when the UDP checksum of the datagram (udp_len bytes) is right.
 * IPv4 datagrams without a checksum (0) are refused: xroce always sets it. */
XR_INLINE int xr_udp_csum_ok(const struct xr_hdrs *h, void *end, __u16 udp_len)
{
	__u32 sum;

	if (h->udp->check == 0)
		return 0;
	sum = xr_udp_pseudo_sum(h, end, udp_len);
	sum = xr_csum_span((__u8 *)h->udp, end, udp_len, sum);
	return xr_csum_fold(sum) == 0xffff;
}

/* True when the datagram's checksum field holds just the folded sum of its
 * pseudo header: the form a partially checksummed frame (CHECKSUM_PARTIAL,
 * virtio-net NEEDS_CSUM) has before the transmitter finishes the sum.  Only
 * the headers are read, so this works on multi-buffer frames too. */
XR_INLINE int xr_udp_csum_is_partial(const struct xr_hdrs *h, void *end,
				      __u16 udp_len)
{
	__u32 sum = xr_udp_pseudo_sum(h, end, udp_len);

	return sum && h->udp->check == xr_csum_fold(sum);
}

/* The same for a datagram that continues past the linear part of a
 * multi-buffer (xdp.frags) frame: read in 512-byte pieces through
 * bpf_xdp_load_bytes into buf (512 bytes of scratch), which works across
 * fragments.  Every piece starts at an even offset of the datagram, so
 * the 16-bit words line up as in a contiguous sum. */
#define XR_CSUM_LSTEP(c)                                                 \
	if (rem & (c)) {                                                 \
		if (bpf_xdp_load_bytes(ctx, off + base + (rem & ~((c) * 2 - 1)), \
				       buf, (c)))                        \
			return 0;                                        \
		sum = xr_csum_add(buf, (c), sum);                        \
	}

/* Sum of udp_len bytes of the frame from offset off, added to sum. */
XR_INLINE __u32 xr_csum_frags(struct xdp_md *ctx, __u32 off, __u32 udp_len,
			      __u32 sum, __u8 *buf)
{
	__u32 base, rem, i;

#pragma clang loop unroll(disable)
	for (i = 0; i < XR_CSUM_MAX_SPAN / 512; i++) {
		if (udp_len - i * 512 < 512)
			break;
		if (bpf_xdp_load_bytes(ctx, off + i * 512, buf, 512))
			return 0;
		sum = xr_csum_add(buf, 512, sum);
	}
	base = udp_len & ~511u;
	rem = udp_len & 511;
	XR_CSUM_LSTEP(256)
	XR_CSUM_LSTEP(128)
	XR_CSUM_LSTEP(64)
	XR_CSUM_LSTEP(32)
	XR_CSUM_LSTEP(16)
	XR_CSUM_LSTEP(8)
	XR_CSUM_LSTEP(4)
	if (rem & 3) {
		/* 1..3 trailing bytes, zero-padded to a word (network order). */
		__u32 at = off + base + (rem & ~3u);

		buf[0] = buf[1] = buf[2] = buf[3] = 0;
		if (bpf_xdp_load_bytes(ctx, at, buf, 1))
			return 0;
		if ((rem & 3) > 1 && bpf_xdp_load_bytes(ctx, at + 1, buf + 1, 1))
			return 0;
		if ((rem & 3) > 2 && bpf_xdp_load_bytes(ctx, at + 2, buf + 2, 1))
			return 0;
		sum = xr_csum_add(buf, 4, sum);
	}
	return sum;
}
#undef XR_CSUM_LSTEP

/* Fill in the UDP checksum of a datagram of udp_len bytes. */
XR_INLINE void xr_udp_csum_set(const struct xr_hdrs *h, void *end, __u16 udp_len)
{
	__u32 sum;
	__u16 c;

	h->udp->check = 0;
	sum = xr_udp_pseudo_sum(h, end, udp_len);
	sum = xr_csum_span((__u8 *)h->udp, end, udp_len, sum);
	c = ~xr_csum_fold(sum);
	h->udp->check = c ? c : 0xffff;
}

XR_INLINE void xr_ip4_csum_set(struct iphdr *ip)
{
	ip->check = 0;
	ip->check = ~xr_csum_fold(xr_csum_add(ip, sizeof(*ip), 0));
}

#endif /* XR_LIB_UDP_CSUM_H */
