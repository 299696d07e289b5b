/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Application memory outside the memory map, registered by moving its
 * pages into the map at the same addresses (anymem.c explains how).
 */
#ifndef XR_ENGINE_ANYMEM_H
#define XR_ENGINE_ANYMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device.h"

struct xr_extent;

/* The memory-map offset of addr and the extent holding [addr, +len)
 * (one more reference): -EFAULT (not mapped), -EOPNOTSUPP (huge pages, a
 * shared mapping, another device's memory), -ENOMEM (the map is full),
 * -EBUSY (it would have to move memory that work is using).  nocache: give
 * the pages back as soon as the extent is unused. */
int xr_anymem_get(struct xroce_device *dev, void *addr, size_t len,
		  bool nocache, uint64_t *off, struct xr_extent **ext);
/* One reference less; the last one fails work still using the memory,
 * then keeps the extent idle (in the map, ready for the next
 * registration) or gives the pages back to the application. */
void xr_anymem_put(struct xroce_device *dev, struct xr_extent *ext);
/* Give every idle extent's pages back (device close). */
void xr_anymem_flush(struct xroce_device *dev);
/* xr_heap_alloc on the device's memory, idle extents given back first if
 * that is what it takes. */
int xr_anymem_heap_alloc(struct xroce_device *dev, uint64_t len, uint64_t align,
			 uint64_t *off);

#endif /* XR_ENGINE_ANYMEM_H */
