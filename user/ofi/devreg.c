// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One xroce device per interface and process, shared by every domain and
 * passive endpoint on that interface: a connection request arrives at a
 * device and can only be accepted by a QP of the same device, and memory
 * registered in a domain must be the memory map its QPs send from.
 *
 * A device is opened with a progress thread (XROCE_DEVICE_PROGRESS_THREAD):
 * libfabric promises automatic progress, so transmission, retransmission
 * and READ answers go on while the application sleeps in poll() on a wait
 * object or computes.  Opening also answers whether this libxroce
 * registers any memory (xroce_reg_mr on a page of the heap).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ofi.h"

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct xrf_dev *devs;

/* Does xroce_reg_mr take a page that is not device memory? */
static bool probe_any_memory(struct xrf_dev *xd)
{
	struct xroce_pd *pd;
	struct xroce_mr *mr;
	void *page = NULL;
	bool ok = false;

	if (xroce_alloc_pd(xd->dev, &pd))
		return false;
	if (!posix_memalign(&page, 4096, 4096)) {
		memset(page, 0, 4096);
		xd->quiet++;
		ok = !xroce_reg_mr(pd, page, 4096, XROCE_ACCESS_LOCAL_WRITE, &mr);
		xd->quiet--;
		if (ok)
			xroce_dereg_mr(mr);
		free(page);
	}
	xroce_dealloc_pd(pd);
	return ok;
}

static void open_dev(struct xrf_dev *xd)
{
	struct xroce_device_attr da = {
		.nplanes = 1, .mem_size = xrf_params.mem_size,
		.log_fn = xrf_xroce_log, .log_arg = xd,
		.log_level = XROCE_LOG_DEBUG,
		.flags = xrf_params.progress_thread ? XROCE_DEVICE_PROGRESS_THREAD : 0,
	};

	da.ifnames[0] = xd->ifname;
	/* An interface without xroce's program is a normal answer here, not
	 * an error: its lines go to the debug level. */
	xd->quiet++;
	xd->err = xroce_open_device(&da, &xd->dev);
	xd->quiet--;
	if (xd->err) {
		FI_INFO(&xrf_prov, FI_LOG_CORE, "%s: no xroce device (%s)\n",
			xd->ifname, fi_strerror(-xd->err));
		xd->dev = NULL;
		return;
	}
	xd->any_memory = probe_any_memory(xd);
	FI_INFO(&xrf_prov, FI_LOG_CORE, "%s: xroce device open, control port %u, "
		"%s\n", xd->ifname, xroce_device_ctrl_port(xd->dev),
		xd->any_memory ? "any memory registrable" :
		"memory not from the device goes through bounce buffers");
}

int xrf_dev_get(const char *ifname, struct xrf_dev **out)
{
	struct xrf_dev *xd;
	int rc;

	if (!ifname || strlen(ifname) >= IF_NAMESIZE)
		return -FI_EINVAL;
	pthread_mutex_lock(&reg_lock);
	for (xd = devs; xd && strcmp(xd->ifname, ifname) != 0; xd = xd->next)
		;
	if (!xd) {
		xd = calloc(1, sizeof(*xd));
		if (!xd) {
			pthread_mutex_unlock(&reg_lock);
			return -FI_ENOMEM;
		}
		snprintf(xd->ifname, sizeof(xd->ifname), "%s", ifname);
		open_dev(xd);
		xd->next = devs;
		devs = xd;
	}
	rc = xd->err;
	if (!rc) {
		xd->refs++;
		*out = xd;
	}
	pthread_mutex_unlock(&reg_lock);
	return rc;
}

void xrf_dev_put(struct xrf_dev *xd)
{
	pthread_mutex_lock(&reg_lock);
	xd->refs--;
	pthread_mutex_unlock(&reg_lock);
}

void xrf_dev_cleanup(void)
{
	pthread_mutex_lock(&reg_lock);
	while (devs) {
		struct xrf_dev *xd = devs;

		devs = xd->next;
		if (xd->dev)
			xroce_close_device(xd->dev);
		free(xd);
	}
	pthread_mutex_unlock(&reg_lock);
}
