// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fi_getinfo: one fi_info per address family of each interface whose
 * xroce device opens (the XDP program is attached; the device is kept for
 * the domain that follows).  Domain "xroce_IF", fabric the interface's IP
 * network (as libfabric's tcp provider names them), source address the
 * interface's.  node/service name a source (FI_SOURCE) or a destination;
 * a wildcard source gets the interface's address with the port asked, so
 * what fi_getname returns later is an address a peer can connect to.
 */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ofi.h"

#define XRF_TX_CAPS (FI_MSG | FI_RMA | FI_SEND | FI_READ | FI_WRITE)
#define XRF_RX_CAPS (FI_MSG | FI_RMA | FI_RECV | FI_REMOTE_READ | FI_REMOTE_WRITE)
#define XRF_TX_OP_FLAGS (FI_INJECT | FI_COMPLETION | FI_INJECT_COMPLETE | \
			 FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE)
#define XRF_MR_MODE (FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | \
		     FI_MR_PROV_KEY)

struct cand {
	char ifname[IF_NAMESIZE];
	union xrf_sa addr;
	char net[64];                 /* "10.78.0.0/24": the fabric name */
};

static bool iface_wanted(const char *ifname)
{
	const char *p = xrf_params.iface;
	size_t n = strlen(ifname);

	if (!p || !*p)
		return true;
	while (*p) {
		size_t k = strcspn(p, ",");

		if (k == n && !strncmp(p, ifname, n))
			return true;
		p += k + (p[k] == ',');
	}
	return false;
}

static int prefix_len(const struct sockaddr *mask)
{
	const uint8_t *b = mask->sa_family == AF_INET6 ?
			   ((const struct sockaddr_in6 *)mask)->sin6_addr.s6_addr :
			   (const uint8_t *)&((const struct sockaddr_in *)mask)->sin_addr;
	int n = mask->sa_family == AF_INET6 ? 16 : 4, i, bits = 0;

	for (i = 0; i < n; i++)
		bits += __builtin_popcount(b[i]);
	return bits;
}

/* "10.78.0.0/24" from an address and its mask. */
static void net_name(const struct ifaddrs *ifa, char *out, size_t len)
{
	union xrf_sa net;
	char host[INET6_ADDRSTRLEN] = "?";
	const uint8_t *m;
	uint8_t *a;
	int i, n;

	memset(&net, 0, sizeof(net));
	memcpy(&net, ifa->ifa_addr, ifa->ifa_addr->sa_family == AF_INET6 ?
	       sizeof(net.in6) : sizeof(net.in));
	n = ifa->ifa_addr->sa_family == AF_INET6 ? 16 : 4;
	a = n == 16 ? net.in6.sin6_addr.s6_addr : (uint8_t *)&net.in.sin_addr;
	m = n == 16 ? ((const struct sockaddr_in6 *)ifa->ifa_netmask)->sin6_addr.s6_addr :
		      (const uint8_t *)&((const struct sockaddr_in *)ifa->ifa_netmask)->sin_addr;
	for (i = 0; i < n; i++)
		a[i] &= m[i];
	xrf_sa_host(&net, host, sizeof(host));
	snprintf(out, len, "%s/%d", host, prefix_len(ifa->ifa_netmask));
}

static bool usable(const struct ifaddrs *ifa)
{
	int fam;

	if (!ifa->ifa_addr || !ifa->ifa_netmask || !(ifa->ifa_flags & IFF_UP) ||
	    (ifa->ifa_flags & IFF_LOOPBACK))
		return false;
	fam = ifa->ifa_addr->sa_family;
	if (fam == AF_INET6 &&
	    IN6_IS_ADDR_LINKLOCAL(&((const struct sockaddr_in6 *)ifa->ifa_addr)->sin6_addr))
		return false;
	return (fam == AF_INET || fam == AF_INET6) && iface_wanted(ifa->ifa_name) &&
	       strlen(ifa->ifa_name) < IF_NAMESIZE;
}

/* Interfaces and addresses, IPv4 before IPv6, first address of each
 * family only. */
static int candidates(struct cand *c, int max)
{
	struct ifaddrs *ifs, *ifa;
	int n = 0, fam, i;

	if (getifaddrs(&ifs))
		return 0;
	for (fam = 0; fam < 2; fam++) {
		for (ifa = ifs; ifa && n < max; ifa = ifa->ifa_next) {
			if (!usable(ifa) ||
			    ifa->ifa_addr->sa_family != (fam ? AF_INET6 : AF_INET))
				continue;
			for (i = 0; i < n; i++)
				if (!strcmp(c[i].ifname, ifa->ifa_name) &&
				    c[i].addr.sa.sa_family == ifa->ifa_addr->sa_family)
					break;
			if (i < n)
				continue;
			memset(&c[n], 0, sizeof(c[n]));
			snprintf(c[n].ifname, sizeof(c[n].ifname), "%s", ifa->ifa_name);
			memcpy(&c[n].addr, ifa->ifa_addr, fam ? sizeof(c[n].addr.in6) :
			       sizeof(c[n].addr.in));
			net_name(ifa, c[n].net, sizeof(c[n].net));
			n++;
		}
	}
	freeifaddrs(ifs);
	return n;
}

static void set_attrs(struct fi_info *fi)
{
	fi->caps = XRF_TX_CAPS | XRF_RX_CAPS | FI_REMOTE_COMM;
	fi->mode = FI_RX_CQ_DATA;
	*fi->tx_attr = (struct fi_tx_attr){
		.caps = XRF_TX_CAPS, .mode = FI_RX_CQ_DATA,
		.op_flags = XRF_TX_OP_FLAGS, .msg_order = FI_ORDER_SAS,
		.comp_order = FI_ORDER_NONE, .inject_size = XRF_INJECT_SIZE,
		.size = 256, .iov_limit = XROCE_MAX_SGE, .rma_iov_limit = 1,
	};
	*fi->rx_attr = (struct fi_rx_attr){
		.caps = XRF_RX_CAPS, .mode = FI_RX_CQ_DATA, .op_flags = FI_COMPLETION,
		.msg_order = FI_ORDER_SAS, .comp_order = FI_ORDER_NONE,
		.size = XRF_RX_SIZE_MAX, .iov_limit = XRF_IOV_LIMIT,
	};
	*fi->ep_attr = (struct fi_ep_attr){
		.type = FI_EP_MSG, .protocol = FI_PROTO_UNSPEC, .protocol_version = 1,
		.max_msg_size = XROCE_MAX_MSG_SIZE, .tx_ctx_cnt = 1, .rx_ctx_cnt = 1,
	};
	*fi->domain_attr = (struct fi_domain_attr){
		.threading = FI_THREAD_SAFE, .control_progress = FI_PROGRESS_AUTO,
		.data_progress = FI_PROGRESS_AUTO, .resource_mgmt = FI_RM_ENABLED,
		.av_type = FI_AV_UNSPEC, .mr_mode = XRF_MR_MODE, .mr_key_size = 8,
		.cq_data_size = 4, .cq_cnt = 1024, .ep_cnt = 8192, .tx_ctx_cnt = 8192,
		.rx_ctx_cnt = 8192, .max_ep_tx_ctx = 1, .max_ep_rx_ctx = 1,
		.mr_iov_limit = 1, .caps = FI_REMOTE_COMM,
		.max_err_data = XROCE_PRIVATE_DATA_MAX, .mr_cnt = 65536,
	};
	fi->fabric_attr->prov_version = XRF_PROV_VERSION;
	/* Without libxroce's progress thread, data moves only in calls. */
	if (!xrf_params.progress_thread)
		fi->domain_attr->data_progress = FI_PROGRESS_MANUAL;
}

static struct fi_info *info_for(const struct cand *c, uint16_t port)
{
	struct fi_info *fi = fi_allocinfo();
	char dom[IF_NAMESIZE + 8];

	if (!fi)
		return NULL;
	set_attrs(fi);
	snprintf(dom, sizeof(dom), "xroce_%s", c->ifname);
	fi->domain_attr->name = strdup(dom);
	fi->fabric_attr->name = strdup(c->net);
	fi->addr_format = c->addr.sa.sa_family == AF_INET6 ? FI_SOCKADDR_IN6 :
							     FI_SOCKADDR_IN;
	fi->src_addrlen = c->addr.sa.sa_family == AF_INET6 ? sizeof(c->addr.in6) :
							    sizeof(c->addr.in);
	fi->src_addr = malloc(fi->src_addrlen);
	if (!fi->domain_attr->name || !fi->fabric_attr->name || !fi->src_addr) {
		fi_freeinfo(fi);
		return NULL;
	}
	memcpy(fi->src_addr, &c->addr, fi->src_addrlen);
	xrf_sa_set_port((union xrf_sa *)fi->src_addr, port);
	return fi;
}

/* node/service and the hints' addresses: a source and/or a destination. */
static int resolve(const char *node, const char *service, uint64_t flags,
		   const struct fi_info *hints, union xrf_sa *src, bool *has_src,
		   union xrf_sa *dst, bool *has_dst)
{
	struct addrinfo ai = { .ai_socktype = SOCK_DGRAM }, *res;
	size_t n;

	*has_src = *has_dst = false;
	if (hints && hints->src_addr) {
		n = xrf_sa_len(hints->src_addr, hints->src_addrlen);
		if (!n)
			return -FI_EINVAL;
		memcpy(src, hints->src_addr, n);
		*has_src = true;
	}
	if (hints && hints->dest_addr) {
		n = xrf_sa_len(hints->dest_addr, hints->dest_addrlen);
		if (!n)
			return -FI_EINVAL;
		memcpy(dst, hints->dest_addr, n);
		*has_dst = true;
	}
	if (!node && !service)
		return 0;
	if (hints && hints->addr_format == FI_SOCKADDR_IN)
		ai.ai_family = AF_INET;
	else if (hints && hints->addr_format == FI_SOCKADDR_IN6)
		ai.ai_family = AF_INET6;
	if (flags & FI_SOURCE)
		ai.ai_flags |= AI_PASSIVE;
	if (flags & FI_NUMERICHOST)
		ai.ai_flags |= AI_NUMERICHOST;
	if (getaddrinfo(node, service, &ai, &res))
		return -FI_ENODATA;
	n = res->ai_addrlen <= sizeof(*src) ? res->ai_addrlen : sizeof(*src);
	if (flags & FI_SOURCE) {
		memcpy(src, res->ai_addr, n);
		*has_src = true;
	} else {
		memcpy(dst, res->ai_addr, n);
		*has_dst = true;
	}
	freeaddrinfo(res);
	return 0;
}

static bool is_wildcard(const union xrf_sa *a)
{
	return a->sa.sa_family == AF_INET ? a->in.sin_addr.s_addr == htonl(INADDR_ANY) :
	       IN6_IS_ADDR_UNSPECIFIED(&a->in6.sin6_addr);
}

/* Does candidate c fit the source and destination asked? */
static bool fits(const struct cand *c, const union xrf_sa *src, bool has_src,
		 const union xrf_sa *dst, bool has_dst)
{
	int fam = c->addr.sa.sa_family;

	if (has_src && (src->sa.sa_family != fam ||
			(!is_wildcard(src) &&
			 memcmp(fam == AF_INET ? (const void *)&src->in.sin_addr :
						 (const void *)&src->in6.sin6_addr,
				fam == AF_INET ? (const void *)&c->addr.in.sin_addr :
						 (const void *)&c->addr.in6.sin6_addr,
				fam == AF_INET ? 4 : 16) != 0)))
		return false;
	return !has_dst || dst->sa.sa_family == fam;
}

static int set_dest(struct fi_info *fi, const union xrf_sa *dst)
{
	fi->dest_addrlen = dst->sa.sa_family == AF_INET6 ? sizeof(dst->in6) :
							   sizeof(dst->in);
	fi->dest_addr = malloc(fi->dest_addrlen);
	if (!fi->dest_addr)
		return -FI_ENOMEM;
	memcpy(fi->dest_addr, dst, fi->dest_addrlen);
	return 0;
}

/* The fi_info for candidate c, if its device opens and the hints fit. */
static struct fi_info *offer(uint32_t version, const struct cand *c,
			     const struct fi_info *hints, const union xrf_sa *src,
			     bool has_src, const union xrf_sa *dst, bool has_dst)
{
	struct xrf_dev *xd;
	struct fi_info *fi;

	if (!fits(c, src, has_src, dst, has_dst) || xrf_dev_get(c->ifname, &xd))
		return NULL;
	xrf_dev_put(xd);
	fi = info_for(c, has_src ? xrf_sa_port(src) : 0);
	if (!fi)
		return NULL;
	if (xrf_check_hints(version, fi, hints) || (has_dst && set_dest(fi, dst))) {
		fi_freeinfo(fi);
		return NULL;
	}
	xrf_alter_info(version, fi, hints);
	return fi;
}

int xrf_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints, struct fi_info **info)
{
	struct fi_info *head = NULL, **tail = &head;
	union xrf_sa src, dst;
	bool has_src, has_dst;
	struct cand c[16];
	int n, i, rc;

	*info = NULL;
	if (hints && hints->ep_attr && hints->ep_attr->type != FI_EP_UNSPEC &&
	    hints->ep_attr->type != FI_EP_MSG)
		return -FI_ENODATA;
	memset(&src, 0, sizeof(src));
	memset(&dst, 0, sizeof(dst));
	rc = resolve(node, service, flags, hints, &src, &has_src, &dst, &has_dst);
	if (rc)
		return rc == -FI_EINVAL ? -FI_EINVAL : -FI_ENODATA;
	n = candidates(c, 16);
	for (i = 0; i < n; i++) {
		struct fi_info *fi = offer(version, &c[i], hints, &src, has_src,
					   &dst, has_dst);

		if (fi) {
			*tail = fi;
			tail = &fi->next;
		}
	}
	if (!head)
		return -FI_ENODATA;
	*info = head;
	return 0;
}

int xrf_domain_ifname(const struct fi_info *info, char ifname[IF_NAMESIZE])
{
	const char *name = info && info->domain_attr ? info->domain_attr->name : NULL;

	if (!name || strncmp(name, "xroce_", 6) != 0 || strlen(name + 6) >= IF_NAMESIZE ||
	    !name[6])
		return -FI_EINVAL;
	snprintf(ifname, IF_NAMESIZE, "%s", name + 6);
	return 0;
}
