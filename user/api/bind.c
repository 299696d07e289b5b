// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Public calls for connections made from out-of-band information. */
#include <stddef.h>

#include "xroce/xroce.h"
#include "engine.h"

int xroce_qp_bind(struct xroce_qp *qp, const struct xroce_qp_peer *peer)
{
	struct xroce_device *dev;
	int rc;

	if (!qp || !peer)
		return xr_bad_arg("xroce_qp_bind", "NULL argument");
	dev = xr_qp_device(qp);
	xr_device_lock(dev);
	rc = xr_qp_bind(qp, peer);
	xr_device_unlock(dev);
	return rc;
}

int xroce_qp_to_error(struct xroce_qp *qp)
{
	struct xroce_device *dev;
	int rc;

	if (!qp)
		return xr_bad_arg("xroce_qp_to_error", "NULL QP");
	dev = xr_qp_device(qp);
	xr_device_lock(dev);
	rc = xr_qp_to_error(qp);
	xr_device_unlock(dev);
	return rc;
}
