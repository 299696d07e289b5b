// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Protection domains and memory regions.  A region is a range of the
 * memory map (where regmem.c says its bytes are) published to XDP in
 * xr_mrs under a random rkey, so a peer can write (or read) it only with
 * that key, only within its bounds and only with the rights it was
 * registered with, and only through a connection of the same device and
 * protection domain.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "device.h"
#include "engine.h"
#include "mr.h"
#include "qp.h"

int xr_pd_alloc(struct xroce_device *dev, struct xroce_pd **out)
{
	static const uint32_t no_pd = 0;
	struct xroce_pd *pd;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return xr_fail(&dev->log, -ENOMEM, "out of memory");
	pd->dev = dev;
	do
		pd->id = (uint32_t)xr_random64();
	while (pd->id == no_pd);
	pd->next = dev->pds;
	dev->pds = pd;
	*out = pd;
	return 0;
}

int xr_pd_dealloc(struct xroce_pd *pd)
{
	struct xroce_device *dev = pd->dev;
	struct xroce_pd **pp;
	struct xroce_qp *qp;

	if (pd->mrs)
		return xr_fail(&dev->log, -EBUSY,
			       "xroce_dealloc_pd: memory regions still registered");
	for (qp = dev->qps; qp; qp = qp->next)
		if (qp->pd == pd)
			return xr_fail(&dev->log, -EBUSY,
				       "xroce_dealloc_pd: queue pairs still use it");
	for (pp = &dev->pds; *pp; pp = &(*pp)->next) {
		if (*pp == pd) {
			*pp = pd->next;
			free(pd);
			return 0;
		}
	}
	return xr_fail(&dev->log, -ENOENT, "xroce_dealloc_pd: unknown PD");
}

int xr_mr_publish(struct xroce_pd *pd, void *addr, size_t length, int access,
		  uint64_t mem_off, struct xr_extent *ext, struct xroce_mr **out)
{
	struct xroce_device *dev = pd->dev;
	struct xr_mr_int *m;
	struct xr_mr v;
	int tries, rc;

	m = calloc(1, sizeof(*m));
	if (!m)
		return xr_fail(&dev->log, -ENOMEM, "out of memory");
	m->mem_off = mem_off;
	m->ext = ext;
	memset(&v, 0, sizeof(v));
	v.domain = dev->domain_id;
	v.pd = pd->id;
	v.access = (uint32_t)access;
	v.iova = (uint64_t)(uintptr_t)addr;
	v.len = length;
	v.mem_off = m->mem_off;
	for (tries = 0; tries < 64; tries++) {
		v.rkey = (uint32_t)xr_random64();
		if (!v.rkey)
			continue;
		if (!bpf_map_update_elem(dev->maps.mrs, &v.rkey, &v, BPF_NOEXIST))
			break;
		if (errno != EEXIST) {
			rc = -errno;
			free(m);
			return xr_fail(&dev->log, rc,
				       "xroce_reg_mr: cannot publish the region: %s "
				       "(xr_mrs full?)", strerror(-rc));
		}
	}
	if (tries == 64) {
		free(m);
		return xr_fail(&dev->log, -EBUSY, "xroce_reg_mr: no free key");
	}
	m->pub.pd = pd;
	m->pub.addr = addr;
	m->pub.length = length;
	m->pub.rkey = v.rkey;
	m->pub.lkey = v.rkey;
	m->pub.access = access;
	m->next = pd->mrs;
	pd->mrs = m;
	*out = &m->pub;
	return 0;
}

/* Our answers to peers' READs of region rkey stop: what is not sent yet,
 * and every retransmission, becomes "cannot answer" (sender.c), never
 * bytes of memory the region no longer owns. */
static void fence_reads(struct xroce_pd *pd, uint32_t rkey)
{
	struct xroce_qp *qp;
	uint32_t i;

	for (qp = pd->dev->qps; qp; qp = qp->next) {
		if (qp->pd != pd)
			continue;
		for (i = qp->sq_head; i != qp->sq_tail; i++) {
			struct xr_swr *w = xr_swr_at(qp, i);

			if (w->kind != XR_WK_INTERNAL || w->opcode != XR_OP_READ_RESP ||
			    w->done || w->fenced || w->src_rkey != rkey)
				continue;
			w->fenced = 1;
			qp->st.fenced_answers++;
			if (w->nsent < w->npkts)
				w->npkts = w->nsent + 1; /* one packet says so */
		}
	}
}

int xr_mr_withdraw(struct xroce_mr *mr, struct xr_extent **ext)
{
	struct xr_mr_int **pp, *m = (struct xr_mr_int *)mr;
	struct xroce_pd *pd = mr->pd;

	*ext = NULL;
	for (pp = &pd->mrs; *pp; pp = &(*pp)->next) {
		if (*pp != m)
			continue;
		*pp = m->next;
		/* After this, XDP refuses the key (NAK bad key), and READs it
		 * already let in are answered no further. */
		bpf_map_delete_elem(pd->dev->maps.mrs, &m->pub.rkey);
		*ext = m->ext;
		fence_reads(pd, m->pub.rkey);
		free(m);
		return 0;
	}
	return xr_fail(&pd->dev->log, -ENOENT, "xroce_dereg_mr: unknown region");
}

struct xr_mr_int *xr_mr_find(struct xroce_pd *pd, uint32_t lkey, uint64_t addr,
			     uint64_t len)
{
	struct xr_mr_int *m;

	for (m = pd->mrs; m; m = m->next) {
		uint64_t base = (uint64_t)(uintptr_t)m->pub.addr;

		if (m->pub.lkey != lkey)
			continue;
		if (addr < base || addr - base > m->pub.length ||
		    len > m->pub.length - (addr - base))
			return NULL;
		return m;
	}
	return NULL;
}

bool xr_mr_readable(struct xroce_pd *pd, uint32_t rkey, uint64_t raddr,
		    uint64_t len, uint64_t pos)
{
	/* Keys are both lkey and rkey. */
	struct xr_mr_int *m = xr_mr_find(pd, rkey, raddr, len);

	return m && (m->pub.access & XROCE_ACCESS_REMOTE_READ) &&
	       xr_mr_off(m, raddr) == pos;
}
