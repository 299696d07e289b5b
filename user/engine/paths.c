// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A connection's paths, set up once the peer is known: the next hop of
 * each plane (resolved through the kernel's routes and neighbours), the
 * payload size the MTU and transmit engines allow, the congestion
 * controller, and per path a plane, an entropy (UDP source port), a frame
 * template and a send window.
 */
#include <errno.h>
#include <string.h>

#include "device.h"
#include "paths.h"
#include "xsk.h"
#include "xdptx.h"

#define XR_ECN_ECT0 2
#define XR_NH_CACHE_NS 2000000000ull /* next hops are re-resolved after 2 s */

uint16_t xr_qp_pick_sport(const struct xroce_qp *qp, uint32_t self)
{
	for (;;) {
		uint16_t s = (uint16_t)(XR_SPORT_LO + xr_random64() % XR_SPORT_N);
		uint32_t i;

		for (i = 0; i < qp->npaths; i++)
			if (i != self && qp->path[i].sport == s)
				break;
		if (i == qp->npaths)
			return s;
	}
}

/* The next hop towards the peer's address on plane i (cached per plane:
 * many connections to one peer resolve once). */
static int resolve_plane(struct xroce_qp *qp, uint32_t i, uint64_t now,
			 struct xr_nexthop *nh)
{
	struct xroce_device *dev = qp->dev;
	struct xr_plane *pl = &dev->plane[i];
	const uint8_t *peer = qp->peer_addr[i];
	char msg[160];
	int rc;

	if (pl->nh_time_ns && now - pl->nh_time_ns < XR_NH_CACHE_NS &&
	    !memcmp(pl->nh_peer, peer, 16)) {
		*nh = pl->nh;
		return 0;
	}
	rc = xr_nl_resolve(pl->ifindex, qp->family,
			   qp->family == AF_INET ? peer + 12 : peer, 1000, nh, msg,
			   sizeof(msg));
	if (rc)
		return xr_fail(&dev->log, rc, "%s: cannot reach the peer: %s",
			       pl->ifname, msg);
	pl->nh = *nh;
	memcpy(pl->nh_peer, peer, 16);
	pl->nh_time_ns = now;
	return 0;
}

/* Payload bytes per packet: what the MTU leaves, and what the transmit
 * engines of the planes in use can carry in one packet. */
static int set_seg_max(struct xroce_qp *qp, uint32_t nplanes)
{
	struct xroce_device *dev = qp->dev;
	uint32_t hdr = (qp->family == AF_INET6 ? 40 : 20) + 8 +
		       sizeof(struct xr_data_hdr);
	uint32_t i;

	if (qp->mtu <= hdr + 64)
		return xr_fail(&dev->log, -EINVAL, "MTU %u too small", qp->mtu);
	qp->seg_max = qp->mtu - hdr;
	if (qp->seg_max > XR_MAX_PKT_PAYLOAD)
		qp->seg_max = XR_MAX_PKT_PAYLOAD;
	/* A transmit frame is one 4 KiB UMEM chunk; larger packets need
	 * multi-buffer AF_XDP on every plane the paths use. */
	for (i = 0; i < nplanes; i++)
		if (!dev->plane[i].xsk || !xr_xsk_sg(dev->plane[i].xsk))
			break;
	if (i < nplanes && qp->seg_max > XR_PAGE_SIZE - 14 - hdr)
		qp->seg_max = XR_PAGE_SIZE - 14 - hdr;
	/* The test-run engine builds a frame in one page's linear room. */
	for (i = 0; i < nplanes; i++)
		if (dev->plane[i].txr && qp->seg_max > XR_TXR_MAX_FRAME - 14 - hdr)
			qp->seg_max = XR_TXR_MAX_FRAME - 14 - hdr;
	return 0;
}

int xr_qp_set_mtu(struct xroce_qp *qp, uint32_t mtu)
{
	uint32_t nplanes = (uint32_t)qp->dev->nplanes < qp->npeer ?
			   (uint32_t)qp->dev->nplanes : qp->npeer;
	uint32_t old = qp->mtu;
	int rc;

	qp->mtu = mtu;
	rc = set_seg_max(qp, nplanes);
	if (rc)
		qp->mtu = old;
	return rc;
}

static int init_cc(struct xroce_qp *qp, uint64_t now)
{
	struct xr_cc_cfg ccfg;
	int rc;

	xr_cc_cfg_default(&ccfg);
	ccfg.pkt_bytes = qp->seg_max;
	ccfg.conn_max_cwnd = qp->max_inflight;
	if (ccfg.conn_init_cwnd > ccfg.conn_max_cwnd)
		ccfg.conn_init_cwnd = ccfg.conn_max_cwnd;
	rc = xr_cc_init(&qp->cc, qp->npaths, &ccfg, now);
	if (rc)
		return xr_fail(&qp->dev->log, rc, "congestion control init failed");
	return 0;
}

/* Path i on plane pl: entropy, frame template towards the peer, window. */
static int init_path(struct xroce_qp *qp, uint32_t i, uint32_t pl,
		     const struct xr_nexthop *nh, const struct xr_txpath_cfg *tc)
{
	struct xroce_device *dev = qp->dev;
	struct xr_qpath *p = &qp->path[i];
	uint8_t src[16];
	int rc;

	p->plane = (int)pl;
	p->sport = 0;
	p->sport = xr_qp_pick_sport(qp, i);
	if (qp->family == AF_INET)
		memcpy(src, dev->plane[pl].addr4, 4);
	else
		memcpy(src, dev->plane[pl].addr6, 16);
	xr_tmpl_init(&p->tmpl, dev->plane[pl].mac, nh->dst_mac,
		     qp->family == AF_INET6, src,
		     qp->family == AF_INET ? qp->peer_addr[pl] + 12 : qp->peer_addr[pl],
		     p->sport, qp->data_port, XR_ECN_ECT0);
	rc = xr_txpath_init(&p->tp, qp->init_psn, tc);
	if (rc)
		return xr_fail(&dev->log, rc, "path init failed");
	return 0;
}

int xr_qp_init_paths(struct xroce_qp *qp)
{
	struct xroce_device *dev = qp->dev;
	struct xr_nexthop nh[XR_MAX_PLANES];
	uint32_t nplanes = (uint32_t)dev->nplanes < qp->npeer ?
			   (uint32_t)dev->nplanes : qp->npeer;
	uint64_t now = xr_now_ns();
	struct xr_txpath_cfg tc;
	uint32_t i;
	int rc;

	if (!nplanes)
		return xr_fail(&dev->log, -EPROTO, "the peer has no data-plane address");
	for (i = 0; i < nplanes; i++) {
		rc = resolve_plane(qp, i, now, &nh[i]);
		if (rc)
			return rc;
		if (!qp->mtu || (uint32_t)nh[i].mtu < qp->mtu)
			qp->mtu = (uint32_t)nh[i].mtu;
	}
	rc = set_seg_max(qp, nplanes);
	if (!rc)
		rc = init_cc(qp, now);
	if (rc)
		return rc;
	xr_txpath_cfg_default(&tc);
	xr_txpath_cfg_for_timeout(&tc, qp->timeout_ms);
	for (i = 0; i < qp->npaths; i++) {
		rc = init_path(qp, i, i % nplanes, &nh[i % nplanes], &tc);
		if (rc)
			return rc;
	}
	qp->csn_una = qp->csn_next = qp->init_csn;
	return 0;
}
