// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Public calls of connection set-up without blocking. */
#include <stddef.h>

#include "xroce/xroce.h"
#include "engine.h"

int xroce_listen(struct xroce_device *dev, const char *addr, uint16_t port)
{
	int rc;

	if (!dev)
		return xr_bad_arg("xroce_listen", "NULL device");
	xr_device_lock(dev);
	rc = xr_listen(dev, addr, port);
	xr_device_unlock(dev);
	return rc;
}

int xroce_unlisten(struct xroce_device *dev, uint16_t port)
{
	int rc;

	if (!dev)
		return xr_bad_arg("xroce_unlisten", "NULL device");
	xr_device_lock(dev);
	rc = xr_unlisten(dev, port);
	xr_device_unlock(dev);
	return rc;
}

int xroce_get_conn_req(struct xroce_device *dev, struct xroce_conn_req *req)
{
	int rc;

	if (!dev || !req)
		return xr_bad_arg("xroce_get_conn_req", "NULL argument");
	xr_device_lock(dev);
	rc = xr_conn_req_get(dev, req);
	xr_device_unlock(dev);
	return rc;
}

int xroce_accept_conn_req(struct xroce_qp *qp, const struct xroce_conn_req *req)
{
	struct xroce_device *dev;
	int rc;

	if (!qp || !req)
		return xr_bad_arg("xroce_accept_conn_req", "NULL argument");
	dev = xr_qp_device(qp);
	xr_device_lock(dev);
	rc = xr_conn_req_accept(qp, req);
	xr_device_unlock(dev);
	return rc;
}

int xroce_reject_conn_req(struct xroce_device *dev,
			  const struct xroce_conn_req *req, const void *data,
			  size_t len)
{
	int rc;

	if (!dev || !req || (len && !data))
		return xr_bad_arg("xroce_reject_conn_req", "NULL argument");
	xr_device_lock(dev);
	rc = xr_conn_req_reject(dev, req, data, len);
	xr_device_unlock(dev);
	return rc;
}

int xroce_connect_start(struct xroce_qp *qp, const char *host, uint16_t port,
			int timeout_ms)
{
	struct xroce_device *dev;
	int rc;

	if (!qp || !host)
		return xr_bad_arg("xroce_connect_start", "NULL argument");
	dev = xr_qp_device(qp);
	xr_device_lock(dev);
	rc = xr_qp_connect_start(qp, host, port, timeout_ms);
	xr_device_unlock(dev);
	return rc;
}

int xroce_connect_poll(struct xroce_qp *qp)
{
	struct xroce_device *dev;
	int rc;

	if (!qp)
		return xr_bad_arg("xroce_connect_poll", "NULL QP");
	dev = xr_qp_device(qp);
	xr_device_lock(dev);
	rc = xr_qp_connect_poll(qp);
	xr_device_unlock(dev);
	return rc;
}
