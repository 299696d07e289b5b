// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The device's domain in the XDP program's maps: a memory map (mmapable
 * array of 4 KiB pages: registered memory for XDP to place into, transmit
 * frames, and the AF_XDP UMEM all at once) and an event ring buffer, both
 * reached by XDP through the hash-of-maps xr_mem / xr_evq under the domain
 * id.  Also the clean-up of domains whose process died without closing.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "internal.h"

static int create_mem_map(size_t len)
{
	LIBBPF_OPTS(bpf_map_create_opts, o,
		    .map_flags = BPF_F_MMAPABLE | BPF_F_INNER_MAP);

	return bpf_map_create(BPF_MAP_TYPE_ARRAY, "xr_dmem", sizeof(__u32),
			      XR_PAGE_SIZE, (__u32)(len / XR_PAGE_SIZE), &o);
}

int xr_domain_create(struct xroce_device *dev, size_t mem_len)
{
	struct xr_domain dv = { .mem_bytes = mem_len, .owner_pid = (__u32)getpid(),
				.ctrl_port = dev->ctrl_port };
	int rc, tries;

	memcpy(dv.ctrl_addr, dev->ctrl_addr, 16);
	dev->mem_fd = create_mem_map(mem_len);
	if (dev->mem_fd < 0)
		return xr_fail(&dev->log, -errno,
			       "cannot create a %zu-byte memory map: %s", mem_len,
			       strerror(errno));
	dev->mem = mmap(NULL, mem_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			dev->mem_fd, 0);
	if (dev->mem == MAP_FAILED) {
		dev->mem = NULL;
		return xr_fail(&dev->log, -errno, "cannot mmap the memory map: %s",
			       strerror(errno));
	}
	dev->mem_len = mem_len;
	dev->evq_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "xr_devq", 0, 0,
				     XR_EVQ_BYTES, NULL);
	if (dev->evq_fd < 0)
		return xr_fail(&dev->log, -errno, "cannot create the event ring: %s",
			       strerror(errno));

	/* Claim a random unused domain id. */
	for (tries = 0; tries < 64; tries++) {
		dev->domain_id = (uint32_t)xr_random64() | 1;
		if (!bpf_map_update_elem(dev->maps.domains, &dev->domain_id, &dv,
					 BPF_NOEXIST))
			break;
		if (errno != EEXIST)
			return xr_fail(&dev->log, -errno,
				       "cannot register the domain: %s (too many "
				       "processes on this xroce program?)",
				       strerror(errno));
	}
	if (tries == 64)
		return xr_fail(&dev->log, -EBUSY, "no free domain id");
	if (bpf_map_update_elem(dev->maps.mem, &dev->domain_id, &dev->mem_fd,
				BPF_NOEXIST)) {
		rc = -errno;
		bpf_map_delete_elem(dev->maps.domains, &dev->domain_id);
		return xr_fail(&dev->log, rc, "cannot install the memory map: %s",
			       strerror(-rc));
	}
	if (bpf_map_update_elem(dev->maps.evq, &dev->domain_id, &dev->evq_fd,
				BPF_NOEXIST)) {
		rc = -errno;
		bpf_map_delete_elem(dev->maps.mem, &dev->domain_id);
		bpf_map_delete_elem(dev->maps.domains, &dev->domain_id);
		return xr_fail(&dev->log, rc, "cannot install the event ring: %s",
			       strerror(-rc));
	}
	return 0;
}

/* Delete every map entry that belongs to domain (connections, MRs, the
 * domain itself). */
static void purge_domain(const struct xr_maps *m, uint32_t domain)
{
	uint32_t key, next, *prev = NULL;

	/* Collect first, delete after: deleting while iterating a hash map
	 * can restart the walk. */
	uint32_t *dead = NULL;
	size_t ndead = 0, cap = 0;

	while (!bpf_map_get_next_key(m->conns, prev, &next)) {
		struct xr_conn c;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(m->conns, &key, &c) || c.domain != domain)
			continue;
		if (ndead == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			uint32_t *d = realloc(dead, ncap * sizeof(*d));

			if (!d)
				break;
			dead = d;
			cap = ncap;
		}
		dead[ndead++] = key;
	}
	while (ndead)
		bpf_map_delete_elem(m->conns, &dead[--ndead]);
	prev = NULL;
	while (!bpf_map_get_next_key(m->mrs, prev, &next)) {
		struct xr_mr mr;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(m->mrs, &key, &mr) || mr.domain != domain)
			continue;
		if (ndead == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			uint32_t *d = realloc(dead, ncap * sizeof(*d));

			if (!d)
				break;
			dead = d;
			cap = ncap;
		}
		dead[ndead++] = key;
	}
	while (ndead)
		bpf_map_delete_elem(m->mrs, &dead[--ndead]);
	free(dead);
	bpf_map_delete_elem(m->evq, &domain);
	bpf_map_delete_elem(m->mem, &domain);
	bpf_map_delete_elem(m->domains, &domain);
}

void xr_domain_destroy(struct xroce_device *dev)
{
	if (dev->domain_id && dev->maps.domains >= 0)
		purge_domain(&dev->maps, dev->domain_id);
	dev->domain_id = 0;
	if (dev->mem)
		munmap(dev->mem, dev->mem_len);
	dev->mem = NULL;
	if (dev->mem_fd >= 0)
		close(dev->mem_fd);
	if (dev->evq_fd >= 0)
		close(dev->evq_fd);
	dev->mem_fd = dev->evq_fd = -1;
}

/* A process that dies without closing its device leaves its domain in the
 * maps; its memory map stays alive through xr_mem and XDP would keep
 * acknowledging data for it.  Remove domains whose owner is gone. */
int xr_domain_gc(const struct xr_logger *lg, const struct xr_maps *m)
{
	uint32_t key, next, *prev = NULL, dead[64];
	int n = 0, i;

	while (!bpf_map_get_next_key(m->domains, prev, &next) && n < 64) {
		struct xr_domain d;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(m->domains, &key, &d))
			continue;
		if (d.owner_pid && kill((pid_t)d.owner_pid, 0) && errno == ESRCH)
			dead[n++] = key;
	}
	for (i = 0; i < n; i++) {
		xr_log(lg, XROCE_LOG_INFO,
		       "removing domain %#x left behind by a dead process", dead[i]);
		purge_domain(m, dead[i]);
	}
	return n;
}
