// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Frame construction.  Headers are written at byte offsets with memcpy:
 * the IP header starts 14 bytes into a frame, so casting to struct iphdr
 * would be a misaligned access.
 */
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "csum.h"
#include "pktbuild.h"

#define XR_TTL 64
#define ETH_LEN 14
#define IP4_LEN 20
#define IP6_LEN 40
#define UDP_LEN 8

static inline void put16(uint8_t *p, uint16_t host)
{
	uint16_t v = htons(host);

	memcpy(p, &v, 2);
}

static inline void put32(uint8_t *p, uint32_t host)
{
	uint32_t v = htonl(host);

	memcpy(p, &v, 4);
}

void xr_tmpl_init(struct xr_tmpl *t, const uint8_t src_mac[6],
		  const uint8_t dst_mac[6], int v6, const void *saddr,
		  const void *daddr, uint16_t sport, uint16_t dport, uint8_t ecn)
{
	uint8_t *h = t->hdr, *udp;

	memset(t, 0, sizeof(*t));
	memcpy(h, dst_mac, 6);
	memcpy(h + 6, src_mac, 6);
	t->v6 = !!v6;
	t->ecn = ecn & 3;
	if (!v6) {
		uint8_t *ip = h + ETH_LEN;

		put16(h + 12, 0x0800);
		ip[0] = 0x45;                 /* version 4, 20-byte header */
		ip[1] = t->ecn;               /* DSCP 0, ECN */
		put16(ip + 6, 0x4000);        /* DF: never fragmented */
		ip[8] = XR_TTL;
		ip[9] = IPPROTO_UDP;
		memcpy(ip + 12, saddr, 4);
		memcpy(ip + 16, daddr, 4);
		udp = ip + IP4_LEN;
		t->len = ETH_LEN + IP4_LEN + UDP_LEN;
		t->pseudo = xr_csum_partial(saddr, 4, 0);
		t->pseudo = xr_csum_partial(daddr, 4, t->pseudo);
	} else {
		uint8_t *ip6 = h + ETH_LEN;

		put16(h + 12, 0x86dd);
		put32(ip6, 6u << 28 | (uint32_t)t->ecn << 20);
		ip6[6] = IPPROTO_UDP;
		ip6[7] = XR_TTL;
		memcpy(ip6 + 8, saddr, 16);
		memcpy(ip6 + 24, daddr, 16);
		udp = ip6 + IP6_LEN;
		t->len = ETH_LEN + IP6_LEN + UDP_LEN;
		t->pseudo = xr_csum_partial(saddr, 16, 0);
		t->pseudo = xr_csum_partial(daddr, 16, t->pseudo);
	}
	put16(udp, sport);
	put16(udp + 2, dport);
}

void xr_tmpl_set_sport(struct xr_tmpl *t, uint16_t sport)
{
	put16(t->hdr + t->len - UDP_LEN, sport);
}

size_t xr_build_frame(uint8_t *buf, const struct xr_tmpl *t, const void *hdr,
		      size_t hdr_len, const void *payload, size_t plen)
{
	struct xr_iov iov = { payload, plen };

	return xr_build_frame_v(buf, t, hdr, hdr_len, &iov, plen ? 1 : 0);
}

/* Both builders: headers for hdr_len + the iovs' bytes; the payload is
 * copied after the header (copy) or only summed where it lies. */
static size_t build(uint8_t *buf, const struct xr_tmpl *t, const void *hdr,
		    size_t hdr_len, const struct xr_iov *iov, int niov, int copy);

size_t xr_build_frame_v(uint8_t *buf, const struct xr_tmpl *t, const void *hdr,
			size_t hdr_len, const struct xr_iov *iov, int niov)
{
	return build(buf, t, hdr, hdr_len, iov, niov, 1);
}

size_t xr_build_hdr_v(uint8_t *buf, const struct xr_tmpl *t, const void *hdr,
		      size_t hdr_len, const struct xr_iov *iov, int niov)
{
	return build(buf, t, hdr, hdr_len, iov, niov, 0);
}

static size_t build(uint8_t *buf, const struct xr_tmpl *t, const void *hdr,
		    size_t hdr_len, const struct xr_iov *iov, int niov, int copy)
{
	size_t plen = 0, udp_len, off;
	int i;

	for (i = 0; i < niov; i++)
		plen += iov[i].len;
	udp_len = UDP_LEN + hdr_len + plen;
	uint8_t *udp = buf + t->len - UDP_LEN;
	uint8_t *l4p = buf + t->len;
	uint8_t pw[8];
	uint32_t sum;

	memcpy(buf, t->hdr, t->len);
	if (!t->v6) {
		uint8_t *ip = buf + ETH_LEN;
		uint16_t c;

		put16(ip + 2, (uint16_t)(IP4_LEN + udp_len));
		c = xr_ip4_hdr_csum(ip, IP4_LEN); /* check field is 0 in the template */
		memcpy(ip + 10, &c, 2);
	} else {
		put16(buf + ETH_LEN + 4, (uint16_t)udp_len);
	}
	put16(udp + 4, (uint16_t)udp_len);
	memset(udp + 6, 0, 2);
	memcpy(l4p, hdr, hdr_len);

	/* UDP checksum: pseudo header (addresses from the template, then
	 * protocol and length), UDP header, xroce header, payload summed while
	 * it is copied.  Header lengths are even, so the pieces combine
	 * without byte swapping. */
	sum = xr_csum_partial(udp, UDP_LEN, t->pseudo);
	sum = xr_csum_partial(l4p, hdr_len, sum);
	/* Each piece is summed while copied; a piece starting at an odd
	 * offset of the datagram is byte-swapped into place. */
	off = hdr_len;
	for (i = 0; i < niov; i++) {
		uint32_t part;

		if (!iov[i].len)
			continue;
		part = copy ? xr_csum_copy(l4p + off, iov[i].base, iov[i].len, 0)
			    : xr_csum_partial(iov[i].base, iov[i].len, 0);
		sum = xr_csum_block_add(sum, part, UDP_LEN + off);
		off += iov[i].len;
	}
	if (t->v6) {
		put32(pw, (uint32_t)udp_len);
		put32(pw + 4, IPPROTO_UDP);
		sum = xr_csum_partial(pw, 8, sum);
	} else {
		put16(pw, IPPROTO_UDP);
		put16(pw + 2, (uint16_t)udp_len);
		sum = xr_csum_partial(pw, 4, sum);
	}
	{
		uint16_t c = xr_csum_udp_final(sum);

		memcpy(udp + 6, &c, 2);
	}
	return copy ? t->len + hdr_len + plen : t->len + hdr_len;
}
