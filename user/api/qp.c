// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Public calls on queue pairs: create, destroy, state, statistics. */
#include <stddef.h>

#include "xroce/xroce.h"
#include "engine.h"

int xroce_create_qp(struct xroce_pd *pd, const struct xroce_qp_init_attr *attr,
		    struct xroce_qp **out)
{
	struct xroce_device *dev;
	int rc;

	if (!pd || !attr || !out)
		return xr_bad_arg("xroce_create_qp", "NULL argument");
	*out = NULL;
	dev = xr_pd_device(pd);
	xr_device_lock(dev);
	rc = xr_qp_create(pd, attr, out);
	xr_device_unlock(dev);
	return rc;
}

int xroce_destroy_qp(struct xroce_qp *qp)
{
	struct xroce_device *dev;
	int rc;

	if (!qp)
		return xr_bad_arg("xroce_destroy_qp", "NULL QP");
	dev = xr_qp_device(qp);
	xr_device_lock(dev);
	rc = xr_qp_destroy(qp);
	xr_device_unlock(dev);
	return rc;
}

uint32_t xroce_qp_num(const struct xroce_qp *qp)
{
	return qp ? xr_qp_num(qp) : 0;
}

enum xroce_qp_state xroce_qp_state(const struct xroce_qp *qp)
{
	struct xroce_device *dev;
	enum xroce_qp_state st;

	if (!qp)
		return XROCE_QPS_ERR;
	dev = xr_qp_device(qp);
	xr_device_lock(dev);
	st = xr_qp_state(qp);
	xr_device_unlock(dev);
	return st;
}

int xroce_qp_stats(const struct xroce_qp *qp, struct xroce_qp_stats *st)
{
	struct xroce_device *dev;
	int rc;

	if (!qp || !st)
		return xr_bad_arg("xroce_qp_stats", "NULL argument");
	dev = xr_qp_device(qp);
	xr_device_lock(dev);
	rc = xr_qp_stats(qp, st);
	xr_device_unlock(dev);
	return rc;
}

int xroce_path_stats(const struct xroce_qp *qp, struct xroce_path_stats *ps,
		     int max_paths)
{
	struct xroce_device *dev;
	int rc;

	if (!qp || !ps || max_paths < 0)
		return xr_bad_arg("xroce_path_stats", "NULL argument or max_paths < 0");
	dev = xr_qp_device(qp);
	xr_device_lock(dev);
	rc = xr_qp_path_stats(qp, ps, max_paths);
	xr_device_unlock(dev);
	return rc;
}
