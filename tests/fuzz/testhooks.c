// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test-only entry points (testhooks.h): a device without a network for the
 * fuzzers, and the control-message input path.  Mirrors xroce_open_device
 * step by step, with the interface-bound parts (finding the attached
 * program's maps, netlink, the domain registration) replaced by private
 * maps and made-up plane addresses.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "ctrl.h"
#include "device.h"
#include "engine.h"
#include "events.h"
#include "telem.h"
#include "testhooks.h"
#include "xsk.h"

#define XR_TEST_MEM_DEFAULT (4u << 20)
#define XR_TEST_MAX_MRS 1024
#define XR_TEST_MAX_RQ 16384
#define XR_TEST_MAX_READS 4096
#define XR_TEST_EVQ_BYTES (64u << 10)

void xr_test_maps_none(struct xr_maps *m)
{
	memset(m, 0, sizeof(*m));
	m->cfg = m->domains = m->mem = m->evq = m->mrs = -1;
	m->conns = m->rx = m->msgs = m->stats = m->rq = m->reads = -1;
	m->ifs = -1;
}

void xr_test_device_swap_maps(struct xroce_device *dev, struct xr_maps *other)
{
	struct xr_maps t = dev->maps;

	dev->maps = *other;
	*other = t;
}

static int map_new(enum bpf_map_type type, const char *name, uint32_t ksz,
		   uint32_t vsz, uint32_t n)
{
	int fd = bpf_map_create(type, name, ksz, vsz, n, NULL);

	return fd < 0 ? -errno : fd;
}

/* The maps QPs, regions, receives and READs update, not attached to any
 * program.  Domain, memory and statistics maps are not needed: the device
 * registers no domain. */
static int private_maps(struct xr_maps *m, uint32_t max_conns)
{
	int fd;

	xr_test_maps_none(m);
	m->max_conns = max_conns;
	m->max_mrs = XR_TEST_MAX_MRS;
#define NEW(slot, ...)                                  \
	do {                                            \
		fd = map_new(__VA_ARGS__);              \
		if (fd < 0)                             \
			return fd;                      \
		m->slot = fd;                           \
	} while (0)
	NEW(conns, BPF_MAP_TYPE_HASH, "xrt_conns", sizeof(uint32_t),
	    sizeof(struct xr_conn), max_conns);
	NEW(rx, BPF_MAP_TYPE_ARRAY, "xrt_rx", sizeof(uint32_t),
	    sizeof(struct xr_rx_state), max_conns);
	NEW(msgs, BPF_MAP_TYPE_ARRAY, "xrt_msgs", sizeof(uint32_t),
	    sizeof(uint64_t), max_conns * XR_MSG_SLOTS);
	NEW(mrs, BPF_MAP_TYPE_HASH, "xrt_mrs", sizeof(uint32_t),
	    sizeof(struct xr_mr), XR_TEST_MAX_MRS);
	NEW(rq, BPF_MAP_TYPE_HASH, "xrt_rq", sizeof(struct xr_rq_key),
	    sizeof(struct xr_rq_ent), XR_TEST_MAX_RQ);
	NEW(reads, BPF_MAP_TYPE_HASH, "xrt_reads", sizeof(struct xr_read_key),
	    sizeof(struct xr_read_ent), XR_TEST_MAX_READS);
#undef NEW
	return 0;
}

static void plane_fake(struct xr_plane *pl, int i, int mtu)
{
	static const uint8_t mac[6] = { 0x02, 0, 0, 0, 0x99, 0 };
	uint8_t a6[16] = { 0xfd, 0x99, 0, 0 };

	memset(pl->ifname, 0, sizeof(pl->ifname));
	memcpy(pl->ifname, "xrtest", 6);
	pl->ifname[6] = (char)('0' + i);
	pl->ifindex = 0;
	memcpy(pl->mac, mac, 6);
	pl->mac[5] = (uint8_t)i;
	pl->mtu = mtu;
	pl->addr4[0] = 10;
	pl->addr4[1] = 99;
	pl->addr4[2] = (uint8_t)i;
	pl->addr4[3] = 1;
	a6[3] = (uint8_t)i;
	a6[15] = 1;
	memcpy(pl->addr6, a6, 16);
	pl->has4 = pl->has6 = true;
}

/* As plane_start in device.c: frames after the telemetry pages, a
 * transmit socket over the whole memory. */
static int plane_start(struct xroce_device *dev, int i)
{
	struct xr_plane *pl = &dev->plane[i];
	struct xr_xsk_opts o = { .mode = XR_XSK_MODE_AUTO, .no_sg = true };
	uint32_t f;
	int rc;

	pl->frame_base = XR_TELEM_BYTES + (uint64_t)i * XR_TX_FRAMES * XR_PAGE_SIZE;
	rc = xr_xsk_create(&pl->xsk, pl->ifindex, 0, dev->mem, dev->mem_len, &o);
	if (rc)
		return xr_fail(&dev->log, rc, "detached device: no transmit "
			       "engine (%s); link a test one in place of xsk.c",
			       strerror(-rc));
	for (f = 0; f < XR_TX_FRAMES; f++)
		pl->free_frames[f] = XR_TX_FRAMES - 1 - f;
	pl->nfree = XR_TX_FRAMES;
	return 0;
}

int xr_test_device_open(const struct xr_test_dev_attr *attr,
			struct xroce_device **out)
{
	struct xroce_device *dev;
	size_t heap, frames;
	int i, rc;

	if (!attr || !out || attr->nplanes < 1 || attr->nplanes > XROCE_MAX_PLANES ||
	    (attr->max_conns && attr->max_conns < 2))
		return -EINVAL;
	*out = NULL;
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	if (pthread_mutex_init(&dev->lock, NULL)) {
		free(dev);
		return -ENOMEM;
	}
	dev->log.fn = attr->log_fn;
	dev->log.arg = attr->log_arg;
	dev->log.level = attr->log_level;
	dev->mem_fd = dev->evq_fd = dev->ctrl_fd = dev->epfd = dev->wake_fd = -1;
	xr_test_maps_none(&dev->maps);
	dev->nplanes = attr->nplanes;
	dev->data_port = attr->data_port ? attr->data_port : XR_DEFAULT_UDP_PORT;
	for (i = 0; i < dev->nplanes; i++)
		plane_fake(&dev->plane[i], i, attr->plane_mtu ? attr->plane_mtu : 1500);

	rc = private_maps(&dev->maps, attr->max_conns ? attr->max_conns : 64);
	if (rc) {
		rc = xr_fail(&dev->log, rc, "detached device: cannot create its "
			     "maps: %s (needs CAP_BPF)", strerror(-rc));
		goto fail;
	}
	dev->conn_tab_size = dev->maps.max_conns;
	dev->conn_tab = calloc(dev->conn_tab_size, sizeof(struct xroce_qp *));
	if (!dev->conn_tab) {
		rc = -ENOMEM;
		goto fail;
	}

	heap = attr->mem_size ? attr->mem_size : XR_TEST_MEM_DEFAULT;
	heap = (heap + XR_PAGE_SIZE - 1) & ~(size_t)(XR_PAGE_SIZE - 1);
	frames = XR_TELEM_BYTES + (size_t)dev->nplanes * XR_TX_FRAMES * XR_PAGE_SIZE;
	dev->mem_len = frames + heap;
	/* Anonymous memory in place of the memory map: the same layout, and
	 * xr_domain_destroy unmaps it the same way. */
	dev->mem = mmap(NULL, dev->mem_len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (dev->mem == MAP_FAILED) {
		dev->mem = NULL;
		rc = -errno;
		goto fail;
	}
	xr_telem_init(dev);
	rc = xr_heap_init(&dev->heap, frames, heap);
	if (rc)
		goto fail;
	for (i = 0; i < dev->nplanes; i++) {
		rc = plane_start(dev, i);
		if (rc)
			goto fail;
	}
	dev->evq_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "xrt_evq", 0, 0,
				     XR_TEST_EVQ_BYTES, NULL);
	if (dev->evq_fd < 0) {
		rc = -errno;
		goto fail;
	}
	rc = xr_events_attach(dev);
	if (rc)
		goto fail;
	*out = dev;
	return 0;
fail:
	xr_device_close(dev);
	return rc;
}

int xr_test_ctrl_input(struct xroce_device *dev, const void *buf, size_t len,
		       const struct sockaddr_in6 *from)
{
	if (!dev || (len && !buf) || !from)
		return -EINVAL;
	return xr_ctrl_handle_msg(dev, buf, len, from, sizeof(*from), 0, NULL);
}

int xr_test_ctrl_answer(struct xroce_device *dev, const void *buf, size_t len,
			const struct sockaddr_in6 *from, uint64_t want_nonce,
			const struct sockaddr_in6 *want_to,
			struct xr_ctrl_msg *answer)
{
	int rc;

	if (!dev || (len && !buf) || !from || !want_to || !answer)
		return -EINVAL;
	dev->want_nonce = want_nonce;
	dev->want_to = *want_to;
	dev->have_answer = dev->have_cookie = false;
	rc = xr_ctrl_handle_msg(dev, buf, len, from, sizeof(*from), want_nonce,
				answer);
	dev->want_nonce = 0;
	return rc;
}
