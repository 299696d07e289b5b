// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Planes: the interfaces a device sends on.  Opening one finds the xroce
 * program's maps through it and reads its link; starting one picks its
 * transmit engine (AF_XDP, or frames built by XDP from descriptors).  Its
 * transmit frames are 4 KiB pages of the device's memory map, handed out
 * from a free list and recycled when the engine is done with them.
 */
#include <errno.h>
#include <ifaddrs.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "plane.h"
#include "xsk.h"
#include "xdptx.h"

int xr_plane_frame_get(struct xr_plane *pl, uint64_t *addr)
{
	if (!pl->nfree) {
		xr_plane_reap(pl);
		if (!pl->nfree)
			return -ENOSPC;
	}
	*addr = pl->frame_base +
		(uint64_t)pl->free_frames[--pl->nfree] * XR_PAGE_SIZE;
	return 0;
}

void xr_plane_frame_put(struct xr_plane *pl, uint64_t addr)
{
	uint64_t idx = (addr - pl->frame_base) / XR_PAGE_SIZE;

	if (addr >= pl->frame_base && idx < XR_TX_FRAMES && pl->nfree < XR_TX_FRAMES)
		pl->free_frames[pl->nfree++] = (uint32_t)idx;
}

uint32_t xr_plane_tx_room(const struct xr_plane *pl)
{
	return pl->txr ? xr_xdptx_room(pl->txr) : xr_xsk_tx_free_slots(pl->xsk);
}

/* A kick of at most this many frames on the test-run engine goes out
 * through the plane's packet socket instead: one sendmmsg costs less than
 * a test run, whose per-call set-up (~10 us here) is what the run saves
 * only when it sends many frames (docs/PERFORMANCE.md, small-message
 * latency).  Batches of bulk transfers stay with the test run. */
#define XR_SMALL_KICK 4

/* Send the queued descriptors of a small kick with one sendmmsg on the
 * packet socket, each frame gathered by the kernel from its prebuilt
 * headers and payload pieces (the library wrote and checked them:
 * emit.c).  Those sent leave the ring (its tail moves past them, as a
 * test run would); any the socket did not take go by the test run. */
static void kick_small(struct xr_plane *pl)
{
	struct xr_xdptx *t = pl->txr;
	struct iovec iov[XR_SMALL_KICK][1 + XR_TXR_SEGS];
	struct mmsghdr m[XR_SMALL_KICK];
	uint32_t n = 0, k;
	uint64_t i;
	int sent;

	memset(m, 0, sizeof(m));
	for (i = t->ctl->tail; i != t->ctl->head && n < XR_SMALL_KICK; i++, n++) {
		struct xr_txr_desc *d = &t->ring[i & (XR_TXR_RING - 1)];

		if (d->hdr_len > XR_TXR_HDR_MAX || d->nseg > XR_TXR_SEGS)
			break;
		iov[n][0] = (struct iovec){ d->hdr, d->hdr_len };
		for (k = 0; k < d->nseg; k++)
			iov[n][1 + k] = (struct iovec){ pl->mem + d->seg[k].off,
							d->seg[k].len };
		m[n].msg_hdr.msg_iov = iov[n];
		m[n].msg_hdr.msg_iovlen = 1 + d->nseg;
	}
	if (!n)
		return;
	do {
		sent = sendmmsg(pl->pkt_fd, m, n, MSG_DONTWAIT);
	} while (sent < 0 && errno == EINTR);
	if (sent <= 0)
		return; /* the test run sends them */
	t->ctl->tail += (uint64_t)sent;
}

int xr_plane_kick(struct xr_plane *pl)
{
	uint32_t i;
	int rc = 0;

	if (!pl->txr)
		return xr_xsk_tx_kick(pl->xsk);
	if (pl->pkt_fd >= 0 && xr_xdptx_pending(pl->txr) <= XR_SMALL_KICK)
		kick_small(pl);
	if (xr_xdptx_pending(pl->txr))
		rc = xr_xdptx_flush(pl->txr);
	/* Every frame was read: bounce frames are free again. */
	for (i = 0; i < pl->nbounce; i++)
		xr_plane_frame_put(pl, pl->bounce[i]);
	pl->nbounce = 0;
	return rc < 0 ? rc : 0;
}

void xr_plane_reap(struct xr_plane *pl)
{
	uint64_t addrs[256];
	int n, i;

	if (!pl->xsk)
		return; /* the test-run engine has no completion ring */
	do {
		n = xr_xsk_reap(pl->xsk, addrs, 256);
		for (i = 0; i < n; i++) {
			uint64_t idx = (addrs[i] - pl->frame_base) / XR_PAGE_SIZE;

			if (idx < XR_TX_FRAMES && pl->nfree < XR_TX_FRAMES)
				pl->free_frames[pl->nfree++] = (uint32_t)idx;
		}
	} while (n == 256);
}

/* The interface's first global address of each family. */
static void plane_addrs(struct xr_plane *pl)
{
	struct ifaddrs *ifa, *i;

	if (getifaddrs(&ifa))
		return;
	for (i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || strcmp(i->ifa_name, pl->ifname) != 0)
			continue;
		if (i->ifa_addr->sa_family == AF_INET && !pl->has4) {
			memcpy(pl->addr4, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, 4);
			pl->has4 = true;
		} else if (i->ifa_addr->sa_family == AF_INET6 && !pl->has6) {
			struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)i->ifa_addr;

			if (IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr))
				continue;
			memcpy(pl->addr6, &s6->sin6_addr, 16);
			pl->has6 = true;
		}
	}
	freeifaddrs(ifa);
}

int xr_plane_open(struct xroce_device *dev, int i, const char *ifname,
		  struct xr_maps *maps)
{
	struct xr_plane *pl = &dev->plane[i];
	struct xr_link_info li;
	char msg[160];
	int rc;

	if (!ifname || strlen(ifname) >= IF_NAMESIZE)
		return xr_fail(&dev->log, -EINVAL, "plane %d: bad interface name", i);
	memcpy(pl->ifname, ifname, strlen(ifname) + 1);
	pl->ifindex = (int)if_nametoindex(ifname);
	if (!pl->ifindex)
		return xr_fail(&dev->log, -ENODEV, "no interface %s", ifname);
	rc = xr_nl_link(pl->ifindex, &li, msg, sizeof(msg));
	if (rc)
		return xr_fail(&dev->log, rc, "%s: %s", ifname, msg);
	memcpy(pl->mac, li.mac, 6);
	pl->mtu = li.mtu;
	plane_addrs(pl);
	rc = xr_maps_open(pl->ifindex, maps);
	if (rc == -EPROTO)
		return xr_fail(&dev->log, rc,
			       "%s: the xroce program attached is another build's (%s); "
			       "`xroce attach --force %s` replaces it", ifname,
			       maps->mismatch, ifname);
	if (rc)
		return xr_fail(&dev->log, rc,
			       "%s: no xroce program attached (run `xroce attach "
			       "%s` first): %s", ifname, ifname, strerror(-rc));
	return 0;
}

/* Frames built by the XDP program from this plane's descriptor ring. */
static int open_xdptx(struct xroce_device *dev, int i, char *why, size_t whylen)
{
	struct xr_plane *pl = &dev->plane[i];

	return xr_xdptx_open(&pl->txr, dev->maps.txq, dev->domain_id, (uint32_t)i,
			     pl->ifindex, dev->maps.prog_id, xr_random64(), why,
			     whylen);
}

/* The packet socket of small kicks (kick_small): raw, protocol 0 (it
 * receives nothing), bound to the plane's interface, past the qdisc as
 * AF_XDP and XDP_TX frames are.  Without it (no CAP_NET_RAW?) every kick
 * is a test run. */
static void open_small(struct xr_plane *pl)
{
	struct sockaddr_ll a = { .sll_family = AF_PACKET, .sll_ifindex = pl->ifindex };
	int one = 1, fd;

	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one))) {
		close(fd);
		return;
	}
	pl->pkt_fd = fd;
}

static void frames_reset(struct xr_plane *pl, int i)
{
	uint32_t f;

	pl->frame_base = XR_TELEM_BYTES + (uint64_t)i * XR_TX_FRAMES * XR_PAGE_SIZE;
	for (f = 0; f < XR_TX_FRAMES; f++)
		pl->free_frames[f] = XR_TX_FRAMES - 1 - f;
	pl->nfree = XR_TX_FRAMES;
}

int xr_plane_start(struct xroce_device *dev, int i, enum xroce_tx_engine eng)
{
	struct xr_plane *pl = &dev->plane[i];
	/* Multi-buffer transmit (XDP_USE_SG) only where a packet can be
	 * larger than one 4 KiB frame: jumbo MTUs.  Smaller packets are built
	 * whole in one frame either way. */
	struct xr_xsk_opts o = { .mode = XR_XSK_MODE_AUTO,
				 .no_sg = (uint32_t)pl->mtu + 14 <= XR_PAGE_SIZE };
	char why[160];
	int rc;

	frames_reset(pl, i);
	pl->mem = dev->mem;
	if (eng == XROCE_TX_TEST_RUN) {
		rc = open_xdptx(dev, i, why, sizeof(why));
		if (rc)
			return xr_fail(&dev->log, rc, "%s: no test-run transmit "
				       "engine: %s", pl->ifname, why);
		xr_log(&dev->log, XROCE_LOG_DEBUG, "%s: test-run transmit engine",
		       pl->ifname);
		return 0;
	}
	rc = xr_xsk_create(&pl->xsk, pl->ifindex, 0, dev->mem, dev->mem_len, &o);
	if (rc)
		return xr_fail(&dev->log, rc, "%s: cannot open an AF_XDP socket: %s",
			       pl->ifname, strerror(-rc));
	/* The default: copy-mode AF_XDP is the slower engine (each frame
	 * becomes an skb, copied again at the peer), so where zero copy is
	 * refused and frames fit, frames built by XDP go instead. */
	if (eng == XROCE_TX_DEFAULT && !xr_xsk_zerocopy(pl->xsk) &&
	    (uint32_t)pl->mtu + 14 <= XR_TXR_MAX_FRAME) {
		if (!open_xdptx(dev, i, why, sizeof(why))) {
			xr_xsk_destroy(pl->xsk);
			pl->xsk = NULL;
			open_small(pl);
			xr_log(&dev->log, XROCE_LOG_DEBUG, "%s: AF_XDP would be copy "
			       "mode: test-run transmit engine%s", pl->ifname,
			       pl->pkt_fd >= 0 ? " (a packet socket for kicks of a "
			       "few frames)" : "");
			return 0;
		}
		xr_log(&dev->log, XROCE_LOG_DEBUG, "%s: no test-run engine (%s)",
		       pl->ifname, why);
	}
	xr_log(&dev->log, XROCE_LOG_DEBUG, "%s: AF_XDP %s mode%s", pl->ifname,
	       xr_xsk_zerocopy(pl->xsk) ? "zero-copy" : "copy",
	       xr_xsk_sg(pl->xsk) ? ", multi-buffer" : "");
	if (!o.no_sg && !xr_xsk_sg(pl->xsk))
		xr_log(&dev->log, XROCE_LOG_WARN, "%s: MTU %d but no multi-buffer "
		       "AF_XDP (kernel < 6.6?): packets are limited to one 4 KiB "
		       "frame", pl->ifname, pl->mtu);
	return 0;
}

void xr_plane_stop(struct xr_plane *pl)
{
	if (pl->xsk)
		xr_xsk_destroy(pl->xsk);
	pl->xsk = NULL;
	if (pl->pkt_fd >= 0)
		close(pl->pkt_fd);
	pl->pkt_fd = -1;
	xr_xdptx_close(pl->txr);
	pl->txr = NULL;
}
