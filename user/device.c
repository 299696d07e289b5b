// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Device: one process's handle on one or more interfaces ("planes") that
 * carry the xroce XDP program.  Opening it finds the program's maps,
 * creates the domain (memory map + event ring), one transmit-only AF_XDP
 * socket per plane over that same memory, and the control socket.
 *
 * Memory map layout: [ telemetry | transmit frames of plane 0 | of plane 1 |
 * ... | application heap ].  The whole map is registered as each plane's
 * UMEM.
 */
#include <errno.h>
#include <ifaddrs.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/epoll.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "internal.h"
#include "nlroute.h"

#define XR_DEFAULT_MEM (64u << 20)

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
	return pl->txr ? xr_txrun_room(pl->txr) : xr_xsk_tx_free_slots(pl->xsk);
}

int xr_plane_kick(struct xr_plane *pl)
{
	uint32_t i;
	int rc;

	if (!pl->txr)
		return xr_xsk_tx_kick(pl->xsk);
	rc = xr_txrun_flush(pl->txr);
	/* The run read everything it sent: bounce frames are free again. */
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

static int plane_open(struct xroce_device *dev, int i, const char *ifname,
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
	if (rc)
		return xr_fail(&dev->log, rc,
			       "%s: no xroce program attached (run `xroce attach "
			       "%s` first): %s", ifname, ifname, strerror(-rc));
	return 0;
}

static int plane_start(struct xroce_device *dev, int i, enum xroce_tx_engine eng)
{
	struct xr_plane *pl = &dev->plane[i];
	/* Multi-buffer transmit (XDP_USE_SG) only where a packet can be
	 * larger than one 4 KiB frame: jumbo MTUs.  Smaller packets are built
	 * whole in one frame either way. */
	struct xr_xsk_opts o = { .mode = XR_XSK_MODE_AUTO,
				 .no_sg = (uint32_t)pl->mtu + 14 <= XR_PAGE_SIZE };
	uint32_t f;
	int rc;

	pl->frame_base = XR_TELEM_BYTES + (uint64_t)i * XR_TX_FRAMES * XR_PAGE_SIZE;
	for (f = 0; f < XR_TX_FRAMES; f++)
		pl->free_frames[f] = XR_TX_FRAMES - 1 - f;
	pl->nfree = XR_TX_FRAMES;
	if (eng == XROCE_TX_TEST_RUN) {
		char why[160];

		rc = xr_txrun_open(&pl->txr, dev->maps.txq, dev->domain_id,
				   (uint32_t)i, pl->ifindex, dev->maps.prog_id,
				   xr_random64(), why, sizeof(why));
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
		char why[160];

		if (!xr_txrun_open(&pl->txr, dev->maps.txq, dev->domain_id,
				   (uint32_t)i, pl->ifindex, dev->maps.prog_id,
				   xr_random64(), why, sizeof(why))) {
			xr_xsk_destroy(pl->xsk);
			pl->xsk = NULL;
			xr_log(&dev->log, XROCE_LOG_DEBUG, "%s: AF_XDP would be copy "
			       "mode: test-run transmit engine", pl->ifname);
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

int xroce_open_device(const struct xroce_device_attr *attr,
		      struct xroce_device **out)
{
	struct xr_logger lg0 = { NULL, NULL, XROCE_LOG_WARN };
	struct xroce_device *dev = NULL;
	struct xr_maps maps = { 0 };
	struct xr_cfg cfg;
	uint32_t zero = 0;
	size_t mem, frames;
	int i, rc;

	if (attr) {
		lg0.fn = attr->log_fn;
		lg0.arg = attr->log_arg;
		lg0.level = attr->log_level;
	}
	if (!attr || !out)
		return xr_fail(&lg0, -EINVAL, "xroce_open_device: NULL argument");
	*out = NULL;
	if (attr->nplanes < 1 || attr->nplanes > XROCE_MAX_PLANES)
		return xr_fail(&lg0, -EINVAL, "nplanes must be 1..%d",
			       XROCE_MAX_PLANES);
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return xr_fail(&lg0, -ENOMEM, "out of memory");
	dev->log = lg0;
	dev->mem_fd = dev->evq_fd = dev->ctrl_fd = dev->epfd = -1;
	dev->maps.cfg = -1;
	memset(&dev->maps, -1, sizeof(dev->maps));
	dev->nplanes = attr->nplanes;

	for (i = 0; i < attr->nplanes; i++) {
		rc = plane_open(dev, i, attr->ifnames[i], &maps);
		if (rc)
			goto fail;
		if (i == 0) {
			dev->maps = maps;
		} else {
			bool same = maps.prog_id == dev->maps.prog_id;

			xr_maps_close(&maps);
			if (!same) {
				rc = xr_fail(&dev->log, -EINVAL,
					     "%s and %s carry different xroce programs; "
					     "attach planes with `xroce attach`, which "
					     "shares one program per host",
					     attr->ifnames[0], attr->ifnames[i]);
				goto fail;
			}
		}
	}
	if (bpf_map_lookup_elem(dev->maps.cfg, &zero, &cfg) || !cfg.udp_port) {
		rc = xr_fail(&dev->log, -ENOTCONN,
			     "%s: the xroce program has no data port configured "
			     "(run `xroce attach %s`)", attr->ifnames[0],
			     attr->ifnames[0]);
		goto fail;
	}
	dev->data_port = cfg.udp_port;
	dev->conn_tab_size = dev->maps.max_conns;
	if (dev->conn_tab_size < 2) {
		rc = xr_fail(&dev->log, -EINVAL, "the xroce program has no room "
			     "for connections");
		goto fail;
	}
	dev->conn_tab = calloc(dev->conn_tab_size, sizeof(struct xroce_qp *));
	if (!dev->conn_tab) {
		rc = xr_fail(&dev->log, -ENOMEM, "out of memory");
		goto fail;
	}
	xr_domain_gc(&dev->log, &dev->maps);

	rc = xr_ctrl_open(dev, attr->ctrl_addr, attr->ctrl_port);
	if (rc)
		goto fail;

	mem = attr->mem_size ? attr->mem_size : XR_DEFAULT_MEM;
	mem = (mem + XR_PAGE_SIZE - 1) & ~(size_t)(XR_PAGE_SIZE - 1);
	frames = XR_TELEM_BYTES + (size_t)dev->nplanes * XR_TX_FRAMES * XR_PAGE_SIZE;
	rc = xr_domain_create(dev, frames + mem);
	if (rc)
		goto fail;
	xr_telem_init(dev);
	rc = xr_heap_init(&dev->heap, frames, mem);
	if (rc) {
		rc = xr_fail(&dev->log, rc, "out of memory");
		goto fail;
	}
	{
		enum xroce_tx_engine eng = attr->tx_engine;
		const char *env = getenv("XROCE_TX_ENGINE");

		if (eng == XROCE_TX_DEFAULT && env && *env) {
			if (!strcmp(env, "test_run")) {
				eng = XROCE_TX_TEST_RUN;
			} else if (!strcmp(env, "af_xdp")) {
				eng = XROCE_TX_AF_XDP;
			} else if (strcmp(env, "auto") != 0) {
				rc = xr_fail(&dev->log, -EINVAL, "XROCE_TX_ENGINE=%s: "
					     "expected auto, af_xdp or test_run", env);
				goto fail;
			}
		}
		if (eng != XROCE_TX_DEFAULT && eng != XROCE_TX_AF_XDP &&
		    eng != XROCE_TX_TEST_RUN) {
			rc = xr_fail(&dev->log, -EINVAL, "unknown tx_engine %d", eng);
			goto fail;
		}
		for (i = 0; i < dev->nplanes; i++) {
			rc = plane_start(dev, i, eng);
			if (rc)
				goto fail;
		}
	}
	rc = xr_progress_attach(dev);
	if (rc) {
		rc = xr_fail(&dev->log, rc, "cannot map the event ring: %s",
			     strerror(-rc));
		goto fail;
	}
	dev->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (dev->epfd < 0) {
		rc = xr_fail(&dev->log, -errno, "epoll_create1: %s", strerror(errno));
		goto fail;
	}
	{
		struct epoll_event ev = { .events = EPOLLIN };

		ev.data.u32 = 0;
		if (epoll_ctl(dev->epfd, EPOLL_CTL_ADD, ring_buffer__epoll_fd(dev->rb), &ev) ||
		    (ev.data.u32 = 1,
		     epoll_ctl(dev->epfd, EPOLL_CTL_ADD, dev->ctrl_fd, &ev))) {
			rc = xr_fail(&dev->log, -errno, "epoll_ctl: %s", strerror(errno));
			goto fail;
		}
	}
	*out = dev;
	return 0;
fail:
	xroce_close_device(dev);
	return rc;
}

int xroce_close_device(struct xroce_device *dev)
{
	int i;

	if (!dev)
		return -EINVAL;
	xr_log(&dev->log, XROCE_LOG_DEBUG, "closing device: events for unknown "
	       "connections %llu, malformed events %llu, bad control messages "
	       "%llu, control requests dropped %llu",
	       (unsigned long long)dev->evt_unknown_conn,
	       (unsigned long long)dev->evt_bad, (unsigned long long)dev->ctrl_bad,
	       (unsigned long long)dev->ctrl_dropped);
	while (dev->qps)
		xroce_destroy_qp(dev->qps);
	while (dev->pds) {
		struct xroce_pd *pd = dev->pds;

		while (pd->mrs)
			xroce_dereg_mr(&pd->mrs->pub);
		dev->pds = pd->next;
		free(pd);
	}
	while (dev->cqs) {
		struct xroce_cq *cq = dev->cqs;

		dev->cqs = cq->next;
		free(cq->ring);
		free(cq);
	}
	if (dev->rb)
		ring_buffer__free(dev->rb);
	for (i = 0; i < dev->nplanes; i++) {
		if (dev->plane[i].xsk)
			xr_xsk_destroy(dev->plane[i].xsk);
		xr_txrun_close(dev->plane[i].txr);
		dev->plane[i].txr = NULL;
	}
	xr_domain_destroy(dev);
	xr_heap_fini(&dev->heap);
	xr_ctrl_close(dev);
	if (dev->epfd >= 0)
		close(dev->epfd);
	xr_maps_close(&dev->maps);
	free(dev->conn_tab);
	free(dev);
	return 0;
}

enum xroce_tx_engine xroce_device_tx_engine(const struct xroce_device *dev,
					    int plane)
{
	if (!dev || plane < 0 || plane >= dev->nplanes)
		return XROCE_TX_DEFAULT;
	return dev->plane[plane].txr ? XROCE_TX_TEST_RUN : XROCE_TX_AF_XDP;
}

int xroce_device_fd(const struct xroce_device *dev)
{
	return dev ? dev->epfd : -EINVAL;
}

uint16_t xroce_device_ctrl_port(const struct xroce_device *dev)
{
	return dev ? dev->ctrl_port : 0;
}

void *xroce_mem_alloc(struct xroce_device *dev, size_t len, size_t align)
{
	uint64_t off;
	int rc;

	if (!dev)
		return NULL;
	rc = xr_heap_alloc(&dev->heap, len, align, &off);
	if (rc) {
		xr_fail(&dev->log, rc, "xroce_mem_alloc(%zu): %s (device memory "
			"is %zu bytes, %llu in use; raise mem_size)", len,
			strerror(-rc), (size_t)dev->heap.len,
			(unsigned long long)dev->heap.used_bytes);
		return NULL;
	}
	return dev->mem + off;
}

int xroce_mem_free(struct xroce_device *dev, void *addr)
{
	uint8_t *p = addr;

	if (!dev || !p)
		return -EINVAL;
	if (p < dev->mem || p >= dev->mem + dev->mem_len)
		return xr_fail(&dev->log, -EINVAL,
			       "xroce_mem_free: %p is not device memory", addr);
	if (xr_heap_free(&dev->heap, (uint64_t)(p - dev->mem)))
		return xr_fail(&dev->log, -ENOENT,
			       "xroce_mem_free: %p was not returned by "
			       "xroce_mem_alloc (or is already free)", addr);
	return 0;
}
