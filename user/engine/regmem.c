// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Where a registered region's bytes are: memory from xroce_mem_alloc is
 * already in the memory map (used in place); any other memory of the
 * process is moved into it first (anymem.c).  Then mr.c publishes it.
 */
#include <errno.h>
#include <stdbool.h>

#include "anymem.h"
#include "device.h"
#include "engine.h"
#include "mr.h"

int xr_mr_reg(struct xroce_pd *pd, void *addr, size_t length, int access,
	      struct xroce_mr **out)
{
	struct xroce_device *dev = pd->dev;
	struct xr_extent *ext = NULL;
	uint8_t *p = addr;
	bool nocache = access & XROCE_REG_NO_CACHE;
	uint64_t off;
	int rc;

	access &= ~XROCE_REG_NO_CACHE;
	if (access & ~(XROCE_ACCESS_LOCAL_WRITE | XROCE_ACCESS_REMOTE_WRITE |
		       XROCE_ACCESS_REMOTE_READ))
		return xr_fail(&dev->log, -EINVAL, "xroce_reg_mr: unknown access bits %#x",
			       access);
	/* As in ibverbs, remote write needs local write. */
	if ((access & XROCE_ACCESS_REMOTE_WRITE) && !(access & XROCE_ACCESS_LOCAL_WRITE))
		return xr_fail(&dev->log, -EINVAL,
			       "xroce_reg_mr: REMOTE_WRITE requires LOCAL_WRITE");
	if (!length)
		return xr_fail(&dev->log, -EINVAL, "xroce_reg_mr: length 0");
	if (p >= dev->mem && p < dev->mem + dev->mem_len) {
		if (p < dev->mem + dev->heap.base ||
		    length > (size_t)(dev->mem + dev->mem_len - p))
			return xr_fail(&dev->log, -EINVAL, "xroce_reg_mr: [%p, +%zu) "
				       "is not inside the device memory's heap",
				       addr, length);
		off = (uint64_t)(p - dev->mem);
	} else {
		/* Regions peers may WRITE are given back at deregistration
		 * (anymem.c says why). */
		rc = xr_anymem_get(dev, addr, length,
				   nocache || (access & XROCE_ACCESS_REMOTE_WRITE),
				   &off, &ext);
		if (rc)
			return rc;
	}
	rc = xr_mr_publish(pd, addr, length, access, off, ext, out);
	if (rc && ext)
		xr_anymem_put(dev, ext);
	return rc;
}

int xr_mr_dereg(struct xroce_mr *mr)
{
	struct xroce_device *dev = mr->pd->dev;
	struct xr_extent *ext;
	int rc = xr_mr_withdraw(mr, &ext);

	if (!rc && ext)
		xr_anymem_put(dev, ext);
	return rc;
}
