// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The fabric object: a factory for domains, passive endpoints and event
 * queues, and fi_trywait over our CQs and EQs (the FI_WAIT_FD protocol:
 * trywait, then poll the descriptors only if it returned 0).
 */
#include <stdlib.h>

#include "ofi.h"

static int fabric_close(struct fid *fid)
{
	struct xrf_fabric *fab = (struct xrf_fabric *)fid;

	pthread_mutex_lock(&fab->lock);
	if (fab->refs) {
		pthread_mutex_unlock(&fab->lock);
		return -FI_EBUSY;
	}
	pthread_mutex_unlock(&fab->lock);
	pthread_mutex_destroy(&fab->lock);
	free(fab);
	return 0;
}

static int fabric_trywait(struct fid_fabric *fabric, struct fid **fids, int count)
{
	int i, rc;

	if (count < 0 || (count && !fids))
		return -FI_EINVAL;
	for (i = 0; i < count; i++) {
		if (!fids[i])
			return -FI_EINVAL;
		switch (fids[i]->fclass) {
		case FI_CLASS_CQ:
			rc = xrf_cq_trywait((struct xrf_cq *)fids[i]);
			break;
		case FI_CLASS_EQ:
			rc = xrf_eq_trywait((struct xrf_eq *)fids[i]);
			break;
		default:
			return -FI_EINVAL;
		}
		if (rc)
			return rc;
	}
	return 0;
}

static int fabric_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
			    struct fid_wait **waitset)
{
	return -FI_ENOSYS;
}

static int fabric_domain2(struct fid_fabric *fabric, struct fi_info *info,
			  struct fid_domain **dom, uint64_t flags, void *context)
{
	if (flags)
		return -FI_EBADFLAGS;
	return xrf_domain_open(fabric, info, dom, context);
}

static struct fi_ops fabric_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = fabric_close,
	.bind = xrf_no_bind,
	.control = xrf_no_control,
	.ops_open = xrf_no_ops_open,
	.tostr = xrf_no_tostr,
	.ops_set = xrf_no_ops_set,
};

static struct fi_ops_fabric fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = xrf_domain_open,
	.passive_ep = xrf_passive_ep,
	.eq_open = xrf_eq_open,
	.wait_open = fabric_wait_open,
	.trywait = fabric_trywait,
	.domain2 = fabric_domain2,
};

int xrf_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
	       void *context)
{
	struct xrf_fabric *fab;

	if (!attr || !fabric)
		return -FI_EINVAL;
	fab = calloc(1, sizeof(*fab));
	if (!fab)
		return -FI_ENOMEM;
	if (pthread_mutex_init(&fab->lock, NULL)) {
		free(fab);
		return -FI_ENOMEM;
	}
	fab->fabric_fid.fid.fclass = FI_CLASS_FABRIC;
	fab->fabric_fid.fid.context = context;
	fab->fabric_fid.fid.ops = &fabric_fi_ops;
	fab->fabric_fid.ops = &fabric_ops;
	fab->fabric_fid.api_version = attr->api_version;
	*fabric = &fab->fabric_fid;
	return 0;
}
