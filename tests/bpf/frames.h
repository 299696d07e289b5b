/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Test frames, one job: build Ethernet + IPv4/IPv6 + UDP (or TCP, or ARP)
 * frames byte by byte, and take apart the frames a program sends back.
 *
 * Checksums here are the textbook RFC 1071 sum over big-endian 16-bit words,
 * written out independently of user/csum.c and bpf/lib/udp_csum.h, so a bug
 * shared by those two cannot hide itself in the tests.
 */
#ifndef XR_TEST_FRAMES_H
#define XR_TEST_FRAMES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FR_MAX 10240 /* jumbo frames (MTU 9000) arrive as multi-buffer */
#define FR_ETH 14
#define FR_IP4 20
#define FR_IP6 40
#define FR_UDP 8
#define FR_ETH_IP4 0x0800
#define FR_ETH_IP6 0x86dd
#define FR_ETH_ARP 0x0806

/* One end of a frame.  ip holds 4 (IPv4, in ip[0..3]) or 16 bytes. */
struct fr_ep {
	uint8_t mac[6];
	uint8_t ip[16];
	uint16_t port;
};

static inline void fr_put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static inline void fr_put32(uint8_t *p, uint32_t v)
{
	fr_put16(p, v >> 16);
	fr_put16(p + 2, v & 0xffff);
}

static inline void fr_put64(uint8_t *p, uint64_t v)
{
	fr_put32(p, v >> 32);
	fr_put32(p + 4, v & 0xffffffff);
}

static inline uint16_t fr_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t fr_get32(const uint8_t *p)
{
	return (uint32_t)fr_get16(p) << 16 | fr_get16(p + 2);
}

static inline uint64_t fr_get64(const uint8_t *p)
{
	return (uint64_t)fr_get32(p) << 32 | fr_get32(p + 4);
}

/* RFC 1071: sum of big-endian 16-bit words, an odd last byte padded with a
 * zero, folded; returned as a number (not complemented). */
static inline uint16_t fr_sum(const uint8_t *p, size_t len, uint32_t init)
{
	uint64_t s = init;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		s += (uint32_t)p[len - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* Sum of the pseudo header of an L4 segment of l4len bytes. */
static inline uint16_t fr_pseudo(int v6, const uint8_t *saddr,
				 const uint8_t *daddr, uint8_t proto,
				 uint32_t l4len)
{
	uint8_t ph[40];
	size_t alen = v6 ? 16 : 4;

	memset(ph, 0, sizeof(ph));
	memcpy(ph, saddr, alen);
	memcpy(ph + alen, daddr, alen);
	if (v6) {
		fr_put32(ph + 32, l4len);
		ph[39] = proto;
		return fr_sum(ph, 40, 0);
	}
	ph[9] = proto;
	fr_put16(ph + 10, (uint16_t)l4len);
	return fr_sum(ph, 12, 0);
}

/* Where the parts of a frame are.  Offsets from the frame start. */
struct fr_view {
	int v6;
	size_t l3;       /* IP header */
	size_t l4;       /* UDP header */
	size_t body;     /* UDP payload */
	size_t body_len; /* by the UDP length field */
	size_t len;      /* whole frame */
};

/* Ethernet + IP header for an L4 segment of l4len bytes.  tclass is the
 * IPv4 TOS / IPv6 traffic class (DSCP << 2 | ECN).  Returns the L4 offset. */
static inline size_t fr_l3(uint8_t *f, int v6, const struct fr_ep *s,
			   const struct fr_ep *d, uint8_t tclass, uint8_t proto,
			   size_t l4len)
{
	memcpy(f, d->mac, 6);
	memcpy(f + 6, s->mac, 6);
	fr_put16(f + 12, v6 ? FR_ETH_IP6 : FR_ETH_IP4);
	if (!v6) {
		uint8_t *ip = f + FR_ETH;

		memset(ip, 0, FR_IP4);
		ip[0] = 0x45;
		ip[1] = tclass;
		fr_put16(ip + 2, (uint16_t)(FR_IP4 + l4len));
		fr_put16(ip + 4, 0x1234); /* id */
		fr_put16(ip + 6, 0x4000); /* DF */
		ip[8] = 61;               /* ttl: anything but the reply's 64 */
		ip[9] = proto;
		memcpy(ip + 12, s->ip, 4);
		memcpy(ip + 16, d->ip, 4);
		fr_put16(ip + 10, (uint16_t)~fr_sum(ip, FR_IP4, 0));
		return FR_ETH + FR_IP4;
	} else {
		uint8_t *ip = f + FR_ETH;

		/* version 6, traffic class, flow label 0x5a5a5 */
		fr_put32(ip, 6u << 28 | (uint32_t)tclass << 20 | 0x5a5a5);
		fr_put16(ip + 4, (uint16_t)l4len);
		ip[6] = proto;
		ip[7] = 61;
		memcpy(ip + 8, s->ip, 16);
		memcpy(ip + 24, d->ip, 16);
		return FR_ETH + FR_IP6;
	}
}

/* The frame's source / destination address bytes. */
static inline const uint8_t *fr_saddr(const uint8_t *f, int v6)
{
	return f + FR_ETH + (v6 ? 8 : 12);
}

static inline const uint8_t *fr_daddr(const uint8_t *f, int v6)
{
	return f + FR_ETH + (v6 ? 24 : 16);
}

/* Recompute the UDP checksum of the datagram at l4 (udp_len bytes by its
 * length field).  A computed 0 is sent as 0xffff. */
static inline void fr_udp_fix(uint8_t *f, int v6, size_t l4)
{
	uint8_t *u = f + l4;
	uint16_t ulen = fr_get16(u + 4);
	uint32_t s;
	uint16_t c;

	fr_put16(u + 6, 0);
	s = fr_pseudo(v6, fr_saddr(f, v6), fr_daddr(f, v6), 17, ulen);
	c = (uint16_t)~fr_sum(u, ulen, s);
	fr_put16(u + 6, c ? c : 0xffff);
}

/* A whole UDP frame carrying body.  Returns the frame length. */
static inline size_t fr_udp(uint8_t *f, int v6, const struct fr_ep *s,
			    const struct fr_ep *d, uint8_t tclass,
			    const void *body, size_t blen)
{
	size_t l4 = fr_l3(f, v6, s, d, tclass, 17, FR_UDP + blen);
	uint8_t *u = f + l4;

	fr_put16(u, s->port);
	fr_put16(u + 2, d->port);
	fr_put16(u + 4, (uint16_t)(FR_UDP + blen));
	memcpy(u + FR_UDP, body, blen);
	fr_udp_fix(f, v6, l4);
	return l4 + FR_UDP + blen;
}

/* A TCP SYN from s to d (a frame xroce must pass untouched). */
static inline size_t fr_tcp_syn(uint8_t *f, int v6, const struct fr_ep *s,
				const struct fr_ep *d)
{
	size_t l4 = fr_l3(f, v6, s, d, 0, 6, 20);
	uint8_t *t = f + l4;
	uint16_t c;

	memset(t, 0, 20);
	fr_put16(t, s->port);
	fr_put16(t + 2, d->port);
	fr_put32(t + 4, 0x01020304);
	t[12] = 5 << 4;
	t[13] = 0x02; /* SYN */
	fr_put16(t + 14, 65535);
	c = (uint16_t)~fr_sum(t, 20, fr_pseudo(v6, s->ip, d->ip, 6, 20));
	fr_put16(t + 16, c);
	return l4 + 20;
}

/* An ARP request from s for d's IPv4 address. */
static inline size_t fr_arp(uint8_t *f, const struct fr_ep *s,
			    const struct fr_ep *d)
{
	uint8_t *a = f + FR_ETH;

	memset(f, 0xff, 6);
	memcpy(f + 6, s->mac, 6);
	fr_put16(f + 12, FR_ETH_ARP);
	fr_put16(a, 1);          /* Ethernet */
	fr_put16(a + 2, 0x0800); /* IPv4 */
	a[4] = 6;
	a[5] = 4;
	fr_put16(a + 6, 1);      /* request */
	memcpy(a + 8, s->mac, 6);
	memcpy(a + 14, s->ip, 4);
	memset(a + 18, 0, 6);
	memcpy(a + 24, d->ip, 4);
	return FR_ETH + 28;
}

/* Take apart an Ethernet + IP + UDP frame; 0 if it is one, -1 if not. */
static inline int fr_decode(const uint8_t *f, size_t len, struct fr_view *v)
{
	uint16_t proto;

	memset(v, 0, sizeof(*v));
	v->len = len;
	if (len < FR_ETH)
		return -1;
	proto = fr_get16(f + 12);
	v->l3 = FR_ETH;
	if (proto == FR_ETH_IP4) {
		if (len < FR_ETH + FR_IP4 || f[FR_ETH] != 0x45 ||
		    f[FR_ETH + 9] != 17)
			return -1;
		v->l4 = FR_ETH + FR_IP4;
	} else if (proto == FR_ETH_IP6) {
		if (len < FR_ETH + FR_IP6 || (f[FR_ETH] >> 4) != 6 ||
		    f[FR_ETH + 6] != 17)
			return -1;
		v->v6 = 1;
		v->l4 = FR_ETH + FR_IP6;
	} else {
		return -1;
	}
	if (len < v->l4 + FR_UDP)
		return -1;
	v->body = v->l4 + FR_UDP;
	v->body_len = fr_get16(f + v->l4 + 4) - FR_UDP;
	return 0;
}

/* IPv4 header checksum right? */
static inline int fr_ip4_csum_ok(const uint8_t *f)
{
	return fr_sum(f + FR_ETH, FR_IP4, 0) == 0xffff;
}

/* UDP checksum (non-zero and right) of a decoded frame. */
static inline int fr_udp_csum_ok(const uint8_t *f, const struct fr_view *v)
{
	uint16_t ulen = fr_get16(f + v->l4 + 4);

	if (fr_get16(f + v->l4 + 6) == 0 || v->l4 + ulen > v->len)
		return 0;
	return fr_sum(f + v->l4, ulen,
		      fr_pseudo(v->v6, fr_saddr(f, v->v6), fr_daddr(f, v->v6),
				17, ulen)) == 0xffff;
}

/* The IP traffic class (TOS) of a frame. */
static inline uint8_t fr_tclass(const uint8_t *f, int v6)
{
	if (!v6)
		return f[FR_ETH + 1];
	return (uint8_t)(fr_get16(f + FR_ETH) >> 4);
}

#endif /* XR_TEST_FRAMES_H */
