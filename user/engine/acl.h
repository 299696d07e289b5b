/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Who may connect: a listener's list of address prefixes.  A CONNECT from
 * anywhere else is dropped and counted before it costs even a cookie.
 */
#ifndef XR_ENGINE_ACL_H
#define XR_ENGINE_ACL_H

#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>

#include "log.h"

#define XR_ACL_MAX 16

struct xr_acl {
	uint32_t n;                        /* 0: anyone may connect */
	struct {
		uint8_t addr[16];          /* IPv4 as ::ffff:a.b.c.d */
		uint8_t plen;              /* prefix length over the 16 bytes */
	} ent[XR_ACL_MAX];
};

/* Parse "ADDR[/LEN][,ADDR[/LEN]...]" (IPv4 or IPv6; NULL or "" = anyone). */
int xr_acl_parse(struct xr_acl *acl, const struct xr_logger *lg, const char *spec);
bool xr_acl_allows(const struct xr_acl *acl, const struct in6_addr *a);

#endif /* XR_ENGINE_ACL_H */
