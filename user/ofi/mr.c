// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Memory registration.  A region is an xroce region when libxroce can
 * register the memory (its own device memory, or any memory once it maps
 * the application's pages into the device's memory map): then sends,
 * receives and READs use it in place, and its rkey is the key a peer
 * writes or reads it with (FI_MR_PROV_KEY, FI_MR_VIRT_ADDR: the remote
 * address is the virtual address).
 *
 * A libxroce that registers only its own device memory cannot offer
 * anything else to peers.  Such memory still registers ("host" regions):
 * local use goes through bounce buffers, and its key is above 2^32, a key
 * no xroce region has, so an RMA naming it fails at once (-FI_EINVAL at
 * the initiator) instead of reaching some other region.  ofi_rxm asks for
 * remote read on every buffer it may send from (its rendezvous), so this
 * keeps rxm usable with eager and segmented messages (raise
 * FI_OFI_RXM_SAR_LIMIT) until libxroce takes any memory.
 */
#include <stdlib.h>
#include <string.h>

#include "ofi.h"

#define XRF_ACCESS (FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | \
		    FI_REMOTE_WRITE)
/* Flags accepted and ignored: hints about host memory, and bits 60-63,
 * which libfabric's utility providers use among themselves (ofi_rxm
 * registers its buffer pools with one). */
#define XRF_MR_FLAGS (FI_HMEM_HOST_ALLOC | (0xfULL << 60))

static int mr_close(struct fid *fid)
{
	struct xrf_mr *mr = (struct xrf_mr *)fid;
	struct xrf_domain *dom = mr->dom;
	int rc = 0;

	if (mr->xmr)
		rc = xroce_dereg_mr(mr->xmr);
	if (rc)
		return rc;
	mr->magic = 0;
	pthread_mutex_lock(&dom->lock);
	dom->refs--;
	pthread_mutex_unlock(&dom->lock);
	free(mr);
	return 0;
}

static struct fi_ops mr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = mr_close,
	.bind = xrf_no_bind,
	.control = xrf_no_control,
	.ops_open = xrf_no_ops_open,
	.tostr = xrf_no_tostr,
	.ops_set = xrf_no_ops_set,
};

/* Register with libxroce; -FI_EOPNOTSUPP if it does not take the memory. */
static int reg_xroce(struct xrf_domain *dom, struct xrf_mr *mr)
{
	int access = XROCE_ACCESS_LOCAL_WRITE;
	int rc;

	if (mr->access & FI_REMOTE_WRITE)
		access |= XROCE_ACCESS_REMOTE_WRITE;
	if (mr->access & FI_REMOTE_READ)
		access |= XROCE_ACCESS_REMOTE_READ;
	dom->xd->quiet += !dom->xd->any_memory;
	rc = xroce_reg_mr(dom->pd, (void *)mr->addr, mr->len, access, &mr->xmr);
	dom->xd->quiet -= !dom->xd->any_memory;
	if (!rc)
		return 0;
	mr->xmr = NULL;
	if (!dom->xd->any_memory && rc == -EINVAL)
		return -FI_EOPNOTSUPP;
	return rc;
}

static int mr_reg_one(struct xrf_domain *dom, const void *buf, size_t len,
		      uint64_t access, uint64_t flags, void *context,
		      struct fid_mr **out)
{
	int rc = -FI_EOPNOTSUPP;
	struct xrf_mr *mr;
	bool remote;

	if (!out || (!buf && len) || (access & ~(uint64_t)XRF_ACCESS))
		return -FI_EINVAL;
	if (flags & ~(uint64_t)XRF_MR_FLAGS)
		return -FI_EBADFLAGS;
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -FI_ENOMEM;
	mr->dom = dom;
	mr->addr = buf;
	mr->len = len;
	mr->access = access ? access : XRF_ACCESS;
	remote = mr->access & (FI_REMOTE_READ | FI_REMOTE_WRITE);
	if (len && (remote || dom->xd->any_memory))
		rc = reg_xroce(dom, mr);
	if (rc && rc != -FI_EOPNOTSUPP) {
		free(mr);
		return rc;
	}
	if (rc && remote && !dom->host_remote_warned) {
		dom->host_remote_warned = true;
		FI_WARN(&xrf_prov, FI_LOG_MR, "this libxroce registers only its own "
			"device memory: regions of other memory (from [%p, +%zu) on) "
			"cannot be read or written by peers\n", buf, len);
	}
	mr->magic = XRF_MAGIC_MR;
	mr->mr_fid.fid.fclass = FI_CLASS_MR;
	mr->mr_fid.fid.context = context;
	mr->mr_fid.fid.ops = &mr_fi_ops;
	mr->mr_fid.mem_desc = mr;
	pthread_mutex_lock(&dom->lock);
	mr->mr_fid.key = mr->xmr ? mr->xmr->rkey : ((uint64_t)1 << 32 | ++dom->mr_seq);
	dom->refs++;
	pthread_mutex_unlock(&dom->lock);
	*out = &mr->mr_fid;
	return 0;
}

static int mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access,
		  uint64_t offset, uint64_t requested_key, uint64_t flags,
		  struct fid_mr **mr, void *context)
{
	if (!fid || fid->fclass != FI_CLASS_DOMAIN)
		return -FI_EINVAL;
	return mr_reg_one((struct xrf_domain *)fid, buf, len, access, flags,
			  context, mr);
}

static int mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
		   uint64_t access, uint64_t offset, uint64_t requested_key,
		   uint64_t flags, struct fid_mr **mr, void *context)
{
	if (count != 1 || !iov)
		return -FI_EINVAL; /* mr_iov_limit is 1 */
	return mr_reg(fid, iov[0].iov_base, iov[0].iov_len, access, offset,
		      requested_key, flags, mr, context);
}

static int mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
		      uint64_t flags, struct fid_mr **mr)
{
	if (!attr)
		return -FI_EINVAL;
	if (attr->iface != FI_HMEM_SYSTEM)
		return -FI_ENOSYS;
	return mr_regv(fid, attr->mr_iov, attr->iov_count, attr->access,
		       attr->offset, attr->requested_key, flags, mr, attr->context);
}

struct fi_ops_mr xrf_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = mr_reg,
	.regv = mr_regv,
	.regattr = mr_regattr,
};

struct xroce_mr *xrf_desc_xmr(void *desc, const void *buf, size_t len)
{
	const struct xrf_mr *mr = desc;
	const uint8_t *p = buf;

	if (!mr || mr->magic != XRF_MAGIC_MR || !mr->xmr)
		return NULL;
	if (p < mr->addr || (size_t)(p - mr->addr) > mr->len ||
	    len > mr->len - (size_t)(p - mr->addr))
		return NULL;
	return mr->xmr;
}
