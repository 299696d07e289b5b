// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Public calls for discovery, limits and asynchronous events. */
#include <stddef.h>

#include "xroce/xroce.h"
#include "engine.h"

int xroce_list_interfaces(char (*names)[16], int max)
{
	if (max < 0 || (max && !names))
		return xr_bad_arg("xroce_list_interfaces", "bad names or max");
	return xr_list_interfaces(names, max);
}

int xroce_query_plane(const struct xroce_device *dev, int plane,
		      struct xroce_plane_attr *out)
{
	struct xroce_device *d = (struct xroce_device *)dev;
	int rc;

	if (!dev || !out)
		return xr_bad_arg("xroce_query_plane", "NULL argument");
	xr_device_lock(d);
	rc = xr_query_plane(dev, plane, out);
	xr_device_unlock(d);
	return rc;
}

int xroce_query_device(const struct xroce_device *dev,
		       struct xroce_device_caps *out)
{
	struct xroce_device *d = (struct xroce_device *)dev;
	int rc;

	if (!dev || !out)
		return xr_bad_arg("xroce_query_device", "NULL argument");
	xr_device_lock(d);
	rc = xr_query_device(dev, out);
	xr_device_unlock(d);
	return rc;
}

int xroce_device_nplanes(const struct xroce_device *dev)
{
	return dev ? xr_device_nplanes(dev) : xr_bad_arg("xroce_device_nplanes",
							  "NULL device");
}

int xroce_set_event_handler(struct xroce_device *dev, xroce_event_fn fn,
			    void *arg)
{
	int rc;

	if (!dev)
		return xr_bad_arg("xroce_set_event_handler", "NULL device");
	xr_device_lock(dev);
	rc = xr_set_event_handler(dev, fn, arg);
	xr_device_unlock(dev);
	return rc;
}
