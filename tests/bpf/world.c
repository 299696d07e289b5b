// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The world the runners of tests/bpf run the XDP program in (world.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "contract/abi.h"
#include "contract/txring.h"
#include "xroce.skel.h"
#include "world.h"

/* ---- the program ------------------------------------------------------- */

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int map_fd(struct bpf_object *obj, const char *name)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, name);

	return m ? bpf_map__fd(m) : -ENOENT;
}

static int load_builtin(struct xw *w, int log)
{
	size_t logsz = 16u << 20;
	char *buf = NULL, *p;
	int err;

	w->skel = xroce__open();
	if (!w->skel)
		return -errno;
	if (log) {
		buf = calloc(1, logsz);
		if (!buf)
			return -ENOMEM;
		bpf_program__set_log_buf(w->skel->progs.xroce_xdp, buf, logsz);
		bpf_program__set_log_level(w->skel->progs.xroce_xdp, 1);
	}
	err = xroce__load(w->skel);
	if (err) {
		if (buf)
			fprintf(stderr, "load failed: %d\n%.4000s\n", err, buf);
		free(buf);
		xroce__destroy(w->skel);
		w->skel = NULL;
		return err;
	}
	if (buf) {
		p = strstr(buf, "processed ");
		if (p)
			w->verified = strtoul(p + 10, NULL, 10);
		free(buf);
	}
	w->obj = w->skel->obj;
	w->prog_fd = bpf_program__fd(w->skel->progs.xroce_xdp);
	return 0;
}

static int load_file(struct xw *w, const char *path)
{
	struct bpf_program *pg;
	int err;

	w->obj = bpf_object__open_file(path, NULL);
	if (!w->obj) {
		err = -errno;
		fprintf(stderr, "cannot open %s: %s\n", path, strerror(-err));
		return err;
	}
	err = bpf_object__load(w->obj);
	if (err) {
		bpf_object__close(w->obj);
		w->obj = NULL;
		return err;
	}
	pg = bpf_object__find_program_by_name(w->obj, "xroce_xdp");
	if (!pg)
		return -ENOENT;
	w->prog_fd = bpf_program__fd(pg);
	return 0;
}

int xw_load(struct xw *w, const char *obj_path, int log)
{
	double t0 = now_s();
	int err;

	memset(w, 0, sizeof(*w));
	err = obj_path ? load_file(w, obj_path) : load_builtin(w, log);
	w->load_s = now_s() - t0;
	if (err)
		return err;
	w->cfg = map_fd(w->obj, XR_MAP_CFG);
	w->domains = map_fd(w->obj, XR_MAP_DOMAINS);
	w->mem = map_fd(w->obj, XR_MAP_MEM);
	w->evq = map_fd(w->obj, XR_MAP_EVQ);
	w->mrs = map_fd(w->obj, XR_MAP_MRS);
	w->conns = map_fd(w->obj, XR_MAP_CONNS);
	w->rx = map_fd(w->obj, XR_MAP_RX);
	w->msgs = map_fd(w->obj, XR_MAP_MSGS);
	w->stats = map_fd(w->obj, XR_MAP_STATS);
	w->rq = map_fd(w->obj, XR_MAP_RQ);
	w->reads = map_fd(w->obj, XR_MAP_READS);
	w->txq = map_fd(w->obj, XR_MAP_TXQ);
	w->ifs = map_fd(w->obj, XR_MAP_IFS);
	w->evb = map_fd(w->obj, XR_MAP_EVB);
	if (w->cfg < 0 || w->domains < 0 || w->mem < 0 || w->evq < 0 ||
	    w->mrs < 0 || w->conns < 0 || w->rx < 0 || w->msgs < 0 ||
	    w->stats < 0 || w->rq < 0 || w->reads < 0 || w->txq < 0)
		return -ENOENT;
	w->ncpu = libbpf_num_possible_cpus();
	return w->ncpu > 0 ? 0 : -EINVAL;
}

void xw_unload(struct xw *w)
{
	if (w->skel)
		xroce__destroy(w->skel);
	else if (w->obj)
		bpf_object__close(w->obj);
	w->skel = NULL;
	w->obj = NULL;
}

int xw_set_cfg(const struct xw *w, uint16_t flags, uint32_t capacity)
{
	struct xr_cfg cfg = { .udp_port = XR_DEFAULT_UDP_PORT, .flags = flags,
			      .rate_capacity_mbps = capacity };
	uint32_t zero = 0;

	return bpf_map_update_elem(w->cfg, &zero, &cfg, BPF_ANY) ? -errno : 0;
}

/* One batch lookup of the per-CPU array: the fuzzer reads the counters
 * after every input. */
int xw_stats(const struct xw *w, uint64_t out[XR_STAT_MAX])
{
	static uint64_t vals[XR_STAT_MAX * 256];
	uint32_t keys[XR_STAT_MAX], count = XR_STAT_MAX, k, out_batch;
	int c;

	memset(out, 0, sizeof(*out) * XR_STAT_MAX);
	if ((size_t)w->ncpu * XR_STAT_MAX > sizeof(vals) / sizeof(vals[0]))
		return -E2BIG;
	if (bpf_map_lookup_batch(w->stats, NULL, &out_batch, keys, vals,
				 &count, NULL) && errno != ENOENT)
		return -errno;
	if (count != XR_STAT_MAX)
		return -EIO;
	for (k = 0; k < XR_STAT_MAX; k++) {
		if (keys[k] >= XR_STAT_MAX)
			return -EIO;
		for (c = 0; c < w->ncpu; c++)
			out[keys[k]] += vals[k * (uint32_t)w->ncpu + (uint32_t)c];
	}
	return 0;
}

/* ---- domains ------------------------------------------------------------ */

int xw_dom_mem(const struct xw *w, struct xw_dom *d, uint32_t id,
	       uint32_t pages, xw_pattern_fn pattern)
{
	LIBBPF_OPTS(bpf_map_create_opts, mo,
		    .map_flags = BPF_F_MMAPABLE | BPF_F_INNER_MAP);
	size_t i;

	d->id = id;
	d->mem_len = (size_t)pages * XR_PAGE_SIZE;
	d->mem_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xw_mem", 4,
				   XR_PAGE_SIZE, pages, &mo);
	if (d->mem_fd < 0)
		return -errno;
	d->mem = mmap(NULL, d->mem_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		      d->mem_fd, 0);
	if (d->mem == MAP_FAILED) {
		d->mem = NULL;
		return -errno;
	}
	d->shadow = malloc(d->mem_len);
	if (!d->shadow)
		return -ENOMEM;
	for (i = 0; i < d->mem_len; i++)
		d->mem[i] = pattern(i, id);
	memcpy(d->shadow, d->mem, d->mem_len);
	return bpf_map_update_elem(w->mem, &id, &d->mem_fd, BPF_ANY) ? -errno : 0;
}

int xw_dom_evq(const struct xw *w, struct xw_dom *d, uint32_t id,
	       ring_buffer_sample_fn on_event, void *ctx)
{
	d->id = id;
	d->evq_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "xw_evq", 0, 0,
				   XR_EVQ_BYTES, NULL);
	if (d->evq_fd < 0)
		return -errno;
	d->rb = ring_buffer__new(d->evq_fd, on_event, ctx, NULL);
	if (!d->rb)
		return -errno;
	return bpf_map_update_elem(w->evq, &id, &d->evq_fd, BPF_ANY) ? -errno : 0;
}

int xw_dom_register(const struct xw *w, uint32_t id,
		    const struct xr_domain *rec)
{
	return bpf_map_update_elem(w->domains, &id, rec, BPF_ANY) ? -errno : 0;
}

void xw_dom_free(const struct xw *w, struct xw_dom *d, int unlink)
{
	if (unlink) {
		bpf_map_delete_elem(w->mem, &d->id);
		bpf_map_delete_elem(w->evq, &d->id);
		bpf_map_delete_elem(w->domains, &d->id);
	}
	if (d->rb)
		ring_buffer__free(d->rb);
	if (d->mem)
		munmap(d->mem, d->mem_len);
	free(d->shadow);
	if (d->mem_fd >= 0)
		close(d->mem_fd);
	if (d->evq_fd >= 0)
		close(d->evq_fd);
	d->rb = NULL;
	d->mem = d->shadow = NULL;
	d->mem_fd = d->evq_fd = -1;
}

/* ---- regions, connections, receive state -------------------------------- */

int xw_mr_add(const struct xw *w, uint32_t key, const struct xr_mr *mr)
{
	return bpf_map_update_elem(w->mrs, &key, mr, BPF_ANY) ? -errno : 0;
}

int xw_conn_add(const struct xw *w, uint32_t id, const struct xr_conn *c)
{
	return bpf_map_update_elem(w->conns, &id, c, BPF_ANY) ? -errno : 0;
}

int xw_rx_reset(const struct xw *w, uint32_t id, uint32_t psn, uint32_t csn)
{
	struct xr_rx_state rx;
	uint64_t zero = 0;
	uint32_t i, k;

	memset(&rx, 0, sizeof(rx));
	rx.csn_next = csn;
	for (i = 0; i < XR_MAX_PATHS; i++)
		rx.path[i].cack = psn;
	if (bpf_map_update_elem(w->rx, &id, &rx, BPF_ANY))
		return -errno;
	for (i = 0; i < XR_MSG_SLOTS; i++) {
		k = id * XR_MSG_SLOTS + i;
		if (bpf_map_update_elem(w->msgs, &k, &zero, BPF_ANY))
			return -errno;
	}
	return 0;
}

size_t xw_mem_diff(const uint8_t *a, const uint8_t *b, size_t len,
		   size_t *first)
{
	size_t i, n = 0;

	*first = 0;
	if (!memcmp(a, b, len))
		return 0;
	for (i = 0; i < len; i++) {
		if (a[i] == b[i])
			continue;
		if (!n)
			*first = i;
		n++;
	}
	return n;
}

/* ---- network namespace and sockets -------------------------------------- */

/* Bring the loopback up, without running ip(8). */
static int lo_up(void)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM, 0), rc = 0;

	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(fd, SIOCSIFFLAGS, &ifr))
			rc = -errno;
	} else {
		rc = -errno;
	}
	close(fd);
	return rc;
}

int xw_netns_enter(int *old_ns)
{
	*old_ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (*old_ns < 0)
		return -errno;
	if (unshare(CLONE_NEWNET)) {
		int err = -errno;

		close(*old_ns);
		*old_ns = -1;
		return err;
	}
	return lo_up();
}

void xw_netns_leave(int *old_ns)
{
	if (*old_ns < 0)
		return;
	if (setns(*old_ns, CLONE_NEWNET))
		fprintf(stderr, "cannot return to the original netns: %s\n",
			strerror(errno));
	close(*old_ns);
	*old_ns = -1;
}

int xw_ctrl_socket(const uint8_t addr[16], uint16_t port)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6,
				  .sin6_port = htons(port) };
	int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0), off = 0;

	if (fd < 0)
		return -1;
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
	memcpy(&a.sin6_addr, addr, 16);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return -1;
	}
	return fd;
}

uint16_t xw_sock_port(int fd)
{
	struct sockaddr_in6 a = { .sin6_port = 0 };
	socklen_t l = sizeof(a);

	if (getsockname(fd, (struct sockaddr *)&a, &l))
		return 0;
	/* sin_port and sin6_port sit at the same offset */
	return ntohs(a.sin6_port);
}

uint16_t xw_free_port(void)
{
	static const uint8_t any[16];
	int fd = xw_ctrl_socket(any, 0);
	uint16_t port;

	if (fd < 0)
		return 0;
	port = xw_sock_port(fd);
	close(fd);
	return port;
}
