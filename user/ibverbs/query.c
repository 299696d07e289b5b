// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What a device, its one port and its GID table report: the limits xroce
 * really has (xroce_query_device), the link as it is now (state from the
 * carrier, active MTU from the interface MTU), and RoCEv2-style GIDs: the
 * first plane's IPv4 address as ::ffff:a.b.c.d, then its global IPv6
 * address, both of type RoCE v2, so that perftest's -x and ibv_rc_pingpong's
 * -g pick them as on RoCE.  The other planes are not in the table: the
 * connection exchange carries their addresses.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <net/if.h>

#include "xv.h"

#undef ibv_query_port

void xv_gids_load(struct xv_context *ctx)
{
	struct xroce_plane_attr pa;

	ctx->ngids = 0;
	if (xroce_query_plane(ctx->xd, 0, &pa))
		return;
	if (pa.has_ipv4) {
		struct xv_gid *g = &ctx->gids[ctx->ngids++];

		memset(g, 0, sizeof(*g));
		g->gid.raw[10] = 0xff;
		g->gid.raw[11] = 0xff;
		memcpy(g->gid.raw + 12, pa.ipv4, 4);
	}
	if (pa.has_ipv6) {
		struct xv_gid *g = &ctx->gids[ctx->ngids++];

		memset(g, 0, sizeof(*g));
		memcpy(g->gid.raw, pa.ipv6, 16);
	}
}

int xv_gid_index(struct xv_context *ctx, const union ibv_gid *gid)
{
	int i;

	for (i = 0; i < ctx->ngids; i++)
		if (!memcmp(ctx->gids[i].gid.raw, gid->raw, 16))
			return i;
	return -1;
}

/* The largest IB MTU that the payload of one packet holds. */
static enum ibv_mtu ib_mtu(uint32_t ip_mtu)
{
	uint32_t payload = ip_mtu > 92 ? ip_mtu - 92 : 0; /* IPv4+UDP+xroce */

	if (payload >= 4096)
		return IBV_MTU_4096;
	if (payload >= 2048)
		return IBV_MTU_2048;
	if (payload >= 1024)
		return IBV_MTU_1024;
	if (payload >= 512)
		return IBV_MTU_512;
	return IBV_MTU_256;
}

/* IB width and speed for a link rate (rates of 10 Gbit/s and more are
 * shown as four lanes when that fits better). */
static void ib_speed(uint32_t mbps, uint8_t *width, uint8_t *speed)
{
	static const struct { uint32_t gbps; uint8_t code; } s[] = {
		{ 100, 128 }, { 50, 64 }, { 25, 32 }, { 14, 16 }, { 10, 4 },
		{ 5, 2 }, { 2, 1 },
	};
	uint32_t g = mbps / 1000, lanes = 1;
	size_t i;

	*width = 1;  /* IBV_WIDTH_1X */
	*speed = 1;  /* SDR */
	if (g >= 40 && g % 4 == 0 && g / 4 >= 10) {
		lanes = 4;
		*width = 2; /* 4X */
	}
	for (i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		if (g / lanes >= s[i].gbps) {
			*speed = s[i].code;
			return;
		}
}

int xv_query_port(struct ibv_context *c, uint8_t port, struct ibv_port_attr *out,
		  size_t len)
{
	struct xv_context *ctx = xv_ctx(c);
	struct xroce_plane_attr pa;
	struct ibv_port_attr a;
	int rc;

	if (port != 1)
		return xv_fail(EINVAL, "ibv_query_port: port %u (an xroce device "
			       "has port 1)", port);
	rc = xroce_query_plane(ctx->xd, 0, &pa);
	if (rc)
		return xv_lib_err(rc);
	memset(&a, 0, sizeof(a));
	a.state = pa.link_up ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
	a.phys_state = pa.link_up ? 5 : 3; /* LinkUp / Disabled */
	a.max_mtu = IBV_MTU_4096;
	a.active_mtu = ib_mtu(pa.mtu);
	a.gid_tbl_len = XV_GID_TBL_LEN;
	a.port_cap_flags = IBV_PORT_IP_BASED_GIDS;
	a.max_msg_sz = ctx->caps.max_msg_size;
	a.pkey_tbl_len = 1;
	a.max_vl_num = 1;
	a.link_layer = IBV_LINK_LAYER_ETHERNET;
	ib_speed(pa.speed_mbps, &a.active_width, &a.active_speed);
	memset(out, 0, len);
	memcpy(out, &a, len < sizeof(a) ? len : sizeof(a));
	return 0;
}

/* The IBVERBS_1.1 entry point: callers compiled without verbs_context
 * support pass the older, shorter structure. */
struct _compat_ibv_port_attr {
	enum ibv_port_state state;
	enum ibv_mtu max_mtu;
	enum ibv_mtu active_mtu;
	int gid_tbl_len;
	uint32_t port_cap_flags;
	uint32_t max_msg_sz;
	uint32_t bad_pkey_cntr;
	uint32_t qkey_viol_cntr;
	uint16_t pkey_tbl_len;
	uint16_t lid;
	uint16_t sm_lid;
	uint8_t lmc;
	uint8_t max_vl_num;
	uint8_t sm_sl;
	uint8_t subnet_timeout;
	uint8_t init_type_reply;
	uint8_t active_width;
	uint8_t active_speed;
	uint8_t phys_state;
	uint8_t link_layer;
	uint8_t flags;
};

XV_EXPORT int ibv_query_port(struct ibv_context *c, uint8_t port,
			     struct _compat_ibv_port_attr *attr)
{
	if (!c || !attr)
		return EINVAL;
	return xv_query_port(c, port, (struct ibv_port_attr *)attr, sizeof(*attr));
}

int xv_query_device_ex(struct ibv_context *c,
		       const struct ibv_query_device_ex_input *in,
		       struct ibv_device_attr_ex *out, size_t len)
{
	struct xv_context *ctx = xv_ctx(c);
	struct ibv_device_attr_ex a;
	struct ibv_device_attr *o = &a.orig_attr;
	struct xroce_device_caps caps;

	if (in && in->comp_mask)
		return xv_fail(EINVAL, "ibv_query_device_ex: comp_mask %#x",
			       in->comp_mask);
	if (len < sizeof(*o))
		return xv_fail(EINVAL, "ibv_query_device_ex: attribute size %zu", len);
	if (xroce_query_device(ctx->xd, &caps))
		return xv_fail(EIO, "ibv_query_device: the device is gone");
	memset(&a, 0, sizeof(a));
	snprintf(o->fw_ver, sizeof(o->fw_ver), "xroce");
	o->node_guid = ibv_get_device_guid(c->device);
	o->sys_image_guid = o->node_guid;
	o->max_mr_size = caps.mem_bytes;
	o->page_size_cap = 4096;
	/* vendor 0: programs that tune for a vendor's hardware leave it be */
	o->vendor_id = 0;
	o->vendor_part_id = 0;
	o->max_qp = (int)caps.max_qp_total;
	o->max_qp_wr = XV_MAX_WR;
	o->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_SYS_IMAGE_GUID |
			      IBV_DEVICE_CURR_QP_STATE_MOD;
	o->max_sge = XV_MAX_SGE;
	o->max_sge_rd = 1;           /* a READ lands in one buffer */
	o->max_cq = (int)caps.max_qp_total * 2;
	o->max_cqe = XV_MAX_CQE;
	o->max_mr = (int)caps.max_mr;
	o->max_pd = 1 << 20;
	/* READs in flight per connection: xroce has a message slot each
	 * (256), but ibv_qp_attr carries them in 8 bits. */
	o->max_qp_rd_atom = caps.max_msgs_in_flight < 128 ?
			    (int)caps.max_msgs_in_flight : 128;
	o->max_qp_init_rd_atom = o->max_qp_rd_atom;
	o->max_res_rd_atom = o->max_qp_rd_atom * (int)caps.max_qp_total;
	o->atomic_cap = IBV_ATOMIC_NONE;
	/* SRQs lend their receives to the QPs (srq.c): one per QP at most */
	o->max_srq = (int)caps.max_qp_total;
	o->max_srq_wr = XV_MAX_SRQ_WR;
	o->max_srq_sge = XV_MAX_SGE;
	o->max_pkeys = 1;
	o->local_ca_ack_delay = 15;
	o->phys_port_cnt = 1;
	a.phys_port_cnt_ex = 1;
	memset(out, 0, len);
	memcpy(out, &a, len < sizeof(a) ? len : sizeof(a));
	return 0;
}

XV_EXPORT int ibv_query_device(struct ibv_context *c,
			       struct ibv_device_attr *attr)
{
	if (!c || !attr)
		return EINVAL;
	return xv_query_device_ex(c, NULL, (struct ibv_device_attr_ex *)attr,
				  sizeof(*attr));
}

/* One GID entry: 0, ENODATA (empty), or EINVAL (out of the table). */
static int gid_entry(struct ibv_context *c, uint32_t port, uint32_t index,
		     struct ibv_gid_entry *e)
{
	struct xv_context *ctx = xv_ctx(c);

	if (port != 1 || index >= XV_GID_TBL_LEN)
		return EINVAL;
	memset(e, 0, sizeof(*e));
	e->gid_index = index;
	e->port_num = port;
	if ((int)index >= ctx->ngids)
		return ENODATA;
	e->gid = ctx->gids[index].gid;
	e->gid_type = IBV_GID_TYPE_ROCE_V2;
	e->ndev_ifindex = if_nametoindex(ctx->vdev->planes[0]);
	return 0;
}

XV_EXPORT int ibv_query_gid(struct ibv_context *c, uint8_t port, int index,
			    union ibv_gid *gid)
{
	struct ibv_gid_entry e;
	int rc;

	if (!c || !gid || index < 0) {
		errno = EINVAL;
		return -1;
	}
	rc = gid_entry(c, port, (uint32_t)index, &e);
	if (rc == ENODATA) {
		memset(gid, 0, sizeof(*gid)); /* an empty entry is not an error */
		return 0;
	}
	if (rc) {
		xv_fail(rc, "ibv_query_gid: port %u index %d (port 1, indexes "
			"0..%d)", port, index, XV_GID_TBL_LEN - 1);
		return -1;
	}
	*gid = e.gid;
	return 0;
}

XV_EXPORT int _ibv_query_gid_ex(struct ibv_context *c, uint32_t port,
				uint32_t index, struct ibv_gid_entry *entry,
				uint32_t flags, size_t size)
{
	struct ibv_gid_entry e;
	int rc;

	if (!c || !entry)
		return EINVAL;
	if (flags)
		return xv_fail(EINVAL, "ibv_query_gid_ex: flags %#x", flags);
	rc = gid_entry(c, port, index, &e);
	if (rc)
		return rc;
	memset(entry, 0, size);
	memcpy(entry, &e, size < sizeof(e) ? size : sizeof(e));
	return 0;
}

XV_EXPORT ssize_t _ibv_query_gid_table(struct ibv_context *c,
				       struct ibv_gid_entry *entries,
				       size_t max, uint32_t flags, size_t size)
{
	struct xv_context *ctx;
	size_t n = 0;
	int i;

	if (!c || (max && !entries) || flags)
		return -EINVAL;
	ctx = xv_ctx(c);
	for (i = 0; i < ctx->ngids; i++) {
		struct ibv_gid_entry e;

		if (n == max)
			return -EINVAL; /* as rdma-core: the table does not fit */
		gid_entry(c, 1, (uint32_t)i, &e);
		memset((char *)entries + n * size, 0, size);
		memcpy((char *)entries + n * size, &e, size < sizeof(e) ? size : sizeof(e));
		n++;
	}
	return (ssize_t)n;
}

/* enum ibv_gid_type_sysfs (rdma-core's driver.h): 0 = IB/RoCE v1, 1 = v2 */
XV_EXPORT int ibv_query_gid_type(struct ibv_context *c, uint8_t port,
				 unsigned int index, int *type)
{
	struct ibv_gid_entry e;
	int rc;

	if (!c || !type) {
		errno = EINVAL;
		return -1;
	}
	rc = gid_entry(c, port, index, &e);
	if (rc == ENODATA) {
		*type = 0;
		return 0;
	}
	if (rc) {
		errno = rc;
		return -1;
	}
	*type = 1;
	return 0;
}

XV_EXPORT int ibv_query_pkey(struct ibv_context *c, uint8_t port, int index,
			     __be16 *pkey)
{
	if (!c || !pkey || port != 1 || index != 0) {
		errno = EINVAL;
		return -1;
	}
	*pkey = htobe16(0xffff); /* the default partition */
	return 0;
}

XV_EXPORT int ibv_get_pkey_index(struct ibv_context *c, uint8_t port,
				 __be16 pkey)
{
	if (!c || port != 1 || (be16toh(pkey) & 0x7fff) != 0x7fff) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}
