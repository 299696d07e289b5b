// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Public calls on a device: open, close, progress, its memory. */
#include <errno.h>
#include <stddef.h>

#include "xroce/xroce.h"
#include "engine.h"

int xroce_open_device(const struct xroce_device_attr *attr,
		      struct xroce_device **out)
{
	if (!attr)
		return xr_bad_arg("xroce_open_device", "NULL attributes");
	if (out)
		*out = NULL;
	return xr_device_open(attr, out);
}

int xroce_close_device(struct xroce_device *dev)
{
	if (!dev)
		return xr_bad_arg("xroce_close_device", "NULL device");
	return xr_device_close(dev);
}

int xroce_progress(struct xroce_device *dev)
{
	int rc;

	if (!dev)
		return xr_bad_arg("xroce_progress", "NULL device");
	xr_device_lock(dev);
	rc = xr_progress_once(dev);
	xr_device_unlock(dev);
	return rc;
}

int xroce_trace_enable(struct xroce_device *dev, int on)
{
	int rc;

	if (!dev)
		return xr_bad_arg("xroce_trace_enable", "NULL device");
	xr_device_lock(dev);
	rc = xr_trace_enable(dev, on);
	xr_device_unlock(dev);
	return rc;
}

int xroce_trace_take(struct xroce_device *dev, struct xroce_trace_rec *recs,
		     int max)
{
	int rc;

	if (!dev || (!recs && max > 0) || max < 0)
		return xr_bad_arg("xroce_trace_take", "NULL device or records");
	xr_device_lock(dev);
	rc = xr_trace_take(dev, recs, max);
	xr_device_unlock(dev);
	return rc;
}

int xroce_device_fd(struct xroce_device *dev)
{
	int fd;

	if (!dev)
		return xr_bad_arg("xroce_device_fd", "NULL device");
	xr_device_lock(dev);
	fd = xr_device_fd(dev);
	xr_device_unlock(dev);
	return fd;
}

enum xroce_tx_engine xroce_device_tx_engine(const struct xroce_device *dev,
					    int plane)
{
	return dev ? xr_device_tx_engine(dev, plane) : XROCE_TX_DEFAULT;
}

uint16_t xroce_device_ctrl_port(const struct xroce_device *dev)
{
	return dev ? xr_device_ctrl_port(dev) : 0;
}

void *xroce_mem_alloc(struct xroce_device *dev, size_t len, size_t align)
{
	void *p;

	if (!dev) {
		xr_bad_arg("xroce_mem_alloc", "NULL device");
		return NULL;
	}
	xr_device_lock(dev);
	p = xr_mem_alloc(dev, len, align);
	xr_device_unlock(dev);
	return p;
}

int xroce_mem_free(struct xroce_device *dev, void *addr)
{
	int rc;

	if (!dev || !addr)
		return xr_bad_arg("xroce_mem_free", "NULL argument");
	xr_device_lock(dev);
	rc = xr_mem_free(dev, addr);
	xr_device_unlock(dev);
	return rc;
}
