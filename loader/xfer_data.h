/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Data of `xroce send` / `xroce recv`, one job: a reproducible pattern
 * (byte j of a transfer is a function of the seed and j, so every chunk can
 * be checked where it lands and a corruption located) and a running 64-bit
 * hash of a byte stream, for files.
 */
#ifndef XR_LOADER_XFER_DATA_H
#define XR_LOADER_XFER_DATA_H

#include <stddef.h>
#include <stdint.h>

/* Write len pattern bytes for stream offset off into buf. */
void xr_pattern_fill(uint8_t *buf, uint64_t off, size_t len, uint64_t seed);
/* Offset (relative to buf) of the first byte differing from the pattern,
 * or -1 if all len bytes match. */
long long xr_pattern_check(const uint8_t *buf, uint64_t off, size_t len,
			   uint64_t seed);

struct xr_hash {
	uint64_t h;
	uint64_t n;          /* bytes hashed */
	uint8_t tail[8];     /* bytes not yet making a full word */
	unsigned int ntail;
};

void xr_hash_init(struct xr_hash *s);
void xr_hash_update(struct xr_hash *s, const void *data, size_t len);
uint64_t xr_hash_final(const struct xr_hash *s);

#endif /* XR_LOADER_XFER_DATA_H */
