// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Public calls on protection domains and memory regions. */
#include <stddef.h>

#include "xroce/xroce.h"
#include "engine.h"

int xroce_alloc_pd(struct xroce_device *dev, struct xroce_pd **out)
{
	int rc;

	if (!dev || !out)
		return xr_bad_arg("xroce_alloc_pd", "NULL argument");
	*out = NULL;
	xr_device_lock(dev);
	rc = xr_pd_alloc(dev, out);
	xr_device_unlock(dev);
	return rc;
}

int xroce_dealloc_pd(struct xroce_pd *pd)
{
	struct xroce_device *dev;
	int rc;

	if (!pd)
		return xr_bad_arg("xroce_dealloc_pd", "NULL PD");
	dev = xr_pd_device(pd);
	xr_device_lock(dev);
	rc = xr_pd_dealloc(pd);
	xr_device_unlock(dev);
	return rc;
}

int xroce_reg_mr(struct xroce_pd *pd, void *addr, size_t length, int access,
		 struct xroce_mr **out)
{
	struct xroce_device *dev;
	int rc;

	if (!pd || !out)
		return xr_bad_arg("xroce_reg_mr", "NULL argument");
	*out = NULL;
	dev = xr_pd_device(pd);
	xr_device_lock(dev);
	rc = xr_mr_reg(pd, addr, length, access, out);
	xr_device_unlock(dev);
	return rc;
}

int xroce_dereg_mr(struct xroce_mr *mr)
{
	struct xroce_device *dev;
	int rc;

	if (!mr || !mr->pd)
		return xr_bad_arg("xroce_dereg_mr", "NULL region");
	dev = xr_pd_device(mr->pd);
	xr_device_lock(dev);
	rc = xr_mr_dereg(mr);
	xr_device_unlock(dev);
	return rc;
}
