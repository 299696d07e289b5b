/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Frames the library transmits, one job: Ethernet + IPv4/IPv6 + UDP +
 * xroce header + payload, with every checksum right.  A path keeps a
 * template of its Ethernet/IP/UDP headers (addresses, ports, ECT) and each
 * packet copies it and fills in lengths and checksums.  Pure code over
 * caller-provided buffers: unit tests check it byte for byte.
 */
#ifndef XR_USER_PKTBUILD_H
#define XR_USER_PKTBUILD_H

#include <stddef.h>
#include <stdint.h>

#include "contract/wire.h"

#define XR_TMPL_MAX 62 /* 14 + 40 + 8 */

struct xr_tmpl {
	uint8_t hdr[XR_TMPL_MAX];
	uint8_t len;          /* 42 (IPv4) or 62 (IPv6) */
	uint8_t v6;
	uint8_t ecn;          /* ECN codepoint of data packets (ECT(0)) */
	uint8_t rsvd;
	uint32_t pseudo;      /* partial sum of the pseudo header addresses */
};

/* Build a template.  Addresses: 4 or 16 bytes, network order.  Ports in
 * host order.  ecn: 0..3 (xroce data uses ECT(0) = 2). */
void xr_tmpl_init(struct xr_tmpl *t, const uint8_t src_mac[6],
		  const uint8_t dst_mac[6], int v6, const void *saddr,
		  const void *daddr, uint16_t sport, uint16_t dport, uint8_t ecn);
void xr_tmpl_set_sport(struct xr_tmpl *t, uint16_t sport);

/* Bytes of headers before the xroce header. */
static inline size_t xr_tmpl_l4_payload_off(const struct xr_tmpl *t)
{
	return t->len;
}

/* Write a complete frame into buf: template, the xroce header hdr of
 * hdr_len bytes (already in network order), then plen bytes of payload
 * copied from payload (checksummed while copied).  Returns the frame
 * length.  buf must hold t->len + hdr_len + plen bytes. */
size_t xr_build_frame(uint8_t *buf, const struct xr_tmpl *t, const void *hdr,
		      size_t hdr_len, const void *payload, size_t plen);

/* The same with the payload gathered from niov pieces. */
struct xr_iov {
	const void *base;
	size_t len;
};

size_t xr_build_frame_v(uint8_t *buf, const struct xr_tmpl *t, const void *hdr,
			size_t hdr_len, const struct xr_iov *iov, int niov);

/* Only the headers (template + hdr) of that frame, into buf, with lengths
 * and checksums covering the payload, which is summed where it lies and
 * sent from there (multi-buffer AF_XDP: header frame + payload in place).
 * Returns the header length. */
size_t xr_build_hdr_v(uint8_t *buf, const struct xr_tmpl *t, const void *hdr,
		      size_t hdr_len, const struct xr_iov *iov, int niov);

#endif /* XR_USER_PKTBUILD_H */
