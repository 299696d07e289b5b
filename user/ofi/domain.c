// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Domains: a protection domain on the process's device for the interface
 * the fi_info names.  Each domain keeps the operations in flight (one per
 * work request, named by its wr_id) and the bounce buffers; both outlive
 * the endpoint that posted them, since a completion may be read (flushed
 * work, errors) after the endpoint is closed.
 */
#include <stdlib.h>
#include <string.h>

#include "ofi.h"
#include "xroce/fi_xroce.h"

#define OPS_PER_CHUNK 256

struct xrf_op_chunk {
	struct xrf_op_chunk *next;
	struct xrf_op ops[OPS_PER_CHUNK];
};

struct xrf_op *xrf_op_get(struct xrf_domain *dom)
{
	struct xrf_op *op;
	int i;

	pthread_mutex_lock(&dom->lock);
	if (!dom->free_ops) {
		struct xrf_op_chunk *c = calloc(1, sizeof(*c));

		if (!c) {
			pthread_mutex_unlock(&dom->lock);
			return NULL;
		}
		c->next = dom->chunks;
		dom->chunks = c;
		for (i = 0; i < OPS_PER_CHUNK; i++) {
			c->ops[i].next = dom->free_ops;
			dom->free_ops = &c->ops[i];
		}
	}
	op = dom->free_ops;
	dom->free_ops = op->next;
	pthread_mutex_unlock(&dom->lock);
	memset(op, 0, sizeof(*op));
	return op;
}

void xrf_op_put(struct xrf_domain *dom, struct xrf_op *op)
{
	pthread_mutex_lock(&dom->lock);
	if (op->bounce)
		xrf_bounce_put(dom, op->bounce);
	op->bounce = NULL;
	op->ep = NULL;
	op->next = dom->free_ops;
	dom->free_ops = op;
	pthread_mutex_unlock(&dom->lock);
}

void xrf_domain_forget_ep(struct xrf_domain *dom, struct xrf_ep *ep)
{
	struct xrf_op_chunk *c;
	int i;

	for (c = dom->chunks; c; c = c->next)
		for (i = 0; i < OPS_PER_CHUNK; i++)
			if (c->ops[i].ep == ep)
				c->ops[i].ep = NULL;
}

static void *mem_alloc(struct fid_domain *domain, size_t len)
{
	struct xrf_domain *dom = (struct xrf_domain *)domain;

	if (!domain || domain->fid.fclass != FI_CLASS_DOMAIN || !len)
		return NULL;
	return xroce_mem_alloc(dom->xd->dev, len, 4096);
}

static int mem_free(struct fid_domain *domain, void *buf)
{
	struct xrf_domain *dom = (struct xrf_domain *)domain;

	if (!domain || domain->fid.fclass != FI_CLASS_DOMAIN || !buf)
		return -FI_EINVAL;
	return xroce_mem_free(dom->xd->dev, buf) ? -FI_EINVAL : 0;
}

static struct fi_xroce_mem_ops mem_ops = {
	.size = sizeof(struct fi_xroce_mem_ops),
	.alloc = mem_alloc,
	.free = mem_free,
};

/* fi_open_ops: the provider's extensions (include/xroce/fi_xroce.h). */
static int domain_ops_open(struct fid *fid, const char *name, uint64_t flags,
			   void **ops, void *context)
{
	if (!name || !ops)
		return -FI_EINVAL;
	if (strcmp(name, FI_XROCE_MEM_OPS) != 0)
		return -FI_ENOSYS;
	if (flags)
		return -FI_EBADFLAGS;
	*ops = &mem_ops;
	return 0;
}

static int domain_close(struct fid *fid)
{
	struct xrf_domain *dom = (struct xrf_domain *)fid;

	pthread_mutex_lock(&dom->lock);
	if (dom->refs) {
		pthread_mutex_unlock(&dom->lock);
		return -FI_EBUSY;
	}
	while (dom->chunks) {
		struct xrf_op_chunk *c = dom->chunks;

		dom->chunks = c->next;
		free(c);
	}
	xrf_bounce_fini(dom);
	pthread_mutex_unlock(&dom->lock);
	xroce_dealloc_pd(dom->pd);
	xrf_dev_put(dom->xd);
	fi_freeinfo(dom->info);
	pthread_mutex_lock(&dom->fab->lock);
	dom->fab->refs--;
	pthread_mutex_unlock(&dom->fab->lock);
	pthread_mutex_destroy(&dom->lock);
	free(dom);
	return 0;
}

static int no_av(struct fid_domain *d, struct fi_av_attr *attr, struct fid_av **av,
		 void *context)
{
	return -FI_ENOSYS;
}

static int no_scalable_ep(struct fid_domain *d, struct fi_info *info,
			  struct fid_ep **sep, void *context)
{
	return -FI_ENOSYS;
}

static int no_cntr(struct fid_domain *d, struct fi_cntr_attr *attr,
		   struct fid_cntr **cntr, void *context)
{
	return -FI_ENOSYS;
}

static int no_poll(struct fid_domain *d, struct fi_poll_attr *attr,
		   struct fid_poll **pollset)
{
	return -FI_ENOSYS;
}

static int no_stx(struct fid_domain *d, struct fi_tx_attr *attr,
		  struct fid_stx **stx, void *context)
{
	return -FI_ENOSYS;
}

static int no_srx(struct fid_domain *d, struct fi_rx_attr *attr,
		  struct fid_ep **rx_ep, void *context)
{
	return -FI_ENOSYS;
}

static int no_atomic(struct fid_domain *d, enum fi_datatype dt, enum fi_op op,
		     struct fi_atomic_attr *attr, uint64_t flags)
{
	return -FI_ENOSYS;
}

static int no_coll(struct fid_domain *d, enum fi_collective_op coll,
		   struct fi_collective_attr *attr, uint64_t flags)
{
	return -FI_ENOSYS;
}

static int domain_endpoint2(struct fid_domain *d, struct fi_info *info,
			    struct fid_ep **ep, uint64_t flags, void *context)
{
	if (flags)
		return -FI_EBADFLAGS;
	return xrf_endpoint(d, info, ep, context);
}

static struct fi_ops domain_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = domain_close,
	.bind = xrf_no_bind,
	.control = xrf_no_control,
	.ops_open = domain_ops_open,
	.tostr = xrf_no_tostr,
	.ops_set = xrf_no_ops_set,
};

static struct fi_ops_domain domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = no_av,
	.cq_open = xrf_cq_open,
	.endpoint = xrf_endpoint,
	.scalable_ep = no_scalable_ep,
	.cntr_open = no_cntr,
	.poll_open = no_poll,
	.stx_ctx = no_stx,
	.srx_ctx = no_srx,
	.query_atomic = no_atomic,
	.query_collective = no_coll,
	.endpoint2 = domain_endpoint2,
};

int xrf_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **out, void *context)
{
	struct xrf_fabric *fab = (struct xrf_fabric *)fabric;
	char ifname[IF_NAMESIZE];
	struct xrf_domain *dom;
	int rc;

	if (!fabric || !info || !out)
		return -FI_EINVAL;
	if (xrf_domain_ifname(info, ifname))
		return -FI_EINVAL;
	dom = calloc(1, sizeof(*dom));
	if (!dom)
		return -FI_ENOMEM;
	rc = xrf_dev_get(ifname, &dom->xd);
	if (rc) {
		free(dom);
		return rc;
	}
	rc = xroce_alloc_pd(dom->xd->dev, &dom->pd);
	dom->info = fi_dupinfo(info);
	if (rc || !dom->info || pthread_mutex_init(&dom->lock, NULL)) {
		if (!rc)
			xroce_dealloc_pd(dom->pd);
		fi_freeinfo(dom->info);
		xrf_dev_put(dom->xd);
		free(dom);
		return rc ? rc : -FI_ENOMEM;
	}
	dom->fab = fab;
	dom->domain_fid.fid.fclass = FI_CLASS_DOMAIN;
	dom->domain_fid.fid.context = context;
	dom->domain_fid.fid.ops = &domain_fi_ops;
	dom->domain_fid.ops = &domain_ops;
	dom->domain_fid.mr = &xrf_mr_ops;
	pthread_mutex_lock(&fab->lock);
	fab->refs++;
	pthread_mutex_unlock(&fab->lock);
	*out = &dom->domain_fid;
	return 0;
}
