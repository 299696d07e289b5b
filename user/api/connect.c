// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Public calls of connection set-up. */
#include <stddef.h>

#include "xroce/xroce.h"
#include "engine.h"

int xroce_connect(struct xroce_qp *qp, const char *host, uint16_t port,
		  int timeout_ms)
{
	struct xroce_device *dev;
	int rc;

	if (!qp || !host)
		return xr_bad_arg("xroce_connect", "NULL argument");
	dev = xr_qp_device(qp);
	xr_device_lock(dev);
	rc = xr_qp_connect(qp, host, port, timeout_ms);
	xr_device_unlock(dev);
	return rc;
}

int xroce_accept(struct xroce_qp *qp, int timeout_ms)
{
	struct xroce_device *dev;
	int rc;

	if (!qp)
		return xr_bad_arg("xroce_accept", "NULL QP");
	dev = xr_qp_device(qp);
	xr_device_lock(dev);
	rc = xr_qp_accept(qp, timeout_ms);
	xr_device_unlock(dev);
	return rc;
}

int xroce_set_private_data(struct xroce_qp *qp, const void *data, size_t len)
{
	struct xroce_device *dev;
	int rc;

	if (!qp || (len && !data))
		return xr_bad_arg("xroce_set_private_data", "NULL argument");
	dev = xr_qp_device(qp);
	xr_device_lock(dev);
	rc = xr_qp_set_private_data(qp, data, len);
	xr_device_unlock(dev);
	return rc;
}

int xroce_get_private_data(const struct xroce_qp *qp, void *buf, size_t len)
{
	struct xroce_device *dev;
	int rc;

	if (!qp || (len && !buf))
		return xr_bad_arg("xroce_get_private_data", "NULL argument");
	dev = xr_qp_device(qp);
	xr_device_lock(dev);
	rc = xr_qp_get_private_data(qp, buf, len);
	xr_device_unlock(dev);
	return rc;
}
