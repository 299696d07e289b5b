// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Devices.  Without a kernel RDMA device, an ibverbs device is a set of
 * xroce planes: by default one device per interface of this network
 * namespace that carries xroce's XDP program, named "xroce_<ifname>";
 * XROCE_IBV_DEVICES="[name=]if1,if2,...;[name=]if3" lists the devices
 * instead, each over the interfaces given (its planes, sprayed over by
 * every connection).  Opening a device opens an xroce device on its
 * planes with XROCE_MEM_SIZE bytes (default 128 MiB) of registrable memory.
 *
 * Devices handed out are never freed (ibverbs programs may keep pointers
 * after ibv_free_device_list); a later ibv_get_device_list reuses them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <endian.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "xv.h"

static pthread_mutex_t dev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct xv_device **known;
static int nknown;

struct xv_device *xv_device_of(struct ibv_device *d)
{
	return (struct xv_device *)d;
}

/* The device named name over planes, the existing one if it was seen. */
static struct xv_device *device_get(const char *name, char (*planes)[16],
				    int nplanes)
{
	struct xv_device *d, **k;
	int i;

	for (i = 0; i < nknown; i++) {
		d = known[i];
		if (!strcmp(d->dev.name, name) && d->nplanes == nplanes &&
		    !memcmp(d->planes, planes, (size_t)nplanes * 16))
			return d;
	}
	k = realloc(known, (size_t)(nknown + 1) * sizeof(struct xv_device *));
	d = calloc(1, sizeof(*d));
	if (!k || !d) {
		free(d);
		if (k)
			known = k;
		return NULL;
	}
	known = k;
	d->dev.node_type = IBV_NODE_CA;
	/* What RoCE devices report: InfiniBand transport, Ethernet link. */
	d->dev.transport_type = IBV_TRANSPORT_IB;
	snprintf(d->dev.name, sizeof(d->dev.name), "%s", name);
	snprintf(d->dev.dev_name, sizeof(d->dev.dev_name), "uverbs_%s", name);
	snprintf(d->dev.dev_path, sizeof(d->dev.dev_path),
		 "/sys/class/infiniband_verbs/uverbs_%s", name);
	snprintf(d->dev.ibdev_path, sizeof(d->dev.ibdev_path),
		 "/sys/class/infiniband/%s", name);
	memcpy(d->planes, planes, (size_t)nplanes * 16);
	d->nplanes = nplanes;
	d->index = nknown;
	known[nknown++] = d;
	return d;
}

/* XROCE_IBV_DEVICES: "[name=]if1,if2;..." -> devices. */
static int parse_groups(const char *spec, struct xv_device **out, int max)
{
	char *s = strdup(spec), *save = NULL, *grp;
	int n = 0;

	if (!s)
		return -ENOMEM;
	for (grp = strtok_r(s, ";", &save); grp && n < max;
	     grp = strtok_r(NULL, ";", &save)) {
		char planes[XROCE_MAX_PLANES][16], name[64], *eq = strchr(grp, '=');
		char *ifs = eq ? eq + 1 : grp, *save2 = NULL, *ifn;
		int np = 0;

		memset(planes, 0, sizeof(planes));
		for (ifn = strtok_r(ifs, ",", &save2); ifn;
		     ifn = strtok_r(NULL, ",", &save2)) {
			if (np == XROCE_MAX_PLANES || strlen(ifn) >= 16) {
				xv_log("XROCE_IBV_DEVICES: group '%s': at most %d "
				       "interfaces of up to 15 characters", grp,
				       XROCE_MAX_PLANES);
				np = -1;
				break;
			}
			memcpy(planes[np++], ifn, strlen(ifn));
		}
		if (np <= 0)
			continue;
		if (eq) {
			*eq = 0;
			snprintf(name, sizeof(name), "%s", grp);
		} else {
			snprintf(name, sizeof(name), "xroce_%.15s", planes[0]);
		}
		out[n] = device_get(name, planes, np);
		if (out[n])
			n++;
	}
	free(s);
	return n;
}

XV_EXPORT struct ibv_device **ibv_get_device_list(int *num)
{
	struct xv_device *devs[64];
	struct ibv_device **list;
	const char *spec = getenv("XROCE_IBV_DEVICES");
	int n = 0, i;

	if (num)
		*num = 0;
	pthread_mutex_lock(&dev_lock);
	if (spec && *spec) {
		n = parse_groups(spec, devs, 64);
	} else {
		char ifs[64][16], planes[XROCE_MAX_PLANES][16], name[64];
		int k = xroce_list_interfaces(ifs, 64);

		for (i = 0; i < k && i < 64; i++) {
			memset(planes, 0, sizeof(planes));
			memcpy(planes[0], ifs[i], 16);
			snprintf(name, sizeof(name), "xroce_%.15s", ifs[i]);
			devs[n] = device_get(name, planes, 1);
			if (devs[n])
				n++;
		}
	}
	if (n < 0)
		n = 0;
	list = calloc((size_t)n + 1, sizeof(struct ibv_device *));
	if (list) {
		for (i = 0; i < n; i++)
			list[i] = &devs[i]->dev;
		if (num)
			*num = n;
	}
	pthread_mutex_unlock(&dev_lock);
	if (!list)
		errno = ENOMEM;
	return list;
}

XV_EXPORT void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

XV_EXPORT const char *ibv_get_device_name(struct ibv_device *device)
{
	return device ? device->name : NULL;
}

XV_EXPORT int ibv_get_device_index(struct ibv_device *device)
{
	return device ? xv_device_of(device)->index : -1;
}

static uint64_t guid_of(const uint8_t mac[6])
{
	/* EUI-64 from the MAC, as RoCE devices derive their node GUID. */
	return (uint64_t)(mac[0] ^ 2) << 56 | (uint64_t)mac[1] << 48 |
	       (uint64_t)mac[2] << 40 | 0xfffeull << 24 |
	       (uint64_t)mac[3] << 16 | (uint64_t)mac[4] << 8 | mac[5];
}

XV_EXPORT __be64 ibv_get_device_guid(struct ibv_device *device)
{
	struct xv_device *d = device ? xv_device_of(device) : NULL;
	struct ifreq ifr;
	uint8_t mac[6] = { 0 };
	int fd;

	if (!d)
		return 0;
	if (!d->guid) {
		fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		memset(&ifr, 0, sizeof(ifr));
		memcpy(ifr.ifr_name, d->planes[0], 15);
		if (fd >= 0 && !ioctl(fd, SIOCGIFHWADDR, &ifr))
			memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
		if (fd >= 0)
			close(fd);
		d->guid = guid_of(mac);
	}
	return htobe64(d->guid);
}

static size_t mem_size(void)
{
	const char *s = getenv("XROCE_MEM_SIZE");
	unsigned long long v;
	char *end;

	if (!s || !*s)
		return XV_DEFAULT_MEM;
	v = strtoull(s, &end, 0);
	switch (*end) {
	case 'k': case 'K': v <<= 10; break;
	case 'm': case 'M': v <<= 20; break;
	case 'g': case 'G': v <<= 30; break;
	default: break;
	}
	if (!v) {
		xv_log("XROCE_MEM_SIZE=%s: not a size; using %u bytes", s,
		       XV_DEFAULT_MEM);
		return XV_DEFAULT_MEM;
	}
	return (size_t)v;
}

/* The ops every ibverbs inline function reaches; unset ones make the
 * inline verbs return EOPNOTSUPP (verbs_get_ctx_op). */
static void set_ops(struct xv_context *ctx)
{
	struct verbs_context *vc = &ctx->vc;
	struct ibv_context *c = &vc->context;

	c->ops.poll_cq = xv_poll_cq;
	c->ops.req_notify_cq = xv_req_notify_cq;
	c->ops.post_send = xv_post_send;
	c->ops.post_recv = xv_post_recv;
	c->ops.post_srq_recv = xv_post_srq_recv;
	vc->sz = sizeof(*vc);
	vc->query_port = xv_query_port;
	vc->query_device_ex = xv_query_device_ex;
	vc->create_qp_ex = xv_create_qp_ex;
	c->abi_compat = __VERBS_ABI_IS_EXTENDED;
}

XV_EXPORT struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct xroce_device_attr da;
	struct xv_device *d;
	struct xv_context *ctx;
	const char *pt;
	int i, rc;

	if (!device)
		return xv_null(EINVAL, "ibv_open_device: NULL device");
	d = xv_device_of(device);
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return xv_null(ENOMEM, "ibv_open_device: out of memory");
	memset(&da, 0, sizeof(da));
	for (i = 0; i < d->nplanes; i++)
		da.ifnames[i] = d->planes[i];
	da.nplanes = d->nplanes;
	da.mem_size = mem_size();
	da.log_fn = xv_xroce_log;
	da.log_level = xv_log_level();
	/* A side that makes no verbs calls (a READ responder, a WRITE
	 * target waiting on a socket, a process asleep on a completion
	 * channel) is served by the device's thread, as by a NIC.
	 * XROCE_PROGRESS_THREAD=0 leaves it out, for programs known to keep
	 * polling (they then do all the work in their own calls). */
	pt = getenv("XROCE_PROGRESS_THREAD");
	if (!pt || strcmp(pt, "0") != 0)
		da.flags |= XROCE_DEVICE_PROGRESS_THREAD;
	rc = xroce_open_device(&da, &ctx->xd);
	if (rc) {
		free(ctx);
		return xv_lib_null(rc);
	}
	xroce_query_device(ctx->xd, &ctx->caps);
	ctx->vdev = d;
	pthread_mutex_init(&ctx->lock, NULL);
	pthread_mutex_init(&ctx->ev_lock, NULL);
	pthread_mutex_init(&ctx->srq_lock, NULL);
	ctx->srq_efd = -1;
	ctx->qp_tab_size = ctx->caps.max_qp_total + 1;
	ctx->qp_tab = calloc(ctx->qp_tab_size, sizeof(struct xv_qp *));
	ctx->vc.context.device = device;
	ctx->vc.context.cmd_fd = -1;
	ctx->vc.context.async_fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	ctx->vc.context.num_comp_vectors = 1;
	pthread_mutex_init(&ctx->vc.context.mutex, NULL);
	if (!ctx->qp_tab || ctx->vc.context.async_fd < 0) {
		rc = errno ? errno : ENOMEM;
		if (ctx->vc.context.async_fd >= 0)
			close(ctx->vc.context.async_fd);
		xroce_close_device(ctx->xd);
		free(ctx->qp_tab);
		free(ctx);
		return xv_null(rc, "ibv_open_device(%s): %s", device->name,
			       strerror(rc));
	}
	set_ops(ctx);
	xv_gids_load(ctx);
	xroce_set_event_handler(ctx->xd, xv_async_handler, ctx);
	return &ctx->vc.context;
}

XV_EXPORT int ibv_close_device(struct ibv_context *context)
{
	struct xv_context *ctx;

	if (!context)
		return EINVAL;
	ctx = xv_ctx(context);
	/* What the application left open goes with the device. */
	xv_srq_worker_stop(ctx);
	xroce_close_device(ctx->xd);
	if (ctx->srq_efd >= 0)
		close(ctx->srq_efd);
	pthread_mutex_destroy(&ctx->srq_lock);
	close(context->async_fd);
	free(ctx->qp_tab);
	free(ctx->evq);
	pthread_mutex_destroy(&ctx->lock);
	pthread_mutex_destroy(&ctx->ev_lock);
	free(ctx);
	return 0;
}
