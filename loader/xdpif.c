// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpfmaps.h"
#include "xdpif.h"

int xr_ifxdp_query(int ifindex, struct xr_ifxdp *st)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int rc;

	memset(st, 0, sizeof(*st));
	st->ifindex = ifindex;
	if (!if_indextoname((unsigned int)ifindex, st->name))
		return -ENODEV;
	rc = bpf_xdp_query(ifindex, 0, &q);
	if (rc)
		return rc;
	/* Native and generic exclude each other; offload may sit beside
	 * native, in which case the native program is the one that runs on
	 * the host. */
	if (q.drv_prog_id) {
		st->prog_id = q.drv_prog_id;
		st->mode = XDP_FLAGS_DRV_MODE;
	} else if (q.skb_prog_id) {
		st->prog_id = q.skb_prog_id;
		st->mode = XDP_FLAGS_SKB_MODE;
	} else if (q.hw_prog_id) {
		st->prog_id = q.hw_prog_id;
		st->mode = XDP_FLAGS_HW_MODE;
	}
	if (!st->prog_id)
		return 0;
	rc = xr_maps_find_prog(ifindex, &st->xroce_id, NULL);
	if (rc == -ENOENT) {
		st->xroce_id = 0;
		return 0;
	}
	return rc;
}

static int by_ifindex(const void *a, const void *b)
{
	const struct xr_ifxdp *x = a, *y = b;

	return (x->ifindex > y->ifindex) - (x->ifindex < y->ifindex);
}

int xr_ifxdp_list(struct xr_ifxdp **out, size_t *n)
{
	struct if_nameindex *ifs, *i;
	struct xr_ifxdp *v = NULL;
	size_t cnt = 0, k = 0;
	int rc = 0;

	*out = NULL;
	*n = 0;
	ifs = if_nameindex();
	if (!ifs)
		return -errno;
	for (i = ifs; i->if_index; i++)
		cnt++;
	v = calloc(cnt ? cnt : 1, sizeof(*v));
	if (!v) {
		rc = -ENOMEM;
		goto cleanup;
	}
	for (i = ifs; i->if_index; i++) {
		rc = xr_ifxdp_query((int)i->if_index, &v[k]);
		if (rc == -ENODEV) /* removed while we list */
			continue;
		if (rc)
			goto cleanup;
		k++;
	}
	rc = 0;
	qsort(v, k, sizeof(*v), by_ifindex);
	*out = v;
	*n = k;
	v = NULL;
cleanup:
	free(v);
	if_freenameindex(ifs);
	return rc;
}

const char *xr_xdp_mode_name(uint32_t mode)
{
	switch (mode) {
	case XDP_FLAGS_DRV_MODE:
		return "native";
	case XDP_FLAGS_SKB_MODE:
		return "generic";
	case XDP_FLAGS_HW_MODE:
		return "offload";
	default:
		return "none";
	}
}

int xr_prog_describe(uint32_t id, char *name, size_t len, uint32_t *type)
{
	struct bpf_prog_info info;
	uint32_t ilen = sizeof(info);
	int fd, rc = 0;

	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return -errno;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &ilen)) {
		rc = -errno;
		goto cleanup;
	}
	if (name && len)
		snprintf(name, len, "%s", info.name[0] ? info.name : "(unnamed)");
	if (type)
		*type = info.type;
cleanup:
	close(fd);
	return rc;
}

int xr_xdp_detach(int ifindex, uint32_t prog_id, uint32_t mode)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, opts);
	int fd, rc;

	fd = bpf_prog_get_fd_by_id(prog_id);
	if (fd < 0)
		return -errno;
	opts.old_prog_fd = fd; /* libbpf adds XDP_FLAGS_REPLACE */
	rc = bpf_xdp_detach(ifindex, mode, &opts);
	close(fd);
	return rc;
}

int xr_xdp_attach(int ifindex, int prog_fd, uint32_t mode,
		  struct xr_ifxdp *cur)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, opts);
	uint32_t flags = mode;
	int old_fd = -1, rc;

	if (cur->prog_id && cur->mode != mode) {
		rc = xr_xdp_detach(ifindex, cur->prog_id, cur->mode);
		if (rc)
			return rc;
		cur->prog_id = cur->xroce_id = 0;
		cur->mode = 0;
	}
	if (cur->prog_id) {
		old_fd = bpf_prog_get_fd_by_id(cur->prog_id);
		if (old_fd < 0)
			return -errno;
		opts.old_prog_fd = old_fd; /* libbpf adds XDP_FLAGS_REPLACE */
	} else {
		flags |= XDP_FLAGS_UPDATE_IF_NOEXIST;
	}
	rc = bpf_xdp_attach(ifindex, prog_fd, flags, &opts);
	if (old_fd >= 0)
		close(old_fd);
	return rc;
}
