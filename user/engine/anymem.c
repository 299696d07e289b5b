// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Registration of any application memory.  XDP can only place data into
 * the device's memory map (an mmapable BPF array), so a buffer from
 * malloc, mmap or static data is made part of it: its whole 4 KiB pages
 * are copied into a free range of the map, and that range is mapped over
 * the application's pages (MAP_FIXED | MAP_SHARED at an offset of the map's
 * fd).  The buffer keeps its address and contents; from then on the
 * application, the transmit path and XDP see the same memory.
 *
 * An extent is one such remapped range.  Extents are reference counted
 * by the regions that use them; overlapping registrations share or grow
 * one.  A new extent is placed in the map at the same distance from its
 * nearest neighbour in memory as that neighbour has, where it fits, so
 * that when two buffers' pages later touch (malloc neighbours), the merged
 * extent is still contiguous in the map: nothing moves.  When that is not
 * possible, the extents are moved to a new range (only while no work uses
 * them: data arriving for them during the move would be lost).
 *
 * When the last region of an extent goes, work that may still read or
 * write its memory fails first (the QP moves to the error state), then the
 * pages are given back: a private anonymous copy put in their place with
 * mremap, atomically.  With dev->extent_idle_max (XROCE_MR_CACHE_MB) the
 * extent may instead stay in the map, idle: MPI over libfabric registers a
 * message buffer for each large transfer and deregisters it after, and
 * moving the same pages in and out each time costs more than the
 * transfer.  Idle extents are given back oldest first beyond that size,
 * when a registration or allocation needs their room, and at device close.
 * Off by default: an allocator that madvise(MADV_DONTNEED)s freed pages
 * would leave idle device pages unbacked.  docs/VERBS.md has the costs and
 * the limits.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <bpf/bpf.h>

#include "anymem.h"
#include "device.h"
#include "mr.h"
#include "qp.h"
#include "qp_state.h"

#define PG ((uintptr_t)XR_PAGE_SIZE)
#define PG_DOWN(a) ((a) & ~(PG - 1))
#define PG_UP(a) (((a) + PG - 1) & ~(PG - 1))
/* Neighbours further apart than this in memory are not placed linearly. */
#define XR_LINEAR_SPAN (1ull << 30)
#define XR_MAX_VMAS 64

/* A piece of the application's address space, as the kernel lists it. */
struct xr_vma {
	uintptr_t start, end;
	int prot;
	bool shared;
	bool bpfmap;            /* a mapping of some BPF map */
	bool huge;              /* hugetlb pages */
	bool stack;             /* the main thread's stack ([stack]) */
	uint64_t off;           /* byte offset of start in the mapped object */
};

/* Protection of a piece of an extent before it was remapped. */
struct xr_vseg {
	uintptr_t va, end;
	int prot;
};

struct xr_extent {
	uintptr_t va, end;      /* page-aligned range in the application */
	uint64_t off;           /* memory map offset of va */
	uint32_t refs;          /* regions using it; 0: idle */
	uint64_t idle_seq;      /* when it last became idle (dev->extent_seq) */
	bool orphan;            /* unmapped or replaced by the application */
	bool nocache;           /* give it back as soon as it is idle */
	struct xr_vseg *segs;
	uint32_t nsegs;
	struct xr_extent *next;
};

/* ---- the application's mappings ------------------------------------- */

/* Is the mapping [a, b), whose /proc/self/maps name is name (a path: it
 * has a file), backed by hugetlbfs (MAP_HUGETLB memory, or a file on a
 * hugetlbfs mount)?  The kernel names the file behind each mapping in
 * /proc/self/map_files, anonymous MAP_HUGETLB memory being a file of an
 * internal hugetlbfs mount; following those links needs CAP_SYS_ADMIN or
 * CAP_CHECKPOINT_RESTORE, so without them the name says it: the internal
 * mount's "/anon_hugepage", or the file's own path.  (Transparent huge
 * pages need no check: their mapping's pages are still 4 KiB to mmap and
 * mremap.) */
static bool vma_hugetlb(uintptr_t a, uintptr_t b, const char *name)
{
	char path[PATH_MAX];
	struct statfs sf;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx",
		 (unsigned long)a, (unsigned long)b);
	if (!statfs(path, &sf))
		return (unsigned long)sf.f_type == HUGETLBFS_MAGIC;
	if (!strncmp(name, "/anon_hugepage", 14))
		return true;
	n = strcspn(name, "\n");
	if (n >= sizeof(path))
		return false;
	memcpy(path, name, n);
	path[n] = 0;
	if (n > 10 && !strcmp(path + n - 10, " (deleted)"))
		path[n - 10] = 0;
	return !statfs(path, &sf) && (unsigned long)sf.f_type == HUGETLBFS_MAGIC;
}

/* The mappings covering [s, e), in address order; -EFAULT if a page of it
 * is not mapped.  Read from /proc/self/maps, which costs little: its
 * lines come from the mapping list alone, in address order, so the read
 * stops past e.  (smaps, which would also tell the page size, walks every
 * mapping's page tables: 25 ms per call in an MPI rank here, paid by every
 * registration and deregistration.) */
static int vmas_of(struct xroce_device *dev, uintptr_t s, uintptr_t e,
		   struct xr_vma *out, int *n, bool partial)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char *line = NULL, perms[8];
	size_t cap = 0;
	uintptr_t covered = s;
	int k = 0;

	if (!f)
		return partial ? -errno : xr_fail(&dev->log, -errno,
						"reg_mr: /proc/self/maps: %s",
						strerror(errno));
	while (getline(&line, &cap, f) > 0) {
		unsigned long a, b, off;
		int name_at = 0;
		const char *name;

		if (sscanf(line, "%lx-%lx %7s %lx %*x:%*x %*u %n", &a, &b, perms,
			   &off, &name_at) < 4 || name_at <= 0)
			continue;
		if (a >= e)
			break;
		if (b <= s)
			continue;
		if (k == XR_MAX_VMAS) {
			k = -1;
			break;
		}
		name = line + name_at;
		memset(&out[k], 0, sizeof(out[k]));
		out[k].start = a;
		out[k].end = b;
		out[k].prot = (perms[0] == 'r' ? PROT_READ : 0) |
			      (perms[1] == 'w' ? PROT_WRITE : 0) |
			      (perms[2] == 'x' ? PROT_EXEC : 0);
		out[k].shared = perms[3] == 's';
		out[k].off = off;
		out[k].bpfmap = strstr(name, "anon_inode:bpf-map") != NULL;
		out[k].stack = strncmp(name, "[stack]", 7) == 0;
		out[k].huge = name[0] == '/' && vma_hugetlb(a, b, name);
		k++;
	}
	free(line);
	fclose(f);
	if (k < 0)
		return partial ? -EOPNOTSUPP :
		       xr_fail(&dev->log, -EOPNOTSUPP, "reg_mr: the range spans "
			       "more than %d mappings", XR_MAX_VMAS);
	for (int i = 0; i < k; i++) {
		if (out[i].start > covered)
			break;
		covered = out[i].end;
	}
	if (covered < e && !partial)
		return xr_fail(&dev->log, -EFAULT, "reg_mr: %#lx is not mapped",
			       (unsigned long)covered);
	*n = k;
	return 0;
}

/* Is vma (a piece of it at least) the mapping of extent x? */
static bool vma_is_extent(const struct xroce_device *dev, const struct xr_vma *v,
			  const struct xr_extent *x)
{
	uintptr_t a = v->start > x->va ? v->start : x->va;

	(void)dev;
	return v->bpfmap && v->shared &&
	       v->off + (a - v->start) == x->off + (a - x->va);
}

/* A stack cannot be moved: between the copy of its pages and the remap
 * that gives them back, the functions doing it write their own frames
 * into those pages, and the remap would turn them back into the copy
 * (a smashed stack).  Refused: the main thread's [stack], and the stack
 * of the calling thread. */
static int refuse_stack(struct xroce_device *dev, uintptr_t s, uintptr_t e,
			const struct xr_vma *v, int nv)
{
	pthread_attr_t at;
	void *lo = NULL;
	size_t sz = 0;
	bool hit = false;
	int i;

	for (i = 0; i < nv; i++)
		hit = hit || v[i].stack;
	/* The main thread's stack is [stack], seen above; glibc would find
	 * it by reading all of /proc/self/maps again. */
	if (!hit && getpid() != (pid_t)syscall(SYS_gettid) &&
	    !pthread_getattr_np(pthread_self(), &at)) {
		if (!pthread_attr_getstack(&at, &lo, &sz))
			hit = (uintptr_t)lo < e && (uintptr_t)lo + sz > s;
		pthread_attr_destroy(&at);
	}
	if (hit)
		return xr_fail(&dev->log, -EFAULT, "reg_mr: %#lx is on a thread's "
			       "stack, which cannot be registered (its pages would "
			       "move into device memory); use heap, static or "
			       "mmap memory", (unsigned long)s);
	return 0;
}

/* ---- moving pages in and out ----------------------------------------- */

/* Put a private anonymous copy of device pages [off, +len) at va. */
static int give_back(struct xroce_device *dev, uintptr_t va, size_t len,
		     uint64_t off, int prot)
{
	void *tmp = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (tmp == MAP_FAILED)
		return -errno;
	memcpy(tmp, dev->mem + off, len);
	if (prot != (PROT_READ | PROT_WRITE))
		mprotect(tmp, len, prot);
	/* Atomic: the device pages are replaced, never absent. */
	if (mremap(tmp, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)va) ==
	    MAP_FAILED) {
		int rc = -errno;

		munmap(tmp, len);
		return rc;
	}
	return 0;
}

/* Copy the pieces of [s, e) described by vmas into the map at off and map
 * them there; on failure what was moved is given back.  The protections
 * are appended to x->segs. */
static int take_pages(struct xroce_device *dev, struct xr_extent *x, uintptr_t s,
		      uintptr_t e, uint64_t off, const struct xr_vma *v, int nv)
{
	struct xr_vseg *segs;
	uint32_t first = x->nsegs;
	int i, rc = 0;

	segs = realloc(x->segs, (x->nsegs + (uint32_t)nv + 1) * sizeof(*segs));
	if (!segs)
		return -ENOMEM;
	x->segs = segs;
	memcpy(dev->mem + off, (void *)s, e - s);
	for (i = 0; i < nv; i++) {
		uintptr_t a = v[i].start > s ? v[i].start : s;
		uintptr_t b = v[i].end < e ? v[i].end : e;

		if (a >= b)
			continue;
		if (mmap((void *)a, b - a, v[i].prot, MAP_SHARED | MAP_FIXED,
			 dev->mem_fd, (off_t)(off + (a - s))) == MAP_FAILED) {
			rc = -errno;
			break;
		}
		x->segs[x->nsegs++] = (struct xr_vseg){ a, b, v[i].prot };
	}
	if (!rc)
		return 0;
	while (x->nsegs > first) {
		struct xr_vseg *g = &x->segs[--x->nsegs];

		give_back(dev, g->va, g->end - g->va, off + (g->va - s), g->prot);
	}
	return xr_fail(&dev->log, rc, "reg_mr: cannot map device memory over "
		       "[%#lx, %#lx): %s", (unsigned long)s, (unsigned long)e,
		       strerror(-rc));
}

/* ---- who uses a range of the map ------------------------------------- */

static bool meets(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return alen && blen && a < b + blen && b < a + alen;
}

static bool seg_meets(const struct xr_swr *w, uint64_t off, uint64_t len)
{
	uint32_t i;

	if (w->nseg == 1)
		return meets(w->seg1.loff, w->seg1.len, off, len);
	for (i = 0; i < w->nseg && w->segs; i++)
		if (meets(w->segs[i].loff, w->segs[i].len, off, len))
			return true;
	return false;
}

/* The first work request of qp that may still read or write [off, +len)
 * (NULL if none); *any is set if a posted receive or a peer's READ does. */
static struct xr_swr *qp_user(struct xroce_qp *qp, uint64_t off, uint64_t len,
			      bool *any)
{
	uint32_t i, k;

	*any = false;
	for (i = qp->sq_head; i != qp->sq_tail; i++) {
		struct xr_swr *w = xr_swr_at(qp, i);

		/* A fenced answer to a peer's READ (its region deregistered,
		 * mr.c) reads no memory any more: what it still sends or
		 * resends carries nothing.  Its ACKs may lag the reader being
		 * done (one lost at loss), which must not make the region's
		 * last deregistration fail the connection. */
		if (w->done || w->fenced)
			continue;
		if (w->kind == XR_WK_READ) {
			if (!w->resp_done && w->read_len != UINT32_MAX &&
			    meets(w->read_loff, w->read_len, off, len))
				return w;
		} else if (w->nacked < w->npkts && seg_meets(w, off, len)) {
			return w;
		}
	}
	for (i = qp->rdq_head; i != qp->rdq_tail; i++) {
		const struct xr_rdreq *q = &qp->rdq[i % XR_RDQ];

		if (meets(q->pos, q->len, off, len))
			*any = true;
	}
	for (k = 0; k < qp->nstreams; k++) {
		const struct xr_stream *st = qp->streams[qp->stream_ids[k]];

		for (i = st->rq_done; i != st->rq_post; i++) {
			const struct xr_rwr *r = &st->rq[i % XROCE_MAX_RECV_PER_STREAM];

			if (meets(r->mem_off, r->len, off, len))
				*any = true;
		}
	}
	return NULL;
}

static bool range_in_use(struct xroce_device *dev, uint64_t off, uint64_t len)
{
	struct xroce_qp *qp;
	bool any;

	for (qp = dev->qps; qp; qp = qp->next)
		if (qp->state != XROCE_QPS_ERR && qp->state != XROCE_QPS_CLOSED &&
		    (qp_user(qp, off, len, &any) || any))
			return true;
	return false;
}

/* Fail every QP with work on [off, +len): that work request completes as a
 * local protection error, the rest is flushed, windows and receives are
 * withdrawn from XDP.  Returns whether there was any. */
static bool invalidate(struct xroce_device *dev, uint64_t off, uint64_t len)
{
	struct xroce_qp *qp;
	bool hit = false;

	for (qp = dev->qps; qp; qp = qp->next) {
		struct xr_swr *w;
		bool any;

		if (qp->state == XROCE_QPS_ERR || qp->state == XROCE_QPS_CLOSED)
			continue;
		w = qp_user(qp, off, len, &any);
		if (!w && !any)
			continue;
		if (w) {
			w->failed = 1;
			w->status = XROCE_WC_LOC_PROT_ERR;
		}
		xr_qp_fail(qp, XROCE_WC_WR_FLUSH_ERR, "memory it uses was deregistered");
		hit = true;
	}
	return hit;
}

/* ---- extents ---------------------------------------------------------- */

static void extent_link(struct xroce_device *dev, struct xr_extent *x)
{
	struct xr_extent **pp = &dev->extents;

	while (*pp && (*pp)->va < x->va)
		pp = &(*pp)->next;
	x->next = *pp;
	*pp = x;
}

static void extent_unlink(struct xroce_device *dev, struct xr_extent *x)
{
	struct xr_extent **pp;

	for (pp = &dev->extents; *pp; pp = &(*pp)->next)
		if (*pp == x) {
			*pp = x->next;
			return;
		}
}

/* Where a new extent for [s, e) goes in the map: linearly beside its
 * nearest neighbour if that range is free, else in the middle of the
 * largest free block (room to grow both ways).  Allocated on return. */
static int place(struct xroce_device *dev, uintptr_t s, uintptr_t e, uint64_t *off)
{
	const struct xr_extent *x, *best = NULL;
	uint64_t len = e - s, dist = XR_LINEAR_SPAN, boff, blen;

	for (x = dev->extents; x; x = x->next) {
		uint64_t d = x->va > s ? x->va - s : s - x->end;

		if (!x->orphan && d < dist) {
			dist = d;
			best = x;
		}
	}
	if (best && s - best->va + best->off >= dev->heap.base &&
	    !xr_heap_alloc_at(&dev->heap, s - best->va + best->off, len)) {
		*off = s - best->va + best->off;
		return 0;
	}
	if (xr_heap_largest_free(&dev->heap, &boff, &blen) || blen < len)
		return xr_fail(&dev->log, -ENOMEM, "reg_mr: %llu bytes do not fit in "
			       "the device's memory (%llu bytes, %llu free; raise "
			       "the device's mem_size, XROCE_MEM_SIZE for ibverbs)",
			       (unsigned long long)len,
			       (unsigned long long)dev->heap.len,
			       (unsigned long long)(dev->heap.len - dev->heap.used_bytes));
	*off = PG_UP(boff + (blen - len) / 2);
	if (*off + len > boff + blen)
		*off = PG_UP(boff);
	return xr_heap_alloc_at(&dev->heap, *off, len) ?
	       xr_fail(&dev->log, -ENOMEM, "reg_mr: no room in device memory") : 0;
}

/* Extents that overlap [s, e), in address order (orphans excepted). */
static int overlapping(struct xroce_device *dev, uintptr_t s, uintptr_t e,
		       struct xr_extent **out, int max)
{
	struct xr_extent *x;
	int n = 0;

	for (x = dev->extents; x; x = x->next)
		if (!x->orphan && x->va < e && s < x->end) {
			if (n == max)
				return -1;
			out[n++] = x;
		}
	return n;
}

/* Regions of the device pointing into extent `from` now use `to`, whose
 * map offset for the same address may differ: republished to XDP. */
static void regions_move(struct xroce_device *dev, struct xr_extent *from,
			 struct xr_extent *to)
{
	struct xroce_pd *pd;
	struct xr_mr_int *m;

	for (pd = dev->pds; pd; pd = pd->next)
		for (m = pd->mrs; m; m = m->next) {
			struct xr_mr v;
			uint64_t off;

			if (m->ext != from)
				continue;
			m->ext = to;
			off = to->off + ((uintptr_t)m->pub.addr - to->va);
			if (off == m->mem_off)
				continue;
			m->mem_off = off;
			if (!bpf_map_lookup_elem(dev->maps.mrs, &m->pub.rkey, &v)) {
				v.mem_off = off;
				bpf_map_update_elem(dev->maps.mrs, &m->pub.rkey, &v,
						    BPF_EXIST);
			}
		}
}

/* Grow xs[0] over [s, e) and the other overlapping extents in place: the
 * gaps between them are allocated at the same map distance.  -ENOSPC if
 * the extents are not linear to each other or a gap is taken. */
static int grow_in_place(struct xroce_device *dev, struct xr_extent **xs, int nx,
			 uintptr_t s, uintptr_t e, const struct xr_vma *v, int nv)
{
	struct xr_extent *x0 = xs[0];
	int64_t d = (int64_t)x0->off - (int64_t)x0->va;
	uintptr_t lo = s < x0->va ? s : x0->va;
	uintptr_t hi = e > xs[nx - 1]->end ? e : xs[nx - 1]->end;
	uintptr_t gaps[XR_MAX_VMAS + 1][2], at = lo;
	int ng = 0, i, rc;

	if ((int64_t)lo + d < (int64_t)dev->heap.base)
		return -ENOSPC;
	for (i = 0; i < nx; i++) {
		if ((int64_t)xs[i]->off - (int64_t)xs[i]->va != d)
			return -ENOSPC;
		if (xs[i]->va > at)
			gaps[ng][0] = at, gaps[ng++][1] = xs[i]->va;
		at = xs[i]->end;
	}
	if (hi > at)
		gaps[ng][0] = at, gaps[ng++][1] = hi;
	for (i = 0; i < ng; i++) {
		rc = xr_heap_alloc_at(&dev->heap, (uint64_t)((int64_t)gaps[i][0] + d),
				      gaps[i][1] - gaps[i][0]);
		if (rc) {
			while (i--)
				xr_heap_free_range(&dev->heap,
						   (uint64_t)((int64_t)gaps[i][0] + d),
						   gaps[i][1] - gaps[i][0]);
			return -ENOSPC;
		}
	}
	for (i = 0; i < ng; i++) {
		rc = take_pages(dev, x0, gaps[i][0], gaps[i][1],
				(uint64_t)((int64_t)gaps[i][0] + d), v, nv);
		if (rc) {
			/* Pages of earlier gaps stay in the map (x0's segments
			 * cover them): consistent, if larger than needed. */
			for (; i < ng; i++)
				xr_heap_free_range(&dev->heap,
						   (uint64_t)((int64_t)gaps[i][0] + d),
						   gaps[i][1] - gaps[i][0]);
			return rc;
		}
		if (gaps[i][0] < x0->va) {
			x0->off -= x0->va - gaps[i][0];
			x0->va = gaps[i][0];
		}
		if (gaps[i][1] > x0->end)
			x0->end = gaps[i][1];
	}
	/* Absorb the others: their segments, references and regions. */
	for (i = 1; i < nx; i++) {
		struct xr_extent *x = xs[i];
		struct xr_vseg *segs = realloc(x0->segs, (x0->nsegs + x->nsegs) *
						 sizeof(*segs));

		if (!segs)
			return -ENOMEM; /* x stays on its own: still consistent */
		x0->segs = segs;
		memcpy(x0->segs + x0->nsegs, x->segs, x->nsegs * sizeof(*segs));
		x0->nsegs += x->nsegs;
		x0->refs += x->refs;
		x0->nocache |= x->nocache;
		if (x->end > x0->end)
			x0->end = x->end;
		regions_move(dev, x, x0);
		extent_unlink(dev, x);
		free(x->segs);
		free(x);
	}
	return 0;
}

/* Move the overlapping extents and [s, e) together to a new range. */
static int move_together(struct xroce_device *dev, struct xr_extent **xs, int nx,
			 uintptr_t s, uintptr_t e, const struct xr_vma *v, int nv,
			 struct xr_extent **out)
{
	uintptr_t lo = s < xs[0]->va ? s : xs[0]->va;
	uintptr_t hi = e > xs[nx - 1]->end ? e : xs[nx - 1]->end;
	struct xr_extent *n;
	uint64_t off = 0;
	int i, rc = 0;

	for (i = 0; i < nx; i++)
		if (range_in_use(dev, xs[i]->off, xs[i]->end - xs[i]->va))
			return xr_fail(&dev->log, -EBUSY, "reg_mr: [%#lx, %#lx) overlaps "
				       "registered memory that work is using and that "
				       "cannot grow in place; register it before posting",
				       (unsigned long)s, (unsigned long)e);
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	rc = place(dev, lo, hi, &off);
	if (rc) {
		free(n);
		return rc;
	}
	n->va = lo;
	n->end = hi;
	n->off = off;
	/* Old extents first (their pages read through their current mapping,
	 * mapped again with the protections recorded when they were taken),
	 * then the new pieces with the application's. */
	for (i = 0; i < nx && !rc; i++) {
		struct xr_extent *x = xs[i];
		struct xr_vma pv[XR_MAX_VMAS];
		uint32_t j;
		int np = 0;

		for (j = 0; j < x->nsegs && np < XR_MAX_VMAS; j++)
			pv[np++] = (struct xr_vma){ .start = x->segs[j].va,
						    .end = x->segs[j].end,
						    .prot = x->segs[j].prot };
		rc = take_pages(dev, n, x->va, x->end, off + (x->va - lo), pv, np);
	}
	for (i = 0; !rc && i < nv; i++) {
		uintptr_t a = v[i].start > s ? v[i].start : s;
		uintptr_t b = v[i].end < e ? v[i].end : e;
		struct xr_vma one = v[i];

		if (a >= b || v[i].bpfmap)
			continue; /* pieces of the old extents: done above */
		one.start = a;
		one.end = b;
		rc = take_pages(dev, n, a, b, off + (a - lo), &one, 1);
	}
	if (rc) {
		/* The old extents' pages may be mapped to the new range now:
		 * leave it allocated (no data is lost), report the failure. */
		free(n->segs);
		free(n);
		return rc;
	}
	for (i = 0; i < nx; i++) {
		struct xr_extent *x = xs[i];

		n->refs += x->refs;
		n->nocache |= x->nocache;
		regions_move(dev, x, n);
		xr_heap_free_range(&dev->heap, x->off, x->end - x->va);
		extent_unlink(dev, x);
		free(x->segs);
		free(x);
	}
	extent_link(dev, n);
	xr_log(&dev->log, XROCE_LOG_DEBUG, "reg_mr: moved %d extent(s) to [%#lx, "
	       "%#lx) at map offset %#llx", nx, (unsigned long)lo,
	       (unsigned long)hi, (unsigned long long)off);
	*out = n;
	return 0;
}

/* Give extent x's pages back to the application and forget it.  Piece by
 * piece: what is still the extent's mapping goes back with the protection
 * it has now; what the application unmapped or replaced meanwhile is left
 * alone (those addresses are someone else's now).  Also for an orphan,
 * part of which may still be ours (a heap shrunk by sbrk cuts an extent in
 * two).  idle: it had no region any more, so the application was free to
 * do that (no warning then). */
static void extent_release(struct xroce_device *dev, struct xr_extent *x,
			   bool idle)
{
	struct xr_vma v[XR_MAX_VMAS];
	uint64_t len = x->end - x->va, ours = 0;
	bool kept = false;
	int nv = 0, i;

	if (vmas_of(dev, x->va, x->end, v, &nv, true)) {
		/* Cannot tell what is still ours: leave the range allocated
		 * rather than hand out pages that may still be mapped. */
		xr_log(&dev->log, XROCE_LOG_ERROR, "dereg_mr: cannot list the "
		       "mappings at %#lx: its pages stay in device memory",
		       (unsigned long)x->va);
		kept = true;
	}
	for (i = 0; !kept && i < nv; i++) {
		uintptr_t a = v[i].start > x->va ? v[i].start : x->va;
		uintptr_t b = v[i].end < x->end ? v[i].end : x->end;
		int rc;

		if (!vma_is_extent(dev, &v[i], x))
			continue;
		ours += b - a;
		rc = give_back(dev, a, b - a, x->off + (a - x->va), v[i].prot);
		if (rc) {
			/* Those pages stay device memory: still memory to the
			 * application, so the range must not be reused. */
			xr_log(&dev->log, XROCE_LOG_ERROR, "dereg_mr: cannot give "
			       "pages at %#lx back (%s): they stay in device memory",
			       (unsigned long)a, strerror(-rc));
			kept = true;
		}
	}
	if (ours < len && !x->orphan && !idle && !kept)
		xr_log(&dev->log, XROCE_LOG_WARN, "dereg_mr: pages at %#lx were "
		       "unmapped or replaced before their deregistration",
		       (unsigned long)x->va);
	if (!kept)
		xr_heap_free_range(&dev->heap, x->off, len);
	extent_unlink(dev, x);
	free(x->segs);
	free(x);
}

/* Give idle extents back, oldest first, until at most max bytes are idle;
 * extents overlapping [keep_s, keep_e) stay (a registration in progress
 * holds them).  Returns how many were given back. */
static int evict_idle(struct xroce_device *dev, uint64_t max, uintptr_t keep_s,
		      uintptr_t keep_e)
{
	int n = 0;

	for (;;) {
		struct xr_extent *x, *old = NULL;
		uint64_t idle = 0;

		for (x = dev->extents; x; x = x->next) {
			if (x->refs || (x->va < keep_e && keep_s < x->end))
				continue;
			idle += x->end - x->va;
			if (!old || x->idle_seq < old->idle_seq)
				old = x;
		}
		if (!old || idle <= max)
			return n;
		extent_release(dev, old, true);
		n++;
	}
}

/* One attempt of xr_anymem_get (which retries once after giving idle
 * extents back if the map had no room). */
static int anymem_get(struct xroce_device *dev, uintptr_t a, uintptr_t s,
		      uintptr_t e, uint64_t *off, struct xr_extent **ext)
{
	struct xr_vma v[XR_MAX_VMAS];
	struct xr_extent *xs[XR_MAX_VMAS], *x, *next;
	int nv = 0, nx, i, rc;

	rc = vmas_of(dev, s, e, v, &nv, false);
	if (!rc)
		rc = refuse_stack(dev, s, e, v, nv);
	if (rc)
		return rc;
	/* Extents whose pages are no longer all theirs (the application
	 * unmapped or replaced some) become orphans: no registration joins
	 * them any more, and when they go only what is still theirs is given
	 * back (extent_release).  An idle one goes at once (no region will
	 * put it). */
	for (x = dev->extents; x; x = next) {
		next = x->next;
		if (x->orphan || x->end <= s || x->va >= e)
			continue;
		for (i = 0; i < nv; i++)
			if (v[i].end > x->va && v[i].start < x->end &&
			    !vma_is_extent(dev, &v[i], x)) {
				x->orphan = true;
				if (x->refs)
					xr_log(&dev->log, XROCE_LOG_WARN, "reg_mr: "
					       "registered pages at %#lx were unmapped "
					       "or replaced before their deregistration",
					       (unsigned long)x->va);
				break;
			}
		if (x->orphan && !x->refs)
			extent_release(dev, x, true);
	}
	for (i = 0; i < nv; i++) {
		if (v[i].bpfmap && v[i].shared) {
			bool ours = false;

			for (x = dev->extents; x && !ours; x = x->next)
				ours = !x->orphan && v[i].end > x->va &&
				       v[i].start < x->end && vma_is_extent(dev, &v[i], x);
			if (!ours)
				return xr_fail(&dev->log, -EOPNOTSUPP, "reg_mr: %#lx is "
					       "memory of another xroce device or BPF "
					       "map", (unsigned long)v[i].start);
			continue;
		}
		if (v[i].huge)
			return xr_fail(&dev->log, -EOPNOTSUPP, "reg_mr: %#lx is in huge "
				       "pages, which cannot be remapped page by page",
				       (unsigned long)v[i].start);
		if (v[i].shared)
			return xr_fail(&dev->log, -EOPNOTSUPP, "reg_mr: %#lx is a shared "
				       "mapping (file or shared memory): its pages "
				       "cannot be moved", (unsigned long)v[i].start);
		if (!(v[i].prot & PROT_READ))
			return xr_fail(&dev->log, -EFAULT, "reg_mr: %#lx is not "
				       "readable", (unsigned long)v[i].start);
	}
	nx = overlapping(dev, s, e, xs, XR_MAX_VMAS);
	if (nx < 0)
		return xr_fail(&dev->log, -EOPNOTSUPP, "reg_mr: too many registered "
			       "pieces under one range");
	if (nx == 1 && xs[0]->va <= s && e <= xs[0]->end) {
		x = xs[0];
	} else if (nx == 0) {
		uint64_t o = 0;

		x = calloc(1, sizeof(*x));
		if (!x)
			return xr_fail(&dev->log, -ENOMEM, "out of memory");
		rc = place(dev, s, e, &o);
		if (!rc) {
			x->va = s;
			x->end = e;
			x->off = o;
			rc = take_pages(dev, x, s, e, o, v, nv);
			if (rc)
				xr_heap_free_range(&dev->heap, o, e - s);
		}
		if (rc) {
			free(x->segs);
			free(x);
			return rc;
		}
		extent_link(dev, x);
	} else {
		rc = grow_in_place(dev, xs, nx, s, e, v, nv);
		if (rc == -ENOSPC)
			rc = move_together(dev, xs, nx, s, e, v, nv, &xs[0]);
		if (rc)
			return rc;
		x = xs[0];
	}
	x->refs++;
	*off = x->off + (a - x->va);
	*ext = x;
	return 0;
}

int xr_anymem_get(struct xroce_device *dev, void *addr, size_t len,
		  bool nocache, uint64_t *off, struct xr_extent **ext)
{
	uintptr_t a = (uintptr_t)addr, s, e;
	int rc;

	if (sysconf(_SC_PAGESIZE) != (long)PG)
		return xr_fail(&dev->log, -EOPNOTSUPP, "reg_mr: system pages are not "
			       "%lu bytes", (unsigned long)PG);
	if (!len || a + len < a)
		return xr_fail(&dev->log, -EINVAL, "reg_mr: bad range");
	s = PG_DOWN(a);
	e = PG_UP(a + len);
	rc = anymem_get(dev, a, s, e, off, ext);
	/* No room: nothing was changed (place() fails before pages move);
	 * idle extents give theirs back, and it is tried once more. */
	if (rc == -ENOMEM && evict_idle(dev, 0, s, e) > 0)
		rc = anymem_get(dev, a, s, e, off, ext);
	if (!rc && nocache)
		(*ext)->nocache = true;
	return rc;
}

void xr_anymem_put(struct xroce_device *dev, struct xr_extent *x)
{
	bool busy;

	if (--x->refs)
		return;
	busy = invalidate(dev, x->off, x->end - x->va);
	/* Kept idle only if nothing of XDP's can still be writing into it: no
	 * work used it (no READ window, no posted receive) and no region over
	 * it took peers' WRITEs (one in flight on another CPU as the rkey went
	 * would land in the application's memory after this returns).  Given
	 * back, such a late write lands in the map, not in the application. */
	if (busy || x->orphan || x->nocache || !dev->extent_idle_max) {
		extent_release(dev, x, false);
		return;
	}
	x->idle_seq = ++dev->extent_seq;
	evict_idle(dev, dev->extent_idle_max, 0, 0);
}

void xr_anymem_flush(struct xroce_device *dev)
{
	evict_idle(dev, 0, 0, 0);
}

int xr_anymem_heap_alloc(struct xroce_device *dev, uint64_t len, uint64_t align,
			 uint64_t *off)
{
	int rc = xr_heap_alloc(&dev->heap, len, align, off);

	if (rc == -ENOMEM && evict_idle(dev, 0, 0, 0) > 0)
		rc = xr_heap_alloc(&dev->heap, len, align, off);
	return rc;
}
