/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * How to reach a peer through one interface, asked of the kernel over
 * rtnetlink: the route (restricted to that interface), the source address
 * the kernel would use, the next hop (gateway or the peer itself), the next
 * hop's MAC from the neighbour table, and the interface's own MAC and MTU.
 * Everything libxroce needs to write the Ethernet and IP headers of frames
 * it transmits with AF_XDP, past the kernel's stack.
 *
 * Results are a snapshot: routes and neighbours change, so callers
 * re-resolve when a path goes bad.  Works in the calling thread's network
 * namespace.  No global state; each call opens its own netlink socket.
 */
#ifndef XR_USER_NLROUTE_H
#define XR_USER_NLROUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <net/if.h>

struct xr_link_info {
	int ifindex;
	char name[IF_NAMESIZE];
	uint8_t mac[6];
	int mtu;
	bool up;                 /* IFF_UP */
	bool running;            /* IFF_RUNNING: carrier */
};

struct xr_nexthop {
	int ifindex;
	int family;              /* AF_INET or AF_INET6, of dst and src */
	uint8_t dst_addr[16];    /* the destination asked for (IPv4: 4 bytes) */
	uint8_t src_addr[16];    /* source address the kernel would use */
	int gw_family;           /* family of gw_addr: an IPv4 route may have
				  * an IPv6 next hop (RFC 5549) */
	uint8_t gw_addr[16];     /* next hop: the gateway, or dst itself */
	bool via_gateway;
	uint8_t src_mac[6];      /* the interface's MAC */
	uint8_t dst_mac[6];      /* the next hop's MAC */
	int mtu;                 /* min(interface MTU, route/path MTU) */
};

/* Resolve how to reach dst_addr (4 bytes for AF_INET, 16 for AF_INET6,
 * network order) through interface ifindex.  If the next hop's MAC is not
 * known yet, start resolution (a one-byte UDP datagram to the next hop's
 * discard port, sent out of that interface) and poll the neighbour table
 * for up to timeout_ms.
 *
 * Returns 0, or a negative errno with a one-line reason in msg (if msg is
 * not NULL):
 *   -EHOSTUNREACH  the next hop did not answer within timeout_ms
 *   -EAGAIN        timeout_ms <= 0 and resolution was started
 *   -ENETUNREACH   no route through this interface (or an unreachable,
 *                  blackhole or prohibit route)
 *   -ENETDOWN      the interface is down
 *   -ENODEV        no such interface
 *   -EADDRNOTAVAIL the destination is this host, or no source address
 *   -EINVAL, -EOPNOTSUPP (not Ethernet), netlink errors. */
int xr_nl_resolve(int ifindex, int family, const void *dst_addr,
		  int timeout_ms, struct xr_nexthop *out, char *msg,
		  size_t msglen);

/* The interface's name, MAC, MTU and state. */
int xr_nl_link(int ifindex, struct xr_link_info *out, char *msg,
	       size_t msglen);

#endif /* XR_USER_NLROUTE_H */
