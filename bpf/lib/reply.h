/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Replies in place, one job: turn the received frame into a frame going
 * back to its sender, carrying body_len bytes of UDP payload, ready for
 * XDP_TX.  MACs, addresses and ports are swapped, lengths set, the frame
 * trimmed (or grown) to size; the caller writes the body and then calls
 * xr_reply_finish() for the checksums.  ECN is cleared on replies: marking
 * an ACK tells the sender nothing useful.
 */
#ifndef XR_LIB_REPLY_H
#define XR_LIB_REPLY_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>
#include "lib/parse.h"
#include "lib/udp_csum.h"

#define XR_REPLY_TTL 64

/* Swap the Ethernet addresses. */
XR_INLINE void xr_reply_eth(struct ethhdr *eth)
{
	__u8 mac[ETH_ALEN];

	__builtin_memcpy(mac, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, eth->h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, mac, ETH_ALEN);
}

/* The IPv4 header of a reply carrying body_len bytes of UDP payload. */
XR_INLINE void xr_reply_ip4(struct iphdr *ip, __u32 body_len)
{
	__be32 a = ip->saddr;

	ip->saddr = ip->daddr;
	ip->daddr = a;
	ip->tot_len = bpf_htons(sizeof(*ip) + sizeof(struct udphdr) + body_len);
	ip->ttl = XR_REPLY_TTL;
	ip->tos &= ~XR_ECN_MASK;
	ip->id = 0;
	ip->frag_off = bpf_htons(0x4000); /* DF */
	xr_ip4_csum_set(ip);
}

/* The IPv6 header of a reply carrying body_len bytes of UDP payload. */
XR_INLINE void xr_reply_ip6(struct ipv6hdr *ip6, __u32 body_len)
{
	struct in6_addr a = ip6->saddr;

	ip6->saddr = ip6->daddr;
	ip6->daddr = a;
	ip6->payload_len = bpf_htons(sizeof(struct udphdr) + body_len);
	ip6->hop_limit = XR_REPLY_TTL;
	((__u8 *)ip6)[1] &= ~0x30; /* ECN bits of the traffic class */
}

/* The UDP header of a reply carrying body_len bytes (checksum: later). */
XR_INLINE void xr_reply_udp(struct udphdr *udp, __u32 body_len)
{
	__be16 port = udp->source;

	udp->source = udp->dest;
	udp->dest = port;
	udp->len = bpf_htons(sizeof(*udp) + body_len);
}

/* Resize the frame to a reply of body_len bytes of UDP payload and rewrite
 * its headers; returns a pointer to the body (bounds-checked) and fills h
 * with the new header pointers, or NULL if the frame cannot be resized. */
XR_INLINE void *xr_reply_begin(struct xdp_md *ctx, struct xr_hdrs *h, int v6,
			       __u32 body_len)
{
	__u32 l4_off = sizeof(struct ethhdr) +
		       (v6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr));
	/* The whole frame, fragments of a multi-buffer frame included: a
	 * negative adjustment drops them first, then trims the linear part. */
	int delta = (int)(l4_off + sizeof(struct udphdr) + body_len) -
		    (int)bpf_xdp_get_buff_len(ctx);
	struct ethhdr *eth;
	struct udphdr *udp;
	void *end, *body;

	if (delta && bpf_xdp_adjust_tail(ctx, delta))
		return NULL;
	end = (void *)(long)ctx->data_end;
	__builtin_memset(h, 0, sizeof(*h));
	eth = (void *)(long)ctx->data;
	if ((void *)(eth + 1) > end)
		return NULL;
	xr_reply_eth(eth);
	h->eth = eth;
	if (!v6) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) > end)
			return NULL;
		xr_reply_ip4(ip, body_len);
		h->ip4 = ip;
		udp = (void *)(ip + 1);
	} else {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > end)
			return NULL;
		xr_reply_ip6(ip6, body_len);
		h->ip6 = ip6;
		h->v6 = 1;
		udp = (void *)(ip6 + 1);
	}
	if ((void *)(udp + 1) > end)
		return NULL;
	xr_reply_udp(udp, body_len);
	h->udp = udp;
	h->l4 = udp;
	h->l4proto = IPPROTO_UDP;
	h->l3_off = sizeof(struct ethhdr);
	h->l4_off = l4_off;
	body = udp + 1;
	if (body + body_len > end)
		return NULL;
	return body;
}

/* Checksums of a reply built by xr_reply_begin (body_len % 4 == 0). */
XR_INLINE void xr_reply_finish(struct xdp_md *ctx, struct xr_hdrs *h,
			       __u32 body_len)
{
	void *end = (void *)(long)ctx->data_end;

	xr_udp_csum_set(h, end, sizeof(struct udphdr) + body_len);
}

#endif /* XR_LIB_REPLY_H */
