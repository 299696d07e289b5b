// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>

#include "heap.h"

int xr_heap_init(struct xr_heap *h, uint64_t base, uint64_t len)
{
	h->head = calloc(1, sizeof(*h->head));
	if (!h->head)
		return -ENOMEM;
	h->head->off = base;
	h->head->len = len;
	h->base = base;
	h->len = len;
	h->used_bytes = 0;
	return 0;
}

void xr_heap_fini(struct xr_heap *h)
{
	struct xr_heap_blk *b = h->head, *n;

	for (; b; b = n) {
		n = b->next;
		free(b);
	}
	h->head = NULL;
}

int xr_heap_alloc(struct xr_heap *h, uint64_t len, uint64_t align,
		  uint64_t *off)
{
	struct xr_heap_blk *b;

	if (!align)
		align = 64;
	if (align & (align - 1) || !len)
		return -EINVAL;
	len = (len + 63) & ~63ull; /* keep every block cache-line aligned */
	for (b = h->head; b; b = b->next) {
		uint64_t start, pad;

		if (b->used)
			continue;
		start = (b->off + align - 1) & ~(align - 1);
		pad = start - b->off;
		if (pad > b->len || b->len - pad < len)
			continue;
		if (pad) {
			/* Split off the alignment padding as its own free block. */
			struct xr_heap_blk *p = calloc(1, sizeof(*p));

			if (!p)
				return -ENOMEM;
			p->off = start;
			p->len = b->len - pad;
			p->next = b->next;
			b->len = pad;
			b->next = p;
			b = p;
		}
		if (b->len > len) {
			struct xr_heap_blk *rest = calloc(1, sizeof(*rest));

			if (!rest)
				return -ENOMEM;
			rest->off = b->off + len;
			rest->len = b->len - len;
			rest->next = b->next;
			b->len = len;
			b->next = rest;
		}
		b->used = 1;
		h->used_bytes += b->len;
		*off = b->off;
		return 0;
	}
	return -ENOMEM;
}

int xr_heap_free(struct xr_heap *h, uint64_t off)
{
	struct xr_heap_blk *b, *prev = NULL;

	for (b = h->head; b; prev = b, b = b->next) {
		if (b->off != off || !b->used)
			continue;
		b->used = 0;
		h->used_bytes -= b->len;
		/* Merge with the next, then with the previous free block. */
		if (b->next && !b->next->used) {
			struct xr_heap_blk *n = b->next;

			b->len += n->len;
			b->next = n->next;
			free(n);
		}
		if (prev && !prev->used) {
			prev->len += b->len;
			prev->next = b->next;
			free(b);
		}
		return 0;
	}
	return -ENOENT;
}

uint64_t xr_heap_block_len(const struct xr_heap *h, uint64_t off)
{
	const struct xr_heap_blk *b;

	for (b = h->head; b; b = b->next)
		if (b->off == off && b->used)
			return b->len;
	return 0;
}

int xr_heap_alloc_at(struct xr_heap *h, uint64_t off, uint64_t len)
{
	struct xr_heap_blk *b;

	if (!len || (off | len) & 63)
		return -EINVAL;
	for (b = h->head; b; b = b->next) {
		if (b->used || off < b->off || off - b->off > b->len ||
		    len > b->len - (off - b->off))
			continue;
		if (off > b->off) {
			/* Split off what lies before as its own free block. */
			struct xr_heap_blk *p = calloc(1, sizeof(*p));

			if (!p)
				return -ENOMEM;
			p->off = off;
			p->len = b->len - (off - b->off);
			p->next = b->next;
			b->len = off - b->off;
			b->next = p;
			b = p;
		}
		if (b->len > len) {
			struct xr_heap_blk *rest = calloc(1, sizeof(*rest));

			if (!rest)
				return -ENOMEM;
			rest->off = b->off + len;
			rest->len = b->len - len;
			rest->next = b->next;
			b->len = len;
			b->next = rest;
		}
		b->used = 1;
		h->used_bytes += b->len;
		return 0;
	}
	return -ENOSPC;
}

int xr_heap_largest_free(const struct xr_heap *h, uint64_t *off, uint64_t *len)
{
	const struct xr_heap_blk *b, *best = NULL;

	for (b = h->head; b; b = b->next)
		if (!b->used && (!best || b->len > best->len))
			best = b;
	if (!best)
		return -ENOMEM;
	*off = best->off;
	*len = best->len;
	return 0;
}

void xr_heap_free_range(struct xr_heap *h, uint64_t off, uint64_t len)
{
	for (;;) {
		struct xr_heap_blk *b;

		for (b = h->head; b; b = b->next)
			if (b->used && b->off >= off && b->off - off < len)
				break;
		if (!b)
			return;
		/* Frees (and merges) one block per pass: the list changes. */
		xr_heap_free(h, b->off);
	}
}
