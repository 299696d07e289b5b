/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Protection domains and memory regions.  A region is published to XDP in
 * xr_mrs under a random key; the library finds a local region by (lkey,
 * address range) to turn an application address into an offset of the
 * device's memory map.
 */
#ifndef XR_ENGINE_MR_H
#define XR_ENGINE_MR_H

#include <stdint.h>

#include "xroce/xroce.h"

struct xroce_pd {
	struct xroce_device *dev;
	uint32_t id;
	struct xroce_pd *next;
	struct xr_mr_int *mrs;             /* MRs of this PD */
};

struct xr_extent;

struct xr_mr_int {
	struct xroce_mr pub;               /* first: handle == &pub */
	uint64_t mem_off;                  /* the region's first byte in the map */
	struct xr_mr_int *next;
	struct xr_extent *ext;             /* application memory (anymem.c) */
};

/* Publish a region of [addr, +length) whose first byte is at mem_off in
 * the memory map (ext: the application-memory extent holding it, or NULL),
 * under a new key.  regmem.c decides where the bytes are. */
int xr_mr_publish(struct xroce_pd *pd, void *addr, size_t length, int access,
		  uint64_t mem_off, struct xr_extent *ext, struct xroce_mr **out);
/* Withdraw a region: XDP refuses its key from now on; *ext gets the
 * extent it held (NULL if none) for the caller to release. */
int xr_mr_withdraw(struct xroce_mr *mr, struct xr_extent **ext);


/* Local MR containing [addr, addr + len) with lkey, or NULL. */
struct xr_mr_int *xr_mr_find(struct xroce_pd *pd, uint32_t lkey,
			     uint64_t addr, uint64_t len);
/* The memory-map offset of addr inside m. */
static inline uint64_t xr_mr_off(const struct xr_mr_int *m, uint64_t addr)
{
	return m->mem_off + (addr - (uint64_t)(uintptr_t)m->pub.addr);
}

#endif /* XR_ENGINE_MR_H */
