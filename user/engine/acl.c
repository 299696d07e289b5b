// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A listener's allowed address prefixes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "acl.h"

static int parse_one(const char *s, size_t n, uint8_t addr[16], uint8_t *plen)
{
	char buf[INET6_ADDRSTRLEN + 5], *slash, *end;
	struct in_addr a4;
	long len = -1;
	int max;

	if (!n || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = 0;
	slash = strchr(buf, '/');
	if (slash) {
		*slash = 0;
		len = strtol(slash + 1, &end, 10);
		if (*end || end == slash + 1)
			return -EINVAL;
	}
	if (inet_pton(AF_INET, buf, &a4) == 1) {
		memset(addr, 0, 10);
		addr[10] = addr[11] = 0xff;
		memcpy(addr + 12, &a4, 4);
		max = 32;
		if (len < 0)
			len = 32;
		if (len > max)
			return -EINVAL;
		*plen = (uint8_t)(96 + len);
		return 0;
	}
	if (inet_pton(AF_INET6, buf, addr) != 1)
		return -EINVAL;
	if (len < 0)
		len = 128;
	if (len > 128)
		return -EINVAL;
	*plen = (uint8_t)len;
	return 0;
}

int xr_acl_parse(struct xr_acl *acl, const struct xr_logger *lg, const char *spec)
{
	const char *p = spec;

	memset(acl, 0, sizeof(*acl));
	while (p && *p) {
		size_t n = strcspn(p, ",");

		if (acl->n == XR_ACL_MAX)
			return xr_fail(lg, -E2BIG, "accept_from: at most %d prefixes",
				       XR_ACL_MAX);
		if (parse_one(p, n, acl->ent[acl->n].addr, &acl->ent[acl->n].plen))
			return xr_fail(lg, -EINVAL, "accept_from: \"%.*s\" is not "
				       "ADDR or ADDR/LEN", (int)n, p);
		acl->n++;
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

bool xr_acl_allows(const struct xr_acl *acl, const struct in6_addr *a)
{
	uint32_t i, bits, b;

	if (!acl->n)
		return true;
	for (i = 0; i < acl->n; i++) {
		bits = acl->ent[i].plen;
		for (b = 0; b < bits; b += 8) {
			uint8_t mask = bits - b >= 8 ? 0xff :
				       (uint8_t)(0xff << (8 - (bits - b)));

			if ((a->s6_addr[b / 8] ^ acl->ent[i].addr[b / 8]) & mask)
				break;
		}
		if (b >= bits)
			return true;
	}
	return false;
}
