// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Discovery and limits: which interfaces of this network namespace carry
 * xroce's XDP program, what each plane of an open device looks like right
 * now (link state, MTU, speed, addresses), and what a device can really do.
 * What a compatibility layer (ibverbs: devices, ports, GIDs, device
 * attributes) reports comes from here, so it stays honest.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <bpf/bpf.h>

#include "bpfmaps.h"
#include "cq.h"
#include "device.h"
#include "engine.h"
#include "nlroute.h"
#include "qp.h"

int xr_list_interfaces(char (*names)[16], int max)
{
	struct if_nameindex *ifs, *i;
	int n = 0;

	if (max < 0 || (max && !names))
		return -EINVAL;
	ifs = if_nameindex();
	if (!ifs)
		return -errno;
	for (i = ifs; i->if_index; i++) {
		uint32_t prog = 0;

		if (xr_maps_find_prog((int)i->if_index, &prog, NULL))
			continue;
		if (n < max) {
			memset(names[n], 0, 16);
			strncpy(names[n], i->if_name, 15);
		}
		n++;
	}
	if_freenameindex(ifs);
	return n;
}

/* Link speed from the driver (ETHTOOL_GLINKSETTINGS), 0 if unknown. */
static uint32_t link_speed(const char *ifname)
{
	/* The settings and room for their three link-mode masks after them. */
	uint32_t req[(sizeof(struct ethtool_link_settings) + 3 * 128 * 4) / 4];
	struct ethtool_link_settings *s = (struct ethtool_link_settings *)req;
	struct ifreq ifr;
	uint32_t speed = 0;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return 0;
	memset(req, 0, sizeof(req));
	memset(&ifr, 0, sizeof(ifr));
	strncpy(ifr.ifr_name, ifname, IFNAMSIZ - 1);
	s->cmd = ETHTOOL_GLINKSETTINGS;
	ifr.ifr_data = (void *)req;
	/* The first call only tells the size of the link-mode masks. */
	if (!ioctl(fd, SIOCETHTOOL, &ifr) && s->link_mode_masks_nwords < 0 &&
	    -s->link_mode_masks_nwords <= 128) {
		s->link_mode_masks_nwords = (int8_t)-s->link_mode_masks_nwords;
		s->cmd = ETHTOOL_GLINKSETTINGS;
		if (!ioctl(fd, SIOCETHTOOL, &ifr) && s->speed != (uint32_t)SPEED_UNKNOWN)
			speed = s->speed;
	}
	close(fd);
	return speed;
}

int xr_query_plane(const struct xroce_device *dev, int plane,
		   struct xroce_plane_attr *out)
{
	const struct xr_plane *pl;
	struct xr_link_info li;
	char msg[160];
	int rc;

	if (plane < 0 || plane >= dev->nplanes)
		return xr_fail(&dev->log, -EINVAL, "xroce_query_plane: plane %d (the "
			       "device has %d)", plane, dev->nplanes);
	pl = &dev->plane[plane];
	memset(out, 0, sizeof(*out));
	memcpy(out->ifname, pl->ifname, sizeof(out->ifname) - 1);
	out->ifindex = pl->ifindex;
	memcpy(out->mac, pl->mac, 6);
	out->mtu = (uint32_t)pl->mtu;
	rc = xr_nl_link(pl->ifindex, &li, msg, sizeof(msg));
	if (rc)
		return xr_fail(&dev->log, rc, "%s: %s", pl->ifname, msg);
	out->mtu = (uint32_t)li.mtu;
	out->link_up = li.up && li.running;
	out->speed_mbps = link_speed(pl->ifname);
	out->has_ipv4 = pl->has4;
	out->has_ipv6 = pl->has6;
	memcpy(out->ipv4, pl->addr4, 4);
	memcpy(out->ipv6, pl->addr6, 16);
	return 0;
}

/* Entries in a hash map, counted by walking its keys (cheap: queried once
 * per ibv_query_device, not per packet). */
static uint32_t map_count(int fd)
{
	uint32_t key, next, n = 0;
	const void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		n++;
	}
	return n;
}

int xr_query_device(const struct xroce_device *dev,
		    struct xroce_device_caps *out)
{
	uint32_t used;

	memset(out, 0, sizeof(*out));
	out->nplanes = (uint32_t)dev->nplanes;
	/* Connection id 0 is never handed out. */
	out->max_qp_total = dev->conn_tab_size ? dev->conn_tab_size - 1 : 0;
	used = map_count(dev->maps.conns);
	out->max_qp = used < out->max_qp_total ? out->max_qp_total - used : 0;
	out->max_send_wr = XR_MAX_SQ;
	out->max_recv_per_stream = XROCE_MAX_RECV_PER_STREAM;
	out->max_send_sge = XROCE_MAX_SGE;
	out->max_recv_sge = XROCE_MAX_RECV_SGE;
	out->max_inline = XROCE_MAX_INLINE;
	out->max_cqe = XR_CQ_MAX;
	out->max_mr = dev->maps.max_mrs;
	out->mem_bytes = dev->heap.len;
	out->mem_free = dev->heap.len - dev->heap.used_bytes;
	out->max_msg_size = XROCE_MAX_MSG_SIZE;
	out->max_msgs_in_flight = XR_MSG_SLOTS;
	out->max_paths = XROCE_MAX_PATHS;
	out->max_streams = XROCE_MAX_STREAMS;
	out->data_port = dev->data_port;
	out->flags = XROCE_CAP_ANY_MEMORY | XROCE_CAP_QP_BIND | XROCE_CAP_CQ_NOTIFY;
	return 0;
}

int xr_device_nplanes(const struct xroce_device *dev)
{
	return dev->nplanes;
}
