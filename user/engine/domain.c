// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The device's domain in the XDP program's maps: a memory map (mmapable
 * array of 4 KiB pages: registered memory for XDP to place into, transmit
 * frames, and the AF_XDP UMEM all at once) and an event ring buffer, both
 * reached by XDP through the hash-of-maps xr_mem / xr_evq under the domain
 * id; the owner's proof of life (its control socket's mark); each
 * connection's share of the ring and the count of its records consumed
 * (xr_evb, mapped).  Also the clean-up of domains whose owner is gone.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "domain.h"
#include "sockdiag.h"

static int create_mem_map(size_t len)
{
	LIBBPF_OPTS(bpf_map_create_opts, o,
		    .map_flags = BPF_F_MMAPABLE | BPF_F_INNER_MAP);

	return bpf_map_create(BPF_MAP_TYPE_ARRAY, "xr_dmem", sizeof(__u32),
			      XR_PAGE_SIZE, (__u32)(len / XR_PAGE_SIZE), &o);
}

/* Records one connection may have waiting in the ring: the room outside
 * the reserve, shared among nconns connections. */
static uint32_t evq_share(uint32_t nconns)
{
	uint32_t room = (uint32_t)((XR_EVQ_BYTES - XR_EVQ_RESERVE) / XR_EVQ_REC_BYTES);
	uint32_t s = room / (nconns ? nconns : 1);

	return s > XR_EVQ_MIN_SHARE ? s : XR_EVQ_MIN_SHARE;
}

/* The program's fair-share counters, if it has them (else XDP keeps no
 * shares and none is counted). */
static void map_evb(struct xroce_device *dev)
{
	size_t len = (size_t)dev->maps.max_conns * sizeof(struct xr_evb);
	void *p;

	if (dev->maps.evb < 0 || !len)
		return;
	len = (len + XR_PAGE_SIZE - 1) & ~(size_t)(XR_PAGE_SIZE - 1);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, dev->maps.evb, 0);
	if (p == MAP_FAILED) {
		xr_log(&dev->log, XROCE_LOG_WARN, "cannot map xr_evb: %s; event "
		       "ring shares are not counted", strerror(errno));
		return;
	}
	dev->evb = p;
	dev->evb_len = len;
	dev->evb_n = dev->maps.max_conns;
}

int xr_domain_create(struct xroce_device *dev, size_t mem_len)
{
	struct xr_domain dv = { .mem_bytes = mem_len, .owner_pid = (__u32)getpid(),
				.ctrl_port = dev->ctrl_port,
				.owner_mark = dev->ctrl_mark,
				.evq_share = evq_share(0) };
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
	map_evb(dev);
	return 0;
}

void xr_domain_set_share(struct xroce_device *dev, uint32_t nconns)
{
	struct xr_domain d;

	if (!dev->domain_id || dev->maps.domains < 0 ||
	    bpf_map_lookup_elem(dev->maps.domains, &dev->domain_id, &d))
		return;
	d.evq_share = evq_share(nconns);
	bpf_map_update_elem(dev->maps.domains, &dev->domain_id, &d, BPF_EXIST);
}

/* The same through the map, for a process that could not map it: a
 * record of an earlier owner's count or quiet flag (evq_wake.c) must not
 * outlive it. */
static void reset_unmapped(struct xroce_device *dev, uint32_t conn_id)
{
	struct xr_evb b;

	if (dev->maps.evb < 0 || bpf_map_lookup_elem(dev->maps.evb, &conn_id, &b))
		return;
	b.consumed = b.produced;
	b.quiet = 0;
	b.rq_on = 0;
	bpf_map_update_elem(dev->maps.evb, &conn_id, &b, BPF_ANY);
}

void xr_domain_conn_reset(struct xroce_device *dev, uint32_t conn_id)
{
	struct xr_evb *b;

	if (!dev->evb) {
		reset_unmapped(dev, conn_id);
		return;
	}
	if (conn_id >= dev->evb_n)
		return;
	b = &dev->evb[conn_id];
	/* Records of a predecessor with this id may still wait in the ring:
	 * XDP compares signed, so consuming them later blocks nothing. */
	__atomic_store_n(&b->consumed, __atomic_load_n(&b->produced, __ATOMIC_RELAXED),
			 __ATOMIC_RELAXED);
	/* A predecessor's retired receives (rqretire.c) are not ours: its
	 * guard would refuse this connection's first receives. */
	__atomic_store_n(&b->rq_on, 0, __ATOMIC_RELEASE);
}

/* Keys of a map whose entries a predicate picks, collected before any is
 * deleted (deleting while walking a hash map can restart the walk). */
struct xr_keyset {
	uint8_t *keys;
	size_t n, cap, ksz;
};

typedef bool (*xr_pick_fn)(const void *key, const void *val, const void *arg);

static void keyset_collect(struct xr_keyset *ks, int fd, size_t ksz, size_t vsz,
			   xr_pick_fn pick, const void *arg)
{
	uint8_t key[32] = { 0 }, next[32], val[256];
	const void *prev = NULL;

	ks->n = 0;
	ks->ksz = ksz;
	if (ksz > sizeof(key) || vsz > sizeof(val))
		return;
	while (!bpf_map_get_next_key(fd, prev, next)) {
		prev = key;
		memcpy(key, next, ksz);
		if (bpf_map_lookup_elem(fd, key, val) || !pick(key, val, arg))
			continue;
		if (ks->n == ks->cap) {
			size_t ncap = ks->cap ? ks->cap * 2 : 64;
			uint8_t *k = realloc(ks->keys, ncap * ksz);

			if (!k)
				return; /* what was collected is still deleted */
			ks->keys = k;
			ks->cap = ncap;
		}
		memcpy(ks->keys + ks->n++ * ksz, key, ksz);
	}
}

static void keyset_delete(const struct xr_keyset *ks, int fd)
{
	size_t i;

	for (i = 0; i < ks->n; i++)
		bpf_map_delete_elem(fd, ks->keys + i * ks->ksz);
}

static bool conn_of_domain(const void *key, const void *val, const void *arg)
{
	(void)key;
	return ((const struct xr_conn *)val)->domain == *(const uint32_t *)arg;
}

static bool mr_of_domain(const void *key, const void *val, const void *arg)
{
	(void)key;
	return ((const struct xr_mr *)val)->domain == *(const uint32_t *)arg;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Entries keyed by connection id first (xr_rq_key, xr_read_key): one of
 * the connections in arg (sorted ids). */
static bool of_dead_conn(const void *key, const void *val, const void *arg)
{
	const struct xr_keyset *conns = arg;

	(void)val;
	return bsearch(key, conns->keys, conns->n, sizeof(uint32_t), cmp_u32) != NULL;
}

/* Delete every map entry that belongs to domain: its connections, the
 * posted receives and READ windows of those connections, its MRs, its
 * transmit rings, the domain itself.  The receives and READ windows matter: a connection id is
 * reused by the next connection set up, and a receive left behind would
 * let that connection's first SENDs land at the dead process's buffer
 * offsets, inside the new owner's memory. */
static void purge_domain(const struct xr_maps *m, uint32_t domain)
{
	struct xr_keyset conns = { 0 }, ks = { 0 };

	keyset_collect(&conns, m->conns, sizeof(uint32_t), sizeof(struct xr_conn),
		       conn_of_domain, &domain);
	if (conns.n) {
		qsort(conns.keys, conns.n, sizeof(uint32_t), cmp_u32);
		keyset_collect(&ks, m->rq, sizeof(struct xr_rq_key),
			       sizeof(struct xr_rq_ent), of_dead_conn, &conns);
		keyset_delete(&ks, m->rq);
		keyset_collect(&ks, m->reads, sizeof(struct xr_read_key),
			       sizeof(struct xr_read_ent), of_dead_conn, &conns);
		keyset_delete(&ks, m->reads);
		keyset_delete(&conns, m->conns);
	}
	keyset_collect(&ks, m->mrs, sizeof(uint32_t), sizeof(struct xr_mr),
		       mr_of_domain, &domain);
	keyset_delete(&ks, m->mrs);
	free(ks.keys);
	free(conns.keys);
	if (m->txq >= 0) {
		struct xr_txq_key k = { .domain = domain };

		for (k.plane = 0; k.plane < XR_MAX_PLANES; k.plane++)
			bpf_map_delete_elem(m->txq, &k);
	}
	bpf_map_delete_elem(m->evq, &domain);
	bpf_map_delete_elem(m->mem, &domain);
	bpf_map_delete_elem(m->domains, &domain);
}

void xr_domain_destroy(struct xroce_device *dev)
{
	if (dev->domain_id && dev->maps.domains >= 0)
		purge_domain(&dev->maps, dev->domain_id);
	dev->domain_id = 0;
	if (dev->evb)
		munmap(dev->evb, dev->evb_len);
	dev->evb = NULL;
	if (dev->mem)
		munmap(dev->mem, dev->mem_len);
	dev->mem = NULL;
	if (dev->mem_fd >= 0)
		close(dev->mem_fd);
	if (dev->evq_fd >= 0)
		close(dev->evq_fd);
	dev->mem_fd = dev->evq_fd = -1;
}

/* Is domain d's owner gone?  Its control socket (bound to ctrl_port and
 * carrying owner_mark) is what XDP asks for (bpf/lib/alive.h); asked the
 * same way here, through sock_diag, so a process that took the dead
 * owner's port does not keep the domain, and process ids (which mean
 * nothing across PID namespaces) play no part.  A domain without a
 * control port (test harnesses) is never judged; nor is one when the
 * kernel cannot be asked. */
static bool owner_gone(const struct xr_domain *d)
{
	return d->ctrl_port && xr_sockdiag_udp_bound(d->ctrl_port, d->owner_mark) == 0;
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
		if (owner_gone(&d))
			dead[n++] = key;
	}
	for (i = 0; i < n; i++) {
		xr_log(lg, XROCE_LOG_WARN,
		       "removing domain %#x left behind by a dead process", dead[i]);
		purge_domain(m, dead[i]);
	}
	return n;
}
