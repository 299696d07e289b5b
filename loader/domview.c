// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>

#include "bpfmaps.h"
#include "domview.h"
#include "xdpif.h"
#include "contract/abi.h"

/* Ids of the xroce programs of this namespace's interfaces (ifname: of
 * that one only), each once, at most 32.  0, -ENOENT for none, or a
 * negative errno. */
static int find_progs(const char *ifname, uint32_t *progs, int *nprogs)
{
	struct xr_ifxdp *ifs = NULL;
	size_t nifs = 0, i;
	int rc, j;

	*nprogs = 0;
	rc = xr_ifxdp_list(&ifs, &nifs);
	if (rc)
		return rc;
	for (i = 0; i < nifs; i++) {
		bool seen = false;

		if (!ifs[i].xroce_id || (ifname && strcmp(ifname, ifs[i].name) != 0))
			continue;
		for (j = 0; j < *nprogs; j++)
			seen |= progs[j] == ifs[i].xroce_id;
		if (!seen && *nprogs < 32)
			progs[(*nprogs)++] = ifs[i].xroce_id;
	}
	free(ifs);
	return *nprogs ? 0 : -ENOENT;
}

/* Map the telemetry pages of domain `key` of m read-only into *dv; false
 * if the domain is gone or publishes no telemetry we understand. */
static bool map_domain(const struct xr_maps *m, uint32_t key,
		       struct xr_domview *dv)
{
	const struct xr_telem_hdr *h;
	struct xr_domain d;
	uint32_t inner_id;
	void *p;
	int fd;

	if (bpf_map_lookup_elem(m->domains, &key, &d) ||
	    bpf_map_lookup_elem(m->mem, &key, &inner_id))
		return false;
	fd = bpf_map_get_fd_by_id(inner_id);
	if (fd < 0)
		return false;
	p = mmap(NULL, XR_TELEM_BYTES, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return false;
	h = p;
	if (h->magic != XR_TELEM_MAGIC || h->version != XR_TELEM_VERSION ||
	    h->slot_size != sizeof(struct xr_telem) || h->nslots > XR_TELEM_SLOTS) {
		munmap(p, XR_TELEM_BYTES);
		return false;
	}
	dv->domain = key;
	dv->pid = h->pid;
	dv->mem = p;
	return true;
}

int xr_domviews_open(const char *ifname, struct xr_domview *dv, int max, int *ndv)
{
	uint32_t progs[32];
	int nprogs, rc, j;

	*ndv = 0;
	rc = find_progs(ifname, progs, &nprogs);
	if (rc)
		return rc;
	for (j = 0; j < nprogs; j++) {
		struct xr_maps m;
		uint32_t key, next, *prev = NULL;

		if (xr_maps_open_prog(progs[j], &m))
			continue;
		while (!bpf_map_get_next_key(m.domains, prev, &next) && *ndv < max) {
			key = next;
			prev = &key;
			if (map_domain(&m, key, &dv[*ndv]))
				(*ndv)++;
		}
		xr_maps_close(&m);
	}
	return 0;
}

void xr_domviews_close(struct xr_domview *dv, int ndv)
{
	int i;

	for (i = 0; i < ndv; i++)
		munmap((void *)dv[i].mem, XR_TELEM_BYTES);
}
