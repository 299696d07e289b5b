/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Liveness of a domain's owner, one job: is the process that owns a domain
 * still there?  It is while its own control socket is open: a UDP socket
 * bound to the domain's control port that carries the owner's random
 * SO_MARK (struct xr_domain).  When the process dies its socket closes, XDP
 * stops acknowledging its data, and its peers fail their work instead of
 * writing into a dead process's memory; another process that binds the
 * port then has no such mark (setting one needs CAP_NET_ADMIN) and keeps
 * nothing alive.  Nothing here depends on process ids, so PID namespaces
 * do not matter.  A success is trusted for a while, so the socket lookup
 * is not paid per packet.  The including program defines the xr_domains
 * map before this.
 */
#ifndef XR_LIB_ALIVE_H
#define XR_LIB_ALIVE_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "contract/abi.h"
#include "contract/inline.h"
#include "lib/parse.h"

/* How long a successful liveness check of a domain is trusted. */
#define XR_ALIVE_CACHE_NS 1000000ULL

/* Is the process owning domain still there?  One function on purpose:
 * split into helpers that fill the socket tuple, it cost 6.1's verifier
 * about 40% more instructions for the whole program when tried. */
XR_INLINE int xr_domain_alive(struct xdp_md *ctx, const struct xr_hdrs *h,
			      void *end, __u32 domain, __u64 now)
{
	struct xr_domain *d = bpf_map_lookup_elem(&xr_domains, &domain);
	struct bpf_sock_tuple t = {};
	const __u32 *ca;
	struct bpf_sock *sk;
	__u32 tlen, mark;
	int v4;

	if (!d)
		return 0;
	if (!d->ctrl_port || now < d->alive_until_ns)
		return 1;
	ca = (const __u32 *)d->ctrl_addr;
	if (ca[0] | ca[1] | ca[2] | ca[3])
		v4 = !ca[0] && !ca[1] && ca[2] == bpf_htonl(0xffff);
	else
		v4 = !h->v6;
	if (v4) {
		struct iphdr *ip = h->v6 ? NULL : xr_ip4(h, end);

		if (ip) {
			t.ipv4.saddr = ip->saddr;
			t.ipv4.daddr = ip->daddr;
			t.ipv4.sport = h->udp->source;
		}
		if (ca[3])
			t.ipv4.daddr = ca[3];
		t.ipv4.dport = bpf_htons(d->ctrl_port);
		tlen = sizeof(t.ipv4);
	} else {
		struct ipv6hdr *ip6 = h->v6 ? xr_ip6(h, end) : NULL;

		if (ip6) {
			__builtin_memcpy(t.ipv6.saddr, &ip6->saddr, 16);
			__builtin_memcpy(t.ipv6.daddr, &ip6->daddr, 16);
			t.ipv6.sport = h->udp->source;
		}
		if (ca[0] | ca[1] | ca[2] | ca[3])
			__builtin_memcpy(t.ipv6.daddr, ca, 16);
		t.ipv6.dport = bpf_htons(d->ctrl_port);
		tlen = sizeof(t.ipv6);
	}
	sk = bpf_sk_lookup_udp(ctx, &t, tlen, BPF_F_CURRENT_NETNS, 0);
	if (!sk)
		return 0;
	mark = sk->mark;
	bpf_sk_release(sk);
	if (d->owner_mark && mark != d->owner_mark)
		return 0; /* someone else's socket on the owner's port */
	d->alive_until_ns = now + XR_ALIVE_CACHE_NS;
	return 1;
}

#endif /* XR_LIB_ALIVE_H */
