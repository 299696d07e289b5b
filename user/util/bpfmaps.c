// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpfmaps.h"
#include "contract/abi.h"
#include "contract/txring.h"

#define XR_PROG_NAME "xroce_xdp"

/* The layouts this build's library and XDP program share.  A program of
 * another build whose maps differ would be read and written with the wrong
 * offsets (the library crashed doing so after an upgrade), so it is
 * refused.  max_entries 0: any (sized at attach). */
static const struct map_layout {
	const char *name;
	uint32_t key_size, value_size, max_entries;
} layouts[] = {
	{ XR_MAP_CFG, sizeof(__u32), sizeof(struct xr_cfg), 0 },
	{ XR_MAP_DOMAINS, sizeof(__u32), sizeof(struct xr_domain), 0 },
	{ XR_MAP_MRS, sizeof(__u32), sizeof(struct xr_mr), 0 },
	{ XR_MAP_CONNS, sizeof(__u32), sizeof(struct xr_conn), 0 },
	{ XR_MAP_RX, sizeof(__u32), sizeof(struct xr_rx_state), 0 },
	{ XR_MAP_MSGS, sizeof(__u32), sizeof(__u64), 0 },
	{ XR_MAP_STATS, sizeof(__u32), sizeof(__u64), XR_STAT_MAX },
	{ XR_MAP_RQ, sizeof(struct xr_rq_key), sizeof(struct xr_rq_ent), 0 },
	{ XR_MAP_READS, sizeof(struct xr_read_key), sizeof(struct xr_read_ent), 0 },
	{ XR_MAP_TRACE, sizeof(__u32), sizeof(struct xr_trace_rec), 0 },
	{ XR_MAP_EVB, sizeof(__u32), sizeof(struct xr_evb), 0 },
	{ XR_MAP_TXQ, sizeof(struct xr_txq_key), sizeof(__u32), 0 },
};

/* 0 if map mi has this build's layout (or is not one that is checked);
 * -EPROTO with what differs in why otherwise ("key+value bytes x
 * entries"). */
static int check_layout(const struct bpf_map_info *mi, char *why, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		const struct map_layout *l = &layouts[i];

		if (strcmp(mi->name, l->name) != 0)
			continue;
		if (mi->key_size == l->key_size && mi->value_size == l->value_size &&
		    (!l->max_entries || mi->max_entries == l->max_entries))
			return 0;
		if (l->max_entries)
			snprintf(why, len, "map %s: %u+%u bytes x %u; this build's: %u+%u x %u",
				 l->name, mi->key_size, mi->value_size, mi->max_entries,
				 l->key_size, l->value_size, l->max_entries);
		else
			snprintf(why, len, "map %s: %u+%u bytes; this build's: %u+%u",
				 l->name, mi->key_size, mi->value_size, l->key_size,
				 l->value_size);
		return -EPROTO;
	}
	return 0;
}

static void maps_reset(struct xr_maps *m)
{
	memset(m, 0, sizeof(*m));
	m->cfg = m->domains = m->mem = m->evq = m->mrs = -1;
	m->conns = m->rx = m->msgs = m->stats = m->rq = m->reads = -1;
	m->txq = m->trace = -1;
	m->ifs = -1;
	m->evb = -1;
}

static int prog_info(int fd, struct bpf_prog_info *info, uint32_t *ids,
		     uint32_t nids)
{
	uint32_t len = sizeof(*info);

	memset(info, 0, sizeof(*info));
	if (ids) {
		info->nr_map_ids = nids;
		info->map_ids = (uint64_t)(unsigned long)ids;
	}
	return bpf_obj_get_info_by_fd(fd, info, &len) ? -errno : 0;
}

/* 1 if prog_id is xroce's program, 0 if another one, or a negative errno. */
static int is_xroce(uint32_t prog_id)
{
	struct bpf_prog_info info;
	int fd, rc;

	fd = bpf_prog_get_fd_by_id(prog_id);
	if (fd < 0)
		return -errno;
	rc = prog_info(fd, &info, NULL, 0);
	close(fd);
	if (rc)
		return rc;
	return strncmp(info.name, XR_PROG_NAME, sizeof(info.name)) == 0;
}

/* libxdp's multi-program mode attaches a dispatcher and links each
 * component program to it as a BPF_PROG_TYPE_EXT (freplace) program.
 * The links name their target, so look for a link into this dispatcher
 * whose program is xroce's. */
static int find_in_dispatcher(uint32_t dispatcher_id, uint32_t *prog_id)
{
	uint32_t id = 0;

	*prog_id = 0;
	while (!bpf_link_get_next_id(id, &id)) {
		struct bpf_link_info li;
		uint32_t len = sizeof(li);
		int fd = bpf_link_get_fd_by_id(id);

		if (fd < 0)
			continue;
		memset(&li, 0, sizeof(li));
		if (!bpf_obj_get_info_by_fd(fd, &li, &len) &&
		    li.type == BPF_LINK_TYPE_TRACING &&
		    li.tracing.target_obj_id == dispatcher_id &&
		    is_xroce(li.prog_id) == 1)
			*prog_id = li.prog_id;
		close(fd);
		if (*prog_id)
			return 0;
	}
	return -ENOENT;
}

int xr_maps_find_prog(int ifindex, uint32_t *prog_id, int *mode)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	uint32_t ids[3];
	int i, rc;

	rc = bpf_xdp_query(ifindex, 0, &q);
	if (rc)
		return rc;
	ids[0] = q.drv_prog_id;
	ids[1] = q.skb_prog_id;
	ids[2] = q.hw_prog_id;
	for (i = 0; i < 3; i++) {
		if (!ids[i])
			continue;
		rc = is_xroce(ids[i]);
		if (rc < 0)
			return rc;
		if (mode)
			*mode = i == 0 ? XDP_FLAGS_DRV_MODE :
				i == 1 ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_HW_MODE;
		if (rc == 1) {
			*prog_id = ids[i];
			return 0;
		}
		/* Some other program: maybe libxdp's dispatcher. */
		if (!find_in_dispatcher(ids[i], prog_id))
			return 0;
	}
	return -ENOENT;
}

int xr_maps_open_prog(uint32_t prog_id, struct xr_maps *m)
{
	uint32_t ids[64], i;
	struct bpf_prog_info info;
	int fd, rc;

	maps_reset(m);
	fd = bpf_prog_get_fd_by_id(prog_id);
	if (fd < 0)
		return -errno;
	rc = prog_info(fd, &info, ids, 64);
	close(fd);
	if (rc)
		return rc;
	m->prog_id = prog_id;
	for (i = 0; i < info.nr_map_ids && i < 64; i++) {
		struct bpf_map_info mi;
		uint32_t len = sizeof(mi);
		int *slot = NULL;
		int mfd = bpf_map_get_fd_by_id(ids[i]);

		if (mfd < 0)
			continue;
		memset(&mi, 0, sizeof(mi));
		if (bpf_obj_get_info_by_fd(mfd, &mi, &len)) {
			close(mfd);
			continue;
		}
		rc = check_layout(&mi, m->mismatch, sizeof(m->mismatch));
		if (rc) {
			close(mfd);
			xr_maps_close(m);
			return rc;
		}
		if (!strcmp(mi.name, XR_MAP_CFG))
			slot = &m->cfg;
		else if (!strcmp(mi.name, XR_MAP_DOMAINS)) {
			slot = &m->domains;
			m->max_domains = mi.max_entries;
		} else if (!strcmp(mi.name, XR_MAP_MEM))
			slot = &m->mem;
		else if (!strcmp(mi.name, XR_MAP_EVQ))
			slot = &m->evq;
		else if (!strcmp(mi.name, XR_MAP_MRS)) {
			slot = &m->mrs;
			m->max_mrs = mi.max_entries;
		} else if (!strcmp(mi.name, XR_MAP_CONNS)) {
			slot = &m->conns;
			m->max_conns = mi.max_entries;
		} else if (!strcmp(mi.name, XR_MAP_RX))
			slot = &m->rx;
		else if (!strcmp(mi.name, XR_MAP_MSGS))
			slot = &m->msgs;
		else if (!strcmp(mi.name, XR_MAP_STATS))
			slot = &m->stats;
		else if (!strcmp(mi.name, XR_MAP_RQ))
			slot = &m->rq;
		else if (!strcmp(mi.name, XR_MAP_READS))
			slot = &m->reads;
		else if (!strcmp(mi.name, XR_MAP_TXQ))
			slot = &m->txq;
		else if (!strcmp(mi.name, XR_MAP_TRACE))
			slot = &m->trace;
		else if (!strcmp(mi.name, XR_MAP_IFS))
			slot = &m->ifs;
		else if (!strcmp(mi.name, XR_MAP_EVB))
			slot = &m->evb;
		if (slot && *slot < 0)
			*slot = mfd;
		else
			close(mfd);
	}
	if (m->cfg < 0 || m->domains < 0 || m->mem < 0 || m->evq < 0 ||
	    m->mrs < 0 || m->conns < 0 || m->rx < 0 || m->msgs < 0 ||
	    m->stats < 0 || m->rq < 0 || m->reads < 0) {
		xr_maps_close(m);
		return -ENOENT;
	}
	return 0;
}

int xr_maps_open(int ifindex, struct xr_maps *m)
{
	uint32_t id = 0;
	int mode = 0, rc;

	maps_reset(m);
	rc = xr_maps_find_prog(ifindex, &id, &mode);
	if (rc)
		return rc;
	rc = xr_maps_open_prog(id, m);
	if (!rc)
		m->attach_mode = mode;
	return rc;
}

void xr_maps_close(struct xr_maps *m)
{
	int *fds[] = { &m->cfg, &m->domains, &m->mem, &m->evq, &m->mrs,
		       &m->conns, &m->rx, &m->msgs, &m->stats, &m->rq, &m->reads,
		       &m->txq, &m->trace, &m->ifs, &m->evb };
	unsigned int i;

	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}
