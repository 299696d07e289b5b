/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Header parsing for XDP and TC programs, one job: find the L3 and L4
 * headers of an Ethernet frame, bounds-checked against data_end, and report
 * where they are.  No policy: callers decide what to do with the result.
 */
#ifndef XR_LIB_PARSE_H
#define XR_LIB_PARSE_H

#include <linux/types.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <linux/in.h>
#include <bpf/bpf_endian.h>

#include "contract/inline.h"

struct xr_hdrs {
	struct ethhdr *eth;
	struct iphdr *ip4;       /* exactly one of ip4 / ip6 is set */
	struct ipv6hdr *ip6;
	struct udphdr *udp;      /* set when the L4 protocol is UDP */
	void *l4;                /* start of the L4 header */
	__u8 l4proto;            /* IPPROTO_* */
	__u8 ecn;                /* the IP ECN field (0..3) */
	__u8 v6;                 /* 1 when ip6 is set */
	__u16 l3_off;            /* offset of the IP header from data */
	__u16 l4_off;            /* offset of the L4 header from data */
};

enum xr_parse_rc {
	XR_PARSE_OK = 0,
	XR_PARSE_NOT_IP = 1,   /* not IPv4/IPv6 (ARP, ...): not ours */
	XR_PARSE_TRUNC = 2,    /* a header runs past the end of the frame */
	XR_PARSE_FRAG = 3,     /* IPv4 fragment / options, IPv6 ext headers */
};

#define XR_ECN_MASK 0x3
#define XR_ECN_NOT_ECT 0x0
#define XR_ECN_ECT1 0x1
#define XR_ECN_ECT0 0x2
#define XR_ECN_CE 0x3

/* Parse Ethernet (no VLAN) + IPv4/IPv6 + (optionally) UDP.  IPv4 options,
 * IPv4 fragments and IPv6 extension headers are reported as XR_PARSE_FRAG:
 * xroce never sends them, and refusing them keeps the offsets fixed. */
XR_INLINE int xr_parse(void *data, void *data_end, struct xr_hdrs *h)
{
	struct ethhdr *eth = data;
	__u16 proto;

	__builtin_memset(h, 0, sizeof(*h));
	if ((void *)(eth + 1) > data_end)
		return XR_PARSE_TRUNC;
	h->eth = eth;
	proto = eth->h_proto;
	h->l3_off = sizeof(*eth);

	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) > data_end)
			return XR_PARSE_TRUNC;
		h->ip4 = ip;
		h->ecn = ip->tos & XR_ECN_MASK;
		h->l4proto = ip->protocol;
		if (ip->ihl != 5 || ip->version != 4)
			return XR_PARSE_FRAG;
		/* MF set or a fragment offset: a fragment. */
		if (ip->frag_off & bpf_htons(0x3fff))
			return XR_PARSE_FRAG;
		h->l4 = ip + 1;
		h->l4_off = sizeof(*eth) + sizeof(*ip);
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > data_end)
			return XR_PARSE_TRUNC;
		if (ip6->version != 6)
			return XR_PARSE_FRAG; /* malformed: not ours to judge */
		h->ip6 = ip6;
		h->v6 = 1;
		h->ecn = (bpf_ntohs(*(__be16 *)ip6) >> 4) & XR_ECN_MASK;
		h->l4proto = ip6->nexthdr;
		h->l4 = ip6 + 1;
		h->l4_off = sizeof(*eth) + sizeof(*ip6);
	} else {
		return XR_PARSE_NOT_IP;
	}

	if (h->l4proto == IPPROTO_UDP) {
		struct udphdr *udp = h->l4;

		if ((void *)(udp + 1) > data_end)
			return XR_PARSE_TRUNC;
		h->udp = udp;
	}
	return XR_PARSE_OK;
}

/* The IPv4 / IPv6 header, bounds-checked again from the Ethernet header.
 * Code that receives a struct xr_hdrs through the stack uses these instead
 * of h->ip4 / h->ip6: the verifier cannot tie h->v6 to which pointer is set
 * and would otherwise explore dereferencing the NULL one. */
XR_INLINE struct iphdr *xr_ip4(const struct xr_hdrs *h, void *end)
{
	struct iphdr *ip = (void *)((__u8 *)h->eth + sizeof(struct ethhdr));

	return (void *)(ip + 1) > end ? NULL : ip;
}

XR_INLINE struct ipv6hdr *xr_ip6(const struct xr_hdrs *h, void *end)
{
	struct ipv6hdr *ip6 = (void *)((__u8 *)h->eth + sizeof(struct ethhdr));

	return (void *)(ip6 + 1) > end ? NULL : ip6;
}

#endif /* XR_LIB_PARSE_H */
