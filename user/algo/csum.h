/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Internet checksum (RFC 1071) for packets libxroce builds in userspace.
 *
 * Representation.  A "partial sum" is a 32-bit value whose ones'-complement
 * fold is the sum of the buffer's 16-bit words *as they lie in memory*
 * (loaded in host order).  The ones'-complement sum does not depend on byte
 * order, so the folded result can be stored into a header with memcpy (or
 * assigned to a __sum16/__u16 check field) as is: no htons anywhere.  Only
 * values that are numbers rather than bytes (the pseudo-header length and
 * protocol) need converting, and the pseudo-header helpers do that.
 *
 * Combining pieces.  A buffer's partial sum assumes the buffer starts at an
 * even offset of the checksummed data.  A piece that starts at an odd
 * offset has every byte in the other half of its 16-bit word, so its sum
 * must be byte-swapped before adding: xr_csum_block_add(sum, piece_sum,
 * piece_offset) does that.  So a UDP datagram can be summed as
 *     s = xr_csum_partial(udp_header_and_xroce_header, hlen, 0);
 *     s = xr_csum_block_add(s, xr_csum_copy(frame + hlen, payload, plen, 0), hlen);
 *     s = xr_csum_add(s, xr_csum_pseudo4(saddr, daddr, IPPROTO_UDP, hlen + plen));
 *     udp->check = xr_csum_udp_final(s);
 * or, with an even hlen, by chaining the running sum through each call.
 */
#ifndef XR_USER_CSUM_H
#define XR_USER_CSUM_H

#include <stddef.h>
#include <stdint.h>

/* Partial sum of len bytes at buf (any alignment, any length) added to sum.
 * An odd trailing byte counts as the first byte of a zero-padded word. */
uint32_t xr_csum_partial(const void *buf, size_t len, uint32_t sum);

/* Copy len bytes from src to dst (must not overlap) and return the partial
 * sum of those bytes added to sum.  One pass over the data; measured faster
 * than memcpy + xr_csum_partial (see tests/unit/test_csum.c --bench). */
uint32_t xr_csum_copy(void *dst, const void *src, size_t len, uint32_t sum);

/* Fold a partial sum to 16 bits and complement it: the value to store in an
 * IPv4 header or ICMP checksum field (memory order, see above). */
uint16_t xr_csum_fold(uint32_t sum);

/* The same for UDP, where 0 means "no checksum": a computed 0 is sent as
 * 0xffff (RFC 768; mandatory for IPv6, RFC 8200 8.1). */
uint16_t xr_csum_udp_final(uint32_t sum);

/* Partial sums of the pseudo-headers.  Addresses are in network order (4 or
 * 16 bytes, any alignment); proto is IPPROTO_*; len is the L4 length (UDP
 * header + payload) as a host-order number. */
uint32_t xr_csum_pseudo4(const void *saddr, const void *daddr, uint8_t proto,
			 uint16_t len);
uint32_t xr_csum_pseudo6(const void *saddr, const void *daddr, uint8_t proto,
			 uint32_t len);

/* Checksum of a contiguous UDP datagram (header + payload, udp_len bytes,
 * its check field zero), ready to store in the check field. */
uint16_t xr_udp4_csum(const void *saddr, const void *daddr, const void *udp,
		      size_t udp_len);
uint16_t xr_udp6_csum(const void *saddr, const void *daddr, const void *udp,
		      size_t udp_len);

/* Header checksum of an IPv4 header of ihl_bytes (its check field zero). */
uint16_t xr_ip4_hdr_csum(const void *iph, size_t ihl_bytes);

/* Ones'-complement addition of two partial sums. */
static inline uint32_t xr_csum_add(uint32_t a, uint32_t b)
{
	a += b;
	return a + (a < b); /* end-around carry */
}

/* Add the partial sum of a piece that starts at byte offset 'offset' of the
 * checksummed data.  Rotating a 32-bit partial sum by 8 bits swaps the
 * bytes of its 16-bit fold, which is what an odd start needs. */
static inline uint32_t xr_csum_block_add(uint32_t sum, uint32_t piece,
					 size_t offset)
{
	if (offset & 1)
		piece = (piece >> 8) | (piece << 24);
	return xr_csum_add(sum, piece);
}

/* The portable implementations.  xr_csum_partial / xr_csum_copy use a vector
 * version on CPUs that have one (AVX2) for buffers where it pays; these are
 * exposed so that tests check and benchmarks time each path. */
uint32_t xr_csum_partial_generic(const void *buf, size_t len, uint32_t sum);
uint32_t xr_csum_copy_generic(void *dst, const void *src, size_t len,
			      uint32_t sum);

#endif /* XR_USER_CSUM_H */
