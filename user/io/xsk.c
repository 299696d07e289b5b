// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * AF_XDP transmit socket over a caller-provided UMEM, on raw syscalls.
 * See xsk.h for the model.  Ring protocol (kernel uapi): each ring has a
 * producer and a consumer index shared with the kernel; we write entries
 * then publish the producer with release semantics, and read the other
 * side's index with acquire semantics.
 */
#include "xsk.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_xdp.h>

#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef SOL_XDP
#define SOL_XDP 283
#endif
/* Multi-buffer (kernel 6.6); Debian 6.1 uapi headers lack them. */
#ifndef XDP_USE_SG
#define XDP_USE_SG (1 << 4)
#endif
#ifndef XDP_PKT_CONTD
#define XDP_PKT_CONTD (1 << 0)
#endif
/* Copy-mode descriptors per sendto (kernel 6.17). */
#ifndef XDP_MAX_TX_SKB_BUDGET
#define XDP_MAX_TX_SKB_BUDGET 9
#endif

#define XR_XSK_DEFAULT_TX 2048u
#define XR_XSK_DEFAULT_FILL 64u
/* A socket's queue stays taken for ~20 ms after close (the kernel frees
 * the buffer pool from deferred work): a new socket on the same queue waits
 * this long for it before giving up with -EBUSY. */
#define XR_XSK_BUSY_WAIT_MS 250
/* Bound on sendto calls per kick; each one moves up to the kernel budget. */
#define XR_XSK_KICK_MAX_CALLS 256

/* One mmapped ring.  Indices run freely and wrap at 2^32; cached_* are our
 * private copies so most operations touch no shared cache line. */
struct xr_ring {
	uint32_t *producer;
	uint32_t *consumer;
	uint32_t *flags;
	void *entries;
	uint32_t size;
	uint32_t mask;
	uint32_t cached_prod;
	uint32_t cached_cons;
	void *map;
	size_t map_len;
};

struct xr_xsk {
	int fd;
	int ifindex;
	int queue;
	uint64_t umem_len;
	struct xr_ring tx;   /* we produce descriptors */
	struct xr_ring comp; /* kernel produces completed addresses */
	struct xr_ring fill; /* we produce receive frames (zero copy only) */
	struct xr_ring rx;   /* kernel produces (unused; optional) */
	bool zerocopy;
	bool sg;
	bool budget_set;
	uint32_t outstanding; /* descriptors pushed, completion not reaped */
	struct xr_xsk_stats st;
};

static inline uint32_t load_acquire(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void store_release(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static bool is_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

/* ---- setup ----------------------------------------------------------- */

static int set_ring_size(int fd, int opt, uint32_t entries)
{
	int n = (int)entries;

	if (setsockopt(fd, SOL_XDP, opt, &n, sizeof(n)))
		return -errno;
	return 0;
}

static int map_ring(int fd, struct xr_ring *r, const struct xdp_ring_offset *off,
		    uint32_t entries, size_t entry_size, off_t pgoff)
{
	size_t len = off->desc + (size_t)entries * entry_size;
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, fd, pgoff);

	if (m == MAP_FAILED)
		return -errno;
	r->map = m;
	r->map_len = len;
	r->producer = (uint32_t *)((char *)m + off->producer);
	r->consumer = (uint32_t *)((char *)m + off->consumer);
	r->flags = (uint32_t *)((char *)m + off->flags);
	r->entries = (char *)m + off->desc;
	r->size = entries;
	r->mask = entries - 1;
	/* Both sides start at zero on a new socket; read them anyway. */
	r->cached_prod = *r->producer;
	r->cached_cons = *r->consumer;
	return 0;
}

static void unmap_ring(struct xr_ring *r)
{
	if (r->map)
		munmap(r->map, r->map_len);
	memset(r, 0, sizeof(*r));
}

static void close_socket(struct xr_xsk *x)
{
	unmap_ring(&x->tx);
	unmap_ring(&x->comp);
	unmap_ring(&x->fill);
	unmap_ring(&x->rx);
	if (x->fd >= 0)
		close(x->fd);
	x->fd = -1;
}

/* One complete attempt: socket, UMEM, rings, bind with bind_flags.  A
 * failed attempt is thrown away whole: a failed bind can leave state behind
 * in the UMEM (the SG flag, for one), so retrying on it is not safe. */
static int open_socket(struct xr_xsk *x, void *umem, const struct xr_xsk_opts *o,
		       uint16_t bind_flags)
{
	struct xdp_umem_reg reg;
	struct xdp_mmap_offsets off;
	struct sockaddr_xdp sa;
	struct xdp_options xo;
	socklen_t optlen;
	int err;

	x->fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (x->fd < 0)
		return -errno;

	/* The whole struct zeroed: newer kernels read tx_metadata_len where
	 * the 6.1 header has padding. */
	memset(&reg, 0, sizeof(reg));
	reg.addr = (uint64_t)(uintptr_t)umem;
	reg.len = x->umem_len;
	reg.chunk_size = XR_XSK_FRAME_SIZE;
	reg.headroom = 0;
	if (setsockopt(x->fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg)))
		return -errno;

	/* Fill and completion rings are mandatory for a socket that owns its
	 * UMEM; the RX ring is not once there is a TX ring. */
	err = set_ring_size(x->fd, XDP_UMEM_FILL_RING, o->fill_size);
	if (!err)
		err = set_ring_size(x->fd, XDP_UMEM_COMPLETION_RING, o->comp_size);
	if (!err)
		err = set_ring_size(x->fd, XDP_TX_RING, o->tx_size);
	if (!err && o->rx_size)
		err = set_ring_size(x->fd, XDP_RX_RING, o->rx_size);
	if (err)
		return err;

	optlen = sizeof(off);
	if (getsockopt(x->fd, SOL_XDP, XDP_MMAP_OFFSETS, &off, &optlen))
		return -errno;
	if (optlen < sizeof(off))
		return -EOPNOTSUPP; /* pre-5.4 kernel: no ring flags */

	err = map_ring(x->fd, &x->tx, &off.tx, o->tx_size,
		       sizeof(struct xdp_desc), XDP_PGOFF_TX_RING);
	if (!err)
		err = map_ring(x->fd, &x->comp, &off.cr, o->comp_size,
			       sizeof(uint64_t), XDP_UMEM_PGOFF_COMPLETION_RING);
	if (!err)
		err = map_ring(x->fd, &x->fill, &off.fr, o->fill_size,
			       sizeof(uint64_t), XDP_UMEM_PGOFF_FILL_RING);
	if (!err && o->rx_size)
		err = map_ring(x->fd, &x->rx, &off.rx, o->rx_size,
			       sizeof(struct xdp_desc), XDP_PGOFF_RX_RING);
	if (err)
		return err;

	memset(&sa, 0, sizeof(sa));
	sa.sxdp_family = AF_XDP;
	sa.sxdp_ifindex = (uint32_t)x->ifindex;
	sa.sxdp_queue_id = (uint32_t)x->queue;
	sa.sxdp_flags = bind_flags | XDP_USE_NEED_WAKEUP;
	if (bind(x->fd, (struct sockaddr *)&sa, sizeof(sa)))
		return -errno;

	/* Ask the kernel what we got rather than infer it from the flags. */
	memset(&xo, 0, sizeof(xo));
	optlen = sizeof(xo);
	if (getsockopt(x->fd, SOL_XDP, XDP_OPTIONS, &xo, &optlen))
		return -errno;
	x->zerocopy = xo.flags & XDP_OPTIONS_ZEROCOPY;
	x->sg = bind_flags & XDP_USE_SG;
	return 0;
}

/* Copy-mode tuning; failures are not fatal (older kernels, no
 * CAP_NET_ADMIN for SO_SNDBUFFORCE). */
static void tune_copy_mode(struct xr_xsk *x, const struct xr_xsk_opts *o)
{
	if (o->tx_budget) {
		unsigned int b = o->tx_budget;

		x->budget_set = !setsockopt(x->fd, SOL_XDP, XDP_MAX_TX_SKB_BUDGET,
					    &b, sizeof(b));
	}
	if (o->sndbuf > 0 &&
	    setsockopt(x->fd, SOL_SOCKET, SO_SNDBUFFORCE, &o->sndbuf,
		       sizeof(o->sndbuf)))
		setsockopt(x->fd, SOL_SOCKET, SO_SNDBUF, &o->sndbuf,
			   sizeof(o->sndbuf));
}

int xr_xsk_create(struct xr_xsk **out, int ifindex, int queue, void *umem,
		  size_t umem_len, const struct xr_xsk_opts *opts)
{
	/* Preference order: zero copy beats multi-buffer, which is only a
	 * convenience.  With neither XDP_COPY nor XDP_ZEROCOPY the kernel
	 * would fall back to copy mode by itself, but it would also drop zero
	 * copy to honour XDP_USE_SG on drivers without zero-copy multi-buffer,
	 * so every attempt names its mode. */
	static const uint16_t attempts[] = {
		XDP_ZEROCOPY | XDP_USE_SG, XDP_ZEROCOPY,
		XDP_COPY | XDP_USE_SG, XDP_COPY,
	};
	struct xr_xsk_opts o = { 0 };
	struct xr_xsk *x;
	bool sg_rejected = false;
	int err = -EINVAL;

	if (!out || !umem || ifindex <= 0 || queue < 0)
		return -EINVAL;
	*out = NULL;
	if (((uintptr_t)umem % XR_XSK_FRAME_SIZE) || !umem_len ||
	    umem_len % XR_XSK_FRAME_SIZE)
		return -EINVAL;
	if (opts)
		o = *opts;
	if (!o.tx_size)
		o.tx_size = XR_XSK_DEFAULT_TX;
	if (!o.comp_size)
		o.comp_size = o.tx_size;
	if (!o.fill_size)
		o.fill_size = XR_XSK_DEFAULT_FILL;
	if (o.mode != XR_XSK_MODE_AUTO && o.mode != XR_XSK_MODE_COPY &&
	    o.mode != XR_XSK_MODE_ZEROCOPY)
		return -EINVAL;
	if (!is_pow2(o.tx_size) || !is_pow2(o.comp_size) ||
	    !is_pow2(o.fill_size) || (o.rx_size && !is_pow2(o.rx_size)))
		return -EINVAL;

	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->fd = -1;
	x->ifindex = ifindex;
	x->queue = queue;
	x->umem_len = umem_len;

	for (size_t i = 0; i < sizeof(attempts) / sizeof(attempts[0]); i++) {
		uint16_t f = attempts[i];

		if ((f & XDP_ZEROCOPY) && o.mode == XR_XSK_MODE_COPY)
			continue;
		if ((f & XDP_COPY) && o.mode == XR_XSK_MODE_ZEROCOPY)
			continue;
		if ((f & XDP_USE_SG) && (o.no_sg || sg_rejected))
			continue;
		err = open_socket(x, umem, &o, f);
		for (int waited = 0; err == -EBUSY && waited < XR_XSK_BUSY_WAIT_MS;
		     waited += 2) {
			struct timespec ts = { 0, 2000000 };

			close_socket(x);
			nanosleep(&ts, NULL);
			err = open_socket(x, umem, &o, f);
		}
		if (!err)
			break;
		close_socket(x);
		/* A kernel older than 6.6 refuses the unknown flag itself. */
		if (err == -EINVAL && (f & XDP_USE_SG))
			sg_rejected = true;
		/* Errors that another mode cannot fix. */
		if (err == -ENODEV || err == -EPERM || err == -EBUSY ||
		    err == -ENOMEM || err == -EAFNOSUPPORT)
			break;
	}
	if (err) {
		free(x);
		return err;
	}
	if (!x->zerocopy)
		tune_copy_mode(x, &o);
	*out = x;
	return 0;
}

void xr_xsk_destroy(struct xr_xsk *x)
{
	if (!x)
		return;
	close_socket(x);
	free(x);
}

int xr_xsk_fd(const struct xr_xsk *x)
{
	return x->fd;
}

bool xr_xsk_zerocopy(const struct xr_xsk *x)
{
	return x->zerocopy;
}

bool xr_xsk_sg(const struct xr_xsk *x)
{
	return x->sg;
}

bool xr_xsk_tx_budget_set(const struct xr_xsk *x)
{
	return x->budget_set;
}

/* ---- transmit -------------------------------------------------------- */

static inline uint32_t tx_ring_free(struct xr_xsk *x, uint32_t want)
{
	uint32_t free_n = x->tx.size - (x->tx.cached_prod - x->tx.cached_cons);

	if (free_n >= want)
		return free_n;
	/* Only now look at the kernel's consumer index. */
	x->tx.cached_cons = load_acquire(x->tx.consumer);
	return x->tx.size - (x->tx.cached_prod - x->tx.cached_cons);
}

/* Slots usable for n descriptors: the TX ring must have room, and the
 * completion ring must be able to take every descriptor not yet reaped
 * (otherwise the kernel stops sending and answers EAGAIN for ever). */
static inline uint32_t free_slots(struct xr_xsk *x, uint32_t want)
{
	uint32_t ring = tx_ring_free(x, want);
	uint32_t comp = x->comp.size - x->outstanding;

	return ring < comp ? ring : comp;
}

uint32_t xr_xsk_tx_free_slots(struct xr_xsk *x)
{
	return free_slots(x, x->tx.size);
}

uint32_t xr_xsk_outstanding(const struct xr_xsk *x)
{
	return x->outstanding;
}

uint32_t xr_xsk_tx_queued(struct xr_xsk *x)
{
	x->tx.cached_cons = load_acquire(x->tx.consumer);
	return x->tx.cached_prod - x->tx.cached_cons;
}

/* The kernel drops a descriptor that leaves its frame (aligned mode) or
 * the UMEM, silently but for a counter; refuse it here instead. */
static inline bool seg_valid(const struct xr_xsk *x, uint64_t addr, uint32_t len)
{
	return len && addr < x->umem_len && len <= x->umem_len - addr &&
	       (addr % XR_XSK_FRAME_SIZE) + len <= XR_XSK_FRAME_SIZE;
}

static inline void write_desc(struct xr_xsk *x, uint64_t addr, uint32_t len,
			      uint32_t options)
{
	struct xdp_desc *d = x->tx.entries;

	d += x->tx.cached_prod++ & x->tx.mask;
	d->addr = addr;
	d->len = len;
	d->options = options;
}

int xr_xsk_tx_push(struct xr_xsk *x, uint64_t addr, uint32_t len)
{
	if (!seg_valid(x, addr, len))
		return -EINVAL;
	if (free_slots(x, 1) < 1) {
		x->st.ring_full++;
		return -ENOSPC;
	}
	write_desc(x, addr, len, 0);
	x->outstanding++;
	x->st.tx_pkts++;
	x->st.tx_descs++;
	x->st.tx_bytes += len;
	return 0;
}

int xr_xsk_tx_push_sg(struct xr_xsk *x, const struct xr_xsk_seg *segs,
		      int nsegs)
{
	uint64_t bytes = 0;

	if (nsegs < 1 || nsegs > XR_XSK_MAX_SEGS)
		return -EINVAL;
	if (nsegs > 1 && !x->sg)
		return -EOPNOTSUPP;
	for (int i = 0; i < nsegs; i++) {
		if (!seg_valid(x, segs[i].addr, segs[i].len))
			return -EINVAL;
		bytes += segs[i].len;
	}
	if (free_slots(x, (uint32_t)nsegs) < (uint32_t)nsegs) {
		x->st.ring_full++;
		return -ENOSPC;
	}
	/* Every descriptor but the last says "the packet continues". */
	for (int i = 0; i < nsegs; i++)
		write_desc(x, segs[i].addr, segs[i].len,
			   i + 1 < nsegs ? XDP_PKT_CONTD : 0);
	x->outstanding += (uint32_t)nsegs;
	x->st.tx_pkts++;
	x->st.tx_descs += (uint32_t)nsegs;
	x->st.tx_bytes += bytes;
	return 0;
}

int xr_xsk_tx_push_hdr_payload(struct xr_xsk *x, uint64_t hdr_addr,
			       uint32_t hdr_len, uint64_t pay_addr,
			       uint32_t pay_len)
{
	struct xr_xsk_seg segs[XR_XSK_MAX_SEGS];
	int n = 0;

	segs[n++] = (struct xr_xsk_seg){ hdr_addr, hdr_len };
	while (pay_len) {
		uint32_t room = XR_XSK_FRAME_SIZE - (uint32_t)(pay_addr % XR_XSK_FRAME_SIZE);
		uint32_t take = pay_len < room ? pay_len : room;

		if (n == XR_XSK_MAX_SEGS)
			return -EINVAL;
		segs[n++] = (struct xr_xsk_seg){ pay_addr, take };
		pay_addr += take;
		pay_len -= take;
	}
	return xr_xsk_tx_push_sg(x, segs, n);
}

int xr_xsk_tx_kick(struct xr_xsk *x)
{
	/* Publish what was pushed; the release orders the descriptor writes
	 * before the index the kernel reads. */
	store_release(x->tx.producer, x->tx.cached_prod);

	for (int calls = 0; calls < XR_XSK_KICK_MAX_CALLS; calls++) {
		uint32_t before = load_acquire(x->tx.consumer);

		if (before == x->tx.cached_prod)
			return 0; /* the kernel has taken everything */
		/* The producer store must be visible before we read the
		 * flag, or we could miss a wakeup request: full barrier. */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (!(__atomic_load_n(x->tx.flags, __ATOMIC_RELAXED) &
		      XDP_RING_NEED_WAKEUP))
			return 0; /* zero copy: the driver is polling */

		x->st.kicks++;
		if (sendto(x->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0) {
			/* Zero copy: the driver sends asynchronously. */
			if (x->zerocopy)
				return 0;
			/* Copy mode returns success only once the ring is
			 * empty, except when the queue id has no TX queue
			 * (>= real_num_tx_queues): then it sends nothing,
			 * silently.  Say so instead of "try again". */
			if (load_acquire(x->tx.consumer) == before)
				return -ENXIO;
		} else {
			switch (errno) {
			case EINTR:
				continue;
			case EBUSY:
				/* The driver dropped one frame (NET_XMIT_DROP,
				 * e.g. a full veth peer without a qdisc): it was
				 * consumed and completes; carry on. */
				x->st.ebusy++;
				break;
			case EAGAIN:
				/* Per-call budget used up (progress made), or
				 * no room: completion ring, socket buffer, busy
				 * device (no progress). */
				x->st.eagain++;
				break;
			case ENOBUFS:
				x->st.enobufs++;
				break;
			default:
				return -errno;
			}
		}
		/* Copy mode sends inside the call: without progress, calling
		 * again now would not help. */
		if (load_acquire(x->tx.consumer) == before)
			return -EAGAIN;
	}
	return load_acquire(x->tx.consumer) == x->tx.cached_prod ? 0 : -EAGAIN;
}

int xr_xsk_reap(struct xr_xsk *x, uint64_t *addrs, int max)
{
	struct xr_ring *c = &x->comp;
	const uint64_t *ring = c->entries;
	uint32_t avail, n;

	if (max <= 0)
		return 0;
	avail = c->cached_prod - c->cached_cons;
	if (avail < (uint32_t)max) {
		c->cached_prod = load_acquire(c->producer);
		avail = c->cached_prod - c->cached_cons;
	}
	n = avail < (uint32_t)max ? avail : (uint32_t)max;
	for (uint32_t i = 0; i < n; i++)
		addrs[i] = ring[(c->cached_cons + i) & c->mask];
	if (!n)
		return 0;
	c->cached_cons += n;
	/* Release: our reads of the entries happen before the kernel may
	 * overwrite them. */
	store_release(c->consumer, c->cached_cons);
	x->outstanding -= n;
	x->st.completed += n;
	return (int)n;
}

int xr_xsk_fill(struct xr_xsk *x, const uint64_t *addrs, int n)
{
	struct xr_ring *f = &x->fill;
	uint64_t *ring = f->entries;
	uint32_t room;
	int i;

	if (n <= 0)
		return 0;
	f->cached_cons = load_acquire(f->consumer);
	room = f->size - (f->cached_prod - f->cached_cons);
	for (i = 0; i < n && (uint32_t)i < room; i++) {
		if (addrs[i] >= x->umem_len)
			break;
		ring[f->cached_prod++ & f->mask] = addrs[i] & ~(uint64_t)(XR_XSK_FRAME_SIZE - 1);
	}
	store_release(f->producer, f->cached_prod);
	return i;
}

int xr_xsk_get_stats(const struct xr_xsk *x, struct xr_xsk_stats *out)
{
	struct xdp_statistics ks;
	socklen_t len = sizeof(ks);

	*out = x->st;
	memset(&ks, 0, sizeof(ks));
	if (getsockopt(x->fd, SOL_XDP, XDP_STATISTICS, &ks, &len))
		return -errno;
	out->tx_invalid = ks.tx_invalid_descs;
	out->tx_ring_empty = ks.tx_ring_empty_descs;
	return 0;
}
