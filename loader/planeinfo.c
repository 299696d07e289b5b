// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/if_link.h>

#include "planeinfo.h"
#include "contract/abi.h"
#include "contract/txring.h"

static int if_mtu(const char *ifname)
{
	struct ifreq ifr;
	int fd, mtu = 0;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, ifname, strnlen(ifname, IF_NAMESIZE - 1));
	if (!ioctl(fd, SIOCGIFMTU, &ifr))
		mtu = ifr.ifr_mtu;
	close(fd);
	return mtu;
}

const char *xr_telem_engine_name(uint8_t engine)
{
	switch (engine) {
	case XR_TELEM_ENG_AF_XDP_COPY:
		return "af_xdp_copy";
	case XR_TELEM_ENG_AF_XDP_ZC:
		return "af_xdp_zc";
	case XR_TELEM_ENG_TEST_RUN:
		return "test_run";
	default:
		return "?";
	}
}

const char *xr_planeinfo_engine(const struct xr_planeinfo *pi)
{
	uint32_t k;

	if (!pi->nusers)
		return "none";
	for (k = 1; k < pi->nusers; k++)
		if (pi->users[k].engine != pi->users[0].engine)
			return "mixed";
	return xr_telem_engine_name(pi->users[0].engine);
}

int xr_planeinfo_get(const struct xr_ifxdp *i, bool has_txq,
		     const struct xr_domview *dv, int ndv, struct xr_planeinfo *pi)
{
	bool native_own = i->mode == XDP_FLAGS_DRV_MODE && i->prog_id == i->xroce_id;
	int d, rc, k;

	memset(pi, 0, sizeof(*pi));
	rc = xr_nic_query(i->name, &pi->nic);
	if (rc)
		return rc;
	pi->rx_queues = xr_nic_rx_queues(&pi->nic);
	pi->mtu = if_mtu(i->name);
	pi->engine_default = native_own && has_txq && pi->mtu &&
			     (uint32_t)pi->mtu + 14 <= XR_TXR_MAX_FRAME ?
			     "test_run" : "af_xdp";
	for (d = 0; d < ndv; d++) {
		const struct xr_telem_hdr *h = (const void *)dv[d].mem;

		/* A dead process's domain stays until the next process
		 * collects it. */
		if (kill((pid_t)dv[d].pid, 0) && errno == ESRCH)
			continue;
		for (k = 0; k < XR_MAX_PLANES; k++) {
			if (h->plane_ifindex[k] != (uint32_t)i->ifindex ||
			    pi->nusers == XR_PLANE_MAX_USERS)
				continue;
			pi->users[pi->nusers].pid = dv[d].pid;
			pi->users[pi->nusers].engine = h->plane_engine[k];
			pi->nusers++;
		}
	}
	return 0;
}
