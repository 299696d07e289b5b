/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * SipHash-2-4 (Aumasson and Bernstein), one job: the keyed MAC of packet
 * headers (docs/PROTOCOL.md, "Keyed connections").  Pure functions over
 * 64-bit words, no helpers and no calls, so the XDP program and the
 * library compute the very same thing, and the unit tests check it
 * against libsodium's crypto_shorthash_siphash24 (tests/unit/test_siphash.c).
 *
 * A key is two 64-bit words k0, k1: its 16 bytes read as two little-endian
 * numbers.  A MAC is the 64-bit result, written to the wire as 8
 * little-endian bytes (what libsodium writes for the same input).
 */
#ifndef XR_CONTRACT_SIPHASH_H
#define XR_CONTRACT_SIPHASH_H

#include <linux/types.h>
#include "inline.h"

/* Little-endian 64-bit load of 8 bytes at p, whatever the alignment.  In
 * BPF one word load: the verifier accepts unaligned packet loads where the
 * CPU does (x86-64, arm64), and byte loads would cost the data path some
 * 300 instructions per header; in C a memcpy, which is defined. */
XR_INLINE __u64 xr_le64_load(const void *p)
{
	__u64 v;

#ifdef __bpf__
	v = *(const __u64 *)p;
#else
	__builtin_memcpy(&v, p, 8);
#endif
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

/* Store v at p as 8 little-endian bytes. */
XR_INLINE void xr_le64_store(void *p, __u64 v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
#ifdef __bpf__
	*(__u64 *)p = v;
#else
	__builtin_memcpy(p, &v, 8);
#endif
}

#define XR_ROTL64(x, b) (((x) << (b)) | ((x) >> (64 - (b))))

struct xr_sip {
	__u64 v0, v1, v2, v3;
};

XR_INLINE void xr_sip_round(struct xr_sip *s)
{
	s->v0 += s->v1;
	s->v1 = XR_ROTL64(s->v1, 13);
	s->v1 ^= s->v0;
	s->v0 = XR_ROTL64(s->v0, 32);
	s->v2 += s->v3;
	s->v3 = XR_ROTL64(s->v3, 16);
	s->v3 ^= s->v2;
	s->v0 += s->v3;
	s->v3 = XR_ROTL64(s->v3, 21);
	s->v3 ^= s->v0;
	s->v2 += s->v1;
	s->v1 = XR_ROTL64(s->v1, 17);
	s->v1 ^= s->v2;
	s->v2 = XR_ROTL64(s->v2, 32);
}

XR_INLINE void xr_sip_init(struct xr_sip *s, __u64 k0, __u64 k1)
{
	s->v0 = k0 ^ 0x736f6d6570736575ULL;
	s->v1 = k1 ^ 0x646f72616e646f6dULL;
	s->v2 = k0 ^ 0x6c7967656e657261ULL;
	s->v3 = k1 ^ 0x7465646279746573ULL;
}

/* One 8-byte block m of the message (two compression rounds). */
XR_INLINE void xr_sip_block(struct xr_sip *s, __u64 m)
{
	s->v3 ^= m;
	xr_sip_round(s);
	xr_sip_round(s);
	s->v0 ^= m;
}

/* The last block (the message's remaining bytes in its low end, its
 * length in the top byte), then four finalization rounds. */
XR_INLINE __u64 xr_sip_final(struct xr_sip *s, __u64 last)
{
	xr_sip_block(s, last);
	s->v2 ^= 0xff;
	xr_sip_round(s);
	xr_sip_round(s);
	xr_sip_round(s);
	xr_sip_round(s);
	return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

/* SipHash-2-4 of len bytes at p, any length (userspace, tests). */
static inline __u64 xr_siphash24(__u64 k0, __u64 k1, const void *p, __u64 len)
{
	const __u8 *b = (const __u8 *)p;
	__u64 i, last = len << 56;
	struct xr_sip s;

	xr_sip_init(&s, k0, k1);
	for (i = 0; i + 8 <= len; i += 8)
		xr_sip_block(&s, xr_le64_load(b + i));
	for (; i < len; i++)
		last |= (__u64)b[i] << (8 * (i & 7));
	return xr_sip_final(&s, last);
}

/* The MAC of a packet header of hdr_len bytes (a multiple of 8, at least
 * 16) at h: SipHash-2-4 of the header with its bytes 8..15, where the MAC
 * itself travels, left out, and also bytes gap_lo..gap_hi-1 when gap is
 * set (both multiples of 8, at least 16; a header's part that says it
 * carries nothing, so that the MAC need not spend two rounds per word on
 * it: an ACK without SACK bits, wire.h).  That is, of bytes 0..7 followed
 * by bytes 16..hdr_len-1 less the gap.  With constant sizes the loop
 * unrolls into loads at constant offsets, which is what the verifier needs
 * on packet memory; gap itself may vary (one branch per skipped word). */
XR_INLINE __u64 xr_mac_hdr_gap(__u64 k0, __u64 k1, const void *h,
			       __u32 hdr_len, __u32 gap_lo, __u32 gap_hi,
			       int gap)
{
	const __u8 *b = (const __u8 *)h;
	__u32 i, len = hdr_len - 8;
	struct xr_sip s;

	xr_sip_init(&s, k0, k1);
	xr_sip_block(&s, xr_le64_load(b));
#ifdef __clang__
#pragma clang loop unroll(full)
#endif
	for (i = 16; i < hdr_len; i += 8) {
		if (gap && i >= gap_lo && i < gap_hi)
			continue;
		xr_sip_block(&s, xr_le64_load(b + i));
	}
	if (gap)
		len -= gap_hi - gap_lo;
	return xr_sip_final(&s, (__u64)len << 56);
}

/* The MAC of a whole header (no gap), as above. */
XR_INLINE __u64 xr_mac_hdr(__u64 k0, __u64 k1, const void *h, __u32 hdr_len)
{
	return xr_mac_hdr_gap(k0, k1, h, hdr_len, 0, 0, 0);
}

#endif /* XR_CONTRACT_SIPHASH_H */
