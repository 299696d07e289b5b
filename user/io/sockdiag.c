// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Is a given process's UDP socket still open?  Asked of the kernel with
 * sock_diag (NETLINK_SOCK_DIAG): a dump of the UDP sockets of this network
 * namespace bound to one local port, IPv4 and IPv6, with their marks
 * (INET_DIAG_MARK, reported to CAP_NET_ADMIN).  This is the test XDP makes
 * with bpf_sk_lookup_udp and the socket's mark (bpf/lib/alive.h), made
 * from userspace; neither depends on process ids, so PID namespaces do
 * not matter.
 */
#include "sockdiag.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>

#define DIAG_BUF 16384

/* Does the inet_diag answer h carry SO_MARK `mark` (0: any)? */
static bool has_mark(const struct nlmsghdr *h, uint32_t mark)
{
	const struct inet_diag_msg *m = NLMSG_DATA(h);
	int len = (int)h->nlmsg_len - NLMSG_LENGTH(sizeof(*m));
	const struct rtattr *a = (const struct rtattr *)(m + 1);

	if (!mark)
		return true;
	for (; RTA_OK(a, len); a = RTA_NEXT(a, len))
		if (a->rta_type == INET_DIAG_MARK &&
		    RTA_PAYLOAD(a) >= (int)sizeof(uint32_t))
			return *(const uint32_t *)RTA_DATA(a) == mark;
	return false;
}

static int ask(int fd, int family, uint16_t port)
{
	struct {
		struct nlmsghdr h;
		struct inet_diag_req_v2 r;
	} q;
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	memset(&q, 0, sizeof(q));
	q.h.nlmsg_len = sizeof(q);
	q.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	q.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	q.r.sdiag_family = (uint8_t)family;
	q.r.sdiag_protocol = IPPROTO_UDP;
	q.r.idiag_states = ~0u;
	q.r.id.idiag_sport = htons(port);
	if (sendto(fd, &q, sizeof(q), 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	return 0;
}

/* Read the dump's answers: 1 if one has the mark, 0 if none, or -errno. */
static int answers(int fd, uint16_t port, uint32_t mark)
{
	static __thread uint8_t buf[DIAG_BUF] __attribute__((aligned(8)));
	int found = 0;

	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		const struct nlmsghdr *h = (const struct nlmsghdr *)buf;
		int len = (int)n;

		if (n < 0)
			return -errno;
		for (; NLMSG_OK(h, (unsigned int)len); h = NLMSG_NEXT(h, len)) {
			const struct inet_diag_msg *m = NLMSG_DATA(h);

			if (h->nlmsg_type == NLMSG_DONE)
				return found;
			if (h->nlmsg_type == NLMSG_ERROR)
				return -EPROTO;
			if (h->nlmsg_len >= NLMSG_LENGTH(sizeof(*m)) &&
			    m->id.idiag_sport == htons(port) && has_mark(h, mark))
				found = 1;
		}
	}
}

int xr_sockdiag_udp_bound(uint16_t port, uint32_t mark)
{
	static const int families[] = { AF_INET6, AF_INET };
	struct timeval tv = { .tv_sec = 1 };
	int fd, rc = 0;
	size_t i;

	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (i = 0; i < sizeof(families) / sizeof(families[0]) && rc == 0; i++) {
		rc = ask(fd, families[i], port);
		if (!rc)
			rc = answers(fd, port, mark);
	}
	close(fd);
	return rc;
}
