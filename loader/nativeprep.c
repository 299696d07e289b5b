// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "cli.h"
#include "nativeprep.h"
#include "nicinfo.h"

#define CMD "attach"

uint32_t xr_virtio_safe_combined(uint32_t combined, uint32_t max, uint32_t ncpu)
{
	uint32_t keep;

	/* Safe: no more pairs than CPUs (shared, locked XDP queues picked
	 * modulo the pairs in use), or room for one XDP pair per CPU. */
	if (combined <= ncpu || combined + ncpu <= max)
		return combined;
	keep = max > 2 * ncpu ? max - ncpu : ncpu;
	return keep ? keep : 1;
}

static int feature_off(const char *ifname, const char *name, bool *done)
{
	bool changeable = false;
	int on, rc;

	*done = false;
	on = xr_nic_feature(ifname, name, &changeable);
	if (on <= 0 || !changeable)
		return 0; /* off, fixed, or a kernel without that feature */
	rc = xr_nic_feature_set(ifname, name, false);
	if (rc) {
		xr_err(CMD, rc, "%s: cannot switch %s off for native XDP", ifname, name);
		return rc;
	}
	*done = true;
	printf("%s: switched %s off (XDP must see frames as they arrived, not merged; "
	       "'ethtool -K %s %s on' after 'xroce detach' brings it back)\n",
	       ifname, name, ifname, name);
	return 0;
}

/* After the queue pairs in use changed (channels lowered here, XDP pairs
 * added by the driver when it took the program): the RSS table spread
 * over the queues in use again, so that flows keep being steered by their
 * hash (qemu's virtio-net turns RSS off whenever the guest sets the queue
 * count, until it sets a table again).  Not being able to is worth a
 * line, not a failure. */
static void rss_respread(const char *ifname)
{
	uint32_t nq;
	int rc = xr_nic_rss_respread(ifname, &nq);

	if (rc == 1)
		printf("%s: RSS indirection spread over the %u queues in use again\n",
		       ifname, nq);
	else if (rc < 0)
		fprintf(stderr, "xroce %s: %s: RSS indirection left as it was: %s\n",
			CMD, ifname, strerror(-rc));
}

/* virtio_net: lower the combined channels until XDP transmission is safe
 * (xr_virtio_safe_combined), saying so; p->old_combined to undo. */
static int virtio_channels(const char *ifname, const struct xr_nic *nic,
			   struct xr_prep *p)
{
	int ncpu = libbpf_num_possible_cpus();
	uint32_t keep;
	int rc;

	if (ncpu <= 0)
		return 0;
	keep = xr_virtio_safe_combined(nic->combined, nic->max_combined,
				       (uint32_t)ncpu);
	if (keep == nic->combined)
		return 0;
	rc = xr_nic_set_combined(ifname, keep);
	if (rc) {
		xr_err(CMD, rc, "%s: cannot lower the combined channels from %u to %u",
		       ifname, nic->combined, keep);
		return rc;
	}
	p->old_combined = nic->combined;
	printf("%s: virtio_net: lowered the combined channels from %u to %u: "
	       "with %u of its %u queue pairs in use on %d CPUs the driver would "
	       "send XDP frames on a queue pair past the last one\n",
	       ifname, nic->combined, keep, nic->combined, nic->max_combined, ncpu);
	return 0;
}

int xr_native_prepare(const char *ifname, struct xr_prep *p)
{
	struct xr_nic nic;
	int rc;

	memset(p, 0, sizeof(*p));
	rc = feature_off(ifname, "rx-lro", &p->lro_off);
	if (!rc)
		rc = feature_off(ifname, "rx-gro-hw", &p->gro_hw_off);
	if (!rc && !xr_nic_query(ifname, &nic) &&
	    strcmp(nic.driver, "virtio_net") == 0 && nic.has_channels)
		rc = virtio_channels(ifname, &nic, p);
	if (rc)
		xr_native_undo(ifname, p);
	return rc;
}

void xr_native_undo(const char *ifname, const struct xr_prep *p)
{
	if (p->old_combined && !xr_nic_set_combined(ifname, p->old_combined)) {
		printf("%s: combined channels back to %u\n", ifname, p->old_combined);
		rss_respread(ifname);
	}
	if (p->gro_hw_off && !xr_nic_feature_set(ifname, "rx-gro-hw", true))
		printf("%s: rx-gro-hw back on\n", ifname);
	if (p->lro_off && !xr_nic_feature_set(ifname, "rx-lro", true))
		printf("%s: rx-lro back on\n", ifname);
}

void xr_native_attached(const char *ifname)
{
	struct xr_nic nic;

	if (!xr_nic_query(ifname, &nic) && strcmp(nic.driver, "virtio_net") == 0)
		rss_respread(ifname);
}
