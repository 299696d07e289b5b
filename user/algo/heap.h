/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Allocator of registrable memory, one job: hand out aligned byte ranges of
 * [base, base + len) (offsets into the device's memory map) and take them
 * back, merging neighbours.  First fit over an address-ordered block list:
 * allocations are few and large (buffers, not packets), so simplicity wins.
 */
#ifndef XR_USER_HEAP_H
#define XR_USER_HEAP_H

#include <stddef.h>
#include <stdint.h>

struct xr_heap_blk {
	uint64_t off, len;
	int used;
	struct xr_heap_blk *next;
};

struct xr_heap {
	struct xr_heap_blk *head;
	uint64_t base, len;
	uint64_t used_bytes;
};

int xr_heap_init(struct xr_heap *h, uint64_t base, uint64_t len);
void xr_heap_fini(struct xr_heap *h);
/* Offset of a new block, or -ENOMEM / -EINVAL (align not a power of 2). */
int xr_heap_alloc(struct xr_heap *h, uint64_t len, uint64_t align,
		  uint64_t *off);
/* -ENOENT if off is not the start of an allocated block. */
int xr_heap_free(struct xr_heap *h, uint64_t off);
/* Length of the allocated block starting at off, 0 if none. */
uint64_t xr_heap_block_len(const struct xr_heap *h, uint64_t off);
/* Allocate exactly [off, off + len) (64-byte multiples): -ENOSPC if any of
 * it is in use or outside the heap. */
int xr_heap_alloc_at(struct xr_heap *h, uint64_t off, uint64_t len);
/* The largest free block. */
int xr_heap_largest_free(const struct xr_heap *h, uint64_t *off, uint64_t *len);
/* Free every allocated block that starts inside [off, off + len). */
void xr_heap_free_range(struct xr_heap *h, uint64_t off, uint64_t len);

#endif /* XR_USER_HEAP_H */
