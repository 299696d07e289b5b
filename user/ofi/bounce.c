// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Bounce buffers: device memory the provider copies through when the
 * application's memory cannot be used in place (libxroce without
 * any-memory registration, unregistered buffers, inject, more receive
 * entries than a receive takes).  Arenas of device memory are registered
 * once each; buffers are power-of-two slices kept on a free list per size
 * after use.  At most FI_XROCE_BOUNCE_MAX bytes: past it a post returns
 * -FI_EAGAIN until completions give buffers back.
 */
#include <stdlib.h>

#include "ofi.h"

#define ARENA_MIN (4u << 20)
#define CLS_MIN 8                     /* 256 bytes */

struct xrf_arena {
	struct xrf_arena *next;
	uint8_t *mem;
	struct xroce_mr *mr;
};

static int size_class(size_t len)
{
	int c = CLS_MIN;

	while (((size_t)1 << c) < len)
		c++;
	return c;
}

static int new_arena(struct xrf_domain *dom, size_t need)
{
	struct xrf_bpool *bp = &dom->bp;
	size_t len = need > ARENA_MIN ? need : ARENA_MIN;
	struct xrf_arena *a;
	int rc;

	if (bp->total + len > xrf_params.bounce_max)
		return -FI_EAGAIN; /* until completions give buffers back */
	a = calloc(1, sizeof(*a));
	if (!a)
		return -FI_ENOMEM;
	a->mem = xroce_mem_alloc(dom->xd->dev, len, 4096);
	if (!a->mem) {
		FI_WARN(&xrf_prov, FI_LOG_DOMAIN, "no device memory for %zu bytes "
			"of bounce buffers (FI_XROCE_MEM_SIZE)\n", len);
		free(a);
		return bp->total ? -FI_EAGAIN : -FI_ENOMEM;
	}
	rc = xroce_reg_mr(dom->pd, a->mem, len, XROCE_ACCESS_LOCAL_WRITE, &a->mr);
	if (rc) {
		FI_WARN(&xrf_prov, FI_LOG_DOMAIN, "bounce buffers: %s\n",
			fi_strerror(-rc));
		xroce_mem_free(dom->xd->dev, a->mem);
		free(a);
		return rc;
	}
	a->next = bp->arenas;
	bp->arenas = a;
	bp->cur = a->mem;
	bp->end = a->mem + len;
	bp->cur_lkey = a->mr->lkey;
	bp->total += len;
	return 0;
}

int xrf_bounce_get(struct xrf_domain *dom, size_t len, struct xrf_bounce **out)
{
	struct xrf_bpool *bp = &dom->bp;
	struct xrf_bounce *b;
	size_t size;
	int cls, rc;

	if (len > xrf_params.bounce_max / 2)
		return -FI_EMSGSIZE;
	cls = size_class(len ? len : 1);
	size = (size_t)1 << cls;
	if (bp->free[cls]) {
		*out = bp->free[cls];
		bp->free[cls] = (*out)->next;
		return 0;
	}
	if (!bp->cur || (size_t)(bp->end - bp->cur) < size) {
		rc = new_arena(dom, size);
		if (rc)
			return rc;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return -FI_ENOMEM;
	b->addr = bp->cur;
	b->lkey = bp->cur_lkey;
	b->cls = (uint8_t)cls;
	bp->cur += size;
	*out = b;
	return 0;
}

void xrf_bounce_put(struct xrf_domain *dom, struct xrf_bounce *b)
{
	b->next = dom->bp.free[b->cls];
	dom->bp.free[b->cls] = b;
}

void xrf_bounce_fini(struct xrf_domain *dom)
{
	struct xrf_bpool *bp = &dom->bp;
	unsigned int c;

	for (c = 0; c < sizeof(bp->free) / sizeof(bp->free[0]); c++) {
		while (bp->free[c]) {
			struct xrf_bounce *b = bp->free[c];

			bp->free[c] = b->next;
			free(b);
		}
	}
	while (bp->arenas) {
		struct xrf_arena *a = bp->arenas;

		bp->arenas = a->next;
		xroce_dereg_mr(a->mr);
		xroce_mem_free(dom->xd->dev, a->mem);
		free(a);
	}
	bp->cur = bp->end = NULL;
	bp->total = 0;
}
