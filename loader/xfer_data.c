// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>

#include "xfer_data.h"

static inline uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static inline uint8_t pattern_byte(uint64_t j, uint64_t seed)
{
	return (uint8_t)(splitmix64(seed + j / 8) >> (8 * (j % 8)));
}

void xr_pattern_fill(uint8_t *buf, uint64_t off, size_t len, uint64_t seed)
{
	size_t i = 0;

	/* Bytes up to the next word boundary of the stream, then words. */
	for (; i < len && (off + i) % 8; i++)
		buf[i] = pattern_byte(off + i, seed);
	for (; i + 8 <= len; i += 8) {
		uint64_t w = splitmix64(seed + (off + i) / 8);

		memcpy(buf + i, &w, 8); /* little-endian hosts: byte k = w >> 8k */
	}
	for (; i < len; i++)
		buf[i] = pattern_byte(off + i, seed);
}

long long xr_pattern_check(const uint8_t *buf, uint64_t off, size_t len,
			   uint64_t seed)
{
	size_t i = 0;

	for (; i < len && (off + i) % 8; i++)
		if (buf[i] != pattern_byte(off + i, seed))
			return (long long)i;
	for (; i + 8 <= len; i += 8) {
		uint64_t w = splitmix64(seed + (off + i) / 8), got;

		memcpy(&got, buf + i, 8);
		if (got != w)
			break; /* locate the byte below */
	}
	for (; i < len; i++)
		if (buf[i] != pattern_byte(off + i, seed))
			return (long long)i;
	return -1;
}

void xr_hash_init(struct xr_hash *s)
{
	memset(s, 0, sizeof(*s));
	s->h = 0x84222325cbf29ce4ull;
}

static inline uint64_t mix(uint64_t h, uint64_t w)
{
	h ^= w * 0x9e3779b97f4a7c15ull;
	h = (h << 27) | (h >> 37);
	return h * 0x100000001b3ull + 0x52dce729ull;
}

void xr_hash_update(struct xr_hash *s, const void *data, size_t len)
{
	const uint8_t *p = data;

	s->n += len;
	while (len && s->ntail) {
		s->tail[s->ntail++] = *p++;
		len--;
		if (s->ntail == 8) {
			uint64_t w;

			memcpy(&w, s->tail, 8);
			s->h = mix(s->h, w);
			s->ntail = 0;
		}
	}
	for (; len >= 8; p += 8, len -= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		s->h = mix(s->h, w);
	}
	while (len--)
		s->tail[s->ntail++] = *p++;
}

uint64_t xr_hash_final(const struct xr_hash *s)
{
	uint64_t w = 0, h = s->h;

	memcpy(&w, s->tail, s->ntail);
	h = mix(h, w ^ ((uint64_t)s->ntail << 56));
	return mix(h, s->n);
}
