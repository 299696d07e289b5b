// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Route, source address, next hop and neighbour MAC over rtnetlink.
 *
 * GET requests, each answered by one message: RTM_GETLINK (MAC, MTU,
 * state); RTM_GETROUTE with RTA_DST + RTA_OIF, first with RTM_F_FIB_MATCH
 * (is there a table entry through the interface?), then plain (the
 * kernel's own choice through it: RTA_PREFSRC, RTA_GATEWAY/RTA_VIA, path
 * MTU); RTM_GETNEIGH for one address (NDA_LLADDR, state).
 * Extended ACKs are turned on so kernel refusals come with their reason.
 */
#include "nlroute.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_arp.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#ifndef SO_BINDTOIFINDEX
#define SO_BINDTOIFINDEX 62
#endif
#ifndef NETLINK_GET_STRICT_CHK
#define NETLINK_GET_STRICT_CHK 12
#endif

#define NL_BUF 16384
#define NL_RECV_TIMEOUT_MS 1000
/* Neighbour polling: first look quickly (a LAN answers in well under a
 * millisecond), then back off to this period. */
#define POLL_MAX_MS 10
/* Resend the trigger this often while waiting (covers a FAILED entry). */
#define RETRIGGER_MS 200

/* Neighbour states whose link-layer address can be used. */
#define NUD_USABLE (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | \
		    NUD_PERMANENT | NUD_NOARP)

struct nl {
	int fd;
	uint32_t seq;
	char *msg;
	size_t msglen;
	/* A request (header + body + attributes) and its answer. */
	union {
		struct nlmsghdr h;
		char b[512];
	} req;
	union {
		struct nlmsghdr h;
		char b[NL_BUF];
	} rsp;
};

static void say(struct nl *nl, const char *fmt, ...)
{
	va_list ap;

	if (!nl->msg || !nl->msglen)
		return;
	va_start(ap, fmt);
	vsnprintf(nl->msg, nl->msglen, fmt, ap);
	va_end(ap);
}

static int nl_open(struct nl *nl)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct timeval tv = { .tv_sec = NL_RECV_TIMEOUT_MS / 1000 };
	int one = 1;

	nl->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (nl->fd < 0)
		return -errno;
	/* Best effort: reasons with errors, no echo of our request in them,
	 * strict checking of GET requests (kernel >= 4.20). */
	setsockopt(nl->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(nl->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	setsockopt(nl->fd, SOL_NETLINK, NETLINK_GET_STRICT_CHK, &one, sizeof(one));
	/* A reply never takes long; never hang if one is lost. */
	setsockopt(nl->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (bind(nl->fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int err = -errno;

		close(nl->fd);
		return err;
	}
	return 0;
}

/* Start a request of the given type with a zeroed body of body_len. */
static void *nl_begin(struct nl *nl, uint16_t type, size_t body_len)
{
	memset(&nl->req, 0, sizeof(nl->req));
	nl->req.h.nlmsg_len = NLMSG_LENGTH(body_len);
	nl->req.h.nlmsg_type = type;
	nl->req.h.nlmsg_flags = NLM_F_REQUEST;
	nl->req.h.nlmsg_seq = ++nl->seq;
	return NLMSG_DATA(&nl->req.h);
}

static void nl_attr(struct nl *nl, uint16_t type, const void *data, size_t len)
{
	struct rtattr *a = (struct rtattr *)(nl->req.b + NLMSG_ALIGN(nl->req.h.nlmsg_len));

	a->rta_type = type;
	a->rta_len = (unsigned short)RTA_LENGTH(len);
	memcpy(RTA_DATA(a), data, len);
	nl->req.h.nlmsg_len = NLMSG_ALIGN(nl->req.h.nlmsg_len) + RTA_ALIGN(a->rta_len);
}

/* The kernel's reason, from an extended ACK, if it gave one. */
static const char *ext_ack_msg(const struct nlmsghdr *h)
{
	const struct nlmsgerr *e = NLMSG_DATA(h);
	size_t off = sizeof(*e);
	const struct rtattr *a;
	int len;

	if (!(h->nlmsg_flags & NLM_F_ACK_TLVS))
		return NULL;
	if (!(h->nlmsg_flags & NLM_F_CAPPED))
		off += NLMSG_ALIGN(e->msg.nlmsg_len) - NLMSG_HDRLEN;
	if (NLMSG_HDRLEN + off >= h->nlmsg_len)
		return NULL;
	len = (int)(h->nlmsg_len - NLMSG_HDRLEN - off);
	for (a = (const void *)((const char *)e + off); RTA_OK(a, len);
	     a = RTA_NEXT(a, len))
		if (a->rta_type == NLMSGERR_ATTR_MSG)
			return RTA_DATA(a);
	return NULL;
}

/* Send the request; the answer (one message) is left in nl->rsp.  Returns
 * 0, or the kernel's negative errno (its reason in *why), or a socket
 * error. */
static int nl_talk(struct nl *nl, const char **why)
{
	*why = NULL;
	if (send(nl->fd, &nl->req, nl->req.h.nlmsg_len, 0) < 0)
		return -errno;
	for (;;) {
		ssize_t r = recv(nl->fd, &nl->rsp, sizeof(nl->rsp), 0);
		struct nlmsghdr *h;
		unsigned int len;

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		}
		len = (unsigned int)r;
		for (h = &nl->rsp.h; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_seq != nl->seq)
				continue; /* stale answer to an earlier request */
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				*why = ext_ack_msg(h);
				return e->error ? e->error : -ENOMSG;
			}
			if (h != &nl->rsp.h)
				memmove(&nl->rsp, h, h->nlmsg_len);
			return 0;
		}
	}
}

static size_t addr_len(int family)
{
	return family == AF_INET ? 4 : 16;
}

static const char *addr_str(int family, const void *a, char *buf, size_t len)
{
	if (!inet_ntop(family, a, buf, (socklen_t)len))
		snprintf(buf, len, "?");
	return buf;
}

/* ---- link ------------------------------------------------------------ */

static int get_link(struct nl *nl, int ifindex, struct xr_link_info *out)
{
	struct ifinfomsg *ifi = nl_begin(nl, RTM_GETLINK, sizeof(*ifi));
	const char *why;
	struct rtattr *a;
	bool have_mac = false;
	int len, err;

	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	err = nl_talk(nl, &why);
	if (err) {
		say(nl, "interface %d: %s", ifindex, why ? why : strerror(-err));
		return err;
	}
	if (nl->rsp.h.nlmsg_type != RTM_NEWLINK)
		return -EPROTO;
	ifi = NLMSG_DATA(&nl->rsp.h);
	memset(out, 0, sizeof(*out));
	out->ifindex = ifi->ifi_index;
	out->up = ifi->ifi_flags & IFF_UP;
	out->running = ifi->ifi_flags & IFF_RUNNING;
	len = (int)IFLA_PAYLOAD(&nl->rsp.h);
	for (a = IFLA_RTA(ifi); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		switch (a->rta_type) {
		case IFLA_IFNAME:
			snprintf(out->name, sizeof(out->name), "%s", (char *)RTA_DATA(a));
			break;
		case IFLA_MTU:
			memcpy(&out->mtu, RTA_DATA(a), sizeof(out->mtu));
			break;
		case IFLA_ADDRESS:
			if (RTA_PAYLOAD(a) == 6) {
				memcpy(out->mac, RTA_DATA(a), 6);
				have_mac = true;
			}
			break;
		}
	}
	if (ifi->ifi_type != ARPHRD_ETHER || !have_mac) {
		say(nl, "interface %s is not Ethernet (type %u)", out->name,
		    ifi->ifi_type);
		return -EOPNOTSUPP;
	}
	return 0;
}

/* The context holds 16 KiB of buffers: on the heap, not the stack. */
static struct nl *nl_new(char *msg, size_t msglen, int *err)
{
	struct nl *nl = calloc(1, sizeof(*nl));

	if (msg && msglen)
		msg[0] = '\0';
	if (!nl) {
		*err = -ENOMEM;
		return NULL;
	}
	nl->msg = msg;
	nl->msglen = msglen;
	*err = nl_open(nl);
	if (*err) {
		say(nl, "rtnetlink socket: %s", strerror(-*err));
		free(nl);
		return NULL;
	}
	return nl;
}

static void nl_free(struct nl *nl)
{
	close(nl->fd);
	free(nl);
}

int xr_nl_link(int ifindex, struct xr_link_info *out, char *msg, size_t msglen)
{
	struct nl *nl;
	int err;

	if (ifindex <= 0 || !out)
		return -EINVAL;
	nl = nl_new(msg, msglen, &err);
	if (!nl)
		return err;
	err = get_link(nl, ifindex, out);
	nl_free(nl);
	return err;
}

/* ---- route ----------------------------------------------------------- */

struct route {
	int oif;
	int type;
	bool have_src;
	uint8_t src[16];
	int gw_family;           /* 0: no gateway */
	uint8_t gw[16];
	int mtu;                 /* 0: none given */
};

static void parse_metrics(struct rtattr *m, struct route *rt)
{
	int len = (int)RTA_PAYLOAD(m);

	for (struct rtattr *a = RTA_DATA(m); RTA_OK(a, len); a = RTA_NEXT(a, len))
		if (a->rta_type == RTAX_MTU && RTA_PAYLOAD(a) >= 4)
			memcpy(&rt->mtu, RTA_DATA(a), 4);
}

/* RTM_GETROUTE for dst; through oif if it is not 0; flags RTM_F_*.
 * Returns 0 and rt, or the kernel's error with its reason in *why. */
static int route_query(struct nl *nl, int oif, int family, const void *dst,
		       unsigned int flags, struct route *rt, const char **why)
{
	struct rtmsg *rtm = nl_begin(nl, RTM_GETROUTE, sizeof(*rtm));
	struct rtattr *a;
	int len, err;

	rtm->rtm_family = (unsigned char)family;
	rtm->rtm_dst_len = (unsigned char)(addr_len(family) * 8);
	rtm->rtm_flags = flags;
	nl_attr(nl, RTA_DST, dst, addr_len(family));
	if (oif) {
		uint32_t o = (uint32_t)oif;

		nl_attr(nl, RTA_OIF, &o, sizeof(o));
	}
	err = nl_talk(nl, why);
	if (err)
		return err;
	if (nl->rsp.h.nlmsg_type != RTM_NEWROUTE)
		return -EPROTO;
	rtm = NLMSG_DATA(&nl->rsp.h);
	memset(rt, 0, sizeof(*rt));
	rt->type = rtm->rtm_type;
	len = (int)RTM_PAYLOAD(&nl->rsp.h);
	for (a = RTM_RTA(rtm); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		switch (a->rta_type) {
		case RTA_OIF:
			memcpy(&rt->oif, RTA_DATA(a), 4);
			break;
		case RTA_PREFSRC:
			if (RTA_PAYLOAD(a) == addr_len(family)) {
				memcpy(rt->src, RTA_DATA(a), addr_len(family));
				rt->have_src = true;
			}
			break;
		case RTA_GATEWAY:
			if (RTA_PAYLOAD(a) == addr_len(family)) {
				memcpy(rt->gw, RTA_DATA(a), addr_len(family));
				rt->gw_family = family;
			}
			break;
		case RTA_VIA: {
			/* IPv4 route with an IPv6 next hop (RFC 5549). */
			const struct rtvia *v = RTA_DATA(a);
			size_t alen = RTA_PAYLOAD(a) - sizeof(*v);

			if ((v->rtvia_family == AF_INET && alen == 4) ||
			    (v->rtvia_family == AF_INET6 && alen == 16)) {
				memcpy(rt->gw, v->rtvia_addr, alen);
				rt->gw_family = v->rtvia_family;
			}
			break;
		}
		case RTA_METRICS:
			parse_metrics(a, rt);
			break;
		}
	}
	return 0;
}

/* ---- neighbour ------------------------------------------------------- */

/* 1: usable MAC in mac; 0: no usable entry (yet); negative errno. */
static int get_neigh(struct nl *nl, int ifindex, int family, const void *addr,
		     uint8_t mac[6], uint16_t *state)
{
	struct ndmsg *nd = nl_begin(nl, RTM_GETNEIGH, sizeof(*nd));
	const char *why;
	struct rtattr *a;
	bool have_mac = false;
	int len, err;

	nd->ndm_family = (unsigned char)family;
	nd->ndm_ifindex = ifindex;
	nl_attr(nl, NDA_DST, addr, addr_len(family));
	*state = 0;
	err = nl_talk(nl, &why);
	if (err == -ENOENT)
		return 0;
	if (err) {
		say(nl, "neighbour lookup on interface %d: %s", ifindex,
		    why ? why : strerror(-err));
		return err;
	}
	if (nl->rsp.h.nlmsg_type != RTM_NEWNEIGH)
		return -EPROTO;
	nd = NLMSG_DATA(&nl->rsp.h);
	*state = nd->ndm_state;
	len = (int)(nl->rsp.h.nlmsg_len - NLMSG_LENGTH(sizeof(*nd)));
	for (a = (struct rtattr *)((char *)nd + NLMSG_ALIGN(sizeof(*nd)));
	     RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == NDA_LLADDR && RTA_PAYLOAD(a) == 6) {
			memcpy(mac, RTA_DATA(a), 6);
			have_mac = true;
		}
	}
	return (nd->ndm_state & NUD_USABLE) && have_mac;
}

/* Make the kernel resolve addr on ifindex: send one byte to its discard
 * port out of that interface; the datagram waits in the neighbour queue
 * while ARP / neighbour discovery runs. */
static void trigger_resolution(int ifindex, int family, const void *addr)
{
	union {
		struct sockaddr_in v4;
		struct sockaddr_in6 v6;
	} sa;
	socklen_t salen;
	int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return;
	memset(&sa, 0, sizeof(sa));
	if (family == AF_INET) {
		sa.v4.sin_family = AF_INET;
		sa.v4.sin_port = htons(9);
		memcpy(&sa.v4.sin_addr, addr, 4);
		salen = sizeof(sa.v4);
	} else {
		sa.v6.sin6_family = AF_INET6;
		sa.v6.sin6_port = htons(9);
		memcpy(&sa.v6.sin6_addr, addr, 16);
		sa.v6.sin6_scope_id = (uint32_t)ifindex; /* link-local next hop */
		salen = sizeof(sa.v6);
	}
	/* SO_BINDTOIFINDEX needs CAP_NET_RAW; the *_UNICAST_IF options do
	 * not (IPv4 wants the index in network order). */
	if (setsockopt(fd, SOL_SOCKET, SO_BINDTOIFINDEX, &ifindex, sizeof(ifindex))) {
		if (family == AF_INET) {
			uint32_t idx = htonl((uint32_t)ifindex);

			setsockopt(fd, IPPROTO_IP, IP_UNICAST_IF, &idx, sizeof(idx));
		} else {
			setsockopt(fd, IPPROTO_IPV6, IPV6_UNICAST_IF, &ifindex,
				   sizeof(ifindex));
		}
	}
	sendto(fd, "", 1, 0, (struct sockaddr *)&sa, salen);
	close(fd);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Wait until the next hop's MAC is known, triggering resolution. */
static int resolve_neigh(struct nl *nl, struct xr_nexthop *nh, int timeout_ms)
{
	int64_t deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	int64_t last_trigger = 0;
	int period = 1;
	char abuf[INET6_ADDRSTRLEN];
	uint16_t state;

	for (;;) {
		int r = get_neigh(nl, nh->ifindex, nh->gw_family, nh->gw_addr,
				  nh->dst_mac, &state);
		int64_t t = now_ms();

		if (r != 0)
			return r < 0 ? r : 0;
		if (!last_trigger || t - last_trigger >= RETRIGGER_MS) {
			trigger_resolution(nh->ifindex, nh->gw_family, nh->gw_addr);
			last_trigger = t;
		}
		if (timeout_ms <= 0) {
			say(nl, "%s: neighbour resolution started",
			    addr_str(nh->gw_family, nh->gw_addr, abuf, sizeof(abuf)));
			return -EAGAIN;
		}
		if (t >= deadline)
			break;
		sleep_ms(period);
		if (period < POLL_MAX_MS)
			period *= 2;
	}
	say(nl, "%s %s on interface %d did not answer %s within %d ms "
	    "(neighbour %s)", nh->via_gateway ? "gateway" : "host",
	    addr_str(nh->gw_family, nh->gw_addr, abuf, sizeof(abuf)),
	    nh->ifindex, nh->gw_family == AF_INET ? "ARP" : "neighbour solicitation",
	    timeout_ms, state & NUD_FAILED ? "failed" :
	    state & NUD_INCOMPLETE ? "incomplete" : "absent");
	return -EHOSTUNREACH;
}

/* ---- all together ---------------------------------------------------- */

static const char *route_type_str(int type)
{
	switch (type) {
	case RTN_BLACKHOLE:
		return "blackhole";
	case RTN_UNREACHABLE:
		return "unreachable";
	case RTN_PROHIBIT:
		return "prohibit";
	case RTN_LOCAL:
		return "local";
	case RTN_BROADCAST:
		return "broadcast";
	case RTN_MULTICAST:
		return "multicast";
	default:
		return "unusable";
	}
}

/* No table entry through the interface: say what the kernel would do
 * with dst instead, from a lookup without the interface. */
static void explain_no_route(struct nl *nl, const struct xr_link_info *link,
			     int family, const void *dst)
{
	char abuf[INET6_ADDRSTRLEN];
	const char *why;
	struct route rt;
	int err = route_query(nl, 0, family, dst, 0, &rt, &why);

	addr_str(family, dst, abuf, sizeof(abuf));
	if (err == -EHOSTUNREACH)
		say(nl, "no route to %s: unreachable route", abuf);
	else if (err == -EACCES)
		say(nl, "no route to %s: prohibit route", abuf);
	else if (err == -EINVAL && family == AF_INET)
		say(nl, "no route to %s: blackhole route", abuf);
	else if (err)
		say(nl, "no route to %s: %s", abuf, why ? why : strerror(-err));
	else if (rt.type != RTN_UNICAST)
		say(nl, "route to %s is %s", abuf, route_type_str(rt.type));
	else if (rt.oif != link->ifindex)
		say(nl, "no route to %s through %s (the route leaves through "
		    "interface %d)", abuf, link->name, rt.oif);
	else
		say(nl, "no route to %s through %s", abuf, link->name);
}

static int resolve(struct nl *nl, int ifindex, int family, const void *dst,
		   int timeout_ms, struct xr_nexthop *out)
{
	struct xr_link_info link;
	struct route rt;
	char abuf[INET6_ADDRSTRLEN];
	const char *why;
	int err;

	err = get_link(nl, ifindex, &link);
	if (err)
		return err;
	if (!link.up) {
		say(nl, "interface %s is down", link.name);
		return -ENETDOWN;
	}
	addr_str(family, dst, abuf, sizeof(abuf));
	/* Is there a routing-table entry through this interface?  A plain
	 * IPv4 lookup with RTA_OIF cannot tell: when nothing routes through
	 * the interface (or the route is unreachable, blackhole, prohibit)
	 * it answers "on-link via oif" anyway.  RTM_F_FIB_MATCH returns the
	 * matching table entry itself, or an error. */
	err = route_query(nl, ifindex, family, dst, RTM_F_FIB_MATCH, &rt, &why);
	if (err) {
		if (err != -EHOSTUNREACH && err != -ENETUNREACH &&
		    err != -EACCES && err != -EINVAL) {
			say(nl, "route lookup for %s: %s", abuf,
			    why ? why : strerror(-err));
			return err;
		}
		explain_no_route(nl, &link, family, dst);
		return -ENETUNREACH;
	}
	/* The kernel's choice through this interface: source address,
	 * gateway (of a multipath route, the one it picks), path MTU. */
	err = route_query(nl, ifindex, family, dst, 0, &rt, &why);
	if (err) {
		say(nl, "no route to %s via %s: %s", abuf, link.name,
		    why ? why : strerror(-err));
		return err == -EHOSTUNREACH || err == -EACCES ? -ENETUNREACH : err;
	}
	if (rt.type == RTN_LOCAL) {
		say(nl, "%s is an address of this host", abuf);
		return -EADDRNOTAVAIL;
	}
	if (rt.type != RTN_UNICAST) {
		say(nl, "route to %s is %s", abuf, route_type_str(rt.type));
		return -ENETUNREACH;
	}
	if (rt.oif != ifindex) {
		say(nl, "route to %s leaves through interface %d, not %s", abuf,
		    rt.oif, link.name);
		return -ENETUNREACH;
	}
	if (!rt.have_src) {
		say(nl, "no source address for %s on %s", abuf, link.name);
		return -EADDRNOTAVAIL;
	}

	out->ifindex = ifindex;
	out->family = family;
	memcpy(out->dst_addr, dst, addr_len(family));
	memcpy(out->src_addr, rt.src, addr_len(family));
	out->via_gateway = rt.gw_family != 0;
	out->gw_family = rt.gw_family ? rt.gw_family : family;
	memcpy(out->gw_addr, rt.gw_family ? rt.gw : dst, addr_len(out->gw_family));
	memcpy(out->src_mac, link.mac, 6);
	out->mtu = rt.mtu > 0 && rt.mtu < link.mtu ? rt.mtu : link.mtu;
	return resolve_neigh(nl, out, timeout_ms);
}

int xr_nl_resolve(int ifindex, int family, const void *dst_addr,
		  int timeout_ms, struct xr_nexthop *out, char *msg,
		  size_t msglen)
{
	struct nl *nl;
	int err;

	if (ifindex <= 0 || !dst_addr || !out ||
	    (family != AF_INET && family != AF_INET6))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	nl = nl_new(msg, msglen, &err);
	if (!nl)
		return err;
	err = resolve(nl, ifindex, family, dst_addr, timeout_ms, out);
	nl_free(nl);
	return err;
}
