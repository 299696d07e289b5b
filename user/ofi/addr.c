// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Endpoint addresses are FI_SOCKADDR_IN / FI_SOCKADDR_IN6: an interface's
 * IP address and the UDP port of a listening socket of its device (the
 * port connection requests go to).  libxroce speaks numeric strings and
 * 16-byte addresses with IPv4 mapped (::ffff:a.b.c.d); these convert.
 */
#include <arpa/inet.h>
#include <string.h>

#include "ofi.h"

size_t xrf_sa_len(const void *addr, size_t len)
{
	const struct sockaddr *sa = addr;

	if (!addr || len < sizeof(sa->sa_family))
		return 0;
	if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in))
		return sizeof(struct sockaddr_in);
	if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6))
		return sizeof(struct sockaddr_in6);
	return 0;
}

uint16_t xrf_sa_port(const union xrf_sa *a)
{
	return ntohs(a->sa.sa_family == AF_INET6 ? a->in6.sin6_port : a->in.sin_port);
}

void xrf_sa_set_port(union xrf_sa *a, uint16_t port)
{
	if (a->sa.sa_family == AF_INET6)
		a->in6.sin6_port = htons(port);
	else
		a->in.sin_port = htons(port);
}

int xrf_sa_host(const union xrf_sa *a, char *buf, size_t len)
{
	const void *p = a->sa.sa_family == AF_INET6 ? (const void *)&a->in6.sin6_addr :
						   (const void *)&a->in.sin_addr;

	if (a->sa.sa_family != AF_INET && a->sa.sa_family != AF_INET6)
		return -FI_EINVAL;
	return inet_ntop(a->sa.sa_family, p, buf, (socklen_t)len) ? 0 : -FI_EINVAL;
}

void xrf_sa_from16(union xrf_sa *a, const uint8_t addr[16], uint16_t port,
		   int family)
{
	memset(a, 0, sizeof(*a));
	if (family == AF_INET) {
		a->in.sin_family = AF_INET;
		memcpy(&a->in.sin_addr, addr + 12, 4);
		a->in.sin_port = htons(port);
	} else {
		a->in6.sin6_family = AF_INET6;
		memcpy(&a->in6.sin6_addr, addr, 16);
		a->in6.sin6_port = htons(port);
	}
}

int xrf_sa_out(const union xrf_sa *a, void *addr, size_t *addrlen)
{
	size_t len = a->sa.sa_family == AF_INET6 ? sizeof(a->in6) : sizeof(a->in);
	size_t have;

	if (!addrlen)
		return -FI_EINVAL;
	have = *addrlen;
	*addrlen = len;
	if (!addr || have < len)
		return -FI_ETOOSMALL;
	memcpy(addr, a, len);
	return 0;
}
