// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Public calls on completion queues. */
#include <stddef.h>

#include "xroce/xroce.h"
#include "engine.h"

int xroce_create_cq(struct xroce_device *dev, int cqe, struct xroce_cq **out)
{
	int rc;

	if (!dev || !out)
		return xr_bad_arg("xroce_create_cq", "NULL argument");
	*out = NULL;
	xr_device_lock(dev);
	rc = xr_cq_create(dev, cqe, out);
	xr_device_unlock(dev);
	return rc;
}

int xroce_destroy_cq(struct xroce_cq *cq)
{
	struct xroce_device *dev;
	int rc;

	if (!cq)
		return xr_bad_arg("xroce_destroy_cq", "NULL CQ");
	dev = xr_cq_device(cq);
	xr_device_lock(dev);
	rc = xr_cq_destroy(cq);
	xr_device_unlock(dev);
	return rc;
}

int xroce_poll_cq(struct xroce_cq *cq, int n, struct xroce_wc *wc)
{
	struct xroce_device *dev;
	int rc;

	if (!cq || n < 0 || (n && !wc))
		return xr_bad_arg("xroce_poll_cq", "NULL CQ, n < 0 or no wc array");
	dev = xr_cq_device(cq);
	xr_device_lock(dev);
	rc = xr_cq_poll(cq, n, wc);
	xr_device_unlock(dev);
	return rc;
}

int xroce_wait_cq(struct xroce_cq *cq, int n, struct xroce_wc *wc,
		  int timeout_ms)
{
	struct xroce_device *dev;
	int rc;

	if (!cq || n < 1 || !wc)
		return xr_bad_arg("xroce_wait_cq", "NULL CQ, n < 1 or no wc array");
	dev = xr_cq_device(cq);
	xr_device_lock(dev);
	rc = xr_cq_wait(cq, n, wc, timeout_ms);
	xr_device_unlock(dev);
	return rc;
}

int xroce_cq_set_notify(struct xroce_cq *cq, xroce_cq_notify_fn fn, void *arg)
{
	struct xroce_device *dev;
	int rc;

	if (!cq)
		return xr_bad_arg("xroce_cq_set_notify", "NULL CQ");
	dev = xr_cq_device(cq);
	xr_device_lock(dev);
	rc = xr_cq_set_notify(cq, fn, arg);
	xr_device_unlock(dev);
	return rc;
}

int xroce_req_notify_cq(struct xroce_cq *cq, int solicited_only)
{
	struct xroce_device *dev;
	int rc;

	if (!cq)
		return xr_bad_arg("xroce_req_notify_cq", "NULL CQ");
	dev = xr_cq_device(cq);
	xr_device_lock(dev);
	rc = xr_cq_req_notify(cq, solicited_only);
	xr_device_unlock(dev);
	return rc;
}
