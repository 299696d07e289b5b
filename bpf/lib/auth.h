/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Authentication, one job: find the connection a packet names and decide
 * whether the packet may speak for it: the connection is connected, the
 * packet comes from one of the peer's addresses (and, for data and probes,
 * one of its entropy ports), and it carries the token we chose or, on a
 * keyed connection, a right MAC of its header (lib/mac.h).  Unknown and
 * refused packets get no answer (docs/PROTOCOL.md 8.6).  The including
 * program defines the xr_conns map before this.
 */
#ifndef XR_LIB_AUTH_H
#define XR_LIB_AUTH_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "contract/abi.h"
#include "contract/inline.h"
#include "lib/parse.h"
#include "lib/mac.h"

/* The frame's IP source as an IPv6 address (IPv4 as ::ffff:a.b.c.d, the
 * form peer addresses are kept in); 0 if it cannot be read or is an
 * IPv4-mapped IPv6 source, which never appears on the wire (RFC 4291
 * 2.5.5.2) and must not pass for an IPv4 peer's address. */
XR_INLINE int xr_src_addr(const struct xr_hdrs *h, void *end, __u32 a[4])
{
	struct ipv6hdr *ip6;
	struct iphdr *ip;

	if (!h->v6) {
		ip = xr_ip4(h, end);
		if (!ip)
			return 0;
		a[0] = 0;
		a[1] = 0;
		a[2] = bpf_htonl(0xffff);
		a[3] = ip->saddr;
		return 1;
	}
	ip6 = xr_ip6(h, end);
	if (!ip6)
		return 0;
	__builtin_memcpy(a, &ip6->saddr, 16);
	return !(a[0] == 0 && a[1] == 0 && a[2] == bpf_htonl(0xffff));
}

/* Is the frame's source one of the connection's peer addresses, and its
 * source port inside the peer's entropy range? */
XR_INLINE int xr_peer_ok(const struct xr_conn *c, const struct xr_hdrs *h,
			 void *end, int reply)
{
	__u16 sport = bpf_ntohs(h->udp->source);
	__u32 a[4], i;

	/* Data and probes come from one of the peer's entropy ports; replies
	 * come from its data port, which the dispatcher already matched. */
	if (!reply &&
	    (__u32)(__u16)(sport - c->peer_sport_lo) >= c->peer_sport_n)
		return 0;
	if (!xr_src_addr(h, end, a))
		return 0;
#pragma clang loop unroll(full)
	for (i = 0; i < XR_MAX_PLANES; i++) {
		const __u32 *p = (const __u32 *)c->peer_addr[i];

		if (i >= c->npeer)
			break;
		if (p[0] == a[0] && p[1] == a[1] && p[2] == a[2] && p[3] == a[3])
			return 1;
	}
	return 0;
}

/* The connection conn_id if the packet, whose xroce header x (hdr_len
 * bytes, inside the frame) carries the epoch flag epoch_flag, may speak
 * for it (see above); otherwise NULL, with *why set to the drop reason. */
XR_INLINE struct xr_conn *xr_auth(const struct xr_hdrs *h, void *end,
				  __u32 conn_id, const __u8 *x, __u32 hdr_len,
				  int reply, __u8 epoch_flag, __u32 *why)
{
	struct xr_conn *c = bpf_map_lookup_elem(&xr_conns, &conn_id);
	__be64 token = *(const __be64 *)(x + 8);

	if (!c) {
		*why = XR_STAT_DROP_NO_CONN;
		return NULL;
	}
	if (c->state != XR_CONN_RTS) {
		*why = XR_STAT_DROP_CONN_STATE;
		return NULL;
	}
	if (c->flags & XR_CONN_F_MAC) {
		/* The address first: it is cheaper than the MAC. */
		if (!xr_peer_ok(c, h, end, reply))
			*why = XR_STAT_DROP_PEER;
		else if (!xr_mac_ok(c, x, hdr_len, reply, epoch_flag))
			*why = XR_STAT_DROP_MAC;
		else
			return c;
		return NULL;
	}
	if (bpf_be64_to_cpu(token) != c->rx_token) {
		*why = XR_STAT_DROP_TOKEN;
		return NULL;
	}
	if (!xr_peer_ok(c, h, end, reply)) {
		*why = XR_STAT_DROP_PEER;
		return NULL;
	}
	return c;
}

#endif /* XR_LIB_AUTH_H */
