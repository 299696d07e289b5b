// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Device: one process's handle on one or more interfaces ("planes") that
 * carry the xroce XDP program.  Opening it finds the program's maps,
 * creates the domain (memory map + event ring), a transmit engine per
 * plane over that same memory, the control socket and, if asked, the
 * progress thread.
 *
 * Memory map layout: [ telemetry | transmit frames of plane 0 | of plane 1 |
 * ... | application heap ].  The whole map is registered as each plane's
 * UMEM.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "anymem.h"
#include "cm.h"
#include "cq.h"
#include "ctrl.h"
#include "device.h"
#include "domain.h"
#include "engine.h"
#include "events.h"
#include "evq_wake.h"
#include "mr.h"
#include "plane.h"
#include "progress.h"
#include "rqrecall.h"
#include "telem.h"
#include "trace.h"

#define XR_DEFAULT_MEM (64u << 20)

/* Every plane on one xroce program: they share one set of maps. */
static int open_planes(struct xroce_device *dev,
		       const struct xroce_device_attr *attr)
{
	struct xr_maps maps = { 0 };
	int i, rc;

	for (i = 0; i < attr->nplanes; i++) {
		rc = xr_plane_open(dev, i, attr->ifnames[i], &maps);
		if (rc)
			return rc;
		if (i == 0) {
			dev->maps = maps;
			continue;
		}
		rc = maps.prog_id == dev->maps.prog_id;
		xr_maps_close(&maps);
		if (!rc)
			return xr_fail(&dev->log, -EINVAL, "%s and %s carry different "
				       "xroce programs; attach planes with `xroce "
				       "attach`, which shares one program per host",
				       attr->ifnames[0], attr->ifnames[i]);
	}
	return 0;
}

/* The program's data port and connection table. */
static int read_config(struct xroce_device *dev, const char *ifname)
{
	uint32_t zero = 0;
	struct xr_cfg cfg;

	if (bpf_map_lookup_elem(dev->maps.cfg, &zero, &cfg) || !cfg.udp_port)
		return xr_fail(&dev->log, -ENOTCONN, "%s: the xroce program has no "
			       "data port configured (run `xroce attach %s`)",
			       ifname, ifname);
	dev->data_port = cfg.udp_port;
	dev->conn_tab_size = dev->maps.max_conns;
	if (dev->conn_tab_size < 2)
		return xr_fail(&dev->log, -EINVAL, "the xroce program has no room "
			       "for connections");
	dev->conn_tab = calloc(dev->conn_tab_size, sizeof(struct xroce_qp *));
	if (!dev->conn_tab)
		return xr_fail(&dev->log, -ENOMEM, "out of memory");
	return 0;
}

/* How much deregistered application memory may stay in the memory map
 * (anymem.c): XROCE_MR_CACHE_MB; none by default, because an allocator
 * that hands freed pages back piecewise (madvise(MADV_DONTNEED), a heap
 * shrunk by sbrk) would then fault on device pages (docs/VERBS.md). */
static int mr_cache_size(struct xroce_device *dev)
{
	const char *env = getenv("XROCE_MR_CACHE_MB");
	char *end;
	unsigned long long mb;

	dev->extent_idle_max = 0;
	if (!env || !*env)
		return 0;
	errno = 0;
	mb = strtoull(env, &end, 10);
	if (errno || *end || mb > (1ull << 40))
		return xr_fail(&dev->log, -EINVAL, "XROCE_MR_CACHE_MB=%s: expected "
			       "a number of MiB (0 = keep no deregistered memory)", env);
	dev->extent_idle_max = mb << 20;
	return 0;
}

/* The memory map: telemetry, every plane's transmit frames, the heap. */
static int create_memory(struct xroce_device *dev, size_t mem_size)
{
	size_t mem = mem_size ? mem_size : XR_DEFAULT_MEM;
	size_t frames;
	int rc;

	mem = (mem + XR_PAGE_SIZE - 1) & ~(size_t)(XR_PAGE_SIZE - 1);
	frames = XR_TELEM_BYTES + (size_t)dev->nplanes * XR_TX_FRAMES * XR_PAGE_SIZE;
	rc = xr_domain_create(dev, frames + mem);
	if (rc)
		return rc;
	xr_telem_init(dev);
	rc = xr_heap_init(&dev->heap, frames, mem);
	if (rc)
		return xr_fail(&dev->log, rc, "out of memory");
	return mr_cache_size(dev);
}

/* The transmit engine asked for, or named by XROCE_TX_ENGINE. */
static int choose_engine(struct xroce_device *dev, enum xroce_tx_engine eng,
			 enum xroce_tx_engine *out)
{
	const char *env = getenv("XROCE_TX_ENGINE");

	if (eng == XROCE_TX_DEFAULT && env && *env) {
		if (!strcmp(env, "test_run"))
			eng = XROCE_TX_TEST_RUN;
		else if (!strcmp(env, "af_xdp"))
			eng = XROCE_TX_AF_XDP;
		else if (strcmp(env, "auto") != 0)
			return xr_fail(&dev->log, -EINVAL, "XROCE_TX_ENGINE=%s: "
				       "expected auto, af_xdp or test_run", env);
	}
	if (eng != XROCE_TX_DEFAULT && eng != XROCE_TX_AF_XDP &&
	    eng != XROCE_TX_TEST_RUN)
		return xr_fail(&dev->log, -EINVAL, "unknown tx_engine %d", eng);
	*out = eng;
	return 0;
}

/* One epoll set for the event ring and the control socket. */
static int create_epoll(struct xroce_device *dev)
{
	struct epoll_event ev = { .events = EPOLLIN };

	dev->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (dev->epfd < 0)
		return xr_fail(&dev->log, -errno, "epoll_create1: %s", strerror(errno));
	ev.data.u32 = 0;
	if (epoll_ctl(dev->epfd, EPOLL_CTL_ADD, ring_buffer__epoll_fd(dev->rb), &ev))
		return xr_fail(&dev->log, -errno, "epoll_ctl: %s", strerror(errno));
	ev.data.u32 = 1;
	if (epoll_ctl(dev->epfd, EPOLL_CTL_ADD, dev->ctrl_fd, &ev))
		return xr_fail(&dev->log, -errno, "epoll_ctl: %s", strerror(errno));
	return 0;
}

static struct xroce_device *device_new(const struct xr_logger *lg, int nplanes)
{
	struct xroce_device *dev = calloc(1, sizeof(*dev));
	int i;

	if (!dev)
		return NULL;
	if (pthread_mutex_init(&dev->lock, NULL)) {
		free(dev);
		return NULL;
	}
	dev->log = *lg;
	dev->mem_fd = dev->evq_fd = dev->ctrl_fd = dev->epfd = dev->wake_fd = -1;
	memset(&dev->maps, -1, sizeof(dev->maps));
	for (i = 0; i < XROCE_MAX_PLANES; i++)
		dev->plane[i].pkt_fd = -1;
	dev->nplanes = nplanes;
	return dev;
}

/* Everything after the device object exists, in order. */
static int device_start(struct xroce_device *dev,
			const struct xroce_device_attr *attr)
{
	enum xroce_tx_engine eng = XROCE_TX_DEFAULT;
	int i, rc;

	rc = open_planes(dev, attr);
	if (!rc)
		rc = read_config(dev, attr->ifnames[0]);
	if (rc)
		return rc;
	xr_domain_gc(&dev->log, &dev->maps);
	rc = xr_auth_init(&dev->auth, &dev->log, attr->key_file);
	if (!rc)
		rc = xr_acl_parse(&dev->acl, &dev->log, attr->accept_from);
	if (!rc)
		rc = xr_ctrl_open(dev, attr->ctrl_addr, attr->ctrl_port);
	if (!rc)
		rc = create_memory(dev, attr->mem_size);
	if (!rc)
		rc = choose_engine(dev, attr->tx_engine, &eng);
	for (i = 0; !rc && i < dev->nplanes; i++)
		rc = xr_plane_start(dev, i, eng);
	if (rc)
		return rc;
	xr_telem_planes(dev);
	rc = xr_events_attach(dev);
	if (rc)
		return xr_fail(&dev->log, rc, "cannot map the event ring: %s",
			       strerror(-rc));
	if (xr_evq_wake_map(dev))
		xr_log(&dev->log, XROCE_LOG_WARN, "cannot map the event ring's "
		       "positions: %s; every record wakes the device",
		       strerror(errno));
	rc = create_epoll(dev);
	if (!rc && (attr->flags & XROCE_DEVICE_PROGRESS_THREAD))
		rc = xr_progress_thread_start(dev);
	return rc;
}

int xr_device_open(const struct xroce_device_attr *attr,
		   struct xroce_device **out)
{
	struct xr_logger lg = { attr->log_fn, attr->log_arg, attr->log_level };
	struct xroce_device *dev;
	int rc;

	if (!out)
		return xr_fail(&lg, -EINVAL, "xroce_open_device: NULL out");
	if (attr->nplanes < 1 || attr->nplanes > XROCE_MAX_PLANES)
		return xr_fail(&lg, -EINVAL, "nplanes must be 1..%d", XROCE_MAX_PLANES);
	if (attr->flags & ~(unsigned int)XROCE_DEVICE_PROGRESS_THREAD)
		return xr_fail(&lg, -EINVAL, "xroce_open_device: unknown flags %#x",
			       attr->flags);
	dev = device_new(&lg, attr->nplanes);
	if (!dev)
		return xr_fail(&lg, -ENOMEM, "out of memory");
	pthread_mutex_lock(&dev->lock);
	rc = device_start(dev, attr);
	pthread_mutex_unlock(&dev->lock);
	if (rc) {
		xr_device_close(dev);
		return rc;
	}
	*out = dev;
	return 0;
}

/* QPs first (their outstanding work flushed), then regions, PDs, CQs. */
static void destroy_objects(struct xroce_device *dev)
{
	while (dev->qps)
		xr_qp_destroy(dev->qps);
	while (dev->pds) {
		struct xroce_pd *pd = dev->pds;

		while (pd->mrs)
			xr_mr_dereg(&pd->mrs->pub);
		dev->pds = pd->next;
		free(pd);
	}
	xr_anymem_flush(dev);
	while (dev->cqs) {
		struct xroce_cq *cq = dev->cqs;

		dev->cqs = cq->next;
		xr_cq_free(cq);
	}
}

int xr_device_close(struct xroce_device *dev)
{
	int i;

	pthread_mutex_lock(&dev->lock);
	xr_progress_thread_stop(dev);
	xr_log(&dev->log, XROCE_LOG_DEBUG, "closing device: events for unknown "
	       "connections %llu, malformed events %llu; control messages dropped: "
	       "%llu malformed, %llu unauthenticated, %llu from the wrong address, "
	       "%llu for lack of room, %llu from outside accept_from; %llu cookies "
	       "sent",
	       (unsigned long long)dev->evt_unknown_conn,
	       (unsigned long long)dev->evt_bad, (unsigned long long)dev->ctrl_bad,
	       (unsigned long long)dev->ctrl_unauth,
	       (unsigned long long)dev->ctrl_spoofed,
	       (unsigned long long)dev->ctrl_dropped,
	       (unsigned long long)dev->ctrl_refused,
	       (unsigned long long)dev->ctrl_cookies);
	destroy_objects(dev);
	xr_trace_close(dev);
	xr_evq_wake_unmap(dev);
	xr_events_detach(dev);
	for (i = 0; i < dev->nplanes; i++)
		xr_plane_stop(&dev->plane[i]);
	xr_domain_destroy(dev);
	xr_heap_fini(&dev->heap);
	xr_ctrl_close(dev);
	xr_cm_close(dev);
	xr_auth_fini(&dev->auth);
	if (dev->epfd >= 0)
		close(dev->epfd);
	if (dev->wake_fd >= 0)
		close(dev->wake_fd);
	xr_rqrecall_close(dev->rqr);
	xr_maps_close(&dev->maps);
	free(dev->conn_tab);
	pthread_mutex_unlock(&dev->lock);
	pthread_mutex_destroy(&dev->lock);
	free(dev);
	return 0;
}

void xr_device_lock(struct xroce_device *dev)
{
	pthread_mutex_lock(&dev->lock);
}

void xr_device_unlock(struct xroce_device *dev)
{
	pthread_mutex_unlock(&dev->lock);
}

enum xroce_tx_engine xr_device_tx_engine(const struct xroce_device *dev,
					 int plane)
{
	if (plane < 0 || plane >= dev->nplanes)
		return XROCE_TX_DEFAULT;
	return dev->plane[plane].txr ? XROCE_TX_TEST_RUN : XROCE_TX_AF_XDP;
}

int xr_device_fd(struct xroce_device *dev)
{
	xr_evq_wake_always(dev); /* the application may sleep on it */
	return dev->epfd;
}

uint16_t xr_device_ctrl_port(const struct xroce_device *dev)
{
	return dev->ctrl_port;
}

void *xr_mem_alloc(struct xroce_device *dev, size_t len, size_t align)
{
	uint64_t off;
	int rc;

	rc = xr_anymem_heap_alloc(dev, len, align, &off);
	if (rc) {
		xr_fail(&dev->log, rc, "xroce_mem_alloc(%zu): %s (device memory "
			"is %zu bytes, %llu in use; raise mem_size)", len,
			strerror(-rc), (size_t)dev->heap.len,
			(unsigned long long)dev->heap.used_bytes);
		return NULL;
	}
	return dev->mem + off;
}

int xr_mem_free(struct xroce_device *dev, void *addr)
{
	uint8_t *p = addr;

	if (p < dev->mem || p >= dev->mem + dev->mem_len)
		return xr_fail(&dev->log, -EINVAL,
			       "xroce_mem_free: %p is not device memory", addr);
	if (xr_heap_free(&dev->heap, (uint64_t)(p - dev->mem)))
		return xr_fail(&dev->log, -ENOENT,
			       "xroce_mem_free: %p was not returned by "
			       "xroce_mem_alloc (or is already free)", addr);
	return 0;
}

struct xroce_device *xr_pd_device(const struct xroce_pd *pd)
{
	return pd->dev;
}

struct xroce_device *xr_cq_device(const struct xroce_cq *cq)
{
	return cq->dev;
}

int xr_bad_arg(const char *call, const char *what)
{
	static const struct xr_logger lg = { NULL, NULL, XROCE_LOG_WARN };

	return xr_fail(&lg, -EINVAL, "%s: %s", call, what);
}
