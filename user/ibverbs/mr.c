// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Protection domains and memory regions.  ibv_reg_mr takes any memory of
 * the process: xroce_reg_mr moves its pages into the device's memory map at
 * the same addresses (docs/VERBS.md).  The regions are also kept here, per
 * PD, so that a work request naming a bad lkey or range completes with
 * IBV_WC_LOC_PROT_ERR, as on a NIC, instead of being refused at post time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "xv.h"

#undef ibv_reg_mr
#undef ibv_reg_mr_iova

static int fork_enabled;

XV_EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *c)
{
	static uint32_t handles;
	struct xv_pd *pd;
	int rc;

	if (!c)
		return xv_null(EINVAL, "ibv_alloc_pd: NULL context");
	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return xv_null(ENOMEM, "ibv_alloc_pd: out of memory");
	rc = xroce_alloc_pd(xv_ctx(c)->xd, &pd->xpd);
	if (rc) {
		free(pd);
		return xv_lib_null(rc);
	}
	pthread_mutex_init(&pd->lock, NULL);
	pd->pd.context = c;
	pd->pd.handle = __atomic_add_fetch(&handles, 1, __ATOMIC_RELAXED);
	return &pd->pd;
}

XV_EXPORT int ibv_dealloc_pd(struct ibv_pd *p)
{
	struct xv_pd *pd = p ? xv_pd(p) : NULL;
	int rc;

	if (!pd)
		return EINVAL;
	rc = xroce_dealloc_pd(pd->xpd);
	if (rc)
		return xv_lib_err(rc);
	pthread_mutex_destroy(&pd->lock);
	free(pd);
	return 0;
}

static int page_range(void *addr, size_t len, void **start, size_t *plen)
{
	uintptr_t a = (uintptr_t)addr, pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t s = a & ~(pg - 1), e = (a + len + pg - 1) & ~(pg - 1);

	*start = (void *)s;
	*plen = e - s;
	return 0;
}

static struct ibv_mr *reg(struct ibv_pd *p, void *addr, size_t len,
			  uint64_t iova, unsigned int access)
{
	const unsigned int known = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_HUGETLB |
				   IBV_ACCESS_RELAXED_ORDERING;
	struct xv_pd *pd = p ? xv_pd(p) : NULL;
	struct xv_mr *mr;
	int xa = 0, rc;

	if (!pd)
		return xv_null(EINVAL, "ibv_reg_mr: NULL PD");
	if (access & (IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND |
		      IBV_ACCESS_ZERO_BASED | IBV_ACCESS_ON_DEMAND))
		return xv_null(EOPNOTSUPP, "ibv_reg_mr: access %#x: xroce has no "
			       "atomics, memory windows, zero-based or on-demand "
			       "regions", access);
	if (access & ~(known | IBV_ACCESS_OPTIONAL_RANGE))
		return xv_null(EINVAL, "ibv_reg_mr: unknown access flags %#x", access);
	/* Flags of the optional range that we do not know are ignored, as
	 * rdma-core does for optional flags. */
	access &= known;
	if ((access & IBV_ACCESS_REMOTE_WRITE) && !(access & IBV_ACCESS_LOCAL_WRITE))
		return xv_null(EINVAL, "ibv_reg_mr: REMOTE_WRITE needs LOCAL_WRITE");
	if (iova != (uint64_t)(uintptr_t)addr)
		return xv_null(EOPNOTSUPP, "ibv_reg_mr_iova: xroce regions are "
			       "addressed by their virtual address (iova %#llx, "
			       "address %p)", (unsigned long long)iova, addr);
	if (!len)
		return xv_null(EINVAL, "ibv_reg_mr: length 0");
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return xv_null(ENOMEM, "ibv_reg_mr: out of memory");
	if (access & IBV_ACCESS_LOCAL_WRITE)
		xa |= XROCE_ACCESS_LOCAL_WRITE;
	if (access & IBV_ACCESS_REMOTE_WRITE)
		xa |= XROCE_ACCESS_REMOTE_WRITE;
	if (access & IBV_ACCESS_REMOTE_READ)
		xa |= XROCE_ACCESS_REMOTE_READ;
	/* Deregistered pages kept in device memory stay MADV_DONTFORK and
	 * shared: a process that forks wants them back at once. */
	if (fork_enabled)
		xa |= XROCE_REG_NO_CACHE;
	rc = xroce_reg_mr(pd->xpd, addr, len, xa, &mr->xmr);
	if (rc) {
		free(mr);
		return xv_lib_null(rc);
	}
	if (fork_enabled) {
		void *s;
		size_t l;

		page_range(addr, len, &s, &l);
		madvise(s, l, MADV_DONTFORK);
	}
	mr->mr.context = p->context;
	mr->mr.pd = p;
	mr->mr.addr = addr;
	mr->mr.length = len;
	mr->mr.handle = mr->xmr->lkey;
	mr->mr.lkey = mr->xmr->lkey;
	mr->mr.rkey = mr->xmr->rkey;
	mr->access = access;
	pthread_mutex_lock(&pd->lock);
	mr->next = pd->mrs;
	pd->mrs = mr;
	pthread_mutex_unlock(&pd->lock);
	return &mr->mr;
}

XV_EXPORT struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t len,
				    int access)
{
	return reg(pd, addr, len, (uint64_t)(uintptr_t)addr, (unsigned int)access);
}

XV_EXPORT struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr,
					 size_t len, uint64_t iova, int access)
{
	return reg(pd, addr, len, iova, (unsigned int)access);
}

XV_EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr,
					  size_t len, uint64_t iova,
					  unsigned int access)
{
	return reg(pd, addr, len, iova, access);
}

XV_EXPORT struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
					   size_t len, uint64_t iova, int fd,
					   int access)
{
	(void)pd; (void)offset; (void)len; (void)iova; (void)fd; (void)access;
	return xv_null(EOPNOTSUPP, "ibv_reg_dmabuf_mr: xroce cannot place data "
		       "into dma-buf memory");
}

XV_EXPORT int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd,
			   void *addr, size_t len, int access)
{
	(void)mr; (void)flags; (void)pd; (void)addr; (void)len; (void)access;
	xv_fail(EOPNOTSUPP, "ibv_rereg_mr: not supported by xroce (deregister "
		"and register again)");
	return IBV_REREG_MR_ERR_INPUT;
}

XV_EXPORT int ibv_dereg_mr(struct ibv_mr *m)
{
	struct xv_mr *mr = (struct xv_mr *)m, **pp;
	struct xv_pd *pd;
	int rc;

	if (!mr)
		return EINVAL;
	pd = xv_pd(m->pd);
	pthread_mutex_lock(&pd->lock);
	for (pp = &pd->mrs; *pp && *pp != mr; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = mr->next;
	pthread_mutex_unlock(&pd->lock);
	rc = xroce_dereg_mr(mr->xmr);
	if (rc)
		return xv_lib_err(rc);
	free(mr);
	return 0;
}

int xv_check_sge(struct xv_pd *pd, uint32_t lkey, uint64_t addr, uint32_t len,
		 bool write)
{
	struct xv_mr *mr;
	int rc = IBV_WC_LOC_PROT_ERR;

	pthread_mutex_lock(&pd->lock);
	for (mr = pd->mrs; mr; mr = mr->next) {
		uint64_t base = (uint64_t)(uintptr_t)mr->mr.addr;

		if (mr->mr.lkey != lkey)
			continue;
		if (addr >= base && addr - base <= mr->mr.length &&
		    len <= mr->mr.length - (addr - base) &&
		    (!write || (mr->access & IBV_ACCESS_LOCAL_WRITE)))
			rc = 0;
		break;
	}
	pthread_mutex_unlock(&pd->lock);
	return rc;
}

/* Registered pages are shared mappings of the device's memory map: after
 * fork the child would share them.  ibv_fork_init keeps them out of
 * children (MADV_DONTFORK on every range registered afterwards), as
 * rdma-core does for pinned memory. */
XV_EXPORT int ibv_fork_init(void)
{
	fork_enabled = 1;
	return 0;
}

XV_EXPORT enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return fork_enabled ? IBV_FORK_ENABLED : IBV_FORK_DISABLED;
}

XV_EXPORT int ibv_dontfork_range(void *base, size_t size)
{
	void *s;
	size_t l;

	page_range(base, size, &s, &l);
	return fork_enabled && madvise(s, l, MADV_DONTFORK) ? errno : 0;
}

XV_EXPORT int ibv_dofork_range(void *base, size_t size)
{
	void *s;
	size_t l;

	page_range(base, size, &s, &l);
	return fork_enabled && madvise(s, l, MADV_DOFORK) ? errno : 0;
}
