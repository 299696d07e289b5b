// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Watching the planes while the device is open, a few times a second:
 *
 *  - xroce's XDP program leaving an interface (`xroce detach`, another
 *    program replacing it, the interface deleted).  That plane then
 *    delivers nothing: its paths fail over like any dead link, and come
 *    back if the same program is attached there again.  When no plane is
 *    left, every connection fails at once with the reason, instead of
 *    after its retransmission timeout; the application destroying the QP
 *    tells the peer (CLOSE), which fails at once too.
 *  - An interface's MTU going down.  Packets already cut keep their size,
 *    so a connection takes the new MTU when it is idle (nothing posted,
 *    nothing in flight), before the next packet is cut.  An MTU going up
 *    changes nothing: the peer's may not have.
 */
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <net/if.h>
#include <bpf/libbpf.h>

#include "bpfmaps.h"
#include "log.h"
#include "paths.h"
#include "planewatch.h"
#include "qp.h"
#include "qp_state.h"

/* The program attached to ifindex (any mode), 0 if none; negative errno
 * when the interface is gone. */
static int attached_prog(int ifindex, uint32_t *id)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int rc = bpf_xdp_query(ifindex, 0, &q);

	if (rc)
		return rc;
	*id = q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id ? q.skb_prog_id :
								   q.hw_prog_id;
	return 0;
}

/* Is xroce's program (ours) still running on the plane? */
static bool plane_alive(struct xroce_device *dev, struct xr_plane *pl)
{
	uint32_t id = 0, found = 0;

	if (attached_prog(pl->ifindex, &id) || !id)
		return false;
	if (id == pl->watch_attached)
		return true;
	/* Another program id: ours replaced, or a libxdp dispatcher that
	 * was rebuilt around it. */
	if (xr_maps_find_prog(pl->ifindex, &found, NULL) || found != dev->maps.prog_id)
		return false;
	pl->watch_attached = id;
	return true;
}

static void watch_attachment(struct xroce_device *dev)
{
	struct xroce_qp *qp;
	char why[96];
	int i, alive = 0;

	for (i = 0; i < dev->nplanes; i++) {
		struct xr_plane *pl = &dev->plane[i];
		bool ok = plane_alive(dev, pl);

		if (!ok && !pl->lost)
			xr_log(&dev->log, XROCE_LOG_WARN, "%s: xroce's XDP program is no "
			       "longer attached (detached, replaced or the interface "
			       "is gone): this plane carries nothing now", pl->ifname);
		else if (ok && pl->lost)
			xr_log(&dev->log, XROCE_LOG_WARN, "%s: xroce's XDP program is "
			       "attached again", pl->ifname);
		pl->lost = !ok;
		alive += ok;
	}
	if (alive)
		return;
	snprintf(why, sizeof(why), "xroce's XDP program was detached from %s%s",
		 dev->plane[0].ifname, dev->nplanes > 1 ? " and the other planes" : "");
	for (qp = dev->qps; qp; qp = qp->next)
		if (qp->state == XROCE_QPS_RTS)
			xr_qp_fail(qp, XROCE_WC_GENERAL_ERR, why);
}

/* Note a plane's MTU going down in every connection above it. */
static void note_mtus(struct xroce_device *dev)
{
	struct xroce_qp *qp;
	int i;

	for (i = 0; i < dev->nplanes; i++) {
		struct xr_plane *pl = &dev->plane[i];
		struct ifreq ifr;

		memset(&ifr, 0, sizeof(ifr));
		memcpy(ifr.ifr_name, pl->ifname, sizeof(ifr.ifr_name) - 1);
		if (ioctl(dev->ctrl_fd, SIOCGIFMTU, &ifr) || ifr.ifr_mtu == pl->mtu)
			continue;
		xr_log(&dev->log, XROCE_LOG_INFO, "%s: MTU %d -> %d", pl->ifname,
		       pl->mtu, ifr.ifr_mtu);
		pl->mtu = ifr.ifr_mtu;
		for (qp = dev->qps; qp; qp = qp->next)
			if (pl->mtu > 0 && (uint32_t)pl->mtu < qp->mtu &&
			    (!qp->mtu_want || (uint32_t)pl->mtu < qp->mtu_want))
				qp->mtu_want = (uint32_t)pl->mtu;
	}
}

/* Idle connections take the MTU they were waiting for. */
static void take_mtus(struct xroce_device *dev)
{
	struct xroce_qp *qp;

	for (qp = dev->qps; qp; qp = qp->next) {
		uint32_t old = qp->mtu;

		if (!qp->mtu_want || qp->state != XROCE_QPS_RTS)
			continue;
		if (qp->sq_head != qp->sq_tail || qp->csn_una != qp->csn_next)
			continue; /* not idle: packets of the old size are out */
		if (xr_qp_set_mtu(qp, qp->mtu_want)) {
			qp->mtu_want = 0;
			xr_qp_fail(qp, XROCE_WC_GENERAL_ERR, "the MTU became too small");
			continue;
		}
		qp->mtu_want = 0;
		qp->cc.cfg.pkt_bytes = qp->seg_max;
		xr_log(&dev->log, XROCE_LOG_INFO, "qp %u: MTU %u -> %u, %u-byte packets",
		       qp->conn_id, old, qp->mtu, qp->seg_max);
	}
}

void xr_planes_watch(struct xroce_device *dev)
{
	int i;

	/* A device of the tests' hooks has no program and no interfaces. */
	if (!dev->maps.prog_id)
		return;
	for (i = 0; i < dev->nplanes; i++)
		if (!dev->plane[i].watch_attached &&
		    attached_prog(dev->plane[i].ifindex, &dev->plane[i].watch_attached))
			dev->plane[i].watch_attached = 0;
	watch_attachment(dev);
	note_mtus(dev);
	take_mtus(dev);
}
