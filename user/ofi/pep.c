// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Passive endpoints: a listening UDP port of the device for the
 * interface the fi_info names (xroce_listen; the address is the
 * interface's, the port the one asked for or a free one).  Requests come
 * to it through the CM progress as FI_CONNREQ events; fi_reject answers
 * one with data.  Closed, it stops listening and refuses what it left
 * unanswered.
 */
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "ofi.h"

static int pep_close(struct fid *fid)
{
	struct xrf_pep *pep = (struct xrf_pep *)fid;

	xrf_cm_del_pep(pep);
	if (pep->listening)
		xroce_unlisten(pep->xd->dev, xrf_sa_port(&pep->addr));
	xrf_cm_pep_release_reqs(pep);
	if (pep->eq) {
		xrf_eq_forget(pep->eq, &pep->pep_fid.fid);
		pthread_mutex_lock(&pep->eq->lock);
		pep->eq->refs--;
		pthread_mutex_unlock(&pep->eq->lock);
	}
	xrf_dev_put(pep->xd);
	fi_freeinfo(pep->info);
	pthread_mutex_lock(&pep->fab->lock);
	pep->fab->refs--;
	pthread_mutex_unlock(&pep->fab->lock);
	free(pep);
	return 0;
}

static int pep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct xrf_pep *pep = (struct xrf_pep *)fid;
	struct xrf_eq *eq = (struct xrf_eq *)bfid;

	if (!bfid || bfid->fclass != FI_CLASS_EQ)
		return -FI_EINVAL;
	if (flags)
		return -FI_EBADFLAGS;
	if (pep->eq || pep->listening)
		return -FI_EOPBADSTATE;
	pep->eq = eq;
	pthread_mutex_lock(&eq->lock);
	eq->refs++;
	pthread_mutex_unlock(&eq->lock);
	return 0;
}

static bool wildcard(const union xrf_sa *a)
{
	return a->sa.sa_family == AF_INET ? a->in.sin_addr.s_addr == htonl(INADDR_ANY) :
	       IN6_IS_ADDR_UNSPECIFIED(&a->in6.sin6_addr);
}

static int pep_listen(struct fid_pep *pep_fid)
{
	struct xrf_pep *pep = (struct xrf_pep *)pep_fid;
	char host[INET6_ADDRSTRLEN];
	int rc;

	if (!pep->eq)
		return -FI_ENOEQ;
	if (pep->listening)
		return -FI_EOPBADSTATE;
	rc = xrf_sa_host(&pep->addr, host, sizeof(host));
	if (rc)
		return rc;
	rc = xroce_listen(pep->xd->dev, wildcard(&pep->addr) ? NULL : host,
			  xrf_sa_port(&pep->addr));
	if (rc < 0)
		return rc;
	xrf_sa_set_port(&pep->addr, (uint16_t)rc);
	pep->listening = true;
	xrf_cm_add_pep(pep);
	return 0;
}

static int pep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	return xrf_sa_out(&((struct xrf_pep *)fid)->addr, addr, addrlen);
}

static int pep_setname(fid_t fid, void *addr, size_t addrlen)
{
	struct xrf_pep *pep = (struct xrf_pep *)fid;
	size_t n = xrf_sa_len(addr, addrlen);

	if (!n || ((union xrf_sa *)addr)->sa.sa_family != pep->addr.sa.sa_family)
		return -FI_EINVAL;
	if (pep->listening)
		return -FI_EOPBADSTATE;
	memcpy(&pep->addr, addr, n);
	return 0;
}

static int pep_getopt(fid_t fid, int level, int optname, void *optval,
		      size_t *optlen)
{
	if (level != FI_OPT_ENDPOINT || optname != FI_OPT_CM_DATA_SIZE)
		return -FI_ENOPROTOOPT;
	if (!optval || !optlen)
		return -FI_EINVAL;
	if (*optlen < sizeof(size_t)) {
		*optlen = sizeof(size_t);
		return -FI_ETOOSMALL;
	}
	*(size_t *)optval = XROCE_PRIVATE_DATA_MAX;
	*optlen = sizeof(size_t);
	return 0;
}

static int pep_setopt(fid_t fid, int level, int optname, const void *optval,
		      size_t optlen)
{
	return -FI_ENOPROTOOPT;
}

static ssize_t pep_cancel(fid_t fid, void *context)
{
	return -FI_ENOSYS;
}

static int pep_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
		      struct fid_ep **ep, void *context)
{
	return -FI_ENOSYS;
}

static int pep_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
		      struct fid_ep **ep, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t pep_size_left(struct fid_ep *ep)
{
	return -FI_ENOSYS;
}

static int pep_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{
	return -FI_ENOSYS;
}

static int pep_connect(struct fid_ep *ep, const void *addr, const void *param,
		       size_t paramlen)
{
	return -FI_ENOSYS;
}

static int pep_accept(struct fid_ep *ep, const void *param, size_t paramlen)
{
	return -FI_ENOSYS;
}

static int pep_shutdown(struct fid_ep *ep, uint64_t flags)
{
	return -FI_ENOSYS;
}

static int pep_join(struct fid_ep *ep, const void *addr, uint64_t flags,
		    struct fid_mc **mc, void *context)
{
	return -FI_ENOSYS;
}

static struct fi_ops pep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = pep_close,
	.bind = pep_bind,
	.control = xrf_no_control,
	.ops_open = xrf_no_ops_open,
	.tostr = xrf_no_tostr,
	.ops_set = xrf_no_ops_set,
};

static struct fi_ops_ep pep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = pep_cancel,
	.getopt = pep_getopt,
	.setopt = pep_setopt,
	.tx_ctx = pep_tx_ctx,
	.rx_ctx = pep_rx_ctx,
	.rx_size_left = pep_size_left,
	.tx_size_left = pep_size_left,
};

static struct fi_ops_cm pep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = pep_setname,
	.getname = pep_getname,
	.getpeer = pep_getpeer,
	.connect = pep_connect,
	.listen = pep_listen,
	.accept = pep_accept,
	.reject = xrf_cm_reject,
	.shutdown = pep_shutdown,
	.join = pep_join,
};

int xrf_passive_ep(struct fid_fabric *fabric, struct fi_info *info,
		   struct fid_pep **out, void *context)
{
	struct xrf_fabric *fab = (struct xrf_fabric *)fabric;
	char ifname[IF_NAMESIZE];
	struct xrf_pep *pep;
	size_t n;
	int rc;

	if (!fabric || !info || !out || xrf_domain_ifname(info, ifname))
		return -FI_EINVAL;
	n = xrf_sa_len(info->src_addr, info->src_addrlen);
	if (!n)
		return -FI_EINVAL;
	pep = calloc(1, sizeof(*pep));
	if (!pep)
		return -FI_ENOMEM;
	rc = xrf_dev_get(ifname, &pep->xd);
	pep->info = rc ? NULL : fi_dupinfo(info);
	if (rc || !pep->info) {
		if (!rc)
			xrf_dev_put(pep->xd);
		free(pep);
		return rc ? rc : -FI_ENOMEM;
	}
	memcpy(&pep->addr, info->src_addr, n);
	pep->fab = fab;
	pep->pep_fid.fid.fclass = FI_CLASS_PEP;
	pep->pep_fid.fid.context = context;
	pep->pep_fid.fid.ops = &pep_fi_ops;
	pep->pep_fid.ops = &pep_ops;
	pep->pep_fid.cm = &pep_cm_ops;
	pthread_mutex_lock(&fab->lock);
	fab->refs++;
	pthread_mutex_unlock(&fab->lock);
	*out = &pep->pep_fid;
	return 0;
}
